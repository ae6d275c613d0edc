#!/usr/bin/env python3
"""mpiio_table.py CSV MD PNG: the summary of bench/run mpiio.

Per case, API, P and regime: the layer's steady time over plain MPI-IO's
(each the median over the rounds of the runs' steady_s) and the same for
the first call, whether passion served the calls, the runs' load; per
API, P and regime the distribution of the steady ratio (median, p90,
worst; spread: the ratio of the rounds' fastest runs too) against the
issue's goals (median <= 0.5, p90 <= 1.0). PNG (gnuplot, where present):
each distribution sorted, with the goal lines.
"""
import csv
import os
import statistics
import subprocess
import sys


def pct(v, q):
    v = sorted(v)
    if not v:
        return float("nan")
    k = min(len(v) - 1, max(0, int(round(q * (len(v) - 1)))))
    return v[k]


def main():
    src, md, png = sys.argv[1:4]
    rows = list(csv.DictReader(open(src)))
    groups = {}
    for r in rows:
        key = (r["api"], int(r["procs"]), r["regime"], r["case"])
        g = groups.setdefault(key, {"plain": [], "layer": [], "served": 0,
                                    "load": [], "shape": r["shape"]})
        g[r["mode"]].append((float(r["steady_s"]), float(r["first_s"]),
                             float(r["steady_min_s"])))
        if r["mode"] == "layer":
            g["served"] += int(r["served"])
        g["load"].append(float(r["load"]))
    lines = ["# bench/run mpiio: libpassion_mpiio / plain MPI-IO", "",
             "Ratios below 1: the program ran faster through passion. "
             "steady: median over rounds of each run's median call after "
             "the first; first: the first call; min: the rounds' fastest "
             "runs' ratio.", "",
             "| case | api | P | regime | shape | plain steady s | "
             "layer steady s | steady ratio | min ratio | first ratio | "
             "served | load |", "|" + "---|" * 12]
    dist = {}
    for key in sorted(groups):
        g = groups[key]
        if not g["plain"] or not g["layer"]:
            continue
        ps = statistics.median(x[0] for x in g["plain"])
        ls = statistics.median(x[0] for x in g["layer"])
        pf = statistics.median(x[1] for x in g["plain"])
        lf = statistics.median(x[1] for x in g["layer"])
        pm = min(x[2] for x in g["plain"])
        lm = min(x[2] for x in g["layer"])
        ratio = ls / ps if ps > 0 else float("nan")
        dist.setdefault(key[:3], []).append((ratio, lm / pm if pm else 0,
                                             g["served"] > 0))
        lines.append(f"| {key[3]} | {key[0]} | {key[1]} | {key[2]} | "
                     f"{g['shape']} | {ps:.4g} | {ls:.4g} | {ratio:.3f} | "
                     f"{lm / pm if pm else 0:.3f} | "
                     f"{lf / pf if pf else 0:.3f} | "
                     f"{'yes' if g['served'] else 'no'} | "
                     f"{statistics.median(g['load']):.1f} |")
    lines += ["", "## Distribution of the steady ratio (goal: median <= 0.5,"
              " p90 <= 1.0)", "",
              "| api | P | regime | cases | served | median | p90 | worst | "
              "median of min ratios |", "|" + "---|" * 9]
    for key in sorted(dist):
        v = [x[0] for x in dist[key]]
        m = [x[1] for x in dist[key]]
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {len(v)} | "
                     f"{sum(x[2] for x in dist[key])} | "
                     f"{statistics.median(v):.3f} | {pct(v, 0.9):.3f} | "
                     f"{max(v):.3f} | {statistics.median(m):.3f} |")
    open(md, "w").write("\n".join(lines) + "\n")
    if not dist or subprocess.run(["which", "gnuplot"],
                                  capture_output=True).returncode:
        return 0
    data = png + ".dat"
    with open(data, "w") as f:
        for key in sorted(dist):
            f.write(f'# "{key[0]} P={key[1]} {key[2]}"\n')
            for i, x in enumerate(sorted(x[0] for x in dist[key])):
                f.write(f"{i} {x}\n")
            f.write("\n\n")
    plots = ", ".join(
        f"'{data}' index {i} using 1:2 with linespoints title "
        f"'{k[0]} P={k[1]} {k[2]}'" for i, k in enumerate(sorted(dist)))
    script = (f"set terminal png size 900,500; set output '{png}';"
              "set logscale y; set ylabel 'layer / plain MPI-IO (steady)';"
              "set xlabel 'cases, sorted';"
              "set title 'bench/run mpiio: programs through libpassion_mpiio';"
              f"plot {plots}, 1.0 title 'goal p90' dt 2 lc rgb 'red', "
              "0.5 title 'goal median' dt 3 lc rgb 'dark-green'")
    subprocess.run(["gnuplot", "-e", script], check=False)
    os.remove(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
