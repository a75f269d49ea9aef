"""warpsim: run CUDA and PTX kernels on a simulated SIMT GPU, warp by warp.

    import numpy as np, warpsim
    m = warpsim.Module(cuda=open("kernel.cu").read())      # or Module(ptx=text), Module("k.ptx")
    r = m.launch("vadd", grid=4, block=256, args=[a, b, out, np.int32(n)])
    r.metrics["smsp__sassthreads_per_instruction"], r.summary(), r   # (HTML in Jupyter)

Arrays are copied to the simulated GPU and written back in place, as Numba
does; a read-only array the kernel writes is an error. Errors are
:class:`warpsim.Error` subclasses carrying warpsim's message.
"""

from ._warpsim import ArgumentError, Error, KernelFault, LaunchError, PtxError, presets
from ._warpsim import __version__
from ._core import DriverLaunchResult, DtypeError, LaunchResult, Module, PastEndWarning, occupancy
from .sweep import sweep


from ._driver import last_launch, launches


__all__ = [
    "ArgumentError",
    "DriverLaunchResult",
    "DtypeError",
    "Error",
    "KernelFault",
    "LaunchError",
    "LaunchResult",
    "Module",
    "PastEndWarning",
    "PtxError",
    "__version__",
    "last_launch",
    "launches",
    "occupancy",
    "presets",
    "sweep",
]
