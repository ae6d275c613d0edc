#!/usr/bin/python3
"""test_cli.py - the passion command's file tools against numpy.

usage: test_cli.py PASSION MPIEXEC SCRATCH NP convert|tools|formats|casts
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
numpy, h5dump and ncdump; a chunked HDF5 dataset listed and converted.
Refusals (`tools` for npy, raw and local sets, `formats` for HDF5 and
netCDF): writing onto an input (the same file by any name, hard link or
symlink), an existing output without --force, an unsafe cast without
--casting=unsafe: each exits non-zero with one line and leaves every file
in SCRATCH byte-identical (hashed before and after). `casts`: `put`'s
casts over every pair of 16 numpy types against np.can_cast(..., 'safe')
and numpy's astype (one job per pair, at one rank). `tools` also runs
`passion wisdom` (show, merge, clear and their refusals) on wisdom files
written by hand. Prints the seed;
randomised cases use it (fixed by default).
"""
import hashlib
import os
import random
import re
import shutil
import subprocess
import sys
import warnings

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


def run(args, np_=None, expect=0, options=None):
    """Run passion under mpiexec with np_ ranks (options: PASSION_OPTIONS);
    returns (rc, out, err)."""
    n = NP if np_ is None else np_
    cmd = [MPIEXEC, '-n', str(n), PASSION] + args
    env = dict(os.environ, HYDRA_LAUNCHER='fork')
    if options is not None:
        env['PASSION_OPTIONS'] = options
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
        if os.path.exists(path('back.raw')):
            os.unlink(path('back.raw'))
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
        cls = {'f': 'FP', 'u': 'UIN'}.get(a.dtype.kind, 'IN')
        conf = [f"PATH {dpath}", f"INPUT-CLASS {cls}",
                f"INPUT-SIZE {a.dtype.itemsize * 8}", "INPUT-BYTE-ORDER LE",
                f"RANK {a.ndim}",
                "DIMENSION-SIZES " + ' '.join(map(str, a.shape)),
                f"OUTPUT-CLASS {({'f': 'FP', 'u': 'UIN'}).get(odt.kind, 'IN')}",
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


# netCDF's default fill values, which ncdump prints as "_"
NC_FILL = {'i1': -127, 'u1': 255, 'i2': -32767, 'u2': 65535,
           'i4': -2147483647, 'u4': 4294967295, 'i8': -9223372036854775806,
           'u8': 18446744073709551614, 'f4': 9.96920996838686905e+36,
           'f8': 9.96920996838686905e+36}


def nc_read(fname, var, dtype, shape):
    """A variable's values as ncdump prints them (17 digits), as numpy."""
    out = tool(['ncdump', '-v', var, '-p', '9,17', fname])
    body = out.split('data:', 1)[-1]
    if f" {var} =" not in body:
        return None
    body = body[body.index(f" {var} =") + len(var) + 3:body.index(';')]
    vals = [v for v in body.replace(',', ' ').split()]
    kind = np.dtype(dtype).kind
    conv = float if kind == 'f' else int
    fillv = NC_FILL.get(np.dtype(dtype).str[1:])
    vals = [fillv if v == '_' else v.rstrip('f') if kind == 'f' else v
            for v in vals]
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
    local set -> npy bit-exact at NP; chunked HDF5 listed and
    converted."""
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
    # the build that opened the HDF5 datasets says it has HDF5
    _, info, _ = run(['info'], np_=1)
    hl = [ln for ln in info.splitlines() if ln.startswith('hdf5 ')]
    check(rc == 0 and len(hl) == 1 and 'not built in' not in hl[0] and
          re.search(r'\d+\.\d+', hl[0]), f"info's hdf5 line: {hl}")
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
    # big-endian Fortran-order ints: -> netCDF -> npy (ch.nc exists:
    # --force replaces the whole file)
    run(['convert', '--force', '--budget', budget, 'bf.npy', 'ch.nc:k'])
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

    # chunked HDF5 (h5import's chunks): listed as chunked, converted
    # (tests/test_h5chunk.py covers every chunk index and filter); after
    # h5repack -l CONTI the same values at their offset
    rc, out, _ = run(['ls', 'r.h5:/c'])
    check(rc == 0 and re.search(r'layout\s+chunked', out),
          f"ls r.h5:/c: {rc} {out!r}")
    rc, out, err = run(['convert', 'r.h5:/c', 'chk.npy'])
    check(rc == 0 and os.path.exists(path('chk.npy')) and
          np.array_equal(np.load(path('chk.npy')), A),
          f"convert r.h5:/c (chunked): {rc} {err!r}")
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
    check(not got.get('r.h5:/c', {}).get('refused'),
          f"ls r.h5: /c (chunked) refused: {got.get('r.h5:/c')}")
    check(got.get('r.h5', {}).get('format') == 'HDF5, 4 datasets' and
          got.get('t1.nc', {}).get('format') == 'netCDF, 2 variables',
          f"ls heads: {got.get('r.h5')} {got.get('t1.nc')}")
    rc, out, _ = run(['ls', 'r.h5:/deep'])
    check(set(k for k in ls_blocks(out) if ':' in k) == {'r.h5:/deep/er/s'},
          f"ls r.h5:/deep (a group): {out!r}")
    format_refusals(A, I)
    format_records()
    format_casts()
    format_drivers(A, I)
    if NP == 1:
        one_line_error(['ls', 'r.h5:/nothing'], 'no such HDF5 object')
        one_line_error(['dump', 't1.nc:nosuch'], 'no such variable')
        one_line_error(['put', 'a.npy', 'w.h5:/fields/u', '0:3'],
                       'put shape mismatch')


def format_records():
    """Record variables, several per file (their records interleave):
    ls, dump, get, put (in place) and convert at NP against ncdump."""
    R = nrng.standard_normal((5, 7))
    K = nrng.integers(-2**15, 2**15 - 1, 5).astype(np.int16)
    Z = nrng.integers(-2**31, 2**31 - 1, 7).astype(np.int32)
    Pn = nrng.standard_normal((2, 4))
    for kind in ('classic', 'cdf5'):
        f = f"rec-{kind}.nc"
        nc_write(f, kind, [('time', 'UNLIMITED'), ('x', 7)],
                 [('a', 'double', ['time', 'x'], R),
                  ('z', 'int', ['x'], Z), ('k', 'short', ['time'], K)])
        rc, out, _ = run(['ls', f])
        g = ls_blocks(out)
        check(rc == 0 and g.get(f"{f}:a", {}).get('shape') == (5, 7) and
              g.get(f"{f}:a", {}).get('layout') == 'record' and
              g.get(f"{f}:k", {}).get('shape') == (5,) and
              g.get(f"{f}:z", {}).get('layout') == 'contiguous',
              f"ls {f}: {out!r}")
        rc, out, _ = run(['dump', '--budget', '64', f"{f}:a", '1::2,::3'])
        check(rc == 0 and np.array_equal(dump_values(out, 'f8'),
                                         R[1::2, ::3].ravel()),
              f"dump {f}:a '1::2,::3'")
        rc, out, _ = run(['dump', f"{f}:k"], np_=1)
        check(rc == 0 and np.array_equal(dump_values(out, 'i2'), K),
              f"dump {f}:k")
        fresh('rec.npy', 'reck.npy')
        run(['get', '--budget', '4K', f"{f}:a", '::2,1:', '-o', 'rec.npy'])
        check(os.path.exists(path('rec.npy')) and np.array_equal(
            np.load(path('rec.npy')), R[::2, 1:]), f"get {f}:a -> rec.npy")
        run(['convert', f"{f}:k", 'reck.npy'])
        check(os.path.exists(path('reck.npy')) and np.array_equal(
            np.load(path('reck.npy')), K), f"convert {f}:k -> reck.npy")
        np.save(path('recp.npy'), Pn)
        run(['put', '--budget', '4K', 'recp.npy', f"{f}:a", '-2:,::2'])
        m = R.copy()
        m[-2:, ::2] = Pn
        check(np.array_equal(nc_read(f, 'a', '>f8', (5, 7)), m),
              f"put recp.npy into {f}:a '-2:,::2' (ncdump)")
        check(np.array_equal(nc_read(f, 'k', '>i2', (5,)), K) and
              np.array_equal(nc_read(f, 'z', '>i4', (7,)), Z),
              f"put into {f}:a changed another variable")


def ref_h5(fname, dpath):
    """A dataset as h5py reads it (h5dump's binary output without h5py)."""
    try:
        import h5py
    except ImportError:
        dt, shape, _ = h5_header(fname, dpath)
        return h5_read(fname, dpath, dt, shape) if shape else None
    with h5py.File(path(fname), 'r') as f:
        return f[dpath][...]


def ref_nc(fname, var):
    """A variable as netCDF4-python reads it (ncdump's text without it)."""
    try:
        import netCDF4
    except ImportError:
        dt, shape = nc_header(fname, var)
        return nc_read(fname, var, dt, tuple(int(x) for x in shape)) \
            if shape else None
    with netCDF4.Dataset(path(fname)) as f:
        f.set_auto_maskandscale(False)
        return np.array(f.variables[var][...])


def format_drivers(A, I):
    """Every format through every production driver (posix, mpiio):
    dump, get into each format and put into an HDF5 dataset and a netCDF
    variable, with the driver given by PASSION_OPTIONS, against numpy,
    h5py and netCDF4-python; names with a colon in the file's own name
    too (ROMIO would read 'co:lon.npy' as file system 'co')."""
    shutil.copy(path('r.h5'), path('co:lon.h5'))
    np.save(path('co:lon.npy'), A)
    Pn = nrng.standard_normal((14, 7))
    np.save(path('dp.npy'), Pn)
    for drv in ('posix', 'mpiio'):
        o = f"driver={drv}"
        for name, sec, want in [
                ('a.npy', '3:50:4,::3', A[3:50:4, ::3]),
                ('co:lon.npy', '-9:,1::6', A[-9:, 1::6]),
                ('r.h5:/fields/k', '::7,3:', ref_h5('r.h5', '/fields/k')),
                ('co:lon.h5:/fields/u', '5:9,::4',
                 ref_h5('co:lon.h5', '/fields/u')),
                ('t1.nc:u', '1::5,2:30:3', ref_nc('t1.nc', 'u')),
                ('t2.nc:k', '::9,:', ref_nc('t2.nc', 'k')),
                ('t5.nc:w', '2::3', ref_nc('t5.nc', 'w'))]:
            rc, out, err = run(['dump', name, sec], options=o)
            if name.endswith('.npy'):
                ref = want
            elif want is None:
                check(False, f"no reference for {name}")
                continue
            else:
                ref = want[np_slice(sec, want.shape)]
            kind = 'f8' if ref.dtype.kind == 'f' else 'i8'
            check(rc == 0 and np.array_equal(dump_values(out, kind),
                                              ref.ravel()),
                  f"{o}: dump {name} {sec} against numpy/h5py/netCDF4: "
                  f"{err.strip()}")
        for f in [f"dg.{drv}.npy", f"dg.{drv}.h5", f"dg.{drv}.nc"]:
            if os.path.exists(path(f)):
                os.unlink(path(f))
        run(['get', '--budget', '4K', 't1.nc:u', '3:50:4,::3', '-o',
             f"dg.{drv}.h5:/g/u"], options=o)
        got = ref_h5(f"dg.{drv}.h5", '/g/u') if os.path.exists(
            path(f"dg.{drv}.h5")) else None
        check(got is not None and np.array_equal(got, A[3:50:4, ::3]),
              f"{o}: get t1.nc:u -> dg.{drv}.h5:/g/u (h5py)")
        run(['get', '--budget', '4K', 'r.h5:/fields/k', '-5:,1:30:2', '-o',
             f"dg.{drv}.nc:k"], options=o)
        got = ref_nc(f"dg.{drv}.nc", 'k') if os.path.exists(
            path(f"dg.{drv}.nc")) else None
        check(got is not None and np.array_equal(got, I[-5:, 1:30:2]),
              f"{o}: get r.h5:/fields/k -> dg.{drv}.nc:k (netCDF4)")
        run(['get', 'co:lon.h5:/fields/u', '::2,::5', '-o',
             f"dg.{drv}.npy"], options=o)
        got = np.load(path(f"dg.{drv}.npy")) if os.path.exists(
            path(f"dg.{drv}.npy")) else None
        check(got is not None and np.array_equal(got, A[::2, ::5]),
              f"{o}: get co:lon.h5:/fields/u -> dg.{drv}.npy (numpy)")
        shutil.copy(path('r.h5'), path(f"dw.{drv}.h5"))
        shutil.copy(path('t1.nc'), path(f"dw.{drv}.nc"))
        run(['put', '--budget', '4K', 'dp.npy', f"dw.{drv}.h5:/fields/u",
             '1:41:3,2::5'], options=o)
        run(['put', 'dp.npy', f"dw.{drv}.nc:u", '-14:,::6'], options=o)
        m = A.copy()
        m[1:41:3, 2::5] = Pn
        got = ref_h5(f"dw.{drv}.h5", '/fields/u')
        check(got is not None and np.array_equal(got, m),
              f"{o}: put dp.npy into dw.{drv}.h5:/fields/u (h5py)")
        m = A.copy()
        m[-14:, ::6] = Pn
        got = ref_nc(f"dw.{drv}.nc", 'u')
        check(got is not None and np.array_equal(got, m),
              f"{o}: put dp.npy into dw.{drv}.nc:u (netCDF4)")


# ------------------------------------- refusing rather than corrupting


def snapshot():
    """Every file and directory under SCRATCH: a file's hash, a symlink's
    target."""
    out = {}
    for d, dirs, files in os.walk(SCRATCH):
        for f in dirs + files:
            p = os.path.join(d, f)
            rel = os.path.relpath(p, SCRATCH)
            if os.path.islink(p):
                out[rel] = ('link', os.readlink(p))
            elif os.path.isfile(p):
                with open(p, 'rb') as fh:
                    out[rel] = hashlib.sha256(fh.read()).hexdigest()
            else:
                out[rel] = 'dir' if f in dirs else 'other'
    return out


def refused(args, what, want=(), np_=None, rc_want=None):
    """args exits non-zero (rc_want, when given) with one line on stderr
    (holding every string of want) and leaves every file in SCRATCH as it
    was."""
    before = snapshot()
    rc, out, err = run(args, np_=np_, expect=1)
    lines = [l for l in err.splitlines() if l.strip()]
    check(rc != 0 and len(lines) == 1 and lines[0].startswith('passion'),
          f"{what}: want exit != 0 and one line, got {rc} {err!r}")
    check(rc_want is None or rc == rc_want,
          f"{what}: exit {rc}, want {rc_want}")
    for w in want:
        check(w in err, f"{what}: {w!r} not in {err!r}")
    after = snapshot()
    changed = sorted(k for k in set(before) | set(after)
                     if before.get(k) != after.get(k))
    check(not changed, f"{what}: refused, yet changed {changed}")
    return err


def fresh(*names):
    for n in names:
        if os.path.lexists(path(n)):
            os.unlink(path(n))


def refusals():
    """get, put and convert never write onto one of their inputs (the same
    file by hard link, symlink or another spelling), --force or not; get
    and convert never replace an existing output without --force; every
    refusal changes no file; with --force the output is complete and
    right. npy, raw and local sets (HDF5 and netCDF: format_refusals)."""
    K = nrng.integers(-10**6, 10**6, 1000).astype('<i8')
    np.save(path('keep.npy'), K)
    fresh('hard.npy', 'soft.npy', 'other.npy', 'dangling.npy', 'k.raw',
          'k2.raw', 'ks.laf.passion', '.passion-tmp-t.npy', 't.npy')
    os.link(path('keep.npy'), path('hard.npy'))
    os.symlink('keep.npy', path('soft.npy'))
    os.makedirs(path('sub'), exist_ok=True)
    same = ['keep.npy', './keep.npy', 'sub/../keep.npy', path('keep.npy'),
            'hard.npy', 'soft.npy']
    for o in same:
        for force in ([], ['--force']):
            refused(['get', 'keep.npy', '0:3', '-o', o] + force,
                    f"get keep.npy -o {o} {force}", ['same file'])
        refused(['convert', '--force', 'keep.npy', o],
                f"convert keep.npy {o}", ['same file'])
        refused(['put', 'keep.npy', o, '::'], f"put keep.npy {o}",
                ['same file'])
    # an input under the name of an output's temporary
    shutil.copy(path('keep.npy'), path('.passion-tmp-t.npy'))
    refused(['get', '.passion-tmp-t.npy', '0:3', '-o', 't.npy'],
            "get onto its input as the temporary", ['same file'])
    # an existing output (a dangling symlink too) without --force
    np.save(path('other.npy'), K[:5])
    os.symlink('nowhere.npy', path('dangling.npy'))
    for o in ['other.npy', './other.npy', 'dangling.npy']:
        refused(['get', 'keep.npy', '0:3', '-o', o], f"get -o {o} exists",
                ['exists', '--force'])
        refused(['convert', 'keep.npy', o], f"convert into {o}, exists",
                ['exists', '--force'])
    # --force replaces it, complete and right
    rc, _, _ = run(['get', '--force', '--budget', '4K', 'keep.npy',
                    '10:900:3', '-o', 'other.npy'])
    check(rc == 0 and np.array_equal(np.load(path('other.npy')),
                                     K[10:900:3]), "get --force over a file")
    rc, _, _ = run(['convert', '--force', '--budget', '4K', 'keep.npy',
                    'dangling.npy'])
    check(rc == 0 and not os.path.islink(path('dangling.npy')) and
          np.array_equal(np.load(path('dangling.npy')), K),
          "convert --force over a dangling symlink")
    # raw
    raw = ['--shape', '1000', '--type', '<i8']
    K.tofile(path('k.raw'))
    os.link(path('k.raw'), path('k2.raw'))
    refused(['get', '--force'] + raw + ['k.raw', '0:3', '-o', 'k2.raw'],
            "get raw onto its hard link", ['same file'])
    refused(['convert', '--force'] + raw + ['k.raw', './k2.raw'],
            "convert raw onto its hard link", ['same file'])
    # local sets: every file of the set and its description count
    for f in os.listdir(SCRATCH):
        if f.startswith('ks.'):
            os.unlink(path(f))
    rc, _, _ = run(['convert', '--budget', '4K', 'keep.npy', 'ks.%d.laf'])
    check(rc == 0 and os.path.exists(path('ks.laf.passion')),
          "convert keep.npy -> ks.%d.laf")
    refused(['convert', 'keep.npy', 'ks.%d.laf'], "convert into an "
            "existing set", ['exists', '--force'])
    os.rename(path('ks.laf.passion'), path('ks.saved'))
    refused(['convert', 'keep.npy', 'ks.%d.laf'], "convert into a set's "
            "files (no description)", ['exists', '--force'])
    os.rename(path('ks.saved'), path('ks.laf.passion'))
    refused(['convert', '--force', 'ks.%d.laf', f"ks.{NP - 1}.laf"],
            "convert a set onto its last file", ['same file'])
    refused(['convert', '--force', 'ks.laf.passion', './ks.0.laf'],
            "convert a set (by its description) onto its file", ['same file'])
    n0 = local_count(1000, 'B', -(-1000 // NP), NP, 0)
    refused(['convert', '--force', '--shape', str(n0), '--type', '<i8',
             'ks.0.laf', 'ks.%d.laf'], "convert a set's file into the set",
            ['same file'])
    rc, _, _ = run(['convert', '--force', '--budget', '4K', '--dist',
                    'CYCLIC(7)', 'keep.npy', 'ks.%d.laf'])
    for q in range(NP):
        f = path(f"ks.{q}.laf")
        check(rc == 0 and os.path.exists(f) and open(f, 'rb').read() ==
              expected_local(K, ['C'], [7], [NP], [0], q, 'C'),
              f"convert --force into the set: file {q}")
    rc, out, _ = run(['ls', 'ks.%d.laf'])
    check(rc == 0 and 'CYCLIC(7)' in out, f"ls ks.%d.laf: {out!r}")
    check(np.array_equal(np.load(path('keep.npy')), K) and
          open(path('k.raw'), 'rb').read() == K.tobytes(),
          "an input changed")


# ------------------------------------------------- the planner's wisdom

WISDOM_HEAD = '# passion wisdom 1\n'


def wisdom():
    """passion wisdom: show of records made by hand (every field, every
    algorithm by its option name), merge (a later input wins a shared
    signature; OUT named among the inputs keeps its records), clear; the
    refusals (a malformed input, naming it and its line; an existing OUT
    without --force; clear of a file that is not wisdom) exit 1 with one
    line and change no file."""
    for f in os.listdir(SCRATCH):
        if f.startswith('w_'):
            os.unlink(path(f))

    def put_text(name, text):
        with open(path(name), 'w') as fh:
            fh.write(text)

    def show(name):
        rc, out, err = run(['wisdom', 'show', name])
        check(rc == 0, f"wisdom show {name}: exit {rc} {err!r}")
        return out.splitlines()

    put_text('w_a', WISDOM_HEAD +
             'exchange 2 1 2 1 12 11 127 0 3 0 7.2e-06\n'
             '# a comment, then a blank line\n\n'
             'exchange 4 2 2 0 10 9 63 0 4 3 -1\n'
             'exchange 3 1 3 1 5 4 1 0 1 0 0.000125\n')
    a_lines = [
        'exchange  P=2 nodes=1 node_max=2 regular lmax<=2^12 mmax<=2^11 '
        'fit=0x7f -> a1 (7.2e-06 s measured)',
        'exchange  P=4 nodes=2 node_max=2 irregular lmax<=2^10 mmax<=2^9 '
        'fit=0x3f -> index radix=3 (not measured)',
        'exchange  P=3 nodes=1 node_max=3 regular lmax<=2^5 mmax<=2^4 '
        'fit=0x1 -> mpi (0.000125 s measured)']
    got = show('w_a')
    check(got == a_lines + ['3 records'], f"wisdom show w_a: {got!r}")
    # every algorithm by its option name
    names = ['auto', 'mpi', 'pairwise', 'a1', 'index', 'fourstage',
             'fourstage-nb', 'twolevel']
    put_text('w_all', WISDOM_HEAD + ''.join(
        f'exchange {k + 2} 1 {k + 2} 1 3 3 1 0 {k} 0 1e-3\n'
        for k in range(len(names))))
    got = show('w_all')
    check([l.split(' -> ')[-1] for l in got[:-1]] ==
          [f'{n} (0.001 s measured)' for n in names] and
          got[-1] == f'{len(names)} records', f"methods: {got!r}")
    # merge: the later input wins the shared signature (P=2), in place
    put_text('w_b', WISDOM_HEAD +
             'exchange 2 1 2 1 12 11 127 0 5 0 1e-06\n'
             'exchange 8 1 8 1 3 3 127 0 2 0 2e-05\n')
    rc, _, err = run(['wisdom', 'merge', 'w_m', 'w_a', 'w_b'])
    check(rc == 0, f"wisdom merge w_m w_a w_b: exit {rc} {err!r}")
    merged = [
        'exchange  P=2 nodes=1 node_max=2 regular lmax<=2^12 mmax<=2^11 '
        'fit=0x7f -> fourstage (1e-06 s measured)',
        a_lines[1], a_lines[2],
        'exchange  P=8 nodes=1 node_max=8 regular lmax<=2^3 mmax<=2^3 '
        'fit=0x7f -> pairwise (2e-05 s measured)', '4 records']
    got = show('w_m')
    check(got == merged, f"merged: {got!r}")
    text = open(path('w_m')).read()
    check(text.startswith(WISDOM_HEAD) and
          'exchange 2 1 2 1 12 11 127 0 5 0 1e-06\n' in text,
          f"the merged file: {text!r}")
    rc, _, _ = run(['wisdom', 'merge', 'w_m2', 'w_b', 'w_a'])
    got = show('w_m2')
    check(rc == 0 and got[0] == a_lines[0] and len(got) == 5 and
          any('P=8' in l for l in got), f"merge w_b w_a: {got!r}")
    # the file's measured costs: shown before the records, carried
    # through a merge (the later input's line of a key wins)
    fline = ('file-costs 1 posix 0xef53 2049 2 1 0.000125 '
             '1500000000 4194304 8388608 3000000000 20971520\n')
    put_text('w_f', WISDOM_HEAD + fline.replace('1500000000', '1000000000'))
    put_text('w_f2', WISDOM_HEAD + fline)
    got = show('w_f2')
    check(got == ['file      posix fs=0xef53 dev=2049 P=2 nodes=1: latency '
                  '0.000125 s, bandwidth 1.5e+09 B/s (4194304 B a rank), '
                  'long reads 3e+09 B/s (20971520 B a rank)', '0 records'],
          f"wisdom show w_f2: {got!r}")
    rc, _, err = run(['wisdom', 'merge', 'w_mf', 'w_f', 'w_a', 'w_f2'])
    got = show('w_mf')
    check(rc == 0 and got[0] == show('w_f2')[0] and got[1:] ==
          a_lines + ['3 records'] and fline in open(path('w_mf')).read(),
          f"merge w_f w_a w_f2: {rc} {err!r} {got!r}")
    put_text('w_fbad', WISDOM_HEAD + fline.replace('file-costs 1',
                                                   'file-costs 2'))
    refused(['wisdom', 'show', 'w_fbad'], "show of a file-costs line of "
            "version 2", ['w_fbad', 'line 2', 'version'], rc_want=1)
    # refusals: exit 1, one line, no file changed (or made)
    put_text('w_bad', WISDOM_HEAD +
             'exchange 2 1 2 1 12 11 127 0 5 0 1e-06\n'
             'exchange 1 2 3\n')
    for args in (['w_m', 'w_m', 'w_bad'], ['w_new', 'w_a', 'w_bad'],
                 ['--force', 'w_m', 'w_bad', 'w_a']):
        refused(['wisdom', 'merge'] + args, f"merge {args} (malformed)",
                ['w_bad', 'line 3'], rc_want=1)
    refused(['wisdom', 'show', 'w_bad'], "show of a malformed file",
            ['w_bad', 'line 3'], rc_want=1)
    refused(['wisdom', 'merge', 'w_m', 'w_a'], "merge into an existing OUT",
            ['w_m exists', '--force'], rc_want=1)
    os.symlink('w_nowhere', path('w_dangling'))
    refused(['wisdom', 'merge', 'w_dangling', 'w_a'],
            "merge onto a dangling symlink", ['exists', '--force'],
            rc_want=1)
    put_text('w_notes', 'my notes, not wisdom\n')
    refused(['wisdom', 'clear', 'w_notes'], "clear of a file not wisdom",
            ['not a wisdom file', '--force'], rc_want=1)
    refused(['wisdom', 'merge', '--force', 'w_m', 'w_notes'],
            "merge of a file not wisdom", ['not a wisdom file'], rc_want=1)
    refused(['wisdom', 'show', 'w_missing'], "show of a missing file",
            ['w_missing'], rc_want=1)
    # OUT named among the inputs (any spelling) keeps its records
    rc, _, err = run(['wisdom', 'merge', 'w_m', './w_m', 'w_all'])
    got = show('w_m')
    check(rc == 0 and got[:4] == merged[:4] and
          got[-1] == f'{4 + len(names)} records',
          f"merge w_m ./w_m w_all: {rc} {err!r} {got!r}")
    # --force replaces an existing OUT
    rc, _, _ = run(['wisdom', 'merge', '--force', 'w_m', 'w_a'])
    check(rc == 0 and show('w_m') == a_lines + ['3 records'],
          "merge --force w_m w_a")
    # clear: wisdom (a malformed one too) and a new file; --force anything
    for name in ('w_m', 'w_bad', 'w_fresh'):
        rc, _, err = run(['wisdom', 'clear', name])
        check(rc == 0 and open(path(name)).read() == WISDOM_HEAD and
              show(name) == ['0 records'], f"clear {name}: {rc} {err!r}")
    rc, _, _ = run(['wisdom', 'clear', '--force', 'w_notes'])
    check(rc == 0 and open(path('w_notes')).read() == WISDOM_HEAD,
          "clear --force w_notes")
    # usage errors: exit 2
    for args in (['wisdom'], ['wisdom', 'show'], ['wisdom', 'merge', 'w_m'],
                 ['wisdom', 'frob', 'w_m'],
                 ['wisdom', 'show', '--x', 'w_m']):
        rc, _, _ = run(args, expect=None)
        check(rc == 2, f"{args}: exit {rc}, want 2")


# Element types of the cast table: every numpy type passion has.
CAST_TYPES = ['?', 'i1', 'i2', 'i4', 'i8', 'u1', 'u2', 'u4', 'u8', 'f2',
              'f4', 'f8', 'f16', 'c8', 'c16', 'c32']


def passion_safe(s, d):
    """The casts put does without --casting=unsafe: numpy's safe casting,
    except 64-bit integers to float64 and complex128 (numpy calls them
    safe; they round above 2^53)."""
    s, d = np.dtype(s), np.dtype(d)
    if s.kind in 'iu' and s.itemsize == 8 and (d.kind, d.itemsize) in \
            (('f', 8), ('c', 16)):
        return False
    return bool(np.can_cast(s, d, 'safe'))


def cast_values(dt, n, into=None):
    """n values of dt: integers over their whole range; floats normal *
    1000 after 0, -0, inf, -inf, nan; for a cast of floats into the
    integer type `into`, values inside its range (numpy leaves the rest
    undefined)."""
    dt = np.dtype(dt)
    nat = dt.newbyteorder('=')
    if dt.kind == 'b':
        return nrng.integers(0, 2, n).astype(dt)
    if dt.kind in 'iu':
        ii = np.iinfo(nat)
        return nrng.integers(ii.min, ii.max, n, dtype=nat,
                             endpoint=True).astype(dt)
    if into is not None and np.dtype(into).kind in 'iu':
        ii = np.iinfo(np.dtype(into))
        re = nrng.uniform(max(ii.min, -2000), min(ii.max, 2000), n)
    else:
        re = nrng.standard_normal(n) * 1000
        re[:5] = [0.0, -0.0, np.inf, -np.inf, np.nan]
    if dt.kind == 'c':
        re = re + 1j * nrng.standard_normal(n) * 1000
    return re.astype(dt)


def same_values(a, b):
    a = a.astype(a.dtype.newbyteorder('='))
    b = b.astype(b.dtype.newbyteorder('='))
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind not in 'fc':
        return np.array_equal(a, b)
    if not np.array_equal(a, b, equal_nan=True):
        return False
    m = ~np.isnan(a)
    return a.dtype.kind == 'c' or np.array_equal(np.signbit(a[m]),
                                                 np.signbit(b[m]))


def astype(a, d):
    with warnings.catch_warnings(), np.errstate(all='ignore'):
        warnings.simplefilter('ignore')
        return a.astype(d)


def cast_case(s, d, unsafe, dst='cast/dst.npy', read=None, fill=None,
              n=11):
    """put n values of s into every other element of dst's last row (type
    d; a new .npy of 2 n values unless fill, dst's values, is given):
    refused (naming both types, no file changed) where the cast is not
    allowed, else those elements equal numpy's astype and the rest of dst
    is unchanged. read(): dst's values (default np.load)."""
    s, d = np.dtype(s), np.dtype(d)
    if fill is None:
        fill = cast_values(d, 2 * n)
        np.save(path(dst), fill)
    src = cast_values(s, n, into=d if unsafe else None)
    if fill.ndim == 2:
        src = src.reshape(1, n)
    np.save(path('cast/src.npy'), src)
    sect = '1::2' if fill.ndim == 1 else '-1,1::2'
    args = ['put'] + (['--casting=unsafe'] if unsafe else []) + \
        ['cast/src.npy', dst, sect]
    what = f"put {s.str} into {d.str}{' --casting=unsafe' if unsafe else ''}"
    if not unsafe and not passion_safe(s, d):
        refused(args, what, [s.name, d.name, '--casting=unsafe'], np_=1)
        return False
    rc, _, _ = run(args, np_=1)
    got = read() if read else np.load(path(dst))
    want = astype(fill, d.newbyteorder('='))
    if fill.ndim == 1:
        want[1::2] = astype(src, d)
    else:
        want[-1, 1::2] = astype(src, d)[0]
    check(rc == 0 and got is not None and same_values(got, want) and
          (read is not None or got.dtype == d),
          f"{what} (seed {SEED}): {got!r}, want {want!r}")
    return True


def cast_table():
    """Every pair of CAST_TYPES (random byte orders; pairs of one type in
    both orders): put converts exactly the casts passion_safe allows,
    refuses the rest; a random sample of the refused ones again with
    --casting=unsafe; what C leaves undefined (floats out of an integer
    type's range, NaN) saturates; opaque bytes never convert."""
    os.makedirs(path('cast'), exist_ok=True)
    unsafe_pairs = []
    for a in CAST_TYPES:
        for b in CAST_TYPES:
            s = np.dtype(a).newbyteorder(rng.choice('<>'))
            d = np.dtype(b).newbyteorder(rng.choice('<>'))
            if a == b and s.itemsize > 1:
                d = s.newbyteorder('S')
            if not cast_case(s, d, False):
                unsafe_pairs.append((s, d))
    for s, d in rng.sample(unsafe_pairs, min(len(unsafe_pairs), 24)):
        cast_case(s, d, True)
    # outside the range: saturated, NaN -> 0, truncated toward zero
    src = np.array([np.nan, 1e30, -1e30, 300.7, -300.7, -0.5, 2.9, np.inf])
    np.save(path('cast/src.npy'), src)
    for d, want in [('i1', [0, 127, -128, 127, -128, 0, 2, 127]),
                    ('>u2', [0, 65535, 0, 300, 0, 0, 2, 65535]),
                    ('i8', [0, 2**63 - 1, -2**63, 300, -300, 0, 2,
                            2**63 - 1])]:
        np.save(path('cast/dst.npy'), np.zeros(8, d))
        rc, _, _ = run(['put', '--casting', 'unsafe', 'cast/src.npy',
                        'cast/dst.npy', '::'], np_=1)
        got = np.load(path('cast/dst.npy'))
        check(rc == 0 and got.tolist() == want,
              f"put --casting=unsafe f8 into {d}: {got.tolist()}")
    # opaque bytes: never, not even unsafe
    np.save(path('cast/src.npy'), np.zeros(4, 'V8'))
    np.save(path('cast/dst.npy'), np.zeros(4, '<i8'))
    for flag in ([], ['--casting=unsafe']):
        refused(['put'] + flag + ['cast/src.npy', 'cast/dst.npy', '::'],
                f"put V8 into i8 {flag}", ['bytes8', 'int64'])
        refused(['put'] + flag + ['cast/dst.npy', 'cast/src.npy', '::'],
                f"put i8 into V8 {flag}", ['bytes8', 'int64'])
    refused(['put', '--casting=same_kind', 'cast/src.npy', 'cast/dst.npy',
             '::'], "put --casting=same_kind", ['safe or unsafe'])


def format_refusals(A, I):
    """HDF5 and netCDF: an output in the input's file (another object of
    it too) is refused, --force or not; an existing file without --force
    too; put between two objects of one file; nothing changes."""
    fresh('fr.h5', 'fr.nc', 'frl.h5')
    shutil.copy(path('r.h5'), path('fr.h5'))
    shutil.copy(path('t1.nc'), path('fr.nc'))
    os.symlink('fr.h5', path('frl.h5'))
    for args in (['get', 'fr.h5:/fields/u', '0:3', '-o', 'fr.h5:/x'],
                 ['get', 'fr.h5:/fields/u', '0:3', '-o', './frl.h5:/x'],
                 ['get', 'fr.nc:u', '0:3', '-o', 'fr.nc:w'],
                 ['convert', 'fr.nc:u', './fr.nc:u'],
                 ['convert', 'frl.h5:/fields/u', 'fr.h5:/y']):
        for force in ([], ['--force']):
            refused(args + force, ' '.join(args + force), ['same file'])
    for args in (['put', 'fr.h5:/fields/u', 'frl.h5:/fields/k', ':,:'],
                 ['put', 'fr.nc:u', 'fr.nc:u', ':,:']):
        refused(args, ' '.join(args), ['same file'])
    fresh('fo.h5', 'fo.nc')
    for args, check_out in (
            (['get', 'fr.h5:/fields/k', '1:60:7,::2', '-o', 'fo.nc:k'],
             lambda: np.array_equal(nc_read('fo.nc', 'k', '>i4', (9, 19)),
                                    I[1:60:7, ::2])),
            (['convert', 'fr.nc:u', 'fo.h5:/a/b'],
             lambda: np.array_equal(h5_read('fo.h5', '/a/b', '>f8',
                                            (61, 37)), A))):
        rc, _, _ = run(args)
        check(rc == 0 and check_out(), ' '.join(args))
        refused(args, ' '.join(args) + ' (exists)', ['exists', '--force'])
        rc, _, _ = run(args + ['--force'])
        check(rc == 0 and check_out(), ' '.join(args) + ' --force')


def format_casts():
    """put converts into HDF5 datasets (h5import) and netCDF variables
    (ncgen, CDF-5) as into .npy: the two cases of the report (an int64
    row into a float64 dataset; int16 -1 into a netCDF ushort), a byte
    order change of one type, and random pairs; values read back with
    h5dump and ncdump."""
    os.makedirs(path('cast'), exist_ok=True)
    H5T = ['<i1', '>i2', '<i4', '>i8', '<u1', '<u2', '>u4', '<u8', '>f4',
           '<f8']
    # (not int64: this ncgen declares a CDL int64 variable as int)
    NCT = {'byte': 'i1', 'ubyte': 'u1', 'short': '>i2', 'ushort': '>u2',
           'int': '>i4', 'uint': '>u4', 'uint64': '>u8', 'float': '>f4',
           'double': '>f8'}

    def h5_case(s, d, unsafe):
        fill = cast_values(d, 2 * 22).reshape(2, 22)
        fresh('cast/t.h5')
        h5_import('cast/t.h5', [('/v', fill, d, None)])
        return cast_case(s, d, unsafe, 'cast/t.h5:/v', fill=fill,
                         read=lambda: h5_read('cast/t.h5', '/v', d, (2, 22)))

    def nc_case(s, ctype, unsafe):
        d = NCT[ctype]
        fill = cast_values(d, 2 * 22).reshape(2, 22)
        if fill.dtype.kind == 'f':  # CDL has no inf or nan literal here
            fill[~np.isfinite(fill)] = 1.5
        fresh('cast/t.nc')
        nc_write('cast/t.nc', 'cdf5', [('y', 2), ('x', 22)],
                 [('v', ctype, ['y', 'x'], fill)])
        return cast_case(s, d, unsafe, 'cast/t.nc:v', fill=fill,
                         read=lambda: nc_read('cast/t.nc', 'v', d, (2, 22)))

    # the report: int64 [-3 .. 4] into a float64 dataset; int16 -1 into
    # a netCDF ushort: refused; --casting=unsafe converts by value
    fill = np.full((2, 11), 0.5)
    fresh('cast/t.h5')
    h5_import('cast/t.h5', [('/v', fill, '<f8', None)])
    np.save(path('cast/src.npy'), np.arange(-3, 5, dtype='<i8')[None])
    refused(['put', 'cast/src.npy', 'cast/t.h5:/v', '0,0:8'],
            "put int64 into an HDF5 float64", ['int64', 'float64'])
    rc, _, _ = run(['put', '--casting=unsafe', 'cast/src.npy',
                    'cast/t.h5:/v', '0,0:8'])
    got = h5_read('cast/t.h5', '/v', '<f8', (2, 11))
    check(rc == 0 and got is not None and
          got[0, :8].tolist() == list(range(-3, 5)) and
          np.all(got[0, 8:] == 0.5) and np.all(got[1] == 0.5),
          f"put --casting=unsafe int64 into HDF5 float64: {got}")
    fresh('cast/t.nc')
    nc_write('cast/t.nc', 'cdf5', [('x', 4)],
             [('v', 'ushort', ['x'], np.array([1, 2, 3, 4]))])
    np.save(path('cast/src.npy'), np.array([-1, 7], '<i2'))
    refused(['put', 'cast/src.npy', 'cast/t.nc:v', '1:3'],
            "put int16 into a netCDF ushort", ['int16', 'uint16'])
    rc, _, _ = run(['put', '--casting=unsafe', 'cast/src.npy',
                    'cast/t.nc:v', '1:3'])
    got = nc_read('cast/t.nc', 'v', '>u2', (4,))
    check(rc == 0 and got is not None and got.tolist() == [1, 65535, 7, 4],
          f"put --casting=unsafe int16 into ushort: {got}")
    # one type, the other byte order: converted, never bit-copied
    h5_case('>i4', '<i4', False)
    h5_case('<f8', '>f8', False)
    nc_case('<i4', 'int', False)
    nc_case('<f4', 'float', False)
    # random pairs, safe and unsafe
    for _ in range(4):
        s = np.dtype(rng.choice(CAST_TYPES[:13])).newbyteorder(
            rng.choice('<>'))
        h5_case(s, rng.choice(H5T), rng.random() < 0.3)
        nc_case(s, rng.choice(sorted(NCT)), rng.random() < 0.3)


def demo_dir():
    """demo writes only into a new directory of its own, removed at the
    end with everything in it; a --dir it cannot use is one line."""
    os.makedirs(path('demo'), exist_ok=True)
    with open(path('demo/mine.raw'), 'wb') as f:
        f.write(b'passion' * 100)
    before = snapshot()
    rc, out, err = run(['demo', '--jacobi', '512', '--image', '1024',
                        '--iters', '1', '--ratio', '8', '--dir', 'demo'])
    after = snapshot()
    changed = sorted(k for k in set(before) | set(after)
                     if before.get(k) != after.get(k))
    check(rc == 0 and not changed, f"demo --dir demo: rc {rc}, changed "
          f"{changed}")
    refused(['demo', '--dir', 'demo/mine.raw'], "demo --dir FILE",
            ['--dir'])



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
    # ls of a local set checks its files: there, and their local sizes
    np.save(path('ls_src.npy'), np.arange(60, dtype='<f8').reshape(6, 10))
    run(['convert', 'ls_src.npy', 'lsck.%d.laf', '--dist', 'BLOCK,*'])
    rc, out, err = run(['ls', 'lsck.%d.laf'])
    check(rc == 0 and 'MISSING' not in out, f"ls of a whole set: {rc} {err!r}")
    victim = path(f'lsck.{NP - 1}.laf')
    with open(victim, 'r+b') as fp:
        fp.truncate(8)
    rc, out, err = run(['ls', 'lsck.%d.laf'], expect=1)
    check(rc != 0 and 'the file holds 8 bytes' in out and
          'missing or not the size' in err, f"ls of a short file: {rc} {err!r}")
    os.unlink(victim)
    rc, out, err = run(['ls', 'lsck.%d.laf'], expect=1)
    check(rc != 0 and 'MISSING' in out and
          len([l for l in err.splitlines() if l.strip()]) == 1,
          f"ls of a set without file {NP - 1}: {rc} {out!r} {err!r}")
    # a directory is named as one, with or without a raw file's options
    os.makedirs(path('adir'), exist_ok=True)
    for extra in ([], raw):
        rc, _, err = run(['ls'] + extra + ['adir'], expect=1)
        check(rc != 0 and 'adir is a directory' in err and
              'raw file' not in err, f"ls of a directory: {rc} {err!r}")
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
    for c in ['ls', 'dump', 'get', 'put', 'convert', 'info', 'wisdom']:
        rc, out, _ = run([c, '--help'], np_=1)
        check(rc == 0 and out.startswith('usage:'), f"{c} --help")
    rc, out, _ = run(['--version'], np_=1)
    check(rc == 0 and out.startswith('passion '), '--version')
    # passion(1) documents every command help lists
    rc, out, _ = run(['help'], np_=1)
    cmds = re.findall(r'^  ([a-z]+) ', out.split('commands:\n', 1)[-1]
                      .split('\n\n', 1)[0], re.M)
    page = open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             '..', 'man', 'passion.1')).read()
    check(len(cmds) >= 7, f"help's commands: {cmds}")
    for c in cmds:
        check(re.search(r'^\.(TP\n\.)?B[I]? "?' + c + r'\b', page, re.M),
              f"passion(1) has no entry for {c}")
    # help's examples name this build's launcher (a plain mpiexec may be
    # the other MPI's), and its quick demo examples run
    rc, out, _ = run(['help'], np_=1)
    ex = out.split('examples:\n', 1)[-1].splitlines()
    demos = 0
    for line in ex:
        words = line.split()
        if 'passion' not in words:
            continue
        i = words.index('passion')
        launch = [w for w in words[:i] if '=' not in w]
        check(not launch or launch[0] in ('mpiexec.mpich', 'mpiexec.openmpi'),
              f"help's example names no MPI's own launcher: {line!r}")
        if words[i + 1:i + 2] != ['demo'] or '--quick' not in words:
            continue
        env = dict(w.split('=', 1) for w in words[:i] if '=' in w)
        args = words[i + 1:]
        if '--dir' in args:
            args[args.index('--dir') + 1] = SCRATCH
        else:
            args += ['--dir', SCRATCH]
        n = int(launch[2]) if len(launch) > 2 and launch[1] == '-n' else 1
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        rc, _, err = run(args, np_=n)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        check(rc == 0, f"help's example {line.strip()!r}: exit {rc} {err}")
        demos += 1
    check(demos >= 2, f"help's quick demo examples: {demos}")
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
    elif PART == 'casts':
        cast_table()
    else:
        ls_dump_get_put()
        errors()
        refusals()
        wisdom()
        demo_dir()
    print(f"test_cli: {checks} checks, {failures} failed", flush=True)
    sys.exit(1 if failures else 0)


main()
