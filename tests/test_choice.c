/*
 * test_choice.c - what `auto` chooses for a section access, seen through
 * passion_ctx_last_method (issue 14: expose the choice and the
 * prediction), and the cost model's choices on cases where the right
 * answer is known from counts alone (no timing is asserted).
 *
 *  1. passion_ctx_last_method: AUTO before any access; the fixed method
 *     given, with no prediction; auto resolved, its prediction positive
 *     and identical on every rank, an ETP choice the same on every rank;
 *     independent calls; AUTO after a failed call; NULL arguments.
 *
 * Every read is compared with the file's values v(i) = i (file order),
 * written by rank 0 (an independent direct write) first.
 */
#include "harness.h"

#include "passion.h"

#include <float.h>
#include <stdint.h>

#define N 4096

static passion_ctx *mkctx(const char *opts)
{
    passion_ctx *ctx = NULL;
    int rc = th_init(&ctx, "%s", opts);
    TH_CHECK(rc == 0 && ctx, "passion_init(%s): %d", opts, rc);
    return ctx;
}

/* a 1-D global file of N doubles v(i) = i, written by rank 0 */
static passion_file *mkfile(passion_ctx *ctx, passion_array **pa,
                            const char *name)
{
    int64_t shape[1] = {N};
    passion_array_spec sp;
    passion_array_spec_init(&sp, 1, shape, sizeof(double));
    sp.placement = PASSION_PLACE_GLOBAL;
    int rc = passion_array_create(ctx, &sp, pa);
    TH_CHECK(rc == 0, "array_create: %d", rc);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", th_dir(), name);
    passion_file *f = NULL;
    rc = passion_file_open(*pa, path, PASSION_MODE_CREATE, &f);
    TH_CHECK(rc == 0, "create %s: %d %s", path, rc,
             passion_ctx_errdetail(ctx));
    if (f && th_rank == 0) {
        static double v[N];
        for (int i = 0; i < N; i++)
            v[i] = i;
        passion_section s;
        int64_t ct[1] = {N};
        passion_section_set(&s, 1, NULL, ct, NULL);
        rc = passion_file_write(f, &s, v, NULL, PASSION_METHOD_DIRECT);
        TH_CHECK(rc == 0, "fill: %d", rc);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return f;
}

/* rank's strided section: start rank, count c, stride P */
static void cyclic(passion_section *s, int64_t c)
{
    int64_t st[1] = {th_rank}, ct[1] = {c}, sd[1] = {th_size};
    passion_section_set(s, 1, st, ct, sd);
}

static int check_values(const double *b, const passion_section *s)
{
    int bad = 0;
    for (int64_t k = 0; k < s->count[0] && !bad; k++)
        bad = b[k] != (double)(s->start[0] + k * s->stride[0]);
    return !bad;
}

/* the same int / double on every rank */
static int same_int(int v)
{
    int a[2] = {v, -v}, r[2];
    MPI_Allreduce(a, r, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return r[0] == -r[1];
}

static int same_double(double v)
{
    double a[2] = {v, -v}, r[2];
    MPI_Allreduce(a, r, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    return r[0] == -r[1];
}

static void test_last_method(void)
{
    th_case_seed = th_seed;
    passion_ctx *ctx = mkctx("");
    passion_array *a = NULL;
    passion_file *f = ctx ? mkfile(ctx, &a, "last.raw") : NULL;
    if (!f)
        return;
    passion_method m = PASSION_METHOD_ETP_STATIC;
    double pred = -1;
    TH_CHECK(passion_ctx_last_method(NULL, &m, &pred) == PASSION_EINVAL,
             "NULL ctx");
    TH_CHECK(passion_ctx_last_method(ctx, NULL, NULL) == 0, "NULL outs");
    /* rank 0's fill was an independent direct write */
    passion_ctx_last_method(ctx, &m, &pred);
    TH_CHECK(m == (th_rank == 0 ? PASSION_METHOD_DIRECT : PASSION_METHOD_AUTO)
             && pred == 0, "after the fill: %d %g", (int)m, pred);

    static double b[N];
    passion_section s;
    cyclic(&s, N / th_size / 2);
    static const passion_method fixed[4] = {
        PASSION_METHOD_DIRECT, PASSION_METHOD_SIEVE,
        PASSION_METHOD_ETP_STATIC, PASSION_METHOD_ETP_DYNAMIC};
    for (int k = 0; k < 4; k++) {
        int rc = passion_file_read_all(f, &s, b, NULL, fixed[k]);
        TH_CHECK(rc == 0 && check_values(b, &s), "read_all %d: %d",
                 (int)fixed[k], rc);
        passion_ctx_last_method(ctx, &m, &pred);
        TH_CHECK(m == fixed[k] && pred == 0, "fixed %d: got %d, %g",
                 (int)fixed[k], (int)m, pred);
    }
    /* auto, reads and writes: resolved, predicted, agreed */
    for (int op = 0; op < 2; op++) {
        int rc = op ? passion_file_write_all(f, &s, b, NULL,
                                             PASSION_METHOD_AUTO)
                    : passion_file_read_all(f, &s, b, NULL,
                                            PASSION_METHOD_AUTO);
        TH_CHECK(rc == 0 && check_values(b, &s), "auto op %d: %d", op, rc);
        passion_ctx_last_method(ctx, &m, &pred);
        TH_CHECK(m >= PASSION_METHOD_DIRECT &&
                     m <= PASSION_METHOD_ETP_DYNAMIC,
                 "auto op %d resolved: %d", op, (int)m);
        TH_CHECK(pred > 0 && same_double(pred),
                 "auto op %d predicted %g, the same everywhere", op, pred);
        int etp = m >= PASSION_METHOD_ETP_STATIC;
        TH_CHECK(same_int(etp ? (int)m : 0), "ETP choice agreed: %d",
                 (int)m);
    }
    /* independent calls: the engine's resolution, no prediction */
    int rc = passion_file_read(f, &s, b, NULL, PASSION_METHOD_SIEVE);
    passion_ctx_last_method(ctx, &m, &pred);
    TH_CHECK(rc == 0 && m == PASSION_METHOD_SIEVE && pred == 0,
             "independent sieve: %d %d %g", rc, (int)m, pred);
    passion_plan_info pi;
    rc = passion_section_plan(f, &s, 0, PASSION_METHOD_AUTO, &pi);
    rc = rc ? rc : passion_file_read(f, &s, b, NULL, PASSION_METHOD_AUTO);
    passion_ctx_last_method(ctx, &m, &pred);
    TH_CHECK(rc == 0 && m == pi.method && pred == 0,
             "independent auto: %d, %d against the plan's %d", rc, (int)m,
             (int)pi.method);
    /* a failed collective call (out of bounds on the last rank) */
    passion_section bad = s;
    if (th_rank == th_size - 1)
        bad.start[0] = N;
    rc = passion_file_read_all(f, &bad, b, NULL, PASSION_METHOD_AUTO);
    passion_ctx_last_method(ctx, &m, &pred);
    TH_CHECK(rc == PASSION_ERANGE && m == PASSION_METHOD_AUTO && pred == 0,
             "after a failure: %d %d %g", rc, (int)m, pred);
    passion_file_close(f);
    passion_array_free(a);
    passion_finalize(ctx);
}

int main(int argc, char **argv)
{
    static CU_TestInfo tests[] = {
        {"1: passion_ctx_last_method", test_last_method},
        CU_TEST_INFO_NULL};
    static CU_SuiteInfo suites[] = {
        {"auto's choices (issue 14)", NULL, NULL, NULL, NULL, tests},
        CU_SUITE_INFO_NULL};
    return th_main(argc, argv, suites);
}
