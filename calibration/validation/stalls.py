#!/usr/bin/env python3
"""Compares the timing model's stall reasons per source line with the H200's on the validation
set (held out: never used to fit anything).

The H200 side is Nsight Compute's warp-state sampling, one sample per SM every 64 cycles
(`--warp-sampling-interval 1`), exported per CUDA line
(`../validation_source/stalls/stalls_cuda_sass.csv.gz`, from `../run_stalls.sh`). The model side
is `warpsim corpus cases.json --case NAME --mode timing --gpu h200 --json`: per line, warp-cycles
by stall reason, plus its issue cycles as `selected`. Both are turned into shares of the kernel's
total, so a sampled count and a cycle count compare directly.

Per case it prints:
  lines    overlap of where the time goes, over lines: sum over lines of min(H200 share, model share)
           (1 = the same distribution, 0 = disjoint);
  reasons  the same over stall reasons, whole kernel;
  both     the same over (line, reason) pairs;
  hot      whether the model's hottest line is the H200's, and the top reason of that line on each side.
Usage: stalls.py WARPSIM [--json OUT] [--detail] [--small | CASE ...]
  --detail  also prints, per case, each line's share on both sides with its top reasons.
"""
import csv, gzip, json, os, statistics, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
CSV = os.path.join(HERE, "..", "validation_source", "stalls", "stalls_cuda_sass.csv.gz")
# Nsight Compute's source-page columns -> the model's names (smsp__warps_issue_stalled_<name>).
REASONS = {"stall_barrier": "barrier", "stall_branch_resolving": "branch_resolving", "stall_dispatch": "dispatch_stall",
           "stall_drain": "drain", "stall_imc": "imc_miss", "stall_lg": "lg_throttle", "stall_long_sb": "long_scoreboard",
           "stall_math": "math_pipe_throttle", "stall_membar": "membar", "stall_mio": "mio_throttle", "stall_misc": "misc",
           "stall_no_inst": "no_instructions", "stall_not_selected": "not_selected", "stall_selected": "selected",
           "stall_short_sb": "short_scoreboard", "stall_sleep": "sleeping", "stall_tex": "tex_throttle", "stall_wait": "wait"}


def h200_launches(path=CSV):
    """One entry per profiled launch, in launch order: (function, {(file, line): {reason: samples}}).
    A launch spans consecutive sections of one function (one section per source file)."""
    out, hdr, fn, path_name = [], None, None, None
    with gzip.open(path, "rt") as f:
        for row in csv.reader(f):
            if not row:
                continue
            if row[0] in ("File Path", "File Name"):
                path_name = os.path.basename(row[1])
                continue
            if row[0] == "Function Name":
                if fn != row[1] or not out:
                    out.append((row[1], {}))
                fn = row[1]
                continue
            if row[0] == "Line No":
                hdr = row
                continue
            if row[0] == "" or hdr is None:
                continue  # SASS rows under a line
            per = {}
            for col, name in REASONS.items():
                if col in hdr:
                    v = row[hdr.index(col)]
                    if v not in ("", "-") and int(v):
                        per[name] = int(v)
            if per:
                out[-1][1][(path_name, int(row[0]))] = per
    return out


def model_lines(exe, name):
    r = subprocess.run([exe, "corpus", os.path.join(HERE, "cases.json"), "--mode", "timing", "--gpu", os.environ.get("WARPSIM_GPU", "h200"),
                        "--json", "--case", name], capture_output=True, text=True)
    case = json.loads(r.stdout)["cases"][0]
    lines = {}
    for ln in case["timing"]["lines"]:
        file, _, no = ln["line"].rpartition(":")
        per = {k: v for k, v in ln["stalls"] if v}
        if ln.get("issued"):
            per["selected"] = per.get("selected", 0) + ln["issued"]
        if per and no.isdigit():
            lines[(os.path.basename(file), int(no))] = per
    return lines


def shares(lines):
    total = sum(sum(p.values()) for p in lines.values()) or 1
    by_line = {k: sum(p.values()) / total for k, p in lines.items()}
    by_reason, joint = {}, {}
    for k, p in lines.items():
        for r, v in p.items():
            by_reason[r] = by_reason.get(r, 0) + v / total
            joint[(k, r)] = v / total
    return by_line, by_reason, joint


def overlap(a, b):
    return sum(min(v, b.get(k, 0)) for k, v in a.items())


def compare(h, m):
    hl, hr, hj = shares(h)
    ml, mr, mj = shares(m)
    hot_h = max(hl, key=hl.get)
    hot_m = max(ml, key=ml.get) if ml else None
    top = lambda d: max(d, key=d.get) if d else None
    return {"lines": overlap(hl, ml), "reasons": overlap(hr, mr), "both": overlap(hj, mj),
            "hot_line_h200": "%s:%d" % hot_h, "hot_line_model": "%s:%d" % hot_m if hot_m else None,
            "hot_line_same": hot_h == hot_m, "hot_reason_h200": top(h[hot_h]), "hot_reason_model": top(m.get(hot_h, {})),
            "samples_h200": sum(sum(p.values()) for p in h.values())}


def print_detail(h, m):
    hl, ml = shares(h)[0], shares(m)[0]
    top = lambda p: ", ".join("%s %.0f%%" % (r, 100 * v / sum(p.values())) for r, v in sorted(p.items(), key=lambda x: -x[1])[:3])
    for k in sorted(set(hl) | set(ml), key=lambda k: -max(hl.get(k, 0), ml.get(k, 0))):
        if max(hl.get(k, 0), ml.get(k, 0)) < 0.01:
            break
        print("    %-28s H200 %5.1f%% (%s)\n    %-28s model %4.1f%% (%s)" % ("%s:%d" % k, 100 * hl.get(k, 0), top(h.get(k, {})), "",
              100 * ml.get(k, 0), top(m.get(k, {}))))


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    exe, out = args[0], None
    if "--json" in args:
        i = args.index("--json")
        out = args[i + 1]
        del args[i:i + 2]
    detail = "--detail" in args
    if detail:
        args.remove("--detail")
    names = args[1:]
    man = json.load(open(os.path.join(HERE, "cases.json")))
    cases = man["cases"]
    launches = h200_launches()
    if len(launches) != len(cases) or any(f != c["kernel"] for (f, _), c in zip(launches, cases)):
        sys.exit("the profile's launches do not follow cases.json: %s" % [f for f, _ in launches])
    if names == ["--small"]:
        names = [c["name"] for c in cases[:17]]
    rows = []
    print("%-24s %6s %6s %6s %8s  %-16s %-16s %s" % ("case", "lines", "reason", "both", "samples", "hot line H200", "hot line model", "top reason there (H200 / model)"))
    for c, (_, h) in zip(cases, launches):
        if names and c["name"] not in names:
            continue
        m = model_lines(exe, c["name"])
        row = {"name": c["name"], **compare(h, m)}
        rows.append(row)
        if detail:
            print_detail(h, m)
        print("%-24s %6.2f %6.2f %6.2f %8d  %-16s %-16s %s / %s" % (row["name"], row["lines"], row["reasons"], row["both"], row["samples_h200"],
              row["hot_line_h200"], row["hot_line_model"], row["hot_reason_h200"], row["hot_reason_model"]), flush=True)
    summ = {k: statistics.mean(r[k] for r in rows) for k in ("lines", "reasons", "both")}
    summ["hot_line_same"] = sum(r["hot_line_same"] for r in rows)
    summ["hot_reason_same"] = sum(r["hot_reason_h200"] == r["hot_reason_model"] for r in rows)
    summ["n"] = len(rows)
    print("mean overlap: lines %.2f, reasons %.2f, (line, reason) %.2f; hottest line the same in %d of %d, its top reason in %d"
          % (summ["lines"], summ["reasons"], summ["both"], summ["hot_line_same"], summ["n"], summ["hot_reason_same"]))
    if out:
        json.dump({"summary": summ, "cases": rows}, open(out, "w"), indent=1)


if __name__ == "__main__":
    main()
