/*
 * eng_thread.c - the fallback engine: one worker thread that runs queued
 * ops in order through the file's driver (core_io_once_via: one driver
 * request, O_DIRECT alignment applied through the bounce the op was given
 * at submit), looping on short counts and EINTR; the same worker runs the
 * context's I/O jobs (core_job_start), before queued ops.
 *
 * Invariants: the worker touches only the ops and jobs it is given and
 * their driver handles (never the context's counters or detail); the
 * queues are guarded by one mutex; a job is marked done under it after
 * its fn returned; stop drains the queues.
 */
#include "core.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

typedef struct thread_impl {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    core_op *q_h, *q_t, *d_h, *d_t;
    core_job *j_h, *j_t; /* jobs to run, before the ops */
    int stop;
} thread_impl;

void core_op_run(core_op *op)
{
    CORE_CHAOS(ENG_RUN);
    if (op->shifted) {
        /* the span into buf and the edge pages, then into place */
        int64_t got = core_io_shift_read(op->fh, &op->sh, 0, &op->calls);
        if (got < 0) {
            op->err = (int)-got;
            return;
        }
        op->done = core_io_shift_done(&op->sh, op->buf, op->len, op->off,
                                      got);
        if (op->done < op->len)
            op->err = CORE_EOF;
        return;
    }
    while (op->done < op->len) {
        int64_t r = core_io_once_via(op->fh, op->write, op->buf + op->done,
                                     op->len - op->done, op->off + op->done,
                                     op->bounce, op->blen);
        op->calls++;
        if (r == -EINTR || r == -EAGAIN)
            continue;
        if (r < 0) {
            op->err = (int)-r;
            return;
        }
        if (r == 0) {
            op->err = op->write ? ENOSPC : CORE_EOF;
            return;
        }
        op->done += r;
    }
}

static void *worker(void *arg)
{
    thread_impl *t = arg;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (!t->q_h && !t->j_h && !t->stop)
            pthread_cond_wait(&t->work, &t->mu);
        core_job *j = t->j_h;
        if (j) {
            t->j_h = j->next;
            if (!t->j_h)
                t->j_t = NULL;
            pthread_mutex_unlock(&t->mu);
            j->fn(j->arg);
            pthread_mutex_lock(&t->mu);
            j->done = 1;
            pthread_cond_broadcast(&t->done);
            continue;
        }
        core_op *op = t->q_h;
        if (!op)
            break; /* stop, and the queue is empty */
        t->q_h = op->next;
        if (!t->q_h)
            t->q_t = NULL;
        pthread_mutex_unlock(&t->mu);
        core_op_run(op);
        pthread_mutex_lock(&t->mu);
        op->next = NULL;
        if (t->d_t)
            t->d_t->next = op;
        else
            t->d_h = op;
        t->d_t = op;
        pthread_cond_signal(&t->done);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

static int thread_start(core_engine *e)
{
    thread_impl *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->work, NULL);
    pthread_cond_init(&t->done, NULL);
    int rc = pthread_create(&t->th, NULL, worker, t);
    if (rc) {
        pthread_cond_destroy(&t->done);
        pthread_cond_destroy(&t->work);
        pthread_mutex_destroy(&t->mu);
        free(t);
        return -rc;
    }
    e->impl = t;
    return 0;
}

static void thread_submit(core_engine *e, core_op *op)
{
    thread_impl *t = e->impl;
    pthread_mutex_lock(&t->mu);
    op->next = NULL;
    if (t->q_t)
        t->q_t->next = op;
    else
        t->q_h = op;
    t->q_t = op;
    pthread_cond_signal(&t->work);
    pthread_mutex_unlock(&t->mu);
}

static core_op *thread_reap(core_engine *e, int block)
{
    thread_impl *t = e->impl;
    pthread_mutex_lock(&t->mu);
    while (block && !t->d_h)
        pthread_cond_wait(&t->done, &t->mu);
    core_op *op = t->d_h;
    if (op) {
        t->d_h = op->next;
        if (!t->d_h)
            t->d_t = NULL;
        op->next = NULL;
    }
    pthread_mutex_unlock(&t->mu);
    return op;
}

static void thread_job(core_engine *e, core_job *j)
{
    thread_impl *t = e->impl;
    pthread_mutex_lock(&t->mu);
    j->done = 0;
    j->next = NULL;
    if (t->j_t)
        t->j_t->next = j;
    else
        t->j_h = j;
    t->j_t = j;
    pthread_cond_signal(&t->work);
    pthread_mutex_unlock(&t->mu);
}

static void thread_join(core_engine *e, core_job *j)
{
    thread_impl *t = e->impl;
    pthread_mutex_lock(&t->mu);
    while (!j->done)
        pthread_cond_wait(&t->done, &t->mu);
    pthread_mutex_unlock(&t->mu);
}

static void thread_stop(core_engine *e)
{
    thread_impl *t = e->impl;
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    t->stop = 1;
    pthread_cond_signal(&t->work);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->th, NULL);
    pthread_cond_destroy(&t->done);
    pthread_cond_destroy(&t->work);
    pthread_mutex_destroy(&t->mu);
    free(t);
    e->impl = NULL;
}

const core_engine_ops core_engine_thread = {
    .name = "thread",
    .start = thread_start,
    .submit = thread_submit,
    .reap = thread_reap,
    .stop = thread_stop,
    .job = thread_job,
    .join = thread_join,
};
