/*
 * request.c - asynchronous section reads and writes (thesis 5.5.2:
 * PASSION_read_prefetch / PASSION_prefetch_wait), on the core's
 * asynchronous engine (passion/engine.c, core_aio_*).
 *
 * A request walks its transfer plan window by window, with the windows of
 * the synchronous engine (ocad/sieve.c: direct = one block per request,
 * sieve = covering extents within the budget, auto = the cost model's
 * hole limit). Each window is one op: a single block moves straight
 * between the file and the caller's memory; a window of several blocks is
 * staged and sieved when its read completes; a write window with holes is
 * read first, patched at completion, then written (read-modify-write).
 * Counting, error codes and O_DIRECT alignment are the driver layer's.
 *
 * Invariants: staging held by one request stays within the memory budget
 * (one window may exceed it only when it is a single block, which is never
 * staged); at most PF_QDEPTH ops per request are in flight; the first
 * error wins and stops new windows, and wait returns only when none of the
 * request's ops is in flight.
 */
#include "pf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct passion_request {
    passion_ctx *ctx;
    passion_file *f;
    ocad_xfer x;
    ocad_iter it;      /* next block not yet in a window */
    int64_t hole;      /* hole limit, -1 = direct */
    int64_t part;      /* converted write: bytes of the current single
                          block already issued */
    int write;
    char *mem;
    int64_t active;    /* windows in flight */
    int64_t staged;    /* staging bytes held */
    int rc;            /* first error */
    char detail[CORE_DETAIL_MAX]; /* its detail, kept for the wait (the
                                     failure may be seen during another
                                     call, which the wait's entry clears) */
};

/* Record the request's first failure (rc, already in ctx->detail). */
static void req_fail(passion_request *r, int rc)
{
    if (r->rc || !rc)
        return;
    r->rc = rc;
    memcpy(r->detail, r->ctx->detail, sizeof r->detail);
}

typedef struct pf_win {
    core_op op;
    passion_request *req;
    ocad_iter start;   /* iterator at the window's first block */
    ocad_window w;
    char *stage;       /* NULL: op moves straight to/from memory */
    int64_t stage_bytes;
    const char *piece; /* converted write of part of one block: its bytes
                          in memory (copied and swapped into the stage) */
    int phase;         /* writes with holes: 0 read, 1 write */
} pf_win;

static void win_free(pf_win *w)
{
    passion_request *r = w->req;
    if (w->stage) {
        core_stage_free(r->ctx, w->stage, w->stage_bytes);
        r->staged -= w->stage_bytes;
    }
    r->active--;
    core_free(r->ctx, w);
}

static void req_pump(passion_request *r);

/* Completion of one window's op, on the calling thread (counted and its
   outcome turned into op->rc by the core already). */
static void win_done(core_op *op)
{
    pf_win *w = op->arg;
    passion_request *r = w->req;
    if (op->rc) {
        if (!r->rc)
            req_fail(r, op->rc);
        win_free(w);
        return;
    }
    if (!op->write && w->stage && !r->write) {
        ocad_window_copy(&w->start, &w->w, w->w.w0, w->stage, r->mem, 1);
    } else if (!op->write && !r->write) {
        /* a block read straight into memory: convert it there */
        ocad_swap(op->buf, op->len, r->x.swap);
    } else if (r->write && w->phase == 0 && !op->write) {
        /* read part of read-modify-write: patch, then write */
        ocad_iter s = w->start;
        ocad_window_copy(&s, &w->w, w->w.w0, w->stage, r->mem, 0);
        w->phase = 1;
        op->write = 1;
        int rc = core_aio_submit(r->f->fh, op);
        if (rc) {
            req_fail(r, rc);
            win_free(w);
        }
        return;
    }
    win_free(w);
    req_pump(r);
}

/* Set up the op of window w (taken from the plan at `start`). */
static int win_issue(passion_request *r, pf_win *w)
{
    passion_ctx *ctx = r->ctx;
    const ocad_window *wd = &w->w;
    int64_t len = wd->wend - wd->w0;
    core_op *op = &w->op;
    op->fn = win_done;
    op->arg = w;
    op->write = r->write;
    op->off = wd->w0;
    op->len = len;
    if (wd->nblk > 1 || w->piece) {
        w->stage = core_stage_alloc(ctx, len);
        if (!w->stage)
            return core_err(ctx, PASSION_ENOMEM,
                            "staging buffer of %lld bytes", (long long)len);
        w->stage_bytes = len;
        r->staged += len;
        op->buf = w->stage;
    } else {
        op->buf = r->mem + w->start.moff;
    }
    w->phase = 1;
    if (w->piece) {
        memcpy(w->stage, w->piece, (size_t)len);
        ocad_swap(w->stage, len, r->x.swap);
    } else if (r->write && wd->nblk > 1) {
        if (wd->nblk * r->x.blen < len) {
            op->write = 0; /* holes: read first */
            w->phase = 0;
        } else {
            ocad_iter s = w->start;
            ocad_window_copy(&s, wd, wd->w0, w->stage, r->mem, 0);
        }
    }
    return core_aio_submit(r->f->fh, op);
}

/* Issue windows while the request has room. */
static void req_pump(passion_request *r)
{
    int64_t budget = r->ctx->opt.memory_budget;
    core_aio_plug(r->ctx); /* the windows go to the kernel together */
    while (!r->rc && r->it.left > 0 && r->active < PF_QDEPTH) {
        ocad_iter save = r->it;
        ocad_window w;
        const char *piece = NULL;
        if (r->hole < 0 || r->part > 0) {
            w.w0 = r->it.foff;
            w.wend = r->it.foff + r->x.blen;
            w.nblk = 1;
            ocad_iter_skip(&r->it, 1);
        } else {
            w = ocad_window_next(&r->it, budget, r->hole);
        }
        if (w.nblk == 1 && r->write && r->x.swap) {
            /* a converted write stages its block, a piece of whole
               elements within the budget at a time */
            int64_t pmax = budget / r->x.esize * r->x.esize;
            if (pmax < r->x.esize)
                pmax = r->x.esize;
            int64_t left = r->x.blen - r->part;
            int64_t n = left < pmax ? left : pmax;
            piece = r->mem + save.moff + r->part;
            w.w0 = save.foff + r->part;
            w.wend = w.w0 + n;
            if (n < left) {
                r->it = save; /* the rest of the block comes next */
                r->part += n;
            } else {
                r->part = 0;
            }
        }
        int64_t need = w.nblk > 1 || piece ? w.wend - w.w0 : 0;
        if (need && r->staged > 0 && r->staged + need > budget) {
            r->it = save; /* wait until staging comes back */
            if (piece)
                r->part = piece - (r->mem + save.moff);
            break;
        }
        pf_win *pw = core_calloc(r->ctx, 1, sizeof *pw);
        if (!pw) {
            req_fail(r, core_err(r->ctx, PASSION_ENOMEM, "request window"));
            break;
        }
        pw->req = r;
        pw->start = save;
        pw->w = w;
        pw->piece = piece;
        r->active++;
        int rc = win_issue(r, pw);
        if (rc) {
            req_fail(r, rc);
            win_free(pw);
            break;
        }
    }
    core_aio_unplug(r->ctx);
}

static int begin(passion_file *f, const passion_section *s, void *buf,
                 const passion_memspec *mem, int method, int op_write,
                 passion_request **out)
{
    if (!out)
        return f ? core_err(f->ctx, PASSION_EINVAL, "NULL request pointer")
                 : PASSION_EINVAL;
    *out = NULL;
    if (!f)
        return PASSION_EINVAL;
    passion_ctx *ctx = f->ctx;
    core_enter(ctx);
    CORE_CHAOS(PF_ISSUE);
    passion_request *r = core_calloc(ctx, 1, sizeof *r);
    if (!r)
        return core_err(ctx, PASSION_ENOMEM, "request");
    int rc = ocad_section_prepare(f, s, buf, mem, method, op_write, &r->x);
    if (!rc)
        rc = core_engine_kind(ctx, &(int){0});
    if (rc) {
        core_free(ctx, r);
        return rc;
    }
    r->ctx = ctx;
    r->f = f;
    r->write = op_write;
    r->mem = buf;
    int chosen;
    r->hole = ocad_hole_choose(ctx, &r->x, op_write, method, &chosen);
    ocad_iter_begin(&r->it, &r->x);
    ctx->cnt.bytes_useful += (uint64_t)(r->x.nblocks * r->x.blen);
    /* io_uring may do the transfer inline (page-cache hits, buffered
       writes): time spent issuing is I/O time too */
    double t0 = core_now();
    req_pump(r);
    ctx->cnt.t_io += core_now() - t0;
    ocad_file_hold(f); /* the file stays open until the wait */
    *out = r;
    return PASSION_OK;
}

/* begin inside the thread contract's guard (core_call_begin) */
static int begin_guarded(passion_file *f, const passion_section *s,
                         void *buf, const passion_memspec *mem,
                         passion_method method, int op_write,
                         passion_request **req)
{
    passion_ctx *gctx = f ? f->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = begin(f, s, buf, mem, method, op_write, req);
    core_call_end(gctx);
    return rc;
}

int passion_file_read_begin(passion_file *f, const passion_section *s,
                            void *buf, const passion_memspec *mem,
                            passion_method method, passion_request **req)
{
    return begin_guarded(f, s, buf, mem, method, 0, req);
}

int passion_file_write_begin(passion_file *f, const passion_section *s,
                             const void *buf, const passion_memspec *mem,
                             passion_method method, passion_request **req)
{
    return begin_guarded(f, s, (void *)buf, mem, method, 1, req);
}

static int finished(const passion_request *r)
{
    return r->active == 0 && (r->rc || r->it.left == 0);
}

static int request_test_body(passion_request *r, int *done)
{
    if (!r || !done)
        return PASSION_EINVAL;
    core_enter(r->ctx);
    int rc = core_aio_progress(r->ctx, 0);
    req_pump(r);
    *done = finished(r);
    return rc < 0 ? rc : PASSION_OK;
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_request_test(passion_request *r, int *done)
{
    passion_ctx *gctx = r ? r->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = request_test_body(r, done);
    core_call_end(gctx);
    return rc;
}

static int request_wait_body(passion_request *r)
{
    if (!r)
        return PASSION_OK;
    passion_ctx *ctx = r->ctx;
    core_enter(ctx);
    core_aio_progress(ctx, 0);
    req_pump(r);
    int hit = !r->write && r->x.nblocks > 0 && finished(r);
    double t0 = core_now();
    while (!finished(r)) {
        req_pump(r);
        if (r->active == 0)
            continue;
        int n = core_aio_progress(ctx, 1);
        if (n <= 0) {
            /* the engine lost track: report rather than spin */
            if (!r->rc)
                req_fail(r, core_err(ctx, PASSION_EIO, "asynchronous I/O "
                                         "engine stopped answering"));
            break;
        }
    }
    ctx->cnt.t_io += core_now() - t0;
    if (hit && !r->rc)
        ctx->cnt.prefetch_hits++;
    int rc = r->rc;
    if (rc)
        memcpy(ctx->detail, r->detail, sizeof r->detail);
    if (r->active == 0) {
        ocad_file_release(r->f);
        core_free(ctx, r);
    }
    return rc;
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_request_wait(passion_request *r)
{
    passion_ctx *gctx = r ? r->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = request_wait_body(r);
    core_call_end(gctx);
    return rc;
}
