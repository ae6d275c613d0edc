"""The Python examples (examples/python), run in this job with small
sizes, their results checked against numpy."""
import importlib.util
import os

import numpy as np
import pytest

from conftest import barrier

EX = os.environ.get("PASSION_EXAMPLES", os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "examples", "python"))


def load(name):
    spec = importlib.util.spec_from_file_location(
        "ex_" + name, os.path.join(EX, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_strided(ctx, shared, capsys):
    n, m = 101, 83
    path, sec = load("strided").main(shared, n, m, ctx=ctx)
    a = np.arange(n * m, dtype=np.float64).reshape(n, m)
    assert np.array_equal(sec, a[ctx.rank::ctx.size, 1::7])
    a[:, 1::7] *= -1
    barrier()
    assert np.array_equal(np.load(path), a)
    if ctx.rank == 0:
        assert "checksum of a[::3, ::-11] = %.1f" % a[::3, ::-11].sum() in \
            capsys.readouterr().out


def test_slab_prefetch(ctx, shared):
    n, m = 203, 17
    total, c = load("slab_prefetch").main(shared, n, m, ctx=ctx, width=8)
    f = ctx.open(os.path.join(shared, "out.%d.laf"), shape=(n, m),
                 dtype=np.float32)
    lo, hi = f.local_bounds()
    got = f.read()
    f.close()
    i, j = np.indices((hi[0] - lo[0] + 1, m))
    want = np.sqrt((i + lo[0] + j / m).astype(np.float32)) + 1
    assert np.array_equal(got, want.astype(np.float32))
    assert total == pytest.approx(float(want.astype(np.float64).sum()))
    if hi[0] - lo[0] + 1 > 8:  # more than one slab: prefetched
        assert c["prefetch_hits"] > 0


def jacobi(n, m, iters):
    u = np.zeros((n, m))
    u[0] = 1.0
    for _ in range(iters):
        v = u.copy()
        v[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] +
                                u[1:-1, :-2] + u[1:-1, 2:])
        u = v
    return u


@pytest.mark.parametrize("iters", [1, 6])
def test_stencil(ctx, shared, iters):
    n, m = 61, 19
    final, mine, (lo, hi) = load("stencil").main(shared, n, m, iters,
                                                 ctx=ctx, width=5)
    ref = jacobi(n, m, iters)
    np.testing.assert_allclose(mine, ref[lo:hi + 1], rtol=0, atol=1e-15)
    assert os.path.exists(final.replace("%d", str(ctx.rank)))
