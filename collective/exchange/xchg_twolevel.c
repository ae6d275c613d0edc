/*
 * xchg_twolevel.c - the two-level (node-aware) exchange: the ranks of a
 * node combine what leaves the node at the node's leader, the leaders
 * exchange it among themselves on the leaders' communicator, by A1 (one
 * round, N - 1 messages each) up to 9 nodes and above by the four-stage
 * algorithm (Liu, Wang and Prasanna, "Portable and scalable algorithm
 * for irregular all-to-all communication", JPDC 2002, section 3.2;
 * non-blocking, their section 3.4), and each leader distributes what
 * arrived to the ranks of its node. Messages between nodes then depend
 * on the number of nodes N, not of ranks P: a leader sends N - 1
 * messages, or 2(C-1) + 2(R-1) for a C x R grid of N nodes
 * (C = ceil(sqrt N)), over the network, where a flat exchange sends
 * about P - P/N from every rank. The idea is the hierarchical all-to-all
 * of SMP clusters (Sistare, vandeVaart and Loh, "Optimization of MPI
 * collectives on clusters of large-scale SMPs", SC 1999; Kumar et al.'s
 * node leaders in "Optimization of all-to-all communication on
 * the Blue Gene/L supercomputer", ICPP 2008).
 *
 * One call, with the nodes of the node table (xchg_nodes.c: node a of S
 * ranks, leader = its rank 0):
 *   1. within the node: pairs of ranks of one node exchange directly
 *      (they never go through the leader); every other rank sends its
 *      leader its counts (P send counts, P receive counts, one message of
 *      16 P bytes) and then everything it sends to other nodes, one
 *      logical message in order of destination (node, rank on it), read
 *      in place from the send buffer (an hindexed type, no copy);
 *   2. the leader receives these straight into its outgoing blocks, one
 *      block per destination node b: the data of (source rank i of a,
 *      destination d of b) in order of i, then d; its receive counts
 *      give it the layout of the blocks that will arrive the same way;
 *      the leaders exchange these blocks (A1 or four-stage);
 *   3. each leader sends every rank of its node, in one message, what the
 *      other nodes sent it, in order of (source node, source rank); the
 *      rank receives it in place into its receive buffer (hindexed).
 * Only the leaders send between nodes. Counters: msgs_node/bytes_node
 * for step 1 and 3 (the counts and the data to the leader count as one
 * message), msgs_net/bytes_net for the leaders' four-stage.
 *
 * Staging: a leader holds its node's outgoing and incoming blocks (at
 * most S * Lmax_x bytes each) and the four-stage's own staging for N
 * ranks and those blocks; the other ranks hold none. A leader that cannot
 * allocate keeps the protocol going: it drains its ranks' data, takes part
 * in the four-stage with empty blocks (which drains what comes) and sends
 * its ranks empty messages; the dispatcher agrees on the outcome after
 * the run (agree_after) and, when only the budget refused, runs again in
 * more steps.
 *
 * Files: this one the run (its price and the leaders' choice of A1 or
 * the four-stage, coll_tl_leaders_a1, are the planner's:
 * collective/planner/plan_xchg_price_tl.c); xchg_twolevel_node.c a node's
 * side (tables, streams, the node's blocks); xchg_nodes_agree.c the
 * entry agreement by nodes on which the run may ride; xchg_twolevel_node.h
 * what they share.
 *
 * Invariant: every logical message's length is known to both sides
 * before it is posted (sender: its counts; leader: the headers; rank: its
 * receive counts), and both split it at the same chunk boundaries.
 */
#include "xchg_twolevel_node.h"

#include <string.h>

static int64_t tl_scratch(const coll_xchg_plan *pl)
{
    const coll_nodes *T = coll_xchg_nodes(pl->ctx);
    return T ? coll_tl_layout(pl, T, NULL, NULL) : 0;
}

/* ------------------------------------------------------------------ run */

/* a rank that is not its node's leader */
static int tl_member(coll_tl_run *r)
{
    coll_xchg_plan *pl = r->pl;
    const coll_nodes *T = r->T;
    int P = pl->P, N = T->nnodes;
    int64_t *h = r->tb.hdr;
    for (int j = 0; j < P; j++) {
        h[j] = coll_sc(pl, j);
        h[P + j] = coll_rc(pl, j);
    }
    int64_t up = 0, down = 0;
    int nu = 0;
    for (int b = 0; b < N; b++) {
        if (b == r->a)
            continue;
        for (int q = T->first[b]; q < T->first[b + 1]; q++) {
            int d = T->members[q];
            r->tb.pc[nu].p = (char *)pl->sbuf + coll_sd(pl, d);
            r->tb.pc[nu++].n = coll_sc(pl, d);
            up += coll_sc(pl, d);
            down += coll_rc(pl, d);
        }
    }
    if (r->n + 1 + coll_nparts(up) + coll_nparts(down) > pl->nreq)
        return PASSION_ENOMEM;
    if (coll_net_isend(pl, h, 2 * P, MPI_INT64_T, r->leader, COLL_TL_TAG_HDR,
                       CORE_NET_COUNTED, pl->req + r->n))
        return PASSION_EMPI;
    r->n++;
    int rc = coll_tl_stream(pl, &r->tb, 1, r->tb.pc, nu, up, r->leader,
                            COLL_TL_TAG_UP, pl->req + r->n);
    r->n += (int)coll_nparts(up);
    coll_tl_count(pl, 16 * (int64_t)P + up, 0);
    /* what the other nodes send me comes from my leader, in order of
       (node, rank on it) */
    int nd = 0;
    for (int b = 0; b < N && !rc; b++) {
        if (b == r->a)
            continue;
        for (int q = T->first[b]; q < T->first[b + 1]; q++) {
            int i = T->members[q];
            r->tb.pc[nd].p = pl->rbuf + coll_rd(pl, i);
            r->tb.pc[nd++].n = coll_rc(pl, i);
        }
    }
    if (!rc)
        rc = coll_tl_stream(pl, &r->tb, 0, r->tb.pc, nd, down, r->leader,
                            COLL_TL_TAG_DOWN, pl->req + r->n);
    r->n += (int)coll_nparts(down);
    if (!rc)
        rc = coll_waitall(r->n, pl->req);
    if (r->n > 0)
        pl->st.rounds += 2;
    return rc;
}

/*
 * The leaders' exchange by A1 (tl_leaders_a1) on the sub-plan of the
 * leaders: every receive posted, then every send, one wait. A leader
 * without its blocks (fail) keeps the protocol: it sends each leader as
 * many empty parts as that leader expects and drains what comes.
 */
static int tl_leaders_run_a1(coll_xchg_plan *sub, int fail)
{
    int N = sub->P, me = sub->me, rc = PASSION_OK;
    int64_t n = 0;
    for (int b = 0; b < N; b++)
        if (b != me)
            n += coll_nparts(coll_sc(sub, b)) + coll_nparts(coll_rc(sub, b));
    MPI_Request *q = NULL;
    if (!fail && n > 0) {
        q = core_malloc(sub->ctx, (size_t)n * sizeof *q);
        if (!q) {
            fail = 1;
            rc = core_err(sub->ctx, PASSION_ENOMEM,
                          "twolevel: %lld requests of the leaders' exchange",
                          (long long)n);
        }
    }
    if (!fail) {
        sub->req = q;
        sub->nreq = (int)n;
        rc = coll_xchg_a1.run(sub);
        sub->req = NULL;
        sub->nreq = 0;
        core_free(sub->ctx, q);
        return rc;
    }
    char c = 0;
    for (int i = 1; i < N; i++) {
        int to = (me + i) % N;
        for (int64_t k = 0; k < coll_nparts(coll_sc(sub, to)); k++) {
            MPI_Request one;
            if (!coll_net_isend(sub, &c, 0, MPI_BYTE, to, COLL_TAG,
                                CORE_NET_COUNTED, &one))
                coll_waitall(1, &one);
        }
    }
    for (int i = 1; i < N; i++) {
        int from = (me - i + N) % N;
        coll_tl_drain(sub, coll_rc(sub, from), from, COLL_TAG);
    }
    return rc ? rc : PASSION_ENOMEM;
}

/* a leader's node blocks: out[b] (to node b) and in[b] (from node b) in
   one staging buffer, their counts and displacements (r->tb.sub) for
   the leaders' exchange, and the requests of its ranks' streams */
typedef struct tl_blocks {
    int64_t *osc, *osd, *irc, *ird;
    int64_t out, in; /* totals */
    char *buf, *ob, *ib;
    MPI_Request *rq;
    int nq;   /* requests of rq in use */
    int fail; /* no blocks (or incomplete ones): the protocol goes on */
} tl_blocks;

/* the blocks of the node's counts (coll_tl_node_counts), and the
   requests of its ranks' streams up and down; a refused allocation
   sets B->fail and returns its code */
static int tl_leader_alloc(coll_tl_run *r, tl_blocks *B)
{
    coll_xchg_plan *pl = r->pl;
    const coll_nodes *T = r->T;
    int N = T->nnodes;
    memset(B, 0, sizeof *B);
    B->osc = r->tb.sub;
    B->osd = B->osc + N;
    B->irc = B->osd + N;
    B->ird = B->irc + N;
    coll_tl_node_blocks(r, &B->out, &B->in);
    /* up[k] and down[k]: the logical messages of member k */
    int64_t nup = 0;
    for (int k = 1; k < r->S; k++) {
        int64_t up = 0, down = 0;
        for (int b = 0; b < N; b++)
            if (b != r->a)
                for (int q = T->first[b]; q < T->first[b + 1]; q++) {
                    up += coll_tl_hs(r, k, T->members[q]);
                    down += coll_tl_hr(r, k, T->members[q]);
                }
        nup += coll_nparts(up) + coll_nparts(down);
    }
    int64_t n = B->out + B->in;
    B->buf = coll_stage_alloc(pl, n, n);
    B->rq = nup > 0 ? core_malloc(pl->ctx, (size_t)nup * sizeof *B->rq) : NULL;
    B->ob = B->buf;
    B->ib = B->buf ? B->buf + B->out : NULL;
    if ((n > 0 && !B->buf) || (nup > 0 && !B->rq)) {
        B->fail = 1;
        return core_err(pl->ctx, PASSION_ENOMEM,
                        "twolevel: %lld bytes of node blocks (%lld left of "
                        "the budget)",
                        (long long)n, (long long)(pl->limit - pl->stage_now));
    }
    return PASSION_OK;
}

/* step 2: every rank's data for other nodes into the blocks (drained
   when there are none); rc: the code so far, returned or the first
   failure */
static int tl_leader_up(coll_tl_run *r, tl_blocks *B, int rc)
{
    coll_xchg_plan *pl = r->pl;
    for (int k = 0; k < r->S; k++) {
        int np;
        int64_t up = coll_tl_up_pieces(r, k, B->ob, B->osd, !B->fail, &np);
        if (k == 0) {
            if (!B->fail)
                coll_tl_up_own(r);
            continue;
        }
        int src = r->T->members[r->f0 + k];
        if (B->fail) {
            coll_tl_drain(pl, up, src, COLL_TL_TAG_UP);
        } else {
            int e = coll_tl_stream(pl, &r->tb, 0, r->tb.pc, np, up, src,
                                   COLL_TL_TAG_UP, B->rq + B->nq);
            if (e && !rc)
                rc = core_err(pl->ctx, e, "twolevel: receiving from rank %d",
                              src);
            B->nq += (int)coll_nparts(up);
        }
    }
    if (B->nq > 0) {
        int e = coll_waitall(B->nq, B->rq);
        if (e && !rc)
            rc = core_err(pl->ctx, e, "twolevel: receiving the node's data");
    }
    B->nq = 0;
    return rc;
}

/* the leaders' exchange (A1 or four-stage on the leaders' communicator),
   with its staging within what is left of this call's budget; its
   counters added to the call's */
static int tl_leader_net(coll_tl_run *r, tl_blocks *B, int rc)
{
    coll_xchg_plan *pl = r->pl;
    int N = r->T->nnodes;
    coll_xchg_plan sub;
    coll_tl_leaders_plan(r, &sub);
    sub.block = -1;
    sub.costs = pl->costs;
    sub.scratch = r->tb.fs;
    sub.limit = pl->limit - pl->stage_now;
    sub.base = pl->ctx->staging_now;
    if (B->fail && !coll_tl_leaders_a1(N)) /* empty blocks: the four-stage
                                          drains what comes */
        for (int b = 0; b < N; b++)
            B->osc[b] = B->osd[b] = B->irc[b] = B->ird[b] = 0;
    sub.sbuf = B->ob;
    sub.rbuf = B->ib;
    sub.sc = B->osc;
    sub.sd = B->osd;
    sub.rc = B->irc;
    sub.rd = B->ird;
    int e = coll_tl_leaders_a1(N) ? tl_leaders_run_a1(&sub, B->fail)
                             : coll_xchg_fourstage_nb.run(&sub);
    pl->st.messages += sub.st.messages;
    pl->st.bytes_sent += sub.st.bytes_sent;
    pl->st.msgs_net += sub.st.messages;
    pl->st.bytes_net += sub.st.bytes_sent;
    pl->st.rounds += sub.st.rounds;
    if (pl->stage_now + sub.st.peak_staging > pl->st.peak_staging)
        pl->st.peak_staging = pl->stage_now + sub.st.peak_staging;
    if (pl->payload_now + sub.st.peak_payload > pl->st.peak_payload)
        pl->st.peak_payload = pl->payload_now + sub.st.peak_payload;
    if (sub.limit_hit)
        pl->limit_hit = 1;
    if (e && !rc)
        rc = e;
    if (e)
        B->fail = 1; /* what arrived is incomplete; still send */
    return rc;
}

/* step 3: to every rank of the node what the other nodes sent it (empty
   parts, as many as it expects, without blocks), then the waits of the
   node's messages */
static int tl_leader_down(coll_tl_run *r, tl_blocks *B, int rc)
{
    coll_xchg_plan *pl = r->pl;
    passion_ctx *ctx = pl->ctx;
    for (int k = 0; k < r->S; k++) {
        /* my own part (k 0) is copied only from complete blocks */
        int np;
        int64_t down = coll_tl_down_pieces(
            r, k, k == 0 && B->fail ? NULL : B->ib, B->ird, &np);
        if (k == 0)
            continue;
        int dst = r->T->members[r->f0 + k];
        if (!B->ib || !B->rq) {
            char c = 0;
            for (int64_t q = 0; q < coll_nparts(down); q++) {
                MPI_Request one;
                if (!coll_net_isend(pl, &c, 0, MPI_BYTE, dst, COLL_TL_TAG_DOWN,
                                    CORE_NET_COUNTED, &one))
                    coll_waitall(1, &one);
            }
        } else {
            int e = coll_tl_stream(pl, &r->tb, 1, r->tb.pc, np, down, dst,
                                   COLL_TL_TAG_DOWN, B->rq + B->nq);
            if (e && !rc)
                rc = core_err(ctx, e, "twolevel: sending to rank %d", dst);
            B->nq += (int)coll_nparts(down);
        }
        if (down > 0)
            coll_tl_count(pl, down, 0);
    }
    int e = coll_waitall(B->nq, B->rq);
    if (e && !rc)
        rc = core_err(ctx, e, "twolevel: sending the node's data");
    e = coll_waitall(r->n, pl->req);
    if (e && !rc)
        rc = core_err(ctx, e, "twolevel: messages within the node");
    pl->st.rounds++;
    return rc;
}

/* a node's leader: its ranks' counts and data into the node's blocks
   (step 2), the leaders' exchange, the blocks out to its ranks (step 3) */
static int tl_leader(coll_tl_run *r)
{
    coll_xchg_plan *pl = r->pl;
    if (r->n + r->S - 1 > pl->nreq)
        return PASSION_ENOMEM;
    int rc = coll_tl_node_counts(r);
    if (rc)
        return core_err(pl->ctx, rc, "twolevel: receiving counts");
    tl_blocks B;
    rc = tl_leader_alloc(r, &B);
    rc = tl_leader_up(r, &B, rc);
    pl->st.rounds++;
    if (r->T->nnodes > 1)
        rc = tl_leader_net(r, &B, rc);
    rc = tl_leader_down(r, &B, rc);
    coll_stage_free(pl, B.buf, B.out + B.in, B.out + B.in);
    core_free(pl->ctx, B.rq);
    return rc;
}

static int tl_exchange(coll_xchg_plan *pl)
{
    coll_tl_run r;
    coll_tl_begin(&r, pl, coll_xchg_nodes(pl->ctx));
    if (!r.T || !pl->scratch)
        return core_err(pl->ctx, PASSION_EINVAL, "twolevel: no node table");
    coll_tl_layout(pl, r.T, &r.tb, pl->scratch);
    int rc = coll_tl_direct(&r);
    if (rc) {
        /* the pool is sized for this (2 P requests and more): an MPI
           failure, after which nothing can be kept going */
        coll_waitall(r.n, pl->req);
        return core_err(pl->ctx, rc, "twolevel: messages within the node");
    }
    if (r.T->lrank != 0) {
        rc = tl_member(&r);
        return rc ? core_err(pl->ctx, rc, "twolevel: exchange failed") : rc;
    }
    return tl_leader(&r);
}

const coll_xchg_ops coll_xchg_twolevel = {
    .id = PASSION_XCHG_TWOLEVEL,
    .agree_after = 1,
    .nodes_fused = 1,
    .scratch = tl_scratch,
    .run = tl_exchange,
};
