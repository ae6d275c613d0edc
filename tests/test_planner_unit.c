/*
 * test_planner_unit.c - the exchange's choice (collective/planner/
 * plan_xchg.h) as a pure function, without MPI: the program runs as it
 * is, no mpiexec, no MPI_Init, and calls nothing that communicates.
 *
 *  - known cases: tiny blocks at many ranks go to the index algorithm
 *    (Bruck et al.'s ceil(log2 P) rounds) rather than pairwise's P - 1;
 *    large blocks to pairwise or A1; on many nodes behind a slow network,
 *    the two-level exchange; a budget of 0 bytes to an algorithm that
 *    stages nothing;
 *  - auto's candidates hold MPI's own call always, each at the model's
 *    price, best estimate first, the first the choice's;
 *  - the same inputs give the same choice every time;
 *  - random inputs (seed printed; TH_SEED=n replays) against a naive
 *    reference that prices every algorithm of the table and every radix
 *    of index with the model, drops those whose staging exceeds the
 *    budget, and takes the least (the first on a tie).
 */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../collective/planner/plan_xchg.h"

static unsigned long long seed_used;

/* a small deterministic generator (splitmix64): the same seed, the same
   inputs on any libc */
static unsigned long long rng_state;
static unsigned long long rnd(void)
{
    unsigned long long z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static int64_t rnd_in(int64_t lo, int64_t hi) /* [lo, hi] */
{
    return lo + (int64_t)(rnd() % (unsigned long long)(hi - lo + 1));
}
static double rnd_log(double lo, double hi) /* log-uniform in [lo, hi] */
{
    double u = (double)(rnd() >> 11) / 9007199254740992.0;
    return lo * pow(hi / lo, u);
}

/* measured-like costs: a round and a message of 2.5 us, 0.2 ns/B sent,
   0.1 ns/B copied */
static coll_xchg_costs costs_measured(void)
{
    coll_xchg_costs c = {0};
    c.round = 2.5e-6;
    c.msg = 2.5e-6;
    c.byte = 2e-10;
    c.copy = 1e-10;
    c.source = COLL_COSTS_MEASURED;
    return c;
}

static plan_xchg_in input(coll_xchg_costs c, coll_xchg_shape s)
{
    plan_xchg_in in;
    memset(&in, 0, sizeof in);
    in.costs = c;
    in.shape = s;
    in.allow_regular = s.block >= 0;
    in.budget = -1;
    return in;
}

static void test_tiny_blocks_index(void)
{
    /* 8-byte blocks at 128 ranks: log2 P = 7 rounds against 127 */
    coll_xchg_shape s = coll_shape_regular(128, 8);
    plan_xchg_in in = input(costs_measured(), s);
    coll_xchg_choice ch = plan_xchg_choose(&in);
    CU_ASSERT_EQUAL(ch.alg, PASSION_XCHG_INDEX);
    CU_ASSERT(ch.radix >= 2 && ch.radix <= 128);
    double pw = coll_xchg_model(&in.costs, PASSION_XCHG_PAIRWISE, 0, &s,
                                NULL);
    CU_ASSERT(ch.seconds < pw);
    /* the model's own radix and price */
    int r = 0;
    double t = coll_xchg_model(&in.costs, PASSION_XCHG_INDEX, 0, &s, &r);
    CU_ASSERT_EQUAL(r, ch.radix);
    CU_ASSERT_DOUBLE_EQUAL(t, ch.seconds, 0);
    /* irregular, index is no candidate */
    in.allow_regular = 0;
    CU_ASSERT_NOT_EQUAL(plan_xchg_choose(&in).alg, PASSION_XCHG_INDEX);
    /* the paper's model (costs from the options: every message a full
       start-up) at 16 ranks: index again */
    coll_xchg_costs p = {0};
    p.msg = 1e-5;
    p.byte = 1e-10;
    p.copy = 1e-10;
    p.source = COLL_COSTS_OPTIONS;
    plan_xchg_in q = input(p, coll_shape_regular(16, 8));
    CU_ASSERT_EQUAL(plan_xchg_choose(&q).alg, PASSION_XCHG_INDEX);
}

static void test_large_blocks_direct(void)
{
    for (int P = 2; P <= 64; P *= 2) {
        coll_xchg_shape s = coll_shape_regular(P, 4 << 20);
        plan_xchg_in in = input(costs_measured(), s);
        coll_xchg_choice ch = plan_xchg_choose(&in);
        CU_ASSERT(ch.alg == PASSION_XCHG_PAIRWISE ||
                  ch.alg == PASSION_XCHG_A1);
        CU_ASSERT_EQUAL(ch.radix, 0);
        double ix = coll_xchg_model(&in.costs, PASSION_XCHG_INDEX, 0, &s,
                                    NULL);
        CU_ASSERT(ch.seconds <= ix);
    }
}

static void test_nodes_twolevel(void)
{
    /* 64 ranks on 16 nodes of 4, a network of 1 ms a message: the
       leaders' few messages win */
    coll_xchg_costs c = costs_measured();
    c.net_msg = 1e-3;
    c.net_byte = 1e-9;
    coll_xchg_shape s = coll_shape_regular(64, 64);
    s.nodes = 16;
    s.node_max = 4;
    plan_xchg_in in = input(c, s);
    CU_ASSERT_EQUAL(plan_xchg_choose(&in).alg, PASSION_XCHG_TWOLEVEL);
    /* one node: two-level is no candidate at all */
    s.nodes = 1;
    s.node_max = 64;
    in = input(c, s);
    CU_ASSERT_NOT_EQUAL(plan_xchg_choose(&in).alg, PASSION_XCHG_TWOLEVEL);
    CU_ASSERT(isinf(coll_xchg_model(&c, PASSION_XCHG_TWOLEVEL, 0, &s,
                                    NULL)));
}

static void test_budget(void)
{
    /* nothing to stage: an algorithm that stages nothing is chosen */
    coll_xchg_shape s = coll_shape_regular(128, 8);
    plan_xchg_in in = input(costs_measured(), s);
    in.budget = 0;
    coll_xchg_choice ch = plan_xchg_choose(&in);
    CU_ASSERT_EQUAL(coll_xchg_staging(ch.alg, ch.radix, &s), 0);
    CU_ASSERT_NOT_EQUAL(ch.alg, PASSION_XCHG_INDEX);
    /* the wrappers are the same function */
    coll_xchg_choice w = coll_xchg_choose_within(&in.costs, &s, 0);
    CU_ASSERT(w.alg == ch.alg && w.radix == ch.radix &&
              w.seconds == ch.seconds);
    in.budget = -1;
    coll_xchg_choice u = coll_xchg_choose(&in.costs, &s, 1);
    ch = plan_xchg_choose(&in);
    CU_ASSERT(u.alg == ch.alg && u.radix == ch.radix &&
              u.seconds == ch.seconds);
}

static void test_mpi_candidate(void)
{
    int64_t blocks[] = {0, 8, 256, 4096, 65536, 1 << 22};
    for (int P = 1; P <= 130; P += 43)
        for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
            coll_xchg_shape s = coll_shape_regular(P, blocks[b]);
            coll_xchg_costs c = costs_measured();
            plan_cand k[PLAN_XCHG_CANDS];
            int n = plan_xchg_cands(&c, &s, INT64_MAX, k);
            CU_ASSERT(n >= 1 && n <= PLAN_XCHG_CANDS);
            int mpi = 0;
            for (int i = 0; i < n; i++) {
                if (k[i].method == PASSION_XCHG_MPI)
                    mpi++;
                if (i > 0)
                    CU_ASSERT(k[i - 1].estimate <= k[i].estimate);
                CU_ASSERT_DOUBLE_EQUAL(
                    k[i].estimate,
                    coll_xchg_model(&c, k[i].method, k[i].param, &s, NULL),
                    0);
            }
            CU_ASSERT_EQUAL(mpi, 1);
            plan_xchg_in in = input(c, s);
            in.budget = INT64_MAX;
            coll_xchg_choice ch = plan_xchg_choose(&in);
            CU_ASSERT_EQUAL(k[0].method, ch.alg);
            CU_ASSERT_DOUBLE_EQUAL(k[0].estimate, ch.seconds, 0);
        }
}

static void test_same_every_time(void)
{
    coll_xchg_shape s = coll_shape_regular(37, 1000);
    s.nodes = 5;
    s.node_max = 8;
    plan_xchg_in in = input(costs_measured(), s);
    in.costs.net_msg = 5e-5;
    coll_xchg_choice first = plan_xchg_choose(&in);
    for (int i = 0; i < 100; i++) {
        plan_xchg_in copy;
        memcpy(&copy, &in, sizeof copy);
        coll_xchg_choice ch = plan_xchg_choose(&copy);
        CU_ASSERT(ch.alg == first.alg && ch.radix == first.radix &&
                  ch.seconds == first.seconds);
        CU_ASSERT(memcmp(&copy, &in, sizeof in) == 0); /* not written */
    }
}

/* a random shape: regular, or irregular with consistent maxima */
static coll_xchg_shape random_shape(void)
{
    int P = (int)rnd_in(1, 200);
    coll_xchg_shape s;
    if (rnd() % 2) {
        s = coll_shape_regular(P, rnd_in(0, 1) ? rnd_in(0, 64)
                                               : rnd_in(0, 1 << 22));
    } else {
        memset(&s, 0, sizeof s);
        s.procs = P;
        s.block = -1;
        s.mmax = P > 1 ? rnd_in(0, 1 << 20) : 0;
        s.lmax_x = s.mmax * (int64_t)(P - 1) / rnd_in(1, 4);
        if (s.lmax_x < s.mmax)
            s.lmax_x = s.mmax;
        s.lmax = s.lmax_x + rnd_in(0, s.mmax + 1);
        s.total = s.lmax_x * (int64_t)P / rnd_in(1, 3);
    }
    int nodes = (int)rnd_in(1, P < 16 ? P : 16);
    s.nodes = nodes;
    s.node_max = (P + nodes - 1) / nodes;
    return s;
}

static coll_xchg_costs random_costs(void)
{
    coll_xchg_costs c = {0};
    c.source = rnd() % 2 ? COLL_COSTS_MEASURED : COLL_COSTS_OPTIONS;
    c.round = c.source == COLL_COSTS_OPTIONS ? 0 : rnd_log(1e-7, 1e-4);
    c.msg = rnd_log(1e-7, 1e-4);
    c.copy = rnd_log(1e-12, 1e-9);
    c.byte = c.copy * rnd_log(1, 100);
    if (rnd() % 2) {
        c.net_msg = rnd_log(1e-6, 1e-2);
        c.net_byte = rnd_log(1e-11, 1e-8);
    }
    return c;
}

/* the reference: every algorithm, every radix of those that take one */
static coll_xchg_choice naive(const plan_xchg_in *in)
{
    coll_xchg_choice best = {PASSION_XCHG_A1, 0, HUGE_VAL};
    int found = 0;
    const coll_xchg_shape *s = &in->shape;
    for (int i = 0; i < plan_xchg_alg_count(); i++) {
        const plan_xchg_alg *a = plan_xchg_alg_at(i);
        if (a->regular_only && !in->allow_regular)
            continue;
        int lo = 0, hi = 0;
        if (a->has_radix && s->procs > 1)
            lo = 2, hi = s->procs;
        for (int r = lo; r <= hi; r++) {
            double t = coll_xchg_model(&in->costs, a->id, r, s, NULL);
            if (in->budget >= 0 &&
                coll_xchg_staging(a->id, r, s) > in->budget)
                continue;
            if (!found || t < best.seconds) {
                best.alg = a->id;
                best.radix = r;
                best.seconds = t;
                found = 1;
            }
        }
    }
    return best;
}

static void test_random_against_naive(void)
{
    for (int it = 0; it < 3000; it++) {
        coll_xchg_shape s = random_shape();
        plan_xchg_in in = input(random_costs(), s);
        in.allow_regular = s.block >= 0 && rnd() % 4 != 0;
        int64_t lx = s.lmax > 0 ? s.lmax : 1;
        in.budget = rnd() % 3 == 0 ? -1 : rnd_in(0, 8 * lx);
        coll_xchg_choice got = plan_xchg_choose(&in);
        coll_xchg_choice want = naive(&in);
        /* the same least price; the choice fits and is priced so */
        int ok = got.seconds == want.seconds &&
                 (in.budget < 0 ||
                  coll_xchg_staging(got.alg, got.radix, &s) <= in.budget) &&
                 coll_xchg_model(&in.costs, got.alg, got.radix, &s, NULL) ==
                     got.seconds;
        /* and on a tie the first of the table, the index radix aside
           (the model's radix search may keep another of equal price) */
        if (ok && got.alg != want.alg)
            ok = 0;
        if (!ok) {
            fprintf(stderr,
                    "seed %llu iteration %d: P %d block %lld lmax %lld "
                    "nodes %d budget %lld: got %d/%d %.9g, naive %d/%d "
                    "%.9g\n",
                    seed_used, it, s.procs, (long long)s.block,
                    (long long)s.lmax, s.nodes, (long long)in.budget,
                    got.alg, got.radix, got.seconds, want.alg, want.radix,
                    want.seconds);
            CU_FAIL("choice differs from the naive reference");
            return;
        }
        CU_PASS("agrees");
    }
}

int main(void)
{
    const char *e = getenv("TH_SEED");
    seed_used = e && *e ? strtoull(e, NULL, 10) : 20261129ULL;
    rng_state = seed_used;
    printf("planner-unit: seed %llu (TH_SEED=n replays)\n", seed_used);
    CU_TestInfo tests[] = {
        {"tiny blocks at many ranks: index", test_tiny_blocks_index},
        {"large blocks: pairwise or a1", test_large_blocks_direct},
        {"many nodes, slow network: twolevel", test_nodes_twolevel},
        {"budget 0: no staging", test_budget},
        {"auto's candidates hold mpi", test_mpi_candidate},
        {"same inputs, same choice", test_same_every_time},
        {"random inputs against the naive reference",
         test_random_against_naive},
        CU_TEST_INFO_NULL,
    };
    CU_SuiteInfo suites[] = {
        {"exchange choice", NULL, NULL, NULL, NULL, tests},
        CU_SUITE_INFO_NULL,
    };
    if (CU_initialize_registry() != CUE_SUCCESS ||
        CU_register_suites(suites) != CUE_SUCCESS)
        return 1;
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned f = CU_get_number_of_failures();
    unsigned ran = CU_get_number_of_tests_run();
    CU_cleanup_registry();
    if (f)
        fprintf(stderr, "planner-unit: failures with seed %llu\n",
                seed_used);
    return f || ran == 0 ? 1 : 0;
}
