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
#include <fcntl.h>
#include <unistd.h>

static const passion_engine engines[2] = {PASSION_ENGINE_URING,
                                          PASSION_ENGINE_THREAD};

static passion_ctx *mkctx(passion_engine engine, int64_t budget, int direct)
{
    passion_ctx *ctx = NULL;
    int rc = th_init(&ctx, "engine=%s,memory_budget=%lld,direct_io=%d",
                     passion_engine_name(engine), (long long)budget, direct);
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
             passion_ctx_errdetail(ctx));
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
static void async_matrix(passion_engine engine, int direct)
{
    passion_ctx *ctx = mkctx(engine, 3000, direct);
    passion_engine eng = PASSION_ENGINE_AUTO;
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
        TH_CHECK(rc == 0, "open: %s", passion_ctx_errdetail(ctx));
        int64_t fb;
        passion_array_local_bytes(a, th_rank, &fb);
        unsigned char *model = malloc(fb), *back = malloc(fb);
        fill(model, fb, th_seed + 11 * t + th_rank);
        fill(back, fb, th_seed + 13 * t + th_rank);
        rc = passion_file_write_local(f, model);
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
                rc = passion_file_read(f, &sec[j], want[j], NULL, method);
                TH_CHECK(rc == 0, "sync read: %s", passion_ctx_errdetail(ctx));
                rc = passion_file_read_begin(f, &sec[j], buf[j], NULL,
                                                method, &rq[j]);
                TH_CHECK(rc == 0 && rq[j], "read_begin: %s",
                         passion_ctx_errdetail(ctx));
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
            rc = passion_file_write(f, &w, src, &m, method);
            TH_CHECK(rc == 0, "sync write");
            /* start again from other content, redo asynchronously */
            passion_file_write_local(f, back);
            unsigned char *pre = malloc(fb);
            memcpy(pre, back, fb);
            passion_request *wr;
            rc = passion_file_write_begin(f, &w, src, &m, method, &wr);
            TH_CHECK(rc == 0, "write_begin: %s", passion_ctx_errdetail(ctx));
            rc = passion_request_wait(wr);
            TH_CHECK(rc == 0, "write wait: %s", passion_ctx_errdetail(ctx));
            passion_file_read_local(f, back);
            /* expected: pre with the section patched = model patched over
               pre; rebuild by applying the sync write to pre */
            passion_file_write_local(f, pre);
            passion_file_write(f, &w, src, &m, method);
            passion_file_read_local(f, model);
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
    passion_engine eng = PASSION_ENGINE_AUTO;
    passion_engine_get(ctx, &eng);
    TH_CHECK(eng == PASSION_ENGINE_THREAD, "PASSION_ENGINE=thread ignored");
    passion_finalize(ctx);
    unsetenv("PASSION_ENGINE");

    int fails[3] = {ENOSYS, EPERM, ENOMEM};
    for (int i = 0; i < 3; i++) {
        core_test_uring_fail(fails[i]);
        ctx = mkctx(PASSION_ENGINE_AUTO, 1 << 20, 0);
        eng = PASSION_ENGINE_AUTO;
        int rc = passion_engine_get(ctx, &eng);
        TH_CHECK(rc == 0 && eng == PASSION_ENGINE_THREAD,
                 "auto with io_uring failing (%s): rc %d engine %d",
                 strerror(fails[i]), rc, eng);
        passion_finalize(ctx);
        ctx = mkctx(PASSION_ENGINE_URING, 1 << 20, 0);
        rc = passion_engine_get(ctx, &eng);
        TH_CHECK(rc == PASSION_ENOTSUP, "forced uring failing: rc %d", rc);
        TH_CHECK(strstr(passion_ctx_errdetail(ctx), "io_uring") != NULL,
                 "detail: %s", passion_ctx_errdetail(ctx));
        passion_finalize(ctx);
    }
    core_test_uring_fail(0);
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
        passion_ctx *ctx;
        th_init(&ctx, "engine=%s,driver=fault,fault_fail_at=2,"
                "fault_errno=%d", passion_engine_name(engines[e]), EIO);
        int64_t shape[2] = {64, 8 * th_size};
        passion_array *a = mkarray(ctx, 2, shape, 4, PASSION_COL_MAJOR, 0);
        char pat[512];
        snprintf(pat, sizeof pat, "%s/fault%d.%%d", th_dir(), e);
        passion_file *f;
        int rc = passion_file_open(a, pat, PASSION_MODE_CREATE, &f);
        TH_CHECK(rc == 0, "open");
        /* count from the data calls: the create's own requests (rank 0
           also writes the local set's description) are not the subject */
        if (!rc)
            core_fault_rearm(ctx);
        passion_section s;
        int64_t cnt[2] = {64, 8}, st[2] = {1, 1}, zero[2] = {0, 0};
        passion_section_set(&s, 2, zero, cnt, st);
        float *buf = malloc(64 * 8 * 4);
        passion_request *r1, *r2;
        /* call 1 succeeds, call 2 fails */
        rc = passion_file_read_begin(f, &s, buf, NULL,
                                        PASSION_METHOD_DIRECT, &r1);
        TH_CHECK(rc == 0, "begin");
        rc = passion_request_wait(r1);
        TH_CHECK(rc == 0, "first request should pass: %d", rc);
        rc = passion_file_read_begin(f, &s, buf, NULL,
                                        PASSION_METHOD_DIRECT, &r2);
        rc = rc ? rc : passion_request_wait(r2);
        TH_CHECK(rc == PASSION_EIO, "fault not reported: %d", rc);
        TH_CHECK(strstr(passion_ctx_errdetail(ctx), "asynchronous read") != NULL,
                 "detail: %s", passion_ctx_errdetail(ctx));
        /* bad arguments fail at begin, no request */
        passion_request *r3 = (passion_request *)1;
        s.count[0] = 1000;
        rc = passion_file_read_begin(f, &s, buf, NULL, 0, &r3);
        TH_CHECK(rc == PASSION_ERANGE && r3 == NULL, "range: %d", rc);
        free(buf);
        passion_file_close(f);
        passion_array_free(a);
        passion_finalize(ctx);
    }
}


/* ------------------------------------------------------------ slabs */

/* Linear element offset of a multi-index in an array of `shape` stored in
   order[] (order[0] slowest). */
static int64_t lin(int nd, const int *order, const int64_t *shape,
                   const int64_t *idx)
{
    int64_t o = 0;
    for (int k = 0; k < nd; k++)
        o = o * shape[order[k]] + idx[order[k]];
    return o;
}

/*
 * One sweep: out = in[i-h] + 2 in[i] + in[i+h] along dim (uint32, wraps)
 * with an output file, or in += slab-number + 1 in place (write-back).
 * Checked against a model of the whole local file.
 */
static void slab_case(passion_ctx *ctx, int nd, int storage, int64_t ghost,
                      int dimsel, int64_t width, int prefetch, int reuse,
                      int inplace, int ramp, const char *tag)
{
    int64_t shape[3] = {13, 11 * th_size, 6};
    if (nd == 3)
        shape[2] = 5 * th_size, shape[1] = 7;
    if (ramp) /* room for ramps at widths 4-9 */
        shape[0] = 23 * th_size, shape[nd - 1] *= 3;
    passion_array_spec sp;
    passion_array_spec_init(&sp, nd, shape, 4);
    sp.storage = storage;
    int pd = storage == PASSION_COL_MAJOR ? nd - 1 : 0;
    for (int d = 0; d < nd; d++) {
        sp.grid[d] = d == pd ? th_size : 1;
        sp.dist[d] = d == pd ? PASSION_DIST_BLOCK : PASSION_DIST_COLLAPSED;
        sp.ghost[d] = ghost;
    }
    passion_array *a = NULL;
    int rc = passion_array_create(ctx, &sp, &a);
    TH_CHECK(rc == 0, "array: %s", passion_ctx_errdetail(ctx));
    const passion_array_spec *ns = passion_array_get_spec(a);
    char p1[512], p2[512];
    snprintf(p1, sizeof p1, "%s/slab-in-%s.%%d", th_dir(), tag);
    snprintf(p2, sizeof p2, "%s/slab-out-%s.%%d", th_dir(), tag);
    passion_file *fi = NULL, *fo = NULL;
    passion_file_open(a, p1, PASSION_MODE_CREATE, &fi);
    if (!inplace)
        passion_file_open(a, p2, PASSION_MODE_CREATE, &fo);
    int64_t fb, ext[3], nl[3];
    passion_array_local_bytes(a, th_rank, &fb);
    passion_array_local_shape(a, th_rank, nl);
    for (int d = 0; d < nd; d++)
        ext[d] = nl[d] + 2 * ghost;
    int64_t ne = fb / 4;
    uint32_t *model = malloc(fb), *want = calloc(1, fb), *got = malloc(fb);
    uint64_t sd = th_seed + 977 * (uint64_t)th_rank;
    for (int64_t i = 0; i < ne; i++)
        model[i] = (uint32_t)th_next(&sd);
    passion_file_write_local(fi, model);
    if (fo)
        passion_file_write_local(fo, want); /* zeros */
    passion_counters_reset(ctx);

    passion_slab_opts o;
    passion_slab_opts_init(&o);
    o.dim = dimsel;
    o.width = width;
    o.prefetch = prefetch;
    o.reuse = reuse;
    o.writeback = inplace;
    o.out = fo;
    o.ramp = ramp;
    /* direct: no read-modify-write, so bytes_read counts input only */
    o.method = reuse ? PASSION_METHOD_DIRECT : PASSION_METHOD_AUTO;
    passion_slab_iter *it = NULL;
    rc = passion_slab_open(fi, &o, &it);
    TH_CHECK(rc == 0, "slab_open %s: %s", tag, passion_ctx_errdetail(ctx));
    int dim = dimsel < 0 ? ns->order[0] : dimsel;
    int64_t h = ghost, nslabs = 0, bad = 0;
    /* the expected slab layout, written out: equal slabs of width, or
       (ramped) width/4, width/4, the rest of width, full slabs, and the
       last width mirrored */
    int64_t n = nl[dim], wexp = width < n ? width : n, lay[64], nlay = 0;
    if (n > 0 && ramp && prefetch && wexp >= 4 && n >= 2 * wexp) {
        int64_t q = wexp / 4;
        lay[nlay++] = q;
        lay[nlay++] = q;
        lay[nlay++] = wexp - 2 * q;
        for (int64_t left = n - 2 * wexp; left > 0 && nlay < 58;
             left -= wexp)
            lay[nlay++] = left < wexp ? left : wexp;
        lay[nlay++] = wexp - 2 * q;
        lay[nlay++] = q;
        lay[nlay++] = q;
    } else {
        for (int64_t left = n; left > 0 && nlay < 64; left -= wexp)
            lay[nlay++] = left < wexp ? left : wexp;
    }
    int64_t at = 0, badlay = 0;
    memcpy(want, model, fb);
    passion_slab sl;
    while (it && (rc = passion_slab_next(it, &sl)) == 1) {
        badlay += nslabs >= nlay || sl.start != at || sl.count != lay[nslabs] ||
                  sl.nslabs != nlay || sl.index != nslabs;
        at += sl.count;
        nslabs++;
        /* every cell of the buffer equals the model (halo and ghosts);
           in place, the model holds what earlier slabs wrote */
        int64_t idx[3] = {0, 0, 0}, bi[3];
        for (;;) {
            int in_slab = idx[dim] >= sl.start - h + ghost &&
                          idx[dim] < sl.start + sl.count + h + ghost;
            if (in_slab) {
                for (int d = 0; d < nd; d++)
                    bi[d] = d == dim ? idx[d] - ghost - sl.start + h : idx[d];
                uint32_t v = ((uint32_t *)sl.in)[lin(nd, ns->order,
                                                     sl.mem.shape, bi)];
                bad += v != want[lin(nd, ns->order, ext, idx)];
            }
            int d = nd - 1;
            while (d >= 0 && ++idx[d] == ext[d])
                idx[d--] = 0;
            if (d < 0)
                break;
        }
        /* compute the interior */
        memset(idx, 0, sizeof idx);
        int64_t lo[3], hi[3];
        for (int d = 0; d < nd; d++) {
            lo[d] = d == dim ? sl.start : 0;
            hi[d] = d == dim ? sl.start + sl.count : nl[d];
            idx[d] = lo[d];
        }
        for (;;) {
            for (int d = 0; d < nd; d++)
                bi[d] = idx[d] + (d == dim ? h - sl.start : ghost);
            int64_t b = lin(nd, ns->order, sl.mem.shape, bi);
            int64_t fidx[3];
            for (int d = 0; d < nd; d++)
                fidx[d] = idx[d] + ghost;
            int64_t fpos = lin(nd, ns->order, ext, fidx);
            uint32_t *in = sl.in;
            if (inplace) {
                in[b] += (uint32_t)sl.index + 1;
                want[fpos] = in[b];
            } else {
                int64_t bm[3], bp[3];
                memcpy(bm, bi, sizeof bm);
                memcpy(bp, bi, sizeof bp);
                bm[dim] -= h;
                bp[dim] += h;
                uint32_t v = in[lin(nd, ns->order, sl.mem.shape, bm)] +
                             2 * in[b] +
                             in[lin(nd, ns->order, sl.mem.shape, bp)];
                ((uint32_t *)sl.out)[b] = v;
            }
            int d = nd - 1;
            while (d >= 0 && ++idx[d] == hi[d])
                idx[d] = lo[d], d--;
            if (d < 0)
                break;
        }
        if (inplace)
            passion_slab_dirty(it);
    }
    TH_CHECK(rc == 0, "slab_next %s: %d %s", tag, rc, passion_ctx_errdetail(ctx));
    rc = passion_slab_close(it);
    TH_CHECK(rc == 0, "slab_close %s: %s", tag, passion_ctx_errdetail(ctx));
    passion_counters c;
    passion_counters_get(ctx, &c);
    TH_CHECK(bad == 0, "%s: %lld buffer cells differ from the file", tag,
             (long long)bad);
    TH_CHECK(badlay == 0 && nslabs == nlay && at == n, "%s: slab layout "
             "(n %lld width %lld ramp %d prefetch %d): %lld slabs ending at "
             "%lld, want %lld; %lld misplaced", tag, (long long)n,
             (long long)width, ramp, prefetch, (long long)nslabs,
             (long long)at, (long long)nlay, (long long)badlay);
    /* expected output */
    if (!inplace) {
        memset(want, 0, fb);
        int64_t idx[3] = {0, 0, 0};
        for (;;) {
            int64_t f0[3], fm[3], fp[3];
            for (int d = 0; d < nd; d++)
                f0[d] = fm[d] = fp[d] = idx[d] + ghost;
            fm[dim] -= h;
            fp[dim] += h;
            want[lin(nd, ns->order, ext, f0)] =
                model[lin(nd, ns->order, ext, fm)] +
                2 * model[lin(nd, ns->order, ext, f0)] +
                model[lin(nd, ns->order, ext, fp)];
            int d = nd - 1;
            while (d >= 0 && ++idx[d] == nl[d])
                idx[d--] = 0;
            if (d < 0)
                break;
        }
    }
    passion_file_read_local(inplace ? fi : fo, got);
    TH_CHECK(!memcmp(got, want, fb), "%s: file differs from the model", tag);
    int64_t slice = fb / ext[dim];
    int64_t expect_reuse = reuse || (inplace && h) ? (nslabs - 1) * 2 * h * slice
                                                   : 0;
    TH_CHECK((int64_t)c.reuse_bytes == expect_reuse,
             "%s: reuse_bytes %llu, want %lld", tag,
             (unsigned long long)c.reuse_bytes, (long long)expect_reuse);
    /* contiguous slabs with reuse: every file byte read exactly once */
    if (expect_reuse && reuse && dim == ns->order[0])
        TH_CHECK((int64_t)c.bytes_read == fb,
                 "%s: read %llu bytes, the file has %lld", tag,
                 (unsigned long long)c.bytes_read, (long long)fb);
    if (prefetch && nslabs > 1)
        TH_CHECK(c.prefetch_hits + 0 <= (uint64_t)nslabs, "hits");
    passion_file_close(fi);
    passion_file_close(fo);
    passion_array_free(a);
    free(model);
    free(want);
    free(got);
}

static void slab_matrix(int engine)
{
    passion_ctx *ctx = mkctx(engine, 1 << 20, 0);
    int n = 0;
    for (int nd = 2; nd <= 3; nd++)
        for (int st = 0; st < 2; st++)
            for (int mode = 0; mode < 6; mode++) {
                int prefetch = mode & 1, reuse = (mode >> 1) & 1;
                int inplace = mode >= 4;
                int64_t ghost = (mode + nd) % 3 == 0 ? 0 : 1 + mode % 2;
                int dimsel = (mode % 3 == 2) ? 1 : -1;
                int64_t width = 1 + (mode + st) % 3;
                char tag[64];
                snprintf(tag, sizeof tag, "e%d-%d", engine, n++);
                slab_case(ctx, nd, st ? PASSION_COL_MAJOR : PASSION_ROW_MAJOR,
                          ghost, dimsel, width, prefetch, reuse, inplace, 1,
                          tag);
            }
    passion_finalize(ctx);
}

/*
 * The ramp: widths 4-9 (quarter 1 or 2, ramp remainders 2-5), both
 * storage orders, both engines, buffered and O_DIRECT, output file and
 * in-place write-back,
 * with and without reuse; ramp 0 and no prefetch keep equal slabs. Data
 * against the model, and the layout against the one written out in
 * slab_case.
 */
static void test_slab_ramp(void)
{
    int n = 0;
    /* buffered files: the next slab advised, read and written on the
       calling thread; O_DIRECT: read and written asynchronously */
    for (int e = 0; e < 4; e++) {
        passion_ctx *ctx = mkctx(engines[e % 2], 1 << 20, e / 2);
        for (int nd = 2; nd <= 3; nd++)
            for (int st = 0; st < 2; st++)
                for (int mode = 0; mode < 8; mode++) {
                    int reuse = mode & 1, inplace = (mode >> 1) & 1;
                    int ramp = mode < 6, prefetch = mode != 7;
                    int64_t ghost = (mode + st) % 3;
                    int dimsel = mode % 3 == 1 ? 1 : -1;
                    int64_t width = 4 + (mode + 2 * st + nd) % 6;
                    char tag[64];
                    snprintf(tag, sizeof tag, "ramp-e%d-%d", e, n++);
                    slab_case(ctx, nd,
                              st ? PASSION_COL_MAJOR : PASSION_ROW_MAJOR,
                              ghost, dimsel, width, prefetch, reuse, inplace,
                              ramp, tag);
                }
        passion_finalize(ctx);
    }
}

static void test_slab_uring(void)
{
    slab_matrix(PASSION_ENGINE_URING);
}
static void test_slab_thread(void)
{
    slab_matrix(PASSION_ENGINE_THREAD);
}

/*
 * The budget and advice tests' file: a context (engine, 1 MiB budget,
 * O_DIRECT or buffered) and a new local file th_dir()/name.%d of a
 * column-block rows x 40P array of doubles with one ghost column.
 * Collective; NULL (a failed check, nothing left open) on error.
 * slab_file_close closes the three.
 */
static passion_file *slab_file(passion_engine engine, int direct,
                               int64_t rows, const char *name,
                               passion_ctx **pctx, passion_array **pa)
{
    *pctx = NULL;
    *pa = NULL;
    passion_ctx *ctx = mkctx(engine, 1 << 20, direct);
    if (!ctx)
        return NULL;
    int64_t shape[2] = {rows, 40 * th_size};
    passion_array *a = mkarray(ctx, 2, shape, 8, PASSION_COL_MAJOR, 1);
    char pat[512];
    snprintf(pat, sizeof pat, "%s/%s.%%d", th_dir(), name);
    passion_file *f = NULL;
    int rc = a ? passion_file_open(a, pat, PASSION_MODE_CREATE, &f) : -1;
    TH_CHECK(rc == 0, "open %s: %s", pat, passion_ctx_errdetail(ctx));
    if (rc) {
        passion_array_free(a);
        passion_finalize(ctx);
        return NULL;
    }
    *pctx = ctx;
    *pa = a;
    return f;
}

static void slab_file_close(passion_file *f, passion_array *a,
                            passion_ctx *ctx)
{
    passion_file_close(f);
    passion_array_free(a);
    passion_finalize(ctx);
}

/* Width from the budget; too small a budget is an error with detail. */
static void test_slab_budget(void)
{
    passion_ctx *ctx;
    passion_array *a;
    passion_file *f =
        slab_file(PASSION_ENGINE_AUTO, 0, 100, "budget", &ctx, &a);
    if (!f)
        return;
    passion_slab_opts o;
    passion_slab_opts_init(&o);
    o.budget = 2 * 102 * 8 * 7; /* two buffers of 7 columns: width 5 */
    o.ramp = 0;
    passion_slab_iter *it;
    int rc = passion_slab_open(f, &o, &it);
    passion_slab sl;
    int got = passion_slab_next(it, &sl);
    TH_CHECK(rc == 0 && got == 1 && sl.count == 5 && sl.nslabs == 8,
             "width from budget: rc %d count %lld nslabs %lld", rc,
             (long long)sl.count, (long long)sl.nslabs);
    passion_slab_close(it);
    /* ramped (the default): 1, 1, 3, six of 5, 3, 1, 1 */
    o.ramp = 1;
    rc = passion_slab_open(f, &o, &it);
    got = passion_slab_next(it, &sl);
    TH_CHECK(rc == 0 && got == 1 && sl.count == 1 && sl.nslabs == 12,
             "ramped width from budget: rc %d count %lld nslabs %lld", rc,
             (long long)sl.count, (long long)sl.nslabs);
    passion_slab_close(it);
    o.budget = 2 * 102 * 8 * 2; /* no room beyond the halos */
    rc = passion_slab_open(f, &o, &it);
    TH_CHECK(rc == PASSION_ENOMEM && it == NULL, "tiny budget: %d", rc);
    slab_file_close(f, a, ctx);
}

/*
 * Buffered prefetch leaves to the kernel's sequential readahead what it
 * reads anyway: the file's driver is wrapped so that its readahead window
 * is R and its advice calls are recorded; a prefetching sweep must advise,
 * for each slab after the first, exactly the part of the slab's file range
 * beyond R past its start (all of it when R is 0, unknown; nothing when R
 * covers it). The ranges are computed here from the layout (column-major,
 * ghost columns, reuse: slab k+1 reads columns [start + g, start + count +
 * g)). Data are checked by the other slab tests on the same path.
 */
static int64_t adv_ra;
static int adv_n;
static int64_t adv_off[64], adv_len[64];
static const core_driver_ops *adv_real;

static int64_t adv_readahead(core_fh *fh)
{
    (void)fh;
    return adv_ra;
}

static int adv_advise(core_fh *fh, int64_t off, int64_t len, int advice)
{
    if (advice == CORE_ADV_WILLNEED && adv_n < 64) {
        adv_off[adv_n] = off;
        adv_len[adv_n] = len;
        adv_n++;
    }
    return adv_real->advise(fh, off, len, advice);
}

static int adv_ring_reads;
static int adv_ring_fd(core_fh *fh, int write, const void *buf, int64_t len,
                       int64_t off, int *buffered)
{
    if (!write)
        adv_ring_reads++;
    return adv_real->ring_fd(fh, write, buf, len, off, buffered);
}

/* f's driver wrapped (the wrapper ops are static: one file at a time):
   its readahead window is adv_ra, its advice recorded, its ring reads
   counted; the records emptied. adv_unwrap puts the driver back. */
static core_driver_ops adv_ops;
static void adv_wrap(passion_file *f)
{
    adv_real = f->fh->ops;
    adv_ops = *adv_real;
    adv_ops.advise = adv_advise;
    adv_ops.readahead = adv_readahead;
    if (adv_real->ring_fd)
        adv_ops.ring_fd = adv_ring_fd;
    f->fh->ops = &adv_ops;
    adv_n = 0;
    adv_ring_reads = 0;
}

static void adv_unwrap(passion_file *f)
{
    f->fh->ops = adv_real;
}

/* One sweep of f in slabs of `width` columns (no ramp), every slab
   handed out; the number of slabs (0 and a failed check on error). */
static int64_t adv_sweep(passion_file *f, int64_t width)
{
    passion_slab_opts o;
    passion_slab_opts_init(&o);
    o.width = width;
    o.ramp = 0;
    passion_slab_iter *it;
    int rc = passion_slab_open(f, &o, &it);
    TH_CHECK(rc == 0, "slab_open: %s", passion_ctx_errdetail(f->ctx));
    if (rc)
        return 0;
    passion_slab sl;
    int64_t nslabs = 0;
    while ((rc = passion_slab_next(it, &sl)) == 1)
        nslabs = sl.nslabs;
    TH_CHECK(rc == 0, "slab_next: %s", passion_ctx_errdetail(f->ctx));
    passion_slab_close(it);
    return rc ? 0 : nslabs;
}

/*
 * O_DIRECT: no page cache to advise, so the next slab is read
 * asynchronously (on io_uring: one ring read per slab after the first)
 * even when the driver reports a readahead window covering the slabs
 * (once, such a window made every O_DIRECT slab a synchronous read at
 * hand-out: no prefetch at all).
 */
static void slab_advice_direct(void)
{
    passion_ctx *ctx;
    passion_array *a;
    passion_file *f =
        slab_file(PASSION_ENGINE_URING, 1, 509, "advice-d", &ctx, &a);
    if (!f)
        return;
    adv_wrap(f);
    adv_ra = 1 << 30;
    int64_t nslabs = adv_sweep(f, 6);
    TH_CHECK(nslabs == 7 && adv_n == 0 && adv_ring_reads >= nslabs - 1,
             "O_DIRECT sweep: %lld slabs, %d advice calls, %d ring reads "
             "(expected 7, 0, >= 6)", (long long)nslabs, adv_n,
             adv_ring_reads);
    adv_unwrap(f);
    slab_file_close(f, a, ctx);
}

static void test_slab_advice(void)
{
    /* slab_file's array: 509 rows of doubles, one ghost column */
    const int64_t rows = 509, g = 1, es = 8, width = 6;
    passion_ctx *ctx;
    passion_array *a;
    passion_file *f =
        slab_file(PASSION_ENGINE_AUTO, 0, rows, "advice", &ctx, &a);
    if (!f)
        return;
    adv_wrap(f);
    TH_CHECK(adv_real->advise != NULL, "the posix driver gives advice");
    const int64_t cb = (rows + 2 * g) * es, n = 40;
    const int64_t ras[4] = {0, 2 * cb, 6 * cb, 1 << 30};
    for (int ri = 0; ri < 4; ri++) {
        adv_ra = ras[ri];
        adv_n = 0;
        adv_sweep(f, width);
        int want = 0;
        for (int64_t start = width; start < n; start += width) {
            int64_t count = n - start < width ? n - start : width;
            int64_t off = f->fv.base + (start + 2 * g) * cb;
            int64_t span = count * cb;
            if (adv_ra >= span)
                continue;
            TH_CHECK(want < adv_n && adv_off[want] == off + adv_ra &&
                         adv_len[want] == span - adv_ra,
                     "readahead %lld: advice %d of %d is (%lld, %lld), "
                     "expected (%lld, %lld)",
                     (long long)adv_ra, want, adv_n,
                     want < adv_n ? (long long)adv_off[want] : -1LL,
                     want < adv_n ? (long long)adv_len[want] : -1LL,
                     (long long)(off + adv_ra), (long long)(span - adv_ra));
            want++;
        }
        TH_CHECK(adv_n == want, "readahead %lld: %d advice calls, expected "
                 "%d", (long long)adv_ra, adv_n, want);
    }
    adv_unwrap(f);
    slab_file_close(f, a, ctx);
    slab_advice_direct();
}

static CU_TestInfo async_tests[] = {
    {"engine choice and fallback", test_engine_choice},
    {"async = sync, io_uring", test_async_uring},
    {"async = sync, thread", test_async_thread},
    {"async with O_DIRECT, both engines", test_async_direct_io},
    {"async errors, both engines", test_async_errors},
    CU_TEST_INFO_NULL,
};


/* A failing read or write in the middle of a sweep comes back, no hang. */
static void test_slab_faults(void)
{
    for (int e = 0; e < 2; e++)
        for (int at = 2; at <= 6; at += 2) {
            passion_ctx *ctx;
            th_init(&ctx, "engine=%s,driver=fault",
                    passion_engine_name(engines[e]));
            int64_t shape[2] = {32, 12 * th_size};
            passion_array *a = mkarray(ctx, 2, shape, 4, PASSION_COL_MAJOR, 1);
            char p1[512], p2[512];
            snprintf(p1, sizeof p1, "%s/sf-in%d.%%d", th_dir(), e);
            snprintf(p2, sizeof p2, "%s/sf-out%d.%%d", th_dir(), e);
            passion_file *fi, *fo;
            passion_file_open(a, p1, PASSION_MODE_CREATE, &fi);
            passion_file_open(a, p2, PASSION_MODE_CREATE, &fo);
            /* arm the fault now: count from the sweep's first request */
            /* (the test reaches into the context: internals) */
            ctx->opt.fault_fail_at = at;
            core_fault_rearm(ctx);
            passion_slab_opts so;
            passion_slab_opts_init(&so);
            so.width = 2;
            so.out = fo;
            passion_slab_iter *it = NULL;
            int rc = passion_slab_open(fi, &so, &it), got;
            passion_slab sl;
            int n = 0;
            while (!rc && (got = passion_slab_next(it, &sl)) == 1)
                n++;
            int erc = passion_slab_close(it);
            int final = rc ? rc : (got < 0 ? got : erc);
            TH_CHECK(final == PASSION_EIO, "fault at %d (%s): rc %d after %d "
                     "slabs", at, passion_engine_name(engines[e]), final, n);
            TH_CHECK(passion_ctx_errdetail(ctx)[0] != '\0', "no detail");
            ctx->opt.fault_fail_at = 0;
            passion_file_close(fi);
            passion_file_close(fo);
            passion_array_free(a);
            passion_finalize(ctx);
        }
}


/*
 * An O_DIRECT slab sweep whose buffers fill the budget (memory-limited
 * prefetch): an 8-bit local array of rows of 100003 bytes
 * (ghosts included: no row, slab or file end falls on a page), slabs of
 * rows with halo 1, the width from the budget (two buffers, prefetch) or
 * (no prefetch) the same width; the buffers fill the budget, so no slab
 * read has a bounce and every one is a shifted O_DIRECT read, its edge
 * pages from the context's pool (synchronous: the first slab and without
 * prefetch; asynchronous: the rest). Checked: every slab's
 * buffer (halos and ghost columns included) against the model written to
 * the file (seeded), the sweep reaches the file's last row, and the
 * file's page cache, dropped before the sweep, is still empty after it
 * (before, these reads went through the buffered descriptor: checked on
 * the base, the cache then held the file). Both engines, P ranks.
 */
static void test_slab_shifted(void)
{
    const int64_t cols = 100001, rows = 40, rowb = cols + 2;
    th_case_seed = th_seed * 5 + 0x5B1F7;
    for (int e = 0; e < 2; e++)
        for (int prefetch = 1; prefetch >= 0; prefetch--) {
            const int64_t width = 5;
            int64_t budget = 2 * (width + 2) * rowb;
            passion_ctx *ctx = mkctx(engines[e], budget, 1);
            int64_t shape[2] = {rows * th_size, cols};
            passion_array *a = mkarray(ctx, 2, shape, 1, PASSION_ROW_MAJOR, 1);
            char p1[512];
            snprintf(p1, sizeof p1, "%s/slab-shift-%d.%%d", th_dir(), e);
            passion_file *fi = NULL;
            int rc = passion_file_open(a, p1, PASSION_MODE_CREATE, &fi);
            TH_CHECK(rc == 0, "open: %s", passion_ctx_errdetail(ctx));
            int64_t fb;
            passion_array_local_bytes(a, th_rank, &fb);
            TH_CHECK(fb == (rows + 2) * rowb, "local bytes %lld",
                     (long long)fb);
            unsigned char *model = malloc((size_t)fb);
            fill(model, fb, th_case_seed + 31 * (uint64_t)th_rank);
            rc = passion_file_write_local(fi, model);
            TH_CHECK(rc == 0, "write: %s", passion_ctx_errdetail(ctx));
            passion_file_sync(fi);
            passion_file_drop_cache(fi);
            char path[520];
            snprintf(path, sizeof path, p1, th_rank);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            int dropped = fd >= 0 && core_posix_cached(fd, 0, fb) == 0;
            passion_slab_opts o;
            passion_slab_opts_init(&o);
            o.prefetch = prefetch;
            o.width = prefetch ? 0 : width;
            o.method = PASSION_METHOD_DIRECT;
            passion_slab_iter *it = NULL;
            rc = passion_slab_open(fi, &o, &it);
            TH_CHECK(rc == 0, "slab_open: %s", passion_ctx_errdetail(ctx));
            passion_slab sl;
            int64_t at = 0, bad = 0, n = 0;
            while (it && (rc = passion_slab_next(it, &sl)) == 1) {
                /* rows [start - 1, start + count + 1) of the file (its
                   first row is the ghost row above row 0) */
                bad += sl.start != at ||
                       memcmp(sl.in, model + sl.start * rowb,
                              (size_t)((sl.count + 2) * rowb)) != 0;
                at += sl.count;
                n++;
            }
            TH_CHECK(rc == 0, "slab_next (%s, prefetch %d): %s",
                     passion_engine_name(engines[e]), prefetch,
                     passion_ctx_errdetail(ctx));
            TH_CHECK(bad == 0 && at == rows && n >= 8,
                     "%s engine, prefetch %d: %lld of %lld slabs differ from "
                     "the model, %lld of %lld rows swept",
                     passion_engine_name(engines[e]), prefetch,
                     (long long)bad, (long long)n, (long long)at,
                     (long long)rows);
            rc = passion_slab_close(it);
            TH_CHECK(rc == 0, "slab_close: %s", passion_ctx_errdetail(ctx));
            if (dropped && fi->fh->align > 1) {
                int pm = core_posix_cached(fd, 0, fb);
                TH_CHECK(pm == 0, "%s engine, prefetch %d: %d per mille of "
                         "the file in the page cache after an O_DIRECT "
                         "sweep (the buffered descriptor was used)",
                         passion_engine_name(engines[e]), prefetch, pm);
            }
            if (fd >= 0)
                close(fd);
            free(model);
            passion_file_close(fi);
            passion_array_free(a);
            passion_finalize(ctx);
        }
}

/*
 * Aligned slabs: an O_DIRECT output whose columns are
 * not page multiples (1536 one-byte rows: a page every 8 columns). With
 * prefetch, every slab boundary but 0 and n lies at an aligned file
 * offset, no slab exceeds the width, the output equals the model (and
 * the sweep without prefetch), and the output file's page cache, dropped
 * before the sweep, holds at most the first and last slabs' pages after
 * it: the middle slabs were written O_DIRECT (before, every write was
 * unaligned and went through the page cache: about 1000 per mille).
 * With io_uring and prefetch, the sweep makes at most one submitting
 * system call per slab (plus one). Both engines, P ranks.
 */
static void test_slab_aligned(void)
{
    const int64_t rows = 1536, lcols = 400, g = 2, width = 64;
    th_case_seed = th_seed * 7 + 0xA11C;
    for (int e = 0; e < 2; e++)
        for (int prefetch = 1; prefetch >= 0; prefetch--) {
            passion_ctx *ctx = mkctx(engines[e], 4 << 20, 1);
            passion_array_spec sp;
            int64_t shape[2] = {rows, lcols * th_size};
            passion_array_spec_init(&sp, 2, shape, 1);
            sp.storage = PASSION_COL_MAJOR;
            sp.grid[1] = th_size;
            sp.dist[0] = PASSION_DIST_COLLAPSED;
            sp.ghost[1] = g;
            passion_array *a = NULL;
            int rc = passion_array_create(ctx, &sp, &a);
            TH_CHECK(rc == 0, "array: %s", passion_ctx_errdetail(ctx));
            char p1[512], p2[512];
            snprintf(p1, sizeof p1, "%s/slab-al-in-%d.%%d", th_dir(), e);
            snprintf(p2, sizeof p2, "%s/slab-al-out-%d-%d.%%d", th_dir(), e,
                     prefetch);
            passion_file *fi = NULL, *fo = NULL;
            rc = passion_file_open(a, p1, PASSION_MODE_CREATE, &fi);
            if (!rc)
                rc = passion_file_open(a, p2, PASSION_MODE_CREATE, &fo);
            TH_CHECK(rc == 0, "open: %s", passion_ctx_errdetail(ctx));
            int64_t fb, ext = lcols + 2 * g;
            passion_array_local_bytes(a, th_rank, &fb);
            TH_CHECK(fb == ext * rows, "local bytes %lld", (long long)fb);
            unsigned char *model = malloc((size_t)fb),
                          *want = calloc(1, (size_t)fb),
                          *got = malloc((size_t)fb);
            fill(model, fb, th_case_seed + 131 * (uint64_t)th_rank);
            rc = passion_file_write_local(fi, model);
            if (!rc)
                rc = passion_file_write_local(fo, want); /* zeros */
            TH_CHECK(rc == 0, "write: %s", passion_ctx_errdetail(ctx));
            /* out column j (interior) = in[j-2] + 3 in[j] + in[j+2] */
            for (int64_t j = 0; j < lcols; j++)
                for (int64_t i = 0; i < rows; i++)
                    want[(j + g) * rows + i] =
                        (unsigned char)(model[j * rows + i] +
                                        3 * model[(j + g) * rows + i] +
                                        model[(j + 2 * g) * rows + i]);
            passion_file_sync(fo);
            passion_file_drop_cache(fo);
            char path[520];
            snprintf(path, sizeof path, p2, th_rank);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            int dropped = fd >= 0 && core_posix_cached(fd, 0, fb) == 0;
            passion_slab_opts o;
            passion_slab_opts_init(&o);
            o.prefetch = prefetch;
            o.width = width;
            o.out = fo;
            passion_slab_iter *it = NULL;
            int64_t enters0 = core_aio_enters(ctx);
            rc = passion_slab_open(fi, &o, &it);
            TH_CHECK(rc == 0, "slab_open: %s", passion_ctx_errdetail(ctx));
            passion_slab sl;
            int64_t at = 0, badlay = 0, n = 0, first = 0, last = 0;
            while (it && (rc = passion_slab_next(it, &sl)) == 1) {
                int64_t off = fo->fv.base + (sl.start + g) * rows;
                badlay += sl.start != at || sl.count < 1 ||
                          sl.count > width ||
                          (prefetch && fo->fh->align > 1 && sl.start > 0 &&
                           off % fo->fh->align != 0);
                if (sl.index == 0)
                    first = sl.count;
                last = sl.count;
                const unsigned char *in = sl.in;
                unsigned char *out = sl.out;
                int64_t b0 = sl.mem.offset[1];
                for (int64_t j = 0; j < sl.count; j++)
                    for (int64_t i = 0; i < rows; i++)
                        out[(b0 + j) * rows + i] =
                            (unsigned char)(in[(b0 + j - g) * rows + i] +
                                            3 * in[(b0 + j) * rows + i] +
                                            in[(b0 + j + g) * rows + i]);
                at += sl.count;
                n++;
            }
            TH_CHECK(rc == 0, "slab_next (%s, prefetch %d): %s",
                     passion_engine_name(engines[e]), prefetch,
                     passion_ctx_errdetail(ctx));
            rc = passion_slab_close(it);
            TH_CHECK(rc == 0, "slab_close: %s", passion_ctx_errdetail(ctx));
            int64_t enters = core_aio_enters(ctx) - enters0;
            /* io_uring: the write a call starts and the next slab's read
               go to the kernel in one system call (before: one each, 23
               for these 12 slabs) */
            TH_CHECK(!prefetch || enters <= n + 1,
                     "%s engine: %lld submitting system calls for %lld "
                     "slabs, at most %lld expected",
                     passion_engine_name(engines[e]), (long long)enters,
                     (long long)n, (long long)(n + 1));
            TH_CHECK(badlay == 0 && at == lcols && n >= 6,
                     "%s engine, prefetch %d: %lld of %lld slabs misplaced, "
                     "unaligned or wider than %lld; %lld of %lld columns",
                     passion_engine_name(engines[e]), prefetch,
                     (long long)badlay, (long long)n, (long long)width,
                     (long long)at, (long long)lcols);
            if (dropped && prefetch && fo->fh->align > 1) {
                /* the first and last slabs' columns, the ghosts and an
                   edge page at each end */
                int64_t may = (first + last + 2 * g) * rows + 2 * 4096;
                int pm = core_posix_cached(fd, 0, fb);
                TH_CHECK(pm >= 0 && pm <= 1000 * may / fb + 1,
                         "%s engine: %d per mille of the output in the page "
                         "cache after an O_DIRECT sweep, at most %lld "
                         "expected (first slab %lld, last %lld columns)",
                         passion_engine_name(engines[e]), pm,
                         (long long)(1000 * may / fb + 1), (long long)first,
                         (long long)last);
            }
            if (fd >= 0)
                close(fd);
            rc = passion_file_read_local(fo, got);
            TH_CHECK(rc == 0 && memcmp(got, want, (size_t)fb) == 0,
                     "%s engine, prefetch %d: output differs from the model",
                     passion_engine_name(engines[e]), prefetch);
            free(model);
            free(want);
            free(got);
            passion_file_close(fi);
            passion_file_close(fo);
            passion_array_free(a);
            passion_finalize(ctx);
        }
}

/*
 * Registered buffers: an O_DIRECT sweep with prefetch on
 * io_uring reads and writes its slabs as READ_FIXED / WRITE_FIXED on the
 * iterator's buffers (core_aio_fixed counts them): at least the n - 1
 * prefetched reads and the n writes of n slabs (before: none, every
 * request pinned the pages itself). A sweep that moves less than twice
 * its buffers' bytes registers nothing (registering costs more than it
 * saves), and the thread engine never does. Every output equals the model
 * (out column j = in[j-1] + 3 in[j] + in[j+1], computed in memory), and
 * the buffers are unregistered at close (a second iterator registers
 * again: the ring's table does not fill up).
 */
static void test_slab_fixed(void)
{
    const int64_t rows = 4096, lcols = 96, g = 1;
    th_case_seed = th_seed * 7 + 0xF1ED;
    for (int e = 0; e < 2; e++)
        for (int wi = 0; wi < 2; wi++) {
            /* width 8: 17 slabs of a 96-column sweep, buffers of 10
               columns (registered: 96 >= 2 x 2 x 10); width 40: buffers
               of 42 (not: 96 < 2 x 2 x 42) */
            const int64_t width = wi == 0 ? 8 : 40;
            passion_ctx *ctx = mkctx(engines[e], 8 << 20, 1);
            passion_array_spec sp;
            int64_t shape[2] = {rows, lcols * th_size};
            passion_array_spec_init(&sp, 2, shape, 1);
            sp.storage = PASSION_COL_MAJOR; /* page-sized columns */
            sp.grid[1] = th_size;
            sp.dist[0] = PASSION_DIST_COLLAPSED;
            sp.ghost[1] = g;
            passion_array *a = NULL;
            int rc = passion_array_create(ctx, &sp, &a);
            TH_CHECK(rc == 0, "array: %s", passion_ctx_errdetail(ctx));
            char p1[512], p2[512];
            snprintf(p1, sizeof p1, "%s/slab-fx-in-%d.%%d", th_dir(), e);
            snprintf(p2, sizeof p2, "%s/slab-fx-out-%d.%%d", th_dir(), e);
            passion_file *fi = NULL, *fo = NULL;
            rc = passion_file_open(a, p1, PASSION_MODE_CREATE, &fi);
            if (!rc)
                rc = passion_file_open(a, p2, PASSION_MODE_CREATE, &fo);
            TH_CHECK(rc == 0, "open: %s", passion_ctx_errdetail(ctx));
            int64_t fb;
            passion_array_local_bytes(a, th_rank, &fb);
            int64_t ext = fb / rows; /* columns with ghosts */
            unsigned char *model = malloc((size_t)fb),
                          *want = calloc(1, (size_t)fb),
                          *got = malloc((size_t)fb);
            fill(model, fb, th_case_seed + 131 * (uint64_t)th_rank);
            rc = passion_file_write_local(fi, model);
            if (!rc)
                rc = passion_file_write_local(fo, want);
            TH_CHECK(rc == 0, "write: %s", passion_ctx_errdetail(ctx));
            for (int64_t j = g; j < ext - g; j++)
                for (int64_t i = 0; i < rows; i++)
                    want[j * rows + i] =
                        (unsigned char)(model[(j - 1) * rows + i] +
                                        3 * model[j * rows + i] +
                                        model[(j + 1) * rows + i]);
            for (int round = 0; round < 2; round++) {
                passion_slab_opts o;
                passion_slab_opts_init(&o);
                o.width = width;
                o.out = fo;
                passion_slab_iter *it = NULL;
                int64_t fixed0 = core_aio_fixed(ctx);
                rc = passion_slab_open(fi, &o, &it);
                TH_CHECK(rc == 0, "slab_open: %s",
                         passion_ctx_errdetail(ctx));
                passion_slab sl;
                int64_t n = 0;
                while ((rc = passion_slab_next(it, &sl)) == 1) {
                    const unsigned char *in = sl.in;
                    unsigned char *out = sl.out;
                    int64_t r0 = sl.mem.shape[0];
                    int64_t b0 = sl.mem.offset[1];
                    for (int64_t j = 0; j < sl.count; j++)
                        for (int64_t i = 0; i < rows; i++)
                            out[(b0 + j) * r0 + i] = (unsigned char)(
                                in[(b0 + j - 1) * r0 + i] +
                                3 * in[(b0 + j) * r0 + i] +
                                in[(b0 + j + 1) * r0 + i]);
                    n++;
                }
                TH_CHECK(rc == 0, "slab_next: %s",
                         passion_ctx_errdetail(ctx));
                rc = passion_slab_close(it);
                TH_CHECK(rc == 0, "slab_close: %s",
                         passion_ctx_errdetail(ctx));
                int64_t fixed = core_aio_fixed(ctx) - fixed0;
                int direct = fi->fh->align > 1 && fo->fh->align > 1;
                if (engines[e] == PASSION_ENGINE_THREAD || wi == 1)
                    TH_CHECK(fixed == 0, "%s engine, width %lld: %lld "
                             "requests on registered buffers, none "
                             "expected", passion_engine_name(engines[e]),
                             (long long)width, (long long)fixed);
                else if (direct)
                    TH_CHECK(fixed >= 2 * n - 1,
                             "round %d: %lld requests on registered "
                             "buffers for %lld slabs, at least %lld "
                             "expected", round, (long long)fixed,
                             (long long)n, (long long)(2 * n - 1));
                else if (th_rank == 0 && round == 0)
                    printf("  (no O_DIRECT in %s: registered buffers not "
                           "checked)\n", th_dir());
                rc = passion_file_read_local(fo, got);
                TH_CHECK(rc == 0 && memcmp(got, want, (size_t)fb) == 0,
                         "%s engine, width %lld, round %d: output differs "
                         "from the model", passion_engine_name(engines[e]),
                         (long long)width, round);
            }
            free(model);
            free(want);
            free(got);
            passion_file_close(fi);
            passion_file_close(fo);
            passion_array_free(a);
            passion_finalize(ctx);
        }
}

/* "hg" (advised MADV_HUGEPAGE) in the VmFlags of the mapping holding p:
   1 yes, 0 no, -1 unknown (no smaps). */
static int vma_huge_advised(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    int in = 0, res = -1;
    uintptr_t a = (uintptr_t)p;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, ' ') &&
            line[strcspn(line, " ") - 1] != ':') {
            in = a >= lo && a < hi;
            continue;
        }
        if (in && !strncmp(line, "VmFlags:", 8)) {
            res = strstr(line, " hg") != NULL;
            break;
        }
    }
    fclose(f);
    return res;
}

/*
 * Slab buffers on huge pages: a slab buffer of 2 MiB or
 * more (staging, passion/stage.c) starts on a 2 MiB boundary and its
 * mapping is advised MADV_HUGEPAGE (VmFlags "hg" in /proc/self/smaps;
 * before: 4 KiB aligned, not advised, so an O_DIRECT request of 1 MiB was
 * 256 block-layer segments). Every slab's interior holds the model's
 * columns, with and without prefetch. Skipped where the kernel has no
 * transparent huge pages.
 */
static void test_slab_huge(void)
{
    const int64_t rows = 4096, lcols = 1200, width = 600;
    th_case_seed = th_seed * 7 + 0x4A6E;
    FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char mode[128] = "";
    if (thp) {
        if (!fgets(mode, sizeof mode, thp))
            mode[0] = 0;
        fclose(thp);
    }
    if (!thp || strstr(mode, "[never]")) {
        if (th_rank == 0)
            printf("  (no transparent huge pages: skipped)\n");
        return;
    }
    for (int prefetch = 0; prefetch < 2; prefetch++) {
        passion_ctx *ctx = mkctx(PASSION_ENGINE_URING, 32 << 20, 0);
        int64_t shape[2] = {rows, lcols * th_size};
        passion_array *a = mkarray(ctx, 2, shape, 1, PASSION_COL_MAJOR, 0);
        char p1[512];
        snprintf(p1, sizeof p1, "%s/slab-huge-%d.%%d", th_dir(), prefetch);
        passion_file *fi = NULL;
        int rc = passion_file_open(a, p1, PASSION_MODE_CREATE, &fi);
        TH_CHECK(rc == 0, "open: %s", passion_ctx_errdetail(ctx));
        int64_t fb;
        passion_array_local_bytes(a, th_rank, &fb);
        unsigned char *model = malloc((size_t)fb);
        fill(model, fb, th_case_seed + 131 * (uint64_t)th_rank);
        rc = passion_file_write_local(fi, model);
        TH_CHECK(rc == 0, "write: %s", passion_ctx_errdetail(ctx));
        passion_slab_opts o;
        passion_slab_opts_init(&o);
        o.prefetch = prefetch;
        o.ramp = 0;
        o.width = width;
        passion_slab_iter *it = NULL;
        rc = passion_slab_open(fi, &o, &it);
        TH_CHECK(rc == 0, "slab_open: %s", passion_ctx_errdetail(ctx));
        passion_slab sl;
        int64_t n = 0, bad = 0, unaligned = 0, unadvised = 0;
        while ((rc = passion_slab_next(it, &sl)) == 1) {
            const unsigned char *in = sl.in;
            for (int64_t j = 0; j < sl.count; j++)
                bad += memcmp(in + (sl.mem.offset[1] + j) * rows,
                              model + (sl.start + j) * rows,
                              (size_t)rows) != 0;
            unaligned += (uintptr_t)sl.in % (2u << 20) != 0;
            unadvised += vma_huge_advised(sl.in) == 0;
            n++;
        }
        TH_CHECK(rc == 0, "slab_next: %s", passion_ctx_errdetail(ctx));
        rc = passion_slab_close(it);
        TH_CHECK(rc == 0, "slab_close: %s", passion_ctx_errdetail(ctx));
        TH_CHECK(n == 2 && bad == 0, "prefetch %d: %lld slabs, %lld "
                 "columns differ from the model", prefetch, (long long)n,
                 (long long)bad);
        TH_CHECK(unaligned == 0 && unadvised == 0,
                 "prefetch %d: of %lld slab buffers of %lld bytes, %lld not "
                 "2 MiB aligned, %lld not advised MADV_HUGEPAGE", prefetch,
                 (long long)n, (long long)(width * rows),
                 (long long)unaligned, (long long)unadvised);
        free(model);
        passion_file_close(fi);
        passion_array_free(a);
        passion_finalize(ctx);
    }
}

/* Slabs on a rank that owns nothing: no division by a budget-derived
 * quantity that is zero there.
 * Before the fix: a slab iterator on a rank that owns nothing in another
 * dimension divided the budget by a zero slice size (SIGFPE at P > 1). */

static void test_slab_empty_rank(void)
{
    passion_ctx *ctx = th_ctx_budget(0);
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

static CU_TestInfo slab_tests[] = {
    {"slab iteration, io_uring", test_slab_uring},
    {"slab iteration, thread", test_slab_thread},
    {"slab width from the budget", test_slab_budget},
    {"slab ramp: narrow first and last slabs", test_slab_ramp},
    {"slab advice beyond the kernel's readahead", test_slab_advice},
    {"slab sweep with failing I/O, both engines", test_slab_faults},
    {"O_DIRECT slab sweep, buffers filling the budget", test_slab_shifted},
    {"O_DIRECT output, slab boundaries aligned", test_slab_aligned},
    {"O_DIRECT slab sweep on registered buffers", test_slab_fixed},
    {"slabs on a rank that owns nothing", test_slab_empty_rank},
    {"slab buffers on huge pages", test_slab_huge},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"async", NULL, NULL, NULL, NULL, async_tests},
    {"slabs", NULL, NULL, NULL, NULL, slab_tests},
    CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, suites);
}
