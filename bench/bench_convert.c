/*
 * bench_convert.c - one timed strided read of a 2-D int32 array for the
 * suite `convert` (bench/convert.py drives it; README "Benchmarks"):
 * every rank reads its own section of a netCDF variable with passion
 * (passion_open "x.nc:u", then passion_file_read_all with the method
 * auto, the default a user gets) or of an HDF5 dataset "/data" holding the
 * same array with HDF5's own hyperslab read (bench_hdf5.c: collective or
 * independent MPI-IO transfer), and checks every element against the
 * array's formula (element (i, j) of an N x N array is i * N + j).
 *
 * usage: bench-convert --file PATH[:OBJ] --n N --method passion|hdf5-coll|
 *          hdf5-indep --sect SECTS [--regime warm|cold]
 * SECTS: one section per rank, "s0:c0:d0,s1:c1:d1" (start, count,
 * stride per dimension, dimension 0 slowest) joined by '/'.
 * Cold: rank 0 drops the file's pages (fdatasync + posix_fadvise
 * DONTNEED, as every cold suite) before the timed call, and before the
 * untimed first call that lets `auto` measure its file costs. The timed
 * region is the read call (plus the hyperslab selection for HDF5); the
 * open is outside it. Rank 0 prints one line on stdout:
 *   seconds,bytes_read,io_calls,check
 * (seconds: the slowest rank's; bytes_read and io_calls summed over ranks
 * from passion's counters, empty for HDF5; check ok or FAIL).
 */
#include "bench_hdf5.h"
#include "bench_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Section q of SECTS into s; 0 or -1. */
static int parse_sect(const char *all, int q, passion_section *s)
{
    const char *c = all;
    for (int k = 0; k < q && c; k++) {
        c = strchr(c, '/');
        if (c)
            c++;
    }
    if (!c)
        return -1;
    memset(s, 0, sizeof *s);
    for (int d = 0; d < 2; d++) {
        long long st, ct, sd;
        int n = 0;
        if (sscanf(c, "%lld:%lld:%lld%n", &st, &ct, &sd, &n) != 3 || st < 0 ||
            ct < 0 || sd < 1)
            return -1;
        s->start[d] = st;
        s->count[d] = ct;
        s->stride[d] = sd;
        c += n;
        if (d == 0 && *c++ != ',')
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_args a;
    const char *file = NULL, *method = NULL, *sects = NULL;
    int64_t n_arg = 0;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--n"))
            n_arg = atoll(argv[i + 1]);
        if (!strcmp(argv[i], "--file"))
            file = argv[i + 1];
        if (!strcmp(argv[i], "--method"))
            method = argv[i + 1];
        if (!strcmp(argv[i], "--sect"))
            sects = argv[i + 1];
    }
    passion_section s;
    int bad_args = bench_args_parse(&a, argc, argv) || !file || !method ||
                   n_arg <= 0 ||
                   !sects || parse_sect(sects, a.rank, &s) ||
                   (strcmp(method, "passion") && strcmp(method, "hdf5-coll")
                    && strcmp(method, "hdf5-indep"));
    if (bad_args) {
        if (a.rank == 0)
            fprintf(stderr, "usage: bench-convert --file PATH --n N --method "
                            "passion|hdf5-coll|hdf5-indep --sect "
                            "s:c:d,s:c:d/... [--regime warm|cold]\n");
        MPI_Finalize();
        return 2;
    }
    int h5 = strcmp(method, "passion") != 0;
    passion_ctx *ctx = NULL;
    passion_array *arr = NULL;
    passion_file *f = NULL;
    bench_h5 *h = NULL;
    int64_t n = 0; /* the array's N (N x N) */
    char path[1024];
    snprintf(path, sizeof path, "%s", file);
    int rc = 0;
    if (h5) {
        rc = bench_h5_open(MPI_COMM_WORLD, file, &h) ? -1 : 0;
    } else {
        rc = bench_init(&ctx, "%s", "");
        if (!rc)
            rc = passion_open(ctx, file, PASSION_MODE_RDONLY, NULL, &arr, &f);
        if (!rc) {
            const passion_array_spec *sp = passion_array_get_spec(arr);
            n = sp->ndims == 2 && sp->elem_size == 4 &&
                        sp->shape[0] == sp->shape[1]
                    ? sp->shape[1]
                    : 0;
            if (n != n_arg)
                n = -1; /* reported as FAIL */
            /* the data file, for dropping its pages */
            snprintf(path, sizeof path, "%s", passion_file_path(f));
        }
    }
    if (rc) {
        if (a.rank == 0)
            fprintf(stderr, "bench-convert: cannot open %s (%s)\n", file,
                    ctx ? passion_ctx_errdetail(ctx) : "HDF5");
        MPI_Finalize();
        return 1;
    }
    if (h5)
        n = n_arg; /* passion's shape must be the caller's N (else FAIL) */
    int64_t ne = passion_section_elems(&s, 2);
    int32_t *buf = malloc((size_t)(ne > 0 ? ne : 1) * 4);
    if (!buf) {
        fprintf(stderr, "bench-convert: no memory for %lld elements\n",
                (long long)ne);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* cold: the file's pages dropped before auto's first call (which
       measures the file costs) and before the timed call */
    if (!h5)
        bench_first_use(&a, arr, f, path);
    memset(buf, 0, (size_t)(ne > 0 ? ne : 1) * 4);
    MPI_Barrier(MPI_COMM_WORLD);
    if (a.cold && a.rank == 0)
        bench_drop_cache_path(path);
    if (ctx)
        passion_counters_reset(ctx);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int err;
    if (h5)
        err = bench_h5_access(h, !strcmp(method, "hdf5-coll"), 0, 2, s.start,
                              s.count, s.stride, buf) != 0;
    else
        err = passion_file_read_all(f, &s, buf, NULL, PASSION_METHOD_AUTO) !=
              0;
    double t = bench_max_time(MPI_Wtime() - t0);
    passion_counters cnt;
    memset(&cnt, 0, sizeof cnt);
    if (ctx)
        passion_counters_get(ctx, &cnt);
    int bad = err || n <= 0;
    for (int64_t i = 0; i < ne && !bad; i++) {
        int64_t r = s.start[0] + (i / s.count[1]) * s.stride[0];
        int64_t c = s.start[1] + (i % s.count[1]) * s.stride[1];
        bad = buf[i] != (int32_t)(r * n + c);
    }
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    unsigned long long mine[2] = {cnt.bytes_read, cnt.io_calls}, sum[2];
    MPI_Reduce(mine, sum, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0,
               MPI_COMM_WORLD);
    if (a.rank == 0) {
        if (h5)
            printf("%.6f,,,%s\n", t, anybad ? "FAIL" : "ok");
        else
            printf("%.6f,%llu,%llu,%s\n", t, sum[0], sum[1],
                   anybad ? "FAIL" : "ok");
        fflush(stdout);
    }
    free(buf);
    bench_h5_close(h);
    if (f)
        passion_file_close(f);
    passion_array_free(arr);
    if (ctx)
        passion_finalize(ctx);
    MPI_Finalize();
    return anybad;
}
