#!/usr/bin/env python3
"""Plot a suite's CSV as PNG with gnuplot: one panel per (procs, regime) and
operation, seconds per case (log scale), one bar per method.

Usage: plot.py SUITE CSV OUT.png   (exits 0 without a plot for suites whose
CSV has no case/method/seconds columns)
       plot.py --planner SUITE CSV OUT.png   (auto under the planner: the
CSV's auto rows against the best peer, and first call against steady
state, sorted ratios with the goal lines; no plot where the CSV has no
planner column)
"""
import csv
import os
import subprocess
import sys
import tempfile
from collections import OrderedDict


def main():
    if sys.argv[1] == "--planner":
        suite, path, png = sys.argv[2], sys.argv[3], sys.argv[4]
        with open(path) as f:
            return planner_plot(list(csv.DictReader(f)), suite, png)
    suite, path, png = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(path) as f:
        rows = list(csv.DictReader(f))
    if suite == "patterns":
        return patterns_plot(rows, png)
    if suite == "convert":
        return convert_plot(rows, png)
    if not rows or not {"case", "method", "seconds"} <= set(rows[0]):
        return 0
    # model-only rows (projections) have no time to plot; a calibration
    # row is not a case; a row's mean over the repetitions where it has
    # one (bench-nodes: oversubscribed times come in scheduler ticks)
    rows = [r for r in rows
            if r["seconds"] and r.get("op") != "calibration"
            and r.get("kind") != "model"]
    if not rows:
        return 0
    methods = list(OrderedDict.fromkeys(r["method"] for r in rows))
    panels = OrderedDict()
    for r in rows:
        key = (r.get("procs", ""), r.get("regime", ""), r.get("op", ""))
        panels.setdefault(key, OrderedDict()).setdefault(r["case"], {})[
            r["method"]] = r.get("mean_seconds") or r["seconds"]
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
        # gnuplot refuses a histogram column without any value
        present = [m for m in methods
                   if any(ms.get(m) for ms in cases.values())]
        with open(dat, "w") as f:
            f.write("case " + " ".join(m.replace(" ", "_") for m in present)
                    + "\n")
            for c, ms in cases.items():
                vals = [ms.get(m, "NaN") or "NaN" for m in present]
                f.write(c.replace(" ", "_") + " " + " ".join(vals) + "\n")
        ranks = "oversubscribed" if p and int(p) > (os.cpu_count() or 2) \
            else "dedicated"
        cmds.append(f"set title 'P={p} ({ranks}), {reg}, {op}'")
        plots = [f"'{dat}' using {j + 2}:xtic(1) title columnhead"
                 for j in range(len(present))]
        cmds.append("plot " + ", ".join(plots))
    cmds.append("unset multiplot")
    subprocess.run(["gnuplot"], input="\n".join(cmds), text=True, check=True)
    return 0


def convert_plot(rows, png):
    """Suite convert: fraction of the device's rate (dd on the same bytes)
    per case, one bar per method."""
    rows = [r for r in rows if r.get("fraction_of_device")]
    if not rows:
        return 0
    methods = list(OrderedDict.fromkeys(r["method"] for r in rows))
    cases = OrderedDict()
    for r in rows:
        cases.setdefault(r["case"], {})[r["method"]] = r["fraction_of_device"]
    tmp = tempfile.mkdtemp()
    dat = os.path.join(tmp, "c.dat")
    with open(dat, "w") as f:
        f.write("case " + " ".join(methods) + "\n")
        for c, ms in cases.items():
            f.write(c + " " + " ".join(ms.get(m, "NaN") for m in methods)
                    + "\n")
    r0 = rows[0]
    mb = int(r0["size_bytes"]) >> 20
    cmds = ["set terminal pngcairo size 900,420 font ',9'",
            f"set output '{png}'",
            f"set title 'passion bench convert: {mb} MiB, P={r0['procs']}, "
            f"{r0['regime']}, load {r0['load']}: fraction of dd rate on the "
            "same bytes'",
            "set style data histogram", "set style histogram clustered",
            "set style fill solid border -1", "set key outside right",
            "set grid ytics", "set yrange [0:*]",
            "plot " + ", ".join(f"'{dat}' using {j + 2}:xtic(1) title "
                                "columnhead" for j in range(len(methods)))]
    subprocess.run(["gnuplot"], input="\n".join(cmds), text=True, check=True)
    return 0


PEERS = ["romio-coll", "romio-coll-tuned", "romio-indep", "hdf5-coll",
         "hdf5-indep"]
# the same peers on Open MPI's OMPIO (the programs label them by the
# MPI-IO found at run time)
PEERS += [p.replace("romio-", "ompio-") for p in PEERS
          if p.startswith("romio-")]


def patterns_plot(rows, png):
    """Suite patterns: passion / best peer per case, sorted, one curve per
    (P, regime), log scale, with the goal lines at 1.0 and 0.5."""
    groups = OrderedDict()
    for r in rows:
        if r.get("check") == "ok" and r["seconds"]:
            groups.setdefault((r["procs"], r["regime"], r["case"]), {})[
                r["method"]] = float(r["seconds"])
    curves = OrderedDict()
    for (p, reg, _), g in groups.items():
        peers = [g[m] for m in PEERS if m in g]
        if "passion" in g and peers and min(peers) > 0:
            curves.setdefault((p, reg), []).append(g["passion"] / min(peers))
    if not curves:
        return 0
    tmp = tempfile.mkdtemp()
    plots = []
    for i, ((p, reg), v) in enumerate(curves.items()):
        v.sort()
        dat = os.path.join(tmp, f"c{i}.dat")
        with open(dat, "w") as f:
            for j, x in enumerate(v):
                f.write(f"{(j + 0.5) / len(v):.6f} {x:.6g}\n")
        plots.append(f"'{dat}' using 1:2 with linespoints pt 7 ps 0.4 "
                     f"title 'P={p} {reg} ({len(v)} cases)'")
    cmds = ["set terminal pngcairo size 900,560 font ',10'",
            f"set output '{png}'",
            "set title 'passion bench patterns: passion (auto) / best of "
            "five peer modes, per case, sorted'",
            "set xlabel 'fraction of cases'", "set ylabel 'ratio (log)'",
            "set logscale y", "set grid", "set key top left",
            "set arrow from 0,1 to 1,1 nohead lw 2 lc rgb 'red'",
            "set arrow from 0,0.5 to 1,0.5 nohead lw 2 dt 2 lc rgb 'dark-green'",
            "set label 'goal: 90th percentile <= 1.0' at 0.02,1.12",
            "set label 'median <= 0.5' at 0.02,0.56",
            "set arrow from 0.9, graph 0 to 0.9, graph 1 nohead dt 3",
            "set arrow from 0.5, graph 0 to 0.5, graph 1 nohead dt 3",
            "plot " + ", ".join(plots)]
    subprocess.run(["gnuplot"], input="\n".join(cmds), text=True, check=True)
    return 0


def planner_plot(rows, suite, png):
    """Auto under the planner, both modes (bench/table.py planner_ratios):
    left, auto steady / best peer steady per case, sorted, one curve per
    (P, regime, method), goal lines at 1.0 and 1.5; right, auto first /
    auto steady, goal line at 1.05. Log scales."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import table
    table.mpiio_of(rows)  # ompio-* peers under their tables' names
    es = table.planner_ratios(rows, suite)
    if not es:
        return 0
    keep = table.PLANNER[suite][0]
    ps, regs, load, cores = table.run_conditions([r for r in rows
                                                  if keep(r)])
    tmp = tempfile.mkdtemp()
    panels = []
    for k, what, goals in (
            ("r_peer", "auto steady / best peer steady",
             [(1.0, "red", 1, "1.0"), (1.5, "dark-orange", 2, "1.5")]),
            ("r_first", "auto first call / auto steady",
             [(1.05, "red", 1, "1.05")])):
        curves = OrderedDict()
        for e in es:
            if e[k] is not None:
                curves.setdefault((e["procs"], e["regime"], e["method"],
                                   e["planner"]), []).append(e[k])
        plots = []
        for i, ((p, reg, m, pl), v) in enumerate(curves.items()):
            v.sort()
            dat = os.path.join(tmp, f"{k}{i}.dat")
            with open(dat, "w") as f:
                for j, x in enumerate(v):
                    f.write(f"{(j + 0.5) / len(v):.6f} {x:.6g}\n")
            plots.append(f"'{dat}' using 1:2 with linespoints pt 7 ps 0.5 "
                         f"title 'P={p} {reg} {m} ({pl}, {len(v)})'")
        panels.append((what, goals, plots))
    peer = {"index": "mpi-raw (MPI_Alltoall)",
            "irregular": "mpi-raw (MPI_Alltoallv)",
            "nodes": "romio-nodes (NOT charged by the simulated network)"
            }.get(suite, "the fastest of the ROMIO and HDF5 modes")
    cmds = ["set terminal pngcairo size 1300,600 font ',9'",
            f"set output '{png}'",
            "set multiplot layout 1,2 title "
            f"\"passion bench {suite}: auto under the planner (measure, "
            f"estimate); peer: {peer}\\n{ps}; {regs}; 1-min load "
            f"{load} on {cores} cores (P above {cores} oversubscribed)\""]
    for what, goals, plots in panels:
        cmds += ["unset arrow", "unset label",
                 f"set title '{what}, per case, sorted'",
                 "set xlabel 'fraction of cases'", "set xrange [0:1]",
                 "set ylabel 'ratio (log)'", "set logscale y", "set grid",
                 "set key top left"]
        for y, col, dt, lab in goals:
            cmds += [f"set arrow from 0,{y} to 1,{y} nohead lw 2 dt {dt} "
                     f"lc rgb '{col}' front",
                     f"set label 'goal {lab}' at 0.82,{y * 1.06} "
                     f"tc rgb '{col}' front"]
        cmds.append("plot " + ", ".join(plots) if plots else
                    "plot 1 title 'no ratios'")
    cmds.append("unset multiplot")
    subprocess.run(["gnuplot"], input="\n".join(cmds), text=True, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
