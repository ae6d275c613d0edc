/*
 * etp_choose.c - method auto's choice for a collective section access:
 * the candidates (independent access, each rank's own choice or direct
 * on every rank; etp-dynamic and etp-static on each aggregator set and,
 * under the exchange's auto on several nodes, each exchange on its own
 * rounds), priced by the cost model (etp_model.c), the cheapest kept and
 * the plan set to run it.
 *
 * Invariants: every input is identical on every rank (the FAD, the
 * options checked equal in it, the agreed calibrations, the learned
 * costs carried in the FAD), so every rank chooses the same method,
 * aggregators, exchange and caps; ties go to the first of independent,
 * dynamic, static and, among aggregator sets, the rule's; the plan's
 * caps change only where a two-phase candidate with its own exchange
 * wins.
 */
#include "coll.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Writes on uncached data: of two near-equal two-phase plans, the one
 * with fewer aggregators doing file I/O wins (its prediction at most this
 * much above the other's). The model shares the file's bandwidth among
 * the aggregators whatever their number, where on one device fewer,
 * longer read-modify-write streams run faster; not for reads, where
 * that did not hold.
 */
#define COLL_COLD_FEWER 0.05

/*
 * The exchange the two-phase method's rounds run, under the exchange's
 * auto on several nodes: each candidate priced on its OWN
 * rounds, those its staging cuts as the same algorithm fixed cuts them
 * (coll_plan_caps_alg: the two-level exchange's leaders' blocks shrink
 * the rounds, A1 holds none), with its own file requests, messages
 * within and between nodes (etp_time, etp_net); the cheapest wins, and
 * the rounds then run it as if fixed (p->xalg) on its caps, so that the
 * call makes exactly the counts of that setting (a candidate priced on
 * rounds another's staging cut could win where it is slower).
 * Candidates: A1 (flat; the algorithm etp_net's flat term counts, pair
 * by pair) and the two-level exchange; one whose staging leaves less than
 * an element a pair is left out. The same on every rank: the costs are
 * agreed (or the options', the simulated network's) and the rest comes
 * from the FAD. Returns the prediction (HUGE_VAL: none), the caps and
 * algorithm in *cx, *cs, *alg; p's caps are left as they were.
 */
static double xchg_pick(coll_plan *p, const coll_etp_shape *sh,
                        const int64_t *ind_bytes,
                        int64_t req_sum, int64_t req_max,
                        const coll_xchg_costs *mc, double S, int *alg,
                        int64_t *cx, int64_t *cs)
{
    static const int cand[2] = {PASSION_XCHG_A1, PASSION_XCHG_TWOLEVEL};
    const int64_t cx0 = p->cap_xchg, cs0 = p->cap_stage;
    double best = HUGE_VAL;
    for (int i = 0; i < 2; i++) {
        coll_plan_caps_alg(p, p->ctx->opt.memory_budget, cand[i]);
        if (p->cap_xchg < p->esize * p->P &&
            coll_xchg_need(cand[i], p->P, p->cap_xchg) > 0)
            continue;
        double t =
            coll_etp_time(p, sh, ind_bytes, req_sum, req_max, mc, S, cand[i]);
        if (p->ctx->opt.verbosity >= 3 && p->ctx->rank == 0)
            fprintf(stderr, "passion: auto: exchange %s on its rounds "
                    "(exchange buffers %lld bytes): %.3g s\n",
                    coll_xchg_name(cand[i]), (long long)p->cap_xchg, t);
        if (t < best) {
            best = t;
            *alg = cand[i];
            *cx = p->cap_xchg;
            *cs = p->cap_stage;
        }
    }
    p->cap_xchg = cx0;
    p->cap_stage = cs0;
    return best;
}

static int xchg_pick_applies(const coll_plan *p)
{
    return p->ctx->opt.exchange == PASSION_XCHG_AUTO && p->P > 1 &&
           p->ctx->nnodes > 1;
}

void coll_xchg_pick(coll_plan *p)
{
    coll_xchg_costs mc;
    if (!xchg_pick_applies(p) || !coll_xchg_costs_ready(p->ctx, &mc))
        return;
    int64_t *ind_bytes = p->scratch;
    coll_ind_counts ic;
    coll_ind_time(p, PASSION_METHOD_AUTO, coll_sync_cost(p->ctx), ind_bytes,
                  &ic);
    int alg = PASSION_XCHG_DEFAULT;
    int64_t cx = 0, cs = 0;
    coll_etp_shape sh;
    coll_etp_shape_of(p, &sh);
    if (xchg_pick(p, &sh, ind_bytes, ic.req_sum, ic.req_max, &mc,
                  coll_round_inner(p->ctx), &alg, &cx, &cs) < HUGE_VAL) {
        p->xalg = alg;
        p->cap_xchg = cx;
        p->cap_stage = cs;
    }
}

/* the inputs every candidate is priced with */
typedef struct choose_in {
    coll_xchg_costs mc;  /* the message costs */
    double S, Si;        /* a learned round; one inside a call */
    int64_t *ind_bytes;  /* each rank's independent file bytes (scratch) */
    coll_ind_counts ic;       /* independent access's requests and bytes */
    double F_ind, F_etp; /* the classes' fixed costs */
    double *est;         /* every method's price, or NULL */
} choose_in;

/* the best candidate so far */
typedef struct choice {
    int best;           /* the method */
    double tbest;       /* its price, fixed cost included */
    int alg, aggr;      /* a two-phase best's exchange and aggregator set */
    int64_t cx, cs;     /* and its caps */
    int clients;        /* its aggregators with file I/O */
    int sets[2], nsets; /* the aggregator sets priced */
    double t_set[2][2]; /* the two-phase prices, per method and set */
} choice;

static const char *const set_name[3] = {"rule", "one per node",
                                        "all ranks"};

/*
 * Step 1, independent access: each rank's own choice (sieve.c) and,
 * where it may be cheaper, direct on every rank. Writes that sieving puts
 * in rank order (the token passes through every rank, and between nodes
 * over the network) may cost more than direct writes, which need no
 * order where no element is shared; reads that some rank would sieve are
 * priced by each rank at the file's whole bandwidth, which the ranks
 * share. Returns the cheaper's price (no fixed cost), its method in
 * *method; t_own and t_dir the two prices (t_dir HUGE_VAL: not priced).
 */
static double ind_candidates(coll_plan *p, choose_in *in, int *method,
                             double *t_own, double *t_dir)
{
    passion_ctx *ctx = p->ctx;
    double t_ind = coll_ind_time(p, PASSION_METHOD_AUTO, in->S,
                                 in->ind_bytes, &in->ic);
    *method = PASSION_METHOD_AUTO; /* each rank sieve.c's choice */
    int64_t useful_sum = 0;
    for (int r = 0; r < p->P; r++)
        useful_sum += p->elems[r] * p->esize;
    const int read_sieved =
        !p->op_write && p->P > 1 && in->ic.bytes_sum > useful_sum;
    const int unordered = !read_sieved && p->op_write &&
                          coll_write_ordered(p, PASSION_METHOD_AUTO) &&
                          !coll_write_ordered(p, PASSION_METHOD_DIRECT);
    *t_own = t_ind;
    *t_dir = HUGE_VAL;
    if (read_sieved || in->est || unordered) {
        coll_ind_counts dc;
        *t_dir = coll_ind_time(p, PASSION_METHOD_DIRECT, in->S, NULL, &dc);
        if (ctx->opt.verbosity >= 3 && ctx->rank == 0)
            fprintf(stderr, "passion: auto: direct%s %.3g s "
                    "(requests max %lld sum %lld)\n",
                    read_sieved ? "" : ", unordered", *t_dir,
                    (long long)dc.req_max, (long long)dc.req_sum);
        if ((read_sieved || unordered) && *t_dir < t_ind) {
            t_ind = *t_dir;
            *method = PASSION_METHOD_DIRECT;
        }
    }
    if (ctx->opt.verbosity >= 3 && ctx->rank == 0)
        fprintf(stderr, "passion: auto: independent %.3g s (requests max "
                "%lld sum %lld, bytes %lld, ordered %d, warm %d; L %.3g B "
                "%.3g, streams from %lld to %lld B a rank %.3g; round "
                "%.3g msg %.3g, learned round %.3g (inside a call %.3g); "
                "fixed: independent %.3g two-phase %.3g, -1 none)\n", t_ind,
                (long long)in->ic.req_max, (long long)in->ic.req_sum,
                (long long)in->ic.bytes_sum,
                p->op_write && coll_write_ordered(p, PASSION_METHOD_AUTO),
                p->warm, p->io_lat, p->io_bw, (long long)p->ramp_short,
                (long long)p->ramp_long, p->bw_long, in->mc.round,
                in->mc.msg, in->S, in->Si, p->fixed[COLL_FIX_IND],
                p->fixed[COLL_FIX_ETP]);
    return t_ind;
}

/*
 * Step 2, the two-phase candidates: each method on each aggregator set
 * (on several nodes with no cb_* option, one per node, the rule's, first:
 * ties keep it, and every rank; else the rule's or the options'), each
 * priced with its own domains, file requests, messages within and
 * between nodes and (under the exchange's auto) exchange on its own
 * rounds, as the same setting fixed runs them. Below its minimum budget
 * the two-phase method cannot run: none is then a candidate.
 */
static void etp_candidates(coll_plan *p, const choose_in *in, choice *ch)
{
    passion_ctx *ctx = p->ctx;
    static const int etp[2] = {PASSION_METHOD_ETP_DYNAMIC,
                               PASSION_METHOD_ETP_STATIC};
    const int etp_ok = ctx->opt.memory_budget >= coll_etp_min_budget(p);
    const int pick = xchg_pick_applies(p);
    for (int k = 0; k < 2 && etp_ok; k++)
        for (int g = 0; g < ch->nsets; g++) {
            p->aggr = ch->sets[g];
            /* ind_bytes lives in scratch, which the domain code does not
               use */
            coll_domains(p, etp[k] == PASSION_METHOD_ETP_DYNAMIC);
            int alg = PASSION_XCHG_DEFAULT;
            int64_t cx = p->cap_xchg, cs = p->cap_stage;
            coll_etp_shape sh;
            coll_etp_shape_of(p, &sh);
            double t = pick ? xchg_pick(p, &sh, in->ind_bytes,
                                        in->ic.req_sum, in->ic.req_max,
                                        &in->mc, in->Si, &alg, &cx, &cs)
                            : HUGE_VAL;
            if (t == HUGE_VAL) {
                alg = PASSION_XCHG_DEFAULT;
                cx = p->cap_xchg;
                cs = p->cap_stage;
                t = coll_etp_time(p, &sh, in->ind_bytes, in->ic.req_sum,
                                  in->ic.req_max, &in->mc, in->Si,
                                  ctx->opt.exchange);
            }
            ch->t_set[k][g] = t;
            if (in->est && t + in->F_etp < in->est[etp[k]])
                in->est[etp[k]] = t + in->F_etp;
            /* the aggregators with file I/O: a domain that holds some
               rank's element */
            const int cold_write = !p->warm && p->op_write;
            const int clients = (int)sh.naggs;
            if (ctx->opt.verbosity >= 3 && ctx->rank == 0)
                fprintf(stderr, "passion: auto: %s%s%s%s%s %.3g s + fixed "
                        "%.3g s (%d aggregator(s) with file I/O)\n",
                        k ? "etp-static" : "etp-dynamic",
                        alg >= 0 ? " + " : "",
                        alg >= 0 ? coll_xchg_name(alg) : "",
                        ch->nsets > 1 ? ", aggregators " : "",
                        ch->nsets > 1 ? set_name[ch->sets[g]] : "", t,
                        in->F_etp, clients);
            /* writes on uncached data: of two near-equal two-phase plans,
               the one with fewer aggregators doing file I/O
               (COLL_COLD_FEWER; on one node: etp-static against
               etp-dynamic) */
            const int best_etp = ch->best == PASSION_METHOD_ETP_DYNAMIC ||
                                 ch->best == PASSION_METHOD_ETP_STATIC;
            const int fewer = best_etp && cold_write &&
                              clients < ch->clients &&
                              t <= p->pred_raw * (1 + COLL_COLD_FEWER);
            if (fewer || t + in->F_etp < ch->tbest) {
                ch->tbest = t + in->F_etp;
                ch->best = etp[k];
                p->pred_raw = t;
                ch->alg = alg;
                ch->aggr = ch->sets[g];
                ch->cx = cx;
                ch->cs = cs;
                ch->clients = clients;
            }
        }
}

/* Step 3: the rounds run the exchange priced, on the rounds it was
   priced on, with the aggregators priced. */
static void choice_apply(coll_plan *p, const choice *ch)
{
    passion_ctx *ctx = p->ctx;
    p->aggr = COLL_AGGR_RULE;
    if (ch->best == PASSION_METHOD_ETP_DYNAMIC ||
        ch->best == PASSION_METHOD_ETP_STATIC) {
        p->xalg = ch->alg;
        p->aggr = ch->aggr;
        p->cap_xchg = ch->cx;
        p->cap_stage = ch->cs;
        if (ch->nsets > 1 && ctx->opt.verbosity >= 3 && ctx->rank == 0) {
            const int k = ch->best == PASSION_METHOD_ETP_STATIC;
            fprintf(stderr, "passion: auto: aggregators %s (%s: one per "
                    "node %.3g s, all ranks %.3g s)\n",
                    set_name[ch->aggr], k ? "etp-static" : "etp-dynamic",
                    ch->t_set[k][0], ch->t_set[k][1]);
        }
    }
    if (ctx->opt.verbosity >= 2 && ctx->rank == 0)
        fprintf(stderr, "passion: auto chose %s (%.3g s predicted)\n",
                ch->best == PASSION_METHOD_AUTO     ? "independent"
                : ch->best == PASSION_METHOD_DIRECT ? "independent, direct"
                : ch->best == PASSION_METHOD_ETP_DYNAMIC ? "etp-dynamic"
                                                         : "etp-static",
                ch->tbest);
}

int coll_method_choose(coll_plan *p, double *seconds, double *est)
{
    passion_ctx *ctx = p->ctx;
    choose_in in;
    /* the one message calibration (collective the first time: every rank
       chooses here); on failure the model runs on the one-rank
       defaults, the same everywhere since the failure is agreed */
    if (coll_xchg_costs_get(ctx, &in.mc))
        in.mc = coll_xchg_costs_default();
    in.ind_bytes = p->scratch;
    in.est = est;
    /* a collective round: learned from the FAD's rounds */
    in.S = coll_sync_cost(ctx);
    /* the two-phase method's rounds inside the call (its exchange
       rounds, the two-level exchange's outcome agreement) */
    in.Si = coll_round_inner(ctx);
    int ind_method;
    double t_own, t_dir;
    double t_ind = ind_candidates(p, &in, &ind_method, &t_own, &t_dir);
    /* each method's fixed cost: learned from the calls that ran it, else
       its rounds (coll_fixed_learn) */
    in.F_ind = coll_fixed_cost(p, COLL_FIX_IND, in.S, in.S);
    in.F_etp = coll_fixed_cost(p, COLL_FIX_ETP, 2 * in.S, in.S);
    if (est) {
        /* every method's price, for the planner (etp_auto.c) */
        coll_ind_counts sc;
        for (int m = 0; m <= PASSION_METHOD_ETP_DYNAMIC; m++)
            est[m] = HUGE_VAL;
        est[PASSION_METHOD_AUTO] = t_own + in.F_ind;
        est[PASSION_METHOD_DIRECT] = t_dir + in.F_ind;
        est[PASSION_METHOD_SIEVE] =
            coll_ind_time(p, PASSION_METHOD_SIEVE, in.S, NULL, &sc) +
            in.F_ind;
    }
    choice ch = {.best = ind_method, .tbest = t_ind + in.F_ind,
                 .alg = PASSION_XCHG_DEFAULT, .aggr = COLL_AGGR_RULE,
                 .cx = p->cap_xchg, .cs = p->cap_stage, .clients = 0,
                 .sets = {COLL_AGGR_RULE, COLL_AGGR_RULE}, .nsets = 1,
                 .t_set = {{HUGE_VAL, HUGE_VAL}, {HUGE_VAL, HUGE_VAL}}};
    p->pred_raw = t_ind;
    if (ctx->nnodes > 1 && ctx->nnodes < p->P && !coll_aggr_option(ctx)) {
        ch.sets[0] = COLL_AGGR_NODE;
        ch.sets[1] = COLL_AGGR_ALL;
        ch.nsets = 2;
    }
    etp_candidates(p, &in, &ch);
    choice_apply(p, &ch);
    /* every method pays the FAD's round, at least the learned round (not
       a choice: the same for every candidate; the prediction of the
       call); the outcome's agreement is in the fixed cost */
    *seconds = ch.tbest + in.S;
    return ch.best;
}
