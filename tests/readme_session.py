#!/usr/bin/python3
"""readme_session.py - the README's HDF5/netCDF session of the passion
command is real: its commands are run and their output compared.

usage: readme_session.py README PASSION MPIEXEC SCRATCH

Finds the first ``` block after the words "run by the `readme-session`
test" in README, makes the files it starts from (run.h5 by the HDF5
library's h5import: /fields/u contiguous and /fields/v chunked, float64
400 x 300 with u[i, j] = 1000 i + j; run.nc by ncgen, CDF-1, the same u),
runs every "$ " line with bash in SCRATCH (`passion` and `mpiexec` on
PATH are this build's), and compares stdout and stderr together with the
lines that follow it in the README, exactly. Progress lines ("passion
convert:  42% ...", shown only when a command runs over 2 s) depend on
the time taken and are left out of the comparison. Exit 1 on any
difference, printing both.
"""
import os
import re
import shutil
import subprocess
import sys

import numpy as np

README, PASSION, MPIEXEC, SCRATCH = sys.argv[1:5]
MARK = "run by the `readme-session` test"


def session():
    text = open(README).read()
    at = text.find(MARK)
    if at < 0:
        sys.exit(f"README has no '{MARK}'")
    m = re.search(r"```[a-z]*\n(.*?)```", text[at:], re.S)
    if not m:
        sys.exit("no ``` block after the mark")
    steps = []
    for line in m.group(1).splitlines():
        if line.startswith('$ '):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
        else:
            sys.exit(f"README session: output before any command: {line!r}")
    return steps


def setup():
    if os.path.isdir(SCRATCH):
        shutil.rmtree(SCRATCH)
    os.makedirs(os.path.join(SCRATCH, 'bin'))
    os.symlink(os.path.abspath(PASSION),
               os.path.join(SCRATCH, 'bin', 'passion'))
    os.symlink(os.path.abspath(MPIEXEC),
               os.path.join(SCRATCH, 'bin', 'mpiexec'))
    i, j = np.mgrid[0:400, 0:300]
    u = (1000.0 * i + j).astype('<f8')
    u.tofile(os.path.join(SCRATCH, 'u.bin'))
    for name, chunk in (('u', None), ('v', '100 300')):
        conf = ["PATH /fields/" + name, "INPUT-CLASS FP", "INPUT-SIZE 64",
                "INPUT-BYTE-ORDER LE", "RANK 2", "DIMENSION-SIZES 400 300",
                "OUTPUT-CLASS FP", "OUTPUT-SIZE 64",
                "OUTPUT-ARCHITECTURE IEEE", "OUTPUT-BYTE-ORDER LE"]
        if chunk:
            conf.append("CHUNKED-DIMENSION-SIZES " + chunk)
        open(os.path.join(SCRATCH, name + '.conf'), 'w').write(
            '\n'.join(conf) + '\n')
    cdl = ("netcdf run {\ndimensions:\n  y = 400 ;\n  x = 300 ;\n"
           "variables:\n  double u(y, x) ;\ndata:\n  u = " +
           ', '.join(str(int(v)) for v in u.ravel()) + " ;\n}\n")
    open(os.path.join(SCRATCH, 'run.cdl'), 'w').write(cdl)
    for args in (['h5import', 'u.bin', '-c', 'u.conf', 'u.bin', '-c',
                  'v.conf', '-o', 'run.h5'],
                 ['ncgen', '-k', 'classic', '-o', 'run.nc', 'run.cdl']):
        p = subprocess.run(args, cwd=SCRATCH, capture_output=True,
                           text=True, timeout=300)
        if p.returncode:
            sys.exit(f"{' '.join(args)}: {p.stderr}")
    for f in ('u.bin', 'u.conf', 'v.conf', 'run.cdl'):
        os.unlink(os.path.join(SCRATCH, f))


PROGRESS = re.compile(r"^passion \w+: +\d+%  ")


def main():
    steps = session()
    setup()
    env = dict(os.environ, PATH=os.path.join(SCRATCH, 'bin') + ':' +
               os.environ.get('PATH', ''))
    bad = 0
    for cmd, want in steps:
        p = subprocess.run(['bash', '-c', cmd], cwd=SCRATCH, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=300)
        got = [l for l in p.stdout.splitlines() if not PROGRESS.match(l)]
        if got != want:
            bad += 1
            print(f"README session: `{cmd}` (exit {p.returncode}) printed:")
            print('\n'.join(got))
            print("README says:")
            print('\n'.join(want))
    print(f"readme-session: {len(steps)} commands, {bad} differ")
    sys.exit(1 if bad else 0)


main()
