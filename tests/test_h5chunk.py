#!/usr/bin/python3
"""test_h5chunk.py - chunked HDF5 datasets read by passion, against h5py.

usage: test_h5chunk.py READER PASSION MPIEXEC SCRATCH NP [--seed S]

h5py writes datasets with every chunk index HDF5 has (version 1 B-tree:
libver 'earliest'; with libver 'latest': fixed array for fixed
dimensions, extensible array for one unlimited dimension, version 2
B-tree for two, single chunk when the chunk is the dataset, implicit for
early allocation without filters), the filters deflate, shuffle and
fletcher32 alone and combined, int8/16/32/64, uint8, float32/64 and
big-endian types, szip (where h5py's HDF5 writes it), partial edge chunks, chunks never written (the fill
value) and a chunk stored with its deflate filter skipped (filter mask).
At NP ranks READER (tests/h5chunk_read.c) reads random sections (start,
count, stride per dimension; a rank may have none), every rank its own,
collectively (packed, and inside a larger memory array) and
independently; every rank's bytes must equal h5py's read of the same
selection in this machine's byte order. A small memory budget makes the
reader work in batches and rounds. Every rank reading the whole dataset
collectively reads each chunk once in all (file bytes read summed over
the ranks = the chunks' stored bytes), independently once per rank. A chunk with one byte flipped (fletcher32, and a
deflate stream) fails on every rank with the same code and no data; a
filter passion does not decode (scale-offset) is refused naming it. The
passion command lists (ls), dumps and converts a chunked dataset, and
refuses to write into one. A netCDF-4 file that ncgen wrote (where it is
installed) is read the same way by file.nc:var. The seed is printed; failures name it.
"""
import os
import random
import re
import shutil
import subprocess
import sys

import numpy as np

try:
    import h5py
except ImportError:
    print("h5py is not installed (python3-h5py): skipped")
    sys.exit(77)

READER, PASSION, MPIEXEC, SCRATCH = (os.path.abspath(sys.argv[1]),
                                     os.path.abspath(sys.argv[2]),
                                     os.path.abspath(sys.argv[3]),
                                     sys.argv[4])
NP = int(sys.argv[5])
SEED = int(sys.argv[sys.argv.index('--seed') + 1]) if '--seed' in sys.argv \
    else 20261129 + NP
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


def path(n):
    return os.path.join(SCRATCH, n)


def values(shape, dt):
    """Distinct-looking values of numpy type dt."""
    n = int(np.prod(shape))
    dt = np.dtype(dt)
    if dt.kind == 'f':
        v = nrng.standard_normal(n) * 1000
    else:
        info = np.iinfo(dt)
        v = nrng.integers(info.min, int(info.max) + 1, n, dtype=np.int64
                          if info.max < 2**63 else np.uint64)
    return v.astype(dt).reshape(shape)


def implicit(f, name, shape, dt, chunks):
    """A dataset with the implicit index: fixed dimensions, early
    allocation, no filter (h5py's high level cannot ask for it)."""
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk(chunks)
    dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
    space = h5py.h5s.create_simple(shape)
    tid = h5py.h5t.py_create(np.dtype(dt))
    h5py.h5d.create(f.id, name.encode(), tid, space, dcpl=dcpl)
    return f[name]


def netcdf4(cases):
    """A netCDF-4 file (HDF5 inside) from ncgen: a deflated, shuffled
    record variable and a fletcher32 one, opened as file.nc:var."""
    if not shutil.which('ncgen'):
        print("ncgen not found: no netCDF-4 case")
        return
    temp = ', '.join(str(v) for v in values((6, 9, 11), 'f8').ravel())
    small = ', '.join(str(v) for v in values((9, 11), 'i2').ravel())
    cdl = f"""netcdf nc4 {{
dimensions:
  t = UNLIMITED ;
  y = 9 ;
  x = 11 ;
variables:
  double temp(t, y, x) ;
    temp:_ChunkSizes = 2, 4, 5 ;
    temp:_DeflateLevel = 4 ;
    temp:_Shuffle = "true" ;
  short small(y, x) ;
    small:_ChunkSizes = 3, 3 ;
    small:_Fletcher32 = "true" ;
data:
  temp = {temp} ;
  small = {small} ;
}}
"""
    with open(path('nc4.cdl'), 'w') as fp:
        fp.write(cdl)
    subprocess.run(['ncgen', '-k', 'nc4', '-o', path('nc4.nc'),
                    path('nc4.cdl')], check=True)
    cases += [('nc4.nc', 'temp'), ('nc4.nc', 'small')]


def make_files():
    """Datasets (file, name) of every index, filter and type."""
    cases = []
    with h5py.File(path('v1.h5'), 'w', libver='earliest') as f:
        d = f.create_dataset('btree1', (23, 31), 'i4', chunks=(5, 7),
                             compression='gzip', shuffle=True)
        d[...] = values(d.shape, 'i4')
        d = f.create_dataset('g/f8le', (17, 9, 6), '<f8', chunks=(4, 4, 4),
                             fletcher32=True)
        d[...] = values(d.shape, 'f8')
        cases += [('v1.h5', '/btree1'), ('v1.h5', '/g/f8le')]
    with h5py.File(path('new.h5'), 'w', libver='latest') as f:
        d = f.create_dataset('farray', (9, 10, 11), 'f8', chunks=(4, 3, 5),
                             fletcher32=True)
        d[...] = values(d.shape, 'f8')
        d = f.create_dataset('earray', (37, 20), '>i2', chunks=(8, 6),
                             maxshape=(None, 20), shuffle=True,
                             compression='gzip', fletcher32=True)
        d[...] = values(d.shape, '>i2')
        d = f.create_dataset('btree2', (30, 25), 'i1', chunks=(7, 4),
                             maxshape=(None, None), compression='gzip')
        d[...] = values(d.shape, 'i1')
        d = f.create_dataset('single', (13, 17), 'f4', chunks=(13, 17),
                             compression='gzip', compression_opts=9)
        d[...] = values(d.shape, 'f4')
        d = implicit(f, 'implicit', (40, 12), '<i8', (6, 5))
        d[...] = values(d.shape, 'i8')
        # chunks never written: the fill value
        d = f.create_dataset('sparse', (50, 40), '>f8', chunks=(10, 10),
                             fillvalue=2.5, compression='gzip')
        d[10:20, 0:10] = values((10, 10), 'f8')
        d[33:41, 25:40] = values((8, 15), 'f8')
        d = f.create_dataset('sparse_i4', (64,), 'i4', chunks=(8,),
                             fillvalue=-7, maxshape=(None,))
        d[20:30] = values((10,), 'i4')
        # a chunk stored with deflate skipped (filter mask bit 0)
        d = f.create_dataset('masked', (12, 10), 'u1', chunks=(6, 5),
                             compression='gzip')
        d[...] = values(d.shape, 'u1')
        raw = values((6, 5), 'u1')
        d.id.write_direct_chunk((6, 5), raw.tobytes(), filter_mask=1)
        # many small chunks: batches under a small budget
        d = f.create_dataset('long', (6000,), 'f8', chunks=(37,),
                             compression='gzip', shuffle=True)
        d[...] = values(d.shape, 'f8')
        d = f.create_dataset('four', (5, 6, 7, 8), '>i4', chunks=(2, 3, 4, 3),
                             shuffle=True)
        d[...] = values(d.shape, '>i4')
        if h5py.h5z.filter_avail(h5py.h5z.FILTER_SZIP):
            d = f.create_dataset('szip', (21, 130), '<i4', chunks=(8, 64),
                                 compression='szip', shuffle=True)
            d[...] = values(d.shape, 'i2')
            d = f.create_dataset('szipf', (300,), '>f8', chunks=(64,),
                                 compression='szip', fletcher32=True)
            d[...] = values(d.shape, 'f8')
            cases += [('new.h5', '/szip'), ('new.h5', '/szipf')]
        else:
            print("h5py's HDF5 cannot write szip: no szip case")
        cases += [('new.h5', n) for n in
                  ('/farray', '/earray', '/btree2', '/single', '/implicit',
                   '/sparse', '/sparse_i4', '/masked', '/long', '/four')]
    netcdf4(cases)
    return cases


def rand_section(shape):
    """start, count, stride per dimension; sometimes nothing."""
    if rng.random() < 0.1:
        return [(0, 0, 1)] * len(shape)
    sec = []
    for n in shape:
        stride = rng.choice([1, 1, 2, 3, rng.randint(1, max(1, n))])
        start = rng.randrange(n)
        cmax = (n - 1 - start) // stride + 1
        count = rng.randint(1, cmax)
        sec.append((start, count, stride))
    return sec


def run_reader(name, secs, mode, env=None):
    """READER at NP ranks: {rank: (open rc, read rc, detail)}, raw bytes."""
    sf = path('sections.txt')
    with open(sf, 'w') as fp:
        for s in secs:
            fp.write(' '.join(f"{a} {b} {c}" for a, b, c in s) + '\n')
    out = path('out')
    for r in range(NP):
        if os.path.exists(f"{out}.{r}"):
            os.remove(f"{out}.{r}")
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([MPIEXEC, '-n', str(NP), READER, name, sf, out, mode],
                       capture_output=True, text=True, env=e, timeout=300)
    res = {}
    for line in p.stdout.splitlines():
        m = re.match(r'rank (\d+) open (-?\d+) read (-?\d+) bytes_read '
                     r'(\d+): (.*)', line)
        if m:
            res[int(m.group(1))] = (int(m.group(2)), int(m.group(3)),
                                    m.group(5), int(m.group(4)))
    if p.returncode != 0 or len(res) != NP:
        fail(f"{name} {mode}: reader exit {p.returncode}, {p.stdout!r} "
             f"{p.stderr!r}")
    data = {}
    for r in range(NP):
        try:
            with open(f"{out}.{r}", 'rb') as fp:
                data[r] = fp.read()
        except OSError:
            data[r] = None
    return res, data


def want_of(d, sec):
    """h5py's read of the selection, in this machine's byte order."""
    if any(c == 0 for _, c, _ in sec):
        return np.zeros([c for _, c, _ in sec], d.dtype.newbyteorder('='))
    sl = tuple(slice(s, s + (c - 1) * st + 1, st) for s, c, st in sec)
    return np.ascontiguousarray(d[sl]).astype(d.dtype.newbyteorder('='))


def check_reads(fname, dname, mode, env=None, tag=''):
    name = f"{path(fname)}:{dname}"
    with h5py.File(path(fname), 'r') as f:
        d = f[dname]
        secs = [rand_section(d.shape) for _ in range(NP)]
        res, data = run_reader(name, secs, mode, env)
        for r in range(NP):
            orc, rrc, det, _ = res.get(r, (None, None, '', 0))
            if orc != 0 or rrc != 0:
                fail(f"{fname}:{dname} {mode}{tag} rank {r} section "
                     f"{secs[r]}: open {orc} read {rrc}: {det}")
                continue
            want = want_of(d, secs[r])
            got = data[r]
            if mode == 'mem':
                box = np.frombuffer(got, np.uint8).reshape(
                    [c + 2 for _, c, _ in secs[r]] + [d.dtype.itemsize])
                inner = tuple(slice(1, 1 + c) for _, c, _ in secs[r])
                ok = box[inner].tobytes() == want.tobytes()
                mask = np.ones(box.shape[:-1], bool)
                mask[inner] = False
                ok = ok and bool(np.all(box[mask] == 0xA5))
            else:
                ok = got == want.tobytes()
            check(ok, f"{fname}:{dname} {mode}{tag} rank {r} section "
                  f"{secs[r]}: bytes differ from h5py's")


def corrupt_checks():
    """A flipped byte in a fletcher32 chunk and in a deflate stream: the
    same error on every rank, no data; scale-offset refused by name."""
    shutil.copy(path('new.h5'), path('bad.h5'))
    with h5py.File(path('bad.h5'), 'r') as f:
        fa = f['farray'].id.get_chunk_info(1)
        bt = f['btree2'].id.get_chunk_info(2)
    with open(path('bad.h5'), 'r+b') as fp:
        for info in (fa, bt):
            fp.seek(info.byte_offset + info.size // 2)
            b = fp.read(1)
            fp.seek(info.byte_offset + info.size // 2)
            fp.write(bytes([b[0] ^ 0x5A]))
    for dname, word in (('/farray', 'fletcher32'), ('/btree2', 'deflate')):
        with h5py.File(path('bad.h5'), 'r') as f:
            whole = [(0, n, 1) for n in f[dname].shape]
        for mode in ('all', 'ind'):
            res, data = run_reader(f"{path('bad.h5')}:{dname}",
                                   [whole] * NP, mode)
            codes = set(v[1] for v in res.values())
            if mode == 'all':
                check(codes == {-10}, f"corrupt {dname} {mode}: read codes "
                      f"{res}, want -10 (EFORMAT) on every rank")
            else:
                check(codes == {-10}, f"corrupt {dname} {mode}: {res}")
            check(any(word in v[2] for v in res.values()),
                  f"corrupt {dname} {mode}: no rank names {word}: {res}")
            check(all(not data[r] for r in data),
                  f"corrupt {dname} {mode}: data came back")
    with h5py.File(path('so.h5'), 'w') as f:
        f.create_dataset('so', data=np.arange(100, dtype='i4'),
                         chunks=(10,), scaleoffset=0)
    res, _ = run_reader(f"{path('so.h5')}:/so", [[(0, 100, 1)]] * NP, 'all')
    check(all(v[0] == -11 and 'scaleoffset' in v[2] for v in res.values())
          and len(res) == NP, f"scale-offset not refused by name: {res}")


def once_checks():
    """Every rank reading the whole dataset collectively: each chunk is
    read once in all (the file bytes read, summed over the ranks, are the
    chunks' stored bytes); independently, once per rank."""
    for fname, dname in (('new.h5', '/earray'), ('v1.h5', '/btree1'),
                         ('new.h5', '/long')):
        with h5py.File(path(fname), 'r') as f:
            d = f[dname]
            stored = sum(d.id.get_chunk_info(i).size
                         for i in range(d.id.get_num_chunks()))
            whole = [(0, n, 1) for n in d.shape]
            want = want_of(d, whole).tobytes()
        for mode, times in (('all', 1), ('ind', NP)):
            res, data = run_reader(f"{path(fname)}:{dname}", [whole] * NP,
                                   mode)
            total = sum(v[3] for v in res.values())
            check(all(v[1] == 0 for v in res.values()) and
                  all(data[r] == want for r in range(NP)),
                  f"{fname}:{dname} whole, {mode}: {res}")
            check(total == times * stored, f"{fname}:{dname} whole, {mode} "
                  f"at {NP} ranks read {total} bytes; the chunks hold "
                  f"{stored} (want {times} x)")


def cli(args, np_=NP):
    p = subprocess.run([MPIEXEC, '-n', str(np_), PASSION] + args,
                       capture_output=True, text=True, cwd=SCRATCH,
                       timeout=300)
    return p.returncode, p.stdout, p.stderr


def cli_checks():
    """ls, dump, convert of chunked datasets; put into one refused."""
    rc, out, err = cli(['ls', 'new.h5:/earray'])
    check(rc == 0 and re.search(r'layout\s+chunked', out) and
          re.search(r'shape\s+37 x 20', out), f"ls earray: {rc} {out} {err}")
    with h5py.File(path('new.h5'), 'r') as f:
        for dname in ('/sparse', '/earray', '/btree2'):
            want = f[dname][...]
            for o in ('c.npy',):
                if os.path.exists(path(o)):
                    os.remove(path(o))
            rc, out, err = cli(['convert', f'new.h5:{dname}', 'c.npy'])
            ok = rc == 0 and os.path.exists(path('c.npy'))
            got = np.load(path('c.npy')) if ok else None
            check(ok and got.shape == want.shape and
                  np.array_equal(got.astype(want.dtype.newbyteorder('=')),
                                 want), f"convert new.h5:{dname}: {rc} {err}")
        want = f['/earray'][3:30:4, -1]
    rc, out, err = cli(['dump', 'new.h5:/earray', '3:30:4,-1'])
    vals = [int(v) for line in out.splitlines() for v in line.split()[1:]]
    check(rc == 0 and vals == [int(v) for v in want],
          f"dump earray: {rc} {out} {err} want {want}")
    np.save(path('w.npy'), np.zeros((2, 2), '>i2'))
    before = open(path('new.h5'), 'rb').read()
    rc, out, err = cli(['put', 'w.npy', 'new.h5:/earray', '0:2,0:2'])
    check(rc != 0 and 'chunked' in err, f"put into chunked: {rc} {err!r}")
    check(open(path('new.h5'), 'rb').read() == before,
          "put into a chunked dataset changed the file")


def main():
    shutil.rmtree(SCRATCH, ignore_errors=True)
    os.makedirs(SCRATCH)
    print(f"seed {SEED}, np {NP}", flush=True)
    cases = make_files()
    for fname, dname in cases:
        for mode in ('all', 'all', 'ind', 'mem'):
            check_reads(fname, dname, mode)
    # batches: a budget of a few chunks
    for fname, dname in (('new.h5', '/long'), ('new.h5', '/sparse'),
                         ('v1.h5', '/btree1')):
        for mode in ('all', 'ind'):
            check_reads(fname, dname, mode,
                        {'PASSION_OPTIONS': 'memory_budget=16K'},
                        ' (16K budget)')
    once_checks()
    corrupt_checks()
    cli_checks()
    print(f"{checks} checks, {failures} failures (seed {SEED}, np {NP})")
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
