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
    # Qualifiers of the pointer itself (`float *__restrict__`, `int *const`).
    cpp = re.sub(r"\*(\s*\b(const|volatile|__restrict__|__restrict)\b)+\s*$", "*", cpp.strip())
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


def _strip_comments(src):
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    return re.sub(r"//[^\n]*", " ", src)


def _source_params(source, entry):
    """The parameter declarations of `__global__ ... entry(...)` in CUDA source (an
    `extern "C"` kernel, whose PTX name carries no types), or None when the source
    does not declare it plainly (macros, several declarations that differ)."""
    if not source or not re.fullmatch(r"[A-Za-z_]\w*", entry):
        return None
    src = _strip_comments(source)
    found = set()
    for m in re.finditer(rf"__global__(?:__launch_bounds__\s*\([^()]*\)|[^;{{}}()])*?\b{entry}\s*\(", src):
        depth, i = 1, m.end()
        while i < len(src) and depth:
            depth += {"(": 1, ")": -1}.get(src[i], 0)
            i += 1
        if depth:
            return None
        params = _split_params(entry + src[m.end() - 1 : i])
        if params is None:
            return None
        found.add(tuple(params))
    if len(found) != 1:
        return None
    params = list(found.pop())
    return [] if params in ([], ["void"]) else params


def _param_name(decl):
    """`a` of `const float *__restrict__ a`, else None."""
    m = re.search(r"([A-Za-z_]\w*)\s*(\[\s*\])?$", decl)
    if m is None or m.group(1) in ("const", "volatile", "__restrict__", "__restrict", "int", "float", "double"):
        return None
    return m.group(1)


def _declared_type(decl):
    """The type of a parameter declaration (`const float *a` -> `const float *`)."""
    name = _param_name(decl)
    if name is None:
        return decl
    return re.sub(rf"\b{name}\s*(\[\s*\])?$", lambda m: "*" if m.group(1) else "", decl).strip()


class _Kernel:
    """What the extension says about one kernel of a module, cached; for an
    `extern "C"` kernel of CUDA source, the parameter types the source declares."""

    def __init__(self, module, name):
        self.entry, self.signature, self.params = module._m.kernel_info(name)
        cpp = _split_params(self.signature)
        self.cpp = cpp if cpp is not None and len(cpp) == len(self.params) else None
        self.names = [None] * len(self.params)
        if self.cpp is None and self.signature is None:
            decls = _source_params(getattr(module, "_source", None), self.entry)
            if decls is not None and len(decls) == len(self.params):
                self.cpp = [_declared_type(d) for d in decls]
                self.names = [_param_name(d) for d in decls]


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
    the PTX is kept in `out_dir` (a temporary folder by default). `compiler`
    says which compiler compiled it (None for PTX); with `verbose=True` (or
    `WARPSIM_VERBOSE=1`) that is said on stderr, else nothing is printed.
    """

    def __init__(self, path=None, *, cuda=None, ptx=None, name=None, out_dir=None, clang_args=(), verbose=None):
        given = [x is not None for x in (path, cuda, ptx)]
        if sum(given) != 1:
            raise ArgumentError("give exactly one of a path, cuda= (CUDA source) or ptx= (PTX text)")
        self.compiler = None
        self._source = None
        if ptx is not None:
            self._name = name or "module.ptx"
            text = ptx
        else:
            if out_dir is None:
                self._tmp = tempfile.TemporaryDirectory(prefix="warpsim-")
                out_dir = self._tmp.name
            self._source = cuda
            if cuda is not None:
                stem = re.sub(r"[^A-Za-z0-9_.-]", "_", name or "kernel").removesuffix(".cu")
                path = os.path.join(out_dir, stem + ".cu")
                with open(path, "w") as f:
                    f.write(cuda)
            if cuda is None and os.fspath(path).endswith(".cu"):
                try:
                    with open(path) as f:
                        self._source = f.read()
                except (OSError, UnicodeDecodeError):
                    self._source = None
            self._name, text, self.compiler = _warpsim.load_kernel_file(os.fspath(path), os.fspath(out_dir), list(clang_args))
            if verbose is None:
                verbose = os.environ.get("WARPSIM_VERBOSE", "") not in ("", "0")
            if verbose and self.compiler:
                import sys

                print(f"warpsim: compiled {path} with {self.compiler} to {self._name}", file=sys.stderr)
        self._m = _warpsim.Module(self._name, text)
        self._kernels = {}

    @classmethod
    def _from_ptx(cls, name, ptx, source=None, compiler=None):
        m = cls(ptx=ptx, name=name)
        m._source, m.compiler = source, compiler
        return m

    def __reduce__(self):
        # Pickled as its PTX (for sweeps in other processes and on Ray), with the CUDA
        # source its argument checks read.
        return (Module._from_ptx, (self._name, self.ptx, self._source, self.compiler))

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
        a progress bar for launches that run over a second (default: when stderr
        is a terminal): tqdm's when tqdm is installed, else warpsim's own line. An access past an array's exact end but within its
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
                    named = f" (`{k.names[i]}`)" if k.names[i] else ""
                    raise DtypeError(
                        f"argument {i}{named} is `{k.cpp[i]}` in the kernel, but the array holds {a.dtype}: "
                        f"the kernel reads {np.dtype(want[0]).name} elements; pass arr.astype(numpy.{np.dtype(want[0]).name})"
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
        bar = _LaunchBar(k.entry) if progress else None
        try:
            r = self._launch(
                kernel, grid, block, packed, shared_mem, mode, gpu, check, max_instructions, opt_in, report, lockstep, progress, strict_bounds,
                bar.tqdm_update if bar is not None and bar.tqdm is not None else None,
            )
        except BaseException as e:
            if bar is not None:
                bar.close()
            if not isinstance(e, ArgumentError):
                raise
            # The command line's `--param` spelling, in NumPy's words.
            m = re.search(r"pass it as (\w+)=VALUE$", str(e))
            if m and m.group(1) in _NUMPY_NAMES:
                raise ArgumentError(str(e)[: m.start()] + f"pass it as numpy.{_NUMPY_NAMES[m.group(1)]}(value)") from None
            raise
        if bar is not None:
            bar.close()
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
        self, kernel, grid, block, packed, shared_mem, mode, gpu, check, max_instructions, opt_in, report, lockstep, progress, strict_bounds,
        on_progress=None,
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
            on_progress=on_progress,
        )


class _LaunchBar:
    """A long launch's progress bar: tqdm's when tqdm is installed (shown after the
    launch has run a second, blocks done of the grid's), else None here and the
    extension's own progress line."""

    AFTER_S = 1.0

    def __init__(self, kernel):
        self.kernel, self.bar = kernel, None
        try:
            from tqdm.auto import tqdm
        except ImportError:
            tqdm = None
        self.tqdm = tqdm

    def tqdm_update(self, done, total, warp_instructions, secs):
        if self.bar is None:
            if secs < self.AFTER_S:
                return
            self.bar = self.tqdm(total=total, desc=f"warpsim {self.kernel}", unit="block", leave=False)
        self.bar.n = done
        self.bar.set_postfix_str(f"{warp_instructions / max(secs, 1e-9):.3g} warp instructions/s", refresh=False)
        self.bar.refresh()

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class DtypeError(ArgumentError, TypeError):
    """An array's dtype is not the element type of the kernel's pointer parameter
    (from a C++ kernel's mangled name, or an `extern "C"` kernel's CUDA source)."""


class PastEndWarning(UserWarning):
    """A kernel accessed memory past an array's exact end but within its page:
    a GPU serves that (its allocations are rounded up), so the launch went on;
    `check=True` reports each such access."""


class LaunchResult:
    """What one launch produced, as `warpsim run` reports it.

    * `metrics`: the Nsight Compute-named metrics (`warpsim run --json`'s "metrics").
    * `cycles`: cycles on the timing model (timing mode), else None.
    * `diagnostics`: the checkers' findings (with `check=True`), each a dict
      with kind, message, place (where, as `warpsim check` prints it), threads
      (the threads involved: block, thread, warp, lane and their text), ptx_line,
      source_line, block, thread, warp, lane, count.
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


class DriverLaunchResult(dict, LaunchResult):
    """A launch of the in-process CUDA driver (Numba's): the dict of its
    `WARPSIM_SUMMARY` line, and a :class:`LaunchResult` (`metrics`, `per_line`,
    `diagnostics`, `cycles`, `summary()`, `_repr_html_()`) when it completed."""

    def __init__(self, line, launch):
        dict.__init__(self, line)
        self._r = launch
        if launch is None:
            self.mode = None
            self._dict = {"kernel": line.get("kernel"), "grid": line.get("grid"), "block": line.get("block")}
        else:
            self.mode = "timing" if launch.cycles is not None else "functional"
            self._dict = launch.to_dict()

    @property
    def line(self):
        """The `WARPSIM_SUMMARY` line, as a plain dict."""
        return dict(self)

    @property
    def fault(self):
        return self.get("fault")

    @property
    def cycles(self):
        return self._r.cycles if self._r is not None else self.get("cycles")

    @property
    def printf(self):
        return self._r.printf if self._r is not None else ""

    def _missing(self):
        why = f"faulted: {self.fault}" if self.fault else "ran in another process (only its WARPSIM_SUMMARY line is here)"
        return f"kernel `{self.get('kernel')}` {why}"

    def summary(self):
        return self._r.summary() if self._r is not None else self._missing()

    def html(self):
        if self._r is None:
            raise _warpsim.Error(self._missing())
        return self._r.html()

    def _repr_html_(self):
        return self.html() if self._r is not None else None

    def __repr__(self):
        return LaunchResult.__repr__(self) if self._r is not None else f"<warpsim.DriverLaunchResult {self._missing()}>"

    # A dict subclass with attributes: equal as dicts, hashed as none.
    __hash__ = None


def occupancy(block, regs=32, *, gpu="h200", shared_mem=0, static_shared=0, opt_in=False):
    """Blocks and warps per SM for blocks of `block` threads (int or tuple) with
    `regs` registers per thread, as `warpsim occupancy --json` gives them."""
    threads = int(np.prod(_dims(block, "block")))
    return _warpsim.occupancy(threads, int(regs), gpu=gpu, shared=int(shared_mem), static_shared=int(static_shared), opt_in=opt_in)
