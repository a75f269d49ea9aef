#!/usr/bin/env python3
"""Runs the cases of a corpus manifest on a real GPU with CuPy, from the PTX file it names.

  run_cases.py MANIFEST OUTDIR           outputs (OUTDIR/expected/*.bin), sha256, timing, attributes
                                         -> OUTDIR/results.json
  run_cases.py MANIFEST OUTDIR --ncu     every case launched exactly once (run it under Nsight Compute)

Initialisers follow ../../../shared/corpus/README.md exactly.
"""
import hashlib, json, os, sys, time
import numpy as np
import cupy as cp

DT = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8, "u8": np.uint8,
      "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64}
SC = {"i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64, "f32": np.float32, "f64": np.float64}
FILE_LIMIT = 512 * 1024  # store raw expected bytes when the buffer is at most this size


def hash_u32(n):
    x = (np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B1)) & np.uint64(0xFFFFFFFF)
    x = x.astype(np.uint32)
    x ^= x >> np.uint32(16)
    x = (x.astype(np.uint64) * np.uint64(0x85EBCA6B) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    x ^= x >> np.uint32(13)
    x = (x.astype(np.uint64) * np.uint64(0xC2B2AE35) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    x ^= x >> np.uint32(16)
    return x


def unit_f32(n):
    return ((hash_u32(n) >> np.uint32(8)).astype(np.float64) * 2.0 ** -24).astype(np.float32)


def f32_to_bf16_bits(f):
    b = f.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    nan = np.isnan(f)
    out = rounded.astype(np.uint16)
    out[nan] = 0x7FC0
    return out


def to_dtype(vals, dtype, is_int):
    if dtype == "bf16":
        return f32_to_bf16_bits(np.asarray(vals, dtype=np.float64).astype(np.float32))
    nd = DT[dtype]
    if is_int and np.issubdtype(nd, np.integer):
        # integers wrap to the width
        size = np.dtype(nd).itemsize
        v = np.asarray(vals, dtype=np.uint64) & np.uint64((1 << (8 * size)) - 1)
        return v.astype({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[size]).view(nd)
    return np.asarray(vals).astype(nd)


def make_init(p, base):
    n, dt, init = p["count"], p["dtype"], p["init"]
    if isinstance(init, dict):
        if "file" in init:
            raw = open(os.path.join(base, init["file"]), "rb").read()
            itemsize = 2 if dt == "bf16" else np.dtype(DT[dt]).itemsize
            assert len(raw) == n * itemsize, (init, len(raw))
            return np.frombuffer(raw, dtype=np.uint16 if dt == "bf16" else DT[dt]).copy()
        vals = init["values"]
        nd = np.uint16 if dt == "bf16" else DT[dt]
        out = np.zeros(n, dtype=nd)
        for i, v in enumerate(vals):
            if isinstance(v, str):
                bits = int(v, 16)
                out.view(np.dtype("u%d" % np.dtype(nd).itemsize))[i] = bits
            else:
                out[i:i + 1] = to_dtype([v], dt, isinstance(v, int))
        return out
    if init == "zeros":
        return np.zeros(n, dtype=np.uint16 if dt == "bf16" else DT[dt])
    if init == "iota":
        if dt in ("f16", "f32", "f64", "bf16"):
            return to_dtype(np.arange(n, dtype=np.float64), dt, False)
        return to_dtype(np.arange(n, dtype=np.uint64), dt, True)
    if init == "hash_u32":
        h = hash_u32(n)
        if dt in ("f16", "f32", "f64", "bf16"):
            return to_dtype(h.astype(np.float64), dt, False)
        return to_dtype(h.astype(np.uint64), dt, True)
    if init == "unit_f32":
        return to_dtype(unit_f32(n), dt, False) if dt != "f32" else unit_f32(n)
    if init == "sym_f16":
        v = (unit_f32(n) - np.float32(0.5)).astype(np.float32)
        return v.astype(np.float16).astype(np.float64).astype(DT[dt]) if dt != "bf16" else f32_to_bf16_bits(v.astype(np.float16).astype(np.float32))
    if init == "unit_f64":
        return unit_f32(n).astype(np.float64).astype(DT[dt]) if dt != "bf16" else f32_to_bf16_bits(unit_f32(n))
    raise ValueError(init)


def attr(fn, name, cu_attr):
    """cuFuncGetAttribute (what cudaFuncGetAttributes reports): 4 NUM_REGS, 1 SHARED_SIZE_BYTES, 3 LOCAL_SIZE_BYTES."""
    try:
        return int(getattr(fn, name))
    except Exception:
        return int(cp.cuda.driver.funcGetAttribute(cu_attr, fn.ptr))


def build_args(case, base):
    args, bufs = [], {}
    for p in case["params"]:
        if p["kind"] == "scalar":
            args.append(SC[p["type"]](p["value"]))
        else:
            host = make_init(p, base)
            d = cp.asarray(host)
            bufs[p["name"]] = (p, d)
            args.append(d)
    return args, bufs


def main():
    manifest, outdir = sys.argv[1], sys.argv[2]
    ncu = "--ncu" in sys.argv
    base = os.path.dirname(os.path.abspath(manifest))
    doc = json.load(open(manifest))
    mods = {}
    os.makedirs(os.path.join(outdir, "expected"), exist_ok=True)
    results = {}
    for case in doc["cases"]:
        ptx = case["ptx"]
        if ptx not in mods:
            mods[ptx] = cp.RawModule(path=os.path.join(base, ptx))
        fn = mods[ptx].get_function(case["kernel"])
        grid, block = tuple(case["grid"]), tuple(case["block"])
        dyn = case.get("dynamic_shared_bytes", 0)
        args, bufs = build_args(case, base)
        cp.cuda.runtime.deviceSynchronize()
        fn(grid, block, tuple(args), shared_mem=dyn)
        cp.cuda.runtime.deviceSynchronize()
        if ncu:
            print("launched", case["name"], flush=True)
            continue
        expect = {}
        for name, (p, d) in bufs.items():
            if p["role"] == "in":
                continue
            raw = cp.asnumpy(d).tobytes()
            e = {"dtype": p["dtype"], "count": p["count"], "sha256": hashlib.sha256(raw).hexdigest()}
            if len(raw) <= FILE_LIMIT:
                fname = "expected/%s.%s.bin" % (case["name"], name)
                open(os.path.join(outdir, fname), "wb").write(raw)
                e["file"] = fname
            expect[name] = e
        # determinism check: a second launch on fresh inputs must give the same bytes
        args2, bufs2 = build_args(case, base)
        fn(grid, block, tuple(args2), shared_mem=dyn)
        cp.cuda.runtime.deviceSynchronize()
        for name, (p, d) in bufs2.items():
            if name in expect:
                expect[name]["deterministic_on_h200"] = hashlib.sha256(cp.asnumpy(d).tobytes()).hexdigest() == expect[name]["sha256"]
        # timing: 30 launches, each host-timed with a synchronise (launch overhead included), warm caches
        for _ in range(3):
            fn(grid, block, tuple(args2), shared_mem=dyn)
        cp.cuda.runtime.deviceSynchronize()
        host_t, ev_t = [], []
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        for _ in range(30):
            t0 = time.perf_counter()
            e0.record()
            fn(grid, block, tuple(args2), shared_mem=dyn)
            e1.record()
            e1.synchronize()
            host_t.append((time.perf_counter() - t0) * 1e6)
            ev_t.append(cp.cuda.get_elapsed_time(e0, e1) * 1e3)
        results[case["name"]] = {
            "expect": expect,
            "h200": {
                "time_us_median": round(float(np.median(host_t)), 2),
                "event_time_us_median": round(float(np.median(ev_t)), 2),
                "num_regs": attr(fn, "num_regs", 4),
                "static_shared_bytes": attr(fn, "shared_size_bytes", 1),
                "local_bytes": attr(fn, "local_size_bytes", 3),
            },
        }
        print(case["name"], results[case["name"]]["h200"], flush=True)
        del bufs, bufs2, args, args2
    if not ncu:
        json.dump(results, open(os.path.join(outdir, "results.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
