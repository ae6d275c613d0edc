/*
 * test_exchange.c - the exchange algorithms of collective/:
 * every algorithm against MPI_Alltoall / MPI_Alltoallv on random data
 * (random size matrices with zeros, one huge message among tiny ones, all
 * sizes zero, gaps between blocks that must stay untouched), every radix
 * of the index algorithm, the counters against the papers' formulas
 * (Bruck's C1 and C2; four-stage start-ups and Theorem 1's staging), the
 * four-stage schedules, argument checks and their agreement across ranks,
 * long messages split at the chunk limit, a failed allocation in the
 * middle of a four-stage exchange, and the cost model's choices.
 *
 * Sizes shrink with the number of ranks: with more ranks than cores every
 * round costs milliseconds.
 */
#include "../collective/exchange/exchange.h"
#include "harness.h"
#include "xchg_case.h"

#include <math.h>

static passion_ctx *ctx;
static int P, me;
static int quiet; /* failures are expected: do not report them */

static const int fixed_algs[] = {PASSION_XCHG_MPI, PASSION_XCHG_PAIRWISE,
                                 PASSION_XCHG_A1, PASSION_XCHG_FOURSTAGE,
                                 PASSION_XCHG_FOURSTAGE_NB,
                                 PASSION_XCHG_AUTO};
#define NALGS ((int)(sizeof fixed_algs / sizeof fixed_algs[0]))

static int small_run(void)
{
    return P > 4;
}

static int suite_init(void)
{
    P = th_size;
    me = th_rank;

    return passion_init(MPI_COMM_WORLD, NULL, &ctx) ? -1 : 0;
}

static int suite_clean(void)
{
    return passion_finalize(ctx) ? -1 : 0;
}

/*
 * Exchange matrix m (bytes) with algorithm alg through passion_alltoallv
 * (elements of esize bytes: m must hold multiples of esize) and through
 * MPI_Alltoallv; compare the whole receive buffers, gaps included.
 * Returns 1 when equal and the call returned 0.
 */
static int run_v(const int64_t *m, int alg, int radix, MPI_Datatype type,
                 uint64_t seed, coll_xchg_stats *stats)
{
    th_xcase x;
    th_xcase_make(&x, m, type, seed, 1);
    passion_counters_reset(ctx);
    int rcode = passion_alltoallv(ctx, x.sb, x.sc, x.sd, x.rb, x.rc, x.rd,
                                  type, alg, radix);
    if (stats)
        coll_xchg_last(ctx, stats);
    int ok = rcode == 0 && th_xcase_equal(&x);
    if (!ok && !quiet)
        fprintf(stderr, "[rank %d] alltoallv alg %s radix %d: rc %d (%s), "
                        "data %s\n",
                me, coll_xchg_name(alg), radix, rcode,
                passion_ctx_errdetail(ctx),
                th_xcase_equal(&x) ? "equal" : "differs");
    th_xcase_free(&x);
    return ok;
}

/* m (as run_v) through every fixed algorithm, each checked on every
   rank; `what` names the case in a failure */
static void every_alg(const int64_t *m, MPI_Datatype type, const char *what)
{
    for (int a = 0; a < NALGS; a++)
        TH_CHECK(th_all(run_v(m, fixed_algs[a], 0, type, th_case_seed, NULL)),
                 "%s %s", what, coll_xchg_name(fixed_algs[a]));
}

/* the most bytes a rank of the P x P matrix m sends or receives */
static int64_t most_bytes(const int64_t *m)
{
    int64_t lmax = 0;
    for (int i = 0; i < P; i++) {
        int64_t out = 0, in = 0;
        for (int j = 0; j < P; j++) {
            out += m[i * P + j];
            in += m[j * P + i];
        }
        lmax = out > lmax ? out : lmax;
        lmax = in > lmax ? in : lmax;
    }
    return lmax;
}

/* passion_alltoall of count elements of type against MPI_Alltoall */
static int run_regular(int64_t count, MPI_Datatype type, int alg, int radix,
                       uint64_t seed, coll_xchg_stats *stats)
{
    int esize;
    MPI_Type_size(type, &esize);
    size_t b = (size_t)count * (size_t)esize, n = b * (size_t)P + 1;
    unsigned char *sb = malloc(n), *rb = malloc(n), *ref = malloc(n);
    for (int j = 0; j < P; j++)
        for (size_t k = 0; k < b; k++)
            sb[j * b + k] = th_xchg_pattern(me, j, (int64_t)k, seed);
    memset(rb, 0xab, n);
    memset(ref, 0xab, n);
    MPI_Alltoall(sb, (int)count, type, ref, (int)count, type,
                 MPI_COMM_WORLD);
    passion_counters_reset(ctx);
    int rcode = passion_alltoall(ctx, sb, rb, count, type, alg, radix);
    if (stats)
        coll_xchg_last(ctx, stats);
    int ok = rcode == 0 && memcmp(rb, ref, n) == 0;
    if (!ok)
        fprintf(stderr, "[rank %d] alltoall alg %s radix %d count %lld: rc "
                        "%d (%s)\n",
                me, coll_xchg_name(alg), radix, (long long)count, rcode,
                passion_ctx_errdetail(ctx));
    free(sb);
    free(rb);
    free(ref);
    return ok;
}

/* ------------------------------------------------------------ local */

static void test_grid_schedule(void)
{
    if (me != 0)
        return;
    coll_step st[2 * 64], *all = malloc(sizeof *all * 2 * 64 * 1100);
    int work[2 * 64];
    for (int n = 1; n <= 1100; n++) {
        coll_grid g = coll_grid_make(n);
        int C = g.C, R = g.R, r = g.r;
        TH_CHECK(C >= 1 && R >= 1 && C * (R - 1) + (r ? r : C) == n,
                 "grid P=%d: C=%d R=%d r=%d", n, C, R, r);
        TH_CHECK(r == 0 || r <= R - 1, "grid P=%d: r=%d > R-1=%d", n, r,
                 R - 1);
        TH_CHECK(C <= (int)ceil(sqrt((double)n)), "grid P=%d: C=%d", n, C);
        if (n > 300 && n != 1024 && n != 1023 && n != 1089)
            continue;
        /* every node's row schedule, then check it as a whole */
        int Tmax = 0;
        for (int v = 0; v < n; v++) {
            int T = coll_row_schedule(&g, v, st, work);
            TH_CHECK(T <= C, "P=%d node %d: %d steps > C=%d", n, v, T, C);
            if (T > Tmax)
                Tmax = T;
            for (int t = 0; t < 2 * C; t++)
                all[(size_t)v * 2 * C + t] = st[t];
        }
        for (int t = 0; t < Tmax; t++) {
            for (int v = 0; v < n; v++) {
                coll_step s = all[(size_t)v * 2 * C + t];
                if (s.to >= 0) {
                    TH_CHECK(s.to < n && all[(size_t)s.to * 2 * C + t].from ==
                                             v,
                             "P=%d step %d: %d sends to %d, who does not "
                             "receive it",
                             n, t + 1, v, s.to);
                }
            }
        }
        /* every node sends to each other column of its row exactly once */
        for (int v = 0; v < n; v++) {
            int seen = 0;
            for (int t = 0; t < 2 * C; t++) {
                int to = all[(size_t)v * 2 * C + t].to;
                if (to >= 0)
                    seen |= 0; /* counted below */
                if (to >= 0) {
                    int c = to % C;
                    TH_CHECK(c != v % C, "P=%d node %d sends to own column",
                             n, v);
                    seen++;
                }
            }
            TH_CHECK(seen == C - 1, "P=%d node %d: %d row sends, want %d",
                     n, v, seen, C - 1);
        }
    }
    free(all);
}

static void test_index_counts(void)
{
    int64_t c1, c2;
    coll_index_counts(5, 3, &c1, &c2);
    TH_CHECK(c1 == 3 && c2 == 5, "n=5 r=3: C1=%lld C2=%lld (want 3, 5)",
             (long long)c1, (long long)c2);
    for (int n = 2; n <= 70; n++) {
        int w2 = 0;
        while ((1 << w2) < n)
            w2++;
        coll_index_counts(n, 2, &c1, &c2);
        TH_CHECK(c1 == w2, "n=%d r=2: C1=%lld, want %d", n, (long long)c1,
                 w2);
        coll_index_counts(n, n, &c1, &c2);
        TH_CHECK(c1 == n - 1 && c2 == n - 1, "n=%d r=n: C1=%lld C2=%lld", n,
                 (long long)c1, (long long)c2);
        for (int r = 2; r <= n; r++) {
            int w = 0;
            for (int64_t p = 1; p < n; p *= r)
                w++;
            coll_index_counts(n, r, &c1, &c2);
            TH_CHECK(c1 <= (int64_t)(r - 1) * w &&
                         c2 <= (int64_t)((n + r - 1) / r) * (r - 1) * w,
                     "n=%d r=%d: C1=%lld C2=%lld above Bruck's bounds", n, r,
                     (long long)c1, (long long)c2);
        }
    }
}

/* ------------------------------------------------------- correctness */

static void test_regular_all(void)
{
    th_case_seed = th_seed + 1;
    int64_t counts[] = {0, 1, 5, 300};
    for (int a = 0; a < NALGS; a++)
        for (int c = 0; c < 4; c++) {
            if (small_run() && c == 3 && a != 0)
                continue;
            TH_CHECK(th_all(run_regular(counts[c], MPI_INT, fixed_algs[a], 0,
                                        th_case_seed + (uint64_t)c, NULL)),
                     "alltoall %s count %lld", coll_xchg_name(fixed_algs[a]),
                     (long long)counts[c]);
        }
}

static void test_index_every_radix(void)
{
    th_case_seed = th_seed + 2;
    int64_t count = small_run() ? 3 : 40;
    for (int r = 2; r <= (P > 2 ? P : 2); r++) {
        coll_xchg_stats st;
        memset(&st, 0, sizeof st);
        int ok = run_regular(count, MPI_DOUBLE, PASSION_XCHG_INDEX, r,
                             th_case_seed + (uint64_t)r, &st);
        TH_CHECK(th_all(ok), "index radix %d", r);
        int64_t c1, c2, b = count * 8;
        coll_index_counts(P, r, &c1, &c2);
        if (P > 1) {
            TH_CHECK(st.alg == PASSION_XCHG_INDEX && st.radix == r,
                     "index ran as %d radix %d", st.alg, st.radix);
            TH_CHECK(st.rounds == c1 && st.messages == c1,
                     "index r=%d: rounds %lld messages %lld, C1 = %lld", r,
                     (long long)st.rounds, (long long)st.messages,
                     (long long)c1);
            TH_CHECK(st.bytes_sent == c2 * b,
                     "index r=%d: bytes %lld, C2 = %lld", r,
                     (long long)st.bytes_sent, (long long)(c2 * b));
            passion_counters cn;
            passion_counters_get(ctx, &cn);
            TH_CHECK(cn.rounds == (uint64_t)c1 &&
                         cn.messages_sent == (uint64_t)c1 &&
                         cn.bytes_sent == (uint64_t)(c2 * b),
                     "context counters after index r=%d", r);
        }
    }
    /* uniform counts through alltoallv (arbitrary displacements) */
    int64_t *m = th_xchg_matrix(P, th_case_seed, 0, 0);
    for (int i = 0; i < P * P; i++)
        m[i] = 24;
    TH_CHECK(th_all(run_v(m, PASSION_XCHG_INDEX, 2, MPI_BYTE, th_case_seed,
                          NULL)),
             "index through alltoallv");
    free(m);
}

static void test_irregular_random(void)
{
    int trials = small_run() ? 1 : 3;
    int64_t maxb = small_run() ? 40 : 600;
    for (int t = 0; t < trials; t++) {
        th_case_seed = th_seed + 100 + (uint64_t)t;
        int64_t *m = th_xchg_matrix(P, th_case_seed, maxb, 30);
        char what[32];
        snprintf(what, sizeof what, "alltoallv trial %d:", t);
        every_alg(m, MPI_BYTE, what);
        free(m);
    }
    /* elements larger than a byte */
    th_case_seed = th_seed + 150;
    int64_t *m = th_xchg_matrix(P, th_case_seed, 10, 20);
    for (int i = 0; i < P * P; i++)
        m[i] *= 8;
    every_alg(m, MPI_DOUBLE, "alltoallv doubles");
    free(m);
}

static void test_huge_among_tiny(void)
{
    th_case_seed = th_seed + 200;
    int64_t *m = th_xchg_matrix(P, th_case_seed, 3, 10);
    int64_t huge = small_run() ? 50000 : 1 << 20;
    m[(P - 1) * P + 0] = huge; /* last rank to rank 0 */
    every_alg(m, MPI_BYTE, "one huge message,");
    free(m);
}

static void test_all_zero(void)
{
    th_case_seed = th_seed + 300;
    int64_t *m = th_xchg_matrix(P, th_case_seed, 0, 100);
    for (int a = 0; a < NALGS; a++) {
        coll_xchg_stats st;
        TH_CHECK(th_all(run_v(m, fixed_algs[a], 0, MPI_BYTE, th_case_seed,
                              &st)),
                 "all sizes zero, %s", coll_xchg_name(fixed_algs[a]));
        TH_CHECK(st.peak_payload == 0, "all zero: %s staged %lld bytes",
                 coll_xchg_name(fixed_algs[a]), (long long)st.peak_payload);
    }
    TH_CHECK(th_all(run_regular(0, MPI_BYTE, PASSION_XCHG_INDEX, 0,
                                th_case_seed, NULL)),
             "index with zero-byte blocks");
    free(m);
}

/* ------------------------------------------------------------ counters */

static void test_fourstage_bounds(void)
{
    /* sizes multiple of P: the even splits are exact, so Theorem 1 holds
       to the byte */
    th_case_seed = th_seed + 400;
    int64_t *m = th_xchg_matrix(P, th_case_seed, small_run() ? 6 : 40, 25);
    for (int i = 0; i < P * P; i++)
        m[i] *= P;
    int64_t lmax = most_bytes(m);
    double c = ceil(sqrt((double)P));
    for (int nb = 0; nb < 2; nb++) {
        int alg = nb ? PASSION_XCHG_FOURSTAGE_NB : PASSION_XCHG_FOURSTAGE;
        coll_xchg_stats st;
        memset(&st, 0, sizeof st);
        TH_CHECK(th_all(run_v(m, alg, 0, MPI_BYTE, th_case_seed, &st)),
                 "four-stage (nb=%d) on multiples of P", nb);
        TH_CHECK(st.messages <= 4 * c + 2 && st.rounds <= 4 * c + 2,
                 "four-stage nb=%d: %lld messages, %lld rounds > 4*%g+2", nb,
                 (long long)st.messages, (long long)st.rounds, c);
        double bound = 2 * c * c * (double)lmax / P;
        TH_CHECK(st.peak_payload <= bound,
                 "four-stage nb=%d: staged %lld data bytes > Theorem 1's "
                 "%.0f (Lmax %lld)",
                 nb, (long long)st.peak_payload, bound, (long long)lmax);
        if (me == 0 && P == 4 && nb == 0)
            printf("\n  four-stage P=%d: %lld msgs, %lld rounds, staged %lld "
                   "data + %lld descriptor bytes, bound %.0f\n",
                   P, (long long)st.messages, (long long)st.rounds,
                   (long long)st.peak_payload,
                   (long long)(st.peak_staging - st.peak_payload), bound);
    }
    free(m);
}

/* ------------------------------------------------------------- errors */

static void test_errors(void)
{
    int64_t cnt[64], dsp[64];
    int buf[64 * 4] = {0}, out[64 * 4];
    for (int j = 0; j < P; j++) {
        cnt[j] = 1;
        dsp[j] = j;
    }
    /* an unknown algorithm on rank 0 only: everyone gets EINVAL */
    int rc = passion_alltoall(ctx, buf, out, 1, MPI_INT,
                              me == 0 ? 99 : PASSION_XCHG_A1, 0);
    TH_CHECK(rc == PASSION_EINVAL, "bad alg on rank 0: rc %d", rc);
    /* different radix */
    if (P > 2) {
        rc = passion_alltoall(ctx, buf, out, 1, MPI_INT, PASSION_XCHG_INDEX,
                              me == 0 ? 2 : 3);
        TH_CHECK(rc == PASSION_EMISMATCH, "radix mismatch: rc %d", rc);
    }
    /* different algorithms */
    if (P > 1) {
        rc = passion_alltoall(ctx, buf, out, 1, MPI_INT,
                              me == 0 ? PASSION_XCHG_A1 : PASSION_XCHG_MPI,
                              0);
        TH_CHECK(rc == PASSION_EMISMATCH, "alg mismatch: rc %d", rc);
        /* a different count on rank 0, every header compact (a1, at most
           256 bytes a pair): the fold still finds it */
        rc = passion_alltoall(ctx, buf, out, me == 0 ? 2 : 1, MPI_INT,
                              PASSION_XCHG_A1, 0);
        TH_CHECK(rc == PASSION_EMISMATCH, "alltoall count mismatch: rc %d",
                 rc);
        /* a compact header beside a full one (rank 0 asks for auto) */
        rc = passion_alltoall(ctx, buf, out, 1, MPI_INT,
                              me == 0 ? PASSION_XCHG_AUTO : PASSION_XCHG_A1,
                              0);
        TH_CHECK(rc == PASSION_EMISMATCH, "auto beside a1: rc %d", rc);
        /* counts that do not match: rank 0 sends 2 to rank 1 */
        int64_t sc[64];
        memcpy(sc, cnt, sizeof sc);
        if (me == 0)
            sc[1] = 2;
        int64_t sd2[64];
        for (int j = 0; j < P; j++)
            sd2[j] = 2 * j;
        rc = passion_alltoallv(ctx, buf, sc, sd2, out, cnt, dsp, MPI_INT,
                               PASSION_XCHG_A1, 0);
        TH_CHECK(rc == PASSION_EMISMATCH, "count mismatch: rc %d", rc);
    }
    /* non-contiguous type */
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    rc = passion_alltoall(ctx, buf, out, 1, vec, PASSION_XCHG_AUTO, 0);
    TH_CHECK(rc == PASSION_ENOTSUP, "vector type: rc %d", rc);
    MPI_Type_free(&vec);
    /* a contiguous derived type is fine */
    MPI_Datatype three;
    MPI_Type_contiguous(3, MPI_INT, &three);
    MPI_Type_commit(&three);
    TH_CHECK(th_all(run_regular(1, three, PASSION_XCHG_AUTO, 0, 5, NULL)),
             "contiguous derived type");
    MPI_Type_free(&three);
    /* negative count on the last rank */
    rc = passion_alltoall(ctx, buf, out, me == P - 1 ? -1 : 1, MPI_INT,
                          PASSION_XCHG_A1, 0);
    TH_CHECK(rc == PASSION_EINVAL, "negative count: rc %d", rc);
    /* NULL buffer with data */
    rc = passion_alltoall(ctx, me == 0 ? NULL : buf, out, 1, MPI_INT,
                          PASSION_XCHG_PAIRWISE, 0);
    TH_CHECK(rc == PASSION_EINVAL, "NULL buffer: rc %d", rc);
    TH_CHECK(strstr(passion_ctx_errdetail(ctx), "rank 0") != NULL,
             "detail names rank 0: %s", passion_ctx_errdetail(ctx));
    /* radix out of range */
    rc = passion_alltoall(ctx, buf, out, 1, MPI_INT, PASSION_XCHG_INDEX, 1);
    TH_CHECK(rc == PASSION_EINVAL, "radix 1: rc %d", rc);
    /* index with unequal counts */
    if (P > 1) {
        int64_t sc[64], rcn[64], sd[64], rd[64];
        for (int j = 0; j < P; j++) {
            sc[j] = j == 0 ? 2 : 1;
            rcn[j] = me == 0 ? 2 : 1;
            sd[j] = 2 * j;
            rd[j] = 2 * j;
        }
        rc = passion_alltoallv(ctx, buf, sc, sd, out, rcn, rd, MPI_INT,
                               PASSION_XCHG_INDEX, 2);
        TH_CHECK(rc == PASSION_EINVAL, "index with unequal counts: rc %d",
                 rc);
    }
    TH_CHECK(passion_alltoall(NULL, buf, out, 1, MPI_INT, 0, 0) ==
                 PASSION_EINVAL,
             "NULL context");
    /* still usable afterwards */
    TH_CHECK(th_all(run_regular(2, MPI_INT, PASSION_XCHG_AUTO, 0, 6, NULL)),
             "exchange after errors");
}

static void test_chunked(void)
{
    /* long messages split at a small chunk limit */
    coll_xchg_set_chunk(100);
    th_case_seed = th_seed + 500;
    int64_t *m = th_xchg_matrix(P, th_case_seed, small_run() ? 300 : 2000, 20);
    every_alg(m, MPI_BYTE, "chunked");
    TH_CHECK(th_all(run_regular(small_run() ? 30 : 100, MPI_INT,
                                PASSION_XCHG_INDEX, 2, 7, NULL)),
             "chunked index");
    coll_xchg_set_chunk(0);
    free(m);
}

/* the "mpi" algorithm past the int limit (lowered here): MPI 4's
   MPI_Alltoall(v)_c, or MPI_Alltoallw with byte-run datatypes under MPI 3
   (Open MPI 4), against MPI_Alltoall(v) */
static void test_large_counts(void)
{
    coll_xchg_mpi_set_int_limit(64);
    th_case_seed = th_seed + 550;
    int64_t *m = th_xchg_matrix(P, th_case_seed, small_run() ? 300 : 2000, 20);
    TH_CHECK(th_all(run_v(m, PASSION_XCHG_MPI, 0, MPI_BYTE, th_case_seed,
                          NULL)),
             "alltoallv past the int limit, seed %llu",
             (unsigned long long)th_case_seed);
    for (int i = 0; i < P * P; i++)
        m[i] -= m[i] % 8;
    TH_CHECK(th_all(run_v(m, PASSION_XCHG_MPI, 0, MPI_DOUBLE, th_case_seed,
                          NULL)),
             "alltoallv of doubles past the int limit");
    TH_CHECK(th_all(run_regular(small_run() ? 30 : 100, MPI_INT,
                                PASSION_XCHG_MPI, 0, 8, NULL)),
             "alltoall past the int limit");
    TH_CHECK(th_all(run_regular(16, MPI_INT, PASSION_XCHG_MPI, 0, 9, NULL)),
             "alltoall at the int limit (64 bytes a peer)");
    coll_xchg_mpi_set_int_limit(0);
    free(m);
}

static uint64_t str_hash(const char *t)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *t; t++)
        h = (h ^ (unsigned char)*t) * 1099511628211ULL;
    return h;
}

static void test_fault(void)
{
    /* the Nth allocation of the call (the one fault option,
       fault_alloc_at, counted from core_fault_arm) fails on the last
       rank, for every N the four-stage exchange makes: every rank returns
       the same outcome and detail, nobody hangs, and a failure in the
       middle of the run (a four-stage staging buffer) is among them */
    if (P < 2)
        return;
    th_case_seed = th_seed + 600;
    int64_t *m = th_xchg_matrix(P, th_case_seed, 50, 0);
    for (int nb = 0; nb < 2; nb++) {
        int mid = 0, fired = 1;
        for (int64_t nth = 1; fired && nth <= 200; nth++) {
            core_fault_arm(ctx, nth, 0, P - 1);
            quiet = 1;
            int ok = run_v(m, nb ? PASSION_XCHG_FOURSTAGE_NB
                                 : PASSION_XCHG_FOURSTAGE,
                           0, MPI_BYTE, th_case_seed, NULL);
            quiet = 0;
            int me_fired = me == P - 1 && ctx->fault_allocs >= nth;
            core_fault_arm(ctx, 0, 0, -1);
            const char *det = passion_ctx_errdetail(ctx);
            unsigned long long v[4] = {(unsigned long long)ok,
                                       ok ? 0 : str_hash(det),
                                       (unsigned long long)me_fired,
                                       !ok && strstr(det, "four-stage")},
                               mx[4], mn[4];
            MPI_Allreduce(v, mx, 4, MPI_UNSIGNED_LONG_LONG, MPI_MAX,
                          MPI_COMM_WORLD);
            MPI_Allreduce(v, mn, 4, MPI_UNSIGNED_LONG_LONG, MPI_MIN,
                          MPI_COMM_WORLD);
            fired = (int)mx[2];
            TH_CHECK(mx[0] == mn[0] && mx[1] == mn[1],
                     "fault %lld (nb=%d): ranks disagree (ok %d, '%s')",
                     (long long)nth, nb, ok, det);
            TH_CHECK(fired || mn[0] == 1, "fault %lld (nb=%d): no fault, "
                     "yet '%s'", (long long)nth, nb, det);
            mid |= (int)mx[3];
            /* the next call works */
            TH_CHECK(th_all(run_v(m, nb ? PASSION_XCHG_FOURSTAGE_NB
                                        : PASSION_XCHG_FOURSTAGE,
                                  0, MPI_BYTE, th_case_seed, NULL)),
                     "four-stage after fault %lld (nb=%d)", (long long)nth,
                     nb);
        }
        TH_CHECK(!fired, "nb=%d: faults still firing after 200", nb);
        TH_CHECK(mid, "nb=%d: no fault inside the four-stage run", nb);
    }
    free(m);
    /* a1, whose data ride on the round of headers (short messages inside
       the headers' messages, long ones after them): a rank whose round
       cannot be had still takes part and drains what came; every rank
       returns the same outcome and the next call works */
    m = th_xchg_matrix(P, th_case_seed + 1, 9000, 20);
    int fired = 1;
    for (int64_t nth = 1; fired && nth <= 50; nth++) {
        core_fault_arm(ctx, nth, 0, P - 1);
        quiet = 1;
        int ok = run_v(m, PASSION_XCHG_A1, 0, MPI_BYTE, th_case_seed + 1,
                       NULL);
        quiet = 0;
        int me_fired = me == P - 1 && ctx->fault_allocs >= nth;
        core_fault_arm(ctx, 0, 0, -1);
        const char *det = passion_ctx_errdetail(ctx);
        unsigned long long v[3] = {(unsigned long long)ok,
                                   ok ? 0 : str_hash(det),
                                   (unsigned long long)me_fired},
                           mx[3], mn[3];
        MPI_Allreduce(v, mx, 3, MPI_UNSIGNED_LONG_LONG, MPI_MAX,
                      MPI_COMM_WORLD);
        MPI_Allreduce(v, mn, 3, MPI_UNSIGNED_LONG_LONG, MPI_MIN,
                      MPI_COMM_WORLD);
        fired = (int)mx[2];
        TH_CHECK(mx[0] == mn[0] && mx[1] == mn[1],
                 "a1 fault %lld: ranks disagree (ok %d, '%s')",
                 (long long)nth, ok, det);
        TH_CHECK(fired || mn[0] == 1, "a1 fault %lld: no fault, yet '%s'",
                 (long long)nth, det);
        TH_CHECK(th_all(run_v(m, PASSION_XCHG_A1, 0, MPI_BYTE,
                              th_case_seed + 2, NULL)),
                 "a1 after fault %lld (seed %llu)", (long long)nth,
                 (unsigned long long)th_case_seed);
    }
    TH_CHECK(!fired, "a1: faults still firing after 50");
    free(m);
}

/* ---------------------------------------------------------------- model */

static void test_model_choices(void)
{
    coll_xchg_shape s = coll_shape_regular(P, 64);
    /* start-ups dominate: the fewest messages */
    coll_xchg_costs slow = {.round = 0, .msg = 1e-3, .byte = 1e-12,
                            .copy = 1e-13, .source = COLL_COSTS_OPTIONS};
    coll_xchg_choice ch = coll_xchg_choose(&slow, &s, 1);
    int64_t c1, cv2, c1min, c2min;
    coll_index_counts(P, 2, &c1min, &c2min);
    if (P >= 4) {
        coll_index_counts(P, ch.radix, &c1, &cv2);
        TH_CHECK(ch.alg == PASSION_XCHG_INDEX && c1 == c1min,
                 "high start-up: chose %s radix %d", coll_xchg_name(ch.alg),
                 ch.radix);
    }
    /* bandwidth dominates: no index relaying, no copies */
    coll_xchg_costs fat = {.round = 0, .msg = 1e-9, .byte = 1e-6,
                           .copy = 1e-7, .source = COLL_COSTS_OPTIONS};
    ch = coll_xchg_choose(&fat, &s, 1);
    if (P >= 3)
        TH_CHECK(ch.alg == PASSION_XCHG_A1 || ch.alg == PASSION_XCHG_PAIRWISE,
                 "high per-byte cost: chose %s", coll_xchg_name(ch.alg));
    /* a round is expensive but messages within it are cheap: one round */
    coll_xchg_costs sched = {.round = 5e-3, .msg = 1e-5, .byte = 1e-10,
                             .copy = 1e-10, .source = COLL_COSTS_MEASURED};
    ch = coll_xchg_choose(&sched, &s, 1);
    if (P >= 3)
        TH_CHECK(ch.alg == PASSION_XCHG_A1, "oversubscribed: chose %s",
                 coll_xchg_name(ch.alg));

    /* the measured costs, and auto does what predict says */
    coll_xchg_costs c;
    TH_CHECK(coll_xchg_costs_get(ctx, &c) == 0 && c.round > 0 &&
                 c.byte > 0 && c.copy > 0,
             "calibration: round %g msg %g byte %g copy %g", c.round, c.msg,
             c.byte, c.copy);
    coll_xchg_args a;
    memset(&a, 0, sizeof a);
    int64_t b = 256;
    char *sb = calloc((size_t)(b * P), 1), *rb = calloc((size_t)(b * P), 1);
    a.sendbuf = sb;
    a.recvbuf = rb;
    a.block = b;
    a.alg = PASSION_XCHG_AUTO;
    coll_xchg_choice pr;
    TH_CHECK(coll_xchg_predict(ctx, &a, &pr) == 0 && pr.seconds > 0,
             "predict");
    coll_xchg_stats st;
    a.stats = &st;
    TH_CHECK(coll_exchange(ctx, &a) == 0, "coll_exchange auto");
    TH_CHECK(st.alg == pr.alg && st.radix == pr.radix,
             "auto ran %s r%d, predicted %s r%d", coll_xchg_name(st.alg),
             st.radix, coll_xchg_name(pr.alg), pr.radix);
    /* every rank made the same choice */
    int v[2] = {st.alg, -st.alg}, w[2];
    MPI_Allreduce(v, w, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    TH_CHECK(w[0] == -w[1], "ranks chose different algorithms");
    free(sb);
    free(rb);

    /* costs from the options: no calibration, the paper's model */
    passion_ctx *c2;
    TH_CHECK(th_init(&c2, "msg_alpha=1e-2,msg_beta=1e-12") == 0,
             "init with costs");
    coll_xchg_costs oc;
    TH_CHECK(coll_xchg_costs_ready(c2, &oc) && oc.source ==
                 COLL_COSTS_OPTIONS && oc.msg == 1e-2,
             "costs from options");
    int64_t cnt = 4;
    int *s2 = calloc((size_t)(cnt * P), sizeof *s2),
        *r2 = calloc((size_t)(cnt * P), sizeof *r2);
    TH_CHECK(passion_alltoall(c2, s2, r2, cnt, MPI_INT, PASSION_XCHG_DEFAULT,
                              0) == 0,
             "auto with option costs");
    coll_xchg_last(c2, &st);
    if (P >= 4) {
        coll_index_counts(P, st.radix, &c1, &cv2);
        TH_CHECK(st.alg == PASSION_XCHG_INDEX && c1 == c1min,
                 "alpha 10 ms: auto ran %s radix %d", coll_xchg_name(st.alg),
                 st.radix);
    }
    free(s2);
    free(r2);
    passion_finalize(c2);
}


/* --------------------------------------------------------- the budget */

/* One exchange of matrix m (bytes) through coll_exchange with a staging
   budget; 1 when the data equal MPI_Alltoallv's. *code: the return. */
static int run_budget(const int64_t *m, int alg, int64_t budget,
                      int regular, uint64_t seed, coll_xchg_stats *st,
                      int *code)
{
    th_xcase x;
    th_xcase_make(&x, m, MPI_BYTE, seed, 0);
    coll_xchg_args a;
    memset(&a, 0, sizeof a);
    a.sendbuf = x.sb;
    a.recvbuf = x.rb;
    a.block = regular ? m[0] : -1;
    a.sendcounts = x.sc;
    a.sdispls = x.sd;
    a.recvcounts = x.rc;
    a.rdispls = x.rd;
    a.alg = alg;
    a.budget = budget;
    a.stats = st;
    *code = coll_exchange(ctx, &a);
    int ok = *code == 0 && th_xcase_equal(&x);
    th_xcase_free(&x);
    return ok;
}

/* A fixed algorithm whose staging does not fit the budget it is given
   runs in steps within it; auto picks one that fits; a budget no step
   fits is ENOMEM on every rank. */
static void test_budget_steps(void)
{
    th_case_seed = th_seed + 91;
    int64_t *m = th_xchg_matrix(P, th_case_seed, small_run() ? 600 : 3000, 10);
    int64_t *reg = malloc((size_t)P * (size_t)P * sizeof *reg);
    for (int i = 0; i < P * P; i++)
        reg[i] = 1500;
    static const int algs[] = {PASSION_XCHG_FOURSTAGE,
                               PASSION_XCHG_FOURSTAGE_NB,
                               PASSION_XCHG_INDEX, PASSION_XCHG_AUTO};
    const int64_t budgets[] = {1 << 20, 24 << 10, 12 << 10};
    int64_t most_steps = 0;
    for (int ai = 0; ai < 4; ai++)
        for (int bi = 0; bi < 3; bi++) {
            int regular = algs[ai] == PASSION_XCHG_INDEX;
            coll_xchg_stats st;
            memset(&st, 0, sizeof st);
            int code = 0;
            int ok = run_budget(regular ? reg : m, algs[ai], budgets[bi],
                                regular, th_case_seed + (uint64_t)bi, &st,
                                &code);
            TH_CHECK(th_all(ok || code == PASSION_ENOMEM),
                     "%s budget %lld: rc %d (%s)", coll_xchg_name(algs[ai]),
                     (long long)budgets[bi], code, passion_ctx_errdetail(ctx));
            if (ok && st.steps > most_steps)
                most_steps = st.steps;
            TH_CHECK(st.peak_staging <= budgets[bi],
                     "%s: peak staging %lld over the budget %lld",
                     coll_xchg_name(algs[ai]), (long long)st.peak_staging,
                     (long long)budgets[bi]);
            if (budgets[bi] >= (24 << 10) || algs[ai] == PASSION_XCHG_AUTO)
                TH_CHECK(th_all(ok), "%s budget %lld must succeed: %s",
                         coll_xchg_name(algs[ai]), (long long)budgets[bi],
                         passion_ctx_errdetail(ctx));
        }
    /* the small budgets made some algorithm run in steps */
    TH_CHECK(P < 3 || most_steps > 1, "no exchange ran in steps");
    if (me == 0 && P == 4)
        printf("\n  budget: up to %lld steps\n", (long long)most_steps);
    /* no step fits: ENOMEM everywhere, with the sizes in the detail */
    if (P >= 2) {
        coll_xchg_stats st;
        int code = 0;
        run_budget(m, PASSION_XCHG_FOURSTAGE, 64, 0, th_case_seed, &st,
                   &code);
        TH_CHECK(th_all(code == PASSION_ENOMEM),
                 "four-stage in 64 bytes: rc %d", code);
        TH_CHECK(strstr(passion_ctx_errdetail(ctx), "left of the memory budget"),
                 "detail: %s", passion_ctx_errdetail(ctx));
    }
    free(reg);
    free(m);
}

/* Four-stage's staging bound for a largest per-rank volume l, as
   xchg_fourstage.c states it: Theorem 1's two generations of 2 C^2 l / P
   bytes, a byte per piece, 16-byte headers and 24-byte descriptors (at
   most 2 P C + 4 C pieces a generation), C = ceil(sqrt P). */
static int64_t fs_bound(int64_t p, int64_t l)
{
    int64_t c = 1;
    while (c * c < p)
        c++;
    int64_t pieces = 2 * p * c + 4 * c;
    return 2 * c * c * ((l + p - 1) / p) + 2 * pieces +
           3 * (32 * c + 24 * pieces);
}

/* The smallest budget four-stage runs in: the bound over the step counts
   the exchange tries (1, 2, 4, ..., lmax); in k steps every message moves
   in slices of ceil(n / k) bytes, so a rank's share of a step is at most
   ceil(lmax / k) + P. */
static int64_t fs_least(int64_t p, int64_t lmax)
{
    int64_t least = fs_bound(p, lmax);
    for (int64_t k = 2; k / 2 < lmax; k *= 2) {
        int64_t kk = k < lmax ? k : lmax;
        int64_t b = fs_bound(p, (lmax + kk - 1) / kk + p);
        least = b < least ? b : least;
    }
    return least;
}

/* The four-stage exchange states the smallest budget it runs in: one byte
   under it fails with ENOMEM on every rank, the detail naming it; at it
   the exchange succeeds within it. Both through a budget passed (the
   two-phase method's way) and through memory_budget (the detail then
   names the memory_budget that would do). */
static void test_budget_least(void)
{
    if (P < 2 || P > 9)
        return; /* one rank stages nothing; more: slow here */
    th_case_seed = th_seed + 97;
    int64_t *m = th_xchg_matrix(P, th_case_seed, 16, 10);
    int64_t lmax = most_bytes(m);
    int64_t least = fs_least(P, lmax);
    char want[96];
    static const int algs[] = {PASSION_XCHG_FOURSTAGE,
                               PASSION_XCHG_FOURSTAGE_NB};
    passion_ctx *base = ctx;
    for (int ai = 0; ai < 2; ai++)
        for (int via_option = 0; via_option < 2; via_option++)
            for (int64_t b = least - 1; b <= least; b++) {
                passion_ctx *c2 = NULL;
                if (via_option) {
                    int irc = th_init(&c2, "memory_budget=%lld",
                                      (long long)b);
                    TH_CHECK(irc == 0, "memory_budget=%lld: %d",
                             (long long)b, irc);
                    if (irc)
                        continue;
                    ctx = c2;
                }
                coll_xchg_stats st;
                memset(&st, 0, sizeof st);
                int code = 0;
                int ok = run_budget(m, algs[ai], via_option ? 0 : b, 0,
                                    th_case_seed, &st, &code);
                const char *d = passion_ctx_errdetail(ctx);
                if (b < least) {
                    TH_CHECK(th_all(code == PASSION_ENOMEM),
                             "%s, budget %lld (least %lld, Lmax %lld): rc "
                             "%d, %s", coll_xchg_name(algs[ai]),
                             (long long)b, (long long)least,
                             (long long)lmax, code, d);
                    snprintf(want, sizeof want, "at least %lld bytes",
                             (long long)least);
                    TH_CHECK(strstr(d, want), "detail lacks '%s': %s", want,
                             d);
                    snprintf(want, sizeof want, "memory_budget=%lld would do",
                             (long long)least);
                    TH_CHECK(!via_option || strstr(d, want),
                             "detail lacks '%s': %s", want, d);
                } else {
                    TH_CHECK(th_all(ok), "%s at its least budget %lld "
                             "(Lmax %lld): rc %d, %s",
                             coll_xchg_name(algs[ai]), (long long)b,
                             (long long)lmax, code, d);
                    TH_CHECK(st.peak_staging <= b,
                             "%s: peak staging %lld over %lld",
                             coll_xchg_name(algs[ai]),
                             (long long)st.peak_staging, (long long)b);
                }
                ctx = base;
                if (c2)
                    passion_finalize(c2);
            }
    if (me == 0 && P == 3)
        printf("\n  four-stage P=%d Lmax %lld: least budget %lld bytes\n", P,
               (long long)lmax, (long long)least);
    free(m);
}

/* MPI_Testall, wrapped (the profiling interface): on the poll_left-th
   call from now, the generalized request poll_req completes first */
static int poll_left;
static MPI_Request poll_req;

int MPI_Testall(int n, MPI_Request *req, int *flag, MPI_Status *st)
{
    if (poll_left > 0 && --poll_left == 0)
        MPI_Grequest_complete(poll_req);
    return PMPI_Testall(n, req, flag, st);
}

static int greq_query(void *extra, MPI_Status *st)
{
    (void)extra;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int greq_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

static int greq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

/*
 * The waits read the clock once every CORE_POLLS_PER_CLOCK polls while
 * they spin, the first time at that poll, and never once they yield (a
 * clock read costs as much as a poll on a VM's kvm-clock: 70 ns here;
 * every poll read it before, the first one included). A generalized
 * request that completes at the k-th poll (MPI_Testall wrapped): a wait
 * of k < CORE_POLLS_PER_CLOCK polls reads no clock (before: k - 1 reads),
 * a wait of 1000 polls at most one read per CORE_POLLS_PER_CLOCK polls
 * (core_wait_counts).
 */
static void test_wait_clock(void)
{
    static const int polls_at[] = {2, CORE_POLLS_PER_CLOCK - 1, 1000};
    for (int t = 0; t < 3; t++) {
        int k = polls_at[t];
        long long p0, r0, p1, r1;
        MPI_Request q;
        MPI_Grequest_start(greq_query, greq_free, greq_cancel, NULL, &q);
        poll_req = q;
        poll_left = k;
        core_wait_counts(&p0, &r0);
        int rc = core_waitall(1, &q);
        core_wait_counts(&p1, &r1);
        poll_left = 0;
        long long polls = p1 - p0, reads = r1 - r0;
        TH_CHECK(rc == PASSION_OK && polls == k,
                 "wait of %d polls: rc %d, %lld polls", k, rc, polls);
        if (k < CORE_POLLS_PER_CLOCK)
            TH_CHECK(reads == 0, "wait of %d polls: %lld clock reads", k,
                     reads);
        else
            TH_CHECK(reads * CORE_POLLS_PER_CLOCK <= polls,
                     "%lld clock reads in %lld polls (at most one per %d)",
                     reads, polls, CORE_POLLS_PER_CLOCK);
    }
}

static CU_TestInfo tests[] = {
    {"grid and row schedules", test_grid_schedule},
    {"index counts C1 C2", test_index_counts},
    {"alltoall, every algorithm", test_regular_all},
    {"index, every radix, counters", test_index_every_radix},
    {"alltoallv random sizes", test_irregular_random},
    {"one huge message among tiny", test_huge_among_tiny},
    {"all sizes zero", test_all_zero},
    {"four-stage bounds", test_fourstage_bounds},
    {"argument errors agree", test_errors},
    {"messages split at the chunk limit", test_chunked},
    {"mpi algorithm past the int limit", test_large_counts},
    {"failed allocation mid-exchange", test_fault},
    {"cost model choices", test_model_choices},
    {"waits read the clock once every few polls", test_wait_clock},
    {"staging within the budget given, in steps", test_budget_steps},
    {"four-stage's least budget, stated and exact", test_budget_least},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"exchange", suite_init, suite_clean, NULL, NULL, tests},
    CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, suites);
}
