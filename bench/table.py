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
    # projections are model rows: listed, but not in the ratio tables
    measured = [r for r in rows if not r.get("op", "").startswith("projection")]
    if not rows:
        open(md, "w").write(f"# {suite}\n\n(no rows)\n")
        return
    header = list(rows[0].keys())
    if suite == "patterns":
        open(md, "w").write("\n".join(patterns_tables(rows, path)) + "\n")
        return
    parts = [f"# Benchmark `{suite}`\n", table(header, rows), ""]
    if suite in RATIOS and "method" in header:
        num, dens = RATIOS[suite]
        key = [k for k in ("case", "op", "procs", "regime") if k in header]
        groups = OrderedDict()
        for r in measured:
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
    open(md, "w").write("\n".join(parts) + "\n")


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
        if r["regime"] == "cold" and r["overlap_efficiency"]:
            ok = float(r["overlap_efficiency"]) >= 0.8
            met += ok
            total += 1
            row["goal met"] = "yes" if ok else "NO"
        out.append(row)
    if not out:
        return []
    return ["## Overlap: efficiency = (T no-prefetch - T prefetch) / "
            "min(t_io, t_compute), median of paired repetitions; hidden = "
            f"1 - io_wait(prefetch) / t_io; cold goal >= 0.8 ({met} of "
            f"{total} met)\n", table(head, out), ""]


# methods of the exchange suites that are not fixed algorithms
XCHG_NOT_FIXED = ("auto", "a1-spin", "calibrate")


def exchange_tables(rows):
    """Goal table (auto against the best fixed method and MPI's own call),
    the index trade-off, and where the model and the measurement differ
    most, for the suites index and irregular."""
    meas = [r for r in rows if r.get("op") == "measured" and r["seconds"]]
    groups = OrderedDict()
    for r in meas:
        groups.setdefault((r["case"], r["procs"], r["regime"]), {})[
            r["method"]] = r
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
    groups = OrderedDict()
    for r in rows:
        if r.get("seconds") and r.get("check") == "ok":
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
        # the strided tables' stricter goal holds warm (issue 14)
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
    groups = OrderedDict()
    for r in rows:
        groups.setdefault(tuple(r[k] for k in key), {})[r["method"]] = r
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


def cgroup_table(path):
    """The memory control group of the memlimit runs (bench/run)."""
    import os
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
