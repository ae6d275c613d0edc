/*
 * core.h - internals of the passion/ folder (prefix core_): the context,
 * errors, counters, staging-memory accounting and the I/O driver ops table.
 *
 * Invariants: every function returns 0 or a negative PASSION_E* code and,
 * on failure, has written the context's detail string through core_err();
 * counters only ever grow between resets; staging bytes in use never go
 * negative and peak_staging is their maximum.
 */
#ifndef PASSION_CORE_H
#define PASSION_CORE_H

#include "passion.h"
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#define CORE_HIDDEN __attribute__((visibility("hidden")))
#define CORE_DETAIL_MAX 512

/* Slots for state that upper layers hang on a context (no upward calls:
   passion_finalize only runs the destructor the owner registered). */
enum { CORE_EXT_PF = 0, CORE_EXT_COLL = 1, CORE_EXT_MAX = 4 };

/*
 * The options of a context (passion/options.c holds the key table that
 * maps each public key to a field; public keys are the field names).
 * New options: a field here and a row in that table.
 */
typedef struct core_options {
    int64_t memory_budget;  /* bytes for any staging buffer; default 64 MiB */
    passion_driver driver;  /* default posix */
    int direct_io;          /* 1: O_DIRECT with the posix driver */
    int verbosity;          /* 0 quiet, 1 progress, 2 debug on stderr */
    passion_xchg exchange;  /* default auto */
    int radix;              /* index radix; 0 = chosen by the model */
    passion_engine engine;  /* prefetch engine; default auto */
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
} core_options;

/* The public handle: the options and the last setter's error. */
struct passion_options {
    core_options o;
    char detail[256];
};

/* Fill o with the defaults. */
CORE_HIDDEN void core_options_default(core_options *o);
/* Apply a "k=v,k=v" list to o, all or nothing; the reason in detail. */
CORE_HIDDEN int core_options_parse(core_options *o, const char *list,
                                   char *detail, size_t dlen);
/* Key's value as text into buf (PASSION_ERANGE if it does not fit). */
CORE_HIDDEN int core_options_get(const core_options *o, const char *key,
                                 char *buf, size_t len, char *detail,
                                 size_t dlen);

struct passion_ctx {
    MPI_Comm comm;
    int rank, size;
    core_options opt;
    passion_counters cnt;
    int64_t staging_now;
    struct core_stage_pool *stage; /* staging blocks kept between calls */
    char detail[CORE_DETAIL_MAX];
    /* message cost model, filled by the exchange layer's calibration */
    int msg_calibrated;
    double msg_alpha, msg_beta;
    /* file cost model, measured by the collective layer on the first
       uncached extent it meets (coll_file_calibrate): tries made, and the
       latency / bandwidth agreed over ranks (0 = not measured) */
    int file_tries;
    double file_lat, file_bw;
    int64_t fault_calls; /* requests seen by the fault driver */
    /* state owned by upper layers (prefetch engine...), freed by
       passion_finalize through the destructor they registered */
    void *ext[CORE_EXT_MAX];
    void (*ext_free[CORE_EXT_MAX])(passion_ctx *ctx, void *p);
    /* children alive (lifetimes: passion_finalize refuses while > 0) */
    int64_t live_arrays, live_files;
};

/* ---- errors ---- */

/* Record "rank R: <fmt>" as the detail and return code. */
CORE_HIDDEN int core_err(passion_ctx *ctx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Map an errno to a passion code. */
CORE_HIDDEN int core_errno_code(int e);
/*
 * Agree on an outcome across the context's ranks: every rank passes its
 * local code; all get the code of the lowest-numbered failing rank, and
 * that rank's detail string. Collective; returns the common code.
 */
CORE_HIDDEN int core_agree(passion_ctx *ctx, int rc);
/* Check that every rank passed the same bytes (hash compare). Collective. */
CORE_HIDDEN int core_same(passion_ctx *ctx, int rc, const void *p, size_t n,
                          const char *what);

/* ---- 64-bit arithmetic with overflow check ---- */

static inline bool core_mul(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}
static inline bool core_add(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_add_overflow(a, b, r);
}

/* 1 if the n bytes at p are all zero (reserved fields of public structs). */
static inline bool core_zero(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return false;
    return true;
}

/* ---- staging memory (counted against the budget) ---- */

CORE_HIDDEN void *core_stage_alloc(passion_ctx *ctx, int64_t bytes);
CORE_HIDDEN void core_stage_free(passion_ctx *ctx, void *p, int64_t bytes);
/* Free the blocks the context keeps for reuse (at finalize). */
CORE_HIDDEN void core_stage_release(passion_ctx *ctx);

/* ---- time ---- */
CORE_HIDDEN double core_now(void);

/* ---- I/O drivers ---- */

typedef struct core_fh core_fh;

/* One read of a batch: len bytes at off into buf; res is what the driver
   moved (maybe short) or -errno. */
typedef struct core_iov {
    void *buf;
    int64_t len;
    int64_t off;
    int64_t res;
} core_iov;

/* CORE_O_EXCL, with CORE_O_CREATE: fail (EEXIST) if the file exists */
enum { CORE_O_RDONLY = 0, CORE_O_RDWR = 1, CORE_O_CREATE = 2,
       CORE_O_TRUNC = 4, CORE_O_EXCL = 8 };

typedef struct core_driver_ops {
    const char *name;
    int (*open)(passion_ctx *ctx, const char *path, int flags, int direct,
                core_fh **fh);
    /* One request; returns bytes moved (maybe short, 0 = EOF) or -errno. */
    int64_t (*pread)(core_fh *fh, void *buf, int64_t len, int64_t off);
    int64_t (*pwrite)(core_fh *fh, const void *buf, int64_t len,
                      int64_t off);
    int (*size)(core_fh *fh, int64_t *bytes);     /* -errno on failure */
    int (*resize)(core_fh *fh, int64_t bytes);    /* ftruncate */
    int (*sync)(core_fh *fh);
    int (*drop_cache)(core_fh *fh);
    int (*close)(core_fh *fh);
    /* Optional: issue n reads at once and wait for all, filling res;
       returns 0, or -ENOSYS when it cannot batch (the caller then reads
       one by one). */
    int (*read_batch)(core_fh *fh, core_iov *v, int n);
    /* Optional: the descriptors behind the handle, for asynchronous
       engines (io_uring): *fd buffered, *dfd O_DIRECT or -1. Drivers that
       leave it NULL are driven through pread/pwrite from a worker. */
    int (*fds)(core_fh *fh, int *fd, int *dfd);
} core_driver_ops;

/* The part every driver's handle starts with. */
struct core_fh {
    const core_driver_ops *ops;
    passion_ctx *ctx;
    char *path;
};

CORE_HIDDEN const core_driver_ops *core_driver_get(int id);
extern CORE_HIDDEN const core_driver_ops core_drv_posix;
extern CORE_HIDDEN const core_driver_ops core_drv_mpiio;
extern CORE_HIDDEN const core_driver_ops core_drv_fault;

/* Open with the context's driver; errors recorded with the path. */
CORE_HIDDEN int core_io_open(passion_ctx *ctx, const char *path, int flags,
                             core_fh **fh);
CORE_HIDDEN int core_io_close(core_fh *fh);
/*
 * Read/write exactly len bytes at off, looping on short counts and EINTR;
 * counts one io_call per driver request. A read that meets end of file
 * returns PASSION_ESHORT. Errors carry the path and offset.
 */
CORE_HIDDEN int core_io_read(core_fh *fh, void *buf, int64_t len, int64_t off);
CORE_HIDDEN int core_io_write(core_fh *fh, const void *buf, int64_t len,
                              int64_t off);
/*
 * Read n pieces, kept in flight together where the driver can (io_uring),
 * else one after the other; every piece is read exactly, as core_io_read.
 * Counts one io_call per piece (plus any call finishing a short piece).
 */
CORE_HIDDEN int core_io_read_batch(core_fh *fh, core_iov *v, int n);
/* Reads the context's driver keeps in flight at once (1: no batching). */
CORE_HIDDEN int core_io_concurrency(const passion_ctx *ctx);
CORE_HIDDEN int core_io_size(core_fh *fh, int64_t *bytes);
CORE_HIDDEN int core_io_resize(core_fh *fh, int64_t bytes);
CORE_HIDDEN int core_io_sync(core_fh *fh);
CORE_HIDDEN int core_io_drop_cache(core_fh *fh);

#endif
