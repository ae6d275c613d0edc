/*
 * passion.h - the one public header of passion, a runtime library for
 * out-of-core arrays in parallel (MPI, SPMD) programs.
 *
 * Conventions (every function below follows them):
 *  - returns int: 0 on success, a negative PASSION_E* code on failure;
 *    passion_strerror() gives the message, passion_errdetail() what failed,
 *    where (file, offset) and on which rank;
 *  - "collective" calls must be made by every rank of the context's
 *    communicator; they return the same code on every rank and never hang
 *    because one rank failed;
 *  - "/ * out * /" marks output parameters; the caller owns every buffer it
 *    passes, passion owns the objects it creates until the matching _free or
 *    _close;
 *  - indices, sizes and offsets are 64-bit and 0-based.
 */
#ifndef PASSION_H
#define PASSION_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(PASSION_BUILDING) && defined(__GNUC__)
#define PASSION_API __attribute__((visibility("default")))
#else
#define PASSION_API
#endif

#define PASSION_MAX_DIMS 7
#define PASSION_VERSION_STRING "0.1.0"

/* ---------------------------------------------------------------- errors */

enum passion_error {
    PASSION_OK = 0,
    PASSION_EINVAL = -1,    /* invalid argument (zero stride, bad size...) */
    PASSION_ERANGE = -2,    /* section or index outside the array bounds */
    PASSION_EOVERFLOW = -3, /* a size or byte count would overflow 64 bits */
    PASSION_ENOMEM = -4,    /* allocation failed or memory budget too small */
    PASSION_EIO = -5,       /* an I/O call failed (errno in the detail) */
    PASSION_ESHORT = -6,    /* file shorter than the array it should hold */
    PASSION_ENOSPC = -7,    /* no space left on the device */
    PASSION_EMISMATCH = -8, /* ranks disagree on arguments of a collective */
    PASSION_EMPI = -9,      /* an MPI call failed */
    PASSION_EFORMAT = -10,  /* bad file header (.npy) or wrong file size */
    PASSION_ENOTSUP = -11,  /* valid request that this build cannot do */
    PASSION_ESTATE = -12,   /* call out of order (closed handle, ...) */
    PASSION_ENOENT = -13,   /* file does not exist */
    PASSION_EACCES = -14,   /* permission denied */
    PASSION_EREMOTE = -15   /* reserved: failure reported by another rank */
};

/* Message for a code; never NULL, static storage. */
PASSION_API const char *passion_strerror(int code);

/* ---------------------------------------------------------------- context */

typedef struct passion_ctx passion_ctx;

/* I/O drivers (the ops table in passion/io.c). */
enum passion_driver {
    PASSION_DRIVER_POSIX = 0, /* pread/pwrite, optional O_DIRECT */
    PASSION_DRIVER_MPIIO = 1, /* independent MPI-IO at explicit offsets */
    PASSION_DRIVER_FAULT = 2  /* test only: posix that fails on purpose */
};

/* Methods for section access (independent and collective). */
enum passion_method {
    PASSION_METHOD_AUTO = 0,       /* cost model chooses (default) */
    PASSION_METHOD_DIRECT = 1,     /* one request per contiguous run */
    PASSION_METHOD_SIEVE = 2,      /* data sieving in budget-sized chunks */
    PASSION_METHOD_ETP_STATIC = 3, /* extended two-phase, static domains */
    PASSION_METHOD_ETP_DYNAMIC = 4 /* extended two-phase, dynamic domains */
};

/* Exchange (all-to-all) algorithms, collective/. */
enum passion_xchg {
    PASSION_XCHG_DEFAULT = -1,  /* the context's option */
    PASSION_XCHG_AUTO = 0,      /* cost model chooses algorithm and radix */
    PASSION_XCHG_MPI = 1,       /* MPI_Alltoall / MPI_Alltoallv */
    PASSION_XCHG_PAIRWISE = 2,  /* Bokhari: XOR / shift schedule */
    PASSION_XCHG_A1 = 3,        /* one stage, step i: j sends to (i+j)%P */
    PASSION_XCHG_INDEX = 4,     /* Bruck et al. index, radix r */
    PASSION_XCHG_FOURSTAGE = 5, /* Liu-Wang-Prasanna, blocking */
    PASSION_XCHG_FOURSTAGE_NB = 6 /* four-stage, dual-buffer non-blocking */
};

/*
 * Options of a context. Fill with passion_options_init() first (it sets the
 * defaults below), then change fields or call passion_options_set().
 */
typedef struct passion_options {
    int64_t memory_budget;  /* bytes for any staging buffer; default 64 MiB */
    int driver;             /* enum passion_driver; default posix */
    int direct_io;          /* 1: O_DIRECT with the posix driver */
    int verbosity;          /* 0 quiet, 1 progress, 2 debug on stderr */
    int exchange;           /* enum passion_xchg; default auto */
    int radix;              /* index radix; 0 = chosen by the model */
    int engine;             /* prefetch engine: 0 auto, 1 io_uring, 2 thread */
    /* cost model (0 = calibrate or use the built-in value) */
    double io_latency;      /* seconds per file request */
    double io_bandwidth;    /* bytes per second of the file */
    int io_concurrency;     /* reads kept in flight at once by batched
                               independent reads (io_uring); 0 = default 8,
                               1 = one request at a time */
    double msg_alpha;       /* seconds per message start-up */
    double msg_beta;        /* seconds per message byte */
    /* fault driver (tests only) */
    int64_t fault_fail_at;  /* fail the Nth I/O call (1-based), 0 never */
    int fault_errno;        /* errno of the failure; default EIO */
    int fault_short;        /* 1: every call transfers at most half */
    int fault_ranks;        /* -1 every rank, else only this rank */
} passion_options;

/* Fill opt with the defaults. Never fails on a valid pointer. */
PASSION_API int passion_options_init(passion_options *opt /* out */);

/*
 * Set one option from text, "key=value" (keys are the field names above;
 * budgets accept K, M, G suffixes; driver accepts posix|mpiio|fault;
 * exchange accepts auto|mpi|pairwise|a1|index|fourstage|fourstage-nb).
 * Returns PASSION_EINVAL for an unknown key or a bad value.
 */
PASSION_API int passion_options_set(passion_options *opt, const char *keyval);

/*
 * Create a context on comm (duplicated inside). opt may be NULL (defaults;
 * the environment variable PASSION_OPTIONS, a comma-separated key=value
 * list, is applied on top in both cases). Collective. *ctx is NULL on error.
 */
PASSION_API int passion_init(MPI_Comm comm, const passion_options *opt,
                             passion_ctx **ctx /* out */);

/* Free the context and everything it owns. Collective. NULL is a no-op. */
PASSION_API int passion_finalize(passion_ctx *ctx);

/* The context's options (read-only view) and communicator. */
PASSION_API const passion_options *passion_ctx_options(const passion_ctx *ctx);
PASSION_API MPI_Comm passion_ctx_comm(const passion_ctx *ctx);

/*
 * Detail of the last error on this context: what failed, the file, offset
 * and rank. Every public call on the context or on an object made from it
 * (array, file, request, iterator) clears it at entry, so it is the empty
 * string after a call that succeeded; the exceptions are this function and
 * the read-only accessors (passion_ctx_options, passion_ctx_comm,
 * passion_counters_get, passion_array_get_spec, passion_file_path,
 * passion_section_elems), which leave it alone, and an iterator call that
 * returns the iterator's earlier failure again, which keeps that failure's
 * detail. Valid until the next call on ctx.
 */
PASSION_API const char *passion_errdetail(const passion_ctx *ctx);

/* Counters, per rank, cumulative since init or the last reset. */
typedef struct passion_counters {
    uint64_t io_calls;        /* requests issued to the I/O driver */
    uint64_t bytes_read;      /* bytes read from files */
    uint64_t bytes_written;   /* bytes written to files */
    uint64_t bytes_useful;    /* bytes the caller asked for (read+written) */
    uint64_t messages_sent;   /* point-to-point messages (or collective
                                 calls counted as P-1 messages) */
    uint64_t bytes_sent;      /* bytes sent to other ranks */
    uint64_t rounds;          /* communication rounds (exchange steps) */
    uint64_t peak_staging;    /* largest staging memory held at once */
    uint64_t reuse_bytes;     /* file bytes not read thanks to data reuse */
    uint64_t prefetch_hits;   /* prefetched requests that were used */
    double   t_io;            /* seconds spent in (or waiting for) I/O */
    double   t_comm;          /* seconds spent in communication */
} passion_counters;

PASSION_API int passion_counters_get(const passion_ctx *ctx,
                                     passion_counters *c /* out */);
PASSION_API int passion_counters_reset(passion_ctx *ctx);

/* ---------------------------------------------------------------- arrays */

enum passion_dist {
    PASSION_DIST_BLOCK = 0,     /* BLOCK (m = 0) or BLOCK(m) */
    PASSION_DIST_CYCLIC = 1,    /* CYCLIC (m = 0 means 1) or CYCLIC(m) */
    PASSION_DIST_COLLAPSED = 2  /* "*": not distributed */
};

enum passion_placement {
    PASSION_PLACE_LOCAL = 0,      /* one local array file per rank (LPM) */
    PASSION_PLACE_GLOBAL = 1,     /* one global array file (GPM) */
    PASSION_PLACE_PARTITIONED = 2 /* global file in in-core partitions (PIM) */
};

enum passion_storage {
    PASSION_ROW_MAJOR = 0, /* last dimension fastest (C) */
    PASSION_COL_MAJOR = 1, /* first dimension fastest (Fortran, the thesis) */
    PASSION_ORDER_CUSTOM = 2 /* order[] gives the permutation */
};

/* What the user fills to describe an array (the thesis's OCAD inputs). */
typedef struct passion_array_spec {
    int ndims;                           /* 1 .. 7 */
    int64_t shape[PASSION_MAX_DIMS];     /* global size per dimension, > 0 */
    int64_t elem_size;                   /* bytes per element, 1 .. 64 */
    int storage;                         /* enum passion_storage */
    int order[PASSION_MAX_DIMS];         /* CUSTOM: order[0] is the slowest-
                                            varying dimension in the file,
                                            order[ndims-1] the fastest */
    int grid[PASSION_MAX_DIMS];          /* ranks per dimension; product =
                                            communicator size; 0 = 1 */
    int dist[PASSION_MAX_DIMS];          /* enum passion_dist */
    int64_t block[PASSION_MAX_DIMS];     /* m of BLOCK(m) / CYCLIC(m); 0 =
                                            default */
    int64_t ghost[PASSION_MAX_DIMS];     /* overlap width per dimension,
                                            0 <= ghost[d] <= shape[d]
                                            (else PASSION_EINVAL) */
    int placement;                       /* enum passion_placement */
    int64_t header_bytes;                /* raw global file: bytes before the
                                            data (0 for .npy: the header
                                            gives it) */
    char dtype[8];                       /* .npy type descr ("<f4", "|u1",
                                            "<c16"...); "" = any of
                                            elem_size bytes on open, and on
                                            create the default for the size
                                            (4 "<f4", 8 "<f8", 1 "|u1",
                                            2 "<i2", 16 "<c16", else "|Vn") */
} passion_array_spec;

typedef struct passion_array passion_array;

/* Zero a spec and set ndims, shape, elem_size; the rest defaults (row-major,
   grid 1, BLOCK, no ghosts, local placement). */
PASSION_API int passion_array_spec_init(passion_array_spec *s /* out */,
                                        int ndims, const int64_t *shape,
                                        int64_t elem_size);

/*
 * Build the descriptor (OCAD) from spec; validates it (sizes, grid against
 * the communicator, 64-bit overflow of every byte count) and checks that all
 * ranks passed the same spec (PASSION_EMISMATCH otherwise). Collective.
 */
PASSION_API int passion_array_create(passion_ctx *ctx,
                                     const passion_array_spec *spec,
                                     passion_array **a /* out */);
PASSION_API int passion_array_free(passion_array *a);

/* The spec the array was built from (normalised: order[] always filled). */
PASSION_API const passion_array_spec *passion_array_get_spec(
    const passion_array *a);

/*
 * OCAD queries for any rank r (grid coordinates are row-major over the
 * grid, as in MPI_Cart_create). Local bounds are the global indices of the
 * first and last element of r's local array per dimension (rows 1-2 of the
 * thesis's OCAD), or with ghosts (rows 3-4; may extend past the array).
 * A rank that owns nothing in a dimension gets lo = 0, hi = -1 there.
 */
PASSION_API int passion_array_local_shape(const passion_array *a, int r,
                                          int64_t *shape /* out */);
PASSION_API int passion_array_local_bounds(const passion_array *a, int r,
                                           int with_ghosts,
                                           int64_t *lo /* out */,
                                           int64_t *hi /* out */);
/* Size in bytes of r's local array file (local shape plus ghosts). */
PASSION_API int passion_array_local_bytes(const passion_array *a, int r,
                                          int64_t *bytes /* out */);
/* Owner rank and local index of a global index. */
PASSION_API int passion_array_owner(const passion_array *a,
                                    const int64_t *gidx, int *rank /* out */,
                                    int64_t *lidx /* out */);
/* Global index of rank r's local index lidx. */
PASSION_API int passion_array_global_index(const passion_array *a, int r,
                                           const int64_t *lidx,
                                           int64_t *gidx /* out */);

/* -------------------------------------------------------------- sections */

/*
 * A regular section: per dimension start, count, stride (stride >= 1).
 * count 0 in any dimension means the empty section (a rank that takes part
 * in a collective with nothing): its starts and the other dimensions'
 * counts are then not checked against the bounds nor for overflow (only
 * stride >= 1 and count >= 0 are). For local files, indices are local indices
 * and the ghost area is addressable as -ghost .. -1 and n .. n+ghost-1.
 */
typedef struct passion_section {
    int64_t start[PASSION_MAX_DIMS];
    int64_t count[PASSION_MAX_DIMS];
    int64_t stride[PASSION_MAX_DIMS];
} passion_section;

/*
 * Memory side of a transfer: the section's count box lands at `offset`
 * inside an in-memory array of `shape`, stored in the same storage order as
 * the array. Pass NULL for a packed buffer (the count box itself).
 */
typedef struct passion_memspec {
    int64_t shape[PASSION_MAX_DIMS];
    int64_t offset[PASSION_MAX_DIMS];
} passion_memspec;

/* Fill a section (count = shape, stride 1 where the arrays are NULL). */
PASSION_API int passion_section_set(passion_section *s /* out */, int ndims,
                                    const int64_t *start,
                                    const int64_t *count,
                                    const int64_t *stride);
/* Number of elements in s (0 if any count is 0). */
PASSION_API int64_t passion_section_elems(const passion_section *s,
                                          int ndims);

/* ----------------------------------------------------------------- files */

typedef struct passion_file passion_file;

enum passion_mode {
    PASSION_MODE_RDONLY = 0,
    PASSION_MODE_RDWR = 1,
    PASSION_MODE_CREATE = 2 /* create or truncate, sized to the array,
                               zero-filled; implies read-write */
};

/*
 * Open the array's file(s). Local placement: path is a pattern in which
 * every "%d" (or "%r") stands for the rank and "%%" for one '%'
 * ("data.%d.laf"; without any %d or %r ".<rank>" is appended); each rank
 * opens its own local array file. Global placement: one file; a name
 * ending in ".npy" is a NumPy file. A file name of PATH_MAX bytes or more
 * (or a component too long for the file system) is PASSION_EINVAL. An
 * existing file shorter than the array gives PASSION_ESHORT. Collective:
 * every rank passes the same path (pattern) and mode.
 */
PASSION_API int passion_file_open(passion_array *a, const char *path,
                                  int mode, passion_file **f /* out */);
/* Close; flushes pending writes. Collective. NULL is a no-op. */
PASSION_API int passion_file_close(passion_file *f);
/* Flush written data to the device (fdatasync). Independent. */
PASSION_API int passion_file_sync(passion_file *f);
/* Drop the file's pages from the page cache (for cold benchmarks). */
PASSION_API int passion_file_drop_cache(passion_file *f);
/* The path this rank opened. */
PASSION_API const char *passion_file_path(const passion_file *f);

/*
 * Read / write this rank's whole local array file, ghosts included, to or
 * from a packed buffer in storage order (thesis PASSION_read/_write).
 * Independent; local placement only.
 */
PASSION_API int passion_read_local(passion_file *f, void *buf);
PASSION_API int passion_write_local(passion_file *f, const void *buf);

/*
 * Read / write a strided section with method (enum passion_method:
 * auto, direct or sieve). Independent. mem may be NULL (packed). A write
 * changes no file byte outside the section. On error, a read may have
 * filled part of buf; a write may have written part of the section.
 */
PASSION_API int passion_read_section(passion_file *f,
                                     const passion_section *s, void *buf,
                                     const passion_memspec *mem, int method);
PASSION_API int passion_write_section(passion_file *f,
                                      const passion_section *s,
                                      const void *buf,
                                      const passion_memspec *mem, int method);

/*
 * The method `auto` would use for this section, and the predicted requests
 * and bytes moved from/to the file, from the cost model alone (no I/O).
 */
typedef struct passion_plan_info {
    int method;          /* DIRECT or SIEVE (or an ETP method) */
    int64_t requests;    /* file requests predicted */
    int64_t bytes_file;  /* bytes moved from/to the file predicted */
    int64_t runs;        /* contiguous runs in the section */
    double seconds;      /* model's predicted time */
} passion_plan_info;
PASSION_API int passion_section_plan(passion_file *f, const passion_section *s,
                                     int op_write, int method,
                                     passion_plan_info *info /* out */);

/*
 * The section's place in f as an MPI file view, for handing the same
 * request to MPI-IO (ROMIO, HDF5...): *type is a committed datatype of
 * nested hvectors in storage order (MPI_Type_free it), *disp the byte
 * offset of its first element; etype MPI_BYTE. An empty section gives a
 * zero-size type. Independent.
 */
PASSION_API int passion_section_filetype(const passion_file *f,
                                         const passion_section *s,
                                         MPI_Datatype *type /* out */,
                                         MPI_Offset *disp /* out */);

/* ----------------------------------------------- exchange (collective/) */

/*
 * All-to-all exchange, shaped like MPI_Alltoall: every rank sends `count`
 * elements of `type` to every rank (block j of sendbuf to rank j) and
 * receives block i of recvbuf from rank i. `type` must be contiguous
 * (lower bound 0, extent equal to size), else PASSION_ENOTSUP; MPI_IN_PLACE
 * is not supported. alg is an enum passion_xchg (PASSION_XCHG_DEFAULT: the
 * context's `exchange` option); radix is the index algorithm's radix
 * 2..P (0: the context's `radix` option, and if that is 0 the cost
 * model's choice). Collective: every rank must pass the same count, alg
 * and radix (PASSION_EMISMATCH otherwise); returns the same code on every
 * rank. The first call that needs the cost model measures it (a short
 * exchange). The caller owns both buffers; counters (messages_sent,
 * bytes_sent, rounds, peak_staging, t_comm) grow by this call's.
 */
PASSION_API int passion_alltoall(passion_ctx *ctx, const void *sendbuf,
                                 void *recvbuf /* out */, int64_t count,
                                 MPI_Datatype type, int alg, int radix);

/*
 * Irregular exchange, shaped like MPI_Alltoallv: rank i sends
 * sendcounts[j] elements from sendbuf + sdispls[j] (in elements of type)
 * to rank j, which receives them at recvbuf + rdispls[i]; recvcounts[i]
 * on rank j must equal sendcounts[j] on rank i (checked:
 * PASSION_EMISMATCH). Counts and displacements are 64-bit, no 2 GiB
 * limit. Same conventions as passion_alltoall otherwise (the index
 * algorithm needs equal counts). Collective.
 */
PASSION_API int passion_alltoallv(passion_ctx *ctx, const void *sendbuf,
                                  const int64_t *sendcounts,
                                  const int64_t *sdispls,
                                  void *recvbuf /* out */,
                                  const int64_t *recvcounts,
                                  const int64_t *rdispls, MPI_Datatype type,
                                  int alg, int radix);

/* ------------------------------------------- global placement (collective/) */

/*
 * Read / write a section of a global array file, every rank its own
 * section (count 0: the rank takes part with nothing; sections may overlap
 * or be identical). Collective over the context's communicator: every rank
 * calls, with the same method, on the same file (same path as opened)
 * holding the same array (dimensions, shape, element size, storage order,
 * data offset), else PASSION_EMISMATCH on every rank; every rank gets the
 * same code (a rank's bad section fails the call on all ranks, with that
 * rank's detail).
 * method: PASSION_METHOD_AUTO (default: the cost model picks),
 * PASSION_METHOD_DIRECT or PASSION_METHOD_SIEVE (each rank its own data,
 * independently), PASSION_METHOD_ETP_STATIC or PASSION_METHOD_ETP_DYNAMIC
 * (extended two-phase method, thesis 6.3-6.4, with static or dynamic file
 * domains). mem: NULL (packed) or the section's place in a larger array.
 * Where written sections share elements, the highest rank's value is
 * written; no byte outside the sections changes. Memory beyond the
 * caller's buffers: at most the memory budget plus O(ranks x dims) bytes.
 * The extended two-phase methods need memory_budget >= 5 x max(P-1, 1) x
 * elem_size (PASSION_ENOMEM below, when some rank has data); auto then
 * runs independent access, which works with any budget.
 * On error, a read may have filled part of buf, a write part of the file.
 */
PASSION_API int passion_read_section_all(passion_file *f,
                                         const passion_section *s, void *buf,
                                         const passion_memspec *mem,
                                         int method);
PASSION_API int passion_write_section_all(passion_file *f,
                                          const passion_section *s,
                                          const void *buf,
                                          const passion_memspec *mem,
                                          int method);

/* ------------------------------------------------------------ prefetch/ */

/*
 * Asynchronous section access (thesis 5.5.2, PASSION_read_prefetch /
 * PASSION_prefetch_wait). Requests run on an engine: io_uring where it can
 * be set up, else a worker thread with pread/pwrite. The option `engine`
 * (0 auto, 1 uring, 2 thread) or the environment variable PASSION_ENGINE
 * (auto|uring|thread, it wins over the option) chooses; auto falls back to
 * the thread when io_uring setup fails (ENOSYS, EPERM, ENOMEM...), a forced
 * uring that cannot start is PASSION_ENOTSUP. Several requests may be in
 * flight; sieving is applied as each window completes. The caller must not
 * touch the buffer until the request is waited for, and must wait for
 * every request before closing its file. Writes in flight together must
 * not overlap in their file extents (a sieved write rewrites the holes of
 * its extent), nor overlap reads in flight.
 */
enum passion_engine {
    PASSION_ENGINE_AUTO = 0,
    PASSION_ENGINE_URING = 1,  /* io_uring (liburing) */
    PASSION_ENGINE_THREAD = 2  /* worker thread with pread/pwrite */
};

typedef struct passion_request passion_request;

/* The engine this context uses (starts it if needed). Independent. */
PASSION_API int passion_engine_get(passion_ctx *ctx, int *engine /* out */);
/* "uring", "thread" or "auto"; static storage. */
PASSION_API const char *passion_engine_name(int engine);

/*
 * Begin reading / writing a section (same arguments and checks as
 * passion_read_section / passion_write_section); *req receives the request
 * (NULL on error). Independent.
 */
PASSION_API int passion_read_section_begin(passion_file *f,
                                           const passion_section *s,
                                           void *buf,
                                           const passion_memspec *mem,
                                           int method,
                                           passion_request **req /* out */);
PASSION_API int passion_write_section_begin(passion_file *f,
                                            const passion_section *s,
                                            const void *buf,
                                            const passion_memspec *mem,
                                            int method,
                                            passion_request **req /* out */);
/*
 * Wait for a request, free it, return its outcome. The time spent blocked
 * (and, at begin, issuing) counts in t_io; a read that was complete before
 * the wait counts as a prefetch hit. NULL is a no-op.
 */
PASSION_API int passion_request_wait(passion_request *req);
/* Make progress without blocking; *done = 1 when wait would not block. */
PASSION_API int passion_request_test(passion_request *req, int *done /* out */);

/*
 * Slab iteration over this rank's local array file (LPM, thesis 5.4 and
 * 5.5.2-5.5.3). The local array is cut along dimension `dim` into slabs of
 * `width` indices; each slab arrives in an in-core buffer that holds the
 * slab plus `halo` cells on each side along dim (read from the neighbouring
 * slabs or from the ghost area at the ends) and the full file extent,
 * ghosts included, in every other dimension. With prefetch the next slab
 * is read while the current one is computed, and write-backs are
 * asynchronous; with reuse the 2*halo cells that consecutive slabs share
 * are moved in memory instead of being read again (figure 5.11; counted in
 * reuse_bytes). Output: either `out`, a file of an array with the same
 * local shape, receives each slab's out buffer, or (writeback = 1) the
 * slab's in buffer is written back to its own file after
 * passion_slab_dirty(). Only the slab's interior (local indices [start,
 * start+count) along dim, [0, n) elsewhere) is written.
 */
typedef struct passion_slab_opts {
    int dim;          /* dimension slabs advance along; -1 = the slowest
                         in storage (contiguous slabs); default -1 */
    int64_t width;    /* indices of dim per slab; 0 = as wide as the budget
                         allows */
    int64_t budget;   /* bytes for all slab buffers; 0 = memory_budget */
    int64_t halo;     /* cells beyond each side along dim, <= ghost[dim];
                         -1 = ghost[dim] (default) */
    int prefetch;     /* 1 (default): overlap reads and writes with compute */
    int reuse;        /* 1 (default): move shared cells, do not reread */
    int writeback;    /* 1: write the in buffer back when dirty */
    passion_file *out; /* NULL or the output file (see above) */
    int method;       /* enum passion_method for the slab sections */
} passion_slab_opts;

/* Defaults (see the fields). */
PASSION_API int passion_slab_opts_init(passion_slab_opts *o /* out */);

/* One slab as handed to the caller; valid until the next call. */
typedef struct passion_slab {
    int64_t index;        /* 0-based slab number */
    int64_t nslabs;       /* slabs in all */
    int64_t start, count; /* local indices along dim: [start, start+count) */
    int dim;
    int64_t halo;
    void *in;             /* in-core local array with ghost cells */
    void *out;            /* same shape as in, or NULL */
    passion_memspec mem;  /* shape of in/out; offset = position of local
                             index (start along dim, 0 elsewhere) */
} passion_slab;

typedef struct passion_slab_iter passion_slab_iter;

/* Start iterating; allocates the buffers. Independent. */
PASSION_API int passion_slab_begin(passion_file *f,
                                   const passion_slab_opts *opts,
                                   passion_slab_iter **it /* out */);
/* Next slab: returns 1 with *slab filled, 0 after the last, or an error. */
PASSION_API int passion_slab_next(passion_slab_iter *it,
                                  passion_slab *slab /* out */);
/* Mark the current slab's in buffer modified (writeback = 1). */
PASSION_API int passion_slab_dirty(passion_slab_iter *it);
/* Finish pending writes, free the iterator; returns the first error. */
PASSION_API int passion_slab_end(passion_slab_iter *it);

/*
 * Partitioned In-Core Model (thesis 5.3.2, figure 5.2 III): iterate over
 * partitions of a global array file that fit the aggregate memory of all
 * ranks. Partition k is a block of `width` global indices along `dim`
 * (all of every other dimension); it is distributed over the ranks like
 * the array (its extent split over the processor grid, BLOCK; the array's
 * grid must have as many ranks as the communicator, else passion_part_begin
 * fails with PASSION_EINVAL: a global array's default one-rank grid is not
 * split automatically), and each
 * rank receives its piece plus `halo` cells on every side (clipped at the
 * array's edges) in an in-core buffer. Pieces are read with
 * passion_read_section_all (default: the extended two-phase method); the
 * out buffer's piece interior is written to `out` (another global array
 * file of the same shape) with passion_write_section_all when the caller
 * moves on. Prefetch: while partition k is computed, the kernel reads
 * partition k+1 into the page cache (each rank a 1/P share; buffered I/O
 * and partitions along the slowest storage dimension only).
 */
typedef struct passion_part_opts {
    int dim;          /* -1 = the slowest in storage (default) */
    int64_t width;    /* global indices of dim per partition; 0 = budget */
    int64_t budget;   /* bytes per rank for the buffers; 0 = memory_budget */
    int64_t halo;     /* cells around each piece (default 0) */
    int prefetch;     /* default 1 */
    passion_file *out; /* output global file, or NULL */
    int method;       /* for the collective calls; default
                         PASSION_METHOD_ETP_DYNAMIC */
} passion_part_opts;

PASSION_API int passion_part_opts_init(passion_part_opts *o /* out */);

typedef struct passion_part {
    int64_t index, nparts;
    int64_t lo[PASSION_MAX_DIMS];    /* global index of the piece's first
                                        cell */
    int64_t count[PASSION_MAX_DIMS]; /* piece extent (0 in some dimension:
                                        this rank has nothing this time) */
    void *in;                        /* piece plus halo */
    void *out;                       /* same shape, or NULL */
    passion_memspec mem;             /* buffer shape; offset = position of
                                        lo in the buffer */
} passion_part;

typedef struct passion_part_iter passion_part_iter;

/* Collective; f must be a global array file (global or partitioned). */
PASSION_API int passion_part_begin(passion_file *f,
                                   const passion_part_opts *opts,
                                   passion_part_iter **it /* out */);
/* Collective: 1 with *part filled, 0 after the last, or an error. */
PASSION_API int passion_part_next(passion_part_iter *it,
                                  passion_part *part /* out */);
/* Collective: write the last output if the caller stopped early, free. */
PASSION_API int passion_part_end(passion_part_iter *it);

/* ------------------------------------- out-of-core communication (collective/) */

/*
 * Out-of-core shift (thesis table 5.1, PASSION_oc_shift): ghost exchange
 * between neighbouring ranks' local array files along dimension `dim` of
 * the processor grid. Each rank reads `width` boundary cells (width 0 =
 * ghost[dim]) from its own file, sends them to the neighbour, and stores
 * what it receives in its ghost area in its file. dir +1 moves data to the
 * higher neighbour (its low ghosts), -1 to the lower one, 0 both. The
 * other dimensions are taken over their full file extent, ghosts included,
 * so shifts along each dimension in turn also fill the corners. periodic:
 * the ends of the grid are neighbours. Staging is bounded by the memory
 * budget. Collective; the file must be open read-write.
 */
PASSION_API int passion_oc_shift_all(passion_file *f, int dim, int dir,
                                     int periodic, int64_t width);

/*
 * Out-of-core multicast (PASSION_oc_multicast): rank `root` reads section
 * `src` of its local array file and every rank of `group` (context ranks,
 * ngroup of them; NULL = all) receives it: into section `dst` of its own
 * file when dst is non-NULL (same counts as src), else into buf/mem. The
 * data moves in pieces that fit the memory budget. Collective over the
 * context; ranks outside the group pass through.
 */
PASSION_API int passion_oc_multicast_all(passion_file *f, int root,
                                         const passion_section *src,
                                         const int *group, int ngroup,
                                         const passion_section *dst,
                                         void *buf,
                                         const passion_memspec *mem);

#ifdef __cplusplus
}
#endif
#endif /* PASSION_H */
