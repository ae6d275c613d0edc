/*
 * bench_irregular.c - suite `irregular`: the four-stage
 * algorithm (blocking and dual-buffer non-blocking) against A1, pairwise
 * exchange and MPI_Alltoallv, and `auto`, on the patterns of Liu, Wang
 * and Prasanna's section 4 (Fig. 14) and a uniform one, Mmax from 8 B to
 * 64 KiB (`auto`: planner measure, `auto-estimate`: planner estimate,
 * each in its own context, at least BENCH_AUTO_REPS calls a case):
 *   pattern1 (one spike): every node sends Mmax bytes to one node chosen
 *            at random, and a few bytes (Mmax/32, at least 1) to the rest;
 *   pattern2 (2-D transpose): node i sends Mmax bytes to node
 *            (i % C) * C + i / C, C = ceil(sqrt P) (to itself when that
 *            node does not exist), a few bytes to the rest;
 *   uniform: Mmax bytes to every node.
 * Rows as in bench-index (model prediction next to each measurement, the
 * check against MPI_Alltoallv), projection rows for P = 64..1024.
 *
 * usage: mpiexec -n P bench-irregular --csv FILE [--regime warm|cold]
 *        [--reps N] [--quick]
 */
#include "bench_xchg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


/* the same matrix on every rank */
static int64_t *pattern(int which, int P, int64_t mmax)
{
    int64_t *m = malloc((size_t)P * (size_t)P * sizeof *m);
    int64_t small = mmax / 32 > 0 ? mmax / 32 : 1;
    int C = (int)ceil(sqrt((double)P));
    uint64_t seed = 20021 + (uint64_t)P;
    for (int i = 0; i < P; i++) {
        int spike = i;
        if (which == 0 && P > 1) {
            spike = (int)(bench_rand(&seed) % (uint64_t)(P - 1));
            if (spike >= i)
                spike++;
        } else if (which == 1) {
            spike = (i % C) * C + i / C;
            if (spike >= P)
                spike = i;
        }
        for (int j = 0; j < P; j++)
            m[i * P + j] = which == 2 || j == spike ? mmax : small;
    }
    return m;
}

int main(int argc, char **argv)
{
    bench_args a;
    passion_ctx *ctx, *autos[2];
    FILE *csv;
    coll_xchg_costs costs;
    int st = xb_begin(argc, argv, "bench-irregular", &a, &ctx, autos, &csv,
                      &costs);
    if (st)
        return st;
    int P = a.size, rc = 0;

    xb_method m[10] = {
        {"mpi-raw", -1, 0, 0, 1, NULL},
        {"mpi", PASSION_XCHG_MPI, 0, 0, 1, NULL},
        {"a1", PASSION_XCHG_A1, 0, 0, 1, NULL},
        {"pairwise", PASSION_XCHG_PAIRWISE, 0, 0, 1, NULL},
        {"fourstage", PASSION_XCHG_FOURSTAGE, 0, 0, 1, NULL},
        {"fourstage-nb", PASSION_XCHG_FOURSTAGE_NB, 0, 0, 1, NULL},
    };
    int nm = 6;
    xb_add_autos(m, &nm, autos);
    m[nm++] = (xb_method){"a1-spin", PASSION_XCHG_A1, 0, 1, 0, NULL};
    const char *names[] = {"pattern1", "pattern2", "uniform"};
    int64_t full[] = {8, 64, 512, 4096, 65536};
    int64_t quick[] = {8, 4096};
    int64_t *sizes = a.quick ? quick : full;
    int ns = a.quick ? 2 : 5;
    int reps = a.reps > 0 ? a.reps : P <= 4 ? 7 : P <= 9 ? 5 : 3;
    for (int p = 0; p < 3; p++)
        for (int i = 0; i < ns; i++) {
            xb_case c;
            memset(&c, 0, sizeof c);
            snprintf(c.name, sizeof c.name, "%s-%lldB", names[p],
                     (long long)sizes[i]);
            int64_t *mat = pattern(p, P, sizes[i]);
            c.block = -1;
            c.m = mat;
            c.bytes = sizes[i];
            bench_progress(&a, "irregular P=%d %s: %s", P, a.regime, c.name);
            rc |= xb_run_case(ctx, &a, csv, &costs, &c, m, nm, reps);
            free(mat);
        }
    for (int pp = 64; pp <= 1024 && a.rank == 0; pp *= 2)
        for (int p = 0; p < 3; p++)
            for (int i = 0; i < ns; i++) {
                char name[48];
                snprintf(name, sizeof name, "%s-%lldB", names[p],
                         (long long)sizes[i]);
                int64_t *mat = pattern(p, pp, sizes[i]);
                xb_case c = {"", -1, mat, sizes[i]};
                coll_xchg_shape s = xb_shape(pp, &c);
                xb_project(csv, &a, &costs, name, sizes[i], &s, 1);
                free(mat);
            }
    bench_progress(&a, "irregular P=%d %s done\n", P, a.regime);
    if (csv && csv != stdout)
        fclose(csv);
    passion_finalize(autos[1]);
    passion_finalize(autos[0]);
    passion_finalize(ctx);
    MPI_Finalize();
    return rc ? 1 : 0;
}
