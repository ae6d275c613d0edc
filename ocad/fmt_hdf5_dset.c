/*
 * fmt_hdf5_dset.c - what one HDF5 dataset is, for passion
 * (ocad_h5_dset_meta): its shape, its element type, and where its
 * elements lie in the file.
 *
 * Invariants: a dataset is described when its elements are one
 * contiguous run of the file at H5Dget_offset (contiguous layout, space
 * allocated, no external file): then element i (row-major) is at
 * offset + i * size, and offset + bytes is inside the file; or when it is
 * chunked with filters passion decodes (none, deflate, szip with
 * libaec, shuffle, fletcher32): then m->chunked is 1 and its chunks are found through its
 * chunk index at read time (fmt_h5_chunk.c). Everything else (compact,
 * virtual, external, other filters) is PASSION_ENOTSUP, naming the layout
 * or the filter and the `h5repack` that makes it one passion takes.
 * Rank-local; leaves no HDF5 object open.
 *
 * Types: integers (signed, unsigned), IEEE floats (2, 4, 8 bytes), h5py's
 * complex (a compound of two equal floats, r and i) and bool (an enum of
 * int8 FALSE=0, TRUE=1), other enums as their base integer, opaque,
 * bitfield and fixed strings as bytes; the byte order is the type's.
 */
#include "ocad.h"

#ifdef PASSION_HAVE_HDF5

#include "fmt_hdf5_dset.h"

#include <limits.h>
#include <string.h>

static passion_endian host_order(void)
{
    return __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? PASSION_ENDIAN_BIG
                                                 : PASSION_ENDIAN_LITTLE;
}

static passion_endian order_of(hid_t t)
{
    switch (H5Tget_order(t)) {
    case H5T_ORDER_LE: return PASSION_ENDIAN_LITTLE;
    case H5T_ORDER_BE: return PASSION_ENDIAN_BIG;
    default: /* order-less types (opaque, strings): this machine's */
        return host_order();
    }
}

/* An IEEE float of its size (half, single, double), in either order. */
static int ieee_float(hid_t t)
{
    size_t sz = H5Tget_size(t), spos, epos, esize, mpos, msize;
    if (H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize) < 0)
        return 0;
    size_t bias = H5Tget_ebias(t);
    if (sz == 2)
        return spos == 15 && epos == 10 && esize == 5 && mpos == 0 &&
               msize == 10 && bias == 15;
    if (sz == 4)
        return spos == 31 && epos == 23 && esize == 8 && mpos == 0 &&
               msize == 23 && bias == 127;
    if (sz == 8)
        return spos == 63 && epos == 52 && esize == 11 && mpos == 0 &&
               msize == 52 && bias == 1023;
    return 0;
}

/* Kind, size and byte order of a dataset's type; 0 or ENOTSUP. */
static int type_of(passion_ctx *ctx, const char *where, hid_t t,
                   core_fmt_meta *m)
{
    H5T_class_t cls = H5Tget_class(t);
    size_t sz = H5Tget_size(t);
    m->elem_size = (int64_t)sz;
    m->endian = host_order(); /* unless the type says */
    switch (cls) {
    case H5T_INTEGER:
        m->kind = H5Tget_sign(t) == H5T_SGN_NONE ? PASSION_KIND_UINT
                                                 : PASSION_KIND_INT;
        if (sz != 1 && sz != 2 && sz != 4 && sz != 8)
            return core_err(ctx, PASSION_ENOTSUP,
                            "%s: integers of %zu bytes", where, sz);
        m->endian = order_of(t);
        return PASSION_OK;
    case H5T_FLOAT:
        if (!ieee_float(t))
            return core_err(ctx, PASSION_ENOTSUP,
                            "%s: a floating-point type of %zu bytes that is "
                            "not IEEE half, single or double",
                            where, sz);
        m->kind = PASSION_KIND_FLOAT;
        m->endian = order_of(t);
        return PASSION_OK;
    case H5T_COMPOUND: {
        /* h5py's complex: {r, i} of two equal IEEE floats */
        int ok = H5Tget_nmembers(t) == 2;
        hid_t a = ok ? H5Tget_member_type(t, 0) : -1;
        hid_t b = ok ? H5Tget_member_type(t, 1) : -1;
        ok = ok && a >= 0 && b >= 0 && H5Tget_class(a) == H5T_FLOAT &&
             H5Tequal(a, b) > 0 && ieee_float(a) &&
             H5Tget_size(a) * 2 == sz && H5Tget_member_offset(t, 0) == 0 &&
             H5Tget_member_offset(t, 1) == sz / 2 &&
             (sz == 8 || sz == 16);
        if (ok)
            m->endian = order_of(a);
        ocad_h5_close(a, H5Tclose);
        ocad_h5_close(b, H5Tclose);
        if (!ok)
            return core_err(ctx, PASSION_ENOTSUP,
                            "%s: a compound type (only a complex number, "
                            "two equal floats r and i, is an element type "
                            "passion knows)",
                            where);
        m->kind = PASSION_KIND_COMPLEX;
        return PASSION_OK;
    }
    case H5T_ENUM: {
        hid_t base = H5Tget_super(t);
        int isbool = 0;
        if (base >= 0 && H5Tget_size(base) == 1 && H5Tget_nmembers(t) == 2) {
            signed char v0 = 1, v1 = 0;
            H5Tget_member_value(t, 0, &v0);
            H5Tget_member_value(t, 1, &v1);
            isbool = v0 == 0 && v1 == 1;
        }
        int rc = base >= 0 ? type_of(ctx, where, base, m)
                           : core_err(ctx, PASSION_ENOTSUP,
                                      "%s: an enum without a base type",
                                      where);
        ocad_h5_close(base, H5Tclose);
        if (!rc && isbool)
            m->kind = PASSION_KIND_BOOL;
        return rc;
    }
    case H5T_OPAQUE:
    case H5T_BITFIELD:
        m->kind = PASSION_KIND_BYTES;
        return PASSION_OK;
    case H5T_STRING:
        if (H5Tis_variable_str(t) > 0)
            return core_err(ctx, PASSION_ENOTSUP,
                            "%s: variable-length strings (their elements "
                            "are not in the dataset's bytes)",
                            where);
        m->kind = PASSION_KIND_BYTES;
        return PASSION_OK;
    default:
        return core_err(ctx, PASSION_ENOTSUP,
                        "%s: an element type of HDF5 class %d (time, "
                        "reference, variable-length or array) that passion "
                        "cannot take as array elements",
                        where, (int)cls);
    }
}

static const char *layout_name(H5D_layout_t l)
{
    switch (l) {
    case H5D_COMPACT: return "compact";
    case H5D_CONTIGUOUS: return "contiguous";
    case H5D_CHUNKED: return "chunked";
    case H5D_VIRTUAL: return "virtual";
    default: return "unknown";
    }
}

/* Every link along dset's path must exist before H5Dopen is asked: 0, or
   EINVAL with the detail written. */
static int dset_exists(passion_ctx *ctx, hid_t file, const char *where,
                       const char *dset)
{
    int exists = 1;
    char part[PATH_MAX];
    snprintf(part, sizeof part, "%s", dset);
    for (char *s = part + (part[0] == '/'); exists;) {
        char *slash = strchr(s, '/');
        if (slash)
            *slash = '\0';
        exists = *part && H5Lexists(file, part, H5P_DEFAULT) > 0;
        if (!slash)
            break;
        *slash = '/';
        s = slash + 1;
    }
    if (!exists)
        return core_err(ctx, PASSION_EINVAL,
                        "%s: no such dataset in the file", where);
    return PASSION_OK;
}

/* Shape (a scalar: one element), type and byte count of the dataset into
   m (row-major); what was found stays in m on an error. */
static int dset_shape(passion_ctx *ctx, const char *where, hid_t space,
                      hid_t type, core_fmt_meta *m)
{
    H5S_class_t sc = H5Sget_simple_extent_type(space);
    int nd = sc == H5S_SCALAR ? 0 : H5Sget_simple_extent_ndims(space);
    if (sc == H5S_NULL || nd < 0)
        return core_err(ctx, PASSION_ENOTSUP,
                        "%s: a dataset without elements (null dataspace)",
                        where);
    if (nd > PASSION_MAX_DIMS)
        return core_err(ctx, PASSION_ENOTSUP,
                        "%s has %d dimensions; passion arrays have at most "
                        "%d",
                        where, nd, PASSION_MAX_DIMS);
    hsize_t dims[PASSION_MAX_DIMS];
    if (nd)
        H5Sget_simple_extent_dims(space, dims, NULL);
    m->ndims = nd ? nd : 1; /* a scalar: one element */
    m->shape[0] = 1;
    for (int k = 0; k < nd; k++)
        m->shape[k] = (int64_t)dims[k];
    m->storage = PASSION_ROW_MAJOR;
    int rc = type_of(ctx, where, type, m);
    if (rc)
        return rc;
    if (m->elem_size > 64)
        return core_err(ctx, PASSION_ENOTSUP,
                        "%s: elements of %lld bytes (passion takes 1 to 64)",
                        where, (long long)m->elem_size);
    int64_t bytes = m->elem_size;
    for (int k = 0; k < m->ndims; k++)
        if (!core_mul(bytes, m->shape[k], &bytes))
            return core_err(ctx, PASSION_EFORMAT,
                            "%s: its byte count overflows 64 bits", where);
    m->data_bytes = bytes;
    return PASSION_OK;
}

/* Anything but a contiguous layout with its elements in the file itself
   (next external files) or a chunked one is ENOTSUP, naming the layout
   and the command that makes it one passion takes. */
static int dset_layout(passion_ctx *ctx, const char *where, const char *path,
                       const char *dset, hid_t dcpl, H5D_layout_t lay,
                       int next)
{
    size_t pl = strlen(path);
    int nc4 = pl > 3 && !strcmp(path + pl - 3, ".nc");
    if (lay == H5D_CHUNKED) {
        ocad_h5f_pipe pipe;
        return ocad_h5c_pipe(ctx, where, dcpl, &pipe);
    }
    if (lay != H5D_CONTIGUOUS && nc4)
        return core_err(ctx, PASSION_ENOTSUP,
                        "%s: a netCDF-4 (HDF5) variable whose layout is "
                        "%s; passion reads contiguous and chunked "
                        "variables. Convert the file to netCDF classic "
                        "with `nccopy -k cdf5 %s OUT.nc`",
                        where, layout_name(lay), path);
    if (lay != H5D_CONTIGUOUS)
        return core_err(ctx, PASSION_ENOTSUP,
                        "%s: the dataset's layout is %s; passion reads "
                        "contiguous and chunked datasets (and writes "
                        "contiguous ones). Make it contiguous with "
                        "`h5repack -l %s:CONTI %s OUT.h5`",
                        where, layout_name(lay), dset, path);
    if (next > 0)
        return core_err(ctx, PASSION_ENOTSUP,
                        "%s: contiguous, but its elements are in external "
                        "files; copy them in with `h5repack -l %s:CONTI %s "
                        "OUT.h5`",
                        where, dset, path);
    return PASSION_OK;
}

/* Where the m->data_bytes of the contiguous dataset d lie: m->data_offset,
   checked to be inside the file of fsize bytes (no elements and no space:
   0). Space never allocated is ENOTSUP, *lay_name "unallocated". */
static int dset_place(passion_ctx *ctx, const char *where, hid_t d,
                      int64_t fsize, core_fmt_meta *m,
                      const char **lay_name)
{
    int64_t bytes = m->data_bytes;
    haddr_t off = H5Dget_offset(d);
    if (off == HADDR_UNDEF) {
        if (bytes > 0) {
            *lay_name = "unallocated";
            return core_err(ctx, PASSION_ENOTSUP,
                            "%s: contiguous, but no space is allocated for "
                            "it yet (allocated late and never written: "
                            "every element is the fill value); write it "
                            "once with HDF5, or create it with "
                            "H5Pset_alloc_time(H5D_ALLOC_TIME_EARLY)",
                            where);
        }
        off = 0; /* no elements, nothing to find */
    } else if ((int64_t)H5Dget_storage_size(d) < bytes ||
               off > (haddr_t)(INT64_MAX - bytes) ||
               (int64_t)off + bytes > fsize) {
        return core_err(ctx, PASSION_EFORMAT,
                        "%s: its %lld bytes at offset %llu are not all in "
                        "the file (%lld bytes, %llu stored)",
                        where, (long long)bytes, (unsigned long long)off,
                        (long long)fsize,
                        (unsigned long long)H5Dget_storage_size(d));
    }
    m->data_offset = (int64_t)off;
    return PASSION_OK;
}

int ocad_h5_dset_meta(passion_ctx *ctx, hid_t file, const char *path,
                      const char *dset, int64_t fsize, core_fmt_meta *m,
                      const char **lay_name)
{
    char where[PATH_MAX + 300], why[160];
    snprintf(where, sizeof where, "%s:%s", path, dset);
    *lay_name = "";
    hid_t d = -1, space = -1, type = -1, dcpl = -1;
    int rc = dset_exists(ctx, file, where, dset);
    if (rc)
        goto out;
    d = H5Dopen2(file, dset, H5P_DEFAULT);
    if (d < 0) {
        rc = core_err(ctx, PASSION_EINVAL, "%s: not a dataset (a group?)",
                      where);
        goto out;
    }
    space = H5Dget_space(d);
    type = H5Dget_type(d);
    dcpl = H5Dget_create_plist(d);
    if (space < 0 || type < 0 || dcpl < 0) {
        rc = core_err(ctx, PASSION_EFORMAT, "%s: %s", where,
                      ocad_h5_why(why));
        goto out;
    }
    H5D_layout_t lay = H5Pget_layout(dcpl);
    int next = lay == H5D_CONTIGUOUS ? H5Pget_external_count(dcpl) : 0;
    *lay_name = next > 0 ? "external" : layout_name(lay);
    if ((rc = dset_shape(ctx, where, space, type, m)) ||
        (rc = dset_layout(ctx, where, path, dset, dcpl, lay, next)))
        goto out;
    if (lay == H5D_CHUNKED)
        m->chunked = 1; /* its chunks: fmt_h5_chunk.c, at read time */
    else
        rc = dset_place(ctx, where, d, fsize, m, lay_name);
out:
    ocad_h5_close(dcpl, H5Pclose);
    ocad_h5_close(type, H5Tclose);
    ocad_h5_close(space, H5Sclose);
    ocad_h5_close(d, H5Dclose);
    return rc;
}

#endif
