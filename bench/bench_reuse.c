/*
 * bench_reuse.c - suite `reuse`: the out-of-core Jacobi solver (Laplace's
 * equation, thesis figure 5.3) with and without data reuse, thesis table
 * 5.6, on 2048x2048 and 4096x4096 float64 arrays distributed by columns,
 * 16 slabs per rank, prefetch on, 5 sweeps.
 *
 * Reported per run: time, bytes read in all and by the slab sweeps alone
 * (the out-of-core shift reads the two boundary columns on its own), the
 * bytes reuse saved, and the columns read twice within one sweep:
 * (sweep bytes - sweeps x local file bytes) / column bytes / sweeps, which
 * must be 0 with reuse. Results are checked: 2048x2048 against the in-core
 * reference, both sizes between reuse and no reuse.
 */
#include "bench_apps_util.h"
#include "../apps/apps.h"

#include <stdlib.h>
#include <string.h>

#define SWEEPS 5
#define SLABS 16

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_args ba;
    if (bench_args_parse(&ba, argc, argv)) {
        if (ba.rank == 0)
            fprintf(stderr, "usage: bench-reuse --csv F --regime warm|cold\n");
        MPI_Finalize();
        return 2;
    }
    int reps = ba.reps ? ba.reps : 3;
    if (reps > 16)
        reps = 16;
    FILE *csv = bench_csv_open(&ba,
        "case,method,op,procs,ranks,regime,seconds,io_calls,bytes_read,"
        "bytes_written,t_io,t_compute,slabs,window,prefetch,reuse,sweeps,"
        "sweep_bytes_read,expected_sweep_bytes,cols_reread_per_sweep,"
        "bytes_saved,engine,load,check");
    static const int64_t sizes[2] = {2048, 4096};
    int nsz = ba.quick ? 1 : 2;
    passion_ctx *ctx;
    if (bench_init(&ctx, "%s", "")) {
        MPI_Finalize();
        return 1;
    }
    passion_engine eng = PASSION_ENGINE_AUTO;
    passion_engine_get(ctx, &eng);
    for (int si = 0; si < nsz; si++) {
        int64_t n = sizes[si];
        char name[32];
        snprintf(name, sizeof name, "%lldx%lld", (long long)n, (long long)n);
        passion_array *a;
        passion_file *B = NULL, *A = NULL;
        char p1[600], p2[600];
        snprintf(p1, sizeof p1, "%s/ru-b-%d.%%d", ba.scratch, si);
        snprintf(p2, sizeof p2, "%s/ru-a-%d.%%d", ba.scratch, si);
        int rc = bench_colblock(ctx, n, n, 8, 1, &a);
        if (!rc)
            rc = passion_file_open(a, p1, PASSION_MODE_CREATE, &B);
        if (!rc)
            rc = passion_file_open(a, p2, PASSION_MODE_CREATE, &A);
        if (rc) {
            if (ba.rank == 0)
                fprintf(stderr, "setup: %s\n", passion_ctx_errdetail(ctx));
            MPI_Finalize();
            return 1;
        }
        int64_t nl[2], fb, fbsum = 0;
        passion_array_local_shape(a, ba.rank, nl);
        passion_array_local_bytes(a, ba.rank, &fb);
        long long lfb = fb, sfb = 0;
        MPI_Allreduce(&lfb, &sfb, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        fbsum = sfb;
        int64_t width = (nl[1] + SLABS - 1) / SLABS;
        uint64_t refsum = 0;
        if (n <= 2048) {
            if (ba.rank == 0) {
                bench_progress(&ba, "reuse: in-core reference %s", name);
                double *g = malloc(sizeof(double) * n * n),
                       *h = malloc(sizeof(double) * n * n), *res;
                for (int64_t i = 0; i < n; i++)
                    for (int64_t j = 0; j < n; j++)
                        bench_cell(i, j, 8, &g[i * n + j]);
                int it;
                double resid;
                app_jacobi_reference(g, h, n, n, SWEEPS, 0, &it, &resid,
                                     &res);
                refsum = bench_checksum_mem(res, n, n, 8);
                free(g);
                free(h);
            }
            unsigned long long v = refsum;
            MPI_Bcast(&v, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
            refsum = v;
        }
        uint64_t sums[2] = {0, 0};
        for (int reuse = 0; reuse < 2; reuse++) {
            double t[16], tio[16], tc[16];
            app_report rep;
            memset(&rep, 0, sizeof rep);
            passion_file *res = NULL;
            for (int r = 0; r < reps && !rc; r++) {
                bench_progress(&ba, "reuse P=%d %s %s %s rep %d", ba.size,
                               ba.regime, name, reuse ? "reuse" : "no-reuse",
                               r + 1);
                rc = bench_fill(ctx, a, B);
                if (!rc)
                    rc = bench_fill(ctx, a, A);
                if (ba.cold) {
                    passion_file_drop_cache(A);
                    passion_file_drop_cache(B);
                }
                MPI_Barrier(MPI_COMM_WORLD);
                app_jacobi_opts o;
                app_jacobi_opts_init(&o);
                o.max_iter = SWEEPS;
                o.reuse = reuse;
                o.prefetch = 1;
                o.slab_width = width;
                if (!rc)
                    rc = app_jacobi_local(ctx, a, B, A, &o, &res, &rep);
                t[r] = rep.seconds;
                tio[r] = rep.t_io_wait;
                tc[r] = rep.t_compute;
            }
            if (rc && ba.rank == 0)
                fprintf(stderr, "run: %s %s\n", passion_strerror(rc),
                        passion_ctx_errdetail(ctx));
            sums[reuse] = rc ? 0 : bench_checksum(ctx, a, res);
            int64_t expect = (int64_t)rep.iterations * fbsum;
            double reread = (double)((int64_t)rep.sweep_bytes_read - expect) /
                            (double)(n * 8) / (rep.iterations ? rep.iterations
                                                              : 1);
            const char *chk = rc ? "FAIL"
                              : refsum ? (sums[reuse] == refsum ? "ok-ref"
                                                                : "FAIL")
                                       : "-";
            if (reuse && !refsum && !rc)
                chk = sums[0] == sums[1] ? "ok-same" : "FAIL";
            if (reuse && reread != 0)
                chk = "FAIL-reread";
            if (csv) {
                fprintf(csv, "%s,%s,jacobi,%d,%s,%s,%.6g,%llu,%llu,%llu,"
                        "%.6g,%.6g,%lld,,1,%d,%d,%llu,%lld,%.2f,%llu,%s,%.2f,"
                        "%s\n", name, reuse ? "reuse" : "no-reuse", ba.size,
                        ba.ranks_note, ba.regime, bench_median(t, reps),
                        (unsigned long long)rep.io_calls,
                        (unsigned long long)rep.bytes_read,
                        (unsigned long long)rep.bytes_written,
                        bench_median(tio, reps), bench_median(tc, reps),
                        (long long)rep.slabs, reuse, rep.iterations,
                        (unsigned long long)rep.sweep_bytes_read,
                        (long long)expect, reread,
                        (unsigned long long)rep.reuse_bytes,
                        passion_engine_name(eng), bench_load(), chk);
                fflush(csv);
            }
        }
        passion_file_close(A);
        passion_file_close(B);
        passion_array_free(a);
    }
    bench_progress(&ba, "reuse P=%d %s done\n", ba.size, ba.regime);
    if (csv && csv != stdout)
        fclose(csv);
    passion_finalize(ctx);
    MPI_Finalize();
    return 0;
}
