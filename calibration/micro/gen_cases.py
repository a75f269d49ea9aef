#!/usr/bin/env python3
"""Writes micro/cases.json: the calibration microbenchmarks of micro.json as shared-corpus
cases (format: ../../../shared/corpus/README.md), so that `warpsim corpus micro/cases.json
--mode timing --gpu h200 --json` runs each micro kernel through the timing model with the
launch shape and arguments micro.cu used on the H200. `h200` holds that config's Nsight
Compute metrics and registers from results/micro.json. The PTX (ptx/micro.ptx) is the
device's `nvcc -ptx -lineinfo -O3 -arch=sm_90 micro.cu`.

Scaled cases: the `bw_*_dram` configs touched up to 2 GiB (every page of it at stride >= 8),
too much for a simulator's memory: they run with `total` divided by SCALE (same grid, same
stride, same span) and are compared by useful GB/s (`scale` says by how much), not cycles.
No outputs are checked (`expect` is empty): these are timing probes."""
import json, os

HERE = os.path.dirname(os.path.abspath(__file__))
SCALE = 8

def buf(name, dtype, count, init="zeros", role="inout"):
    return {"kind": "buffer", "name": name, "dtype": dtype, "count": int(max(count, 1)), "init": init, "role": role}

def sc(ty, v):
    return {"kind": "scalar", "type": ty, "value": v}

MODES = {"same": 0, "warp": 1, "block": 2, "lane": 3, "lane32B": 4}
OPS = {"add_i32": 0, "add_f32": 1, "max_i32": 2}
SMODES = {"block": 0, "warp": 1, "lane": 2, "lane_conflict32": 3}

def case_of(c):
    g, b, p, k = c["grid"], c["block"], c["params"], c["kernel"]
    nthreads = g[0] * g[1] * g[2] * b[0] * b[1] * b[2]
    grp = c["group"]
    R = lambda x: "1" if x else "0"
    if k in ("atom_global", "atom_global_dyn"):
        m, o = MODES[p["mode"]], OPS[p["op"]]
        span = {0: 1, 1: nthreads // 32, 2: g[0], 3: nthreads, 4: nthreads * 8}[m]
        if k == "atom_global":
            entry = f"_Z11atom_globalILi{m}ELi{o}ELb{R(p['ret'])}EEvPiS0_i"
            params = [buf("p", "i32", span), buf("out", "i32", 1), sc("i32", p["iters"])]
        else:
            entry = f"_Z15atom_global_dynILi{m}ELi{o}ELb{R(p['ret'])}EEvPiPKiS0_i"
            params = [buf("p", "i32", span), buf("zero", "i32", nthreads, role="in"), buf("out", "i32", 1), sc("i32", p["iters"])]
    elif k == "atom_shared":
        m = SMODES[p["mode"]]
        entry = f"_Z11atom_sharedILi{m}ELb{R(p['op'] == 'add_f32')}ELb{R(p['ret'])}EEvPii"
        params = [buf("out", "i32", g[0]), sc("i32", p["iters"])]
    elif k == "atom_shared_dyn":
        m = SMODES[p["mode"]]
        entry = f"_Z15atom_shared_dynILi{m}ELb{R(p['ret'])}EEvPKiPii"
        params = [buf("zero", "i32", nthreads, role="in"), buf("out", "i32", g[0]), sc("i32", p["iters"])]
    elif k.startswith("local_dyn<"):
        entry = f"_Z9local_dynILi{p['N']}EEvPKiPii"
        params = [buf("in", "i32", 1024, "zeros", "in"), buf("out", "i32", nthreads, role="out"), sc("i32", p["iters"])]
    elif k == "local_reg16":
        entry = "_Z11local_reg16PKiPii"
        params = [buf("in", "i32", 1024, "zeros", "in"), buf("out", "i32", nthreads, role="out"), sc("i32", p["iters"])]
    elif k == "local_sort32":
        entry = "_Z12local_sort32PKjPj"
        params = [buf("in", "u32", 1 << 20, "hash_u32", "in"), buf("out", "u32", nthreads, role="out")]
    elif k in ("spill_capped", "spill_free"):
        entry = {"spill_capped": "_Z12spill_cappedPKfPfi", "spill_free": "_Z10spill_freePKfPfi"}[k]
        params = [buf("in", "f32", 4096, "unit_f32", "in"), buf("out", "f32", nthreads, role="out"), sc("i32", p["iters"])]
    elif k.startswith("call_k<"):
        entry = f"_Z6call_kILi{k[7]}EEvPffi"
        params = [buf("out", "f32", nthreads, role="out"), sc("f32", 0.999), sc("i32", p["iters"])]
    elif k in ("bw_read", "bw_write", "bw_copy"):
        total, stride, span = p["total"], p["stride"], p["span_bytes"] // 4
        scale = 1
        if c["name"].startswith("bw_") and ("_dram_" in c["name"] or "ref32M" in c["name"]):
            scale = SCALE if "ref32M" not in c["name"] else SCALE * 2
        total //= scale
        touched = min(span, total * stride)
        entry = {"bw_read": "_Z7bw_readPKfPfxix", "bw_write": "_Z8bw_writePfxix", "bw_copy": "_Z7bw_copyPKfPfxix"}[k]
        if "ref32M" in c["name"]:
            g = [g[0] // scale, 1, 1]
        inb = buf("in", "f32", touched, "unit_f32", "in")
        if k == "bw_read":
            params = [inb, buf("out", "f32", 1, role="out")]
        elif k == "bw_write":
            params = [buf("out", "f32", touched, role="out")]
        else:
            params = [inb, buf("out", "f32", total, role="out")]
        params += [sc("i64", total), sc("i32", stride), sc("i64", span - 1)]
        return entry, params, g, {"scale": scale, "useful_bytes": total * 4 * (2 if k == "bw_copy" else 1)}
    elif k == "barrier_k":
        entry = "_Z9barrier_kPii"
        params = [buf("out", "i32", 1), sc("i32", p["iters"])]
    elif k.startswith("fma_f32<"):
        entry = f"_Z7fma_f32ILi{p['chains']}EEvPfffi"
        params = [buf("out", "f32", nthreads, role="out"), sc("f32", 0.999), sc("f32", 0.5), sc("i32", p["iters"])]
    elif k.startswith("fma_f64<"):
        entry = f"_Z7fma_f64ILi{p['chains']}EEvPdddi"
        params = [buf("out", "f64", nthreads, role="out"), sc("f64", 0.999), sc("f64", 0.5), sc("i32", p["iters"])]
    elif k.startswith("mufu_k<"):
        op, ch = k[7:-1].split(",")
        entry = f"_Z6mufu_kILi{op}ELi{ch}EEvPfi"
        params = [buf("out", "f32", nthreads, role="out"), sc("i32", p["iters"])]
    elif k.startswith("atom_spread<"):
        st = p["stride_words"]
        entry = f"_Z11atom_spreadILi{st}EEvPiPKii"
        params = [buf("p", "i32", b[0] * st), buf("zero", "i32", nthreads, role="in"), sc("i32", p["iters"])]
    elif k == "stream_dot":
        n = p["n"]
        entry = "_Z10stream_dotPKdS0_Pdx"
        params = [buf("a", "f64", n, "unit_f64", "in"), buf("b", "f64", n, "unit_f64", "in"), buf("out", "f64", 1, role="out"), sc("i64", n)]
    elif k == "empty_k":
        entry, params = "_Z7empty_kv", []
    elif k == "store_only":
        entry, params = "_Z10store_onlyPf", [buf("out", "f32", nthreads, role="out")]
    else:
        return None
    return entry, params, g, {}

def main():
    src = json.load(open(os.path.join(HERE, "results", "micro.json")))
    ptx = open(os.path.join(HERE, "ptx", "micro.ptx")).read()
    cases = []
    for c in src["configs"]:
        r = case_of(c)
        if r is None:
            continue
        entry, params, grid, extra = r
        assert f".entry {entry}(" in ptx, entry
        ncu = {m: c["ncu"].get(m) for m in ("sm__cycles_elapsed.max", "sm__cycles_elapsed.avg", "smsp__inst_executed.sum",
                                           "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_op_read.sum",
                                           "lts__t_sectors_op_write.sum", "gpu__time_duration.sum")}
        h200 = {"num_regs": c["num_regs"], "local_bytes": c["local_bytes"], "static_shared_bytes": c["static_shared_bytes"], "ncu": ncu}
        case = {"name": c["name"], "group": c["group"], "ptx": "ptx/micro.ptx", "kernel": entry, "grid": grid, "block": c["block"],
                "dynamic_shared_bytes": 0, "params": params, "expect": {}, "h200": h200}
        case.update(extra)
        cases.append(case)
    out = {"note": "calibration microbenchmarks as timing cases; written by gen_cases.py from results/micro.json", "gpu": "h200", "cases": cases}
    with open(os.path.join(HERE, "cases.json"), "w") as f:
        json.dump(out, f, indent=1)
    print(len(cases), "cases")

main()
