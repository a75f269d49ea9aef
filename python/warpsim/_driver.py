"""warpsim's CUDA driver inside a Python process, for Numba and cuda.bindings.

The extension module also carries warpsim's CUDA driver API (`cuInit`,
`cuLaunchKernel`, ...). `cuda.bindings` finds the driver by its soname,
`libcuda.so.1`, among the libraries already loaded; so a copy of the
extension whose soname reads `libcuda.so.1` (it is built with the placeholder
`libwsim.so.1`, as long) is written to a cache folder and loaded globally.
The copy is the driver: it keeps its own state, and appends one JSON line per
launch to `WARPSIM_SUMMARY`, which :func:`last_launch` reads.
"""

import hashlib
import json
import os
import tempfile

_PLACEHOLDER = b"\0libwsim.so.1\0"
_SONAME = b"\0libcuda.so.1\0"

_state = {"summary": None, "handle": None}


def driver_library(link_name="libcuda.so.1"):
    """The path of the driver copy (soname `libcuda.so.1`), written on first use."""
    from . import _warpsim

    src = _warpsim.__file__
    with open(src, "rb") as f:
        data = f.read()
    if data.count(_PLACEHOLDER) != 1:
        raise _warpsim.Error(f"{src}: no single soname placeholder to rename; the extension was not built by warpsim's build.rs")
    digest = hashlib.sha256(data).hexdigest()[:16]
    folder = os.path.join(tempfile.gettempdir(), f"warpsim-{os.getuid()}", digest)
    path = os.path.join(folder, "libcuda.so.1")
    if not os.path.exists(path):
        os.makedirs(folder, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(data.replace(_PLACEHOLDER, _SONAME))
        os.chmod(tmp, 0o755)
        os.replace(tmp, path)
    link = os.path.join(folder, link_name)
    if link_name != "libcuda.so.1" and not os.path.exists(link):
        try:
            os.symlink("libcuda.so.1", link)
        except FileExistsError:
            pass
    return link


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
        summary = env.get("WARPSIM_SUMMARY") or os.path.join(
            tempfile.mkdtemp(prefix="warpsim-launches-"), "launches.jsonl"
        )
    env["WARPSIM_SUMMARY"] = summary
    _state["summary"] = summary
    path = driver_library()
    env["NUMBA_CUDA_DRIVER"] = path
    env["NUMBA_CUDA_ENABLE_PYNVJITLINK"] = "0"
    if _state["handle"] is None:
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
    """The last launch's summary (kernel, grid, block, warp instructions, sectors, cycles, ...), or None."""
    ls = launches()
    return ls[-1] if ls else None
