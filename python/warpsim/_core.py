"""Modules, launches and their results: the Python face of `warpsim run`.

Arguments are checked here against what the kernel declares (the PTX
parameter list, and for CUDA C++ kernels the pointee types of the mangled
signature), converted to what the extension takes, and arrays that are not
C-contiguous travel through a contiguous copy that is written back.
"""

import os
import re
import tempfile
import warnings

import numpy as np

from . import _warpsim
from ._warpsim import ArgumentError

# NumPy dtype -> warpsim's element type names (the manifest spelling).
_DTYPES = {
    np.dtype(np.float16): "f16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.int8): "i8",
    np.dtype(np.uint8): "u8",
    np.dtype(np.int16): "i16",
    np.dtype(np.uint16): "u16",
    np.dtype(np.int32): "i32",
    np.dtype(np.uint32): "u32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint64): "u64",
}

# C++ pointee types in a demangled signature -> the NumPy dtype they hold.
_CPP_TYPES = {
    "float": np.float32,
    "double": np.float64,
    "__half": np.float16,
    "half": np.float16,
    "char": np.int8,
    "signed char": np.int8,
    "unsigned char": np.uint8,
    "short": np.int16,
    "unsigned short": np.uint16,
    "int": np.int32,
    "unsigned int": np.uint32,
    "long": np.int64,
    "long long": np.int64,
    "unsigned long": np.uint64,
    "unsigned long long": np.uint64,
}

_NUMPY_NAMES = {"i32": "int32", "u32": "uint32", "i64": "int64", "u64": "uint64", "f32": "float32", "f64": "float64"}

# PTX scalar parameter types (their `.name()`) -> how a Python float or int is passed.
_PTX_FLOAT = {"f32": np.float32, "f64": np.float64, "f16": np.float32}


def _dims(v, what):
    if isinstance(v, (int, np.integer)):
        v = (int(v),)
    v = tuple(int(x) for x in v)
    if not 1 <= len(v) <= 3 or any(x < 1 for x in v):
        raise ArgumentError(f"{what} takes 1 to 3 positive dimensions, got {v}")
    return list(v + (1,) * (3 - len(v)))


def _split_params(signature):
    """The parameter types of a demangled C++ signature `name(T1, T2<a, b>, ...)`."""
    if not signature or not signature.endswith(")") or "(" not in signature:
        return None
    depth, start, out = 0, None, []
    # The parameter list is the last top-level parenthesised group.
    for i in range(len(signature) - 1, -1, -1):
        c = signature[i]
        if c == ")":
            depth += 1
        elif c == "(":
            depth -= 1
            if depth == 0:
                start = i
                break
    if start is None:
        return None
    inner = signature[start + 1 : -1]
    depth, cur = 0, ""
    for c in inner:
        if c in "<(":
            depth += 1
        elif c in ">)":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        out.append(cur.strip())
    return out


def _pointee(cpp):
    """(NumPy dtype or None, const) of a C++ pointer parameter type, else None."""
    if not cpp.endswith("*"):
        return None
    base = cpp[:-1].strip()
    const = False
    for q in ("const", "volatile", "__restrict__", "__restrict"):
        if re.search(rf"\b{q}\b", base):
            const = const or q == "const"
            base = re.sub(rf"\b{q}\b", "", base).strip()
    base = " ".join(base.split())
    return _CPP_TYPES.get(base), const


class _Kernel:
    """What the extension says about one kernel of a module, cached."""

    def __init__(self, module, name):
        self.entry, self.signature, self.params = module._m.kernel_info(name)
        cpp = _split_params(self.signature)
        self.cpp = cpp if cpp is not None and len(cpp) == len(self.params) else None


def _scalar(i, value, ptx_type):
    """(type name, bits) of a scalar argument; the extension checks it fits the PTX type."""
    if isinstance(value, (bool, np.bool_)):
        return "u32", int(bool(value))
    if isinstance(value, np.generic):
        dt = value.dtype
        if dt.kind == "f":
            if dt.itemsize <= 4:
                return "f32", int(np.asarray(value, np.float32).view(np.uint32))
            return "f64", int(np.asarray(value, np.float64).view(np.uint64))
        if dt.kind in "iu":
            v = int(value)
            if dt.itemsize <= 4:
                return ("i32" if dt.kind == "i" else "u32"), v & 0xFFFFFFFF
            return ("i64" if dt.kind == "i" else "u64"), v & 0xFFFFFFFFFFFFFFFF
        raise ArgumentError(f"argument {i}: a NumPy {dt} scalar cannot be a kernel parameter")
    if isinstance(value, int):
        if -(1 << 63) <= value < 0:
            return "i64", value & 0xFFFFFFFFFFFFFFFF
        if 0 <= value < (1 << 64):
            return "u64", value
        raise ArgumentError(f"argument {i}: {value} does not fit 64 bits")
    if isinstance(value, float):
        # A Python float rounds to a float parameter's width, as Numba and CuPy pass it.
        t = _PTX_FLOAT.get(ptx_type, np.float64)
        if t is np.float32:
            return "f32", int(np.asarray(value, np.float32).view(np.uint32))
        return "f64", int(np.asarray(value, np.float64).view(np.uint64))
    raise ArgumentError(
        f"argument {i}: {type(value).__name__} is neither a NumPy array nor a scalar "
        "(pass arrays as numpy.ndarray, scalars as numpy scalars or Python numbers)"
    )


class Module:
    """A PTX module, from CUDA source (`cuda=`), PTX text (`ptx=`) or a `.cu`/`.ptx` file.

    CUDA source compiles as `warpsim run` compiles it: NVIDIA's nvcc when
    warpsim finds one, else clang 19 or newer with warpsim's CUDA header;
    the PTX is kept in `out_dir` (a temporary folder by default).
    """

    def __init__(self, path=None, *, cuda=None, ptx=None, name=None, out_dir=None, clang_args=()):
        given = [x is not None for x in (path, cuda, ptx)]
        if sum(given) != 1:
            raise ArgumentError("give exactly one of a path, cuda= (CUDA source) or ptx= (PTX text)")
        if ptx is not None:
            self._name = name or "module.ptx"
            text = ptx
        else:
            if out_dir is None:
                self._tmp = tempfile.TemporaryDirectory(prefix="warpsim-")
                out_dir = self._tmp.name
            if cuda is not None:
                stem = re.sub(r"[^A-Za-z0-9_.-]", "_", name or "kernel").removesuffix(".cu")
                path = os.path.join(out_dir, stem + ".cu")
                with open(path, "w") as f:
                    f.write(cuda)
            self._name, text = _warpsim.load_kernel_file(os.fspath(path), os.fspath(out_dir), list(clang_args))
        self._m = _warpsim.Module(self._name, text)
        self._kernels = {}

    @classmethod
    def _from_ptx(cls, name, ptx):
        return cls(ptx=ptx, name=name)

    def __reduce__(self):
        # Pickled as its PTX (for sweeps in other processes and on Ray).
        return (Module._from_ptx, (self._name, self.ptx))

    @property
    def name(self):
        return self._name

    @property
    def ptx(self):
        return self._m.ptx

    @property
    def kernels(self):
        """The `.entry` names, in source order."""
        return self._m.entries()

    def _kernel(self, name):
        k = self._kernels.get(name)
        if k is None:
            k = self._kernels[name] = _Kernel(self, name)
        return k

    def __repr__(self):
        return f"<warpsim.Module {self._name!r}: {', '.join(self.kernels)}>"

    def launch(
        self,
        kernel,
        grid=1,
        block=32,
        args=(),
        *,
        gpu="h200",
        mode="functional",
        check=False,
        shared_mem=0,
        opt_in=False,
        report=False,
        lockstep=False,
        max_instructions=1 << 24,
        progress=None,
        strict_bounds=False,
    ):
        """Launches `kernel` over `grid` x `block` threads with `args`.

        `gpu`: t4, a100, h100, h200, mi300x (its driver limits, warp size and,
        in `mode="timing"`, its timing model). `check=True` runs the checkers
        (`r.diagnostics`). `report=True` also records the timing model's warp
        timeline for the HTML report (as `warpsim run --report`). `progress`:
        a progress line on a terminal for long launches (default: when stderr
        is a terminal). An access past an array's exact end but within its
        page is served, as a GPU serves it, with a :class:`PastEndWarning`;
        `strict_bounds=True` makes it a :class:`KernelFault` instead.
        """
        import sys

        k = self._kernel(kernel)
        args = list(args)
        # Arity first: the extension would say so too, but before any array is converted.
        if len(args) != len(k.params):
            raise ArgumentError(f"kernel `{k.entry}` takes {len(k.params)} parameters, {len(args)} given")
        packed, writeback = [], []
        for i, (a, (pname, ptype, psize)) in enumerate(zip(args, k.params)):
            what = f"arg{i}"
            if isinstance(a, np.ndarray):
                if psize != 8:
                    raise ArgumentError(
                        f"argument {i} (`{pname}`) is a {psize}-byte .{ptype} scalar in the PTX, but an array was given"
                    )
                want = _pointee(k.cpp[i]) if k.cpp else None
                if want and want[0] is not None and np.dtype(want[0]) != a.dtype:
                    raise ArgumentError(
                        f"argument {i} is `{k.cpp[i]}` in the kernel, but the array holds {a.dtype}: "
                        f"pass arr.astype(numpy.{np.dtype(want[0]).name})"
                    )
                if a.dtype.hasobject:
                    raise ArgumentError(f"argument {i}: an array of Python objects cannot go to the GPU")
                c = a
                if not a.flags.c_contiguous or (a.dtype.byteorder == ">"):
                    c = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))
                    if not a.flags.writeable:
                        c.flags.writeable = False
                    else:
                        writeback.append((a, c))
                packed.append(("buffer", what, _DTYPES.get(c.dtype.newbyteorder("="), "bytes"), c))
            else:
                if isinstance(a, (list, tuple)):
                    raise ArgumentError(f"argument {i}: a {type(a).__name__}; pass a NumPy array (numpy.asarray(...))")
                ty, bits = _scalar(i, a, ptype)
                packed.append(("scalar", what, ty, bits))
        if progress is None:
            progress = sys.stderr.isatty()
        try:
            r = self._launch(
                kernel, grid, block, packed, shared_mem, mode, gpu, check, max_instructions, opt_in, report, lockstep, progress, strict_bounds
            )
        except ArgumentError as e:
            # The command line's `--param` spelling, in NumPy's words.
            m = re.search(r"pass it as (\w+)=VALUE$", str(e))
            if m and m.group(1) in _NUMPY_NAMES:
                raise ArgumentError(str(e)[: m.start()] + f"pass it as numpy.{_NUMPY_NAMES[m.group(1)]}(value)") from None
            raise
        for a, c in writeback:
            a[...] = c
        count, first = r.past_end
        if count:
            more = f" (and {count - 1} more)" if count > 1 else ""
            warnings.warn(
                PastEndWarning(
                    f"{first[0]}\n  served{more}: past the array's exact end but within its page, as a GPU serves it"
                ),
                stacklevel=2,
            )
        return LaunchResult(r, mode)

    def _launch(
        self, kernel, grid, block, packed, shared_mem, mode, gpu, check, max_instructions, opt_in, report, lockstep, progress, strict_bounds
    ):
        return _warpsim.launch(
            self._m,
            kernel,
            _dims(grid, "grid"),
            _dims(block, "block"),
            packed,
            shared=int(shared_mem),
            mode=mode,
            gpu=gpu,
            check=bool(check),
            max_instructions=int(max_instructions),
            opt_in=bool(opt_in),
            report=bool(report),
            lockstep=bool(lockstep),
            progress=bool(progress),
            strict_bounds=bool(strict_bounds),
        )


class PastEndWarning(UserWarning):
    """A kernel accessed memory past an array's exact end but within its page:
    a GPU serves that (its allocations are rounded up), so the launch went on;
    `check=True` reports each such access."""


class LaunchResult:
    """What one launch produced, as `warpsim run` reports it.

    * `metrics`: the Nsight Compute-named metrics (`warpsim run --json`'s "metrics").
    * `cycles`: cycles on the timing model (timing mode), else None.
    * `diagnostics`: the checkers' findings (with `check=True`), each a dict
      with kind, message, ptx_line, source_line, block, thread, warp, lane.
    * `per_line`: one row per source line (counters flattened).
    * `summary()`: the terminal table; `_repr_html_()`: the HTML report.
    """

    def __init__(self, launch, mode):
        self._r = launch
        self.mode = mode
        self._dict = launch.to_dict()

    def to_dict(self):
        """`warpsim run --json`'s object (less `outputs` and `peak_rss_bytes`), with `lines`."""
        return dict(self._dict)

    @property
    def kernel(self):
        return self._dict["kernel"]

    @property
    def metrics(self):
        return dict(self._dict.get("metrics") or {})

    @property
    def cycles(self):
        return self._r.cycles

    @property
    def occupancy(self):
        """Occupancy of the launch shape (functional mode), as `warpsim run --json` gives it."""
        return self._dict.get("occupancy")

    @property
    def timing(self):
        """The timing model's report (timing mode), as `warpsim run --json` gives it."""
        return self._dict.get("timing")

    @property
    def diagnostics(self):
        return list(self._dict.get("diagnostics") or [])

    @property
    def printf(self):
        """The kernel's device `printf` output."""
        return self._r.printf

    @property
    def per_line(self):
        rows = []
        for line in self._dict.get("lines") or []:
            row = {k: v for k, v in line.items() if k != "counters"}
            row.update(line.get("counters") or {})
            rows.append(row)
        return rows

    def summary(self):
        return self._r.summary()

    def html(self):
        return self._r.html()

    def _repr_html_(self):
        return self._r.html()

    def __repr__(self):
        d = self._dict
        c = f", {self.cycles} cycles" if self.cycles is not None else ""
        return (
            f"<warpsim.LaunchResult {d['kernel']}: grid {d['grid']} x block {d['block']}, "
            f"{d['warp_instructions']} warp instructions{c}>"
        )


def occupancy(block, regs=32, *, gpu="h200", shared_mem=0, static_shared=0, opt_in=False):
    """Blocks and warps per SM for blocks of `block` threads (int or tuple) with
    `regs` registers per thread, as `warpsim occupancy --json` gives them."""
    threads = int(np.prod(_dims(block, "block")))
    return _warpsim.occupancy(threads, int(regs), gpu=gpu, shared=int(shared_mem), static_shared=int(static_shared), opt_in=opt_in)
