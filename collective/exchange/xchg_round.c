/*
 * xchg_round.c - the entry agreement's round of headers: every rank
 * sends its header (xchg_call.h, COLL_V_N words) to every rank and folds
 * the ones it receives, or, on several nodes without the exchange's node
 * table, folds them by nodes (coll_xchg_agree_nodes). The first step of
 * an algorithm whose table says it can (hdr_sends) travels with the
 * headers: a short message inside its header's message, a longer one
 * after it.
 *
 * Invariants:
 *  - every rank ends with the same fold, whatever form (full or compact)
 *    each header travelled in;
 *  - no receive is ever truncated: a header's receive is posted with the
 *    slot's whole capacity, and a long data message is received only
 *    once its sender's header has said how long it is;
 *  - no message is left behind: data that has no place (inconsistent
 *    arguments) is drained (coll_xchg_round_finish);
 *  - a rank that cannot have the round's memory still sends and receives
 *    every header, its failure said in it (coll_xchg_round_without_memory).
 */
#include "xchg_call.h"

#include <string.h>


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
 * HDR_B + fuse bytes: the COLL_V_N values, then H_SENT (bytes the sender sent
 * to this rank with the round, -1: none) and H_FUSED (1: those bytes
 * follow the values in the same message). A message of at most `fuse`
 * bytes travels inside its header's message, so that a small exchange
 * costs one message per pair, as MPI's own call does; a longer one
 * follows in a message of its own. Every receive is posted with the
 * slot's whole capacity, so no header is ever truncated. The round's
 * memory is kept in the context's exchange state between calls (no
 * allocation, no page touched for the first time, per call).
 */
#define H_SENT COLL_V_N
#define H_FUSED (COLL_V_N + 1)
#define HDR_W (COLL_V_N + 2)
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
 * mix the two forms. Word 1 tells them apart: a full header's
 * COLL_V_TOTAL is a byte count (>= 0), the compact word has its top bit
 * set. With a few bytes a pair, header and data then fit in the short
 * messages that an MPI shared-memory transport sends at its lowest
 * latency, which a full header does not. COMPACT_MAX is the longest
 * message that rides inside its header, so every such exchange saves
 * the rest of the full header (and, every header compact and equal, the
 * fold: round_take_same).
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
    h[COLL_V_CHECK] = chk;
    h[COLL_V_TOTAL] = b * (P - 1);
    h[COLL_V_ALG] = alg;
    h[COLL_V_NALG] = -alg;
    h[COLL_V_RADIX] = radix;
    h[COLL_V_NRADIX] = -radix;
    h[COLL_V_MODE] = mode;
    h[COLL_V_NMODE] = -mode;
    h[COLL_V_READY] = ready;
    h[COLL_V_NREADY] = -ready;
    h[COLL_V_BLOCK] = b;
    h[COLL_V_NBLOCK] = -b;
    h[COLL_V_LMAX] = b * P;
    h[COLL_V_LMAX_X] = b * (P - 1);
    h[COLL_V_MMAX] = P > 1 ? b : 0;
    h[COLL_V_NBUDGET] = nbudget;
    h[COLL_V_GUESS] = guess;
    h[COLL_V_NGUESS] = -guess;
    h[COLL_V_GRADIX] = gradix;
    h[COLL_V_NGRADIX] = -gradix;
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
    int64_t f[5] = {v[COLL_V_ALG], v[COLL_V_RADIX], v[COLL_V_GUESS],
                    v[COLL_V_GRADIX], b};
    for (int k = 0; k < 5; k++)
        if (f[k] < 0 || f[k] > (k < 4 ? 0xff : COMPACT_MAX))
            return 0;
    if (v[COLL_V_MODE] < 0 || v[COLL_V_MODE] > 1 || v[COLL_V_READY] < 0 ||
        v[COLL_V_READY] > 1)
        return 0;
    c[0] = v[COLL_V_CHECK];
    c[1] = (int64_t)((uint64_t)1 << 63 | (uint64_t)b | (uint64_t)f[0] << 16 |
                     (uint64_t)f[1] << 24 | (uint64_t)f[2] << 32 |
                     (uint64_t)f[3] << 40 | (uint64_t)v[COLL_V_MODE] << 48 |
                     (uint64_t)v[COLL_V_READY] << 49);
    c[2] = v[COLL_V_NBUDGET];
    int64_t t[HDR_W];
    compact_unpack(c, P, t);
    return memcmp(t, v, COLL_V_N * sizeof *v) == 0;
}

/* the message length that rides inside a header on P ranks: identical on
   every rank (P and the chunk limit are) */
int64_t coll_xchg_round_fuse(int P)
{
    int64_t f = P > 1 ? FUSE_ALL / (P - 1) : FUSE_MAX;
    f = f > FUSE_MAX ? FUSE_MAX : f;
    int64_t ch = coll_xchg_chunk();
    if (HDR_B + f > ch)
        f = ch > HDR_B ? ch - HDR_B : 0;
    return f & ~(int64_t)7; /* slots stay 8-byte aligned */
}

int64_t coll_xchg_round_bytes(int P, int64_t fuse)
{
    return (int64_t)sizeof(coll_xchg_round) + 2 * (int64_t)P * (HDR_B + fuse) +
           2 * (int64_t)P * (int64_t)sizeof(int) + 16;
}

static int64_t *hin(const coll_xchg_round *x, int i)
{
    return (int64_t *)(void *)(x->in + (int64_t)i * x->slot);
}

static int64_t *hout(const coll_xchg_round *x, int j)
{
    return (int64_t *)(void *)(x->out + (int64_t)j * x->slot);
}

/* the round laid out in mem (coll_xchg_round_bytes of it) */
coll_xchg_round *coll_xchg_round_layout(void *mem, int P, int64_t fuse)
{
    coll_xchg_round *x = mem;
    x->fuse = fuse;
    x->slot = HDR_B + fuse;
    x->in = (char *)(x + 1);
    x->out = x->in + (int64_t)P * x->slot;
    x->rfirst = (int *)(void *)(x->out + (int64_t)P * x->slot);
    x->rn = x->rfirst + P;
    x->posted = x->spec = 0;
    x->sfirst = x->sn = x->nreq = x->moved = 0;
    /* what coll_xchg_round_finish reads of a round that stopped early */
    for (int i = 0; i < P; i++) {
        x->rn[i] = 0;
        hin(x, i)[H_SENT] = -1;
    }
    return x;
}

/* peer i's data came inside its header */
static int fused_in(const coll_xchg_round *x, int i)
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

/* post the receives of every peer's header into hq, then this rank's
   headers (compact: in the form cw, data inside) and, spec not NULL, the
   longer first-step messages of spec's algorithm (send requests [0, *k)
   of the pool); *n: the header requests posted */
static int round_post(coll_xchg_plan *pl, coll_xchg_round *x,
                      const int64_t *v, const coll_xchg_ops *spec,
                      int compact, const int64_t *cw, MPI_Request *hq,
                      int *n, int *k)
{
    int P = pl->P, me = pl->me, rc = PASSION_OK;
    for (int i = 0; i < P && !rc; i++)
        if (i != me &&
            MPI_Irecv(hin(x, i), (int)x->slot, MPI_BYTE, i, TAG_HDR,
                      pl->comm, &hq[(*n)++]) != MPI_SUCCESS)
            rc = PASSION_EMPI;
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
            memcpy(h, v, COLL_V_N * sizeof *v);
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
                      &hq[(*n)++]) != MPI_SUCCESS)
            rc = PASSION_EMPI;
    }
    /* the longer messages: sends first in the pool, [0, sn) */
    if (!rc && x->spec) {
        pl->fused_max = x->fuse;
        rc = spec->hdr_sends(pl, TAG_HDR_DATA, k);
        pl->fused_max = -1;
    }
    return rc;
}

/* every header compact and equal to this rank's (cw) but for the
   checksum: the fold is v with the checksums and totals summed, and the
   data is taken where it came (no header unpacked); 1 when so (out
   filled), else 0 and nothing done */
static int round_take_same(coll_xchg_plan *pl, coll_xchg_round *x,
                           const int64_t *v, const int64_t *cw, int k,
                           int64_t *out)
{
    int P = pl->P, me = pl->me;
    for (int i = 0; i < P; i++)
        if (i != me && (hin(x, i)[1] != cw[1] || hin(x, i)[2] != cw[2]))
            return 0;
    uint64_t chk = (uint64_t)v[COLL_V_CHECK];
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
    memcpy(out, v, COLL_V_N * sizeof *v);
    out[COLL_V_CHECK] = (int64_t)chk;
    out[COLL_V_TOTAL] = (int64_t)((uint64_t)v[COLL_V_TOTAL] * (uint64_t)P);
    return 1;
}

/* the headers received, in their full form: the data that came with
   them and fits where it is expected is taken (inside a header) or its
   receive posted from request slot k on; the fold in out */
static int round_take(coll_xchg_plan *pl, coll_xchg_round *x,
                      const int64_t *v, int nsum, int k, int64_t *out)
{
    int P = pl->P, me = pl->me, rc = PASSION_OK;
    for (int i = 0; i < P; i++)
        if (i != me)
            hdr_expand(hin(x, i), P);
    memcpy(hin(x, me), v, COLL_V_N * sizeof *v);
    hin(x, me)[H_SENT] = -1;
    hin(x, me)[H_FUSED] = 0;
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
    memcpy(out, v, COLL_V_N * sizeof *v);
    for (int i = 0; i < P; i++)
        if (i != me)
            fold(out, hin(x, i), COLL_V_N, nsum);
    return rc;
}

/* headers to everyone (and the first step of `spec`'s algorithm when
   spec is not NULL: short messages inside the headers' messages, longer
   ones after them); returns the fold of all headers in out. A long
   message is received only once its sender's header has said how long it
   is, so that nothing is ever truncated. */
int coll_xchg_round_start(coll_xchg_plan *pl, coll_xchg_round *x,
                          const int64_t *v, int nsum,
                          const coll_xchg_ops *spec, int64_t *out)
{
    int n = 0, k = 0;
    CORE_CHAOS(XCHG_ROUND);
    MPI_Request hq[2 * COLL_A2A_MAX];
    /* the compact header when the data of a regular exchange rides
       whole in the headers' messages */
    int64_t cw[C_W];
    int compact = x->spec && pl->block >= 0 && pl->block <= x->fuse &&
                  hdr_compact(v, pl->P, pl->block, cw);
    int rc = round_post(pl, x, v, spec, compact, cw, hq, &n, &k);
    x->sfirst = 0;
    x->sn = k;
    if (!rc)
        rc = coll_waitall(n, hq);
    if (rc)
        return rc;
    if (compact && round_take_same(pl, x, v, cw, k, out))
        return PASSION_OK;
    return round_take(pl, x, v, nsum, k, out);
}

/*
 * End the round's data traffic. complete (not NULL): the algorithm whose
 * step rides on the headers is what runs, so finish it (data not yet
 * sent with the headers goes now). Otherwise take what arrived and drain
 * what has no place (inconsistent arguments), so that no message is left
 * behind (data inside a header needs nothing).
 */
int coll_xchg_round_finish(coll_xchg_plan *pl, coll_xchg_round *x,
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
                             coll_xchg_name(complete->id))
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
int coll_xchg_agree_nodes(coll_xchg_plan *pl, int64_t *v, int n, int nsum)
{
    passion_ctx *ctx = pl->ctx;
    int rc = coll_allreduce(ctx->node_comm, v, n, nsum);
    if (!rc && ctx->leader_comm != MPI_COMM_NULL) {
        const int N = ctx->nnodes, me = ctx->node_id;
        int64_t mine[COLL_V_N], in[COLL_A2A_MAX][COLL_V_N];
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
 * it sent (v[COLL_V_FAIL]): every rank then takes the agreement's failure
 * path. noinline: the slot's stack is taken only when this runs.
 */
__attribute__((noinline)) int
coll_xchg_round_without_memory(coll_xchg_plan *pl, const int64_t *v, int nsum,
                               int64_t *out)
{
    int P = pl->P, me = pl->me, rc = PASSION_OK, n = 0;
    int64_t fuse = coll_xchg_round_fuse(P);
    int64_t h[HDR_W + FUSE_MAX / 8], mine[HDR_W];
    MPI_Request q[COLL_A2A_MAX];
    memcpy(mine, v, COLL_V_N * sizeof *v);
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
    memcpy(out, v, COLL_V_N * sizeof *v);
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
        fold(out, h, COLL_V_N, nsum);
        if (h[H_SENT] > 0 && h[H_FUSED] != 1)
            for (int64_t p = 0; p < coll_nparts(h[H_SENT]); p++)
                coll_drain(pl->comm, i, TAG_HDR_DATA);
    }
    int wrc = coll_waitall(n, q);
    return rc ? rc : wrc;
}
