/*
 * plan_xchg_auto.c - the exchange's `auto` through the planner
 * (planner.h).
 *
 * A call's signature: P, the nodes, regular or not, the powers of two of
 * Lmax and of the largest message, and which algorithms fit the budget.
 * Its candidates: the algorithms the model ranks within XCHG_MARGIN of its
 * best (at most PLAN_XCHG_CANDS - 1 of them), and MPI's own call always, so
 * that, measured, auto is never slower than what it wraps.
 *
 * Invariant: signature and candidates are pure functions of the agreed
 * shape, the agreed budget and the costs (the same on every rank), so the
 * planner's answer is the same on every rank.
 */
#include "plan_xchg.h"

#include <math.h>
#include <string.h>

#define XCHG_MARGIN 3.0

/* Every algorithm that can run s within budget, priced by the model
   (with its radix), into all[] (room for plan_xchg_alg_count()) in the
   table's order; returns how many, *fit the bit mask of their table
   indices. */
static int priced(const coll_xchg_costs *c, const coll_xchg_shape *s,
                  int64_t budget, plan_cand *all, int64_t *fit)
{
    int n = 0;
    *fit = 0;
    if (budget < 0) /* nothing fits */
        return 0;
    for (int i = 0; i < plan_xchg_alg_count(); i++) {
        const plan_xchg_alg *ops = plan_xchg_alg_at(i);
        if (ops->regular_only && s->block < 0)
            continue;
        int r = 0;
        double t = plan_xchg_price_within(c, ops->id, s, budget, &r);
        if (t == HUGE_VAL || coll_xchg_staging(ops->id, r, s) > budget)
            continue;
        *fit |= (int64_t)1 << i;
        all[n++] = (plan_cand){ops->id, ops->has_radix ? r : 0, t};
    }
    return n;
}

static int shape_eq(const coll_xchg_shape *a, const coll_xchg_shape *b)
{
    return a->procs == b->procs && a->block == b->block &&
           a->lmax == b->lmax && a->lmax_x == b->lmax_x &&
           a->mmax == b->mmax && a->total == b->total &&
           a->nodes == b->nodes && a->node_max == b->node_max;
}

/* The signature key auto last computed, for the same shape and budget
   (a pure function of them once the costs are known: priced() prices
   every algorithm's staging, which a repeated exchange would pay per
   call): 1 and *key, else 0. */
static int sig_get(const plan_xchg_state *st, const coll_xchg_shape *s,
                   int64_t budget, int64_t *key)
{
    if (!st || !st->sig_ok || st->sig_budget != budget ||
        !shape_eq(&st->sig_shape, s))
        return 0;
    *key = st->sig_key;
    return 1;
}

static void sig_put(plan_xchg_state *st, const coll_xchg_shape *s,
                    int64_t budget, int64_t key)
{
    if (!st)
        return;
    st->sig_ok = 1;
    st->sig_shape = *s;
    st->sig_budget = budget;
    st->sig_key = key;
}

static void auto_sig(const coll_xchg_auto *a, const coll_xchg_shape *s,
                     int64_t budget, plan_sig *sig)
{
    memset(sig, 0, sizeof *sig);
    sig->op = PLAN_OP_XCHG;
    sig->key[0] = s->procs;
    sig->key[1] = s->nodes;
    sig->key[2] = s->node_max;
    sig->key[3] = s->block >= 0;
    sig->key[4] = plan_log2_up(s->lmax);
    sig->key[5] = plan_log2_up(s->mmax);
    /* the fit word: every algorithm priced, so kept for the last shape */
    plan_xchg_state *st = plan_state_xchg(a->plan);
    if (sig_get(st, s, budget, &sig->key[6]))
        return;
    plan_cand all[16];
    priced(a->costs, s, budget, all, &sig->key[6]);
    sig_put(st, s, budget, sig->key[6]);
}

int plan_xchg_cands(const coll_xchg_costs *c, const coll_xchg_shape *s,
                    int64_t budget, plan_cand *out)
{
    plan_cand all[16];
    int64_t fit;
    int n = priced(c, s, budget, all, &fit);
    for (int i = 1; i < n; i++) { /* insertion sort, stable */
        plan_cand k = all[i];
        int j = i;
        for (; j > 0 && all[j - 1].estimate > k.estimate; j--)
            all[j] = all[j - 1];
        all[j] = k;
    }
    int m = 0;
    for (int i = 0; i < n && m < PLAN_XCHG_CANDS - 1; i++)
        if (all[i].method != PASSION_XCHG_MPI &&
            (m == 0 || all[i].estimate <= XCHG_MARGIN * all[0].estimate))
            out[m++] = all[i];
    for (int i = 0; i < n; i++)
        if (all[i].method == PASSION_XCHG_MPI) {
            /* in its rank by the estimate */
            int j = m++;
            for (; j > 0 && out[j - 1].estimate > all[i].estimate; j--)
                out[j] = out[j - 1];
            out[j] = all[i];
        }
    return m;
}

static coll_xchg_choice as_choice(const plan_cand *k)
{
    coll_xchg_choice ch = {k->method, k->param, k->estimate};
    return ch;
}

coll_xchg_choice coll_xchg_auto_peek(const coll_xchg_auto *a,
                                     const coll_xchg_shape *s,
                                     int64_t budget)
{
    plan_sig sig;
    auto_sig(a, s, budget, &sig);
    plan_rec *r = plan_find(plan_state_table(a->plan), &sig);
    if (r)
        return as_choice(&r->cand[plan_peek(r, plan_state_mode(a->ctx))]);
    return coll_xchg_choose_within(a->costs, s, budget);
}

int coll_xchg_auto_next(coll_xchg_auto *a, const coll_xchg_shape *s,
                        int64_t budget, coll_xchg_choice *out)
{
    int rc = plan_state_load(a->ctx, a->plan, a->comm);
    if (rc)
        return rc;
    plan_table *t = plan_state_table(a->plan);
    plan_sig sig;
    auto_sig(a, s, budget, &sig);
    plan_rec *r = plan_find(t, &sig);
    if (!r) {
        plan_cand k[PLAN_XCHG_CANDS];
        int n = plan_xchg_cands(a->costs, s, budget, k);
        if (n == 0) {
            /* nothing fits: the model's choice says how much it needs */
            *out = coll_xchg_choose_within(a->costs, s, budget);
            return PASSION_OK;
        }
        r = plan_add(t, &sig, k, n);
        if (!r) {
            /* no room for the record (the same on every rank, which all
               hold the same table): the estimate, unrecorded */
            *out = as_choice(&k[0]);
            return PASSION_OK;
        }
    }
    plan_pick pk;
    rc = plan_state_next(a->ctx, a->plan, r, &pk);
    if (rc)
        return rc;
    a->rec = r;
    a->idx = pk.index;
    *out = as_choice(&r->cand[pk.index]);
    return PASSION_OK;
}
