#!/usr/bin/env python3
"""Scores the timing model on the validation set (held out: never used to fit anything):
runs each case through `WARPSIM corpus validation/cases.json --mode timing --gpu h200`
one at a time and compares the model's cycles with the H200's sm__cycles_elapsed.max.
Usage: score.py WARPSIM OUT.json [--small | CASE ...]; prints mean/median absolute error,
the worst case, and how many are more than 20% and more than 1.5x off."""
import json, os, statistics, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
SMALL = ["reduce_tree_1M", "reduce_shfl_4M", "scan_block_1M", "sgemm_tiled_512", "sgemm_reg4x4_512", "stencil5_1024",
         "bitonic_smem_64x1024", "transpose_naive_1024", "transpose_tiled_1024", "softmax_rows_256x512",
         "layernorm_rows_512x256", "attention_small_16h", "histogram_smem_1M", "spmv_csr_scalar_8192",
         "spmv_csr_vector_8192", "dot_f64_1M", "nw_tile16_512"]

def summary(rows):
    errs = [abs(r["ratio"] - 1) for r in rows if r.get("ratio")]
    if not errs:
        return {}
    worst = max(rows, key=lambda r: max(r["ratio"], 1 / r["ratio"]) if r.get("ratio") else 0)
    return {"n": len(errs), "mean_abs_err": statistics.mean(errs), "median_abs_err": statistics.median(errs),
            "worst": worst["name"], "worst_ratio": worst["ratio"], "over_20pct": sum(e > 0.2 for e in errs),
            "over_1_5x": sum(max(r["ratio"], 1 / r["ratio"]) > 1.5 for r in rows if r.get("ratio"))}

def main():
    exe, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    man = json.load(open(os.path.join(HERE, "cases.json")))
    if not names or names == ["--small"]:
        names = SMALL if names else [c["name"] for c in man["cases"]]
    h = {c["name"]: c["h200"]["ncu"]["sm__cycles_elapsed.max"] for c in man["cases"]}
    rows = []
    for n in names:
        r = subprocess.run([exe, "corpus", os.path.join(HERE, "cases.json"), "--mode", "timing", "--gpu", os.environ.get("WARPSIM_GPU", "h200"), "--json",
                            "--no-metrics", "--case", n], capture_output=True, text=True)
        try:
            c = json.loads(r.stdout)["cases"][0]
            cyc = c.get("cycles")
        except Exception:
            cyc = None
        row = {"name": n, "h200": h[n], "model": cyc, "ratio": cyc / h[n] if cyc else None}
        rows.append(row)
        print(f"{n:28s} H200 {h[n]:>9} model {cyc}  x{row['ratio'] or 0:.3f}", flush=True)
        json.dump({"rows": rows, "summary": summary(rows)}, open(out, "w"), indent=1)
    print(json.dumps(summary(rows), indent=1))

main()
