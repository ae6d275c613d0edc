#!/usr/bin/env python3
"""numpy's side of test_types.c: `gen MANIFEST DIR` writes, for every case
line "k descr n0 n1 fortran seed", DIR/in<k>.npy (the values of the case in
type descr, C or Fortran order, written by numpy) and DIR/ref<k>.bin (the
same values in the machine's byte order, C order, raw); `check MANIFEST DIR`
loads DIR/out<k>.npy (written by passion) and compares it with the values
element by element, and its type string with descr. Exit 0 when every case
matches, else 1 with one line per failing case."""
import sys

import numpy as np


def values(descr, shape, seed):
    dt = np.dtype(descr)
    nat = dt.newbyteorder("=")
    rng = np.random.default_rng(seed)
    n = shape[0] * shape[1]
    if dt.kind == "b":
        v = rng.integers(0, 2, size=shape).astype(bool)
    elif dt.kind in "iuV":
        v = np.frombuffer(rng.bytes(n * dt.itemsize), dtype=nat).reshape(shape)
    elif dt.kind == "f":
        v = (rng.standard_normal(shape) * 1000).astype(nat)
    else:
        v = (rng.standard_normal(shape) * 1000 +
             1j * rng.standard_normal(shape)).astype(nat)
    return np.ascontiguousarray(v), dt, nat


def main():
    mode, manifest, d = sys.argv[1:4]
    bad = 0
    for line in open(manifest):
        if not line.strip():
            continue
        k, descr, n0, n1, fort, seed = line.split()
        shape = (int(n0), int(n1))
        ref, dt, nat = values(descr, shape, int(seed))
        if mode == "gen":
            a = ref.astype(dt)
            if fort == "1":
                a = np.asfortranarray(a)
            np.save(f"{d}/in{k}.npy", a)
            ref.tofile(f"{d}/ref{k}.bin")
            continue
        b = np.load(f"{d}/out{k}.npy")
        why = None
        if b.dtype.str != dt.str:
            why = f"type {b.dtype.str}, want {dt.str}"
        elif b.shape != shape:
            why = f"shape {b.shape}, want {shape}"
        elif bool(np.isfortran(b)) != (fort == "1") and shape[0] > 1 \
                and shape[1] > 1:
            why = "storage order"
        elif dt.kind == "V":
            if np.ascontiguousarray(b).tobytes() != ref.tobytes():
                why = "bytes differ"
        else:
            c = b.astype(nat)
            diff = np.argwhere(c != ref)
            if len(diff):
                i, j = diff[0]
                why = (f"{len(diff)} elements differ, first [{i}, {j}]: "
                       f"{c[i, j]!r} != {ref[i, j]!r}")
        if why:
            print(f"case {k} ({descr} {shape} fortran={fort}): {why}")
            bad += 1
    sys.exit(1 if bad else 0)


main()
