/*
 * test_twolevel.c - the two-level exchange (collective/exchange/
 * xchg_twolevel.c): on every split of the ranks into 1-4
 * virtual nodes, random all-to-all(v) patterns (zeros, gaps between
 * blocks, one large message, messages split at a lowered chunk limit)
 * against MPI_Alltoallv; only node leaders send between nodes, and the
 * messages between nodes are A1's among the leaders (one per ordered
 * pair of nodes with data), no more than the four-stage's for nnodes
 * ranks (counted from its schedules); the bytes within and between nodes add up; a
 * budget that needs steps, a budget nothing fits (ENOMEM on every rank),
 * a failed allocation on a leader (same outcome everywhere, the next call
 * works); the model's choice with a slow network between nodes.
 */
#include "../collective/exchange/exchange.h"
#include "harness.h"
#include "xchg_case.h"

#include <signal.h>
#include <unistd.h>

static int P, me;
static MPI_Request coll_reqs[8];

static int suite_init(void)
{
    P = th_size;
    me = th_rank;
    for (int i = 0; i < 8; i++)
        coll_reqs[i] = MPI_REQUEST_NULL;
    return 0;
}

static int suite_clean(void)
{
    return 0;
}

/* A context whose ranks form virtual nodes of k consecutive ranks. */
static passion_ctx *ctx_nodes(int k, const char *more)
{
    passion_ctx *c = NULL;
    int rc = th_init(&c, "virtual_node_ranks=%d%s%s", k, more ? "," : "",
                     more ? more : "");
    TH_CHECK(rc == 0, "passion_init with nodes of %d: %d", k, rc);
    /* the node table is made by the first exchange: make it now */
    if (c)
        coll_xchg_comm(c);
    return c;
}

static void ctx_done(passion_ctx *c)
{
    if (c)
        passion_finalize(c);
}

/* Exchange m with alg through coll_exchange (budget 0: the context's) and
   through MPI_Alltoallv, gaps included; 1 when equal and rc 0. */
static int run_m(passion_ctx *c, const int64_t *m, int alg, int64_t budget,
                 uint64_t seed, coll_xchg_stats *st, int *code, int quiet)
{
    th_xcase x;
    th_xcase_make(&x, m, MPI_BYTE, seed, 1);
    coll_xchg_args a;
    memset(&a, 0, sizeof a);
    a.sendbuf = x.sb;
    a.recvbuf = x.rb;
    a.block = -1;
    a.sendcounts = x.sc;
    a.sdispls = x.sd;
    a.recvcounts = x.rc;
    a.rdispls = x.rd;
    a.alg = alg;
    a.budget = budget;
    a.stats = st;
    passion_counters_reset(c);
    int r = coll_exchange(c, &a);
    if (code)
        *code = r;
    int ok = r == 0 && th_xcase_equal(&x);
    if (!ok && !quiet)
        fprintf(stderr, "[rank %d] %s: rc %d (%s), data %s\n", me,
                coll_xchg_name(alg), r, passion_ctx_errdetail(c),
                th_xcase_equal(&x) ? "equal" : "differs");
    th_xcase_free(&x);
    return ok;
}

/* node sizes k giving 1..4 nodes on P ranks (distinct) */
static int splits(int *ks)
{
    int n = 0;
    for (int nn = 1; nn <= 4 && nn <= P; nn++) {
        int k = (P + nn - 1) / nn;
        if (n == 0 || ks[n - 1] != k)
            ks[n++] = k;
    }
    return n;
}

/* messages the four-stage sends over its four stages on n ranks, all
   ranks together: 2 x (row sends) + 2 x (column sends), from its
   schedules (every message is sent, empty or not) */
static int64_t fourstage_messages(int n)
{
    if (n <= 1)
        return 0;
    coll_grid g = coll_grid_make(n);
    coll_step *st = malloc(sizeof *st * 2 * (size_t)g.C);
    int *work = malloc(sizeof *work * 2 * (size_t)g.C);
    int64_t total = 0;
    for (int v = 0; v < n; v++) {
        int T = coll_row_schedule(&g, v, st, work);
        for (int t = 0; t < T; t++)
            if (st[t].to >= 0 && st[t].to != v)
                total += 2;
        int y = v % g.C;
        int col = (g.r == 0 || y < g.r) ? g.R : g.R - 1;
        total += 2 * (col - 1);
    }
    free(st);
    free(work);
    return total;
}

static void test_random_patterns(void)
{
    int ks[4], ns = splits(ks);
    for (int si = 0; si < ns; si++) {
        passion_ctx *c = ctx_nodes(ks[si], NULL);
        if (!c)
            continue;
        const coll_nodes *T = coll_xchg_nodes(c);
        int N = (P + ks[si] - 1) / ks[si];
        TH_CHECK(T && T->nnodes == N && T->node == me / ks[si] &&
                     T->lrank == me % ks[si],
                 "node table for nodes of %d: %d nodes, node %d rank %d",
                 ks[si], T ? T->nnodes : -1, T ? T->node : -1,
                 T ? T->lrank : -1);
        for (int t = 0; t < 3; t++) {
            th_case_seed = th_seed + 1000 * (uint64_t)ks[si] + (uint64_t)t;
            int64_t *m = th_xchg_matrix(P, th_case_seed, t == 2 ? 3 : 300,
                                t == 1 ? 60 : 20);
            if (t == 2)
                m[(P - 1) * P] = 70000; /* one large among tiny */
            coll_xchg_stats st;
            memset(&st, 0, sizeof st);
            int ok = run_m(c, m, PASSION_XCHG_TWOLEVEL, 0, th_case_seed, &st,
                           NULL, 0);
            TH_CHECK(th_all(ok), "twolevel P=%d nodes of %d pattern %d", P,
                     ks[si], t);
            TH_CHECK(st.alg == PASSION_XCHG_TWOLEVEL, "ran %d", st.alg);
            /* only leaders send between nodes; all together the
               four-stage's messages for N ranks */
            TH_CHECK(me % ks[si] == 0 || st.msgs_net == 0,
                     "rank %d (not a leader) sent %lld between nodes", me,
                     (long long)st.msgs_net);
            passion_counters cn;
            passion_counters_get(c, &cn);
            int64_t v[5] = {st.msgs_net, st.bytes_net, st.msgs_node, 0,
                            (int64_t)cn.messages_inter_node},
                    sum[5];
            /* payload that leaves a node, and that stays */
            int64_t off = 0;
            for (int i = 0; i < P; i++)
                for (int j = 0; j < P; j++)
                    if (i / ks[si] != j / ks[si])
                        off += m[i * P + j];
            v[3] = st.bytes_net;
            MPI_Allreduce(v, sum, 5, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
            TH_CHECK(sum[4] == sum[0],
                     "context counters: %lld messages between nodes, the "
                     "exchange's %lld",
                     (long long)sum[4], (long long)sum[0]);
            /* up to 9 nodes the leaders exchange by A1: one message
               for every ordered pair of nodes with data between them,
               never more than the four-stage's */
            int64_t pairs = 0;
            for (int a = 0; a < N; a++)
                for (int b = 0; b < N; b++) {
                    int64_t blk = 0;
                    for (int i = a * ks[si]; i < P && i < (a + 1) * ks[si];
                         i++)
                        for (int j = b * ks[si];
                             j < P && j < (b + 1) * ks[si]; j++)
                            blk += m[i * P + j];
                    pairs += a != b && blk > 0;
                }
            TH_CHECK(sum[0] == pairs && sum[0] <= fourstage_messages(N),
                     "P=%d N=%d: %lld messages between nodes, want %lld "
                     "(A1 among the leaders; four-stage: %lld)",
                     P, N, (long long)sum[0], (long long)pairs,
                     (long long)fourstage_messages(N));
            TH_CHECK(N == 1 ? sum[1] == 0 : sum[1] >= off,
                     "P=%d N=%d: %lld bytes between nodes < %lld payload", P,
                     N, (long long)sum[1], (long long)off);
            TH_CHECK(st.messages == st.msgs_node + st.msgs_net &&
                         st.bytes_sent == st.bytes_node + st.bytes_net,
                     "split counters do not add up");
            free(m);
        }
        /* the flat a1 exchange on the same split: its messages between
           nodes (every nonzero pair on different nodes) exceed the
           leaders' once the nodes hold several ranks */
        ctx_done(c);
    }
}

static void test_chunked(void)
{
    int ks[4], ns = splits(ks);
    coll_xchg_set_chunk(64);
    for (int si = 0; si < ns; si++) {
        passion_ctx *c = ctx_nodes(ks[si], NULL);
        if (!c)
            continue;
        th_case_seed = th_seed + 5000 + (uint64_t)ks[si];
        int64_t *m = th_xchg_matrix(P, th_case_seed, 500, 10);
        TH_CHECK(th_all(run_m(c, m, PASSION_XCHG_TWOLEVEL, 0, th_case_seed,
                              NULL, NULL, 0)),
                 "twolevel, chunks of 64, nodes of %d", ks[si]);
        free(m);
        ctx_done(c);
    }
    coll_xchg_set_chunk(0);
}

static void test_budget(void)
{
    if (P < 2)
        return;
    int k = (P + 1) / 2; /* two nodes */
    passion_ctx *c = ctx_nodes(k, NULL);
    if (!c)
        return;
    th_case_seed = th_seed + 7000;
    int64_t *m = th_xchg_matrix(P, th_case_seed, 20000 / P, 0);
    /* a budget the leaders' blocks do not fit at once: steps */
    coll_xchg_stats st;
    memset(&st, 0, sizeof st);
    int code = 0;
    int64_t budget = 4 << 10;
    /* a leader holds its node's blocks to and from the other node */
    int64_t blocks = 0;
    for (int a = 0; a < 2; a++) {
        int64_t nb = 0;
        for (int i = 0; i < P; i++)
            for (int j = 0; j < P; j++)
                if ((i / k == a) != (j / k == a))
                    nb += m[i * P + j];
        if (nb > blocks)
            blocks = nb;
    }
    int ok = run_m(c, m, PASSION_XCHG_TWOLEVEL, budget, th_case_seed, &st,
                   &code, 0);
    TH_CHECK(th_all(ok), "twolevel in %lld bytes: rc %d", (long long)budget,
             code);
    TH_CHECK(st.peak_staging <= budget, "peak staging %lld > budget %lld",
             (long long)st.peak_staging, (long long)budget);
    int64_t steps = st.steps, maxsteps;
    MPI_Allreduce(&steps, &maxsteps, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    TH_CHECK(blocks <= budget || maxsteps > 1,
             "%lld bytes of blocks in 4 KiB needed no steps (%lld)",
             (long long)blocks, (long long)maxsteps);
    /* a budget nothing fits: ENOMEM everywhere, with the reason */
    /* (a step's blocks hold at least 2 (P + 1) bytes: slices of one byte
       and the P bytes a slice bound adds) */
    ok = run_m(c, m, PASSION_XCHG_TWOLEVEL, 4, th_case_seed, &st, &code, 1);
    TH_CHECK(th_all(code == PASSION_ENOMEM), "twolevel in 4 bytes: rc %d",
             code);
    TH_CHECK(strstr(passion_ctx_errdetail(c), "budget") != NULL,
             "detail: %s", passion_ctx_errdetail(c));
    /* and the next call works */
    TH_CHECK(th_all(run_m(c, m, PASSION_XCHG_TWOLEVEL, 0, th_case_seed, NULL,
                          NULL, 0)),
             "twolevel after ENOMEM");
    free(m);
    ctx_done(c);
}

static void test_fault(void)
{
    /* the Nth allocation of the call fails on rank 0 (a leader): every
       rank returns the same code, nobody hangs, the next call works */
    if (P != 2 && P != 3 && P != 5)
        return; /* a few rank counts: every N is a whole exchange */
    int k = P >= 4 ? 2 : 1;
    passion_ctx *c = ctx_nodes(k, NULL);
    if (!c)
        return;
    th_case_seed = th_seed + 8000;
    int64_t *m = th_xchg_matrix(P, th_case_seed, 60, 0);
    int fired = 1;
    for (int64_t nth = 1; fired && nth <= 100; nth++) {
        core_fault_arm(c, nth, 0, 0);
        int code = 0;
        run_m(c, m, PASSION_XCHG_TWOLEVEL, 0, th_case_seed, NULL, &code, 1);
        int mine = me == 0 && c->fault_allocs >= nth;
        core_fault_arm(c, 0, 0, -1);
        int v[3] = {code, -code, mine}, mx[3];
        MPI_Allreduce(v, mx, 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        fired = mx[2];
        TH_CHECK(mx[0] == -mx[1], "fault %lld: ranks return %d and %d",
                 (long long)nth, mx[0], -mx[1]);
        TH_CHECK(th_all(run_m(c, m, PASSION_XCHG_TWOLEVEL, 0, th_case_seed,
                              NULL, NULL, 0)),
                 "twolevel after fault %lld", (long long)nth);
    }
    TH_CHECK(!fired, "faults still firing after 100");
    free(m);
    ctx_done(c);
}

static void test_model(void)
{
    /* an alltoallv of 64 ranks on 8 nodes: about 64 bytes per pair with
       a slow network between nodes (20 us a message), the two-level
       exchange wins; 64 KiB per pair with none, a flat one does */
    coll_xchg_shape s = coll_shape_regular(64, 64);
    s.block = -1;
    s.nodes = 8;
    s.node_max = 8;
    coll_xchg_costs fast = {1e-6, 1e-6, 1e-10, 1e-11, COLL_COSTS_OPTIONS,
                            0, 0};
    coll_xchg_costs slow = fast;
    slow.net_msg = 20e-6;
    slow.net_byte = 1e-9;
    /* no network: 64 KiB a pair, where the leaders' eight times the
       bytes cost more than the flat exchange's rounds (at 64 bytes the
       two-level exchange, riding on the agreement, wins even here) */
    coll_xchg_shape big = coll_shape_regular(64, 65536);
    big.block = -1;
    big.nodes = 8;
    big.node_max = 8;
    coll_xchg_choice a = coll_xchg_choose(&fast, &big, 1);
    coll_xchg_choice b = coll_xchg_choose(&slow, &s, 1);
    TH_CHECK(a.alg != PASSION_XCHG_TWOLEVEL, "no network: chose %s",
             coll_xchg_name(a.alg));
    TH_CHECK(b.alg == PASSION_XCHG_TWOLEVEL, "slow network: chose %s",
             coll_xchg_name(b.alg));
    /* one node: never */
    s.nodes = 1;
    s.node_max = 64;
    b = coll_xchg_choose(&slow, &s, 1);
    TH_CHECK(b.alg != PASSION_XCHG_TWOLEVEL, "one node: chose twolevel");
}

/* ---- collective MPI calls made while `counting` (the profiling
   interface: the library is linked into this test) ---- */

static int counting;
static long n_coll;

/* the requests of collective calls (coll_reqs: not failed by the
   injection below) */

static void coll_req_add(const MPI_Request *req)
{
    for (int i = 0; i < 8; i++)
        if (coll_reqs[i] == MPI_REQUEST_NULL) {
            coll_reqs[i] = *req;
            return;
        }
}

static int coll_req_is(const MPI_Request *req, int n)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < 8; i++)
            if (req[j] != MPI_REQUEST_NULL && coll_reqs[i] == req[j])
                return 1;
    return 0;
}

static void coll_req_done(const MPI_Request *req, int n)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < 8; i++)
            if (coll_reqs[i] == req[j])
                coll_reqs[i] = MPI_REQUEST_NULL;
}

int MPI_Iallreduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op,
                   MPI_Comm comm, MPI_Request *req)
{
    n_coll += counting;
    int r = PMPI_Iallreduce(sb, rb, n, t, op, comm, req);
    if (r == MPI_SUCCESS)
        coll_req_add(req);
    return r;
}

int MPI_Allreduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op,
                  MPI_Comm comm)
{
    n_coll += counting;
    return PMPI_Allreduce(sb, rb, n, t, op, comm);
}

int MPI_Ibcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm comm,
               MPI_Request *req)
{
    n_coll += counting;
    int r = PMPI_Ibcast(b, n, t, root, comm, req);
    if (r == MPI_SUCCESS)
        coll_req_add(req);
    return r;
}

/* ---- an MPI error reported by a wait on point-to-point messages:
   on rank inj_rank, the inj_at-th such wait (counted from inj_count = 0;
   the polls of one wait count once) completes its requests and then
   returns MPI_ERR_OTHER, as a receive that truncated would ---- */

static int inj_rank = -1, inj_fired;
static long inj_at, inj_count;
static const MPI_Request *inj_last;
static int inj_last_n, inj_last_done = 1;

/* GCC (12) reads MPICH's MPI_STATUSES_IGNORE, the constant pointer 1, as
   a zero-sized status array and warns; the pointer is never written. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
/* 1: this call is the injected failure (its requests completed) */
static int inj_wait(int n, MPI_Request *req)
{
    if (inj_rank != me || inj_at <= 0 || coll_req_is(req, n))
        return 0;
    int fresh = inj_last_done || req != inj_last || n != inj_last_n;
    inj_last = req;
    inj_last_n = n;
    inj_last_done = 0;
    if (!fresh || ++inj_count != inj_at)
        return 0;
    PMPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    inj_last_done = 1;
    inj_fired = 1;
    return 1;
}

int MPI_Testall(int n, MPI_Request *req, int *flag, MPI_Status *st)
{
    if (inj_wait(n, req)) {
        *flag = 1;
        return MPI_ERR_OTHER;
    }
    MPI_Request keep[16];
    int nk = n < 16 ? n : 16;
    memcpy(keep, req, (size_t)nk * sizeof *req);
    int r = PMPI_Testall(n, req, flag, st);
    if (*flag) {
        inj_last_done = 1;
        coll_req_done(keep, nk);
    }
    return r;
}

int MPI_Waitall(int n, MPI_Request *req, MPI_Status *st)
{
    if (inj_wait(n, req))
        return MPI_ERR_OTHER;
    MPI_Request keep[16];
    int nk = n < 16 ? n : 16;
    memcpy(keep, req, (size_t)nk * sizeof *req);
    int r = PMPI_Waitall(n, req, st);
    inj_last_done = 1;
    coll_req_done(keep, nk);
    return r;
}
#pragma GCC diagnostic pop

int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm comm)
{
    n_coll += counting;
    return PMPI_Bcast(b, n, t, root, comm);
}

/*
 * On several nodes, some with two ranks or more, an exchange agrees by
 * nodes in three rounds of messages (to the leader, among the leaders,
 * back) and the two-level exchange's data rides on them: a call makes
 * one collective MPI call, the allreduce of its outcome (a failure after
 * a rank's status left: test_late_error), where it made three before
 * (an allreduce and a broadcast within each node for the agreement, and
 * the outcome's); A1's none (its data goes in a round of its own after
 * the agreement); results equal MPI_Alltoallv's, random patterns on
 * every such split.
 */
static void test_rounds(void)
{
    for (int k = 2; k < P; k++) {
        if (P > 5 && k > 3)
            continue; /* oversubscribed: a few splits */
        passion_ctx *c = ctx_nodes(k, "msg_alpha=1e-5,msg_beta=1e-9");
        if (!c)
            continue;
        static const int algs[2] = {PASSION_XCHG_TWOLEVEL, PASSION_XCHG_A1};
        for (int ai = 0; ai < 2; ai++)
            for (int rep = 0; rep < 2; rep++) {
                th_case_seed = th_seed + 9000 + (uint64_t)(k * 10 + ai * 2 +
                                                           rep);
                int64_t *m = th_xchg_matrix(P, th_case_seed, 48, rep * 30);
                coll_xchg_stats st;
                memset(&st, 0, sizeof st);
                MPI_Barrier(MPI_COMM_WORLD);
                n_coll = 0;
                counting = 1;
                int ok = run_m(c, m, algs[ai], 0, th_case_seed, &st, NULL,
                               0);
                counting = 0;
                TH_CHECK(th_all(ok), "k=%d %s: results differ",
                         k, coll_xchg_name(algs[ai]));
                long want = algs[ai] == PASSION_XCHG_TWOLEVEL;
                TH_CHECK(n_coll == want && st.alg == algs[ai],
                         "k=%d %s (rep %d): %ld collective MPI calls in "
                         "one exchange (want %ld), ran %s", k,
                         coll_xchg_name(algs[ai]), rep, n_coll, want,
                         coll_xchg_name(st.alg));
                free(m);
            }
        ctx_done(c);
    }
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "HANG: an exchange after an injected MPI "
                              "error did not return in 60 s\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(3);
}

/*
 * An MPI error reported on one rank by a wait of point-to-point messages
 * (the messages completed, as with a receive that truncated), at every
 * such wait of a two-level exchange on several nodes in turn, on every
 * rank in turn: the agreement by nodes, the data riding on it, the
 * leaders' blocks, the distribution within the node. Every rank returns
 * the same code (PASSION_EMPI where the failure fired), nobody hangs
 * (watchdog), and the next call gives MPI_Alltoallv's result. Before:
 * a failure after the rank's status had left was returned by that rank
 * only, and a leader that failed receiving its node's headers returned
 * at once (its node and the other leaders waited).
 */
static void test_late_error(void)
{
    if (P < 3 || P > 5)
        return; /* by nodes from 3 ranks; each wait of each rank is a run */
    signal(SIGALRM, on_alarm);
    for (int k = 2; k < P; k++) {
        passion_ctx *c = ctx_nodes(k, NULL);
        if (!c)
            continue;
        th_case_seed = th_seed + 11000 + (uint64_t)k;
        int64_t *m = th_xchg_matrix(P, th_case_seed, 200, 20);
        int fired_any = 0;
        for (int victim = 0; victim < P; victim++) {
            int fired = 1;
            long at;
            for (at = 1; fired && at <= 200; at++) {
                alarm(60);
                inj_rank = victim;
                inj_at = at;
                inj_count = 0;
                inj_fired = 0;
                inj_last_done = 1;
                int code = 0;
                run_m(c, m, PASSION_XCHG_TWOLEVEL, 0, th_case_seed, NULL,
                      &code, 1);
                inj_rank = -1;
                inj_at = 0;
                int v[3] = {code, -code, inj_fired}, mx[3];
                PMPI_Allreduce(v, mx, 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
                fired = mx[2];
                fired_any |= fired;
                TH_CHECK(mx[0] == -mx[1], "k=%d: MPI error at wait %ld of "
                         "rank %d: ranks return %d and %d", k, at, victim,
                         mx[0], -mx[1]);
                TH_CHECK(!fired || mx[0] == PASSION_EMPI,
                         "k=%d: MPI error at wait %ld of rank %d: code %d",
                         k, at, victim, mx[0]);
                TH_CHECK(th_all(run_m(c, m, PASSION_XCHG_TWOLEVEL, 0,
                                      th_case_seed, NULL, NULL, 0)),
                         "k=%d: twolevel after an MPI error at wait %ld of "
                         "rank %d", k, at, victim);
            }
            TH_CHECK(!fired, "k=%d rank %d: still failing after 200 waits",
                     k, victim);
        }
        alarm(0);
        TH_CHECK(fired_any, "k=%d: no wait failed", k);
        free(m);
        ctx_done(c);
    }
}

static CU_TestInfo tests[] = {
    {"random patterns on 1-4 nodes, counts", test_random_patterns},
    {"messages split at the chunk limit", test_chunked},
    {"budget: steps and ENOMEM", test_budget},
    {"failed allocation on a leader", test_fault},
    {"model: slow network between nodes", test_model},
    {"agreement by nodes: no collective call", test_rounds},
    {"an MPI error on one rank after its status left", test_late_error},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"twolevel", suite_init, suite_clean, NULL, NULL, tests},
    CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, suites);
}
