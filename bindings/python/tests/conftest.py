"""
Shared fixtures of the Python tests. They run under mpiexec: every rank
runs the same tests in the same order (the collective calls match), and
each rank checks its own results against numpy reading the same files.

PASSION_PYTEST_DIR: a directory all ranks share (meson sets one per rank
count); PASSION_TEST_SEED: the seed of the random cases (printed with
every failure).
"""
import ctypes
import os
import shutil

import pytest

import passion
from passion import _lib

SEED = int(os.environ.get("PASSION_TEST_SEED", "20261123"))


def barrier():
    """MPI_Barrier on the world (files written by one rank with numpy
    are complete before the others look)."""
    h = _lib.lib()
    f = h.MPI_Barrier
    f.restype, f.argtypes = ctypes.c_int, [_lib.abi.comm_t]
    assert f(_lib.abi.world) == 0


@pytest.fixture(scope="session")
def ctx():
    c = passion.init({"memory_budget": "1M"})
    yield c
    c.finalize()


@pytest.fixture
def shared(request, ctx):
    """A fresh directory for this test, the same path on every rank."""
    top = os.environ.get("PASSION_PYTEST_DIR", os.path.abspath(
        "pytest-np%d" % ctx.size))
    d = os.path.join(top, request.node.name.replace("[", "-").strip("]"))
    barrier()
    if ctx.rank == 0:
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    barrier()
    return d


@pytest.fixture
def seed():
    return SEED


def rand_key(rng, shape, ints=True, neg=True):
    """A random numpy index for shape: integers (negative too), slices
    with any start/stop (None, negative, past the end) and step (negative
    too), sometimes an Ellipsis in place of leading or trailing ':'."""
    key = []
    for n in shape:
        r = rng.random()
        if ints and r < 0.15:
            key.append(int(rng.integers(-n, n)))
        elif r < 0.25:
            key.append(slice(None))
        else:
            step = int(rng.integers(1, max(2, n // 3) + 1))
            if neg and rng.random() < 0.25:
                step = -step
            a = None if rng.random() < 0.3 else int(rng.integers(-n - 2,
                                                                  n + 3))
            b = None if rng.random() < 0.3 else int(rng.integers(-n - 2,
                                                                  n + 3))
            key.append(slice(a, b, step))
    r = rng.random()
    if r < 0.15 and len(key) > 1 and key[0] == slice(None):
        key = [Ellipsis] + key[1:]
    elif r < 0.3 and len(key) > 1 and key[-1] == slice(None):
        key = key[:-1] + [Ellipsis]
    return tuple(key)
