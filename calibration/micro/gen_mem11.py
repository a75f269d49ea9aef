#!/usr/bin/env python3
"""Writes micro/mem11_cases.json: the `mem11` group of results/micro.json (issue 11's
memory-metric probes: vector global loads, 64/128-bit shared loads and stores by stride,
constant-memory loads by access pattern, warp-aggregated atomics) as shared-corpus cases,
each with the H200's Nsight Compute memory counts in `h200.ncu`. The launch shapes and
arguments are the ones micro.cu used; `crates/cli/tests/mem_metrics.rs` runs them and
compares the counts. No outputs are checked (`expect` is empty)."""
import json, os

HERE = os.path.dirname(os.path.abspath(__file__))
METRICS = [
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smsp__inst_executed_op_ldc.sum", "idc__requests.sum",
    "smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum",
    "smsp__sass_inst_executed_op_global_atom.sum", "smsp__sass_inst_executed_op_global_red.sum",
]

def buf(name, dtype, count, init="zeros", role="inout"):
    return {"kind": "buffer", "name": name, "dtype": dtype, "count": int(max(count, 1)), "init": init, "role": role}

def sc(ty, v):
    return {"kind": "scalar", "type": ty, "value": v}

TY = {4: ("f", "f"), 8: ("6float2", "6float2"), 16: ("6float4", "6float4")}

def case_of(c):
    g, b, p, k = c["grid"], c["block"], c["params"], c["kernel"]
    n = g[0] * b[0]
    if k.startswith(("gvec_ld<", "svec_ld<", "svec_st<")):
        words = p["bytes"] // 4
        t = TY[p["bytes"]][0]
        s = p["stride_elems"]
        if k.startswith("gvec_ld<"):
            entry = f"_Z7gvec_ldI{t}EvPKT_PS{0 if words == 1 else 1}_i"
            params = [buf("in", "f32", n * max(s, 1) * words, "unit_f32", "in"), buf("out", "f32", n * words, role="out"), sc("i32", s)]
        else:
            entry = f"_Z7{k[:7]}I{t}EvPT_i"
            params = [buf("out", "f32", n * words, role="out"), sc("i32", s)]
    elif k.startswith("const_ld<"):
        entry = f"_Z8const_ldILi{k[9]}EEvPKiPfi"
        params = [buf("idx", "u32", 1 << 22, "hash_u32", "in"), buf("out", "f32", n, role="out"), sc("i32", p["iters"])]
    elif k in ("wagg_atomic", "wagg_atomic_cg", "naive_atomic_compact"):
        entry = {"wagg_atomic": "_Z11wagg_atomicPKjPjPi", "wagg_atomic_cg": "_Z14wagg_atomic_cgPKjPjPi",
                 "naive_atomic_compact": "_Z20naive_atomic_compactPKjPjPi"}[k]
        params = [buf("in", "u32", 1 << 22, "hash_u32", "in"), buf("out", "u32", n, role="out"), buf("counter", "i32", 1)]
    else:
        raise SystemExit(f"mem11 kernel {k} has no case form")
    return entry, params

def main():
    src = json.load(open(os.path.join(HERE, "results", "micro.json")))
    ptx = open(os.path.join(HERE, "ptx", "micro.ptx")).read()
    cases = []
    for c in src["configs"]:
        if c["group"] != "mem11":
            continue
        entry, params = case_of(c)
        assert f".entry {entry}(" in ptx, entry
        ncu = {m: c["ncu"][m] for m in METRICS if m in c["ncu"]}
        h200 = {"num_regs": c["num_regs"], "local_bytes": c["local_bytes"], "static_shared_bytes": c["static_shared_bytes"], "ncu": ncu}
        cases.append({"name": c["name"], "group": "mem11", "ptx": "ptx/micro.ptx", "kernel": entry, "grid": c["grid"], "block": c["block"],
                      "dynamic_shared_bytes": 0, "params": params, "expect": {}, "h200": h200})
    out = {"note": "issue 11 memory-metric probes with the H200's counts; written by gen_mem11.py from results/micro.json", "gpu": "h200", "cases": cases}
    with open(os.path.join(HERE, "mem11_cases.json"), "w") as f:
        json.dump(out, f, indent=1)
    print(len(cases), "cases")

main()
