"""warpsim's CUDA driver inside a Python process, for Numba and cuda.bindings.

The extension module also carries warpsim's CUDA driver API (`cuInit`,
`cuLaunchKernel`, ...) under the driver's soname, `libcuda.so.1`, which is
how `cuda.bindings` looks the driver up among the libraries already loaded.
So once `warpsim` is imported, a library that loads `libcuda.so.1` afterwards
in the same process gets warpsim's driver (one loaded before keeps NVIDIA's).
The driver appends one JSON line per launch to `WARPSIM_SUMMARY`, which
:func:`last_launch` reads.
"""

import json
import os
import tempfile

_state = {"summary": None, "handle": None}


def driver_library():
    """The path of the driver library of this process (the extension module)."""
    from . import _warpsim

    return os.path.abspath(_warpsim.__file__)


def install(gpu=None, mode=None, check=None, summary=None):
    """Makes warpsim the CUDA driver of this process (before Numba initialises CUDA)."""
    import ctypes

    env = os.environ
    if gpu is not None:
        env["WARPSIM_GPU"] = gpu
    if mode is not None:
        env["WARPSIM_MODE"] = mode
    if check is not None:
        env["WARPSIM_CHECK"] = "1" if check else "0"
    if summary is None:
        summary = _state["summary"] or env.get("WARPSIM_SUMMARY")
    if not summary:
        summary = os.path.join(tempfile.mkdtemp(prefix="warpsim-launches-"), "launches.jsonl")
    env["WARPSIM_SUMMARY"] = summary
    _state["summary"] = summary
    path = driver_library()
    env["NUMBA_CUDA_DRIVER"] = path
    env["NUMBA_CUDA_ENABLE_PYNVJITLINK"] = "0"
    if _state["handle"] is None:
        # Already loaded as the extension module: this makes its symbols global for ctypes users.
        _state["handle"] = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    return path


def launches():
    """Every launch the in-process driver ran so far, one dict each (the `WARPSIM_SUMMARY` lines)."""
    path = _state["summary"] or os.environ.get("WARPSIM_SUMMARY")
    if not path or not os.path.exists(path):
        return []
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                out.append(json.loads(line))
    return out


def last_launch():
    """The last kernel the CUDA driver ran in this process (Numba's, cuda.bindings'), or None.

    A :class:`warpsim.LaunchResult` like `Module.launch`'s (`metrics` under Nsight
    Compute's names, `per_line`, `diagnostics`, `cycles`, `summary()`, the HTML
    report in Jupyter) that is also the dict of its `WARPSIM_SUMMARY` line (kernel,
    grid, block, warp_instructions, global_sectors, cycles, fault, ...). A launch
    that faulted has only the line (`metrics` is empty, `summary()` says the fault).
    Without an in-process launch (a driver in another process, `warpsim exec`),
    the last line of `WARPSIM_SUMMARY`, with no metrics.
    """
    from . import _warpsim
    from ._core import DriverLaunchResult

    got = _warpsim.driver_last_launch()
    if got is not None:
        _number, line, launch = got
        return DriverLaunchResult(line, launch)
    ls = launches()
    return DriverLaunchResult(ls[-1], None) if ls else None
