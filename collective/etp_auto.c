/*
 * etp_auto.c - method auto of a collective section access through the
 * planner (collective/planner/planner.h): the model (etp_model.c:
 * coll_method_choose) prices the candidates; the planner decides which
 * runs, so that on a machine where the model's constants are wrong the
 * measured winner runs.
 *
 * A call's signature: the operation, P, the array's shape, element size
 * and storage order, every rank's counts and strides and its start
 * relative to rank 0's (a translated call is the same call: slab after
 * slab), whether the data was cached, and the power of two of the memory
 * budget. Its candidates: the model's choice first, then the other
 * methods the model prices within COLL_AUTO_MARGIN of it (independent
 * access as each rank's sieve.c choice, direct, sieving, the two
 * two-phase methods), at most PLAN_CANDS. An independent candidate priced
 * the same as one already taken is the same requests, and is left out.
 *
 * Invariants: every input of the signature and of the candidates comes
 * from the FAD or from options checked equal on every rank, so the
 * planner's answer is the same on every rank; a method the planner runs
 * instead of the model's choice runs as that method given fixed does
 * (the plan's aggregators, exchange and round limits as coll_plan_init
 * left them); the planner applies only where no rank's part was read
 * before the FAD (coll_io_early).
 */
#include "coll.h"

#include <math.h>
#include <string.h>

#define COLL_AUTO_MARGIN 10.0

static uint64_t mix(uint64_t h, int64_t v)
{
    const unsigned char *b = (const unsigned char *)&v;
    for (size_t i = 0; i < sizeof v; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static void sig_of(const coll_plan *p, plan_sig *sig)
{
    const passion_array_spec *sp = &p->f->a->spec;
    const int nd = p->nd, W = COLL_FAD_HEAD + 3 * PASSION_MAX_DIMS;
    uint64_t shape = 1469598103934665603ull, secs = shape;
    shape = mix(shape, sp->storage);
    for (int d = 0; d < nd; d++) {
        shape = mix(shape, sp->shape[d]);
        shape = mix(shape, sp->order[d]);
    }
    const int64_t *f0 = p->fad;
    for (int r = 0; r < p->P; r++) {
        const int64_t *f = p->fad + (int64_t)r * W;
        for (int d = 0; d < nd; d++) {
            secs = mix(secs, f[COLL_FAD_HEAD + d] - f0[COLL_FAD_HEAD + d]);
            secs = mix(secs, f[COLL_FAD_HEAD + nd + d]);
            secs = mix(secs, f[COLL_FAD_HEAD + 2 * nd + d]);
        }
    }
    memset(sig, 0, sizeof *sig);
    sig->op = p->op_write ? PLAN_OP_WRITE : PLAN_OP_READ;
    sig->key[0] = p->P;
    sig->key[1] = nd;
    sig->key[2] = p->esize;
    sig->key[3] = (int64_t)(shape >> 1);
    sig->key[4] = (int64_t)(secs >> 1);
    sig->key[5] = p->warm;
    sig->key[6] = plan_log2_up(p->ctx->opt.memory_budget);
    sig->key[7] = p->ctx->nnodes;
}

int coll_auto_begin(coll_plan *p, coll_auto *a)
{
    memset(a, 0, sizeof *a);
    a->xalg = p->xalg;
    a->aggr = p->aggr;
    a->cap_xchg = p->cap_xchg;
    a->cap_stage = p->cap_stage;
    for (int r = 0; r < p->P; r++)
        if (coll_early_done(p, r))
            return 0; /* some part is read: the model's fast path */
    /* made before the FAD (section_all), so there on every rank */
    a->plan = plan_state_get(p->ctx);
    if (!a->plan)
        return 0;
    a->applies = 1;
    sig_of(p, &a->sig);
    int known = plan_find(plan_state_table(a->plan), &a->sig) != NULL;
    /* measure with a record: the record's candidates are run as given
       fixed, so the model is not needed (its pricing of every method
       costs CPU in every call); on several nodes its choice carries the
       aggregators and exchange it priced, which a fixed method lacks */
    a->no_model = known && plan_state_mode(p->ctx) == PLAN_MEASURE &&
                  p->ctx->nnodes <= 1;
    return !known;
}

/* the candidates from the model's prices, its choice first */
static int cands_of(int chosen, const double *est, plan_cand *out)
{
    static const int order[] = {
        PASSION_METHOD_AUTO, PASSION_METHOD_DIRECT, PASSION_METHOD_SIEVE,
        PASSION_METHOD_ETP_STATIC, PASSION_METHOD_ETP_DYNAMIC};
    int n = 0;
    out[n++] = (plan_cand){chosen, 0, est[chosen]};
    double lim = COLL_AUTO_MARGIN * est[chosen];
    for (;;) {
        int b = -1;
        for (int i = 0; i < 5; i++) {
            int m = order[i], taken = 0;
            for (int k = 0; k < n; k++)
                taken |= out[k].method == m ||
                         (m <= PASSION_METHOD_SIEVE &&
                          out[k].method <= PASSION_METHOD_SIEVE &&
                          est[m] == out[k].estimate);
            if (!taken && isfinite(est[m]) && est[m] <= lim &&
                (b < 0 || est[m] < est[b]))
                b = m;
        }
        if (b < 0 || n == PLAN_CANDS)
            return n;
        out[n++] = (plan_cand){b, 0, est[b]};
    }
}

int coll_auto_pick(coll_plan *p, int *chosen, double *predicted,
                   const double *est, coll_auto *a)
{
    if (!a->applies)
        return PASSION_OK;
    passion_ctx *ctx = p->ctx;
    /* the wisdom file, read once (collective: every rank is here) */
    int rc = plan_state_load(ctx, a->plan, ctx->comm);
    if (rc) {
        a->applies = 0;
        return rc;
    }
    plan_table *t = plan_state_table(a->plan);
    plan_rec *r = plan_find(t, &a->sig);
    if (!r && est) {
        plan_cand k[PLAN_CANDS];
        int n = cands_of(*chosen, est, k);
        r = plan_add(t, &a->sig, k, n);
    }
    if (!r) { /* no room: the model's choice, unrecorded */
        a->applies = 0;
        return PASSION_OK;
    }
    plan_pick pk;
    rc = plan_state_next(ctx, a->plan, r, &pk);
    if (rc) {
        a->applies = 0;
        return rc;
    }
    a->idx = pk.index;
    /* estimate decides at once; measure once it agreed on a winner */
    a->decided = r->winner >= 0 || plan_state_mode(ctx) == PLAN_ESTIMATE;
    const int m = r->cand[pk.index].method;
    if (m == *chosen && !a->no_model)
        return PASSION_OK;
    /* another method: as it runs given fixed */
    a->overridden = 1;
    p->xalg = a->xalg;
    p->aggr = a->aggr;
    p->cap_xchg = a->cap_xchg;
    p->cap_stage = a->cap_stage;
    *chosen = m;
    *predicted = r->cand[pk.index].estimate;
    return PASSION_OK;
}

void coll_auto_observe(passion_ctx *ctx, const coll_auto *a, double seconds)
{
    if (!a->applies)
        return;
    /* found again: the call's exchanges may have added records since */
    plan_rec *r = plan_find(plan_state_table(plan_state_get(ctx)), &a->sig);
    if (r)
        plan_observe(r, a->idx, seconds);
}
