/*
 * engine.c - choosing and driving the asynchronous I/O engine of a
 * context: io_uring when it can be set up, a worker thread otherwise, or
 * as forced by the option `engine` / the environment variable
 * PASSION_ENGINE (thesis 5.5.2: prefetch needs a non-blocking read).
 *
 * Invariants: the state is created on first use and freed by
 * passion_finalize after every op in flight has been reaped; ops for a
 * handle without a descriptor (mpiio, fault drivers) always go to the
 * thread engine, which calls the driver.
 */
#include "pf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int uring_fail_errno;

void pf_test_uring_fail(int e)
{
    uring_fail_errno = e;
}

int pf_test_uring_errno(void)
{
    return uring_fail_errno;
}

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
    pf_state *st = p;
    /* nothing may be left in the kernel or the worker when memory goes */
    while (pf_inflight(ctx) > 0)
        if (pf_progress(ctx, 1) < 0)
            break;
    if (st->kind == PASSION_ENGINE_URING)
        st->uring.ops->stop(&st->uring);
    if (st->thread_up)
        st->thread.ops->stop(&st->thread);
    free(st);
}

static int wanted_engine(passion_ctx *ctx, int *kind)
{
    *kind = ctx->opt.engine;
    const char *env = getenv("PASSION_ENGINE");
    if (!env || !*env)
        return PASSION_OK;
    if (!strcasecmp(env, "auto") || !strcmp(env, "0"))
        *kind = PASSION_ENGINE_AUTO;
    else if (!strcasecmp(env, "uring") || !strcasecmp(env, "io_uring") ||
             !strcmp(env, "1"))
        *kind = PASSION_ENGINE_URING;
    else if (!strcasecmp(env, "thread") || !strcmp(env, "2"))
        *kind = PASSION_ENGINE_THREAD;
    else
        return core_err(ctx, PASSION_EINVAL,
                        "PASSION_ENGINE=%s: expected auto, uring or thread",
                        env);
    return PASSION_OK;
}

static int thread_up(passion_ctx *ctx, pf_state *st)
{
    if (st->thread_up)
        return PASSION_OK;
    st->thread.ops = &pf_engine_thread;
    int e = st->thread.ops->start(&st->thread);
    if (e < 0)
        return core_err(ctx, core_errno_code(-e),
                        "cannot start the I/O worker thread: %s",
                        strerror(-e));
    st->thread_up = 1;
    return PASSION_OK;
}

int pf_state_get(passion_ctx *ctx, pf_state **out)
{
    if (ctx->ext[CORE_EXT_PF]) {
        *out = ctx->ext[CORE_EXT_PF];
        return PASSION_OK;
    }
    int kind, rc = wanted_engine(ctx, &kind);
    if (rc)
        return rc;
    pf_state *st = calloc(1, sizeof *st);
    if (!st)
        return core_err(ctx, PASSION_ENOMEM, "prefetch engine state");
    if (kind != PASSION_ENGINE_THREAD) {
        st->uring.ops = &pf_engine_uring;
        int e = st->uring.ops->start(&st->uring);
        if (e == 0) {
            st->kind = PASSION_ENGINE_URING;
        } else if (kind == PASSION_ENGINE_URING) {
            free(st);
            return core_err(ctx, PASSION_ENOTSUP,
                            "io_uring was asked for but cannot be set up: %s",
                            strerror(-e));
        } else {
            st->setup_errno = -e;
            if (ctx->opt.verbosity >= 1 && ctx->rank == 0)
                fprintf(stderr, "passion: io_uring unavailable (%s), using "
                        "the worker-thread engine\n", strerror(-e));
        }
    }
    if (st->kind != PASSION_ENGINE_URING) {
        st->kind = PASSION_ENGINE_THREAD;
        if ((rc = thread_up(ctx, st))) {
            free(st);
            return rc;
        }
    }
    ctx->ext[CORE_EXT_PF] = st;
    ctx->ext_free[CORE_EXT_PF] = state_free;
    *out = st;
    return PASSION_OK;
}

int passion_engine_get(passion_ctx *ctx, passion_engine *engine)
{
    if (!ctx || !engine)
        return PASSION_EINVAL;
    pf_state *st;
    int rc = pf_state_get(ctx, &st);
    if (rc)
        return rc;
    *engine = st->kind;
    return PASSION_OK;
}

int pf_submit(passion_ctx *ctx, pf_op *op)
{
    pf_state *st;
    int rc = pf_state_get(ctx, &st);
    if (rc)
        return rc;
    pf_engine *e = &st->uring;
    if (op->fd < 0 || st->kind != PASSION_ENGINE_URING) {
        if ((rc = thread_up(ctx, st)))
            return rc;
        e = &st->thread;
    }
    op->next = NULL;
    op->err = 0;
    e->inflight++;
    e->ops->submit(e, op);
    return PASSION_OK;
}

int64_t pf_inflight(passion_ctx *ctx)
{
    pf_state *st = ctx->ext[CORE_EXT_PF];
    if (!st)
        return 0;
    int64_t n = st->thread_up ? st->thread.inflight : 0;
    if (st->kind == PASSION_ENGINE_URING)
        n += st->uring.inflight;
    return n;
}

static int reap_from(pf_engine *e, int block)
{
    if (e->inflight == 0)
        return 0;
    pf_op *op = e->ops->reap(e, block);
    if (!op)
        return 0;
    e->inflight--;
    op->fn(op);
    return 1;
}

int pf_progress(passion_ctx *ctx, int block)
{
    pf_state *st = ctx->ext[CORE_EXT_PF];
    if (!st)
        return 0;
    pf_engine *es[2] = {st->kind == PASSION_ENGINE_URING ? &st->uring : NULL,
                        st->thread_up ? &st->thread : NULL};
    int n = 0, got;
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
