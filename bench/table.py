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
                if num not in g or not g[num]["seconds"]:
                    continue
                t = float(g[num]["seconds"])
                r = dict(zip(key, k))
                r[f"{num} s"] = g[num]["seconds"]
                for d in present:
                    if d in g and g[d]["seconds"] and \
                            float(g[d]["seconds"]) > 0:
                        r[f"{num}/{d}"] = f"{t / float(g[d]['seconds']):.3f}"
                rr.append(r)
            parts += [f"## Time ratios ({num} / other; below 1 means {num} "
                      "is faster)\n", table(rh, rr), ""]
    if suite in GOALS and "method" in header:
        parts += goal_table(rows, *GOALS[suite])
    open(md, "w").write("\n".join(parts) + "\n")


# suites whose goal is a ratio against the best of several peers:
# (numerator, peers, cases that must be `strided` times faster, strided)
GOALS = {
    "etp": ("passion", ["romio-coll", "romio-coll-tuned", "romio-indep"],
            ("6.5-", "6.6-"), 2.0),
    "etp-large": ("passion", ["romio-coll", "romio-coll-tuned",
                              "romio-indep"], (), 2.0),
}


def goal_table(rows, num, peers, strided_prefixes, factor):
    """Per case, P and regime: numerator / best peer, and whether the goal
    (strided cases: ratio <= 1/factor; others: ratio <= 1) is met."""
    key = ("case", "op", "procs", "regime")
    groups = OrderedDict()
    for r in rows:
        if r.get("seconds"):
            groups.setdefault(tuple(r[k] for k in key), {})[r["method"]] = r
    out, met, total = [], 0, 0
    for k, g in groups.items():
        have = [p for p in peers if p in g]
        if num not in g or not have:
            continue
        best = min(have, key=lambda p: float(g[p]["seconds"]))
        t, tb = float(g[num]["seconds"]), float(g[best]["seconds"])
        ratio = t / tb if tb > 0 else float("inf")
        strided = k[0].startswith(tuple(strided_prefixes)) if \
            strided_prefixes else False
        limit = 1.0 / factor if strided else 1.0
        ok = ratio <= limit
        met += ok
        total += 1
        out.append(dict(zip(key, k), **{
            f"{num} s": g[num]["seconds"], "best peer": best,
            "peer s": g[best]["seconds"], "ratio": f"{ratio:.3f}",
            "goal": f"<= {limit:g}", "met": "yes" if ok else "NO"}))
    if not out:
        return []
    head = list(key) + [f"{num} s", "best peer", "peer s", "ratio", "goal",
                        "met"]
    return [f"## Goal: {num} / best of {', '.join(peers)} "
            f"({met} of {total} met)\n", table(head, out), ""]


if __name__ == "__main__":
    main()
