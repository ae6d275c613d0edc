"""mpi4py communicators: accepted when mpi4py's MPI module is linked with
the MPI library libpassion uses (Debian's mpi4py: Open MPI), refused with
PASSION_ENOTSUP naming both libraries otherwise. Which case applies is
found independently of the binding: a separate Python process without
passion asks mpi4py for its MPI's version string, which is compared with
the one libpassion's MPI gives."""
import os
import subprocess
import sys

import numpy as np
import pytest

import passion
from conftest import barrier

# mpi4py must not start MPI on its own in the child (nor in the mismatch
# check's child): rc.initialize = False
PROBE = ("import mpi4py; mpi4py.rc.initialize = False; mpi4py.rc.finalize "
         "= False; from mpi4py import MPI; v = MPI.Get_library_version(); "
         "print(v.replace(chr(0), '').splitlines()[0].strip())")


def mpi4py_version():
    """mpi4py's MPI version line, or None without mpi4py (in a child
    process: loading another MPI into this one is what is tested)."""
    r = subprocess.run([sys.executable, "-c", PROBE], capture_output=True,
                       text=True, timeout=60)
    return r.stdout.strip() if r.returncode == 0 else None


@pytest.fixture(scope="module")
def same_mpi(ctx):
    v = mpi4py_version() if ctx.rank == 0 else None
    # every rank takes the same branch: rank 0's answer through a file
    d = os.environ.get("PASSION_PYTEST_DIR", os.path.abspath("."))
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "mpi4py-version.txt")
    if ctx.rank == 0:
        with open(path, "w") as f:
            f.write("" if v is None else v)
    barrier()
    with open(path) as f:
        v = f.read()
    barrier()
    if not v:
        pytest.skip("mpi4py is not installed for %s" % sys.executable)
    ours = passion.mpi_library_version().splitlines()[0].strip()
    return v == ours


def test_mpi4py_comm(ctx, shared, same_mpi):
    """A split communicator from mpi4py: the context has its ranks, and a
    collective write of each half's file equals numpy's array."""
    if not same_mpi:
        pytest.skip("mpi4py uses another MPI (test_mpi4py_other_mpi)")
    from mpi4py import MPI
    w = MPI.COMM_WORLD
    assert w.Get_size() == ctx.size and w.Get_rank() == ctx.rank
    with passion.init(comm=w) as c:
        assert (c.rank, c.size) == (ctx.rank, ctx.size)
    color = ctx.rank % 2
    sub = w.Split(color, ctx.size - ctx.rank)  # reversed rank order
    try:
        with passion.init({"memory_budget": "64K"}, comm=sub) as c:
            assert c.size == sub.Get_size() and c.rank == sub.Get_rank()
            assert c.rank == (c.size - 1) - (ctx.rank // 2)
            path = os.path.join(shared, "half%d.npy" % color)
            n, m = 37, 11
            ref = np.arange(n * m, dtype=np.int32).reshape(n, m) * (color + 1)
            with c.create(path, (n, m), np.int32) as f:
                f.write_all(np.s_[c.rank::c.size], ref[c.rank::c.size])
                got = f.read_all(np.s_[::-3, 1::4])
            assert np.array_equal(got, ref[::-3, 1::4])
            sub.Barrier()
            assert np.array_equal(np.load(path), ref)
            # the Fortran handle of the same communicator works too
            with passion.init(comm=sub.py2f()) as c2:
                assert (c2.rank, c2.size) == (c.rank, c.size)
    finally:
        sub.Free()
    # MPI_COMM_NULL is refused by the library (every rank passes it)
    with pytest.raises(passion.Error) as e:
        passion.init(comm=MPI.COMM_NULL)
    assert e.value.code == passion.PASSION_ESTATE


CHILD = r"""
import mpi4py
mpi4py.rc.initialize = False
mpi4py.rc.finalize = False
from mpi4py import MPI
import passion
try:
    passion.init(comm=MPI.COMM_WORLD)
except passion.Error as e:
    print("CODE", e.code)
    print("DETAIL", e.detail)
else:
    print("ACCEPTED")
"""


def test_mpi4py_other_mpi(ctx, same_mpi):
    """mpi4py of another MPI: PASSION_ENOTSUP before MPI starts, naming
    both MPI libraries (in a child process, without mpiexec: no MPI is
    initialised there)."""
    if same_mpi:
        pytest.skip("mpi4py uses passion's MPI (test_mpi4py_comm)")
    err = None
    if ctx.rank == 0:
        try:
            child_refuses()
        except Exception as e:  # reported after the barrier: no hang
            err = e
    barrier()
    if err is not None:
        raise err


def child_refuses():
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True,
                       text=True, timeout=120)
    out = r.stdout
    assert r.returncode == 0, r.stderr
    assert "CODE %d" % passion.PASSION_ENOTSUP in out, out + r.stderr
    assert "mpi4py is built against another MPI library" in out
    # both libraries by path, and they differ
    detail = out.split("DETAIL ", 1)[1]
    theirs = detail.split("mpi4py: ", 1)[1].split(";", 1)[0]
    ours = detail.split("passion: ", 1)[1].split(", ", 1)[0]
    assert os.path.exists(theirs) and os.path.exists(ours), detail
    assert theirs != ours
    assert " ".join(passion.mpi_library_version().splitlines()[0].split()) \
        in detail


def test_comm_kinds(ctx):
    with pytest.raises(TypeError):
        passion.init(comm=True)
    with pytest.raises(TypeError):
        passion.init(comm=1.5)
