#!/usr/bin/env python3
"""mpiio_compare.py MPIEXEC NP PLAIN LAYER [--errors] [PRELOAD_LIB]

Runs test_mpiio twice with the same seed (env SEED, else a random one,
printed): PLAIN, linked to MPI only, and LAYER, linked to libpassion_mpiio
before MPI, with PASSION_MPIIO=report; with PRELOAD_LIB, a third run of
PLAIN under LD_PRELOAD=PRELOAD_LIB; then LAYER again with passion's mpiio
driver (PASSION_OPTIONS=driver=mpiio), whose own MPI-IO calls must not
re-enter the layer (the report's counts equal the first layer run's).
Every file of the plain run (the data
files and each rank's reads.<rank>) must be byte-identical in the other
runs, and the report must show the calls of the files in SERVED served
(some of them at least), those in PASSED passed through entirely, and
the reasons in REASONS (each layer run); MPI_File_get_info must show
passion_method under the layer (Open MPI shows it without the layer
too: it keeps the keys it was given). With --errors (builds with test hooks),
LAYER's "errors" case runs with an injected I/O failure (passion's fault
driver) and every rank must get MPI_ERR_IO and one call of the file's
error handler; the plain run of that case must succeed. Exit 0 pass, 1 fail.
"""
import filecmp
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

REPORT = re.compile(r"passion_mpiio: rank (\d+) file (\S+): served (\d+), "
                    r"passed through (\d+)")


def run(mpiexec, np, exe, outdir, seed, env):
    os.makedirs(outdir)
    p = subprocess.run([mpiexec, "-n", str(np), exe, outdir, str(seed)],
                       env=env, capture_output=True, text=True, timeout=500)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    if p.returncode:
        print(f"FAIL: {exe} exited {p.returncode}")
    return p.returncode, p.stderr, p.stdout


def counts(report):
    served, passed = {}, {}
    for m in REPORT.finditer(report):
        name = os.path.basename(m.group(2))
        served[name] = served.get(name, 0) + int(m.group(3))
        passed[name] = passed.get(name, 0) + int(m.group(4))
    return served, passed


def per_rank(report):
    """{(rank, file): (served, passed)} of the report lines that arrived
    whole: Open MPI's launcher forwards the ranks' stderr in pieces, so a
    line may come interleaved with another rank's and not match."""
    return {(m.group(1), os.path.basename(m.group(2))):
            (int(m.group(3)), int(m.group(4)))
            for m in REPORT.finditer(report)}


def same_files(a, b):
    ok = True
    for name in sorted(os.listdir(a)):
        other = os.path.join(b, name)
        if not os.path.exists(other):
            print(f"FAIL: {name} missing in {b}")
            ok = False
        elif not filecmp.cmp(os.path.join(a, name), other, shallow=False):
            print(f"FAIL: {name} differs between {a} and {b}")
            ok = False
    extra = set(os.listdir(b)) - set(os.listdir(a))
    if extra:
        print(f"FAIL: files only in {b}: {sorted(extra)}")
        ok = False
    return ok


ERRLINE = re.compile(r"test_mpiio errors: rank \d+ class (\S+) handler "
                     r"calls (\d+)")


def errors_case(mpiexec, np, plain, layer, top, seed, env):
    ok = True
    for tag, exe, extra, want in [
            ("errors-plain", plain, {}, ("MPI_SUCCESS", "0")),
            ("errors-layer", layer,
             {"PASSION_OPTIONS": "driver=fault,fault_fail_at=1"},
             ("MPI_ERR_IO", "1"))]:
        outdir = os.path.join(top, tag)
        os.makedirs(outdir)
        p = subprocess.run([mpiexec, "-n", str(np), exe, outdir, str(seed),
                            "errors"], env=dict(env, **extra),
                           capture_output=True, text=True, timeout=300)
        got = ERRLINE.findall(p.stdout)
        print(f"{tag}: {got}")
        if p.returncode or len(got) != int(np) or \
                any(g != want for g in got):
            print(f"FAIL: {tag}: expected {want} on every rank")
            sys.stdout.write(p.stdout + p.stderr)
            ok = False
    return ok


# Files whose views and accesses the layer must serve (some calls at
# least), and files whose views it must pass through entirely.
SERVED = ["c3.dat", "vector.dat", "nestedtiles.dat", "darray1.dat",
          "darray4.dat",
          "blocks0.dat", "blocks1.dat", "roundrobin.dat", "subpair.dat",
          "memsub.dat", "doc.dat", "ro.dat", "info.dat"]
PASSED = ["darray3.dat", "blocks2.dat", "disabled.dat"]
REASONS = [("darray3.dat", "set_view passed through: filetype: darray type "
            "is not one regular strided pattern"),
           ("blocks2.dat", "set_view passed through: filetype: "
            "indexed_block type is not one regular strided pattern"),
           ("info.dat", "info passed through: passion_method=bogus "
            "ignored"),
           ("ro.dat", "write_all passed through: file opened read-only")]


def report_ok(tag, served, passed, err, out):
    ok = True
    for name in SERVED:
        if not served.get(name):
            print(f"FAIL: {tag}: the layer served nothing of {name}")
            ok = False
    for name in PASSED:
        if served.get(name) or not passed.get(name):
            print(f"FAIL: {tag}: {name} was not passed through entirely")
            ok = False
    if not passed.get("info.dat"):
        print(f"FAIL: {tag}: passion_enable=false at MPI_File_set_info "
              "passed nothing of info.dat through")
        ok = False
    for name, text in REASONS:
        if not re.search(re.escape(name) + r":\s+" + re.escape(text), err):
            print(f"FAIL: {tag}: the report lacks '{name}: {text}'")
            ok = False
    if "passion_method=etp-static" not in out:
        print(f"FAIL: {tag}: MPI_File_get_info lacks passion_method")
        ok = False
    return ok


def main():
    mpiexec, np, plain, layer = sys.argv[1:5]
    rest = sys.argv[5:]
    errors = "--errors" in rest
    rest = [a for a in rest if a != "--errors"]
    preload = rest[0] if rest else ""
    seed = int(os.environ.get("SEED", random.randrange(1, 2**31)))
    print(f"mpiio_compare: seed {seed} (rerun with SEED={seed})")
    top = tempfile.mkdtemp(prefix="mpiio.", dir=os.getcwd())
    env = dict(os.environ)
    env.pop("PASSION_MPIIO", None)
    env.pop("PASSION_OPTIONS", None)
    rc, _, out = run(mpiexec, np, plain, os.path.join(top, "plain"), seed,
                     env)
    ok = rc == 0
    runs = [("layer", layer, {})]
    if preload:
        old = env.get("LD_PRELOAD", "")
        runs.append(("preload", plain,
                     {"LD_PRELOAD": (preload + " " + old).strip()}))
    runs.append(("driver", layer, {"PASSION_OPTIONS": "driver=mpiio"}))
    first = None
    for tag, exe, extra in runs:
        renv = dict(env, PASSION_MPIIO="report", **extra)
        rc, err, out = run(mpiexec, np, exe, os.path.join(top, tag), seed,
                           renv)
        ok = ok and rc == 0
        served, passed = counts(err)
        print(f"{tag}: served {served}, passed through {passed}")
        ranks = per_rank(err)
        first = first if tag != "layer" else ranks
        common = set(ranks) & set(first or {})
        if tag == "driver" and (not common or
                                any(ranks[k] != first[k] for k in common)):
            print("FAIL: passion's mpiio driver re-entered the layer (its "
                  "calls were counted)")
            ok = False
        ok = report_ok(tag, served, passed, err, out) and ok
        names = set(n for n in os.listdir(os.path.join(top, "plain"))
                    if n.endswith(".dat")) | {"doc.dat"}  # deleted on close
        if set(served) != names:
            print(f"FAIL: {tag}: the report names {sorted(served)}, the "
                  f"test opened {sorted(names)}")
            ok = False
        if served.get("disabled.dat") or not passed.get("disabled.dat"):
            print(f"FAIL: {tag}: passion_enable=false did not pass "
                  "disabled.dat through")
            ok = False
        if not passed.get("pass.dat"):
            print(f"FAIL: {tag}: nothing of pass.dat passed through")
            ok = False
        ok = same_files(os.path.join(top, "plain"), os.path.join(top, tag)) \
            and ok
    if errors:
        ok = errors_case(mpiexec, np, plain, layer, top, seed, env) and ok
    if ok:
        shutil.rmtree(top)
    print("PASS" if ok else f"FAIL (files kept in {top})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
