"""`pip install .`'s build backend: maturin's, after putting `warpsim exec`'s two libraries
in the package.

maturin builds one crate, the extension module; `warpsim exec` also needs the Rust build's
CUDA driver (crates/cuda-driver, for `libcuda.so.1`) and runtime (crates/cudart, for
`libcudart.so.13`). So a wheel build first runs `cargo build --release` of those two (in
`CARGO_TARGET_DIR`, else the checkout's target/) and copies them, without their debug line
tables, into python/warpsim/lib/, which pyproject.toml's `include` puts in the wheel.
`WARPSIM_WHEEL_LIBS=staged` skips that step when the folder already holds them (.ci/run
stages the ones its tests ran).
"""

import os
import subprocess
from pathlib import Path

import maturin
from maturin import (  # noqa: F401  (the rest of the backend is maturin's own)
    build_sdist,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_wheel,
)

ROOT = Path(__file__).resolve().parents[2]
LIBS = ("libwarpsim_cuda.so", "libwarpsim_cudart.so")


def stage_libraries():
    dest = ROOT / "python/warpsim/lib"
    if os.environ.get("WARPSIM_WHEEL_LIBS") == "staged":
        missing = [n for n in LIBS if not (dest / n).is_file()]
        if missing:
            raise RuntimeError(f"WARPSIM_WHEEL_LIBS=staged, but {dest} lacks {', '.join(missing)}")
        return
    cargo = ["cargo", "build", "--release", "-p", "warpsim-cuda", "-p", "warpsim-cudart"]
    subprocess.run(cargo, cwd=ROOT, check=True)
    built = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target").resolve() / "release"
    dest.mkdir(exist_ok=True)
    for name in LIBS:
        subprocess.run(["strip", "--strip-debug", "-o", str(dest / name), str(built / name)], check=True)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    stage_libraries()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    stage_libraries()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)
