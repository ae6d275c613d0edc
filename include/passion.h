/*
 * passion.h - the one public header of passion, a runtime library for
 * out-of-core arrays in parallel (MPI, SPMD) programs. API version 1.0;
 * man passion(3) for the overview, one man page per group of calls.
 *
 * Naming rule (every public name follows it):
 *  - functions are passion_<object>_<action>: the object is the type the
 *    call acts on (options, ctx, counters, array, section, file, request,
 *    engine, slab, part; wisdom, a file of what the planner learned) and
 *    the action a verb (create/free, open/close, set/get, read/write,
 *    next...) or, for a query without side effects, the property it
 *    returns (passion_file_path). Objects are created and
 *    destroyed in matched pairs: _create/_free, _open/_close. The only
 *    names without an object are the library-level calls passion_init,
 *    passion_finalize, passion_version and passion_strerror, and the
 *    all-to-all calls passion_alltoall / passion_alltoallv, which keep
 *    MPI's names and argument shape;
 *  - a collective call that reads or writes array data ends in _all
 *    (passion_file_read_all, passion_part_next_all, passion_file_shift_all);
 *  - a non-blocking call ends in _begin and returns a passion_request,
 *    finished by passion_request_wait (or polled by passion_request_test);
 *  - types are passion_<object>, enumerations passion_<kind> with values
 *    PASSION_<KIND>_<NAME>; macros and error codes are PASSION_*.
 *
 * Thread contract (passion(3), THREADS):
 *  - no two calls on one context, or on its arrays, files, requests and
 *    iterators, may run at the same time. Detected: a call entered while
 *    another thread's call runs on the same context returns PASSION_ESTATE
 *    at once on that thread and changes nothing (not the detail either;
 *    the code is not agreed over ranks: it reports a misuse); queries that
 *    only read (errdetail, counters_get, get_spec...) are not checked.
 *    Calls made one after another from different threads are fine;
 *    different contexts may be used from different threads at once only
 *    if MPI provides MPI_THREAD_MULTIPLE;
 *  - passion's own helper threads (the I/O engine's worker, the
 *    extended two-phase method's I/O thread) call only the file's driver;
 *    with the posix and fault drivers they make no MPI call, so any
 *    thread level works; with the mpiio driver they run only when
 *    MPI_Query_thread says MPI_THREAD_MULTIPLE, and otherwise the same
 *    work runs on the calling thread (same results, no overlap).
 *
 * Return conventions:
 *  - every function returning int returns 0 (PASSION_OK) on success or a
 *    negative PASSION_E* code on failure, except the iterators
 *    passion_slab_next and passion_part_next_all, which return 1 when they
 *    hand out an item, 0 at the end and a negative code on error;
 *    passion_strerror() gives a code's message and passion_ctx_errdetail()
 *    what failed, where (file, offset) and on which rank;
 *  - functions returning a pointer or a count (passion_version,
 *    passion_strerror, passion_ctx_errdetail, passion_options_errdetail,
 *    passion_file_path, passion_array_get_spec, passion_engine_name,
 *    passion_section_elems, passion_ctx_comm) never fail on valid handles
 *    (passion_driver_name and passion_xchg_name return NULL past the
 *    last value of their enumeration);
 *  - "collective" calls must be made by every rank of the context's
 *    communicator; they return the same code on every rank and never hang
 *    because one rank failed. Calls not marked collective are independent;
 *  - "/ * out * /" marks output parameters; on failure an output handle is
 *    set to NULL.
 *
 * Lifetimes: the caller owns every buffer it passes (and must not touch a
 * buffer given to a _begin call until the request is waited for); passion
 * owns the objects it creates until the matching _free or _close. A child
 * must go before its parent: passion_finalize with arrays left,
 * passion_array_free with files of the array open, passion_file_close with
 * requests in flight or a slab or partition iterator open on the file
 * return PASSION_ESTATE and change nothing (the handle stays valid). A
 * NULL handle is a no-op (returns 0) for every _free, _close and
 * passion_finalize.
 *
 * ABI: the public structs that may grow (array spec, slab and partition
 * options, the slab and partition items, plan info, counters) end in
 * reserved space; later 1.x versions add fields only there, with zero
 * meaning "as before". Fill input structs with their _init function (which
 * zeroes the reserved space); passion rejects a nonzero reserved field
 * with PASSION_EINVAL. Enumeration values never change. Options are an
 * opaque handle set by key, so new options need no new symbol.
 *
 * Indices, sizes and offsets are 64-bit and 0-based.
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

/* ---------------------------------------------------------------- version */

#define PASSION_VERSION_MAJOR 1
#define PASSION_VERSION_MINOR 0
#define PASSION_VERSION_PATCH 0
#define PASSION_VERSION_STRING "1.0.0"

/*
 * The library's version (which may be newer than the header's macros):
 * fills the non-NULL pointers and returns the version string ("1.0.0");
 * static storage, never fails.
 */
PASSION_API const char *passion_version(int *major, int *minor, int *patch);

/*
 * The MPI the library was compiled against, from its mpi.h: "MPICH 4.0.2",
 * "Open MPI 4.1.4" or "MPI 3.1" (standard version only, another MPI). A
 * program must use the same MPI (compile with that MPI's wrapper); compare
 * with MPI_Get_library_version at run time (`passion info` prints both).
 * Static storage, never fails; callable before MPI_Init.
 */
PASSION_API const char *passion_mpi_build(void);

/* ---------------------------------------------------------------- errors */

typedef enum passion_error {
    PASSION_OK = 0,
    PASSION_EINVAL = -1,    /* invalid argument (zero stride, bad size,
                               unknown option key or value...) */
    PASSION_ERANGE = -2,    /* section or index outside the array bounds,
                               or an output buffer too small */
    PASSION_EOVERFLOW = -3, /* a size or byte count would overflow 64 bits */
    PASSION_ENOMEM = -4,    /* allocation failed or memory budget too small */
    PASSION_EIO = -5,       /* an I/O call failed (errno in the detail) */
    PASSION_ESHORT = -6,    /* file shorter than the array it should hold */
    PASSION_ENOSPC = -7,    /* no space left on the device */
    PASSION_EMISMATCH = -8, /* ranks disagree on arguments of a collective */
    PASSION_EMPI = -9,      /* an MPI call failed */
    PASSION_EFORMAT = -10,  /* bad file header (.npy) or wrong file size */
    PASSION_ENOTSUP = -11,  /* valid request that this build cannot do */
    PASSION_ESTATE = -12,   /* call out of order: an object still has
                               children (open files, requests in flight,
                               iterators), or a handle in the wrong state */
    PASSION_ENOENT = -13,   /* file does not exist */
    PASSION_EACCES = -14,   /* permission denied */
    PASSION_EREMOTE = -15,  /* reserved: failure reported by another rank */
    PASSION_EEXIST = -16    /* file exists (PASSION_MODE_CREATE_EXCL) */
} passion_error;

/* Message for a code; never NULL, static storage. */
PASSION_API const char *passion_strerror(int code);

/* ------------------------------------------------------ enumerations */

/* I/O drivers (option `driver`). */
typedef enum passion_driver {
    PASSION_DRIVER_POSIX = 0, /* "posix": pread/pwrite, optional O_DIRECT */
    PASSION_DRIVER_MPIIO = 1, /* "mpiio": independent MPI-IO at explicit
                                 offsets */
    PASSION_DRIVER_FAULT = 2  /* "fault": test builds only, posix that
                                 fails on purpose (options fault_*) */
} passion_driver;

/* Methods for section access (independent and collective). */
typedef enum passion_method {
    PASSION_METHOD_AUTO = 0,       /* cost model chooses (default) */
    PASSION_METHOD_DIRECT = 1,     /* one request per contiguous run */
    PASSION_METHOD_SIEVE = 2,      /* data sieving in budget-sized chunks */
    PASSION_METHOD_ETP_STATIC = 3, /* extended two-phase, static domains */
    PASSION_METHOD_ETP_DYNAMIC = 4 /* extended two-phase, dynamic domains */
} passion_method;

/* Exchange (all-to-all) algorithms (option `exchange`, names in quotes). */
typedef enum passion_xchg {
    PASSION_XCHG_DEFAULT = -1,  /* the context's option (not an option
                                   value itself) */
    PASSION_XCHG_AUTO = 0,      /* "auto": cost model chooses algorithm and
                                   radix */
    PASSION_XCHG_MPI = 1,       /* "mpi": MPI_Alltoall / MPI_Alltoallv */
    PASSION_XCHG_PAIRWISE = 2,  /* "pairwise": Bokhari, XOR / shift */
    PASSION_XCHG_A1 = 3,        /* "a1": one stage, step i: j sends to
                                   (i+j)%P */
    PASSION_XCHG_INDEX = 4,     /* "index": Bruck et al., radix r */
    PASSION_XCHG_FOURSTAGE = 5, /* "fourstage": Liu-Wang-Prasanna */
    PASSION_XCHG_FOURSTAGE_NB = 6, /* "fourstage-nb": dual-buffer
                                      non-blocking four-stage */
    PASSION_XCHG_TWOLEVEL = 7   /* "twolevel": combine within each node,
                                   four-stage among node leaders,
                                   distribute within nodes */
} passion_xchg;

/* The option's name of a driver ("posix", ...) or of an exchange
   algorithm ("auto", "mpi", ...; PASSION_XCHG_DEFAULT has none); static
   storage. NULL for a value outside the enumeration, so a loop from 0
   lists every name and ends at the first NULL. A driver this build lacks
   (fault, without -Dtest_hooks=true) has its name too; the options refuse
   it. */
PASSION_API const char *passion_driver_name(passion_driver driver);
PASSION_API const char *passion_xchg_name(passion_xchg alg);

/* Asynchronous I/O engines (option `engine`). */
typedef enum passion_engine {
    PASSION_ENGINE_AUTO = 0,   /* "auto": io_uring, else the thread */
    PASSION_ENGINE_URING = 1,  /* "uring": io_uring (liburing) */
    PASSION_ENGINE_THREAD = 2  /* "thread": worker thread calling the driver,
                                  no io_uring at all */
} passion_engine;

/* ---------------------------------------------------------------- options */

/*
 * Options of a context: an opaque set of key = value settings, so that
 * new options need no new symbol. Keys (value syntax; default):
 *   memory_budget   bytes for any staging buffer, >= 1, with optional
 *                   K, M, G suffix (KiB, MiB, GiB); 64M
 *   driver          posix | mpiio | fault (enum passion_driver); posix
 *   direct_io       0 | 1: O_DIRECT with the posix driver (unaligned
 *                   reads too, through a bounce or in place; unaligned
 *                   writes through the page cache); 0
 *   verbosity       0 quiet .. 3; 2 prints every error on stderr; 0
 *   exchange        auto | mpi | pairwise | a1 | index | fourstage |
 *                   fourstage-nb | twolevel (enum passion_xchg); auto
 *   radix           index radix, 0 = chosen by the model; 0
 *   engine          auto | uring | thread (enum passion_engine); auto
 *   io_latency      seconds per file request, >= 0, 0 = measure; 0
 *   io_bandwidth    file bytes per second, >= 0, 0 = measure; 0
 *   io_concurrency  reads kept in flight by batched reads, 0 = 8; 0
 *   msg_alpha       seconds per message start-up, 0 = measure; 0
 *   msg_beta        seconds per message byte, 0 = measure; 0
 *   virtual_node_ranks  > 0: split the ranks into virtual nodes of this
 *                   many consecutive ranks instead of the real nodes
 *                   (passion_ctx_node); 0
 *   cb_ranks        "r:r:..." ranks doing the file I/O of the extended
 *                   two-phase method (aggregators); ""
 *   cb_per_node     > 0: the first this many ranks of each node; 0
 *   cb_nodes        > 0: this many ranks spread over the nodes; 0
 *                   (none set: all ranks on one node, one per node else)
 *   stripe_size     file domain alignment, 0 = the file system's; 0
 *   file_format     auto | raw: how passion_file_open takes a global
 *                   file's name: auto by its extension (.npy, .h5, .nc:
 *                   that format; others raw; "PATH:OBJECT" an object),
 *                   raw as a raw file whatever its name or contents (the
 *                   name whole, colons included; header_bytes, then the
 *                   data: a view of bytes of any file); auto
 *   planner         estimate | measure: how auto chooses (the exchange's
 *                   algorithm, a collective section access's method):
 *                   estimate runs what the cost model ranks first, the
 *                   same every call; measure times the candidates the
 *                   model ranks close (MPI's own call among the
 *                   exchange's) on the first calls of a repeated call
 *                   signature and keeps the fastest, measured again
 *                   after 4096 calls; the same on every rank; measure
 *   wisdom          file of what measure learned: read by rank 0 at the
 *                   first planned call (its signatures run their winner
 *                   from the first call, never measured again), merged
 *                   back by rank 0 when the context is freed; set on
 *                   every rank or on none; ""
 * Test builds only (meson -Dtest_hooks=true; a library built without it
 * refuses these keys and driver fault with PASSION_EINVAL, naming the key
 * and the build option; not part of the stable interface):
 * the simulated network (see passion_context(3)):
 *   sim_net_latency_us  microseconds every message between two (virtual)
 *                   nodes costs its sender before it is sent; 0
 *   sim_net_byte_ns     nanoseconds per byte of such a message; 0
 * fault injection:
 *   fault_fail_at   fail the Nth I/O request (1-based, driver fault),
 *                   once, 0 never; 0
 *   fault_errno     errno of that failure; EIO
 *   fault_short     0 | 1: every request moves at most half; 0
 *   fault_alloc_at  fail the library's Nth allocation (1-based, counted
 *                   from passion_init, the context being the first),
 *                   once, with any driver; 0 never; 0
 *   fault_ranks     -1 every rank, else only this rank (both faults); -1
 * Every setter validates: an unknown key, a value of the wrong type or
 * out of range is PASSION_EINVAL, the options stay as they were, and
 * passion_options_errdetail() says why. Independent, no communication.
 */
typedef struct passion_options passion_options;

/* A new set holding the defaults. */
PASSION_API int passion_options_create(passion_options **o /* out */);
/* Free the set (a context made from it keeps its own copy). */
PASSION_API int passion_options_free(passion_options *o);
/* Set from text (enumeration keys take the names above). */
PASSION_API int passion_options_set(passion_options *o, const char *key,
                                    const char *value);
/* Set an integer, size or enumeration key (enum values as numbers). */
PASSION_API int passion_options_set_int(passion_options *o, const char *key,
                                        int64_t value);
/* Set a real-valued key (io_latency, io_bandwidth, msg_alpha, msg_beta). */
PASSION_API int passion_options_set_double(passion_options *o,
                                           const char *key, double value);
/*
 * Apply a comma-separated "key=value,key=value" list (the syntax of the
 * environment variable PASSION_OPTIONS); all or nothing.
 */
PASSION_API int passion_options_parse(passion_options *o, const char *list);
/*
 * The value of key as text, as the setters accept it (sizes in bytes,
 * enumerations by name, reals with 17 significant digits) into buf of len
 * bytes; PASSION_ERANGE if it does not fit (buf then holds "").
 */
PASSION_API int passion_options_get(const passion_options *o, const char *key,
                                    char *buf /* out */, size_t len);
/*
 * Why the last failed call on o failed: the setters and
 * passion_options_parse clear it at entry and set it on failure ("" after
 * a success); passion_options_get, a query, leaves it as it was unless it
 * fails itself. Valid until the next such call on o.
 */
PASSION_API const char *passion_options_errdetail(const passion_options *o);

/* ---------------------------------------------------------------- context */

typedef struct passion_ctx passion_ctx;

/*
 * Create a context on comm (duplicated inside) with a copy of opt (NULL:
 * the defaults); the environment variable PASSION_OPTIONS, a "key=value,..."
 * list, is applied on top in both cases (an error in it fails the call
 * with PASSION_EINVAL). A process started by the launcher of another MPI
 * (MPI_COMM_WORLD of one rank where the launcher's environment,
 * OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMI_RANK, PMIX_RANK..., says the job
 * has more; not in a child of MPI_Comm_spawn) fails with PASSION_EINVAL,
 * whatever comm, and a detail naming the launcher to use. Collective.
 * *ctx is NULL on error; passion_ctx_errdetail(NULL) then says why.
 */
PASSION_API int passion_init(MPI_Comm comm, const passion_options *opt,
                             passion_ctx **ctx /* out */);

/*
 * Free the context and everything it owns. Collective. NULL is a no-op.
 * PASSION_ESTATE (on every rank; the context stays valid) while any rank
 * still has an array of the context (and so possibly files open).
 */
PASSION_API int passion_finalize(passion_ctx *ctx);

/* The context's option key (after PASSION_OPTIONS), as
   passion_options_get; PASSION_EINVAL for an unknown key. */
PASSION_API int passion_ctx_option_get(const passion_ctx *ctx,
                                       const char *key, char *buf /* out */,
                                       size_t len);
/* The context's private communicator (MPI_COMM_NULL for NULL). */
PASSION_API MPI_Comm passion_ctx_comm(const passion_ctx *ctx);

/*
 * The node of this rank, as passion_init found it: ranks sharing memory
 * (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED), or, with the option
 * virtual_node_ranks = k (or the environment variable
 * PASSION_VIRTUAL_NODE_RANKS = k, which wins), virtual nodes of k
 * consecutive ranks (the last may be smaller). Nodes are numbered from 0
 * in the order of their lowest rank, which is the node's leader
 * (node_rank 0). Any pointer may be NULL. Independent, never fails on a
 * valid context (PASSION_EINVAL for NULL).
 */
PASSION_API int passion_ctx_node(const passion_ctx *ctx, int *node_id,
                                 int *nnodes, int *node_rank,
                                 int *node_size);

/*
 * What the last section access on ctx (passion_file_read/_write,
 * passion_file_read_all/_write_all) did on this rank: *method the method
 * it used, `auto` resolved (DIRECT, SIEVE, ETP_STATIC or ETP_DYNAMIC;
 * PASSION_METHOD_AUTO before the first access, after a failed one, or
 * when this rank moved no data independently); *predicted the seconds the
 * collective cost model predicted for its choice when the call was a
 * collective one with method auto (the same on every rank), else 0.
 * Either pointer may be NULL. Independent; PASSION_EINVAL for a NULL ctx.
 */
PASSION_API int passion_ctx_last_method(const passion_ctx *ctx,
                                        passion_method *method /* out */,
                                        double *predicted /* out */);

/*
 * Detail of the last error on this context: what failed, the file, offset
 * and rank. Every public call on the context or on an object made from it
 * (array, file, request, iterator) clears it at entry, so it is the empty
 * string after a call that succeeded; the exceptions are this function and
 * the read-only accessors (passion_ctx_option_get, passion_ctx_comm,
 * passion_ctx_last_method,
 * passion_counters_get, passion_array_get_spec, passion_file_path,
 * passion_section_elems), which leave it alone, and an iterator call that
 * returns the iterator's earlier failure again, which keeps that failure's
 * detail. Valid until the next call on ctx. With ctx NULL: the detail of
 * this thread's last passion_init ("" if it succeeded), which leaves no
 * context when it fails; valid until the thread's next passion_init.
 */
PASSION_API const char *passion_ctx_errdetail(const passion_ctx *ctx);

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
    /* the exchange's point-to-point messages (MPI messages: one split at
       the 2 GiB chunk limit counts per part) by where the receiver is:
       on this rank's node, or on another node (passion_ctx_node) */
    uint64_t messages_intra_node;
    uint64_t bytes_intra_node;
    uint64_t messages_inter_node;
    uint64_t bytes_inter_node;
    uint64_t reserved[8];     /* zero; room for later counters */
} passion_counters;

/* Copy the counters into *c. Independent. */
PASSION_API int passion_counters_get(const passion_ctx *ctx,
                                     passion_counters *c /* out */);
/* Zero them (peak_staging restarts at the staging held now). */
PASSION_API int passion_counters_reset(passion_ctx *ctx);

/* ---------------------------------------------------------------- arrays */

typedef enum passion_dist {
    PASSION_DIST_BLOCK = 0,     /* BLOCK (m = 0) or BLOCK(m) */
    PASSION_DIST_CYCLIC = 1,    /* CYCLIC (m = 0 means 1) or CYCLIC(m) */
    PASSION_DIST_COLLAPSED = 2  /* "*": not distributed */
} passion_dist;

typedef enum passion_placement {
    PASSION_PLACE_LOCAL = 0,      /* one local array file per rank (LPM) */
    PASSION_PLACE_GLOBAL = 1,     /* one global array file (GPM) */
    PASSION_PLACE_PARTITIONED = 2 /* global file in in-core partitions (PIM) */
} passion_placement;

typedef enum passion_storage {
    PASSION_ROW_MAJOR = 0, /* last dimension fastest (C) */
    PASSION_COL_MAJOR = 1, /* first dimension fastest (Fortran, the thesis) */
    PASSION_ORDER_CUSTOM = 2 /* order[] gives the permutation */
} passion_storage;

/*
 * Element types: a kind and a size in bytes (elem_size). Valid pairs
 * (else PASSION_EINVAL at passion_array_create):
 *   BYTES    any size 1..64: opaque bytes, never converted (numpy "V<n>")
 *   INT      1, 2, 4, 8      (numpy i1 i2 i4 i8)
 *   UINT     1, 2, 4, 8      (u1 u2 u4 u8)
 *   FLOAT    2, 4, 8, 16     (f2 f4 f8; 16 is numpy's "f16"/"g" long
 *                             double as numpy writes it on x86-64: the
 *                             80-bit extended format padded to 16 bytes,
 *                             byte-swapped as one 16-byte unit)
 *   COMPLEX  8, 16, 32       (c8 c16 c32: two FLOATs of half the size,
 *                             each half byte-swapped on its own)
 *   BOOL     1               (numpy "?" / b1)
 * The byte order of a file's data: NATIVE is this machine's; data in the
 * other order is converted on every read and write (memory is always in
 * the machine's order). BYTES and 1-byte kinds are never swapped.
 */
typedef enum passion_kind {
    PASSION_KIND_BYTES = 0,
    PASSION_KIND_INT = 1,
    PASSION_KIND_UINT = 2,
    PASSION_KIND_FLOAT = 3,
    PASSION_KIND_COMPLEX = 4,
    PASSION_KIND_BOOL = 5
} passion_kind;

typedef enum passion_endian {
    PASSION_ENDIAN_NATIVE = 0, /* the machine's (on create: written so; on
                                  opening an existing file with a header:
                                  whatever the file says, converted) */
    PASSION_ENDIAN_LITTLE = 1,
    PASSION_ENDIAN_BIG = 2
} passion_endian;

/* What the user fills to describe an array (the thesis's OCAD inputs). */
typedef struct passion_array_spec {
    int ndims;                           /* 1 .. 7 */
    int64_t shape[PASSION_MAX_DIMS];     /* global size per dimension, > 0 */
    int64_t elem_size;                   /* bytes per element, 1 .. 64 */
    passion_kind kind;                   /* element type with elem_size
                                            (see passion_kind) */
    passion_endian endian;               /* the FILE's byte order; memory
                                            is always native */
    passion_storage storage;
    int order[PASSION_MAX_DIMS];         /* CUSTOM: order[0] is the slowest-
                                            varying dimension in the file,
                                            order[ndims-1] the fastest */
    int grid[PASSION_MAX_DIMS];          /* ranks per dimension; product =
                                            communicator size; 0 = 1 */
    passion_dist dist[PASSION_MAX_DIMS];
    int64_t block[PASSION_MAX_DIMS];     /* m of BLOCK(m) / CYCLIC(m); 0 =
                                            default */
    int64_t ghost[PASSION_MAX_DIMS];     /* overlap width per dimension,
                                            0 <= ghost[d] <= shape[d]
                                            (else PASSION_EINVAL) */
    passion_placement placement;
    int64_t header_bytes;                /* raw global file: bytes before the
                                            data (0 for .npy: the header
                                            gives it) */
    int64_t reserved[8];                 /* zero (see ABI above) */
} passion_array_spec;

typedef struct passion_array passion_array;

/*
 * Zero a spec and set ndims, shape, elem_size and the natural kind for the
 * size: 1 UINT, 2 INT, 4 and 8 FLOAT, 16 COMPLEX, any other size BYTES
 * (so a float32/float64 array needs nothing more; set kind for int32,
 * int64, bool...). The rest defaults (native byte order, row-major, grid
 * 1, BLOCK, no ghosts, local placement). Independent.
 */
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
/*
 * Free the descriptor. Independent. PASSION_ESTATE (nothing freed) while
 * a file of the array is open. NULL is a no-op.
 */
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

typedef enum passion_mode {
    PASSION_MODE_RDONLY = 0,
    PASSION_MODE_RDWR = 1,
    PASSION_MODE_CREATE = 2,     /* a new file, sized to the array,
                                    zero-filled, replacing any old one in
                                    one step (made complete under
                                    .NAME.passion-tmp, synced, renamed);
                                    implies read-write */
    PASSION_MODE_CREATE_EXCL = 3 /* as CREATE, but PASSION_EEXIST (on every
                                    rank, nothing created) if a file exists */
} passion_mode;

/*
 * Open the array's file(s). Local placement: path is a pattern in which
 * every "%d" (or "%r") stands for the rank and "%%" for one '%'
 * ("data.%d.laf"; without any %d or %r ".<rank>" is appended); each rank
 * opens its own local array file. Global placement: one file whose format
 * the name's extension chooses: ".npy" NumPy (versions 1.0-3.0), ".h5" /
 * ".hdf5" HDF5 and ".nc" netCDF (builds with those formats; an object
 * inside is named after the last ':': on open as passion_open says, on
 * create when the part before it ends in .h5, .hdf5 or .nc), anything else
 * raw (header_bytes, then the data in the spec's type and byte order).
 * An existing file's header must agree with the array's spec: shape,
 * storage order (C or Fortran), kind and element size, and byte order
 * unless the spec says NATIVE, else PASSION_EFORMAT naming both ("file has
 * >i8 [3, 4], spec says <f8 [3, 4]"); data in the other byte order is
 * converted on every access. Create writes a header of the spec's type
 * (endian NATIVE: the machine's order). A file name of PATH_MAX bytes or
 * more (or a component too long for the file system) is PASSION_EINVAL.
 * An existing file shorter than the array gives PASSION_ESHORT. Headers
 * are read by rank 0 and broadcast. Collective: every rank passes the
 * same path (pattern) and mode.
 */
PASSION_API int passion_file_open(passion_array *a, const char *path,
                                  passion_mode mode,
                                  passion_file **f /* out */);

/*
 * Open an existing file by its own header: make the array descriptor from
 * what the file says (shape, kind, element size, byte order, storage
 * order) and open the file. name is
 *   "x.npy"            a NumPy file;
 *   "run.h5:/fields/u" an HDF5 dataset (by its path in the file);
 *   "run.nc:u"         a netCDF classic variable;
 *   "data.%d.laf"      a local file set, by its description file.
 * Name splitting: if name names an existing file, it is the whole path;
 * otherwise it is split at its LAST ':' into PATH:OBJECT when PATH names
 * an existing file (so "a:b.h5:/x" is "a:b.h5" and "/x"; dataset paths
 * must not contain ':').
 * layout: NULL (a global array, one-rank grid) or a spec whose grid,
 * dist, block, ghost and placement are used (placement LOCAL, the zero
 * value, means GLOBAL for a file that holds one global array). If
 * layout->ndims is 0 the shape and storage order are the file's, else
 * they must equal it; if layout->elem_size is 0 the type (kind, size,
 * byte order) is the file's, else kind and size must equal it, and the
 * byte order too unless it is NATIVE. A difference is PASSION_EFORMAT
 * naming both. A raw file has no header: PASSION_EFORMAT (use
 * passion_array_create and passion_file_open). mode: RDONLY or RDWR
 * (create with passion_file_open). Metadata is read once, by rank 0, and
 * broadcast. Collective. On success the caller closes *f, then frees *a;
 * on failure both are NULL.
 */
PASSION_API int passion_open(passion_ctx *ctx, const char *name,
                             passion_mode mode,
                             const passion_array_spec *layout,
                             passion_array **a /* out */,
                             passion_file **f /* out */);
/*
 * Close. Collective. NULL is a no-op. PASSION_ESTATE (on every rank; the
 * file stays open) while any rank has a request in flight on the file or
 * a slab or partition iterator open on it (as input or output).
 */
PASSION_API int passion_file_close(passion_file *f);
/* Flush written data to the device (fdatasync). Independent. */
PASSION_API int passion_file_sync(passion_file *f);
/* Drop the file's pages from the page cache (for cold benchmarks). */
PASSION_API int passion_file_drop_cache(passion_file *f);
/* The path this rank opened. */
PASSION_API const char *passion_file_path(const passion_file *f);

/*
 * Give the file(s) of f a new name, for publishing a file made under a
 * temporary name only once it is complete (what `passion get` and
 * `passion convert` do): every rank's writes are synced to the device,
 * then the file is renamed onto path (replacing an existing file in one
 * step) and its directory synced. Local placement: path is a pattern as in
 * passion_file_open: rank 0 removes the description of the new pattern
 * (README, "Local array sets"), each rank renames its own file, and rank 0
 * writes the description for the new pattern last (removing the old
 * pattern's), so a description only ever names complete files of one
 * generation; a crash in between leaves a set without description. f
 * stays open under the new name.
 * Collective (same path on every rank); the file must be writable.
 */
PASSION_API int passion_file_rename(passion_file *f, const char *path);

/*
 * Read the description of a local array set (README, "Local array sets")
 * without opening the set: name is the set's pattern ("data.%d.laf") or
 * its description file ("data.laf.passion"). Fills *spec (shape, element
 * type, storage order, grid, distributions with their block sizes,
 * ghosts; local placement), *nfiles (the number of files: the ranks that
 * wrote the set, which may differ from this communicator's size) and
 * pattern (len bytes; the files' pattern, resolved against the
 * description's directory; NULL to skip). A missing description is
 * PASSION_ENOENT, a malformed one PASSION_EFORMAT. Collective (rank 0
 * reads the description and broadcasts it).
 */
PASSION_API int passion_array_spec_read(passion_ctx *ctx, const char *name,
                                        passion_array_spec *spec /* out */,
                                        int *nfiles /* out */,
                                        char *pattern /* out */, size_t len);

/*
 * One array a file holds, as passion_array_list describes it (plain data).
 */
#define PASSION_NAME_MAX 1024
typedef struct passion_array_entry {
    char name[PASSION_NAME_MAX]; /* the object: an HDF5 dataset's path
                                    ("/fields/u"), a netCDF variable ("u");
                                    "" for a file of one array (.npy, a
                                    local set); "PATH:name" opens it */
    passion_array_spec spec;     /* shape, kind, elem_size, endian (the
                                    file's), storage; a local set's whole
                                    spec; elem_size 0 when the type is one
                                    passion cannot take */
    char layout[16];             /* "contiguous", "chunked", "compact",
                                    "virtual", "external", "unallocated",
                                    "record" (netCDF), "local" (a set) */
    int64_t data_offset;         /* byte offset of element 0; -1 if the
                                    elements are not one run of the file */
    int64_t data_bytes;          /* elements x elem_size (0 if unknown) */
    int status;                  /* 0: passion_open takes it; else the
                                    PASSION_E* code passion_open gives */
    char why[512];               /* status != 0: passion_open's reason */
    int text;                    /* 1: the elements are text, kind BYTES
                                    (an HDF5 fixed-length string, a
                                    netCDF char); 0 otherwise */
    int reserved_int;            /* zero */
    int64_t reserved[3];         /* zero */
} passion_array_entry;

/*
 * List the arrays of a file (what `passion ls FILE` prints, like
 * `h5ls -r` / `ncdump -h`): every dataset of an HDF5 file, recursively,
 * in name order (hard links; a dataset reached by two paths is listed
 * under both); every variable of a netCDF classic file in header order;
 * the one array of a .npy file or of a local set (by its pattern or its
 * description). name may also be "PATH:OBJECT" (split as passion_open
 * does): an HDF5 group lists the datasets below it, a dataset or variable
 * only itself. Arrays passion_open refuses are listed too, with status
 * and why. Fills entries[0 .. min(max, *count) - 1] and sets *count to the
 * number of arrays (call with max 0 and entries NULL to learn it). A raw
 * file (no header) is PASSION_EFORMAT, a missing file PASSION_ENOENT, an
 * OBJECT that is not there PASSION_EINVAL. Collective (rank 0 reads the
 * file and broadcasts); every rank passes the same name and max.
 */
PASSION_API int passion_array_list(passion_ctx *ctx, const char *name,
                                   passion_array_entry *entries /* out */,
                                   int max, int *count /* out */);

/*
 * Read / write this rank's whole local array file, ghosts included, to or
 * from a packed buffer in storage order (thesis PASSION_read/_write).
 * Independent; local placement only.
 */
PASSION_API int passion_file_read_local(passion_file *f, void *buf);
PASSION_API int passion_file_write_local(passion_file *f, const void *buf);

/*
 * Read / write a strided section with method (enum passion_method:
 * auto, direct or sieve). Independent. mem may be NULL (packed). A write
 * changes no file byte outside the section. On error, a read may have
 * filled part of buf; a write may have written part of the section.
 */
PASSION_API int passion_file_read(passion_file *f,
                                  const passion_section *s, void *buf,
                                  const passion_memspec *mem,
                                  passion_method method);
PASSION_API int passion_file_write(passion_file *f,
                                   const passion_section *s,
                                   const void *buf,
                                   const passion_memspec *mem,
                                   passion_method method);

/*
 * The method `auto` would use for this section, and the predicted requests
 * and bytes moved from/to the file, from the cost model alone (no I/O).
 */
typedef struct passion_plan_info {
    passion_method method; /* DIRECT or SIEVE (or an ETP method) */
    int64_t requests;    /* file requests predicted */
    int64_t bytes_file;  /* bytes moved from/to the file predicted */
    int64_t runs;        /* contiguous runs in the section */
    double seconds;      /* model's predicted time */
    int64_t reserved[4]; /* zero */
} passion_plan_info;
/* Independent; op_write 0 for a read, 1 for a write. */
PASSION_API int passion_section_plan(passion_file *f, const passion_section *s,
                                     int op_write, passion_method method,
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
                                 MPI_Datatype type, passion_xchg alg,
                                 int radix);

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
                                  passion_xchg alg, int radix);

/* ------------------------------------ planner wisdom (collective/planner/) */

/*
 * Wisdom files (the option wisdom): what the planner learned, a text file
 * "# passion wisdom 1" then one line per decided call signature. These
 * calls are independent, no communication (call them on one rank); ctx
 * carries the detail. Each reads its files whole and checks them whole
 * before it writes anything, and writes its output whole (a temporary
 * renamed over it): a call that fails changes no file. A file that does
 * not begin with the header is PASSION_EFORMAT; a malformed line
 * PASSION_EINVAL, the detail naming the file and the line; a missing
 * file PASSION_ENOENT.
 */

/* The records of the wisdom file path as text, one line each
   ("exchange  P=2 nodes=1 ... -> a1 (7.2e-06 s measured)") and a last
   line counting them, NUL-terminated in buf (len bytes). *need (when not
   NULL) gets the bytes the text takes, its NUL included, also when it does
   not fit: then PASSION_ERANGE and buf holds "" (buf NULL with len 0 asks
   for the size). */
PASSION_API int passion_wisdom_describe(passion_ctx *ctx, const char *path,
                                        char *buf /* out */, size_t len,
                                        size_t *need /* out */);
/* Replace the file out with the records of the wisdom files
   in[0..nin-1], a later file's record winning over an earlier one of the
   same signature; out's own records only where out is one of in (then it
   is read before it is replaced). nin 0: out becomes wisdom with no
   records. */
PASSION_API int passion_wisdom_merge(passion_ctx *ctx, const char *out,
                                     const char *const *in, int nin);

/* --------------------------------------- global placement (collective/) */

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
 * caller's buffers: at most the memory budget for the whole call (the
 * O(ranks x dims) descriptors and the exchange included; MPI's own
 * buffers with exchange=mpi are not counted); PASSION_ENOMEM on every
 * rank when the budget cannot hold the descriptors and one element per
 * rank in a round.
 * The extended two-phase methods need a budget that holds the
 * descriptors, 5 x max(P-1, 1) elements and the exchange's staging for
 * them (PASSION_ENOMEM below, when some rank has data); auto then runs
 * independent access, which works with any budget that holds the
 * descriptors.
 * On error, a read may have filled part of buf, a write part of the file.
 */
PASSION_API int passion_file_read_all(passion_file *f,
                                      const passion_section *s, void *buf,
                                      const passion_memspec *mem,
                                      passion_method method);
PASSION_API int passion_file_write_all(passion_file *f,
                                       const passion_section *s,
                                       const void *buf,
                                       const passion_memspec *mem,
                                       passion_method method);

/* ------------------------------------------------------------ prefetch/ */

/*
 * Asynchronous section access (thesis 5.5.2, PASSION_read_prefetch /
 * PASSION_prefetch_wait). Requests run on an engine: io_uring where it can
 * be set up, else a worker thread that calls the file's driver (the mpiio
 * driver only with MPI_THREAD_MULTIPLE; below that level its requests run
 * synchronously when begun). The option `engine`
 * (auto, uring, thread) or the environment variable PASSION_ENGINE
 * (auto|uring|thread, it wins over the option) chooses; auto falls back to
 * the thread when io_uring setup fails (ENOSYS, EPERM, ENOMEM...), a forced
 * uring that cannot start is PASSION_ENOTSUP. Several requests may be in
 * flight; sieving is applied as each window completes. The caller must not
 * touch the buffer until the request is waited for, and must wait for
 * every request before closing its file (PASSION_ESTATE otherwise).
 * Writes in flight together must not overlap in their file extents (a
 * sieved write rewrites the holes of its extent), nor overlap reads in
 * flight.
 */

typedef struct passion_request passion_request;

/* The engine this context uses (starts it if needed). Independent. */
PASSION_API int passion_engine_get(passion_ctx *ctx,
                                   passion_engine *engine /* out */);
/* "uring", "thread", "auto" ("unknown" for another value); static. */
PASSION_API const char *passion_engine_name(passion_engine engine);

/*
 * Begin reading / writing a section (same arguments and checks as
 * passion_file_read / passion_file_write); *req receives the request
 * (NULL on error). Independent.
 */
PASSION_API int passion_file_read_begin(passion_file *f,
                                        const passion_section *s,
                                        void *buf,
                                        const passion_memspec *mem,
                                        passion_method method,
                                        passion_request **req /* out */);
PASSION_API int passion_file_write_begin(passion_file *f,
                                         const passion_section *s,
                                         const void *buf,
                                         const passion_memspec *mem,
                                         passion_method method,
                                         passion_request **req /* out */);
/*
 * Wait for a request, free it, return its outcome. The time spent blocked
 * (and, at begin, issuing) counts in t_io; a read that was complete before
 * the wait counts as a prefetch hit. NULL is a no-op.
 */
PASSION_API int passion_request_wait(passion_request *req);
/* Make progress without blocking; *done = 1 when wait would not block. */
PASSION_API int passion_request_test(passion_request *req,
                                     int *done /* out */);

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
    passion_method method; /* for the slab sections; default auto */
    int64_t ramp;     /* 1 (default): with prefetch, when width >= 4 and the
                         local extent along dim is at least 2*width, the
                         first width indices come as slabs of width/4,
                         width/4 and the rest, the last width as the same
                         in reverse, so that the I/O no computation can hide
                         (first read, last write) is a quarter slab; slabs
                         are then never wider than width. 0: all slabs
                         width wide (the last one possibly less). With
                         prefetch and an O_DIRECT output whose slabs are
                         contiguous, inner slab boundaries may move down
                         to indices at aligned file offsets (see
                         passion_prefetch(3)); start and count say where
                         each slab lies */
    int64_t reserved[7];   /* zero (see ABI above) */
} passion_slab_opts;

/* Defaults (see the fields), reserved space zeroed. */
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
    int64_t reserved[4];  /* zero */
} passion_slab;

typedef struct passion_slab_iter passion_slab_iter;

/*
 * Start iterating over f (opts NULL: the defaults); allocates the buffers.
 * f and opts->out stay busy (passion_file_close: PASSION_ESTATE) until
 * passion_slab_close. Independent.
 */
PASSION_API int passion_slab_open(passion_file *f,
                                  const passion_slab_opts *opts,
                                  passion_slab_iter **it /* out */);
/*
 * Next slab: returns 1 with *slab filled, 0 after the last (and on every
 * later call), or a negative code (and the same code on later calls).
 * Independent.
 */
PASSION_API int passion_slab_next(passion_slab_iter *it,
                                  passion_slab *slab /* out */);
/* Mark the current slab's in buffer modified (writeback = 1). */
PASSION_API int passion_slab_dirty(passion_slab_iter *it);
/* Finish pending writes, free the iterator; returns the first error of
   the iteration. NULL is a no-op. Independent. */
PASSION_API int passion_slab_close(passion_slab_iter *it);

/*
 * Partitioned In-Core Model (thesis 5.3.2, figure 5.2 III): iterate over
 * partitions of a global array file that fit the aggregate memory of all
 * ranks. Partition k is a block of `width` global indices along `dim`
 * (all of every other dimension); it is distributed over the ranks like
 * the array (its extent split over the processor grid, BLOCK; the array's
 * grid must have as many ranks as the communicator, else passion_part_open
 * fails with PASSION_EINVAL: a global array's default one-rank grid is not
 * split automatically), and each
 * rank receives its piece plus `halo` cells on every side (clipped at the
 * array's edges) in an in-core buffer. Pieces are read with
 * passion_file_read_all (default: the extended two-phase method); the
 * out buffer's piece interior is written to `out` (another global array
 * file of the same shape) with passion_file_write_all when the caller
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
    passion_method method; /* for the collective calls; default
                              PASSION_METHOD_ETP_DYNAMIC */
    int64_t reserved[8];   /* zero (see ABI above) */
} passion_part_opts;

/* Defaults (see the fields), reserved space zeroed. */
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
    int64_t reserved[4];             /* zero */
} passion_part;

typedef struct passion_part_iter passion_part_iter;

/*
 * Start iterating (opts NULL: the defaults); moves no data yet. f must be
 * a global array file (global or partitioned); f and opts->out stay busy
 * (passion_file_close: PASSION_ESTATE) until passion_part_close_all.
 * Collective (every rank passes the same options).
 */
PASSION_API int passion_part_open(passion_file *f,
                                  const passion_part_opts *opts,
                                  passion_part_iter **it /* out */);
/*
 * Write the previous partition's output, read the next partition: 1 with
 * *part filled, 0 after the last, or a negative code (kept for later
 * calls). Collective.
 */
PASSION_API int passion_part_next_all(passion_part_iter *it,
                                      passion_part *part /* out */);
/* Write the last output if the caller stopped early, free the iterator;
   returns the first error. NULL is a no-op. Collective. */
PASSION_API int passion_part_close_all(passion_part_iter *it);

/* ------------------------------ out-of-core communication (collective/) */

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
PASSION_API int passion_file_shift_all(passion_file *f, int dim, int dir,
                                       int periodic, int64_t width);

/*
 * Out-of-core multicast (PASSION_oc_multicast): rank `root` reads section
 * `src` of its local array file and every rank of `group` (context ranks,
 * ngroup of them; NULL = all) receives it: into section `dst` of its own
 * file when dst is non-NULL (same counts as src), else into buf/mem. The
 * data moves in pieces that fit the memory budget. Collective over the
 * context; ranks outside the group pass through.
 */
PASSION_API int passion_file_multicast_all(passion_file *f, int root,
                                           const passion_section *src,
                                           const int *group, int ngroup,
                                           const passion_section *dst,
                                           void *buf,
                                           const passion_memspec *mem);

#ifdef __cplusplus
}
#endif
#endif /* PASSION_H */
