#!/usr/bin/python3
"""test_cli.py - the passion command's file tools against numpy.

usage: test_cli.py PASSION MPIEXEC SCRATCH NP convert|tools [--seed S]

At NP ranks: `convert` round trips global -> local set (BLOCK, BLOCK(m),
CYCLIC, CYCLIC(m), collapsed, ghosts, 1-D/2-D/3-D, C and Fortran order)
-> global, bit-exact, with arrays many times larger than the budget; every
local file compared with a numpy model of the distribution (HPF BLOCK(m)
and CYCLIC(m), ghosts zero); a set written at NP read back at another
rank count; `ls`, `dump`, `get`, `put` checked against numpy; error cases
(bad section, missing file, bad options, local set to local set) give one
line on stderr and a non-zero exit. Prints the seed; randomised cases use
it (fixed by default).
"""
import os
import random
import shutil
import subprocess
import sys

import numpy as np

PASSION, MPIEXEC, SCRATCH, NP = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3], int(
    sys.argv[4])
PART = sys.argv[5]
SEED = int(sys.argv[sys.argv.index('--seed') + 1]) if '--seed' in sys.argv \
    else 20261123 + NP
rng = random.Random(SEED)
nrng = np.random.default_rng(SEED)
failures = 0
checks = 0


def fail(msg):
    global failures
    failures += 1
    print(f"FAIL (seed {SEED}, np {NP}): {msg}", flush=True)


def check(cond, msg):
    global checks
    checks += 1
    if not cond:
        fail(msg)
    return cond


def run(args, np_=None, expect=0):
    """Run passion under mpiexec with np_ ranks; returns (rc, out, err)."""
    n = NP if np_ is None else np_
    cmd = [MPIEXEC, '-n', str(n), PASSION] + args
    env = dict(os.environ, HYDRA_LAUNCHER='fork')
    p = subprocess.run(cmd, cwd=SCRATCH, capture_output=True, text=True,
                       env=env, timeout=300)
    if expect is not None and (p.returncode == 0) != (expect == 0):
        fail(f"{' '.join(args)} at np {n}: exit {p.returncode}\n"
             f"stdout: {p.stdout[-2000:]}\nstderr: {p.stderr[-2000:]}")
    return p.returncode, p.stdout, p.stderr


def path(name):
    return os.path.join(SCRATCH, name)


# ------------------------------------------------ the distribution model


def local_count(n, dist, m, P, p):
    if dist == '*':
        return n
    if dist == 'B':
        lo = p * m
        return 0 if lo >= n else min(m, n - lo)
    nb = -(-n // m)
    if nb <= p:
        return 0
    c = ((nb - 1 - p) // P + 1) * m
    if (nb - 1) % P == p and n % m:
        c -= m - n % m
    return c


def l2g(dist, m, P, p, l):
    if dist == '*':
        return l
    if dist == 'B':
        return p * m + l
    return (l // m * P + p) * m + l % m


def eff_block(n, dist, m, P):
    if dist == '*':
        return n
    if dist == 'B':
        m = m or -(-n // P)
        return min(m, n)
    return min(m or 1, n)


def expected_local(a, dists, blocks, grid, ghost, q, order):
    nd = a.ndim
    coords = []
    r = q
    for d in reversed(range(nd)):
        coords.insert(0, r % grid[d])
        r //= grid[d]
    idx = []
    for d in range(nd):
        m = eff_block(a.shape[d], dists[d], blocks[d], grid[d])
        c = local_count(a.shape[d], dists[d], m, grid[d], coords[d])
        idx.append(np.array([l2g(dists[d], m, grid[d], coords[d], l)
                             for l in range(c)], dtype=np.int64))
    ext = [len(idx[d]) + 2 * ghost[d] for d in range(nd)]
    out = np.zeros(ext, dtype=a.dtype)
    if all(len(i) for i in idx):
        inner = tuple(slice(ghost[d], ghost[d] + len(idx[d]))
                      for d in range(nd))
        out[inner] = a[np.ix_(*idx)]
    return out.tobytes(order=order)


def dist_arg(dists, blocks):
    out = []
    for d, m in zip(dists, blocks):
        if d == '*':
            out.append('*')
        elif d == 'B':
            out.append(f"BLOCK({m})" if m else 'BLOCK')
        else:
            out.append(f"CYCLIC({m})" if m else 'CYCLIC')
    return ','.join(out)


def typecode(dt):
    return dt.str.replace('=', '<')


# ------------------------------------------------------- round trips


def round_trip(shape, dtype, order, dists, blocks, grid, ghost, budget,
               other):
    a = (nrng.random(shape) * 1e6).astype(dtype)
    raw = path('src.raw')
    a.tofile(raw) if order == 'C' else open(raw, 'wb').write(
        a.tobytes(order='F'))
    common = ['--shape', ','.join(map(str, shape)), '--type', typecode(
        a.dtype), '--order', order, '--budget', str(budget)]
    desc = (f"shape {shape} {a.dtype} order {order} dist "
            f"{dist_arg(dists, blocks)} grid {grid} ghost {ghost} "
            f"budget {budget}")
    for f in os.listdir(SCRATCH):
        if f.startswith('set.') or f.startswith('back'):
            os.unlink(path(f))
    args = ['convert', '--no-progress'] + common + [
        'src.raw', 'set.%d.laf', '--dist', dist_arg(dists, blocks),
        '--grid', ','.join(map(str, grid)), '--ghost',
        ','.join(map(str, ghost))]
    rc, _, err = run(args)
    if rc:
        return
    for q in range(NP):
        want = expected_local(a, dists, blocks, grid, ghost, q, order)
        got = open(path(f"set.{q}.laf"), 'rb').read()
        check(got == want, f"{desc}: local file {q} differs from the model "
              f"({len(got)} vs {len(want)} bytes)")
    check(os.path.exists(path('set.laf.passion')),
          f"{desc}: no description set.laf.passion")
    # back at NP ranks, and at another rank count (the set is read file
    # by file)
    for back_np in sorted({NP, 1 + NP % 3} if other else {NP}):
        rc, _, _ = run(['convert', '--no-progress', '--budget', str(budget),
                        'set.%d.laf', 'back.raw'], np_=back_np)
        if rc:
            continue
        got = open(path('back.raw'), 'rb').read()
        check(got == a.tobytes(order=order),
              f"{desc}: set -> global at np {back_np} is not bit-exact")


def round_trips():
    P = NP
    cases = []
    # 1-D: BLOCK, BLOCK(m), CYCLIC, CYCLIC(m) with ghosts
    n1 = 20011
    for dist, m, g in [('B', 0, 0), ('B', -(-n1 // P) + 5, 3), ('C', 0, 0),
                       ('C', 7, 2)]:
        cases.append(((n1,), '<f8', 'C', [dist], [m], [P], [g], 0))
    # 2-D: CYCLIC(m) on the slow dimension (C order), BLOCK on the fast one
    # (Fortran order), CYCLIC on the fast one; ghosts; collapsed elsewhere
    cases.append(((190, 150), '<f4', 'C', ['C', '*'], [4, 0], [P, 1],
                  [1, 0], 1))
    cases.append(((190, 150), '<f4', 'F', ['*', 'B'], [0, 0], [1, P],
                  [2, 1], 1))
    cases.append(((290, 150), '<i2', 'C', ['*', 'C'], [0, 0], [1, P],
                  [0, 1], 0))
    # a grid over both dimensions where P allows it
    if P % 2 == 0:
        cases.append(((133, 129), '<f8', 'C', ['C', 'B'], [3, 0],
                      [2, P // 2], [1, 1], 1))
    # 3-D, one-byte and 16-byte elements
    cases.append(((60, 50, 30), '|u1', 'C', ['*', 'C', '*'], [0, 2, 0],
                  [1, P, 1], [0, 1, 0], 0))
    cases.append(((30, 20, 25), '<c16', 'F', ['B', '*', '*'], [0, 0, 0],
                  [P, 1, 1], [1, 0, 0], 0))
    for shape, dt, order, dists, blocks, grid, ghost, other in cases:
        a_bytes = int(np.prod(shape)) * np.dtype(dt).itemsize
        budget = 16384  # the arrays are 8 to 80 times larger
        assert a_bytes >= 4 * budget, shape
        round_trip(shape, np.dtype(dt), order, dists, blocks, grid, ghost,
                   budget, other)


# --------------------------------------------------------- ls / dump


def parse_dump(text):
    vals = []
    for line in text.splitlines():
        if not line.startswith('['):
            continue
        rest = line[line.index(']') + 1:].split()
        vals.extend(rest)
    return vals


def np_slice(sec, shape):
    """The reference: numpy's own slicing of the same text."""
    out = []
    parts = sec.split(',') if sec else []
    for d in range(len(shape)):
        if d >= len(parts) or parts[d] == '':
            out.append(slice(None))
            continue
        p = parts[d]
        if ':' in p:
            f = [int(x) if x.strip() else None for x in p.split(':')]
            out.append(slice(*f))
        else:
            i = int(p)
            out.append(slice(i, i + 1 if i != -1 else None))
    return tuple(out)


def ls_dump_get_put():
    a = nrng.standard_normal((17, 23))
    a.tofile(path('d.raw'))
    raw = ['--shape', '17,23', '--type', 'f8']
    rc, out, _ = run(['ls'] + raw + ['d.raw'])
    check('17 x 23' in out and 'float64' in out, f"ls d.raw: {out!r}")
    rc, out, _ = run(['ls', 'set.laf.passion'], expect=None)
    for sec in ['', '3:9:2,5:20:4', '-3:,::5', '0:100:7,-1', '5:5']:
        rc, out, _ = run(['dump', '--budget', '64'] + raw + ['d.raw', sec],
                         np_=1 if sec in ('', '5:5') else NP)
        want = a[np_slice(sec, a.shape)].ravel()
        got = np.array([float(v) for v in parse_dump(out)])
        check(got.shape == want.shape and np.array_equal(got, want),
              f"dump section {sec!r}: {len(got)} values, want {len(want)}")
    # --start/--count/--stride like h5dump
    rc, out, _ = run(['dump'] + raw + ['d.raw', '--start', '1,2', '--count',
                                       '4,3', '--stride', '3,5'])
    want = a[1:1 + 3 * 4:3, 2:2 + 5 * 3:5].ravel()
    got = np.array([float(v) for v in parse_dump(out)])
    check(np.array_equal(got, want), "dump --start --count --stride")
    # get: a section into a new raw file, at NP ranks, tiny budget
    for sec in ['3:9:2,5:20:4', '16,:']:
        if os.path.exists(path('g.raw')):
            os.unlink(path('g.raw'))
        rc, _, _ = run(['get', '--budget', '16K'] + raw + ['d.raw', sec, '-o',
                                                          'g.raw'])
        want = a[np_slice(sec, a.shape)]
        if not rc:
            got = np.fromfile(path('g.raw'), dtype='<f8')
            check(np.array_equal(got, want.ravel()), f"get {sec!r}")
    # put: into a section of an existing file, in place (raw: SRC and DST
    # share --shape, so the whole array; strided sections with .npy below)
    src = nrng.standard_normal((17, 23))
    src.tofile(path('p.raw'))
    shutil.copy(path('d.raw'), path('e.raw'))
    rc, _, err = run(['put', '--budget', '16K'] + raw + ['p.raw', 'e.raw',
                                                        ':,:'])
    got = np.fromfile(path('e.raw'), dtype='<f8').reshape(17, 23)
    check(np.array_equal(got, src), "put ':,:' into a raw file")


# ------------------------------------------------------------ errors


def one_line_error(args, what):
    rc, out, err = run(args, expect=1)
    lines = [l for l in err.splitlines() if l.strip()]
    check(rc != 0 and len(lines) == 1 and lines[0].startswith('passion'),
          f"{what}: want exit != 0 and one line, got {rc} {err!r}")


def errors():
    raw = ['--shape', '17,23', '--type', 'f8']
    one_line_error(['dump'] + raw + ['d.raw', '1:2:0'], 'zero step')
    one_line_error(['dump'] + raw + ['d.raw', '1:2:-1'], 'negative step')
    one_line_error(['dump'] + raw + ['d.raw', '99'], 'index out of range')
    one_line_error(['dump'] + raw + ['d.raw', '1,2,3'], 'too many dims')
    one_line_error(['dump'] + raw + ['d.raw', 'a:b'], 'not a number')
    one_line_error(['dump'] + raw + ['nonexistent.raw'], 'missing file')
    one_line_error(['ls', 'missing.%d.laf'], 'missing local set')
    one_line_error(['ls', 'd.raw'], 'raw without --shape')
    one_line_error(['convert', '--dist', 'CYCLIC(x)'] + raw +
                   ['d.raw', 'z.%d.laf'], 'bad --dist')
    one_line_error(['convert', 'set.%d.laf', 'z2.%d.laf'],
                   'local set to local set')
    one_line_error(['get'] + raw + ['d.raw', '0:3', '-o', 'x.%d.laf'],
                   'get into a local set')
    one_line_error(['frobnicate'], 'unknown command')
    one_line_error(['dump', '--bogus', 'x'], 'unknown option')
    one_line_error(['convert', '--budget', 'lots'] + raw +
                   ['d.raw', 'q.raw'], 'bad budget')
    # a corrupt description
    open(path('bad.laf.passion'), 'w').write('passion-local-set 1\nfiles\n')
    one_line_error(['ls', 'bad.%d.laf'], 'corrupt description')
    for f in ['z.0.laf', 'q.raw', 'x.0.laf']:
        check(not os.path.exists(path(f)), f"a failed command left {f}")
    # --help of every command: exit 0, usage on stdout
    for c in ['ls', 'dump', 'get', 'put', 'convert', 'info']:
        rc, out, _ = run([c, '--help'], np_=1)
        check(rc == 0 and out.startswith('usage:'), f"{c} --help")
    rc, out, _ = run(['--version'], np_=1)
    check(rc == 0 and out.startswith('passion '), '--version')
    rc, out, _ = run(['info', '--budget', '3M'], np_=1)
    check('mpi ' in out and 'memory_budget  3145728' in out and
          'liburing' in out and 'hdf5' in out, f"info: {out!r}")
    rc, out, _ = run(['info', '--options', 'virtual_node_ranks=1'], np_=2)
    check(rc == 0 and 'nodes          2 ' in out and
          'virtual_node_ranks 1' in out, f"info nodes: {out!r}")


def main():
    os.makedirs(SCRATCH, exist_ok=True)
    for f in os.listdir(SCRATCH):
        p = path(f)
        if os.path.isfile(p):
            os.unlink(p)
    print(f"test_cli: np {NP}, seed {SEED}", flush=True)
    if PART == 'convert':
        round_trips()
    else:
        ls_dump_get_put()
        errors()
    print(f"test_cli: {checks} checks, {failures} failed", flush=True)
    sys.exit(1 if failures else 0)


main()
