/* harness.c - see harness.h. */
#include "harness.h"

#include <stdarg.h>

#include <sys/stat.h>
#include <unistd.h>

int th_rank, th_size;
uint64_t th_seed = 20261121;
uint64_t th_case_seed;
static char dir[256];

void th_random_spec(uint64_t *s, int P, const int64_t *esizes, int nes,
                    passion_array_spec *sp)
{
    int nd = (int)th_range(s, 1, 4);
    int64_t shape[PASSION_MAX_DIMS];
    int64_t maxn = nd == 1 ? 300 : nd == 2 ? 40 : nd == 3 ? 12 : 7;
    for (int d = 0; d < nd; d++)
        shape[d] = th_range(s, 1, maxn);
    passion_array_spec_init(sp, nd, shape, esizes[th_range(s, 0, nes - 1)]);
    /* spread P's factors over the dimensions */
    int rest = P;
    for (int f = 2; rest > 1; f++)
        while (rest % f == 0) {
            sp->grid[th_range(s, 0, nd - 1)] *= f;
            rest /= f;
        }
    for (int d = 0; d < nd; d++) {
        int64_t n = shape[d], g = sp->grid[d];
        int kind = (int)th_range(s, 0, g > 1 ? 1 : 2);
        sp->dist[d] = kind;
        if (kind == PASSION_DIST_BLOCK && th_range(s, 0, 1))
            sp->block[d] = th_range(s, (n + g - 1) / g, n);
        else if (kind == PASSION_DIST_CYCLIC && th_range(s, 0, 1))
            sp->block[d] = th_range(s, 1, n);
        sp->ghost[d] = th_range(s, 0, n < 2 ? n : 2);
    }
    sp->storage = (int)th_range(s, 0, 2);
    if (sp->storage == PASSION_ORDER_CUSTOM) {
        for (int k = 0; k < nd; k++)
            sp->order[k] = k;
        for (int k = nd - 1; k > 0; k--) {
            int j = (int)th_range(s, 0, k), t = sp->order[k];
            sp->order[k] = sp->order[j];
            sp->order[j] = t;
        }
    }
}

int th_all(int ok)
{
    int in = ok ? 1 : 0, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return out;
}

int th_same(int rc)
{
    int v[2] = {rc, -rc}, r[2];
    MPI_Allreduce(v, r, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return r[0] == -r[1];
}

const passion_method th_meths[TH_NMETH] = {
    PASSION_METHOD_DIRECT, PASSION_METHOD_SIEVE, PASSION_METHOD_ETP_STATIC,
    PASSION_METHOD_ETP_DYNAMIC, PASSION_METHOD_AUTO};
const char *const th_mnames[TH_NMETH] = {"direct", "sieve", "etp-static",
                                         "etp-dynamic", "auto"};

passion_ctx *th_ctx_budget(int64_t budget)
{
    passion_ctx *ctx = NULL;
    int rc = budget > 0 ? th_init(&ctx, "memory_budget=%lld",
                                  (long long)budget)
                        : th_init(&ctx, "%s", "");
    TH_CHECK(rc == 0 && ctx, "passion_init (budget %lld): %d",
             (long long)budget, rc);
    return ctx;
}

passion_array *th_array(passion_ctx *ctx, int nd, const int64_t *shape,
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

static passion_options *options_va(const char *fmt, va_list ap)
{
    char list[1024] = "";
    if (fmt)
        vsnprintf(list, sizeof list, fmt, ap);
    passion_options *o;
    if (passion_options_create(&o))
        return NULL;
    if (list[0] && passion_options_parse(o, list)) {
        fprintf(stderr, "[rank %d] options '%s': %s\n", th_rank, list,
                passion_options_errdetail(o));
        passion_options_free(o);
        return NULL;
    }
    return o;
}

passion_options *th_options(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    passion_options *o = options_va(fmt, ap);
    va_end(ap);
    return o;
}

int th_init(passion_ctx **ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    passion_options *o = options_va(fmt, ap);
    va_end(ap);
    /* a bad list is a bug of the test: every rank fails alike, no hang */
    if (!o) {
        *ctx = NULL;
        return PASSION_EINVAL;
    }
    int rc = passion_init(MPI_COMM_WORLD, o, ctx);
    passion_options_free(o);
    return rc;
}

const char *th_dir(void)
{
    return dir;
}

passion_file *th_ramp_file(passion_ctx *ctx, passion_array **pa,
                           const char *name, int64_t n)
{
    int64_t shape[1] = {n};
    passion_array_spec sp;
    passion_array_spec_init(&sp, 1, shape, sizeof(double));
    sp.placement = PASSION_PLACE_GLOBAL;
    int rc = passion_array_create(ctx, &sp, pa);
    TH_CHECK(rc == 0, "array_create: %d", rc);
    return rc ? NULL : th_ramp_create(ctx, *pa, name, 0.0);
}

passion_file *th_ramp_create(passion_ctx *ctx, passion_array *a,
                             const char *name, double base)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", th_dir(), name);
    passion_file *f = NULL;
    int rc = passion_file_open(a, path, PASSION_MODE_CREATE, &f);
    TH_CHECK(rc == 0, "create %s: %d %s", path, rc,
             passion_ctx_errdetail(ctx));
    const passion_array_spec *sp = passion_array_get_spec(a);
    int64_t n = 1;
    for (int d = 0; sp && d < sp->ndims; d++)
        n *= sp->shape[d];
    if (f && th_rank == 0) {
        double *v = malloc((size_t)n * sizeof *v);
        for (int64_t i = 0; v && i < n; i++)
            v[i] = base + (double)i;
        /* the file order is the storage order; a packed whole-array
           section in memory has the same order */
        passion_section s;
        passion_section_set(&s, sp->ndims, NULL, sp->shape, NULL);
        rc = v ? passion_file_write(f, &s, v, NULL, PASSION_METHOD_DIRECT)
               : PASSION_ENOMEM;
        TH_CHECK(rc == 0, "fill %s: %d", path, rc);
        free(v);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return f;
}

passion_file *th_ramp_open(const char *opts, const char *name, int64_t n,
                           passion_ctx **ctx, passion_array **pa)
{
    *pa = NULL;
    int rc = th_init(ctx, "%s", opts);
    TH_CHECK(rc == 0 && *ctx, "passion_init(%s): %d", opts, rc);
    if (!*ctx)
        return NULL;
    passion_file *f = th_ramp_file(*ctx, pa, name, n);
    if (!f) {
        if (*pa)
            passion_array_free(*pa);
        passion_finalize(*ctx);
        *pa = NULL;
        *ctx = NULL;
    }
    return f;
}

void th_ramp_close(passion_file *f, passion_array *a, passion_ctx *ctx)
{
    passion_file_close(f);
    passion_array_free(a);
    passion_finalize(ctx);
}

int th_ramp_ok(const double *b, const passion_section *s)
{
    for (int64_t k = 0; k < s->count[0]; k++)
        if (b[k] != (double)(s->start[0] + k * s->stride[0]))
            return 0;
    return 1;
}

int th_ramp_bad(const double *v, int64_t n, double base)
{
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += v[i] != base + (double)i;
    return bad;
}

static void make_dir(const char *prog)
{
    const char *base = strrchr(prog, '/');
    base = base ? base + 1 : prog;
    const char *root = getenv("PASSION_TEST_DIR");
    if (!root || !*root)
        root = "/tmp";
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(dir, sizeof dir, "%s/passion-%s-np%d-%d", root, base, th_size,
             pid);
    if (th_rank == 0)
        mkdir(dir, 0755);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void remove_dir(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (th_rank != 0)
        return;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

int th_main(int argc, char **argv, CU_SuiteInfo *suites)
{
    /* TH_MPI_THREAD=multiple: ask for MPI_THREAD_MULTIPLE (the tests of
       drivers that may run MPI on a worker thread) */
    const char *tl = getenv("TH_MPI_THREAD");
    if (tl && !strcmp(tl, "multiple")) {
        int got;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &got);
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &th_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &th_size);
    const char *s = getenv("PASSION_TEST_SEED");
    if (s && *s)
        th_seed = strtoull(s, NULL, 10);
    th_case_seed = th_seed;
    make_dir(argv[0]);
    if (th_rank == 0)
        printf("%s: %d ranks, PASSION_TEST_SEED=%llu\n", argv[0], th_size,
               (unsigned long long)th_seed);

    long failed = 1, ran = 0;
    if (CU_initialize_registry() == CUE_SUCCESS &&
        CU_register_suites(suites) == CUE_SUCCESS) {
        CU_basic_set_mode(th_rank == 0 ? CU_BRM_NORMAL : CU_BRM_SILENT);
        CU_basic_run_tests();
        long f = (long)CU_get_number_of_failures();
        ran = (long)CU_get_number_of_tests_run();
        MPI_Allreduce(&f, &failed, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        CU_cleanup_registry();
    }
    if (th_rank == 0)
        printf("\nover %d ranks: %ld tests, %ld assertion failures\n",
               th_size, ran, failed);
    remove_dir();
    MPI_Finalize();
    return failed ? 1 : 0;
}
