#!/usr/bin/env python3
"""
A local-placement slab loop with prefetch, from Python.

    mpiexec -n 2 python3 slab_prefetch.py [DIR] [N M]

An N x M float32 array is distributed by blocks of rows, one local array
file per rank (in.0.laf, in.1.laf, ...). A first slab loop fills it
(write-back of the dirty in buffers); a second one reads it slab by slab,
with the next slab read while the current one is computed (prefetch),
and writes out = sqrt(in) + 1 to a second local array set. Each slab is a
numpy view of passion's in-core buffer, valid until the next step.
"""
import os
import sys

import numpy as np

import passion


def main(workdir=".", n=2048, m=512, ctx=None, width=64):
    own = ctx is None
    if own:
        ctx = passion.init({"memory_budget": "4M"})
    src = ctx.create(os.path.join(workdir, "in.%d.laf"), (n, m), np.float32)
    dst = ctx.create(os.path.join(workdir, "out.%d.laf"), (n, m),
                     np.float32)
    lo, _ = src.local_bounds()
    # fill: in[i, j] = i + j / m (global indices)
    for s in src.slabs(width=width, writeback=True):
        i = np.arange(s.start, s.start + s.count)[:, None] + lo[0]
        j = np.arange(m)[None, :]
        s.interior[...] = i + j / m
        s.dirty()
    # compute with prefetch: the next slab is read while this one works
    ctx.reset_counters()
    nslabs = 0
    for s in src.slabs(width=width, out=dst, prefetch=True):
        s.out[...] = np.sqrt(s.interior) + 1
        nslabs += 1
    c = ctx.counters()
    local_sum = float(dst.read().astype(np.float64).sum())
    dst.close()
    src.close()
    if ctx.rank == 0:
        print("slab_prefetch: %d x %d float32 on %d ranks, %d slabs of %d "
              "rows on rank 0; prefetch hits %d, reads saved by reuse %d "
              "bytes, sum of rank 0's out %.6g" % (
                  n, m, ctx.size, nslabs, width, c["prefetch_hits"],
                  c["reuse_bytes"], local_sum))
    if own:
        ctx.finalize()
    return local_sum, c


if __name__ == "__main__":
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    size = [int(x) for x in sys.argv[2:4]] or [2048, 512]
    main(d, *size)
