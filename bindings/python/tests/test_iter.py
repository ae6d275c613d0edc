"""Slab iteration over local array files and partition iteration over
global ones, against numpy."""
import os

import numpy as np
import pytest

import passion
from conftest import barrier


def glob_value(i, j):
    return i * 1000.0 + j


@pytest.mark.parametrize("prefetch,reuse,order", [(True, True, "C"),
                                                  (False, False, "C"),
                                                  (True, True, "F")])
def test_slabs(ctx, shared, prefetch, reuse, order):
    N, M = 37, 11
    dim = 0 if order == "C" else 1  # rows distributed, slabs along dim
    shape = (N, M) if order == "C" else (M, N)
    grid = (ctx.size, 1) if order == "C" else (1, ctx.size)
    ghost = (1, 1)
    u = ctx.create(os.path.join(shared, "u.%d.laf"), shape, np.float64,
                   order=order, grid=grid, ghost=ghost)
    v = ctx.create(os.path.join(shared, "v.%d.laf"), shape, np.float64,
                   order=order, grid=grid, ghost=ghost)
    lo, hi = u.local_bounds()
    assert u.local_shape[dim] == hi[dim] - lo[dim] + 1
    # fill u's interior with its global index, slab by slab (write-back)
    seen = 0
    for s in u.slabs(width=3, writeback=True, prefetch=prefetch,
                     reuse=reuse):
        assert s.dim == dim and s.count <= 3
        assert s.interior.shape[dim] == s.count
        idx = np.indices(s.interior.shape)
        gi = idx[0] + lo[0] + (s.start if dim == 0 else 0)
        gj = idx[1] + lo[1] + (s.start if dim == 1 else 0)
        s.interior[...] = glob_value(gi, gj)
        s.dirty()
        seen += s.count
    assert seen == u.local_shape[dim]
    # the file holds it (ghosts zero)
    full = u.read_local()
    g = np.indices(u.local_shape)
    want = glob_value(g[0] + lo[0], g[1] + lo[1])
    assert np.array_equal(full[1:-1, 1:-1], want)
    assert not full[0].any() and not full[-1].any()
    assert np.array_equal(u.read(), want)
    # ghost exchange, then a halo-1 loop: out = in + the neighbours
    # along dim (halo cells from the next slabs or the ghosts)
    u.shift_all(dim, 0)
    for s in u.slabs(width=4, halo=1, out=v, prefetch=prefetch,
                     reuse=reuse):
        d = s.data
        o = s.offset
        a = np.moveaxis(d, dim, 0)
        out = np.moveaxis(s.out, dim, 0)
        oo = o[dim]
        other = o[1 - dim]
        n_other = u.local_shape[1 - dim]
        mid = a[oo:oo + s.count, other:other + n_other]
        up = a[oo - 1:oo - 1 + s.count, other:other + n_other]
        down = a[oo + 1:oo + 1 + s.count, other:other + n_other]
        out[...] = mid + up + down
    # reference: the global array, neighbours outside it are 0
    G = glob_value(*np.indices(shape)).astype(float)
    Gm = np.moveaxis(G, dim, 0)
    pad = np.zeros((Gm.shape[0] + 2, Gm.shape[1]))
    pad[1:-1] = Gm
    ref = np.moveaxis(pad[1:-1] + pad[:-2] + pad[2:], 0, dim)
    box = tuple(slice(l, h + 1) for l, h in zip(lo, hi))
    got = v.read()
    assert np.array_equal(got, ref[box]), (ctx.rank, lo, hi)
    assert ctx.counters()["bytes_written"] > 0
    v.close()
    u.close()


def test_slab_ghost_keys(ctx, shared):
    """ghosts=True addresses the ghost cells of a local file."""
    with ctx.create(os.path.join(shared, "g.%d.laf"), (4 * ctx.size, 5),
                    np.int32, ghost=(2, 0)) as f:
        f.write(np.s_[...], 7)
        f.write(np.s_[:2], 1, ghosts=True)
        f.write(np.s_[-2:], 2, ghosts=True)
        full = f.read(ghosts=True)
        assert full.shape == (8, 5)
        assert (full[:2] == 1).all() and (full[-2:] == 2).all()
        assert (full[2:-2] == 7).all()
        assert np.array_equal(full, f.read_local())
        with pytest.raises(passion.Error) as e:
            f.read(np.s_[4])  # local shape is 4 rows
        assert e.value.code == passion.PASSION_ERANGE


def test_parts(ctx, shared):
    """Partitions of a global file: out = 2 * in + 1, checked by numpy."""
    N, M = 45, 7
    src = os.path.join(shared, "p.npy")
    dst = os.path.join(shared, "q.npy")
    ref = np.arange(N * M, dtype=np.float32).reshape(N, M)
    if ctx.rank == 0:
        np.save(src, ref)
    barrier()
    f = ctx.open(src, placement="partitioned")
    assert f.grid == (ctx.size, 1)
    g = ctx.create(dst, (N, M), np.float32, placement="partitioned")
    n = 0
    for p in f.parts(width=8, out=g, halo=1):
        box = tuple(slice(l, l + c) for l, c in zip(p.lo, p.count))
        assert np.array_equal(p.interior, ref[box])
        p.out[...] = 2 * p.interior + 1
        n += 1
    assert n == (N + 7) // 8
    g.close()
    f.close()
    barrier()
    assert np.array_equal(np.load(dst), 2 * ref + 1)
