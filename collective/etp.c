/*
 * etp.c - the rounds of the extended two-phase method (thesis 6.3.1 reads,
 * 6.3.2 writes, figure 6.4 step 6), pipelined: the I/O of one round runs as
 * the context's I/O job (core_job_start: on the core's one I/O worker
 * thread) while the exchange of the neighbouring round runs on the
 * calling thread (double buffering, "the two phases ... can be overlapped
 * (pipelined) by reading smaller portions of data and communicating it").
 *
 * Read round k: each aggregator reads its chunk's windows into the stage,
 * copies its own elements straight to the caller's buffer and packs the
 * others' (in file order) into a send buffer; then the exchange; then each
 * rank unpacks what it received into its buffer. Write round k: every rank
 * packs its elements of each aggregator's chunk; the exchange; each
 * aggregator reads the windows that have holes, lays the data over them in
 * increasing rank order (so where sections overlap the highest rank's
 * value stays: the thesis's rule) and writes the windows.
 *
 * Memory: the stage <= 2x, each exchange buffer <= x, where 5x plus the
 * exchange's own staging for x plus the descriptors fit the budget
 * (coll_plan_caps_alg in etp_plan.c); reads hold one stage, two send and one
 * receive buffer, writes one stage, one send and two receive buffers,
 * sized to what the schedule needs (a first pass over the schedule,
 * arithmetic only); the exchange is passed what they leave of the budget,
 * so the whole call stays within it (peak_staging). If
 * allocating them fails, they come from the untouched address-space
 * reservation the plan made before the FAD (whose failure every rank saw
 * in the FAD), so a rank never has to leave the rounds.
 *
 * Invariants: every rank runs the same rounds (the schedule is a function
 * of the FAD); a rank whose I/O failed keeps exchanging (with meaningless
 * bytes) and does no more I/O, so nobody waits; the caller agrees on the
 * outcome afterwards.
 */
#include "coll.h"

#include <stdint.h>
#include <string.h>

/* Read and write windows of at most ETP_BATCH_SMALL bytes go to the
   driver up to ETP_BATCH at a time (core_io_read_batch and
   core_io_write_batch: one system call for the lot on io_uring, page-cache
   hits copied in the submit), as the independent engine's; larger ones
   one by one, so that the kernel's readahead still sees a sequential
   reader (a system call per small window costs several times its share
   of a batch, and the model prices a request at the batched cost). In
   the I/O job (rounds overlapped) the windows go one by one: the engine
   belongs to the calling thread, and its ops would wait behind the job
   on the worker. */
#define ETP_BATCH 64
#define ETP_BATCH_SMALL (64 << 10)
/* Rounds overlap their I/O with the exchange as an I/O job, except where
   this rank's first chunk is at least ETP_SMALL_IO_MIN windows of at
   most ETP_BATCH_SMALL bytes on average: in the job they would go one
   system call each (no engine there), and batched on the calling thread
   they take less time than overlapped. */
#define ETP_SMALL_IO_MIN 64

typedef struct etp_round {
    int64_t *ca, *cb;            /* chunk of each aggregator; ca < 0: none */
    int64_t *sc, *sd, *rc, *rd;  /* exchange counts and displacements */
    int any;                     /* some aggregator has a chunk */
    int xchg;                    /* some pair moves bytes */
    int64_t send, recv;          /* this rank's totals */
    coll_xchg_shape shape;       /* the exchange's, when known (procs) */
} etp_round;

typedef struct etp_run {
    coll_plan *p;
    char *buf;
    int64_t *pos;
    etp_round r[2];
    int64_t *words;              /* backing store of pos and rounds */
    int64_t words_bytes;
    char *stage, *sbuf[2], *rbuf[2];
    int64_t stage_sz, send_sz, recv_sz;
    coll_cur *curs;              /* P cursors and P vectors (windows) */
    int64_t curs_bytes;
    int64_t cur_a;               /* stage holds file byte f at f - cur_a */
    int io_rc;                   /* first I/O failure of this rank */
    char *res;                   /* next free byte of the reservation */
    int rounds;
    int threaded;
    int64_t xbudget;             /* what the rounds left to the exchange */
    /* small read windows gathered for one core_io_read_batch (on the
       calling thread only: it drives the context's engine) */
    core_iov bat[ETP_BATCH];
    int nbat;
    int batching;
    int writing; /* the windows go to the file (else from it) */
    int sizing;  /* size_pass: no exchange follows the schedule */
    int small_io; /* the first chunk: many windows, batched on this thread */
} etp_run;

/*
 * The round's exchange shape as the exchange's agreement folds it
 * (coll_xchg_shape: the busiest rank's bytes in or out, the largest
 * message, the bytes over all pairs), from what every rank knows (the
 * sections and the chunks): the same on every rank, so that the
 * exchange's auto guesses alike everywhere (coll_xchg_args.shape). Each
 * rank guessing from its own counts, the aggregators and the others
 * could guess differently: the two-level exchange's data could then not
 * ride on the agreement, and A1 ran after it with one more agreement.
 * Only for the exchange's auto, and only where the pairs to count are
 * few (COLL_SHAPE_PAIRS: each pair is counted twice a round), else
 * unknown (procs 0: each rank guesses on its own).
 */
#define COLL_SHAPE_PAIRS (1 << 14)
static void round_shape(const coll_plan *p, etp_round *R)
{
    const int P = p->P;
    const int64_t es = p->esize;
    coll_xchg_shape *s = &R->shape;
    memset(s, 0, sizeof *s);
    if (P < 2 || !R->xchg || p->ctx->opt.exchange != PASSION_XCHG_AUTO ||
        p->xalg != PASSION_XCHG_DEFAULT)
        return;
    int64_t active = 0;
    for (int i = 0; i < P; i++)
        active += R->ca[i] >= 0;
    if (active * P > COLL_SHAPE_PAIRS)
        return;
    /* an aggregator's bytes with all ranks (it receives them in a write,
       sends them in a read), then a rank's with all aggregators (the
       other way): no memory beyond the plan's (the budget) */
    for (int i = 0; i < P; i++) {
        if (R->ca[i] < 0)
            continue;
        int64_t l = 0;
        for (int r = 0; r < P; r++) {
            int64_t b =
                r == i ? 0 : coll_cnt_in(p, r, R->ca[i], R->cb[i]) * es;
            l += b;
            s->mmax = b > s->mmax ? b : s->mmax;
        }
        s->total += l;
        s->lmax = l > s->lmax ? l : s->lmax;
    }
    for (int r = 0; r < P; r++) {
        int64_t l = 0;
        for (int i = 0; i < P; i++)
            if (R->ca[i] >= 0 && i != r)
                l += coll_cnt_in(p, r, R->ca[i], R->cb[i]) * es;
        s->lmax = l > s->lmax ? l : s->lmax;
    }
    s->lmax_x = s->lmax; /* no rank sends itself anything */
    s->block = -1;
    s->procs = P;
}

/* Chunks of every aggregator for the next round, and the counts. */
static int schedule(etp_run *u, etp_round *R)
{
    coll_plan *p = u->p;
    const int P = p->P, me = p->me;
    const int64_t es = p->esize;
    R->any = R->xchg = 0;
    for (int i = 0; i < P; i++) {
        int64_t a, b;
        int rc = coll_chunk_next(p, i, &u->pos[i], &a, &b);
        if (rc < 0)
            return rc;
        R->ca[i] = rc ? a : -1;
        R->cb[i] = rc ? b : -1;
        R->any |= rc;
        R->sc[i] = R->rc[i] = 0;
    }
    if (!R->any)
        return PASSION_OK;
    for (int j = 0; j < P; j++) {
        if (j == me)
            continue;
        /* reads: I send my chunk's elements of rank j and receive mine of
           j's chunk; writes the other way round */
        int64_t mine =
            R->ca[me] >= 0 ? coll_cnt_in(p, j, R->ca[me], R->cb[me]) : 0;
        int64_t theirs =
            R->ca[j] >= 0 ? coll_cnt_in(p, me, R->ca[j], R->cb[j]) : 0;
        R->sc[j] = (p->op_write ? theirs : mine) * es;
        R->rc[j] = (p->op_write ? mine : theirs) * es;
    }
    R->send = R->recv = 0;
    for (int j = 0; j < P; j++) {
        R->sd[j] = R->send;
        R->rd[j] = R->recv;
        R->send += R->sc[j];
        R->recv += R->rc[j];
    }
    /* does any rank have elements in another's chunk? */
    for (int i = 0; i < P && !R->xchg; i++) {
        int k0 = 0, k1 = 0;
        if (R->ca[i] >= 0)
            coll_ranks_in(p, R->ca[i], R->cb[i], &k0, &k1);
        for (int k = k0; k < k1 && !R->xchg; k++) {
            int r = (int)p->byext[k];
            R->xchg = r != i && coll_cnt_in(p, r, R->ca[i], R->cb[i]) > 0;
        }
    }
    if (!u->sizing)
        round_shape(p, R);
    return PASSION_OK;
}

/* ---- I/O side (the aggregator), maybe on the I/O worker ---- */

/* the gathered windows to the driver in one batch (u->writing: writes) */
static int flush(etp_run *u)
{
    int n = u->nbat;
    u->nbat = 0;
    if (!n)
        return PASSION_OK;
    core_fh *fh = u->p->f->fh;
    return u->writing ? core_io_write_batch(fh, u->bat, n)
                      : core_io_read_batch(fh, u->bat, n);
}

/* one window between the file and the stage: gathered when batching and
   small, else (after what was gathered, in file order) on its own */
static int io_window(void *arg, int64_t w0, int64_t w1, int holes)
{
    (void)holes;
    etp_run *u = arg;
    char *at = u->stage + (w0 - u->cur_a);
    if (!u->batching || w1 - w0 > ETP_BATCH_SMALL) {
        int rc = flush(u);
        core_fh *fh = u->p->f->fh;
        return rc ? rc
               : u->writing ? core_io_write(fh, at, w1 - w0, w0)
                            : core_io_read(fh, at, w1 - w0, w0);
    }
    u->bat[u->nbat++] = (core_iov){at, w1 - w0, w0, 0};
    return u->nbat == ETP_BATCH ? flush(u) : PASSION_OK;
}

/* a write's read-modify-write: only windows holding bytes of no section */
static int rmw_window(void *arg, int64_t w0, int64_t w1, int holes)
{
    return holes ? io_window(arg, w0, w1, holes) : PASSION_OK;
}

/* the windows of [a, b) read into the stage or written from it (fn picks
   which of them), batched when allowed (the windows are disjoint) */
static int stage_io(etp_run *u, int64_t a, int64_t b, coll_window_fn fn,
                    int writing, int batching)
{
    u->writing = writing;
    u->batching = batching;
    u->nbat = 0;
    int rc = coll_windows(u->p, u->curs, a, b, fn, u);
    int frc = flush(u);
    u->batching = 0;
    return rc ? rc : frc;
}

/* on_thread: run as the I/O job (no engine, no batching) */
static void io_round(etp_run *u, etp_round *R, int par, int on_thread)
{
    coll_plan *p = u->p;
    const int P = p->P, me = p->me;
    const int64_t es = p->esize;
    int64_t A = R->ca[me], B = R->cb[me];
    if (A < 0 || u->io_rc)
        return;
    u->cur_a = A;
    CORE_CHAOS(ETP_ROUND);
    if (!p->op_write) {
        u->io_rc = stage_io(u, A, B, io_window, 0, !on_thread);
        if (u->io_rc)
            return;
        for (int r = 0; r < P; r++) {
            if (r == me || !R->sc[r])
                continue;
            char *q = u->sbuf[par] + R->sd[r];
            coll_copy(&p->x[r], es, A, B, COLL_FILE_TO_PACKED, u->stage, A,
                      NULL, &q);
        }
        if (p->elems[me])
            coll_copy(&p->xme, es, A, B, COLL_FILE_TO_MEM, u->stage, A,
                      u->buf, NULL);
        return;
    }
    u->io_rc = stage_io(u, A, B, rmw_window, 0, !on_thread);
    if (u->io_rc)
        return;
    CORE_CHAOS(ETP_RMW);
    for (int r = 0; r < P; r++) { /* increasing rank: the highest wins */
        if (r == me) {
            if (p->elems[me])
                coll_copy(&p->xme, es, A, B, COLL_MEM_TO_FILE, u->stage, A,
                          u->buf, NULL);
        } else if (R->rc[r]) {
            char *q = u->rbuf[par] + R->rd[r];
            coll_copy(&p->x[r], es, A, B, COLL_PACKED_TO_FILE, u->stage, A,
                      NULL, &q);
        }
    }
    u->io_rc = stage_io(u, A, B, io_window, 1, !on_thread);
}

typedef struct io_job {
    etp_run *u;
    etp_round *R;
    int par;
} io_job;

/* the round's I/O as the context's I/O job (core_job_start) */
static void io_job_run(void *arg)
{
    io_job *j = arg;
    io_round(j->u, j->R, j->par, 1);
}

/* ---- exchange side (every rank), on the calling thread ---- */

static int xchg_round(etp_run *u, etp_round *R, int par)
{
    coll_plan *p = u->p;
    const int P = p->P, me = p->me;
    const int64_t es = p->esize;
    int rc = PASSION_OK;
    if (p->op_write) {
        for (int i = 0; i < P; i++) {
            if (i == me || !R->sc[i])
                continue;
            char *q = u->sbuf[0] + R->sd[i];
            coll_copy(&p->xme, es, R->ca[i], R->cb[i], COLL_MEM_TO_PACKED,
                      NULL, 0, u->buf, &q);
        }
        if (R->xchg)
            rc = coll_etp_exchange(p->ctx, u->sbuf[0], R->sc, R->sd,
                                   u->rbuf[par], R->rc, R->rd, u->xbudget,
                                   R->shape.procs ? &R->shape : NULL,
                                   p->xalg);
        return rc;
    }
    if (R->xchg)
        rc = coll_etp_exchange(p->ctx, u->sbuf[par], R->sc, R->sd,
                               u->rbuf[0], R->rc, R->rd, u->xbudget,
                               R->shape.procs ? &R->shape : NULL, p->xalg);
    if (rc)
        return rc;
    for (int i = 0; i < P; i++) {
        if (i == me || !R->rc[i])
            continue;
        char *q = u->rbuf[0] + R->rd[i];
        coll_copy(&p->xme, es, R->ca[i], R->cb[i], COLL_PACKED_TO_MEM, NULL,
                  0, u->buf, &q);
    }
    return PASSION_OK;
}

/* ---- setup ---- */

typedef struct win_count {
    int64_t n, bytes;
} win_count;

static int count_window(void *arg, int64_t w0, int64_t w1, int holes)
{
    (void)holes;
    win_count *c = arg;
    c->n++;
    c->bytes += w1 - w0;
    return PASSION_OK;
}

/* Walk the schedule once without I/O: rounds and buffer sizes, and
   whether this rank's first chunk is many small windows (u->small_io) */
static int size_pass(etp_run *u)
{
    coll_plan *p = u->p;
    for (int i = 0; i < p->P; i++)
        u->pos[i] = p->dlo[i];
    u->rounds = 0;
    u->small_io = 0;
    u->sizing = 1;
    for (;;) {
        etp_round *R = &u->r[0];
        int rc = schedule(u, R);
        if (rc)
            return rc;
        if (!R->any)
            break;
        if (u->rounds == 0 && R->ca[p->me] >= 0) {
            win_count c = {0, 0};
            rc = coll_windows(p, u->curs, R->ca[p->me], R->cb[p->me],
                              count_window, &c);
            if (rc)
                return rc;
            u->small_io = c.n >= ETP_SMALL_IO_MIN &&
                          c.bytes / c.n <= ETP_BATCH_SMALL;
        }
        u->rounds++;
        if (R->ca[p->me] >= 0 &&
            R->cb[p->me] - R->ca[p->me] + p->esize > u->stage_sz)
            u->stage_sz = R->cb[p->me] - R->ca[p->me] + p->esize;
        if (R->send > u->send_sz)
            u->send_sz = R->send;
        if (R->recv > u->recv_sz)
            u->recv_sz = R->recv;
    }
    for (int i = 0; i < p->P; i++)
        u->pos[i] = p->dlo[i];
    u->sizing = 0;
    return PASSION_OK;
}

static void run_free(etp_run *u)
{
    passion_ctx *ctx = u->p->ctx;
    if (u->curs_bytes) /* 0: carved from the reservation */
        core_stage_free(ctx, u->curs, u->curs_bytes);
    if (u->words_bytes)
        core_stage_free(ctx, u->words, u->words_bytes);
}

static int64_t page_up(int64_t n)
{
    return (n + 4095) / 4096 * 4096;
}

/* bytes from the allocator, else carved from the reservation (then
   *bytes = 0: not ours to free) */
static void *alloc_or_carve(etp_run *u, int64_t *bytes)
{
    void *m = core_stage_alloc(u->p->ctx, *bytes);
    if (!m && u->res) {
        m = u->res;
        u->res += page_up(*bytes);
        *bytes = 0;
    }
    return m;
}

static int run_alloc(etp_run *u)
{
    coll_plan *p = u->p;
    passion_ctx *ctx = p->ctx;
    const int P = p->P;
    u->words_bytes = (int64_t)P * 13 * 8;
    u->curs_bytes = (int64_t)P * (int64_t)(sizeof(coll_cur) + sizeof(coll_vec));
    /* a rank that cannot allocate them takes them from the reservation,
       so that it still runs every round (as the buffers below) */
    u->res = p->reserve;
    u->words = alloc_or_carve(u, &u->words_bytes);
    u->curs = alloc_or_carve(u, &u->curs_bytes);
    if (!u->words || !u->curs)
        return core_err(ctx, PASSION_ENOMEM, "round descriptors");
    u->pos = u->words;
    for (int k = 0; k < 2; k++) {
        int64_t *w = u->words + P + (int64_t)k * 6 * P;
        etp_round *R = &u->r[k];
        R->ca = w;
        R->cb = w + P;
        R->sc = w + 2 * P;
        R->sd = w + 3 * P;
        R->rc = w + 4 * P;
        R->rd = w + 5 * P;
    }
    return PASSION_OK;
}

int coll_etp_run(coll_plan *p, char *buf)
{
    passion_ctx *ctx = p->ctx;
    etp_run u;
    memset(&u, 0, sizeof u);
    u.p = p;
    u.buf = buf;
    int rc = coll_etp_budget_check(p);
    if (!rc)
        rc = run_alloc(&u);
    if (!rc)
        rc = size_pass(&u);
    if (rc || u.rounds == 0) {
        run_free(&u);
        return rc;
    }
    u.threaded =
        u.rounds > 1 && core_job_may_run(p->f->fh) && !u.small_io;
    int two_send = u.threaded && !p->op_write;
    int two_recv = u.threaded && p->op_write;
    char **slot[5] = {&u.stage, &u.sbuf[0], &u.rbuf[0], &u.sbuf[1],
                      &u.rbuf[1]};
    int64_t size[5] = {u.stage_sz, u.send_sz, u.recv_sz,
                       two_send ? u.send_sz : 0, two_recv ? u.recv_sz : 0};
    char *res = u.res;
    for (int k = 0; k < 5; k++) {
        if (!size[k])
            continue;
        *slot[k] = core_stage_alloc(ctx, size[k]);
        if (!*slot[k]) {
            /* carve it from the reservation made before the FAD, so that
               this rank can still run every round */
            *slot[k] = res;
            res += (size[k] + 4095) / 4096 * 4096;
            size[k] = 0; /* not ours to free */
        }
    }
    u.stage_sz = size[0];
    char *own[5] = {size[0] ? u.stage : NULL, size[1] ? u.sbuf[0] : NULL,
                    size[2] ? u.rbuf[0] : NULL, size[3] ? u.sbuf[1] : NULL,
                    size[4] ? u.rbuf[1] : NULL};
    /* the exchange may hold what the rounds leave of the budget */
    u.xbudget = ctx->opt.memory_budget - ctx->staging_now;
    if (!u.sbuf[1])
        u.sbuf[1] = u.sbuf[0];
    if (!u.rbuf[1])
        u.rbuf[1] = u.rbuf[0];
    int par = 0, mrc = PASSION_OK;
    etp_round *R0 = &u.r[0];
    if ((mrc = schedule(&u, R0)))
        goto out;
    if (p->op_write)
        mrc = xchg_round(&u, R0, 0);
    else
        io_round(&u, R0, 0, 0);
    while (!mrc) {
        etp_round *cur = &u.r[par], *nxt = &u.r[par ^ 1];
        if ((mrc = schedule(&u, nxt)))
            break;
        /* the I/O of one round against the exchange of the other */
        io_job job = {&u, p->op_write ? cur : nxt, p->op_write ? par
                                                               : par ^ 1};
        int want_io = p->op_write || nxt->any;
        core_job cj = {.fn = io_job_run, .arg = &job};
        int started = want_io && u.threaded && core_job_start(ctx, &cj) == 0;
        /* without the thread, one buffer each: a write's I/O must consume
           the received data before the next exchange overwrites it */
        if (!started && want_io && p->op_write)
            io_round(&u, job.R, job.par, 0);
        if (!p->op_write)
            mrc = xchg_round(&u, cur, par);
        else if (nxt->any)
            mrc = xchg_round(&u, nxt, par ^ 1);
        if (started)
            core_job_join(ctx, &cj);
        else if (want_io && !p->op_write)
            io_round(&u, job.R, job.par, 0);
        if (!nxt->any)
            break;
        par ^= 1;
    }
out:
    rc = mrc ? mrc : u.io_rc;
    core_stage_free(ctx, own[0], size[0]);
    core_stage_free(ctx, own[1], size[1]);
    core_stage_free(ctx, own[2], size[2]);
    core_stage_free(ctx, own[3], size[3]);
    core_stage_free(ctx, own[4], size[4]);
    u.stage = u.sbuf[0] = u.sbuf[1] = u.rbuf[0] = u.rbuf[1] = NULL;
    run_free(&u);
    return rc;
}
