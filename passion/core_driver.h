/*
 * core_driver.h - the I/O driver ops table (prefix core_; passion/drv_*.c):
 * what a driver provides, the handle every driver's handle starts with,
 * the open flags, advice and alignment constants, and the posix helpers
 * the drivers share.
 *
 * Invariants: every descriptor and system call on a file stays behind a
 * driver (ROMIO's ADIO rule); optional ops may be NULL and their callers
 * fall back; a driver's requests return bytes moved (maybe short) or
 * -errno, never a passion code.
 */
#ifndef PASSION_CORE_DRIVER_H
#define PASSION_CORE_DRIVER_H

#include <sys/uio.h>
#include "passion.h"
#include "core_base.h"

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

/* Advice about a file range (a hint: the driver may ignore it). */
enum { CORE_ADV_WILLNEED = 1, CORE_ADV_DONTNEED = 2, CORE_ADV_RANDOM = 3 };

/* O_DIRECT alignment of buffer, offset, length */
#define CORE_ALIGN 4096
#define CORE_BOUNCE (4 << 20)   /* bytes per bounced O_DIRECT request */
#define CORE_BOUNCE_MIN (256 << 10) /* smaller bounces are not worth it */
#define CORE_MAXREQ (1LL << 30) /* bytes per driver request */
/* A buffered read longer than CORE_STREAM_MIN is a stream: the posix
   driver reads it as consecutive CORE_STREAM_PIECE reads, one after
   another (drv_posix.c), and io_batch keeps it out of the ring. */
#define CORE_STREAM_PIECE (1 << 20)
#define CORE_STREAM_MIN (2 << 20)
/* The calibration's bandwidth stream (drv_posix.c measure_fd): at most
   this many bytes, three quarters of the extent measured: long enough
   for the kernel's readahead to reach its full window. */
#define CORE_MEASURE_STREAM (32 << 20)
#define CORE_QDEPTH 64          /* ops in flight in the io_uring ring */

/*
 * The ops table of a driver. Every descriptor, system call and io_uring
 * submission stays behind it (ROMIO's ADIO rule): layers above see a
 * core_fh and call the core_io_* functions (core_io.h).
 */
typedef struct core_driver_ops {
    int id; /* enum passion_driver: its name is passion_driver_name's */
    int (*open)(passion_ctx *ctx, const char *path, int flags, int direct,
                core_fh **fh);
    /* One request; returns bytes moved (maybe short, 0 = EOF) or -errno.
       On a handle with align > 1, reads come aligned (core_io_once
       bounces them) unless the memory budget left no room for a bounce;
       writes may come unaligned. */
    int64_t (*pread)(core_fh *fh, void *buf, int64_t len, int64_t off);
    int64_t (*pwrite)(core_fh *fh, const void *buf, int64_t len,
                      int64_t off);
    /* Optional: one read of n segments, all aligned on an aligned handle
       (a shifted O_DIRECT read, core_io_shift_read); bytes or -errno.
       NULL: the segments are read one pread each. */
    int64_t (*preadv)(core_fh *fh, const struct iovec *iov, int n,
                      int64_t off);
    int (*size)(core_fh *fh, int64_t *bytes);     /* -errno on failure */
    int (*resize)(core_fh *fh, int64_t bytes);    /* ftruncate */
    int (*sync)(core_fh *fh);
    int (*drop_cache)(core_fh *fh);
    int (*close)(core_fh *fh);
    /*
     * Optional, for the engine's io_uring only (passion/eng_uring.c): the
     * descriptor on which the kernel may run this (already aligned)
     * request, and whether it goes through the page cache; -1 when the
     * request must go through pread/pwrite (then it runs on the worker
     * thread). NULL: every asynchronous request runs on the worker.
     */
    int (*ring_fd)(core_fh *fh, int write, const void *buf, int64_t len,
                   int64_t off, int *buffered);
    /* Optional: per mille of [lo, hi) in the page cache, or -1 unknown. */
    int (*cached)(core_fh *fh, int64_t lo, int64_t hi);
    /* Optional: pass a hint on; 1 given, 0 not (never an error). */
    int (*advise)(core_fh *fh, int64_t off, int64_t len, int advice);
    /* Optional: bytes the kernel reads ahead of a sequential buffered
       reader of this file (its device's read_ahead_kb), 0 unknown. */
    int64_t (*readahead)(core_fh *fh);
    /* Optional: time uncached reads of [lo, hi) (calibration, outside the
       counters) with buf of big bytes; leaves *lat / *bw untouched when it
       cannot measure; bw NULL: no stream, the latency alone; *bw_len: in,
       the most bytes to stream (0: the driver's rule), out, the bytes the
       bandwidth reading timed (0: none). */
    void (*measure)(core_fh *fh, int64_t lo, int64_t hi, char *buf,
                    int64_t big, double *lat, double *bw, int64_t *bw_len);
    /* Optional: the file system's stripe (or block) size of the file in
       bytes, > 0, or 0 unknown (then core_io_stripe stats the path). */
    int64_t (*stripe)(core_fh *fh);
    /* The driver calls MPI: running it on the worker thread needs
       MPI_THREAD_MULTIPLE. */
    int needs_mpi_thread;
    /* Path operations, for publishing a created file atomically (a
       temporary renamed into place): rename from -> to in one step
       (noreplace: fail with -EEXIST if to exists); remove a file; make
       the directory entry of path durable (fsync of its directory).
       -errno on failure; -ENOTSUP where the driver cannot. */
    int (*rename)(passion_ctx *ctx, const char *from, const char *to,
                  int noreplace);
    int (*unlink)(passion_ctx *ctx, const char *path);
    int (*sync_dir)(passion_ctx *ctx, const char *path);
} core_driver_ops;

/* The part every driver's handle starts with. */
struct core_fh {
    const core_driver_ops *ops;
    passion_ctx *ctx;
    char *path;
    int align; /* > 1: O_DIRECT, reads must be aligned to it */
    int64_t stripe; /* core_io_stripe's answer, asked once (0: not yet):
                       a file's layout does not change while it is open,
                       and the stat cost a system call per collective
                       call */
};

/* The driver whose id is id (enum passion_driver), NULL when this build
   has none (io.c's table). */
CORE_HIDDEN const core_driver_ops *core_driver_get(int id);
/* The posix path operations (drv_posix.c), shared by drivers whose files
   live on a posix file system (mpiio, fault). */
CORE_HIDDEN int core_posix_rename(passion_ctx *ctx, const char *from,
                                  const char *to, int noreplace);
CORE_HIDDEN int core_posix_unlink(passion_ctx *ctx, const char *path);
CORE_HIDDEN int core_posix_sync_dir(passion_ctx *ctx, const char *path);
/* Small whole files (the planner's wisdom): read one (-ENOENT: none,
   -EFBIG: over max bytes), replace one atomically. */
CORE_HIDDEN int core_posix_slurp(const char *path, size_t max, char **buf,
                                 size_t *len);
CORE_HIDDEN int core_posix_replace(const char *path, const char *buf,
                                   size_t len);
extern CORE_HIDDEN const core_driver_ops core_drv_posix;
extern CORE_HIDDEN const core_driver_ops core_drv_mpiio;
#ifdef PASSION_TEST_HOOKS
extern CORE_HIDDEN const core_driver_ops core_drv_fault; /* test builds */
#endif

/* Posix helpers shared by the drivers (drv_posix.c). */
/* The page-cache probe: per mille of [lo, hi)'s pages cached; every page
   counted up to CORE_PROBE_EXACT pages (64 MiB), windows spread over
   larger extents. */
#define CORE_PROBE_EXACT 16384
CORE_HIDDEN int core_posix_cached(int fd, int64_t lo, int64_t hi);
CORE_HIDDEN int core_posix_advise(int fd, int64_t off, int64_t len,
                                  int advice);
#ifdef PASSION_TEST_HOOKS
/* Fault driver (tests): count requests from 0 again. */
CORE_HIDDEN void core_fault_rearm(passion_ctx *ctx);
/* Requests the fault driver has counted since it was (re)armed (tests). */
CORE_HIDDEN int64_t core_fault_calls(passion_ctx *ctx);
#endif

#endif
