/*
 * test_api.c - the API 1.0 contract: the options handle (typed setters,
 * getter, list syntax, errors that change nothing), lifetimes enforced
 * with PASSION_ESTATE (and NULL handles as no-ops), the exclusive create
 * mode, the option file_format=raw, the version, reserved fields of the
 * growable structs, and the
 * wisdom files' calls (describe, merge; a file a context wrote).
 */
#include "harness.h"
#include "passion.h"

#include <errno.h>
#include <unistd.h>

/* rc is the same on every rank and equals want */
static int same_rc(int rc, int want)
{
    int mn, mx;
    MPI_Allreduce(&rc, &mn, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&rc, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return mn == mx && rc == want;
}

static int opt_is(const passion_options *o, const char *key, const char *want)
{
    char v[64];
    int rc = passion_options_get(o, key, v, sizeof v);
    if (rc || strcmp(v, want))
        fprintf(stderr, "[rank %d] %s = '%s' (rc %d), want '%s'\n", th_rank,
                key, rc ? "" : v, rc, want);
    return rc == 0 && !strcmp(v, want);
}

/* ------------------------------------------------------------- options */

static void test_options_handle(void)
{
    passion_options *o = NULL;
    TH_CHECK(passion_options_create(&o) == 0 && o, "create");
    /* defaults */
    TH_CHECK(opt_is(o, "memory_budget", "67108864") &&
                 opt_is(o, "driver", "posix") &&
                 opt_is(o, "exchange", "auto") &&
                 opt_is(o, "engine", "auto") && opt_is(o, "radix", "0") &&
                 opt_is(o, "io_latency", "0"),
             "defaults");
    /* text, with suffixes and names */
    TH_CHECK(passion_options_set(o, "memory_budget", "3M") == 0 &&
                 opt_is(o, "memory_budget", "3145728"), "3M");
    TH_CHECK(passion_options_set(o, "memory_budget", "2g") == 0 &&
                 opt_is(o, "memory_budget", "2147483648"), "2g");
    TH_CHECK(passion_options_set(o, "exchange", "FourStage-NB") == 0 &&
                 opt_is(o, "exchange", "fourstage-nb"), "enum by name");
    /* the names calls list what the options take, and end in NULL */
    int nx = 0, nd = 0;
    for (; passion_xchg_name((passion_xchg)nx); nx++)
        TH_CHECK(passion_options_set(o, "exchange",
                                     passion_xchg_name((passion_xchg)nx)) ==
                         0 && passion_options_set_int(o, "exchange", nx) ==
                         0 && opt_is(o, "exchange",
                                     passion_xchg_name((passion_xchg)nx)),
                 "exchange %d by its name", nx);
    for (; passion_driver_name((passion_driver)nd); nd++)
        TH_CHECK(passion_options_set(o, "driver",
                                     passion_driver_name((passion_driver)nd)) ==
                     passion_options_set_int(o, "driver", nd),
                 "driver %d by its name and by its value", nd);
    TH_CHECK(nx == PASSION_XCHG_TWOLEVEL + 1 &&
                 nd == PASSION_DRIVER_FAULT + 1 &&
                 !passion_xchg_name(PASSION_XCHG_DEFAULT) &&
                 passion_options_set_int(o, "exchange", nx) ==
                     PASSION_EINVAL &&
                 passion_options_set_int(o, "driver", nd) == PASSION_EINVAL,
             "%d algorithms, %d drivers", nx, nd);
    TH_CHECK(passion_options_set(o, "exchange", "FourStage-NB") == 0, "reset");
    TH_CHECK(passion_options_set(o, "io_latency", "2.5e-4") == 0 &&
                 opt_is(o, "io_latency", "0.00025000000000000001"),
             "real as text");
    /* typed setters */
    TH_CHECK(passion_options_set_int(o, "driver", PASSION_DRIVER_MPIIO) ==
                     0 && opt_is(o, "driver", "mpiio"), "enum as number");
    TH_CHECK(passion_options_set_int(o, "memory_budget", 4096) == 0 &&
                 opt_is(o, "memory_budget", "4096"), "set_int size");
    TH_CHECK(passion_options_set_double(o, "msg_beta", 1e-9) == 0 &&
                 opt_is(o, "msg_beta", "1.0000000000000001e-09"),
             "set_double");
#ifdef PASSION_TEST_HOOKS
    TH_CHECK(opt_is(o, "fault_ranks", "-1") &&
                 passion_options_set_int(o, "fault_fail_at", 7) == 0 &&
                 opt_is(o, "fault_fail_at", "7"), "test-only key");
#else
    /* a production build: the test-only keys and the fault driver are
       refused, naming the key and the build option */
    static const char *const test_keys[] = {
        "fault_fail_at", "fault_errno", "fault_short", "fault_ranks",
        "fault_alloc_at", "sim_net_latency_us", "sim_net_byte_ns"};
    for (size_t i = 0; i < sizeof test_keys / sizeof test_keys[0]; i++) {
        char v[64];
        int rc = passion_options_set(o, test_keys[i], "1");
        const char *d = passion_options_errdetail(o);
        TH_CHECK(rc == PASSION_EINVAL && strstr(d, test_keys[i]) &&
                     strstr(d, "-Dtest_hooks=true") &&
                     passion_options_get(o, test_keys[i], v, sizeof v) ==
                         PASSION_EINVAL,
                 "test-only key %s: rc %d, detail '%s'", test_keys[i], rc,
                 d);
    }
    TH_CHECK(passion_options_set(o, "driver", "fault") == PASSION_EINVAL &&
                 strstr(passion_options_errdetail(o), "-Dtest_hooks=true") &&
                 passion_options_set_int(o, "driver",
                                         PASSION_DRIVER_FAULT) ==
                     PASSION_EINVAL &&
                 passion_options_parse(o, "fault_fail_at=1") ==
                     PASSION_EINVAL,
             "driver fault refused: %s", passion_options_errdetail(o));
#endif

    /* every error: PASSION_EINVAL, a reason, nothing changed */
    struct { const char *k, *v; } bad[] = {
        {"nosuchkey", "1"},       {"memory_budget", "0"},
        {"memory_budget", "-5"},  {"memory_budget", "12Q"},
        {"memory_budget", "99999999999G"}, {"driver", "bogus"},
        {"direct_io", "2"},       {"verbosity", "x"},
        {"io_latency", "-1"},     {"io_latency", "inf"},
        {"engine", ""},           {"io_concurrency", "5000"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = passion_options_set(o, bad[i].k, bad[i].v);
        TH_CHECK(rc == PASSION_EINVAL &&
                     passion_options_errdetail(o)[0] != '\0',
                 "%s=%s: rc %d, detail '%s'", bad[i].k, bad[i].v, rc,
                 passion_options_errdetail(o));
    }
    TH_CHECK(strstr(passion_options_errdetail(o), "io_concurrency") != NULL,
             "detail names the key: %s", passion_options_errdetail(o));
    TH_CHECK(passion_options_set_int(o, "driver", 3) == PASSION_EINVAL &&
                 passion_options_set_int(o, "io_latency", 1) ==
                     PASSION_EINVAL &&
                 passion_options_set_double(o, "radix", 2.0) ==
                     PASSION_EINVAL &&
                 passion_options_set_double(o, "msg_alpha", -1) ==
                     PASSION_EINVAL &&
                 passion_options_set(o, NULL, "1") == PASSION_EINVAL &&
                 passion_options_set(o, "radix", NULL) == PASSION_EINVAL,
             "typed setters check the type and range");
    TH_CHECK(opt_is(o, "memory_budget", "4096") &&
                 opt_is(o, "driver", "mpiio") &&
                 opt_is(o, "io_latency", "0.00025000000000000001"),
             "failed setters changed nothing");
    /* a successful setter clears the reason */
    TH_CHECK(passion_options_set(o, "radix", "4") == 0 &&
                 passion_options_errdetail(o)[0] == '\0', "detail cleared");

    /* lists: all or nothing */
    TH_CHECK(passion_options_parse(o, "memory_budget=1M,engine=thread") ==
                     0 && opt_is(o, "memory_budget", "1048576") &&
                 opt_is(o, "engine", "thread"), "parse");
    TH_CHECK(passion_options_parse(o, "memory_budget=2M,bogus=1") ==
                     PASSION_EINVAL && opt_is(o, "memory_budget", "1048576"),
             "parse is all or nothing");
    TH_CHECK(passion_options_parse(o, "radix") == PASSION_EINVAL &&
                 passion_options_parse(o, "=3") == PASSION_EINVAL,
             "parse needs key=value");
    TH_CHECK(passion_options_parse(o, "") == 0, "empty list");

    /* getter: short buffer, unknown key */
    char small[4] = "xyz";
    TH_CHECK(passion_options_get(o, "memory_budget", small, sizeof small) ==
                     PASSION_ERANGE && small[0] == '\0', "short buffer");
    char v[32];
    TH_CHECK(passion_options_get(o, "nope", v, sizeof v) == PASSION_EINVAL,
             "get unknown key");
    TH_CHECK(strstr(passion_options_errdetail(o), "nope") != NULL,
             "a failed get says why: '%s'", passion_options_errdetail(o));

    /* a query has no side effects: after a failed setter, a get (of any
       key the handle knows, a random one) leaves the reason alone */
    static const char *const keys[] = {"memory_budget", "driver", "radix",
                                       "engine", "io_latency", "cb_ranks"};
    uint64_t rng = th_seed + 77;
    th_case_seed = rng;
    const char *key = keys[th_range(&rng, 0, 5)];
    TH_CHECK(passion_options_set(o, "memory_budget", "-3") ==
                     PASSION_EINVAL,
             "a bad budget");
    char before[256];
    snprintf(before, sizeof before, "%s", passion_options_errdetail(o));
    TH_CHECK(passion_options_get(o, key, v, sizeof v) == 0 &&
                 before[0] != '\0' &&
                 !strcmp(passion_options_errdetail(o), before),
             "get %s after a failed set: detail '%s', want '%s'", key,
             passion_options_errdetail(o), before);

    /* the context keeps its own copy */
    passion_ctx *ctx = NULL;
    int rc = passion_init(MPI_COMM_WORLD, o, &ctx);
    TH_CHECK(rc == 0, "init: %d", rc);
    passion_options_free(o);
    TH_CHECK(passion_ctx_option_get(ctx, "memory_budget", v, sizeof v) == 0 &&
                 !strcmp(v, "1048576"), "ctx copy: %s", v);
    TH_CHECK(passion_ctx_option_get(ctx, "engine", v, sizeof v) == 0 &&
                 !strcmp(v, "thread"), "ctx engine: %s", v);
    TH_CHECK(passion_ctx_option_get(ctx, "bogus", v, sizeof v) ==
                     PASSION_EINVAL &&
                 strstr(passion_ctx_errdetail(ctx), "bogus") != NULL,
             "ctx unknown key: %s", passion_ctx_errdetail(ctx));
    TH_CHECK(passion_finalize(ctx) == 0, "finalize");

    /* NULL options: the defaults, then PASSION_OPTIONS on top */
    setenv("PASSION_OPTIONS", "exchange=index,radix=3", 1);
    rc = passion_init(MPI_COMM_WORLD, NULL, &ctx);
    unsetenv("PASSION_OPTIONS");
    TH_CHECK(rc == 0 &&
                 passion_ctx_option_get(ctx, "exchange", v, sizeof v) == 0 &&
                 !strcmp(v, "index") &&
                 passion_ctx_option_get(ctx, "memory_budget", v, sizeof v) ==
                     0 && !strcmp(v, "67108864"),
             "defaults + environment");
    passion_finalize(ctx);
    TH_CHECK(passion_options_create(NULL) == PASSION_EINVAL &&
                 passion_options_free(NULL) == 0, "NULL handles");
}

/* ------------------------------------------------------------ lifetimes */

typedef struct fix {
    passion_ctx *ctx;
    passion_array *a;
    passion_file *f;
} fix;

static int fix_open(fix *x, int placement, const char *name, passion_mode m)
{
    memset(x, 0, sizeof *x);
    int rc = th_init(&x->ctx, "memory_budget=64K");
    int64_t shape[2] = {16, 8LL * th_size};
    passion_array_spec sp;
    passion_array_spec_init(&sp, 2, shape, 4);
    sp.grid[1] = th_size;
    sp.dist[0] = PASSION_DIST_COLLAPSED;
    sp.ghost[1] = placement == PASSION_PLACE_LOCAL ? 1 : 0;
    sp.placement = placement;
    char path[400];
    snprintf(path, sizeof path, "%s/%s", th_dir(), name);
    rc = rc ? rc : passion_array_create(x->ctx, &sp, &x->a);
    rc = rc ? rc : passion_file_open(x->a, path, m, &x->f);
    return rc;
}

static void fix_close(fix *x)
{
    TH_CHECK(passion_file_close(x->f) == 0, "close: %s",
             passion_ctx_errdetail(x->ctx));
    TH_CHECK(passion_array_free(x->a) == 0, "array_free");
    TH_CHECK(passion_finalize(x->ctx) == 0, "finalize");
}

static void test_lifetimes(void)
{
    fix x;
    int rc = fix_open(&x, PASSION_PLACE_LOCAL, "life.%d", PASSION_MODE_CREATE);
    TH_CHECK(rc == 0, "setup: %d", rc);
    if (rc)
        return;

    /* finalize with an array (and a file) left: refused everywhere, the
       context still works */
    rc = passion_finalize(x.ctx);
    TH_CHECK(same_rc(rc, PASSION_ESTATE) &&
                 strstr(passion_ctx_errdetail(x.ctx), "array") != NULL,
             "finalize with children: %d (%s)", rc,
             passion_ctx_errdetail(x.ctx));
    /* the array while its file is open */
    rc = passion_array_free(x.a);
    TH_CHECK(rc == PASSION_ESTATE, "array_free with open file: %d", rc);

    /* close with a request in flight on the last rank only: every rank
       refuses, the file stays usable */
    passion_section s;
    int64_t st[2] = {0, 0}, ct[2] = {16, 8};
    passion_section_set(&s, 2, st, ct, NULL);
    float buf[16 * 8];
    passion_request *r = NULL;
    if (th_rank == th_size - 1) {
        rc = passion_file_read_begin(x.f, &s, buf, NULL, PASSION_METHOD_AUTO,
                                     &r);
        TH_CHECK(rc == 0, "begin: %d", rc);
    }
    rc = passion_file_close(x.f);
    TH_CHECK(same_rc(rc, PASSION_ESTATE), "close with a request: %d", rc);
    if (th_rank == th_size - 1)
        TH_CHECK(strstr(passion_ctx_errdetail(x.ctx), "in flight") != NULL,
                 "detail: %s", passion_ctx_errdetail(x.ctx));
    TH_CHECK(passion_request_wait(r) == 0, "wait");
    TH_CHECK(passion_file_read(x.f, &s, buf, NULL, PASSION_METHOD_AUTO) == 0,
             "file still open after the refused close");

    /* output structs: reserved space comes back zero */
    passion_plan_info pi;
    memset(&pi, 0xff, sizeof pi);
    rc = passion_section_plan(x.f, &s, 0, PASSION_METHOD_AUTO, &pi);
    int zero = 1;
    for (size_t i = 0; i < sizeof pi.reserved / sizeof pi.reserved[0]; i++)
        zero &= pi.reserved[i] == 0;
    TH_CHECK(rc == 0 && zero && pi.requests > 0, "plan info: rc %d", rc);

    /* close with a slab iterator open (as input, and as output) */
    passion_slab_opts so;
    passion_slab_opts_init(&so);
    passion_slab_iter *it = NULL;
    rc = passion_slab_open(x.f, &so, &it);
    TH_CHECK(rc == 0, "slab_open: %d", rc);
    TH_CHECK(same_rc(passion_file_close(x.f), PASSION_ESTATE),
             "close with a slab iterator");
    passion_slab sl;
    while (passion_slab_next(it, &sl) == 1)
        ;
    TH_CHECK(passion_slab_close(it) == 0, "slab_close");

    /* reserved fields must be zero */
    passion_slab_opts_init(&so);
    so.reserved[3] = 1;
    it = NULL;
    TH_CHECK(passion_slab_open(x.f, &so, &it) == PASSION_EINVAL && !it,
             "nonzero reserved field");

    /* NULL handles are no-ops */
    TH_CHECK(passion_file_close(NULL) == 0 && passion_array_free(NULL) == 0 &&
                 passion_finalize(NULL) == 0 &&
                 passion_slab_close(NULL) == 0 &&
                 passion_part_close_all(NULL) == 0 &&
                 passion_request_wait(NULL) == 0,
             "NULL no-ops");
    fix_close(&x);

    /* a partition iterator keeps its global file open */
    rc = fix_open(&x, PASSION_PLACE_GLOBAL, "life.raw", PASSION_MODE_CREATE);
    TH_CHECK(rc == 0, "global setup: %d", rc);
    if (rc)
        return;
    passion_part_iter *pit = NULL;
    rc = passion_part_open(x.f, NULL, &pit);
    TH_CHECK(rc == 0, "part_open: %d", rc);
    TH_CHECK(same_rc(passion_file_close(x.f), PASSION_ESTATE),
             "close with a partition iterator");
    passion_part p;
    int got;
    while ((got = passion_part_next_all(pit, &p)) == 1)
        ;
    TH_CHECK(got == 0, "part_next_all end: %d", got);
    TH_CHECK(passion_part_close_all(pit) == 0, "part_close_all");
    fix_close(&x);
}

/* ------------------------------------------------------ exclusive create */

/* th_dir()/pat with its "%d" (if any) replaced by rank, in p */
static void rank_path(char *p, size_t len, const char *pat, int rank)
{
    snprintf(p, len, "%s/", th_dir());
    size_t n = strlen(p);
    const char *d = strstr(pat, "%d");
    if (d)
        snprintf(p + n, len - n, "%.*s%d%s", (int)(d - pat), pat, rank,
                 d + 2);
    else
        snprintf(p + n, len - n, "%s", pat);
}

static int exists(const char *pat, int rank)
{
    char p[400];
    rank_path(p, sizeof p, pat, rank);
    return access(p, F_OK) == 0;
}

static void rm(const char *pat, int rank)
{
    char p[400];
    rank_path(p, sizeof p, pat, rank);
    unlink(p);
}

static void excl_case(int placement, const char *pat)
{
    int local = placement == PASSION_PLACE_LOCAL;
    if (local || th_rank == 0)
        rm(pat, th_rank);
    MPI_Barrier(MPI_COMM_WORLD);
    fix x;
    int rc = fix_open(&x, placement, pat, PASSION_MODE_CREATE_EXCL);
    TH_CHECK(same_rc(rc, 0), "%s: exclusive create of new files: %d", pat,
             rc);
    if (!rc)
        fix_close(&x);
    else
        return;
    /* now they exist: every rank gets PASSION_EEXIST */
    rc = fix_open(&x, placement, pat, PASSION_MODE_CREATE_EXCL);
    TH_CHECK(same_rc(rc, PASSION_EEXIST) && x.f == NULL,
             "%s: exists: %d (%s)", pat, rc, passion_ctx_errdetail(x.ctx));
    TH_CHECK(strstr(passion_ctx_errdetail(x.ctx), "exists") != NULL,
             "detail: %s", passion_ctx_errdetail(x.ctx));
    passion_array_free(x.a);
    passion_finalize(x.ctx);
    if (local && th_size > 1) {
        /* only the last rank's file exists: nobody creates theirs */
        if (th_rank != th_size - 1)
            rm(pat, th_rank);
        MPI_Barrier(MPI_COMM_WORLD);
        rc = fix_open(&x, placement, pat, PASSION_MODE_CREATE_EXCL);
        TH_CHECK(same_rc(rc, PASSION_EEXIST), "one file exists: %d", rc);
        TH_CHECK(th_rank == th_size - 1 || !exists(pat, th_rank),
                 "rank %d created its file although the call failed",
                 th_rank);
        passion_array_free(x.a);
        passion_finalize(x.ctx);
    }
    /* create-or-truncate still works on existing files */
    rc = fix_open(&x, placement, pat, PASSION_MODE_CREATE);
    TH_CHECK(same_rc(rc, 0), "%s: create over existing: %d", pat, rc);
    if (!rc)
        fix_close(&x);
    TH_CHECK(strcmp(passion_strerror(PASSION_EEXIST), "file exists") == 0,
             "strerror");
}

static void test_create_excl(void)
{
    excl_case(PASSION_PLACE_LOCAL, "excl.%d.laf");
    excl_case(PASSION_PLACE_GLOBAL, "excl.raw");
    excl_case(PASSION_PLACE_GLOBAL, "excl.npy");
}

/* ---------------------------------------------------------- file_format */

/*
 * Option file_format=raw: a global file is raw whatever its name says.
 * Rank 0 writes random bytes beginning with HDF5's or netCDF's magic to
 * names whose extension and colon would otherwise select a format or an
 * object ("raw:x.h5", "y.nc"); each rank reads a random strided section of
 * an int32 2-D array at a random header offset with passion_file_read_all
 * and compares it with the file's bytes read by pread (the reference).
 * With the default (auto) the same opens are refused on every rank where
 * header_bytes is 0; a .h5 or .nc name with header_bytes > 0 is a raw
 * view in both (read and compared the same way).
 */
static void raw_case(const char *name, const char *magic, uint64_t *sd)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", th_dir(), name);
    int64_t shape[2] = {2 + (int64_t)(th_next(sd) % 9),
                        1 + (int64_t)(th_next(sd) % 13)};
    int64_t header = name[0] == 'y' ? 4 * (int64_t)(th_next(sd) % 9) : 0;
    size_t bytes = (size_t)(header + shape[0] * shape[1] * 4);
    unsigned char *file = malloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        file[i] = (unsigned char)th_next(sd);
    memcpy(file, magic, strlen(magic));
    if (th_rank == 0) {
        FILE *f = fopen(path, "wb");
        TH_CHECK(f && fwrite(file, 1, bytes, f) == bytes, "write %s", path);
        if (f)
            fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int raw = 0; raw < 2; raw++) {
        passion_ctx *ctx = NULL;
        TH_CHECK(th_init(&ctx, raw ? "file_format=raw" : "") == 0,
                 "context");
        if (!ctx)
            continue;
        passion_array *a = th_array(ctx, 2, shape, 4, PASSION_ROW_MAJOR,
                                    PASSION_PLACE_GLOBAL, header);
        passion_file *f = NULL;
        int rc = a ? passion_file_open(a, path, PASSION_MODE_RDONLY, &f)
                   : PASSION_EINVAL;
        TH_CHECK(th_same(rc), "%s: open codes differ between ranks", name);
        if (!raw && header == 0) {
            TH_CHECK(rc != 0, "%s: file_format=auto opened it as raw", name);
        } else if (rc == 0) {
            passion_section sec;
            memset(&sec, 0, sizeof sec);
            for (int d = 0; d < 2; d++) {
                sec.stride[d] = 1 + (int64_t)(th_next(sd) % 3);
                sec.start[d] = (int64_t)(th_next(sd) % (uint64_t)shape[d]);
                sec.count[d] = (shape[d] - 1 - sec.start[d]) / sec.stride[d]
                               + 1;
            }
            int32_t *buf = calloc((size_t)(sec.count[0] * sec.count[1]), 4);
            rc = passion_file_read_all(f, &sec, buf, NULL, PASSION_METHOD_AUTO);
            TH_CHECK(th_same(rc) && rc == 0, "%s: read rc %d", name, rc);
            int bad = 0;
            for (int64_t i = 0; !rc && i < sec.count[0]; i++)
                for (int64_t j = 0; j < sec.count[1]; j++) {
                    int64_t e = (sec.start[0] + i * sec.stride[0]) * shape[1] +
                                sec.start[1] + j * sec.stride[1];
                    bad += memcmp(&buf[i * sec.count[1] + j],
                                  file + header + e * 4, 4) != 0;
                }
            TH_CHECK(bad == 0, "%s: %d elements differ from the file's "
                     "bytes (header %lld)", name, bad, (long long)header);
            free(buf);
        } else {
            TH_CHECK(0, "%s: file_format=%s refused (header %lld): %s", name,
                     raw ? "raw" : "auto", (long long)header,
                     passion_ctx_errdetail(ctx));
        }
        passion_file_close(f);
        passion_array_free(a);
        passion_finalize(ctx);
    }
    free(file);
    MPI_Barrier(MPI_COMM_WORLD);
    if (th_rank == 0)
        unlink(path);
}

static void test_file_format_raw(void)
{
    uint64_t sd = th_case_seed;
    raw_case("raw:x.h5", "\x89HDF\r\n\x1a\n", &sd);
    raw_case("y.nc", "CDF\x05", &sd);
    raw_case("z.npy", "\x93NUMPY", &sd);
}

/* --------------------------------------------------------------- wisdom */

static void wpath(char *p, size_t n, const char *name)
{
    snprintf(p, n, "%s/%s", th_dir(), name);
}

static void wwrite(const char *name, const char *text)
{
    char p[512];
    wpath(p, sizeof p, name);
    FILE *f = fopen(p, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* the file's bytes (at most 4095), "" when there is none */
static const char *wread(const char *name)
{
    static char text[4096];
    char p[512];
    wpath(p, sizeof p, name);
    FILE *f = fopen(p, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = '\0';
    return text;
}

/* passion_wisdom_describe's text of name into buf; the code */
static int wdescribe(passion_ctx *ctx, const char *name, char *buf,
                     size_t len)
{
    char p[512];
    wpath(p, sizeof p, name);
    return passion_wisdom_describe(ctx, p, buf, len, NULL);
}

#define WHEAD "# passion wisdom 1\n"

/* independent: rank 0 alone reads and writes the files */
static void wisdom_files(passion_ctx *ctx)
{
    char a[512], b[512], m[512], bad[512], buf[2048];
    wpath(a, sizeof a, "wa");
    wpath(b, sizeof b, "wb");
    wpath(m, sizeof m, "wm");
    wpath(bad, sizeof bad, "wbad");
    unlink(m);
    wwrite("wa", WHEAD "exchange 2 1 2 1 12 11 127 0 3 0 7.2e-06\n"
                 "exchange 4 2 2 0 10 9 63 0 4 3 -1\n");
    wwrite("wb", WHEAD "exchange 2 1 2 1 12 11 127 0 5 0 1e-06\n");
    wwrite("wbad", WHEAD "exchange 2 1 2 1 12 11 127 0 5 0 1e-06\n"
                   "exchange 1 2 3\n");
    wwrite("wnot", "not wisdom\n");
    static const char want_a[] =
        "exchange  P=2 nodes=1 node_max=2 regular lmax<=2^12 mmax<=2^11 "
        "fit=0x7f -> a1 (7.2e-06 s measured)\n"
        "exchange  P=4 nodes=2 node_max=2 irregular lmax<=2^10 mmax<=2^9 "
        "fit=0x3f -> index radix=3 (not measured)\n"
        "2 records\n";
    /* the size first, then the text; a buffer one byte short: ERANGE */
    size_t need = 0;
    int rc = passion_wisdom_describe(ctx, a, NULL, 0, &need);
    TH_CHECK(rc == PASSION_ERANGE && need == sizeof want_a,
             "describe's size: rc %d, need %zu, want %zu", rc, need,
             sizeof want_a);
    rc = passion_wisdom_describe(ctx, a, buf, need, &need);
    TH_CHECK(rc == 0 && !strcmp(buf, want_a) &&
                 passion_ctx_errdetail(ctx)[0] == '\0',
             "describe: rc %d '%s'", rc, buf);
    rc = passion_wisdom_describe(ctx, a, buf, sizeof want_a - 1, &need);
    TH_CHECK(rc == PASSION_ERANGE && buf[0] == '\0' &&
                 need == sizeof want_a,
             "describe one byte short: rc %d, need %zu", rc, need);
    /* merge: the later input wins the shared signature, in its place */
    const char *in[] = {a, b};
    rc = passion_wisdom_merge(ctx, m, in, 2);
    TH_CHECK(rc == 0 && wdescribe(ctx, "wm", buf, sizeof buf) == 0 &&
                 strstr(buf, "P=2 nodes=1") &&
                 strstr(buf, "-> fourstage (1e-06 s measured)\n"
                             "exchange  P=4") &&
                 strstr(buf, "\n2 records\n"),
             "merge: rc %d '%s'", rc, buf);
    char before[4096];
    snprintf(before, sizeof before, "%s", wread("wm"));
    /* out among the inputs: read first, kept */
    const char *self[] = {m, b};
    rc = passion_wisdom_merge(ctx, m, self, 2);
    TH_CHECK(rc == 0 && !strcmp(wread("wm"), before),
             "merge of out with itself: rc %d '%s'", rc, wread("wm"));
    /* refusals change nothing */
    const char *withbad[] = {m, bad};
    rc = passion_wisdom_merge(ctx, m, withbad, 2);
    const char *d = passion_ctx_errdetail(ctx);
    TH_CHECK(rc == PASSION_EINVAL && strstr(d, "wbad") &&
                 strstr(d, "line 3") && !strcmp(wread("wm"), before),
             "merge of a malformed file: rc %d '%s'", rc, d);
    rc = wdescribe(ctx, "wbad", buf, sizeof buf);
    TH_CHECK(rc == PASSION_EINVAL && strstr(passion_ctx_errdetail(ctx),
                                            "line 3"),
             "describe of a malformed file: rc %d", rc);
    rc = wdescribe(ctx, "wnot", buf, sizeof buf);
    TH_CHECK(rc == PASSION_EFORMAT, "describe of a file not wisdom: %d", rc);
    wpath(bad, sizeof bad, "wnot");
    rc = passion_wisdom_merge(ctx, m, withbad, 2);
    TH_CHECK(rc == PASSION_EFORMAT && !strcmp(wread("wm"), before),
             "merge of a file not wisdom: rc %d", rc);
    rc = wdescribe(ctx, "wmissing", buf, sizeof buf);
    TH_CHECK(rc == PASSION_ENOENT && strstr(passion_ctx_errdetail(ctx),
                                            "wmissing"),
             "describe of a missing file: rc %d", rc);
    TH_CHECK(passion_wisdom_merge(ctx, NULL, in, 1) == PASSION_EINVAL &&
                 passion_wisdom_merge(ctx, m, NULL, 1) == PASSION_EINVAL &&
                 passion_wisdom_merge(ctx, m, in, -1) == PASSION_EINVAL &&
                 passion_wisdom_merge(NULL, m, in, 1) == PASSION_EINVAL &&
                 wdescribe(ctx, "wa", NULL, 8) == PASSION_EINVAL &&
                 !strcmp(wread("wm"), before),
             "NULL arguments");
    /* nin 0: out becomes wisdom with no records */
    rc = passion_wisdom_merge(ctx, m, NULL, 0);
    TH_CHECK(rc == 0 && !strcmp(wread("wm"), WHEAD) &&
                 wdescribe(ctx, "wm", buf, sizeof buf) == 0 &&
                 !strcmp(buf, "0 records\n"),
             "cleared: rc %d '%s'", rc, wread("wm"));
}

static void test_wisdom(void)
{
    passion_ctx *ctx = NULL;
    TH_CHECK(th_init(&ctx, NULL) == 0, "init");
    if (ctx && th_rank == 0)
        wisdom_files(ctx);
    passion_finalize(ctx);
    MPI_Barrier(MPI_COMM_WORLD);
    /* a file a context wrote: its records read as this run's signature
       (the exchange's keys as describe names them) */
    char w[512], buf[2048] = "", want[64];
    wpath(w, sizeof w, "wrun");
    if (th_rank == 0)
        unlink(w);
    MPI_Barrier(MPI_COMM_WORLD);
    TH_CHECK(th_init(&ctx, "planner=measure,wisdom=%s", w) == 0, "init");
    char sb[8 * 64] = {0}, rb[8 * 64];
    for (int k = 0; ctx && th_size <= 64 && k < 40; k++)
        TH_CHECK(passion_alltoall(ctx, sb, rb, 8, MPI_CHAR,
                                  PASSION_XCHG_AUTO, 0) == 0,
                 "alltoall %d", k);
    passion_finalize(ctx); /* rank 0 writes the file */
    MPI_Barrier(MPI_COMM_WORLD);
    TH_CHECK(th_init(&ctx, NULL) == 0, "init");
    if (ctx && th_rank == 0) {
        int rc = passion_wisdom_describe(ctx, w, buf, sizeof buf, NULL);
        snprintf(want, sizeof want, "exchange  P=%d nodes=", th_size);
        /* the record's line, after the saved calibration's lines (the
           exchange's message costs) where the run measured them */
        char wantnl[80];
        snprintf(wantnl, sizeof wantnl, "\n%s", want);
        TH_CHECK(rc == 0 &&
                     (!strncmp(buf, want, strlen(want)) ||
                      strstr(buf, wantnl)) &&
                     strstr(buf, " regular ") &&
                     /* 8-byte messages (none leave a lone rank) */
                     (th_size == 1 || strstr(buf, " mmax<=2^3 ")) &&
                     strstr(buf, " s measured)\n1 record\n"),
                 "the run's wisdom: rc %d '%s' (%s), want '%s...'", rc, buf,
                 passion_ctx_errdetail(ctx), want);
    }
    passion_finalize(ctx);
}

/* -------------------------------------------------------------- version */

static void test_version(void)
{
    int ma = -1, mi = -1, pa = -1;
    const char *s = passion_version(&ma, &mi, &pa);
    TH_CHECK(s && !strcmp(s, PASSION_VERSION_STRING) && !strcmp(s, "1.0.0"),
             "version string %s", s ? s : "(null)");
    TH_CHECK(ma == PASSION_VERSION_MAJOR && mi == PASSION_VERSION_MINOR &&
                 pa == PASSION_VERSION_PATCH && ma == 1 && mi == 0 && pa == 0,
             "version numbers %d.%d.%d", ma, mi, pa);
    TH_CHECK(passion_version(NULL, NULL, NULL) == s, "NULL pointers");
}

/* the MPI named by the library is the one running this test: checked
   against MPI_Get_library_version ("MPICH Version: 4.0.2" / "Open MPI
   v4.1.4"), with the version numbers in the same order */
static void test_mpi_build(void)
{
    const char *b = passion_mpi_build();
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    MPI_Get_library_version(lib, &len);
    TH_CHECK(b != NULL && passion_mpi_build() == b, "static string");
    if (!b)
        return;
    const char *ver = NULL;
    if (!strncmp(b, "MPICH ", 6)) {
        TH_CHECK(strstr(lib, "MPICH") != NULL, "built %s, running %s", b, lib);
        ver = b + 6;
    } else if (!strncmp(b, "Open MPI ", 9)) {
        TH_CHECK(strstr(lib, "Open MPI") != NULL, "built %s, running %s", b,
                 lib);
        ver = b + 9;
    } else {
        TH_CHECK(!strncmp(b, "MPI ", 4), "unknown form %s", b);
    }
    if (ver) /* the running library's version string contains the built one */
        TH_CHECK(strstr(lib, ver) != NULL, "built %s, running %s", b, lib);
#if defined(OPEN_MPI)
    TH_CHECK(!strncmp(b, "Open MPI ", 9), "this test: Open MPI, lib: %s", b);
#elif defined(MPICH_VERSION)
    TH_CHECK(!strncmp(b, "MPICH ", 6), "this test: MPICH, lib: %s", b);
#endif
}

/* ------------------------------------------------------ the launcher */

/* what launchers export: sizes (a job of several processes above 1),
   then ranks (not the first process above 0) */
static const char *const launch_vars[] = {
    "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
    "PMIX_RANK"};
#define NLAUNCH 5
#define NSIZEVARS 2

static char *launch_saved[NLAUNCH];

static void launch_save(void)
{
    for (int i = 0; i < NLAUNCH; i++) {
        const char *v = getenv(launch_vars[i]);
        launch_saved[i] = v ? strdup(v) : NULL;
        unsetenv(launch_vars[i]);
    }
}

static void launch_restore(void)
{
    for (int i = 0; i < NLAUNCH; i++) {
        if (launch_saved[i])
            setenv(launch_vars[i], launch_saved[i], 1);
        else
            unsetenv(launch_vars[i]);
        free(launch_saved[i]);
        launch_saved[i] = NULL;
    }
}

static void launch_clear(void)
{
    for (int i = 0; i < NLAUNCH; i++)
        unsetenv(launch_vars[i]);
}

/* passion_init on comm with the environment as it is now: 0 or the code,
   and the detail into why (the context, if any, finalized) */
static int init_on(MPI_Comm comm, char *why, size_t n)
{
    passion_ctx *ctx = NULL;
    int rc = passion_init(comm, NULL, &ctx);
    snprintf(why, n, "%s", passion_ctx_errdetail(ctx));
    if (rc)
        TH_CHECK(ctx == NULL, "no context after a failed init");
    passion_finalize(ctx);
    return rc;
}

/*
 * A launcher of another MPI, its variables set by hand (this MPI's own
 * launcher's removed): with MPI_COMM_WORLD of one rank, each of them
 * (a random value) makes passion_init fail with PASSION_EINVAL, no
 * context, and a detail (passion_ctx_errdetail(NULL)) naming the
 * variable and the launcher of the MPI passion was built with; on
 * MPI_COMM_SELF too. Accepted: a size of 1 or a rank of 0, and any
 * other launcher's variables when this MPI's own says the job has one
 * process (a launch nested in another's job). A successful init clears
 * the detail. With more ranks, no variable matters: MPI_COMM_WORLD, a
 * split of it and MPI_COMM_SELF are accepted.
 */
static void test_foreign_launcher(void)
{
    uint64_t rng = th_seed + 101;
    th_case_seed = rng;
    const int mpich = !strncmp(passion_mpi_build(), "MPICH", 5);
    const char *own = mpich ? "PMI_SIZE" : "OMPI_COMM_WORLD_SIZE";
    const char *use = mpich ? "start it with mpiexec.mpich"
                            : "start it with mpiexec.openmpi";
    char why[512], want[64], val[32];
    launch_save();
    if (th_size == 1) {
        int order[NLAUNCH];
        for (int i = 0; i < NLAUNCH; i++)
            order[i] = i;
        for (int i = NLAUNCH - 1; i > 0; i--) {
            int j = (int)th_range(&rng, 0, i), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int k = 0; k < NLAUNCH; k++) {
            int i = order[k], size = i < NSIZEVARS;
            long n = size ? th_range(&rng, 2, 4096) : th_range(&rng, 1, 4095);
            launch_clear();
            snprintf(val, sizeof val, "%ld", n);
            setenv(launch_vars[i], val, 1);
            snprintf(want, sizeof want, "%s=%ld", launch_vars[i], n);
            int rc = init_on(MPI_COMM_WORLD, why, sizeof why);
            TH_CHECK(rc == PASSION_EINVAL && strstr(why, want) &&
                         strstr(why, use) && strstr(why, "started by") &&
                         strstr(why, passion_mpi_build()),
                     "%s: rc %d, detail '%s'", want, rc, why);
            rc = init_on(MPI_COMM_SELF, why, sizeof why);
            TH_CHECK(rc == PASSION_EINVAL && strstr(why, want),
                     "%s, MPI_COMM_SELF: rc %d, detail '%s'", want, rc, why);
            /* one process, or the first */
            setenv(launch_vars[i], size ? "1" : "0", 1);
            rc = init_on(MPI_COMM_WORLD, why, sizeof why);
            TH_CHECK(rc == 0 && why[0] == '\0',
                     "%s=%s: rc %d, detail '%s' (want accepted, none)",
                     launch_vars[i], size ? "1" : "0", rc, why);
            /* nested in another launcher's job: this MPI's own variable
               says one process */
            if (strcmp(launch_vars[i], own)) {
                setenv(launch_vars[i], val, 1);
                setenv(own, "1", 1);
                rc = init_on(MPI_COMM_WORLD, why, sizeof why);
                TH_CHECK(rc == 0, "%s with %s=1: rc %d, detail '%s'", want,
                         own, rc, why);
            }
        }
        launch_clear();
        int rc = init_on(MPI_COMM_WORLD, why, sizeof why);
        TH_CHECK(rc == 0 && why[0] == '\0', "no launcher: rc %d, '%s'", rc,
                 why);
    } else {
        /* a correct launch: passion_init on parts of the world */
        launch_clear();
        snprintf(val, sizeof val, "%d", th_size + (int)th_range(&rng, 1, 9));
        setenv(mpich ? "OMPI_COMM_WORLD_SIZE" : "PMI_SIZE", val, 1);
        setenv("PMIX_RANK", "1", 1);
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, th_rank % 2, th_rank, &half);
        int rc = init_on(MPI_COMM_SELF, why, sizeof why);
        TH_CHECK(rc == 0, "MPI_COMM_SELF of %d ranks: rc %d, '%s'", th_size,
                 rc, why);
        rc = init_on(half, why, sizeof why);
        TH_CHECK(rc == 0, "a split: rc %d, '%s'", rc, why);
        rc = init_on(MPI_COMM_WORLD, why, sizeof why);
        TH_CHECK(rc == 0, "MPI_COMM_WORLD: rc %d, '%s'", rc, why);
        MPI_Comm_free(&half);
    }
    launch_restore();
    /* a NULL output pointer: the detail says so */
    int rc = passion_init(MPI_COMM_WORLD, NULL, NULL);
    TH_CHECK(rc == PASSION_EINVAL && passion_ctx_errdetail(NULL)[0] != '\0',
             "NULL ctx pointer: rc %d, detail '%s'", rc,
             passion_ctx_errdetail(NULL));
}

static CU_TestInfo tests[] = {
    {"options handle: setters, getter, lists, errors", test_options_handle},
    {"lifetimes: PASSION_ESTATE, NULL no-ops", test_lifetimes},
    {"PASSION_MODE_CREATE_EXCL", test_create_excl},
    {"file_format=raw: any global file as raw bytes", test_file_format_raw},
    {"wisdom files: describe, merge", test_wisdom},
    {"passion_version", test_version},
    {"passion_mpi_build", test_mpi_build},
    {"a launcher of another MPI is refused", test_foreign_launcher},
    CU_TEST_INFO_NULL,
};
static CU_SuiteInfo suites[] = {
    {"api", NULL, NULL, NULL, NULL, tests},
    CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, suites);
}
