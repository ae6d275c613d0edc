#!/usr/bin/env python3
"""CSV of a benchmark suite -> markdown table, plus per-suite ratio tables.

Usage: table.py SUITE CSV OUT.md
Every row of the CSV appears in the table. Where a suite compares methods on
the same case (columns case, op, procs, regime), a second table gives each
method's time relative to a reference method measured in the same run.
"""
import csv
import sys
from collections import OrderedDict

# reference method per suite for the ratio table: (numerator, denominators)
RATIOS = {
    "sieve": ("direct", ["sieve", "auto", "romio-indep"]),
    "etp": ("passion", ["romio-coll", "romio-coll-tuned", "romio-indep",
                        "direct", "etp-static", "etp-dynamic"]),
    "etp-large": ("passion", ["romio-coll", "romio-coll-tuned",
                              "romio-indep", "direct"]),
    "prefetch": ("prefetch", ["no-prefetch"]),
    "reuse": ("reuse", ["no-reuse"]),
}


def fmt(v):
    try:
        x = float(v)
    except ValueError:
        return v
    if x == int(x) and abs(x) < 1e15 and "." not in v and "e" not in v:
        return v
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:.1f}"
    if abs(x) >= 1:
        return f"{x:.3f}"
    return f"{x:.3g}"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(fmt(r.get(h, "")) for h in header) + " |")
    return "\n".join(out)


def main():
    suite, path, md = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(path) as f:
        rows = list(csv.DictReader(f))
    if not rows:
        open(md, "w").write(f"# {suite}\n\n(no rows)\n")
        return
    header = list(rows[0].keys())
    parts = [f"# Benchmark `{suite}`\n", table(header, rows), ""]
    if suite in RATIOS and "method" in header:
        num, dens = RATIOS[suite]
        key = [k for k in ("case", "op", "procs", "regime") if k in header]
        groups = OrderedDict()
        for r in rows:
            groups.setdefault(tuple(r[k] for k in key), {})[r["method"]] = r
        present = [d for d in dens if any(d in g for g in groups.values())]
        if any(num in g for g in groups.values()) and present:
            rh = key + [f"{num} s"] + [f"{num}/{d}" for d in present]
            rr = []
            for k, g in groups.items():
                if num not in g:
                    continue
                t = float(g[num]["seconds"])
                r = dict(zip(key, k))
                r[f"{num} s"] = g[num]["seconds"]
                for d in present:
                    if d in g and float(g[d]["seconds"]) > 0:
                        r[f"{num}/{d}"] = f"{t / float(g[d]['seconds']):.3f}"
                rr.append(r)
            parts += [f"## Time ratios ({num} / other; below 1 means {num} "
                      "is faster)\n", table(rh, rr), ""]
    open(md, "w").write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
