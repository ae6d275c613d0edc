/*
 * bench_hdf5.h - HDF5 as a peer of the benchmark suites (prefix bench_h5_):
 * one contiguous dataset "data" whose bytes are the global array's, read
 * and written as hyperslabs through the MPI-IO driver with
 * H5FD_MPIO_COLLECTIVE or H5FD_MPIO_INDEPENDENT transfer.
 *
 * The dataset has the array's shape in storage order (slowest dimension
 * first: C order natively; a column-major array gets the reversed shape),
 * an opaque element type of the array's element size (no conversion), no
 * fill, and storage allocated at creation and aligned to a page, so its
 * bytes are one run at bench_h5_create's *offset. The suites put the
 * global array there: passion and ROMIO access the same file as a raw
 * array with a header of *offset bytes, HDF5 as a dataset, so every
 * method reads and writes the very same bytes.
 *
 * Built with HDF5 when meson finds it (BENCH_HAVE_HDF5); without it
 * bench_h5_available() is 0 and the other calls return -1.
 */
#ifndef PASSION_BENCH_HDF5_H
#define PASSION_BENCH_HDF5_H

#include <mpi.h>
#include <stdint.h>

typedef struct bench_h5 bench_h5;

/* 1 when this build has parallel HDF5. */
int bench_h5_available(void);

/* The HDF5 library's version, "1.10.8" (or "none"). */
const char *bench_h5_version(void);

/*
 * Create (truncate) `path` holding one contiguous dataset of nd dims
 * (dims[0] slowest) and esize-byte elements; *offset receives the byte
 * offset of its data. The data bytes are not written (the file is sparse
 * there: zeros). Collective on comm. 0 or -1.
 */
int bench_h5_create(MPI_Comm comm, const char *path, int nd,
                    const int64_t *dims, int64_t esize, int64_t *offset);

/* Open an existing file's dataset read-write. Collective. 0 or -1. */
int bench_h5_open(MPI_Comm comm, const char *path, bench_h5 **h);

/*
 * Read or write a hyperslab (start/count/stride per dimension in the
 * dataset's order, dims[0] slowest) to or from a packed buffer in that
 * order. An empty selection (some count 0) takes part with nothing.
 * collective: H5FD_MPIO_COLLECTIVE, else INDEPENDENT (then the call is
 * still made by every rank, as the suites time it). 0 or -1.
 */
int bench_h5_access(bench_h5 *h, int collective, int op_write, int nd,
                    const int64_t *start, const int64_t *count,
                    const int64_t *stride, void *buf);

/* Close (flushes). Collective. NULL is a no-op. */
void bench_h5_close(bench_h5 *h);

#endif
