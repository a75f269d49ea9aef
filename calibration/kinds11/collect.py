#!/usr/bin/env python3
"""Joins one run_kinds11.sh output folder into cases.json (cases_spec.json + expect + h200 with
Nsight Compute's counts), expected/*.bin and kernels.ptx (the device's nvcc output).

  collect.py RAW_DIR"""
import json, os, shutil, sys, tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
RAW = sys.argv[1]


sys.path.insert(0, os.path.dirname(HERE))
from ncu_csv import read_ncu  # noqa: E402

keep = open(os.path.join(RAW, "metrics_accepted.txt")).read().replace("\n", ",").strip(",").split(",")
profiles = [(r["kernel_name"], r["metrics"]) for r in read_ncu(os.path.join(RAW, "ncu.csv"), keep)]
spec = json.load(open(os.path.join(HERE, "cases_spec.json")))
tmp = os.path.join(HERE, ".val")
with tarfile.open(os.path.join(RAW, "val.tgz")) as t:
    t.extractall(tmp, filter="data")
res = json.load(open(os.path.join(tmp, "val", "results.json")))
assert len(profiles) == len(spec["cases"]), (len(profiles), len(spec["cases"]))
for c, (kname, m) in zip(spec["cases"], profiles):
    assert kname.split("(")[0].strip() == c["kernel"], (kname, c["kernel"])
    c["expect"] = res[c["name"]]["expect"]
    c["h200"] = dict(res[c["name"]]["h200"], ncu=dict(sorted(m.items())))
spec["note"] += (" ncu: Nsight Compute, one launch, cold caches (--cache-control all), --clock-control none;"
                 " time_us_median: 30 host-timed launches with a synchronise each.")
json.dump(spec, open(os.path.join(HERE, "cases.json"), "w"), indent=1)
os.makedirs(os.path.join(HERE, "expected"), exist_ok=True)
for fn in os.listdir(os.path.join(tmp, "val", "expected")):
    shutil.copy(os.path.join(tmp, "val", "expected", fn), os.path.join(HERE, "expected", fn))
shutil.rmtree(tmp)
shutil.copy(os.path.join(RAW, "kernels.ptx"), os.path.join(HERE, "kernels.ptx"))
print(len(spec["cases"]), "cases")
