/*
 * test_lpm.c - the descriptor (OCAD) and the Local Placement Model against
 * naive element-by-element references.
 *
 * ocad: for random specs, every global index maps to an owner and a local
 * index and back, local shapes match a naive count, bounds match.
 * property: random arrays (1-4 dims, element sizes 1/4/8/16, any storage
 * order, BLOCK/BLOCK(m)/CYCLIC/CYCLIC(m)/collapsed, ghosts), random
 * options (memory budget from one element up, posix / mpiio / fault driver
 * with short counts, O_DIRECT), random sections and memory sides, read and
 * write with direct / sieve / auto; every read is compared element by
 * element with an in-memory model of the local file, including the bytes
 * of the memory side that must not change; after the writes the whole file
 * is compared with the model (so no byte outside a section changed).
 * thesis: the request and element counts of table 5.3.
 */
#include "harness.h"
#include "passion.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

/* ------------------------------------------------------------ references */

/* Naive owner coordinate and local index in one dimension. */
static void ref_g2l(int dist, int64_t m, int64_t P, int64_t n, int64_t g,
                    int64_t *p, int64_t *l)
{
    if (dist == PASSION_DIST_COLLAPSED) {
        *p = 0;
        *l = g;
    } else if (dist == PASSION_DIST_BLOCK) {
        if (m == 0)
            m = (n + P - 1) / P;
        *p = g / m;
        *l = g - *p * m;
    } else {
        if (m == 0)
            m = 1;
        int64_t cycle = g / (m * P);
        *p = (g / m) % P;
        *l = cycle * m + g % m;
    }
}

/* Naive local count: count the indices owned by p. */
static int64_t ref_count(int dist, int64_t m, int64_t P, int64_t n, int64_t p)
{
    int64_t c = 0;
    for (int64_t g = 0; g < n; g++) {
        int64_t q, l;
        ref_g2l(dist, m, P, n, g, &q, &l);
        c += q == p;
    }
    return c;
}

/* Linear position of index idx in an array of extents ext, storage order. */
static int64_t ref_pos(int nd, const int *order, const int64_t *ext,
                       const int64_t *idx)
{
    int64_t pos = 0;
    for (int k = 0; k < nd; k++)
        pos = pos * ext[order[k]] + idx[order[k]];
    return pos;
}

/* Advance a multi-index over box cnt; 0 when done. */
static int next_index(int nd, const int64_t *cnt, int64_t *i)
{
    for (int d = nd - 1; d >= 0; d--) {
        if (++i[d] < cnt[d])
            return 1;
        i[d] = 0;
    }
    return 0;
}

/* --------------------------------------------------------- random specs */

typedef struct rcase {
    passion_array_spec spec;
    char opt[160]; /* "key=value,..." for th_init */
    int nd;
} rcase;

static void random_spec(uint64_t *s, int P, rcase *c)
{
    static const int64_t esizes[] = {1, 4, 8, 16};
    th_random_spec(s, P, esizes, 4, &c->spec);
    c->nd = c->spec.ndims;
}

static int g_odirect_ok;

static void random_options(uint64_t *s, const passion_array_spec *sp,
                           char *o, size_t len)
{
    static const int64_t budgets[] = {1, 3, 50, 1000, 100000};
    static const char *const drivers[] = {"posix", "mpiio", "fault"};
    int64_t budget = sp->elem_size * budgets[th_range(s, 0, 4)];
    int driver = (int)th_range(s, 0, 2);
    int n = snprintf(o, len, "memory_budget=%lld,driver=%s",
                     (long long)budget, drivers[driver]);
    if (driver == PASSION_DRIVER_FAULT)
        snprintf(o + n, len - (size_t)n, ",fault_short=1");
    if (driver == PASSION_DRIVER_POSIX && g_odirect_ok &&
        th_range(s, 0, 3) == 0)
        snprintf(o + n, len - (size_t)n, ",direct_io=1");
}

/* -------------------------------------------------------------- ocad */

static void test_ocad_mapping(void)
{
    for (int t = 0; t < 60; t++) {
        uint64_t s = th_seed * 1000 + (uint64_t)t;
        th_case_seed = s;
        rcase c;
        random_spec(&s, th_size, &c);
        passion_ctx *ctx = NULL;
        passion_array *a = NULL;
        int rc = passion_init(MPI_COMM_WORLD, NULL, &ctx);
        TH_CHECK(rc == 0, "init: %d", rc);
        rc = passion_array_create(ctx, &c.spec, &a);
        TH_CHECK(rc == 0, "create: %d %s", rc, passion_ctx_errdetail(ctx));
        if (rc) {
            passion_finalize(ctx);
            continue;
        }
        const passion_array_spec *sp = &c.spec;
        int nd = c.nd;
        /* local shapes against a naive count */
        for (int r = 0; r < th_size; r++) {
            int64_t ls[PASSION_MAX_DIMS], lo[PASSION_MAX_DIMS],
                hi[PASSION_MAX_DIMS];
            passion_array_local_shape(a, r, ls);
            passion_array_local_bounds(a, r, 1, lo, hi);
            int coord[PASSION_MAX_DIMS], rr = r;
            for (int d = nd - 1; d >= 0; d--) {
                coord[d] = rr % sp->grid[d];
                rr /= sp->grid[d];
            }
            for (int d = 0; d < nd; d++) {
                int64_t want = ref_count(sp->dist[d], sp->block[d],
                                         sp->grid[d], sp->shape[d], coord[d]);
                TH_CHECK(ls[d] == want, "rank %d dim %d local %lld want %lld",
                         r, d, (long long)ls[d], (long long)want);
                if (want > 0 && sp->dist[d] != PASSION_DIST_CYCLIC)
                    TH_CHECK(hi[d] - lo[d] + 1 == want + 2 * sp->ghost[d],
                             "bounds dim %d", d);
            }
        }
        /* every global index: owner, local index, and back */
        int64_t g[PASSION_MAX_DIMS] = {0}, l[PASSION_MAX_DIMS],
                back[PASSION_MAX_DIMS];
        int bad = 0;
        do {
            int r;
            rc = passion_array_owner(a, g, &r, l);
            int64_t wantr = 0;
            for (int d = 0; d < nd; d++) {
                int64_t p, wl;
                ref_g2l(sp->dist[d], sp->block[d], sp->grid[d], sp->shape[d],
                        g[d], &p, &wl);
                wantr = wantr * sp->grid[d] + p;
                bad |= l[d] != wl;
            }
            bad |= rc != 0 || r != wantr;
            rc = passion_array_global_index(a, r, l, back);
            for (int d = 0; d < nd; d++)
                bad |= back[d] != g[d];
            bad |= rc != 0;
        } while (!bad && next_index(nd, sp->shape, g));
        TH_CHECK(!bad, "owner/local/global round trip failed");
        passion_array_free(a);
        passion_finalize(ctx);
    }
}

/* ------------------------------------------------------- LPM property */

typedef struct lpm_case {
    rcase c;
    passion_ctx *ctx;
    passion_array *a;
    passion_file *f;
    int64_t ext[PASSION_MAX_DIMS]; /* file extents (local + ghosts) */
    int64_t lshape[PASSION_MAX_DIMS];
    int64_t fbytes;
    unsigned char *model;
} lpm_case;

static void random_section(uint64_t *s, const lpm_case *L,
                           passion_section *sec, passion_memspec *mem,
                           int *use_mem)
{
    int nd = L->c.nd;
    for (int d = 0; d < nd; d++) {
        int64_t g = L->c.spec.ghost[d], n = L->lshape[d];
        int64_t lo = -g, hi = n + g; /* valid [lo, hi) */
        if (hi <= lo || th_range(s, 0, 30) == 0) {
            sec->start[d] = lo;
            sec->count[d] = 0;
            sec->stride[d] = th_range(s, 1, 3);
            continue;
        }
        sec->start[d] = th_range(s, lo, hi - 1);
        int64_t room = hi - sec->start[d];
        sec->stride[d] = th_range(s, 0, 2) ? 1 : th_range(s, 1, room);
        int64_t maxc = (room - 1) / sec->stride[d] + 1;
        sec->count[d] = th_range(s, 1, maxc);
    }
    *use_mem = (int)th_range(s, 0, 1);
    for (int d = 0; d < nd; d++) {
        mem->offset[d] = *use_mem ? th_range(s, 0, 2) : 0;
        mem->shape[d] = sec->count[d] + mem->offset[d] +
                        (*use_mem ? th_range(s, 0, 2) : 0);
    }
}

/* Copy every element of the section between the model and a memory side
   (to_mem: model -> mem), element by element. */
static void ref_copy(lpm_case *L, const passion_section *sec,
                     const passion_memspec *mem, unsigned char *m, int to_mem)
{
    int nd = L->c.nd;
    int64_t es = L->c.spec.elem_size;
    for (int d = 0; d < nd; d++)
        if (sec->count[d] == 0)
            return;
    int64_t i[PASSION_MAX_DIMS] = {0}, fi[PASSION_MAX_DIMS],
            mi[PASSION_MAX_DIMS];
    do {
        for (int d = 0; d < nd; d++) {
            fi[d] = sec->start[d] + i[d] * sec->stride[d] +
                    L->c.spec.ghost[d];
            mi[d] = mem->offset[d] + i[d];
        }
        unsigned char *fp =
            L->model + ref_pos(nd, L->c.spec.order, L->ext, fi) * es;
        unsigned char *mp = m + ref_pos(nd, L->c.spec.order, mem->shape, mi) * es;
        if (to_mem)
            memcpy(mp, fp, (size_t)es);
        else
            memcpy(fp, mp, (size_t)es);
    } while (next_index(nd, sec->count, i));
}

static int64_t box_bytes(int nd, const int64_t *shape, int64_t es)
{
    int64_t b = es;
    for (int d = 0; d < nd; d++)
        b *= shape[d];
    return b;
}

static void run_lpm_case(uint64_t seed, int ops)
{
    th_case_seed = seed;
    uint64_t s = seed;
    lpm_case L;
    memset(&L, 0, sizeof L);
    random_spec(&s, th_size, &L.c);
    random_options(&s, &L.c.spec, L.c.opt, sizeof L.c.opt);
    int rc = th_init(&L.ctx, "%s", L.c.opt);
    TH_CHECK(rc == 0, "init %d", rc);
    if (rc)
        return;
    rc = passion_array_create(L.ctx, &L.c.spec, &L.a);
    TH_CHECK(rc == 0, "create %d: %s", rc, passion_ctx_errdetail(L.ctx));
    char pat[300];
    snprintf(pat, sizeof pat, "%s/lpm.%%d.laf", th_dir());
    if (!rc)
        rc = passion_file_open(L.a, pat, PASSION_MODE_CREATE, &L.f);
    TH_CHECK(rc == 0, "open %d: %s", rc, passion_ctx_errdetail(L.ctx));
    if (rc) {
        passion_array_free(L.a);
        passion_finalize(L.ctx);
        return;
    }
    int nd = L.c.nd;
    int64_t es = L.c.spec.elem_size;
    /* the normalised storage order (row/col-major filled in) */
    memcpy(L.c.spec.order, passion_array_get_spec(L.a)->order,
           sizeof L.c.spec.order);
    passion_array_local_shape(L.a, th_rank, L.lshape);
    for (int d = 0; d < nd; d++)
        L.ext[d] = L.lshape[d] + 2 * L.c.spec.ghost[d];
    L.fbytes = box_bytes(nd, L.ext, es);
    int64_t lb;
    passion_array_local_bytes(L.a, th_rank, &lb);
    TH_CHECK(lb == L.fbytes, "local bytes %lld want %lld", (long long)lb,
             (long long)L.fbytes);
    L.model = malloc((size_t)L.fbytes + 1);
    uint64_t vs = seed ^ ((uint64_t)th_rank << 32);
    for (int64_t i = 0; i < L.fbytes; i++)
        L.model[i] = (unsigned char)th_next(&vs);
    rc = passion_file_write_local(L.f, L.model);
    TH_CHECK(rc == 0, "write_local %d: %s", rc, passion_ctx_errdetail(L.ctx));

    /* per-rank random operations (independent calls) */
    uint64_t os = seed * 31 + (uint64_t)th_rank + 1;
    for (int k = 0; k < ops; k++) {
        passion_section sec;
        passion_memspec mem;
        int use_mem;
        memset(&sec, 0, sizeof sec);
        random_section(&os, &L, &sec, &mem, &use_mem);
        int method = (int)th_range(&os, 0, 2);
        int op_write = (int)th_range(&os, 0, 1);
        int64_t mb = box_bytes(nd, mem.shape, es);
        unsigned char *buf = malloc((size_t)mb + 1);
        unsigned char *want = malloc((size_t)mb + 1);
        if (op_write) {
            for (int64_t i = 0; i < mb; i++)
                buf[i] = (unsigned char)th_next(&os);
            rc = passion_file_write(L.f, &sec, buf, use_mem ? &mem : NULL,
                                       method);
            TH_CHECK(rc == 0, "file_write %d (method %d): %s", rc, method,
                     passion_ctx_errdetail(L.ctx));
            ref_copy(&L, &sec, &mem, buf, 0);
        } else {
            memset(buf, 0xA5, (size_t)mb);
            rc = passion_file_read(L.f, &sec, buf, use_mem ? &mem : NULL,
                                      method);
            TH_CHECK(rc == 0, "file_read %d (method %d): %s", rc, method,
                     passion_ctx_errdetail(L.ctx));
            memset(want, 0xA5, (size_t)mb); /* untouched bytes stay so */
            ref_copy(&L, &sec, &mem, want, 1);
            TH_CHECK(memcmp(buf, want, (size_t)mb) == 0,
                     "read mismatch: op %d method %d nd %d esize %lld "
                     "options %s", k, method, nd, (long long)es, L.c.opt);
        }
        free(buf);
        free(want);
    }
    /* the whole file must equal the model */
    unsigned char *whole = malloc((size_t)L.fbytes + 1);
    rc = passion_file_read_local(L.f, whole);
    TH_CHECK(rc == 0, "read_local %d", rc);
    TH_CHECK(memcmp(whole, L.model, (size_t)L.fbytes) == 0,
             "file differs from the model after writes (options %s)",
             L.c.opt);
    free(whole);
    free(L.model);
    rc = passion_file_close(L.f);
    TH_CHECK(rc == 0, "close %d", rc);
    passion_array_free(L.a);
    passion_finalize(L.ctx);
}

static void test_lpm_property(void)
{
    int cases = th_size <= 2 ? 120 : 40;
    for (int t = 0; t < cases; t++)
        run_lpm_case(th_seed * 7919 + (uint64_t)t, th_size <= 2 ? 30 : 15);
}

/* ------------------------------------------------------ thesis table 5.3 */

static void test_thesis_counts(void)
{
    static const struct {
        int64_t l1, u1, s1, l2, u2, s2;
        long direct_req, sieve_req, sieve_elems;
    } t[] = {
        {1, 2048, 2, 1, 32, 2, 16384, 2, 65536},
        {1, 2048, 4, 1, 32, 4, 4096, 2, 65536},
        {10, 1024, 3, 3, 22, 3, 2373, 2, 40960},
        {100, 2048, 6, 5, 32, 4, 2275, 2, 57344},
        {1024, 2048, 2, 1, 32, 3, 5643, 2, 65536},
    };
    th_case_seed = 0;
    passion_ctx *ctx;
    passion_array *a;
    passion_file *f;
    int64_t shape[2] = {2048, 32LL * th_size};
    passion_array_spec sp;
    passion_array_spec_init(&sp, 2, shape, 4);
    sp.storage = PASSION_COL_MAJOR;
    sp.grid[1] = th_size;
    sp.dist[0] = PASSION_DIST_COLLAPSED;
    char pat[300];
    snprintf(pat, sizeof pat, "%s/thesis.%%d.laf", th_dir());
    int rc = th_init(&ctx, "memory_budget=%d", 16 * 2048 * 4);
    rc = rc ? rc : passion_array_create(ctx, &sp, &a);
    rc = rc ? rc : passion_file_open(a, pat, PASSION_MODE_CREATE, &f);
    TH_CHECK(rc == 0, "setup %d", rc);
    if (rc)
        return;
    float *buf = malloc(2048 * 32 * 4);
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        passion_section s;
        memset(&s, 0, sizeof s);
        s.start[0] = t[i].l1 - 1;
        s.count[0] = (t[i].u1 - t[i].l1) / t[i].s1 + 1;
        s.stride[0] = t[i].s1;
        s.start[1] = t[i].l2 - 1;
        s.count[1] = (t[i].u2 - t[i].l2) / t[i].s2 + 1;
        s.stride[1] = t[i].s2;
        passion_counters c;
        passion_plan_info pi;
        passion_counters_reset(ctx);
        rc = passion_file_read(f, &s, buf, NULL, PASSION_METHOD_DIRECT);
        passion_counters_get(ctx, &c);
        TH_CHECK(rc == 0 && (long)c.io_calls == t[i].direct_req,
                 "case %zu direct requests %llu want %ld", i + 1,
                 (unsigned long long)c.io_calls, t[i].direct_req);
        TH_CHECK((long)c.bytes_read == t[i].direct_req * 4,
                 "case %zu direct elements", i + 1);
        passion_section_plan(f, &s, 0, PASSION_METHOD_DIRECT, &pi);
        TH_CHECK(pi.requests == t[i].direct_req, "plan direct requests");
        passion_counters_reset(ctx);
        rc = passion_file_read(f, &s, buf, NULL, PASSION_METHOD_SIEVE);
        passion_counters_get(ctx, &c);
        TH_CHECK(rc == 0 && (long)c.io_calls <= t[i].sieve_req,
                 "case %zu sieve requests %llu > %ld", i + 1,
                 (unsigned long long)c.io_calls, t[i].sieve_req);
        TH_CHECK((long)c.bytes_read / 4 <= t[i].sieve_elems,
                 "case %zu sieve elements %llu > %ld", i + 1,
                 (unsigned long long)c.bytes_read / 4, t[i].sieve_elems);
        TH_CHECK(c.peak_staging <= 16 * 2048 * 4,
                 "staging %llu over budget",
                 (unsigned long long)c.peak_staging);
        passion_section_plan(f, &s, 0, PASSION_METHOD_SIEVE, &pi);
        TH_CHECK(pi.requests == (int64_t)c.io_calls &&
                     pi.bytes_file == (int64_t)c.bytes_read,
                 "plan and counters disagree for sieve");
        /* writes: sieve needs at most twice the read requests */
        passion_counters_reset(ctx);
        rc = passion_file_write(f, &s, buf, NULL, PASSION_METHOD_SIEVE);
        passion_counters_get(ctx, &c);
        TH_CHECK(rc == 0 && (long)c.io_calls <= 2 * t[i].sieve_req,
                 "case %zu sieve write requests %llu", i + 1,
                 (unsigned long long)c.io_calls);
    }
    free(buf);
    passion_file_close(f);
    passion_array_free(a);
    passion_finalize(ctx);
}

static CU_TestInfo ocad_tests[] = {
    {"owner, local index, global index, local shapes", test_ocad_mapping},
    CU_TEST_INFO_NULL,
};
static CU_TestInfo lpm_tests[] = {
    {"random sections vs element-wise model", test_lpm_property},
    {"thesis table 5.3 request and element counts", test_thesis_counts},
    CU_TEST_INFO_NULL,
};
static CU_SuiteInfo suites[] = {
    {"ocad", NULL, NULL, NULL, NULL, ocad_tests},
    {"lpm", NULL, NULL, NULL, NULL, lpm_tests},
    CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
    /* O_DIRECT works only on some file systems: probe once */
    char probe[64];
    snprintf(probe, sizeof probe, "/tmp/passion-odirect-%d", (int)getpid());
    int fd = open(probe, O_CREAT | O_RDWR | O_DIRECT, 0600);
    g_odirect_ok = fd >= 0;
    if (fd >= 0)
        close(fd);
    unlink(probe);
    return th_main(argc, argv, suites);
}
