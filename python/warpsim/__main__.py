"""The `warpsim` command (installed by the wheel): the CLI's own main, run in-process.

`warpsim exec` runs a program on warpsim's CUDA driver and runtime libraries,
`libwarpsim_cuda.so` (for `libcuda.so.1`) and `libwarpsim_cudart.so` (for
`libcudart.so.13`), which the wheel carries in `warpsim/lib/`; exec links them
under the names programs load in a temporary folder of its own. These are the
Rust build's libraries, not the extension module (which is a driver too, but
leaves Python's C API to the interpreter that loads it, so it loads only into
Python): with them, programs built with `nvcc -cudart shared` run as Python
programs do. `WARPSIM_LIB_DIR` chooses other libraries.
"""

import os
import sys

LIB_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib")


def main():
    from . import _warpsim

    args = sys.argv[1:]
    if args[:1] == ["exec"] and "WARPSIM_LIB_DIR" not in os.environ:
        os.environ["WARPSIM_LIB_DIR"] = LIB_DIR
    try:
        code = _warpsim.main(["warpsim"] + args)
    except KeyboardInterrupt:
        code = 130
    sys.stdout.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())
