#!/usr/bin/env python3
"""mpiio_programs.py MPIEXEC NP PLAIN LAYER [--preload LIB] [--served NAMES]
                    [--tools DIR]

Runs an existing-style MPI-IO program (a parallel HDF5 or PnetCDF program
that knows nothing of passion: tests/mpiio_prog_h5.c, mpiio_prog_nc.c)
with the same seed (env SEED, else random, printed): PLAIN, linked to
its I/O library and MPI only, and LAYER, the same source linked to
libpassion_mpiio before MPI, with PASSION_MPIIO=report; with --preload,
PLAIN again under LD_PRELOAD=LIB. Every file the plain run writes (the
HDF5/netCDF files and each rank's reads.<rank>) must be byte-identical in
the other runs, and each program must exit 0 (it checks every value it
reads against the formula that wrote it). --served NAMES (comma
separated file names): the report must show calls of each served by
passion. --tools DIR: PnetCDF's installed programs (ncmpidump and
ncvalidator on the plain run's netCDF files, ncmpidiff of each against
the layer run's) run without and under LD_PRELOAD=LIB: exit 0, the same
output and status required.
Exit 0 pass, 1 fail.
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile

# the report's parsing and the byte-for-byte comparison of two runs
# directories are mpiio_compare.py's (same folder, on sys.path)
from mpiio_compare import counts, same_files


def run(cmd, env, timeout=500):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def tools_case(tooldir, preload, plain_dir, layer_dir, env):
    """PnetCDF's command-line programs on the runs' files, without and
    under the layer: the same output and status. ncmpidump and ncmpidiff
    (plain run's file against the layer run's) read through MPI-IO, so
    the layer must report on them; ncvalidator reads with POSIX calls
    (it checks the file's format) and must just agree."""
    ok = True
    ncs = sorted(n for n in os.listdir(plain_dir) if n.endswith(".nc"))
    cmds = []
    for n in ncs:
        f = os.path.join(plain_dir, n)
        cmds.append([os.path.join(tooldir, "ncmpidump"), f])
        cmds.append([os.path.join(tooldir, "ncvalidator"), f])
        cmds.append([os.path.join(tooldir, "ncmpidiff"), f,
                     os.path.join(layer_dir, n)])
    for cmd in cmds:
        a = run(cmd, env, 120)
        lenv = dict(env, PASSION_MPIIO="report",
                    LD_PRELOAD=(preload + " " + env.get("LD_PRELOAD", ""))
                    .strip())
        b = run(cmd, lenv, 120)
        served, passed = counts(b[2])
        tool = os.path.basename(cmd[0])
        print(f"{tool} {os.path.basename(cmd[1])}: rc {a[0]} / {b[0]}, "
              f"layer served {sum(served.values())}, passed through "
              f"{sum(passed.values())}")
        if a[0] != b[0] or a[1] != b[1]:
            print(f"FAIL: {' '.join(cmd)} differs under the layer")
            print(a[1][-2000:], a[2][-2000:], b[1][-2000:], b[2][-2000:])
            ok = False
        if a[0] != 0:
            print(f"FAIL: {' '.join(cmd)} exited {a[0]}")
            ok = False
        if tool != "ncvalidator" and not served and not passed:
            print(f"FAIL: {tool}: no report from the layer (not preloaded?)")
            ok = False
    return ok


def main():
    args = sys.argv[1:]
    opt = {}
    for key in ("--preload", "--served", "--tools"):
        if key in args:
            i = args.index(key)
            opt[key] = args[i + 1]
            del args[i:i + 2]
    mpiexec, np, plain, layer = args[:4]
    seed = int(os.environ.get("SEED", random.randrange(1, 2**31)))
    print(f"mpiio_programs: {os.path.basename(plain)} np {np} seed {seed} "
          f"(rerun with SEED={seed})")
    top = tempfile.mkdtemp(prefix="mpiio-prog.", dir=os.getcwd())
    env = dict(os.environ)
    env.pop("PASSION_MPIIO", None)
    env.pop("PASSION_OPTIONS", None)
    runs = [("plain", plain, {}), ("layer", layer, {"PASSION_MPIIO":
                                                    "report"})]
    if "--preload" in opt:
        runs.append(("preload", plain, {
            "PASSION_MPIIO": "report",
            "LD_PRELOAD": (opt["--preload"] + " " +
                           env.get("LD_PRELOAD", "")).strip()}))
    ok = True
    for tag, exe, extra in runs:
        out = os.path.join(top, tag)
        os.makedirs(out)
        rc, so, se = run([mpiexec, "-n", str(np), exe, out, str(seed)],
                         dict(env, **extra))
        sys.stdout.write(so)
        if rc:
            print(f"FAIL: {tag}: {os.path.basename(exe)} exited {rc}")
            sys.stdout.write(se[-4000:])
            ok = False
        if tag == "plain":
            continue
        served, passed = counts(se)
        print(f"{tag}: served {served}, passed through {passed}")
        for line in se.splitlines():
            if "passed through:" in line and "rank 0 " in line:
                print("  " + line)
        if not served and not passed:
            print(f"FAIL: {tag}: no report from the layer")
            ok = False
        for name in filter(None, opt.get("--served", "").split(",")):
            if not served.get(name):
                print(f"FAIL: {tag}: passion served no call of {name}")
                ok = False
        ok = same_files(os.path.join(top, "plain"), out) and ok
    if "--tools" in opt and "--preload" in opt:
        ok = tools_case(opt["--tools"], opt["--preload"],
                        os.path.join(top, "plain"),
                        os.path.join(top, "layer"), env) and ok
    if ok:
        shutil.rmtree(top)
    print("PASS" if ok else f"FAIL (files kept in {top})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
