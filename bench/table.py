#!/usr/bin/env python3
"""CSV of a benchmark suite -> markdown table, plus per-suite ratio tables.

Usage: table.py SUITE CSV OUT.md
Every row of the CSV appears in the table. Where a suite compares methods on
the same case (columns case, op, procs, regime), a second table gives each
method's time relative to a reference method measured in the same run.
"""
import csv
import os
import random
import sys
from collections import OrderedDict

# reference method per suite for the ratio table: (numerator, denominators)
RATIOS = {
    "sieve": ("direct", ["sieve", "auto", "romio-indep"]),
    "etp": ("passion", ["romio-coll", "romio-coll-tuned", "romio-indep",
                        "hdf5-coll", "hdf5-indep",
                        "direct", "etp-static", "etp-dynamic"]),
    "etp-large": ("passion", ["romio-coll", "romio-coll-tuned",
                              "romio-indep", "hdf5-coll", "hdf5-indep",
                              "direct"]),
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


def by_key(rows, key, by="method"):
    """The rows grouped: the tuple of their fields `key` -> {row[by]: row}
    (a later row replaces an earlier one), in the order first seen."""
    groups = OrderedDict()
    for r in rows:
        groups.setdefault(tuple(r[k] for k in key), {})[r[by]] = r
    return groups


def sibling_rows(path, name):
    """The rows of the CSV `name` in path's directory (None: no file)."""
    p = os.path.join(os.path.dirname(path), name)
    if not os.path.exists(p):
        return None
    with open(p) as f:
        return list(csv.DictReader(f))


def table(header, rows):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(fmt(r.get(h, "")) for h in header) + " |")
    return "\n".join(out)


def mpiio_of(rows):
    """The MPI-IO the peers ran on, by their labels (the programs name
    them by the implementation found at run time: romio-* or ompio-*):
    "OMPIO", "ROMIO" or None (no MPI-IO peer in the CSV). The rows'
    ompio-* methods become romio-* here, the tables' internal names; the
    markdown is relabelled on output (write_md)."""
    io = None
    for r in rows:
        m = r.get("method", "")
        if m.startswith("ompio-"):
            io = "OMPIO"
            r["method"] = "romio-" + m[6:]
        elif m.startswith("romio-") and io is None:
            io = "ROMIO"
    return io


def write_md(md, text, io):
    """Write the markdown, the MPI-IO peers named by what they ran on."""
    if io == "OMPIO":
        text = text.replace("romio-", "ompio-").replace(
            "ROMIO collective", "OMPIO collective")
    if io:
        lines = text.split("\n", 1)
        note = (f"\nMPI-IO peers ({io.lower()}-*) ran on {io} "
                f"({'Open MPI' if io == 'OMPIO' else 'MPICH or Open MPI'}"
                "'s MPI-IO, found at run time).\n")
        text = lines[0] + "\n" + note + (lines[1] if len(lines) > 1 else "")
    open(md, "w").write(text)


def main():
    suite, path, md = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(path) as f:
        rows = list(csv.DictReader(f))
    io = mpiio_of(rows)
    # projections are model rows: listed, but not in the ratio tables
    measured = [r for r in rows if not r.get("op", "").startswith("projection")]
    if not rows:
        open(md, "w").write(f"# {suite}\n\n(no rows)\n")
        return
    header = list(rows[0].keys())
    if suite == "patterns":
        out = patterns_tables(rows, path)
        out[2:2] = planner_tables(rows, suite)
        write_md(md, "\n".join(out) + "\n", io)
        return
    if suite == "nodes":
        out = nodes_tables(rows, path)
        out[2:2] = planner_tables(rows, suite)
        write_md(md, "\n".join(out) + "\n", io)
        return
    parts = [f"# Benchmark `{suite}`\n"] + planner_tables(rows, suite) + \
        [table(header, rows), ""]
    if suite in RATIOS and "method" in header:
        num, dens = RATIOS[suite]
        key = [k for k in ("case", "op", "procs", "regime") if k in header]
        groups = by_key(measured, key)
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
    if suite == "convert":
        parts += convert_table(rows)
    if suite in ("index", "irregular") and "method" in header:
        parts += exchange_tables(rows)
    if suite in GOALS and "method" in header:
        parts += goal_table(rows, *GOALS[suite])
    if suite == "prefetch" and "overlap_efficiency" in header:
        parts += overlap_table(rows)
    if path.endswith(".csv"):
        parts += cgroup_table(path[:-4] + ".cgroup.csv")
    write_md(md, "\n".join(parts) + "\n", io)


def convert_table(rows):
    """Suite convert: each method as a fraction of the device's rate (dd
    moving the same bytes in the same rounds), with the peer beside it."""
    head = ["case", "method", "procs", "regime", "seconds", "device_seconds",
            "fraction_of_device", "fraction_less_launch", "MB_per_s",
            "check"]
    got = [r for r in rows if r.get("fraction_of_device")]
    if not got:
        return []
    out = [{k: r.get(k, "") for k in head} for r in got]
    loads = sorted({r.get("load", "") for r in rows})
    return ["## Fraction of the device's rate (dd seconds for the same bytes"
            " / method seconds, medians of interleaved rounds; 1 = dd's "
            "rate)\n",
            f"Load (1-min average) during the run: {', '.join(loads)}.\n",
            table(head, out), ""]


def overlap_table(rows):
    """Suite prefetch: the goal (cold overlap efficiency >= 0.8) per case,
    P and window, buffered and O_DIRECT side by side, with the share of the
    I/O time that the prefetching run did not wait for."""
    pf = [r for r in rows if r["method"].startswith("prefetch")]
    head = ["case", "op", "procs", "ranks", "regime", "slabs", "io",
            "t_io", "t_compute", "no-prefetch s", "prefetch s",
            "overlap_efficiency", "hidden", "ceiling 1-1/slabs", "goal met"]
    if pf and "ratio" in pf[0]:
        # bench_prefetch.c: T prefetch / T no-prefetch per repetition, and
        # the same figures with each rank's run-queue delay taken out
        head[-1:-1] = ["ratio", "eff_ded", "ratio_ded"]
    if pf and pf[0].get("ratio_q1"):
        # the quartiles of the per-repetition ratio, and how many
        head[-1:-1] = ["ratio q1-q3", "reps"]
    nop = {(r["case"], r["op"], r["procs"], r["regime"],
            r["method"].replace("no-prefetch", "")): r for r in rows
           if r["method"].startswith("no-prefetch")}
    out, met, total = [], 0, 0
    for r in pf:
        io = "O_DIRECT" if r["method"].endswith("-odirect") else "buffered"
        n = nop.get((r["case"], r["op"], r["procs"], r["regime"],
                     r["method"].replace("prefetch", "")))
        row = {k: r.get(k, "") for k in head}
        row["io"] = io
        row["prefetch s"] = r["seconds"]
        row["no-prefetch s"] = n["seconds"] if n else ""
        row["ceiling 1-1/slabs"] = f"{1 - 1 / int(r['slabs']):.3f}"
        if r.get("ratio_q1"):
            row["ratio q1-q3"] = f"{r['ratio_q1']}-{r['ratio_q3']}"
        # the goal: 8 or more slabs, cold with O_DIRECT or
        # memory-limited
        goal = int(r["slabs"]) >= 8 and (
            r["regime"] == "memlimit" or
            (r["regime"] == "cold" and io == "O_DIRECT"))
        if goal and r["overlap_efficiency"]:
            ok = float(r["overlap_efficiency"]) >= 0.8
            met += ok
            total += 1
            row["goal met"] = "yes" if ok else "NO"
        out.append(row)
    if not out:
        return []
    return ["## Overlap: efficiency = (T no-prefetch - T prefetch) / "
            "min(t_io, t_compute), median of paired repetitions; hidden = "
            "1 - io_wait(prefetch) / t_io; ratio = T prefetch / T "
            "no-prefetch (median of repetitions; goal <= 1.05; q1-q3: its "
            "quartiles over the repetitions); *_ded: "
            "the same less each rank's run-queue delay (schedstat); goal "
            ">= 0.8 at 8 or more slabs, cold O_DIRECT and memory-limited "
            f"({met} of {total} met)\n", table(head, out), ""]


# methods of the exchange suites that are not fixed algorithms
XCHG_NOT_FIXED = ("auto", "auto-estimate", "a1-spin", "calibrate")


def exchange_tables(rows):
    """Goal table (auto against the best fixed method and MPI's own call),
    the index trade-off, and where the model and the measurement differ
    most, for the suites index and irregular."""
    meas = [r for r in rows if r.get("op") == "measured" and r["seconds"]]
    groups = by_key(meas, ("case", "procs", "regime"))
    out = []
    gh = ["case", "procs", "ranks", "regime", "auto s", "auto ran",
          "auto/same", "best fixed", "best s", "auto/best", "mpi-raw s",
          "auto/mpi-raw", "auto predicted s"]
    gr, worst, best_mpi = [], [], []
    for (case, procs, regime), g in groups.items():
        if "auto" not in g:
            continue
        fixed = {m: float(r["seconds"]) for m, r in g.items()
                 if m not in XCHG_NOT_FIXED and r.get("check") == "ok"}
        if not fixed:
            continue
        bm = min(fixed, key=fixed.get)
        a = float(g["auto"]["seconds"])
        row = {"case": case, "procs": procs, "ranks": g["auto"]["ranks"],
               "regime": regime, "auto s": g["auto"]["seconds"],
               "auto ran": g["auto"]["chosen"], "best fixed": bm,
               "best s": f"{fixed[bm]:.6g}",
               "auto/best": f"{a / fixed[bm]:.3f}",
               "auto predicted s": g["auto"]["predicted_seconds"]}
        ran = g["auto"]["chosen"]
        if ran in g and float(g[ran]["seconds"]) > 0:
            row["auto/same"] = f"{a / float(g[ran]['seconds']):.3f}"
        if "mpi-raw" in g:
            m = float(g["mpi-raw"]["seconds"])
            row["mpi-raw s"] = g["mpi-raw"]["seconds"]
            row["auto/mpi-raw"] = f"{a / m:.3f}"
            best_mpi.append((a / m, case, procs))
        worst.append((a / fixed[bm], case, procs))
        gr.append(row)
    if gr:
        out += ["## Goal: auto against the best fixed method (MPI's call "
                "included) and against MPI's own call\n",
                "Medians over repetitions of the slowest rank's time; below "
                "1 means auto is faster. auto/same: against the fixed method "
                "that auto ran (its overhead, and the noise of the "
                "measurement).\n", table(gh, gr), ""]
        worst.sort(reverse=True)
        best_mpi.sort()
        over = [w for w in worst if w[0] > 1.1]
        out.append(f"- auto/best fixed: worst {worst[0][0]:.3f} "
                   f"({worst[0][1]}, P={worst[0][2]}); points above 1.1: "
                   f"{len(over)} of {len(worst)}")
        if best_mpi:
            out.append(f"- auto/mpi-raw: best {best_mpi[0][0]:.3f} "
                       f"({best_mpi[0][1]}, P={best_mpi[0][2]}); points "
                       "below 1/1.5: "
                       f"{sum(1 for b in best_mpi if b[0] <= 1 / 1.5)} of "
                       f"{len(best_mpi)}")
        out.append("")
    # index: rounds and bytes per radix
    idx = [r for r in meas if r["method"].startswith("index-r")]
    if idx:
        th = ["procs", "bytes", "radix", "rounds", "bytes_sent", "seconds",
              "predicted_seconds"]
        out += ["## Index: rounds (C1) and bytes sent (C2) per radix\n",
                table(th, sorted(idx, key=lambda r: (int(r["procs"]),
                                                     int(r["bytes"]),
                                                     int(r["radix"])))), ""]
    # model against measurement
    cmp_ = []
    for r in meas:
        try:
            p, t = float(r["predicted_seconds"]), float(r["seconds"])
        except (KeyError, ValueError):
            continue
        if p > 0 and t > 0:
            cmp_.append((max(p / t, t / p), r, p / t))
    if cmp_:
        cmp_.sort(key=lambda x: -x[0])
        mh = ["case", "method", "procs", "seconds", "predicted_seconds",
              "predicted/measured"]
        mr = []
        for _, r, q in cmp_[:15]:
            d = {k: r[k] for k in mh[:-1]}
            d["predicted/measured"] = f"{q:.3g}"
            mr.append(d)
        out += ["## Where the model and the measurement differ most\n",
                table(mh, mr), ""]
    return out


# suites whose goal is a ratio against the best of several peers:
# (numerator, peers, cases that must be `strided` times faster, strided)
PEERS = ["romio-coll", "romio-coll-tuned", "romio-indep", "hdf5-coll",
         "hdf5-indep"]
GOALS = {
    "etp": ("passion", PEERS, ("6.5-", "6.6-"), 2.0),
    "etp-large": ("passion", PEERS, (), 2.0),
}


def goal_table(rows, num, peers, strided_prefixes, factor):
    """Per case, P and regime: numerator / best peer, and whether the goal
    (strided cases: ratio <= 1/factor; others: ratio <= 1) is met."""
    key = ("case", "op", "procs", "regime")
    groups = by_key([r for r in rows
                     if r.get("seconds") and r.get("check") == "ok"], key)
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
        # the strided tables' stricter goal holds warm
        limit = 1.0 / factor if strided and k[3] == "warm" else 1.0
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


FIXED = ["direct", "sieve", "etp-static", "etp-dynamic"]


def pct(v, q):
    """Nearest-rank percentile of a sorted list."""
    if not v:
        return float("nan")
    import math
    return v[max(0, math.ceil(q * len(v)) - 1)]


def patterns_tables(rows, path):
    """Suite patterns: per case passion (auto) / best of the five peer
    modes; its distribution per P and regime (goal: 90th percentile <= 1.0,
    worst <= 1.5, median <= 0.5), the worst ten with what auto chose and
    the fastest fixed method, peak memory per method, failures."""
    key = ("case", "procs", "regime")
    groups = by_key(rows, key)
    seed = rows[0].get("seed", "")
    out = ["# Benchmark `patterns`\n",
           f"Seed {seed}; {len({r['case'] for r in rows})} cases. ratio = "
           "passion (auto) / the best of " + ", ".join(PEERS) +
           " in the same run (medians over repetitions of the slowest "
           "rank's time); below 1 means passion is faster. best fixed: the "
           "fastest of passion's own methods (" + ", ".join(FIXED) + ").\n"]
    fails = [r for r in rows if r.get("check") == "FAIL"]
    per = OrderedDict()
    for (case, procs, regime), g in groups.items():
        a = g.get("passion")
        if not a or a.get("check") != "ok" or not a["seconds"]:
            continue
        peers = {m: float(g[m]["seconds"]) for m in PEERS
                 if m in g and g[m].get("check") == "ok" and g[m]["seconds"]}
        fixed = {m: float(g[m]["seconds"]) for m in FIXED
                 if m in g and g[m].get("check") == "ok" and g[m]["seconds"]}
        if not peers:
            continue
        bp = min(peers, key=peers.get)
        t = float(a["seconds"])
        bf = min(fixed, key=fixed.get) if fixed else ""
        # the same with each mode's fastest repetition (less scheduler
        # noise on a loaded machine)
        pmin = [float(g[m]["min_seconds"]) for m in peers
                if g[m].get("min_seconds")]
        rmin = float(a["min_seconds"]) / min(pmin) \
            if a.get("min_seconds") and pmin and min(pmin) > 0 else None
        per.setdefault((procs, regime), []).append({
            "case": case, "kind": a["kind"], "op": a["op"],
            "array": f"{a['nd']}-D {a['order']} {a['shape']} x{a['esize']}B",
            "tiles": a["tiles"], "runs": a["runs"],
            "extent_bytes": a["extent_bytes"],
            "passion s": a["seconds"], "best peer": bp,
            "peer s": f"{peers[bp]:.6g}",
            "ratio": t / peers[bp] if peers[bp] > 0 else float("inf"),
            "ratio_min": rmin,
            "auto chose": a.get("chosen", "") +
            (f" ({a['predicted']} s predicted)" if a.get("predicted")
             else ""),
            "auto io": f"{a['io_calls']} calls, {a['bytes_read']} B read, "
                       f"{a['bytes_written']} B written, {a['messages']} msgs",
            "best fixed": bf, "fixed s": f"{fixed[bf]:.6g}" if bf else "",
            "auto/best fixed": f"{t / fixed[bf]:.3f}"
            if bf and fixed[bf] > 0 else ""})
    dh = ["procs", "regime", "times", "cases", "median", "p90", "worst",
          "above 1.0", "above 1.5", "at most 0.5", "goal met"]
    dr = []
    for (procs, regime), cs in per.items():
        for kind, key in (("median of reps", "ratio"),
                          ("fastest rep", "ratio_min")):
            v = sorted(c[key] for c in cs if c[key] is not None)
            if not v:
                continue
            med, p90, worst = pct(v, 0.5), pct(v, 0.9), v[-1]
            ok = med <= 0.5 and p90 <= 1.0 and worst <= 1.5
            dr.append({"procs": procs, "regime": regime, "times": kind,
                       "cases": str(len(v)), "median": f"{med:.3f}",
                       "p90": f"{p90:.3f}", "worst": f"{worst:.3f}",
                       "above 1.0": str(sum(x > 1.0 for x in v)),
                       "above 1.5": str(sum(x > 1.5 for x in v)),
                       "at most 0.5": str(sum(x <= 0.5 for x in v)),
                       "goal met": "yes" if ok else "NO"})
    out += ["## Distribution of passion / best peer (goal: median <= 0.5, "
            "90th percentile <= 1.0, worst <= 1.5); the goal is on the "
            "median of repetitions, the fastest repetition shows what "
            "remains without the machine's scheduling noise\n",
            table(dh, dr), ""]
    wh = ["case", "kind", "op", "array", "tiles", "runs", "extent_bytes",
          "passion s", "best peer", "peer s", "ratio", "auto chose",
          "auto io", "best fixed", "fixed s", "auto/best fixed"]
    for (procs, regime), cs in per.items():
        worst = sorted(cs, key=lambda c: -c["ratio"])[:10]
        rows_ = [dict(c, ratio=f"{c['ratio']:.3f}") for c in worst]
        out += [f"## Worst ten, P={procs} {regime}\n", table(wh, rows_), ""]
    # auto against its own fixed methods
    ah = ["procs", "regime", "cases", "auto = fastest fixed (within 1.1x)",
          "median auto/best fixed", "worst auto/best fixed"]
    ar = []
    for (procs, regime), cs in per.items():
        v = sorted(float(c["auto/best fixed"]) for c in cs
                   if c["auto/best fixed"])
        if v:
            ar.append({"procs": procs, "regime": regime, "cases": str(len(v)),
                       "auto = fastest fixed (within 1.1x)":
                       str(sum(x <= 1.1 for x in v)),
                       "median auto/best fixed": f"{pct(v, 0.5):.3f}",
                       "worst auto/best fixed": f"{v[-1]:.3f}"})
    out += ["## Auto against the fastest of passion's fixed methods\n",
            table(ah, ar), ""]
    # peak memory per method
    mem = OrderedDict()
    for r in rows:
        if not r.get("peak_rss_kib") or not r.get("base_rss_kib"):
            continue
        k = (r["procs"], r["regime"], r["method"])
        add = (int(r["peak_rss_kib"]) - int(r["base_rss_kib"])) / 1024
        stg = int(r["peak_staging"]) / 2**20 if r.get("peak_staging") else None
        mem.setdefault(k, ([], [], []))
        mem[k][0].append(add)
        mem[k][2].append(int(r["peak_rss_kib"]) / 1024)
        if stg is not None:
            mem[k][1].append(stg)
    mh = ["procs", "regime", "method", "max peak RSS MiB",
          "median added MiB", "max added MiB", "max peak_staging MiB"]
    mr = []
    for (procs, regime, m), (adds, stgs, peaks) in mem.items():
        adds.sort()
        mr.append({"procs": procs, "regime": regime, "method": m,
                   "max peak RSS MiB": f"{max(peaks):.1f}",
                   "median added MiB": f"{pct(adds, 0.5):.1f}",
                   "max added MiB": f"{adds[-1]:.1f}",
                   "max peak_staging MiB": f"{max(stgs):.1f}" if stgs else ""})
    out += ["## Peak memory per rank (largest rank): peak resident set, "
            "what the calls added to the set at the reset before each call "
            "(passion keeps its staging blocks between calls, so they count "
            "in the base after the first call), and passion's staging\n",
            table(mh, mr), ""]
    cgp = path[:-4] + ".cgroup.csv" if path.endswith(".csv") else ""
    out += cgroup_table(cgp)
    if fails:
        fh = ["case", "method", "op", "procs", "regime", "kind", "shape"]
        out += ["## FAILED checks\n", table(fh, fails), ""]
    else:
        out += ["Every result was checked: no failure.", ""]
    ch = ["case", "kind", "op", "array", "procs", "regime", "passion s",
          "best peer", "peer s", "ratio", "auto chose", "best fixed",
          "fixed s"]
    allc = [dict(c, procs=p, regime=rg, ratio=f"{c['ratio']:.3f}")
            for (p, rg), cs in per.items() for c in cs]
    out += ["## Every case\n", table(ch, allc), ""]
    return out


NODES_FIXED = ["direct", "a1/all", "a1/node", "twolevel/all",
               "twolevel/node"]


def gmean(v):
    v = [x for x in v if x > 0]
    if not v:
        return float("nan")
    p = 1.0
    for x in v:
        p *= x
    return p ** (1.0 / len(v))


def f3(x):
    return "" if x != x else f"{x:.3f}"


def sec(r):
    """A nodes row's time: the mean over the repetitions where the CSV has
    it (bench-nodes writes it: oversubscribed calls take
    whole scheduler ticks, and the median of a few repetitions is one of
    those steps), else the median."""
    for k in ("mean_seconds", "seconds"):
        try:
            return float(r[k])
        except (KeyError, ValueError, TypeError):
            pass
    return None


def rep_times(r):
    """A nodes row's time of every repetition in order (rep_seconds), or
    None where the CSV has none."""
    v = (r.get("rep_seconds") or "").split(";")
    try:
        return [float(x) for x in v] if v != [""] else None
    except ValueError:
        return None


def paired_ci(a, b, seed, n=2000, lo=0.05, hi=0.95):
    """90% bootstrap interval of mean(a) / mean(b), resampling whole
    repetitions (a[i] and b[i] ran in the same repetition, back to back:
    a slow spell of the shared machine hits both); None without pairs."""
    if not a or not b or len(a) != len(b) or len(a) < 4:
        return None
    g = random.Random(seed)
    k = len(a)
    v = []
    for _ in range(n):
        ix = [g.randrange(k) for _ in range(k)]
        sb = sum(b[i] for i in ix)
        if sb > 0:
            v.append(sum(a[i] for i in ix) / sb)
    v.sort()
    return v[int(lo * (len(v) - 1))], v[int(hi * (len(v) - 1))]


def fsec(r, missing=""):
    """sec(r) for a table cell (4 digits), else `missing`."""
    t = sec(r)
    return f"{t:.4g}" if t is not None else missing


def nodes_tables(rows, path):
    """Suite nodes: the thesis's patterns on virtual nodes with
    the simulated network (bench-nodes), the all-to-all sweep
    (bench-twolevel: DIR/nodes-a2a.csv) and the model rows."""
    runs = [r for r in rows if r["kind"] == "run"]
    models = [r for r in rows if r["kind"] == "model"]
    out = ["# Benchmark `nodes`\n",
           "THE NETWORK IS SIMULATED: all ranks run on this machine; every "
           "message passion sends between two virtual nodes costs its sender "
           "a latency and a per-byte time on its node's one network "
           "interface, shared by the node's ranks (fast: 1 us + 0.08 ns/B, a "
           "100 Gb/s HDR100 link; slow: as bench/run set it, by default "
           "1 ms + 1 ns/B, a latency above this machine's own oversubscribed "
           "message cost so that it dominates as a cluster's network does; "
           "NODES_SLOW=US,NS changes it). P above the core "
           "count is oversubscribed: every message also waits for a "
           "descheduled receiver. ROMIO's messages are NOT charged by the "
           "simulated network (MPICH binds ROMIO's MPI calls inside "
           "libmpich): romio-nodes times are on the real transport only. "
           "Times are the slowest rank's, on a loaded shared machine: "
           "means over the repetitions (the modes' order turning every "
           "repetition) where the CSV has them, else medians; "
           "oversubscribed, a call's time comes in steps of the "
           "scheduler's 4 ms tick, so a median of few repetitions is one "
           "of those steps. Counts are exact.\n"]
    bad = [r for r in runs if r["check"] not in ("ok",) and
           not r["check"].startswith("skipped")]
    if bad:
        out += [f"**{len(bad)} rows FAILED their check**: " +
                ", ".join(f"{r['case']} {r['method']} P={r['procs']} "
                          f"{r['regime']}" for r in bad[:10]), ""]
    groups = by_key(runs, ("procs", "nodes", "net", "case"))
    # per-case table
    head = ["P", "nodes", "net", "case", "op", "auto s", "auto chose",
            "best fixed", "auto/best", "auto/best 90% CI", "same work as",
            "auto/same"] + \
        [m + " s" for m in NODES_FIXED] + \
        ["romio-nodes s (not charged)", "inter msgs a1/all : twolevel/all",
         "io clients all : node"]
    tab = []
    summ = OrderedDict()
    for (P, nn, net, case), g in groups.items():
        a = g.get("auto")
        if not a or sec(a) is None:
            continue
        fixed = [(sec(g[m]), m) for m in NODES_FIXED
                 if m in g and sec(g[m]) is not None]
        if not fixed:
            continue
        bt, bm = min(fixed)
        r = {"P": P, "nodes": nn, "net": net, "case": case, "op": a["op"],
             "auto s": fsec(a), "auto chose": a["chosen"],
             "best fixed": bm, "auto/best": f3(sec(a) / bt)}
        # the ratio's spread: repetitions resampled in pairs (a seed per
        # case, so the table is the same for the same CSV)
        ci = paired_ci(rep_times(a), rep_times(g[bm]),
                       seed=f"{P}/{nn}/{net}/{case}")
        if ci:
            r["auto/best 90% CI"] = f"{ci[0]:.2f}-{ci[1]:.2f}"
        # the fixed settings whose exact counts (messages and bytes between
        # nodes, messages within, file clients and requests) equal auto's:
        # the same work, so auto's time against theirs is its decision's
        # overhead and the noise, not its choice
        ck = ("inter_msgs", "inter_bytes", "intra_msgs", "io_clients",
              "io_calls")
        same = [m for m in NODES_FIXED if m in g and sec(g[m]) is not None
                and all(g[m][k] == a[k] for k in ck)]
        r["same work as"] = " ".join(same)
        if same:
            r["auto/same"] = f3(sec(a) / min(sec(g[m]) for m in same))
        for m in NODES_FIXED:
            if m in g:
                r[m + " s"] = fsec(g[m], g[m]["check"])
        if "romio-nodes" in g:
            r["romio-nodes s (not charged)"] = fsec(g["romio-nodes"])
        if "a1/all" in g and "twolevel/all" in g:
            r["inter msgs a1/all : twolevel/all"] = \
                f"{g['a1/all']['inter_msgs']} : {g['twolevel/all']['inter_msgs']}"
        if "a1/all" in g and "a1/node" in g and sec(g["a1/node"]):
            r["io clients all : node"] = \
                f"{g['a1/all']['io_clients']} : {g['a1/node']['io_clients']}"
        tab.append(r)
        sm = summ.setdefault((P, nn, net), {"auto/best": [], "same": 0,
                                            "tl/flat t": [],
                                            "tl/flat msgs": [],
                                            "node/all t": [],
                                            "node/all t fewer": [],
                                            "romio/auto": [],
                                            "ci": []})
        sm["auto/best"].append(sec(a) / bt)
        if ci:
            sm["ci"].append(ci)
        sm["same"] += bool(same)
        for ag in ("all", "node"):
            f, t = g.get("a1/" + ag), g.get("twolevel/" + ag)
            if f and t and sec(f) and sec(t):
                sm["tl/flat t"].append(sec(t) / sec(f))
                fm, tm = float(f["inter_msgs"]), float(t["inter_msgs"])
                if fm > 0:
                    sm["tl/flat msgs"].append(max(tm, 0.5) / fm)
        for x in ("a1", "twolevel"):
            al, nd = g.get(x + "/all"), g.get(x + "/node")
            if al and nd and sec(al) and sec(nd):
                sm["node/all t"].append(sec(nd) / sec(al))
                # the cases where one aggregator per node has messages
                # between nodes to save (not where all ranks send none or
                # as few: there it only adds the on-node hop)
                if float(nd["inter_msgs"]) < float(al["inter_msgs"]):
                    sm["node/all t fewer"].append(sec(nd) / sec(al))
        ro = g.get("romio-nodes")
        if ro and sec(ro):
            sm["romio/auto"].append(sec(ro) / sec(a))
    sh = ["P", "nodes", "net", "cases", "auto/best fixed (geomean)",
          "auto/best (worst)", "cases auto within 1.1x",
          "90% CI below 1.1x : reaching it : above it",
          "cases auto's counts = a fixed setting's",
          "twolevel/flat time (geomean)",
          "twolevel/flat inter-node msgs (geomean)",
          "per-node/all aggregators time (geomean)",
          "per-node/all time where per-node sends fewer between nodes "
          "(geomean, pairs)",
          "romio-nodes/auto (not charged)"]
    st = []
    for (P, nn, net), sm in summ.items():
        ab = sm["auto/best"]
        st.append({"P": P, "nodes": nn, "net": net, "cases": str(len(ab)),
                   "auto/best fixed (geomean)": f3(gmean(ab)),
                   "auto/best (worst)": f3(max(ab)),
                   "cases auto within 1.1x":
                       f"{sum(1 for x in ab if x <= 1.1)}/{len(ab)}",
                   "90% CI below 1.1x : reaching it : above it":
                       f"{sum(1 for c in sm['ci'] if c[1] <= 1.1)} : "
                       f"{sum(1 for c in sm['ci'] if c[0] <= 1.1 < c[1])} : "
                       f"{sum(1 for c in sm['ci'] if c[0] > 1.1)}",
                   "cases auto's counts = a fixed setting's":
                       f"{sm['same']}/{len(ab)}",
                   "twolevel/flat time (geomean)": f3(gmean(sm["tl/flat t"])),
                   "twolevel/flat inter-node msgs (geomean)":
                       f3(gmean(sm["tl/flat msgs"])),
                   "per-node/all aggregators time (geomean)":
                       f3(gmean(sm["node/all t"])),
                   "per-node/all time where per-node sends fewer between "
                   "nodes (geomean, pairs)":
                       f"{f3(gmean(sm['node/all t fewer']))} "
                       f"({len(sm['node/all t fewer'])})",
                   "romio-nodes/auto (not charged)":
                       f3(gmean(sm["romio/auto"]))})
    out += ["## Thesis patterns 6.1-6.6: summary per split and network\n",
            "best fixed: the fastest of " + ", ".join(NODES_FIXED) +
            " (etp-dynamic with exchange a1 = flat or twolevel, aggregators "
            "all ranks or one per node); twolevel/flat pairs a1/x with "
            "twolevel/x for the same aggregators; per-node/all pairs x/node "
            "with x/all, and the next column only the pairs where x/node "
            "sends fewer messages between nodes than x/all (where it "
            "saves none, it only adds the hop to the node's aggregator). "
            "same work as: the fixed settings whose exact "
            "counts (messages and bytes between nodes, messages within, "
            "file clients and requests) equal auto's; auto/same: auto "
            "against the fastest of them (its decision's overhead, and the "
            "noise: on nodes of one rank x/all and x/node are the same "
            "setting). auto/best 90% CI: a bootstrap interval of the ratio "
            "of means, resampling whole repetitions (auto and the best "
            "fixed setting ran back to back in each); below 1.1x: the "
            "whole interval is at most 1.1, reaching it: the interval "
            "holds 1.1 (auto neither shown slower than 1.1x nor shown "
            "within it), above it: auto shown slower than 1.1x the best "
            "fixed setting.\n", table(sh, st), "",
            "## Thesis patterns: every case\n", table(head, tab), ""]
    # model error (auto's prediction)
    errs = [(sec(g["auto"]), float(g["auto"]["predicted"]))
            for g in groups.values() if "auto" in g and sec(g["auto"])
            and g["auto"].get("predicted") not in (None, "", "0")]
    if errs:
        rat = sorted(p / m for m, p in errs if m > 0 and p > 0)
        if rat:
            out += [f"auto's cost model (method choice) predicted/measured "
                    f"over {len(rat)} cases: median {rat[len(rat) // 2]:.3f}, "
                    f"range {rat[0]:.3g}-{rat[-1]:.3g}.\n"]
    # the all-to-all sweep
    a2a = sibling_rows(path, "nodes-a2a.csv")
    if a2a is not None:
        g2 = by_key(a2a, ("procs", "nodes", "net", "block"), "alg")
        h2 = ["P", "nodes", "net", "block", "a1 s", "fourstage-nb s",
              "twolevel s", "auto s", "auto ran", "twolevel/best flat time",
              "inter msgs a1 : fourstage-nb : twolevel",
              "twolevel/a1 inter msgs", "auto/best",
              "predicted/measured a1 : 4s-nb : twolevel"]
        t2 = []
        perr = []
        for (P, nn, net, b), g in g2.items():
            def s_(a):
                return float(g[a]["seconds"]) if a in g else float("nan")
            flat = min(s_("a1"), s_("fourstage-nb"))
            best = min(flat, s_("twolevel"))
            r = {"P": P, "nodes": nn, "net": net, "block": b,
                 "a1 s": g.get("a1", {}).get("seconds", ""),
                 "fourstage-nb s": g.get("fourstage-nb", {}).get("seconds",
                                                                 ""),
                 "twolevel s": g.get("twolevel", {}).get("seconds", ""),
                 "auto s": g.get("auto", {}).get("seconds", ""),
                 "auto ran": g.get("auto", {}).get("ran", ""),
                 "twolevel/best flat time": f3(s_("twolevel") / flat),
                 "inter msgs a1 : fourstage-nb : twolevel": " : ".join(
                     g.get(a, {}).get("inter_msgs", "")
                     for a in ("a1", "fourstage-nb", "twolevel")),
                 "auto/best": f3(s_("auto") / best)}
            try:
                r["twolevel/a1 inter msgs"] = f3(
                    float(g["twolevel"]["inter_msgs"]) /
                    float(g["a1"]["inter_msgs"]))
            except (KeyError, ValueError, ZeroDivisionError):
                pass
            pm = []
            for a in ("a1", "fourstage-nb", "twolevel"):
                if a in g and float(g[a]["seconds"]) > 0 and \
                        float(g[a]["predicted"]) > 0:
                    q = float(g[a]["predicted"]) / float(g[a]["seconds"])
                    pm.append(f"{q:.2f}")
                    perr.append((a, net, q))
                else:
                    pm.append("")
            r["predicted/measured a1 : 4s-nb : twolevel"] = " : ".join(pm)
            t2.append(r)
        out += ["## All-to-all sweep (bench-twolevel, passion_alltoall)\n",
                "Regular all-to-all of `block` bytes per pair; inter msgs: "
                "all ranks' messages between virtual nodes in one call; "
                "predicted: the exchange's cost model for what ran (the "
                "simulated network's latency and per-byte time, exactly, "
                "and the fixed on-node figures the model uses with the "
                "simulation on: round 2.5 us, message 2.5 us, 0.2 ns/B; "
                "not this oversubscribed machine's waits).\n",
                table(h2, t2), ""]
        if perr:
            eh = ["alg", "net", "n", "predicted/measured median",
                  "min", "max"]
            er = []
            for a in ("a1", "fourstage-nb", "twolevel"):
                for net in ("fast", "slow"):
                    q = sorted(x for (aa, nt, x) in perr
                               if aa == a and nt == net)
                    if q:
                        er.append({"alg": a, "net": net, "n": str(len(q)),
                                   "predicted/measured median":
                                       f"{q[len(q) // 2]:.3f}",
                                   "min": f"{q[0]:.3f}",
                                   "max": f"{q[-1]:.3f}"})
            out += ["### Model against the simulated runs\n",
                    table(eh, er), ""]
    # projections
    if models:
        pv = by_key(models, ("case", "regime", "procs", "nodes"))
        meths = list(OrderedDict.fromkeys(r["method"] for r in models))
        hh = ["pattern", "costs", "P", "nodes"] + meths + ["best",
                                                           "twolevel/a1 (all)"]
        tt = []
        for (case, reg, P, nn), g in pv.items():
            r = {"pattern": case, "costs": reg, "P": P, "nodes": nn}
            for m in meths:
                if m in g:
                    r[m] = g[m]["seconds"]
            best = min(g, key=lambda m: float(g[m]["seconds"]))
            r["best"] = best
            try:
                r["twolevel/a1 (all)"] = f3(float(g["twolevel/all"]["seconds"])
                                            / float(g["a1/all"]["seconds"]))
            except KeyError:
                pass
            tt.append(r)
        out += ["## Projection: two-phase read, aggregator counts (model)\n",
                "Interleaved pattern (every rank's bytes spread over the "
                "file: every rank exchanges with every aggregator), 64 KiB "
                "or 16 MiB per rank; seconds from the exchange's model plus "
                "an I/O term. Fabric: 100 Gb/s InfiniBand HDR100, 1 us, "
                "12.5 GB/s per link (NVIDIA ConnectX-6 figures); file "
                "system ASSUMED: 100 GB/s aggregate, a client at most its "
                "link, 0.5 ms per 4 MiB request. costs: here = on-node "
                "costs calibrated on this (loaded) machine, quiet = an "
                "assumed quiet node. Columns: exchange/aggregators "
                "(all ranks, one, two or four per node).\n",
                table(hh, tt), ""]
    mr = sibling_rows(path, "nodes-a2a-model.csv")
    if mr is not None:
        pv = by_key(mr, ("costs", "procs", "nodes", "block"), "alg")
        algs = list(OrderedDict.fromkeys(r["alg"] for r in mr))
        hh = ["costs", "P", "nodes", "block"] + [a + " s" for a in algs] + \
            ["auto", "twolevel/best flat", "net msgs/rank flat : twolevel"]
        tt = []
        for (c, P, nn, b), g in pv.items():
            r = {"costs": c, "P": P, "nodes": nn, "block": b}
            for a in algs:
                if a in g:
                    r[a + " s"] = g[a]["seconds"]
            r["auto"] = next(iter(g.values()))["auto"]
            flat = [float(g[a]["seconds"]) for a in g if a != "twolevel"]
            if "twolevel" in g and flat:
                r["twolevel/best flat"] = f3(float(g["twolevel"]["seconds"])
                                             / min(flat))
                r["net msgs/rank flat : twolevel"] = \
                    f"{g.get('a1', {}).get('net_msgs_per_rank', '')} : " \
                    f"{g['twolevel']['net_msgs_per_rank']}"
            tt.append(r)
        out += ["## Projection: all-to-all exchange (model, bench-twolevel)"
                "\n", "Fabric 100 Gb/s InfiniBand HDR100 (1 us, 12.5 GB/s); "
                "costs as above.\n", table(hh, tt), ""]
    return out


# The planner (auto's first call and steady state, per planner mode):
# per suite, the rows that are cases, passion's fixed methods (None: every
# method that is neither auto nor a peer nor XCHG_NOT_FIXED) and the peers
PLANNER = {
    "index": (lambda r: r.get("op") == "measured", None, ["mpi-raw"]),
    "irregular": (lambda r: r.get("op") == "measured", None, ["mpi-raw"]),
    "etp": (lambda r: True, ["direct", "etp-static", "etp-dynamic"], PEERS),
    "etp-large": (lambda r: True, ["direct", "etp-static", "etp-dynamic"],
                  PEERS),
    "patterns": (lambda r: True, FIXED, PEERS),
    "nodes": (lambda r: r.get("kind") == "run", NODES_FIXED,
              ["romio-nodes"]),
}
PEER_NOTE = {
    "index": "MPI's own MPI_Alltoall (mpi-raw)",
    "irregular": "MPI's own MPI_Alltoallv (mpi-raw)",
    "nodes": "ROMIO collective (romio-nodes; its messages are NOT charged "
             "by the simulated network, so this ratio flatters ROMIO on the "
             "slow network)",
}


def fnum(r, k):
    """A row's field as a float, None where empty or missing."""
    try:
        return float(r.get(k) or "")
    except ValueError:
        return None


def planner_ratios(rows, suite):
    """One entry per case and auto method (a row with a planner): its
    first call, steady state and spread, and the ratios against the best
    fixed method's and the best peer's steady state (None where missing).
    Shared by table.py and plot.py."""
    if suite not in PLANNER or not rows or "planner" not in rows[0]:
        return []
    keep, fixed, peers = PLANNER[suite]
    key = ("case", "op", "procs", "regime")
    groups = by_key([r for r in rows if keep(r)], key)
    out = []
    for k, g in groups.items():
        autos = [m for m, r in g.items() if r.get("planner")]
        fx = fixed if fixed is not None else [
            m for m in g if m not in autos and m not in peers
            and m not in XCHG_NOT_FIXED]

        def best(names):
            v = [(fnum(g[m], "steady_s"), m) for m in names if m in g
                 and g[m].get("check") == "ok"
                 and fnum(g[m], "steady_s")]
            return min(v) if v else (None, "")
        bf, bfm = best(fx)
        bp, bpm = best(peers)
        for m in autos:
            a = g[m]
            st, fi = fnum(a, "steady_s"), fnum(a, "first_s")
            ok = a.get("check") == "ok"
            e = dict(zip(key, k))
            e.update({
                "ranks": a.get("ranks", ""), "method": m,
                "planner": a["planner"], "calls": a.get("reps", ""),
                "first": fi, "steady": st,
                "steady_min": fnum(a, "steady_min_s"),
                "steady_p90": fnum(a, "steady_p90_s"),
                "chosen": a.get("steady_chosen") or a.get("chosen", ""),
                "check": a.get("check", ""),
                "best fixed": bfm, "fixed steady": bf,
                "fixed calls": g[bfm].get("reps", "") if bfm else "",
                "best peer": bpm, "peer steady": bp,
                "peer calls": g[bpm].get("reps", "") if bpm else "",
                "load": a.get("load", "")})
            e["r_fixed"] = st / bf if ok and st and bf else None
            e["r_peer"] = st / bp if ok and st and bp else None
            e["r_first"] = fi / st if ok and st and fi else None
            out.append(e)
    return out


PLANNER_RATIOS = (("r_fixed", "auto steady / best fixed steady"),
                  ("r_peer", "auto steady / best peer steady"),
                  ("r_first", "auto first / auto steady"))


def run_conditions(rows):
    """The P, ranks note, regimes and load average of a CSV's rows, as a
    sentence for the tables and the plots' titles."""
    ps = sorted({(int(r["procs"]), r.get("ranks", "")) for r in rows
                 if (r.get("procs") or "").isdigit()})
    regs = list(OrderedDict.fromkeys(r["regime"] for r in rows
                                     if r.get("regime")))
    loads = [fnum(r, "load") for r in rows if fnum(r, "load") is not None]
    cores = os.cpu_count() or 0
    load = (f"{min(loads):.2f}-{max(loads):.2f}" if loads else "unknown")
    return (", ".join(f"P={p} ({n or '?'})" for p, n in ps),
            ", ".join(regs), load, cores)


def planner_tables(rows, suite):
    """Auto under the planner, both modes: the distributions over the cases
    of auto steady / best fixed, auto steady / best peer and auto first /
    auto steady (median, p90, worst, cases within 1.05x and 1.1x), and
    every case."""
    es = planner_ratios(rows, suite)
    if not es:
        return []
    keep, fixed, peers = PLANNER[suite]
    cases = [r for r in rows if keep(r)]
    ps, regs, load, cores = run_conditions(cases)
    busy = max((fnum(r, "load") or 0 for r in cases), default=0) >= cores
    out = ["## Planner: auto's first call and steady state, planner "
           "measure and estimate\n",
           f"Runs: {ps}; regime {regs}; 1-minute load average {load} "
           f"(over the rows) on a machine of {cores} cores" +
           (" (at or above the core count: other jobs shared the machine, "
            "times are noisy)" if busy else "") +
           f". P above the core count is oversubscribed (on this {cores}-"
           "core VM: P >= 4 in these suites): more ranks than cores, a "
           "message may wait for a descheduled receiver.\n",
           "Each auto method runs in a context of its own: `planner` "
           "measure (its first calls of a call signature try up to 4-5 "
           "candidates 3 times each, then the ranks keep the fastest) or "
           "estimate (the cost model alone). first = the case's first call "
           "(repetition 0), steady = the median of the last half of the "
           "calls, min/p90 its spread; every time the slowest rank's. The "
           "auto methods ran at least 32 calls a case (the planner decides "
           "within the first 16), the others the suite's repetitions "
           "(columns calls: a steady window of one call where a method ran "
           "two). best fixed: the fastest steady state of passion's fixed "
           "methods (" + (", ".join(fixed) if fixed else "every fixed "
                          "algorithm but mpi-raw") + "); best peer: of " +
           PEER_NOTE.get(suite, ", ".join(peers)) + ". Below 1 means auto "
           "is faster. Goals (the plot's lines): steady / best peer 1.0 "
           "(1.5 at worst); first / steady 1.05. The other tables of this "
           "file use each method's `seconds` (median of all its calls; "
           "nodes: the mean), for auto the planner's trial calls "
           "included.\n"]
    dh = ["P", "ranks", "regime", "method", "planner", "ratio", "cases",
          "median", "p90", "worst", "<= 1.05x", "<= 1.1x"]
    dr = []
    dist = OrderedDict()
    for e in es:
        dist.setdefault((e["procs"], e["ranks"], e["regime"], e["method"],
                         e["planner"]), []).append(e)
    unfinished = [e for e in es if e["steady"] is None]
    for (p, rk, reg, m, pl), v in dist.items():
        for k, label in PLANNER_RATIOS:
            x = sorted(e[k] for e in v if e[k] is not None)
            if not x:
                continue
            dr.append({"P": p, "ranks": rk, "regime": reg, "method": m,
                       "planner": pl, "ratio": label, "cases": str(len(x)),
                       "median": f"{pct(x, 0.5):.3f}",
                       "p90": f"{pct(x, 0.9):.3f}", "worst": f"{x[-1]:.3f}",
                       "<= 1.05x": str(sum(1 for y in x if y <= 1.05)),
                       "<= 1.1x": str(sum(1 for y in x if y <= 1.1))})
    out += ["### Distributions over the cases\n", table(dh, dr), ""]
    if unfinished:
        out += [f"{len(unfinished)} auto rows have no steady state (fewer "
                "than 32 calls: the 60 s budget of a slow case, or a "
                "failed check): " + ", ".join(
                    f"{e['case']} {e['method']} P={e['procs']}"
                    for e in unfinished[:10]) + "\n"]
    bad = [r for r in cases if r.get("check") and r["check"] != "ok"
           and not r["check"].startswith("skipped")]
    out += [f"Checks: {len(bad)} rows not ok" +
            (": " + ", ".join(f"{r['case']} {r['method']}"
                              for r in bad[:10]) if bad else
             " (every result was checked)") + ".\n"]

    def g(x, d=4):
        return "" if x is None else f"{x:.{d}g}"
    ch = ["case", "op", "P", "regime", "method", "planner", "calls",
          "first s", "steady s", "steady min-p90 s", "ran (last call)",
          "best fixed", "fixed s (calls)", "best peer", "peer s (calls)",
          "steady/fixed", "steady/peer", "first/steady"]
    cr = [{"case": e["case"], "op": e["op"], "P": e["procs"],
           "regime": e["regime"], "method": e["method"],
           "planner": e["planner"], "calls": e["calls"],
           "first s": g(e["first"]), "steady s": g(e["steady"]),
           "steady min-p90 s": f"{g(e['steady_min'], 3)}-"
                               f"{g(e['steady_p90'], 3)}"
           if e["steady"] is not None else "",
           "ran (last call)": e["chosen"], "best fixed": e["best fixed"],
           "fixed s (calls)": f"{g(e['fixed steady'])} ({e['fixed calls']})"
           if e["fixed steady"] else "",
           "best peer": e["best peer"],
           "peer s (calls)": f"{g(e['peer steady'])} ({e['peer calls']})"
           if e["peer steady"] else "",
           "steady/fixed": g(e["r_fixed"], 3),
           "steady/peer": g(e["r_peer"], 3),
           "first/steady": g(e["r_first"], 3)} for e in es]
    out += ["### Every case\n", table(ch, cr), ""]
    return out


def cgroup_table(path):
    """The memory control group of the memlimit runs (bench/run)."""
    if not path or not os.path.exists(path):
        return []
    with open(path) as f:
        cg = list(csv.DictReader(f))
    if not cg:
        return []
    return ["## Memory control group (regime memlimit)\n",
            table(list(cg[0].keys()), cg), ""]


if __name__ == "__main__":
    main()
