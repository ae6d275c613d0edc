/*
 * core_io.h - the I/O calls on an open handle (prefix core_io_;
 * passion/io.c, io_req.c, drv_posix.c): exact reads and writes, the
 * O_DIRECT alignment (bounces and shifted reads), batches, size and
 * layout, cache probe, advice, calibration reads and atomic creation.
 *
 * Invariants: a core_io_* call returns 0 or a PASSION_E* code with the
 * detail naming path and offset (core_io_once and friends: bytes or
 * -errno); one io_call is counted per driver request; the alignment is
 * applied in one place (core_io_once).
 */
#ifndef PASSION_CORE_IO_H
#define PASSION_CORE_IO_H

#include <sys/uio.h>
#include "passion.h"
#include "core_base.h"
#include "core_driver.h"

/* Open with the context's driver; errors recorded with the path. */
CORE_HIDDEN int core_io_open(passion_ctx *ctx, const char *path, int flags,
                             core_fh **fh);
CORE_HIDDEN int core_io_close(core_fh *fh);
/*
 * Read/write exactly len bytes at off, looping on short counts and EINTR;
 * counts one io_call per driver request. A read that meets end of file
 * returns PASSION_ESHORT. Errors carry the path and offset. Safe on a
 * helper thread as long as the calling thread does no I/O on the context
 * meanwhile (counters are plain fields).
 */
CORE_HIDDEN int core_io_read(core_fh *fh, void *buf, int64_t len, int64_t off);
CORE_HIDDEN int core_io_write(core_fh *fh, const void *buf, int64_t len,
                              int64_t off);
/*
 * One driver request with the O_DIRECT alignment applied (the one place
 * that does it): an unaligned read on an aligned handle goes through an
 * aligned bounce buffer covering it (at most CORE_BOUNCE bytes: a short
 * count), taken from the staging memory within the budget (so reused, not
 * faulted per call); when the budget has not one aligned unit left, the
 * read goes to the driver unaligned (posix: its buffered descriptor).
 * Unaligned writes are the driver's (posix: its buffered descriptor).
 * Bytes moved or -errno; touches no counter but staging. Calling thread
 * only (core_io_once_via is the one for the worker).
 */
/* (io_req.c) A failed request as a code and a detail: e a positive errno
   or CORE_EOF; how prefixes the verb ("asynchronous "). */
CORE_HIDDEN int core_io_fail(core_fh *fh, const char *how, int write,
                             int64_t off, int64_t len, int e);
CORE_HIDDEN int64_t core_io_once(core_fh *fh, int write, void *buf,
                                 int64_t len, int64_t off);
/* The same through a given bounce (bsize bytes, aligned; NULL: none, the
   read goes unaligned to the driver); touches no counter, so the worker
   thread may call it. */
CORE_HIDDEN int64_t core_io_once_via(core_fh *fh, int write, void *buf,
                                     int64_t len, int64_t off, char *bounce,
                                     int64_t bsize);
/* A bounce buffer of want bytes (a multiple of the alignment), or fewer:
   what the memory budget leaves, rounded down to the alignment (*got);
   NULL when that is less than one aligned unit. Staging memory: counted,
   kept in the context's cache after core_stage_free(ctx, b, *got).
   Calling thread only. */
CORE_HIDDEN char *core_io_bounce_get(core_fh *fh, int64_t want,
                                     int64_t *got);
/*
 * A shifted read: an unaligned O_DIRECT read whose aligned span has no
 * bounce in the budget is read anyway with O_DIRECT, in one request of
 * aligned segments (readv): the span's middle pages into the caller's own
 * buffer at its first aligned address (land, mid bytes), its first ehead
 * bytes and its tail into `edge`, a page or three (of the context's edge
 * pool, else of staging); then moved
 * into place (a memmove of the middle, the edges copied). Without it such
 * a read went through the buffered descriptor, on a kernel worker for the
 * ring, where a prefetching sweep could hide little of it.
 */
typedef struct core_shift {
    int64_t a0, alen;    /* the aligned span */
    char *land;          /* aligned, inside the caller's buffer */
    int64_t mid;         /* span bytes [a0 + ehead, + mid) land there */
    char *edge;          /* span bytes [a0, a0 + ehead) and the rest */
    int64_t elen, ehead; /* after the middle; elen bytes in all */
    int pooled;          /* edge from the pool, else staging */
} core_shift;
/* Plan a shifted read of (buf, len, off) on fh, taking its edge pages from
   the context's pool (core_stage_edge_get) or else from what the budget
   leaves: 1 planned, 0 not possible (aligned request, no aligned page
   inside buf, or no room for the edge). Calling thread only. */
CORE_HIDDEN int core_io_shift_plan(core_fh *fh, char *buf, int64_t len,
                                   int64_t off, core_shift *s);
/* The segments of the span from byte `done` of it on (at most 3). */
CORE_HIDDEN int core_io_shift_iov(const core_shift *s, int64_t done,
                                  struct iovec *iov);
/* Read the span (got bytes of it already) to its end or the end of the
   file; the span bytes read in all, or -errno on a failed request.
   *calls counts the driver requests. Any thread. */
CORE_HIDDEN int64_t core_io_shift_read(core_fh *fh, const core_shift *s,
                                       int64_t got, int64_t *calls);
/* got bytes of the span are in: move the wanted ones into buf; returns
   how many of the len wanted bytes, from the first, are in place. Any
   thread. */
CORE_HIDDEN int64_t core_io_shift_done(const core_shift *s, char *buf,
                                       int64_t len, int64_t off,
                                       int64_t got);
/* Return the edge pages (calling thread). */
CORE_HIDDEN void core_io_shift_free(core_fh *fh, core_shift *s);
/* Does a read of (buf, len, off) on fh need the bounce? If so, the
   aligned span to read instead is [*a0, *a0 + *alen), alen <= limit. */
CORE_HIDDEN int core_io_bounce_span(const core_fh *fh, const void *buf,
                                    int64_t len, int64_t off, int64_t limit,
                                    int64_t *a0, int64_t *alen);
/*
 * Read n pieces, kept in flight together where the engine can (io_uring),
 * else one after the other; every piece is read exactly, as core_io_read.
 * Counts one io_call per piece (plus any call finishing a short piece).
 * Calling thread only (it drives the context's engine).
 */
CORE_HIDDEN int core_io_read_batch(core_fh *fh, core_iov *v, int n);
/*
 * The same for writes of n disjoint pieces (in flight together, so in no
 * particular order: the caller's pieces must not overlap), as
 * core_io_write each: one io_uring submit for many small cached writes
 * costs less than one pwrite each.
 */
CORE_HIDDEN int core_io_write_batch(core_fh *fh, core_iov *v, int n);
/* Reads the context's driver and engine keep in flight at once (1: no
   batching: a driver without io_uring, or the engine forced to thread). */
CORE_HIDDEN int core_io_concurrency(const passion_ctx *ctx);
CORE_HIDDEN int core_io_size(core_fh *fh, int64_t *bytes);
/* The size to align a file's domains to: Lustre's stripe size
   (LL_IOC_LOV_GETSTRIPE, when built with Lustre's header), else
   st_blksize, else 4096; never fails, 1..2^30. Asked of the driver once
   per open file (fh->stripe). */
CORE_HIDDEN int64_t core_io_stripe(core_fh *fh);
/* The same on a descriptor (drivers with one). */
CORE_HIDDEN int64_t core_posix_stripe(int fd);
CORE_HIDDEN int core_io_resize(core_fh *fh, int64_t bytes);
CORE_HIDDEN int core_io_sync(core_fh *fh);
CORE_HIDDEN int core_io_drop_cache(core_fh *fh);
/* Per mille of the file range [lo, hi) in the page cache, -1 unknown. */
CORE_HIDDEN int core_io_cached(core_fh *fh, int64_t lo, int64_t hi);

/* Give the driver a hint about a range: 1 passed on, 0 not (O_DIRECT, a
   driver without hints); never an error. */
/* The driver's readahead (bytes ahead of a sequential buffered reader),
   0 when it does not know. */
CORE_HIDDEN int64_t core_io_readahead(core_fh *fh);
CORE_HIDDEN int core_io_advise(core_fh *fh, int64_t off, int64_t len,
                               int advice);
/*
 * Calibration reads: time, on uncached pages of [lo, hi), a stream (a
 * buffered file: up to 8 MiB read in pieces of up to 1 MiB, at most the
 * budget, with the kernel's readahead; O_DIRECT: one read of up to 1 MiB)
 * and up to 8 single-page reads; *lat = the least of these
 * (core_posix_latency), *bw = the stream's rate (drv_posix.c). bw NULL:
 * the latency alone (no stream).
 * Outside the counters; values left 0 when the driver cannot measure or
 * too little of the range is uncached.
 */
/* The latency of n (>= 3, else 0 is returned) single-page read times t
   (sorted here): the least. A read's time is the device's latency plus
   whatever the host added (a descheduled rank, another process's I/O):
   only the least is the device's. A median varies with the host's load
   from run to run, and the model's choice of method would follow it. */
CORE_HIDDEN double core_posix_latency(double *t, int n);
/* bw_len: in, the most bytes to stream (0: the driver's rule); out, the
   bytes the bandwidth reading timed (0: none); may be NULL */
CORE_HIDDEN void core_io_measure(core_fh *fh, int64_t lo, int64_t hi,
                                 double *lat, double *bw, int64_t *bw_len);

/*
 * Atomic creation (ocad/file.c): a file is created under the temporary
 * name core_io_temp_name(path) in the same directory, sized, written and
 * synced there, and core_io_publish renames it onto path (replacing any
 * old file in one step), syncs the directory and makes fh carry the new
 * path (errors recorded with the paths). core_io_discard removes an
 * unpublished temporary after a failure, best effort: it returns 0 or
 * -errno and leaves the context's detail alone.
 */
#define CORE_TEMP_SUFFIX ".passion-tmp"
/* "dir/.base.passion-tmp" for "dir/base" (malloc'ed, NULL if no memory). */
CORE_HIDDEN char *core_io_temp_name(const char *path);
CORE_HIDDEN int core_io_publish(core_fh *fh, const char *path, int noreplace);
CORE_HIDDEN int core_io_discard(passion_ctx *ctx, const char *temp);

#endif
