"""The `warpsim` command (installed by the wheel): the CLI's own main, run in-process.

`warpsim exec` finds warpsim's driver library as the extension module, under
the name `libwarpsim_cuda.so` that the CLI looks for. That library is a
Python extension: it leaves Python's own functions to the interpreter that
loads it, so it loads only into a Python process, and the wheel carries no
CUDA runtime library. So `warpsim exec` from the wheel runs Python programs
(Numba, cuda.bindings); programs built with nvcc need the Rust build's
libraries (`cargo build --release --workspace`, or WARPSIM_LIB_DIR), and get
a warning saying so.
"""

import os
import re
import shutil
import sys

_PYTHON = re.compile(r"^(python|pypy)[0-9.]*$")


def _looks_like_python(program):
    """Whether `program` (as `exec` would run it) is a Python interpreter or a Python script."""
    path = shutil.which(program) or program
    names = {os.path.basename(program), os.path.basename(path), os.path.basename(os.path.realpath(path))}
    if any(_PYTHON.match(n) for n in names):
        return True
    try:
        with open(path, "rb") as f:
            first = f.readline(256)
    except OSError:
        return True  # exec says what is wrong with it
    return first.startswith(b"#!") and b"python" in first


def _exec_program(args):
    """The program `warpsim exec ARGS` runs: the first argument after `--`, else after the options."""
    if "--" in args:
        rest = args[args.index("--") + 1 :]
        return rest[0] if rest else None
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a.startswith("-"):
            skip = "=" not in a and a in ("--gpu", "--mode", "--trace", "--report", "--json")
        else:
            return a
    return None


def main():
    from . import _warpsim
    from ._driver import driver_library

    args = sys.argv[1:]
    if args[:1] == ["exec"] and "WARPSIM_LIB_DIR" not in os.environ:
        os.environ["WARPSIM_LIB_DIR"] = os.path.dirname(driver_library(link_name="libwarpsim_cuda.so"))
        program = _exec_program(args[1:])
        if program is not None and not _looks_like_python(program):
            print(
                f"warpsim exec: warning: {program} is not a Python program; the pip package's CUDA driver is its "
                "Python extension module, which loads only into Python, and it has no CUDA runtime library: "
                "programs built with nvcc need warpsim's Rust build (`cargo build --release --workspace`, then "
                "target/release/warpsim exec, or WARPSIM_LIB_DIR=target/release)",
                file=sys.stderr,
            )
    try:
        code = _warpsim.main(["warpsim"] + args)
    except KeyboardInterrupt:
        code = 130
    sys.stdout.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())
