/*
 * xchg_fourstage.c - the four-stage irregular all-to-all of Liu, Wang and
 * Prasanna ("Portable and scalable algorithm for irregular all-to-all
 * communication", JPDC 2002, section 3.2), blocking (3.2.3) and
 * non-blocking with dual buffers (3.4), for any P: its model, the
 * distribution of the pieces over the four stages, and the stages. The
 * node array and the row schedule are in xchg_fs_grid.c, the messages in
 * xchg_fs_msg.c, what they share in xchg_fourstage.h.
 *
 * Ranks form a row-major array of C columns and R rows; the first r
 * columns are complete (R nodes), the others have R - 1 (3.2.2; when
 * r > R - 1, C becomes floor(sqrt P)). The missing nodes of the last row
 * are pseudo-nodes: a message from node (R-1, i) to the pseudo-node of
 * column c goes to node (i, c) (3.2.2 (A)).
 *   I   (R-Distribute, R-Comm): every message for destination d is split
 *       over the columns, R parts of P to a complete column and R - 1 to
 *       an incomplete one (the counter scan of Fig. 11, by byte);
 *   II  (C-Distribute, C-Comm): what a node holds for d is split evenly
 *       over the nodes of its column; now the data for every d is spread
 *       evenly over all P nodes (Lemma 2);
 *   III (C-Collect, R-Comm): everything for column k goes to the node of
 *       column k in the row (or the pseudo-node's stand-in);
 *   IV  (R-Collect, C-Comm): everything for d goes to d.
 * Rows use the Revised R-Schedule, with the messages of the incomplete
 * row first and the stalls of the priority schedule (3.2.2 (B)) found by
 * simulation, so that every node receives at most one message per step;
 * columns use the plain C-Schedule.
 *
 * Bytes, not elements: a piece of data travels with a descriptor (source,
 * destination, offset, length) so that any node can split it and the
 * destination can place it; a message is [total, count][descriptors]
 * [data], sent without copying (an MPI hindexed type over the pieces),
 * and split at the chunk limit (then the first MPI message is the 16-byte
 * header alone). Messages are always sent, empty or not, so every node
 * knows how many it receives.
 *
 * Non-blocking version (3.4): all messages of a stage are posted at once
 * and received in arrival order; the next stage's messages are posted
 * before waiting for the previous stage's sends, which read the other
 * buffer (dual buffers).
 *
 * Invariants: a node holds at most two generations of received data (the
 * one being sent, the one being received), which is Theorem 1's
 * 2*ceil(sqrt P)^2*Lmax/P when sizes divide evenly; a node that cannot
 * allocate keeps sending well-formed empty messages and drains what it
 * receives, and the dispatcher agrees on the outcome afterwards.
 */
#include "xchg_fourstage.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the stages */

static int colsize(const coll_grid *g, int c)
{
    return g->r == 0 || c < g->r ? g->R : g->R - 1;
}

static int cmp_piece(const void *a, const void *b)
{
    const coll_fs_piece *p = a, *q = b;
    if (p->dst != q->dst)
        return p->dst < q->dst ? -1 : 1;
    if (p->src != q->src)
        return p->src < q->src ? -1 : 1;
    return (p->off > q->off) - (p->off < q->off);
}

static int stage_nkeys(const coll_fs_run *run, int stage)
{
    const coll_grid *g = &run->g;
    switch (stage) {
    case 1:
    case 3:
        return g->C;
    case 2:
        return colsize(g, run->y);
    default:
        return g->P;
    }
}

static int peer_key(const coll_fs_run *run, int stage, int peer)
{
    switch (stage) {
    case 1:
    case 3:
        return peer % run->g.C;
    case 2:
        return peer / run->g.C;
    default:
        return peer;
    }
}

static int emit(coll_fs_piece *out, int64_t *n, const coll_fs_piece *h,
                int64_t off, int64_t len, int key)
{
    if (len <= 0)
        return 0;
    coll_fs_piece *p = &out[(*n)++];
    *p = *h;
    p->off = h->off + off;
    p->len = len;
    p->ptr = h->ptr + off;
    p->key = key;
    return 1;
}

/* The pieces of this stage with their buckets (R-/C-Distribute,
   C-/R-Collect), grouped by bucket. NULL with *nout = 0 when there are
   none; on allocation failure the run fails. */
static coll_fs_piece *fs_distribute(coll_fs_run *run, int stage, int64_t *nout)
{
    const coll_grid *g = &run->g;
    int P = g->P, C = g->C, nk = stage_nkeys(run, stage);
    int64_t cap = run->nheld;
    *nout = 0;
    if (stage == 1)
        cap = run->nheld * C;
    else if (stage == 2)
        cap = run->nheld + (int64_t)P * nk;
    if (cap == 0 || run->fail)
        return NULL;
    coll_fs_piece *out = core_malloc(run->pl->ctx, (size_t)cap * sizeof *out);
    coll_fs_piece *sorted =
        core_malloc(run->pl->ctx, (size_t)cap * sizeof *sorted);
    int64_t *cnt =
        core_calloc(run->pl->ctx, (size_t)(nk > C ? nk : C) + 1, sizeof *cnt);
    int64_t n = 0;
    if (!out || !sorted || !cnt) {
        core_free(run->pl->ctx, out);
        core_free(run->pl->ctx, sorted);
        core_free(run->pl->ctx, cnt);
        coll_fs_failed(run, PASSION_ENOMEM, "piece lists");
        return NULL;
    }
    if (stage == 1) {
        /* counter scan of Fig. 11, by byte: element k of the message for
           d goes to column ((d % C + k) % P) % C; every P consecutive
           elements give each complete column R, each other R - 1 */
        for (int64_t i = 0; i < run->nheld; i++) {
            const coll_fs_piece *h = &run->held[i];
            int64_t full = h->len / P, rem = h->len % P;
            for (int c = 0; c < C; c++)
                cnt[c] = full * colsize(g, c);
            for (int64_t k = 0, base = h->dst % C; k < rem; k++)
                cnt[((base + k) % P) % C]++;
            int64_t off = 0;
            for (int c = 0; c < C; c++) {
                emit(out, &n, h, off, cnt[c], c);
                off += cnt[c];
            }
        }
    } else if (stage == 2) {
        /* what this node holds for d, in (source, offset) order, cut in
           nk equal parts (the counter starts at d % nk) */
        if (run->nheld > 1)
            qsort(run->held, (size_t)run->nheld, sizeof *run->held, cmp_piece);
        for (int64_t i = 0; i < run->nheld;) {
            int d = run->held[i].dst;
            int64_t j = i, T = 0;
            while (j < run->nheld && run->held[j].dst == d)
                T += run->held[j++].len;
            int base = d % nk;
            for (int b = 0; b < nk; b++)
                cnt[b] = T / nk + ((b - base + nk) % nk < T % nk ? 1 : 0);
            int b = 0;
            int64_t room = cnt[0];
            for (int64_t k = i; k < j; k++) {
                const coll_fs_piece *h = &run->held[k];
                int64_t done = 0;
                while (done < h->len) {
                    while (room == 0 && b < nk - 1)
                        room = cnt[++b];
                    int64_t take = h->len - done < room ? h->len - done : room;
                    emit(out, &n, h, done, take, b);
                    done += take;
                    room -= take;
                }
            }
            i = j;
        }
    } else {
        for (int64_t i = 0; i < run->nheld; i++) {
            const coll_fs_piece *h = &run->held[i];
            emit(out, &n, h, 0, h->len, stage == 3 ? h->dst % C : h->dst);
        }
    }
    /* stable grouping by key */
    memset(cnt, 0, ((size_t)(nk > C ? nk : C) + 1) * sizeof *cnt);
    for (int64_t i = 0; i < n; i++)
        cnt[out[i].key + 1]++;
    for (int k = 0; k < nk; k++)
        cnt[k + 1] += cnt[k];
    for (int64_t i = 0; i < n; i++)
        sorted[cnt[out[i].key]++] = out[i];
    core_free(run->pl->ctx, out);
    core_free(run->pl->ctx, cnt);
    *nout = n;
    return sorted;
}

/* range of out[] with key k (out grouped by key) */
static void key_range(const coll_fs_piece *out, int64_t n, int k,
                      int64_t *first, int64_t *count)
{
    int64_t i = 0;
    while (i < n && out[i].key < k)
        i++;
    *first = i;
    while (i < n && out[i].key == k)
        i++;
    *count = i - *first;
}

/* schedule of the stage for this node; returns the number of steps */
static int fs_schedule(coll_fs_run *run, int stage, coll_step *st)
{
    const coll_grid *g = &run->g;
    int me = run->pl->me;
    if (stage == 1 || stage == 3) {
        return coll_row_schedule(g, me, st, run->work);
    }
    int N = colsize(g, run->y), x = run->x;
    for (int t = 1; t < N; t++) {
        st[t - 1].to = ((x + t) % N) * g->C + run->y;
        st[t - 1].from = ((x - t + N) % N) * g->C + run->y;
    }
    return N > 1 ? N - 1 : 0;
}

/* copy this node's own pieces: to the receive buffer (stage IV) or into
   one new buffer of the next generation */
static void fs_self(coll_fs_run *run, int stage, const coll_fs_piece *out,
                    int64_t first, int64_t count, coll_fs_piece **in,
                    int64_t *nin, int64_t *capin)
{
    coll_xchg_plan *pl = run->pl;
    if (run->fail || count == 0)
        return;
    if (stage == 4) {
        for (int64_t i = first; i < first + count; i++) {
            const coll_fs_piece *p = &out[i];
            if (p->off + p->len > coll_rc(pl, p->src)) {
                coll_fs_failed(run, PASSION_EMISMATCH,
                               "data beyond recvcounts");
                return;
            }
            memcpy(pl->rbuf + coll_rd(pl, p->src) + p->off, p->ptr,
                   (size_t)p->len);
        }
        return;
    }
    int64_t bytes = 0;
    for (int64_t i = first; i < first + count; i++)
        if (!out[i].user)
            bytes += out[i].len;
    if (*nin + count > *capin) {
        int64_t cap = *nin + count + 64;
        coll_fs_piece *v =
            core_realloc(run->pl->ctx, *in, (size_t)cap * sizeof *v);
        if (!v) {
            coll_fs_failed(run, PASSION_ENOMEM, "piece list");
            return;
        }
        *in = v;
        *capin = cap;
    }
    char *buf = NULL;
    if (bytes > 0) {
        buf = coll_stage_alloc(pl, bytes, bytes);
        if (!buf) {
            coll_fs_failed(run, PASSION_ENOMEM, "self buffer");
            return;
        }
        if (coll_fs_bufs_push(run, &run->next, buf, bytes, bytes))
            return;
    }
    int64_t pos = 0;
    for (int64_t i = first; i < first + count; i++) {
        coll_fs_piece p = out[i];
        if (!p.user) {
            memcpy(buf + pos, p.ptr, (size_t)p.len);
            p.ptr = buf + pos;
            pos += p.len;
        }
        (*in)[(*nin)++] = p;
    }
}

/* place the pieces received in stage IV and drop their buffers */
static void fs_unpack(coll_fs_run *run, coll_fs_piece *in, int64_t n)
{
    coll_xchg_plan *pl = run->pl;
    for (int64_t i = 0; i < n && !run->fail; i++) {
        const coll_fs_piece *p = &in[i];
        if (p->dst != pl->me || p->off + p->len > coll_rc(pl, p->src)) {
            coll_fs_failed(run, PASSION_EMISMATCH,
                           "a piece does not fit its receive count");
            break;
        }
        memcpy(pl->rbuf + coll_rd(pl, p->src) + p->off, p->ptr,
               (size_t)p->len);
    }
    coll_fs_bufs_free(run, &run->next);
}

static void fs_wait_msgs(coll_fs_run *run, coll_fs_msg *m, int n)
{
    for (int i = 0; i < n; i++) {
        if (m[i].nreq && coll_waitall(m[i].nreq, m[i].req))
            run->rc = PASSION_EMPI;
        coll_fs_msg_done(run, &m[i]);
    }
}

static void fs_stage(coll_fs_run *run, int stage)
{
    coll_xchg_plan *pl = run->pl;
    const coll_grid *g = &run->g;
    int me = pl->me, tag = COLL_TAG + 4 + stage;
    if (stage == 2 && colsize(g, run->y) <= 1)
        return; /* a column of one: nothing moves */
    coll_step *st = run->st;
    /* the array the previous stage's pending sends do not use */
    coll_fs_msg *msg = run->pend == run->msgs[0] ? run->msgs[1] : run->msgs[0];
    int *srcs = run->srcs;
    char *done = run->done;
    coll_fs_piece *in = NULL;
    int64_t nin = 0, capin = 0, nout = 0;
    int T = fs_schedule(run, stage, st);
    coll_fs_piece *out = fs_distribute(run, stage, &nout);
    int nmsg = 0, nsrc = 0;
    for (int t = 0; t < T; t++) {
        if (st[t].to >= 0 && st[t].to != me) {
            coll_fs_msg *m = &msg[nmsg++];
            m->peer = st[t].to;
            key_range(out, nout, peer_key(run, stage, m->peer), &m->first,
                      &m->count);
        }
        if (st[t].from >= 0 && st[t].from != me)
            srcs[nsrc++] = st[t].from;
    }
    memset(done, 0, (size_t)run->cap);
    if (!run->nb) {
        /* blocking: step by step, one send and one receive */
        int im = 0, is = 0;
        for (int t = 0; t < T; t++) {
            int sends = st[t].to >= 0 && st[t].to != me;
            int recvs = st[t].from >= 0 && st[t].from != me;
            if (sends)
                coll_fs_post(run, &msg[im], out, tag);
            if (recvs) {
                coll_fs_recv_one(run, &srcs[is], 1, NULL, tag, &in, &nin,
                                 &capin);
                if (stage == 4) {
                    fs_unpack(run, in, nin);
                    nin = 0;
                }
                is++;
            }
            if (sends)
                fs_wait_msgs(run, &msg[im++], 1);
            if (sends || recvs)
                pl->st.rounds++;
        }
    } else {
        /* non-blocking: post everything; then the previous stage's sends
           may end, which frees the buffers they read; then receive in
           arrival order */
        for (int i = 0; i < nmsg; i++)
            coll_fs_post(run, &msg[i], out, tag);
        if (run->pend) {
            fs_wait_msgs(run, run->pend, run->npend);
            run->pend = NULL;
            run->npend = 0;
        }
        coll_fs_bufs_free(run, &run->old);
        for (int k = 0; k < nsrc; k++) {
            int i = coll_fs_recv_one(run, srcs, nsrc, done, tag, &in, &nin,
                                     &capin);
            done[i] = 1;
            if (stage == 4) {
                fs_unpack(run, in, nin);
                nin = 0;
            }
        }
        if (nmsg || nsrc)
            pl->st.rounds++;
    }
    /* this node's own part */
    int64_t sf, sn;
    key_range(out, nout, peer_key(run, stage, me), &sf, &sn);
    fs_self(run, stage, out, sf, sn, &in, &nin, &capin);
    core_free(run->pl->ctx, out);
    core_free(run->pl->ctx, run->held);
    run->held = in;
    run->nheld = run->fail ? 0 : nin;
    if (!run->nb) {
        coll_fs_bufs_free(run, &run->cur);
    } else {
        /* the sends just posted read run->cur: keep it until they end */
        coll_fs_bufs t = run->old;
        run->old = run->cur;
        run->cur = t;
        run->pend = msg;
        run->npend = nmsg;
    }
    coll_fs_bufs t = run->cur;
    run->cur = run->next;
    run->next = t;
}

/* the tables of one stage, carved from pl->scratch */
static int64_t fs_tables(const coll_grid *g, coll_fs_run *run, char *base)
{
    int cap = 2 * (g->C > g->R ? g->C : g->R) + 2;
    int64_t pos = 0;
    char *at = run ? base : NULL; /* NULL: only the size is computed */
    coll_step *st =
        coll_xchg_carve(at, &pos, (int64_t)cap * (int64_t)sizeof(coll_step));
    coll_fs_msg *m0 =
        coll_xchg_carve(at, &pos, (int64_t)cap * (int64_t)sizeof(coll_fs_msg));
    coll_fs_msg *m1 =
        coll_xchg_carve(at, &pos, (int64_t)cap * (int64_t)sizeof(coll_fs_msg));
    int *srcs = coll_xchg_carve(at, &pos, (int64_t)cap * (int64_t)sizeof(int));
    char *done = coll_xchg_carve(at, &pos, (int64_t)cap);
    int *work =
        coll_xchg_carve(at, &pos, (int64_t)(2 * g->C) * (int64_t)sizeof(int));
    if (run) {
        run->cap = cap;
        run->st = st;
        run->msgs[0] = m0;
        run->msgs[1] = m1;
        run->srcs = srcs;
        run->done = done;
        run->work = work;
        memset(m0, 0, (size_t)cap * sizeof *m0);
        memset(m1, 0, (size_t)cap * sizeof *m1);
    }
    return pos + 16;
}

static int64_t fs_scratch(const coll_xchg_plan *pl)
{
    coll_grid g = coll_grid_make(pl->P);
    return fs_tables(&g, NULL, NULL);
}

static int fs_exchange(coll_xchg_plan *pl, int nb)
{
    int P = pl->P, me = pl->me;
    if (P <= 1) {
        if (coll_sc(pl, 0) > 0)
            memcpy(pl->rbuf + coll_rd(pl, 0), pl->sbuf + coll_sd(pl, 0),
                   (size_t)coll_sc(pl, 0));
        return PASSION_OK;
    }
    coll_fs_run run;
    memset(&run, 0, sizeof run);
    run.pl = pl;
    run.g = coll_grid_make(P);
    run.x = me / run.g.C;
    run.y = me % run.g.C;
    run.nb = nb;
    if (!pl->scratch)
        return core_err(pl->ctx, PASSION_EINVAL, "four-stage: no tables");
    fs_tables(&run.g, &run, pl->scratch);
    run.held = core_malloc(pl->ctx, (size_t)P * sizeof *run.held);
    if (!run.held)
        coll_fs_failed(&run, PASSION_ENOMEM, "piece list");
    for (int d = 0; d < P && run.held; d++) {
        if (coll_sc(pl, d) <= 0)
            continue;
        coll_fs_piece *h = &run.held[run.nheld++];
        h->src = me;
        h->dst = d;
        h->off = 0;
        h->len = coll_sc(pl, d);
        h->ptr = pl->sbuf + coll_sd(pl, d);
        h->key = 0;
        h->user = 1;
    }
    for (int stage = 1; stage <= 4; stage++)
        fs_stage(&run, stage);
    if (run.pend)
        fs_wait_msgs(&run, run.pend, run.npend);
    coll_fs_bufs_free(&run, &run.old);
    coll_fs_bufs_free(&run, &run.cur);
    coll_fs_bufs_free(&run, &run.next);
    core_free(pl->ctx, run.old.v);
    core_free(pl->ctx, run.cur.v);
    core_free(pl->ctx, run.next.v);
    core_free(pl->ctx, run.held);
    return run.rc;
}

static int fs_run_blocking(coll_xchg_plan *pl)
{
    return fs_exchange(pl, 0);
}

static int fs_run_nb(coll_xchg_plan *pl)
{
    return fs_exchange(pl, 1);
}

const coll_xchg_ops coll_xchg_fourstage = {
    .id = PASSION_XCHG_FOURSTAGE,
    .agree_after = 1,
    .scratch = fs_scratch,
    .run = fs_run_blocking,
};

const coll_xchg_ops coll_xchg_fourstage_nb = {
    .id = PASSION_XCHG_FOURSTAGE_NB,
    .agree_after = 1,
    .scratch = fs_scratch,
    .run = fs_run_nb,
};
