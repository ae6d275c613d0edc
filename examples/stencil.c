/*
 * stencil.c - an out-of-core stencil: Jacobi sweeps of a 2-D grid that
 * lives in local array files, one per rank.
 *
 * The grid (N0 x N1 doubles) is distributed (BLOCK, *) with one ghost row
 * on each side. Each sweep
 *   1. exchanges the ghost rows with the neighbours' files
 *      (passion_file_shift_all: file to file, through MPI),
 *   2. walks the local file in slabs with a halo of one row (prefetch on,
 *      shared rows reused, not reread), writing the 5-point average of
 *      every interior cell into the second file:
 *         u'(i, j) = (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1)) / 4,
 *      cells outside the grid being 0,
 *   3. swaps the two files.
 * At the end rank 0 gathers the result and compares it with the same
 * sweeps done in memory on the whole grid (a naive loop).
 *
 * Build: mpicc.mpich stencil.c $(pkg-config --cflags --libs passion)
 * Run:   mpiexec.mpich -n 3 ./stencil [DIR]
 */
#include <passion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N0 96
#define N1 64
#define SWEEPS 6

static double init(int64_t i, int64_t j)
{
    return (double)((i * 7 + j * 13) % 17);
}

/* the reference: SWEEPS sweeps of the whole grid in memory */
static void reference(double *u)
{
    double *v = malloc(sizeof(double) * N0 * N1);
    for (int t = 0; t < SWEEPS; t++) {
        for (int64_t i = 0; i < N0; i++)
            for (int64_t j = 0; j < N1; j++) {
                double s = 0;
                s += i > 0 ? u[(i - 1) * N1 + j] : 0;
                s += i < N0 - 1 ? u[(i + 1) * N1 + j] : 0;
                s += j > 0 ? u[i * N1 + j - 1] : 0;
                s += j < N1 - 1 ? u[i * N1 + j + 1] : 0;
                v[i * N1 + j] = s / 4;
            }
        memcpy(u, v, sizeof(double) * N0 * N1);
    }
    free(v);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    const char *dir = argc > 1 ? argv[1] : ".";
    char pa[4096], pb[4096];
    snprintf(pa, sizeof pa, "%s/stencil_u.%%d.laf", dir);
    snprintf(pb, sizeof pb, "%s/stencil_v.%%d.laf", dir);

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
    spec.ghost[0] = 1;
    passion_array *a = NULL;
    passion_file *u = NULL, *v = NULL;
    int rc = passion_array_create(ctx, &spec, &a);
    if (!rc)
        rc = passion_file_open(a, pa, PASSION_MODE_CREATE, &u);
    if (!rc)
        rc = passion_file_open(a, pb, PASSION_MODE_CREATE, &v);

    /* the initial grid: the local file holds n0 + 2 rows (ghosts zero) */
    int64_t lo[2], hi[2], n[2];
    passion_array_local_bounds(a, rank, 0, lo, hi);
    passion_array_local_shape(a, rank, n);
    int64_t rows = n[0] + 2;
    double *loc = calloc((size_t)(rows * n[1]), sizeof *loc);
    for (int64_t i = 0; i < n[0]; i++)
        for (int64_t j = 0; j < n[1]; j++)
            loc[(i + 1) * n[1] + j] = init(lo[0] + i, j);
    if (!rc)
        rc = passion_file_write_local(u, loc);

    passion_counters_reset(ctx);
    for (int t = 0; t < SWEEPS && !rc; t++) {
        /* 1. ghost rows from the neighbours (the grid's ends stay 0) */
        rc = passion_file_shift_all(u, 0, 0, 0, 1);
        if (rc)
            break; /* collective: the same rc everywhere */
        /* 2. the slab loop from u into v */
        passion_slab_opts so;
        passion_slab_opts_init(&so);
        so.budget = 16 << 10;
        so.halo = 1;
        so.out = v;
        passion_slab_iter *it = NULL;
        int lrc = passion_slab_open(u, &so, &it);
        passion_slab s;
        int got = 0;
        while (!lrc && (got = passion_slab_next(it, &s)) == 1) {
            const double *in = s.in;
            double *out = s.out;
            int64_t w = s.mem.shape[1];
            for (int64_t i = 0; i < s.count; i++) {
                int64_t r = s.mem.offset[0] + i;
                for (int64_t j = 0; j < n[1]; j++) {
                    int64_t p = r * w + s.mem.offset[1] + j;
                    double x = in[p - w] + in[p + w];
                    x += j > 0 ? in[p - 1] : 0;
                    x += j < n[1] - 1 ? in[p + 1] : 0;
                    out[p] = x / 4;
                }
            }
        }
        if (!lrc && got < 0)
            lrc = got;
        int crc = passion_slab_close(it);
        if (!lrc)
            lrc = crc;
        /* agree before the next collective shift */
        MPI_Allreduce(&lrc, &rc, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        passion_file *tmp = u; /* 3. the result is the next input */
        u = v;
        v = tmp;
    }
    if (rc)
        fprintf(stderr, "[rank %d] %s: %s\n", rank, passion_strerror(rc),
                passion_ctx_errdetail(ctx));
    passion_counters c;
    passion_counters_get(ctx, &c);

    /* gather the interiors on rank 0 and compare with the reference */
    int lrc = rc ? rc : passion_file_read_local(u, loc);
    int bad = lrc != 0, all_bad = 0;
    int *counts = malloc(sizeof(int) * (size_t)P), *displs =
                                                        malloc(sizeof(int) * (size_t)P);
    int mine = (int)(n[0] * n[1]);
    MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    double *all = rank == 0 ? malloc(sizeof(double) * N0 * N1) : NULL;
    if (rank == 0)
        for (int r = 0, off = 0; r < P; r++) {
            displs[r] = off;
            off += counts[r];
        }
    MPI_Gatherv(loc + n[1], mine, MPI_DOUBLE, all, counts, displs,
                MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0) {
        double *ref = malloc(sizeof(double) * N0 * N1), err = 0;
        for (int64_t i = 0; i < N0; i++)
            for (int64_t j = 0; j < N1; j++)
                ref[i * N1 + j] = init(i, j);
        reference(ref);
        for (int64_t k = 0; !all_bad && k < (int64_t)N0 * N1; k++)
            err = fmax(err, fabs(all[k] - ref[k]));
        if (err > 1e-12)
            all_bad = 1;
        printf("stencil on %d ranks (%s): %d sweeps of %dx%d, max |error| "
               "against the in-memory sweeps %.3g, rank 0 reused %llu bytes "
               "and read %llu: %s\n",
               P, passion_mpi_build(), SWEEPS, N0, N1, err,
               (unsigned long long)c.reuse_bytes,
               (unsigned long long)c.bytes_read, all_bad ? "FAILED" : "ok");
        free(ref);
        free(all);
    }
    MPI_Bcast(&all_bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(counts);
    free(displs);
    free(loc);
    int close_rc = passion_file_close(u);
    close_rc |= passion_file_close(v);
    if (close_rc)
        all_bad = 1;
    if (!all_bad) {
        char p1[4200];
        snprintf(p1, sizeof p1, "%s/stencil_u.%d.laf", dir, rank);
        remove(p1);
        snprintf(p1, sizeof p1, "%s/stencil_v.%d.laf", dir, rank);
        remove(p1);
    }
    passion_array_free(a);
    passion_finalize(ctx);
    MPI_Finalize();
    return all_bad;
}
