/*
 * fmt_hdf5_create.c - a new HDF5 file holding one dataset (ocad_h5_create,
 * the format's create hook), whose elements passion then writes itself.
 *
 * Invariants: the dataset is contiguous, its space allocated at creation
 * and never filled, so its elements lie at one known offset
 * (H5Dget_offset); a dataset of a page or more starts on a page boundary.
 * Storage: HDF5 is row-major; a column-major array is created transposed
 * (dimensions reversed, as HDF5's Fortran interface does), so that its
 * bytes are passion's column-major layout. Rank-local; leaves no HDF5
 * object open.
 */
#include "ocad.h"

#ifdef PASSION_HAVE_HDF5

#include "fmt_h5_util.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

/* The HDF5 type for a passion element type in the given byte order (a
   new id to close; -1 if none). */
static hid_t make_type(const core_fmt_meta *m, int be)
{
    int64_t s = m->elem_size;
    hid_t base = -1;
    switch (m->kind) {
    case PASSION_KIND_INT:
        base = s == 1 ? H5T_STD_I8LE : s == 2 ? H5T_STD_I16LE
               : s == 4 ? H5T_STD_I32LE : s == 8 ? H5T_STD_I64LE : -1;
        break;
    case PASSION_KIND_UINT:
        base = s == 1 ? H5T_STD_U8LE : s == 2 ? H5T_STD_U16LE
               : s == 4 ? H5T_STD_U32LE : s == 8 ? H5T_STD_U64LE : -1;
        break;
    case PASSION_KIND_FLOAT:
        if (s == 4 || s == 8) {
            base = s == 4 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
            break;
        }
        if (s == 2) { /* IEEE half, as h5py makes it */
            hid_t t = H5Tcopy(H5T_IEEE_F32LE);
            if (t < 0 || H5Tset_fields(t, 15, 10, 5, 0, 10) < 0 ||
                H5Tset_size(t, 2) < 0 || H5Tset_ebias(t, 15) < 0 ||
                (be && H5Tset_order(t, H5T_ORDER_BE) < 0)) {
                ocad_h5_close(t, H5Tclose);
                return -1;
            }
            return t;
        }
        return -1;
    case PASSION_KIND_COMPLEX: {
        if (s != 8 && s != 16)
            return -1;
        hid_t f = s == 8 ? (be ? H5T_IEEE_F32BE : H5T_IEEE_F32LE)
                         : (be ? H5T_IEEE_F64BE : H5T_IEEE_F64LE);
        hid_t t = H5Tcreate(H5T_COMPOUND, (size_t)s);
        if (t < 0 || H5Tinsert(t, "r", 0, f) < 0 ||
            H5Tinsert(t, "i", (size_t)s / 2, f) < 0) {
            ocad_h5_close(t, H5Tclose);
            return -1;
        }
        return t;
    }
    case PASSION_KIND_BOOL: {
        if (s != 1)
            return -1;
        hid_t t = H5Tenum_create(H5T_STD_I8LE);
        signed char f = 0, tr = 1;
        if (t < 0 || H5Tenum_insert(t, "FALSE", &f) < 0 ||
            H5Tenum_insert(t, "TRUE", &tr) < 0) {
            ocad_h5_close(t, H5Tclose);
            return -1;
        }
        return t;
    }
    case PASSION_KIND_BYTES: {
        hid_t t = H5Tcreate(H5T_OPAQUE, (size_t)s);
        if (t >= 0)
            H5Tset_tag(t, "passion bytes");
        return t;
    }
    default:
        return -1;
    }
    if (base < 0)
        return -1;
    hid_t t = H5Tcopy(base);
    if (t >= 0 && be && H5Tset_order(t, H5T_ORDER_BE) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

int ocad_h5_create(passion_ctx *ctx, const char *path, const char *dset,
                   const core_fmt_meta *m, int64_t *data_offset)
{
    *data_offset = 0;
    char where[PATH_MAX + 300], why[160];
    snprintf(where, sizeof where, "%s:%s", path, dset ? dset : "");
    if (!dset || !*dset || !strcmp(dset, "/") ||
        dset[strlen(dset) - 1] == '/' || strstr(dset, "//"))
        return core_err(ctx, PASSION_EINVAL,
                        "%s: not a dataset path (e.g. /u or /fields/u)",
                        where);
    if (m->ndims < 1 || m->ndims > PASSION_MAX_DIMS)
        return core_err(ctx, PASSION_EINVAL, "%s: %d dimensions", where,
                        m->ndims);
    if (m->storage != PASSION_ROW_MAJOR && m->storage != PASSION_COL_MAJOR)
        return core_err(ctx, PASSION_ENOTSUP,
                        "%s: HDF5 holds row-major datasets (or column-major "
                        "ones transposed), not a custom storage order",
                        where);
    int be = m->endian == PASSION_ENDIAN_BIG ||
             (m->endian == PASSION_ENDIAN_NATIVE &&
              __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
    ocad_h5_quiet q;
    ocad_h5_quiet_on(&q);
    int rc = PASSION_OK;
    hid_t fapl = -1, file = -1, lcpl = -1, dcpl = -1, space = -1, type = -1,
          d = -1;
    hsize_t dims[PASSION_MAX_DIMS];
    int nd = m->ndims;
    for (int k = 0; k < nd; k++)
        dims[k] = (hsize_t)(m->storage == PASSION_COL_MAJOR
                                ? m->shape[nd - 1 - k]
                                : m->shape[k]);
    type = make_type(m, be);
    if (type < 0) {
        rc = core_err(ctx, PASSION_ENOTSUP,
                      "%s: no HDF5 element type for kind %d of %lld bytes",
                      where, (int)m->kind, (long long)m->elem_size);
        goto out;
    }
    /* a dataset of a page or more starts on a page boundary (O_DIRECT,
       whole pages); metadata may follow the data: never truncate */
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0)
        H5Pset_alignment(fapl, 4096, 4096);
    file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (file < 0) {
        rc = core_err(ctx, errno == ENOSPC ? PASSION_ENOSPC : PASSION_EIO,
                      "%s: HDF5 cannot create the file: %s", path,
                      ocad_h5_why(why));
        goto out;
    }
    lcpl = H5Pcreate(H5P_LINK_CREATE);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    space = H5Screate_simple(nd, dims, NULL);
    if (lcpl < 0 || dcpl < 0 || space < 0 ||
        H5Pset_create_intermediate_group(lcpl, 1) < 0 ||
        H5Pset_layout(dcpl, H5D_CONTIGUOUS) < 0 ||
        H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) < 0 ||
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0) {
        rc = core_err(ctx, PASSION_ENOMEM, "%s: HDF5 properties: %s", where,
                      ocad_h5_why(why));
        goto out;
    }
    d = H5Dcreate2(file, dset, type, space, lcpl, dcpl, H5P_DEFAULT);
    if (d < 0) {
        rc = core_err(ctx, errno == ENOSPC ? PASSION_ENOSPC : PASSION_EIO,
                      "%s: HDF5 cannot create the dataset: %s", where,
                      ocad_h5_why(why));
        goto out;
    }
    haddr_t off = H5Dget_offset(d);
    if (off == HADDR_UNDEF) {
        rc = core_err(ctx, PASSION_EIO,
                      "%s: HDF5 allocated no contiguous space", where);
        goto out;
    }
    *data_offset = (int64_t)off;
out:
    ocad_h5_close(d, H5Dclose);
    ocad_h5_close(space, H5Sclose);
    ocad_h5_close(dcpl, H5Pclose);
    ocad_h5_close(lcpl, H5Pclose);
    ocad_h5_close(type, H5Tclose);
    if (file >= 0 && H5Fclose(file) < 0 && !rc)
        rc = core_err(ctx, PASSION_EIO, "%s: HDF5 cannot close it: %s",
                      path, ocad_h5_why(why));
    ocad_h5_close(fapl, H5Pclose);
    ocad_h5_quiet_off(&q);
    return rc;
}

#endif
