"""The binding itself: struct layouts against the compiler's, version,
options, counters, errors (codes, names, details, every rank failing
together), lifetimes."""
import ctypes
import json
import os
import subprocess

import numpy as np
import pytest

import passion
from passion import _lib
from conftest import barrier


def test_layout():
    """Every ctypes struct has the C struct's size and field offsets."""
    exe = os.environ.get("PASSION_LAYOUT_EXE")
    if not exe:
        pytest.skip("PASSION_LAYOUT_EXE not set (run by meson test)")
    c = json.loads(subprocess.check_output([exe]))
    assert set(c) == set(_lib.STRUCTS)
    for name, st in _lib.STRUCTS.items():
        assert ctypes.sizeof(st) == c[name]["__size__"], name
        fields = [f for f, _ in st._fields_]
        assert set(fields) == set(c[name]) - {"__size__"}, name
        for f in fields:
            assert getattr(st, f).offset == c[name][f], (name, f)


def test_version(ctx):
    v = passion.version()
    assert v.count(".") == 2 and v.split(".")[0] == "1"
    assert passion.mpi_library_version()
    assert os.path.exists(passion.library_path()) or \
        "libpassion" in passion.library_path()
    assert passion.strerror(passion.PASSION_ERANGE)


def test_options(ctx):
    assert ctx.option("memory_budget") == str(1 << 20)
    with passion.init("memory_budget=2M,exchange=pairwise") as c2:
        assert c2.option("memory_budget") == str(2 << 20)
        assert c2.option("exchange") == "pairwise"
        assert c2.size == ctx.size and c2.rank == ctx.rank
    with passion.init({"memory_budget": 3 << 20, "direct_io": False,
                       "io_latency": 1e-4}) as c3:
        assert c3.option("memory_budget") == str(3 << 20)
        assert c3.option("direct_io") == "0"
        assert float(c3.option("io_latency")) == 1e-4
    with pytest.raises(passion.Error) as e:
        passion.init({"no_such_key": 1})
    assert e.value.code == passion.PASSION_EINVAL
    assert e.value.name == "PASSION_EINVAL"
    assert "no_such_key" in e.value.detail
    with pytest.raises(passion.Error) as e:
        passion.init("memory_budget=lots")
    assert e.value.code == passion.PASSION_EINVAL and e.value.detail
    with pytest.raises(passion.Error) as e:
        ctx.option("nope")
    assert e.value.code == passion.PASSION_EINVAL


def test_init_detail(ctx):
    """A failed passion_init leaves no context: the error carries init's
    own detail. At one rank, a launcher of another MPI simulated by its
    variable (and this MPI's own launcher's removed) is refused."""
    if ctx.size != 1:
        pytest.skip("MPI_COMM_WORLD must have one rank")
    own = ("PMI_SIZE" if passion.mpi_library_version().startswith("MPICH")
           else "OMPI_COMM_WORLD_SIZE")
    saved = {k: os.environ.get(k) for k in (own, "PMI_SIZE",
                                            "OMPI_COMM_WORLD_SIZE")}
    try:
        os.environ.pop(own, None)
        foreign = "OMPI_COMM_WORLD_SIZE" if own == "PMI_SIZE" else "PMI_SIZE"
        os.environ[foreign] = "3"
        with pytest.raises(passion.Error) as e:
            passion.init()
        assert e.value.code == passion.PASSION_EINVAL
        assert foreign + "=3" in e.value.detail
        assert "start it with mpiexec." in e.value.detail
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    with passion.init() as c2:
        assert c2.size == 1


def test_counters(ctx, shared):
    ctx.reset_counters()
    c = ctx.counters()
    assert set(c) == {"io_calls", "bytes_read", "bytes_written",
                      "bytes_useful", "messages_sent", "bytes_sent",
                      "rounds", "peak_staging", "reuse_bytes",
                      "prefetch_hits", "t_io", "t_comm",
                      "messages_intra_node", "bytes_intra_node",
                      "messages_inter_node", "bytes_inter_node"}
    assert c["bytes_read"] == 0 and c["bytes_written"] == 0
    with ctx.create(os.path.join(shared, "c.npy"), (100, 10), "f8") as f:
        ctx.reset_counters()
        f.write_all(np.s_[ctx.rank::ctx.size], 1.0)
        f.read(np.s_[:, 3])
        c = ctx.counters()
    rows = len(range(ctx.rank, 100, ctx.size))
    assert c["bytes_useful"] == rows * 10 * 8 + 100 * 8
    assert c["bytes_read"] > 0 and c["io_calls"] > 0
    assert isinstance(c["t_io"], float)
    assert ctx.engine() in ("uring", "thread")
    # one machine: every rank shares memory with every other
    assert ctx.node() == {"node_id": 0, "nnodes": 1, "node_rank": ctx.rank,
                          "node_size": ctx.size}


def test_error_every_rank(ctx, shared):
    """An index out of range on one rank of a collective: every rank
    raises passion.Error(PASSION_ERANGE), the context works afterwards."""
    path = os.path.join(shared, "e.npy")
    with ctx.create(path, (10, 4), np.int16) as f:
        last = ctx.size - 1
        for key in [np.s_[10, :], np.s_[-11, 2], np.s_[3, 4]]:
            with pytest.raises(passion.Error) as e:
                f.read_all(key if ctx.rank == last else np.s_[:, 1])
            assert e.value.code == passion.PASSION_ERANGE
            assert e.value.name == "PASSION_ERANGE"
            assert "rank %d" % last in e.value.detail
            with pytest.raises(passion.Error) as e:
                f.write_all(key if ctx.rank == last else None, 1)
            assert e.value.code == passion.PASSION_ERANGE
        # a Python error on one rank (bad broadcast) fails every rank
        with pytest.raises((ValueError, passion.Error)) as e:
            f.write_all(np.s_[:2, :2], np.zeros(3 if ctx.rank == last
                                                else 2))
        if ctx.rank == last:
            assert e.type is ValueError
        else:
            assert e.value.code == passion.PASSION_EINVAL
        with pytest.raises((IndexError, passion.Error)):
            f.read_all(np.s_[1, 2, 3] if ctx.rank == 0 else np.s_[1])
        # independent: only this rank
        with pytest.raises(passion.Error) as e:
            f.read(np.s_[:, 7])  # an integer past the end (slices clip)
        assert e.value.code == passion.PASSION_ERANGE
        with pytest.raises(IndexError):
            f.read(np.s_[1, 2, 3])
        with pytest.raises(IndexError):
            f.read(np.s_[[1, 2]])
        with pytest.raises(KeyError):
            f.read(np.s_[:], method="fastest")
        # the context still works
        assert np.array_equal(f.read_all(np.s_[2]), np.zeros(4, np.int16))
    with pytest.raises(passion.Error) as e:
        f.read()
    assert e.value.code == passion.PASSION_ESTATE


def test_open_errors(ctx, shared):
    path = os.path.join(shared, "o.npy")
    with pytest.raises(passion.Error) as e:
        ctx.open(path)
    assert e.value.code == passion.PASSION_ENOENT
    assert "o.npy" in e.value.detail
    ctx.create(path, (5, 5), np.float32).close()
    with pytest.raises(passion.Error) as e:
        ctx.create(path, (5, 5), np.float32, exclusive=True)
    assert e.value.code == passion.PASSION_EEXIST
    with pytest.raises(passion.Error) as e:
        ctx.open(path, shape=(5, 6))
    assert e.value.code == passion.PASSION_EFORMAT
    with pytest.raises(passion.Error) as e:
        ctx.open(path, dtype=np.int32)
    assert e.value.code == passion.PASSION_EFORMAT
    raw = os.path.join(shared, "short.bin")
    if ctx.rank == 0:
        np.zeros(10, np.uint8).tofile(raw)
    barrier()
    with pytest.raises(passion.Error) as e:
        ctx.open(raw, shape=(11,), dtype=np.uint8)
    assert e.value.code == passion.PASSION_ESHORT
    with pytest.raises(passion.Error) as e:
        ctx.open(raw)  # a raw file has no header
    assert e.value.code == passion.PASSION_EFORMAT
    with pytest.raises(TypeError):
        ctx.create(os.path.join(shared, "s.npy"), (3,), "U4")
    with pytest.raises(ValueError):
        ctx.open(path, "w")


def test_lifetimes(shared):
    """finalize closes what is left, children first; a closed context or
    file raises PASSION_ESTATE."""
    c = passion.init()
    f = c.create(os.path.join(shared, "l.%d.laf"), (8, 3), np.float64)
    it = f.slabs()
    next(it)
    c.finalize()
    assert f._f is None and it._h is None
    c.finalize()  # a no-op
    with pytest.raises(passion.Error) as e:
        c.counters()
    assert e.value.code == passion.PASSION_ESTATE


def test_comm_argument(ctx):
    with pytest.raises(TypeError):
        passion.init(comm="world")


def test_last_method(shared):
    """ctx.last_method(): "auto" before any access, the fixed method given
    (no prediction), auto resolved with a positive prediction equal on
    every rank (compared through files), an independent sieve read,
    "auto" after a collective call that failed; reads checked against
    numpy."""
    with passion.init({"memory_budget": "1M"}) as c:
        assert c.last_method() == ("auto", 0.0)
        path = os.path.join(shared, "lm.npy")
        v = np.arange(600, dtype=np.float64)
        with c.create(path, (600,), np.float64) as f:
            if c.rank == 0:
                f.write(np.s_[:], v, method="direct")
            assert c.last_method() == ("direct" if c.rank == 0 else "auto",
                                       0.0)
            barrier()
            key = np.s_[c.rank::c.size]
            for m in ("direct", "sieve", "etp-static", "etp-dynamic"):
                assert np.array_equal(f.read_all(key, method=m), v[key])
                assert c.last_method() == (m, 0.0)
            assert np.array_equal(f.read_all(key), v[key])
            m, pred = c.last_method()
            assert m in ("direct", "sieve", "etp-static", "etp-dynamic")
            assert pred > 0
            with open(os.path.join(shared, "pred.%d" % c.rank), "w") as o:
                o.write(repr(pred))
            barrier()
            for r in range(c.size):
                with open(os.path.join(shared, "pred.%d" % r)) as i:
                    assert float(i.read()) == pred
            assert np.array_equal(f.read(key, method="sieve"), v[key])
            assert c.last_method() == ("sieve", 0.0)
            # an index past the end on the last rank: every rank raises
            bad = 600 if c.rank == c.size - 1 else 0
            with pytest.raises((passion.Error, IndexError)):
                f.read_all(bad)
            assert c.last_method() == ("auto", 0.0)
    with pytest.raises(passion.Error):
        c.last_method()
