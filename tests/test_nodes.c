/*
 * test_nodes.c - nodes (issue 13): the node split of passion_init (real
 * shared-memory nodes, virtual nodes of k ranks, the environment variable,
 * errors agreed across ranks), the within / between node counters against
 * hand counts, and the simulated network (results unchanged, the sender
 * waits at least the charge: a lower bound only, a sleep never ends
 * early).
 */
#include "../collective/exchange/exchange.h"
#include "harness.h"

#include <stdlib.h>

static int P, me;

static int suite_init(void)
{
    P = th_size;
    me = th_rank;
    return 0;
}

/* ------------------------------------------------------------- nodes */

/* The context's node fields for virtual nodes of k ranks. */
static void check_virtual(passion_ctx *c, int k)
{
    int id = -1, nn = -1, nr = -1, ns = -1;
    TH_CHECK(passion_ctx_node(c, &id, &nn, &nr, &ns) == 0, "ctx_node");
    int want_nn = (P + k - 1) / k, want_ns = me / k == want_nn - 1
                                                 ? P - (want_nn - 1) * k
                                                 : k;
    TH_CHECK(id == me / k && nn == want_nn && nr == me % k && ns == want_ns,
             "k=%d: node %d of %d, rank %d of %d; want %d of %d, %d of %d",
             k, id, nn, nr, ns, me / k, want_nn, me % k, want_ns);
    int s = -1, r = -1;
    MPI_Comm_size(c->node_comm, &s);
    MPI_Comm_rank(c->node_comm, &r);
    TH_CHECK(s == ns && r == nr, "k=%d: node_comm %d of %d", k, r, s);
    if (nr == 0) {
        TH_CHECK(c->leader_comm != MPI_COMM_NULL, "k=%d: leader without "
                 "leader_comm", k);
        if (c->leader_comm != MPI_COMM_NULL) {
            MPI_Comm_size(c->leader_comm, &s);
            MPI_Comm_rank(c->leader_comm, &r);
            TH_CHECK(s == nn && r == id, "k=%d: leader_comm %d of %d", k, r,
                     s);
        }
    } else {
        TH_CHECK(c->leader_comm == MPI_COMM_NULL, "k=%d: leader_comm on a "
                 "non-leader", k);
    }
    for (int q = 0; q < P; q++)
        TH_CHECK(core_node_of(c, q) == q / k, "k=%d: node_of[%d] = %d", k, q,
                 core_node_of(c, q));
}

static void test_virtual(void)
{
    for (int k = 1; k <= P + 1; k++) {
        passion_ctx *c = NULL;
        int rc = th_init(&c, "virtual_node_ranks=%d", k);
        TH_CHECK(rc == 0, "init k=%d: %d", k, rc);
        if (!rc)
            check_virtual(c, k);
        char buf[32];
        TH_CHECK(passion_ctx_option_get(c, "virtual_node_ranks", buf,
                                        sizeof buf) == 0 &&
                     atoi(buf) == k,
                 "option get k=%d: %s", k, buf);
        TH_CHECK(passion_finalize(c) == 0, "finalize");
    }
}

static void test_real(void)
{
    /* one machine: every rank shares memory with every other */
    passion_ctx *c = NULL;
    TH_CHECK(th_init(&c, NULL) == 0, "init");
    int id, nn, nr, ns;
    TH_CHECK(passion_ctx_node(c, &id, &nn, &nr, &ns) == 0, "ctx_node");
    TH_CHECK(id == 0 && nn == 1 && nr == me && ns == P,
             "real split: node %d of %d, rank %d of %d", id, nn, nr, ns);
    TH_CHECK(passion_ctx_node(c, NULL, NULL, NULL, NULL) == 0, "NULLs");
    TH_CHECK(passion_ctx_node(NULL, &id, NULL, NULL, NULL) ==
                 PASSION_EINVAL, "NULL context");
    TH_CHECK(passion_finalize(c) == 0, "finalize");
}

static void test_env(void)
{
    /* the variable wins over the option */
    setenv("PASSION_VIRTUAL_NODE_RANKS", "2", 1);
    passion_ctx *c = NULL;
    int rc = th_init(&c, "virtual_node_ranks=3");
    TH_CHECK(rc == 0, "init with the variable: %d", rc);
    if (!rc)
        check_virtual(c, 2);
    passion_finalize(c);
    /* a bad value fails on every rank, nothing left behind */
    setenv("PASSION_VIRTUAL_NODE_RANKS", me == P - 1 ? "x2" : "2", 1);
    c = NULL;
    rc = th_init(&c, NULL);
    TH_CHECK(rc == PASSION_EINVAL && c == NULL, "bad variable: %d", rc);
    unsetenv("PASSION_VIRTUAL_NODE_RANKS");
}

static void test_mismatch(void)
{
    if (P < 2)
        return;
    /* ranks that disagree on the split: every rank is told */
    passion_ctx *c = NULL;
    int rc = th_init(&c, "virtual_node_ranks=%d", me == P - 1 ? 1 : 2);
    TH_CHECK(rc == PASSION_EMISMATCH && c == NULL, "mismatch: %d", rc);
    rc = th_init(&c, "sim_net_latency_us=%d", me == 0 ? 5 : 0);
    TH_CHECK(rc == PASSION_EMISMATCH && c == NULL, "sim mismatch: %d", rc);
    /* bad option values are refused by the setters */
    passion_options *o = NULL;
    passion_options_create(&o);
    TH_CHECK(passion_options_set(o, "virtual_node_ranks", "-1") ==
                 PASSION_EINVAL, "negative k");
    TH_CHECK(passion_options_set_double(o, "sim_net_byte_ns", -1.0) ==
                 PASSION_EINVAL, "negative byte_ns");
    passion_options_free(o);
}

/* --------------------------------------------------------- counters */

/* One regular exchange of b bytes per pair with alg under virtual nodes
   of k ranks (and the simulated network at lat_us); compares with
   MPI_Alltoall; fills the counters and the seconds of the call. */
static int xchg(passion_ctx *c, int alg, int64_t b, passion_counters *cnt,
                coll_xchg_stats *st, double *secs)
{
    size_t n = (size_t)b * (size_t)P;
    unsigned char *sb = malloc(n + 1), *rb = malloc(n + 1),
                  *ref = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        sb[i] = (unsigned char)(me * 37 + (int)i * 11 + alg);
    memset(rb, 0xab, n + 1);
    memset(ref, 0xab, n + 1);
    MPI_Alltoall(sb, (int)b, MPI_BYTE, ref, (int)b, MPI_BYTE,
                 MPI_COMM_WORLD);
    passion_counters_reset(c);
    double t0 = MPI_Wtime();
    int rc = passion_alltoall(c, sb, rb, b, MPI_BYTE, alg, 0);
    *secs = MPI_Wtime() - t0;
    passion_counters_get(c, cnt);
    coll_xchg_last(c, st);
    int ok = rc == 0 && !memcmp(rb, ref, n + 1);
    TH_CHECK(ok, "alg %s b %lld: rc %d (%s), data %s", coll_xchg_name(alg),
             (long long)b, rc, passion_ctx_errdetail(c),
             memcmp(rb, ref, n + 1) ? "differs" : "equal");
    free(sb);
    free(rb);
    free(ref);
    return ok;
}

static void counts_for(int k, double lat_us)
{
    passion_ctx *c = NULL;
    /* fixed message costs: no calibration traffic in the counts */
    int rc = th_init(&c, "virtual_node_ranks=%d,sim_net_latency_us=%g,"
                     "sim_net_byte_ns=0.5,msg_alpha=1e-5,msg_beta=1e-9",
                     k, lat_us);
    TH_CHECK(rc == 0, "init: %d", rc);
    if (rc)
        return;
    const int64_t b = 40;
    const int ns = c->node_size, others = P - ns;
    /* the algorithms that send one message to every other rank */
    static const int direct[] = {PASSION_XCHG_PAIRWISE, PASSION_XCHG_A1,
                                 PASSION_XCHG_MPI};
    for (int a = 0; a < 3; a++) {
        passion_counters cnt;
        coll_xchg_stats st;
        double s;
        xchg(c, direct[a], b, &cnt, &st, &s);
        TH_CHECK(cnt.messages_inter_node == (uint64_t)others &&
                     cnt.bytes_inter_node == (uint64_t)(others * b) &&
                     cnt.messages_intra_node == (uint64_t)(ns - 1) &&
                     cnt.bytes_intra_node == (uint64_t)((ns - 1) * b),
                 "k=%d alg %s: inter %llu msgs %llu bytes, intra %llu msgs "
                 "%llu bytes; want %d/%lld, %d/%lld",
                 k, coll_xchg_name(direct[a]),
                 (unsigned long long)cnt.messages_inter_node,
                 (unsigned long long)cnt.bytes_inter_node,
                 (unsigned long long)cnt.messages_intra_node,
                 (unsigned long long)cnt.bytes_intra_node, others,
                 (long long)(others * b), ns - 1, (long long)((ns - 1) * b));
        /* the sender waited for each message between nodes: a lower
           bound (a sleep never ends early) */
        double charge = others * (lat_us * 1e-6 + (double)b * 0.5e-9);
        TH_CHECK(s >= charge, "k=%d alg %s: %.6f s < the charge %.6f s", k,
                 coll_xchg_name(direct[a]), s, charge);
    }
    /* the others: the counters split what the exchange counted */
    static const int other[] = {PASSION_XCHG_INDEX, PASSION_XCHG_FOURSTAGE,
                                PASSION_XCHG_FOURSTAGE_NB};
    for (int a = 0; a < 3; a++) {
        passion_counters cnt;
        coll_xchg_stats st;
        double s;
        xchg(c, other[a], b, &cnt, &st, &s);
        TH_CHECK(cnt.messages_inter_node + cnt.messages_intra_node ==
                         cnt.messages_sent &&
                     cnt.bytes_inter_node + cnt.bytes_intra_node ==
                         cnt.bytes_sent,
                 "k=%d alg %s: inter+intra %llu msgs %llu bytes, sent %llu "
                 "%llu", k, coll_xchg_name(other[a]),
                 (unsigned long long)(cnt.messages_inter_node +
                                      cnt.messages_intra_node),
                 (unsigned long long)(cnt.bytes_inter_node +
                                      cnt.bytes_intra_node),
                 (unsigned long long)cnt.messages_sent,
                 (unsigned long long)cnt.bytes_sent);
        if (k >= P)
            TH_CHECK(cnt.messages_inter_node == 0, "one node, alg %s: %llu "
                     "between nodes", coll_xchg_name(other[a]),
                     (unsigned long long)cnt.messages_inter_node);
    }
    passion_finalize(c);
}

static void test_counts(void)
{
    for (int k = 1; k <= P; k++)
        counts_for(k, 0);
}

static void test_simnet(void)
{
    /* a slow network: the same results, the sender waits */
    counts_for(2, 2000);
    if (P > 3)
        counts_for(3, 500);
}

static CU_TestInfo nodes_tests[] = {
    {"virtual nodes of k ranks", test_virtual},
    {"real nodes (shared memory)", test_real},
    {"PASSION_VIRTUAL_NODE_RANKS", test_env},
    {"options that differ across ranks", test_mismatch},
    CU_TEST_INFO_NULL};
static CU_TestInfo net_tests[] = {
    {"within / between node counts by hand", test_counts},
    {"simulated network", test_simnet},
    CU_TEST_INFO_NULL};

static CU_SuiteInfo suites[] = {
    {"nodes", suite_init, NULL, NULL, NULL, nodes_tests},
    {"net", suite_init, NULL, NULL, NULL, net_tests},
    CU_SUITE_INFO_NULL};

int main(int argc, char **argv)
{
    return th_main(argc, argv, suites);
}
