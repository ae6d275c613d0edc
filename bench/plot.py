#!/usr/bin/env python3
"""Plot a suite's CSV as PNG with gnuplot: one panel per (procs, regime) and
operation, seconds per case (log scale), one bar per method.

Usage: plot.py SUITE CSV OUT.png   (exits 0 without a plot for suites whose
CSV has no case/method/seconds columns)
"""
import csv
import os
import subprocess
import sys
import tempfile
from collections import OrderedDict


def main():
    suite, path, png = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(path) as f:
        rows = list(csv.DictReader(f))
    if not rows or not {"case", "method", "seconds"} <= set(rows[0]):
        return 0
    # model-only rows (projections) have no time to plot
    rows = [r for r in rows if r["seconds"]]
    if not rows:
        return 0
    methods = list(OrderedDict.fromkeys(r["method"] for r in rows))
    panels = OrderedDict()
    for r in rows:
        key = (r.get("procs", ""), r.get("regime", ""), r.get("op", ""))
        panels.setdefault(key, OrderedDict()).setdefault(r["case"], {})[
            r["method"]] = r["seconds"]
    tmp = tempfile.mkdtemp()
    cmds = []
    n = len(panels)
    cols = 2 if n > 1 else 1
    nrows = (n + cols - 1) // cols
    cmds.append(f"set terminal pngcairo size {700 * cols},{330 * nrows} "
                "font ',9'")
    cmds.append(f"set output '{png}'")
    cmds.append(f"set multiplot layout {nrows},{cols} title "
                f"'passion bench {suite}: seconds (log scale)'")
    cmds += ["set style data histogram", "set style histogram clustered",
             "set style fill solid border -1", "set logscale y",
             "set key outside right", "set xtics rotate by -30",
             "set grid ytics"]
    for i, ((p, reg, op), cases) in enumerate(panels.items()):
        dat = os.path.join(tmp, f"p{i}.dat")
        with open(dat, "w") as f:
            f.write("case " + " ".join(m.replace(" ", "_") for m in methods)
                    + "\n")
            for c, ms in cases.items():
                vals = [ms.get(m, "NaN") or "NaN" for m in methods]
                f.write(c.replace(" ", "_") + " " + " ".join(vals) + "\n")
        ranks = "oversubscribed" if p and int(p) > (os.cpu_count() or 2) \
            else "dedicated"
        cmds.append(f"set title 'P={p} ({ranks}), {reg}, {op}'")
        # only the methods this panel has (gnuplot rejects an all-NaN
        # column, e.g. O_DIRECT rows that exist only in the cold regime)
        present = [j for j, m in enumerate(methods)
                   if any(m in ms for ms in cases.values())]
        plots = [f"'{dat}' using {j + 2}:xtic(1) title columnhead"
                 for j in present]
        cmds.append("plot " + ", ".join(plots))
    cmds.append("unset multiplot")
    subprocess.run(["gnuplot"], input="\n".join(cmds), text=True, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
