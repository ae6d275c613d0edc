/*
 * eng_uring.c - the io_uring engine (liburing): one ring per context,
 * CORE_QDEPTH ops in flight, short transfers resubmitted for the rest,
 * EINTR/EAGAIN retried. Ops beyond the ring's room wait in a FIFO.
 * Buffered ops go to a kernel worker (IOSQE_ASYNC) so that the copy runs
 * beside the caller, not in its submit call, unless the op asks to stay
 * inline (noasync: batched reads, which wait for the batch anyway). An
 * unaligned O_DIRECT read reads its aligned span into the bounce buffer
 * engine.c gave it and is copied out when complete, or, shifted (no
 * bounce in the budget), reads it with one readv of aligned segments into
 * the caller's buffer and a few edge pages and is moved into place.
 *
 * Registered buffers (core_aio_register): a sparse table of URING_NREG
 * slots, made on the first registration; an SQE whose bytes lie inside a
 * registered buffer is a READ_FIXED / WRITE_FIXED on that slot (the kernel
 * takes the pages pinned at registration instead of pinning them for the
 * request).
 *
 * Invariants: every op handed to submit comes back from reap exactly once;
 * an op is either in the wait queue, in the ring, or in the done queue;
 * while a bounced or shifted op is in flight its done counts span bytes.
 */
#include "core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifdef PASSION_HAVE_URING
#include <liburing.h>

#define URING_NREG 16 /* registered buffer slots */

typedef struct uring_impl {
    struct io_uring ring;
    int table;                /* 1 sparse table made, -1 refused, 0 not yet */
    char *rbase[URING_NREG];  /* registered buffers (NULL: free slot) */
    int64_t rlen[URING_NREG];
    int64_t in_ring;          /* SQEs submitted, CQEs not yet seen */
    core_op *wait_h, *wait_t; /* not yet in the ring */
    core_op *done_h, *done_t; /* complete, not yet reaped */
} uring_impl;

static void push(core_op **h, core_op **t, core_op *op)
{
    op->next = NULL;
    if (*t)
        (*t)->next = op;
    else
        *h = op;
    *t = op;
}

static void push_front(core_op **h, core_op **t, core_op *op)
{
    op->next = *h;
    *h = op;
    if (!*t)
        *t = op;
}

static core_op *pop(core_op **h, core_op **t)
{
    core_op *op = *h;
    if (op) {
        *h = op->next;
        if (!*h)
            *t = NULL;
        op->next = NULL;
    }
    return op;
}

static int uring_start(core_engine *e)
{
    uring_impl *u = calloc(1, sizeof *u);
    if (!u)
        return -ENOMEM;
    int rc = io_uring_queue_init(CORE_QDEPTH, &u->ring, 0);
    if (rc < 0) {
        free(u);
        return rc;
    }
    e->impl = u;
    return 0;
}

/* The slot of the registered buffer holding [p, p + n), or -1. */
static int fixed_slot(const uring_impl *u, const char *p, int64_t n)
{
    if (u->table <= 0)
        return -1;
    for (int i = 0; i < URING_NREG; i++)
        if (u->rbase[i] && p >= u->rbase[i] &&
            n <= u->rlen[i] - (p - u->rbase[i]))
            return i;
    return -1;
}

static int uring_reg(core_engine *e, char *base, int64_t len)
{
    uring_impl *u = e->impl;
    if (len > (1LL << 30)) /* the kernel's limit per buffer */
        return -1;
    if (u->table == 0)
        u->table = io_uring_register_buffers_sparse(&u->ring, URING_NREG) == 0
                       ? 1
                       : -1;
    if (u->table < 0)
        return -1;
    for (int i = 0; i < URING_NREG; i++) {
        if (u->rbase[i])
            continue;
        struct iovec iov = {base, (size_t)len};
        __u64 tag = 0;
        if (io_uring_register_buffers_update_tag(&u->ring, (unsigned)i, &iov,
                                                 &tag, 1) != 1)
            return -1; /* e.g. RLIMIT_MEMLOCK: stays unregistered */
        u->rbase[i] = base;
        u->rlen[i] = len;
        return i;
    }
    return -1;
}

static void uring_unreg(core_engine *e, int slot)
{
    uring_impl *u = e->impl;
    if (slot < 0 || slot >= URING_NREG || !u->rbase[slot])
        return;
    struct iovec iov = {NULL, 0};
    __u64 tag = 0;
    io_uring_register_buffers_update_tag(&u->ring, (unsigned)slot, &iov,
                                         &tag, 1);
    u->rbase[slot] = NULL;
    u->rlen[slot] = 0;
}

/* Move waiting ops into the ring while it has room; submit them. */
static void flush(core_engine *e)
{
    uring_impl *u = e->impl;
    int added = 0;
    while (u->wait_h && u->in_ring < CORE_QDEPTH) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
        if (!sqe)
            break;
        core_op *op = pop(&u->wait_h, &u->wait_t);
        if (op->shifted) {
            /* one readv of the span's aligned segments from done on */
            int nv = core_io_shift_iov(&op->sh, op->done, op->iov);
            io_uring_prep_readv(sqe, op->fd, op->iov, (unsigned)nv,
                                (uint64_t)(op->b0 + op->done));
            io_uring_sqe_set_data(sqe, op);
            op->calls++;
            u->in_ring++;
            added++;
            continue;
        }
        char *p = op->bounce ? op->bounce : op->buf;
        int64_t off = op->bounce ? op->b0 : op->off;
        int64_t n = (op->bounce ? op->blen : op->len) - op->done;
        if (n > CORE_MAXREQ)
            n = CORE_MAXREQ;
        int slot = fixed_slot(u, p + op->done, n);
        if (slot >= 0) {
            e->fixed++;
            if (op->write)
                io_uring_prep_write_fixed(sqe, op->fd, p + op->done,
                                          (unsigned)n,
                                          (uint64_t)(off + op->done), slot);
            else
                io_uring_prep_read_fixed(sqe, op->fd, p + op->done,
                                         (unsigned)n,
                                         (uint64_t)(off + op->done), slot);
        } else if (op->write)
            io_uring_prep_write(sqe, op->fd, p + op->done, (unsigned)n,
                                (uint64_t)(off + op->done));
        else
            io_uring_prep_read(sqe, op->fd, p + op->done, (unsigned)n,
                               (uint64_t)(off + op->done));
        io_uring_sqe_set_data(sqe, op);
        if (op->buffered && !op->noasync)
            io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
        op->calls++;
        u->in_ring++;
        added++;
    }
    if (added) {
        e->enters++;
        io_uring_submit(&u->ring); /* on failure the SQEs stay queued */
    }
}

static void uring_submit(core_engine *e, core_op *op)
{
    uring_impl *u = e->impl;
    push(&u->wait_h, &u->wait_t, op);
    if (!e->plugged)
        flush(e);
}

static void uring_flush(core_engine *e)
{
    flush(e);
}

/* A bounced read is over: copy the wanted part out, free the bounce. */
static void unbounce(core_op *op)
{
    int64_t got = op->done - (op->off - op->b0);
    if (got < 0)
        got = 0;
    if (got > op->len)
        got = op->len;
    memcpy(op->buf, op->bounce + (op->off - op->b0), (size_t)got);
    core_stage_free(op->fh->ctx, op->bounce, op->blen);
    op->bounce = NULL;
    op->done = got;
}

/* A shifted read is over: the wanted bytes into place (its edge pages go
   back in engine.c's finish). */
static void unshift(core_op *op)
{
    op->done = core_io_shift_done(&op->sh, op->buf, op->len, op->off,
                                  op->done);
    op->shifted = 0;
}

/* Account one CQE: finished ops go to the done queue, others back. */
static void complete(uring_impl *u, core_op *op, int res)
{
    u->in_ring--;
    if (res == -EINTR || res == -EAGAIN) {
        push_front(&u->wait_h, &u->wait_t, op);
        return;
    }
    int span = op->bounce || op->shifted;
    int64_t want = span ? op->blen : op->len;
    if (res > 0)
        op->done += res;
    /* a bounced or shifted read may stop short of its span once the
       wanted bytes are in (the span's tail is past the end of the file) */
    int enough = op->done >= want ||
                 (span && op->b0 + op->done >= op->off + op->len);
    if (res < 0)
        op->err = -res;
    else if (!enough && (res == 0 || (op->shifted &&
                                      (op->b0 + op->done) % op->fh->align)))
        /* O_DIRECT: a short read off the alignment met the end of the file
           (a read from there would be refused, not empty) */
        op->err = op->write ? ENOSPC : CORE_EOF;
    else if (!enough) {
        push_front(&u->wait_h, &u->wait_t, op);
        return;
    }
    if (op->bounce)
        unbounce(op);
    else if (op->shifted)
        unshift(op);
    push(&u->done_h, &u->done_t, op);
}

static core_op *uring_reap(core_engine *e, int block)
{
    uring_impl *u = e->impl;
    for (;;) {
        core_op *op = pop(&u->done_h, &u->done_t);
        if (op)
            return op;
        flush(e);
        if (u->in_ring == 0) {
            if (!u->wait_h)
                return NULL;
            /* the ring refused our SQEs: try again, never spin forever */
            e->enters++;
            if (io_uring_submit(&u->ring) < 0 && !block)
                return NULL;
            continue;
        }
        struct io_uring_cqe *cqe = NULL;
        int rc = block ? io_uring_wait_cqe(&u->ring, &cqe)
                       : io_uring_peek_cqe(&u->ring, &cqe);
        if (rc == -EINTR)
            continue;
        if (rc < 0 || !cqe)
            return NULL;
        do {
            core_op *c = io_uring_cqe_get_data(cqe);
            int res = cqe->res;
            io_uring_cqe_seen(&u->ring, cqe);
            complete(u, c, res);
        } while (io_uring_peek_cqe(&u->ring, &cqe) == 0 && cqe);
    }
}

static void uring_stop(core_engine *e)
{
    uring_impl *u = e->impl;
    if (!u)
        return;
    io_uring_queue_exit(&u->ring);
    free(u);
    e->impl = NULL;
}

#else /* no liburing at build time */

static int uring_start(core_engine *e)
{
    (void)e;
    return -ENOSYS;
}
static void uring_submit(core_engine *e, core_op *op)
{
    (void)e;
    (void)op;
}
static core_op *uring_reap(core_engine *e, int block)
{
    (void)e;
    (void)block;
    return NULL;
}
static void uring_stop(core_engine *e)
{
    (void)e;
}
static void uring_flush(core_engine *e)
{
    (void)e;
}
static int uring_reg(core_engine *e, char *base, int64_t len)
{
    (void)e;
    (void)base;
    (void)len;
    return -1;
}
static void uring_unreg(core_engine *e, int slot)
{
    (void)e;
    (void)slot;
}
#endif

const core_engine_ops core_engine_uring = {
    .name = "uring",
    .start = uring_start,
    .submit = uring_submit,
    .reap = uring_reap,
    .stop = uring_stop,
    .flush = uring_flush,
    .reg = uring_reg,
    .unreg = uring_unreg,
};
