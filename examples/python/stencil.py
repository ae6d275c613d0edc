#!/usr/bin/env python3
"""
An out-of-core stencil (Jacobi iterations of Laplace's equation), from
Python.

    mpiexec -n 2 python3 stencil.py [DIR] [N M ITERS]

u is N x M float64, distributed by blocks of rows over the ranks, one
local array file per rank with one ghost row on each side. Row 0 is held
at 1, the other edges at 0. Each iteration exchanges the ghost rows
between neighbouring ranks' files (shift_all), then walks the local file
slab by slab with a halo of one row (from the neighbouring slabs or the
ghosts) and writes the 5-point average into the second file; the two
files then swap roles. Memory: a few slabs, whatever N and M.
"""
import os
import sys

import numpy as np

import passion


def main(workdir=".", n=512, m=256, iters=10, ctx=None, width=32):
    own = ctx is None
    if own:
        ctx = passion.init({"memory_budget": "4M"})
    files = [ctx.create(os.path.join(workdir, "u%d.%%d.laf" % k), (n, m),
                        np.float64, ghost=(1, 0)) for k in range(2)]
    lo, hi = files[0].local_bounds()
    for f in files:
        if lo[0] == 0:  # the rank holding row 0 sets the boundary
            f.write(np.s_[0, :], 1.0)
    u, v = files
    for _ in range(iters):
        u.shift_all(0)  # ghost rows from the neighbours' files
        for s in u.slabs(width=width, halo=1, out=v):
            o = s.offset[0]
            a = s.data  # the slab with one halo row on each side
            mid = a[o:o + s.count]
            up, down = a[o - 1:o - 1 + s.count], a[o + 1:o + 1 + s.count]
            new = s.out
            new[...] = mid
            new[:, 1:-1] = 0.25 * (up[:, 1:-1] + down[:, 1:-1] +
                                   mid[:, :-2] + mid[:, 2:])
            g = np.arange(s.start, s.start + s.count) + lo[0]
            edge = (g == 0) | (g == n - 1)  # fixed boundary rows
            new[edge] = mid[edge]
        u, v = v, u
    mine = u.read()  # this rank's rows
    change = float(np.abs(mine - v.read()).max()) if mine.size else 0.0
    final = os.path.join(workdir, "u%d.%%d.laf" % files.index(u))
    for f in files:
        f.close()
    if ctx.rank == 0:
        print("stencil: %d x %d, %d iterations on %d ranks; rank 0 rows "
              "%d..%d, max change in the last iteration %.3e, u[1, m/2] = "
              "%.6f" % (n, m, iters, ctx.size, lo[0], hi[0], change,
                        mine[1, m // 2] if mine.shape[0] > 1 else 0.0))
    if own:
        ctx.finalize()
    return final, mine, (lo[0], hi[0])


if __name__ == "__main__":
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    args = [int(x) for x in sys.argv[2:5]] or [512, 256, 10]
    main(d, *args)
