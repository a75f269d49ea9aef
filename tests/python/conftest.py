"""Shared pieces of the Python package's tests: the repository, the `warpsim`
binary they compare with, and a C++ compiler check for the CUDA sources."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def warpsim_binary():
    """`WARPSIM_BIN`, else the Rust build's release binary, else the `warpsim` on PATH."""
    for p in (os.environ.get("WARPSIM_BIN"), REPO / "target/release/warpsim"):
        if p and Path(p).is_file():
            return str(p)
    p = shutil.which("warpsim")
    if p is None:
        pytest.fail("no warpsim binary: build it (cargo build --release) or set WARPSIM_BIN")
    return p


def run_json(*args, cwd):
    """`warpsim ARGS --json`'s object."""
    import json

    out = subprocess.run([warpsim_binary(), *args, "--json"], cwd=cwd, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def has_cuda_compiler():
    return any(shutil.which(c) for c in ("nvcc", "clang-19", "clang-20", "clang")) or (REPO / ".venv/bin/nvcc").exists()


needs_compiler = pytest.mark.skipif(not has_cuda_compiler(), reason="no nvcc or clang for CUDA sources")


def nvcc():
    """NVIDIA's nvcc, as the Rust tests find it: `WARPSIM_NVCC`, else the `nvidia-cuda-nvcc`
    wheel's in the repository's .venv (which .ci/run installs), else the `nvcc` on PATH; or None."""
    if os.environ.get("WARPSIM_NVCC"):
        return os.environ["WARPSIM_NVCC"]
    for cu in ("cu13", "cu12"):
        found = sorted(REPO.glob(f".venv/lib/python*/site-packages/nvidia/{cu}/bin/nvcc"))
        if found:
            return str(found[0])
    return shutil.which("nvcc")


needs_nvcc = pytest.mark.skipif(nvcc() is None, reason="no nvcc (pip install nvidia-cuda-nvcc in .venv, or WARPSIM_NVCC)")
