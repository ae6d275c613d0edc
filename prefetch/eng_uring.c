/*
 * eng_uring.c - the io_uring engine (liburing): one ring per context,
 * PF_QDEPTH ops in flight, short transfers resubmitted for the rest,
 * EINTR/EAGAIN retried. Ops beyond the ring's room wait in a FIFO.
 *
 * Invariants: every op handed to submit comes back from reap exactly once;
 * an op is either in the wait queue, in the ring, or in the done queue.
 */
#include "pf.h"

#include <errno.h>
#include <stdlib.h>

#ifdef PASSION_HAVE_URING
#include <liburing.h>

typedef struct uring_impl {
    struct io_uring ring;
    int64_t in_ring;         /* SQEs submitted, CQEs not yet seen */
    pf_op *wait_h, *wait_t;  /* not yet in the ring */
    pf_op *done_h, *done_t;  /* complete, not yet reaped */
} uring_impl;

static void push(pf_op **h, pf_op **t, pf_op *op)
{
    op->next = NULL;
    if (*t)
        (*t)->next = op;
    else
        *h = op;
    *t = op;
}

static void push_front(pf_op **h, pf_op **t, pf_op *op)
{
    op->next = *h;
    *h = op;
    if (!*t)
        *t = op;
}

static pf_op *pop(pf_op **h, pf_op **t)
{
    pf_op *op = *h;
    if (op) {
        *h = op->next;
        if (!*h)
            *t = NULL;
        op->next = NULL;
    }
    return op;
}

static int uring_start(pf_engine *e)
{
    int fe = pf_test_uring_errno();
    if (fe)
        return -fe;
    uring_impl *u = calloc(1, sizeof *u);
    if (!u)
        return -ENOMEM;
    int rc = io_uring_queue_init(PF_QDEPTH, &u->ring, 0);
    if (rc < 0) {
        free(u);
        return rc;
    }
    e->impl = u;
    return 0;
}

/* Move waiting ops into the ring while it has room; submit them. */
static void flush(uring_impl *u)
{
    int added = 0;
    while (u->wait_h && u->in_ring < PF_QDEPTH) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
        if (!sqe)
            break;
        pf_op *op = pop(&u->wait_h, &u->wait_t);
        int64_t n = op->len - op->done;
        if (n > PF_MAXREQ)
            n = PF_MAXREQ;
        if (op->write)
            io_uring_prep_write(sqe, op->fd, op->buf + op->done,
                                (unsigned)n, (uint64_t)(op->off + op->done));
        else
            io_uring_prep_read(sqe, op->fd, op->buf + op->done, (unsigned)n,
                               (uint64_t)(op->off + op->done));
        io_uring_sqe_set_data(sqe, op);
        if (op->buffered)
            io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
        op->calls++;
        u->in_ring++;
        added++;
    }
    if (added)
        io_uring_submit(&u->ring); /* on failure the SQEs stay queued */
}

static void uring_submit(pf_engine *e, pf_op *op)
{
    uring_impl *u = e->impl;
    push(&u->wait_h, &u->wait_t, op);
    flush(u);
}

/* Account one CQE: finished ops go to the done queue, others back. */
static void complete(uring_impl *u, pf_op *op, int res)
{
    u->in_ring--;
    if (res == -EINTR || res == -EAGAIN) {
        push_front(&u->wait_h, &u->wait_t, op);
        return;
    }
    if (res < 0) {
        op->err = -res;
    } else if (res == 0) {
        op->err = op->write ? ENOSPC : PF_EOF;
    } else {
        op->done += res;
        if (op->done < op->len) {
            push_front(&u->wait_h, &u->wait_t, op);
            return;
        }
    }
    push(&u->done_h, &u->done_t, op);
}

static pf_op *uring_reap(pf_engine *e, int block)
{
    uring_impl *u = e->impl;
    for (;;) {
        pf_op *op = pop(&u->done_h, &u->done_t);
        if (op)
            return op;
        flush(u);
        if (u->in_ring == 0) {
            if (!u->wait_h)
                return NULL;
            /* the ring refused our SQEs: try again, never spin forever */
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
            pf_op *c = io_uring_cqe_get_data(cqe);
            int res = cqe->res;
            io_uring_cqe_seen(&u->ring, cqe);
            complete(u, c, res);
        } while (io_uring_peek_cqe(&u->ring, &cqe) == 0 && cqe);
    }
}

static void uring_stop(pf_engine *e)
{
    uring_impl *u = e->impl;
    if (!u)
        return;
    io_uring_queue_exit(&u->ring);
    free(u);
    e->impl = NULL;
}

#else /* no liburing at build time */

static int uring_start(pf_engine *e)
{
    (void)e;
    return -ENOSYS;
}
static void uring_submit(pf_engine *e, pf_op *op)
{
    (void)e;
    (void)op;
}
static pf_op *uring_reap(pf_engine *e, int block)
{
    (void)e;
    (void)block;
    return NULL;
}
static void uring_stop(pf_engine *e)
{
    (void)e;
}
#endif

const pf_engine_ops pf_engine_uring = {
    .name = "uring",
    .start = uring_start,
    .submit = uring_submit,
    .reap = uring_reap,
    .stop = uring_stop,
};
