/*
 * test_errors.c - every error path of the foundation: options, descriptor
 * validation (each collective call returns the same code on every rank,
 * also when one rank alone is wrong), sections and memory sides, file
 * modes, missing and short files, and I/O failures injected with the fault
 * driver (full disk, EIO, short counts), checking that a failed write
 * changes nothing outside its section.
 */
#include "harness.h"
#include "passion.h"
#include "../passion/core.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <unistd.h>

/* 1 if rc is the same on every rank and equals want. Collective. */
static int same_rc(int rc, int want)
{
    int mn, mx;
    MPI_Allreduce(&rc, &mn, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&rc, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return mn == mx && rc == want;
}

/* A context with the options of a "key=value,..." list (NULL: defaults). */
static passion_ctx *make_ctx(const char *o)
{
    passion_ctx *ctx = NULL;
    int rc = th_init(&ctx, "%s", o ? o : "");
    TH_CHECK(rc == 0, "init %d", rc);
    return ctx;
}

/* A 2-D (rows x 16*P) column-distributed local-placement spec. */
static void small_spec(passion_array_spec *sp, int64_t esize)
{
    int64_t shape[2] = {37, 16LL * th_size};
    passion_array_spec_init(sp, 2, shape, esize);
    sp->grid[1] = th_size;
    sp->dist[0] = PASSION_DIST_COLLAPSED;
    sp->storage = PASSION_COL_MAJOR;
    sp->ghost[0] = 1;
    sp->ghost[1] = 1;
}

/* o's value of key equals want */
static int opt_is(const passion_options *o, const char *key, const char *want)
{
    char v[64];
    return passion_options_get(o, key, v, sizeof v) == 0 && !strcmp(v, want);
}

static int ctx_opt_is(const passion_ctx *ctx, const char *key,
                      const char *want)
{
    char v[64];
    return passion_ctx_option_get(ctx, key, v, sizeof v) == 0 &&
           !strcmp(v, want);
}

static void test_options(void)
{
    passion_options *o;
    TH_CHECK(passion_options_create(&o) == 0, "create");
    TH_CHECK(passion_options_set(o, "memory_budget", "16M") == 0 &&
                 opt_is(o, "memory_budget", "16777216"), "budget 16M");
    TH_CHECK(passion_options_set(o, "memory_budget", "4KiB") == 0 &&
                 opt_is(o, "memory_budget", "4096"), "budget 4KiB");
    TH_CHECK(passion_options_set(o, "driver", "mpiio") == 0 &&
                 opt_is(o, "driver", "mpiio"), "driver");
    TH_CHECK(passion_options_set(o, "exchange", "index") == 0 &&
                 opt_is(o, "exchange", "index"), "exchange");
    TH_CHECK(passion_options_set(o, "nosuchkey", "1") == PASSION_EINVAL,
             "key");
    TH_CHECK(passion_options_set(o, "driver", "bogus") == PASSION_EINVAL &&
                 opt_is(o, "driver", "mpiio"), "drv");
    TH_CHECK(passion_options_set(o, "memory_budget", "0") == PASSION_EINVAL,
             "zero budget");
    TH_CHECK(passion_options_set(o, "memory_budget", "99999999999G") ==
                 PASSION_EINVAL && opt_is(o, "memory_budget", "4096"),
             "budget overflow");
    TH_CHECK(passion_options_parse(o, "verbosity") == PASSION_EINVAL,
             "no =");
    passion_options_free(o);
    TH_CHECK(strcmp(passion_strerror(PASSION_ENOSPC), "no space left on "
                    "device") == 0, "strerror");
    TH_CHECK(passion_strerror(-999) != NULL, "strerror unknown");

    /* a bad environment on one rank fails init on every rank */
    if (th_rank == th_size - 1)
        setenv("PASSION_OPTIONS", "memory_budget=1M,bogus=3", 1);
    passion_ctx *ctx = NULL;
    int rc = passion_init(MPI_COMM_WORLD, NULL, &ctx);
    TH_CHECK(same_rc(rc, PASSION_EINVAL) && ctx == NULL,
             "bad PASSION_OPTIONS: rc %d", rc);
    unsetenv("PASSION_OPTIONS");
    setenv("PASSION_OPTIONS", "memory_budget=2M,driver=mpiio", 1);
    rc = passion_init(MPI_COMM_WORLD, NULL, &ctx);
    TH_CHECK(rc == 0 && ctx_opt_is(ctx, "memory_budget", "2097152") &&
                 ctx_opt_is(ctx, "driver", "mpiio"),
             "PASSION_OPTIONS applied");
    unsetenv("PASSION_OPTIONS");
    passion_finalize(ctx);
}

static void expect_create(passion_ctx *ctx, const passion_array_spec *sp,
                          int want, const char *what)
{
    passion_array *a = NULL;
    int rc = passion_array_create(ctx, sp, &a);
    TH_CHECK(same_rc(rc, want), "%s: rc %d want %d (%s)", what, rc, want,
             passion_ctx_errdetail(ctx));
    if (want)
        TH_CHECK(a == NULL && strstr(passion_ctx_errdetail(ctx), "rank") != NULL,
                 "%s: detail '%s'", what, passion_ctx_errdetail(ctx));
    passion_array_free(a);
}

static void test_spec_errors(void)
{
    passion_ctx *ctx = make_ctx(NULL);
    passion_array_spec sp;
    small_spec(&sp, 4);
    expect_create(ctx, &sp, 0, "valid spec");
    small_spec(&sp, 4);
    sp.ndims = 0;
    expect_create(ctx, &sp, PASSION_EINVAL, "ndims 0");
    small_spec(&sp, 4);
    sp.ndims = 8;
    expect_create(ctx, &sp, PASSION_EINVAL, "ndims 8");
    small_spec(&sp, 4);
    sp.shape[0] = 0;
    expect_create(ctx, &sp, PASSION_EINVAL, "zero size");
    small_spec(&sp, 4);
    sp.shape[1] = -5;
    expect_create(ctx, &sp, PASSION_EINVAL, "negative size");
    small_spec(&sp, 0);
    expect_create(ctx, &sp, PASSION_EINVAL, "element size 0");
    small_spec(&sp, 65);
    expect_create(ctx, &sp, PASSION_EINVAL, "element size 65");
    small_spec(&sp, 4);
    sp.grid[1] = th_size + 1;
    expect_create(ctx, &sp, PASSION_EINVAL, "grid does not match");
    small_spec(&sp, 4);
    sp.grid[0] = 2;
    sp.grid[1] = th_size;
    expect_create(ctx, &sp, PASSION_EINVAL, "collapsed with 2 ranks");
    small_spec(&sp, 4);
    sp.dist[1] = PASSION_DIST_BLOCK;
    sp.block[1] = 1; /* 16*P columns, BLOCK(1) on P ranks covers only P */
    expect_create(ctx, &sp, PASSION_EINVAL, "BLOCK(m) not covering");
    small_spec(&sp, 4);
    sp.ghost[0] = -1;
    expect_create(ctx, &sp, PASSION_EINVAL, "negative ghost");
    small_spec(&sp, 4);
    sp.storage = PASSION_ORDER_CUSTOM;
    sp.order[0] = 0;
    sp.order[1] = 0;
    expect_create(ctx, &sp, PASSION_EINVAL, "order not a permutation");
    small_spec(&sp, 8);
    sp.shape[0] = 1LL << 40;
    sp.shape[1] = 1LL << 40;
    sp.grid[1] = 1;
    sp.dist[1] = PASSION_DIST_COLLAPSED;
    sp.placement = PASSION_PLACE_GLOBAL;
    expect_create(ctx, &sp, PASSION_EOVERFLOW, "2^80 bytes");
    /* one rank alone wrong: everybody fails alike */
    small_spec(&sp, 4);
    if (th_rank == th_size - 1)
        sp.elem_size = 100;
    expect_create(ctx, &sp, PASSION_EINVAL, "one rank invalid");
    if (th_size > 1) {
        small_spec(&sp, 4);
        sp.shape[0] += th_rank;
        expect_create(ctx, &sp, PASSION_EMISMATCH, "ranks disagree");
    }
    passion_finalize(ctx);
}

typedef struct fx {
    passion_ctx *ctx;
    passion_array *a;
    passion_file *f;
    char pat[300];
} fx;

static int fx_open(fx *x, const char *o, passion_mode mode)
{
    passion_array_spec sp;
    small_spec(&sp, 4);
    x->ctx = make_ctx(o);
    int rc = passion_array_create(x->ctx, &sp, &x->a);
    TH_CHECK(rc == 0, "create %d", rc);
    snprintf(x->pat, sizeof x->pat, "%s/err.%%d.laf", th_dir());
    return passion_file_open(x->a, x->pat, mode, &x->f);
}

static void fx_close(fx *x)
{
    passion_file_close(x->f);
    passion_array_free(x->a);
    passion_finalize(x->ctx);
}

static void sec2(passion_section *s, int64_t r0, int64_t rc, int64_t rs,
                 int64_t c0, int64_t cc, int64_t cs)
{
    memset(s, 0, sizeof *s);
    s->start[0] = r0;
    s->count[0] = rc;
    s->stride[0] = rs;
    s->start[1] = c0;
    s->count[1] = cc;
    s->stride[1] = cs;
}

static void test_section_errors(void)
{
    fx x;
    int rc = fx_open(&x, NULL, PASSION_MODE_CREATE);
    TH_CHECK(rc == 0, "open %d", rc);
    if (rc)
        return;
    float buf[64 * 64];
    passion_section s;
    struct {
        int64_t r0, rc, rs, c0, cc, cs;
        int want;
        const char *what;
    } t[] = {
        {0, 4, 0, 0, 2, 1, PASSION_EINVAL, "zero stride"},
        {0, 4, -1, 0, 2, 1, PASSION_EINVAL, "negative stride"},
        {0, -1, 1, 0, 2, 1, PASSION_EINVAL, "negative count"},
        {-1, 4, 1, 0, 2, 1, 0, "ghost row -1 is valid"},
        {-2, 4, 1, 0, 2, 1, PASSION_ERANGE, "below the ghost area"},
        {30, 4, 3, 0, 2, 1, PASSION_ERANGE, "past the end"},
        {0, 2, 1, 16, 2, 1, PASSION_ERANGE, "column past ghost"},
        {0, 3, INT64_MAX / 2 + 1, 0, 1, 1, PASSION_EOVERFLOW, "stride overflow"},
        {INT64_MAX - 1, 3, 1, 0, 1, 1, PASSION_EOVERFLOW, "start overflow"},
        {0, 0, 1, 0, 2, 1, 0, "empty section"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        sec2(&s, t[i].r0, t[i].rc, t[i].rs, t[i].c0, t[i].cc, t[i].cs);
        rc = passion_file_read(x.f, &s, buf, NULL, PASSION_METHOD_AUTO);
        TH_CHECK(rc == t[i].want, "%s: read rc %d want %d", t[i].what, rc,
                 t[i].want);
        rc = passion_file_write(x.f, &s, buf, NULL, PASSION_METHOD_SIEVE);
        TH_CHECK(rc == t[i].want, "%s: write rc %d want %d", t[i].what, rc,
                 t[i].want);
    }
    /* memory sides */
    passion_memspec m;
    memset(&m, 0, sizeof m);
    sec2(&s, 0, 4, 1, 0, 2, 1);
    m.shape[0] = 4;
    m.shape[1] = 2;
    m.offset[0] = 1;
    rc = passion_file_read(x.f, &s, buf, &m, PASSION_METHOD_AUTO);
    TH_CHECK(rc == PASSION_ERANGE, "memory side too small: %d", rc);
    m.offset[0] = -1;
    m.shape[0] = 8;
    rc = passion_file_read(x.f, &s, buf, &m, PASSION_METHOD_AUTO);
    TH_CHECK(rc == PASSION_EINVAL, "negative memory offset: %d", rc);
    rc = passion_file_read(x.f, &s, NULL, NULL, PASSION_METHOD_AUTO);
    TH_CHECK(rc == PASSION_EINVAL, "NULL buffer: %d", rc);
    rc = passion_file_read(x.f, &s, buf, NULL, PASSION_METHOD_ETP_DYNAMIC);
    TH_CHECK(rc == PASSION_EINVAL, "collective method independently: %d", rc);
    rc = passion_file_read(x.f, NULL, buf, NULL, PASSION_METHOD_AUTO);
    TH_CHECK(rc == PASSION_EINVAL, "NULL section: %d", rc);
    sec2(&s, 0, 0, 1, 0, 2, 1);
    rc = passion_file_read(x.f, &s, NULL, NULL, PASSION_METHOD_AUTO);
    TH_CHECK(rc == 0, "empty section with NULL buffer: %d", rc);
    /* counters: useful bytes of one read, reset */
    passion_counters c;
    passion_counters_reset(x.ctx);
    sec2(&s, 0, 5, 2, 0, 3, 1);
    rc = passion_file_read(x.f, &s, buf, NULL, PASSION_METHOD_AUTO);
    passion_counters_get(x.ctx, &c);
    TH_CHECK(rc == 0 && c.bytes_useful == 5 * 3 * 4 && c.io_calls > 0,
             "counters after read: useful %llu",
             (unsigned long long)c.bytes_useful);
    passion_counters_reset(x.ctx);
    passion_counters_get(x.ctx, &c);
    TH_CHECK(c.io_calls == 0 && c.bytes_read == 0, "counters reset");
    fx_close(&x);
}

static void test_file_errors(void)
{
    fx x;
    int rc = fx_open(&x, NULL, PASSION_MODE_CREATE);
    TH_CHECK(rc == 0, "create %d", rc);
    char mine[400];
    snprintf(mine, sizeof mine, "%s", passion_file_path(x.f));
    passion_file_close(x.f);
    x.f = NULL;

    /* read-only: writes refused */
    rc = passion_file_open(x.a, x.pat, PASSION_MODE_RDONLY, &x.f);
    TH_CHECK(rc == 0, "open rdonly %d", rc);
    float buf[64];
    passion_section s;
    sec2(&s, 0, 2, 1, 0, 2, 1);
    TH_CHECK(passion_file_write(x.f, &s, buf, NULL, 0) == PASSION_EACCES,
             "write on read-only file");
    TH_CHECK(passion_file_write_local(x.f, buf) == PASSION_EACCES,
             "write_local on read-only file");
    passion_file_close(x.f);
    x.f = NULL;

    /* modes must agree */
    if (th_size > 1) {
        int mode = th_rank == 0 ? PASSION_MODE_RDONLY : PASSION_MODE_RDWR;
        rc = passion_file_open(x.a, x.pat, mode, &x.f);
        TH_CHECK(same_rc(rc, PASSION_EMISMATCH) && !x.f, "mode mismatch %d",
                 rc);
    }
    /* one rank's file short: every rank fails with ESHORT */
    if (th_rank == 0)
        TH_CHECK(truncate(mine, 10) == 0, "truncate");
    rc = passion_file_open(x.a, x.pat, PASSION_MODE_RDWR, &x.f);
    TH_CHECK(same_rc(rc, PASSION_ESHORT) && !x.f, "short file: %d", rc);
    /* one rank's file missing: every rank fails with ENOENT */
    if (th_rank == th_size - 1)
        unlink(mine);
    MPI_Barrier(MPI_COMM_WORLD);
    rc = passion_file_open(x.a, x.pat, PASSION_MODE_RDONLY, &x.f);
    int want = th_size == 1 ? PASSION_ENOENT
                            : PASSION_ESHORT; /* rank 0 fails first */
    TH_CHECK(same_rc(rc, want), "missing file: %d want %d", rc, want);
    TH_CHECK(strstr(passion_ctx_errdetail(x.ctx), "rank") != NULL,
             "detail names a rank: %s", passion_ctx_errdetail(x.ctx));
    fx_close(&x);
}

#ifdef PASSION_TEST_HOOKS
/* Model check after a failed write: everything outside the section equal
   (the fault driver: test builds only). */
static void test_fault_injection(void)
{
    /* budget: two columns per sieve window */
    char o[160];
    snprintf(o, sizeof o, "driver=fault,fault_fail_at=3,fault_errno=%d,"
             "memory_budget=%d", ENOSPC, 37 * 4 * 2);
    fx x;
    int rc = fx_open(&x, o, PASSION_MODE_CREATE);
    TH_CHECK(rc == 0, "open %d", rc);
    if (rc)
        return;
    int64_t n = (37 + 2) * (16 + 2);
    uint32_t *orig = malloc(n * 4), *back = malloc(n * 4),
             *buf = malloc(n * 4);
    for (int64_t i = 0; i < n; i++)
        orig[i] = 0x1000 + (uint32_t)i;
    rc = passion_file_write_local(x.f, orig); /* call 1 */
    TH_CHECK(rc == 0, "write_local %d", rc);
    for (int64_t i = 0; i < n; i++)
        buf[i] = 0xdead0000u + (uint32_t)i;
    passion_section s;
    sec2(&s, 0, 10, 3, 0, 8, 2); /* strided: many runs */
    for (int method = 1; method <= 2; method++) {
        /* calls 2.. fail at the 3rd overall request of the context */
        rc = passion_file_write(x.f, &s, buf, NULL, method);
        if (method == 1) {
            TH_CHECK(rc == PASSION_ENOSPC, "direct write on full disk: %d",
                     rc);
            TH_CHECK(strstr(passion_ctx_errdetail(x.ctx), "offset") != NULL &&
                         strstr(passion_ctx_errdetail(x.ctx), ".laf") != NULL,
                     "detail names file and offset: %s",
                     passion_ctx_errdetail(x.ctx));
        }
    }
    /* read back with a plain posix context: outside the section intact */
    int fd = open(passion_file_path(x.f), O_RDONLY);
    TH_CHECK(fd >= 0 && pread(fd, back, n * 4, 0) == n * 4, "pread back");
    if (fd >= 0)
        close(fd);
    int bad = 0;
    for (int64_t c = 0; c < 18; c++)
        for (int64_t r = 0; r < 39; r++) {
            int64_t lr = r - 1, lc = c - 1, i = c * 39 + r;
            int in = lr >= 0 && lr < 30 && lr % 3 == 0 && lc >= 0 &&
                     lc < 16 && lc % 2 == 0;
            if (!in && back[i] != orig[i] && bad++ < 3)
                fprintf(stderr, "changed: r %lld c %lld: %x\n", (long long)lr,
                        (long long)lc, back[i]);
        }
    TH_CHECK(bad == 0, "%d elements outside the section changed", bad);
    fx_close(&x);

    /* EIO on a read; then short counts everywhere still read correctly */
    snprintf(o, sizeof o, "driver=fault,fault_fail_at=2,fault_errno=%d,"
             "memory_budget=%d", EIO, 37 * 4 * 2);
    rc = fx_open(&x, o, PASSION_MODE_CREATE);
    /* count from the data calls: the create's own requests (rank 0 also
       writes the set's description) are not what this case is about */
    if (!rc)
        core_fault_rearm(x.ctx);
    rc = rc ? rc : passion_file_write_local(x.f, orig); /* call 1 */
    TH_CHECK(rc == 0, "setup %d", rc);
    rc = passion_file_read_local(x.f, back); /* call 2 fails */
    TH_CHECK(rc == PASSION_EIO, "EIO: %d", rc);
    fx_close(&x);
    snprintf(o, sizeof o, "driver=fault,fault_short=1,memory_budget=%d",
             37 * 4 * 2);
    rc = fx_open(&x, o, PASSION_MODE_CREATE);
    rc = rc ? rc : passion_file_write_local(x.f, orig);
    passion_counters c;
    passion_counters_reset(x.ctx);
    rc = rc ? rc : passion_file_read_local(x.f, back);
    passion_counters_get(x.ctx, &c);
    TH_CHECK(rc == 0 && memcmp(back, orig, n * 4) == 0 && c.io_calls > 5,
             "short counts: rc %d calls %llu", rc,
             (unsigned long long)c.io_calls);
    /* the file shrinks behind passion's back: a read meets end of file */
    TH_CHECK(truncate(passion_file_path(x.f), 100) == 0, "truncate");
    sec2(&s, 0, 37, 1, 10, 2, 1);
    rc = passion_file_read(x.f, &s, buf, NULL, PASSION_METHOD_AUTO);
    TH_CHECK(rc == PASSION_ESHORT, "end of file: %d", rc);
    fx_close(&x);
    free(orig);
    free(back);
    free(buf);
}

#endif

/* Batched reads (io_uring with the posix driver): data, and end of file. */
static void test_batched_reads(void)
{
    fx x; /* io_latency: skip every hole, many requests per batch */
    int rc = fx_open(&x, "io_latency=1e-9", PASSION_MODE_CREATE);
    TH_CHECK(rc == 0, "open %d", rc);
    if (rc)
        return;
    int64_t n = (37 + 2) * (16 + 2);
    uint32_t *orig = malloc(n * 4), *buf = malloc(n * 4);
    for (int64_t i = 0; i < n; i++)
        orig[i] = 0x2000 + (uint32_t)i;
    rc = passion_file_write_local(x.f, orig);
    passion_section s;
    sec2(&s, 0, 10, 3, 0, 8, 2);
    passion_counters c;
    passion_counters_reset(x.ctx);
    rc = rc ? rc : passion_file_read(x.f, &s, buf, NULL, PASSION_METHOD_AUTO);
    passion_counters_get(x.ctx, &c);
    int bad = 0;
    for (int64_t j = 0; j < 8; j++)
        for (int64_t i = 0; i < 10; i++)
            bad += buf[j * 10 + i] != orig[(1 + 2 * j) * 39 + 1 + 3 * i];
    TH_CHECK(rc == 0 && bad == 0 && c.io_calls == 80,
             "batched strided read: rc %d, %d wrong, %llu requests", rc, bad,
             (unsigned long long)c.io_calls);
    /* the file shrinks: some pieces of a batch meet end of file */
    TH_CHECK(truncate(passion_file_path(x.f), 39 * 4 * 9) == 0, "truncate");
    rc = passion_file_read(x.f, &s, buf, NULL, PASSION_METHOD_AUTO);
    TH_CHECK(rc == PASSION_ESHORT, "batched read past end of file: %d", rc);
    fx_close(&x);
    free(orig);
    free(buf);
}

/* Different files or arrays in one collective call.
 * Before the fix: return code 0 on every rank and rank 0 read elements of
 * the other ranks' file (etp-static, etp-dynamic); different shapes were
 * accepted. */

static void test_mismatched_files(void)
{
    const int64_t shape[2] = {64, 64}, other[2] = {32, 128};
    const int64_t n = 64 * 64;
    passion_ctx *ctx = th_ctx_budget(0);
    passion_array *a = th_array(ctx, 2, shape, 8, PASSION_ROW_MAJOR,
                               PASSION_PLACE_GLOBAL, 0);
    passion_array *b = th_array(ctx, 2, other, 8, PASSION_ROW_MAJOR,
                               PASSION_PLACE_GLOBAL, 0);
    passion_array *c = th_array(ctx, 2, shape, 8, PASSION_COL_MAJOR,
                               PASSION_PLACE_GLOBAL, 0);
    passion_array *h = th_array(ctx, 2, shape, 8, PASSION_ROW_MAJOR,
                               PASSION_PLACE_GLOBAL, 64);
    passion_array *e4 = th_array(ctx, 2, (const int64_t[]){64, 128}, 4,
                                PASSION_ROW_MAJOR, PASSION_PLACE_GLOBAL, 0);
    passion_file *f1 = th_ramp_create(ctx, a, "one.raw", 1.0);
    passion_file *f2 = th_ramp_create(ctx, a, "two.raw", 100000.0);
    passion_file *fb = th_ramp_create(ctx, b, "b.raw", 1.0);
    passion_file *fc = th_ramp_create(ctx, c, "c.raw", 1.0);
    passion_file *fh = th_ramp_create(ctx, h, "h.raw", 1.0);
    /* the same file as f1 through another handle and another array of the
       same layout: that is the same file, the call must work */
    passion_array *a2 = th_array(ctx, 2, shape, 8, PASSION_ROW_MAJOR,
                                PASSION_PLACE_GLOBAL, 0);
    char p1[512];
    snprintf(p1, sizeof p1, "%s/one.raw", th_dir());
    passion_file *f1b = NULL;
    int rc = passion_file_open(a2, p1, PASSION_MODE_RDWR, &f1b);
    TH_CHECK(rc == 0, "reopen: %d", rc);
    passion_file *fe = NULL;
    rc = passion_file_open(e4, p1, PASSION_MODE_RDWR, &fe);
    TH_CHECK(rc == 0, "reopen as 4-byte: %d", rc);
    passion_array *d1 = th_array(ctx, 1, (const int64_t[]){n}, 8,
                                PASSION_ROW_MAJOR, PASSION_PLACE_GLOBAL, 0);
    passion_file *f1d = NULL;
    rc = passion_file_open(d1, p1, PASSION_MODE_RDWR, &f1d);
    TH_CHECK(rc == 0, "reopen as 1-D: %d", rc);
    double *buf = malloc(sizeof(double) * (size_t)n);
    passion_section all, small;
    passion_section_set(&all, 2, NULL, shape, NULL);
    passion_section_set(&small, 2, NULL, (const int64_t[]){8, 8}, NULL);
    for (int m = 0; m < TH_NMETH; m++) {
        /* whole files, rank 0 the first, the others the second */
        memset(buf, 0, sizeof(double) * (size_t)n);
        rc = passion_file_read_all(th_rank ? f2 : f1, &all, buf, NULL,
                                      th_meths[m]);
        TH_CHECK(th_same(rc), "%s: codes differ over ranks",
                 th_mnames[m]);
        if (th_size > 1) {
            TH_CHECK(rc == PASSION_EMISMATCH, "%s, two files: rc %d, %d "
                     "elements from the other file", th_mnames[m], rc,
                     th_ramp_bad(buf, n, th_rank ? 100000.0 : 1.0));
            rc = passion_file_write_all(th_rank ? f2 : f1, &all, buf,
                                           NULL, th_meths[m]);
            TH_CHECK(rc == PASSION_EMISMATCH, "%s, write two files: rc %d",
                     th_mnames[m], rc);
        } else {
            TH_CHECK(rc == 0 && th_ramp_bad(buf, n, 1.0) == 0,
                     "%s, one rank: rc %d", th_mnames[m], rc);
        }
        /* same file, two handles (rank 0 the second): fine */
        rc = passion_file_read_all(th_rank ? f1 : f1b, &all, buf, NULL,
                                      th_meths[m]);
        TH_CHECK(rc == 0 && th_ramp_bad(buf, n, 1.0) == 0,
                 "%s, one file through two handles: rc %d %s", th_mnames[m],
                 rc, passion_ctx_errdetail(ctx));
        /* different arrays: shape, storage order, header offset, element
           size (the same path for the last one) */
        passion_file *odd[5] = {fb, fc, fh, fe, f1d};
        static const char *what[5] = {"shape", "order", "header", "esize",
                                      "dimensions"};
        for (int k = 0; k < 5 && th_size > 1; k++) {
            rc = passion_file_read_all(th_rank == th_size - 1 ? odd[k]
                                                                 : f1,
                                          &small, buf, NULL, th_meths[m]);
            TH_CHECK(th_same(rc) && rc == PASSION_EMISMATCH,
                     "%s, different %s: rc %d", th_mnames[m], what[k], rc);
        }
    }
    /* the writes that were refused changed nothing */
    rc = passion_file_read_all(f2, &all, buf, NULL, PASSION_METHOD_DIRECT);
    TH_CHECK(rc == 0 && th_ramp_bad(buf, n, 100000.0) == 0,
             "second file changed");
    rc = passion_file_read_all(f1, &all, buf, NULL, PASSION_METHOD_DIRECT);
    TH_CHECK(rc == 0 && th_ramp_bad(buf, n, 1.0) == 0, "first file changed");
    free(buf);
    passion_file *fs[8] = {f1, f2, fb, fc, fh, f1b, fe, f1d};
    for (int k = 0; k < 8; k++)
        passion_file_close(fs[k]);
    passion_array *as[7] = {a, b, c, h, a2, e4, d1};
    for (int k = 0; k < 7; k++)
        passion_array_free(as[k]);
    passion_finalize(ctx);
}

/* Partitions need the grid.
 * Before the fix: passion_part_open accepted a global array whose grid
 * has one rank at P > 1 and gave every rank the whole partition (each
 * element computed P times). Chosen: PASSION_EINVAL at passion_part_open
 * (a PARTITIONED array with such a grid is refused at create already). */

static void test_part_grid(void)
{
    const int64_t shape[2] = {12, 10};
    passion_ctx *ctx = th_ctx_budget(16384);
    passion_array *a = th_array(ctx, 2, shape, 8, PASSION_ROW_MAJOR,
                               PASSION_PLACE_GLOBAL, 0);
    passion_file *f = th_ramp_create(ctx, a, "part1.raw", 0.0);
    passion_part_iter *it = NULL;
    int rc = passion_part_open(f, NULL, &it);
    TH_CHECK(th_same(rc), "part_open codes differ");
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
    passion_file *fg = th_ramp_create(ctx, g, "part2.raw", 0.0);
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

/* Over-long paths.
 * Before the fix: PASSION_EIO (ENAMETOOLONG) instead of PASSION_EINVAL. */

static void test_long_path(void)
{
    passion_ctx *ctx = th_ctx_budget(0);
    const int64_t shape[1] = {8};
    passion_array *g = th_array(ctx, 1, shape, 8, PASSION_ROW_MAJOR,
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
            TH_CHECK(th_same(rc) && rc == PASSION_EINVAL && !f,
                     "%s path, mode %d: rc %d %s",
                     k ? "component too long" : "too long", mode, rc,
                     passion_ctx_errdetail(ctx));
        }
    }
    free(p);
    passion_array_free(g);
    passion_finalize(ctx);
}

/* Empty sections with a huge count elsewhere.
 * Before the fix: count {INT64_MAX, 0} gave PASSION_EOVERFLOW. */

static void test_empty_huge(void)
{
    passion_ctx *ctx = th_ctx_budget(0);
    const int64_t shape[2] = {4, 4};
    passion_array *a = th_array(ctx, 2, shape, 8, PASSION_ROW_MAJOR,
                               PASSION_PLACE_GLOBAL, 0);
    passion_file *f = th_ramp_create(ctx, a, "empty.raw", 0.0);
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
        for (int m = 0; m < TH_NMETH; m++) {
            rc = passion_file_read_all(f, &s, &x, NULL, th_meths[m]);
            TH_CHECK(rc == 0, "case %d %s: %d %s", k, th_mnames[m], rc,
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

/* passion_ctx_errdetail after a later successful call.
 * Before the fix: the old detail stayed. */

static void test_errdetail_cleared(void)
{
    passion_ctx *ctx = th_ctx_budget(0);
    const int64_t shape[2] = {4, 4};
    passion_array *a = th_array(ctx, 2, shape, 8, PASSION_ROW_MAJOR,
                               PASSION_PLACE_GLOBAL, 0);
    passion_file *f = th_ramp_create(ctx, a, "detail.raw", 0.0);
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

static CU_TestInfo tests[] = {
    {"options and PASSION_OPTIONS", test_options},
    {"descriptor validation, same code on every rank", test_spec_errors},
    {"section and memory-side validation, counters", test_section_errors},
    {"read-only, short and missing files, mode mismatch", test_file_errors},
#ifdef PASSION_TEST_HOOKS
    {"fault driver: full disk, EIO, short counts, EOF", test_fault_injection},
#endif
    {"batched reads: strided data, end of file", test_batched_reads},
    {"different files or arrays in one call", test_mismatched_files},
    {"partitions need a grid of P ranks", test_part_grid},
    {"paths longer than PATH_MAX", test_long_path},
    {"empty sections with huge counts", test_empty_huge},
    {"errdetail cleared by later calls", test_errdetail_cleared},
    CU_TEST_INFO_NULL,
};
static CU_SuiteInfo suites[] = {
    {"errors", NULL, NULL, NULL, NULL, tests},
    CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, suites);
}
