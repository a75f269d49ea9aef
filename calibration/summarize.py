#!/usr/bin/env python3
"""Headline numbers from micro/results/micro.json (printed as markdown tables; SUMMARY.md is its output)."""
import json, os

HERE = os.path.dirname(os.path.abspath(__file__))
C = json.load(open(os.path.join(HERE, "micro", "results", "micro.json")))["configs"]
SMS = 132


def threads(c):
    return c["grid"][0] * c["grid"][1] * c["grid"][2] * c["block"][0] * c["block"][1] * c["block"][2]


def warps(c):
    return c["grid"][0] * c["grid"][1] * c["grid"][2] * -(-c["block"][0] * c["block"][1] * c["block"][2] // 32)


def g(c, k):
    return c["ncu"].get(k, float("nan"))


def ev(c):
    return (c.get("event_time") or {}).get("median_us", float("nan"))


out = []
p = out.append
p("# Headline numbers (H200, from micro/results/micro.json)\n")
p("Cycles: `sm__cycles_elapsed.max` of one cold-cache Nsight Compute launch (clocks not locked). "
  "ns: `gpu__time_duration.sum` of that launch; event us: median of 15 warm launches timed with CUDA events.\n")

p("## Fixed costs and loop-length scaling\n")
p("| config | warps/SM | cycles | ncu ns | event us | inst executed |")
p("|---|---|---|---|---|---|")
for c in C:
    if c["group"] == "base":
        p("| %s | %s | %s | %s | %.2f | %s |" % (c["name"], c["params"].get("warps_per_sm", c["params"].get("warps_per_block", "")), g(c, "sm__cycles_elapsed.max"),
                                             g(c, "gpu__time_duration.sum"), ev(c), g(c, "smsp__inst_executed.sum")))

p("\n## Atomics (atom_: as written, ptxas aggregates warp-uniform integer addresses; atomdyn_: address not provably uniform)\n")
p("| config | threads x iters | ncu ns | cycles | Gatomics/s (ncu) | event us | L2 atom sectors | L2 red sectors | stall lg_throttle |")
p("|---|---|---|---|---|---|---|---|---|")
for c in C:
    if c["group"] not in ("atom", "atomdyn"):
        continue
    n = threads(c) * c["params"]["iters"]
    ns = g(c, "gpu__time_duration.sum")
    p("| %s | %d x %d | %s | %s | %.2f | %.2f | %s | %s | %s |" % (c["name"], threads(c), c["params"]["iters"], ns, g(c, "sm__cycles_elapsed.max"), n / ns,
                                                       ev(c), g(c, "lts__t_sectors_op_atom.sum"), g(c, "lts__t_sectors_op_red.sum"),
                                                       g(c, "smsp__average_warp_latency_issue_stalled_lg_throttle.ratio")))

p("\n## Bandwidth: v in [0, total), element (v*stride) & (span-1); useful bytes = 4 per v read and/or written\n")
p("| config | useful GB/s (ncu) | useful GB/s (event, warm) | DRAM read MB | DRAM write MB | L2 read sectors | L2 write sectors | cycles |")
p("|---|---|---|---|---|---|---|---|")
for c in C:
    if c["group"] != "bw":
        continue
    t = c["params"]["total"]
    useful = t * (8 if "copy" in c["name"] else 4)
    ns = g(c, "gpu__time_duration.sum")
    p("| %s | %.0f | %.0f | %.1f | %.1f | %s | %s | %s |" % (c["name"], useful / ns, useful / (ev(c) * 1e3), g(c, "dram__bytes_read.sum") / 1e6,
                                               g(c, "dram__bytes_write.sum") / 1e6, g(c, "lts__t_sectors_op_read.sum"), g(c, "lts__t_sectors_op_write.sum"),
                                               g(c, "sm__cycles_elapsed.max")))

p("\n## Latency (one thread, pointer chase, clock64 cycles per hop)\n")
p("| config | footprint | cycles/hop |")
p("|---|---|---|")
for c in C:
    if c["group"] == "lat":
        p("| %s | %d B | %s |" % (c["name"], c["params"]["footprint_bytes"], (c["result"] or {}).get("cycles_per_hop")))

p("\n## Barriers (one block per SM unless noted; 4096 x __syncthreads)\n")
p("| config | warps/block | cycles | cycles per barrier | stall barrier ratio |")
p("|---|---|---|---|---|")
for c in C:
    if c["group"] == "bar":
        cy = g(c, "sm__cycles_elapsed.max")
        p("| %s | %d | %s | %.1f | %s |" % (c["name"], c["params"]["warps_per_block"], cy, cy / c["params"]["iters"],
                                             g(c, "smsp__average_warp_latency_issue_stalled_barrier.ratio")))

p("\n## Issue throughput (warp instructions of the op per SM per cycle; 4 schedulers = 4.0 peak issue)\n")
p("| config | warps/SM | cycles | op warp-insts per SM-cycle | all warp-insts per SM-cycle | event us |")
p("|---|---|---|---|---|---|")
for c in C:
    if c["group"] not in ("issue", "mma"):
        continue
    w = warps(c)
    ops = w * c["params"]["iters"] * c["params"]["chains"]
    cy = g(c, "sm__cycles_elapsed.max")
    p("| %s | %d | %s | %.3f | %.3f | %.2f |" % (c["name"], c["params"]["warps_per_sm"], cy, ops / SMS / cy, g(c, "smsp__inst_executed.sum") / SMS / cy, ev(c)))

p("\n## Shared memory by width and stride (1024 loads per thread, 264 blocks of 8 warps)\n")
p("| config | cycles | cycles per warp-load per SM | wavefronts | bank conflicts |")
p("|---|---|---|---|---|")
for c in C:
    if c["group"] == "smem":
        cy = g(c, "sm__cycles_elapsed.max")
        loads = warps(c) * c["params"]["iters"] / SMS
        p("| %s | %s | %.2f | %s | %s |" % (c["name"], cy, cy / loads, g(c, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
                                            g(c, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")))

p("\n## Local memory, spills, calls\n")
p("| config | local bytes | cycles | event us | local ld sectors | local st sectors | inst executed |")
p("|---|---|---|---|---|---|---|")
for c in C:
    if c["group"] in ("local", "call"):
        p("| %s | %s | %s | %.2f | %s | %s | %s |" % (c["name"], c["local_bytes"], g(c, "sm__cycles_elapsed.max"), ev(c),
                                                      g(c, "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"), g(c, "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"),
                                                      g(c, "smsp__inst_executed.sum")))

p("\n## Issue 11 memory-metric probes\n")
keys = ["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "idc__requests.sum", "smsp__inst_executed_op_ldc.sum", "lts__t_sectors_op_atom.sum", "lts__t_sectors_op_red.sum"]
p("| config | " + " | ".join(k.replace("l1tex__", "").replace("_pipe_lsu_mem", "") for k in keys) + " |")
p("|---" * (len(keys) + 1) + "|")
for c in C:
    if c["group"] == "mem11":
        p("| %s | " % c["name"] + " | ".join(str(g(c, k)) for k in keys) + " |")

p("\n## Validation set (validation/cases.json)\n")
V = json.load(open(os.path.join(HERE, "validation", "cases.json")))["cases"]
p("| case | grid x block | time us (host) | event us | ncu cycles | regs | smem B | DRAM read MB | L2 read sectors | shared ld wavefronts / conflicts |")
p("|---|---|---|---|---|---|---|---|---|---|")
for c in V:
    h = c["h200"]
    n = h["ncu"]
    p("| %s | %s x %s | %.2f | %.2f | %d | %d | %d | %.2f | %d | %d / %d |" % (
        c["name"], c["grid"], c["block"], h["time_us_median"], h["event_time_us_median"], n["sm__cycles_elapsed.max"], h["num_regs"],
        h["static_shared_bytes"], n["dram__bytes_read.sum"] / 1e6, n["lts__t_sectors_op_read.sum"],
        n["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"], n["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]))

open(os.path.join(HERE, "SUMMARY.md"), "w").write("\n".join(out) + "\n")
print("\n".join(out))
