/*
 * demo.c - `passion demo`: the main job. Creates a Jacobi problem and an
 * image, each many times larger than the memory budget, in local array
 * files, runs the out-of-core Jacobi solver (prefetch + reuse) and the
 * out-of-core median filter (cold, without and with prefetch), and prints
 * what they did: time, bytes read and written, time blocked on I/O, I/O
 * hidden by prefetch, bytes saved by reuse.
 */
#include "files.h"
#include "apps.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct demo_cfg {
    int64_t jn;        /* Jacobi: jn x jn float64 */
    int iters;
    int64_t img;       /* image: img x img uint8 */
    int window;
    int64_t ratio;     /* each rank's part / its memory budget */
    int64_t budget;    /* --budget: each rank's (0: the part / ratio) */
    int sized;         /* 1 --jacobi, 2 --image: given, not from budget */
    char dir[400];
    int keep;
    int size;
} demo_cfg;

static const char demo_usage[] =
    "usage: mpiexec -n P passion demo [--quick] [--jacobi N] [--iters K]\n"
    "                                 [--image N] [--window W] [--ratio R]\n"
    "                                 [--budget SIZE] [--dir DIR] [--keep]\n"
    "  --jacobi N   Jacobi grid N x N float64 (default 8192: 512 MiB)\n"
    "  --iters K    Jacobi sweeps (default 40)\n"
    "  --image N    median filter image N x N 8-bit (default 16384: 256 MiB)\n"
    "  --window W   odd median window (default 5)\n"
    "  --ratio R    each rank's part of an array is R times its memory\n"
    "               budget (default 16, at least 8)\n"
    "  --budget SIZE  each rank's memory budget (K, M, G suffixes); the\n"
    "               arrays not sized by --jacobi or --image are then made\n"
    "               R times the budget per rank (default: the budget is\n"
    "               each rank's part of an array / R)\n"
    "  --dir DIR    where the files go (default $TMPDIR or /tmp): in a\n"
    "               new directory DIR/passion-demo-XXXXXX made for this\n"
    "               run (never an existing one, so no file of yours is\n"
    "               written); removed at the end unless --keep\n"
    "  --quick      small sizes (a few seconds)\n";

static double mib(uint64_t b)
{
    return (double)b / (1 << 20);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    if (cli_rank() != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

static int fail(passion_ctx *ctx, int rc, const char *what)
{
    if (cli_rank() == 0)
        fprintf(stderr, "\npassion demo: %s: %s (%s)\n", what,
                passion_strerror(rc), ctx ? passion_ctx_errdetail(ctx) : "");
    return rc;
}

/* A column-block 2-D array: grid 1 x P, ghosts `g` in dimension 1. */
static int mkarray(passion_ctx *ctx, int64_t n, int64_t es, int64_t g,
                   int size, passion_array **a)
{
    int64_t shape[2] = {n, n};
    passion_array_spec sp;
    passion_array_spec_init(&sp, 2, shape, es);
    sp.storage = PASSION_COL_MAJOR;
    sp.grid[0] = 1;
    sp.grid[1] = size;
    sp.dist[0] = PASSION_DIST_COLLAPSED;
    sp.ghost[1] = g;
    return passion_array_create(ctx, &sp, a);
}

/* Fill this rank's local columns chunk by chunk (within the budget). */
typedef void (*fill_fn)(void *buf, int64_t n0, int64_t gj0, int64_t ncol,
                        int64_t n);

static int fill_local(passion_ctx *ctx, passion_array *a, passion_file *f,
                      int64_t es, fill_fn fn, const char *phase)
{
    int rank = cli_rank();
    int64_t nl[2], lo[2], hi[2];
    passion_array_local_shape(a, rank, nl);
    passion_array_local_bounds(a, rank, 0, lo, hi);
    const passion_array_spec *sp = passion_array_get_spec(a);
    int64_t budget = cli_budget(ctx);
    int64_t w = budget / (nl[0] * es);
    if (w < 1)
        w = 1;
    char *buf = malloc((size_t)(w * nl[0] * es));
    int rc = buf ? 0 : PASSION_ENOMEM;
    for (int64_t c = 0; c < nl[1] && !rc; c += w) {
        int64_t k = nl[1] - c < w ? nl[1] - c : w;
        fn(buf, nl[0], lo[1] + c, k, sp->shape[1]);
        passion_section s;
        int64_t st[2] = {0, c}, cnt[2] = {nl[0], k};
        passion_section_set(&s, 2, st, cnt, NULL);
        rc = passion_file_write(f, &s, buf, NULL, PASSION_METHOD_AUTO);
        cli_progress(NULL, phase, (double)(c + k) / nl[1]);
    }
    free(buf);
    cli_progress_done();
    int all;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* Jacobi: 100 on the top edge, 0 elsewhere (a heated plate). */
static void fill_jacobi(void *buf, int64_t n0, int64_t gj0, int64_t ncol,
                        int64_t n)
{
    (void)gj0;
    (void)n;
    double *b = buf;
    for (int64_t j = 0; j < ncol; j++)
        for (int64_t i = 0; i < n0; i++)
            b[j * n0 + i] = i == 0 ? 100.0 : 0.0;
}

/* Image: checkerboard of 64-pixel squares with 10% salt-and-pepper. */
static void fill_image(void *buf, int64_t n0, int64_t gj0, int64_t ncol,
                       int64_t n)
{
    (void)n;
    uint8_t *b = buf;
    for (int64_t j = 0; j < ncol; j++)
        for (int64_t i = 0; i < n0; i++) {
            uint64_t z = (uint64_t)(i * 1000003 + (gj0 + j)) *
                         0x9E3779B97F4A7C15ULL;
            z ^= z >> 29;
            int v = ((i / 64 + (gj0 + j) / 64) % 2) ? 200 : 50;
            if (z % 10 == 0)
                v = (z >> 8) % 2 ? 255 : 0;
            b[j * n0 + i] = (uint8_t)v;
        }
}

static void row(const char *name, const app_report *r, double hidden)
{
    say("  %-30s %8.2f %10.1f %11.1f %10.2f %11.1f", name, r->seconds,
        mib(r->bytes_read), mib(r->bytes_written), r->t_io_wait,
        mib(r->reuse_bytes));
    if (hidden >= 0)
        say(" %9.2f\n", hidden);
    else
        say(" %9s\n", "-");
}

/* --budget SIZE as the memory_budget option reads it; 0 or 2 (said). */
static int parse_budget(const char *v, int64_t *out)
{
    passion_options *o = NULL;
    char b[32] = "";
    int rc = passion_options_create(&o);
    if (!rc)
        rc = passion_options_set(o, "memory_budget", v);
    if (!rc)
        rc = passion_options_get(o, "memory_budget", b, sizeof b);
    passion_options_free(o);
    *out = rc ? 0 : strtoll(b, NULL, 10);
    if (*out > 0)
        return 0;
    if (cli_rank() == 0)
        fprintf(stderr, "passion demo: --budget %s: want a size in bytes "
                "> 0 (K, M, G suffixes)\n", v);
    return 2;
}

/* The side of a square of `es`-byte elements whose rank parts are ratio
   times the budget. */
static int64_t side_for(const demo_cfg *c, int64_t es)
{
    double bytes = (double)c->ratio * (double)c->budget * c->size;
    return (int64_t)floor(sqrt(bytes / (double)es));
}

/* Arrays not sized by --jacobi / --image: ratio times the budget. */
static void size_from_budget(demo_cfg *c)
{
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    if (!(c->sized & 1))
        c->jn = side_for(c, 8);
    if (!(c->sized & 2))
        c->img = side_for(c, 1);
}

static int parse(demo_cfg *c, int argc, char **argv)
{
    c->jn = 8192;
    c->iters = 40;
    c->img = 16384;
    c->window = 5;
    c->ratio = 16;
    const char *tmp = getenv("TMPDIR");
    snprintf(c->dir, sizeof c->dir, "%s", tmp && *tmp ? tmp : "/tmp");
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) {
            c->jn = 1536;
            c->img = 3072;
            c->iters = 5;
        } else if (!strcmp(a, "--keep")) {
            c->keep = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            if (cli_rank() == 0)
                cli_usage(stdout, demo_usage);
            return 1;
        } else if (v && !strcmp(a, "--jacobi")) {
            c->jn = atoll(v), i++, c->sized |= 1;
        } else if (v && !strcmp(a, "--iters")) {
            c->iters = atoi(v), i++;
        } else if (v && !strcmp(a, "--image")) {
            c->img = atoll(v), i++, c->sized |= 2;
        } else if (v && !strcmp(a, "--window")) {
            c->window = atoi(v), i++;
        } else if (v && !strcmp(a, "--ratio")) {
            c->ratio = atoll(v), i++;
        } else if (v && !strcmp(a, "--budget")) {
            if (parse_budget(v, &c->budget))
                return 2;
            i++;
        } else if (v && !strcmp(a, "--dir")) {
            snprintf(c->dir, sizeof c->dir, "%s", v), i++;
        } else {
            if (cli_rank() == 0)
                fprintf(stderr, "passion demo: bad argument '%s'\n%s", a,
                        demo_usage);
            return 2;
        }
    }
    if (c->budget)
        size_from_budget(c);
    if (c->jn < 16 || c->img < 16 || c->iters < 1 || c->window < 1 ||
        c->window % 2 == 0 || c->window > 15 || c->ratio < 8) {
        if (cli_rank() == 0)
            fprintf(stderr, "passion demo: sizes >= 16, iters >= 1, odd "
                    "window <= 15, ratio >= 8\n");
        return 2;
    }
    return 0;
}

/* A context whose budget makes each rank's part `ratio` times larger. */
static int budget_ctx(const demo_cfg *c, int64_t bytes, passion_ctx **ctx)
{
    passion_options *o;
    int rc = passion_options_create(&o);
    if (!rc)
        rc = passion_options_set_int(o, "memory_budget",
                                     c->budget ? c->budget
                                               : bytes / c->size / c->ratio);
    if (!rc)
        rc = passion_init(MPI_COMM_WORLD, o, ctx);
    else
        *ctx = NULL;
    passion_options_free(o);
    return rc;
}

static void drop(passion_file *f)
{
    passion_file_sync(f);
    passion_file_drop_cache(f);
}

/* Remove this rank's file of a local set and, on rank 0, the set's
   description (made with the files). */
static void unlink_file(passion_file *f, const char *pattern, int keep)
{
    if (!f || keep)
        return;
    if (passion_file_path(f))
        unlink(passion_file_path(f));
    char desc[PATH_MAX];
    if (cli_rank() == 0 && !cli_lset_desc(pattern, desc, sizeof desc))
        unlink(desc);
}

int cli_demo(int argc, char **argv)
{
    demo_cfg c;
    memset(&c, 0, sizeof c);
    int prc = parse(&c, argc, argv);
    if (prc)
        return prc == 1 ? 0 : prc;
    MPI_Comm_size(MPI_COMM_WORLD, &c.size);
    /* a directory of its own, new (mkdtemp never takes an existing one),
       made by rank 0 and named to all: the demo writes no file it did not
       create, and decides that alike on every rank */
    char dir[512];
    int made = 0;
    if (cli_rank() == 0) {
        snprintf(dir, sizeof dir, "%s/passion-demo-XXXXXX", c.dir);
        made = mkdtemp(dir) != NULL;
        if (!made)
            fprintf(stderr, "passion demo: --dir %s: cannot make a new "
                    "directory in it: %s\n", c.dir, strerror(errno));
    }
    MPI_Bcast(&made, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!made)
        return 1;
    MPI_Bcast(dir, (int)sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    char pb[600], pa[600], pin[600], pout[600];
    snprintf(pb, sizeof pb, "%s/jacobi-b.%%d", dir);
    snprintf(pa, sizeof pa, "%s/jacobi-a.%%d", dir);
    snprintf(pin, sizeof pin, "%s/image-in.%%d", dir);
    snprintf(pout, sizeof pout, "%s/image-out.%%d", dir);

    passion_ctx *jctx = NULL, *mctx = NULL;
    passion_array *ja = NULL, *ma = NULL;
    passion_file *B = NULL, *A = NULL, *in = NULL, *out = NULL;
    int rc;
    passion_engine eng = PASSION_ENGINE_AUTO;
    int64_t jbytes = c.jn * c.jn * 8, mbytes = c.img * c.img;
    double t0 = MPI_Wtime();

    int status = 1;
    if ((rc = budget_ctx(&c, jbytes, &jctx))) {
        fail(NULL, rc, "init");
        goto done;
    }
    passion_engine_get(jctx, &eng);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    say("passion demo: %d rank%s (%s), I/O engine %s, files in %s\n", c.size,
        c.size > 1 ? "s" : "", c.size > cpus ? "oversubscribed" : "dedicated",
        passion_engine_name(eng), dir);
    int64_t jb = cli_budget(jctx);
    say("  jacobi: %lld x %lld float64 = %.1f MiB, memory budget %.2f MiB "
        "per rank (array %lldx the budget of all ranks), %d sweeps\n",
        (long long)c.jn, (long long)c.jn, mib(jbytes), mib(jb),
        (long long)(jbytes / (jb * c.size)), c.iters);

    rc = mkarray(jctx, c.jn, 8, 1, c.size, &ja);
    if (!rc)
        rc = passion_file_open(ja, pb, PASSION_MODE_CREATE, &B);
    if (!rc)
        rc = passion_file_open(ja, pa, PASSION_MODE_CREATE, &A);
    if (!rc)
        rc = fill_local(jctx, ja, B, 8, fill_jacobi, "create");
    if (rc)
    {
        fail(jctx, rc, "creating the Jacobi files");
        goto done;
    }

    app_jacobi_opts jo;
    app_jacobi_opts_init(&jo);
    jo.max_iter = c.iters;
    jo.progress = cli_progress;
    app_report jr;
    passion_file *res = NULL;
    rc = app_jacobi_local(jctx, ja, B, A, &jo, &res, &jr);
    cli_progress_done();
    if (rc)
    {
        fail(jctx, rc, "jacobi");
        goto done;
    }

    /* median filter */
    if ((rc = budget_ctx(&c, mbytes, &mctx))) {
        fail(NULL, rc, "init");
        goto done;
    }
    int64_t mb = cli_budget(mctx);
    say("  median: %lld x %lld 8-bit image = %.1f MiB, %dx%d window, memory "
        "budget %.2f MiB per rank (%lldx), cold: pages dropped before each "
        "run\n", (long long)c.img, (long long)c.img, mib(mbytes), c.window,
        c.window, mib(mb), (long long)(mbytes / (mb * c.size)));
    rc = mkarray(mctx, c.img, 1, c.window / 2, c.size, &ma);
    if (!rc)
        rc = passion_file_open(ma, pin, PASSION_MODE_CREATE, &in);
    if (!rc)
        rc = passion_file_open(ma, pout, PASSION_MODE_CREATE, &out);
    if (!rc)
        rc = fill_local(mctx, ma, in, 1, fill_image, "create");
    if (rc)
    {
        fail(mctx, rc, "creating the image files");
        goto done;
    }
    app_median_opts mo;
    app_median_opts_init(&mo);
    mo.window = c.window;
    mo.progress = cli_progress;
    app_report mr[2];
    for (int p = 0; p < 2 && !rc; p++) {
        mo.prefetch = p;
        drop(in);
        drop(out);
        MPI_Barrier(MPI_COMM_WORLD);
        rc = app_median_local(mctx, ma, in, out, &mo, &mr[p]);
        cli_progress_done();
    }
    if (rc)
    {
        fail(mctx, rc, "median filter");
        goto done;
    }

    say("\n  %-30s %8s %10s %11s %10s %11s %9s\n", "run", "time s",
        "read MiB", "written MiB", "I/O wait s", "reuse MiB", "hidden s");
    row("jacobi (prefetch + reuse)", &jr, -1);
    row("median, no prefetch", &mr[0], -1);
    double hidden = mr[0].seconds - mr[1].seconds;
    row("median, prefetch", &mr[1], hidden);
    say("\n  jacobi: %d sweeps, last max |change| %.3g; %lld slabs per sweep; "
        "reuse saved %.1f MiB of reads (%.1f%%)\n", jr.iterations,
        jr.residual, (long long)jr.slabs, mib(jr.reuse_bytes),
        100.0 * (double)jr.reuse_bytes /
            (double)(jr.reuse_bytes + jr.bytes_read + 1));
    if (hidden > 0)
        say("  median: %lld slabs per rank; prefetch shortened the run by "
            "%.2f s (blocked on I/O %.2f s without prefetch, %.2f s with "
            "it; compute %.2f s)\n", (long long)mr[1].slabs, hidden,
            mr[0].t_io_wait, mr[1].t_io_wait, mr[1].t_compute);
    else
        say("  median: %lld slabs per rank; prefetch did not shorten the run "
            "here (%.2f s longer; blocked on I/O %.2f s without prefetch, "
            "%.2f s with it; compute %.2f s): I/O handed to another thread "
            "waits for a CPU when the cores are busy\n",
            (long long)mr[1].slabs, -hidden, mr[0].t_io_wait,
            mr[1].t_io_wait, mr[1].t_compute);

    rc = cli_demo_etp(dir, 0);
    status = rc ? 1 : 0;

done:
    /* also after a failure: no data files left behind (unless --keep) */
    unlink_file(A, pa, c.keep);
    unlink_file(B, pb, c.keep);
    unlink_file(in, pin, c.keep);
    unlink_file(out, pout, c.keep);
    passion_file_close(A);
    passion_file_close(B);
    passion_file_close(in);
    passion_file_close(out);
    passion_array_free(ja);
    passion_array_free(ma);
    passion_finalize(mctx);
    passion_finalize(jctx);
    MPI_Barrier(MPI_COMM_WORLD);
    if (cli_rank() == 0 && !c.keep)
        rmdir(dir);
    if (!status)
        say("\n  total %.1f s%s\n", MPI_Wtime() - t0,
            c.keep ? "; files kept" : "");
    return status;
}
