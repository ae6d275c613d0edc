/*
 * plan_xchg_cost.c - the pieces of the cost model that the prices and
 * the exchange's dispatcher share: the shape of a regular exchange, the
 * shape of one step, the cost of the entry agreement. Pure functions,
 * below the price table (the table and the choice are in
 * plan_xchg_price.c and plan_xchg_model.c).
 */
#include "plan_xchg.h"

#include <math.h>

coll_xchg_shape coll_shape_regular(int procs, int64_t block)
{
    coll_xchg_shape s = {0};
    s.procs = procs;
    s.block = block;
    s.lmax = block * procs;
    s.lmax_x = block * (procs - 1);
    s.mmax = procs > 1 ? block : 0;
    s.total = block * procs * (int64_t)(procs - 1);
    return s;
}

static int64_t ceil_div(int64_t a, int64_t k)
{
    return a <= 0 ? 0 : (a - 1) / k + 1;
}

coll_xchg_shape coll_shape_step(const coll_xchg_shape *s, int64_t k)
{
    if (k <= 1)
        return *s;
    coll_xchg_shape t = *s;
    int64_t P = s->procs;
    /* a slice is at most ceil(bytes / k) <= bytes / k + 1: a rank's P
       slices add at most P bytes to its share */
    t.block = s->block >= 0 ? ceil_div(s->block, k) : -1;
    t.lmax = ceil_div(s->lmax, k) + P;
    t.lmax_x = ceil_div(s->lmax_x, k) + P;
    t.mmax = ceil_div(s->mmax, k);
    t.total = ceil_div(s->total, k) + P * P;
    if (t.block >= 0) {
        coll_xchg_shape r = coll_shape_regular(s->procs, t.block);
        r.nodes = s->nodes;
        r.node_max = s->node_max;
        return r;
    }
    return t;
}

double coll_agree_cost(const coll_xchg_costs *c, int P)
{
    if (P <= 1)
        return 0;
    if (P > COLL_A2A_MAX)
        return ceil(log2((double)P)) * (c->round + c->msg);
    return c->round + (double)(P - 1) * c->msg;
}


/* bytes of one header of the entry agreement (xchg_call.h: COLL_V_N
   words) */
#define AGREE_HDR_BYTES 208.0

double coll_agree_cost_shape(const coll_xchg_costs *c,
                             const coll_xchg_shape *s)
{
    int P = s->procs, N = s->nodes > 1 ? s->nodes : 1;
    if (P <= 1)
        return 0;
    double hdr = c->net_msg + AGREE_HDR_BYTES * c->net_byte;
    if (!coll_agree_by_nodes(P, N)) {
        /* flat: the headers that leave this rank's node pay the network */
        double away = N > 1 && P <= COLL_A2A_MAX ? (double)(P - P / N) : 0;
        return coll_agree_cost(c, P) + away * hdr;
    }
    int S = s->node_max > 1 ? s->node_max : 1;
    /* coll_nodes_agree: S - 1 headers into the leader, the leaders'
       round, S - 1 headers out of it */
    return 3 * c->round + 2 * (double)(S - 1) * c->msg +
           (double)(N - 1) * (c->msg + hdr);
}
