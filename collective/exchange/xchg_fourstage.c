/*
 * xchg_fourstage.c - the four-stage irregular all-to-all of Liu, Wang and
 * Prasanna (seeds/001, section 3.2; ALGORITHMS.md section 2), blocking
 * (3.2.3) and non-blocking with dual buffers (3.4), for any P.
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
#include "xchg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ grid */

static int isqrt_floor(int P)
{
    int s = (int)sqrt((double)P);
    while (s > 0 && s * s > P)
        s--;
    while ((s + 1) * (s + 1) <= P)
        s++;
    return s;
}

static int isqrt_ceil(int P)
{
    int s = isqrt_floor(P);
    return s * s == P ? s : s + 1;
}

coll_grid coll_grid_make(int P)
{
    coll_grid g = {P, 1, P > 0 ? 1 : 0, 0};
    if (P <= 1)
        return g;
    int C = isqrt_ceil(P);
    for (;;) {
        int R = (P + C - 1) / C, r = P % C;
        if (r == 0 || r <= R - 1 || C == 1) {
            g.C = C;
            g.R = R;
            g.r = r;
            return g;
        }
        C = C == isqrt_ceil(P) ? isqrt_floor(P) : C - 1;
    }
}

static int colsize(const coll_grid *g, int c)
{
    return g->r == 0 || c < g->r ? g->R : g->R - 1;
}

static int exists(const coll_grid *g, int x, int c)
{
    return x < g->R - 1 || (x == g->R - 1 && (g->r == 0 || c < g->r));
}

/* the node that takes row x's message for column c (3.2.2 (A)) */
static int row_target(const coll_grid *g, int x, int y, int c)
{
    return exists(g, x, c) ? x * g->C + c : y * g->C + c;
}

int coll_row_schedule(const coll_grid *g, int node, coll_step *st, int *work)
{
    int C = g->C, r = g->r, x = node / C, y = node % C;
    for (int t = 0; t < 2 * C; t++)
        st[t].to = st[t].from = -1;
    if (C <= 1)
        return 0;
    if (r == 0 || x >= r) {
        /* R-Schedule over the C positions of the row */
        for (int t = 1; t < C; t++) {
            int pc = (y + t) % C, qc = (y - t + C) % C;
            st[t - 1].to = row_target(g, x, y, pc);
            st[t - 1].from = exists(g, x, qc) ? x * C + qc : -1;
        }
        return C - 1;
    }
    /* row x < r also receives from e = (R-1, x), which follows its own
       row's R-Schedule and so sends into row x at fixed steps; the row's
       nodes send in priority order x, x-1, ..., x+1 and stall when their
       receiver is taken (Fig. 10) */
    int e = (g->R - 1) * C + x, T = 0;
    int *next = work, *claimed = work + C;
    for (int c = 0; c < C; c++)
        next[c] = 1;
    for (int t = 1; t < 2 * C; t++) {
        int busy = t < C;
        memset(claimed, 0, (size_t)C * sizeof *claimed);
        if (t < C) {
            int pc = (x + t) % C;
            if (pc >= r) {
                claimed[pc] = 1;
                if (pc == y)
                    st[t - 1].from = e;
                T = t;
            }
        }
        for (int k = 0; k < C; k++) {
            int s = (x - k + C) % C;
            if (next[s] >= C)
                continue;
            busy = 1;
            int tc = (s + next[s]) % C;
            if (claimed[tc])
                continue; /* stall */
            claimed[tc] = 1;
            if (s == y)
                st[t - 1].to = x * C + tc;
            if (tc == y)
                st[t - 1].from = x * C + s;
            next[s]++;
            T = t;
        }
        if (!busy)
            break;
    }
    return T;
}

/* ---------------------------------------------------------------- model */

/* messages this node sends over the four stages (max over nodes) */
static int64_t fs_sends(const coll_grid *g)
{
    if (g->P <= 1)
        return 0;
    return 2 * (int64_t)(g->C - 1) + 2 * (int64_t)(g->R - 1);
}

static int64_t fs_steps(const coll_grid *g)
{
    if (g->P <= 1)
        return 0;
    return 2 * (int64_t)(g->C - 1 + (g->r > 0)) + 2 * (int64_t)(g->R - 1);
}

/* Theorem 2: start-ups times alpha plus 4 (C+1) C Lmax / P bytes (the
   longest message of a step times the steps), with the grid's exact
   number of steps; plus the copies (self parts, unpacking) and the
   agreement on the outcome (coll_agree_cost) */
static double fs_model_common(const coll_xchg_costs *c,
                              const coll_xchg_shape *s, int nb)
{
    int P = s->procs;
    if (P <= 1)
        return c->copy * (double)s->lmax;
    coll_grid g = coll_grid_make(P);
    double C = ceil(sqrt((double)P));
    double bytes = 4.0 * (C + 1) * C * (double)s->lmax / P;
    double copies = 2.0 * (double)s->lmax;
    double agree = coll_agree_cost(c, P);
    double start;
    if (nb) {
        int stages = 2 + 2 * (g.R > 1);
        start = stages * c->round + (double)fs_sends(&g) * c->msg;
    } else {
        start = (double)fs_steps(&g) * (c->round + c->msg);
    }
    return start + c->byte * bytes + c->copy * copies + agree;
}

/* every message of the four stages may leave the node; each stage moves
   the part of a rank's data that leaves its row or column */
static void fs_net(const coll_xchg_shape *s, int radix, double *msgs,
                   double *bytes)
{
    (void)radix;
    coll_grid g = coll_grid_make(s->procs);
    double lx = (double)s->lmax_x;
    *msgs = (double)fs_sends(&g);
    *bytes = s->procs > 1 ? lx * (2.0 * (g.C - 1) / g.C +
                                  2.0 * (g.R - 1) / g.R)
                          : 0;
}

static double fs_model(const coll_xchg_costs *c, const coll_xchg_shape *s,
                       int *radix)
{
    *radix = 0;
    return fs_model_common(c, s, 0);
}

static double fs_model_nb(const coll_xchg_costs *c, const coll_xchg_shape *s,
                          int *radix)
{
    *radix = 0;
    return fs_model_common(c, s, 1);
}

/* ------------------------------------------------------------- messages */

typedef struct fs_hdr {
    int64_t total, nseg;
} fs_hdr;

typedef struct fs_desc {
    int32_t src, dst;
    int64_t off, len;
} fs_desc;

typedef struct fs_piece {
    int32_t src, dst;
    int64_t off, len;
    const char *ptr;
    int key;  /* bucket of the stage */
    int user; /* ptr is in the caller's send buffer */
} fs_piece;

typedef struct fs_buf {
    char *p;
    int64_t bytes, payload;
} fs_buf;

typedef struct fs_bufs {
    fs_buf *v;
    int n, cap;
} fs_bufs;

/* one outgoing message */
typedef struct fs_msg {
    int peer;
    int64_t first, count; /* range of out[] */
    char *hdr;            /* header and descriptors (staging) */
    int64_t hdr_bytes;
    MPI_Request *req;     /* nreq requests: &one, or malloc'd */
    MPI_Request one;
    int nreq;
} fs_msg;

typedef struct fs_run {
    coll_xchg_plan *pl;
    coll_grid g;
    int x, y;        /* my row and column */
    int nb;          /* non-blocking variant */
    int fail;        /* local failure: empty messages, drain */
    int rc;
    fs_piece *held;
    int64_t nheld;
    fs_bufs cur;     /* buffers behind held[] */
    fs_bufs next;    /* buffers being received */
    fs_bufs old;     /* buffers still read by posted sends (NB) */
    fs_msg *pend;    /* sends of the previous stage (NB) */
    int npend;
    /* tables in pl->scratch: steps, two message arrays (dual, for NB),
       sources, done flags, schedule work */
    int cap;
    coll_step *st;
    fs_msg *msgs[2];
    int *srcs;
    char *done;
    int *work;
} fs_run;

static const fs_hdr fs_empty = {(int64_t)sizeof(fs_hdr), 0};

static int fs_failed(fs_run *run, int rc, const char *what)
{
    if (!run->fail) {
        run->fail = 1;
        run->rc = core_err(run->pl->ctx, rc, "four-stage exchange: %s",
                           what);
    }
    return run->rc;
}

static int bufs_push(fs_run *run, fs_bufs *b, char *p, int64_t bytes,
                     int64_t payload)
{
    if (b->n == b->cap) {
        int cap = b->cap ? 2 * b->cap : 16;
        fs_buf *v = core_realloc(run->pl->ctx, b->v, (size_t)cap * sizeof *v);
        if (!v) {
            coll_stage_free(run->pl, p, bytes, payload);
            return fs_failed(run, PASSION_ENOMEM, "buffer list");
        }
        b->v = v;
        b->cap = cap;
    }
    b->v[b->n].p = p;
    b->v[b->n].bytes = bytes;
    b->v[b->n].payload = payload;
    b->n++;
    return PASSION_OK;
}

static void bufs_free(fs_run *run, fs_bufs *b)
{
    for (int i = 0; i < b->n; i++)
        coll_stage_free(run->pl, b->v[i].p, b->v[i].bytes, b->v[i].payload);
    b->n = 0;
}

/* Post message m of pieces out[m->first .. +count) to m->peer. */
static void fs_post(fs_run *run, fs_msg *m, const fs_piece *out, int tag)
{
    coll_xchg_plan *pl = run->pl;
    int64_t chunk = coll_xchg_chunk();
    m->hdr = NULL;
    m->req = &m->one;
    m->nreq = 0;
    int64_t k = run->fail ? 0 : m->count;
    int64_t hb = (int64_t)sizeof(fs_hdr) + k * (int64_t)sizeof(fs_desc);
    int64_t total = hb;
    for (int64_t i = 0; i < k; i++)
        total += out[m->first + i].len;
    int64_t parts = total <= chunk ? 1 : 1 + coll_nparts(total - 16);
    int *lens = NULL;
    MPI_Aint *disp = NULL;
    if (!run->fail) {
        m->hdr = coll_stage_alloc(pl, hb, 0);
        lens = core_malloc(pl->ctx, (size_t)(k + 2) * sizeof *lens);
        disp = core_malloc(pl->ctx, (size_t)(k + 2) * sizeof *disp);
        if (parts > 1)
            m->req = core_malloc(pl->ctx, (size_t)parts * sizeof *m->req);
        if (!m->hdr || !lens || !disp || !m->req) {
            fs_failed(run, PASSION_ENOMEM, "message header");
            coll_stage_free(pl, m->hdr, hb, 0);
            m->hdr = NULL;
            if (m->req != &m->one)
                core_free(pl->ctx, m->req);
            m->req = &m->one;
        } else {
            m->hdr_bytes = hb;
        }
    }
    if (run->fail) {
        /* a well-formed empty message */
        core_free(pl->ctx, lens);
        core_free(pl->ctx, disp);
        if (coll_net_isend(pl, &fs_empty, (int)sizeof fs_empty, MPI_BYTE,
                           m->peer, tag, CORE_NET_COUNTED, m->req)) {
            /* MPI is gone: nothing else can be done */
            run->rc = PASSION_EMPI;
            return;
        }
        m->nreq = 1;
        pl->st.messages++;
        pl->st.bytes_sent += (int64_t)sizeof fs_empty;
        return;
    }
    fs_hdr *h = (fs_hdr *)(void *)m->hdr;
    h->total = total;
    h->nseg = k;
    fs_desc *d = (fs_desc *)(void *)(m->hdr + sizeof(fs_hdr));
    for (int64_t i = 0; i < k; i++) {
        const fs_piece *p = &out[m->first + i];
        d[i].src = p->src;
        d[i].dst = p->dst;
        d[i].off = p->off;
        d[i].len = p->len;
    }
    /* the logical stream is the header buffer then the pieces; part p
       covers [lo, hi) of it */
    int64_t lo = 0, hi = parts == 1 ? total : 16;
    for (int64_t part = 0; part < parts; part++) {
        int n = 0;
        int64_t pos = 0;
        for (int64_t i = -1; i < k && pos < hi; i++) {
            const char *ptr = i < 0 ? m->hdr : out[m->first + i].ptr;
            int64_t len = i < 0 ? hb : out[m->first + i].len;
            int64_t a = pos > lo ? pos : lo,
                    b = pos + len < hi ? pos + len : hi;
            if (b > a) {
                MPI_Get_address(ptr + (a - pos), &disp[n]);
                lens[n++] = (int)(b - a);
            }
            pos += len;
        }
        MPI_Datatype t;
        if (MPI_Type_create_hindexed(n, lens, disp, MPI_BYTE, &t) !=
                MPI_SUCCESS ||
            MPI_Type_commit(&t) != MPI_SUCCESS ||
            coll_net_isend(pl, MPI_BOTTOM, 1, t, m->peer, tag,
                           CORE_NET_COUNTED, &m->req[part])) {
            run->rc = PASSION_EMPI;
            break;
        }
        MPI_Type_free(&t);
        m->nreq++;
        lo = hi;
        hi = hi + chunk < total ? hi + chunk : total;
    }
    core_free(pl->ctx, lens);
    core_free(pl->ctx, disp);
    pl->st.messages++;
    pl->st.bytes_sent += total;
}

static void fs_msg_done(fs_run *run, fs_msg *m)
{
    coll_stage_free(run->pl, m->hdr, m->hdr_bytes, 0);
    m->hdr = NULL;
    if (m->req != &m->one)
        core_free(run->pl->ctx, m->req);
    m->req = &m->one;
    m->nreq = 0;
}

/* Receive the next message from src into buf (n bytes), waiting with
   the yielding policy. */
static int fs_recv_bytes(fs_run *run, void *buf, int64_t n, int src, int tag)
{
    MPI_Request q;
    if (MPI_Irecv(buf, (int)n, MPI_BYTE, src, tag, run->pl->comm, &q) !=
        MPI_SUCCESS)
        return PASSION_EMPI;
    return coll_waitall(1, &q);
}

/* Drain the probed message (and its other parts) without a place for
   them: a failed node. Received whole (coll_drain), errors returned
   instead of raised for the time of it. */
static void fs_drain(fs_run *run, int64_t c0, int src, int tag)
{
    coll_xchg_plan *pl = run->pl;
    char scratch[64];
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(pl->comm, &eh);
    MPI_Comm_set_errhandler(pl->comm, MPI_ERRORS_RETURN);
    int64_t more = 0;
    if (c0 <= (int64_t)sizeof scratch) {
        MPI_Recv(scratch, (int)c0, MPI_BYTE, src, tag, pl->comm,
                 MPI_STATUS_IGNORE);
        fs_hdr h;
        memcpy(&h, scratch, sizeof h);
        if (c0 == 16 && h.total > 16)
            more = coll_nparts(h.total - 16);
    } else {
        coll_drain(pl->comm, src, tag);
    }
    for (int64_t i = 0; i < more; i++)
        coll_drain(pl->comm, src, tag);
    MPI_Comm_set_errhandler(pl->comm, eh);
    MPI_Errhandler_free(&eh);
}

/* Receive the probed message: its buffer joins run->next and its pieces
   are appended to *in (grown as needed). */
static void fs_take(fs_run *run, MPI_Status *st, int src, int tag,
                    fs_piece **in, int64_t *nin, int64_t *capin)
{
    coll_xchg_plan *pl = run->pl;
    MPI_Count c0 = 0;
    MPI_Get_elements_x(st, MPI_BYTE, &c0);
    if (run->fail) {
        fs_drain(run, c0, src, tag);
        return;
    }
    if (c0 < 16) {
        fs_failed(run, PASSION_EMPI, "malformed message");
        fs_drain(run, c0, src, tag);
        return;
    }
    char head[16];
    int64_t total = c0;
    char *buf = NULL;
    if (c0 == 16) {
        if (fs_recv_bytes(run, head, 16, src, tag)) {
            run->rc = PASSION_EMPI;
            return;
        }
        memcpy(&total, head, sizeof total);
        if (total < 16) {
            fs_failed(run, PASSION_EMPI, "malformed message");
            return;
        }
        if (total > 16) {
            /* the rest follows in chunks */
            int64_t parts = coll_nparts(total - 16);
            buf = coll_stage_alloc(pl, total, 0);
            if (!buf) {
                fs_failed(run, PASSION_ENOMEM, "receive buffer");
                MPI_Errhandler eh;
                MPI_Comm_get_errhandler(pl->comm, &eh);
                MPI_Comm_set_errhandler(pl->comm, MPI_ERRORS_RETURN);
                for (int64_t i = 0; i < parts; i++)
                    coll_drain(pl->comm, src, tag);
                MPI_Comm_set_errhandler(pl->comm, eh);
                MPI_Errhandler_free(&eh);
                return;
            }
            memcpy(buf, head, 16);
            int64_t chunk = coll_xchg_chunk(), pos = 16;
            for (int64_t i = 0; i < parts; i++) {
                int64_t n = total - pos < chunk ? total - pos : chunk;
                if (fs_recv_bytes(run, buf + pos, n, src, tag)) {
                    run->rc = PASSION_EMPI;
                    break;
                }
                pos += n;
            }
        } else {
            fs_hdr h;
            memcpy(&h, head, sizeof h);
            if (h.nseg != 0)
                fs_failed(run, PASSION_EMPI, "malformed message");
            return; /* an empty message */
        }
    } else {
        buf = coll_stage_alloc(pl, c0, 0);
        if (!buf) {
            fs_failed(run, PASSION_ENOMEM, "receive buffer");
            fs_drain(run, c0, src, tag);
            return;
        }
        if (fs_recv_bytes(run, buf, c0, src, tag))
            run->rc = PASSION_EMPI;
    }
    /* parse; the data bytes become payload */
    fs_hdr h;
    memcpy(&h, buf, sizeof h);
    int64_t hb = 16 + h.nseg * (int64_t)sizeof(fs_desc);
    int ok = h.total == total && h.nseg >= 0 &&
             h.nseg <= (total - 16) / (int64_t)sizeof(fs_desc);
    if (ok && *nin + h.nseg > *capin) {
        int64_t cap = (*capin ? 2 * *capin : 64);
        while (cap < *nin + h.nseg)
            cap *= 2;
        fs_piece *v = core_realloc(pl->ctx, *in, (size_t)cap * sizeof *v);
        if (!v) {
            coll_stage_free(pl, buf, total, 0);
            fs_failed(run, PASSION_ENOMEM, "piece list");
            return;
        }
        *in = v;
        *capin = cap;
    }
    int64_t pos = hb, n0 = *nin;
    const fs_desc *d = (const fs_desc *)(const void *)(buf + 16);
    for (int64_t i = 0; ok && i < h.nseg; i++) {
        fs_desc e = d[i];
        if (e.src < 0 || e.src >= pl->P || e.dst < 0 || e.dst >= pl->P ||
            e.off < 0 || e.len < 0 || e.len > total - pos) {
            ok = 0;
            break;
        }
        fs_piece *p = &(*in)[(*nin)++];
        p->src = e.src;
        p->dst = e.dst;
        p->off = e.off;
        p->len = e.len;
        p->ptr = buf + pos;
        p->key = 0;
        p->user = 0;
        pos += e.len;
    }
    if (!ok || pos != total) {
        *nin = n0;
        coll_stage_free(pl, buf, total, 0);
        fs_failed(run, PASSION_EMPI, "malformed message");
        return;
    }
    /* account the data bytes as payload */
    pl->payload_now += total - hb;
    if (pl->payload_now > pl->st.peak_payload)
        pl->st.peak_payload = pl->payload_now;
    bufs_push(run, &run->next, buf, total, total - hb);
}

/* Wait for one message from src (blocking) or any of srcs (arrival
   order, NB), and take it. Returns the index in srcs that was served. */
static int fs_recv_one(fs_run *run, const int *srcs, int nsrc,
                       const char *done, int tag, fs_piece **in,
                       int64_t *nin, int64_t *capin)
{
    coll_xchg_plan *pl = run->pl;
    double t0 = core_now();
    for (;;) {
        for (int i = 0; i < nsrc; i++) {
            if (done && done[i])
                continue;
            int flag = 0;
            MPI_Status st;
            /* a probe, then a receive from the same source and tag: the
               message received is the one probed (no overtaking, and
               nothing else receives on this tag meanwhile) */
            if (MPI_Iprobe(srcs[i], tag, pl->comm, &flag, &st) !=
                MPI_SUCCESS) {
                run->rc = PASSION_EMPI;
                return i;
            }
            if (flag) {
                fs_take(run, &st, srcs[i], tag, in, nin, capin);
                return i;
            }
        }
        coll_idle(t0);
    }
}

/* ------------------------------------------------------------ the stages */

static int cmp_piece(const void *a, const void *b)
{
    const fs_piece *p = a, *q = b;
    if (p->dst != q->dst)
        return p->dst < q->dst ? -1 : 1;
    if (p->src != q->src)
        return p->src < q->src ? -1 : 1;
    return (p->off > q->off) - (p->off < q->off);
}

static int stage_nkeys(const fs_run *run, int stage)
{
    const coll_grid *g = &run->g;
    switch (stage) {
    case 1:
    case 3: return g->C;
    case 2: return colsize(g, run->y);
    default: return g->P;
    }
}

static int peer_key(const fs_run *run, int stage, int peer)
{
    switch (stage) {
    case 1:
    case 3: return peer % run->g.C;
    case 2: return peer / run->g.C;
    default: return peer;
    }
}

static int emit(fs_piece *out, int64_t *n, const fs_piece *h, int64_t off,
                int64_t len, int key)
{
    if (len <= 0)
        return 0;
    fs_piece *p = &out[(*n)++];
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
static fs_piece *fs_distribute(fs_run *run, int stage, int64_t *nout)
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
    fs_piece *out = core_malloc(run->pl->ctx, (size_t)cap * sizeof *out);
    fs_piece *sorted = core_malloc(run->pl->ctx, (size_t)cap * sizeof *sorted);
    int64_t *cnt =
        core_calloc(run->pl->ctx, (size_t)(nk > C ? nk : C) + 1, sizeof *cnt);
    int64_t n = 0;
    if (!out || !sorted || !cnt) {
        core_free(run->pl->ctx, out);
        core_free(run->pl->ctx, sorted);
        core_free(run->pl->ctx, cnt);
        fs_failed(run, PASSION_ENOMEM, "piece lists");
        return NULL;
    }
    if (stage == 1) {
        /* counter scan of Fig. 11, by byte: element k of the message for
           d goes to column ((d % C + k) % P) % C; every P consecutive
           elements give each complete column R, each other R - 1 */
        for (int64_t i = 0; i < run->nheld; i++) {
            const fs_piece *h = &run->held[i];
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
            qsort(run->held, (size_t)run->nheld, sizeof *run->held,
                  cmp_piece);
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
                const fs_piece *h = &run->held[k];
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
            const fs_piece *h = &run->held[i];
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
static void key_range(const fs_piece *out, int64_t n, int k, int64_t *first,
                      int64_t *count)
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
static int fs_schedule(fs_run *run, int stage, coll_step *st)
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
static void fs_self(fs_run *run, int stage, const fs_piece *out, int64_t first,
                    int64_t count, fs_piece **in, int64_t *nin, int64_t *capin)
{
    coll_xchg_plan *pl = run->pl;
    if (run->fail || count == 0)
        return;
    if (stage == 4) {
        for (int64_t i = first; i < first + count; i++) {
            const fs_piece *p = &out[i];
            if (p->off + p->len > coll_rc(pl, p->src)) {
                fs_failed(run, PASSION_EMISMATCH, "data beyond recvcounts");
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
        fs_piece *v = core_realloc(run->pl->ctx, *in, (size_t)cap * sizeof *v);
        if (!v) {
            fs_failed(run, PASSION_ENOMEM, "piece list");
            return;
        }
        *in = v;
        *capin = cap;
    }
    char *buf = NULL;
    if (bytes > 0) {
        buf = coll_stage_alloc(pl, bytes, bytes);
        if (!buf) {
            fs_failed(run, PASSION_ENOMEM, "self buffer");
            return;
        }
        if (bufs_push(run, &run->next, buf, bytes, bytes))
            return;
    }
    int64_t pos = 0;
    for (int64_t i = first; i < first + count; i++) {
        fs_piece p = out[i];
        if (!p.user) {
            memcpy(buf + pos, p.ptr, (size_t)p.len);
            p.ptr = buf + pos;
            pos += p.len;
        }
        (*in)[(*nin)++] = p;
    }
}

/* place the pieces received in stage IV and drop their buffers */
static void fs_unpack(fs_run *run, fs_piece *in, int64_t n)
{
    coll_xchg_plan *pl = run->pl;
    for (int64_t i = 0; i < n && !run->fail; i++) {
        const fs_piece *p = &in[i];
        if (p->dst != pl->me || p->off + p->len > coll_rc(pl, p->src)) {
            fs_failed(run, PASSION_EMISMATCH,
                      "a piece does not fit its receive count");
            break;
        }
        memcpy(pl->rbuf + coll_rd(pl, p->src) + p->off, p->ptr,
               (size_t)p->len);
    }
    bufs_free(run, &run->next);
}

static void fs_wait_msgs(fs_run *run, fs_msg *m, int n)
{
    for (int i = 0; i < n; i++) {
        if (m[i].nreq && coll_waitall(m[i].nreq, m[i].req))
            run->rc = PASSION_EMPI;
        fs_msg_done(run, &m[i]);
    }
}

static void fs_stage(fs_run *run, int stage)
{
    coll_xchg_plan *pl = run->pl;
    const coll_grid *g = &run->g;
    int me = pl->me, tag = COLL_TAG + 4 + stage;
    if (stage == 2 && colsize(g, run->y) <= 1)
        return; /* a column of one: nothing moves */
    coll_step *st = run->st;
    /* the array the previous stage's pending sends do not use */
    fs_msg *msg = run->pend == run->msgs[0] ? run->msgs[1] : run->msgs[0];
    int *srcs = run->srcs;
    char *done = run->done;
    fs_piece *in = NULL;
    int64_t nin = 0, capin = 0, nout = 0;
    int T = fs_schedule(run, stage, st);
    fs_piece *out = fs_distribute(run, stage, &nout);
    int nmsg = 0, nsrc = 0;
    for (int t = 0; t < T; t++) {
        if (st[t].to >= 0 && st[t].to != me) {
            fs_msg *m = &msg[nmsg++];
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
                fs_post(run, &msg[im], out, tag);
            if (recvs) {
                fs_recv_one(run, &srcs[is], 1, NULL, tag, &in, &nin, &capin);
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
            fs_post(run, &msg[i], out, tag);
        if (run->pend) {
            fs_wait_msgs(run, run->pend, run->npend);
            run->pend = NULL;
            run->npend = 0;
        }
        bufs_free(run, &run->old);
        for (int k = 0; k < nsrc; k++) {
            int i = fs_recv_one(run, srcs, nsrc, done, tag, &in, &nin,
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
        bufs_free(run, &run->cur);
    } else {
        /* the sends just posted read run->cur: keep it until they end */
        fs_bufs t = run->old;
        run->old = run->cur;
        run->cur = t;
        run->pend = msg;
        run->npend = nmsg;
    }
    fs_bufs t = run->cur;
    run->cur = run->next;
    run->next = t;
}

/* the tables of one stage, carved from pl->scratch */
static int64_t fs_tables(const coll_grid *g, fs_run *run, char *base)
{
    int cap = 2 * (g->C > g->R ? g->C : g->R) + 2;
    int64_t pos = 0;
#define FS_TAKE(ptr, type, n)                                               \
    do {                                                                    \
        pos = (pos + 15) & ~(int64_t)15;                                    \
        if (run)                                                            \
            (ptr) = (type *)(void *)(base + pos);                           \
        pos += (int64_t)(n) * (int64_t)sizeof(type);                        \
    } while (0)
    coll_step *st = NULL;
    fs_msg *m0 = NULL, *m1 = NULL;
    int *srcs = NULL, *work = NULL;
    char *done = NULL;
    FS_TAKE(st, coll_step, cap);
    FS_TAKE(m0, fs_msg, cap);
    FS_TAKE(m1, fs_msg, cap);
    FS_TAKE(srcs, int, cap);
    FS_TAKE(done, char, cap);
    FS_TAKE(work, int, 2 * g->C);
#undef FS_TAKE
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

/*
 * Staging bound: Theorem 1's two generations of 2 C^2 Lmax / P data
 * bytes, plus a byte per piece where sizes do not divide evenly, plus the
 * descriptors: a message carries a 16-byte header and 24 bytes per piece,
 * a node holds at most 2 P C + 4 C pieces of a generation, and the
 * headers of the messages it sends in a stage (all of them at once in the
 * non-blocking variant).
 */
static int64_t fs_staging(const coll_xchg_shape *s, int radix)
{
    (void)radix;
    int64_t P = s->procs;
    if (P <= 1)
        return 0;
    int64_t C = (int64_t)ceil(sqrt((double)P));
    int64_t per = (s->lmax + P - 1) / P;
    int64_t pieces = 2 * P * C + 4 * C;
    int64_t desc = 3 * (32 * C + 24 * pieces);
    return 2 * C * C * per + 2 * pieces + desc;
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
    fs_run run;
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
        fs_failed(&run, PASSION_ENOMEM, "piece list");
    for (int d = 0; d < P && run.held; d++) {
        if (coll_sc(pl, d) <= 0)
            continue;
        fs_piece *h = &run.held[run.nheld++];
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
    bufs_free(&run, &run.old);
    bufs_free(&run, &run.cur);
    bufs_free(&run, &run.next);
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
    .name = "fourstage",
    .id = PASSION_XCHG_FOURSTAGE,
    .regular_only = 0,
    .agree_after = 1,
    .model = fs_model,
    .staging = fs_staging,
    .scratch = fs_scratch,
    .net = fs_net,
    .run = fs_run_blocking,
};

const coll_xchg_ops coll_xchg_fourstage_nb = {
    .name = "fourstage-nb",
    .id = PASSION_XCHG_FOURSTAGE_NB,
    .regular_only = 0,
    .agree_after = 1,
    .model = fs_model_nb,
    .staging = fs_staging,
    .scratch = fs_scratch,
    .net = fs_net,
    .run = fs_run_nb,
};
