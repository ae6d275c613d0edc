"""Sections in numpy's index syntax against numpy on the same file:
random keys (fixed seed, printed on failure), collective and independent,
reads and writes, every supported element type, C and Fortran order,
raw and .npy files."""
import os

import numpy as np
import pytest

from conftest import barrier, rand_key

CASES = 25

# (dtype in the file, shape, order)
TYPES = [("<f8", (37, 53), "C"), ("<i4", (64, 9), "F"), ("|u1", (211,), "C"),
         ("<c16", (6, 7, 11), "C"), (">f4", (23, 31), "C"),
         ("|b1", (19, 17), "F"), (">i8", (5, 6, 7), "F"),
         ("<u2", (41, 13), "C")]


def ref_array(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    if dt.kind == "b":
        a = rng.random(n) < 0.5
    elif dt.kind == "c":
        a = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    elif dt.kind == "f":
        a = rng.standard_normal(n)
    else:
        info = np.iinfo(dt)
        a = rng.integers(max(info.min, -1 << 30), min(info.max, 1 << 30),
                         n, endpoint=True)
    return a.astype(dt.newbyteorder("=")).reshape(shape)


def make_file(ctx, d, fmt, dtype, shape, order, ref):
    """ref written by rank 0 with numpy; opened by every rank."""
    dt = np.dtype(dtype)
    path = os.path.join(d, "ref." + ("npy" if fmt == "npy" else "bin"))
    if ctx.rank == 0:
        if fmt == "npy":
            np.save(path, np.asarray(ref, dtype=dt, order=order))
        else:
            (ref.T if order == "F" else ref).astype(dt).tofile(path)
    barrier()
    if fmt == "npy":
        return ctx.open(path, "r+")
    return ctx.open(path, "r+", shape=shape, dtype=dt, order=order)


def numpy_view(path, fmt, dtype, shape, order):
    if fmt == "npy":
        return np.load(path)
    a = np.fromfile(path, dtype=dtype)
    return a.reshape(shape[::-1]).T if order == "F" else a.reshape(shape)


def fmts():
    return ["raw", "npy"]


@pytest.mark.parametrize("fmt", fmts())
@pytest.mark.parametrize("dtype,shape,order", TYPES)
def test_read(ctx, shared, seed, fmt, dtype, shape, order):
    ref = ref_array(dtype, shape, seed)
    f = make_file(ctx, shared, fmt, dtype, shape, order, ref)
    with f:
        assert f.shape == tuple(shape)
        assert f.file_dtype == np.dtype(dtype)
        assert f.dtype == np.dtype(dtype).newbyteorder("=")
        rng = np.random.default_rng([seed, ctx.rank])
        for case in range(CASES):
            key = rand_key(rng, shape)
            what = "seed %d rank %d case %d key %r" % (seed, ctx.rank, case,
                                                       key)
            got = f.read_all(key, method=["auto", "direct", "sieve",
                                          "etp-static",
                                          "etp-dynamic"][case % 5])
            want = ref[key]
            assert got.shape == want.shape, what
            assert got.dtype == f.dtype, what
            assert np.array_equal(got, want), what
            got = f.read(key)
            assert np.array_equal(got, want), what
            assert np.array_equal(f[key], want), what


@pytest.mark.parametrize("fmt", fmts())
@pytest.mark.parametrize("dtype,shape,order", TYPES)
def test_write_all(ctx, shared, seed, fmt, dtype, shape, order):
    """Every rank writes its random section (overlaps: the highest rank
    wins, as numpy assignments in rank order); every rank then compares
    the whole file, read by numpy, with the reference."""
    dt = np.dtype(dtype)
    ext = ".npy" if fmt == "npy" else ".bin"
    path = os.path.join(shared, "w" + ext)
    ref = np.zeros(shape, dt.newbyteorder("="))
    fails = []
    with ctx.create(path, shape, dt, order=order) as f:
        for case in range(CASES // 5):
            keys, vals = [], []
            for r in range(ctx.size):
                rng = np.random.default_rng([seed, r, case])
                key = rand_key(rng, shape)
                keys.append(key)
                vals.append(ref_array(dtype, ref[key].shape,
                                      [seed, r, case, 1]))
            for r in range(ctx.size):
                ref[keys[r]] = vals[r]
            me = ctx.rank
            f.write_all(keys[me], vals[me],
                        method=["auto", "etp-dynamic", "direct",
                                "etp-static", "sieve"][case % 5])
            barrier()
            what = "seed %d case %d keys %r" % (seed, case, keys)
            got = numpy_view(path, fmt, dt, shape, order)
            back = f.read_all()
            barrier()
            # checked after the collective calls: a failure on one rank
            # must not leave the others waiting
            fails.append(None if np.array_equal(got, ref) and
                         np.array_equal(back, ref) else what)
    assert not any(fails), [w for w in fails if w]


def test_write_independent(ctx, shared, seed):
    """Each rank writes random keys within its own block of rows (an
    independent sieved write rewrites the holes of its extent, so ranks
    must not interleave) with f.write and f[key] = v; numpy reads the
    result."""
    shape = (29, 41)
    path = os.path.join(shared, "ind.npy")
    ref = np.zeros(shape)
    P = ctx.size
    fails = []
    with ctx.create(path, shape, np.float64) as f:
        for case in range(CASES):
            for r in range(P):
                rng = np.random.default_rng([seed, r, case])
                col = rand_key(rng, shape[1:], ints=(case % 2 == 0))
                lo, hi = r * shape[0] // P, (r + 1) * shape[0] // P
                step = 1 + case % 3
                rows = slice(lo, hi, step) if case % 2 else slice(
                    hi - 1, lo - 1 if lo else None, -step)
                key = (rows,) + col
                v = rng.standard_normal(ref[key].shape)
                ref[key] = v
                if r == ctx.rank:
                    if case % 2:
                        f.write(key, v, method=["auto", "direct",
                                                "sieve"][case % 3])
                    else:
                        f[key] = v
            barrier()
            fails.append(None if np.array_equal(np.load(path), ref) else
                         "seed %d case %d" % (seed, case))
            barrier()
    assert not any(fails), [w for w in fails if w]


def test_broadcast_and_cast(ctx, shared):
    """write takes what numpy assignment takes: scalars, broadcasting,
    other dtypes (cast as numpy casts)."""
    path = os.path.join(shared, "b.npy")
    with ctx.create(path, (8, 6), np.int32) as f:
        f.write_all(np.s_[ctx.rank::ctx.size, :], 7)
        f.write_all(np.s_[0, ::2] if ctx.rank == 0 else None,
                    np.arange(3.7, 0.5, -1.2))
        ref = np.full((8, 6), 7, np.int32)
        ref[0, ::2] = np.arange(3.7, 0.5, -1.2)
        assert np.array_equal(f.read_all(), ref)
        f.write_all(np.s_[1:3], np.arange(6)[None, :] * 10)
        ref[1:3] = np.arange(6)[None, :] * 10
        assert np.array_equal(f.read_all(), ref)


def test_empty(ctx, shared):
    """Empty keys and None (take part with nothing) in collectives."""
    path = os.path.join(shared, "e.npy")
    with ctx.create(path, (10, 10), np.float32) as f:
        assert f.read_all(None).size == 0
        a = f.read_all(np.s_[5:2, :])
        assert a.shape == (0, 10)
        f.write_all(np.s_[3:3], np.zeros((0, 10)))
        f.write_all(None)
        assert f.read(np.s_[:, 4:4]).shape == (10, 0)
