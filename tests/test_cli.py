#!/usr/bin/python3
"""test_cli.py - the passion command's file tools against numpy.

usage: test_cli.py PASSION MPIEXEC SCRATCH NP convert|tools|formats
                   [--seed S]

At NP ranks: `convert` round trips global -> local set (BLOCK, BLOCK(m),
CYCLIC, CYCLIC(m), collapsed, ghosts, 1-D/2-D/3-D, C and Fortran order)
-> global, bit-exact, with arrays many times larger than the budget; every
local file compared with a numpy model of the distribution (HPF BLOCK(m)
and CYCLIC(m), ghosts zero); a set written at NP read back at another
rank count; `ls`, `dump`, `get`, `put` checked against numpy; error cases
(bad section, missing file, bad options, local set to local set) give one
line on stderr and a non-zero exit. `formats`: files written by numpy,
by the HDF5 library (h5import) and by ncgen (CDF-1, CDF-2, CDF-5) listed,
dumped, cut (get), written into (put) and converted (npy -> HDF5 ->
netCDF -> CYCLIC(5) local set -> npy, bit-exact) at NP, checked with
numpy, h5dump and ncdump; a chunked HDF5 dataset refused naming h5repack.
Prints the seed; randomised cases use
it (fixed by default).
"""
import os
import random
import re
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


def strip_launcher(err):
    """Drop Open MPI's mpiexec notices (blocks between lines of dashes:
    "Primary job terminated normally, but 1 process returned..."), which
    it adds to stderr when a rank exits non-zero; passion's own message
    is what the tests check."""
    keep, inside = [], False
    for line in err.splitlines(keepends=True):
        if re.fullmatch(r"-{20,}\n?", line):
            inside = not inside
            continue
        if not inside:
            keep.append(line)
    return "".join(keep)


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
    return p.returncode, p.stdout, strip_launcher(p.stderr)


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


# ------------------------------------------- files of other tools


NC_TYPES = {'byte': 'i1', 'ubyte': 'u1', 'short': '>i2', 'ushort': '>u2',
            'int': '>i4', 'uint': '>u4', 'int64': '>i8', 'uint64': '>u8',
            'float': '>f4', 'double': '>f8'}
H5_TYPES = {'H5T_IEEE_F64LE': '<f8', 'H5T_IEEE_F64BE': '>f8',
            'H5T_IEEE_F32LE': '<f4', 'H5T_IEEE_F32BE': '>f4',
            'H5T_STD_I32LE': '<i4', 'H5T_STD_I32BE': '>i4',
            'H5T_STD_I16LE': '<i2', 'H5T_STD_I16BE': '>i2',
            'H5T_STD_U8LE': '|u1', 'H5T_STD_I8LE': '|i1'}


def tool(args):
    """Run another tool (h5import, ncgen, h5dump...) in SCRATCH."""
    p = subprocess.run(args, cwd=SCRATCH, capture_output=True, text=True,
                       timeout=120)
    if not check(p.returncode == 0, f"{' '.join(args)}: exit "
                 f"{p.returncode}: {p.stderr[-500:]}"):
        return ''
    return p.stdout


def h5_import(out, items):
    """An HDF5 file written by the HDF5 library (h5import): items of
    (dataset path, array, output numpy dtype, chunk shape or None)."""
    args = ['h5import']
    for i, (dpath, a, odt, chunk) in enumerate(items):
        odt = np.dtype(odt)
        a.astype(a.dtype.newbyteorder('<')).tofile(path(f"h5in{i}.bin"))
        cls = 'FP' if a.dtype.kind == 'f' else 'IN'
        conf = [f"PATH {dpath}", f"INPUT-CLASS {cls}",
                f"INPUT-SIZE {a.dtype.itemsize * 8}", "INPUT-BYTE-ORDER LE",
                f"RANK {a.ndim}",
                "DIMENSION-SIZES " + ' '.join(map(str, a.shape)),
                f"OUTPUT-CLASS {'FP' if odt.kind == 'f' else 'IN'}",
                f"OUTPUT-SIZE {odt.itemsize * 8}",
                f"OUTPUT-ARCHITECTURE {'IEEE' if odt.kind == 'f' else 'STD'}",
                f"OUTPUT-BYTE-ORDER {'BE' if odt.byteorder == '>' else 'LE'}"]
        if chunk:
            conf.append("CHUNKED-DIMENSION-SIZES " + ' '.join(map(str, chunk)))
        open(path(f"h5in{i}.conf"), 'w').write('\n'.join(conf) + '\n')
        args += [f"h5in{i}.bin", '-c', f"h5in{i}.conf"]
    tool(args + ['-o', out])


def h5_read(fname, dpath, dtype, shape, sec=None):
    """The dataset (or a start/count/stride section of it) as h5dump
    writes it in binary, as numpy."""
    args = ['h5dump', '-d', dpath]
    if sec:
        st, cn, sd = sec
        args += ['-s', ','.join(map(str, st)), '-c', ','.join(map(str, cn)),
                 '-S', ','.join(map(str, sd))]
        shape = cn
    args += ['-b', 'NATIVE', '-o', 'h5out.bin']
    if os.path.exists(path('h5out.bin')):
        os.unlink(path('h5out.bin'))
    tool(args + [fname])
    if not os.path.exists(path('h5out.bin')):
        return None
    a = np.fromfile(path('h5out.bin'),
                    dtype=np.dtype(dtype).newbyteorder('='))
    return a.reshape(shape) if a.size == np.prod(shape) else None


def h5_header(fname, dpath):
    """(numpy type code, shape, layout) from h5dump -H -p."""
    out = tool(['h5dump', '-H', '-p', '-d', dpath, fname])
    dt = shape = layout = None
    for line in out.splitlines():
        w = line.split()
        if w and w[0] == 'DATATYPE':
            dt = H5_TYPES.get(w[1], w[1])
        if w and w[0] == 'DATASPACE':
            inner = line[line.index('(') + 1:line.index(')')]
            shape = tuple(int(x) for x in inner.split(','))
        if w and w[0] in ('CONTIGUOUS', 'CHUNKED', 'COMPACT'):
            layout = w[0]
    return dt, shape, layout


def nc_write(out, kind, dims, vars_):
    """A netCDF file written by ncgen: kind 'classic' (CDF-1),
    '64-bit-offset' (CDF-2) or 'cdf5'; vars_ of (name, CDL type, dim
    names, array)."""
    cdl = ['netcdf t {', 'dimensions:']
    cdl += [f"  {n} = {v} ;" for n, v in dims]
    cdl.append('variables:')
    cdl += [f"  {t} {n}({', '.join(d)}) ;" for n, t, d, _ in vars_]
    cdl.append('data:')
    for n, t, d, a in vars_:
        cdl.append(f"  {n} = " + ', '.join(repr(float(v)) if a.dtype.kind
                                           == 'f' else str(int(v))
                                           for v in a.ravel()) + ' ;')
    cdl.append('}')
    open(path('t.cdl'), 'w').write('\n'.join(cdl) + '\n')
    tool(['ncgen', '-k', kind, '-o', out, 't.cdl'])


def nc_read(fname, var, dtype, shape):
    """A variable's values as ncdump prints them (17 digits), as numpy."""
    out = tool(['ncdump', '-v', var, '-p', '9,17', fname])
    body = out.split('data:', 1)[-1]
    body = body[body.index(f" {var} =") + len(var) + 3:body.index(';')]
    vals = [v for v in body.replace(',', ' ').split()]
    kind = np.dtype(dtype).kind
    conv = float if kind == 'f' else int
    return np.array([conv(v) for v in vals],
                    dtype=np.dtype(dtype).newbyteorder('=')).reshape(shape)


def nc_header(fname, var):
    """(numpy type code, shape) of var from ncdump -h."""
    out = tool(['ncdump', '-h', fname])
    dims = {}
    part = ''
    for line in out.splitlines():
        t = line.strip().rstrip(';').strip()
        if t in ('dimensions:', 'variables:'):
            part = t
            continue
        if part == 'dimensions:' and '=' in t:
            n, v = t.split('=')
            v = v.strip()
            dims[n.strip()] = v
        if part == 'variables:' and '(' in t and t.split()[1].startswith(
                var + '('):
            typ = t.split()[0]
            dn = [d.strip() for d in t[t.index('(') + 1:t.index(')')]
                  .split(',')]
            return NC_TYPES.get(typ, typ), tuple(dims[d] for d in dn)
    return None, None


def nc_vars(fname):
    """The variables ncdump -h declares, in order."""
    out, part, names = tool(['ncdump', '-h', fname]), '', []
    for line in out.splitlines():
        t = line.strip().rstrip(';').strip()
        if t in ('dimensions:', 'variables:') or (line and line[0] not in
                                                   ' \t'):
            part = t
            continue
        if part == 'variables:' and t and ':' not in t:
            names.append(t.split()[1].split('(')[0])
    return names


def ls_blocks(out):
    """passion ls output: {name: {'shape': (..), 'type': '<f8', ...}}."""
    res = {}
    cur = None
    for line in out.splitlines():
        if line and not line.startswith(' '):
            cur = res.setdefault(line.split(': ')[0], {})
            cur['format'] = line.split(': ', 1)[1]
        elif cur is not None and line.strip():
            k, v = line.split(None, 1)
            if k == 'shape':
                cur['shape'] = tuple(int(x) for x in
                                     v.split('(')[0].split(' x '))
            elif k == 'type':
                cur['type'] = v[v.index('(') + 1:v.index(')')]
            else:
                cur[k] = v.strip()
    return res


def dump_values(out, dtype):
    kind = np.dtype(dtype).kind
    conv = float if kind == 'f' else int
    return np.array([conv(v) for v in parse_dump(out)])


def sect_model(a, st, cn, sd):
    return a[tuple(slice(s, s + (c - 1) * d + 1, d)
                   for s, c, d in zip(st, cn, sd))]


def formats():
    """ls/dump/get/put/convert on files numpy, the HDF5 library
    (h5import) and the netCDF tools (ncgen) wrote, compared with numpy,
    h5dump and ncdump; the round trip npy -> HDF5 -> netCDF -> CYCLIC(m)
    local set -> npy bit-exact at NP; chunked HDF5 refused naming
    h5repack."""
    A = nrng.standard_normal((61, 37))
    I = nrng.integers(-2**31, 2**31 - 1, (61, 37), dtype=np.int64) \
        .astype(np.int32)
    S = nrng.integers(-2**15, 2**15 - 1, 37).astype(np.int16)
    W = nrng.integers(0, 2**63, 37, dtype=np.uint64) * 2 + 1
    np.save(path('a.npy'), A)
    np.save(path('bf.npy'), np.asfortranarray(I.astype('>i4')))
    h5_import('r.h5', [('/fields/u', A, '<f8', None),
                       ('/fields/k', I, '>i4', None),
                       ('/c', A, '<f8', (10, 37)),
                       ('/deep/er/s', S, '<i2', None)])
    dims = [('y', 61), ('x', 37)]
    nc_write('t1.nc', 'classic', dims,
             [('u', 'double', ['y', 'x'], A), ('s', 'short', ['x'], S)])
    nc_write('t2.nc', '64-bit-offset', dims,
             [('k', 'int', ['y', 'x'], I), ('u', 'double', ['y', 'x'], A)])
    nc_write('t5.nc', 'cdf5', dims,
             [('w', 'uint64', ['x'], W), ('u', 'double', ['y', 'x'], A)])

    # ls: what the files' own tools say
    names = ['a.npy', 'bf.npy', 'r.h5:/fields/u', 'r.h5:/fields/k',
             't1.nc:u', 't1.nc:s', 't2.nc:k', 't5.nc:w']
    rc, out, _ = run(['ls'] + names)
    got = ls_blocks(out)
    for n in names:
        f, _, obj = n.partition(':')
        if f.endswith('.npy'):
            a = np.load(path(f), mmap_mode='r')
            want = (a.dtype.str.replace('=', '<'), a.shape)
            want_order = 'column-major' if a.flags.f_contiguous and \
                a.ndim > 1 else 'row-major'
        elif f.endswith('.h5'):
            dt, shape, layout = h5_header(f, obj)
            want, want_order = (dt, shape), 'row-major'
            check(layout == 'CONTIGUOUS', f"h5import made {n} {layout}")
        else:
            dt, shape = nc_header(f, obj)
            want = (dt, tuple(int(x) for x in shape))
            want_order = 'row-major'
        g = got.get(n, {})
        check((g.get('type'), g.get('shape')) == want and
              g.get('storage', '').startswith(want_order),
              f"ls {n}: {g}, want {want} {want_order}")

    # dump: whole arrays and strided sections, against numpy, h5dump, ncdump
    rc, out, _ = run(['dump', '--budget', '4K', 'bf.npy'], np_=1)
    check(np.array_equal(dump_values(out, 'i4'), I.ravel()), "dump bf.npy")
    rc, out, _ = run(['dump', 'r.h5:/fields/k', '::7,3:'])
    want = h5_read('r.h5', '/fields/k', '>i4', (61, 37))
    check(want is not None and np.array_equal(want, I), "h5dump of /fields/k")
    check(want is not None and np.array_equal(
        dump_values(out, 'i4'), want[::7, 3:].ravel()),
        "dump r.h5:/fields/k '::7,3:' against h5dump")
    st, cn, sd = (2, 1), (9, 6), (6, 5)
    rc, out, _ = run(['dump', 'r.h5:/fields/u', '--start', '2,1', '--count',
                      '9,6', '--stride', '6,5'], np_=1)
    want = h5_read('r.h5', '/fields/u', '<f8', None, (st, cn, sd))
    check(want is not None and np.array_equal(dump_values(out, 'f8'),
                                              want.ravel()),
          "dump --start --count --stride against h5dump -s -c -S")
    for f, v, dt, shape in [('t1.nc', 's', '>i2', (37,)),
                            ('t2.nc', 'k', '>i4', (61, 37)),
                            ('t5.nc', 'w', '>u8', (37,))]:
        rc, out, _ = run(['dump', f"{f}:{v}"], np_=1)
        want = nc_read(f, v, dt, shape)
        check(np.array_equal(dump_values(out, dt), want.ravel()) and
              np.array_equal(want.ravel(), {'s': S, 'k': I, 'w': W}[v]
                             .ravel()), f"dump {f}:{v} against ncdump")

    # get: sections into new files of each format
    for f in ['g.npy', 'g.nc', 'g.h5']:
        if os.path.exists(path(f)):
            os.unlink(path(f))
    run(['get', '--budget', '4K', 't5.nc:u', '3:50:4,::3', '-o', 'g.npy'])
    if os.path.exists(path('g.npy')):
        g = np.load(path('g.npy'))
        check(np.array_equal(g, nc_read('t5.nc', 'u', '>f8', (61, 37))
                             [3:50:4, ::3]), "get t5.nc:u -> g.npy")
    run(['get', '--budget', '4K', 'r.h5:/fields/k', '-5:,1:30:2', '-o',
         'g.nc:k'])
    dt, shape = nc_header('g.nc', 'k')
    check(dt == '>i4' and shape == ('5', '15'), f"get -> g.nc: {dt} {shape}")
    if dt:
        check(np.array_equal(nc_read('g.nc', 'k', dt, (5, 15)),
                             I[-5:, 1:30:2]), "get r.h5 -> g.nc:k (ncdump)")
    run(['get', 'bf.npy', '10:20,::4', '-o', 'g.h5:/x/y'])
    dt, shape, layout = h5_header('g.h5', '/x/y')
    check(shape == (10, 10) and dt == '>i4' and layout == 'CONTIGUOUS',
          f"get -> g.h5:/x/y: {dt} {shape} {layout}")
    if shape:
        check(np.array_equal(h5_read('g.h5', '/x/y', dt, shape),
                             I[10:20, ::4]), "get bf.npy -> g.h5 (h5dump)")

    # put: a .npy into a strided section of an HDF5 dataset and of a
    # netCDF variable, in place
    Pn = nrng.standard_normal((14, 7))
    np.save(path('p.npy'), Pn)
    shutil.copy(path('r.h5'), path('w.h5'))
    shutil.copy(path('t1.nc'), path('w.nc'))
    run(['put', '--budget', '4K', 'p.npy', 'w.h5:/fields/u', '1:41:3,2::5'])
    run(['put', 'p.npy', 'w.nc:u', '-14:,::6'])
    m = A.copy()
    m[1:41:3, 2::5] = Pn
    check(np.array_equal(h5_read('w.h5', '/fields/u', '<f8', (61, 37)), m),
          "put p.npy into w.h5:/fields/u (h5dump)")
    check(np.array_equal(h5_read('w.h5', '/fields/k', '>i4', (61, 37)), I),
          "put changed another dataset")
    m = A.copy()
    m[-14:, ::6] = Pn
    check(np.array_equal(nc_read('w.nc', 'u', '>f8', (61, 37)), m),
          "put p.npy into w.nc:u (ncdump)")
    check(np.array_equal(nc_read('w.nc', 's', '>i2', (37,)), S),
          "put changed another variable")

    # convert: npy -> HDF5 -> netCDF -> CYCLIC(5) local set -> npy,
    # arrays larger than the budget, each step checked by the format's tool
    for f in os.listdir(SCRATCH):
        if f.startswith('ch.') or f.startswith('ch2'):
            os.unlink(path(f))
    budget = '4K'
    run(['convert', '--budget', budget, 'a.npy', 'ch.h5:/g/u'])
    check(np.array_equal(h5_read('ch.h5', '/g/u', '<f8', (61, 37)), A),
          f"convert a.npy -> ch.h5 at np {NP} (h5dump)")
    run(['convert', '--budget', budget, 'ch.h5:/g/u', 'ch.nc:u'])
    check(np.array_equal(nc_read('ch.nc', 'u', '>f8', (61, 37)), A),
          f"convert ch.h5 -> ch.nc at np {NP} (ncdump)")
    run(['convert', '--budget', budget, 'ch.nc:u', 'ch.%d.laf', '--dist',
         'CYCLIC(5),*'])
    for q in range(NP):
        want = expected_local(A, ['C', '*'], [5, 0], [NP, 1], [0, 0], q,
                              'C')
        f = path(f"ch.{q}.laf")
        check(os.path.exists(f) and open(f, 'rb').read() == want,
              f"convert ch.nc -> CYCLIC(5) set: file {q} differs")
    run(['convert', '--budget', budget, 'ch.%d.laf', 'ch2.npy'])
    if os.path.exists(path('ch2.npy')):
        b = np.load(path('ch2.npy'))
        check(b.dtype == A.dtype and np.array_equal(b, A),
              f"npy -> h5 -> nc -> local -> npy at np {NP} not bit-exact")
    # big-endian Fortran-order ints: -> netCDF -> npy
    run(['convert', '--budget', budget, 'bf.npy', 'ch.nc:k'])
    check(np.array_equal(nc_read('ch.nc', 'k', '>i4', (61, 37)), I),
          f"convert bf.npy (>i4, Fortran) -> ch.nc:k (ncdump)")
    run(['convert', '--budget', budget, 'ch.nc:k', 'ch2k.npy'])
    if os.path.exists(path('ch2k.npy')):
        b = np.load(path('ch2k.npy'))
        check(np.array_equal(b, I), "bf.npy -> nc -> npy values")

    # --order F into HDF5: the transpose, dimensions reversed (as Fortran
    # writes HDF5)
    run(['convert', 'bf.npy', 'cht.h5:/t', '--order', 'F'])
    check(np.array_equal(h5_read('cht.h5', '/t', '>i4', (37, 61)), I.T),
          "convert --order F -> HDF5 is not the transpose")

    # chunked HDF5: refused with a one-line message naming the layout and
    # h5repack, nothing created; after h5repack -l CONTI it reads
    for args in (['ls', 'r.h5:/c'], ['convert', 'r.h5:/c', 'chk.npy']):
        rc, out, err = run(args, expect=1)
        lines = [l for l in err.splitlines() if l.strip()]
        check(rc != 0 and len(lines) == 1 and 'chunked' in err and
              'h5repack' in err, f"{args}: {rc} {err!r}")
    check(not os.path.exists(path('chk.npy')), "chunked convert left a file")
    tool(['h5repack', '-l', '/c:CONTI', 'r.h5', 'rc.h5'])
    rc, out, _ = run(['dump', 'rc.h5:/c', '-1,::9'], np_=1)
    check(rc == 0 and np.array_equal(dump_values(out, 'f8'), A[-1, ::9]),
          "dump rc.h5:/c after h5repack -l CONTI")
    # ls FILE without a name: every dataset / variable, as h5ls -r and
    # ncdump -h list them (name, shape; type from h5dump -H / ncdump -h)
    rc, out, _ = run(['ls', 'r.h5', 't1.nc', 't5.nc'])
    got = ls_blocks(out)
    want = {}
    for line in tool(['h5ls', '-r', 'r.h5']).splitlines():
        w = line.split(None, 1)
        if len(w) == 2 and w[1].startswith('Dataset {'):
            dt, shape, layout = h5_header('r.h5', w[0])
            want['r.h5:' + w[0]] = (dt, shape, layout.lower())
    check(len(want) == 4, f"h5ls -r r.h5: {want}")
    for f in ['t1.nc', 't5.nc']:
        for v in nc_vars(f):
            dt, shape = nc_header(f, v)
            want[f"{f}:{v}"] = (dt, tuple(int(x) for x in shape),
                                'contiguous')
    listed = {k: v for k, v in got.items() if ':' in k}
    check(rc == 0 and set(listed) == set(want),
          f"ls r.h5 t1.nc t5.nc lists {sorted(listed)}, the tools "
          f"{sorted(want)}")
    for n, (dt, shape, layout) in want.items():
        g = got.get(n, {})
        check((g.get('type'), g.get('shape'), g.get('layout')) ==
              (dt, shape, layout), f"ls: {n}: {g}, want {dt} {shape} "
              f"{layout}")
    check('h5repack' in got.get('r.h5:/c', {}).get('refused', ''),
          f"ls r.h5: /c (chunked) without its reason: {got.get('r.h5:/c')}")
    check(got.get('r.h5', {}).get('format') == 'HDF5, 4 datasets' and
          got.get('t1.nc', {}).get('format') == 'netCDF, 2 variables',
          f"ls heads: {got.get('r.h5')} {got.get('t1.nc')}")
    rc, out, _ = run(['ls', 'r.h5:/deep'])
    check(set(k for k in ls_blocks(out) if ':' in k) == {'r.h5:/deep/er/s'},
          f"ls r.h5:/deep (a group): {out!r}")
    if NP == 1:
        one_line_error(['ls', 'r.h5:/nothing'], 'no such HDF5 object')
        one_line_error(['dump', 't1.nc:nosuch'], 'no such variable')
        one_line_error(['put', 'a.npy', 'w.h5:/fields/u', '0:3'],
                       'put shape mismatch')


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
    elif PART == 'formats':
        formats()
    else:
        ls_dump_get_put()
        errors()
    print(f"test_cli: {checks} checks, {failures} failed", flush=True)
    sys.exit(1 if failures else 0)


main()
