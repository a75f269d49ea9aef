"""Numba on warpsim, in this process: import this module before Numba
initialises CUDA, and `@cuda.jit` kernels run on warpsim's driver.

    import warpsim.numba                     # or warpsim.numba.configure(gpu="t4", mode="timing")
    from numba import cuda
    ...
    warpsim.last_launch()                    # the last kernel's numbers

The environment variables `warpsim exec` sets are honoured and may be set
instead: `WARPSIM_GPU` (default h200), `WARPSIM_MODE` (functional or
timing), `WARPSIM_CHECK=1`, `WARPSIM_SUMMARY`. The driver reads them when
CUDA initialises (the first kernel or device query), so `configure` must come
before that.
"""

import sys
import warnings

from ._driver import install as _install
from ._driver import last_launch, launches


def configure(gpu=None, mode=None, check=None):
    """Sets the GPU preset, mode ("functional" or "timing") and checking for Numba's kernels."""
    if mode not in (None, "functional", "timing"):
        raise ValueError(f"mode {mode!r}: use 'functional' or 'timing'")
    if "numba.cuda" in sys.modules:
        cuda = sys.modules["numba.cuda"]
        drv = getattr(getattr(cuda, "cudadrv", None), "driver", None)
        if drv is not None and getattr(getattr(drv, "driver", None), "is_initialized", False):
            warnings.warn("Numba's CUDA driver is already initialised: warpsim's settings apply from the next process", stacklevel=2)
    return _install(gpu=gpu, mode=mode, check=check)


if "numba.cuda" in sys.modules:
    warnings.warn(
        "import warpsim.numba before numba.cuda: Numba has read its configuration already "
        "(NUMBA_CUDA_ENABLE_PYNVJITLINK); kernels may not reach warpsim",
        stacklevel=2,
    )
_install()


def _nvjitlink_installed():
    import importlib.util

    try:
        return importlib.util.find_spec("nvidia.nvjitlink") is not None
    except (ImportError, ValueError):
        return False


if _nvjitlink_installed():
    warnings.warn(
        "nvJitLink is installed (nvidia-nvjitlink): Numba then links kernels to SASS for a real GPU (LTO), "
        "which warpsim cannot run; warpsim needs the PTX: pip uninstall nvidia-nvjitlink",
        stacklevel=2,
    )
