/*
 * test_regress.c - regression tests for the defects an outside test found
 * (issue 10): each case failed at the head before its fix (the comment on
 * each test says how) and passes after it.
 *
 *  1. memory budget of 1-4 bytes with method auto: SIGFPE in the cost model;
 *  2. ranks passing different files (or arrays of different shapes,
 *     orders, header offsets) to one collective call: PASSION_EMISMATCH;
 *  3. bytes_useful counted twice by collective calls that end independent;
 *  4. passion_part_open on an array whose grid has one rank at P > 1;
 *  6. path patterns (%% and every %d), over-long paths, empty sections
 *     with huge counts, passion_ctx_errdetail cleared by later calls, distinct
 *     .npy header messages, the ETP methods' exact minimum budget, ghost
 *     widths;
 *  7. (found by the soak) an auto write with independent access that
 *     decided the rank order on packed plans while a rank sieved on its
 *     own plan with a memory layout: another rank's elements lost.
 *
 * Every rank takes part in every collective call, whatever it checks;
 * return codes of collective calls are checked equal on every rank.
 */
#include "../collective/coll.h" /* coll_plan_desc_bytes */
#include "harness.h"

#include "passion.h"

#include <limits.h>
#include <stdint.h>
#include <unistd.h>

/* ---- helpers ---- */

/* The one place that sets options. budget 0: the default. */
static passion_ctx *mkctx(int64_t budget)
{
    passion_ctx *ctx = NULL;
    int rc = budget > 0 ? th_init(&ctx, "memory_budget=%lld",
                                  (long long)budget)
                        : th_init(&ctx, "%s", "");
    TH_CHECK(rc == 0 && ctx, "passion_init (budget %lld): %d",
             (long long)budget, rc);
    return ctx;
}

/* 1 if every rank holds the same rc. Collective. */
static int same_everywhere(int rc)
{
    int v[2] = {rc, -rc}, r[2];
    MPI_Allreduce(v, r, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return r[0] == -r[1];
}

static passion_array *mkarray(passion_ctx *ctx, int nd, const int64_t *shape,
                              int64_t esize, int storage, int placement,
                              int64_t header)
{
    passion_array_spec sp;
    passion_array_spec_init(&sp, nd, shape, esize);
    sp.storage = storage;
    sp.placement = placement;
    sp.header_bytes = header;
    passion_array *a = NULL;
    int rc = passion_array_create(ctx, &sp, &a);
    TH_CHECK(rc == 0, "array_create: %d %s", rc, passion_ctx_errdetail(ctx));
    return a;
}

/* Create a global file of doubles v(i) = base + i (file order), written by
   rank 0 with a direct independent write. */
static passion_file *mkfile(passion_array *a, passion_ctx *ctx,
                            const char *name, double base)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", th_dir(), name);
    passion_file *f = NULL;
    int rc = passion_file_open(a, path, PASSION_MODE_CREATE, &f);
    TH_CHECK(rc == 0, "create %s: %d %s", path, rc, passion_ctx_errdetail(ctx));
    const passion_array_spec *sp = passion_array_get_spec(a);
    int64_t n = 1;
    for (int d = 0; d < sp->ndims; d++)
        n *= sp->shape[d];
    if (th_rank == 0 && f) {
        double *v = malloc(sizeof(double) * (size_t)n);
        for (int64_t i = 0; i < n; i++)
            v[i] = base + (double)i;
        passion_section all;
        passion_section_set(&all, sp->ndims, NULL, sp->shape, NULL);
        /* the file order is the storage order; a packed whole-array
           section in memory has the same order */
        rc = passion_file_write(f, &all, v, NULL, PASSION_METHOD_DIRECT);
        TH_CHECK(rc == 0, "fill %s: %d", path, rc);
        free(v);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return f;
}

/* ---- 1. tiny budgets with every method ----
 * Before the fix: auto at budgets 1-4 died of SIGFPE (integer division by
 * the zero staging capacity in etp_model.c), so this program crashed. */

#define NMETH 5
static const int meths[NMETH] = {PASSION_METHOD_DIRECT, PASSION_METHOD_SIEVE,
                                 PASSION_METHOD_ETP_STATIC,
                                 PASSION_METHOD_ETP_DYNAMIC,
                                 PASSION_METHOD_AUTO};
static const char *mnames[NMETH] = {"direct", "sieve", "etp-static",
                                    "etp-dynamic", "auto"};

static void test_tiny_budget(void)
{
    const int64_t n0 = 17, n1 = 23, shape[2] = {n0, n1};
    static const int64_t budgets[] = {1, 2, 3, 4, 5, 7, 8, 16, 39, 40, 41,
                                      80, 160, 4096};
    passion_ctx *c0 = mkctx(0);
    passion_array *a0 = mkarray(c0, 2, shape, 8, PASSION_ROW_MAJOR,
                                PASSION_PLACE_GLOBAL, 0);
    passion_file *f0 = mkfile(a0, c0, "tiny.raw", 0.0);
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
        passion_ctx *ctx = mkctx(budgets[b]);
        passion_array *a = mkarray(ctx, 2, shape, 8, PASSION_ROW_MAJOR,
                                   PASSION_PLACE_GLOBAL, 0);
        passion_file *f = NULL;
        int rc = passion_file_open(a, path, PASSION_MODE_RDWR, &f);
        TH_CHECK(rc == 0, "open: %d", rc);
        int fixed_ok = 0;
        for (int m = 0; m < NMETH; m++) {
            for (int w = 0; w < 2; w++) {
                memset(buf, 0xff, sizeof buf);
                if (w)
                    for (int k = 0; k < 35; k++)
                        buf[k] = (double)((start[0] + k / 7 * 3) * n1 +
                                          start[1] + k % 7 * 3);
                rc = w ? passion_file_write_all(f, &s, buf, NULL, meths[m])
                       : passion_file_read_all(f, &s, buf, NULL, meths[m]);
                TH_CHECK(same_everywhere(rc),
                         "budget %lld %s %s: codes differ over ranks (%d)",
                         (long long)budgets[b], mnames[m],
                         w ? "write" : "read", rc);
                TH_CHECK(rc == 0 || rc == PASSION_ENOMEM,
                         "budget %lld %s %s: %d %s", (long long)budgets[b],
                         mnames[m], w ? "write" : "read", rc,
                         passion_ctx_errdetail(ctx));
                if (rc == 0 && m < NMETH - 1)
                    fixed_ok = 1;
                if (m == NMETH - 1 && fixed_ok)
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
                         (long long)budgets[b], mnames[m], bad);
            }
        }
        passion_file_close(f);
        passion_array_free(a);
        passion_finalize(ctx);
    }
    th_case_seed = th_seed;
}

/* ---- 1b. the other divisions by budget-derived quantities ----
 * Before the fix: a slab iterator on a rank that owns nothing in another
 * dimension divided the budget by a zero slice size (SIGFPE at P > 1). */

static void test_slab_empty_rank(void)
{
    passion_ctx *ctx = mkctx(0);
    const int64_t shape[2] = {1, 8};
    passion_array_spec sp;
    passion_array_spec_init(&sp, 2, shape, 8);
    sp.grid[0] = th_size; /* ranks 1.. own no row */
    passion_array *a = NULL;
    int rc = passion_array_create(ctx, &sp, &a);
    TH_CHECK(rc == 0, "array: %d", rc);
    char pat[512];
    snprintf(pat, sizeof pat, "%s/slab%%d.laf", th_dir());
    passion_file *f = NULL;
    rc = passion_file_open(a, pat, PASSION_MODE_CREATE, &f);
    TH_CHECK(rc == 0, "open: %d", rc);
    for (int pf = 0; pf < 2; pf++) {
        passion_slab_opts o;
        passion_slab_opts_init(&o);
        o.dim = 1;
        o.prefetch = pf;
        passion_slab_iter *it = NULL;
        rc = passion_slab_open(f, &o, &it);
        TH_CHECK(rc == 0, "slab_open (rank %d): %d %s", th_rank, rc,
                 passion_ctx_errdetail(ctx));
        passion_slab sl;
        int64_t cells = 0;
        while (it && passion_slab_next(it, &sl) == 1)
            cells += sl.count;
        if (it)
            TH_CHECK(passion_slab_close(it) == 0, "slab_close");
        TH_CHECK(cells == (th_rank ? 8 : 8), "slabs cover %lld columns",
                 (long long)cells);
    }
    passion_file_close(f);
    passion_array_free(a);
    passion_finalize(ctx);
}

/* ---- 2. different files or arrays in one collective call ----
 * Before the fix: return code 0 on every rank and rank 0 read elements of
 * the other ranks' file (etp-static, etp-dynamic); different shapes were
 * accepted. */

static int count_not(const double *v, int64_t n, double base)
{
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += v[i] != base + (double)i;
    return bad;
}

static void test_mismatched_files(void)
{
    const int64_t shape[2] = {64, 64}, other[2] = {32, 128};
    const int64_t n = 64 * 64;
    passion_ctx *ctx = mkctx(0);
    passion_array *a = mkarray(ctx, 2, shape, 8, PASSION_ROW_MAJOR,
                               PASSION_PLACE_GLOBAL, 0);
    passion_array *b = mkarray(ctx, 2, other, 8, PASSION_ROW_MAJOR,
                               PASSION_PLACE_GLOBAL, 0);
    passion_array *c = mkarray(ctx, 2, shape, 8, PASSION_COL_MAJOR,
                               PASSION_PLACE_GLOBAL, 0);
    passion_array *h = mkarray(ctx, 2, shape, 8, PASSION_ROW_MAJOR,
                               PASSION_PLACE_GLOBAL, 64);
    passion_array *e4 = mkarray(ctx, 2, (const int64_t[]){64, 128}, 4,
                                PASSION_ROW_MAJOR, PASSION_PLACE_GLOBAL, 0);
    passion_file *f1 = mkfile(a, ctx, "one.raw", 1.0);
    passion_file *f2 = mkfile(a, ctx, "two.raw", 100000.0);
    passion_file *fb = mkfile(b, ctx, "b.raw", 1.0);
    passion_file *fc = mkfile(c, ctx, "c.raw", 1.0);
    passion_file *fh = mkfile(h, ctx, "h.raw", 1.0);
    /* the same file as f1 through another handle and another array of the
       same layout: that is the same file, the call must work */
    passion_array *a2 = mkarray(ctx, 2, shape, 8, PASSION_ROW_MAJOR,
                                PASSION_PLACE_GLOBAL, 0);
    char p1[512];
    snprintf(p1, sizeof p1, "%s/one.raw", th_dir());
    passion_file *f1b = NULL;
    int rc = passion_file_open(a2, p1, PASSION_MODE_RDWR, &f1b);
    TH_CHECK(rc == 0, "reopen: %d", rc);
    passion_file *fe = NULL;
    rc = passion_file_open(e4, p1, PASSION_MODE_RDWR, &fe);
    TH_CHECK(rc == 0, "reopen as 4-byte: %d", rc);
    passion_array *d1 = mkarray(ctx, 1, (const int64_t[]){n}, 8,
                                PASSION_ROW_MAJOR, PASSION_PLACE_GLOBAL, 0);
    passion_file *f1d = NULL;
    rc = passion_file_open(d1, p1, PASSION_MODE_RDWR, &f1d);
    TH_CHECK(rc == 0, "reopen as 1-D: %d", rc);
    double *buf = malloc(sizeof(double) * (size_t)n);
    passion_section all, small;
    passion_section_set(&all, 2, NULL, shape, NULL);
    passion_section_set(&small, 2, NULL, (const int64_t[]){8, 8}, NULL);
    for (int m = 0; m < NMETH; m++) {
        /* whole files, rank 0 the first, the others the second */
        memset(buf, 0, sizeof(double) * (size_t)n);
        rc = passion_file_read_all(th_rank ? f2 : f1, &all, buf, NULL,
                                      meths[m]);
        TH_CHECK(same_everywhere(rc), "%s: codes differ over ranks",
                 mnames[m]);
        if (th_size > 1) {
            TH_CHECK(rc == PASSION_EMISMATCH, "%s, two files: rc %d, %d "
                     "elements from the other file", mnames[m], rc,
                     count_not(buf, n, th_rank ? 100000.0 : 1.0));
            rc = passion_file_write_all(th_rank ? f2 : f1, &all, buf,
                                           NULL, meths[m]);
            TH_CHECK(rc == PASSION_EMISMATCH, "%s, write two files: rc %d",
                     mnames[m], rc);
        } else {
            TH_CHECK(rc == 0 && count_not(buf, n, 1.0) == 0,
                     "%s, one rank: rc %d", mnames[m], rc);
        }
        /* same file, two handles (rank 0 the second): fine */
        rc = passion_file_read_all(th_rank ? f1 : f1b, &all, buf, NULL,
                                      meths[m]);
        TH_CHECK(rc == 0 && count_not(buf, n, 1.0) == 0,
                 "%s, one file through two handles: rc %d %s", mnames[m],
                 rc, passion_ctx_errdetail(ctx));
        /* different arrays: shape, storage order, header offset, element
           size (the same path for the last one) */
        passion_file *odd[5] = {fb, fc, fh, fe, f1d};
        static const char *what[5] = {"shape", "order", "header", "esize",
                                      "dimensions"};
        for (int k = 0; k < 5 && th_size > 1; k++) {
            rc = passion_file_read_all(th_rank == th_size - 1 ? odd[k]
                                                                 : f1,
                                          &small, buf, NULL, meths[m]);
            TH_CHECK(same_everywhere(rc) && rc == PASSION_EMISMATCH,
                     "%s, different %s: rc %d", mnames[m], what[k], rc);
        }
    }
    /* the writes that were refused changed nothing */
    rc = passion_file_read_all(f2, &all, buf, NULL, PASSION_METHOD_DIRECT);
    TH_CHECK(rc == 0 && count_not(buf, n, 100000.0) == 0,
             "second file changed");
    rc = passion_file_read_all(f1, &all, buf, NULL, PASSION_METHOD_DIRECT);
    TH_CHECK(rc == 0 && count_not(buf, n, 1.0) == 0, "first file changed");
    free(buf);
    passion_file *fs[8] = {f1, f2, fb, fc, fh, f1b, fe, f1d};
    for (int k = 0; k < 8; k++)
        passion_file_close(fs[k]);
    passion_array *as[7] = {a, b, c, h, a2, e4, d1};
    for (int k = 0; k < 7; k++)
        passion_array_free(as[k]);
    passion_finalize(ctx);
}

/* ---- 3. bytes_useful ----
 * Before the fix: 65,536 for a 32,768-byte request that ran independently
 * (direct, sieve, or auto choosing them). */

static void test_bytes_useful(void)
{
    const int64_t shape[2] = {64, 64};
    passion_ctx *ctx = mkctx(0);
    passion_array *a = mkarray(ctx, 2, shape, 8, PASSION_ROW_MAJOR,
                               PASSION_PLACE_GLOBAL, 0);
    passion_file *f = mkfile(a, ctx, "useful.raw", 0.0);
    double *buf = calloc(1, 32768);
    passion_section all, half;
    passion_section_set(&all, 2, NULL, shape, NULL);
    /* every other column of a rank's rows: 32 x 32 elements = 8 KiB */
    passion_section_set(&half, 2, (const int64_t[]){th_rank % 32, 0},
                        (const int64_t[]){32, 32}, (const int64_t[]){1, 2});
    for (int m = 0; m < NMETH; m++)
        for (int w = 0; w < 2; w++)
            for (int k = 0; k < 2; k++) {
                passion_section *s = k ? &half : &all;
                uint64_t want = k ? 8192 : 32768;
                passion_counters c0, c1;
                passion_counters_get(ctx, &c0);
                int rc = w ? passion_file_write_all(f, s, buf, NULL,
                                                       meths[m])
                           : passion_file_read_all(f, s, buf, NULL,
                                                      meths[m]);
                passion_counters_get(ctx, &c1);
                TH_CHECK(rc == 0, "%s: %d", mnames[m], rc);
                TH_CHECK(c1.bytes_useful - c0.bytes_useful == want,
                         "%s %s: asked %llu bytes, bytes_useful grew by %llu",
                         mnames[m], w ? "write" : "read",
                         (unsigned long long)want,
                         (unsigned long long)(c1.bytes_useful -
                                              c0.bytes_useful));
            }
    /* independent calls count once as well */
    passion_counters c0, c1;
    passion_counters_get(ctx, &c0);
    int rc = passion_file_read(f, &all, buf, NULL, PASSION_METHOD_AUTO);
    passion_counters_get(ctx, &c1);
    TH_CHECK(rc == 0 && c1.bytes_useful - c0.bytes_useful == 32768,
             "independent read: %llu",
             (unsigned long long)(c1.bytes_useful - c0.bytes_useful));
    free(buf);
    passion_file_close(f);
    passion_array_free(a);
    passion_finalize(ctx);
}

/* ---- 4. partitions need the grid ----
 * Before the fix: passion_part_open accepted a global array whose grid
 * has one rank at P > 1 and gave every rank the whole partition (each
 * element computed P times). Chosen: PASSION_EINVAL at passion_part_open
 * (a PARTITIONED array with such a grid is refused at create already). */

static void test_part_grid(void)
{
    const int64_t shape[2] = {12, 10};
    passion_ctx *ctx = mkctx(16384);
    passion_array *a = mkarray(ctx, 2, shape, 8, PASSION_ROW_MAJOR,
                               PASSION_PLACE_GLOBAL, 0);
    passion_file *f = mkfile(a, ctx, "part1.raw", 0.0);
    passion_part_iter *it = NULL;
    int rc = passion_part_open(f, NULL, &it);
    TH_CHECK(same_everywhere(rc), "part_open codes differ");
    if (th_size > 1) {
        TH_CHECK(rc == PASSION_EINVAL && !it &&
                     strstr(passion_ctx_errdetail(ctx), "grid"),
                 "grid of one rank at P = %d: rc %d '%s'", th_size, rc,
                 passion_ctx_errdetail(ctx));
        /* a PARTITIONED array on the default grid: refused at create */
        passion_array_spec sp;
        passion_array_spec_init(&sp, 2, shape, 8);
        sp.placement = PASSION_PLACE_PARTITIONED;
        passion_array *p = NULL;
        rc = passion_array_create(ctx, &sp, &p);
        TH_CHECK(rc == PASSION_EINVAL && !p &&
                     strstr(passion_ctx_errdetail(ctx), "grid"),
                 "partitioned, grid 1: rc %d '%s'", rc,
                 passion_ctx_errdetail(ctx));
    } else {
        TH_CHECK(rc == 0, "one rank: %d", rc);
    }
    if (it)
        passion_part_close_all(it);
    passion_file_close(f);
    passion_array_free(a);
    /* with the grid set, every element is in exactly one rank's piece */
    passion_array_spec sp;
    passion_array_spec_init(&sp, 2, shape, 8);
    sp.placement = PASSION_PLACE_PARTITIONED;
    sp.grid[1] = th_size;
    passion_array *g = NULL;
    rc = passion_array_create(ctx, &sp, &g);
    TH_CHECK(rc == 0, "partitioned with grid: %d %s", rc,
             passion_ctx_errdetail(ctx));
    passion_file *fg = mkfile(g, ctx, "part2.raw", 0.0);
    passion_part_opts po;
    passion_part_opts_init(&po);
    po.width = 5;
    it = NULL;
    rc = passion_part_open(fg, &po, &it);
    TH_CHECK(rc == 0, "part_open with grid: %d %s", rc,
             passion_ctx_errdetail(ctx));
    int64_t mine = 0, all = 0;
    passion_part part;
    int got;
    while (it && (got = passion_part_next_all(it, &part)) == 1)
        mine += part.count[0] * part.count[1];
    if (it)
        passion_part_close_all(it);
    MPI_Allreduce(&mine, &all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    TH_CHECK(all == 12 * 10, "pieces hold %lld elements, the array 120",
             (long long)all);
    passion_file_close(fg);
    passion_array_free(g);
    passion_finalize(ctx);
}

/* ---- 6a. local path patterns ----
 * Before the fix: "%%" was not an escape and only the first %d was
 * replaced. */

static void test_path_pattern(void)
{
    passion_ctx *ctx = mkctx(0);
    const int64_t shape[1] = {4 * (int64_t)th_size};
    passion_array_spec sp;
    passion_array_spec_init(&sp, 1, shape, 8);
    sp.grid[0] = th_size;
    passion_array *a = NULL;
    int rc = passion_array_create(ctx, &sp, &a);
    TH_CHECK(rc == 0, "local array: %d", rc);
    static const char *pats[3] = {"p%%d_%d_x%d.laf", "q%%%d.laf", "r%d%%"};
    char want[3][64];
    snprintf(want[0], 64, "p%%d_%d_x%d.laf", th_rank, th_rank);
    snprintf(want[1], 64, "q%%%d.laf", th_rank);
    snprintf(want[2], 64, "r%d%%", th_rank);
    for (int k = 0; k < 3; k++) {
        char pat[512], full[512];
        snprintf(pat, sizeof pat, "%s/%s", th_dir(), pats[k]);
        snprintf(full, sizeof full, "%s/%s", th_dir(), want[k]);
        passion_file *f = NULL;
        rc = passion_file_open(a, pat, PASSION_MODE_CREATE, &f);
        TH_CHECK(rc == 0, "open %s: %d", pat, rc);
        const char *got = passion_file_path(f);
        TH_CHECK(got && !strcmp(got, full), "pattern %s: file %s, want %s",
                 pat, got ? got : "(null)", full);
        TH_CHECK(access(full, F_OK) == 0, "no file %s", full);
        passion_file_close(f);
        unlink(full);
    }
    passion_array_free(a);
    passion_finalize(ctx);
}

/* ---- 6b. over-long paths ----
 * Before the fix: PASSION_EIO (ENAMETOOLONG) instead of PASSION_EINVAL. */

static void test_long_path(void)
{
    passion_ctx *ctx = mkctx(0);
    const int64_t shape[1] = {8};
    passion_array *g = mkarray(ctx, 1, shape, 8, PASSION_ROW_MAJOR,
                               PASSION_PLACE_GLOBAL, 0);
    size_t n = PATH_MAX + 16;
    char *p = malloc(n + 1);
    /* longer than PATH_MAX in all; and one component longer than NAME_MAX
       in a path shorter than PATH_MAX */
    for (int k = 0; k < 2; k++) {
        size_t len = k ? 400 : n;
        int pre = snprintf(p, n + 1, "%s/", th_dir());
        for (size_t i = (size_t)pre; i < len; i++)
            p[i] = 'a';
        p[len] = '\0';
        for (int mode = 0; mode < 3; mode++) {
            passion_file *f = NULL;
            int rc = passion_file_open(g, p, mode, &f);
            TH_CHECK(same_everywhere(rc) && rc == PASSION_EINVAL && !f,
                     "%s path, mode %d: rc %d %s",
                     k ? "component too long" : "too long", mode, rc,
                     passion_ctx_errdetail(ctx));
        }
    }
    free(p);
    passion_array_free(g);
    passion_finalize(ctx);
}

/* ---- 6c. empty sections with a huge count elsewhere ----
 * Before the fix: count {INT64_MAX, 0} gave PASSION_EOVERFLOW. */

static void test_empty_huge(void)
{
    passion_ctx *ctx = mkctx(0);
    const int64_t shape[2] = {4, 4};
    passion_array *a = mkarray(ctx, 2, shape, 8, PASSION_ROW_MAJOR,
                               PASSION_PLACE_GLOBAL, 0);
    passion_file *f = mkfile(a, ctx, "empty.raw", 0.0);
    static const int64_t counts[3][2] = {{INT64_MAX, 0},
                                         {0, INT64_MAX},
                                         {INT64_MAX, 0}};
    static const int64_t strides[3][2] = {{1, 1}, {1, 1}, {INT64_MAX, 1}};
    double x = 0;
    for (int k = 0; k < 3; k++) {
        passion_section s;
        passion_section_set(&s, 2, NULL, counts[k], strides[k]);
        int rc = passion_file_read(f, &s, &x, NULL, PASSION_METHOD_AUTO);
        TH_CHECK(rc == 0, "case %d independent: %d %s", k, rc,
                 passion_ctx_errdetail(ctx));
        rc = passion_file_write(f, &s, &x, NULL, PASSION_METHOD_SIEVE);
        TH_CHECK(rc == 0, "case %d independent write: %d", k, rc);
        for (int m = 0; m < NMETH; m++) {
            rc = passion_file_read_all(f, &s, &x, NULL, meths[m]);
            TH_CHECK(rc == 0, "case %d %s: %d %s", k, mnames[m], rc,
                     passion_ctx_errdetail(ctx));
        }
        TH_CHECK(passion_section_elems(&s, 2) == 0, "elems");
    }
    /* still refused: a negative count, a zero stride, a real overflow */
    passion_section s;
    passion_section_set(&s, 2, NULL, (const int64_t[]){-1, 0}, NULL);
    TH_CHECK(passion_file_read(f, &s, &x, NULL, 0) == PASSION_EINVAL,
             "negative count");
    passion_section_set(&s, 2, NULL, (const int64_t[]){INT64_MAX, 1},
                        (const int64_t[]){2, 1});
    TH_CHECK(passion_file_read(f, &s, &x, NULL, 0) == PASSION_EOVERFLOW,
             "overflow");
    passion_file_close(f);
    passion_array_free(a);
    passion_finalize(ctx);
}

/* ---- 6d. passion_ctx_errdetail after a later successful call ----
 * Before the fix: the old detail stayed. */

static void test_errdetail_cleared(void)
{
    passion_ctx *ctx = mkctx(0);
    const int64_t shape[2] = {4, 4};
    passion_array *a = mkarray(ctx, 2, shape, 8, PASSION_ROW_MAJOR,
                               PASSION_PLACE_GLOBAL, 0);
    passion_file *f = mkfile(a, ctx, "detail.raw", 0.0);
    double buf[16];
    passion_section bad, good;
    passion_section_set(&bad, 2, NULL, shape, (const int64_t[]){0, 1});
    passion_section_set(&good, 2, NULL, shape, NULL);
    int rc = passion_file_read(f, &bad, buf, NULL, 0);
    TH_CHECK(rc == PASSION_EINVAL && *passion_ctx_errdetail(ctx),
             "bad section: %d", rc);
    rc = passion_file_read(f, &good, buf, NULL, 0);
    TH_CHECK(rc == 0 && !*passion_ctx_errdetail(ctx),
             "after a good independent read: '%s'", passion_ctx_errdetail(ctx));
    rc = passion_file_read_all(f, &bad, buf, NULL, 0);
    TH_CHECK(rc == PASSION_EINVAL && *passion_ctx_errdetail(ctx),
             "bad collective: %d", rc);
    rc = passion_file_read_all(f, &good, buf, NULL, 0);
    TH_CHECK(rc == 0 && !*passion_ctx_errdetail(ctx),
             "after a good collective read: '%s'", passion_ctx_errdetail(ctx));
    /* array calls, file calls, counters */
    passion_array_spec sp;
    passion_array_spec_init(&sp, 2, shape, 0);
    passion_array *x = NULL;
    rc = passion_array_create(ctx, &sp, &x);
    TH_CHECK(rc == PASSION_EINVAL && *passion_ctx_errdetail(ctx), "bad spec");
    rc = passion_file_sync(f);
    TH_CHECK(rc == 0 && !*passion_ctx_errdetail(ctx), "after sync: '%s'",
             passion_ctx_errdetail(ctx));
    rc = passion_array_create(ctx, &sp, &x);
    int64_t lo[2], hi[2];
    rc = passion_array_local_bounds(a, 0, 0, lo, hi);
    TH_CHECK(rc == 0 && !*passion_ctx_errdetail(ctx), "after local_bounds: '%s'",
             passion_ctx_errdetail(ctx));
    rc = passion_array_create(ctx, &sp, &x);
    rc = passion_counters_reset(ctx);
    TH_CHECK(rc == 0 && !*passion_ctx_errdetail(ctx), "after counters_reset");
    passion_file_close(f);
    passion_array_free(a);
    passion_finalize(ctx);
}

/* ---- 6e. .npy header faults, each its own message ----
 * Before the fix: all "descr must be a simple type string". */

static void write_npy(const char *path, const char *dict)
{
    char hdr[256];
    int n = snprintf(hdr, sizeof hdr, "%s", dict);
    int total = 10 + n + 1;
    int pad = (64 - total % 64) % 64;
    memset(hdr + n, ' ', (size_t)pad);
    hdr[n + pad] = '\n';
    int hl = n + pad + 1;
    FILE *fp = fopen(path, "wb");
    fwrite("\x93NUMPY\x01\x00", 1, 8, fp);
    unsigned char l[2] = {(unsigned char)(hl & 255), (unsigned char)(hl >> 8)};
    fwrite(l, 1, 2, fp);
    fwrite(hdr, 1, (size_t)hl, fp);
    static const double zero[16];
    fwrite(zero, sizeof zero[0], 16, fp);
    fclose(fp);
}

static void test_npy_messages(void)
{
    passion_ctx *ctx = mkctx(0);
    const int64_t shape[2] = {4, 4};
    passion_array *a = mkarray(ctx, 2, shape, 8, PASSION_ROW_MAJOR,
                               PASSION_PLACE_GLOBAL, 0);
    static const struct {
        const char *dict, *word;
    } cases[] = {
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (-4, 4), }",
         "negative"},
        {"{'descr': '<f8', 'fortran_order': Maybe, 'shape': (4, 4), }",
         "fortran_order"},
        {"{'descr': '<f8', 'shape': (4, 4), }", "fortran_order"},
        {"{'descr': '<f8', 'fortran_order': False, }", "shape"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': [4, 4], }",
         "tuple"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (4, x), }",
         "shape"},
        {"{'fortran_order': False, 'shape': (4, 4), }", "descr"},
        {"{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (4, "
         "4), }", "descr"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 1, 1, "
         "1, 1, 1, 1, 4, 4), }", "dimensions"},
    };
    enum { NC = sizeof cases / sizeof cases[0] };
    char msgs[NC][512];
    for (int k = 0; k < NC; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/bad%d.npy", th_dir(), k);
        if (th_rank == 0)
            write_npy(path, cases[k].dict);
        MPI_Barrier(MPI_COMM_WORLD);
        passion_file *f = NULL;
        int rc = passion_file_open(a, path, PASSION_MODE_RDONLY, &f);
        const char *d = passion_ctx_errdetail(ctx);
        snprintf(msgs[k], sizeof msgs[k], "%s", strstr(d, ": ") ? d : "");
        TH_CHECK(rc == PASSION_EFORMAT && strstr(d, cases[k].word),
                 "npy case %d (%s): rc %d '%s'", k, cases[k].dict, rc, d);
        if (f)
            passion_file_close(f);
    }
    /* distinct faults, distinct messages (the path differs: compare what
       follows it) */
    static const int pairs[][2] = {{0, 1}, {0, 3}, {1, 3}, {0, 6}, {1, 6},
                                   {3, 6}, {2, 1}};
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        const char *x = strstr(msgs[pairs[k][0]], ".npy");
        const char *y = strstr(msgs[pairs[k][1]], ".npy");
        TH_CHECK(x && y && strcmp(x, y), "cases %d and %d: same message '%s'",
                 pairs[k][0], pairs[k][1], x ? x : "");
    }
    passion_array_free(a);
    passion_finalize(ctx);
}

/* ---- 6f. the ETP methods' minimum budget, stated exactly ----
 * Before the fix: "cannot hold one element for each of P ranks", while
 * the real minimum is 5 (P-1) x element size. */

static void test_etp_min_budget(void)
{
    if (th_size < 2)
        return; /* one rank exchanges nothing: any budget works */
    const int64_t shape[2] = {16, 16}, es = 8;
    /* issue 9: the budget bounds the whole call, so the minimum also
       holds the call's descriptors (exchange auto stages nothing more) */
    const int64_t min = coll_plan_desc_bytes(th_size, 2) +
                        5 * (int64_t)(th_size - 1) * es;
    char path[512];
    snprintf(path, sizeof path, "%s/minb.raw", th_dir());
    {
        passion_ctx *c0 = mkctx(0);
        passion_array *a0 = mkarray(c0, 2, shape, es, PASSION_ROW_MAJOR,
                                    PASSION_PLACE_GLOBAL, 0);
        passion_file *f0 = mkfile(a0, c0, "minb.raw", 0.0);
        passion_file_close(f0);
        passion_array_free(a0);
        passion_finalize(c0);
    }
    double buf[256];
    passion_section all;
    passion_section_set(&all, 2, NULL, shape, NULL);
    for (int k = 0; k < 2; k++) {
        int64_t budget = k ? min : min - 1;
        passion_ctx *ctx = mkctx(budget);
        passion_array *a = mkarray(ctx, 2, shape, es, PASSION_ROW_MAJOR,
                                   PASSION_PLACE_GLOBAL, 0);
        passion_file *f = NULL;
        passion_file_open(a, path, PASSION_MODE_RDWR, &f);
        for (int m = 2; m < 4; m++)
            for (int w = 0; w < 2; w++) {
                memset(buf, 0, sizeof buf);
                if (w)
                    for (int i = 0; i < 256; i++)
                        buf[i] = (double)i;
                int rc = w ? passion_file_write_all(f, &all, buf, NULL,
                                                       meths[m])
                           : passion_file_read_all(f, &all, buf, NULL,
                                                      meths[m]);
                if (k) {
                    TH_CHECK(rc == 0 && count_not(buf, 256, 0.0) == 0,
                             "%s at the minimum %lld: rc %d %s", mnames[m],
                             (long long)min, rc, passion_ctx_errdetail(ctx));
                } else {
                    char want[64];
                    snprintf(want, sizeof want, "at least %lld bytes",
                             (long long)min);
                    TH_CHECK(rc == PASSION_ENOMEM &&
                                 strstr(passion_ctx_errdetail(ctx), want),
                             "%s below the minimum %lld: rc %d '%s'",
                             mnames[m], (long long)min, rc,
                             passion_ctx_errdetail(ctx));
                }
            }
        passion_file_close(f);
        passion_array_free(a);
        passion_finalize(ctx);
    }
}

/* ---- 6g. ghost widths: 0 <= ghost[d] <= shape[d] (documented) ---- */

static void test_ghost_limit(void)
{
    passion_ctx *ctx = mkctx(0);
    const int64_t shape[1] = {3 * (int64_t)th_size};
    for (int k = 0; k < 2; k++) {
        passion_array_spec sp;
        passion_array_spec_init(&sp, 1, shape, 4);
        sp.grid[0] = th_size;
        sp.ghost[0] = shape[0] + k;
        passion_array *a = NULL;
        int rc = passion_array_create(ctx, &sp, &a);
        TH_CHECK(k ? rc == PASSION_EINVAL : rc == 0, "ghost %lld: rc %d",
                 (long long)sp.ghost[0], rc);
        passion_array_free(a);
    }
    passion_finalize(ctx);
}

/* ---- 7. an auto write's order with a memory layout ----
 * Before the fix (found by the soak, MPICH sanitizer build, 3 in about
 * 55 runs): a collective auto write that chose independent access
 * decided whether the ranks must write in rank order from every rank's
 * plan with a packed buffer, while each rank then chose direct or
 * sieving on its own plan, with its memory layout. Rank 1's section
 * (planes 0, 2, 4, 6 of the file) is four runs of the file but, in a
 * memory array whose rows are longer than the section's, 16 runs of
 * memory: packed it writes direct (4 requests against sieving's 2 and
 * seven planes read and written), so no order was needed; with its
 * layout it sieved (2 requests against 16), read planes 0-6 and wrote
 * them back, after rank 0 had written half of plane 1 between them:
 * rank 0's elements went back to their old values (in 4 of 5 runs of
 * 200 calls; each request moves half of what is left, fault_short, so
 * that the sieve takes long enough to meet rank 0's write). The model's
 * file costs are options (10 ms a request, a plane's transfer a little
 * less), so that no rank writes before the agreement and auto takes
 * independent access: the test checks that it did, then the file. Two
 * ranks (a communicator of ranks 0 and 1: with more, the model prices
 * the two-phase method differently). */

static void test_auto_order_memspec(void)
{
    MPI_Comm two;
    MPI_Comm_split(MPI_COMM_WORLD, th_rank < 2 ? 0 : MPI_UNDEFINED, th_rank,
                   &two);
    if (th_size < 2 || two == MPI_COMM_NULL) {
        if (two != MPI_COMM_NULL)
            MPI_Comm_free(&two);
        return;
    }
    const int64_t shape[3] = {7, 4, 8};
    /* the model's choice (independent access, ordered): the planner
       estimates, as the case was built for it */
    passion_options *o = th_options("%s", "planner=estimate,"
                                    "io_latency=1e-2,"
                                    "io_bandwidth=26947,driver=fault,"
                                    "fault_short=1");
    passion_ctx *ctx = NULL;
    int rc = passion_init(two, o, &ctx);
    passion_options_free(o);
    TH_CHECK(rc == 0 && ctx, "passion_init: %d", rc);
    passion_array *a = mkarray(ctx, 3, shape, 8, PASSION_ROW_MAJOR,
                               PASSION_PLACE_GLOBAL, 0);
    char path[512];
    snprintf(path, sizeof path, "%s/order.raw", th_dir());
    passion_file *f = NULL;
    rc = passion_file_open(a, path, PASSION_MODE_CREATE, &f);
    TH_CHECK(rc == 0, "create %s: %d", path, rc);
    passion_section s, all;
    passion_section_set(&all, 3, NULL, shape, NULL);
    double buf[144], back[224];
    for (int i = 0; i < 224; i++)
        back[i] = -1.0;
    if (th_rank == 0) {
        rc = passion_file_write(f, &all, back, NULL, PASSION_METHOD_DIRECT);
        TH_CHECK(rc == 0, "fill: %d", rc);
    }
    MPI_Barrier(two);
    passion_memspec m = {{4, 4, 9}, {0, 0, 0}};
    int lost = 0, indep = 0, calls = 200;
    for (int it = 0; it < calls; it++) {
        const passion_memspec *mp = NULL;
        int64_t n = 0;
        if (th_rank == 0) { /* the first half of plane 1 */
            passion_section_set(&s, 3, (const int64_t[]){1, 0, 0},
                                (const int64_t[]){1, 2, 8}, NULL);
            n = 16;
        } else { /* planes 0, 2, 4, 6 from rows of 9 */
            passion_section_set(&s, 3, (const int64_t[]){0, 0, 0},
                                (const int64_t[]){4, 4, 8},
                                (const int64_t[]){2, 1, 1});
            mp = &m;
            n = 144;
        }
        for (int64_t i = 0; i < n; i++)
            buf[i] = 1000.0 * (it + 1) + 200.0 * th_rank + (double)i;
        rc = passion_file_write_all(f, &s, buf, mp, PASSION_METHOD_AUTO);
        TH_CHECK(rc == 0, "call %d: write_all %d %s", it, rc,
                 passion_ctx_errdetail(ctx));
        passion_method lm = PASSION_METHOD_AUTO;
        passion_ctx_last_method(ctx, &lm, NULL);
        indep += th_rank == 1 && (lm == PASSION_METHOD_DIRECT ||
                                  lm == PASSION_METHOD_SIEVE);
        rc = passion_file_read_all(f, &all, back, NULL,
                                   PASSION_METHOD_DIRECT);
        TH_CHECK(rc == 0, "call %d: read back %d", it, rc);
        for (int64_t i = 0; i < 16; i++) /* rank 0's elements */
            lost += back[32 + i] != 1000.0 * (it + 1) + (double)i;
    }
    MPI_Bcast(&indep, 1, MPI_INT, 1, two);
    TH_CHECK(indep == calls, "auto took independent access in %d of %d "
             "calls: the case does not test the order", indep, calls);
    TH_CHECK(lost == 0, "rank 0's elements went back to old values %d "
             "times in %d calls", lost, calls);
    passion_file_close(f);
    passion_array_free(a);
    passion_finalize(ctx);
    MPI_Comm_free(&two);
}

int main(int argc, char **argv)
{
    static CU_TestInfo tests[] = {
        {"1: budgets of 1 byte and up, every method", test_tiny_budget},
        {"1b: slabs on a rank that owns nothing", test_slab_empty_rank},
        {"2: different files or arrays in one call", test_mismatched_files},
        {"3: bytes_useful counted once", test_bytes_useful},
        {"4: partitions need a grid of P ranks", test_part_grid},
        {"6a: %% and every %d in local patterns", test_path_pattern},
        {"6b: paths longer than PATH_MAX", test_long_path},
        {"6c: empty sections with huge counts", test_empty_huge},
        {"6d: errdetail cleared by later calls", test_errdetail_cleared},
        {"6e: .npy header faults", test_npy_messages},
        {"6f: ETP minimum budget", test_etp_min_budget},
        {"6g: ghost <= shape", test_ghost_limit},
        {"7: auto write order with a memory layout", test_auto_order_memspec},
        CU_TEST_INFO_NULL};
    static CU_SuiteInfo suites[] = {
        {"regressions (issue 10)", NULL, NULL, NULL, NULL, tests},
        CU_SUITE_INFO_NULL};
    return th_main(argc, argv, suites);
}
