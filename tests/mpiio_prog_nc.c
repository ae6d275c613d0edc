/*
 * mpiio_prog_nc: a PnetCDF program that knows nothing of passion, run by
 * tests/mpiio_programs.py on plain MPI-IO and through libpassion_mpiio;
 * the script compares the netCDF files and the buffers read
 * (reads.<rank>) byte for byte and reads the layer's report.
 *
 * Usage: mpiio_prog_nc DIR SEED. Every rank draws the same random shapes
 * from SEED and writes three files, CDF-1, CDF-2 and CDF-5 (prog1.nc,
 * prog2.nc, prog5.nc), each with a fixed-size 2-D variable (float64 or
 * int32) and a record variable: ncmpi_put_vars_all writes each rank's
 * strided section (rows strided by P, strided columns; fill mode on, so
 * the columns no rank writes hold the default fill value),
 * ncmpi_put_vars_all the rank's records; then ncmpi_get_vara_all reads the neighbour's
 * block of rows and ncmpi_get_vars_all its strided section (read after
 * write across ranks), independently too (ncmpi_begin_indep_data). Every
 * value read is checked against the formula that wrote it; the exit
 * status is 1 when any rank found a difference.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <pnetcdf.h>

static int P, me, fails;
static FILE *rec;
static uint64_t rng;

static int rnd(int n) /* 0 .. n-1, the same on every rank */
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (int)((rng >> 33) % (uint64_t)n);
}

#define CK(call)                                                           \
    do {                                                                   \
        int e_ = (call);                                                   \
        if (e_ != NC_NOERR) {                                              \
            fprintf(stderr, "mpiio_prog_nc: rank %d line %d: %s\n", me,    \
                    __LINE__, ncmpi_strerror(e_));                         \
            fails++;                                                       \
        }                                                                  \
    } while (0)

typedef struct geo {
    MPI_Offset rows, cols, nrec;
    int dbl;
} geo;

static double value(int tag, MPI_Offset r, MPI_Offset c, MPI_Offset cols)
{
    return (double)(tag * 100000 + (int)((r * cols + c) % 99991)) + 0.5;
}

/* Rank r's strided section of the fixed variable: rows r, r+P, ...
   (stride P), columns c0, c0+cs, ...; count 0 rows when r >= rows. */
static void section_of(const geo *g, int r, int variant, MPI_Offset *start,
                       MPI_Offset *count, MPI_Offset *stride)
{
    start[0] = r < g->rows ? r : 0;
    stride[0] = P;
    count[0] = r < g->rows ? (g->rows - 1 - r) / P + 1 : 0;
    start[1] = variant % 2;
    stride[1] = 1 + variant % 3;
    count[1] = (g->cols - 1 - start[1]) / stride[1] + 1;
}

/* Whether column c of the fixed variable was written (every row is:
   the ranks' sections cover rows 0, 1, ...); -1: every column. */
static int written(int variant, MPI_Offset c)
{
    MPI_Offset c0 = variant % 2, cs = 1 + variant % 3;
    return variant < 0 || (c >= c0 && (c - c0) % cs == 0);
}

/* The values of a section as the file holds them: the formula where it
   was written, the type's default fill value (NC_FILL) elsewhere. */
static void *make_model(const geo *g, int tag, const MPI_Offset *start,
                        const MPI_Offset *count, const MPI_Offset *stride,
                        MPI_Offset cols, int variant)
{
    size_t n = (size_t)(count[0] * count[1]);
    void *buf = malloc((n ? n : 1) * 8);
    size_t k = 0;
    for (MPI_Offset i = 0; i < count[0]; i++)
        for (MPI_Offset j = 0; j < count[1]; j++, k++) {
            MPI_Offset c = start[1] + j * stride[1];
            int w = written(variant, c);
            double v = value(tag, start[0] + i * stride[0], c, cols);
            if (g->dbl)
                ((double *)buf)[k] = w ? v : NC_FILL_DOUBLE;
            else
                ((int32_t *)buf)[k] = w ? (int32_t)v : NC_FILL_INT;
        }
    return buf;
}

static void *make(const geo *g, int tag, const MPI_Offset *start,
                  const MPI_Offset *count, const MPI_Offset *stride,
                  MPI_Offset cols)
{
    return make_model(g, tag, start, count, stride, cols, -1);
}

static void check(const geo *g, int tag, const MPI_Offset *start,
                  const MPI_Offset *count, const MPI_Offset *stride,
                  MPI_Offset cols, int variant, const void *buf,
                  const char *what)
{
    void *want = make_model(g, tag, start, count, stride, cols, variant);
    size_t bytes = (size_t)(count[0] * count[1]) * (g->dbl ? 8 : 4);
    if (memcmp(want, buf, bytes)) {
        fprintf(stderr, "mpiio_prog_nc: rank %d %s: wrong values\n", me,
                what);
        fails++;
    }
    if (bytes && fwrite(buf, 1, bytes, rec) != bytes)
        fails++;
    free(want);
}

static int put_get(int id, int var, const geo *g, int tag, int variant,
                   const MPI_Offset *start, const MPI_Offset *count,
                   const MPI_Offset *stride, MPI_Offset cols, int put,
                   int coll)
{
    void *buf = put ? make(g, tag, start, count, stride, cols)
                    : calloc((size_t)(count[0] * count[1]) + 1, 8);
    int e;
    if (put)
        e = g->dbl ? ncmpi_put_vars_double_all(id, var, start, count, stride,
                                               buf)
                   : ncmpi_put_vars_int_all(id, var, start, count, stride,
                                            buf);
    else if (coll)
        e = g->dbl ? ncmpi_get_vars_double_all(id, var, start, count, stride,
                                               buf)
                   : ncmpi_get_vars_int_all(id, var, start, count, stride,
                                            buf);
    else
        e = g->dbl ? ncmpi_get_vars_double(id, var, start, count, stride, buf)
                   : ncmpi_get_vars_int(id, var, start, count, stride, buf);
    CK(e);
    if (!put)
        check(g, tag, start, count, stride, cols, variant, buf,
              coll ? "collective read" : "independent read");
    free(buf);
    return e;
}

static void one_file(const char *dir, int kind, const geo *g, int variant)
{
    char path[700];
    int id, dims[3], fixed, recv;
    int mode = NC_CLOBBER | (kind == 2 ? NC_64BIT_OFFSET
                             : kind == 5 ? NC_64BIT_DATA : 0);
    snprintf(path, sizeof path, "%s/prog%d.nc", dir, kind);
    CK(ncmpi_create(MPI_COMM_WORLD, path, mode, MPI_INFO_NULL, &id));
    CK(ncmpi_def_dim(id, "time", NC_UNLIMITED, &dims[0]));
    CK(ncmpi_def_dim(id, "y", g->rows, &dims[1]));
    CK(ncmpi_def_dim(id, "x", g->cols, &dims[2]));
    nc_type t = g->dbl ? NC_DOUBLE : NC_INT;
    CK(ncmpi_def_var(id, "u", t, 2, &dims[1], &fixed));
    int rdims[2] = {dims[0], dims[2]};
    CK(ncmpi_def_var(id, "r", t, 2, rdims, &recv));
    CK(ncmpi_set_fill(id, NC_FILL, NULL));
    CK(ncmpi_enddef(id));

    MPI_Offset st[2], ct[2], sd[2];
    section_of(g, me, variant, st, ct, sd);
    put_get(id, fixed, g, 1, -1, st, ct, sd, g->cols, 1, 1);
    /* the records: rank me writes records me, me+P, ... whole rows */
    MPI_Offset rs[2] = {me, 0}, rc[2] = {me < g->nrec ? 1 : 0, g->cols},
               rsd[2] = {1, 1};
    for (MPI_Offset k = 0; k < (g->nrec + P - 1) / P; k++) {
        rs[0] = me + k * P;
        rc[0] = rs[0] < g->nrec ? 1 : 0;
        if (!rc[0])
            rs[0] = 0;
        put_get(id, recv, g, 2, -1, rs, rc, rsd, g->cols, 1, 1);
    }
    CK(ncmpi_sync(id));
    MPI_Barrier(MPI_COMM_WORLD);

    int next = (me + 1) % P;
    section_of(g, next, variant, st, ct, sd);
    put_get(id, fixed, g, 1, -1, st, ct, sd, g->cols, 0, 1);
    /* the neighbour's block of whole rows, a vara read (stride 1) */
    MPI_Offset bs[2] = {next * g->rows / P, 0},
               bc[2] = {(next + 1) * g->rows / P - next * g->rows / P,
                        g->cols},
               one[2] = {1, 1};
    put_get(id, fixed, g, 1, variant, bs, bc, one, g->cols, 0, 1);
    MPI_Offset all_rs[2] = {0, 0}, all_rc[2] = {g->nrec, g->cols};
    put_get(id, recv, g, 2, -1, all_rs, all_rc, one, g->cols, 0, 1);
    CK(ncmpi_begin_indep_data(id));
    put_get(id, fixed, g, 1, -1, st, ct, sd, g->cols, 0, 0);
    CK(ncmpi_end_indep_data(id));
    CK(ncmpi_close(id));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (argc < 3) {
        if (me == 0)
            fprintf(stderr, "usage: mpiio_prog_nc DIR SEED\n");
        MPI_Finalize();
        return 2;
    }
    rng = strtoull(argv[2], NULL, 10);
    char path[700];
    snprintf(path, sizeof path, "%s/reads.%d", argv[1], me);
    rec = fopen(path, "wb");
    if (!rec) {
        MPI_Finalize();
        return 2;
    }
    geo g;
    g.rows = P + 1 + rnd(40);
    g.cols = 2 + rnd(50);
    g.nrec = 1 + rnd(2 * P + 3);
    g.dbl = rnd(2);
    int variant = rnd(6);
    for (int k = 0; k < 3; k++)
        one_file(argv[1], k == 0 ? 1 : k == 1 ? 2 : 5, &g, variant);
    fclose(rec);
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("mpiio_prog_nc: P=%d rows=%lld cols=%lld records=%lld %s: "
               "%s\n", P, (long long)g.rows, (long long)g.cols,
               (long long)g.nrec, g.dbl ? "float64" : "int32",
               all ? "FAIL" : "ok");
    MPI_Finalize();
    return all ? 1 : 0;
}
