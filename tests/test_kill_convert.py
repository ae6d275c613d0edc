#!/usr/bin/python3
"""test_kill_convert.py - `passion convert` and `passion get` never leave a
half-written destination.

usage: test_kill_convert.py PASSION MPIEXEC SCRATCH [--kills K] [--seed S]
       (PASSION_KILLS=K in the environment overrides --kills)

A job of three commands at 2 ranks, with a small budget so that each copies
in many rounds (with --force: each replaces its destination): convert SRC
-> dst.raw (which exists from the start with other contents), get a
strided section of SRC -> g.raw, convert SRC -> the local set l.%d.laf.
SRC alternates between two generations (a.raw, b.raw) from job to job.
The whole job (its process group) gets SIGKILL after a
random delay; then:
  - dst.raw is byte for byte the old contents or one generation's;
  - g.raw is absent (before the first get) or one generation's section;
  - the set either has no description (l.laf.passion), or it has one and
    every file is complete and of one generation (the description is
    written last, after being removed first; passion_file_rename);
  - nothing else but passion temporaries (.passion-tmp-*, *.passion-tmp).
A last job runs to its end and must leave every destination complete and
no temporary. Prints the seed and the count of outcomes.
"""
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np

PASSION, MPIEXEC, SCRATCH = os.path.abspath(sys.argv[1]), sys.argv[2], \
    sys.argv[3]
KILLS = int(os.environ.get('PASSION_KILLS') or
            (sys.argv[sys.argv.index('--kills') + 1]
             if '--kills' in sys.argv else 5))
SEED = int(sys.argv[sys.argv.index('--seed') + 1]) if '--seed' in sys.argv \
    else 1123
rng = random.Random(SEED)
SHAPE = (256, 512)  # 1 MiB of float64
SECTION = '3:250:2,1::3'
NP = 2
failures = 0
stats = {}


def fail(msg):
    global failures
    failures += 1
    print(f"FAIL (seed {SEED}): {msg}", flush=True)


def path(n):
    return os.path.join(SCRATCH, n)


def count(what):
    stats[what] = stats.get(what, 0) + 1


def job_script(src):
    base = [MPIEXEC, '-n', str(NP), PASSION]
    raw = ['--shape', ','.join(map(str, SHAPE)), '--type', 'f8',
           '--budget', '16K', '--no-progress', '--force']
    cmds = [base + ['convert'] + raw + [src, 'dst.raw'],
            base + ['get'] + raw + [src, SECTION, '-o', 'g.raw'],
            base + ['convert'] + raw + [src, 'l.%d.laf', '--dist',
                                        'CYCLIC(5),*']]
    return ' && '.join(' '.join(f"'{a}'" for a in c) for c in cmds)


def start(src):
    env = dict(os.environ, HYDRA_LAUNCHER='fork')
    return subprocess.Popen(['sh', '-c', job_script(src)], cwd=SCRATCH,
                            env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


def local_files(arr):
    """The set's expected files: CYCLIC(5) over dimension 0 on NP ranks."""
    out = []
    for q in range(NP):
        rows = [r for r in range(SHAPE[0]) if (r // 5) % NP == q]
        out.append(arr[rows, :].tobytes())
    return out


def check(gens, old, when):
    d = open(path('dst.raw'), 'rb').read()
    if d == old:
        count('dst old')
    elif any(d == g['full'] for g in gens):
        count('dst complete')
    else:
        fail(f"{when}: dst.raw is neither the old contents nor complete "
             f"({len(d)} bytes)")
    if os.path.exists(path('g.raw')):
        g = open(path('g.raw'), 'rb').read()
        if any(g == x['sec'] for x in gens):
            count('get complete')
        else:
            fail(f"{when}: g.raw is not a complete section ({len(g)} bytes)")
    else:
        count('get absent')
    if os.path.exists(path('l.laf.passion')):
        files = [open(path(f"l.{q}.laf"), 'rb').read()
                 if os.path.exists(path(f"l.{q}.laf")) else None
                 for q in range(NP)]
        if any(files == x['set'] for x in gens):
            count('set complete')
        else:
            fail(f"{when}: the set has a description but its files are not "
                 f"one complete generation")
    else:
        count('set without description')
    for f in os.listdir(SCRATCH):
        if f in ('a.raw', 'b.raw', 'dst.raw', 'g.raw', 'l.laf.passion') or \
                (f.startswith('l.') and f.endswith('.laf')):
            continue
        if f.startswith('.passion-tmp-') or f.endswith('.passion-tmp'):
            count('temporaries')
            continue
        fail(f"{when}: unexpected file {f}")


def main():
    os.makedirs(SCRATCH, exist_ok=True)
    for f in os.listdir(SCRATCH):
        os.unlink(path(f))
    nrng = np.random.default_rng(SEED)
    gens = []
    for name in ('a.raw', 'b.raw'):
        arr = nrng.standard_normal(SHAPE)
        arr.tofile(path(name))
        sl = tuple(slice(*[int(x) if x else None for x in p.split(':')])
                   for p in SECTION.split(','))
        gens.append({'full': arr.tobytes(), 'sec': arr[sl].tobytes(),
                     'set': local_files(arr)})
    old = np.full(SHAPE, 7.0).tobytes()
    open(path('dst.raw'), 'wb').write(old)
    print(f"test_kill_convert: seed {SEED}, {KILLS} kills", flush=True)
    # a full job's time, for the range of the delays
    t0 = time.time()
    p = start('a.raw')
    _, err = p.communicate()
    full = time.time() - t0
    if p.returncode:
        fail(f"a complete job failed: {err.decode()[-500:]}")
    check(gens, old, 'the first complete job')
    old = gens[0]['full']  # dst.raw from now on
    for k in range(KILLS):
        src = ('a.raw', 'b.raw')[k % 2]
        delay = rng.uniform(0, full * 1.1)
        p = start(src)
        time.sleep(delay)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
        # the ranks are in the same group; wait until none is left
        for _ in range(100):
            r = subprocess.run(['pgrep', '-g', str(p.pid)],
                               capture_output=True)
            if r.returncode:
                break
            time.sleep(0.05)
        count('kills')
        check(gens, None, f"kill {k} after {delay:.2f} s of {src}")
    p = start('b.raw')
    _, err = p.communicate()
    if p.returncode:
        fail(f"the last complete job failed: {err.decode()[-500:]}")
    b = gens[1]
    if open(path('dst.raw'), 'rb').read() != b['full'] or \
            open(path('g.raw'), 'rb').read() != b['sec'] or \
            not os.path.exists(path('l.laf.passion')) or \
            [open(path(f"l.{q}.laf"), 'rb').read() for q in range(NP)] != \
            b['set']:
        fail("the last complete job did not leave every destination "
             "complete")
    left = [f for f in os.listdir(SCRATCH) if 'passion-tmp' in f]
    if left:
        fail(f"the last complete job left temporaries: {left}")
    print(f"test_kill_convert: {stats}, full job {full:.1f} s, "
          f"{failures} failed", flush=True)
    sys.exit(1 if failures else 0)


main()
