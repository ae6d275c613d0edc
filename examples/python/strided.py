#!/usr/bin/env python3
"""
Strided section read and write of a global array file, from Python.

    mpiexec -n 2 python3 strided.py [DIR] [N M]

Every rank writes its block of rows of an N x M float64 .npy file
(a[i, j] = i * M + j), then reads the strided section a[r::P, 1::7]
(collective: the extended two-phase method or independent access, as
passion's cost model chooses) and writes it back negated. numpy can load
the file at any point (np.load("strided.npy")).
"""
import os
import sys

import numpy as np

import passion


def main(workdir=".", n=1000, m=800, ctx=None):
    own = ctx is None
    if own:
        ctx = passion.init({"memory_budget": "16M"})
    P, r = ctx.size, ctx.rank
    path = os.path.join(workdir, "strided.npy")
    with ctx.create(path, (n, m), np.float64) as f:
        # 1. a block of rows per rank
        lo, hi = r * n // P, (r + 1) * n // P
        block = np.arange(lo * m, hi * m, dtype=np.float64).reshape(-1, m)
        f.write_all(np.s_[lo:hi, :], block)
        # 2. a strided section per rank: every P-th row, every 7th column
        sec = f.read_all(np.s_[r::P, 1::7])
        # 3. written back negated (the ranks' sections interleave)
        f.write_all(np.s_[r::P, 1::7], -sec)
        total = f.read_all(np.s_[::3, ::-11] if r == 0 else None)
        c = ctx.counters()
    if r == 0:
        print("strided: %d x %d on %d ranks; section %s of rank 0; "
              "checksum of a[::3, ::-11] = %.1f" % (n, m, P, sec.shape,
                                                   total.sum()))
        print("strided: rank 0 read %d bytes, wrote %d, %d file requests"
              % (c["bytes_read"], c["bytes_written"], c["io_calls"]))
    if own:
        ctx.finalize()
    return path, sec


if __name__ == "__main__":
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    size = [int(x) for x in sys.argv[2:4]] or [1000, 800]
    main(d, *size)
