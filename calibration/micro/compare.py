#!/usr/bin/env python3
"""Runs micro/cases.json (or --case NAMES) through `warpsim corpus --mode timing --gpu h200`
and prints the model's cycles beside the H200's sm__cycles_elapsed.max, per case, with the
ratio; `bw_*` cases scaled down (see gen_cases.py) are compared by useful GB/s.
Usage: compare.py WARPSIM [CASE ...] [--json OUT]"""
import json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))

def main():
    args = sys.argv[1:]
    out = None
    if "--json" in args:
        i = args.index("--json"); out = args[i + 1]; del args[i:i + 2]
    exe, names = args[0], args[1:]
    man = json.load(open(os.path.join(HERE, "cases.json")))
    by = {c["name"]: c for c in man["cases"]}
    cmd = [exe, "corpus", os.path.join(HERE, "cases.json"), "--mode", "timing", "--gpu", os.environ.get("WARPSIM_GPU", "h200"), "--json", "--no-metrics"]
    for n in names:
        cmd += ["--case", n]
    r = subprocess.run(cmd, capture_output=True, text=True)
    try:
        res = json.loads(r.stdout)
    except Exception:
        print(r.stdout[-2000:], r.stderr[-2000:]); sys.exit(1)
    rows = []
    for cr in res.get("cases", []):
        c = by.get(cr.get("name"))
        if c is None:
            continue
        cyc = cr.get("cycles") or (cr.get("timing") or {}).get("cycles")
        h = c["h200"]["ncu"]["sm__cycles_elapsed.max"]
        row = {"name": c["name"], "group": c["group"], "h200_cycles": h, "model_cycles": cyc, "error": cr.get("error")}
        if c.get("scale", 1) != 1 and cyc:
            # useful GB/s at 1.98 GHz-equivalent: compare bytes per cycle over the kernel (launch cost excluded on both)
            base = 3300
            row["h200_bytes_per_cycle"] = c["useful_bytes"] * c["scale"] / max(h - base, 1)
            row["model_bytes_per_cycle"] = c["useful_bytes"] / max(cyc - base, 1)
            row["ratio"] = row["h200_bytes_per_cycle"] / row["model_bytes_per_cycle"]
        elif cyc:
            row["ratio"] = cyc / h
        rows.append(row)
    for r_ in rows:
        print(f"{r_['name']:40s} h200 {r_['h200_cycles']:>10} model {str(r_['model_cycles']):>10}  x{r_.get('ratio', float('nan')):.3f} {r_['error'] or ''}")
    if out:
        json.dump(rows, open(out, "w"), indent=1)

main()
