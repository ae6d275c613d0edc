/*
 * section_io.c - strided section read and write of one global array file.
 *
 * A 2-D array of doubles, N0 x N1, row-major, in one global file; rank r
 * owns a block of rows. The program
 *   1. writes every rank's block (collective, the extended two-phase
 *      method picks the file domains): a(i, j) = 1000 i + j;
 *   2. reads the strided section rows r, r+P, r+2P..., columns 1, 4, 7...
 *      on every rank (collective) and checks it;
 *   3. writes -a(i, j) into the section rows 0, 2, 4..., columns 0, 3, 6...
 *      split over the ranks (rank r: its share of those rows) and
 *   4. checks the whole file on rank 0 with plain stdio (an independent
 *      reader: the file is raw row-major doubles).
 * Prints one line per step; exits 1 on any wrong element or error.
 *
 * Build: mpicc.mpich section_io.c $(pkg-config --cflags --libs passion)
 * Run:   mpiexec.mpich -n 3 ./section_io [DIR]
 */
#include <passion.h>

#include <stdio.h>
#include <stdlib.h>

#define N0 60
#define N1 50

static double val(int64_t i, int64_t j)
{
    return 1000.0 * (double)i + (double)j;
}

static int check(passion_ctx *ctx, int rc, const char *what)
{
    if (rc)
        fprintf(stderr, "%s: %s (%s)\n", what, passion_strerror(rc),
                passion_ctx_errdetail(ctx));
    return rc != 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    char path[4096];
    snprintf(path, sizeof path, "%s/section_io.raw", argc > 1 ? argv[1] : ".");

    passion_ctx *ctx;
    if (passion_init(MPI_COMM_WORLD, NULL, &ctx)) {
        fprintf(stderr, "passion_init failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int64_t shape[2] = {N0, N1};
    passion_array_spec spec;
    passion_array_spec_init(&spec, 2, shape, sizeof(double));
    spec.placement = PASSION_PLACE_GLOBAL;
    spec.grid[0] = P; /* (BLOCK, *) */
    spec.dist[1] = PASSION_DIST_COLLAPSED;
    passion_array *a = NULL;
    passion_file *f = NULL;
    bad |= check(ctx, passion_array_create(ctx, &spec, &a), "array_create");
    if (!bad)
        bad |= check(ctx, passion_file_open(a, path, PASSION_MODE_CREATE, &f),
                     "file_open");

    /* 1. every rank writes its block of rows */
    int64_t lo[2], hi[2];
    passion_array_local_bounds(a, rank, 0, lo, hi);
    int64_t rows = hi[0] - lo[0] + 1;
    double *blk = malloc((size_t)(rows > 0 ? rows : 1) * N1 * sizeof *blk);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < N1; j++)
            blk[i * N1 + j] = val(lo[0] + i, j);
    passion_section s;
    int64_t st[2] = {lo[0], 0}, cnt[2] = {rows > 0 ? rows : 0, N1};
    passion_section_set(&s, 2, st, cnt, NULL);
    if (!bad)
        bad |= check(ctx, passion_file_write_all(f, &s, blk, NULL,
                                                 PASSION_METHOD_AUTO),
                     "write_all (blocks)");

    /* 2. strided read: rows rank::P, columns 1::3 */
    int64_t nr = rank < N0 ? (N0 - 1 - rank) / P + 1 : 0, nc = (N1 - 2) / 3 + 1;
    double *sec = malloc((size_t)(nr * nc + 1) * sizeof *sec);
    int64_t st2[2] = {rank, 1}, cnt2[2] = {nr, nc}, str2[2] = {P, 3};
    passion_section_set(&s, 2, st2, cnt2, str2);
    if (!bad)
        bad |= check(ctx, passion_file_read_all(f, &s, sec, NULL,
                                                PASSION_METHOD_AUTO),
                     "read_all (strided)");
    int64_t wrong = 0;
    for (int64_t i = 0; !bad && i < nr; i++)
        for (int64_t j = 0; j < nc; j++)
            wrong += sec[i * nc + j] != val(rank + i * P, 1 + j * 3);
    int64_t all_wrong = 0;
    MPI_Allreduce(&wrong, &all_wrong, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("strided read  rows r::%d, cols 1::3: %lld wrong elements\n",
               P, (long long)all_wrong);
    bad |= all_wrong != 0;

    /* 3. strided write: rows 0::2 (rank r takes every P-th of them),
       columns 0::3, the negated values */
    int64_t even = (N0 + 1) / 2; /* rows 0, 2, ... */
    int64_t mine = rank < even ? (even - 1 - rank) / P + 1 : 0;
    int64_t wc = (N1 + 2) / 3;
    double *w = malloc((size_t)(mine * wc + 1) * sizeof *w);
    for (int64_t k = 0; k < mine; k++)
        for (int64_t j = 0; j < wc; j++)
            w[k * wc + j] = -val(2 * (rank + k * P), 3 * j);
    int64_t st3[2] = {2 * rank, 0}, cnt3[2] = {mine, wc},
            str3[2] = {2 * P, 3};
    passion_section_set(&s, 2, st3, cnt3, str3);
    if (!bad)
        bad |= check(ctx, passion_file_write_all(f, &s, w, NULL,
                                                 PASSION_METHOD_AUTO),
                     "write_all (strided)");
    if (f)
        bad |= check(ctx, passion_file_close(f), "file_close");
    passion_array_free(a);

    /* 4. rank 0 reads the raw file with stdio and checks every element */
    int all_bad = 0;
    MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0 && !all_bad) {
        FILE *fp = fopen(path, "rb");
        static double whole[N0 * N1];
        size_t got = fp ? fread(whole, sizeof(double), N0 * N1, fp) : 0;
        if (fp)
            fclose(fp);
        int64_t negated = 0;
        wrong = got != (size_t)N0 * N1;
        for (int64_t i = 0; !wrong && i < N0; i++)
            for (int64_t j = 0; j < N1; j++) {
                int in_sec = i % 2 == 0 && j % 3 == 0;
                double want = in_sec ? -val(i, j) : val(i, j);
                wrong += whole[i * N1 + j] != want;
                negated += in_sec;
            }
        printf("strided write rows 0::2, cols 0::3: %lld elements negated, "
               "file checked with stdio: %lld wrong\n",
               (long long)negated, (long long)wrong);
        all_bad = wrong != 0;
    }
    MPI_Bcast(&all_bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    passion_counters c;
    passion_counters_get(ctx, &c);
    if (rank == 0)
        printf("section_io on %d ranks (%s): %s (rank 0: %llu I/O calls, "
               "%llu bytes read, %llu written)\n",
               P, passion_mpi_build(), all_bad ? "FAILED" : "ok",
               (unsigned long long)c.io_calls,
               (unsigned long long)c.bytes_read,
               (unsigned long long)c.bytes_written);
    free(blk);
    free(sec);
    free(w);
    passion_finalize(ctx);
    if (rank == 0 && !all_bad)
        remove(path);
    MPI_Finalize();
    return all_bad;
}
