/*
 * bench_prefetch.c - suite `prefetch`: the out-of-core median filter with
 * and without prefetch, thesis tables 5.4 (3x3) and 5.5 (5x5).
 *
 * Image distributed by columns into local array files (ghost columns by
 * out-of-core shift), cut into 4, 8 or 16 slabs per rank. Per
 * configuration, in the same run: `io-only` (the sweep without the kernel:
 * t_io, I/O alone), `no-prefetch` (read, compute, write in turn: its
 * kernel time is t_compute, computation alone) and `prefetch` (next slab
 * read and previous slab written while the current one is computed).
 * overlap efficiency = (T no-prefetch - T prefetch) / min(t_io, t_compute),
 * per repetition (the three methods' runs of one repetition are adjacent),
 * then the median over repetitions (5 by default; ratio_q1/ratio_q3: the
 * quartiles of the per-repetition T prefetch / T no-prefetch, the spread
 * that says whether a ratio above 1 is beyond the noise). The first slab's read and the last
 * slab's write cannot overlap any computation, so with s slabs of equal
 * read and write volume the efficiency is at most about 1 - 1/s.
 * io_wait is the time the run spent blocked on I/O, t_compute_run its own
 * kernel time (with prefetch the kernel shares the CPU with the I/O).
 * hidden = 1 - io_wait(prefetch) / t_io: the share of the I/O time alone
 * that the prefetching run did not wait for; unlike the efficiency it does
 * not subtract two runs' computation times, whose noise on this 2-core VM
 * is often larger than t_io.
 * Dedicated-machine figures (columns *_ded): up to 5 sessions share this
 * 2-core VM, and a run's time includes the time its rank sat runnable in
 * the run queue behind other processes (Linux schedstat: the second field
 * of /proc/thread-self/schedstat). seconds_ded = max over ranks of (wall -
 * that delay) per run; eff_ded and ratio_ded are the efficiency and the
 * prefetch / no-prefetch ratio of those, paired per repetition like the
 * raw ones (ratio: median of the per-repetition T prefetch / T
 * no-prefetch). The raw columns stay; the delay column says how much was
 * taken out (wall measured around the call, so it includes the call's
 * two short reductions). At P > 1 a rank that waits in a collective for
 * a delayed peer polls (MPICH), so its own wall keeps that wait: the
 * correction is partial.
 * Cold: both files' pages dropped before every repetition; the rows
 * marked -odirect use O_DIRECT instead. With buffered files the kernel's
 * own sequential readahead (read_ahead_kb, 8 MiB on this machine's disk)
 * already prefetches for the no-prefetch run, so the O_DIRECT rows are the
 * ones that measure passion's prefetch against no prefetch at all. Every output is checked: the
 * 2048x2048 image against the in-core reference, the 16384x16384 one
 * between prefetch and no-prefetch.
 * Memory-limited regime (--regime memlimit --memlimit BYTES; bench/run
 * runs the program in a memory control group of that limit): cold, one
 * 8-bit image of n x n >= 8 times the limit (n a multiple of 1024), 3x3,
 * 3 repetitions, memory budget limit/8 shared by the ranks; the slabs as
 * wide as the prefetching run's four buffers fit in the budget (every
 * method the same width; the slab count follows). Equal slabs of 1/8 or
 * 1/16 of the local array would need buffers of the whole limit.
 */
#include "bench_apps_util.h"
#include "../apps/apps.h"

#include <stdlib.h>
#include <string.h>

typedef struct img {
    const char *name;
    int64_t n;
    int pixel;
    int windows[2], nwin;
    int slabs[3], nslabs;
} img;

static const img images[] = {
    {"2048x2048-f32", 2048, APP_PIXEL_F32, {3, 5}, 2, {4, 8, 16}, 3},
    {"16384x16384-u8", 16384, APP_PIXEL_U8, {3, 5}, 2, {8, 0, 0}, 1},
};

typedef struct runres {
    double seconds, t_compute, t_io_wait;
    double ded, delay;  /* medians: max over ranks of wall - run-queue
                           delay, and of the delay */
    double ratio, ratio_ded; /* prefetch row: median of per-repetition
                                T prefetch / T no-prefetch */
    double ratio_q1, ratio_q3; /* and its quartiles (the noise) */
    double eff_ded;
    double eff;  /* prefetch row: median over repetitions of the paired
                    (T no-prefetch - T prefetch) / min(t_io, t_compute) */
    app_report rep;
    uint64_t sum;
} runres;

/* Seconds this thread has waited in the run queue (runnable, not
   running), from Linux schedstat; 0 where it cannot be read. */
static double run_delay(void)
{
    unsigned long long on = 0, wait = 0;
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (!f)
        return 0;
    if (fscanf(f, "%llu %llu", &on, &wait) != 2)
        wait = 0;
    fclose(f);
    return (double)wait * 1e-9;
}

/* The q-quantile of sorted v[0..n) (linear between neighbours). */
static double sorted_q(const double *v, int n, double q)
{
    if (n <= 0)
        return 0;
    double x = q * (n - 1);
    int i = (int)x;
    return i + 1 < n ? v[i] + (x - i) * (v[i + 1] - v[i]) : v[i];
}

/*
 * The three methods of one configuration, repetitions interleaved
 * (io-only, no-prefetch, prefetch, io-only, ...) so that a drift in the
 * machine's load touches all three alike.
 */
static int run3(bench_args *ba, passion_ctx *ctx, passion_array *a,
                passion_file *in, passion_file *out, int window, int pixel,
                int64_t width, int reps, runres *res)
{
    double t[3][16], tc[3][16], tw[3][16], td[3][16], tq[3][16];
    int rc = 0;
    for (int r = 0; r < reps && !rc; r++)
        for (int m = 0; m < 3 && !rc; m++) {
            if (ba->cold) {
                passion_file_sync(out);
                passion_file_drop_cache(in);
                passion_file_drop_cache(out);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            app_median_opts o;
            app_median_opts_init(&o);
            o.window = window;
            o.pixel = pixel;
            o.prefetch = m == 2;
            o.slab_width = width;
            o.io_only = m == 0;
            double q0 = run_delay(), w0 = MPI_Wtime();
            rc = app_median_local(ctx, a, in, out, &o, &res[m].rep);
            /* per rank: the call's wall time less its run-queue delay */
            double dq[2] = {run_delay() - q0, 0}, dm[2];
            dq[1] = MPI_Wtime() - w0 - dq[0];
            MPI_Allreduce(dq, dm, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            tq[m][r] = dm[0];
            td[m][r] = dm[1];
            t[m][r] = res[m].rep.seconds;
            tc[m][r] = res[m].rep.t_compute;
            tw[m][r] = res[m].rep.t_io_wait;
            /* the output of this method, before the next overwrites it */
            if (!rc && m > 0 && r == reps - 1)
                res[m].sum = bench_checksum(ctx, a, out);
        }
    double e[16];
    int ne = 0;
    for (int r = 0; r < reps && !rc; r++) {
        double mn = t[0][r] < tc[1][r] ? t[0][r] : tc[1][r];
        if (mn > 0)
            e[ne++] = (t[1][r] - t[2][r]) / mn;
    }
    res[2].eff = ne ? bench_median(e, ne) : 0;
    double ed[16], ra[16], rd[16];
    int nd = 0, nr = 0;
    for (int r = 0; r < reps && !rc; r++) {
        double mn = td[0][r] < tc[1][r] ? td[0][r] : tc[1][r];
        if (mn > 0)
            ed[nd++] = (td[1][r] - td[2][r]) / mn;
        if (t[1][r] > 0 && td[1][r] > 0) {
            ra[nr] = t[2][r] / t[1][r];
            rd[nr++] = td[2][r] / td[1][r];
        }
    }
    res[2].eff_ded = nd ? bench_median(ed, nd) : 0;
    res[2].ratio = nr ? bench_median(ra, nr) : 0; /* sorts ra */
    res[2].ratio_q1 = sorted_q(ra, nr, 0.25);
    res[2].ratio_q3 = sorted_q(ra, nr, 0.75);
    res[2].ratio_ded = nr ? bench_median(rd, nr) : 0;
    for (int m = 0; m < 3; m++) {
        res[m].seconds = bench_median(t[m], reps);
        res[m].t_compute = bench_median(tc[m], reps);
        res[m].t_io_wait = bench_median(tw[m], reps);
        res[m].ded = bench_median(td[m], reps);
        res[m].delay = bench_median(tq[m], reps);
    }
    res[0].sum = 0;
    return rc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_args ba;
    if (bench_args_parse(&ba, argc, argv)) {
        if (ba.rank == 0)
            fprintf(stderr, "usage: bench-prefetch --csv F --regime "
                    "warm|cold [--scratch D] [--reps N] [--quick]\n");
        MPI_Finalize();
        return 2;
    }
    const char *only = NULL; /* --case SUBSTR: only matching images */
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--case"))
            only = argv[i + 1];
    /* BENCH_PREFETCH_ODIRECT=1 (environment): cold and memory-limited
       runs measure only the O_DIRECT rows (the buffered ones are skipped;
       their file is created by the O_DIRECT pass) */
    const char *odenv = getenv("BENCH_PREFETCH_ODIRECT");
    const int od0 = ba.cold && odenv && !strcmp(odenv, "1");
    int reps = ba.reps ? ba.reps : 5;
    if (reps > 16)
        reps = 16;
    FILE *csv = bench_csv_open(&ba,
        "case,method,op,procs,ranks,regime,seconds,io_calls,bytes_read,"
        "bytes_written,t_io,t_compute,slabs,window,prefetch,reuse,"
        "overlap_efficiency,hidden,io_wait,t_compute_run,engine,load,check,"
        "ratio,run_delay,seconds_ded,eff_ded,ratio_ded,ratio_q1,ratio_q3,"
        "reps");
    int nimg = ba.quick && !only ? 1 : 2;
    img big = {"memlimit-u8", 1024, APP_PIXEL_U8, {3, 0}, 1, {-1, 0, 0}, 1};
    int64_t budget = 64LL << 20;
    char bigname[64];
    const int memlim = bench_memlimit_min_bytes(&ba) > 0;
    if (memlim) {
        while (big.n * big.n < bench_memlimit_min_bytes(&ba))
            big.n += 1024;
        snprintf(bigname, sizeof bigname, "%lldx%lld-u8",
                 (long long)big.n, (long long)big.n);
        big.name = bigname;
        budget = ba.memlimit / 8 / ba.size;
        nimg = 1;
    }
    for (int ii = 0; ii < nimg; ii++) {
        const img *im = memlim ? &big : &images[ii];
        if (only && !strstr(im->name, only))
            continue;
        for (int od = od0; od < (ba.cold ? 2 : 1); od++) {
            passion_ctx *ctx;
            if (bench_init(&ctx, "memory_budget=%lld,direct_io=%d",
                           (long long)budget, od)) {
                MPI_Finalize();
                return 1;
            }
            passion_engine eng = PASSION_ENGINE_AUTO;
            passion_engine_get(ctx, &eng);
            passion_array *a;
            passion_file *in = NULL, *out = NULL;
            char p1[600], p2[600];
            snprintf(p1, sizeof p1, "%s/pf-in-%d.%%d", ba.scratch, ii);
            snprintf(p2, sizeof p2, "%s/pf-out-%d.%%d", ba.scratch, ii);
            int rc = bench_colblock(ctx, im->n, im->n, im->pixel, 2, &a);
            int mode = od > od0 ? PASSION_MODE_RDWR : PASSION_MODE_CREATE;
            if (!rc)
                rc = passion_file_open(a, p1, mode, &in);
            if (!rc)
                rc = passion_file_open(a, p2, mode, &out);
            if (!rc && od == od0) {
                bench_progress(&ba, "prefetch: creating %s", im->name);
                rc = bench_fill(ctx, a, in);
            }
            if (rc) {
                if (ba.rank == 0)
                    fprintf(stderr, "setup: %s %s\n", passion_strerror(rc),
                            passion_ctx_errdetail(ctx));
                MPI_Finalize();
                return 1;
            }
            int64_t nl[2];
            passion_array_local_shape(a, ba.rank, nl);
            for (int wi = 0; wi < im->nwin; wi++) {
                int window = im->windows[wi];
                uint64_t refsum = 0;
                if (im->n <= 4096 && od == od0) {
                    /* in-core reference on rank 0 */
                    /* cached in the scratch directory across the P and
                       regime runs of one bench/run */
                    char cpath[700];
                    snprintf(cpath, sizeof cpath, "%s/pf-ref-%s-%d.sum",
                             ba.scratch, im->name, window);
                    FILE *cf = ba.rank == 0 ? fopen(cpath, "r") : NULL;
                    if (cf) {
                        unsigned long long v;
                        if (fscanf(cf, "%llu", &v) == 1)
                            refsum = v;
                        fclose(cf);
                    }
                    if (ba.rank == 0 && !refsum) {
                        bench_progress(&ba, "prefetch: reference %dx%d",
                                       window, window);
                        int64_t n = im->n, es = im->pixel;
                        char *g = malloc((size_t)(n * n * es));
                        char *r = malloc((size_t)(n * n * es));
                        for (int64_t i = 0; i < n; i++)
                            for (int64_t j = 0; j < n; j++)
                                bench_cell(i, j, es, g + (i * n + j) * es);
                        app_median_reference(g, r, n, n, window, im->pixel);
                        refsum = bench_checksum_mem(r, n, n, es);
                        free(g);
                        free(r);
                        if ((cf = fopen(cpath, "w"))) {
                            fprintf(cf, "%llu\n", (unsigned long long)refsum);
                            fclose(cf);
                        }
                    }
                    unsigned long long v = refsum;
                    MPI_Bcast(&v, 1, MPI_UNSIGNED_LONG_LONG, 0,
                              MPI_COMM_WORLD);
                    refsum = v;
                }
                for (int si = 0; si < im->nslabs; si++) {
                    int slabs = im->slabs[si];
                    int64_t width = slabs > 0 ? (nl[1] + slabs - 1) / slabs
                                              : 0;
                    if (slabs < 0) {
                        /* from the budget: two in and two out buffers of
                           width + 2 halo columns */
                        width = budget / (4 * nl[0] * im->pixel) -
                                2 * (window / 2);
                        if (width < 1)
                            width = 1;
                        slabs = (int)((nl[1] + width - 1) / width);
                    }
                    runres rr[3];
                    static const char *mname[3] = {"io-only", "no-prefetch",
                                                   "prefetch"};
                    memset(rr, 0, sizeof rr);
                    int nrep = im->n > 4096 && !ba.reps ? (ba.cold ? 5 : 3)
                                                        : reps;
                    if (memlim && !ba.reps)
                        nrep = 3;
                    bench_progress(&ba, "prefetch P=%d %s %s %dx%d %d slabs%s",
                                   ba.size, ba.regime, im->name, window,
                                   window, slabs, od ? " O_DIRECT" : "");
                    rc = run3(&ba, ctx, a, in, out, window, im->pixel, width,
                              nrep, rr);
                    if (rc && ba.rank == 0)
                        fprintf(stderr, "run: %s %s\n", passion_strerror(rc),
                                passion_ctx_errdetail(ctx));
                    double tio = rr[0].seconds, tcomp = rr[1].t_compute;
                    double eff = rr[2].eff;
                    const char *chk;
                    if (rc)
                        chk = "FAIL";
                    else if (refsum)
                        chk = rr[1].sum == refsum && rr[2].sum == refsum
                                  ? "ok-ref"
                                  : "FAIL";
                    else
                        chk = rr[1].sum == rr[2].sum ? "ok-same" : "FAIL";
                    double load = bench_load();
                    for (int m = 0; m < 3 && csv; m++) {
                        char meth[64];
                        snprintf(meth, sizeof meth, "%s%s", mname[m],
                                 od ? "-odirect" : "");
                        const app_report *r = &rr[m].rep;
                        fprintf(csv, "%s-s%d,%s,median%dx%d,%d,%s,%s,%.6g,"
                                "%llu,%llu,%llu,%.6g,%.6g,%d,%d,%d,1,",
                                im->name, slabs,
                                meth, window, window, ba.size, ba.ranks_note,
                                ba.regime, rr[m].seconds,
                                (unsigned long long)r->io_calls,
                                (unsigned long long)r->bytes_read,
                                (unsigned long long)r->bytes_written, tio,
                                tcomp, slabs, window, m == 2);
                        if (m == 2)
                            fprintf(csv, "%.3f,%.3f,", eff,
                                    tio > 0 ? 1 - rr[2].t_io_wait / tio : 0);
                        else
                            fprintf(csv, ",,");
                        fprintf(csv, "%.6g,%.6g,%s,%.2f,%s,",
                                rr[m].t_io_wait, rr[m].t_compute,
                                passion_engine_name(eng), load,
                                m == 0 ? "-" : chk);
                        if (m == 2)
                            fprintf(csv, "%.3f,", rr[2].ratio);
                        else
                            fprintf(csv, ",");
                        fprintf(csv, "%.6g,%.6g,", rr[m].delay, rr[m].ded);
                        if (m == 2)
                            fprintf(csv, "%.3f,%.3f,%.3f,%.3f,%d\n",
                                    rr[2].eff_ded, rr[2].ratio_ded,
                                    rr[2].ratio_q1, rr[2].ratio_q3, nrep);
                        else
                            fprintf(csv, ",,,,%d\n", nrep);
                    }
                    if (csv)
                        fflush(csv);
                }
            }
            passion_file_close(in);
            passion_file_close(out);
            passion_array_free(a);
            passion_finalize(ctx);
        }
    }
    bench_progress(&ba, "prefetch P=%d %s done\n", ba.size, ba.regime);
    if (csv && csv != stdout)
        fclose(csv);
    MPI_Finalize();
    return 0;
}
