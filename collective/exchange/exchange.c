/*
 * exchange.c - the dispatcher of the exchange subsystem: one call, step
 * by step (the public calls are in xchg_api.c, the round of headers in
 * xchg_round.c, the budget and steps in xchg_budget.c). It names no
 * algorithm: what it needs of one (model, staging, tables, a first step
 * that rides on the agreement) comes from the ops table.
 *
 * One call goes, one function each:
 *   1. call_begin: the algorithm (argument, or the context's option) and
 *      radix, the context's state and communicator, the budget, local
 *      checks and sizes;
 *   2. call_guess: what will probably run (a fixed algorithm, or `auto`
 *      with known costs) and in how many steps, so that its staging,
 *      tables and request pool are allocated now (prepare);
 *   3. call_agree: one round of headers (an allreduce above COLL_A2A_MAX
 *      ranks): any local failure, algorithm, radix, sizes, budget, the
 *      guess, and a checksum that is zero exactly when sendcounts[j] on
 *      rank i equals recvcounts[i] on rank j for every pair (with high
 *      probability); the guessed algorithm's first step travels with it
 *      when the table says it can, a short message inside its header's
 *      message (one message per pair, as MPI's own call sends);
 *   4. call_shape: disagreements become codes; the agreed shape and
 *      budget (the smallest of the ranks');
 *   5. call_costs: the calibration, when a choice needs it (first call);
 *   6. call_choose: what runs (auto: the cheapest that fits the budget)
 *      and in how many steps (a fixed algorithm: the fewest that fit);
 *   7. call_run: the step that rode on the agreement is completed, or the
 *      plan is prepared again when the guess was wrong, and the steps
 *      run; an algorithm that allocates while running has its outcome
 *      agreed, and a run refused by the budget on every failing rank runs
 *      again in twice the steps;
 *   8. call_end: counters.
 * Invariant: every exit after step 3 is taken by all ranks alike.
 */
#include "xchg_call.h"

#include <string.h>

/* ------------------------------------------------------- local checks */

static uint64_t pair_hash(int i, int j)
{
    uint64_t z = ((uint64_t)(uint32_t)i << 32 | (uint32_t)j) +
                 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return (z ^ (z >> 31)) | 1;
}

static int local_scan(coll_xchg_plan *pl, coll_xchg_local *L)
{
    passion_ctx *ctx = pl->ctx;
    int P = pl->P, me = pl->me;
    memset(L, 0, sizeof *L);
    if (pl->block < 0 && (!pl->sc || !pl->sd || !pl->rc || !pl->rd))
        return core_err(ctx, PASSION_EINVAL, "exchange: NULL count array");
    if (pl->block >= 0) {
        int64_t t;
        if (!core_mul(pl->block, P, &t))
            return core_err(ctx, PASSION_EOVERFLOW,
                            "exchange: %lld bytes x %d ranks overflows",
                            (long long)pl->block, P);
    }
    L->block = coll_sc(pl, 0);
    for (int j = 0; j < P; j++) {
        int64_t s = coll_sc(pl, j), r = coll_rc(pl, j);
        int64_t sd = coll_sd(pl, j), rd = coll_rd(pl, j), e;
        if (s < 0 || r < 0 || sd < 0 || rd < 0)
            return core_err(ctx, PASSION_EINVAL,
                            "exchange: negative count or displacement "
                            "for rank %d",
                            j);
        if (!core_add(s, sd, &e) || !core_add(r, rd, &e) ||
            !core_add(L->lout, s, &L->lout) || !core_add(L->lin, r, &L->lin))
            return core_err(ctx, PASSION_EOVERFLOW,
                            "exchange: byte counts overflow");
        if (s != L->block || r != L->block)
            L->block = -1;
        if (j != me) {
            L->lout_x += s;
            L->lin_x += r;
            if (s > L->mmax)
                L->mmax = s;
            if (r > L->mmax)
                L->mmax = r;
        }
        L->check += pair_hash(me, j) * (uint64_t)s;
        L->check -= pair_hash(j, me) * (uint64_t)r;
    }
    L->total_x = L->lout_x;
    if (L->lout > 0 && !pl->sbuf)
        return core_err(ctx, PASSION_EINVAL, "exchange: NULL send buffer");
    if (L->lin > 0 && !pl->rbuf)
        return core_err(ctx, PASSION_EINVAL, "exchange: NULL receive buffer");
    if (pl->sbuf == MPI_IN_PLACE)
        return core_err(ctx, PASSION_ENOTSUP, "exchange: MPI_IN_PLACE");
    return PASSION_OK;
}

/* Agree on the outcome of a step (prepare): on failure every rank
   returns the same code and detail (passion/agree.c). */
static int agree_flag(coll_xchg_plan *pl, int rc)
{
    return core_agree(pl->ctx, rc);
}

/* ------------------------------------------------------------- one call */

/* auto decides: asked, or the option names an algorithm that needs equal
   blocks and the exchange is irregular */
static int wants_auto(const coll_xchg_call *c, int regular)
{
    if (c->alg == PASSION_XCHG_AUTO)
        return 1;
    return c->from_option && plan_xchg_alg_get(c->alg)->regular_only &&
           !regular;
}

/* 1. the request, local checks and sizes */
static int call_begin(coll_xchg_call *c, passion_ctx *ctx,
                      const coll_xchg_args *a, int rc,
                      coll_xchg_choice *predict)
{
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->a = a;
    c->predict = predict;
    c->guess = -1;
    coll_xchg_plan *pl = &c->pl;
    pl->ctx = ctx;
    pl->P = ctx->size;
    pl->me = ctx->rank;
    pl->st.alg = -1;
    pl->fused_max = -1;
    c->state = coll_xchg_state_get(ctx);
    c->au.ctx = ctx;
    c->au.plan = plan_state_get(ctx);
    c->au.costs = &c->costs;
    int crc = coll_xchg_comm_setup(ctx, &pl->comm);
    c->from_option = a->alg == PASSION_XCHG_DEFAULT;
    c->alg = c->from_option ? ctx->opt.exchange : a->alg;
    c->radix = a->radix ? a->radix : ctx->opt.radix;
    int64_t left = ctx->opt.memory_budget - ctx->staging_now;
    c->budget = a->budget > 0 ? a->budget : left > 0 ? left : 0;
    pl->limit = c->budget;
    pl->base = ctx->staging_now;
    int rmax = pl->P > 2 ? pl->P : 2;
    if (crc) {
        /* no communicator of our own (on any rank: agreed), so the
           round of headers goes on the context's; the agreed code */
        pl->comm = ctx->comm;
        if (!rc)
            rc = crc;
    }
    if (!rc && (!c->state || !c->au.plan))
        rc = core_err(ctx, PASSION_ENOMEM, "exchange: context state");
    if (!rc && c->alg != PASSION_XCHG_AUTO && !coll_xchg_ops_get(c->alg))
        rc = core_err(ctx, PASSION_EINVAL, "unknown exchange algorithm %d",
                      c->alg);
    if (!rc && c->radix != 0 && (c->radix < 2 || c->radix > rmax))
        rc = core_err(ctx, PASSION_EINVAL, "radix %d outside 2..%d",
                      c->radix, rmax);
    if (!rc) {
        pl->sbuf = a->sendbuf;
        pl->rbuf = a->recvbuf;
        pl->block = a->block;
        pl->sc = a->sendcounts;
        pl->sd = a->sdispls;
        pl->rc = a->recvcounts;
        pl->rd = a->rdispls;
        rc = local_scan(pl, &c->L);
    }
    if (!rc && c->alg != PASSION_XCHG_AUTO && c->L.block < 0 &&
        plan_xchg_alg_get(c->alg)->regular_only && !c->from_option)
        rc = core_err(ctx, PASSION_EINVAL,
                      "%s exchange needs equal counts to every rank",
                      coll_xchg_name(c->alg));
    return rc;
}

/* the nodes of the shape (the node table, identical on every rank) */
static void shape_nodes(const coll_xchg_call *c, coll_xchg_shape *s)
{
    const coll_nodes *T = coll_xchg_nodes(c->ctx);
    s->nodes = T ? T->nnodes : 1;
    s->node_max = T ? T->max_size : 1;
}

/* this rank's view of the shape: exact when regular; irregular, the
   agreement corrects it */
static coll_xchg_shape local_shape(const coll_xchg_call *c)
{
    const coll_xchg_local *L = &c->L;
    int P = c->pl.P;
    coll_xchg_shape s = coll_shape_regular(P, L->block);
    shape_nodes(c, &s);
    if (L->block < 0) {
        s.block = -1;
        s.lmax = L->lout > L->lin ? L->lout : L->lin;
        s.lmax_x = L->lout_x > L->lin_x ? L->lout_x : L->lin_x;
        s.mmax = L->mmax;
        s.total = L->total_x * P;
    }
    return s;
}

/* 2. what will probably run, prepared now */
static int call_guess(coll_xchg_call *c, int rc)
{
    c->ready = coll_xchg_costs_ready(c->ctx, &c->costs);
    if (rc)
        return rc;
    coll_xchg_shape s = local_shape(c);
    int regular = c->L.block >= 0;
    if (c->a->shape && c->a->shape->procs == c->pl.P && c->a->block < 0) {
        /* the caller's: the same on every rank, a rank that moves
           nothing (its counts all 0, "regular") included */
        s = *c->a->shape;
        shape_nodes(c, &s);
        regular = s.block >= 0;
    }
    if (!wants_auto(c, regular)) {
        const plan_xchg_alg *ops = plan_xchg_alg_get(c->alg);
        c->guess = c->alg;
        c->guess_radix = c->radix;
        if (ops->has_radix && !c->radix) {
            if (c->ready)
                coll_xchg_model(&c->costs, c->alg, 0, &s, &c->guess_radix);
            else
                c->guess = -1;
        }
        if (ops->has_radix && c->guess_radix > c->pl.P)
            c->guess_radix = c->pl.P;
        if (c->guess >= 0)
            c->guess_steps = coll_xchg_steps_for(c->guess, c->guess_radix, &s,
                                                 c->budget, NULL);
    } else if (c->ready) {
        coll_xchg_choice ch = coll_xchg_auto_peek(&c->au, &s, c->budget);
        c->guess = ch.alg;
        c->guess_radix = ch.radix;
        c->guess_steps = 1;
    }
    if (c->predict)
        return PASSION_OK;
    return coll_xchg_prepare(c, c->guess, c->guess_radix, c->guess_steps, &s);
}

/* the agreement by nodes with the exchange's node table
   (coll_nodes_agree): the two-level exchange's data rides on it when
   every rank guessed it. A failure folded into the agreed header
   (v[COLL_V_FAIL]) is agreed by the caller; one after this rank's status
   left is agreed after the run (call_run, c->late), where every rank
   goes. *rc: this rank's code. */
static int agree_by_table(coll_xchg_call *c, int *rc)
{
    int64_t *v = c->v;
    const coll_xchg_ops *g = coll_xchg_ops_get(c->guess);
    int spec = !*rc && !c->predict && g && g->nodes_fused &&
               c->guess_steps == 1;
    int arc = coll_nodes_agree(&c->pl, v, COLL_V_N, COLL_V_NSUM, COLL_V_FAIL,
                               spec, &c->nodes_moved);
    if (arc && !v[COLL_V_FAIL]) {
        c->late = arc;
        arc = PASSION_OK;
    } else if (arc && !*rc) {
        *rc = arc;
        arc = PASSION_OK;
    }
    return arc;
}

/* the flat round of headers (P <= COLL_A2A_MAX), with the guessed
   algorithm's first step when it can ride on it. *rc: this rank's code */
static int agree_flat(coll_xchg_call *c, int *rc)
{
    coll_xchg_plan *pl = &c->pl;
    int P = pl->P, arc;
    int64_t *v = c->v, w[COLL_V_N];
    int64_t fuse = coll_xchg_round_fuse(P);
    int64_t bytes = coll_xchg_round_bytes(P, fuse);
    void *mem = coll_xchg_state_buf(c->ctx, c->state, (size_t)bytes);
    c->x = mem ? coll_xchg_round_layout(mem, P, fuse) : NULL;
    if (!c->x) {
        /* calloc or agree: this rank still takes part in the round (its
           peers wait for its header), says in it that it failed, and
           every rank then agrees on that failure (call_agree) */
        v[COLL_V_FAIL] = 1;
        if (!*rc)
            *rc = core_err(c->ctx, PASSION_ENOMEM,
                           "exchange: the round of headers (%lld bytes)",
                           (long long)bytes);
        arc = coll_xchg_round_without_memory(pl, v, COLL_V_NSUM, w);
    } else {
        /* whether data may come with the headers depends only on values
           the agreement checks equal (alg) */
        const coll_xchg_ops *asked = coll_xchg_ops_get(c->alg);
        const coll_xchg_ops *g = coll_xchg_ops_get(c->guess);
        c->x->posted = !*rc && !c->predict &&
                       (!asked || asked->hdr_sends ||
                        plan_xchg_alg_get(c->alg)->regular_only);
        c->x->spec = c->x->posted && g && g->hdr_sends;
        arc = coll_xchg_round_start(pl, c->x, v, COLL_V_NSUM,
                                    c->x->spec ? g : NULL, w);
    }
    memcpy(v, w, sizeof w);
    return arc;
}

/* 3. the agreement, with the guessed algorithm's first step when it can
   ride on it; returns 0 when the call goes on, else the agreed code
   (*done set) */
static int call_agree(coll_xchg_call *c, int rc, int *done)
{
    coll_xchg_plan *pl = &c->pl;
    const coll_xchg_local *L = &c->L;
    int64_t *v = c->v;
    int P = pl->P;
    v[COLL_V_CHECK] = (int64_t)L->check;
    v[COLL_V_TOTAL] = L->total_x;
    v[COLL_V_FAIL] = rc ? 1 : 0;
    v[COLL_V_ALG] = c->alg;
    v[COLL_V_NALG] = -c->alg;
    v[COLL_V_RADIX] = c->radix;
    v[COLL_V_NRADIX] = -c->radix;
    v[COLL_V_MODE] = c->a->block >= 0;
    v[COLL_V_NMODE] = -(c->a->block >= 0);
    v[COLL_V_READY] = c->ready;
    v[COLL_V_NREADY] = -c->ready;
    v[COLL_V_BLOCK] = L->block;
    v[COLL_V_NBLOCK] = -L->block;
    v[COLL_V_LMAX] = L->lout > L->lin ? L->lout : L->lin;
    v[COLL_V_LMAX_X] = L->lout_x > L->lin_x ? L->lout_x : L->lin_x;
    v[COLL_V_MMAX] = L->mmax;
    v[COLL_V_NBUDGET] = -c->budget;
    v[COLL_V_GUESS] = c->guess;
    v[COLL_V_NGUESS] = -c->guess;
    v[COLL_V_GRADIX] = c->guess_radix;
    v[COLL_V_NGRADIX] = -c->guess_radix;
    v[COLL_V_GSTEPS] = c->guess_steps > 1; /* counts of a step allocated */
    v[COLL_V_NGSTEPS] = -(c->guess_steps > 1);
    v[COLL_V_GRES] = pl->reserved_bytes;
    v[COLL_V_NGRES] = -pl->reserved_bytes;
    int arc;
    *done = 1;
    /* by nodes (coll_nodes_agree; coll_xchg_agree_nodes without a table)
       when the ranks sit on several nodes, some with more than one rank:
       a property of the context alone, so every rank takes this path
       alike whatever algorithm it was passed (a difference is then found
       in the folded header, COLL_V_ALG). The two-level exchange's data
       travels with these headers when every rank guessed it (then it is
       done: call_run); A1's goes in its own round, and no round of the
       call goes to every rank from every rank. */
    const int by_nodes = P > 1 && coll_xchg_by_nodes(c->ctx) &&
                         pl->P == c->ctx->size;
    if (by_nodes && coll_xchg_nodes(c->ctx))
        arc = agree_by_table(c, &rc);
    else if (by_nodes)
        arc = coll_xchg_agree_nodes(pl, v, COLL_V_N, COLL_V_NSUM);
    else if (P > 1 && P <= COLL_A2A_MAX)
        arc = agree_flat(c, &rc);
    else
        arc = P > 1 ? coll_allreduce(pl->comm, v, COLL_V_N, COLL_V_NSUM)
                    : PASSION_OK;
    if (arc)
        return core_err(c->ctx, arc, "exchange: argument agreement failed");
    if (v[COLL_V_FAIL])
        return core_agree(c->ctx, rc);
    *done = 0;
    return PASSION_OK;
}

/* 4. the agreed shape; disagreements are errors on every rank */
static int call_shape(coll_xchg_call *c)
{
    const int64_t *v = c->v;
    passion_ctx *ctx = c->ctx;
    if (v[COLL_V_ALG] != -v[COLL_V_NALG] ||
        v[COLL_V_RADIX] != -v[COLL_V_NRADIX])
        return core_err(ctx, PASSION_EMISMATCH,
                        "ranks passed different exchange algorithms or "
                        "radix");
    if (v[COLL_V_MODE] != -v[COLL_V_NMODE] ||
        v[COLL_V_READY] != -v[COLL_V_NREADY])
        return core_err(ctx, PASSION_EMISMATCH,
                        "ranks mix alltoall and alltoallv, or have "
                        "different cost options");
    if (v[COLL_V_CHECK] != 0)
        return core_err(ctx, PASSION_EMISMATCH,
                        "send counts do not match the receive counts of "
                        "their destinations");
    coll_xchg_shape *s = &c->shape;
    memset(s, 0, sizeof *s);
    s->procs = c->pl.P;
    s->block = v[COLL_V_BLOCK] == -v[COLL_V_NBLOCK] ? v[COLL_V_BLOCK] : -1;
    s->lmax = v[COLL_V_LMAX];
    s->lmax_x = v[COLL_V_LMAX_X];
    s->mmax = v[COLL_V_MMAX];
    s->total = v[COLL_V_TOTAL];
    shape_nodes(c, s);
    c->abudget = -v[COLL_V_NBUDGET];
    c->pl.limit = c->abudget;
    if (c->alg != PASSION_XCHG_AUTO && s->block < 0 &&
        plan_xchg_alg_get(c->alg)->regular_only && !c->from_option)
        return core_err(ctx, PASSION_EINVAL,
                        "%s exchange needs equal counts on every rank",
                        coll_xchg_name(c->alg));
    return PASSION_OK;
}

/* 5. the costs, when a choice needs them (collective the first time) */
static int call_costs(coll_xchg_call *c)
{
    int regular = c->shape.block >= 0;
    const plan_xchg_alg *ops = plan_xchg_alg_get(c->alg);
    int need = wants_auto(c, regular) || (ops->has_radix && !c->radix);
    if (!need || c->ready)
        return PASSION_OK;
    if (c->x)
        coll_xchg_round_finish(&c->pl, c->x, NULL);
    c->x = NULL;
    int rc = coll_xchg_costs_get(c->ctx, &c->costs);
    if (!rc)
        c->ready = 1;
    return rc;
}

/* 6. what runs, in how many steps */
static int call_choose(coll_xchg_call *c)
{
    const coll_xchg_shape *s = &c->shape;
    if (wants_auto(c, s->block >= 0)) {
        coll_xchg_choice ch;
        if (c->predict) {
            ch = coll_xchg_auto_peek(&c->au, s, c->abudget);
        } else {
            c->au.comm = c->pl.comm;
            int rc = coll_xchg_auto_next(&c->au, s, c->abudget, &ch);
            if (rc)
                return rc;
        }
        c->run = ch.alg;
        c->run_radix = ch.radix;
    } else {
        const plan_xchg_alg *ops = plan_xchg_alg_get(c->alg);
        c->run = c->alg;
        c->run_radix = c->radix;
        if (ops->has_radix && !c->radix)
            coll_xchg_model(&c->costs, c->alg, 0, s, &c->run_radix);
    }
    const plan_xchg_alg *ops = plan_xchg_alg_get(c->run);
    if (ops->has_radix && c->run_radix > c->pl.P)
        c->run_radix = c->pl.P;
    if (!ops->has_radix)
        c->run_radix = 0;
    c->steps = coll_xchg_steps_for(c->run, c->run_radix, s, c->abudget, NULL);
    if (c->steps == 0)
        return coll_xchg_budget_enomem(c);
    return PASSION_OK;
}

/* what was prepared for the guess given back, and what runs prepared,
   the outcome agreed */
static int prepare_again(coll_xchg_call *c)
{
    coll_xchg_unprepare(c);
    return agree_flag(&c->pl, coll_xchg_prepare(c, c->run, c->run_radix,
                                                c->steps, &c->shape));
}

/* 7. the run */
static int call_run(coll_xchg_call *c)
{
    coll_xchg_plan *pl = &c->pl;
    const coll_xchg_ops *ops = coll_xchg_ops_get(c->run);
    pl->costs = c->costs;
    pl->radix = c->run_radix;
    pl->st.alg = c->run;
    pl->st.radix = c->run_radix;
    if (c->ready)
        pl->st.predicted =
            coll_xchg_model(&c->costs, c->run, c->run_radix, &c->shape, NULL);
    /* the run that rode on the agreement by nodes: done everywhere;
       its outcome (a failure after a rank's status left, c->late) is
       agreed, as a run's that may fail locally (agree_after) */
    if (c->nodes_moved && ops->nodes_fused && c->steps == 1) {
        pl->st.steps = 1;
        return core_agree(c->ctx, c->late);
    }
    /* the step that rode on the agreement is the whole algorithm */
    if (c->x && c->x->posted && ops->hdr_sends && c->steps == 1) {
        int rc = coll_xchg_round_finish(pl, c->x, ops);
        c->x = NULL;
        return rc;
    }
    if (c->x) {
        coll_xchg_round_finish(pl, c->x, NULL);
        c->x = NULL;
    }
    /* the guesses of step 2 may differ between ranks (budgets, the local
       view of an irregular shape): then every rank prepares again */
    const int64_t *v = c->v;
    coll_xchg_shape t = coll_shape_step(&c->shape, c->steps);
    int64_t res = ops->prealloc ? coll_xchg_staging(c->run, c->run_radix, &t)
                                : 0;
    int rc = PASSION_OK;
    if (v[COLL_V_GUESS] != -v[COLL_V_NGUESS] ||
        v[COLL_V_GRADIX] != -v[COLL_V_NGRADIX] ||
        v[COLL_V_GSTEPS] != -v[COLL_V_NGSTEPS] ||
        v[COLL_V_GRES] != -v[COLL_V_NGRES] || c->run != c->guess ||
        c->run_radix != c->guess_radix || (c->steps > 1) != v[COLL_V_GSTEPS] ||
        v[COLL_V_GRES] != res) {
        rc = prepare_again(c);
        if (rc)
            return rc;
    }
    for (;;) {
        pl->st.steps = c->steps;
        rc = coll_xchg_run_steps(c, ops);
        /* a failure of the agreement by nodes after this rank's status
           left: agreed with the run's outcome where there is one, else
           returned here (like the run's own MPI errors) */
        if (c->late && !rc)
            rc = c->late;
        c->late = 0;
        if (!ops->agree_after)
            return rc;
        int retry;
        rc = coll_xchg_agree_outcome(c, rc, &retry);
        if (!retry)
            return rc;
        /* every failing rank met the budget: twice the steps */
        int64_t kmax = c->shape.lmax > 1 ? c->shape.lmax : 1;
        c->steps = c->steps > kmax / 2 ? kmax : 2 * c->steps;
        rc = prepare_again(c);
        if (rc)
            return rc;
    }
}

/* 8. counters, and the planner's observation of a run auto chose */
static void call_end(coll_xchg_call *c, double t0, int rc)
{
    coll_xchg_plan *pl = &c->pl;
    if (c->x) {
        coll_xchg_round_finish(pl, c->x, NULL);
        c->x = NULL;
    }
    coll_xchg_unprepare(c);
    if (pl->req != c->req_small)
        core_tmp_free(c->ctx, pl->req);
    pl->req = NULL;
    pl->st.seconds = core_now() - t0;
    if (c->predict)
        return;
    if (c->au.rec && !rc)
        plan_observe(c->au.rec, c->au.idx, pl->st.seconds);
    passion_ctx *ctx = c->ctx;
    ctx->cnt.messages_sent += (uint64_t)pl->st.messages;
    ctx->cnt.bytes_sent += (uint64_t)pl->st.bytes_sent;
    ctx->cnt.rounds += (uint64_t)pl->st.rounds;
    ctx->cnt.t_comm += pl->st.seconds;
    coll_xchg_state_set_last(c->state, &pl->st);
    if (c->a->stats)
        *c->a->stats = pl->st;
}

int coll_xchg_call_all(passion_ctx *ctx, const coll_xchg_args *a, int rc,
                       coll_xchg_choice *predict)
{
    double t0 = core_now();
    coll_xchg_call c;
    int done = 0;
    rc = call_begin(&c, ctx, a, rc, predict);
    rc = call_guess(&c, rc);
    rc = call_agree(&c, rc, &done);
    if (!done) {
        rc = call_shape(&c);
        if (!rc)
            rc = call_costs(&c);
        if (!rc)
            rc = call_choose(&c);
        if (!rc && predict) {
            predict->alg = c.run;
            predict->radix = c.run_radix;
            predict->seconds = coll_xchg_model(&c.costs, c.run, c.run_radix,
                                               &c.shape, NULL);
        } else if (!rc) {
            rc = call_run(&c);
        }
    }
    call_end(&c, t0, rc);
    return rc;
}

int coll_exchange(passion_ctx *ctx, const coll_xchg_args *args)
{
    if (!ctx || !args)
        return PASSION_EINVAL;
    return coll_xchg_call_all(ctx, args, PASSION_OK, NULL);
}

#ifdef PASSION_TEST_HOOKS /* tests only */
int coll_xchg_predict(passion_ctx *ctx, const coll_xchg_args *args,
                      coll_xchg_choice *out)
{
    if (!ctx || !args || !out)
        return PASSION_EINVAL;
    coll_xchg_args a = *args;
    if (a.alg == PASSION_XCHG_DEFAULT)
        a.alg = PASSION_XCHG_AUTO;
    return coll_xchg_call_all(ctx, &a, PASSION_OK, out);
}
#endif
