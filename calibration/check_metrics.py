#!/usr/bin/env python3
"""Drops metric names this Nsight Compute does not know: profiles a tiny program with the whole
list, removes any name an ==ERROR== line mentions, and retries. Prints the accepted list."""
import subprocess, sys
names = [m for m in open(sys.argv[1]).read().split() if m]
prog = sys.argv[2:]
dropped = []
for attempt in range(8):
    r = subprocess.run(["ncu", "--clock-control", "none", "--csv", "--page", "raw", "--metrics", ",".join(names)] + prog,
                       capture_output=True, text=True)
    text = r.stdout + r.stderr
    errs = [l for l in text.splitlines() if "==ERROR==" in l or "==WARNING==" in l]
    bad = [m for m in names if any(m in l or m.split(".")[0] in l for l in errs)]
    if not bad:
        if r.returncode != 0 and errs:
            sys.stderr.write("ncu failed without naming a metric:\n" + "\n".join(errs) + "\n")
        break
    dropped += bad
    names = [m for m in names if m not in bad]
sys.stderr.write("dropped: %s\n" % ",".join(dropped))
print(",".join(names))
