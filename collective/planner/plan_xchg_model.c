/*
 * plan_xchg_model.c - the cost model of the exchange: CCL's tunable
 * choice (Bala et al., "CCL: a portable and tunable collective
 * communication library for scalable parallel computers", IEEE TPDS
 * 1995) on the linear model (plan_xchg.h). Each algorithm's price
 * (plan_xchg_price.c) counts its rounds, messages, bytes and local
 * copies as its paper does (Bruck: C1 and C2; four-stage: Theorem 2) and
 * bounds the memory it holds (four-stage: Theorem 1); this file adds the
 * network and the entry agreement, and the choice takes the cheapest
 * that fits the budget (plan_xchg_choose). The costs come from
 * plan_xchg_calib.c.
 *
 * Invariant: every function here is a pure function of its arguments
 * (and of the price table): no MPI, no I/O, no global state; equal inputs
 * on every rank give equal choices. The shapes and the agreement's cost
 * are in plan_xchg_cost.c.
 */
#include "plan_xchg.h"

#include <math.h>

/* the messages that leave a node cost more than the others */
static int net_priced(const coll_xchg_costs *c, const coll_xchg_shape *s)
{
    return s->nodes > 1 && s->procs > 1 && (c->net_msg > 0 || c->net_byte > 0);
}

/* the whole price of ops at radix (0: the radix its own price prefers) */
static double price(const coll_xchg_costs *c, const plan_xchg_alg *ops,
                    int radix, const coll_xchg_shape *s, int *best_radix)
{
    int r = radix;
    double t = ops->model(c, s, &r);
    if (best_radix)
        *best_radix = r;
    /* what the network adds to the messages that leave a node */
    if (net_priced(c, s)) {
        double m, b;
        if (ops->net) {
            ops->net(s, r, &m, &b);
        } else {
            double share = (double)(s->procs - s->procs / s->nodes) /
                           (double)(s->procs - 1);
            m = (double)(s->procs - 1) * share;
            b = (double)s->lmax_x * share;
        }
        /* a node's ranks share its network interface (passion/net.c):
           where every rank sends between nodes, the busiest node's
           interface carries node_max ranks' messages */
        if (!ops->net_leaders && s->node_max > 1) {
            m *= (double)s->node_max;
            b *= (double)s->node_max;
        }
        t += m * c->net_msg + b * c->net_byte;
    }
    /* the entry agreement. An algorithm whose step travels with the
       headers sends them in the round of its data, to the same peers:
       with measured costs that round costs what the calibration's fan
       costs (msg is what one more peer in a round adds, and it adds
       none); with the paper's model (costs from the options) every
       message is a start-up, headers too */
    if (ops->hdr_step && s->procs > 1 && s->procs <= COLL_A2A_MAX &&
        !coll_agree_by_nodes(s->procs, s->nodes)) {
        if (c->source == COLL_COSTS_OPTIONS)
            t += (double)(s->procs - 1) * c->msg;
        /* the headers that leave the node pay the network too */
        if (s->nodes > 1)
            t += (double)(s->procs - s->procs / s->nodes) * c->net_msg;
    } else {
        t += coll_agree_cost_shape(c, s);
    }
    return t;
}

double coll_xchg_model(const coll_xchg_costs *c, int alg, int radix,
                       const coll_xchg_shape *s, int *best_radix)
{
    const plan_xchg_alg *ops = plan_xchg_alg_get(alg);
    if (!ops || (ops->regular_only && s->block < 0))
        return HUGE_VAL;
    /* the network's share depends on the radix (index: one message a
       step), which the algorithm's own price does not see: with a
       network to pay, the best radix is the one of the least whole
       price, every radix priced */
    if (ops->has_radix && radix < 2 && s->procs > 2 && net_priced(c, s)) {
        double best = HUGE_VAL;
        int br = 2;
        for (int r = 2; r <= s->procs; r++) {
            double t = price(c, ops, r, s, NULL);
            if (t < best) {
                best = t;
                br = r;
            }
        }
        if (best_radix)
            *best_radix = br;
        return best;
    }
    return price(c, ops, radix, s, best_radix);
}

int64_t coll_xchg_staging(int alg, int radix, const coll_xchg_shape *s)
{
    const plan_xchg_alg *ops = plan_xchg_alg_get(alg);
    if (!ops || !ops->staging || (ops->regular_only && s->block < 0))
        return 0;
    return ops->staging(s, radix);
}

int64_t coll_xchg_need(int alg, int P, int64_t lmax)
{
    const plan_xchg_alg *ops = plan_xchg_alg_get(alg);
    /* auto chooses within what it is given; an algorithm that needs equal
       blocks is replaced by auto's choice on an irregular exchange */
    if (!ops || ops->regular_only)
        return 0;
    coll_xchg_shape s = {0};
    s.procs = P;
    s.block = -1;
    s.lmax = s.lmax_x = s.mmax = lmax;
    s.total = lmax * P;
    return coll_xchg_staging(alg, 0, &s);
}

double plan_xchg_price_within(const coll_xchg_costs *c, int alg,
                              const coll_xchg_shape *s, int64_t budget,
                              int *radix)
{
    const plan_xchg_alg *ops = plan_xchg_alg_get(alg);
    int r = 0;
    double t = coll_xchg_model(c, alg, 0, s, &r);
    *radix = r;
    if (budget < 0 || coll_xchg_staging(alg, r, s) <= budget)
        return t;
    /* the preferred radix stages too much: the cheapest that fits */
    double best = HUGE_VAL;
    for (int k = 2; ops && ops->has_radix && k <= s->procs; k++) {
        if (coll_xchg_staging(alg, k, s) > budget)
            continue;
        double u = coll_xchg_model(c, alg, k, s, NULL);
        if (u < best) {
            best = u;
            *radix = k;
        }
    }
    return best;
}

coll_xchg_choice plan_xchg_choose(const plan_xchg_in *in)
{
    const coll_xchg_shape *s = &in->shape;
    coll_xchg_choice best = {PASSION_XCHG_A1, 0, HUGE_VAL};
    int found = 0;
    for (int i = 0; i < plan_xchg_alg_count(); i++) {
        const plan_xchg_alg *ops = plan_xchg_alg_at(i);
        if (ops->regular_only && !in->allow_regular)
            continue;
        int r = 0;
        double t = plan_xchg_price_within(&in->costs, ops->id, s,
                                          in->budget, &r);
        if (in->budget >= 0 &&
            (t == HUGE_VAL || coll_xchg_staging(ops->id, r, s) > in->budget))
            continue;
        if (!found || t < best.seconds) {
            best.alg = ops->id;
            best.radix = ops->has_radix ? r : 0;
            best.seconds = t;
            found = 1;
        }
    }
    return best;
}

coll_xchg_choice coll_xchg_choose(const coll_xchg_costs *c,
                                  const coll_xchg_shape *s, int allow_index)
{
    plan_xchg_in in = {*c, *s, allow_index, -1};
    return plan_xchg_choose(&in);
}

coll_xchg_choice coll_xchg_choose_within(const coll_xchg_costs *c,
                                         const coll_xchg_shape *s,
                                         int64_t budget)
{
    plan_xchg_in in = {*c, *s, s->block >= 0, budget < 0 ? 0 : budget};
    return plan_xchg_choose(&in);
}
