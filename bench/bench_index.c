/*
 * bench_index.c - suite `index`: the index algorithm of Bruck et
 * al. for every radix r = 2..P against MPI_Alltoall, with the other fixed
 * algorithms and `auto` (planner measure; `auto-estimate`: planner
 * estimate, each in its own context, at least BENCH_AUTO_REPS calls a
 * case), blocks of 8 B to 256 KiB. Each row has the
 * rounds and bytes sent (Bruck's C1 and C2 for index), the model's
 * prediction with the calibrated costs, and the check against
 * MPI_Alltoall; projection rows give the model at P = 64..1024.
 *
 * usage: mpiexec -n P bench-index --csv FILE [--regime warm|cold]
 *        [--reps N] [--quick]
 * Regime cold: CPU caches flushed before each call (bench_xchg.h).
 */
#include "bench_xchg.h"

#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    bench_args a;
    passion_ctx *ctx, *autos[2];
    FILE *csv;
    coll_xchg_costs costs;
    int st = xb_begin(argc, argv, "bench-index", &a, &ctx, autos, &csv,
                      &costs);
    if (st)
        return st;
    int P = a.size, rc = 0;

    xb_method m[80];
    int nm = 0;
    m[nm++] = (xb_method){"mpi-raw", -1, 0, 0, 1, NULL};
    m[nm++] = (xb_method){"mpi", PASSION_XCHG_MPI, 0, 0, 1, NULL};
    m[nm++] = (xb_method){"a1", PASSION_XCHG_A1, 0, 0, 1, NULL};
    m[nm++] = (xb_method){"pairwise", PASSION_XCHG_PAIRWISE, 0, 0, 1,
                          NULL};
    for (int r = 2; r <= P && nm < 70; r++) {
        m[nm] = (xb_method){"", PASSION_XCHG_INDEX, r, 0, 1, NULL};
        snprintf(m[nm].name, sizeof m[nm].name, "index-r%d", r);
        nm++;
    }
    m[nm++] = (xb_method){"fourstage", PASSION_XCHG_FOURSTAGE, 0, 0, 1,
                          NULL};
    m[nm++] = (xb_method){"fourstage-nb", PASSION_XCHG_FOURSTAGE_NB, 0, 0, 1,
                          NULL};
    xb_add_autos(m, &nm, autos);
    m[nm++] = (xb_method){"a1-spin", PASSION_XCHG_A1, 0, 1, 0, NULL};

    int64_t full[] = {8, 64, 512, 4096, 32768, 262144};
    int64_t quick[] = {8, 4096, 262144};
    int64_t *sizes = a.quick ? quick : full;
    int ns = a.quick ? 3 : 6;
    int reps = a.reps > 0 ? a.reps : P <= 2 ? 41 : P <= 4 ? 15 : 9;
    for (int i = 0; i < ns; i++) {
        xb_case c;
        memset(&c, 0, sizeof c);
        snprintf(c.name, sizeof c.name, "%lldB", (long long)sizes[i]);
        c.block = sizes[i];
        c.bytes = sizes[i];
        bench_progress(&a, "index P=%d %s: block %lld B", P, a.regime,
                       (long long)sizes[i]);
        rc |= xb_run_case(ctx, &a, csv, &costs, &c, m, nm, reps);
    }
    for (int pp = 64; pp <= 1024; pp *= 2)
        for (int i = 0; i < ns; i++) {
            char name[48];
            snprintf(name, sizeof name, "%lldB", (long long)sizes[i]);
            coll_xchg_shape s = coll_shape_regular(pp, sizes[i]);
            if (a.rank == 0)
                xb_project(csv, &a, &costs, name, sizes[i], &s, 1);
        }
    bench_progress(&a, "index P=%d %s done\n", P, a.regime);
    if (csv && csv != stdout)
        fclose(csv);
    passion_finalize(autos[1]);
    passion_finalize(autos[0]);
    passion_finalize(ctx);
    MPI_Finalize();
    return rc ? 1 : 0;
}
