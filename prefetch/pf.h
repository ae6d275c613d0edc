/*
 * pf.h - internals of the prefetch/ folder (prefix pf_): the asynchronous
 * I/O engines (io_uring, worker thread) behind one ops table, asynchronous
 * section requests, the slab iterator and the partition iterator.
 *
 * Invariants: engines move bytes only; everything that touches the
 * context (counters, detail, staging accounting, sieving copies) happens
 * on the calling thread when a completion is reaped, so the context is
 * never shared with a worker; an op is owned by its engine from submit to
 * reap, by its request otherwise.
 */
#ifndef PASSION_PF_H
#define PASSION_PF_H

#include "../ocad/ocad.h"

#define PF_EOF (-1)      /* op->err: end of file before len bytes */
#define PF_QDEPTH 64     /* ops in flight per engine */
#define PF_MAXREQ (1LL << 30) /* bytes per system call */

typedef struct pf_op pf_op;

struct pf_op {
    int write;            /* 0 read, 1 write */
    core_fh *fh;          /* the driver handle (worker path) */
    int fd;               /* >= 0: system calls on it; -1: fh's driver */
    int buffered;         /* fd goes through the page cache: io_uring
                             hands the op to a kernel worker (IOSQE_ASYNC)
                             so the copy runs beside the caller, not in
                             its submit call */
    char *buf;
    int64_t len, off;
    int64_t done;         /* bytes moved so far */
    int64_t calls;        /* requests issued */
    int err;              /* 0, a positive errno, or PF_EOF */
    void (*fn)(pf_op *op); /* run on the calling thread at reap */
    void *arg;
    pf_op *next;          /* queue link, owned by the engine */
};

typedef struct pf_engine pf_engine;

typedef struct pf_engine_ops {
    const char *name;
    /* Set up; 0 or -errno (then nothing is left allocated). */
    int (*start)(pf_engine *e);
    /* Take an op; never fails (ops wait in a queue when the ring is
       full). */
    void (*submit)(pf_engine *e, pf_op *op);
    /* One completed op, or NULL; block = wait if none is complete yet. */
    pf_op *(*reap)(pf_engine *e, int block);
    /* Tear down; every submitted op must have been reaped. */
    void (*stop)(pf_engine *e);
} pf_engine_ops;

struct pf_engine {
    const pf_engine_ops *ops;
    void *impl;
    int64_t inflight; /* submitted and not yet reaped */
};

extern CORE_HIDDEN const pf_engine_ops pf_engine_uring;
extern CORE_HIDDEN const pf_engine_ops pf_engine_thread;

/* The per-context engine state (ctx->ext[CORE_EXT_PF]). */
typedef struct pf_state {
    int kind;           /* PASSION_ENGINE_URING or _THREAD */
    int setup_errno;    /* why io_uring was not used (0 if it is) */
    pf_engine uring;    /* valid when kind == URING */
    pf_engine thread;   /* started on demand */
    int thread_up;
} pf_state;

/* The context's engine state, started on first use. */
CORE_HIDDEN int pf_state_get(passion_ctx *ctx, pf_state **st);
/* Submit an op (fd >= 0 goes to io_uring when in use, else the thread). */
CORE_HIDDEN int pf_submit(passion_ctx *ctx, pf_op *op);
/*
 * Reap completions and run their fn; block = wait for at least one when
 * none is ready and some are in flight. Returns ops completed, or <0.
 */
CORE_HIDDEN int pf_progress(passion_ctx *ctx, int block);
/* Ops in flight on the context. */
CORE_HIDDEN int64_t pf_inflight(passion_ctx *ctx);
/* Tests: make io_uring setup fail with errno e (0 = normal). */
CORE_HIDDEN void pf_test_uring_fail(int e);
CORE_HIDDEN int pf_test_uring_errno(void);

#endif
