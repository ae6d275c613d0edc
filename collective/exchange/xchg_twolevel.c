/*
 * xchg_twolevel.c - the two-level (node-aware) exchange: the ranks of a
 * node combine what leaves the node at the node's leader, the leaders
 * exchange it among themselves on the leaders' communicator, by A1 (one
 * round, N - 1 messages each) up to 9 nodes and above by the four-stage
 * algorithm of Liu, Wang and Prasanna (seeds/001, section 3.2;
 * non-blocking, their 3.4), and each leader distributes what arrived to
 * the ranks of its node. Messages between nodes then depend on the number
 * of nodes N, not of ranks P: a leader sends N - 1 messages, or 2(C-1) +
 * 2(R-1) for a C x R grid of N nodes (C = ceil(sqrt N)), over the
 * network, where a flat exchange sends about P - P/N from every rank. The idea is the
 * hierarchical all-to-all of SMP clusters (Sistare, vandeVaart and
 * Loh, "Optimization of MPI collectives on clusters of large-scale SMPs",
 * SC 1999; Kumar et al.'s node leaders in "Optimization of all-to-all
 * communication on the Blue Gene/L supercomputer", ICPP 2008).
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
 * Invariant: every logical message's length is known to both sides
 * before it is posted (sender: its counts; leader: the headers; rank: its
 * receive counts), and both split it at the same chunk boundaries.
 */
#include "xchg.h"

#include <math.h>
#include <string.h>

#define TAG_HDR (COLL_TAG + 20)  /* rank -> leader: counts */
#define TAG_UP (COLL_TAG + 21)   /* rank -> leader: data for other nodes */
#define TAG_DOWN (COLL_TAG + 22) /* leader -> rank: data from other nodes */
#define TAG_NODE (COLL_TAG + 23) /* two ranks of one node */

/* ---------------------------------------------------------------- model */

/* bytes a leader sends to (receives from) other nodes at most */
static double tl_leader_bytes(const coll_xchg_shape *s)
{
    int S = s->node_max > 0 ? s->node_max : s->procs;
    double b = (double)S * (double)s->lmax_x;
    return b < (double)s->total ? b : (double)s->total;
}

static coll_xchg_shape tl_sub_shape(const coll_xchg_shape *s)
{
    coll_xchg_shape t = {0};
    int64_t B = (int64_t)tl_leader_bytes(s);
    t.procs = s->nodes > 1 ? s->nodes : 1;
    t.block = -1;
    t.lmax = t.lmax_x = t.mmax = B;
    t.total = B * t.procs < s->total ? B * t.procs : s->total;
    t.nodes = t.procs;
    t.node_max = 1;
    return t;
}

/* messages and bytes a rank of a C x R grid sends over its four stages
   (each stage moves the part of its data that leaves the row / column) */
static void fs_grid_net(int P, double lmax, double *msgs, double *bytes)
{
    coll_grid g = coll_grid_make(P);
    *msgs = P > 1 ? 2.0 * (g.C - 1) + 2.0 * (g.R - 1) : 0;
    *bytes = P > 1 ? lmax * (2.0 * (g.C - 1) / g.C + 2.0 * (g.R - 1) / g.R)
                   : 0;
}

/* The leaders' exchange: A1 (one round, N - 1 messages per leader, no
   staging) while it sends no more messages between nodes than the
   four-stage's 2(C - 1) + 2(R - 1) in four dependent stages (up to 9
   nodes), else the four-stage. A function of N alone: every leader
   takes the same. */
static int tl_leaders_a1(int N)
{
    double m, b;
    fs_grid_net(N, 1.0, &m, &b);
    return N <= 2 || (double)(N - 1) <= m;
}

static void tl_net(const coll_xchg_shape *s, int radix, double *msgs,
                   double *bytes)
{
    (void)radix;
    int N = s->nodes > 1 ? s->nodes : 1;
    if (N > 1 && tl_leaders_a1(N)) {
        *msgs = N - 1;
        *bytes = tl_leader_bytes(s);
        return;
    }
    fs_grid_net(N, tl_leader_bytes(s), msgs, bytes);
}

static double tl_model(const coll_xchg_costs *c, const coll_xchg_shape *s,
                       int *radix)
{
    *radix = 0;
    int P = s->procs, N = s->nodes, S = s->node_max;
    if (N < 2 || P <= 1)
        return HUGE_VAL; /* one node: only a detour through the leader */
    double B = tl_leader_bytes(s);
    if (coll_agree_by_nodes(P, N)) {
        /* its data rides on the agreement's three rounds
           (coll_nodes_agree): the leader's messages (counts and data in
           and out, the blocks), its bytes through them (in, the blocks,
           out), the pairs within the node and the copies; no round of
           its own, then the outcome's agreement over all ranks (a
           failure after a rank's status left) */
        return (2 * (double)(S - 1) + (double)(N - 1)) * c->msg +
               3 * c->byte * B + (double)(S - 1) * c->msg +
               c->copy * (double)s->lmax + coll_agree_cost(c, P);
    }
    coll_xchg_shape sub = tl_sub_shape(s);
    int r = 0;
    double t = tl_leaders_a1(N) ? coll_xchg_a1.model(c, &sub, &r)
                                : coll_xchg_fourstage_nb.model(c, &sub, &r);
    /* steps 1 and 3: one round each; the leader receives (sends) S - 1
       messages and B bytes; the direct pairs of the node overlap step 1 */
    t += 2 * (c->round + (double)(S - 1) * c->msg + c->byte * B);
    t += (double)(S - 1) * c->msg;
    t += c->copy * (double)s->lmax;
    /* the outcome's agreement over all ranks */
    t += coll_agree_cost(c, P);
    return t;
}

static int64_t tl_staging(const coll_xchg_shape *s, int radix)
{
    (void)radix;
    if (s->procs <= 1)
        return 0;
    coll_xchg_shape sub = tl_sub_shape(s);
    int64_t B = (int64_t)tl_leader_bytes(s);
    if (tl_leaders_a1(sub.procs))
        return 2 * B;
    return 2 * B + coll_xchg_staging(PASSION_XCHG_FOURSTAGE_NB, 0, &sub);
}

/* ------------------------------------------------------------- streams */

typedef struct tl_piece {
    char *p;
    int64_t n;
} tl_piece;

/* the tables of a run, carved from pl->scratch */
typedef struct tl_tabs {
    int64_t *hdr;   /* leader: S rows of 2 P counts; else one row */
    tl_piece *pc;   /* P + 1 pieces of a stream */
    int *lens;      /* P + 2 */
    MPI_Aint *disp; /* P + 2 */
    int64_t *sub;   /* leader: 4 N counts of the leaders' exchange */
    void *fs;       /* leader: the four-stage's tables */
    int64_t *ms;    /* leader: S pairs (data comes, its bytes) of the
                       agreement by nodes */
} tl_tabs;

static int64_t tl_fs_scratch(int N)
{
    coll_xchg_plan f;
    memset(&f, 0, sizeof f);
    f.P = N;
    return N > 1 ? coll_xchg_fourstage_nb.scratch(&f) : 0;
}

static int64_t tl_layout(const coll_xchg_plan *pl, const coll_nodes *T,
                         tl_tabs *tb, char *base)
{
    int P = pl->P, a = T->node, N = T->nnodes;
    int S = T->first[a + 1] - T->first[a], lead = T->lrank == 0;
    int64_t pos = 0;
#define TL_TAKE(ptr, type, n)                                               \
    do {                                                                    \
        pos = (pos + 15) & ~(int64_t)15;                                    \
        if (tb)                                                             \
            (ptr) = (type *)(void *)(base + pos);                           \
        pos += (int64_t)(n) * (int64_t)sizeof(type);                        \
    } while (0)
    int64_t *hdr = NULL, *sub = NULL;
    tl_piece *pc = NULL;
    int *lens = NULL;
    MPI_Aint *disp = NULL;
    char *fs = NULL;
    TL_TAKE(hdr, int64_t, 2 * (int64_t)P * (lead ? S : 1));
    TL_TAKE(pc, tl_piece, P + 1);
    TL_TAKE(lens, int, P + 2);
    TL_TAKE(disp, MPI_Aint, P + 2);
    TL_TAKE(sub, int64_t, lead ? 4 * (int64_t)N : 0);
    TL_TAKE(fs, char, lead ? tl_fs_scratch(N) : 0);
    int64_t *ms = NULL;
    TL_TAKE(ms, int64_t, lead ? 2 * (int64_t)S : 0);
#undef TL_TAKE
    if (tb) {
        tb->hdr = hdr;
        tb->pc = pc;
        tb->lens = lens;
        tb->disp = disp;
        tb->sub = sub;
        tb->fs = fs;
        tb->ms = ms;
    }
    return pos + 16;
}

static int64_t tl_scratch(const coll_xchg_plan *pl)
{
    const coll_nodes *T = coll_xchg_nodes(pl->ctx);
    return T ? tl_layout(pl, T, NULL, NULL) : 0;
}

/*
 * Post one logical message of n pieces (total bytes) to or from peer: the
 * stream of the pieces cut at multiples of the chunk limit, one MPI
 * message per part (an hindexed type over the pieces it covers). Uses
 * coll_nparts(total) requests from req.
 */
static int tl_stream(const coll_xchg_plan *pl, tl_tabs *tb, int send,
                     const tl_piece *v, int n, int64_t total, int peer,
                     int tag, MPI_Request *req)
{
    int64_t chunk = coll_xchg_chunk();
    int64_t lo = 0, part = 0;
    int i = 0;
    int64_t ipos = 0; /* stream position where piece i starts */
    while (lo < total) {
        int64_t hi = lo + chunk < total ? lo + chunk : total;
        int k = 0;
        /* pieces i.. overlapping [lo, hi) */
        int j = i;
        int64_t jpos = ipos;
        while (j < n && jpos < hi) {
            int64_t a = jpos > lo ? jpos : lo;
            int64_t b = jpos + v[j].n < hi ? jpos + v[j].n : hi;
            if (b > a) {
                MPI_Get_address(v[j].p + (a - jpos), &tb->disp[k]);
                tb->lens[k++] = (int)(b - a);
            }
            if (jpos + v[j].n <= hi) {
                jpos += v[j].n;
                j++;
                i = j;
                ipos = jpos;
            } else {
                break;
            }
        }
        MPI_Datatype t;
        int err = MPI_Type_create_hindexed(k, tb->lens, tb->disp, MPI_BYTE,
                                           &t) != MPI_SUCCESS ||
                  MPI_Type_commit(&t) != MPI_SUCCESS;
        if (!err)
            err = send ? coll_net_isend(pl, MPI_BOTTOM, 1, t, peer, tag,
                                        CORE_NET_COUNTED, &req[part]) != 0
                       : MPI_Irecv(MPI_BOTTOM, 1, t, peer, tag, pl->comm,
                                   &req[part]) != MPI_SUCCESS;
        if (!err)
            MPI_Type_free(&t);
        if (err)
            return PASSION_EMPI;
        part++;
        lo = hi;
    }
    return PASSION_OK;
}

/* receive the parts of a message of total bytes without a place for them
   (coll_drain) */
static void tl_drain(const coll_xchg_plan *pl, int64_t total, int peer,
                     int tag)
{
    for (int64_t q = 0; q < coll_nparts(total); q++)
        coll_drain(pl->comm, peer, tag);
}

/* ------------------------------------------------------------------ run */

typedef struct tl_run_t {
    coll_xchg_plan *pl;
    const coll_nodes *T;
    tl_tabs tb;
    int a, S, f0, leader; /* my node, its size, first member, its leader */
    int n;                /* requests in use in pl->req */
} tl_run_t;

/* step 1's direct pairs of the node, and the self message */
static int tl_direct(tl_run_t *r)
{
    coll_xchg_plan *pl = r->pl;
    const coll_nodes *T = r->T;
    int rc = PASSION_OK;
    for (int k = 0; k < r->S && !rc; k++) {
        int j = T->members[r->f0 + k];
        if (j == pl->me)
            continue;
        int64_t b = coll_rc(pl, j);
        if (r->n + coll_nparts(b) > pl->nreq)
            return PASSION_ENOMEM;
        rc = coll_irecv(pl, pl->rbuf + coll_rd(pl, j), b, j, TAG_NODE,
                        pl->req + r->n);
        r->n += (int)coll_nparts(b);
    }
    for (int k = 0; k < r->S && !rc; k++) {
        int j = T->members[r->f0 + k];
        if (j == pl->me)
            continue;
        int64_t b = coll_sc(pl, j);
        if (r->n + coll_nparts(b) > pl->nreq)
            return PASSION_ENOMEM;
        rc = coll_isend(pl, pl->sbuf + coll_sd(pl, j), b, j, TAG_NODE,
                        pl->req + r->n);
        r->n += (int)coll_nparts(b);
        if (b > 0) {
            pl->st.messages++;
            pl->st.bytes_sent += b;
            pl->st.msgs_node++;
            pl->st.bytes_node += b;
        }
    }
    coll_copy_self(pl);
    return rc;
}

/* a rank that is not its node's leader */
static int tl_member(tl_run_t *r)
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
    if (coll_net_isend(pl, h, 2 * P, MPI_INT64_T, r->leader, TAG_HDR,
                       CORE_NET_COUNTED, pl->req + r->n))
        return PASSION_EMPI;
    r->n++;
    int rc = tl_stream(pl, &r->tb, 1, r->tb.pc, nu, up, r->leader, TAG_UP,
                       pl->req + r->n);
    r->n += (int)coll_nparts(up);
    pl->st.messages++;
    pl->st.bytes_sent += 16 * (int64_t)P + up;
    pl->st.msgs_node++;
    pl->st.bytes_node += 16 * (int64_t)P + up;
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
        rc = tl_stream(pl, &r->tb, 0, r->tb.pc, nd, down, r->leader,
                       TAG_DOWN, pl->req + r->n);
    r->n += (int)coll_nparts(down);
    if (!rc)
        rc = coll_waitall(r->n, pl->req);
    if (r->n > 0)
        pl->st.rounds += 2;
    return rc;
}

/* counts of member k (local rank) of my node */
static inline int64_t hs(const tl_run_t *r, int k, int d)
{
    return r->tb.hdr[(int64_t)k * 2 * r->pl->P + d];
}
static inline int64_t hr(const tl_run_t *r, int k, int i)
{
    return r->tb.hdr[(int64_t)k * 2 * r->pl->P + r->pl->P + i];
}

/* the counts of my node's ranks into r->tb.hdr (hs, hr): mine from the
   plan, each member's as it sends them (TAG_HDR), on requests from
   pl->req + r->n; r->n as it was */
static int tl_node_counts(tl_run_t *r)
{
    coll_xchg_plan *pl = r->pl;
    const coll_nodes *T = r->T;
    const int P = pl->P;
    int64_t *h = r->tb.hdr;
    for (int j = 0; j < P; j++) {
        h[j] = coll_sc(pl, j);
        h[P + j] = coll_rc(pl, j);
    }
    int rc = PASSION_OK, h0 = r->n;
    for (int k = 1; k < r->S && !rc; k++)
        if (MPI_Irecv(h + (int64_t)k * 2 * P, 2 * P, MPI_INT64_T,
                      T->members[r->f0 + k], TAG_HDR, pl->comm,
                      pl->req + r->n++) != MPI_SUCCESS)
            rc = PASSION_EMPI;
    if (!rc)
        rc = coll_waitall(r->n - h0, pl->req + h0);
    r->n = h0;
    return rc;
}

/* the node's blocks for the leaders' exchange, from its ranks' counts
   (tl_node_counts): out[b] (to node b) and in[b] (from node b), their
   counts and displacements in r->tb.sub (osc, osd, irc, ird, N each);
   *out, *in: their totals */
static void tl_node_blocks(tl_run_t *r, int64_t *out, int64_t *in)
{
    const coll_nodes *T = r->T;
    const int N = T->nnodes, S = r->S, a = r->a;
    int64_t *osc = r->tb.sub, *osd = osc + N, *irc = osd + N, *ird = irc + N;
    int64_t OUT = 0, IN = 0;
    for (int b = 0; b < N; b++) {
        osc[b] = irc[b] = 0;
        if (b == a)
            continue;
        for (int q = T->first[b]; q < T->first[b + 1]; q++) {
            int j = T->members[q];
            for (int k = 0; k < S; k++) {
                osc[b] += hs(r, k, j);
                irc[b] += hr(r, k, j);
            }
        }
        osd[b] = OUT;
        ird[b] = IN;
        OUT += osc[b];
        IN += irc[b];
    }
    osd[a] = OUT;
    ird[a] = IN;
    *out = OUT;
    *in = IN;
}

/* step 2 for member k of my node: the bytes it sends me for other nodes
   (returned) and, if set, where they go, one piece per node b != a in
   r->tb.pc[0..*np) (*np 0 otherwise): the segment of (member k, node b)
   in block b (ob + osd[b]) starts after those of members < k */
static int64_t tl_up_pieces(tl_run_t *r, int k, char *ob,
                            const int64_t *osd, int set, int *np)
{
    const coll_nodes *T = r->T;
    int64_t up = 0;
    *np = 0;
    for (int b = 0; b < T->nnodes; b++) {
        if (b == r->a)
            continue;
        int64_t seg = 0, len = 0;
        for (int q = T->first[b]; q < T->first[b + 1]; q++) {
            int d = T->members[q];
            for (int k2 = 0; k2 < k; k2++)
                seg += hs(r, k2, d);
            len += hs(r, k, d);
        }
        if (set) {
            r->tb.pc[*np].p = ob + osd[b] + seg;
            r->tb.pc[(*np)++].n = len;
        }
        up += len;
    }
    return up;
}

/* step 2 for member 0 (the leader): its own data for other nodes, copied
   from the send buffer into the pieces tl_up_pieces(r, 0, ...) set */
static void tl_up_own(tl_run_t *r)
{
    const coll_xchg_plan *pl = r->pl;
    const coll_nodes *T = r->T;
    for (int b = 0, i = 0; b < T->nnodes; b++) {
        if (b == r->a)
            continue;
        char *p = r->tb.pc[i++].p;
        for (int q = T->first[b]; q < T->first[b + 1]; q++) {
            int d = T->members[q];
            int64_t n = coll_sc(pl, d);
            if (n > 0)
                memcpy(p, pl->sbuf + coll_sd(pl, d), (size_t)n);
            p += n;
        }
    }
}

/* step 3 for member k of my node: the bytes the other nodes sent it
   (returned) and where they sit in the incoming blocks: in block b (ib +
   ird[b]) the data of (source i of b, member k) sit after i's data for
   members < k and after all the data of the sources before i. Member
   0's (the leader's own) are copied into the receive buffer; any other
   member's become one piece per source in r->tb.pc[0..*np). Neither
   with ib NULL (*np 0). */
static int64_t tl_down_pieces(tl_run_t *r, int k, char *ib,
                              const int64_t *ird, int *np)
{
    const coll_xchg_plan *pl = r->pl;
    const coll_nodes *T = r->T;
    int64_t down = 0;
    *np = 0;
    for (int b = 0; b < T->nnodes; b++) {
        if (b == r->a)
            continue;
        int64_t pos = 0;
        for (int q = T->first[b]; q < T->first[b + 1]; q++) {
            int i = T->members[q];
            int64_t before = 0;
            for (int k2 = 0; k2 < k; k2++)
                before += hr(r, k2, i);
            int64_t len = hr(r, k, i);
            if (ib && k == 0) {
                if (len > 0)
                    memcpy(pl->rbuf + coll_rd(pl, i),
                           ib + ird[b] + pos + before, (size_t)len);
            } else if (ib) {
                r->tb.pc[*np].p = ib + ird[b] + pos + before;
                r->tb.pc[(*np)++].n = len;
            }
            down += len;
            for (int k2 = 0; k2 < r->S; k2++)
                pos += hr(r, k2, i);
        }
    }
    return down;
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
        tl_drain(sub, coll_rc(sub, from), from, COLL_TAG);
    }
    return rc ? rc : PASSION_ENOMEM;
}

static int tl_leader(tl_run_t *r)
{
    coll_xchg_plan *pl = r->pl;
    passion_ctx *ctx = pl->ctx;
    const coll_nodes *T = r->T;
    int N = T->nnodes, S = r->S, a = r->a;
    int rc = PASSION_OK, fail = 0;
    /* the counts of my ranks */
    if (r->n + S - 1 > pl->nreq)
        return PASSION_ENOMEM;
    rc = tl_node_counts(r);
    if (rc)
        return core_err(ctx, rc, "twolevel: receiving counts");
    /* the blocks: out[b] (to node b) and in[b] (from node b); sub holds
       their counts and displacements for the leaders' exchange */
    int64_t *osc = r->tb.sub, *osd = osc + N, *irc = osd + N, *ird = irc + N;
    int64_t OUT, IN;
    tl_node_blocks(r, &OUT, &IN);
    /* up[k] and down[k]: the logical messages of member k */
    int64_t nup = 0;
    for (int k = 1; k < S; k++) {
        int64_t up = 0, down = 0;
        for (int b = 0; b < N; b++)
            if (b != a)
                for (int q = T->first[b]; q < T->first[b + 1]; q++) {
                    up += hs(r, k, T->members[q]);
                    down += hr(r, k, T->members[q]);
                }
        nup += coll_nparts(up) + coll_nparts(down);
    }
    char *buf = coll_stage_alloc(pl, OUT + IN, OUT + IN);
    MPI_Request *rq =
        nup > 0 ? core_malloc(ctx, (size_t)nup * sizeof *rq) : NULL;
    if ((OUT + IN > 0 && !buf) || (nup > 0 && !rq)) {
        fail = 1;
        rc = core_err(ctx, PASSION_ENOMEM,
                      "twolevel: %lld bytes of node blocks (%lld left of "
                      "the budget)",
                      (long long)(OUT + IN),
                      (long long)(pl->limit - pl->stage_now));
    }
    char *ob = buf, *ib = buf ? buf + OUT : NULL;
    int nq = 0;
    /* step 2: every rank's data for other nodes into the blocks; the
       segment of (member k, node b) starts after those of members < k */
    for (int k = 0; k < S; k++) {
        int np;
        int64_t up = tl_up_pieces(r, k, ob, osd, !fail, &np);
        if (k == 0) {
            if (!fail)
                tl_up_own(r);
            continue;
        }
        int src = T->members[r->f0 + k];
        if (fail) {
            tl_drain(pl, up, src, TAG_UP);
        } else {
            int e = tl_stream(pl, &r->tb, 0, r->tb.pc, np, up, src, TAG_UP,
                              rq + nq);
            if (e && !rc)
                rc = core_err(ctx, e, "twolevel: receiving from rank %d",
                              src);
            nq += (int)coll_nparts(up);
        }
    }
    if (nq > 0) {
        int e = coll_waitall(nq, rq);
        if (e && !rc)
            rc = core_err(ctx, e, "twolevel: receiving the node's data");
    }
    nq = 0;
    pl->st.rounds++;
    /* the leaders' exchange: four-stage on the leaders' communicator,
       with its staging within what is left of this call's budget */
    if (N > 1) {
        coll_xchg_plan sub;
        memset(&sub, 0, sizeof sub);
        sub.ctx = ctx;
        sub.comm = T->leaders;
        sub.P = N;
        sub.me = a;
        sub.block = -1;
        sub.costs = pl->costs;
        sub.scratch = r->tb.fs;
        sub.req = NULL;
        sub.nreq = 0;
        sub.ranks = T->leader_rank;
        sub.limit = pl->limit - pl->stage_now;
        sub.base = ctx->staging_now;
        if (fail && !tl_leaders_a1(N)) /* empty blocks: the four-stage
                                           drains what comes */
            for (int b = 0; b < N; b++)
                osc[b] = osd[b] = irc[b] = ird[b] = 0;
        sub.sbuf = ob;
        sub.rbuf = ib;
        sub.sc = osc;
        sub.sd = osd;
        sub.rc = irc;
        sub.rd = ird;
        int e = tl_leaders_a1(N) ? tl_leaders_run_a1(&sub, fail)
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
            fail = 1; /* what arrived is incomplete; still send */
    }
    /* step 3: to every rank of the node what the other nodes sent it.
       In block b (from node b) the data of (source i of b, my member k)
       sits after i's earlier destinations and the sources before i. */
    for (int k = 0; k < S; k++) {
        /* my own part (k 0) is copied only from complete blocks */
        int np;
        int64_t down =
            tl_down_pieces(r, k, k == 0 && fail ? NULL : ib, ird, &np);
        if (k == 0)
            continue;
        int dst = T->members[r->f0 + k];
        if (!ib || !rq) {
            /* no data to send: as many empty parts as the rank expects */
            char c = 0;
            for (int64_t q = 0; q < coll_nparts(down); q++) {
                MPI_Request one;
                if (!coll_net_isend(pl, &c, 0, MPI_BYTE, dst, TAG_DOWN,
                                    CORE_NET_COUNTED, &one))
                    coll_waitall(1, &one);
            }
        } else {
            int e = tl_stream(pl, &r->tb, 1, r->tb.pc, np, down, dst,
                              TAG_DOWN, rq + nq);
            if (e && !rc)
                rc = core_err(ctx, e, "twolevel: sending to rank %d", dst);
            nq += (int)coll_nparts(down);
        }
        if (down > 0) {
            pl->st.messages++;
            pl->st.bytes_sent += down;
            pl->st.msgs_node++;
            pl->st.bytes_node += down;
        }
    }
    int e = coll_waitall(nq, rq);
    if (e && !rc)
        rc = core_err(ctx, e, "twolevel: sending the node's data");
    e = coll_waitall(r->n, pl->req);
    if (e && !rc)
        rc = core_err(ctx, e, "twolevel: messages within the node");
    pl->st.rounds++;
    coll_stage_free(pl, buf, OUT + IN, OUT + IN);
    core_free(ctx, rq);
    return rc;
}

static int tl_exchange(coll_xchg_plan *pl)
{
    tl_run_t r;
    memset(&r, 0, sizeof r);
    r.pl = pl;
    r.T = coll_xchg_nodes(pl->ctx);
    if (!r.T || !pl->scratch)
        return core_err(pl->ctx, PASSION_EINVAL, "twolevel: no node table");
    r.a = r.T->node;
    r.f0 = r.T->first[r.a];
    r.S = r.T->first[r.a + 1] - r.f0;
    r.leader = r.T->members[r.f0];
    tl_layout(pl, r.T, &r.tb, pl->scratch);
    int rc = tl_direct(&r);
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

/* ------------------------------------------------- the agreement by nodes */

/*
 * coll_nodes_agree (xchg.h): the entry agreement of an exchange by nodes,
 * in the two-level exchange's three steps, with its data riding on them
 * when every rank guessed it (spec):
 *   1. every rank sends its leader its header (the V_N values, whether
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
 * Three rounds, N - 1 header messages between nodes per leader and none
 * from the other ranks (before: an allreduce and a broadcast within the
 * node around the leaders' round, five rounds at four ranks a node, and
 * the run's three and its outcome's allreduce after); the two-level
 * exchange is then done (*moved, the same on every rank) but for the
 * agreement on its outcome (the dispatcher's one allreduce: a failure
 * after a rank's status left is that rank's alone), else its data
 * was drained and the dispatcher runs what it chooses. A rank whose data
 * does not come (a local failure, another guess, a leader's allocation
 * refused) still sends and receives every header, and a rank that fails
 * an MPI call goes on with every header and message it owes (no peer
 * waits for one); a leader's failure before its fold leaves goes into
 * the fold (the header's failure flag). Headers are charged by
 * the simulated network, not counted; the data is counted as the run
 * counts it.
 */
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
static int64_t ag_pieces(tl_run_t *r, int send, int *np)
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

static int ag_member(tl_run_t *r, int64_t *v, int n, int spec, int *moved)
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
        if (!ah_send(pl, h, n + 2, r->leader, r->leader, pl->comm,
                     TAG_AH_UP, &one))
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
        if (coll_net_isend(pl, c, 2 * P, MPI_INT64_T, r->leader, TAG_HDR,
                           CORE_NET_COUNTED, pl->req + r->n)) {
            pl->req[r->n] = MPI_REQUEST_NULL;
            rc = PASSION_EMPI;
        }
        r->n++;
        int e = tl_stream(pl, &r->tb, 1, r->tb.pc, np, up, r->leader, TAG_UP,
                          pl->req + r->n);
        rc = rc ? rc : e;
        r->n += (int)coll_nparts(up);
        pl->st.messages++;
        pl->st.bytes_sent += 16 * (int64_t)P + up;
        pl->st.msgs_node++;
        pl->st.bytes_node += 16 * (int64_t)P + up;
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
        e = tl_stream(pl, &r->tb, 0, r->tb.pc, np, down, r->leader, TAG_DOWN,
                      pl->req + r->n);
        rc = rc ? rc : e;
        r->n += (int)coll_nparts(down);
        e = tl_direct(r);
        rc = rc ? rc : e;
    }
    e = coll_waitall(r->n, pl->req);
    return rc ? rc : e;
}

/* drain what member k (rank src) sent with its header: counts and data */
static void ag_drain_member(tl_run_t *r, int src, int64_t up)
{
    coll_drain(r->pl->comm, src, TAG_HDR);
    tl_drain(r->pl, up, src, TAG_UP);
}

static int ag_leader(tl_run_t *r, int64_t *v, int n, int nsum, int fail,
                     int spec, int *moved)
{
    coll_xchg_plan *pl = r->pl;
    passion_ctx *ctx = pl->ctx;
    const coll_nodes *T = r->T;
    const int N = T->nnodes, S = r->S, a = r->a;
    int rc = PASSION_OK, node_ok = spec;
    int64_t hk[AH_W];
    int64_t *ms = spec ? r->tb.ms : NULL;
    *moved = 0;
    /* 1. the headers of my ranks, folded as they come. A failure before
       my status leaves (step 2) is folded into it (v[fail]), and every
       rank returns the agreed failure; every header is still received
       and sent, so that no rank waits for one. */
    for (int k = 1; k < S; k++) {
        int src = T->members[r->f0 + k];
        hk[n] = 0;
        hk[n + 1] = 0;
        int e = ah_recv(hk, n + 2, src, pl->comm, TAG_AH_UP);
        rc = rc ? rc : e;
        ah_fold(v, hk, n, nsum);
        if (ms) {
            ms[2 * k] = hk[n];
            ms[2 * k + 1] = hk[n + 1];
        } else if (hk[n] == 1) {
            ag_drain_member(r, src, hk[n + 1]);
        }
        if (hk[n] != 1)
            node_ok = 0;
    }
    if (rc)
        node_ok = 0; /* the run's data does not ride */
    if (ms && !node_ok)
        for (int k = 1; k < S; k++)
            if (ms[2 * k] == 1)
                ag_drain_member(r, T->members[r->f0 + k], ms[2 * k + 1]);
    /* the node's blocks, as the run lays them out */
    int64_t *osc = node_ok ? r->tb.sub : NULL, *osd = NULL, *irc = NULL,
            *ird = NULL;
    int64_t OUT = 0, IN = 0, nq_max = 0;
    if (node_ok) {
        r->n = 0;
        rc = tl_node_counts(r);
        if (rc) {
            /* the counts came (or not): their data does not ride */
            node_ok = 0;
            osc = NULL;
            for (int k = 1; k < S; k++)
                tl_drain(pl, ms[2 * k + 1], T->members[r->f0 + k], TAG_UP);
        }
    }
    if (node_ok) {
        osd = osc + N;
        irc = osd + N;
        ird = irc + N;
        tl_node_blocks(r, &OUT, &IN);
        for (int b = 0; b < N; b++)
            if (b != a)
                nq_max += coll_nparts(osc[b]) + coll_nparts(irc[b]);
        for (int k = 1; k < S; k++)
            nq_max += 2 * coll_nparts(ms[2 * k + 1] > 0 ? ms[2 * k + 1] : 0) +
                      coll_nparts(IN);
    }
    char *buf = NULL;
    MPI_Request *rq = NULL;
    if (node_ok) {
        buf = coll_stage_alloc(pl, OUT + IN, OUT + IN);
        rq = nq_max > 0 ? core_malloc(ctx, (size_t)nq_max * sizeof *rq)
                        : NULL;
        if ((OUT + IN > 0 && !buf) || (nq_max > 0 && !rq)) {
            /* not an error of the call: the run after the agreement
               tries again within the agreed budget */
            node_ok = 0;
            for (int k = 1; k < S; k++)
                tl_drain(pl, ms[2 * k + 1], T->members[r->f0 + k], TAG_UP);
        }
    }
    char *ob = buf, *ib = buf ? buf + OUT : NULL;
    int nq = 0;
    /* step 2 of the run: my ranks' data for other nodes into the blocks */
    for (int k = 0; k < S && node_ok; k++) {
        int np;
        int64_t up = tl_up_pieces(r, k, ob, osd, 1, &np);
        if (k == 0) {
            tl_up_own(r);
            continue;
        }
        int src = T->members[r->f0 + k];
        if (up != ms[2 * k + 1]) { /* its header and its counts differ */
            tl_drain(pl, ms[2 * k + 1], src, TAG_UP);
            continue;
        }
        int e = tl_stream(pl, &r->tb, 0, r->tb.pc, np, up, src, TAG_UP,
                          rq + nq);
        if (e && !rc)
            rc = e;
        nq += (int)coll_nparts(up);
    }
    if (nq > 0) {
        int e = coll_waitall(nq, rq);
        if (e && !rc)
            rc = e;
    }
    nq = 0;
    if (rc) {
        /* before my status: the failure goes into it */
        v[fail] = v[fail] > 1 ? v[fail] : 1;
        node_ok = 0;
    }
    /* 2. the leaders: my node's fold and block, theirs */
    coll_xchg_plan sub;
    memset(&sub, 0, sizeof sub);
    sub.ctx = ctx;
    sub.comm = T->leaders;
    sub.P = N;
    sub.me = a;
    sub.ranks = T->leader_rank;
    int64_t hl[COLL_A2A_MAX][AH_W], in[COLL_A2A_MAX][AH_W];
    MPI_Request lq[2 * COLL_A2A_MAX];
    int nl = 0;
    /* from here on my status is out: a failure is mine alone, returned
       (the caller agrees on it), and the protocol goes on */
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
        hl[b][n] = node_ok;
        hl[b][n + 1] = node_ok ? osc[b] : -1;
        if (ah_send(pl, hl[b], n + 2, T->leader_rank[b], b, T->leaders,
                    TAG_AH_L, &lq[nl])) {
            lq[nl] = MPI_REQUEST_NULL;
            rc = rc ? rc : PASSION_EMPI;
        }
        nl++;
        if (node_ok) {
            int e = coll_isend(&sub, ob + osd[b], osc[b], b, TAG_AD_L,
                               rq + nq);
            rc = rc ? rc : e;
            nq += (int)coll_nparts(osc[b]);
            if (osc[b] > 0) {
                pl->st.messages++;
                pl->st.bytes_sent += osc[b];
                pl->st.msgs_net++;
                pl->st.bytes_net += osc[b];
            }
        }
    }
    int e = coll_waitall(nl, lq);
    rc = rc ? rc : e;
    int all_ok = node_ok;
    for (int b = 0; b < N; b++) {
        if (b == a)
            continue;
        ah_fold(v, in[b], n, nsum);
        all_ok = all_ok && in[b][n] == 1;
        int64_t len = in[b][n + 1];
        if (len < 0)
            continue;
        if (node_ok && len == irc[b]) {
            e = coll_irecv(&sub, ib + ird[b], len, b, TAG_AD_L, rq + nq);
            rc = rc ? rc : e;
            nq += (int)coll_nparts(len);
        } else {
            tl_drain(&sub, len, b, TAG_AD_L);
        }
    }
    e = coll_waitall(nq, rq);
    rc = rc ? rc : e;
    nq = 0;
    pl->st.rounds += 2;
    /* 3. the agreed header to my ranks, and their data when every node's
       came (all_ok: the same on every leader) */
    int64_t hd[AH_W];
    memcpy(hd, v, (size_t)n * sizeof *v);
    hd[n] = all_ok;
    /* one at a time (a short header completes at once; the request
       pool may not exist: a prediction, a failed preparation) */
    for (int k = 1; k < S; k++) {
        MPI_Request one;
        e = ah_send(pl, hd, n + 1, T->members[r->f0 + k],
                    T->members[r->f0 + k], pl->comm, TAG_AH_DN, &one);
        if (!e)
            e = coll_waitall(1, &one);
        rc = rc ? rc : e;
    }
    r->n = 0;
    for (int k = 0; k < S && all_ok; k++) {
        int np;
        int64_t down = tl_down_pieces(r, k, ib, ird, &np);
        if (k == 0)
            continue;
        int dst = T->members[r->f0 + k];
        e = tl_stream(pl, &r->tb, 1, r->tb.pc, np, down, dst, TAG_DOWN,
                      rq + nq);
        rc = rc ? rc : e;
        nq += (int)coll_nparts(down);
        if (down > 0) {
            pl->st.messages++;
            pl->st.bytes_sent += down;
            pl->st.msgs_node++;
            pl->st.bytes_node += down;
        }
    }
    if (all_ok) {
        e = tl_direct(r);
        rc = rc ? rc : e;
    }
    e = coll_waitall(nq, rq);
    rc = rc ? rc : e;
    e = coll_waitall(r->n, pl->req);
    rc = rc ? rc : e;
    pl->st.rounds++;
    coll_stage_free(pl, buf, OUT + IN, OUT + IN);
    core_free(ctx, rq);
    *moved = all_ok;
    return rc;
}

int coll_nodes_agree(coll_xchg_plan *pl, int64_t *v, int n, int nsum,
                     int fail, int spec, int *moved)
{
    tl_run_t r;
    memset(&r, 0, sizeof r);
    *moved = 0;
    r.pl = pl;
    r.T = coll_xchg_nodes(pl->ctx);
    if (!r.T || n + 2 > AH_W || r.T->nnodes > COLL_A2A_MAX) {
        v[fail] = 1;
        return PASSION_EINVAL; /* the same on every rank */
    }
    r.a = r.T->node;
    r.f0 = r.T->first[r.a];
    r.S = r.T->first[r.a + 1] - r.f0;
    r.leader = r.T->members[r.f0];
    /* the data rides only with the run's tables and requests at hand */
    spec = spec && pl->scratch && pl->req;
    if (spec)
        tl_layout(pl, r.T, &r.tb, pl->scratch);
    return r.T->lrank != 0 ? ag_member(&r, v, n, spec, moved)
                           : ag_leader(&r, v, n, nsum, fail, spec, moved);
}

const coll_xchg_ops coll_xchg_twolevel = {
    .name = "twolevel",
    .id = PASSION_XCHG_TWOLEVEL,
    .regular_only = 0,
    .agree_after = 1,
    .nodes_fused = 1,
    .net_leaders = 1,
    .model = tl_model,
    .staging = tl_staging,
    .scratch = tl_scratch,
    .net = tl_net,
    .run = tl_exchange,
};
