/*
 * plan_xchg_price_tl.c - the price of the two-level (node-aware)
 * exchange (collective/exchange/xchg_twolevel.c runs it; the idea is the
 * hierarchical all-to-all of SMP clusters: Sistare, vandeVaart and Loh,
 * "Optimization of MPI collectives on clusters of large-scale SMPs", SC
 * 1999): each node's leader gathers what leaves the node, the leaders
 * exchange by A1 or by the non-blocking four-stage (coll_tl_leaders_a1,
 * which the run asks too), and each leader distributes what arrived. Its
 * price counts the two rounds within the node, the leaders' exchange on
 * the shape of N ranks of at most S * Lmax_x bytes, the copies and the
 * outcome's agreement; only the leaders send between nodes.
 *
 * Invariant: pure functions of their arguments, equal on every rank.
 */
#include "plan_xchg.h"

#include <math.h>

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
    *bytes =
        P > 1 ? lmax * (2.0 * (g.C - 1) / g.C + 2.0 * (g.R - 1) / g.R) : 0;
}

/* The leaders' exchange: A1 (one round, N - 1 messages per leader, no
   staging) while it sends no more messages between nodes than the
   four-stage's 2(C - 1) + 2(R - 1) in four dependent stages (up to 9
   nodes), else the four-stage. A function of N alone: every leader
   takes the same. */
int coll_tl_leaders_a1(int N)
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
    if (N > 1 && coll_tl_leaders_a1(N)) {
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
    double t = coll_tl_leaders_a1(N) ? plan_xchg_a1.model(c, &sub, &r)
                                : plan_xchg_fourstage_nb.model(c, &sub, &r);
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
    if (coll_tl_leaders_a1(sub.procs))
        return 2 * B;
    return 2 * B + coll_xchg_staging(PASSION_XCHG_FOURSTAGE_NB, 0, &sub);
}

const plan_xchg_alg plan_xchg_twolevel = {
    .id = PASSION_XCHG_TWOLEVEL,
    .net_leaders = 1,
    .model = tl_model,
    .staging = tl_staging,
    .net = tl_net,
};
