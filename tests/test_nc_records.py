#!/usr/bin/python3
"""test_nc_records.py - netCDF classic record variables (several per file,
their records interleaved) read and written by passion at P ranks, checked
against the netCDF library's own reading (netCDF4-python) and ncdump.

usage: mpiexec -n P python3 test_nc_records.py SCRATCH [--seed S]
(PASSION_LIB: the library; PYTHONPATH: bindings/python)

Files: CDF-1, CDF-2 and CDF-5 made by netCDF4-python and by ncgen (-k 1,
2, 5), each with record variables of several types (byte, short with a
_FillValue, int, float, double with a _FillValue, char; CDF-5 also ubyte,
ushort, uint, int64, uint64) mixed with fixed-size variables, and a file
whose lone record variable has 6-byte records (the format's unpadded
case), and one whose record is larger than the memory budget. Reads: random sections (start, stop, step per dimension, steps
negative too) of every record variable, each rank its own, independent
(auto, direct, sieve) and collective (auto, etp-static, etp-dynamic),
compared with netCDF4-python's array. Writes: a record variable opened
read-write with more records than the file has (the file grows: every
record variable's new records hold its _FillValue or netCDF's default
fill, numrecs is the new count), then collective and independent strided
writes at P ranks (the independent ones one rank at a time: a sieved
write rewrites the bytes between its records), some into the appended
records; netCDF4-python must
read back a numpy model of the whole file, and ncdump of the file must
equal ncdump of a copy that netCDF4-python wrote from the model. A
read-only open asking for more records is refused. Every failure prints
the seed. Exit 0 pass, 1 fail, 77 skip (no netCDF4-python or ncgen).
"""
import ctypes
import os
import shutil
import subprocess
import sys

import numpy as np

try:
    import netCDF4
except ImportError:
    print("netCDF4-python not found (Debian python3-netcdf4): skipped")
    sys.exit(77)
if shutil.which("ncgen") is None or shutil.which("ncdump") is None:
    print("ncgen/ncdump not found (Debian netcdf-bin): skipped")
    sys.exit(77)

import passion
from passion import _lib

SCRATCH = os.path.abspath(sys.argv[1])
SEED = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv \
    else 20261129
ctx = passion.init({"memory_budget": "16K"})
RANK, P = ctx.rank, ctx.size
failures = 0
checks = 0

FORMATS = {1: "NETCDF3_CLASSIC", 2: "NETCDF3_64BIT_OFFSET",
           5: "NETCDF3_64BIT_DATA"}
DIMS = [("time", None), ("y", 5), ("x", 7), ("c", 3), ("y2", 41),
        ("x2", 53)]
NREC = 6
# (name, numpy type, dimensions, _FillValue or None); fixed-size ones
# between the record variables
VARS = [("b", "i1", ("time", "y"), None),
        ("s", "i2", ("time", "y", "x"), -99),
        ("fx", "f8", ("y", "x"), None),
        ("i", "i4", ("time",), None),
        ("f", "f4", ("time", "y", "x"), None),
        ("d", "f8", ("time", "x"), 1.5),
        ("ch", "S1", ("time", "c"), None),
        ("fi", "i4", ("x",), None)]
VARS5 = [("ub", "u1", ("time", "x"), None),
         ("us", "u2", ("time", "y"), 7),
         ("ui", "u4", ("time",), None),
         ("l", "i8", ("time", "c"), None),
         ("ul", "u8", ("time", "y"), None)]
LONE = [("lone", "i2", ("time", "c"), None), ("w", "f4", ("y",), None)]
# a record larger than the memory budget (16K): filled in pieces
BIG = [("big", "f8", ("time", "y2", "x2"), None), ("t", "i2", ("time",), -5)]
CDL_TYPE = {"i1": "byte", "i2": "short", "i4": "int", "f4": "float",
            "f8": "double", "S1": "char", "u1": "ubyte", "u2": "ushort",
            "u4": "uint", "i8": "int64", "u8": "uint64"}


def check(cond, msg):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print(f"FAIL (seed {SEED}, rank {RANK} of {P}): {msg}", flush=True)
    return cond


def barrier():
    h = _lib.lib()
    f = h.MPI_Barrier
    f.restype, f.argtypes = ctypes.c_int, [_lib.abi.comm_t]
    assert f(_lib.abi.world) == 0


def path(name):
    return os.path.join(SCRATCH, name)


def shape_of(dims, nrec):
    size = dict(DIMS)
    return tuple(nrec if d == "time" else size[d] for d in dims)


def values(rng, t, shape):
    if t == "S1":
        return rng.integers(65, 91, shape).astype("u1").view("S1")
    if t[0] == "f":
        return (rng.integers(-2000, 2000, shape) / 8).astype(t)
    info = np.iinfo(t)
    return rng.integers(info.min, info.max, shape, dtype=t, endpoint=True)


def type_of(a):
    """The schema's name of an array's type ("S1" for char)."""
    return "S1" if a.dtype.kind == "S" else a.dtype.str[1:]


def fill_of(t, fill):
    """The value netCDF writes into records nobody wrote."""
    if fill is not None:
        return np.array(fill, t)
    if t == "S1":
        return np.array(b"\0", "S1")
    return np.array(netCDF4.default_fillvals[t], t)


def make_py(name, version, vars_, rng):
    """A file written by netCDF4-python."""
    with netCDF4.Dataset(path(name), "w", format=FORMATS[version]) as nc:
        for d, n in DIMS:
            nc.createDimension(d, n)
        for v, t, dims, fill in vars_:
            x = nc.createVariable(v, t, dims, fill_value=fill)
            x.set_auto_maskandscale(False)
            x.set_auto_chartostring(False)
            x[...] = values(rng, t, shape_of(dims, NREC))
        nc.title = "passion record variables"


def cdl_value(t, a):
    if t == "S1":
        return '"' + "".join(chr(c) for c in a.view("u1").ravel()) + '"'
    return ", ".join(repr(float(x)) if t[0] == "f" else str(int(x))
                     for x in a.ravel())


def make_ncgen(name, version, vars_, rng):
    """A file written by ncgen from CDL."""
    lines = ["netcdf t {", "dimensions:"]
    for d, n in DIMS:
        lines.append(f"  {d} = {'UNLIMITED' if n is None else n} ;")
    lines.append("variables:")
    for v, t, dims, fill in vars_:
        lines.append(f"  {CDL_TYPE[t]} {v}({', '.join(dims)}) ;")
        if fill is not None:
            sfx = {"i2": "s", "u2": "us", "f8": ""}[t]
            lines.append(f"    {v}:_FillValue = {fill}{sfx} ;")
    lines.append("data:")
    for v, t, dims, fill in vars_:
        a = values(rng, t, shape_of(dims, NREC))
        lines.append(f" {v} = {cdl_value(t, a)} ;")
    lines.append("}")
    cdl = path(name + ".cdl")
    with open(cdl, "w") as f:
        f.write("\n".join(lines) + "\n")
    subprocess.run(["ncgen", "-k", str(version), "-o", path(name), cdl],
                   check=True)


def nc_all(name):
    """Every variable as netCDF4-python reads it (raw: no masking)."""
    out = {"fill": {}}
    with netCDF4.Dataset(path(name)) as nc:
        for v, x in nc.variables.items():
            x.set_auto_maskandscale(False)
            x.set_auto_chartostring(False)
            out[v] = np.array(x[...])
            if "_FillValue" in x.ncattrs():
                out["fill"][v] = x.getncattr("_FillValue")
        out["numrecs"] = len(nc.dimensions["time"])
    return out


def rand_key(rng, shape):
    """start/stop/step per dimension (steps negative too, ends past the
    array), sometimes one index."""
    key = []
    for n in shape:
        r = rng.random()
        if r < 0.1:
            key.append(int(rng.integers(-n, n)))
        elif r < 0.2:
            key.append(slice(None))
        else:
            step = int(rng.integers(1, max(2, n // 2) + 1))
            if rng.random() < 0.2:
                step = -step
            a = None if rng.random() < 0.3 else int(rng.integers(-n, n + 2))
            b = None if rng.random() < 0.3 else int(rng.integers(-n, n + 2))
            key.append(slice(a, b, step))
    return tuple(key)


def same(got, want):
    g, w = np.asarray(got), np.asarray(want)
    return g.shape == w.shape and g.tobytes() == \
        w.astype(w.dtype.newbyteorder("=")).tobytes()


def raw(a):
    """passion's char (bytes) comes back as V1: compare as bytes."""
    a = np.asarray(a)
    return a.view("u1") if a.dtype.kind in "VS" else a


INDEP = ["auto", "direct", "sieve"]
COLL = ["auto", "etp-static", "etp-dynamic"]


def read_checks(name, vars_):
    ref = nc_all(name)
    rng = np.random.default_rng([SEED, RANK, len(name), ord(name[0])])
    for v, t, dims, fill in vars_:
        if dims[0] != "time":
            continue
        with ctx.open(f"{path(name)}:{v}") as f:
            check(f.shape == ref[v].shape,
                  f"{name}:{v} shape {f.shape}, netCDF4 {ref[v].shape}")
            for k in range(3):
                key = rand_key(rng, ref[v].shape)
                got = f.read(key, method=INDEP[k])
                check(same(raw(got), raw(ref[v][key])),
                      f"{name}:{v}[{key}] read {INDEP[k]}")
                key = rand_key(rng, ref[v].shape)
                got = f.read_all(key, method=COLL[k])
                check(same(raw(got), raw(ref[v][key])),
                      f"{name}:{v}[{key}] read_all {COLL[k]}")
            # netCDF4-python's own strided read of one section
            key = tuple(slice(int(rng.integers(0, n)), None,
                              int(rng.integers(1, 3))) for n in f.shape)
            with netCDF4.Dataset(path(name)) as nc:
                x = nc.variables[v]
                x.set_auto_maskandscale(False)
                x.set_auto_chartostring(False)
                want = np.array(x[key])
            check(same(raw(f.read_all(key)), raw(want)),
                  f"{name}:{v}[{key}] against netCDF4's strided read")


def grow_model(model, vars_, nrec):
    for v, _, dims, _ in vars_:
        if dims[0] == "time":
            old = model[v]
            new = np.empty((nrec,) + old.shape[1:], old.dtype)
            new[...] = fill_of(type_of(old), model["fill"].get(v))
            new[:old.shape[0]] = old
            model[v] = new
    model["numrecs"] = nrec


def passion_data(a):
    """What passion takes for an array (char: bytes, V1)."""
    return a.view("V1") if a.dtype.kind == "S" else a


def write_step(name, vars_, model, v, grow, step):
    """Open name:v read-write with `grow` more records; collective writes
    (one section per rank, the higher rank's value where they overlap)
    and independent ones (rank r the records r, r + P, ..., one rank after
    the other), some into the new records; the same on the model."""
    nrec = model["numrecs"] + grow
    grow_model(model, vars_, nrec)
    shape, t = model[v].shape, type_of(model[v])
    with ctx.open(f"{path(name)}:{v}", "r+", shape=shape) as f:
        check(f.shape == shape, f"{name}:{v} opened as {f.shape}")
        for k in range(2):
            keys, datas = [], []
            for r in range(P):
                rr = np.random.default_rng([SEED, step, k, r])
                key = rand_key(rr, shape)
                if k == 1:  # into the appended records
                    key = (slice(nrec - grow, None),) + key[1:]
                keys.append(key)
                datas.append(values(rr, t, model[v][key].shape))
            f.write_all(keys[RANK], passion_data(datas[RANK]),
                        method=COLL[step % 3])
            for r in range(P):
                model[v][keys[r]] = datas[r]
        base = rand_key(np.random.default_rng([SEED, step, 7]), shape)
        for r in range(P):
            key = (slice(r, None, P),) + base[1:]
            part = values(np.random.default_rng([SEED, step, 8, r]), t,
                          model[v][key].shape)
            # one rank at a time: a sieved write rewrites the bytes
            # between its records (other ranks' records, other variables)
            if r == RANK:
                f.write(key, passion_data(part), method=INDEP[step % 3])
            barrier()
            model[v][key] = part
    barrier()


def model_file(name, model, vars_):
    """A copy of name with every variable written from the model by
    netCDF4-python."""
    shutil.copy(path(name), path("ref-" + name))
    with netCDF4.Dataset(path("ref-" + name), "a") as nc:
        for v, t, dims, fill in vars_:
            x = nc.variables[v]
            x.set_auto_maskandscale(False)
            x.set_auto_chartostring(False)
            x[...] = model[v]


def dump(name):
    p = subprocess.run(["ncdump", path(name)], capture_output=True,
                       text=True)
    lines = p.stdout.splitlines()
    return p.returncode, lines[1:]


def write_checks(name, vars_, version):
    work = "w-" + name
    if RANK == 0:
        shutil.copy(path(name), path(work))
    barrier()
    model = nc_all(work)
    rec = [x for x in vars_ if x[2][0] == "time"]
    rng = np.random.default_rng([SEED, version, len(name)])
    for step in range(3):
        v = rec[int(rng.integers(0, len(rec)))][0]
        write_step(work, vars_, model, v, int(rng.integers(1, 4)),
                   step + 10 * version)
    # a read-only open sees the file's records only
    v = rec[0][0]
    try:
        ctx.open(f"{path(work)}:{v}", "r",
                 shape=(model["numrecs"] + 1,) + model[v].shape[1:])
        check(False, f"{work}:{v}: read-only open of more records")
    except passion.Error as e:
        check(e.code == passion.PASSION_EFORMAT, f"read-only grow: {e}")
    if RANK == 0:
        got = nc_all(work)
        check(got["numrecs"] == model["numrecs"],
              f"{work}: numrecs {got['numrecs']}, model "
              f"{model['numrecs']}")
        for v, t, dims, fill in vars_:
            check(same(raw(got[v]), raw(model[v])),
                  f"{work}:{v} read back by netCDF4-python differs from "
                  f"the model")
        model_file(work, model, vars_)
        rc, a = dump(work)
        rc2, b = dump("ref-" + work)
        check(rc == 0 and rc2 == 0 and a == b,
              f"ncdump {work} differs from ncdump of the model "
              f"({sum(x != y for x, y in zip(a, b))} lines)")
    barrier()


def main():
    if RANK == 0:
        shutil.rmtree(SCRATCH, ignore_errors=True)
        os.makedirs(SCRATCH)
        rng = np.random.default_rng(SEED)
        for ver in (1, 2, 5):
            vs = VARS + (VARS5 if ver == 5 else [])
            make_py(f"py{ver}.nc", ver, vs, rng)
            make_ncgen(f"gen{ver}.nc", ver, vs, rng)
        make_py("lone.nc", 1, LONE, rng)
        make_py("big.nc", 2, BIG, rng)
    barrier()
    for ver in (1, 2, 5):
        vs = VARS + (VARS5 if ver == 5 else [])
        for name in (f"py{ver}.nc", f"gen{ver}.nc"):
            read_checks(name, vs)
            write_checks(name, vs, ver)
    read_checks("lone.nc", LONE)
    write_checks("lone.nc", LONE, 9)
    read_checks("big.nc", BIG)
    write_checks("big.nc", BIG, 8)
    ok = np.array([failures], "i8")
    print(f"rank {RANK}: {checks} checks, {failures} failures (seed {SEED})",
          flush=True)
    ctx.finalize()
    sys.exit(1 if ok[0] else 0)


main()
