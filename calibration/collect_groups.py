#!/usr/bin/env python3
"""Adds (or replaces) whole groups of micro/results/micro.json from a later, smaller device call
whose raw folder holds ncu_manifest_GROUP.jsonl and ncu_micro_GROUP.csv (Nsight Compute, same
metrics and flags as collect.py's), and takes that call's micro.ptx when given.
Usage: collect_groups.py RAW_DIR GROUP... (then gen_cases.py)"""
import json, os, shutil, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.argv, args = sys.argv[:2], sys.argv[2:]
src = open(os.path.join(HERE, "collect.py")).read()
ns = {"__file__": os.path.join(HERE, "collect.py")}
exec(src.split("\ndef micro(")[0], ns)  # num(), read_ncu(), HELPERS
raw = sys.argv[1]
keep = [l.strip() for l in open(os.path.join(HERE, "micro", "metrics_micro.txt")) if l.strip()]
path = os.path.join(HERE, "micro", "results", "micro.json")
doc = json.load(open(path))
configs = [c for c in doc["configs"] if c["group"] not in args]
for g in args:
    man = [json.loads(l) for l in open(os.path.join(raw, f"ncu_manifest_{g}.jsonl"))]
    rows = ns["read_ncu"](os.path.join(raw, f"ncu_micro_{g}.csv"), keep)
    assert len(rows) == len(man), (g, len(rows), len(man))
    for o, r in zip(man, rows):
        e = {k: o[k] for k in ("group", "name", "kernel", "grid", "block", "params", "num_regs", "local_bytes", "static_shared_bytes")}
        e["event_time"], e["result"] = None, o.get("result")
        e["ncu_kernel_name"], e["ncu"] = r["kernel_name"], r["metrics"]
        configs.append(e)
with open(path, "w") as f:
    f.write('{"note": ' + json.dumps(doc["note"]) + ',\n "configs": [\n')
    f.write(",\n".join(json.dumps(e, sort_keys=False) for e in configs))
    f.write("\n]}\n")
if os.path.exists(os.path.join(raw, "micro.ptx")):
    shutil.copy(os.path.join(raw, "micro.ptx"), os.path.join(HERE, "micro", "ptx", "micro.ptx"))
print(len(configs), "configs")
