/*
 * xchg_nodes_agree.c - coll_nodes_agree (xchg.h): the entry agreement of
 * an exchange by nodes, in the two-level exchange's three steps, with
 * its data riding on them when every rank guessed it (spec):
 *   1. every rank sends its leader its header (the n values, whether
 *      its data comes, how many bytes) and, when its data comes, its
 *      counts and its data for other nodes (steps 1 and 2 of the run);
 *      the leader folds the headers of its node;
 *   2. the leaders send each other their node's fold, whether the whole
 *      node's data comes and, when it does, the node's block for the
 *      receiver (its length in the header: a block that does not fit
 *      what the receiver's counts expect is drained, never truncated);
 *      each leader folds them all: the agreed header;
 *   3. each leader sends every rank of its node the agreed header and
 *      whether every node's data came (the same on every rank: each
 *      leader said so in step 2); when it did, what the other nodes sent
 *      the rank (step 3 of the run), and the pairs within a node
 *      exchange directly.
 * Invariants: three rounds, N - 1 header messages between nodes per
 * leader and none from the other ranks; the two-level exchange is then
 * done (*moved, the same on every rank) but for the agreement on its
 * outcome (the dispatcher's one allreduce: a failure after a rank's
 * status left is that rank's alone), else its data
 * was drained and the dispatcher runs what it chooses. A rank whose data
 * does not come (a local failure, another guess, a leader's allocation
 * refused) still sends and receives every header, and a rank that fails
 * an MPI call goes on with every header and message it owes (no peer
 * waits for one); a leader's failure before its fold leaves goes into
 * the fold (the header's failure flag). Headers are charged by
 * the simulated network, not counted; the data is counted as the run
 * counts it.
 */
#include "xchg_twolevel_node.h"

#include <string.h>

#define TAG_AH_UP (COLL_TAG + 24) /* rank -> leader: header */
#define TAG_AH_L (COLL_TAG + 25)  /* leader -> leader: the node's fold */
#define TAG_AH_DN (COLL_TAG + 26) /* leader -> rank: the agreed header */
#define TAG_AD_L (COLL_TAG + 27)  /* leader -> leader: the node's block */
#define AH_W 32                   /* words of a header at most */

static void ah_fold(int64_t *a, const int64_t *b, int n, int nsum)
{
    for (int i = 0; i < n; i++)
        a[i] = i < nsum ? (int64_t)((uint64_t)a[i] + (uint64_t)b[i])
                        : (a[i] > b[i] ? a[i] : b[i]);
}

/* a header of n words to rank peer of comm (rank ctx_peer of the
   context): charged by the simulated network, not counted */
static int ah_send(const coll_xchg_plan *pl, const int64_t *h, int n,
                   int ctx_peer, int peer, MPI_Comm comm, int tag,
                   MPI_Request *q)
{
    core_net_charge(pl->ctx, ctx_peer, (int64_t)n * 8, 0);
    return MPI_Isend(h, n, MPI_INT64_T, peer, tag, comm, q) == MPI_SUCCESS
               ? PASSION_OK
               : PASSION_EMPI;
}

/* receive one header of n words (yielding wait) */
static int ah_recv(int64_t *h, int n, int peer, MPI_Comm comm, int tag)
{
    MPI_Request q;
    if (MPI_Irecv(h, n, MPI_INT64_T, peer, tag, comm, &q) != MPI_SUCCESS)
        return PASSION_EMPI;
    return coll_waitall(1, &q);
}

/* the pieces of this rank's data for other nodes (send) or from them
   (receive), in order of (node, rank on it); their bytes */
static int64_t ag_pieces(coll_tl_run *r, int send, int *np)
{
    coll_xchg_plan *pl = r->pl;
    const coll_nodes *T = r->T;
    int64_t tot = 0;
    *np = 0;
    for (int b = 0; b < T->nnodes; b++) {
        if (b == r->a)
            continue;
        for (int q = T->first[b]; q < T->first[b + 1]; q++) {
            int j = T->members[q];
            int64_t n = send ? coll_sc(pl, j) : coll_rc(pl, j);
            r->tb.pc[*np].p = send ? (char *)pl->sbuf + coll_sd(pl, j)
                                   : pl->rbuf + coll_rd(pl, j);
            r->tb.pc[(*np)++].n = n;
            tot += n;
        }
    }
    return tot;
}

static int ag_member(coll_tl_run *r, int64_t *v, int n, int spec, int *moved)
{
    coll_xchg_plan *pl = r->pl;
    const int P = pl->P;
    int64_t h[AH_W], d[AH_W] = {0};
    int np = 0, rc = PASSION_OK;
    int64_t up = spec ? ag_pieces(r, 1, &np) : 0;
    memcpy(h, v, (size_t)n * sizeof *h);
    h[n] = spec;
    h[n + 1] = up;
    /* my status goes out in my header: everything after it (the data the
       header announced, the waits) is posted whatever failed before, so
       that no peer waits for it, and a failure is only returned */
    MPI_Request q[2];
    if (MPI_Irecv(d, n + 1, MPI_INT64_T, r->leader, TAG_AH_DN, pl->comm,
                  &q[0]) != MPI_SUCCESS) {
        /* no agreed header can reach me: my leader still gets mine */
        MPI_Request one;
        if (!ah_send(pl, h, n + 2, r->leader, r->leader, pl->comm, TAG_AH_UP,
                     &one))
            coll_waitall(1, &one);
        return PASSION_EMPI;
    }
    if (ah_send(pl, h, n + 2, r->leader, r->leader, pl->comm, TAG_AH_UP,
                &q[1])) {
        q[1] = MPI_REQUEST_NULL;
        rc = PASSION_EMPI;
    }
    r->n = 0;
    if (spec) {
        int64_t *c = r->tb.hdr;
        for (int j = 0; j < P; j++) {
            c[j] = coll_sc(pl, j);
            c[P + j] = coll_rc(pl, j);
        }
        if (coll_net_isend(pl, c, 2 * P, MPI_INT64_T, r->leader,
                           COLL_TL_TAG_HDR, CORE_NET_COUNTED,
                           pl->req + r->n)) {
            pl->req[r->n] = MPI_REQUEST_NULL;
            rc = PASSION_EMPI;
        }
        r->n++;
        int e = coll_tl_stream(pl, &r->tb, 1, r->tb.pc, np, up, r->leader,
                               COLL_TL_TAG_UP, pl->req + r->n);
        rc = rc ? rc : e;
        r->n += (int)coll_nparts(up);
        coll_tl_count(pl, 16 * (int64_t)P + up, 0);
    }
    int e = coll_waitall(2, q);
    rc = rc ? rc : e;
    pl->st.rounds += 2;
    /* the agreed header as it came: the same on every rank (a failure
       here is this rank's, after its status left: returned, agreed by
       the caller) */
    *moved = d[n] == 1;
    memcpy(v, d, (size_t)n * sizeof *v);
    if (*moved) {
        int64_t down = ag_pieces(r, 0, &np);
        e = coll_tl_stream(pl, &r->tb, 0, r->tb.pc, np, down, r->leader,
                           COLL_TL_TAG_DOWN, pl->req + r->n);
        rc = rc ? rc : e;
        r->n += (int)coll_nparts(down);
        e = coll_tl_direct(r);
        rc = rc ? rc : e;
    }
    e = coll_waitall(r->n, pl->req);
    return rc ? rc : e;
}

/* drain what member k (rank src) sent with its header: counts and data */
static void ag_drain_member(coll_tl_run *r, int src, int64_t up)
{
    coll_drain(r->pl->comm, src, COLL_TL_TAG_HDR);
    coll_tl_drain(r->pl, up, src, COLL_TL_TAG_UP);
}

/* a leader's state in the agreement: its ranks' announcements, its
   node's blocks (when the node's data rides) and the outcome */
typedef struct ag_lead {
    int64_t *ms; /* S pairs: member k's data comes, its bytes */
    int node_ok; /* every rank of my node's data rides */
    int all_ok;  /* every node's did (the same on every leader) */
    int64_t *osc, *osd, *irc, *ird;
    int64_t out, in;
    char *buf, *ob, *ib;
    MPI_Request *rq;
    int nq;
} ag_lead;

/* drain what every member that announced its data sent */
static void ag_drain_all(coll_tl_run *r, const ag_lead *L)
{
    for (int k = 1; k < r->S; k++)
        coll_tl_drain(r->pl, L->ms[2 * k + 1], r->T->members[r->f0 + k],
                      COLL_TL_TAG_UP);
}

/* 1. the headers of my ranks, folded into v as they come. A failure
   before my status leaves (step 2) is folded into it (v[fail]), and
   every rank returns the agreed failure; every header is still received
   and sent, so that no rank waits for one. */
static int ag_node_headers(coll_tl_run *r, int64_t *v, int n, int nsum,
                           ag_lead *L)
{
    coll_xchg_plan *pl = r->pl;
    int64_t hk[AH_W];
    int rc = PASSION_OK;
    for (int k = 1; k < r->S; k++) {
        int src = r->T->members[r->f0 + k];
        hk[n] = 0;
        hk[n + 1] = 0;
        int e = ah_recv(hk, n + 2, src, pl->comm, TAG_AH_UP);
        rc = rc ? rc : e;
        ah_fold(v, hk, n, nsum);
        if (L->ms) {
            L->ms[2 * k] = hk[n];
            L->ms[2 * k + 1] = hk[n + 1];
        } else if (hk[n] == 1) {
            ag_drain_member(r, src, hk[n + 1]);
        }
        if (hk[n] != 1)
            L->node_ok = 0;
    }
    if (rc)
        L->node_ok = 0; /* the run's data does not ride */
    if (L->ms && !L->node_ok)
        for (int k = 1; k < r->S; k++)
            if (L->ms[2 * k] == 1)
                ag_drain_member(r, r->T->members[r->f0 + k], L->ms[2 * k + 1]);
    return rc;
}

/* the node's blocks, as the run lays them out, and their requests; when
   they cannot be had the node's data does not ride (drained) */
static int ag_node_blocks(coll_tl_run *r, ag_lead *L, int rc)
{
    coll_xchg_plan *pl = r->pl;
    const int N = r->T->nnodes;
    int64_t nq_max = 0;
    if (!L->node_ok)
        return rc;
    r->n = 0;
    rc = coll_tl_node_counts(r);
    if (rc) {
        /* the counts came (or not): their data does not ride */
        L->node_ok = 0;
        ag_drain_all(r, L);
        return rc;
    }
    L->osc = r->tb.sub;
    L->osd = L->osc + N;
    L->irc = L->osd + N;
    L->ird = L->irc + N;
    coll_tl_node_blocks(r, &L->out, &L->in);
    for (int b = 0; b < N; b++)
        if (b != r->a)
            nq_max += coll_nparts(L->osc[b]) + coll_nparts(L->irc[b]);
    for (int k = 1; k < r->S; k++)
        nq_max +=
            2 * coll_nparts(L->ms[2 * k + 1] > 0 ? L->ms[2 * k + 1] : 0) +
            coll_nparts(L->in);
    L->buf = coll_stage_alloc(pl, L->out + L->in, L->out + L->in);
    L->rq = nq_max > 0 ? core_malloc(pl->ctx, (size_t)nq_max * sizeof *L->rq)
                       : NULL;
    if ((L->out + L->in > 0 && !L->buf) || (nq_max > 0 && !L->rq)) {
        /* not an error of the call: the run after the agreement tries
           again within the agreed budget */
        L->node_ok = 0;
        ag_drain_all(r, L);
    }
    L->ob = L->buf;
    L->ib = L->buf ? L->buf + L->out : NULL;
    return rc;
}

/* step 2 of the run: my ranks' data for other nodes into the blocks */
static int ag_node_data(coll_tl_run *r, ag_lead *L, int rc)
{
    coll_xchg_plan *pl = r->pl;
    for (int k = 0; k < r->S && L->node_ok; k++) {
        int np;
        int64_t up = coll_tl_up_pieces(r, k, L->ob, L->osd, 1, &np);
        if (k == 0) {
            coll_tl_up_own(r);
            continue;
        }
        int src = r->T->members[r->f0 + k];
        if (up != L->ms[2 * k + 1]) { /* its header and its counts differ */
            coll_tl_drain(pl, L->ms[2 * k + 1], src, COLL_TL_TAG_UP);
            continue;
        }
        int e = coll_tl_stream(pl, &r->tb, 0, r->tb.pc, np, up, src,
                               COLL_TL_TAG_UP, L->rq + L->nq);
        if (e && !rc)
            rc = e;
        L->nq += (int)coll_nparts(up);
    }
    if (L->nq > 0) {
        int e = coll_waitall(L->nq, L->rq);
        if (e && !rc)
            rc = e;
    }
    L->nq = 0;
    return rc;
}

/* 2. the leaders: my node's fold and block to every leader, theirs
   folded into v and their blocks received where they fit; my status is
   out, so a failure from here on is mine alone (returned, agreed by the
   caller) and the protocol goes on */
static int ag_leaders(coll_tl_run *r, int64_t *v, int n, int nsum, ag_lead *L,
                      int rc)
{
    coll_xchg_plan *pl = r->pl;
    const coll_nodes *T = r->T;
    const int N = T->nnodes, a = r->a;
    coll_xchg_plan sub;
    coll_tl_leaders_plan(r, &sub);
    int64_t hl[COLL_A2A_MAX][AH_W], in[COLL_A2A_MAX][AH_W];
    MPI_Request lq[2 * COLL_A2A_MAX];
    int nl = 0;
    for (int b = 0; b < N; b++) {
        if (b == a)
            continue;
        in[b][n] = 0;
        in[b][n + 1] = -1;
        if (MPI_Irecv(in[b], n + 2, MPI_INT64_T, b, TAG_AH_L, T->leaders,
                      &lq[nl]) != MPI_SUCCESS) {
            lq[nl] = MPI_REQUEST_NULL;
            rc = rc ? rc : PASSION_EMPI;
        }
        nl++;
    }
    for (int b = 0; b < N; b++) {
        if (b == a)
            continue;
        memcpy(hl[b], v, (size_t)n * sizeof *v);
        hl[b][n] = L->node_ok;
        hl[b][n + 1] = L->node_ok ? L->osc[b] : -1;
        if (ah_send(pl, hl[b], n + 2, T->leader_rank[b], b, T->leaders,
                    TAG_AH_L, &lq[nl])) {
            lq[nl] = MPI_REQUEST_NULL;
            rc = rc ? rc : PASSION_EMPI;
        }
        nl++;
        if (L->node_ok) {
            int e = coll_isend(&sub, L->ob + L->osd[b], L->osc[b], b, TAG_AD_L,
                               L->rq + L->nq);
            rc = rc ? rc : e;
            L->nq += (int)coll_nparts(L->osc[b]);
            if (L->osc[b] > 0)
                coll_tl_count(pl, L->osc[b], 1);
        }
    }
    int e = coll_waitall(nl, lq);
    rc = rc ? rc : e;
    L->all_ok = L->node_ok;
    for (int b = 0; b < N; b++) {
        if (b == a)
            continue;
        ah_fold(v, in[b], n, nsum);
        L->all_ok = L->all_ok && in[b][n] == 1;
        int64_t len = in[b][n + 1];
        if (len < 0)
            continue;
        if (L->node_ok && len == L->irc[b]) {
            e = coll_irecv(&sub, L->ib + L->ird[b], len, b, TAG_AD_L,
                           L->rq + L->nq);
            rc = rc ? rc : e;
            L->nq += (int)coll_nparts(len);
        } else {
            coll_tl_drain(&sub, len, b, TAG_AD_L);
        }
    }
    e = coll_waitall(L->nq, L->rq);
    rc = rc ? rc : e;
    L->nq = 0;
    pl->st.rounds += 2;
    return rc;
}

/* 3. the agreed header to my ranks, and their data when every node's
   came (all_ok: the same on every leader) */
static int ag_node_down(coll_tl_run *r, const int64_t *v, int n, ag_lead *L,
                        int rc)
{
    coll_xchg_plan *pl = r->pl;
    int64_t hd[AH_W];
    int e;
    memcpy(hd, v, (size_t)n * sizeof *v);
    hd[n] = L->all_ok;
    /* one at a time (a short header completes at once; the request
       pool may not exist: a prediction, a failed preparation) */
    for (int k = 1; k < r->S; k++) {
        MPI_Request one;
        int dst = r->T->members[r->f0 + k];
        e = ah_send(pl, hd, n + 1, dst, dst, pl->comm, TAG_AH_DN, &one);
        if (!e)
            e = coll_waitall(1, &one);
        rc = rc ? rc : e;
    }
    r->n = 0;
    for (int k = 0; k < r->S && L->all_ok; k++) {
        int np;
        int64_t down = coll_tl_down_pieces(r, k, L->ib, L->ird, &np);
        if (k == 0)
            continue;
        int dst = r->T->members[r->f0 + k];
        e = coll_tl_stream(pl, &r->tb, 1, r->tb.pc, np, down, dst,
                           COLL_TL_TAG_DOWN, L->rq + L->nq);
        rc = rc ? rc : e;
        L->nq += (int)coll_nparts(down);
        if (down > 0)
            coll_tl_count(pl, down, 0);
    }
    if (L->all_ok) {
        e = coll_tl_direct(r);
        rc = rc ? rc : e;
    }
    e = coll_waitall(L->nq, L->rq);
    rc = rc ? rc : e;
    e = coll_waitall(r->n, pl->req);
    rc = rc ? rc : e;
    pl->st.rounds++;
    return rc;
}

/* a node's leader in the agreement: steps 1 to 3 */
static int ag_leader(coll_tl_run *r, int64_t *v, int n, int nsum, int fail,
                     int spec, int *moved)
{
    coll_xchg_plan *pl = r->pl;
    ag_lead L;
    memset(&L, 0, sizeof L);
    L.node_ok = spec;
    L.ms = spec ? r->tb.ms : NULL;
    *moved = 0;
    int rc = ag_node_headers(r, v, n, nsum, &L);
    rc = ag_node_blocks(r, &L, rc);
    rc = ag_node_data(r, &L, rc);
    if (rc) {
        /* before my status: the failure goes into it */
        v[fail] = v[fail] > 1 ? v[fail] : 1;
        L.node_ok = 0;
    }
    rc = ag_leaders(r, v, n, nsum, &L, rc);
    rc = ag_node_down(r, v, n, &L, rc);
    coll_stage_free(pl, L.buf, L.out + L.in, L.out + L.in);
    core_free(pl->ctx, L.rq);
    *moved = L.all_ok;
    return rc;
}

int coll_nodes_agree(coll_xchg_plan *pl, int64_t *v, int n, int nsum, int fail,
                     int spec, int *moved)
{
    coll_tl_run r;
    *moved = 0;
    coll_tl_begin(&r, pl, coll_xchg_nodes(pl->ctx));
    if (!r.T || n + 2 > AH_W || r.T->nnodes > COLL_A2A_MAX) {
        v[fail] = 1;
        return PASSION_EINVAL; /* the same on every rank */
    }
    /* the data rides only with the run's tables and requests at hand */
    spec = spec && pl->scratch && pl->req;
    if (spec)
        coll_tl_layout(pl, r.T, &r.tb, pl->scratch);
    return r.T->lrank != 0 ? ag_member(&r, v, n, spec, moved)
                           : ag_leader(&r, v, n, nsum, fail, spec, moved);
}
