/* bench_hdf5.c - see bench_hdf5.h. */
#include "bench_hdf5.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_HAVE_HDF5
#include <hdf5.h>

struct bench_h5 {
    hid_t file, dset, type, dxpl_coll, dxpl_ind;
};

int bench_h5_available(void) { return 1; }

const char *bench_h5_version(void)
{
    static char v[32];
    unsigned maj = 0, min = 0, rel = 0;
    H5get_libversion(&maj, &min, &rel);
    snprintf(v, sizeof v, "%u.%u.%u", maj, min, rel);
    return v;
}

static hid_t elem_type(int64_t esize)
{
    hid_t t = H5Tcreate(H5T_OPAQUE, (size_t)esize);
    if (t >= 0)
        H5Tset_tag(t, "passion bench element");
    return t;
}

static hid_t fapl_mpio(MPI_Comm comm)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
    /* the dataset's data starts on a page boundary */
    H5Pset_alignment(fapl, 1, 4096);
    return fapl;
}

int bench_h5_create(MPI_Comm comm, const char *path, int nd,
                    const int64_t *dims, int64_t esize, int64_t *offset)
{
    hsize_t d[32];
    for (int k = 0; k < nd; k++)
        d[k] = (hsize_t)dims[k];
    int rc = -1;
    hid_t fapl = fapl_mpio(comm);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (file < 0)
        return -1;
    hid_t space = H5Screate_simple(nd, d, NULL);
    hid_t type = elem_type(esize);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_layout(dcpl, H5D_CONTIGUOUS);
    H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
    H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
    hid_t dset = H5Dcreate2(file, "data", type, space, H5P_DEFAULT, dcpl,
                            H5P_DEFAULT);
    if (dset >= 0) {
        haddr_t a = H5Dget_offset(dset);
        if (a != HADDR_UNDEF) {
            *offset = (int64_t)a;
            rc = 0;
        }
        H5Dclose(dset);
    }
    H5Pclose(dcpl);
    H5Tclose(type);
    H5Sclose(space);
    if (H5Fclose(file) < 0)
        rc = -1;
    return rc;
}

int bench_h5_open(MPI_Comm comm, const char *path, bench_h5 **hp)
{
    *hp = NULL;
    bench_h5 *h = calloc(1, sizeof *h);
    if (!h)
        return -1;
    hid_t fapl = fapl_mpio(comm);
    h->file = H5Fopen(path, H5F_ACC_RDWR, fapl);
    H5Pclose(fapl);
    if (h->file < 0) {
        free(h);
        return -1;
    }
    h->dset = H5Dopen2(h->file, "data", H5P_DEFAULT);
    h->type = h->dset >= 0 ? H5Dget_type(h->dset) : -1;
    h->dxpl_coll = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(h->dxpl_coll, H5FD_MPIO_COLLECTIVE);
    h->dxpl_ind = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(h->dxpl_ind, H5FD_MPIO_INDEPENDENT);
    if (h->dset < 0 || h->type < 0) {
        bench_h5_close(h);
        return -1;
    }
    *hp = h;
    return 0;
}

int bench_h5_access(bench_h5 *h, int collective, int op_write, int nd,
                    const int64_t *start, const int64_t *count,
                    const int64_t *stride, void *buf)
{
    hsize_t st[32], ct[32], sd[32], n = 1;
    for (int k = 0; k < nd; k++) {
        st[k] = (hsize_t)start[k];
        ct[k] = (hsize_t)count[k];
        sd[k] = (hsize_t)stride[k];
        n *= ct[k];
    }
    hid_t fs = H5Dget_space(h->dset);
    hsize_t one = n ? n : 1;
    hid_t ms = H5Screate_simple(1, &one, NULL);
    herr_t e;
    if (n) {
        e = H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, sd, ct, NULL);
    } else {
        e = H5Sselect_none(fs);
        if (e >= 0)
            e = H5Sselect_none(ms);
    }
    if (e >= 0) {
        hid_t x = collective ? h->dxpl_coll : h->dxpl_ind;
        e = op_write ? H5Dwrite(h->dset, h->type, ms, fs, x, buf)
                     : H5Dread(h->dset, h->type, ms, fs, x, buf);
    }
    H5Sclose(ms);
    H5Sclose(fs);
    return e < 0 ? -1 : 0;
}

void bench_h5_close(bench_h5 *h)
{
    if (!h)
        return;
    if (h->dxpl_coll > 0)
        H5Pclose(h->dxpl_coll);
    if (h->dxpl_ind > 0)
        H5Pclose(h->dxpl_ind);
    if (h->type >= 0)
        H5Tclose(h->type);
    if (h->dset >= 0)
        H5Dclose(h->dset);
    H5Fclose(h->file);
    free(h);
}

#else /* no HDF5 in this build */

struct bench_h5 {
    int unused;
};

int bench_h5_available(void) { return 0; }
const char *bench_h5_version(void) { return "none"; }

int bench_h5_create(MPI_Comm comm, const char *path, int nd,
                    const int64_t *dims, int64_t esize, int64_t *offset)
{
    (void)comm, (void)path, (void)nd, (void)dims, (void)esize;
    *offset = 0;
    return -1;
}

int bench_h5_open(MPI_Comm comm, const char *path, bench_h5 **h)
{
    (void)comm, (void)path;
    *h = NULL;
    return -1;
}

int bench_h5_access(bench_h5 *h, int collective, int op_write, int nd,
                    const int64_t *start, const int64_t *count,
                    const int64_t *stride, void *buf)
{
    (void)h, (void)collective, (void)op_write, (void)nd, (void)start,
        (void)count, (void)stride, (void)buf;
    return -1;
}

void bench_h5_close(bench_h5 *h) { (void)h; }

#endif
