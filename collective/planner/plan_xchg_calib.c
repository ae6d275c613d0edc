/*
 * plan_xchg_calib.c - the one message-cost calibration of the library (alpha,
 * beta and their parts; exchange.h defines them), run once per context
 * the first time a choice needs it, by the exchange's `auto` or by the
 * two-phase method's model, whichever comes first: both read the same
 * figures afterwards.
 *
 *   t1 = one ring step of 8 bytes       = round + msg  (= alpha)
 *   t2 = 8 bytes to every peer at once  = round + (P-1) msg
 *   t3 = one ring step of S bytes       = round + msg + S byte
 *   a local copy of S bytes             = S copy
 * each the median of a few repetitions, then the maximum over ranks (the
 * slowest rank sets the pace of a round), so every rank holds the same
 * costs. About a dozen rounds: microseconds at P = 2, a few hundred
 * milliseconds at P = 16 on two cores.
 *
 * The calibration measures this machine: its messages are plain MPI
 * sends, not charged by the simulated network (passion/net.c), whose
 * latency and per-byte time enter the costs separately (net_msg,
 * net_byte: the model charges them to the messages that leave a node),
 * so that they are not counted twice.
 *
 * With the simulated network on (and neither msg_alpha nor msg_beta set)
 * nothing is measured: the messages between nodes cost what its options
 * say, exactly, and the messages within a node the built-in figures
 * below (a quiet node's shared memory: round 2.5 us, message 2.5 us,
 * 0.2 ns/B, copy 0.1 ns/B; source COLL_COSTS_SIMNET). A measurement there
 * is taken under load, by ranks that outnumber the cores: its medians
 * moved from run to run by more than the difference between the flat
 * and the two-level exchange on the 1 ms network, so `auto`
 * chose one or the other from run to run. With fixed figures its choice
 * is a function of the options and the shape alone: the same on every
 * run.
 *
 * The probes travel on the communicator the caller passes (the
 * exchange's own, errors returned), with the core's waits; the measured
 * costs are kept in the planner's state of the context
 * (plan_xchg_state).
 *
 * Measured costs go to the wisdom file with the planner's records (a
 * line per placement: ranks and nodes) when the option wisdom names one;
 * a run that loads them (the file is read before anything is measured)
 * takes them as measured and calibrates nothing, so no probe runs inside
 * its timed calls and its choices are those of the run that measured.
 *
 * Invariant: the stored costs are identical on every rank.
 */
#include "plan_xchg.h"

#include <stdlib.h>
#include <string.h>

#define CAL_BIG (64 * 1024)
#define CAL_SMALL 8
#define CAL_TAG (COLL_TAG + 14)
/* repetitions at most (calibrate) */
#define REPS_MAX 9

/* built-in costs when nothing is known (only for options with one of the
   two values set, and for one rank) */
#define DEF_ALPHA 5e-6
#define DEF_BETA 2e-10
#define DEF_COPY 1e-10

coll_xchg_costs coll_xchg_costs_default(void)
{
    coll_xchg_costs c = {.round = DEF_ALPHA / 2, .msg = DEF_ALPHA / 2,
                         .byte = DEF_BETA, .copy = DEF_COPY,
                         .source = COLL_COSTS_DEFAULT};
    return c;
}

/* the simulated network's price of a message between nodes (the model
   charges it to the messages that leave a node: ops->net) */
static void add_net(const passion_ctx *ctx, coll_xchg_costs *c)
{
    c->net_msg = ctx->nnodes > 1 ? ctx->opt.sim_net_latency_us * 1e-6 : 0;
    c->net_byte = ctx->nnodes > 1 ? ctx->opt.sim_net_byte_ns * 1e-9 : 0;
}

static int costs_known(passion_ctx *ctx, coll_xchg_costs *out);

int coll_xchg_costs_ready(passion_ctx *ctx, coll_xchg_costs *out)
{
    if (!costs_known(ctx, out))
        return 0;
    add_net(ctx, out);
    return 1;
}

static int costs_known(passion_ctx *ctx, coll_xchg_costs *out)
{
    const core_options *o = &ctx->opt;
    if (o->msg_alpha > 0 || o->msg_beta > 0) {
        /* the paper's model: every message pays the whole start-up */
        coll_xchg_costs c = {0};
        c.round = 0;
        c.msg = o->msg_alpha > 0 ? o->msg_alpha : DEF_ALPHA;
        c.byte = o->msg_beta > 0 ? o->msg_beta : DEF_BETA;
        c.copy = DEF_COPY;
        c.source = COLL_COSTS_OPTIONS;
        *out = c;
        return 1;
    }
    if ((o->sim_net_latency_us > 0 || o->sim_net_byte_ns > 0) &&
        ctx->nnodes > 1) {
        *out = coll_xchg_costs_default();
        out->source = COLL_COSTS_SIMNET;
        return 1;
    }
    plan_state *ps = plan_state_get(ctx);
    plan_xchg_state *xs = plan_state_xchg(ps);
    if (xs && xs->calibrated) {
        *out = xs->costs;
        return 1;
    }
    /* measured by an earlier run on this placement, from the wisdom
       (loaded, so the same on every rank) */
    const plan_msg_costs *w =
        ps ? plan_msg_costs_find(plan_state_table(ps), ctx->size, ctx->nnodes)
           : NULL;
    if (w && ctx->size > 1) {
        coll_xchg_costs c = {0};
        c.round = w->round;
        c.msg = w->msg;
        c.byte = w->byte;
        c.copy = w->copy;
        c.source = COLL_COSTS_MEASURED;
        xs->calibrated = 1;
        xs->costs = c;
        *out = c;
        return 1;
    }
    if (ctx->size <= 1) {
        *out = coll_xchg_costs_default();
        return 1;
    }
    return 0;
}

int64_t coll_calib_bytes(int P)
{
    return 2 * CAL_BIG + 2 * (int64_t)P * CAL_SMALL +
           2 * (int64_t)P * (int64_t)sizeof(MPI_Request) + 64;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* one ring step (send to +1, receive from -1) of n bytes, timed */
static int ring(passion_ctx *ctx, MPI_Comm comm, char *s, char *r, int n,
                MPI_Request *q, double *t)
{
    int P = ctx->size, me = ctx->rank;
    double t0 = core_now();
    if (MPI_Irecv(r, n, MPI_BYTE, (me - 1 + P) % P, CAL_TAG, comm,
                  &q[0]) != MPI_SUCCESS ||
        MPI_Isend(s, n, MPI_BYTE, (me + 1) % P, CAL_TAG, comm, &q[1]) !=
            MPI_SUCCESS)
        return PASSION_EMPI;
    int rc = core_waitall(2, q);
    *t = core_now() - t0;
    return rc;
}

/* CAL_SMALL bytes to every other rank at once, timed */
static int fan(passion_ctx *ctx, MPI_Comm comm, char *s, char *r,
               MPI_Request *q, double *t)
{
    int P = ctx->size, me = ctx->rank, n = 0;
    double t0 = core_now();
    for (int i = 1; i < P; i++)
        if (MPI_Irecv(r + i * CAL_SMALL, CAL_SMALL, MPI_BYTE,
                      (me - i + P) % P, CAL_TAG, comm,
                      &q[n++]) != MPI_SUCCESS)
            return PASSION_EMPI;
    for (int i = 1; i < P; i++)
        if (MPI_Isend(s + i * CAL_SMALL, CAL_SMALL, MPI_BYTE, (me + i) % P,
                      CAL_TAG, comm, &q[n++]) != MPI_SUCCESS)
            return PASSION_EMPI;
    int rc = core_waitall(n, q);
    *t = core_now() - t0;
    return rc;
}

/* v[0..n) replaced by its maximum over comm's ranks, with the core's
   yielding wait */
static int max_over_ranks(MPI_Comm comm, int64_t *v, int n)
{
    int64_t out[3 * REPS_MAX + 1];
    MPI_Request req;
    if (n > (int)(sizeof out / sizeof out[0]) ||
        MPI_Iallreduce(v, out, n, MPI_INT64_T, MPI_MAX, comm, &req) !=
            MPI_SUCCESS)
        return PASSION_EMPI;
    int rc = core_waitall(1, &req);
    if (!rc)
        memcpy(v, out, (size_t)n * sizeof *v);
    return rc;
}

int coll_xchg_calibrate(passion_ctx *ctx, MPI_Comm comm, void *scratch,
                        coll_xchg_costs *out)
{
    int P = ctx->size;
    char *big_s = scratch, *big_r = big_s + CAL_BIG;
    char *sm_s = big_r + CAL_BIG, *sm_r = sm_s + (int64_t)P * CAL_SMALL;
    MPI_Request *q = (MPI_Request *)(void *)(
        ((uintptr_t)(sm_r + (int64_t)P * CAL_SMALL) + 15) & ~(uintptr_t)15);
    memset(scratch, 0, (size_t)(2 * CAL_BIG + 2 * (int64_t)P * CAL_SMALL));
    /* per repetition, after a barrier: two dependent ring steps of 8
       bytes, one fan of 8 bytes to every peer, one ring step of CAL_BIG
       bytes; each phase timed as a whole, so that the waits for a peer
       that is not running (an oversubscribed node) are in the cost */
    /* repetitions: 9 where a round costs microseconds (P <= 2 here),
       3 where it costs milliseconds */
    int REPS = P <= 2 ? 9 : 3;
    double t[3 * REPS_MAX + 1], dummy;
    int rc = PASSION_OK;
    double tc = 1e30;
    for (int i = 0; i < 3; i++) {
        double t0 = core_now();
        memcpy(big_r, big_s, CAL_BIG);
        double d = core_now() - t0;
        tc = d < tc ? d : tc;
        big_s[i] = big_r[CAL_BIG - 1 - i]; /* keep the copy alive */
    }
    rc = ring(ctx, comm, sm_s, sm_r, CAL_SMALL, q, &dummy); /* warm-up */
    for (int r = 0; r < REPS && !rc; r++) {
        MPI_Request b;
        if (MPI_Ibarrier(comm, &b) != MPI_SUCCESS || core_waitall(1, &b)) {
            rc = PASSION_EMPI;
            break;
        }
        double a1, a2;
        rc = ring(ctx, comm, sm_s, sm_r, CAL_SMALL, q, &a1);
        if (!rc)
            rc = ring(ctx, comm, sm_s, sm_r, CAL_SMALL, q, &a2);
        t[3 * r] = (a1 + a2) / 2;
        if (!rc)
            rc = fan(ctx, comm, sm_s, sm_r, q, &t[3 * r + 1]);
        if (!rc)
            rc = ring(ctx, comm, big_s, big_r, CAL_BIG, q, &t[3 * r + 2]);
    }
    t[3 * REPS] = tc;
    if (rc)
        return core_err(ctx, rc, "exchange calibration: MPI failed");

    /* nanoseconds, maximum over ranks, then the median repetition */
    int64_t v[3 * REPS_MAX + 1];
    for (int i = 0; i < 3 * REPS + 1; i++)
        v[i] = (int64_t)(t[i] * 1e9);
    rc = max_over_ranks(comm, v, 3 * REPS + 1);
    if (rc)
        return core_err(ctx, rc, "exchange calibration: allreduce failed");
    double m[3][REPS_MAX];
    for (int r = 0; r < REPS; r++)
        for (int k = 0; k < 3; k++)
            m[k][r] = (double)v[3 * r + k] * 1e-9;
    /* waits for peers are part of every round: medians for the start-up
       costs; they are not part of the per-byte cost: the fastest
       repetition of the long step against the fastest short one */
    double m0 = median(m[0], REPS), m1 = median(m[1], REPS);
    median(m[2], REPS); /* sorted: m[k][0] is the fastest */
    v[0] = (int64_t)(m0 * 1e9);
    v[1] = (int64_t)(m1 * 1e9);
    v[2] = (int64_t)((m[2][0] - m[0][0] + m0) * 1e9);
    v[3] = v[3 * REPS];
    double a1 = (double)v[0] * 1e-9, af = (double)v[1] * 1e-9,
           ab = (double)v[2] * 1e-9, cp = (double)v[3] * 1e-9;
    coll_xchg_costs c = {0};
    c.msg = P > 2 && af > a1 ? (af - a1) / (P - 2) : 0;
    if (c.msg > a1)
        c.msg = a1;
    c.round = a1 - c.msg;
    if (c.round < 1e-7)
        c.round = 1e-7;
    c.copy = cp / CAL_BIG;
    if (c.copy < 1e-12)
        c.copy = 1e-12;
    /* a message moves its bytes at least once: never cheaper than a copy */
    c.byte = ab > a1 ? (ab - a1) / CAL_BIG : c.copy;
    if (c.byte < c.copy)
        c.byte = c.copy;
    c.source = COLL_COSTS_MEASURED;
    *out = c;
    return PASSION_OK;
}

int plan_xchg_costs_get(passion_ctx *ctx, MPI_Comm comm,
                        coll_xchg_costs *out)
{
    if (coll_xchg_costs_ready(ctx, out))
        return PASSION_OK;
    plan_state *ps = plan_state_get(ctx);
    plan_xchg_state *st = plan_state_xchg(ps);
    int64_t n = coll_calib_bytes(ctx->size);
    void *scratch = core_malloc(ctx, (size_t)n);
    int rc = core_agree(ctx, (!st || !scratch || comm == MPI_COMM_NULL)
                                 ? core_err(ctx, PASSION_ENOMEM,
                                            "exchange calibration: no memory")
                                 : PASSION_OK);
    /* the wisdom first (collective, once; nothing without the option
       wisdom): it may hold this placement's costs, then nothing is
       measured */
    if (!rc)
        rc = plan_state_load(ctx, ps, comm);
    int known = !rc && coll_xchg_costs_ready(ctx, out);
    if (!rc && !known)
        rc = coll_xchg_calibrate(ctx, comm, scratch, out);
    core_free(ctx, scratch);
    if (rc || known)
        return rc;
    if (ctx->opt.verbosity >= 2 && ctx->rank == 0)
        fprintf(stderr, "passion: message costs measured: round %.3g s, "
                "msg %.3g s, byte %.3g s, copy %.3g s/B\n", out->round,
                out->msg, out->byte, out->copy);
    st->calibrated = 1;
    st->costs = *out;
    /* kept for the wisdom file, saved when the context is freed */
    plan_msg_costs pc = {ctx->size, ctx->nnodes, out->round, out->msg,
                     out->byte, out->copy};
    plan_msg_costs_put(plan_state_table(ps), &pc);
    plan_state_learned(ps);
    add_net(ctx, out);
    return PASSION_OK;
}
