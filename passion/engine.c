/*
 * engine.c - the asynchronous I/O engine of a context (thesis 5.5.2:
 * prefetch needs a non-blocking read), owned by the driver layer: io_uring
 * when it can be set up (eng_uring.c), a worker thread that calls the
 * driver otherwise (eng_thread.c), or as forced by the option `engine` /
 * the environment variable PASSION_ENGINE (which wins). The same engine
 * serves asynchronous section requests (prefetch/request.c) and batched
 * independent reads (io.c): io_uring is set up once per context, and never
 * when the engine is forced to thread. The worker thread, started on
 * demand, also runs the context's I/O jobs (core_job_start: the two-phase
 * rounds' I/O), so the library has one I/O thread mechanism.
 *
 * Routing of one op: to the ring when the engine is io_uring and the
 * driver gives a descriptor for it (drv_posix.c's ring_fd); else to the
 * worker thread, which calls the driver (core_io_once_via). A driver that
 * calls MPI (mpiio) runs on the worker only when MPI provides
 * MPI_THREAD_MULTIPLE (checked once, MPI_Query_thread, when the engine
 * starts); otherwise its ops run synchronously inside core_aio_submit and
 * complete at the next core_aio_progress (a fallback: no overlap, same
 * results).
 *
 * Invariants: the state is created on first use on the calling thread and
 * freed by passion_finalize after every op in flight has completed;
 * completions (counters, detail, fn) run only on the calling thread, in
 * core_aio_progress; every submitted op completes exactly once; the
 * bounce buffers of unaligned O_DIRECT reads are staging memory, taken at
 * submit and returned at completion on the calling thread, so that every
 * op in flight together stays within the memory budget (they were once
 * allocated per op beside it: 64 ops in flight each held their own).
 */
#include "core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef PASSION_TEST_HOOKS
/* a test build's: io_uring's set-up fails with this errno (0: it runs) */
static int uring_fail_errno;

void core_test_uring_fail(int e)
{
    uring_fail_errno = e;
}
#else
enum { uring_fail_errno = 0 };
#endif

enum { Q_URING = 1, Q_THREAD = 2, Q_SYNC = 3 };

typedef struct engine_state {
    int kind;          /* PASSION_ENGINE_URING or _THREAD */
    int mpi_multiple;  /* MPI provides MPI_THREAD_MULTIPLE */
    core_engine uring; /* valid when kind == URING */
    core_engine thread; /* started on demand */
    int thread_up;
    core_op *sync_h, *sync_t; /* run at submit, not yet completed */
    int64_t sync_n;
    int64_t ran_inline; /* ops run at submit (no MPI_THREAD_MULTIPLE) */
} engine_state;

const char *passion_engine_name(passion_engine engine)
{
    switch (engine) {
    case PASSION_ENGINE_URING: return "uring";
    case PASSION_ENGINE_THREAD: return "thread";
    case PASSION_ENGINE_AUTO: return "auto";
    default: return "unknown";
    }
}

static void state_free(passion_ctx *ctx, void *p)
{
    engine_state *st = p;
    /* nothing may be left in the kernel or the worker when memory goes */
    while (core_aio_inflight(ctx) > 0)
        if (core_aio_progress(ctx, 1) <= 0)
            break;
    if (st->kind == PASSION_ENGINE_URING)
        st->uring.ops->stop(&st->uring);
    if (st->thread_up)
        st->thread.ops->stop(&st->thread);
    core_free(ctx, st);
}

static int env_engine(const char *env, int *kind)
{
    if (!strcasecmp(env, "auto") || !strcmp(env, "0"))
        *kind = PASSION_ENGINE_AUTO;
    else if (!strcasecmp(env, "uring") || !strcasecmp(env, "io_uring") ||
             !strcmp(env, "1"))
        *kind = PASSION_ENGINE_URING;
    else if (!strcasecmp(env, "thread") || !strcmp(env, "2"))
        *kind = PASSION_ENGINE_THREAD;
    else
        return -1;
    return 0;
}

int core_engine_wanted(passion_ctx *ctx, int *kind)
{
    *kind = ctx->opt.engine;
    const char *env = getenv("PASSION_ENGINE");
    if (env && *env && env_engine(env, kind))
        return core_err(ctx, PASSION_EINVAL,
                        "PASSION_ENGINE=%s: expected auto, uring or thread",
                        env);
    return PASSION_OK;
}

CORE_HIDDEN int core_engine_may_ring(const passion_ctx *ctx);
int core_engine_may_ring(const passion_ctx *ctx)
{
    const engine_state *st = ctx->ext[CORE_EXT_ENGINE];
    if (st)
        return st->kind == PASSION_ENGINE_URING;
    int kind = ctx->opt.engine;
    const char *env = getenv("PASSION_ENGINE");
    if (env && *env && env_engine(env, &kind))
        return 0; /* the engine will refuse to start */
    return kind != PASSION_ENGINE_THREAD;
}

static int thread_up(passion_ctx *ctx, engine_state *st)
{
    if (st->thread_up)
        return PASSION_OK;
    st->thread.ops = &core_engine_thread;
    int e = st->thread.ops->start(&st->thread);
    if (e < 0)
        return core_err(ctx, core_errno_code(-e),
                        "cannot start the I/O worker thread: %s",
                        strerror(-e));
    st->thread_up = 1;
    return PASSION_OK;
}

static int state_get(passion_ctx *ctx, engine_state **out)
{
    if (ctx->ext[CORE_EXT_ENGINE]) {
        *out = ctx->ext[CORE_EXT_ENGINE];
        return PASSION_OK;
    }
    int kind, rc = core_engine_wanted(ctx, &kind);
    if (rc)
        return rc;
    engine_state *st = core_calloc(ctx, 1, sizeof *st);
    if (!st)
        return core_err(ctx, PASSION_ENOMEM, "I/O engine state");
    int lvl = MPI_THREAD_SINGLE;
    MPI_Query_thread(&lvl);
    st->mpi_multiple = lvl == MPI_THREAD_MULTIPLE;
    if (kind != PASSION_ENGINE_THREAD) {
        st->uring.ops = &core_engine_uring;
        int e = uring_fail_errno ? -uring_fail_errno
                                 : st->uring.ops->start(&st->uring);
        if (e == 0) {
            st->kind = PASSION_ENGINE_URING;
        } else if (kind == PASSION_ENGINE_URING) {
            core_free(ctx, st);
            return core_err(ctx, PASSION_ENOTSUP,
                            "io_uring was asked for but cannot be set up: %s",
                            strerror(-e));
        } else if (ctx->opt.verbosity >= 1 && ctx->rank == 0) {
            fprintf(stderr, "passion: io_uring unavailable (%s), using the "
                    "worker-thread engine\n", strerror(-e));
        }
    }
    if (st->kind != PASSION_ENGINE_URING) {
        st->kind = PASSION_ENGINE_THREAD;
        if ((rc = thread_up(ctx, st))) {
            core_free(ctx, st);
            return rc;
        }
    }
    ctx->ext[CORE_EXT_ENGINE] = st;
    ctx->ext_free[CORE_EXT_ENGINE] = state_free;
    *out = st;
    return PASSION_OK;
}

int core_engine_kind(passion_ctx *ctx, int *kind)
{
    engine_state *st;
    int rc = state_get(ctx, &st);
    if (!rc)
        *kind = st->kind;
    return rc;
}

int passion_engine_get(passion_ctx *ctx, passion_engine *engine)
{
    if (!ctx || !engine)
        return PASSION_EINVAL;
    core_enter(ctx);
    int kind = PASSION_ENGINE_AUTO;
    int rc = core_engine_kind(ctx, &kind);
    if (!rc)
        *engine = (passion_engine)kind;
    return rc;
}

/* Give a ring op its descriptor and, for an unaligned O_DIRECT read, its
   aligned bounce buffer (whole op, so the kernel runs one request), taken
   from the staging memory: only when the whole span fits in what the
   memory budget leaves (every op in flight holds its bounce until it
   completes, so the budget bounds them together); otherwise the ring
   reads it unaligned through the driver's buffered descriptor (a single
   worker thread, bouncing piece by piece, would make a prefetching
   sweep of a memory-limited run slower than no prefetch at all). */
static int ring_prep(core_op *op)
{
    core_fh *fh = op->fh;
    passion_ctx *ctx = fh->ctx;
    int64_t a0, alen;
    op->bounce = NULL;
    if (!op->write && core_io_bounce_span(fh, op->buf, op->len, op->off,
                                          INT64_MAX, &a0, &alen)) {
        if (alen > CORE_MAXREQ)
            return -1; /* the worker bounces it piece by piece */
        int64_t got = 0;
        char *b = alen <= ctx->opt.memory_budget - ctx->staging_now
                      ? core_io_bounce_get(fh, alen, &got)
                      : NULL;
        if (b) {
            op->bounce = b;
            op->b0 = a0;
            op->blen = alen;
            op->fd = fh->ops->ring_fd(fh, 0, b, alen, a0, &op->buffered);
        } else if (core_io_shift_plan(fh, op->buf, op->len, op->off,
                                      &op->sh)) {
            /* O_DIRECT all the same: the span's middle lands in the
               caller's buffer, its edges in a page or three of staging */
            op->shifted = 1;
            op->b0 = op->sh.a0;
            op->blen = op->sh.alen;
            op->fd = fh->ops->ring_fd(fh, 0, op->sh.land, op->sh.mid,
                                      op->sh.a0 + op->sh.ehead,
                                      &op->buffered);
        } else {
            op->fd = fh->ops->ring_fd(fh, 0, op->buf, op->len, op->off,
                                      &op->buffered);
        }
    } else {
        op->fd = fh->ops->ring_fd(fh, op->write, op->buf, op->len, op->off,
                                  &op->buffered);
    }
    if (op->fd < 0) {
        core_stage_free(ctx, op->bounce, op->blen);
        op->bounce = NULL;
        core_io_shift_free(fh, &op->sh);
        op->shifted = 0;
        return -1;
    }
    return 0;
}

/* A worker op's bounce (an unaligned O_DIRECT read): up to CORE_BOUNCE
   bytes of what the budget leaves, given here on the calling thread (the
   worker may not touch the context's staging), returned at completion;
   none when the budget is used up (the read then goes unaligned to the
   driver), or a shifted read when the budget leaves its edge pages. */
static void worker_prep(core_op *op)
{
    int64_t a0, alen;
    op->bounce = NULL;
    op->blen = 0;
    if (!op->write &&
        core_io_bounce_span(op->fh, op->buf, op->len, op->off, CORE_BOUNCE,
                            &a0, &alen)) {
        op->bounce = core_io_bounce_get(op->fh, alen, &op->blen);
        if (!op->bounce && op->len <= CORE_MAXREQ &&
            core_io_shift_plan(op->fh, op->buf, op->len, op->off, &op->sh))
            op->shifted = 1;
    }
}

int core_aio_submit(core_fh *fh, core_op *op)
{
    passion_ctx *ctx = fh->ctx;
    CORE_CHAOS(ENG_SUBMIT);
    engine_state *st;
    int rc = state_get(ctx, &st);
    if (rc)
        return rc;
    op->fh = fh;
    op->next = NULL;
    op->err = 0;
    op->rc = 0;
    op->done = 0;
    op->calls = 0;
    op->bounce = NULL;
    op->shifted = 0;
    memset(&op->sh, 0, sizeof op->sh);
    if (st->kind == PASSION_ENGINE_URING && fh->ops->ring_fd &&
        ring_prep(op) == 0) {
        op->where = Q_URING;
        st->uring.inflight++;
        st->uring.ops->submit(&st->uring, op);
        return PASSION_OK;
    }
    worker_prep(op);
    if (fh->ops->needs_mpi_thread && !st->mpi_multiple) {
        /* MPI without MPI_THREAD_MULTIPLE: the driver may not run on the
           worker; run it now, complete it at the next progress */
        core_op_run(op);
        op->where = Q_SYNC;
        if (st->sync_t)
            st->sync_t->next = op;
        else
            st->sync_h = op;
        st->sync_t = op;
        st->sync_n++;
        st->ran_inline++;
        return PASSION_OK;
    }
    if ((rc = thread_up(ctx, st))) {
        core_stage_free(ctx, op->bounce, op->blen);
        op->bounce = NULL;
        core_io_shift_free(fh, &op->sh);
        op->shifted = 0;
        return rc;
    }
    op->where = Q_THREAD;
    st->thread.inflight++;
    st->thread.ops->submit(&st->thread, op);
    return PASSION_OK;
}

void core_aio_plug(passion_ctx *ctx)
{
    engine_state *st = ctx->ext[CORE_EXT_ENGINE];
    if (st && st->kind == PASSION_ENGINE_URING)
        st->uring.plugged++;
}

void core_aio_unplug(passion_ctx *ctx)
{
    engine_state *st = ctx->ext[CORE_EXT_ENGINE];
    if (st && st->kind == PASSION_ENGINE_URING && st->uring.plugged > 0 &&
        --st->uring.plugged == 0)
        st->uring.ops->flush(&st->uring);
}

#ifdef PASSION_TEST_HOOKS
int64_t core_aio_ran_inline(const passion_ctx *ctx)
{
    const engine_state *st = ctx->ext[CORE_EXT_ENGINE];
    return st ? st->ran_inline : 0;
}

int64_t core_aio_enters(const passion_ctx *ctx)
{
    const engine_state *st = ctx->ext[CORE_EXT_ENGINE];
    return st && st->kind == PASSION_ENGINE_URING ? st->uring.enters : 0;
}

int64_t core_aio_fixed(const passion_ctx *ctx)
{
    const engine_state *st = ctx->ext[CORE_EXT_ENGINE];
    return st && st->kind == PASSION_ENGINE_URING ? st->uring.fixed : 0;
}
#endif

int core_aio_register(passion_ctx *ctx, char *base, int64_t len)
{
    engine_state *st;
    if (!base || len <= 0 || state_get(ctx, &st) ||
        st->kind != PASSION_ENGINE_URING || !st->uring.ops->reg)
        return -1;
    return st->uring.ops->reg(&st->uring, base, len);
}

void core_aio_unregister(passion_ctx *ctx, int slot)
{
    engine_state *st = ctx->ext[CORE_EXT_ENGINE];
    if (slot >= 0 && st && st->kind == PASSION_ENGINE_URING &&
        st->uring.ops->unreg)
        st->uring.ops->unreg(&st->uring, slot);
}

int64_t core_aio_inflight(passion_ctx *ctx)
{
    engine_state *st = ctx->ext[CORE_EXT_ENGINE];
    if (!st)
        return 0;
    int64_t n = st->sync_n + (st->thread_up ? st->thread.inflight : 0);
    if (st->kind == PASSION_ENGINE_URING)
        n += st->uring.inflight;
    return n;
}

static void finish(core_op *op)
{
    CORE_CHAOS(ENG_COMPLETE);
    if (op->bounce) { /* a worker op's (the ring's went at completion) */
        core_stage_free(op->fh->ctx, op->bounce, op->blen);
        op->bounce = NULL;
    }
    core_io_shift_free(op->fh, &op->sh); /* a shifted op's edge pages */
    op->shifted = 0;
    core_io_op_done(op);
    op->fn(op);
}

static int reap_from(core_engine *e, int block)
{
    if (e->inflight == 0)
        return 0;
    core_op *op = e->ops->reap(e, block);
    if (!op)
        return 0;
    e->inflight--;
    finish(op);
    return 1;
}

int core_aio_progress(passion_ctx *ctx, int block)
{
    engine_state *st = ctx->ext[CORE_EXT_ENGINE];
    if (!st)
        return 0;
    int n = 0;
    while (st->sync_h) {
        core_op *op = st->sync_h;
        st->sync_h = op->next;
        if (!st->sync_h)
            st->sync_t = NULL;
        st->sync_n--;
        finish(op);
        n++;
    }
    core_engine *es[2] = {st->kind == PASSION_ENGINE_URING ? &st->uring
                                                           : NULL,
                          st->thread_up ? &st->thread : NULL};
    int got;
    /* drain what is ready without blocking */
    do {
        got = 0;
        for (int i = 0; i < 2; i++)
            if (es[i])
                got += reap_from(es[i], 0);
        n += got;
    } while (got);
    if (n || !block)
        return n;
    for (int i = 0; i < 2; i++)
        if (es[i] && es[i]->inflight > 0)
            return reap_from(es[i], 1);
    return 0;
}

int core_job_may_run(const core_fh *fh)
{
    if (!fh->ops->needs_mpi_thread)
        return 1;
    int lvl = MPI_THREAD_SINGLE;
    MPI_Query_thread(&lvl);
    return lvl == MPI_THREAD_MULTIPLE;
}

int core_job_start(passion_ctx *ctx, core_job *j)
{
    engine_state *st;
    if (state_get(ctx, &st) || thread_up(ctx, st))
        return -1;
    st->thread.ops->job(&st->thread, j);
    return 0;
}

void core_job_join(passion_ctx *ctx, core_job *j)
{
    engine_state *st = ctx->ext[CORE_EXT_ENGINE];
    st->thread.ops->join(&st->thread, j);
}
