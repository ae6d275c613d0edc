/*
 * mpiio_prog_h5: a parallel HDF5 program that knows nothing of passion,
 * run by tests/mpiio_programs.py on plain MPI-IO and through
 * libpassion_mpiio (linked before MPI, or LD_PRELOAD); the script
 * compares the HDF5 file and the buffers read (reads.<rank>) byte for
 * byte and reads the layer's report.
 *
 * Usage: mpiio_prog_h5 DIR SEED. Every rank draws the same random shapes
 * from SEED: a contiguous dataset of 1 to 3 dimensions (float64 or
 * int32), filled (each rank a block of rows), then written by hyperslab
 * selections (block-cyclic rows, strided
 * columns; a rank may select nothing) with collective transfer, a second
 * one with independent transfer, then each rank reads its neighbour's
 * selection back (read after write across ranks) collectively and
 * independently, and a strided selection into a strided memory
 * selection. Every value read is checked against the formula that wrote
 * it (an independent reference); the exit status is 1 when any rank
 * found a difference. Object modification times are off, so two runs
 * write the same bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>
#include <mpi.h>

static int P, me, fails;
static FILE *rec;
static uint64_t rng;

static int rnd(int n) /* 0 .. n-1, the same on every rank */
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (int)((rng >> 33) % (uint64_t)n);
}

typedef struct shape {
    int nd;
    hsize_t dims[3];
    hid_t mtype;   /* memory type: H5T_NATIVE_DOUBLE or H5T_NATIVE_INT */
    hid_t ftype;   /* file type */
    size_t esize;
} shape;

/* The value element `lin` (row-major index) of dataset `tag` holds. */
static double value(int tag, hsize_t lin)
{
    return (double)(tag * 100000 + (int)(lin % 99991)) + 0.25;
}

/* A regular hyperslab: start, stride, count, block per dimension. */
typedef struct slab {
    int any;
    hsize_t start[3], stride[3], count[3], block[3];
} slab;

/* Rank r's selection of a dataset: rows r*b + k*P*b .. +b-1 (block-cyclic
   over dim 0, whole blocks only), and in the other dimensions a strided
   run; none when no block fits. Disjoint between ranks. */
static slab slab_of(const shape *s, int r, int variant)
{
    slab h = {0};
    hsize_t b = 1 + (hsize_t)(variant % 3);
    hsize_t first = (hsize_t)r * b;
    if (first + b > s->dims[0])
        return h;
    h.start[0] = first;
    h.stride[0] = (hsize_t)P * b;
    h.block[0] = b;
    h.count[0] = (s->dims[0] - first - b) / h.stride[0] + 1;
    for (int d = 1; d < s->nd; d++) {
        hsize_t n = s->dims[d];
        h.start[d] = (hsize_t)((variant + d) % 2);
        h.stride[d] = 1 + (hsize_t)((variant * 7 + d) % 3);
        h.block[d] = 1;
        h.count[d] = h.start[d] < n ? (n - h.start[d] - 1) / h.stride[d] + 1
                                    : 0;
        if (h.count[d] == 0)
            return h;
    }
    h.any = 1;
    return h;
}

static void select_slab(const slab *h, hid_t space)
{
    if (h->any)
        H5Sselect_hyperslab(space, H5S_SELECT_SET, h->start, h->stride,
                            h->count, h->block);
    else
        H5Sselect_none(space);
}

/* The reference: the row-major indices of the elements the slab holds,
   in increasing order (the order HDF5 transfers a hyperslab's points),
   found by testing every element of the dataset (naive loops). */
static hsize_t *points(const shape *s, const slab *h, hssize_t *n)
{
    hsize_t total = 1;
    for (int d = 0; d < s->nd; d++)
        total *= s->dims[d];
    hsize_t *lin = malloc(sizeof *lin * (size_t)total);
    *n = 0;
    for (hsize_t i = 0; h->any && i < total; i++) {
        hsize_t rem = i;
        int in = 1;
        for (int d = s->nd - 1; d >= 0; d--) {
            hsize_t x = rem % s->dims[d];
            rem /= s->dims[d];
            if (x < h->start[d] ||
                (x - h->start[d]) % h->stride[d] >= h->block[d] ||
                (x - h->start[d]) / h->stride[d] >= h->count[d])
                in = 0;
        }
        if (in)
            lin[(*n)++] = i;
    }
    return lin;
}

static void fill(const shape *s, int tag, const hsize_t *lin, hssize_t n,
                 void *buf)
{
    for (hssize_t i = 0; i < n; i++) {
        double v = value(tag, lin[i]);
        if (s->esize == 8)
            ((double *)buf)[i] = v;
        else
            ((int32_t *)buf)[i] = (int32_t)v;
    }
}

static void check(const shape *s, int tag, const hsize_t *lin, hssize_t n,
                  const void *buf, const char *what)
{
    for (hssize_t i = 0; i < n; i++) {
        double v = value(tag, lin[i]);
        int ok = s->esize == 8 ? ((const double *)buf)[i] == v
                               : ((const int32_t *)buf)[i] == (int32_t)v;
        if (!ok) {
            fprintf(stderr, "mpiio_prog_h5: rank %d %s: element %llu wrong\n",
                    me, what, (unsigned long long)lin[i]);
            fails++;
            return;
        }
    }
    if (n > 0 && fwrite(buf, s->esize, (size_t)n, rec) != (size_t)n)
        fails++;
}

static hid_t make_dset(hid_t file, const char *name, const shape *s)
{
    hid_t space = H5Screate_simple(s->nd, s->dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(dcpl, 0);
    H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
    H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
    hid_t d = H5Dcreate2(file, name, s->ftype, space, H5P_DEFAULT, dcpl,
                         H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(space);
    return d;
}

/* Rank r's selection of dataset d written (or read back, rank `who`'s)
   with the transfer mode given. */
static void access_sel(hid_t d, const shape *s, int tag, int who,
                       int variant, H5FD_mpio_xfer_t mode, int write)
{
    hid_t fspace = H5Dget_space(d);
    slab h = slab_of(s, who, variant);
    select_slab(&h, fspace);
    hssize_t n;
    hsize_t *lin = points(s, &h, &n);
    hsize_t mn = (hsize_t)(n > 0 ? n : 1);
    hid_t mspace = H5Screate_simple(1, &mn, NULL);
    if (n <= 0)
        H5Sselect_none(mspace);
    void *buf = calloc((size_t)mn, s->esize);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, mode);
    if (write) {
        fill(s, tag, lin, n, buf);
        if (H5Dwrite(d, s->mtype, mspace, fspace, dxpl, buf) < 0)
            fails++;
    } else {
        if (H5Dread(d, s->mtype, mspace, fspace, dxpl, buf) < 0)
            fails++;
        check(s, tag, lin, n, buf,
              mode == H5FD_MPIO_COLLECTIVE ? "collective read"
                                           : "independent read");
    }
    H5Pclose(dxpl);
    free(buf);
    free(lin);
    H5Sclose(mspace);
    H5Sclose(fspace);
}

/* Every element of dataset d holds value(tag, i) (each rank a block of
   rows, collective): the holes the strided writes leave then hold
   defined data, the same in every run (MPI-IO leaves bytes no call
   wrote undefined, and an implementation may fill them with anything). */
static void prefill(hid_t d, const shape *s, int tag)
{
    hid_t fspace = H5Dget_space(d);
    hsize_t st[3] = {0, 0, 0}, ct[3];
    hsize_t row = 1;
    for (int k = 1; k < s->nd; k++) {
        ct[k] = s->dims[k];
        row *= s->dims[k];
    }
    st[0] = s->dims[0] * (hsize_t)me / (hsize_t)P;
    ct[0] = s->dims[0] * (hsize_t)(me + 1) / (hsize_t)P - st[0];
    hsize_t n = ct[0] * row, mn = n ? n : 1;
    if (n)
        H5Sselect_hyperslab(fspace, H5S_SELECT_SET, st, NULL, ct, NULL);
    else
        H5Sselect_none(fspace);
    hid_t mspace = H5Screate_simple(1, &mn, NULL);
    if (!n)
        H5Sselect_none(mspace);
    char *buf = malloc((size_t)mn * s->esize);
    hsize_t *lin = malloc(sizeof *lin * (size_t)mn);
    for (hsize_t i = 0; i < n; i++)
        lin[i] = st[0] * row + i;
    fill(s, tag, lin, (hssize_t)n, buf);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    if (H5Dwrite(d, s->mtype, mspace, fspace, dxpl, buf) < 0)
        fails++;
    H5Pclose(dxpl);
    free(lin);
    free(buf);
    H5Sclose(mspace);
    H5Sclose(fspace);
}

/* A strided selection read into every other element of a memory buffer
   (a strided memory selection): the values land at even positions. */
static void strided_memory_read(hid_t d, const shape *s, int tag,
                                int variant)
{
    hid_t fspace = H5Dget_space(d);
    slab h = slab_of(s, (me + 1) % P, variant);
    select_slab(&h, fspace);
    hssize_t n;
    hsize_t *lin = points(s, &h, &n);
    hsize_t mn = 2 * (hsize_t)(n > 0 ? n : 1);
    hid_t mspace = H5Screate_simple(1, &mn, NULL);
    if (n > 0) {
        hsize_t st = 0, str = 2, cnt = (hsize_t)n;
        H5Sselect_hyperslab(mspace, H5S_SELECT_SET, &st, &str, &cnt, NULL);
    } else {
        H5Sselect_none(mspace);
    }
    char *buf = calloc((size_t)mn, s->esize);
    char *packed = calloc((size_t)mn, s->esize);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    if (H5Dread(d, s->mtype, mspace, fspace, dxpl, buf) < 0)
        fails++;
    for (hssize_t i = 0; i < n; i++)
        memcpy(packed + (size_t)i * s->esize,
               buf + (size_t)(2 * i) * s->esize, s->esize);
    check(s, tag, lin, n, packed, "strided memory read");
    H5Pclose(dxpl);
    free(buf);
    free(packed);
    free(lin);
    H5Sclose(mspace);
    H5Sclose(fspace);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (argc < 3) {
        if (me == 0)
            fprintf(stderr, "usage: mpiio_prog_h5 DIR SEED\n");
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
    shape s;
    s.nd = 1 + rnd(3);
    for (int d = 0; d < s.nd; d++)
        s.dims[d] = (hsize_t)(d == 0 ? 2 * P + 3 + rnd(40)
                                     : 2 + rnd(s.nd == 2 ? 60 : 20));
    int dbl = rnd(2);
    s.mtype = dbl ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT;
    s.ftype = dbl ? H5T_IEEE_F64LE : H5T_STD_I32LE;
    s.esize = dbl ? 8 : 4;
    int variant = rnd(6);

    snprintf(path, sizeof path, "%s/prog.h5", argv[1]);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (file < 0) {
        fprintf(stderr, "mpiio_prog_h5: cannot create %s\n", path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    hid_t a = make_dset(file, "A", &s);
    hid_t b = make_dset(file, "B", &s);
    prefill(a, &s, 7);
    prefill(b, &s, 8);
    access_sel(a, &s, 1, me, variant, H5FD_MPIO_COLLECTIVE, 1);
    access_sel(b, &s, 2, me, variant + 1, H5FD_MPIO_INDEPENDENT, 1);
    H5Fflush(file, H5F_SCOPE_GLOBAL);
    MPI_Barrier(MPI_COMM_WORLD);
    int next = (me + 1) % P;
    access_sel(a, &s, 1, next, variant, H5FD_MPIO_COLLECTIVE, 0);
    access_sel(a, &s, 1, next, variant, H5FD_MPIO_INDEPENDENT, 0);
    access_sel(b, &s, 2, next, variant + 1, H5FD_MPIO_COLLECTIVE, 0);
    strided_memory_read(a, &s, 1, variant);
    H5Dclose(a);
    H5Dclose(b);
    H5Fclose(file);
    H5Pclose(fapl);
    fclose(rec);
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("mpiio_prog_h5: P=%d nd=%d dims=%llu,%llu,%llu %s: %s\n", P,
               s.nd, (unsigned long long)s.dims[0],
               (unsigned long long)(s.nd > 1 ? s.dims[1] : 0),
               (unsigned long long)(s.nd > 2 ? s.dims[2] : 0),
               dbl ? "float64" : "int32", all ? "FAIL" : "ok");
    MPI_Finalize();
    return all ? 1 : 0;
}
