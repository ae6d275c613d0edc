/*
 * core_engine.h - the asynchronous engine (prefix core_aio_, core_engine;
 * passion/engine.c, eng_uring.c, eng_thread.c): ops, their submission and
 * completion, registered buffers, and the engines' ops table.
 *
 * Invariants: an op belongs to the engine from submit until its fn runs,
 * on the calling thread inside core_aio_progress, after the core counted
 * it and set rc; inflight counts the ops submitted and not yet reaped.
 */
#ifndef PASSION_CORE_ENGINE_H
#define PASSION_CORE_ENGINE_H

#include <sys/uio.h>
#include "passion.h"
#include "core_base.h"
#include "core_driver.h"
#include "core_io.h"

/* ---- the asynchronous engine (engine.c, eng_uring.c, eng_thread.c) ---- */

typedef struct core_op core_op;
/* (io_req.c) The engine hands a completed op here, on the calling thread:
   counted, and its outcome made a code (op->rc). */
CORE_HIDDEN void core_io_op_done(core_op *op);

#define CORE_EOF (-1) /* op->err: end of file before len bytes */

/*
 * One asynchronous read or write of len bytes at off on a handle. The
 * caller fills write, buf, len, off, fn, arg (and may set noasync: keep a
 * buffered request inline in the submitting call instead of on a kernel
 * worker); the engine runs it to the end (short counts resubmitted), then,
 * on the calling thread inside core_aio_progress, the core counts it
 * (io_calls, bytes) and sets rc (0 or a PASSION_E* code with the detail
 * written), and calls fn. The op belongs to the engine from submit to fn.
 */
struct core_op {
    int write;
    int noasync;
    char *buf;
    int64_t len, off;
    void (*fn)(core_op *op);
    void *arg;
    /* results, valid in fn */
    int64_t done;   /* bytes moved */
    int rc;
    /* the engine's */
    core_fh *fh;
    int64_t calls;  /* driver requests / SQEs issued */
    int err;        /* 0, a positive errno, or CORE_EOF */
    int fd, buffered;   /* io_uring: descriptor, page cache */
    char *bounce;       /* unaligned O_DIRECT read: aligned staging
                           (io_uring: the whole span at b0; worker: a
                           piece at a time), counted in the budget */
    int64_t b0, blen;   /* its file offset (io_uring) and length */
    int shifted;        /* no bounce: a shifted read (core_shift), whose
                           span is b0, blen; done counts span bytes
                           while it is in flight */
    core_shift sh;
    struct iovec iov[3]; /* io_uring: its segments, kept until done */
    int where;          /* engine queue it went to */
    core_op *next;
};

/* The engine of the context, started on first use: PASSION_ENGINE_URING
   or _THREAD in *kind. */
CORE_HIDDEN int core_engine_kind(passion_ctx *ctx, int *kind);
/* The engine asked for by the option engine and PASSION_ENGINE (which
   wins); PASSION_EINVAL for a bad variable. Starts nothing. */
CORE_HIDDEN int core_engine_wanted(passion_ctx *ctx, int *kind);
/* Hand an op to the context's engine; 0, or a code (op not taken). */
CORE_HIDDEN int core_aio_submit(core_fh *fh, core_op *op);
/* Between plug and unplug, submitted ops are queued and go to the kernel
   together at unplug (one system call for a batch); calls nest. */
CORE_HIDDEN void core_aio_plug(passion_ctx *ctx);
CORE_HIDDEN void core_aio_unplug(passion_ctx *ctx);
/* Complete ops (count them, run their fn); block = wait for one when none
   is ready and some are in flight. Ops completed, or < 0. */
CORE_HIDDEN int core_aio_progress(passion_ctx *ctx, int block);
/* Ops in flight on the context. */
CORE_HIDDEN int64_t core_aio_inflight(passion_ctx *ctx);
#ifdef PASSION_TEST_HOOKS
/* Tests (test builds only): ops run synchronously at submit because their
   driver calls MPI and MPI does not provide MPI_THREAD_MULTIPLE (the
   fallback of engine.c); system calls the io_uring engine made to hand ops
   to the kernel (io_uring_enter for submission; 0 for the thread engine);
   ops it issued on registered buffers (requests, resubmissions included;
   0 for the thread engine). */
CORE_HIDDEN int64_t core_aio_ran_inline(const passion_ctx *ctx);
CORE_HIDDEN int64_t core_aio_enters(const passion_ctx *ctx);
CORE_HIDDEN int64_t core_aio_fixed(const passion_ctx *ctx);
/* Tests: make io_uring setup fail with errno e (0 = normal). */
CORE_HIDDEN void core_test_uring_fail(int e);
#endif
/*
 * Registered buffers (io_uring only): [base, base + len) is pinned once and
 * entered in the ring's buffer table, so that the engine's reads and writes
 * that lie inside it go to the kernel as READ_FIXED / WRITE_FIXED and the
 * kernel does not pin the caller's pages for every request (O_DIRECT: the
 * page pinning was half of the submitting system call's time).
 * Returns the slot (>= 0), or -1 when the buffer stays unregistered (thread
 * engine, table full, over 1 GiB, RLIMIT_MEMLOCK, an old kernel): nothing
 * changes for its requests then, so callers need not check. Unregister
 * only when none of its requests is in flight, before freeing it.
 */
CORE_HIDDEN int core_aio_register(passion_ctx *ctx, char *base, int64_t len);
CORE_HIDDEN void core_aio_unregister(passion_ctx *ctx, int slot);

/*
 * An I/O job: fn(arg), a run of the caller's own synchronous driver calls
 * (core_io_read / core_io_write on one handle), run on the context's I/O
 * worker thread (the thread engine's worker, started on demand whatever
 * the engine) while the calling thread goes on; core_job_join waits for
 * it. So the library has one I/O thread mechanism: no thread per job. A
 * job must not drive the engine (its ops would wait behind it) nor touch
 * the context's counters, detail or staging beyond what the driver calls
 * do. core_job_may_run: may a job on fh run off the calling thread (its
 * driver does not need MPI, or MPI provides MPI_THREAD_MULTIPLE)?
 * core_job_start: 0 when the job runs asynchronously; < 0 when no worker
 * can take it (the caller then runs it itself; nothing to join).
 */
typedef struct core_job {
    void (*fn)(void *arg);
    void *arg;
    int done;              /* the engine's: set when fn has returned */
    struct core_job *next; /* the engine's */
} core_job;
CORE_HIDDEN int core_job_may_run(const core_fh *fh);
CORE_HIDDEN int core_job_start(passion_ctx *ctx, core_job *j);
CORE_HIDDEN void core_job_join(passion_ctx *ctx, core_job *j);

/* Engine internals (passion/ only). */
typedef struct core_engine core_engine;
typedef struct core_engine_ops {
    const char *name;
    int (*start)(core_engine *e);  /* 0 or -errno, nothing left allocated */
    void (*submit)(core_engine *e, core_op *op); /* never fails */
    core_op *(*reap)(core_engine *e, int block); /* one done op or NULL */
    void (*stop)(core_engine *e);  /* every op reaped before */
    void (*flush)(core_engine *e); /* optional: issue what plugged held */
    /* optional (core_aio_register): slot >= 0 or -1; and its undoing */
    int (*reg)(core_engine *e, char *base, int64_t len);
    void (*unreg)(core_engine *e, int slot);
    /* optional (core_job_start): run a job on the engine's thread; and
       wait until it has run */
    void (*job)(core_engine *e, core_job *j);
    void (*join)(core_engine *e, core_job *j);
} core_engine_ops;
struct core_engine {
    const core_engine_ops *ops;
    void *impl;
    int64_t inflight;
    int plugged; /* > 0: submit queues, flush issues (one system call) */
    int64_t enters; /* system calls that handed ops to the kernel */
    int64_t fixed;  /* requests issued on registered buffers */
};
extern CORE_HIDDEN const core_engine_ops core_engine_uring;
extern CORE_HIDDEN const core_engine_ops core_engine_thread;
/* Run an op to the end with core_io_once (worker thread, or the calling
   thread when the driver may not run on the worker). */
CORE_HIDDEN void core_op_run(core_op *op);

#endif
