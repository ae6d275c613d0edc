"""
passion - out-of-core arrays for MPI (SPMD) programs, from Python.

A ctypes binding of libpassion (API 1.0): no compiler needed at install
time. Run under `mpiexec -n P python3 script.py`; MPI is initialised on the
first passion.init() if nobody has (and finalised at exit then).

    import numpy as np, passion
    with passion.init({"memory_budget": "64M"}) as ctx:
        with ctx.open("x.npy") as f:            # shape, dtype from the file
            a = f.read_all(np.s_[::2, 1:1000:7])  # collective
            f.write_all(np.s_[0, :], a[0])
        with ctx.create("u.%d.laf", (4096, 4096), np.float64, ghost=1) as u:
            for slab in u.slabs(writeback=True):
                slab.interior[...] += 1
                slab.dirty()
        print(ctx.counters())

Errors raise passion.Error (.code, .name, .detail). The library is found
through PASSION_LIB, the path meson install wrote, or the dynamic linker
(see _lib.py).
"""
from ._core import (Context, Error, File, Part, PartIter, Slab, SlabIter,
                    init, library_path, mpi_library_version, strerror,
                    version, ERRORS, METHODS)
from ._core import (PASSION_OK, PASSION_EINVAL, PASSION_ERANGE,
                    PASSION_EOVERFLOW, PASSION_ENOMEM, PASSION_EIO,
                    PASSION_ESHORT, PASSION_ENOSPC, PASSION_EMISMATCH,
                    PASSION_EMPI, PASSION_EFORMAT, PASSION_ENOTSUP,
                    PASSION_ESTATE, PASSION_ENOENT, PASSION_EACCES,
                    PASSION_EREMOTE, PASSION_EEXIST)

__all__ = ["init", "Context", "File", "Slab", "SlabIter", "Part",
           "PartIter", "Error", "version", "strerror", "library_path",
           "mpi_library_version", "ERRORS", "METHODS"] + list(
               ERRORS.values())
