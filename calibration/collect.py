#!/usr/bin/env python3
"""Turns one device run's raw files (the r/ folder of results.tgz) into the committed results.

  collect.py RAW_DIR
    micro/results/micro.json        one object per microbenchmark config: launch shape, params,
                                    attributes, event timing (time run) and Nsight Compute metrics (ncu run)
    validation/cases.json           cases_spec.json + expect + h200 (timing, attributes, ncu)
    validation/expected/*.bin, validation/kernels.ptx (the device's nvcc 13.0 output)
    numerics/golden/*                numerics outputs as recorded
    ../tests/programs/h200/*         program recordings
"""
import csv, io, json, os, shutil, sys

HERE = os.path.dirname(os.path.abspath(__file__))
RAW = sys.argv[1]
HELPERS = ("chase_init", "fill_f32", "hash_fill")
# optional: a second run's raw folder (repeat timings, the same outputs checked)
RAW2 = os.environ.get("RAW_REPEAT")
REPEAT = json.load(open(os.path.join(RAW2, "val", "results.json"))) if RAW2 else None


from ncu_csv import num, read_ncu  # noqa: E402  (this folder is on sys.path when run)


def micro(raw=None, outname="micro.json"):
    RAW_ = raw or RAW
    keep = open(os.path.join(RAW_, "micro_metrics_accepted.txt")).read().strip().split(",")
    timed = {}
    for line in open(os.path.join(RAW_, "micro_time.jsonl")):
        o = json.loads(line)
        timed[o["name"]] = o
    res = []
    groups = ["base", "atom", "atomdyn", "local", "call", "bw", "lat", "bar", "issue", "smem", "mma", "mem11"]
    for g in groups:
        mp = os.path.join(RAW_, "ncu_manifest_%s.jsonl" % g)
        if not os.path.exists(mp):
            continue
        man = [json.loads(l) for l in open(mp)]
        rows = [r for r in read_ncu(os.path.join(RAW_, "ncu_micro_%s.csv" % g), keep) if not r["kernel_name"].split("(")[0].split("<")[0].strip().endswith(HELPERS)]
        if len(rows) != len(man):
            print("group %s: %d ncu rows for %d configs" % (g, len(rows), len(man)))
        for o, r in zip(man, rows):
            t = timed.get(o["name"], {})
            e = {k: o[k] for k in ("group", "name", "kernel", "grid", "block", "params", "num_regs", "local_bytes", "static_shared_bytes")}
            e["event_time"] = t.get("event_time")
            e["result"] = t.get("result") if t.get("result") is not None else o.get("result")
            if o.get("result") is not None:
                e["result_ncu_run"] = o["result"]
            e["ncu_kernel_name"] = r["kernel_name"]
            e["ncu"] = r["metrics"]
            res.append(e)
    os.makedirs(os.path.join(HERE, "micro", "results"), exist_ok=True)
    with open(os.path.join(HERE, "micro", "results", outname), "w") as f:
        f.write('{"note": "warpsim calibration microbenchmarks measured on an NVIDIA H200; see ../../README.md",\n "configs": [\n')
        f.write(",\n".join(json.dumps(e, sort_keys=False) for e in res))
        f.write("\n]}\n")
    print("micro:", len(res), "configs")


def validation():
    spec = json.load(open(os.path.join(HERE, "validation", "cases_spec.json")))
    res = json.load(open(os.path.join(RAW, "val", "results.json")))
    keep = open(os.path.join(RAW, "corpus_metrics_accepted.txt")).read().strip().split(",")
    rows = read_ncu(os.path.join(RAW, "ncu_validation.csv"), keep)
    by_kernel = {}
    cases = spec["cases"]
    if len(rows) != len(cases):
        print("validation: %d ncu rows for %d cases" % (len(rows), len(cases)))
    for c, r in zip(cases, rows):
        assert r["kernel_name"].split("(")[0].strip() == c["kernel"], (r["kernel_name"], c["kernel"])
        by_kernel[c["name"]] = r["metrics"]
    for c in cases:
        rr = res[c["name"]]
        c["expect"] = rr["expect"]
        h = dict(rr["h200"])
        if REPEAT and c["name"] in REPEAT:
            h["time_us_median_repeat"] = REPEAT[c["name"]]["h200"]["time_us_median"]
            assert REPEAT[c["name"]]["expect"].keys() == rr["expect"].keys()
            for k, e in REPEAT[c["name"]]["expect"].items():
                assert e["sha256"] == rr["expect"][k]["sha256"], (c["name"], k)
        h["ncu"] = dict(sorted(by_kernel.get(c["name"], {}).items()))
        c["h200"] = h
    spec["note"] += (" h200.time_us_median: 30 launches, each timed on the host around launch and synchronise "
                     "(launch overhead included, warm caches); event_time_us_median: CUDA events around the same launches. "
                     "ncu: Nsight Compute 2025.3.1, one launch, cold caches (--cache-control all), --clock-control none.")
    json.dump(spec, open(os.path.join(HERE, "validation", "cases.json"), "w"), indent=1)
    ed = os.path.join(HERE, "validation", "expected")
    os.makedirs(ed, exist_ok=True)
    for fn in os.listdir(os.path.join(RAW, "val", "expected")):
        shutil.copy(os.path.join(RAW, "val", "expected", fn), ed)
    shutil.copy(os.path.join(RAW, "kernels.ptx"), os.path.join(HERE, "validation", "kernels.ptx"))
    print("validation:", len(cases), "cases")


def numerics():
    src = os.path.join(RAW, "numerics")
    if not os.path.isdir(src):
        return
    dst = os.path.join(HERE, "numerics", "golden")
    os.makedirs(dst, exist_ok=True)
    for fn in os.listdir(src):
        shutil.copy(os.path.join(src, fn), dst)
    shutil.copy(os.path.join(RAW, "numerics.ptx"), os.path.join(HERE, "numerics", "numerics.ptx"))
    print("numerics:", len(os.listdir(dst)), "files")


def programs():
    src = os.path.join(RAW, "programs")
    if not os.path.isdir(src):
        return
    dst = os.path.join(HERE, "..", "tests", "programs", "h200")
    os.makedirs(dst, exist_ok=True)
    for fn in os.listdir(src):
        shutil.copy(os.path.join(src, fn), dst)
    print("programs:", len(os.listdir(src)), "files")


for step in sys.argv[2:] or ["micro", "validation", "numerics", "programs"]:
    if step.startswith("micro="):  # micro=OUTNAME: this raw folder's micro results under another name
        micro(RAW, step.split("=", 1)[1])
    else:
        globals()[step]()
