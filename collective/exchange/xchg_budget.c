/*
 * xchg_budget.c - the budget of one exchange call: the staging a call may
 * hold (coll_xchg_args.budget, by default what is left of the context's
 * memory_budget), the number of steps an algorithm runs in to fit it,
 * what the dispatcher allocates for a run (coll_xchg_prepare), the steps
 * themselves, and the agreed retry in more steps.
 *
 * Invariants:
 *  - in k steps every message is cut in k slices of ceil(bytes / k),
 *    slice t of every message in step t; every step is a whole protocol
 *    of the algorithm, so the messages of two steps cannot be confused;
 *  - the number of steps is a function of the agreed shape and the
 *    agreed (smallest) budget only, the same on every rank;
 *  - a retry happens on every rank or on none: only when every failing
 *    rank failed because the budget refused an allocation, at most
 *    XCHG_RETRIES times, in twice the steps.
 */
#include "xchg_call.h"

#include <string.h>

/* The fewest steps (1, 2, 4, ..., lmax) in which alg's staging for s fits
   in budget; 0 when no number does. *least (not NULL): the smallest
   staging over those step counts, the smallest budget that runs. The
   smallest need not be in the most steps: a step's slices round up (up to
   P bytes more per rank), so one step can need less than 1-byte slices
   when lmax is of the order of P. */
int64_t coll_xchg_steps_for(int alg, int radix, const coll_xchg_shape *s,
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
static int64_t least_budget(const coll_xchg_call *c)
{
    int64_t least = 0;
    coll_xchg_steps_for(c->run, c->run_radix, &c->shape, -1, &least);
    return least;
}

/* ENOMEM for a budget below the smallest the run fits in: the detail
   states that smallest budget and, when the budget was what the call
   found left of memory_budget, the memory_budget that gives it. */
int coll_xchg_budget_enomem(coll_xchg_call *c)
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
int coll_xchg_prepare(coll_xchg_call *c, int alg, int radix, int64_t steps,
                      const coll_xchg_shape *s)
{
    coll_xchg_plan *pl = &c->pl;
    const coll_xchg_local *L = &c->L;
    if (!pl->req) {
        int64_t big = L->lout > L->lin ? L->lout : L->lin;
        int64_t n = 2 * (int64_t)pl->P * (coll_nparts(big) + 1) + 8;
        /* the small pool is an allocation as the fault option counts
           them (fault_alloc_at), as the pool's block was */
        if (n <= COLL_XCHG_REQ_SMALL)
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
                            "exchange %s: %lld bytes of tables",
                            coll_xchg_name(ops->id), (long long)n);
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
                        coll_xchg_name(ops->id), (long long)n,
                        (long long)pl->limit);
    pl->reserved_bytes = n;
    return PASSION_OK;
}

void coll_xchg_unprepare(coll_xchg_call *c)
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
int coll_xchg_run_steps(coll_xchg_call *c, const coll_xchg_ops *ops)
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
int coll_xchg_agree_outcome(coll_xchg_call *c, int rc, int *retry)
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
