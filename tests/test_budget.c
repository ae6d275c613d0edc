/*
 * test_budget.c - the memory budget bounds a whole collective call, the
 * exchange included: for every exchange algorithm (the context's
 * `exchange` option: auto, mpi, pairwise, a1, index, fourstage,
 * fourstage-nb), every method (etp-static, etp-dynamic, auto) and budgets
 * from 4 KiB up, each rank reads and then writes a random strided section
 * (fixed seed) of one global array file; the data are checked against a
 * naive element-by-element model of the file, and peak_staging must never
 * exceed memory_budget. A budget too small for the call's descriptors and
 * one element per rank may make every rank return PASSION_ENOMEM (never
 * anything else, never on one rank alone); from 64 KiB up every call must
 * succeed. MPI's own buffers (exchange=mpi) are not counted by
 * peak_staging. Rank 0 prints the matrix of outcomes.
 */
#include "harness.h"

#include "passion.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROWS 96
#define COLS 112

static const char *const xchg_names[] = {"auto",      "mpi",
                                         "pairwise",  "a1",
                                         "index",     "fourstage",
                                         "fourstage-nb"};
#define NXCHG 7
static const int methods[] = {PASSION_METHOD_ETP_STATIC,
                              PASSION_METHOD_ETP_DYNAMIC,
                              PASSION_METHOD_AUTO};
static const char *const method_names[] = {"etp-static", "etp-dynamic",
                                           "auto"};
#define NMETHOD 3
static const int64_t budgets[] = {4 << 10, 12 << 10, 64 << 10, 256 << 10};
#define NBUDGET 4
#define MUST_SUCCEED (64 << 10)

/* The one place that sets options. */
static int ctx_open(const char *xchg, int64_t budget, passion_ctx **ctx)
{
    return th_init(ctx, "exchange=%s,memory_budget=%lld", xchg,
                   (long long)budget);
}

static uint32_t value_of(int64_t idx, uint32_t salt)
{
    uint64_t s = (uint64_t)idx * 0x9E3779B97F4A7C15ULL + salt;
    return (uint32_t)(th_next(&s) >> 32);
}

static void random_section(uint64_t *rng, passion_section *s)
{
    const int64_t shape[2] = {ROWS, COLS};
    int64_t st[2], ct[2], sd[2];
    for (int d = 0; d < 2; d++) {
        sd[d] = th_range(rng, 1, 3);
        st[d] = th_range(rng, 0, shape[d] - 1);
        int64_t maxc = (shape[d] - 1 - st[d]) / sd[d] + 1;
        ct[d] = th_range(rng, maxc / 2 > 1 ? maxc / 2 : 1, maxc);
    }
    passion_section_set(s, 2, st, ct, sd);
}

typedef struct cell {
    int ok, enomem, other;
    uint64_t peak;
} cell;

static cell cells[NXCHG][NMETHOD][NBUDGET];

/* row-major file index of element (i, j) of section s */
static int64_t fidx(const passion_section *s, int64_t i, int64_t j)
{
    return (s->start[0] + i * s->stride[0]) * COLS + s->start[1] +
           j * s->stride[1];
}

static void one_case(const char *path, int xi, int mi, int bi,
                     uint32_t *model, uint64_t seed)
{
    th_case_seed = seed;
    cell *c = &cells[xi][mi][bi];
    passion_ctx *ctx = NULL;
    int rc = ctx_open(xchg_names[xi], budgets[bi], &ctx);
    TH_CHECK(rc == 0, "init %s: %s", xchg_names[xi], passion_strerror(rc));
    if (rc)
        return;
    int64_t shape[2] = {ROWS, COLS};
    passion_array_spec spec;
    passion_array_spec_init(&spec, 2, shape, 4);
    spec.placement = PASSION_PLACE_GLOBAL;
    passion_array *a = NULL;
    passion_file *f = NULL;
    rc = passion_array_create(ctx, &spec, &a);
    if (!rc)
        rc = passion_file_open(a, path, PASSION_MODE_RDWR, &f);
    TH_CHECK(rc == 0, "open: %s", passion_strerror(rc));
    passion_section secs[64];
    uint64_t rng = seed;
    for (int r = 0; r < th_size; r++)
        random_section(&rng, &secs[r]);
    const passion_section *s = &secs[th_rank];
    int64_t n = s->count[0] * s->count[1];
    uint32_t *buf = malloc((size_t)n * 4 + 4);
    passion_counters_reset(ctx);
    /* read, checked against the model */
    int rr = rc ? rc : passion_file_read_all(f, s, buf, NULL, methods[mi]);
    int bad = 0;
    for (int64_t i = 0; i < s->count[0] && !rr; i++)
        for (int64_t j = 0; j < s->count[1]; j++)
            bad += buf[i * s->count[1] + j] != model[fidx(s, i, j)];
    TH_CHECK(!bad, "%s %s %lld: %d wrong elements read", xchg_names[xi],
             method_names[mi], (long long)budgets[bi], bad);
    /* write new values; where sections overlap the highest rank wins */
    uint32_t salt = (uint32_t)seed;
    for (int64_t i = 0; i < s->count[0]; i++)
        for (int64_t j = 0; j < s->count[1]; j++)
            buf[i * s->count[1] + j] = value_of(fidx(s, i, j), salt) ^
                                       (uint32_t)th_rank;
    int wr = rc ? rc
                : passion_file_write_all(f, s, buf, NULL, methods[mi]);
    if (!wr)
        for (int r = 0; r < th_size; r++)
            for (int64_t i = 0; i < secs[r].count[0]; i++)
                for (int64_t j = 0; j < secs[r].count[1]; j++)
                    model[fidx(&secs[r], i, j)] =
                        value_of(fidx(&secs[r], i, j), salt) ^ (uint32_t)r;
    passion_counters cnt;
    passion_counters_get(ctx, &cnt);
    TH_CHECK(cnt.peak_staging <= (uint64_t)budgets[bi],
             "%s %s budget %lld: peak_staging %llu", xchg_names[xi],
             method_names[mi], (long long)budgets[bi],
             (unsigned long long)cnt.peak_staging);
    /* the same outcome everywhere; ENOMEM only for small budgets */
    TH_CHECK(th_all(rr == 0 || rr == PASSION_ENOMEM) &&
                 th_all(wr == 0 || wr == PASSION_ENOMEM),
             "%s %s %lld: read %d, write %d (%s)", xchg_names[xi],
             method_names[mi], (long long)budgets[bi], rr, wr,
             passion_ctx_errdetail(ctx));
    int codes[2] = {rr, wr}, mn[2], mx[2];
    MPI_Allreduce(codes, mn, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(codes, mx, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    TH_CHECK(mn[0] == mx[0] && mn[1] == mx[1], "codes differ between ranks");
    if (budgets[bi] >= MUST_SUCCEED)
        TH_CHECK(rr == 0 && wr == 0, "%s %s %lld: read %d, write %d: %s",
                 xchg_names[xi], method_names[mi], (long long)budgets[bi],
                 rr, wr, passion_ctx_errdetail(ctx));
    if (rr == 0 && wr == 0)
        c->ok = 1;
    else if (rr == PASSION_ENOMEM || wr == PASSION_ENOMEM)
        c->enomem = 1;
    else
        c->other = 1;
    uint64_t pk = cnt.peak_staging, gpk = 0;
    MPI_Allreduce(&pk, &gpk, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    c->peak = gpk;
    if (c->enomem && th_rank == 0 && getenv("TEST_VERBOSE"))
        printf("  %s %s %lld: %s\n", xchg_names[xi], method_names[mi],
               (long long)budgets[bi], passion_ctx_errdetail(ctx));
    free(buf);
    passion_file_close(f);
    passion_array_free(a);
    passion_finalize(ctx);
}

static void test_budget_matrix(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/budget.raw", th_dir());
    uint32_t *model = malloc((size_t)ROWS * COLS * 4);
    for (int64_t i = 0; i < (int64_t)ROWS * COLS; i++)
        model[i] = value_of(i, 7);
    /* rank 0 creates the file */
    passion_ctx *ctx = NULL;
    int rc = ctx_open("auto", 1 << 20, &ctx);
    int64_t shape[2] = {ROWS, COLS};
    passion_array_spec spec;
    passion_array_spec_init(&spec, 2, shape, 4);
    spec.placement = PASSION_PLACE_GLOBAL;
    passion_array *a = NULL;
    passion_file *f = NULL;
    if (!rc)
        rc = passion_array_create(ctx, &spec, &a);
    if (!rc)
        rc = passion_file_open(a, path, PASSION_MODE_CREATE, &f);
    passion_section all;
    passion_section_set(&all, 2, NULL, shape, NULL);
    if (!rc && th_rank == 0)
        rc = passion_file_write(f, &all, model, NULL,
                                   PASSION_METHOD_DIRECT);
    TH_CHECK(th_all(rc == 0), "setup: %s", passion_strerror(rc));
    passion_file_close(f);
    passion_array_free(a);
    passion_finalize(ctx);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rc) {
        free(model);
        return;
    }
    uint64_t seed = th_seed * 7919 + 11;
    for (int xi = 0; xi < NXCHG; xi++)
        for (int mi = 0; mi < NMETHOD; mi++)
            for (int bi = 0; bi < NBUDGET; bi++)
                one_case(path, xi, mi, bi, model,
                         seed + (uint64_t)(xi * 100 + mi * 10 + bi));
    if (th_rank == 0) {
        printf("\n  P=%d: outcome (ok / ENOMEM) and max peak_staging per "
               "budget\n  %-13s %-12s", th_size, "exchange", "method");
        for (int bi = 0; bi < NBUDGET; bi++)
            printf(" %12lldK", (long long)(budgets[bi] >> 10));
        printf("\n");
        for (int xi = 0; xi < NXCHG; xi++)
            for (int mi = 0; mi < NMETHOD; mi++) {
                printf("  %-13s %-12s", xchg_names[xi], method_names[mi]);
                for (int bi = 0; bi < NBUDGET; bi++) {
                    cell *c = &cells[xi][mi][bi];
                    printf(" %6s %6llu", c->ok ? "ok" : c->enomem ? "ENOMEM"
                                                                  : "FAIL",
                           (unsigned long long)c->peak);
                }
                printf("\n");
            }
        unlink(path);
    }
    free(model);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Tiny budgets with every method.
 * Before the fix: auto at budgets 1-4 died of SIGFPE (integer division by
 * the zero staging capacity in etp_model.c), so this program crashed. */

static void test_tiny_budget(void)
{
    const int64_t n0 = 17, n1 = 23, shape[2] = {n0, n1};
    static const int64_t budgets[] = {1, 2, 3, 4, 5, 7, 8, 16, 39, 40, 41,
                                      80, 160, 4096};
    passion_ctx *c0 = th_ctx_budget(0);
    passion_array *a0 = th_array(c0, 2, shape, 8, PASSION_ROW_MAJOR,
                                PASSION_PLACE_GLOBAL, 0);
    passion_file *f0 = th_ramp_create(c0, a0, "tiny.raw", 0.0);
    passion_file_close(f0);
    passion_array_free(a0);
    passion_finalize(c0);
    char path[512];
    snprintf(path, sizeof path, "%s/tiny.raw", th_dir());
    /* a strided 5x7 section, a different start on each rank */
    passion_section s;
    int64_t start[2] = {th_rank % 5, (th_rank + 1) % 5};
    int64_t count[2] = {5, 7}, stride[2] = {3, 3};
    passion_section_set(&s, 2, start, count, stride);
    double buf[35];
    for (size_t b = 0; b < sizeof budgets / sizeof budgets[0]; b++) {
        th_case_seed = (uint64_t)budgets[b];
        passion_ctx *ctx = th_ctx_budget(budgets[b]);
        passion_array *a = th_array(ctx, 2, shape, 8, PASSION_ROW_MAJOR,
                                   PASSION_PLACE_GLOBAL, 0);
        passion_file *f = NULL;
        int rc = passion_file_open(a, path, PASSION_MODE_RDWR, &f);
        TH_CHECK(rc == 0, "open: %d", rc);
        int fixed_ok = 0;
        for (int m = 0; m < TH_NMETH; m++) {
            for (int w = 0; w < 2; w++) {
                memset(buf, 0xff, sizeof buf);
                if (w)
                    for (int k = 0; k < 35; k++)
                        buf[k] = (double)((start[0] + k / 7 * 3) * n1 +
                                          start[1] + k % 7 * 3);
                rc = w ? passion_file_write_all(f, &s, buf, NULL, th_meths[m])
                       : passion_file_read_all(f, &s, buf, NULL, th_meths[m]);
                TH_CHECK(th_same(rc),
                         "budget %lld %s %s: codes differ over ranks (%d)",
                         (long long)budgets[b], th_mnames[m],
                         w ? "write" : "read", rc);
                TH_CHECK(rc == 0 || rc == PASSION_ENOMEM,
                         "budget %lld %s %s: %d %s", (long long)budgets[b],
                         th_mnames[m], w ? "write" : "read", rc,
                         passion_ctx_errdetail(ctx));
                if (rc == 0 && m < TH_NMETH - 1)
                    fixed_ok = 1;
                if (m == TH_NMETH - 1 && fixed_ok)
                    TH_CHECK(rc == 0, "budget %lld: auto fails (%d %s) where "
                             "a fixed method succeeds",
                             (long long)budgets[b], rc,
                             passion_ctx_errdetail(ctx));
                int bad = 0;
                if (rc == 0 && !w)
                    for (int k = 0; k < 35; k++)
                        bad += buf[k] != (double)((start[0] + k / 7 * 3) * n1 +
                                                  start[1] + k % 7 * 3);
                TH_CHECK(bad == 0, "budget %lld %s read: %d wrong",
                         (long long)budgets[b], th_mnames[m], bad);
            }
        }
        passion_file_close(f);
        passion_array_free(a);
        passion_finalize(ctx);
    }
    th_case_seed = th_seed;
}

int main(int argc, char **argv)
{
    CU_TestInfo tests[] = {
        {"budget bounds every collective call", test_budget_matrix},
        {"budgets of 1 byte and up, every method", test_tiny_budget},
        CU_TEST_INFO_NULL};
    CU_SuiteInfo suites[] = {{"budget", NULL, NULL, NULL, NULL, tests},
                             CU_SUITE_INFO_NULL};
    return th_main(argc, argv, suites);
}
