/*
 * test_apps.c - the out-of-core applications against their in-core
 * references, bit for bit: Jacobi (column-block and (block, block), both
 * storage orders, fixed sweeps or a tolerance, prefetch and reuse on and
 * off, both engines) and the median filter (8-bit, 16-bit and float
 * pixels, 3x3 and 5x5 windows, prefetch on and off, both engines), on
 * small arrays cut into many slabs.
 */
#include "harness.h"
#include "passion.h"
#include "../apps/apps.h"

static passion_ctx *mkctx(passion_engine engine, int64_t budget)
{
    passion_ctx *ctx = NULL;
    int rc = th_init(&ctx, "engine=%s,memory_budget=%lld",
                     passion_engine_name(engine), (long long)budget);
    TH_CHECK(rc == 0, "init");
    return ctx;
}

/* This rank's local file f (interior) and the global row-major array g
   of es-byte elements: g's part written into f (write), or the number of
   f's elements that differ from g's (read). */
static long local_vs_global(passion_array *a, passion_file *f, const char *g,
                            int64_t es, int write)
{
    const passion_array_spec *sp = passion_array_get_spec(a);
    int64_t nl[2], lo[2], hi[2];
    passion_array_local_shape(a, th_rank, nl);
    passion_array_local_bounds(a, th_rank, 0, lo, hi);
    char *b = malloc((size_t)(nl[0] * nl[1] * es) + 1);
    passion_section s;
    int64_t z[2] = {0, 0};
    passion_section_set(&s, 2, z, nl, NULL);
    if (!write)
        passion_file_read(f, &s, b, NULL, 0);
    /* packed local box in the array's storage order */
    int cm = sp->order[0] == 1;
    long bad = 0;
    for (int64_t i = 0; i < nl[0]; i++)
        for (int64_t j = 0; j < nl[1]; j++) {
            char *e = b + (cm ? j * nl[0] + i : i * nl[1] + j) * es;
            const char *ge =
                g + ((lo[0] + i) * sp->shape[1] + lo[1] + j) * es;
            if (write)
                memcpy(e, ge, (size_t)es);
            else
                bad += memcmp(e, ge, (size_t)es) != 0;
        }
    if (write) {
        int rc = passion_file_write(f, &s, b, NULL, 0);
        TH_CHECK(rc == 0, "scatter write");
    }
    free(b);
    return bad;
}

/* Write the global row-major array g into each rank's local file. */
static void scatter(passion_array *a, passion_file *f, const char *g,
                    int64_t es)
{
    local_vs_global(a, f, g, es, 1);
}

/* Compare this rank's part of f with the global row-major array g. */
static long compare(passion_array *a, passion_file *f, const char *g,
                    int64_t es)
{
    return local_vs_global(a, f, g, es, 0);
}

/* The grid of P ranks: one row of columns, or (bb) MPI_Dims_create's. */
static void grid2(int bb, int dims[2])
{
    dims[0] = 1;
    dims[1] = th_size;
    if (bb) {
        dims[0] = dims[1] = 0;
        MPI_Dims_create(th_size, 2, dims);
    }
}

/* Create th_dir()/PRE1-TAG.SUF and th_dir()/PRE2-TAG.SUF of a. */
static void open_pair(passion_array *a, const char *pre1, const char *pre2,
                      const char *tag, const char *suf, passion_file **f1,
                      passion_file **f2)
{
    char p1[512], p2[512];
    snprintf(p1, sizeof p1, "%s/%s-%s.%s", th_dir(), pre1, tag, suf);
    snprintf(p2, sizeof p2, "%s/%s-%s.%s", th_dir(), pre2, tag, suf);
    *f1 = *f2 = NULL;
    passion_file_open(a, p1, PASSION_MODE_CREATE, f1);
    passion_file_open(a, p2, PASSION_MODE_CREATE, f2);
}

static passion_array *mk2d(passion_ctx *ctx, int64_t n0, int64_t n1,
                           int64_t es, int storage, int g0, int g1,
                           int64_t gh0, int64_t gh1)
{
    int64_t shape[2] = {n0, n1};
    passion_array_spec sp;
    passion_array_spec_init(&sp, 2, shape, es);
    sp.storage = storage;
    sp.grid[0] = g0;
    sp.grid[1] = g1;
    sp.ghost[0] = gh0;
    sp.ghost[1] = gh1;
    passion_array *a = NULL;
    int rc = passion_array_create(ctx, &sp, &a);
    TH_CHECK(rc == 0, "array: %s", passion_ctx_errdetail(ctx));
    return a;
}

static void jacobi_case(int engine, int bb, int storage, int prefetch,
                        int reuse, double tol, const char *tag)
{
    passion_ctx *ctx = mkctx(engine, 1 << 20);
    int dims[2];
    grid2(bb, dims);
    int64_t n0 = 4 * dims[0] + 9, n1 = 5 * dims[1] + 8;
    passion_array *a = mk2d(ctx, n0, n1, 8, storage, dims[0], dims[1], 1, 1);
    passion_file *B, *A;
    open_pair(a, "jb", "ja", tag, "%d", &B, &A);
    double *g = malloc(sizeof(double) * n0 * n1),
           *h = malloc(sizeof(double) * n0 * n1);
    uint64_t s = th_seed;
    for (int64_t i = 0; i < n0 * n1; i++)
        g[i] = (double)(th_next(&s) >> 11) / 9007199254740992.0;
    scatter(a, B, (char *)g, 8);
    scatter(a, A, (char *)g, 8);
    int iters;
    double resid, *ref;
    if (tol > 0) {
        /* a tolerance that the third sweep meets */
        memcpy(h, g, sizeof(double) * n0 * n1);
        double *g2 = malloc(sizeof(double) * n0 * n1);
        memcpy(g2, g, sizeof(double) * n0 * n1);
        app_jacobi_reference(g2, h, n0, n1, 3, 0, &iters, &resid, &ref);
        tol = resid * 1.0001;
        free(g2);
    }
    app_jacobi_opts o;
    app_jacobi_opts_init(&o);
    o.max_iter = 6;
    o.tol = tol;
    o.prefetch = prefetch;
    o.reuse = reuse;
    o.slab_width = 2;
    passion_file *res = NULL;
    app_report rep;
    int rc = app_jacobi_local(ctx, a, B, A, &o, &res, &rep);
    TH_CHECK(rc == 0, "%s: jacobi: %d %s", tag, rc, passion_ctx_errdetail(ctx));
    app_jacobi_reference(g, h, n0, n1, o.max_iter, tol, &iters, &resid, &ref);
    TH_CHECK(iters == rep.iterations && resid == rep.residual,
             "%s: %d sweeps (residual %g), reference %d (%g)", tag,
             rep.iterations, rep.residual, iters, resid);
    if (tol > 0)
        TH_CHECK(iters < o.max_iter, "%s: tolerance never reached", tag);
    long bad = compare(a, res, (char *)ref, 8);
    TH_CHECK(bad == 0, "%s: %ld cells differ from the reference", tag, bad);
    if (reuse)
        TH_CHECK(rep.reuse_bytes > 0 || rep.slabs <= 1, "%s: no reuse", tag);
    passion_file_close(A);
    passion_file_close(B);
    passion_array_free(a);
    free(g);
    free(h);
    passion_finalize(ctx);
}

static void test_jacobi_columns(void)
{
    int n = 0;
    for (int e = 1; e <= 2; e++)
        for (int m = 0; m < 4; m++) {
            char tag[32];
            snprintf(tag, sizeof tag, "c%d", n++);
            jacobi_case(e, 0, PASSION_COL_MAJOR, m & 1, (m >> 1) & 1,
                        m == 3 ? 0.05 : 0, tag);
        }
}

static void test_jacobi_blockblock(void)
{
    int n = 0;
    for (int e = 1; e <= 2; e++)
        for (int st = 0; st < 2; st++) {
            char tag[32];
            snprintf(tag, sizeof tag, "b%d", n++);
            jacobi_case(e, 1, st ? PASSION_COL_MAJOR : PASSION_ROW_MAJOR,
                        st, 1, st ? 0 : 0.05, tag);
        }
}


/* The partitioned (global file) variant against the reference. */
static void jacobi_global_case(int engine, int bb, int storage, int prefetch,
                               const char *tag)
{
    passion_ctx *ctx = mkctx(engine, 1 << 20);
    int dims[2];
    grid2(bb, dims);
    int64_t n0 = 17, n1 = 23;
    int64_t shape[2] = {n0, n1};
    passion_array_spec sp;
    passion_array_spec_init(&sp, 2, shape, 8);
    sp.storage = storage;
    sp.grid[0] = dims[0];
    sp.grid[1] = dims[1];
    sp.placement = PASSION_PLACE_GLOBAL;
    passion_array *a = NULL;
    int rc = passion_array_create(ctx, &sp, &a);
    TH_CHECK(rc == 0, "array: %s", passion_ctx_errdetail(ctx));
    passion_file *B, *A;
    open_pair(a, "gb", "ga", tag, "raw", &B, &A);
    double *g = malloc(sizeof(double) * n0 * n1),
           *h = malloc(sizeof(double) * n0 * n1),
           *t = malloc(sizeof(double) * n0 * n1);
    uint64_t s = th_seed + 5;
    for (int64_t i = 0; i < n0 * n1; i++)
        g[i] = (double)(th_next(&s) >> 11) / 9007199254740992.0;
    /* the file in the array's storage order */
    int cm = storage == PASSION_COL_MAJOR;
    for (int64_t i = 0; i < n0; i++)
        for (int64_t j = 0; j < n1; j++)
            t[cm ? j * n0 + i : i * n1 + j] = g[i * n1 + j];
    passion_section all;
    passion_section_set(&all, 2, NULL, shape, NULL);
    if (th_rank == 0) {
        passion_file_write(B, &all, t, NULL, 0);
        passion_file_write(A, &all, t, NULL, 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    app_jacobi_opts o;
    app_jacobi_opts_init(&o);
    o.max_iter = 4;
    o.prefetch = prefetch;
    o.slab_width = 3 + th_size % 2;
    passion_file *res = NULL;
    app_report rep;
    rc = app_jacobi_global(ctx, a, B, A, &o, &res, &rep);
    TH_CHECK(rc == 0, "%s: jacobi global: %d %s", tag, rc,
             passion_ctx_errdetail(ctx));
    TH_CHECK(rep.slabs > 1, "%s: one partition only", tag);
    int iters;
    double resid, *ref;
    app_jacobi_reference(g, h, n0, n1, o.max_iter, 0, &iters, &resid, &ref);
    TH_CHECK(resid == rep.residual, "%s: residual %g, reference %g", tag,
             rep.residual, resid);
    passion_file_read(res, &all, t, NULL, 0);
    long bad = 0;
    for (int64_t i = 0; i < n0; i++)
        for (int64_t j = 0; j < n1; j++)
            bad += t[cm ? j * n0 + i : i * n1 + j] != ref[i * n1 + j];
    TH_CHECK(bad == 0, "%s: %ld cells differ", tag, bad);
    passion_file_close(A);
    passion_file_close(B);
    passion_array_free(a);
    free(g);
    free(h);
    free(t);
    passion_finalize(ctx);
}

static void test_jacobi_global(void)
{
    int n = 0;
    for (int e = 1; e <= 2; e++)
        for (int v = 0; v < 2; v++) {
            char tag[32];
            snprintf(tag, sizeof tag, "g%d", n++);
            jacobi_global_case(e, v, v ? PASSION_ROW_MAJOR : PASSION_COL_MAJOR,
                               (n % 2), tag);
        }
}

static void median_case(int engine, int pixel, int window, int prefetch,
                        int storage, const char *tag)
{
    passion_ctx *ctx = mkctx(engine, 1 << 20);
    int r = window / 2;
    int64_t h = 37, w = 6 * th_size + 1;
    passion_array *a = mk2d(ctx, h, w, pixel, storage, 1, th_size, 0, r);
    passion_file *in, *out;
    open_pair(a, "mi", "mo", tag, "%d", &in, &out);
    char *g = malloc((size_t)(h * w * pixel)), *ref = malloc((size_t)(h * w * pixel));
    uint64_t s = th_seed + (uint64_t)pixel;
    for (int64_t i = 0; i < h * w; i++) {
        uint64_t v = th_next(&s);
        if (pixel == APP_PIXEL_U8)
            ((uint8_t *)g)[i] = (uint8_t)(v >> 56);
        else if (pixel == APP_PIXEL_U16)
            ((uint16_t *)g)[i] = (uint16_t)(v >> 48);
        else
            ((float *)g)[i] = (float)((int64_t)(v >> 40) - 8388608) / 1000.0f;
    }
    scatter(a, in, g, pixel);
    app_median_opts o;
    app_median_opts_init(&o);
    o.window = window;
    o.pixel = pixel;
    o.prefetch = prefetch;
    o.slab_width = 2;
    app_report rep;
    int rc = app_median_local(ctx, a, in, out, &o, &rep);
    TH_CHECK(rc == 0, "%s: median: %d %s", tag, rc, passion_ctx_errdetail(ctx));
    app_median_reference(g, ref, h, w, window, pixel);
    long bad = compare(a, out, ref, pixel);
    TH_CHECK(bad == 0, "%s: %ld pixels differ from the reference", tag, bad);
    passion_file_close(in);
    passion_file_close(out);
    passion_array_free(a);
    free(g);
    free(ref);
    passion_finalize(ctx);
}

static void test_median(void)
{
    static const int pixels[3] = {APP_PIXEL_U8, APP_PIXEL_U16, APP_PIXEL_F32};
    int n = 0;
    for (int e = 1; e <= 2; e++)
        for (int p = 0; p < 3; p++)
            for (int wdx = 0; wdx < 2; wdx++) {
                char tag[32];
                snprintf(tag, sizeof tag, "m%d", n++);
                int storage = (n % 3 == 0) ? PASSION_ROW_MAJOR
                                           : PASSION_COL_MAJOR;
                median_case(e, pixels[p], 3 + 2 * wdx, (n % 2) == 0, storage,
                            tag);
            }
}

static CU_TestInfo tests[] = {
    {"jacobi, column-block", test_jacobi_columns},
    {"jacobi, (block, block)", test_jacobi_blockblock},
    {"jacobi, global file in partitions (PIM)", test_jacobi_global},
    {"median filter, 8/16/32-bit pixels, 3x3 and 5x5", test_median},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"apps", NULL, NULL, NULL, NULL, tests},
    CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, suites);
}
