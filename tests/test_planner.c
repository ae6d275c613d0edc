/*
 * test_planner.c - the planner (collective/planner/planner.h).
 *
 *  1. the rule, without MPI, against a naive model of it: estimate always
 *     runs the first candidate; measure runs each candidate PLAN_TRIALS
 *     times interleaved, then asks for the agreement, and keeps the
 *     candidate whose slowest-rank best time is the least (random times,
 *     random candidate counts); a candidate some rank never observed
 *     (PLAN_SLOW) never wins over one observed; after PLAN_RECHECK calls
 *     the measurement starts again; a wisdom record runs its winner from
 *     the first call and is never measured again;
 *  2. wisdom's text: random decided tables formatted and parsed back hold
 *     the same records; malformed texts are refused with the line named;
 *  3. the exchange's auto in measure mode, random regular and irregular
 *     shapes: the data equals MPI_Alltoallv's; every rank ran the same
 *     algorithm at every call; after the measurement it keeps one, and
 *     that one is among the fastest candidates this rank measured (the
 *     agreed winner's slowest-rank time is the least);
 *  4. wisdom through the option: a context that measured writes the file
 *     when it goes; a new context with that file runs the file's winner
 *     from its first call, 10 calls of 10; estimate runs one algorithm 10
 *     of 10; a malformed file is PASSION_EINVAL on every rank, its line
 *     named, and the file is left as it was;
 *  5. the collective access's auto in measure mode on random 2-D arrays
 *     (row blocks, column blocks, or one shared strided tile): every read
 *     equals the file's values, every write reads back, every rank ran
 *     the same method at every call, and of the last 10 writes at least 8
 *     ran one method (reads: some go early by the model's rule);
 *  6. the exchange's measured costs through wisdom: a context (estimate,
 *     wisdom=PATH) that calibrates writes an xchg-costs line for its
 *     placement; a new context with that file posts no probe message of
 *     the calibration (counted through MPI's profiling interface: tag
 *     COLL_TAG + 14 on the exchange's communicator) and chooses and
 *     predicts, call for call, exactly as the run that measured; costs
 *     lines read back to the same doubles, and malformed ones are refused
 *     with the line named.
 */
#include "harness.h"

#include "../collective/exchange/exchange.h"
#include "../collective/planner/planner.h"

#include <math.h>
#include <unistd.h>

/* ------------------------------------------------ 1. the rule, no MPI */

static plan_sig sig_of(uint64_t *s)
{
    plan_sig g;
    memset(&g, 0, sizeof g);
    g.op = PLAN_OP_XCHG;
    for (int k = 0; k < PLAN_KEYS; k++)
        g.key[k] = th_range(s, -5, 1 << 20);
    return g;
}

static void test_rule(void)
{
    uint64_t s = th_case_seed = th_seed + 1;
    for (int round = 0; round < 200; round++) {
        plan_table t;
        plan_table_init(&t);
        int n = (int)th_range(&s, 1, PLAN_CANDS);
        plan_cand c[PLAN_CANDS];
        for (int i = 0; i < n; i++)
            c[i] = (plan_cand){i + 10, (int)th_range(&s, 0, 4), 1e-6 * i};
        plan_sig g = sig_of(&s);
        plan_rec *r = plan_add(&t, &g, c, n);
        TH_CHECK(r && plan_find(&t, &g) == r, "record found");
        if (!r)
            continue;
        /* estimate: the first, never an agreement */
        for (int k = 0; k < 3 * PLAN_TRIALS * n; k++) {
            plan_pick pk = plan_next(r, PLAN_ESTIMATE);
            TH_CHECK(pk.index == 0 && !pk.agree, "estimate ran %d", pk.index);
        }
        plan_add(&t, &g, c, n); /* afresh */
        /* measure: 3 ranks' times, the reference keeps their minima */
        double ref[3][PLAN_CANDS];
        for (int q = 0; q < 3; q++)
            for (int i = 0; i < n; i++)
                ref[q][i] = HUGE_VAL;
        plan_rec rk[3];
        rk[0] = rk[1] = rk[2] = *r;
        int never = n > 1 && th_range(&s, 0, 3) == 0
                        ? (int)th_range(&s, 0, n - 1) : -1;
        int64_t calls = 0;
        plan_pick pk = {0, 0, 0};
        for (;;) {
            plan_pick p0 = plan_next(&rk[0], PLAN_MEASURE);
            for (int q = 1; q < 3; q++) {
                plan_pick pq = plan_next(&rk[q], PLAN_MEASURE);
                TH_CHECK(pq.index == p0.index && pq.agree == p0.agree,
                         "ranks differ at call %lld", (long long)calls);
            }
            if (n == 1) {
                TH_CHECK(p0.index == 0 && !p0.agree, "one candidate");
                break;
            }
            if (calls < (int64_t)PLAN_TRIALS * n)
                TH_CHECK(p0.index == calls % n && !p0.agree && p0.trial,
                         "call %lld ran %d of %d", (long long)calls,
                         p0.index, n);
            if (p0.agree) {
                TH_CHECK(calls == (int64_t)PLAN_TRIALS * n,
                         "agreement at call %lld", (long long)calls);
                double v[3][PLAN_CANDS], m[PLAN_CANDS];
                for (int q = 0; q < 3; q++)
                    plan_times(&rk[q], v[q]);
                for (int i = 0; i < n; i++) {
                    m[i] = v[0][i];
                    for (int q = 1; q < 3; q++)
                        m[i] = fmax(m[i], v[q][i]);
                }
                for (int q = 0; q < 3; q++) {
                    pk = p0;
                    plan_decide(&rk[q], m, &pk);
                }
                break;
            }
            for (int q = 0; q < 3; q++) {
                double sec = 1e-6 * (double)th_range(&s, 1, 1000);
                if (p0.index == never && q == 1)
                    continue; /* rank 1 never observes it */
                plan_observe(&rk[q], p0.index, sec);
                ref[q][p0.index] = fmin(ref[q][p0.index], sec);
            }
            calls++;
        }
        if (n > 1) {
            /* the reference: least slowest-rank best, ties to the first;
               the first (the estimate's) unless beaten by PLAN_MARGIN */
            int w = -1;
            double wt = HUGE_VAL;
            for (int i = 0; i < n; i++) {
                double m = fmax(ref[0][i], fmax(ref[1][i], ref[2][i]));
                if (i != never && m < wt) {
                    wt = m;
                    w = i;
                }
            }
            double m0 = fmax(ref[0][0], fmax(ref[1][0], ref[2][0]));
            if (never != 0 && w != 0 && !(wt < m0 * (1 - PLAN_MARGIN)))
                w = 0;
            TH_CHECK(pk.index == w && rk[0].winner == w,
                     "kept %d, the reference %d (n %d, never %d)", pk.index,
                     w, n, never);
            /* kept until the re-check, then measured again */
            for (int64_t k = 1; k < PLAN_RECHECK; k++) {
                plan_pick p = plan_next(&rk[0], PLAN_MEASURE);
                if (p.index != w || p.trial) {
                    TH_CHECK(0, "call %lld after the decision ran %d",
                             (long long)k, p.index);
                    break;
                }
            }
            plan_pick p = plan_next(&rk[0], PLAN_MEASURE);
            TH_CHECK(p.trial && p.index == 0 && rk[0].winner < 0,
                     "the re-check starts a measurement");
        }
        /* wisdom: the winner from the first call, never measured */
        plan_sig g2 = sig_of(&s);
        plan_cand win = {77, 3, 0};
        TH_CHECK(plan_wisdom_put(&t, &g2, &win, 1e-3) == 0, "wisdom put");
        plan_rec *wr = plan_find(&t, &g2);
        for (int k = 0; wr && k < PLAN_RECHECK + 10; k++) {
            plan_pick p = plan_next(wr, PLAN_MEASURE);
            if (p.index != 0 || p.trial || p.agree) {
                TH_CHECK(0, "wisdom's record measured at call %d", k);
                break;
            }
        }
        plan_table_clear(&t);
    }
}

/* ---------------------------------------------------- 2. wisdom's text */

static void test_text(void)
{
    uint64_t s = th_case_seed = th_seed + 2;
    for (int round = 0; round < 50; round++) {
        plan_table t, u;
        plan_table_init(&t);
        plan_table_init(&u);
        int n = (int)th_range(&s, 0, 40);
        for (int i = 0; i < n; i++) {
            plan_sig g = sig_of(&s);
            plan_cand c = {(int)th_range(&s, 0, 9), (int)th_range(&s, 0, 64),
                           0};
            plan_wisdom_put(&t, &g, &c, 1e-6 * (double)th_range(&s, 1, 1e6));
        }
        size_t len = 0;
        char *text = plan_wisdom_format(&t, &len);
        char why[200] = "";
        int rc = text ? plan_wisdom_parse(&u, text, len, why, sizeof why)
                      : -1;
        TH_CHECK(rc == 0, "parse of formatted wisdom: %s", why);
        TH_CHECK(u.n == t.n, "%d records back of %d", u.n, t.n);
        for (int i = 0; i < t.n && i < u.n; i++) {
            const plan_rec *a = &t.rec[i];
            const plan_rec *b = plan_find(&u, &a->sig);
            TH_CHECK(b && b->cand[0].method == a->cand[0].method &&
                         b->cand[0].param == a->cand[0].param &&
                         fabs(b->agreed[0] / a->agreed[0] - 1) < 1e-5 &&
                         b->wisdom,
                     "record %d back", i);
        }
        free(text);
        plan_table_clear(&t);
        plan_table_clear(&u);
    }
    static const struct {
        const char *text;
        int line;
    } bad[] = {
        {"", 1},
        {"# passion wisdom 2\n", 1},
        {"# passion wisdom 1\nexchange 1 2 3\n", 2},
        {"# passion wisdom 1\n\n# c\nfft 1 2 3 4 5 6 7 8 0 0 1e-3\n", 4},
        {"# passion wisdom 1\nexchange 1 2 3 4 5 6 7 8 0 0 1e-3 x\n", 2},
        {"# passion wisdom 1\nexchange 1 2 3 4 5 6 7 8 -1 0 1e-3\n", 2},
        {"# passion wisdom 1\nexchange 1 2 3 4 5 6 7 8x 0 0 1e-3\n", 2},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        plan_table t;
        plan_table_init(&t);
        char why[200] = "", want[32];
        int rc = plan_wisdom_parse(&t, bad[i].text, strlen(bad[i].text), why,
                                   sizeof why);
        snprintf(want, sizeof want, "wisdom line %d:", bad[i].line);
        TH_CHECK(rc == PASSION_EINVAL && strstr(why, want),
                 "malformed text %zu: rc %d, '%s'", i, rc, why);
        plan_table_clear(&t);
    }
}

/* ------------------------------------------- 3. the exchange measured */

/* one exchange of a random shape (seeded alike on every rank) through
   passion_alltoallv, checked against MPI_Alltoallv; the algorithm that
   ran in *alg */
static int one_exchange(passion_ctx *ctx, uint64_t seed, int regular,
                        int *alg)
{
    int P = th_size, me = th_rank;
    uint64_t s = seed;
    int64_t base = th_range(&s, 0, 3000);
    int64_t *sc = malloc(4 * (size_t)P * sizeof *sc);
    int64_t *sd = sc + P, *rc = sd + P, *rd = rc + P;
    int *mc = malloc(4 * (size_t)P * sizeof *mc);
    int ok = 1;
    /* counts of pair (i -> j): a function of the seed, i and j */
    for (int j = 0; j < P; j++) {
        uint64_t a = seed ^ (uint64_t)(me * 131 + j), b = seed ^
                     (uint64_t)(j * 131 + me);
        sc[j] = regular ? base : th_range(&a, 0, base);
        rc[j] = regular ? base : th_range(&b, 0, base);
    }
    int64_t st = 0, rt = 0;
    for (int j = 0; j < P; j++) {
        sd[j] = st;
        rd[j] = rt;
        st += sc[j];
        rt += rc[j];
        mc[j] = (int)sc[j];
        mc[P + j] = (int)sd[j];
        mc[2 * P + j] = (int)rc[j];
        mc[3 * P + j] = (int)rd[j];
    }
    char *sb = malloc((size_t)st + 1), *rb = malloc((size_t)rt + 1),
         *ref = malloc((size_t)rt + 1);
    for (int i = 0; i < st; i++)
        sb[i] = (char)(th_next(&s) + (uint64_t)me);
    int r = regular ? passion_alltoall(ctx, sb, rb, base, MPI_CHAR,
                                       PASSION_XCHG_AUTO, 0)
                    : passion_alltoallv(ctx, sb, sc, sd, rb, rc, rd,
                                        MPI_CHAR, PASSION_XCHG_AUTO, 0);
    MPI_Alltoallv(sb, mc, mc + P, MPI_CHAR, ref, mc + 2 * P, mc + 3 * P,
                  MPI_CHAR, MPI_COMM_WORLD);
    ok = r == 0 && memcmp(rb, ref, (size_t)rt) == 0;
    coll_xchg_stats last;
    coll_xchg_last(ctx, &last);
    *alg = last.alg;
    free(sb);
    free(rb);
    free(ref);
    free(sc);
    free(mc);
    return ok;
}

static void test_measured(void)
{
    uint64_t s = th_case_seed = th_seed + 3;
    for (int shape = 0; shape < 6; shape++) {
        /* a context each: a shape's signature is new to its planner */
        passion_ctx *ctx = NULL;
        TH_CHECK(th_init(&ctx, "planner=measure") == 0, "init");
        if (!ctx)
            break;
        uint64_t seed = th_next(&s);
        int regular = shape % 2 == 0;
        int ran[64], n = (PLAN_TRIALS * PLAN_CANDS + 1) + 8;
        for (int k = 0; k < n; k++) {
            int alg = -1;
            TH_CHECK(one_exchange(ctx, seed, regular, &alg),
                     "shape %d call %d: data", shape, k);
            int lo = alg, hi = alg;
            MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN,
                          MPI_COMM_WORLD);
            MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX,
                          MPI_COMM_WORLD);
            TH_CHECK(lo == hi, "shape %d call %d: ranks ran %d and %d",
                     shape, k, lo, hi);
            ran[k] = alg;
        }
        /* the last 8 calls: one algorithm, kept */
        for (int k = n - 8; k < n; k++)
            TH_CHECK(ran[k] == ran[n - 1], "shape %d: call %d ran %d, the "
                     "last %d", shape, k, ran[k], ran[n - 1]);
        /* MPI's own call was among the candidates of every shape */
        int mpi = 0;
        for (int k = 0; k < n; k++)
            mpi |= ran[k] == PASSION_XCHG_MPI;
        TH_CHECK(mpi, "shape %d: MPI's call never tried", shape);
        passion_finalize(ctx);
    }
}

/* ------------------------------------------------ 4. wisdom, the option */

static void test_wisdom(void)
{
    th_case_seed = th_seed + 4;
    char path[512];
    snprintf(path, sizeof path, "%s/w.txt", th_dir());
    if (th_rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t seed = th_seed + 44;
    int alg = -1, first = -1;
    passion_ctx *ctx = NULL;
    TH_CHECK(th_init(&ctx, "planner=measure,wisdom=%s", path) == 0, "init");
    for (int k = 0; ctx && k < PLAN_TRIALS * PLAN_CANDS + 4; k++)
        TH_CHECK(one_exchange(ctx, seed, 1, &alg), "call %d", k);
    passion_finalize(ctx); /* writes the file */
    MPI_Barrier(MPI_COMM_WORLD);
    /* the file holds the decision */
    FILE *f = fopen(path, "r");
    char text[4096] = "";
    size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    plan_table t;
    plan_table_init(&t);
    char why[200] = "";
    TH_CHECK(len > 0 && plan_wisdom_parse(&t, text, len, why, sizeof why) ==
                 0 && t.n == 1,
             "wisdom file: %zu bytes, %d records, '%s'", len, t.n, why);
    int wmethod = t.n ? t.rec[0].cand[0].method : -2;
    TH_CHECK(wmethod == alg, "file's winner %d, the run's last %d", wmethod,
             alg);
    plan_table_clear(&t);
    /* a new context runs it from its first call, 10 of 10 */
    for (const char *mode = "measure"; mode; mode = NULL) {
        TH_CHECK(th_init(&ctx, "planner=%s,wisdom=%s", mode, path) == 0,
                 "init");
        for (int k = 0; ctx && k < 10; k++) {
            TH_CHECK(one_exchange(ctx, seed, 1, &alg), "call %d", k);
            TH_CHECK(alg == wmethod, "with wisdom, call %d ran %d, not %d",
                     k, alg, wmethod);
        }
        passion_finalize(ctx);
    }
    /* estimate: one algorithm, 10 of 10 */
    TH_CHECK(th_init(&ctx, "planner=estimate") == 0, "init");
    for (int k = 0; ctx && k < 10; k++) {
        TH_CHECK(one_exchange(ctx, seed, 1, &alg), "call %d", k);
        if (k == 0)
            first = alg;
        TH_CHECK(alg == first, "estimate: call %d ran %d, call 0 %d", k, alg,
                 first);
    }
    passion_finalize(ctx);
    /* malformed: EINVAL everywhere, the line named, the file kept */
    static const char bad[] = "# passion wisdom 1\nexchange 1 2 3\n";
    if (th_rank == 0) {
        f = fopen(path, "w");
        fputs(bad, f);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    TH_CHECK(th_init(&ctx, "wisdom=%s", path) == 0, "init");
    if (ctx) {
        char sb[64] = {0}, rb[64 * 64];
        int P = th_size < 64 ? th_size : 64;
        int r = P == th_size
                    ? passion_alltoall(ctx, sb, rb, 1, MPI_CHAR,
                                       PASSION_XCHG_AUTO, 0)
                    : PASSION_EINVAL;
        TH_CHECK(r == PASSION_EINVAL &&
                     strstr(passion_ctx_errdetail(ctx), "wisdom line 2"),
                 "malformed wisdom: %d '%s'", r, passion_ctx_errdetail(ctx));
        passion_finalize(ctx);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    f = fopen(path, "r");
    len = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    TH_CHECK(len == strlen(bad) && !memcmp(text, bad, len),
             "the malformed file was changed");
}

/* ----------------------------- 6. the exchange's costs, through wisdom */

/* the calibration's probe messages this rank posted on probe_comm, the
   exchange's communicator of the context under test */
static MPI_Comm probe_comm = MPI_COMM_NULL;
static long probe_sends;

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest,
              int tag, MPI_Comm comm, MPI_Request *req)
{
    if (probe_comm != MPI_COMM_NULL && comm == probe_comm &&
        tag == COLL_TAG + 14)
        probe_sends++;
    return PMPI_Isend(buf, count, type, dest, tag, comm, req);
}

/* costs lines: random ones read back exactly; malformed ones refused */
static void costs_text(void)
{
    uint64_t s = th_case_seed;
    plan_table t, u;
    plan_table_init(&t);
    plan_table_init(&u);
    for (int i = 0; i < 20; i++) {
        plan_msg_costs c = {th_range(&s, 1, 4096), th_range(&s, 1, 64),
                            ldexp((double)th_range(&s, 1, 1 << 30), -50),
                            ldexp((double)th_range(&s, 0, 1 << 30), -52),
                            1e-10 / (double)th_range(&s, 1, 1000),
                            1.0 / 3.0 * 1e-10};
        plan_msg_costs_put(&t, &c);
    }
    size_t len = 0;
    char why[200] = "";
    char *text = plan_wisdom_format(&t, &len);
    TH_CHECK(text && plan_wisdom_parse(&u, text, len, why, sizeof why) == 0,
             "costs lines parsed back: %s", why);
    TH_CHECK(u.ncosts == t.ncosts && u.n == 0, "costs %d of %d", u.ncosts,
             t.ncosts);
    for (int i = 0; i < t.ncosts && i < u.ncosts; i++)
        TH_CHECK(!memcmp(&t.costs[i], &u.costs[i], sizeof t.costs[i]),
                 "costs line %d read back otherwise", i);
    free(text);
    plan_table_clear(&t);
    plan_table_clear(&u);
    static const char *const bad[] = {
        "# passion wisdom 1\nxchg-costs 2 2 1 1e-6 1e-6 1e-10 1e-10\n",
        "# passion wisdom 1\nxchg-costs 1 0 1 1e-6 1e-6 1e-10 1e-10\n",
        "# passion wisdom 1\nxchg-costs 1 2 1 1e-6 -1 1e-10 1e-10\n",
        "# passion wisdom 1\nxchg-costs 1 2 1 1e-6 1e-6 1e-10\n",
        "# passion wisdom 1\nxchg-costs 1 2 1 1e-6 1e-6 1e-10 1e-10 x\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        plan_table_init(&t);
        why[0] = '\0';
        int rc = plan_wisdom_parse(&t, bad[i], strlen(bad[i]), why,
                                   sizeof why);
        TH_CHECK(rc == PASSION_EINVAL && strstr(why, "wisdom line 2") &&
                     t.ncosts == 0,
                 "bad costs line %zu: %d '%s'", i, rc, why);
        plan_table_clear(&t);
    }
}

static void test_costs_wisdom(void)
{
    th_case_seed = th_seed + 6;
    costs_text();
    char path[512];
    snprintf(path, sizeof path, "%s/wc.txt", th_dir());
    if (th_rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    enum { CALLS = 6 };
    int alg[2][CALLS];
    double pred[2][CALLS];
    long probes[2] = {0, 0};
    for (int run = 0; run < 2; run++) {
        passion_ctx *ctx = NULL;
        TH_CHECK(th_init(&ctx, "planner=estimate,wisdom=%s", path) == 0,
                 "init");
        if (!ctx)
            return;
        probe_comm = coll_xchg_comm(ctx); /* collective: every rank */
        probe_sends = 0;
        for (int k = 0; k < CALLS; k++) {
            TH_CHECK(one_exchange(ctx, th_seed + 66 + (uint64_t)k, k % 2,
                                  &alg[run][k]),
                     "run %d call %d: data", run, k);
            coll_xchg_stats last;
            coll_xchg_last(ctx, &last);
            pred[run][k] = last.predicted;
        }
        probe_comm = MPI_COMM_NULL;
        probes[run] = probe_sends;
        MPI_Allreduce(MPI_IN_PLACE, &probes[run], 1, MPI_LONG, MPI_SUM,
                      MPI_COMM_WORLD);
        passion_finalize(ctx); /* the first run writes its costs */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* one rank measures nothing (built-in costs) */
    TH_CHECK(th_size == 1 ? probes[0] == 0 : probes[0] > 0,
             "the run without wisdom posted %ld probes", probes[0]);
    TH_CHECK(probes[1] == 0, "with the costs in wisdom, %ld probe messages",
             probes[1]);
    for (int k = 0; k < CALLS; k++)
        TH_CHECK(alg[1][k] == alg[0][k] && pred[1][k] == pred[0][k],
                 "call %d: ran %d predicted %.17g, the measuring run %d "
                 "%.17g", k, alg[1][k], pred[1][k], alg[0][k], pred[0][k]);
    /* the file: this placement's costs (none for one rank) */
    FILE *f = fopen(path, "r");
    char text[4096] = "";
    size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    plan_table t;
    plan_table_init(&t);
    char why[200] = "";
    int rc = plan_wisdom_parse(&t, text, len, why, sizeof why);
    if (th_size == 1)
        TH_CHECK(len == 0 || (rc == 0 && t.ncosts == 0),
                 "one rank: %zu bytes, %d costs lines", len, t.ncosts);
    else
        TH_CHECK(rc == 0 && t.ncosts == 1 && t.costs[0].procs == th_size,
                 "wisdom file: %zu bytes, %d costs lines, '%s'", len,
                 t.ncosts, why);
    plan_table_clear(&t);
}

/* ------------------------------------ 5. the collective access measured */

/* the methods this rank's last call ran agree on every rank, and (tail
   > 0) of the last `tail` of n calls all but two ran one. Reads pass
   tail 0: a cheap read goes before the FAD by the model's rule
   (coll_io_early) with its independent method, judged against the
   learned round's cost, so how many calls do so depends on the timing
   (under ASan 3 of the last 10 in one run); such a call is not the
   planner's. Writes never go early. */
static void same_everywhere(const int *ran, int n, int tail, const char *what,
                            int round)
{
    for (int k = 0; k < n; k++) {
        int lo = ran[k], hi = ran[k];
        MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        TH_CHECK(lo == hi, "%s %d call %d: ranks ran %d and %d", what, round,
                 k, lo, hi);
    }
    if (tail == 0)
        return;
    int most = 0;
    for (int k = n - tail; k < n; k++) {
        int same = 0;
        for (int j = n - tail; j < n; j++)
            same += ran[j] == ran[k];
        most = same > most ? same : most;
    }
    TH_CHECK(most >= tail - 2, "%s %d: of the last %d calls only %d ran one "
             "method", what, round, tail, most);
}

static void test_access(void)
{
    uint64_t s = th_case_seed = th_seed + 5;
    for (int round = 0; round < 3; round++) {
        passion_ctx *ctx = NULL;
        TH_CHECK(th_init(&ctx, "planner=measure") == 0, "init");
        if (!ctx)
            break;
        /* a 2-D array of doubles v = index, rank-owned column or row
           blocks, or one shared random tile */
        int64_t shape[2] = {th_range(&s, 8, 300), th_range(&s, 8, 300)};
        passion_array_spec sp;
        passion_array_spec_init(&sp, 2, shape, 8);
        sp.placement = PASSION_PLACE_GLOBAL;
        passion_array *a = NULL;
        passion_file *f = NULL;
        char path[512];
        snprintf(path, sizeof path, "%s/io%d.raw", th_dir(), round);
        int rc = passion_array_create(ctx, &sp, &a);
        if (!rc)
            rc = passion_file_open(a, path, PASSION_MODE_CREATE, &f);
        TH_CHECK(rc == 0, "create: %d %s", rc, passion_ctx_errdetail(ctx));
        int64_t n = shape[0] * shape[1];
        double *all = malloc((size_t)n * sizeof *all);
        for (int64_t i = 0; i < n; i++)
            all[i] = (double)i;
        passion_section whole;
        passion_section_set(&whole, 2, NULL, shape, NULL);
        if (!rc && th_rank == 0)
            rc = passion_file_write(f, &whole, all, NULL,
                                    PASSION_METHOD_DIRECT);
        MPI_Barrier(MPI_COMM_WORLD);
        int kind = (int)th_range(&s, 0, 2), d = kind == 1;
        int64_t st[2] = {0, 0}, cnt[2] = {shape[0], shape[1]},
                str[2] = {1, 1};
        if (kind == 2) { /* one shared strided tile */
            str[0] = th_range(&s, 1, 3);
            str[1] = th_range(&s, 1, 3);
            cnt[0] = th_range(&s, 1, shape[0] / str[0]);
            cnt[1] = th_range(&s, 1, shape[1] / str[1]);
        } else { /* blocks of rows (0) or of columns (1) */
            int64_t b = (shape[d] + th_size - 1) / th_size;
            st[d] = b * th_rank < shape[d] ? b * th_rank : shape[d];
            cnt[d] = st[d] + b < shape[d] ? b : shape[d] - st[d];
        }
        passion_section sec;
        passion_section_set(&sec, 2, st, cnt, str);
        int64_t m = cnt[0] * cnt[1];
        double *buf = malloc((size_t)(m + 1) * sizeof *buf);
        enum { CALLS = PLAN_CANDS * PLAN_TRIALS + 30 };
        int ran[CALLS];
        for (int k = 0; !rc && k < CALLS; k++) {
            rc = passion_file_read_all(f, &sec, buf, NULL,
                                       PASSION_METHOD_AUTO);
            TH_CHECK(rc == 0, "read %d: %d %s", k, rc,
                     passion_ctx_errdetail(ctx));
            int64_t bad = 0;
            for (int64_t i = 0; i < cnt[0]; i++)
                for (int64_t j = 0; j < cnt[1]; j++)
                    bad += buf[i * cnt[1] + j] !=
                           (double)((st[0] + i * str[0]) * shape[1] + st[1] +
                                    j * str[1]);
            TH_CHECK(bad == 0, "read %d (kind %d): %lld wrong", k, kind,
                     (long long)bad);
            passion_method lm = PASSION_METHOD_AUTO;
            passion_ctx_last_method(ctx, &lm, NULL);
            ran[k] = (int)lm;
        }
        same_everywhere(ran, CALLS, 0, "read", round);
        /* writes of the rank's block (not the shared tile: one writer
           an element), values new each call, the file read back */
        for (int k = 0; !rc && kind != 2 && k < CALLS; k++) {
            for (int64_t i = 0; i < m; i++)
                buf[i] = 1e6 * (k + 1) + (double)i + 1000 * th_rank;
            rc = passion_file_write_all(f, &sec, buf, NULL,
                                        PASSION_METHOD_AUTO);
            TH_CHECK(rc == 0, "write %d: %d %s", k, rc,
                     passion_ctx_errdetail(ctx));
            passion_method lm = PASSION_METHOD_AUTO;
            passion_ctx_last_method(ctx, &lm, NULL);
            ran[k] = (int)lm;
            double *back = malloc((size_t)(m + 1) * sizeof *back);
            MPI_Barrier(MPI_COMM_WORLD);
            int r2 = passion_file_read(f, &sec, back, NULL,
                                       PASSION_METHOD_DIRECT);
            TH_CHECK(r2 == 0 && !memcmp(back, buf, (size_t)m * sizeof *buf),
                     "write %d (kind %d) read back differs", k, kind);
            free(back);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        if (kind != 2)
            same_everywhere(ran, CALLS, 10, "write", round);
        free(buf);
        free(all);
        if (f)
            passion_file_close(f);
        if (a)
            passion_array_free(a);
        passion_finalize(ctx);
    }
}

int main(int argc, char **argv)
{
    static CU_TestInfo rule[] = {
        {"1: measure, decide, re-check; estimate; wisdom's record",
         test_rule},
        {"2: wisdom's text", test_text},
        CU_TEST_INFO_NULL};
    static CU_TestInfo mpi[] = {
        {"3: the exchange's auto measured", test_measured},
        {"4: wisdom through the option", test_wisdom},
        {"5: the collective access's auto measured", test_access},
        {"6: the exchange's costs through wisdom", test_costs_wisdom},
        CU_TEST_INFO_NULL};
    static CU_SuiteInfo suites[] = {
        {"the planner's rule", NULL, NULL, NULL, NULL, rule},
        {"the planner on the exchange", NULL, NULL, NULL, NULL, mpi},
        CU_SUITE_INFO_NULL};
    return th_main(argc, argv, suites);
}
