/*
 * test_races.c - every write path under the schedule fuzzer
 * (passion/chaos.h): seeded random delays at each phase boundary make the
 * interleavings of ranks and threads that are rare on an idle machine
 * common, and every call is checked against an in-memory model of the
 * file, byte for byte.
 *
 * Suites:
 *  - collective writes with each method forced and auto: random sections
 *    that overlap, nest, repeat (auto's repeated-signature path), leave
 *    holes (sieving's and the two-phase method's read-modify-write of
 *    windows and file domains),
 *    from packed buffers and from memory arrays with longer rows (a
 *    rank's own plan may then choose another method than the order's
 *    decision priced); budgets that force several two-phase rounds. The
 *    model: every rank's section applied in rank order (the highest rank
 *    wins), nothing else changes. The file is read back with stdio.
 *  - asynchronous writes in flight together: each rank several requests
 *    on disjoint extents of its own band of a shared file (strided, so
 *    sieving rewrites holes next to another request's bytes), waited in
 *    random order.
 *  - slab write-back with ghosts: a sweep over the rank's local file
 *    (prefetch and reuse on or off, slabs along either dimension) that
 *    checks every slab's interior holds the file's values before it
 *    negates them and marks the slab dirty; at the end every interior
 *    cell is negated and every ghost cell unchanged.
 * Every call must succeed (budgets hold the descriptors and the two-phase
 * minimum), the same on every rank. Seeds: PASSION_TEST_SEED (printed).
 */
#include "harness.h"
#include "../passion/chaos.h"

/* collective calls per configuration: fewer where ranks outnumber the
   2 cores of the development machine (each call then waits for time
   slices) */
#define NCALLS (th_size <= 2 ? 60 : 120 / th_size)

/* the fuzzer on (or off); PASSION_TEST_NO_CHAOS=1 runs the same calls
   without it, to compare what it finds */
static void chaos(uint64_t seed, int on)
{
    const char *no = getenv("PASSION_TEST_NO_CHAOS");
    if (no && *no && strcmp(no, "0"))
        on = 0;
    int rc = core_chaos_config(seed, on ? 1500 : 0, on ? 50 : 0);
    TH_CHECK(rc == 0 && core_chaos_built(), "the schedule fuzzer is not "
             "built in (meson -Dtest_hooks=true)");
}

/* linear index of idx in a box of shape sh (storage order: row = last
   dimension fastest) */
static int64_t lin(int nd, const int64_t *sh, const int64_t *idx, int row)
{
    int64_t k = 0;
    if (row)
        for (int d = 0; d < nd; d++)
            k = k * sh[d] + idx[d];
    else
        for (int d = nd - 1; d >= 0; d--)
            k = k * sh[d] + idx[d];
    return k;
}

/* advance a multi-index over count (storage order); 0 at the end */
static int next_idx(int nd, const int64_t *count, int64_t *k, int row)
{
    for (int i = 0; i < nd; i++) {
        int d = row ? nd - 1 - i : i;
        if (++k[d] < count[d])
            return 1;
        k[d] = 0;
    }
    return 0;
}

static void random_section(uint64_t *s, int nd, const int64_t *shape,
                           passion_section *sec)
{
    memset(sec, 0, sizeof *sec);
    for (int d = 0; d < nd; d++) {
        if (th_range(s, 0, 2) == 0) { /* the whole dimension: file runs
                                         longer than a memory array's */
            sec->stride[d] = 1;
            sec->count[d] = shape[d];
            continue;
        }
        sec->stride[d] = th_range(s, 1, 3);
        sec->start[d] = th_range(s, 0, shape[d] - 1);
        int64_t most = (shape[d] - 1 - sec->start[d]) / sec->stride[d] + 1;
        sec->count[d] = th_range(s, 1, most);
    }
}

/* the file's bytes as doubles (stdio, not the library) */
static int file_doubles(const char *path, double *v, int64_t n)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return -1;
    size_t got = fread(v, sizeof *v, (size_t)n, fp);
    fclose(fp);
    return got == (size_t)n ? 0 : -1;
}

/* 1 on every rank if the file holds the model (rank 0 reads it after
   every rank's call has returned); else a failed check naming the first
   element that differs. Collective. */
static int file_matches(const char *path, double *back, const double *model,
                        int64_t n, const char *what)
{
    MPI_Barrier(MPI_COMM_WORLD);
    int diff = -1;
    if (th_rank == 0 && file_doubles(path, back, n) == 0) {
        diff = 0;
        for (int64_t i = 0; i < n && !diff; i++)
            if (back[i] != model[i]) {
                diff = 1;
                TH_CHECK(0, "%s: element %lld holds %.0f, the model %.0f",
                         what, (long long)i, back[i], model[i]);
            }
    }
    MPI_Bcast(&diff, 1, MPI_INT, 0, MPI_COMM_WORLD);
    TH_CHECK(diff == 0, "%s: the file differs from the model (or could "
             "not be read)", what);
    MPI_Barrier(MPI_COMM_WORLD);
    return diff == 0;
}

/* A new global file of doubles th_dir()/name (path: 512 bytes), its
   array and handle; 0 or the code (a failed check). Collective. */
static int open_global(passion_ctx *ctx, int nd, const int64_t *shape,
                       int storage, const char *name, char *path,
                       passion_array **a, passion_file **f)
{
    passion_array_spec sp;
    passion_array_spec_init(&sp, nd, shape, 8);
    sp.storage = storage;
    sp.placement = PASSION_PLACE_GLOBAL;
    snprintf(path, 512, "%s/%s", th_dir(), name);
    int rc = passion_array_create(ctx, &sp, a);
    if (!rc)
        rc = passion_file_open(*a, path, PASSION_MODE_CREATE, f);
    TH_CHECK(rc == 0, "open %s: %d %s", path, rc, passion_ctx_errdetail(ctx));
    return rc;
}

static double value(int call, int rank, int64_t k)
{
    return (double)(call + 1) * 1e6 + (double)rank * 1e5 + (double)k;
}

/* one configuration: NCALLS collective writes on a fresh file */
/* planes: the shape of the lost write that a soak found by luck (3 runs
   in about 55): the highest rank writes every other plane whole from a
   memory array with longer rows (packed, its plan writes direct; with its
   layout, sieving is cheaper), the others parts of the planes between */
static void planes(uint64_t *s, int P, const int64_t *shape,
                   passion_section *sec, passion_memspec *ms, int *usems)
{
    for (int r = 0; r < P; r++) {
        memset(&sec[r], 0, sizeof sec[r]);
        memset(&ms[r], 0, sizeof ms[r]);
        usems[r] = 0;
        for (int d = 0; d < 3; d++)
            sec[r].stride[d] = 1;
        if (r == P - 1) {
            sec[r].count[0] = (shape[0] + 1) / 2;
            sec[r].stride[0] = 2;
            sec[r].count[1] = shape[1];
            sec[r].count[2] = shape[2];
            usems[r] = 1;
            for (int d = 0; d < 3; d++)
                ms[r].shape[d] = sec[r].count[d];
            ms[r].shape[2] += th_range(s, 1, 3);
        } else {
            sec[r].start[0] = 2 * th_range(s, 0, shape[0] / 2 - 1) + 1;
            sec[r].count[0] = 1;
            sec[r].start[1] = th_range(s, 0, shape[1] - 1);
            sec[r].count[1] = th_range(s, 1, shape[1] - sec[r].start[1]);
            sec[r].count[2] = shape[2];
        }
    }
}

static void coll_config(uint64_t *s, const char *opts, int method_fixed,
                        int geom_planes)
{
    const int P = th_size;
    passion_ctx *ctx = NULL;
    int rc = th_init(&ctx, "%s", opts);
    TH_CHECK(rc == 0, "init %s: %d", opts, rc);
    if (rc)
        return;
    int nd = (int)th_range(s, 1, 3), row = (int)th_range(s, 0, 1);
    if (geom_planes) {
        nd = 3;
        row = 1;
    }
    int64_t shape[3], n = 1;
    for (int d = 0; d < nd; d++) {
        shape[d] = th_range(s, 3, nd == 1 ? 300 : nd == 2 ? 24 : 10);
        if (d == 0 && shape[0] < P)
            shape[0] = P;
        if (geom_planes && d == 0)
            shape[0] = 2 * th_range(s, 2, 4) + 1;
        n *= shape[d];
    }
    passion_array *a = NULL;
    passion_file *f = NULL;
    char path[512];
    rc = open_global(ctx, nd, shape,
                     row ? PASSION_ROW_MAJOR : PASSION_COL_MAJOR, "races.raw",
                     path, &a, &f);
    double *model = calloc((size_t)n, sizeof *model);
    double *back = calloc((size_t)n, sizeof *back);
    passion_section *sec = calloc((size_t)P, sizeof *sec);
    passion_memspec *ms = calloc((size_t)P, sizeof *ms);
    int *usems = calloc((size_t)P, sizeof *usems);
    double *buf = NULL;
    int bad = rc != 0;
    for (int call = 0; call < NCALLS && !bad; call++) {
        const passion_method methods[] = {
            PASSION_METHOD_AUTO, PASSION_METHOD_DIRECT, PASSION_METHOD_SIEVE,
            PASSION_METHOD_ETP_STATIC, PASSION_METHOD_ETP_DYNAMIC};
        passion_method m = method_fixed >= 0
                               ? (passion_method)method_fixed
                               : methods[th_range(s, 0, 4)];
        int repeat = call > 0 && th_range(s, 0, 3) == 0;
        if (geom_planes && !repeat)
            planes(s, P, shape, sec, ms, usems);
        for (int r = 0; r < P && !geom_planes; r++) {
            if (repeat) /* the same call signature again */
                continue;
            int kind = (int)th_range(s, 0, 9);
            if (kind == 0) { /* takes part with nothing */
                memset(&sec[r], 0, sizeof sec[r]);
                for (int d = 0; d < nd; d++)
                    sec[r].stride[d] = 1;
            } else if (kind <= 2 && r > 0) { /* another rank's section */
                sec[r] = sec[th_range(s, 0, r - 1)];
            } else {
                random_section(s, nd, shape, &sec[r]);
            }
            usems[r] = th_range(s, 0, 2) == 0;
            memset(&ms[r], 0, sizeof ms[r]);
            for (int d = 0; d < nd; d++) {
                ms[r].offset[d] = th_range(s, 0, 1);
                ms[r].shape[d] = ms[r].offset[d] + sec[r].count[d] +
                                 th_range(s, 0, 2);
            }
        }
        /* the model: rank order, the highest wins */
        for (int r = 0; r < P; r++) {
            int64_t e = passion_section_elems(&sec[r], nd);
            if (e <= 0)
                continue;
            int64_t k[3] = {0, 0, 0}, idx[3], j = 0;
            do {
                for (int d = 0; d < nd; d++)
                    idx[d] = sec[r].start[d] + k[d] * sec[r].stride[d];
                model[lin(nd, shape, idx, row)] = value(call, r, j++);
            } while (next_idx(nd, sec[r].count, k, row));
        }
        /* this rank's buffer */
        const int me = th_rank;
        int64_t e = passion_section_elems(&sec[me], nd), msz = 1;
        for (int d = 0; d < nd; d++)
            msz *= usems[me] ? ms[me].shape[d] : sec[me].count[d];
        free(buf);
        buf = malloc(sizeof *buf * (size_t)(msz > 0 ? msz : 1));
        for (int64_t i = 0; i < msz; i++)
            buf[i] = -7.0; /* never lands in the file */
        if (e > 0) {
            int64_t k[3] = {0, 0, 0}, pos[3], j = 0;
            do {
                for (int d = 0; d < nd; d++)
                    pos[d] = usems[me] ? ms[me].offset[d] + k[d] : k[d];
                buf[lin(nd, usems[me] ? ms[me].shape : sec[me].count, pos,
                        row)] = value(call, me, j++);
            } while (next_idx(nd, sec[me].count, k, row));
        }
        rc = passion_file_write_all(f, &sec[me], buf,
                                    usems[me] ? &ms[me] : NULL, m);
        TH_CHECK(rc == 0, "call %d (%s, method %d): write_all %d %s", call,
                 opts, (int)m, rc, passion_ctx_errdetail(ctx));
        bad |= rc != 0;
        char what[160];
        snprintf(what, sizeof what, "call %d (%s, method %d, %dD %s)", call,
                 opts, (int)m, nd, row ? "row" : "col");
        bad |= !file_matches(path, back, model, n, what);
    }
    free(buf);
    free(usems);
    free(ms);
    free(sec);
    free(back);
    free(model);
    passion_file_close(f);
    passion_array_free(a);
    passion_finalize(ctx);
}

/* contexts: drivers, engines, budgets that force several two-phase
   rounds, and file costs (a slow request) under which auto takes
   independent access and each rank's own plan may sieve */
static const char *const ctx_opts[] = {
    "", "driver=mpiio", "memory_budget=64K", "memory_budget=16K,engine=thread",
    "driver=fault,fault_short=1", "memory_budget=32K,driver=mpiio",
    "io_latency=1e-2,io_bandwidth=26947",
    "io_latency=1e-2,io_bandwidth=26947,driver=mpiio"};
#define NOPTS ((int)(sizeof ctx_opts / sizeof *ctx_opts))

static void run_methods(int method)
{
    uint64_t s = th_seed ^ 0x5eed0001ULL ^ (uint64_t)(method + 1) << 32;
    th_case_seed = s;
    chaos(s, 1);
    for (int o = 0; o < NOPTS; o++)
        coll_config(&s, ctx_opts[o], method, 0);
    chaos(0, 0);
}

static void test_coll_auto(void) { run_methods(PASSION_METHOD_AUTO); }

/* auto writes of the planes (above) on every context */
static void test_coll_planes(void)
{
    uint64_t s = th_seed ^ 0x91a9e5ULL;
    th_case_seed = s;
    chaos(s, 1);
    for (int o = 0; o < NOPTS; o++)
        for (int k = 0; k < 3; k++)
            coll_config(&s, ctx_opts[o], PASSION_METHOD_AUTO, 1);
    chaos(0, 0);
}
static void test_coll_direct(void) { run_methods(PASSION_METHOD_DIRECT); }
static void test_coll_sieve(void) { run_methods(PASSION_METHOD_SIEVE); }
static void test_coll_static(void) { run_methods(PASSION_METHOD_ETP_STATIC); }
static void test_coll_dynamic(void)
{
    run_methods(PASSION_METHOD_ETP_DYNAMIC);
}
static void test_coll_mixed(void) { run_methods(-1); }

/* ---- asynchronous writes in flight together ---- */

static void test_async(void)
{
    uint64_t s = th_seed ^ 0xa5a5ULL;
    th_case_seed = s;
    chaos(s, 1);
    const int P = th_size;
    const int64_t H = 8, W = 40; /* each rank a band of H rows of W */
    int64_t shape[2] = {H * P, W};
    for (int o = 0; o < NOPTS; o++) {
        passion_ctx *ctx = NULL;
        int rc = th_init(&ctx, "%s", ctx_opts[o]);
        TH_CHECK(rc == 0, "init: %d", rc);
        if (rc)
            continue;
        passion_array *a = NULL;
        passion_file *f = NULL;
        char path[512];
        rc = open_global(ctx, 2, shape, PASSION_ROW_MAJOR, "async.raw", path,
                         &a, &f);
        double *model = calloc((size_t)(H * P * W), sizeof *model);
        double *back = calloc((size_t)(H * P * W), sizeof *back);
        double bufs[4][H * W];
        for (int round = 0; round < 20 && !rc; round++) {
            /* the band's rows cut into up to four pieces (disjoint
               extents), each written with a column stride */
            int np = (int)th_range(&s, 1, 4);
            int64_t cut[5] = {0};
            for (int i = 1; i < np; i++)
                cut[i] = th_range(&s, cut[i - 1], H - 1);
            cut[np] = H;
            passion_request *req[4] = {NULL};
            passion_section sec[4];
            const passion_method ms[] = {PASSION_METHOD_AUTO,
                                         PASSION_METHOD_DIRECT,
                                         PASSION_METHOD_SIEVE};
            for (int r = 0; r < P; r++)
                for (int i = 0; i < np; i++) {
                    int64_t c0 = th_range(&s, 0, 2), cs = th_range(&s, 1, 3);
                    int64_t rows = cut[i + 1] - cut[i];
                    passion_section_set(
                        &sec[i], 2, (const int64_t[]){r * H + cut[i], c0},
                        (const int64_t[]){rows, (W - 1 - c0) / cs + 1},
                        (const int64_t[]){1, cs});
                    int64_t j = 0;
                    for (int64_t y = 0; y < rows; y++)
                        for (int64_t x = 0; x < sec[i].count[1]; x++) {
                            double v = value(round, r, 1000 * i + j);
                            model[(r * H + cut[i] + y) * W + c0 + x * cs] = v;
                            if (r == th_rank)
                                bufs[i][j] = v;
                            j++;
                        }
                    passion_method m = ms[th_range(&s, 0, 2)];
                    if (r != th_rank)
                        continue;
                    if (rows > 0) {
                        int brc = passion_file_write_begin(f, &sec[i],
                                                           bufs[i], NULL, m,
                                                           &req[i]);
                        TH_CHECK(brc == 0, "write_begin: %d %s", brc,
                                 passion_ctx_errdetail(ctx));
                        rc |= brc;
                    }
                }
            /* waited in a random order (the same draw on every rank) */
            int order[4] = {0, 1, 2, 3};
            for (int i = np - 1; i > 0; i--) {
                int j = (int)th_range(&s, 0, i), t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
            for (int i = 0; i < 4; i++)
                if (order[i] < np && req[order[i]]) {
                    int wrc = passion_request_wait(req[order[i]]);
                    TH_CHECK(wrc == 0, "wait: %d %s", wrc,
                             passion_ctx_errdetail(ctx));
                    rc |= wrc;
                }
            rc = !th_all(rc == 0);
            char what[160];
            snprintf(what, sizeof what, "round %d (%s)", round, ctx_opts[o]);
            rc |= !file_matches(path, back, model, H * P * W, what);
        }
        free(back);
        free(model);
        passion_file_close(f);
        passion_array_free(a);
        passion_finalize(ctx);
    }
    chaos(0, 0);
}

/* ---- slab write-back with ghosts ---- */

static void test_slab_writeback(void)
{
    uint64_t s = th_seed ^ 0x51abULL;
    th_case_seed = s;
    chaos(s, 1);
    for (int cfg = 0; cfg < 12; cfg++) {
        passion_ctx *ctx = NULL;
        int rc = th_init(&ctx, "%s", ctx_opts[cfg % NOPTS]);
        TH_CHECK(rc == 0, "init: %d", rc);
        if (rc)
            continue;
        int64_t shape[2] = {th_range(&s, 8, 40) * th_size,
                            th_range(&s, 8, 40)};
        passion_array_spec sp;
        passion_array_spec_init(&sp, 2, shape, 8);
        sp.placement = PASSION_PLACE_LOCAL;
        sp.grid[0] = th_size;
        sp.dist[1] = PASSION_DIST_COLLAPSED;
        int64_t g = th_range(&s, 1, 2);
        sp.ghost[0] = g;
        sp.ghost[1] = g;
        passion_array *a = NULL;
        passion_file *f = NULL;
        char path[512];
        snprintf(path, sizeof path, "%s/slab.%%d.laf", th_dir());
        rc = passion_array_create(ctx, &sp, &a);
        if (!rc)
            rc = passion_file_open(a, path, PASSION_MODE_CREATE, &f);
        TH_CHECK(rc == 0, "open: %d %s", rc, passion_ctx_errdetail(ctx));
        if (rc) {
            passion_array_free(a);
            passion_finalize(ctx);
            continue;
        }
        int64_t nl[2] = {shape[0] / th_size, shape[1]};
        int64_t E[2] = {nl[0] + 2 * g, nl[1] + 2 * g};
        double *orig = malloc(sizeof(double) * (size_t)(E[0] * E[1]));
        double *back = malloc(sizeof(double) * (size_t)(E[0] * E[1]));
        for (int64_t i = 0; i < E[0] * E[1]; i++)
            orig[i] = 1.0 + (double)th_rank * 1e6 + (double)i;
        passion_section all;
        passion_section_set(&all, 2, (const int64_t[]){-g, -g}, E, NULL);
        rc = passion_file_write(f, &all, orig, NULL, PASSION_METHOD_DIRECT);
        TH_CHECK(rc == 0, "fill: %d", rc);
        passion_slab_opts o;
        passion_slab_opts_init(&o);
        o.dim = (int)th_range(&s, 0, 1);
        o.width = th_range(&s, 1, 6);
        o.halo = th_range(&s, 0, g);
        o.prefetch = (int)th_range(&s, 0, 1);
        o.reuse = (int)th_range(&s, 0, 1);
        o.writeback = 1;
        o.method = (passion_method)th_range(&s, 0, 2);
        passion_slab_iter *it = NULL;
        rc = passion_slab_open(f, &o, &it);
        TH_CHECK(rc == 0, "slab_open: %d %s", rc, passion_ctx_errdetail(ctx));
        passion_slab sl;
        int stale = 0;
        while (!rc && (rc = passion_slab_next(it, &sl)) == 1) {
            rc = 0;
            double *in = sl.in;
            int64_t lo[2] = {0, 0}, hi[2] = {nl[0], nl[1]};
            lo[sl.dim] = sl.start;
            hi[sl.dim] = sl.start + sl.count;
            for (int64_t i = lo[0]; i < hi[0]; i++)
                for (int64_t j = lo[1]; j < hi[1]; j++) {
                    int64_t p0 = sl.mem.offset[0] +
                                 (i - (sl.dim == 0 ? sl.start : 0));
                    int64_t p1 = sl.mem.offset[1] +
                                 (j - (sl.dim == 1 ? sl.start : 0));
                    double *c = &in[p0 * sl.mem.shape[1] + p1];
                    stale += *c != orig[(i + g) * E[1] + j + g];
                    *c = -*c;
                }
            passion_slab_dirty(it);
        }
        TH_CHECK(rc == 0 && stale == 0, "cfg %d (dim %d width %lld halo "
                 "%lld prefetch %d reuse %d method %d): sweep %d, %d "
                 "interior cells not the file's", cfg, o.dim,
                 (long long)o.width, (long long)o.halo, o.prefetch, o.reuse,
                 (int)o.method, rc, stale);
        int crc = passion_slab_close(it);
        TH_CHECK(crc == 0, "slab_close: %d %s", crc,
                 passion_ctx_errdetail(ctx));
        rc = passion_file_read(f, &all, back, NULL, PASSION_METHOD_DIRECT);
        TH_CHECK(rc == 0, "read back: %d", rc);
        int wrong = 0;
        for (int64_t i = 0; i < E[0]; i++)
            for (int64_t j = 0; j < E[1]; j++) {
                int inner = i >= g && i < g + nl[0] && j >= g &&
                            j < g + nl[1];
                double want = inner ? -orig[i * E[1] + j]
                                    : orig[i * E[1] + j];
                wrong += back[i * E[1] + j] != want;
            }
        TH_CHECK(wrong == 0, "cfg %d (dim %d width %lld halo %lld prefetch "
                 "%d reuse %d method %d): %d cells wrong after the "
                 "write-back", cfg, o.dim, (long long)o.width,
                 (long long)o.halo, o.prefetch, o.reuse, (int)o.method,
                 wrong);
        free(back);
        free(orig);
        passion_file_close(f);
        passion_array_free(a);
        passion_finalize(ctx);
    }
    chaos(0, 0);
}

int main(int argc, char **argv)
{
    static CU_TestInfo coll[] = {
        {"collective writes, auto", test_coll_auto},
        {"collective writes, auto, interleaved planes", test_coll_planes},
        {"collective writes, direct", test_coll_direct},
        {"collective writes, sieve", test_coll_sieve},
        {"collective writes, two-phase static", test_coll_static},
        {"collective writes, two-phase dynamic", test_coll_dynamic},
        {"collective writes, methods mixed", test_coll_mixed},
        CU_TEST_INFO_NULL};
    static CU_TestInfo ind[] = {
        {"asynchronous writes in flight together", test_async},
        {"slab write-back with ghosts", test_slab_writeback},
        CU_TEST_INFO_NULL};
    static CU_SuiteInfo suites[] = {
        {"write paths under the schedule fuzzer: collective", NULL, NULL,
         NULL, NULL, coll},
        {"write paths under the schedule fuzzer: independent", NULL, NULL,
         NULL, NULL, ind},
        CU_SUITE_INFO_NULL};
    return th_main(argc, argv, suites);
}
