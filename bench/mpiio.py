#!/usr/bin/env python3
"""bench/run mpiio: existing-style programs (MPI-IO, parallel HDF5,
PnetCDF: bench/bench_mpiio.c) on plain MPI-IO and through
libpassion_mpiio (LD_PRELOAD), in the same run, interleaved.

Cases: the thesis's 2-D distributions (etp: a block of rows, of columns,
of a grid of ranks; read and write) and random patterns from a fixed seed
(2-3 dimensions, rows, columns, grid, cyclic rows or every S-th column,
read or write). For each case and API the file is prepared once
(untimed), then ROUNDS rounds each run the program once on plain MPI-IO
and once through the layer, the order alternating between rounds; each
run makes REPS collective calls, the first timed apart (first_s) from
the median of the others (steady_s); every run is verified (reads
against the formula, writes by reading the file back) and a run that
fails verification fails the suite. cold: the page cache is dropped
before every run (root), so each run's first call reads from the device.
The layer's report (PASSION_MPIIO=report) says whether passion served
the calls. Writes DIR/mpiio.csv, DIR/mpiio.md (layer / plain per case:
steady and first call; distribution per API: median, p90, worst) and
DIR/mpiio.png (the sorted ratios with the goal lines 0.5 and 1.0).
"""
import argparse
import os
import random
import re
import statistics
import subprocess
import sys

REPORT = re.compile(r"passion_mpiio: rank \d+ file (\S+): served (\d+), "
                    r"passed through (\d+)")


def cases(seed, n, size, quick):
    """The etp cases and n random patterns (the same for one seed)."""
    side = 512 if quick else 4096
    out = []
    for op in ("read", "write"):
        for dist in ("rows", "cols", "blocks"):
            out.append({"name": f"etp-{dist}-{op}", "shape": [side, side],
                        "dist": dist, "op": op})
    rng = random.Random(seed)
    elems = (size // 8) if not quick else (1 << 18)
    for i in range(n):
        nd = rng.choice([2, 2, 3])
        if nd == 2:
            r = rng.choice([1, 2, 4, 8])
            c = int((elems / r) ** 0.5)
            shape = [c * r, max(c, 8)]
        else:
            e = int(elems ** (1 / 3))
            shape = [e * rng.choice([1, 2]), e, max(e // rng.choice([1, 2]),
                                                    8)]
        dist = rng.choice(["rows", "cols", "blocks", "cyclic",
                           f"strided:{rng.choice([2, 3, 4])}"])
        op = rng.choice(["read", "write"])
        out.append({"name": f"p{i:03d}-{dist.replace(':', '')}-{op}",
                    "shape": shape, "dist": dist, "op": op})
    return out


def drop_caches():
    subprocess.run(["sync"])
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def run(a, p, exe, args, layer):
    env = dict(os.environ)
    env.pop("PASSION_MPIIO", None)
    if layer:
        env["LD_PRELOAD"] = (a.layer + " " + env.get("LD_PRELOAD", "")).strip()
        env["PASSION_MPIIO"] = "report"
    cmd = [a.mpiexec, "-n", str(p), exe] + args
    r = subprocess.run(cmd, env=env, capture_output=True, text=True,
                       timeout=1800)
    served = sum(int(m.group(2)) for m in REPORT.finditer(r.stderr))
    passed = sum(int(m.group(3)) for m in REPORT.finditer(r.stderr))
    return r, served, passed


def apis_of(a, exe, scratch):
    """The APIs this build's program has (hdf5, pnetcdf need their
    parallel libraries for this MPI)."""
    have = []
    for api in ("mpiio", "hdf5", "pnetcdf"):
        f = os.path.join(scratch, f"probe.{api}")
        r, _, _ = run(a, 1, exe, ["--api", api, "--file", f, "--shape",
                                  "8,8", "--prepare"], False)
        if r.returncode == 0:
            have.append(api)
        else:
            print(f"bench/run mpiio: {api}: skipped "
                  f"({r.stderr.strip().splitlines()[-1:]})", file=sys.stderr)
        if os.path.exists(f):
            os.remove(f)
    return have


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--procs", default="2")
    ap.add_argument("--regime", default="warm")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--cases", type=int, default=12)
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--size", type=int, default=128 << 20)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--apis", default="")
    a = ap.parse_args()
    exe = os.path.join(a.build, "bench", "bench-mpiio")
    a.mpiexec = os.path.join(a.build, "mpiexec")
    a.layer = os.path.join(a.build, "mpiio", "libpassion_mpiio.so")
    scratch = os.path.join(a.out, "scratch-mpiio")
    os.makedirs(scratch, exist_ok=True)
    csv = os.path.join(a.out, "mpiio.csv")
    apis = a.apis.split(",") if a.apis else apis_of(a, exe, scratch)
    regimes = ["warm", "cold"] if a.regime == "both" else [a.regime]
    if "cold" in regimes and not drop_caches():
        print("bench/run mpiio: cold needs root (drop_caches); skipped",
              file=sys.stderr)
        regimes.remove("cold")
    cs = cases(a.seed, a.cases, a.size, a.quick)
    status = 0
    with open(csv, "w") as out:
        out.write("case,api,shape,dist,op,procs,regime,mode,round,first_s,"
                  "steady_s,steady_min_s,verified,served,passed,load\n")
        for p in [int(x) for x in a.procs.split(",")]:
            for regime in regimes:
                for c in cs:
                    for api in apis:
                        f = os.path.join(scratch, f"{c['name']}.{api}")
                        base = ["--api", api, "--file", f, "--shape",
                                ",".join(map(str, c["shape"]))]
                        r, _, _ = run(a, p, exe, base + ["--prepare"], False)
                        if r.returncode:
                            print(f"FAIL: prepare {c['name']} {api}: "
                                  f"{r.stderr[-500:]}", file=sys.stderr)
                            status = 1
                            continue
                        for rnd in range(a.rounds):
                            modes = ["plain", "layer"]
                            if rnd % 2:
                                modes.reverse()
                            for mode in modes:
                                if regime == "cold":
                                    drop_caches()
                                r, sv, ps = run(
                                    a, p, exe, base + [
                                        "--dist", c["dist"], "--op",
                                        c["op"], "--reps", str(a.reps)],
                                    mode == "layer")
                                line = r.stdout.strip().splitlines()
                                if r.returncode or not line:
                                    print(f"FAIL: {c['name']} {api} {mode}:"
                                          f" {r.stdout[-300:]}"
                                          f"{r.stderr[-800:]}",
                                          file=sys.stderr)
                                    status = 1
                                    continue
                                v = line[-1].split(",")
                                out.write(",".join(map(str, [
                                    c["name"], api,
                                    "x".join(map(str, c["shape"])),
                                    c["dist"], c["op"], p, regime, mode,
                                    rnd, v[4], v[5], v[6], v[7], sv, ps,
                                    f"{os.getloadavg()[0]:.2f}"])) + "\n")
                                out.flush()
                                print(f"{c['name']:>22} {api:>7} P={p} "
                                      f"{regime} {mode:>5}: first {v[4]} "
                                      f"steady {v[5]} served {sv}",
                                      file=sys.stderr)
                        os.remove(f)
    os.rmdir(scratch) if not os.listdir(scratch) else None
    return status


if __name__ == "__main__":
    sys.exit(main())
