"""Reading Nsight Compute's CSV (`--csv --page raw`): shared by collect.py, collect_groups.py
and kinds11/collect.py."""
import csv, io


def num(s):
    s = s.replace(",", "")
    try:
        f = float(s)
        return int(f) if f.is_integer() and "." not in s else f
    except ValueError:
        return s


def read_ncu(path, keep):
    t = open(path).read()
    i = t.find('"ID"')
    if i < 0:
        return []
    rows = list(csv.reader(io.StringIO(t[i:])))
    head, out = rows[0], []
    for r in rows[1:]:
        if not r or not r[0].isdigit():
            continue  # the units row
        d = dict(zip(head, r))
        m = {k: num(d[k]) for k in keep if k in d and d[k] != ""}
        out.append({"kernel_name": d.get("Kernel Name"), "grid": d.get("Grid Size"), "block": d.get("Block Size"), "metrics": m})
    return out
