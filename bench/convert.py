#!/usr/bin/python3
"""bench/convert.py - the suite `convert`, run by
`bench/run convert [--size SIZE] [--procs P] [--reps N] [--regime R]`.

An N x N int32 array (element (i, j) = i * N + j; N from --size, default
1 GiB: N = 16384), as a .npy global file, a netCDF CDF-5 variable and an
HDF5 contiguous dataset holding the same bytes (both made by
`passion convert`, untimed). Timed, cold by default (every file's pages
dropped before each run: fdatasync + posix_fadvise DONTNEED, as the other
cold suites), repetitions interleaved (every method once per round, in
turn, so that the machine's load changes hit them alike):

  to-local   `mpiexec -n P passion convert src.npy 'l.%d.laf'
             --dist 'CYCLIC(256),*'` (global -> CYCLIC(256) local set)
  from-local `mpiexec -n P passion convert 'l.%d.laf' back.npy` (and back;
             bit-exact against src.npy, checked in the first round)
  dd-copy    `dd if=src.npy of=dd.out bs=4M conv=fdatasync`: the device
             copying the same bytes (each convert reads N*N*4 bytes and
             writes as many, synced, as dd does)
  6.5-I..V   thesis table 6.5's strided read patterns (bench_etp.c), their
             extents scaled by N/4096 (strides kept), on the netCDF
             variable with passion (`passion`, method auto) and on the HDF5
             copy with HDF5's hyperslab read (`hdf5-coll`: collective
             MPI-IO transfer; `hdf5-indep`: independent, skipped beyond
             2^20 contiguous runs as in bench_etp.c), each one mpiexec
             launch of bench-convert timing the read call only;
  dd-span    `dd` reading the file bytes the pattern spans (first to last
             byte any rank reads; iflag=skip_bytes,count_bytes): the
             device's rate for those bytes.

fraction_of_device = dd seconds / method seconds (medians over the
rounds): 1.0 = as fast as dd moves the same bytes (convert: dd-copy;
patterns: dd-span on the same format's file). The convert timings include
mpiexec's start-up of P ranks (what a user waits for), measured alone as
`launch` (mpiexec -n P true) and listed; fraction_less_launch takes it
out. dd's seconds are its own report (without its process start). The thesis's arrays are
column-major: its (row, column) section is (dimension 1, dimension 0) of
the row-major netCDF variable, so the file sees the thesis's pattern.
Writes OUT/convert.csv; bench/run makes the table and plot.
"""
import argparse
import csv
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument('--top', required=True)
ap.add_argument('--build', required=True)
ap.add_argument('--out', required=True)
ap.add_argument('--size', default='1G')
ap.add_argument('--procs', default='2')
ap.add_argument('--reps', type=int, default=3)
ap.add_argument('--regime', default='cold')
ap.add_argument('--quick', action='store_true')
ap.add_argument('--cases', default='')
args = ap.parse_args()

UNITS = {'': 1, 'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40}
m = re.fullmatch(r'(\d+(?:\.\d+)?)([KMGT]?)(?:I?B)?', args.size.upper())
if not m:
    sys.exit(f"bench convert: --size {args.size}: a size like 1G, 256M")
size = int(float(m.group(1)) * UNITS[m.group(2)])
if args.quick:
    size = min(size, 16 << 20)
N = max(256, int((size // 4) ** 0.5) // 256 * 256)
BYTES = N * N * 4
K = N / 4096
PASSION = os.path.join(args.build, 'tools', 'passion')
BENCH = os.path.join(args.build, 'bench', 'bench-convert')
MPIEXEC = os.path.join(args.build, 'mpiexec')
SCR = os.path.join(args.out, 'scratch-convert')
os.makedirs(SCR, exist_ok=True)
cold = args.regime != 'warm'
env = dict(os.environ, HYDRA_LAUNCHER='fork')


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def load():
    try:
        return float(open('/proc/loadavg').read().split()[0])
    except OSError:
        return -1.0


# ---- room: disk for six copies (src, local set, back, nc, h5, dd) and
# memory for the largest section buffers (P ranks, a quarter each at most)
free_disk = shutil.disk_usage(SCR).free
avail = 0
for line in open('/proc/meminfo'):
    if line.startswith('MemAvailable:'):
        avail = int(line.split()[1]) * 1024
if free_disk < 6 * BYTES + (1 << 30):
    sys.exit(f"bench convert: {free_disk >> 20} MiB free in {SCR}, the "
             f"suite needs {(6 * BYTES) >> 20} MiB (six copies of "
             f"{BYTES >> 20} MiB): use --size")
if avail and avail < 3 * BYTES:
    sys.exit(f"bench convert: {avail >> 20} MiB of memory available, the "
             f"suite needs about {(3 * BYTES) >> 20} MiB: use --size")
log(f"bench convert: N = {N} ({BYTES} bytes, int32), disk free "
    f"{free_disk >> 30} GiB, memory available {avail >> 30} GiB, "
    f"load {load():.1f}")


def path(name):
    return os.path.join(SCR, name)


def drop(*names):
    """fdatasync + posix_fadvise(DONTNEED): the files' pages leave the
    page cache (what bench_drop_cache_path does for the C suites)."""
    if not cold:
        return
    for n in names:
        for p in ([path(n)] if '%d' not in n else
                  [path(n.replace('%d', str(q))) for q in range(64)]):
            if not os.path.exists(p):
                continue
            fd = os.open(p, os.O_RDONLY)
            try:
                os.fdatasync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def timed(cmd, **kw):
    """Wall seconds of a command; for dd, its own figure ("copied, T s"),
    which leaves out the process's start (as bench-convert times only
    the read call)."""
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=SCR, env=env, capture_output=True, text=True,
                       **kw)
    t = time.perf_counter() - t0
    if p.returncode:
        log(f"  {' '.join(cmd)}: exit {p.returncode}: {p.stderr[-800:]}")
    elif cmd[0] == 'dd':
        m = re.search(r'copied, ([0-9.e+-]+) s', p.stderr)
        if m:
            t = float(m.group(1))
    return t, p


# ---- the files (untimed)
P = int(args.procs.split(',')[0])
if not os.path.exists(path('src.npy')) or \
        np.load(path('src.npy'), mmap_mode='r').shape != (N, N):
    log(f"  making src.npy ({BYTES >> 20} MiB)")
    a = np.lib.format.open_memmap(path('src.npy'), mode='w+', dtype='<i4',
                                  shape=(N, N))
    step = max(1, (64 << 20) // (N * 4))
    for r0 in range(0, N, step):
        r1 = min(N, r0 + step)
        a[r0:r1] = (np.arange(r0, r1, dtype=np.int64)[:, None] * N +
                    np.arange(N, dtype=np.int64)[None, :]).astype('<i4')
    a.flush()
    del a
for dst in ('x.nc:u', 'x.h5:/data'):
    f = dst.split(':')[0]
    if os.path.exists(path(f)):
        os.unlink(path(f))
    t, p = timed([MPIEXEC, '-n', str(P), PASSION, 'convert', '--no-progress',
                  'src.npy', dst])
    if p.returncode:
        sys.exit(f"bench convert: making {dst} failed")


def span_of(fname, obj, sects):
    """(first byte, bytes) of the file that the sections span."""
    lo, hi = None, None
    for sec in sects:
        (s0, c0, d0), (s1, c1, d1) = sec
        if not c0 or not c1:
            continue
        first = s0 * N + s1
        last = (s0 + (c0 - 1) * d0) * N + s1 + (c1 - 1) * d1
        lo = first if lo is None else min(lo, first)
        hi = last if hi is None else max(hi, last)
    return data_offset(fname, obj) + lo * 4, (hi - lo + 1) * 4


OFFSETS = {}


def data_offset(fname, obj):
    """Where the array's bytes start: h5dump -H -p's OFFSET for the HDF5
    dataset; for the netCDF file that passion made with one variable, the
    last N*N*4 bytes (its header is padded to a page, the data follow)."""
    if (fname, obj) not in OFFSETS:
        if fname.endswith('.nc'):
            off = os.path.getsize(path(fname)) - BYTES
        else:
            off = None
            out = subprocess.run(['h5dump', '-H', '-p', '-d', obj, fname],
                                 cwd=SCR, capture_output=True,
                                 text=True).stdout
            for line in out.splitlines():
                if line.split()[:1] == ['OFFSET']:
                    off = int(line.split()[1])
            if off is None:
                sys.exit(f"bench convert: no data offset for {fname}:{obj}")
        OFFSETS[(fname, obj)] = off
    return OFFSETS[(fname, obj)]


# ---- thesis table 6.5 (bench_etp.c), extents scaled by K = N / 4096;
# (row, column) of the column-major thesis array = (dim 1, dim 0) here
def thesis(case, p, Pn):
    def rng(lo, span, stride):
        """0-based start lo, `span` elements of extent, stride."""
        lo = min(lo, N)
        hi = min(N, lo + span)
        return (lo, (hi - lo + stride - 1) // stride if hi > lo else 0,
                stride)
    k = K
    if case == '6.5-I':
        r = c = rng(p, N - p, Pn)
    elif case == '6.5-II':
        r = c = rng(int(250 * k * p), int(250 * k), 2)
    elif case == '6.5-III':
        r = c = rng(int(200 * k * p), int(500 * k), 3)
    elif case == '6.5-IV':
        r, c = rng(int(64 * k * p), int(64 * k), 2), \
            rng(int(499 * k), int(2001 * k), 3)
    else:  # 6.5-V
        r, c = rng(int(499 * k), int(2001 * k), 3), \
            rng(int(64 * k * p), int(64 * k), 2)
    return (c, r)  # dimension 0 = thesis columns


CASES = ['6.5-I', '6.5-II', '6.5-III', '6.5-IV', '6.5-V']
if args.cases:
    CASES = [c for c in CASES if c in args.cases.split(',')]
if args.quick:
    CASES = CASES[:2]

rows = []  # (case, method, op, seconds list, extra)
res = {}


def add(case, method, op, t, extra=None):
    r = res.setdefault((case, method), {'op': op, 't': [], 'extra': {}})
    if t is not None:
        r['t'].append(t)
    if extra:
        for k, v in extra.items():
            r['extra'][k] = v


loads = [load()]
for rnd in range(args.reps):
    log(f"== convert round {rnd + 1}/{args.reps}: P={P}, {args.regime}, "
        f"load {load():.1f}")
    # launcher alone
    t, _ = timed([MPIEXEC, '-n', str(P), 'true'])
    add('convert', 'launch', 'start-up', t)
    # dd copy of the same bytes
    drop('src.npy')
    if os.path.exists(path('dd.out')):
        os.unlink(path('dd.out'))
    t, p = timed(['dd', 'if=src.npy', 'of=dd.out', 'bs=4M',
                  'conv=fdatasync'])
    add('convert', 'dd-copy', 'copy', t, {'bytes': BYTES,
                                          'check': 'ok' if not p.returncode
                                          else 'FAIL'})
    os.unlink(path('dd.out'))
    # global -> CYCLIC(256) local set
    drop('src.npy', 'l.%d.laf')
    t, p = timed([MPIEXEC, '-n', str(P), PASSION, 'convert', '--no-progress',
                  '--force', 'src.npy', 'l.%d.laf', '--dist',
                  'CYCLIC(256),*'])
    add('convert', 'to-local', 'copy', t, {'bytes': BYTES})
    ok = not p.returncode
    # and back
    drop('l.%d.laf', 'back.npy')
    t, p = timed([MPIEXEC, '-n', str(P), PASSION, 'convert', '--no-progress',
                  '--force', 'l.%d.laf', 'back.npy'])
    ok = ok and not p.returncode
    if rnd == 0 and ok:
        ok = subprocess.run(['cmp', '-s', path('src.npy'), path('back.npy')]
                            ).returncode == 0
    add('convert', 'from-local', 'copy', t, {'bytes': BYTES})
    if rnd == 0 or not ok:
        for m in ('to-local', 'from-local'):
            add('convert', m, 'copy', None, {'check': 'ok' if ok else 'FAIL'})
    # the strided reads
    for case in CASES:
        sects = [thesis(case, q, P) for q in range(P)]
        arg = '/'.join(f"{s[0][0]}:{s[0][1]}:{s[0][2]},"
                       f"{s[1][0]}:{s[1][1]}:{s[1][2]}" for s in sects)
        elems = sum(s[0][1] * s[1][1] for s in sects)
        runs = sum(s[0][1] * (s[1][1] if s[1][2] > 1 else 1) for s in sects)
        for fname, obj in (('x.nc', 'u'), ('x.h5', '/data')):
            off, n = span_of(fname, obj, sects)
            drop(fname)
            t, p = timed(['dd', f"if={fname}", 'of=/dev/null', 'bs=4M',
                          'iflag=skip_bytes,count_bytes', f"skip={off}",
                          f"count={n}"])
            add(case, f"dd-span-{fname.split('.')[1]}", 'read', t,
                {'bytes': n, 'span_bytes': n,
                 'check': 'ok' if not p.returncode else 'FAIL'})
        for method, fname in (('passion', 'x.nc:u'),
                              ('hdf5-coll', 'x.h5'),
                              ('hdf5-indep', 'x.h5')):
            if method == 'hdf5-indep' and runs > (1 << 20):
                add(case, method, 'read', None,
                    {'check': f"skipped ({runs} requests)"})
                continue
            t, p = timed([MPIEXEC, '-n', str(P), BENCH, '--file', fname,
                          '--n', str(N), '--method', method, '--sect', arg,
                          '--regime', 'cold' if cold else 'warm'])
            line = (p.stdout.strip().splitlines() or [''])[-1].split(',')
            if p.returncode or len(line) != 4:
                add(case, method, 'read', None, {'check': 'FAIL'})
                continue
            add(case, method, 'read', float(line[0]),
                {'bytes': elems * 4, 'bytes_read': line[1],
                 'io_calls': line[2],
                 'check': line[3] if res.get((case, method), {}).get(
                     'extra', {}).get('check', 'ok') == 'ok' else 'FAIL',
                 'section': arg})
    loads.append(load())

# ---- CSV
csvp = os.path.join(args.out, 'convert.csv')
head = ['case', 'method', 'op', 'procs', 'regime', 'size_bytes', 'bytes',
        'seconds', 'min_seconds', 'device_seconds', 'fraction_of_device',
        'fraction_less_launch', 'MB_per_s', 'bytes_read', 'io_calls', 'reps', 'load', 'check',
        'section']
with open(csvp, 'w', newline='') as f:
    w = csv.DictWriter(f, fieldnames=head)
    w.writeheader()
    for (case, method), r in res.items():
        t = r['t']
        ex = r['extra']
        row = {'case': case, 'method': method, 'op': r['op'], 'procs': P,
               'regime': args.regime, 'size_bytes': BYTES,
               'bytes': ex.get('bytes', ''), 'reps': len(t),
               'load': f"{min(loads):.1f}-{max(loads):.1f}",
               'check': ex.get('check', 'ok' if t else ''),
               'bytes_read': ex.get('bytes_read', ''),
               'io_calls': ex.get('io_calls', ''),
               'section': ex.get('section', '')}
        if t:
            med = statistics.median(t)
            row['seconds'] = f"{med:.6g}"
            row['min_seconds'] = f"{min(t):.6g}"
            if ex.get('bytes'):
                row['MB_per_s'] = f"{ex['bytes'] / med / 1e6:.1f}"
            # the device's time for the same bytes, same round set
            dev = None
            if case == 'convert' and method in ('to-local', 'from-local'):
                dev = res.get(('convert', 'dd-copy'))
            elif method == 'passion':
                dev = res.get((case, 'dd-span-nc'))
            elif method.startswith('hdf5'):
                dev = res.get((case, 'dd-span-h5'))
            if dev and dev['t']:
                dm = statistics.median(dev['t'])
                row['device_seconds'] = f"{dm:.6g}"
                row['fraction_of_device'] = f"{dm / med:.3f}"
                la = res.get(('convert', 'launch'))
                if case == 'convert' and la and la['t'] and \
                        med > statistics.median(la['t']):
                    row['fraction_less_launch'] = \
                        f"{dm / (med - statistics.median(la['t'])):.3f}"
        w.writerow(row)
log(f"bench convert: {csvp}; load {min(loads):.1f}-{max(loads):.1f}")
for n in ('l.%d.laf', 'back.npy'):
    for q in range(P):
        p = path(n.replace('%d', str(q)))
        if os.path.exists(p):
            os.unlink(p)
for n in ('back.npy', 'l.laf.passion'):
    if os.path.exists(path(n)):
        os.unlink(path(n))
