/*
 * exchange.c - the dispatcher of the exchange subsystem and the public
 * passion_alltoall / passion_alltoallv. It names no algorithm: what it
 * needs of one (model, staging, tables, a first step that rides on the
 * agreement) comes from the ops table.
 *
 * One call goes, one function each:
 *   1. call_begin: the algorithm (argument, or the context's option) and
 *      radix, the context's state and communicator, the budget, local
 *      checks and sizes;
 *   2. call_guess: what will probably run (a fixed algorithm, or `auto`
 *      with known costs) and in how many steps, so that its staging,
 *      tables and request pool are allocated now (prepare);
 *   3. call_agree: one round of headers (an allreduce above COLL_A2A_MAX
 *      ranks): any local failure, algorithm, radix, sizes, budget, the
 *      guess, and a checksum that is zero exactly when sendcounts[j] on
 *      rank i equals recvcounts[i] on rank j for every pair (with high
 *      probability); the guessed algorithm's first step travels with it
 *      when the table says it can, a short message inside its header's
 *      message (one message per pair, as MPI's own call sends);
 *   4. call_shape: disagreements become codes; the agreed shape and
 *      budget (the smallest of the ranks');
 *   5. call_costs: the calibration, when a choice needs it (first call);
 *   6. call_choose: what runs (auto: the cheapest that fits the budget)
 *      and in how many steps (a fixed algorithm: the fewest that fit);
 *   7. call_run: the step that rode on the agreement is completed, or the
 *      plan is prepared again when the guess was wrong, and the steps
 *      run; an algorithm that allocates while running has its outcome
 *      agreed, and a run refused by the budget on every failing rank runs
 *      again in twice the steps;
 *   8. call_end: counters.
 * Invariant: every exit after step 3 is taken by all ranks alike.
 */
#include "exchange.h"

#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- checks */

typedef struct xchg_local {
    int64_t lout, lin, lout_x, lin_x, mmax, total_x;
    int64_t block; /* every count equal to it, else -1 */
    uint64_t check;
} xchg_local;

static uint64_t pair_hash(int i, int j)
{
    uint64_t z = ((uint64_t)(uint32_t)i << 32 | (uint32_t)j) +
                 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return (z ^ (z >> 31)) | 1;
}

static int local_scan(coll_xchg_plan *pl, xchg_local *L)
{
    passion_ctx *ctx = pl->ctx;
    int P = pl->P, me = pl->me;
    memset(L, 0, sizeof *L);
    if (pl->block < 0 && (!pl->sc || !pl->sd || !pl->rc || !pl->rd))
        return core_err(ctx, PASSION_EINVAL, "exchange: NULL count array");
    if (pl->block >= 0) {
        int64_t t;
        if (!core_mul(pl->block, P, &t))
            return core_err(ctx, PASSION_EOVERFLOW,
                            "exchange: %lld bytes x %d ranks overflows",
                            (long long)pl->block, P);
    }
    L->block = coll_sc(pl, 0);
    for (int j = 0; j < P; j++) {
        int64_t s = coll_sc(pl, j), r = coll_rc(pl, j);
        int64_t sd = coll_sd(pl, j), rd = coll_rd(pl, j), e;
        if (s < 0 || r < 0 || sd < 0 || rd < 0)
            return core_err(ctx, PASSION_EINVAL,
                            "exchange: negative count or displacement "
                            "for rank %d",
                            j);
        if (!core_add(s, sd, &e) || !core_add(r, rd, &e) ||
            !core_add(L->lout, s, &L->lout) || !core_add(L->lin, r, &L->lin))
            return core_err(ctx, PASSION_EOVERFLOW,
                            "exchange: byte counts overflow");
        if (s != L->block || r != L->block)
            L->block = -1;
        if (j != me) {
            L->lout_x += s;
            L->lin_x += r;
            if (s > L->mmax)
                L->mmax = s;
            if (r > L->mmax)
                L->mmax = r;
        }
        L->check += pair_hash(me, j) * (uint64_t)s;
        L->check -= pair_hash(j, me) * (uint64_t)r;
    }
    L->total_x = L->lout_x;
    if (L->lout > 0 && !pl->sbuf)
        return core_err(ctx, PASSION_EINVAL, "exchange: NULL send buffer");
    if (L->lin > 0 && !pl->rbuf)
        return core_err(ctx, PASSION_EINVAL, "exchange: NULL receive buffer");
    if (pl->sbuf == MPI_IN_PLACE)
        return core_err(ctx, PASSION_ENOTSUP, "exchange: MPI_IN_PLACE");
    return PASSION_OK;
}

/* the header: sums first, then maxima (a minimum travels negated; a
   value travels with its negation where all ranks must agree on it) */
enum {
    V_CHECK, V_TOTAL, V_NSUM,
    V_FAIL = V_NSUM, V_ALG, V_NALG, V_RADIX, V_NRADIX, V_MODE, V_NMODE,
    V_READY, V_NREADY, V_BLOCK, V_NBLOCK, V_LMAX, V_LMAX_X, V_MMAX,
    V_NBUDGET, V_GUESS, V_NGUESS, V_GRADIX, V_NGRADIX, V_GSTEPS, V_NGSTEPS,
    V_GRES, V_NGRES, V_N
};

/* fold header b into a: sums, then maxima */
static void fold(int64_t *a, const int64_t *b, int n, int nsum)
{
    for (int i = 0; i < n; i++)
        a[i] = i < nsum ? (int64_t)((uint64_t)a[i] + (uint64_t)b[i])
                        : (a[i] > b[i] ? a[i] : b[i]);
}

/*
 * The entry agreement when every rank sends its header to every rank, and
 * A1's data that may travel with it. Each header is a slot of
 * HDR_B + fuse bytes: the V_N values, then H_SENT (bytes the sender sent
 * to this rank with the round, -1: none) and H_FUSED (1: those bytes
 * follow the values in the same message). A message of at most `fuse`
 * bytes travels inside its header's message, so that a small exchange
 * costs one message per pair, as MPI's own call does; a longer one
 * follows in a message of its own. Every receive is posted with the
 * slot's whole capacity, so no header is ever truncated. The round's
 * memory is kept in the context's exchange state between calls (no
 * allocation, no page touched for the first time, per call).
 */
#define H_SENT V_N
#define H_FUSED (V_N + 1)
#define HDR_W (V_N + 2)
#define HDR_B ((int64_t)HDR_W * (int64_t)sizeof(int64_t))
/* at most FUSE_ALL bytes of data ride in one rank's headers (its receive
   slots hold as much), and no message longer than FUSE_MAX */
#define FUSE_MAX 4096
#define FUSE_ALL (32 * 1024)

/*
 * The compact header: a regular exchange of at most COMPACT_MAX bytes a
 * pair whose data rides inside its headers, with nothing prepared (no
 * staging reserved, one step), sends C_W words instead of HDR_W, because
 * every other value of its header follows from them and P: the sender's
 * checksum, one word of small values (block, algorithm, radix, guess,
 * mode, ready), the negated budget. Its data follows at word C_W. A
 * sender uses it only when the full header it stands for is exactly the
 * one it would have sent (hdr_compact checks by expanding it), so the
 * fold, and every code, is the same as with full headers, and ranks may
 * mix the two forms. Word 1 tells them apart: a full header's V_TOTAL is
 * a byte count (>= 0), the compact word has its top bit set. With 8 to
 * 64 bytes a pair, header and data then fit in the short messages that
 * MPI's shared-memory transport sends at its lowest latency (UCX's mm
 * transport here: up to 92 bytes; 216 bytes of full header did not).
 * COMPACT_MAX is the longest message that rides inside its header, so
 * every such exchange saves the 192 bytes (and, every header compact
 * and equal, the fold: round_start).
 */
#define C_W 3
#define C_B ((int64_t)C_W * (int64_t)sizeof(int64_t))
#define COMPACT_MAX FUSE_MAX

/* the full header (HDR_W words) that compact header c stands for on P
   ranks */
static void compact_unpack(const int64_t *c, int P, int64_t *h)
{
    uint64_t w = (uint64_t)c[1];
    int64_t b = (int64_t)(w & 0xffff), chk = c[0], nbudget = c[2];
    int64_t alg = (int64_t)(w >> 16 & 0xff), radix = (int64_t)(w >> 24 & 0xff);
    int64_t guess = (int64_t)(w >> 32 & 0xff);
    int64_t gradix = (int64_t)(w >> 40 & 0xff);
    int64_t mode = (int64_t)(w >> 48 & 1), ready = (int64_t)(w >> 49 & 1);
    memset(h, 0, HDR_B);
    h[V_CHECK] = chk;
    h[V_TOTAL] = b * (P - 1);
    h[V_ALG] = alg;
    h[V_NALG] = -alg;
    h[V_RADIX] = radix;
    h[V_NRADIX] = -radix;
    h[V_MODE] = mode;
    h[V_NMODE] = -mode;
    h[V_READY] = ready;
    h[V_NREADY] = -ready;
    h[V_BLOCK] = b;
    h[V_NBLOCK] = -b;
    h[V_LMAX] = b * P;
    h[V_LMAX_X] = b * (P - 1);
    h[V_MMAX] = P > 1 ? b : 0;
    h[V_NBUDGET] = nbudget;
    h[V_GUESS] = guess;
    h[V_NGUESS] = -guess;
    h[V_GRADIX] = gradix;
    h[V_NGRADIX] = -gradix;
    h[H_SENT] = b;
    h[H_FUSED] = 1;
}

/* a header received in h (room for HDR_W words and its data) in the full
   form on P ranks: a compact one (word 1 negative) unpacked, its data
   moved to word HDR_W; a full one is left as it is */
static void hdr_expand(int64_t *h, int P)
{
    if (h[1] >= 0)
        return;
    int64_t c[C_W];
    memcpy(c, h, C_B);
    int64_t b = (int64_t)((uint64_t)c[1] & 0xffff);
    if (b > 0)
        memmove(h + HDR_W, h + C_W, (size_t)b);
    compact_unpack(c, P, h);
}

/* the compact form of header v (whose data, b bytes a peer, rides in its
   messages) in c: 1 when it stands for exactly v on P ranks, else 0 */
static int hdr_compact(const int64_t *v, int P, int64_t b, int64_t *c)
{
    int64_t f[5] = {v[V_ALG], v[V_RADIX], v[V_GUESS], v[V_GRADIX], b};
    for (int k = 0; k < 5; k++)
        if (f[k] < 0 || f[k] > (k < 4 ? 0xff : COMPACT_MAX))
            return 0;
    if (v[V_MODE] < 0 || v[V_MODE] > 1 || v[V_READY] < 0 || v[V_READY] > 1)
        return 0;
    c[0] = v[V_CHECK];
    c[1] = (int64_t)((uint64_t)1 << 63 | (uint64_t)b |
                     (uint64_t)f[0] << 16 | (uint64_t)f[1] << 24 |
                     (uint64_t)f[2] << 32 | (uint64_t)f[3] << 40 |
                     (uint64_t)v[V_MODE] << 48 | (uint64_t)v[V_READY] << 49);
    c[2] = v[V_NBUDGET];
    int64_t t[HDR_W];
    compact_unpack(c, P, t);
    return memcmp(t, v, V_N * sizeof *v) == 0;
}

typedef struct xchg_round {
    int64_t fuse;   /* largest message inside its header's message */
    int64_t slot;   /* bytes of a slot: HDR_B + fuse */
    char *in, *out; /* P slots each: received and sent headers */
    int *rfirst, *rn; /* P each: receive requests of data with the round */
    int posted;     /* data receives posted into the receive buffer */
    int spec;       /* this rank's data went with its headers */
    int sfirst, sn; /* send requests */
    int nreq;       /* requests in use */
    int moved;      /* data went or came inside a header */
} xchg_round;

/* the message length that rides inside a header on P ranks: identical on
   every rank (P and the chunk limit are) */
static int64_t round_fuse(int P)
{
    int64_t f = P > 1 ? FUSE_ALL / (P - 1) : FUSE_MAX;
    f = f > FUSE_MAX ? FUSE_MAX : f;
    int64_t ch = coll_xchg_chunk();
    if (HDR_B + f > ch)
        f = ch > HDR_B ? ch - HDR_B : 0;
    return f & ~(int64_t)7; /* slots stay 8-byte aligned */
}

static int64_t round_bytes(int P, int64_t fuse)
{
    return (int64_t)sizeof(xchg_round) + 2 * (int64_t)P * (HDR_B + fuse) +
           2 * (int64_t)P * (int64_t)sizeof(int) + 16;
}

static int64_t *hin(const xchg_round *x, int i);

/* the round laid out in mem (round_bytes of it) */
static xchg_round *round_layout(void *mem, int P, int64_t fuse)
{
    xchg_round *x = mem;
    x->fuse = fuse;
    x->slot = HDR_B + fuse;
    x->in = (char *)(x + 1);
    x->out = x->in + (int64_t)P * x->slot;
    x->rfirst = (int *)(void *)(x->out + (int64_t)P * x->slot);
    x->rn = x->rfirst + P;
    x->posted = x->spec = 0;
    x->sfirst = x->sn = x->nreq = x->moved = 0;
    /* what round_finish reads of a round that stopped early */
    for (int i = 0; i < P; i++) {
        x->rn[i] = 0;
        hin(x, i)[H_SENT] = -1;
    }
    return x;
}

static int64_t *hin(const xchg_round *x, int i)
{
    return (int64_t *)(void *)(x->in + (int64_t)i * x->slot);
}

static int64_t *hout(const xchg_round *x, int j)
{
    return (int64_t *)(void *)(x->out + (int64_t)j * x->slot);
}

/* peer i's data came inside its header */
static int fused_in(const xchg_round *x, int i)
{
    return hin(x, i)[H_FUSED] == 1 && hin(x, i)[H_SENT] >= 0;
}

/* the context's counters of a data message of `bytes` that went inside
   a header's message to rank peer (within or between nodes, as
   core_net_charge counts a message of its own) */
static void count_inside(passion_ctx *ctx, int peer, int64_t bytes)
{
    if (core_node_of(ctx, peer) != ctx->node_id) {
        ctx->cnt.messages_inter_node++;
        ctx->cnt.bytes_inter_node += (uint64_t)bytes;
    } else {
        ctx->cnt.messages_intra_node++;
        ctx->cnt.bytes_intra_node += (uint64_t)bytes;
    }
}

#define TAG_HDR (COLL_TAG + 12)
#define TAG_HDR_DATA (COLL_TAG + 13) /* a first step riding on the headers */

/* headers to everyone (and the first step of `spec`'s algorithm when
   spec is not NULL: short messages inside the headers' messages, longer
   ones after them); returns the fold of all headers in out. A long
   message is received only once its sender's header has said how long it
   is, so that nothing is ever truncated. */
static int round_start(coll_xchg_plan *pl, xchg_round *x, const int64_t *v,
                       int nsum, const coll_xchg_ops *spec, int64_t *out)
{
    int P = pl->P, me = pl->me, n = 0, rc = PASSION_OK;
    CORE_CHAOS(XCHG_ROUND);
    MPI_Request hq[2 * COLL_A2A_MAX];
    for (int i = 0; i < P && !rc; i++)
        if (i != me &&
            MPI_Irecv(hin(x, i), (int)x->slot, MPI_BYTE, i, TAG_HDR,
                      pl->comm, &hq[n++]) != MPI_SUCCESS)
            rc = PASSION_EMPI;
    /* the compact header when the data of a regular exchange rides
       whole in the headers' messages */
    int64_t cw[C_W];
    int compact = x->spec && pl->block >= 0 && pl->block <= x->fuse &&
                  hdr_compact(v, P, pl->block, cw);
    for (int j = 0; j < P && !rc; j++) {
        if (j == me)
            continue;
        int64_t *h = hout(x, j), b = coll_sc(pl, j), len = HDR_B;
        int64_t *data = h + HDR_W;
        if (compact) {
            memcpy(h, cw, C_B);
            data = h + C_W;
            len = C_B;
        } else {
            memcpy(h, v, V_N * sizeof *v);
            h[H_SENT] = x->spec ? b : -1;
            h[H_FUSED] = x->spec && b <= x->fuse;
        }
        if ((compact || h[H_FUSED]) && b > 0) {
            memcpy(data, pl->sbuf + coll_sd(pl, j), (size_t)b);
            len += b;
            x->moved = 1;
            pl->st.messages++;
            pl->st.bytes_sent += b;
            count_inside(pl->ctx, j, b);
        }
        /* one message, charged once (the simulated network's wait); a
           header message, as the counters see it */
        core_net_charge(pl->ctx, j, len, 0);
        if (MPI_Isend(h, (int)len, MPI_BYTE, j, TAG_HDR, pl->comm,
                      &hq[n++]) != MPI_SUCCESS)
            rc = PASSION_EMPI;
    }
    /* the longer messages: sends first in the pool, [0, sn) */
    int k = 0;
    if (!rc && x->spec) {
        pl->fused_max = x->fuse;
        rc = spec->hdr_sends(pl, TAG_HDR_DATA, &k);
        pl->fused_max = -1;
    }
    x->sfirst = 0;
    x->sn = k;
    if (!rc)
        rc = coll_waitall(n, hq);
    if (rc)
        return rc;
    /* every header compact and equal to this rank's but for the
       checksum: the fold is v with the checksums and totals summed, and
       the data is taken where it came (no header unpacked) */
    int same = compact;
    for (int i = 0; i < P && same; i++)
        same = i == me || (hin(x, i)[1] == cw[1] && hin(x, i)[2] == cw[2]);
    if (same) {
        uint64_t chk = (uint64_t)v[V_CHECK];
        int64_t b = pl->block;
        for (int i = 0; i < P; i++) {
            x->rfirst[i] = k;
            x->rn[i] = 0;
            if (i == me)
                continue;
            int64_t *h = hin(x, i);
            chk += (uint64_t)h[0];
            if (b > 0)
                memcpy(pl->rbuf + coll_rd(pl, i), h + C_W, (size_t)b);
            h[H_SENT] = b;
            h[H_FUSED] = 1;
        }
        x->moved |= b > 0;
        hin(x, me)[H_SENT] = -1;
        hin(x, me)[H_FUSED] = 0;
        x->nreq = k;
        memcpy(out, v, V_N * sizeof *v);
        out[V_CHECK] = (int64_t)chk;
        out[V_TOTAL] = (int64_t)((uint64_t)v[V_TOTAL] * (uint64_t)P);
        return PASSION_OK;
    }
    for (int i = 0; i < P; i++)
        if (i != me)
            hdr_expand(hin(x, i), P);
    memcpy(hin(x, me), v, V_N * sizeof *v);
    hin(x, me)[H_SENT] = -1;
    hin(x, me)[H_FUSED] = 0;
    /* data that came with the headers and fits where it is expected */
    for (int i = 0; i < P && !rc; i++) {
        x->rfirst[i] = k;
        x->rn[i] = 0;
        int64_t sb = hin(x, i)[H_SENT];
        if (i == me || !x->posted || sb < 0 || sb != coll_rc(pl, i))
            continue;
        if (fused_in(x, i)) {
            x->moved |= sb > 0;
            if (sb > 0)
                memcpy(pl->rbuf + coll_rd(pl, i), hin(x, i) + HDR_W,
                       (size_t)sb);
            continue;
        }
        x->rn[i] = (int)coll_nparts(sb);
        rc = coll_irecv(pl, pl->rbuf + coll_rd(pl, i), sb, i, TAG_HDR_DATA,
                        pl->req + k);
        k += x->rn[i];
    }
    x->nreq = k;
    memcpy(out, v, V_N * sizeof *v);
    for (int i = 0; i < P; i++)
        if (i != me)
            fold(out, hin(x, i), V_N, nsum);
    return rc;
}

/*
 * End the round's data traffic. complete (not NULL): the algorithm whose
 * step rides on the headers is what runs, so finish it (data not yet
 * sent with the headers goes now). Otherwise take what arrived and drain
 * what has no place (inconsistent arguments), so that no message is left
 * behind (data inside a header needs nothing).
 */
static int round_finish(coll_xchg_plan *pl, xchg_round *x,
                        const coll_xchg_ops *complete)
{
    int P = pl->P, me = pl->me, rc = PASSION_OK, k = x->nreq;
    CORE_CHAOS(XCHG_ROUND);
    if (complete) {
        for (int i = 0; i < P && !rc; i++) {
            if (i == me || hin(x, i)[H_SENT] >= 0)
                continue;
            int64_t b = coll_rc(pl, i);
            rc = coll_irecv(pl, pl->rbuf + coll_rd(pl, i), b, i, TAG_HDR_DATA,
                            pl->req + k);
            k += (int)coll_nparts(b);
        }
        if (!rc && !x->spec)
            rc = complete->hdr_sends(pl, TAG_HDR_DATA, &k);
        coll_copy_self(pl);
        if (!rc)
            rc = coll_waitall(k, pl->req);
        if (k > 0 || x->moved)
            pl->st.rounds++;
        pl->st.alg = complete->id;
        return rc ? core_err(pl->ctx, rc, "%s: exchange failed",
                             complete->name)
                  : rc;
    }
    for (int i = 0; i < P; i++) {
        int64_t sb = hin(x, i)[H_SENT];
        if (i == me || sb <= 0 || x->rn[i] > 0 || fused_in(x, i))
            continue;
        for (int64_t q = 0; q < coll_nparts(sb); q++)
            coll_drain(pl->comm, i, TAG_HDR_DATA);
    }
    return coll_waitall(k, pl->req);
}

/* Agree on the outcome of a step (prepare): on failure every rank
   returns the same code and detail (passion/agree.c). */
static int agree_flag(coll_xchg_plan *pl, int rc)
{
    return core_agree(pl->ctx, rc);
}

/*
 * The agreement by nodes: the headers fold within each node
 * (node_comm), the node leaders exchange their nodes' folds (one message
 * to every other leader, each charged by the simulated network like any
 * message between nodes), and every leader gives the result to its node:
 * nnodes - 1 messages between nodes per leader instead of the flat
 * round's P - node_size per rank. Sums and maxima fold alike in any
 * order, so every rank ends with the same header as the flat round's.
 * Taken only where every rank takes it without asking (call_agree).
 */
#define TAG_HDR_NODES (COLL_TAG + 14)
static int agree_nodes(coll_xchg_plan *pl, int64_t *v, int n, int nsum)
{
    passion_ctx *ctx = pl->ctx;
    int rc = coll_allreduce(ctx->node_comm, v, n, nsum);
    if (!rc && ctx->leader_comm != MPI_COMM_NULL) {
        const int N = ctx->nnodes, me = ctx->node_id;
        int64_t mine[V_N], in[COLL_A2A_MAX][V_N];
        MPI_Request q[2 * COLL_A2A_MAX];
        int k = 0;
        memcpy(mine, v, (size_t)n * sizeof *v);
        for (int j = 0; j < N && !rc; j++)
            if (j != me && MPI_Irecv(in[j], n, MPI_INT64_T, j, TAG_HDR_NODES,
                                     ctx->leader_comm, &q[k++]) !=
                               MPI_SUCCESS)
                rc = PASSION_EMPI;
        for (int j = 0, r = 0; j < N && !rc; j++) {
            /* leader of node j: its lowest rank (ranks of ctx->comm) */
            while (r < ctx->size && core_node_of(ctx, r) != j)
                r++;
            if (j == me)
                continue;
            core_net_charge(ctx, r, (int64_t)n * 8, 0);
            if (MPI_Isend(mine, n, MPI_INT64_T, j, TAG_HDR_NODES,
                          ctx->leader_comm, &q[k++]) != MPI_SUCCESS)
                rc = PASSION_EMPI;
        }
        int wrc = coll_waitall(k, q);
        rc = rc ? rc : wrc;
        for (int j = 0; j < N && !rc; j++)
            if (j != me)
                fold(v, in[j], n, nsum);
    }
    if (!rc && MPI_Bcast(v, n, MPI_INT64_T, 0, ctx->node_comm) !=
                   MPI_SUCCESS)
        rc = PASSION_EMPI;
    return rc;
}

/*
 * The round of headers for a rank that could not have its round: it
 * still sends its header to every rank and receives theirs, one at a
 * time into one slot on the stack, with no data, drains whatever data its
 * peers sent after their headers, and reports the failure in the header
 * it sent (v[V_FAIL]): every rank then takes the agreement's failure
 * path. noinline: the slot's stack is taken only when this runs.
 */
__attribute__((noinline)) static int round_without_memory(coll_xchg_plan *pl,
                                                          const int64_t *v,
                                                          int nsum,
                                                          int64_t *out)
{
    int P = pl->P, me = pl->me, rc = PASSION_OK, n = 0;
    int64_t fuse = round_fuse(P);
    int64_t h[HDR_W + FUSE_MAX / 8], mine[HDR_W];
    MPI_Request q[COLL_A2A_MAX];
    memcpy(mine, v, V_N * sizeof *v);
    mine[H_SENT] = -1;
    mine[H_FUSED] = 0;
    for (int j = 0; j < P && !rc; j++) {
        if (j == me)
            continue;
        core_net_charge(pl->ctx, j, HDR_B, 0);
        if (MPI_Isend(mine, (int)HDR_B, MPI_BYTE, j, TAG_HDR, pl->comm,
                      &q[n++]) != MPI_SUCCESS)
            rc = PASSION_EMPI;
    }
    memcpy(out, v, V_N * sizeof *v);
    for (int i = 0; i < P && !rc; i++) {
        if (i == me)
            continue;
        MPI_Request r;
        if (MPI_Irecv(h, (int)(HDR_B + fuse), MPI_BYTE, i, TAG_HDR, pl->comm,
                      &r) != MPI_SUCCESS ||
            coll_waitall(1, &r)) {
            rc = PASSION_EMPI;
            break;
        }
        hdr_expand(h, P);
        fold(out, h, V_N, nsum);
        if (h[H_SENT] > 0 && h[H_FUSED] != 1)
            for (int64_t p = 0; p < coll_nparts(h[H_SENT]); p++)
                coll_drain(pl->comm, i, TAG_HDR_DATA);
    }
    int wrc = coll_waitall(n, q);
    return rc ? rc : wrc;
}

/* ------------------------------------------------------------- one call */

#define XCHG_REQ_SMALL 64
typedef struct xchg_call {
    passion_ctx *ctx;
    const coll_xchg_args *a;
    coll_xchg_choice *predict; /* not NULL: say what would run, no run */
    coll_xchg_state *state;
    coll_xchg_auto au;       /* auto's planner (au.rec: this call's
                                record, NULL none) */
    coll_xchg_plan pl;
    xchg_local L;
    xchg_round *x;           /* the round of headers (P <= COLL_A2A_MAX) */
    int alg, radix;          /* asked (the option resolved) */
    int from_option;         /* alg is the context's option */
    coll_xchg_costs costs;
    int ready;               /* costs known without communication */
    int64_t budget;          /* this rank's budget for the call */
    int guess, guess_radix;  /* prepared for (-1: nothing) */
    int64_t guess_steps;
    int64_t v[V_N];          /* the agreed header */
    coll_xchg_shape shape;   /* agreed */
    int64_t abudget;         /* agreed: the smallest budget */
    int run, run_radix;      /* what runs */
    int64_t steps;           /* in how many steps */
    int64_t *step_arr;       /* 4 P words of one step's counts */
    int retries;             /* runs refused by the budget so far */
    int nodes_moved;         /* the guessed run rode on the agreement by
                                nodes on every rank (coll_nodes_agree) */
    int late;                /* this rank's failure after its status left
                                in the agreement by nodes: agreed after
                                the run (call_run) */
    /* the request pool when it is this small (a small exchange on few
       ranks): no pool block taken and given back per call */
    MPI_Request req_small[XCHG_REQ_SMALL];
} xchg_call;

/* auto decides: asked, or the option names an algorithm that needs equal
   blocks and the exchange is irregular */
static int wants_auto(const xchg_call *c, int regular)
{
    if (c->alg == PASSION_XCHG_AUTO)
        return 1;
    const coll_xchg_ops *ops = coll_xchg_ops_get(c->alg);
    return c->from_option && ops->regular_only && !regular;
}

/* The fewest steps (1, 2, 4, ..., lmax) in which alg's staging for s fits
   in budget; 0 when no number does. *least (not NULL): the smallest
   staging over those step counts, the smallest budget that runs. The
   smallest need not be in the most steps: a step's slices round up (up to
   P bytes more per rank), so one step can need less than 1-byte slices
   when lmax is of the order of P. */
static int64_t steps_for(int alg, int radix, const coll_xchg_shape *s,
                         int64_t budget, int64_t *least)
{
    int64_t kmax = s->lmax > 1 ? s->lmax : 1, found = 0;
    for (int64_t k = 1;; k = k > kmax / 2 ? kmax : 2 * k) {
        coll_xchg_shape t = coll_shape_step(s, k);
        int64_t need = coll_xchg_staging(alg, radix, &t);
        if (least && (k == 1 || need < *least))
            *least = need;
        if (need <= budget && !found) {
            found = k;
            if (!least)
                return k;
        }
        if (k >= kmax)
            return found;
    }
}

/* The smallest budget the run fits in (steps_for). */
static int64_t least_budget(const xchg_call *c)
{
    int64_t least = 0;
    steps_for(c->run, c->run_radix, &c->shape, -1, &least);
    return least;
}

/* ENOMEM for a budget below the smallest the run fits in: the detail
   states that smallest budget and, when the budget was what the call
   found left of memory_budget, the memory_budget that gives it. */
static int budget_enomem(xchg_call *c)
{
    int64_t least = least_budget(c);
    const char *name = coll_xchg_name(c->run);
    if (c->a->budget > 0)
        return core_err(c->ctx, PASSION_ENOMEM,
                        "exchange %s needs a budget of at least %lld bytes "
                        "of staging, %lld left of the memory budget",
                        name, (long long)least, (long long)c->abudget);
    /* every rank passed what it had left: memory_budget less the most
       that any rank held */
    int64_t held = c->ctx->opt.memory_budget - c->abudget;
    return core_err(c->ctx, PASSION_ENOMEM,
                    "exchange %s needs a budget of at least %lld bytes of "
                    "staging, %lld left of the memory budget "
                    "(memory_budget=%lld would do)",
                    name, (long long)least, (long long)c->abudget,
                    (long long)(least + held));
}

/* The request pool, the algorithm's tables, its staging when the
   dispatcher allocates it, and the arrays of a step. */
static int prepare(xchg_call *c, int alg, int radix, int64_t steps,
                   const coll_xchg_shape *s)
{
    coll_xchg_plan *pl = &c->pl;
    const xchg_local *L = &c->L;
    if (!pl->req) {
        int64_t big = L->lout > L->lin ? L->lout : L->lin;
        int64_t n = 2 * (int64_t)pl->P * (coll_nparts(big) + 1) + 8;
        /* the small pool is an allocation as the fault option counts
           them (fault_alloc_at), as the pool's block was */
        if (n <= XCHG_REQ_SMALL)
            pl->req = core_alloc_fault(pl->ctx) ? NULL : c->req_small;
        else
            pl->req = core_tmp_alloc(pl->ctx, (size_t)n * sizeof *pl->req,
                                     1);
        if (!pl->req)
            return core_err(pl->ctx, PASSION_ENOMEM,
                            "exchange: %lld MPI requests", (long long)n);
        pl->nreq = (int)n;
    }
    const coll_xchg_ops *ops = coll_xchg_ops_get(alg);
    if (!ops)
        return PASSION_OK;
    pl->radix = radix;
    if (ops->scratch && !pl->scratch) {
        int64_t n = ops->scratch(pl);
        pl->scratch = n > 0 ? core_tmp_alloc(pl->ctx, (size_t)n, 1) : NULL;
        if (n > 0 && !pl->scratch)
            return core_err(pl->ctx, PASSION_ENOMEM,
                            "exchange %s: %lld bytes of tables", ops->name,
                            (long long)n);
    }
    if (steps > 1 && !c->step_arr) {
        c->step_arr = core_tmp_alloc(
            pl->ctx, 4 * (size_t)pl->P * sizeof *c->step_arr, 1);
        if (!c->step_arr)
            return core_err(pl->ctx, PASSION_ENOMEM,
                            "exchange: counts of a step");
    }
    if (!ops->prealloc || steps < 1)
        return PASSION_OK;
    coll_xchg_shape t = coll_shape_step(s, steps);
    int64_t n = coll_xchg_staging(alg, radix, &t);
    if (n <= 0)
        return PASSION_OK;
    pl->reserved = coll_stage_alloc(pl, n, n);
    if (!pl->reserved)
        return core_err(pl->ctx, PASSION_ENOMEM,
                        "exchange %s: %lld staging bytes (%lld left of the "
                        "budget)",
                        ops->name, (long long)n, (long long)pl->limit);
    pl->reserved_bytes = n;
    return PASSION_OK;
}

static void unprepare(xchg_call *c)
{
    coll_xchg_plan *pl = &c->pl;
    coll_stage_free(pl, pl->reserved, pl->reserved_bytes,
                    pl->reserved_bytes);
    pl->reserved = NULL;
    pl->reserved_bytes = 0;
    core_tmp_free(pl->ctx, pl->scratch);
    pl->scratch = NULL;
    core_tmp_free(pl->ctx, c->step_arr);
    c->step_arr = NULL;
}

/* 1. the request, local checks and sizes */
static int call_begin(xchg_call *c, passion_ctx *ctx,
                      const coll_xchg_args *a, int rc,
                      coll_xchg_choice *predict)
{
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->a = a;
    c->predict = predict;
    c->guess = -1;
    coll_xchg_plan *pl = &c->pl;
    pl->ctx = ctx;
    pl->P = ctx->size;
    pl->me = ctx->rank;
    pl->st.alg = -1;
    pl->fused_max = -1;
    c->state = coll_xchg_state_get(ctx);
    c->au.ctx = ctx;
    c->au.state = c->state;
    c->au.plan = plan_state_get(ctx);
    c->au.costs = &c->costs;
    int crc = coll_xchg_comm_setup(ctx, &pl->comm);
    c->from_option = a->alg == PASSION_XCHG_DEFAULT;
    c->alg = c->from_option ? ctx->opt.exchange : a->alg;
    c->radix = a->radix ? a->radix : ctx->opt.radix;
    int64_t left = ctx->opt.memory_budget - ctx->staging_now;
    c->budget = a->budget > 0 ? a->budget : left > 0 ? left : 0;
    pl->limit = c->budget;
    pl->base = ctx->staging_now;
    int rmax = pl->P > 2 ? pl->P : 2;
    if (crc) {
        /* no communicator of our own (on any rank: agreed), so the
           round of headers goes on the context's; the agreed code */
        pl->comm = ctx->comm;
        if (!rc)
            rc = crc;
    }
    if (!rc && (!c->state || !c->au.plan))
        rc = core_err(ctx, PASSION_ENOMEM, "exchange: context state");
    if (!rc && c->alg != PASSION_XCHG_AUTO && !coll_xchg_ops_get(c->alg))
        rc = core_err(ctx, PASSION_EINVAL, "unknown exchange algorithm %d",
                      c->alg);
    if (!rc && c->radix != 0 && (c->radix < 2 || c->radix > rmax))
        rc = core_err(ctx, PASSION_EINVAL, "radix %d outside 2..%d",
                      c->radix, rmax);
    if (!rc) {
        pl->sbuf = a->sendbuf;
        pl->rbuf = a->recvbuf;
        pl->block = a->block;
        pl->sc = a->sendcounts;
        pl->sd = a->sdispls;
        pl->rc = a->recvcounts;
        pl->rd = a->rdispls;
        rc = local_scan(pl, &c->L);
    }
    if (!rc && c->alg != PASSION_XCHG_AUTO && c->L.block < 0 &&
        coll_xchg_ops_get(c->alg)->regular_only && !c->from_option)
        rc = core_err(ctx, PASSION_EINVAL,
                      "%s exchange needs equal counts to every rank",
                      coll_xchg_name(c->alg));
    return rc;
}

/* the nodes of the shape (the node table, identical on every rank) */
static void shape_nodes(const xchg_call *c, coll_xchg_shape *s)
{
    const coll_nodes *T = coll_xchg_nodes(c->ctx);
    s->nodes = T ? T->nnodes : 1;
    s->node_max = T ? T->max_size : 1;
}

/* this rank's view of the shape: exact when regular; irregular, the
   agreement corrects it */
static coll_xchg_shape local_shape(const xchg_call *c)
{
    const xchg_local *L = &c->L;
    int P = c->pl.P;
    coll_xchg_shape s = coll_shape_regular(P, L->block);
    shape_nodes(c, &s);
    if (L->block < 0) {
        s.block = -1;
        s.lmax = L->lout > L->lin ? L->lout : L->lin;
        s.lmax_x = L->lout_x > L->lin_x ? L->lout_x : L->lin_x;
        s.mmax = L->mmax;
        s.total = L->total_x * P;
    }
    return s;
}

/* 2. what will probably run, prepared now */
static int call_guess(xchg_call *c, int rc)
{
    c->ready = coll_xchg_costs_ready(c->ctx, &c->costs);
    if (rc)
        return rc;
    coll_xchg_shape s = local_shape(c);
    int regular = c->L.block >= 0;
    if (c->a->shape && c->a->shape->procs == c->pl.P && c->a->block < 0) {
        /* the caller's: the same on every rank, a rank that moves
           nothing (its counts all 0, "regular") included */
        s = *c->a->shape;
        shape_nodes(c, &s);
        regular = s.block >= 0;
    }
    if (!wants_auto(c, regular)) {
        const coll_xchg_ops *ops = coll_xchg_ops_get(c->alg);
        c->guess = c->alg;
        c->guess_radix = c->radix;
        if (ops->has_radix && !c->radix) {
            if (c->ready)
                coll_xchg_model(&c->costs, c->alg, 0, &s, &c->guess_radix);
            else
                c->guess = -1;
        }
        if (ops->has_radix && c->guess_radix > c->pl.P)
            c->guess_radix = c->pl.P;
        if (c->guess >= 0)
            c->guess_steps =
                steps_for(c->guess, c->guess_radix, &s, c->budget, NULL);
    } else if (c->ready) {
        coll_xchg_choice ch = coll_xchg_auto_peek(&c->au, &s, c->budget);
        c->guess = ch.alg;
        c->guess_radix = ch.radix;
        c->guess_steps = 1;
    }
    if (c->predict)
        return PASSION_OK;
    return prepare(c, c->guess, c->guess_radix, c->guess_steps, &s);
}

/* 3. the agreement, with the guessed algorithm's first step when it can
   ride on it; returns 0 when the call goes on, else the agreed code
   (*done set) */
static int call_agree(xchg_call *c, int rc, int *done)
{
    coll_xchg_plan *pl = &c->pl;
    const xchg_local *L = &c->L;
    int64_t *v = c->v;
    int P = pl->P;
    v[V_CHECK] = (int64_t)L->check;
    v[V_TOTAL] = L->total_x;
    v[V_FAIL] = rc ? 1 : 0;
    v[V_ALG] = c->alg;
    v[V_NALG] = -c->alg;
    v[V_RADIX] = c->radix;
    v[V_NRADIX] = -c->radix;
    v[V_MODE] = c->a->block >= 0;
    v[V_NMODE] = -(c->a->block >= 0);
    v[V_READY] = c->ready;
    v[V_NREADY] = -c->ready;
    v[V_BLOCK] = L->block;
    v[V_NBLOCK] = -L->block;
    v[V_LMAX] = L->lout > L->lin ? L->lout : L->lin;
    v[V_LMAX_X] = L->lout_x > L->lin_x ? L->lout_x : L->lin_x;
    v[V_MMAX] = L->mmax;
    v[V_NBUDGET] = -c->budget;
    v[V_GUESS] = c->guess;
    v[V_NGUESS] = -c->guess;
    v[V_GRADIX] = c->guess_radix;
    v[V_NGRADIX] = -c->guess_radix;
    v[V_GSTEPS] = c->guess_steps > 1; /* counts of a step allocated */
    v[V_NGSTEPS] = -(c->guess_steps > 1);
    v[V_GRES] = pl->reserved_bytes;
    v[V_NGRES] = -pl->reserved_bytes;
    int arc;
    *done = 1;
    /* by nodes (coll_nodes_agree; agree_nodes without a node table)
       when the ranks sit on several nodes, some with more than one rank:
       a property of the context alone, so every rank takes this path
       alike whatever algorithm it was passed (a difference is then found
       in the folded header, V_ALG). The two-level exchange's data
       travels with these headers when every rank guessed it (then it is
       done: call_run); A1's goes in its own round, and no round of the
       call goes to every rank from every rank. */
    const int by_nodes = P > 1 && coll_xchg_by_nodes(c->ctx) &&
                         pl->P == c->ctx->size;
    if (by_nodes && coll_xchg_nodes(c->ctx)) {
        /* the two-level exchange's data rides on it when guessed */
        const coll_xchg_ops *g = coll_xchg_ops_get(c->guess);
        int spec = !rc && !c->predict && g && g->nodes_fused &&
                   c->guess_steps == 1;
        arc = coll_nodes_agree(pl, v, V_N, V_NSUM, V_FAIL, spec,
                               &c->nodes_moved);
        /* a failure folded into the agreed header (v[V_FAIL]) is agreed
           below; one after this rank's status left is agreed after the
           run (call_run), where every rank goes */
        if (arc && !v[V_FAIL]) {
            c->late = arc;
            arc = PASSION_OK;
        } else if (arc && !rc) {
            rc = arc;
            arc = PASSION_OK;
        }
    } else if (by_nodes) {
        arc = agree_nodes(pl, v, V_N, V_NSUM);
    } else if (P > 1 && P <= COLL_A2A_MAX) {
        int64_t fuse = round_fuse(P);
        void *mem = coll_xchg_state_buf(c->ctx, c->state,
                                        (size_t)round_bytes(P, fuse));
        c->x = mem ? round_layout(mem, P, fuse) : NULL;
        if (!c->x) {
            /* calloc or agree: this rank still takes part in the round
               (its peers wait for its header), says in it that it failed,
               and every rank then agrees on that failure below */
            v[V_FAIL] = 1;
            if (!rc)
                rc = core_err(c->ctx, PASSION_ENOMEM,
                              "exchange: the round of headers (%lld bytes)",
                              (long long)round_bytes(P, round_fuse(P)));
            int64_t w[V_N];
            arc = round_without_memory(pl, v, V_NSUM, w);
            memcpy(v, w, sizeof w);
        } else {
            /* whether data may come with the headers depends only on
               values the agreement checks equal (alg) */
            const coll_xchg_ops *asked = coll_xchg_ops_get(c->alg);
            const coll_xchg_ops *g = coll_xchg_ops_get(c->guess);
            c->x->posted = !rc && !c->predict &&
                           (!asked || asked->hdr_sends || asked->regular_only);
            c->x->spec = c->x->posted && g && g->hdr_sends;
            int64_t w[V_N];
            arc = round_start(pl, c->x, v, V_NSUM, c->x->spec ? g : NULL, w);
            memcpy(v, w, sizeof w);
        }
    } else {
        arc = P > 1 ? coll_allreduce(pl->comm, v, V_N, V_NSUM) : PASSION_OK;
    }
    if (arc)
        return core_err(c->ctx, arc, "exchange: argument agreement failed");
    if (v[V_FAIL])
        return core_agree(c->ctx, rc);
    *done = 0;
    return PASSION_OK;
}

/* 4. the agreed shape; disagreements are errors on every rank */
static int call_shape(xchg_call *c)
{
    const int64_t *v = c->v;
    passion_ctx *ctx = c->ctx;
    if (v[V_ALG] != -v[V_NALG] || v[V_RADIX] != -v[V_NRADIX])
        return core_err(ctx, PASSION_EMISMATCH,
                        "ranks passed different exchange algorithms or "
                        "radix");
    if (v[V_MODE] != -v[V_NMODE] || v[V_READY] != -v[V_NREADY])
        return core_err(ctx, PASSION_EMISMATCH,
                        "ranks mix alltoall and alltoallv, or have "
                        "different cost options");
    if (v[V_CHECK] != 0)
        return core_err(ctx, PASSION_EMISMATCH,
                        "send counts do not match the receive counts of "
                        "their destinations");
    coll_xchg_shape *s = &c->shape;
    memset(s, 0, sizeof *s);
    s->procs = c->pl.P;
    s->block = v[V_BLOCK] == -v[V_NBLOCK] ? v[V_BLOCK] : -1;
    s->lmax = v[V_LMAX];
    s->lmax_x = v[V_LMAX_X];
    s->mmax = v[V_MMAX];
    s->total = v[V_TOTAL];
    shape_nodes(c, s);
    c->abudget = -v[V_NBUDGET];
    c->pl.limit = c->abudget;
    if (c->alg != PASSION_XCHG_AUTO && s->block < 0 &&
        coll_xchg_ops_get(c->alg)->regular_only && !c->from_option)
        return core_err(ctx, PASSION_EINVAL,
                        "%s exchange needs equal counts on every rank",
                        coll_xchg_name(c->alg));
    return PASSION_OK;
}

/* 5. the costs, when a choice needs them (collective the first time) */
static int call_costs(xchg_call *c)
{
    int regular = c->shape.block >= 0;
    const coll_xchg_ops *ops = coll_xchg_ops_get(c->alg);
    int need = wants_auto(c, regular) || (ops->has_radix && !c->radix);
    if (!need || c->ready)
        return PASSION_OK;
    if (c->x)
        round_finish(&c->pl, c->x, NULL);
    c->x = NULL;
    int rc = coll_xchg_costs_get(c->ctx, &c->costs);
    if (!rc)
        c->ready = 1;
    return rc;
}

/* 6. what runs, in how many steps */
static int call_choose(xchg_call *c)
{
    const coll_xchg_shape *s = &c->shape;
    if (wants_auto(c, s->block >= 0)) {
        coll_xchg_choice ch;
        if (c->predict) {
            ch = coll_xchg_auto_peek(&c->au, s, c->abudget);
        } else {
            c->au.comm = c->pl.comm;
            int rc = coll_xchg_auto_next(&c->au, s, c->abudget, &ch);
            if (rc)
                return rc;
        }
        c->run = ch.alg;
        c->run_radix = ch.radix;
    } else {
        const coll_xchg_ops *ops = coll_xchg_ops_get(c->alg);
        c->run = c->alg;
        c->run_radix = c->radix;
        if (ops->has_radix && !c->radix)
            coll_xchg_model(&c->costs, c->alg, 0, s, &c->run_radix);
    }
    const coll_xchg_ops *ops = coll_xchg_ops_get(c->run);
    if (ops->has_radix && c->run_radix > c->pl.P)
        c->run_radix = c->pl.P;
    if (!ops->has_radix)
        c->run_radix = 0;
    c->steps = steps_for(c->run, c->run_radix, s, c->abudget, NULL);
    if (c->steps == 0)
        return budget_enomem(c);
    return PASSION_OK;
}

/* byte range of step t of k of a message of n bytes */
static void slice(int64_t n, int64_t t, int64_t k, int64_t *lo, int64_t *len)
{
    int64_t sl = n <= 0 ? 0 : (n - 1) / k + 1;
    int64_t a = t * sl < n ? t * sl : n;
    int64_t b = a + sl < n ? a + sl : n;
    *lo = a;
    *len = b - a;
}

/* The steps of the run: slice t of every message in step t. Every step is
   a whole protocol, so an algorithm that fails locally (and keeps the
   protocol going) runs them all; an MPI failure ends them. */
static int run_steps(xchg_call *c, const coll_xchg_ops *ops)
{
    coll_xchg_plan *pl = &c->pl;
    pl->limit_hit = 0;
    if (c->steps <= 1) {
        pl->shape = c->shape;
        return ops->run(pl);
    }
    coll_xchg_plan base = *pl;
    int P = pl->P, rc = PASSION_OK;
    int64_t *sc = c->step_arr, *sd = sc + P, *rcv = sd + P, *rd = rcv + P;
    pl->block = -1;
    pl->sc = sc;
    pl->sd = sd;
    pl->rc = rcv;
    pl->rd = rd;
    pl->shape = coll_shape_step(&c->shape, c->steps);
    for (int64_t t = 0; t < c->steps; t++) {
        CORE_CHAOS(XCHG_ROUND);
        for (int j = 0; j < P; j++) {
            int64_t lo, len;
            slice(coll_sc(&base, j), t, c->steps, &lo, &len);
            sc[j] = len;
            sd[j] = coll_sd(&base, j) + lo;
            slice(coll_rc(&base, j), t, c->steps, &lo, &len);
            rcv[j] = len;
            rd[j] = coll_rd(&base, j) + lo;
        }
        int r = ops->run(pl);
        if (r && !rc)
            rc = r;
        if (rc && !ops->agree_after)
            break;
    }
    pl->block = base.block;
    pl->sc = base.sc;
    pl->sd = base.sd;
    pl->rc = base.rc;
    pl->rd = base.rd;
    return rc;
}

/* The outcome of a run that may fail locally. *retry: every failing rank
   failed only because the budget refused an allocation, and more steps
   are possible (at most XCHG_RETRIES times: the staging() bound is meant
   to hold, the retries only cover where it is short). */
#define XCHG_RETRIES 3
static int agree_outcome(xchg_call *c, int rc, int *retry)
{
    coll_xchg_plan *pl = &c->pl;
    int64_t kmax = c->shape.lmax > 1 ? c->shape.lmax : 1;
    /* one reduction: whether any rank failed, and whether any failed
       for another reason than the budget (maxima over ranks) */
    double f[2] = {rc ? 1 : 0, rc && !(rc == PASSION_ENOMEM && pl->limit_hit)};
    *retry = 0;
    int arc = core_agree_max(c->ctx, PASSION_OK, f, 2);
    if (arc)
        return arc;
    if (f[0] == 0)
        return PASSION_OK;
    if (f[1] == 0 && c->steps < kmax && c->retries < XCHG_RETRIES) {
        c->retries++;
        *retry = 1;
        return PASSION_OK;
    }
    if (rc && f[1] == 0)
        rc = core_err(c->ctx, PASSION_ENOMEM,
                      "exchange %s: staging over the %lld bytes left of "
                      "the memory budget, even in %lld steps (its bound "
                      "says at least %lld bytes; this run needed more)",
                      coll_xchg_name(c->run), (long long)c->abudget,
                      (long long)c->steps, (long long)least_budget(c));
    return core_agree(c->ctx, rc);
}

/* 7. the run */
static int call_run(xchg_call *c)
{
    coll_xchg_plan *pl = &c->pl;
    const coll_xchg_ops *ops = coll_xchg_ops_get(c->run);
    pl->costs = c->costs;
    pl->radix = c->run_radix;
    pl->st.alg = c->run;
    pl->st.radix = c->run_radix;
    if (c->ready)
        pl->st.predicted =
            coll_xchg_model(&c->costs, c->run, c->run_radix, &c->shape, NULL);
    /* the run that rode on the agreement by nodes: done everywhere;
       its outcome (a failure after a rank's status left, c->late) is
       agreed, as a run's that may fail locally (agree_after) */
    if (c->nodes_moved && ops->nodes_fused && c->steps == 1) {
        pl->st.steps = 1;
        return core_agree(c->ctx, c->late);
    }
    /* the step that rode on the agreement is the whole algorithm */
    if (c->x && c->x->posted && ops->hdr_sends && c->steps == 1) {
        int rc = round_finish(pl, c->x, ops);
        c->x = NULL;
        return rc;
    }
    if (c->x) {
        round_finish(pl, c->x, NULL);
        c->x = NULL;
    }
    /* the guesses of step 2 may differ between ranks (budgets, the local
       view of an irregular shape): then every rank prepares again */
    const int64_t *v = c->v;
    coll_xchg_shape t = coll_shape_step(&c->shape, c->steps);
    int64_t res = ops->prealloc ? coll_xchg_staging(c->run, c->run_radix, &t)
                                : 0;
    int rc = PASSION_OK;
    if (v[V_GUESS] != -v[V_NGUESS] || v[V_GRADIX] != -v[V_NGRADIX] ||
        v[V_GSTEPS] != -v[V_NGSTEPS] || v[V_GRES] != -v[V_NGRES] ||
        c->run != c->guess || c->run_radix != c->guess_radix ||
        (c->steps > 1) != v[V_GSTEPS] || v[V_GRES] != res) {
        unprepare(c);
        rc = agree_flag(pl, prepare(c, c->run, c->run_radix, c->steps,
                                    &c->shape));
        if (rc)
            return rc;
    }
    for (;;) {
        pl->st.steps = c->steps;
        rc = run_steps(c, ops);
        /* a failure of the agreement by nodes after this rank's status
           left: agreed with the run's outcome where there is one, else
           returned here (like the run's own MPI errors) */
        if (c->late && !rc)
            rc = c->late;
        c->late = 0;
        if (!ops->agree_after)
            return rc;
        int retry;
        rc = agree_outcome(c, rc, &retry);
        if (!retry)
            return rc;
        /* every failing rank met the budget: twice the steps */
        int64_t kmax = c->shape.lmax > 1 ? c->shape.lmax : 1;
        c->steps = c->steps > kmax / 2 ? kmax : 2 * c->steps;
        unprepare(c);
        rc = agree_flag(pl, prepare(c, c->run, c->run_radix, c->steps,
                                    &c->shape));
        if (rc)
            return rc;
    }
}

/* 8. counters, and the planner's observation of a run auto chose */
static void call_end(xchg_call *c, double t0, int rc)
{
    coll_xchg_plan *pl = &c->pl;
    if (c->x) {
        round_finish(pl, c->x, NULL);
        c->x = NULL;
    }
    unprepare(c);
    if (pl->req != c->req_small)
        core_tmp_free(c->ctx, pl->req);
    pl->req = NULL;
    pl->st.seconds = core_now() - t0;
    if (c->predict)
        return;
    if (c->au.rec && !rc)
        plan_observe(c->au.rec, c->au.idx, pl->st.seconds);
    passion_ctx *ctx = c->ctx;
    ctx->cnt.messages_sent += (uint64_t)pl->st.messages;
    ctx->cnt.bytes_sent += (uint64_t)pl->st.bytes_sent;
    ctx->cnt.rounds += (uint64_t)pl->st.rounds;
    ctx->cnt.t_comm += pl->st.seconds;
    coll_xchg_state_set_last(c->state, &pl->st);
    if (c->a->stats)
        *c->a->stats = pl->st;
}

static int exchange_call(passion_ctx *ctx, const coll_xchg_args *a, int rc,
                         coll_xchg_choice *predict)
{
    double t0 = core_now();
    xchg_call c;
    int done = 0;
    rc = call_begin(&c, ctx, a, rc, predict);
    rc = call_guess(&c, rc);
    rc = call_agree(&c, rc, &done);
    if (!done) {
        rc = call_shape(&c);
        if (!rc)
            rc = call_costs(&c);
        if (!rc)
            rc = call_choose(&c);
        if (!rc && predict) {
            predict->alg = c.run;
            predict->radix = c.run_radix;
            predict->seconds = coll_xchg_model(&c.costs, c.run, c.run_radix,
                                               &c.shape, NULL);
        } else if (!rc) {
            rc = call_run(&c);
        }
    }
    call_end(&c, t0, rc);
    return rc;
}

int coll_exchange(passion_ctx *ctx, const coll_xchg_args *args)
{
    if (!ctx || !args)
        return PASSION_EINVAL;
    return exchange_call(ctx, args, PASSION_OK, NULL);
}

int coll_xchg_predict(passion_ctx *ctx, const coll_xchg_args *args,
                      coll_xchg_choice *out)
{
    if (!ctx || !args || !out)
        return PASSION_EINVAL;
    coll_xchg_args a = *args;
    if (a.alg == PASSION_XCHG_DEFAULT)
        a.alg = PASSION_XCHG_AUTO;
    return exchange_call(ctx, &a, PASSION_OK, out);
}

/* ------------------------------------------------------------ public API */

static int type_bytes(passion_ctx *ctx, MPI_Datatype t, int64_t *es)
{
    *es = 0;
    if (t == MPI_DATATYPE_NULL)
        return core_err(ctx, PASSION_EINVAL, "exchange: MPI_DATATYPE_NULL");
    /* MPI's basic types are contiguous, lower bound 0, extent their
       size: only the size is asked (one call instead of three) */
    if (t == MPI_BYTE || t == MPI_CHAR || t == MPI_SIGNED_CHAR ||
        t == MPI_UNSIGNED_CHAR || t == MPI_SHORT || t == MPI_UNSIGNED_SHORT ||
        t == MPI_INT || t == MPI_UNSIGNED || t == MPI_LONG ||
        t == MPI_UNSIGNED_LONG || t == MPI_LONG_LONG ||
        t == MPI_UNSIGNED_LONG_LONG || t == MPI_FLOAT || t == MPI_DOUBLE ||
        t == MPI_INT8_T || t == MPI_INT16_T || t == MPI_INT32_T ||
        t == MPI_INT64_T || t == MPI_UINT8_T || t == MPI_UINT16_T ||
        t == MPI_UINT32_T || t == MPI_UINT64_T) {
        int size = 0;
        if (MPI_Type_size(t, &size) != MPI_SUCCESS || size <= 0)
            return core_err(ctx, PASSION_EMPI, "exchange: datatype query");
        *es = size;
        return PASSION_OK;
    }
    MPI_Count size, lb, ext, tlb, text;
    if (MPI_Type_size_x(t, &size) != MPI_SUCCESS ||
        MPI_Type_get_extent_x(t, &lb, &ext) != MPI_SUCCESS ||
        MPI_Type_get_true_extent_x(t, &tlb, &text) != MPI_SUCCESS ||
        size == MPI_UNDEFINED)
        return core_err(ctx, PASSION_EMPI, "exchange: datatype query");
    if (lb != 0 || ext != size || tlb != 0 || text != size)
        return core_err(ctx, PASSION_ENOTSUP,
                        "exchange: datatype not contiguous (size %lld, "
                        "extent %lld)",
                        (long long)size, (long long)ext);
    *es = (int64_t)size;
    return PASSION_OK;
}

static int alltoall_body(passion_ctx *ctx, const void *sendbuf, void *recvbuf,
                         int64_t count, MPI_Datatype type, passion_xchg alg,
                         int radix)
{
    if (!ctx)
        return PASSION_EINVAL;
    int64_t es = 0, block = 0;
    int rc = type_bytes(ctx, type, &es);
    if (!rc && count < 0)
        rc = core_err(ctx, PASSION_EINVAL, "alltoall: negative count");
    if (!rc && !core_mul(count, es, &block))
        rc = core_err(ctx, PASSION_EOVERFLOW, "alltoall: count overflows");
    coll_xchg_args a;
    memset(&a, 0, sizeof a);
    a.sendbuf = sendbuf;
    a.recvbuf = recvbuf;
    a.block = rc ? 0 : block;
    a.alg = alg;
    a.radix = radix;
    return exchange_call(ctx, &a, rc, NULL);
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_alltoall(passion_ctx *ctx, const void *sendbuf, void *recvbuf,
                     int64_t count, MPI_Datatype type, passion_xchg alg,
                     int radix)
{
    passion_ctx *gctx = ctx;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = alltoall_body(ctx, sendbuf, recvbuf, count, type, alg, radix);
    core_call_end(gctx);
    return rc;
}

static int alltoallv_body(passion_ctx *ctx, const void *sendbuf,
                          const int64_t *sendcounts, const int64_t *sdispls,
                          void *recvbuf, const int64_t *recvcounts,
                          const int64_t *rdispls, MPI_Datatype type,
                          passion_xchg alg, int radix)
{
    if (!ctx)
        return PASSION_EINVAL;
    int P = ctx->size;
    int64_t es = 0;
    int rc = type_bytes(ctx, type, &es);
    int64_t *b = core_calloc(ctx, 4 * (size_t)P, sizeof *b);
    if (!rc && !b)
        rc = core_err(ctx, PASSION_ENOMEM, "alltoallv: count arrays");
    if (!rc && (!sendcounts || !sdispls || !recvcounts || !rdispls))
        rc = core_err(ctx, PASSION_EINVAL, "alltoallv: NULL count array");
    for (int j = 0; j < P && !rc; j++) {
        const int64_t in[4] = {sendcounts[j], sdispls[j], recvcounts[j],
                                   rdispls[j]};
        for (int k = 0; k < 4 && !rc; k++) {
            if (in[k] < 0)
                rc = core_err(ctx, PASSION_EINVAL,
                                  "alltoallv: negative count or displacement "
                                  "for rank %d",
                                  j);
            else if (!core_mul(in[k], es, &b[k * P + j]))
                rc = core_err(ctx, PASSION_EOVERFLOW,
                                  "alltoallv: bytes overflow for rank %d", j);
        }
    }
    coll_xchg_args a;
    memset(&a, 0, sizeof a);
    a.sendbuf = sendbuf;
    a.recvbuf = recvbuf;
    a.block = -1;
    if (rc && b)
        memset(b, 0, 4 * (size_t)P * sizeof *b);
    if (b) {
        a.sendcounts = b;
        a.sdispls = b + P;
        a.recvcounts = b + 2 * P;
        a.rdispls = b + 3 * P;
    } else {
        a.block = 0; /* take part with nothing */
    }
    a.alg = alg;
    a.radix = radix;
    rc = exchange_call(ctx, &a, rc, NULL);
    core_free(ctx, b);
    return rc;
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_alltoallv(passion_ctx *ctx, const void *sendbuf,
                      const int64_t *sendcounts, const int64_t *sdispls,
                      void *recvbuf, const int64_t *recvcounts,
                      const int64_t *rdispls, MPI_Datatype type,
                      passion_xchg alg, int radix)
{
    passion_ctx *gctx = ctx;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = alltoallv_body(ctx, sendbuf, sendcounts, sdispls, recvbuf, recvcounts,
                        rdispls, type, alg, radix);
    core_call_end(gctx);
    return rc;
}
