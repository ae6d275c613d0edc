/*
 * slab_prefetch.c - a slab loop over local array files, with prefetch.
 *
 * A 2-D array of doubles, N0 x N1, distributed (BLOCK, *) over the ranks,
 * in local placement: one file per rank holding its block. Each rank
 *   1. writes its local array (a(i, j) = i + j / 1000, global i),
 *   2. walks its file in slabs of a few rows with prefetch on (the next
 *      slab is read while this one is computed; the dirty slab is written
 *      back asynchronously): every element is squared in place,
 *   3. reads the local file back and checks every element, and sums the
 *      squares (a reduction over all ranks, checked against the formula).
 * The memory budget (64 KiB of slabs) is far below the local array, so
 * the loop really is out of core.
 *
 * Build: mpicc.mpich slab_prefetch.c $(pkg-config --cflags --libs passion)
 * Run:   mpiexec.mpich -n 2 ./slab_prefetch [DIR]
 */
#include <passion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N0 400
#define N1 300

static double val(int64_t i, int64_t j)
{
    return (double)i + (double)j / 1000.0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    char path[4096];
    snprintf(path, sizeof path, "%s/slab.%%d.laf", argc > 1 ? argv[1] : ".");

    passion_ctx *ctx;
    if (passion_init(MPI_COMM_WORLD, NULL, &ctx)) {
        fprintf(stderr, "passion_init failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int64_t shape[2] = {N0, N1};
    passion_array_spec spec;
    passion_array_spec_init(&spec, 2, shape, sizeof(double));
    spec.placement = PASSION_PLACE_LOCAL;
    spec.grid[0] = P;
    spec.dist[1] = PASSION_DIST_COLLAPSED;
    passion_array *a = NULL;
    passion_file *f = NULL;
    int rc = passion_array_create(ctx, &spec, &a);
    if (!rc)
        rc = passion_file_open(a, path, PASSION_MODE_CREATE, &f);

    /* 1. the local array: rows lo..hi of the global array */
    int64_t lo[2], hi[2], n[2];
    passion_array_local_bounds(a, rank, 0, lo, hi);
    passion_array_local_shape(a, rank, n);
    double *loc = malloc((size_t)(n[0] * n[1] + 1) * sizeof *loc);
    for (int64_t i = 0; i < n[0]; i++)
        for (int64_t j = 0; j < n[1]; j++)
            loc[i * n[1] + j] = val(lo[0] + i, j);
    if (!rc)
        rc = passion_file_write_local(f, loc);

    /* 2. the slab loop: square in place, written back when dirty */
    passion_slab_opts so;
    passion_slab_opts_init(&so);
    so.budget = 64 << 10;
    so.prefetch = 1;
    so.writeback = 1;
    passion_slab_iter *it = NULL;
    int64_t slabs = 0;
    passion_counters_reset(ctx);
    if (!rc)
        rc = passion_slab_open(f, &so, &it);
    passion_slab s;
    int got = 0;
    while (!rc && (got = passion_slab_next(it, &s)) == 1) {
        double *buf = s.in;
        for (int64_t i = 0; i < s.count; i++) {
            double *row = buf + (s.mem.offset[0] + i) * s.mem.shape[1] +
                          s.mem.offset[1];
            for (int64_t j = 0; j < n[1]; j++)
                row[j] *= row[j];
        }
        rc = passion_slab_dirty(it);
        slabs = s.nslabs;
    }
    if (!rc && got < 0)
        rc = got;
    int crc = passion_slab_close(it);
    if (!rc)
        rc = crc;
    passion_counters c;
    passion_counters_get(ctx, &c);
    if (rc)
        fprintf(stderr, "[rank %d] %s: %s\n", rank, passion_strerror(rc),
                passion_ctx_errdetail(ctx));

    /* 3. check the file against the squares, and the global sum */
    int64_t wrong = 0;
    double sum = 0, want = 0;
    if (!rc)
        rc = passion_file_read_local(f, loc);
    for (int64_t i = 0; !rc && i < n[0]; i++)
        for (int64_t j = 0; j < n[1]; j++) {
            double v = val(lo[0] + i, j);
            wrong += loc[i * n[1] + j] != v * v;
            sum += loc[i * n[1] + j];
        }
    for (int64_t i = 0; i < N0; i++)
        for (int64_t j = 0; j < N1; j++)
            want += val(i, j) * val(i, j);
    int bad = rc != 0 || wrong != 0, all_bad;
    double total = 0;
    int64_t all_wrong = 0, all_slabs = 0;
    unsigned long long hits = c.prefetch_hits, all_hits = 0;
    MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    MPI_Allreduce(&wrong, &all_wrong, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&slabs, &all_slabs, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&hits, &all_hits, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                  MPI_COMM_WORLD);
    MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (fabs(total - want) > 1e-9 * want)
        all_bad = 1;
    if (rank == 0)
        printf("slab_prefetch on %d ranks (%s): %lld slabs of at most %d "
               "KiB, %llu prefetch hits, %lld wrong elements, sum of squares "
               "%.6e (expected %.6e): %s\n",
               P, passion_mpi_build(), (long long)all_slabs, 64,
               all_hits, (long long)all_wrong, total, want,
               all_bad ? "FAILED" : "ok");
    free(loc);
    if (f && passion_file_close(f))
        all_bad = 1;
    if (!all_bad) {
        char mine[4200];
        snprintf(mine, sizeof mine, "%s/slab.%d.laf", argc > 1 ? argv[1] : ".",
                 rank);
        remove(mine);
    }
    passion_array_free(a);
    passion_finalize(ctx);
    MPI_Finalize();
    return all_bad;
}
