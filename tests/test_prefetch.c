/*
 * test_prefetch.c - asynchronous section access on both engines (io_uring
 * and the worker thread), the engine choice and its fallback, and the slab
 * iterator (prefetch, reuse, write-back), each checked against the
 * synchronous path or an in-memory model of the file.
 */
#include "harness.h"
#include "passion.h"
#include "../prefetch/pf.h"

#include <errno.h>

static const int engines[2] = {PASSION_ENGINE_URING, PASSION_ENGINE_THREAD};

static passion_ctx *mkctx(int engine, int64_t budget, int direct)
{
    passion_options o;
    passion_options_init(&o);
    o.engine = engine;
    o.memory_budget = budget;
    o.direct_io = direct;
    passion_ctx *ctx = NULL;
    int rc = passion_init(MPI_COMM_WORLD, &o, &ctx);
    TH_CHECK(rc == 0, "passion_init: %s", passion_strerror(rc));
    return ctx;
}

/* A local array: 2-D or 3-D, column-block over all ranks, ghosts. */
static passion_array *mkarray(passion_ctx *ctx, int nd, const int64_t *shape,
                              int64_t esize, int storage, int64_t ghost)
{
    passion_array_spec sp;
    passion_array_spec_init(&sp, nd, shape, esize);
    sp.storage = storage;
    for (int d = 0; d < nd; d++) {
        sp.grid[d] = 1;
        sp.dist[d] = PASSION_DIST_COLLAPSED;
        sp.ghost[d] = ghost;
    }
    int pd = storage == PASSION_COL_MAJOR ? nd - 1 : 0;
    sp.grid[pd] = th_size;
    sp.dist[pd] = PASSION_DIST_BLOCK;
    passion_array *a = NULL;
    int rc = passion_array_create(ctx, &sp, &a);
    TH_CHECK(rc == 0, "array_create: %s %s", passion_strerror(rc),
             passion_errdetail(ctx));
    return a;
}

static void fill(unsigned char *b, int64_t n, uint64_t seed)
{
    for (int64_t i = 0; i < n; i++)
        b[i] = (unsigned char)(th_next(&seed) >> 56);
}

/* Random section inside [lo, hi) per dimension. */
static void rand_section(uint64_t *s, int nd, const int64_t *lo,
                         const int64_t *hi, passion_section *sec)
{
    memset(sec, 0, sizeof *sec);
    for (int d = 0; d < nd; d++) {
        int64_t ext = hi[d] - lo[d];
        sec->start[d] = lo[d] + th_range(s, 0, ext - 1);
        sec->stride[d] = th_range(s, 1, 3);
        int64_t maxc = (hi[d] - 1 - sec->start[d]) / sec->stride[d] + 1;
        sec->count[d] = th_range(s, 1, maxc);
    }
}

/* Async reads and writes equal the synchronous ones, for one engine. */
static void async_matrix(int engine, int direct)
{
    passion_ctx *ctx = mkctx(engine, 3000, direct);
    int eng = -1;
    int rc = passion_engine_get(ctx, &eng);
    TH_CHECK(rc == 0 && eng == engine, "engine %d wanted, got %d (%s)",
             engine, eng, passion_strerror(rc));
    /* O_DIRECT: big enough that aligned widening happens */
    int64_t k1 = direct ? 8 : 1;
    const int64_t shape[2][3] = {{37 * k1, 9 * th_size * k1, 0},
                                 {5 * k1, 7, 4 * th_size * k1}};
    for (int t = 0; t < 2; t++) {
        int nd = t ? 3 : 2;
        int storage = t ? PASSION_ROW_MAJOR : PASSION_COL_MAJOR;
        int64_t esize = t ? 8 : 4;
        passion_array *a = mkarray(ctx, nd, shape[t], esize, storage, 1);
        passion_file *f = NULL;
        char pat[512];
        snprintf(pat, sizeof pat, "%s/async%d-%d.%%d", th_dir(), t, direct);
        rc = passion_file_open(a, pat, PASSION_MODE_CREATE, &f);
        TH_CHECK(rc == 0, "open: %s", passion_errdetail(ctx));
        int64_t fb;
        passion_array_local_bytes(a, th_rank, &fb);
        unsigned char *model = malloc(fb), *back = malloc(fb);
        fill(model, fb, th_seed + 11 * t + th_rank);
        fill(back, fb, th_seed + 13 * t + th_rank);
        rc = passion_write_local(f, model);
        TH_CHECK(rc == 0, "write_local");
        int64_t ls[3], lo[3], hi[3];
        passion_array_local_shape(a, th_rank, ls);
        const passion_array_spec *sp = passion_array_get_spec(a);
        for (int d = 0; d < nd; d++) {
            lo[d] = -sp->ghost[d];
            hi[d] = ls[d] + sp->ghost[d];
        }
        uint64_t s = th_seed * 31 + (uint64_t)t + 100 * (uint64_t)th_rank;
        for (int k = 0; k < 12; k++) {
            int method = k % 3; /* auto, direct, sieve */
            /* three reads in flight at once */
            passion_section sec[3];
            void *buf[3], *want[3];
            passion_request *rq[3];
            for (int j = 0; j < 3; j++) {
                rand_section(&s, nd, lo, hi, &sec[j]);
                int64_t n = passion_section_elems(&sec[j], nd) * esize;
                buf[j] = calloc(1, n);
                want[j] = calloc(1, n);
                rc = passion_read_section(f, &sec[j], want[j], NULL, method);
                TH_CHECK(rc == 0, "sync read: %s", passion_errdetail(ctx));
                rc = passion_read_section_begin(f, &sec[j], buf[j], NULL,
                                                method, &rq[j]);
                TH_CHECK(rc == 0 && rq[j], "read_begin: %s",
                         passion_errdetail(ctx));
            }
            for (int j = 2; j >= 0; j--) {
                rc = passion_request_wait(rq[j]);
                int64_t n = passion_section_elems(&sec[j], nd) * esize;
                TH_CHECK(rc == 0 && !memcmp(buf[j], want[j], n),
                         "async read differs (engine %s, method %d, rc %d)",
                         passion_engine_name(engine), method, rc);
                free(buf[j]);
                free(want[j]);
            }
            /* a write into a memspec-placed buffer, checked whole-file */
            passion_section w;
            rand_section(&s, nd, lo, hi, &w);
            passion_memspec m;
            memset(&m, 0, sizeof m);
            int64_t mn = esize;
            for (int d = 0; d < nd; d++) {
                m.shape[d] = w.count[d] + 2;
                m.offset[d] = 1;
                mn *= m.shape[d];
            }
            unsigned char *src = malloc(mn);
            fill(src, mn, s + 7);
            rc = passion_write_section(f, &w, src, &m, method);
            TH_CHECK(rc == 0, "sync write");
            /* start again from other content, redo asynchronously */
            passion_write_local(f, back);
            unsigned char *pre = malloc(fb);
            memcpy(pre, back, fb);
            passion_request *wr;
            rc = passion_write_section_begin(f, &w, src, &m, method, &wr);
            TH_CHECK(rc == 0, "write_begin: %s", passion_errdetail(ctx));
            rc = passion_request_wait(wr);
            TH_CHECK(rc == 0, "write wait: %s", passion_errdetail(ctx));
            passion_read_local(f, back);
            /* expected: pre with the section patched = model patched over
               pre; rebuild by applying the sync write to pre */
            passion_write_local(f, pre);
            passion_write_section(f, &w, src, &m, method);
            passion_read_local(f, model);
            TH_CHECK(!memcmp(back, model, fb),
                     "async write differs (engine %s, method %d)",
                     passion_engine_name(engine), method);
            free(pre);
            free(src);
        }
        passion_counters c;
        passion_counters_get(ctx, &c);
        TH_CHECK(c.bytes_read > 0 && c.io_calls > 0, "counters not moved");
        passion_file_close(f);
        passion_array_free(a);
        free(model);
        free(back);
    }
    passion_finalize(ctx);
}

static void test_async_uring(void)
{
    async_matrix(PASSION_ENGINE_URING, 0);
}
static void test_async_thread(void)
{
    async_matrix(PASSION_ENGINE_THREAD, 0);
}
static void test_async_direct_io(void)
{
    for (int e = 0; e < 2; e++)
        async_matrix(engines[e], 1);
}

/* Engine choice: env var, forced fallback, forced uring that fails. */
static void test_engine_choice(void)
{
    setenv("PASSION_ENGINE", "thread", 1);
    passion_ctx *ctx = mkctx(PASSION_ENGINE_URING, 1 << 20, 0);
    int eng = -1;
    passion_engine_get(ctx, &eng);
    TH_CHECK(eng == PASSION_ENGINE_THREAD, "PASSION_ENGINE=thread ignored");
    passion_finalize(ctx);
    unsetenv("PASSION_ENGINE");

    int fails[3] = {ENOSYS, EPERM, ENOMEM};
    for (int i = 0; i < 3; i++) {
        pf_test_uring_fail(fails[i]);
        ctx = mkctx(PASSION_ENGINE_AUTO, 1 << 20, 0);
        eng = -1;
        int rc = passion_engine_get(ctx, &eng);
        TH_CHECK(rc == 0 && eng == PASSION_ENGINE_THREAD,
                 "auto with io_uring failing (%s): rc %d engine %d",
                 strerror(fails[i]), rc, eng);
        passion_finalize(ctx);
        ctx = mkctx(PASSION_ENGINE_URING, 1 << 20, 0);
        rc = passion_engine_get(ctx, &eng);
        TH_CHECK(rc == PASSION_ENOTSUP, "forced uring failing: rc %d", rc);
        TH_CHECK(strstr(passion_errdetail(ctx), "io_uring") != NULL,
                 "detail: %s", passion_errdetail(ctx));
        passion_finalize(ctx);
    }
    pf_test_uring_fail(0);
    ctx = mkctx(PASSION_ENGINE_AUTO, 1 << 20, 0);
    passion_engine_get(ctx, &eng);
    TH_CHECK(eng == PASSION_ENGINE_URING, "auto should pick io_uring here");
    TH_CHECK(!strcmp(passion_engine_name(eng), "uring"), "name");
    passion_finalize(ctx);
}

/* Errors come back from wait with a detail: short file, fault driver. */
static void test_async_errors(void)
{
    for (int e = 0; e < 2; e++) {
        passion_options o;
        passion_options_init(&o);
        o.engine = engines[e];
        o.driver = PASSION_DRIVER_FAULT;
        o.fault_fail_at = 2;
        o.fault_errno = EIO;
        passion_ctx *ctx;
        passion_init(MPI_COMM_WORLD, &o, &ctx);
        int64_t shape[2] = {64, 8 * th_size};
        passion_array *a = mkarray(ctx, 2, shape, 4, PASSION_COL_MAJOR, 0);
        char pat[512];
        snprintf(pat, sizeof pat, "%s/fault%d.%%d", th_dir(), e);
        passion_file *f;
        int rc = passion_file_open(a, pat, PASSION_MODE_CREATE, &f);
        TH_CHECK(rc == 0, "open");
        passion_section s;
        int64_t cnt[2] = {64, 8}, st[2] = {1, 1}, zero[2] = {0, 0};
        passion_section_set(&s, 2, zero, cnt, st);
        float *buf = malloc(64 * 8 * 4);
        passion_request *r1, *r2;
        /* call 1 succeeds, call 2 fails */
        rc = passion_read_section_begin(f, &s, buf, NULL,
                                        PASSION_METHOD_DIRECT, &r1);
        TH_CHECK(rc == 0, "begin");
        rc = passion_request_wait(r1);
        TH_CHECK(rc == 0, "first request should pass: %d", rc);
        rc = passion_read_section_begin(f, &s, buf, NULL,
                                        PASSION_METHOD_DIRECT, &r2);
        rc = rc ? rc : passion_request_wait(r2);
        TH_CHECK(rc == PASSION_EIO, "fault not reported: %d", rc);
        TH_CHECK(strstr(passion_errdetail(ctx), "asynchronous read") != NULL,
                 "detail: %s", passion_errdetail(ctx));
        /* bad arguments fail at begin, no request */
        passion_request *r3 = (passion_request *)1;
        s.count[0] = 1000;
        rc = passion_read_section_begin(f, &s, buf, NULL, 0, &r3);
        TH_CHECK(rc == PASSION_ERANGE && r3 == NULL, "range: %d", rc);
        free(buf);
        passion_file_close(f);
        passion_array_free(a);
        passion_finalize(ctx);
    }
}

static CU_TestInfo async_tests[] = {
    {"engine choice and fallback", test_engine_choice},
    {"async = sync, io_uring", test_async_uring},
    {"async = sync, thread", test_async_thread},
    {"async with O_DIRECT, both engines", test_async_direct_io},
    {"async errors, both engines", test_async_errors},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"async", NULL, NULL, NULL, NULL, async_tests},
    CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, suites);
}
