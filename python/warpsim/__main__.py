"""The `warpsim` command (installed by the wheel): the CLI's own main, run in-process.

`warpsim exec` finds warpsim's driver library as the extension module, under
the name `libwarpsim_cuda.so` that the CLI looks for; that library needs a
Python process around it, so `warpsim exec` from the wheel runs Python
programs (Numba); programs built with nvcc need the Rust build's libraries
(`cargo build --release --workspace`, or WARPSIM_LIB_DIR).
"""

import os
import sys


def main():
    from . import _warpsim
    from ._driver import driver_library

    if len(sys.argv) > 1 and sys.argv[1] == "exec" and "WARPSIM_LIB_DIR" not in os.environ:
        os.environ["WARPSIM_LIB_DIR"] = os.path.dirname(driver_library(link_name="libwarpsim_cuda.so"))
    try:
        code = _warpsim.main(["warpsim"] + sys.argv[1:])
    except KeyboardInterrupt:
        code = 130
    sys.stdout.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())
