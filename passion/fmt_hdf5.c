/*
 * fmt_hdf5.c - the HDF5 glue: the only code that calls libhdf5 (built with
 * the meson option hdf5, PASSION_HAVE_HDF5). It reads where a dataset's
 * elements lie in its file, and creates a file with one dataset whose
 * elements lie at a known offset; passion then moves the elements itself
 * with its own methods (sieving, two-phase, prefetch, slabs), as it does
 * for a raw or .npy file.
 *
 * core_h5_list walks a file's links (H5Lvisit, hard links only) and
 * describes every dataset with the same checks as core_h5_meta, keeping
 * the refused ones with their reason.
 *
 * Invariants: the calls are rank-local (the caller runs them on one rank
 * and broadcasts the result), leave no HDF5 object open and HDF5's own
 * error printing off, and return 0 or a PASSION_E* code with the detail
 * written. A dataset is described only when its elements are one
 * contiguous run of the file at H5Dget_offset (contiguous layout, space
 * allocated, no external file): then element i (row-major) is at
 * offset + i * size. Everything else (chunked, compressed, compact,
 * virtual, external) is PASSION_ENOTSUP, naming the layout and the
 * `h5repack -l PATH:CONTI` that makes it contiguous.
 *
 * Types: integers (signed, unsigned), IEEE floats (2, 4, 8 bytes), h5py's
 * complex (a compound of two equal floats, r and i) and bool (an enum of
 * int8 FALSE=0, TRUE=1), other enums as their base integer, opaque,
 * bitfield and fixed strings as bytes; the byte order is the type's.
 * Storage: HDF5 is row-major; a column-major array is created transposed
 * (dimensions reversed, as HDF5's Fortran interface does), so that its
 * bytes are passion's column-major layout.
 */
#include "core.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#ifndef PASSION_HAVE_HDF5

int core_h5_meta(passion_ctx *ctx, const char *path, const char *dset,
                 core_fmt_meta *m)
{
    (void)dset;
    memset(m, 0, sizeof *m);
    return core_err(ctx, PASSION_ENOTSUP,
                    "%s: this passion was built without HDF5 (meson "
                    "option -Dhdf5=enabled with the parallel HDF5 package, "
                    "Debian libhdf5-mpich-dev)",
                    path);
}

int core_h5_create(passion_ctx *ctx, const char *path, const char *dset,
                   const core_fmt_meta *m, int64_t *data_offset)
{
    (void)dset;
    (void)m;
    *data_offset = 0;
    return core_err(ctx, PASSION_ENOTSUP,
                    "%s: this passion was built without HDF5 (meson "
                    "option -Dhdf5=enabled with the parallel HDF5 package, "
                    "Debian libhdf5-mpich-dev)",
                    path);
}

int core_h5_list(passion_ctx *ctx, const char *path, const char *obj,
                 passion_array_entry *e, int max, int *count)
{
    (void)obj;
    (void)e;
    (void)max;
    *count = 0;
    return core_err(ctx, PASSION_ENOTSUP,
                    "%s: this passion was built without HDF5 (meson "
                    "option -Dhdf5=enabled with the parallel HDF5 package, "
                    "Debian libhdf5-mpich-dev)",
                    path);
}

int core_h5_available(void)
{
    return 0;
}

#else

#include <hdf5.h>

int core_h5_available(void)
{
    return 1;
}

/* HDF5's automatic error printing off for the duration of a call. */
typedef struct h5_quiet {
    H5E_auto2_t fn;
    void *data;
} h5_quiet;

static void quiet_on(h5_quiet *q)
{
    H5Eget_auto2(H5E_DEFAULT, &q->fn, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void quiet_off(h5_quiet *q)
{
    H5Eset_auto2(H5E_DEFAULT, q->fn, q->data);
}

/* The innermost message of HDF5's error stack (or "unknown"). */
static herr_t last_msg(unsigned n, const H5E_error2_t *e, void *p)
{
    (void)n;
    if (e->desc && *e->desc)
        snprintf(p, 160, "%s", e->desc);
    return 0;
}

static const char *h5_why(char *buf)
{
    snprintf(buf, 160, "unknown");
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, last_msg, buf);
    return buf;
}

static void close_id(hid_t id, herr_t (*fn)(hid_t))
{
    if (id >= 0)
        fn(id);
}

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
        close_id(a, H5Tclose);
        close_id(b, H5Tclose);
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
        close_id(base, H5Tclose);
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

/* Datasets of a file (H5Lvisit): how many, and the first one's path. */
typedef struct h5_count {
    int n;
    char first[PATH_MAX];
} h5_count;

static herr_t count_dset(hid_t g, const char *name, const H5L_info_t *info,
                         void *p)
{
    h5_count *c = p;
    if (info->type != H5L_TYPE_HARD)
        return 0;
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    if (d >= 0) {
        if (!c->n++)
            snprintf(c->first, sizeof c->first, "/%s", name);
        H5Dclose(d);
    }
    return 0;
}

/* The metadata of dataset dset of the open file (path for messages, fsize
   its bytes) into m, and its layout's name into *lay. On an error the
   code with the detail written; m keeps what was found before it (shape,
   type), *lay the layout once known ("" before). */
static int dset_meta(passion_ctx *ctx, hid_t file, const char *path,
                     const char *dset, int64_t fsize, core_fmt_meta *m,
                     const char **lay_name)
{
    char where[PATH_MAX + 300], why[160];
    snprintf(where, sizeof where, "%s:%s", path, dset);
    *lay_name = "";
    int rc = PASSION_OK;
    hid_t d = -1, space = -1, type = -1, dcpl = -1;
    /* every link along the path must exist before H5Dopen is asked */
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
    if (!exists) {
        rc = core_err(ctx, PASSION_EINVAL, "%s: no such dataset in the file",
                      where);
        goto out;
    }
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
        rc = core_err(ctx, PASSION_EFORMAT, "%s: %s", where, h5_why(why));
        goto out;
    }
    H5D_layout_t lay = H5Pget_layout(dcpl);
    int next = lay == H5D_CONTIGUOUS ? H5Pget_external_count(dcpl) : 0;
    *lay_name = next > 0 ? "external" : layout_name(lay);
    H5S_class_t sc = H5Sget_simple_extent_type(space);
    int nd = sc == H5S_SCALAR ? 0 : H5Sget_simple_extent_ndims(space);
    if (sc == H5S_NULL || nd < 0) {
        rc = core_err(ctx, PASSION_ENOTSUP,
                      "%s: a dataset without elements (null dataspace)",
                      where);
        goto out;
    }
    if (nd > PASSION_MAX_DIMS) {
        rc = core_err(ctx, PASSION_ENOTSUP,
                      "%s has %d dimensions; passion arrays have at most %d",
                      where, nd, PASSION_MAX_DIMS);
        goto out;
    }
    hsize_t dims[PASSION_MAX_DIMS];
    if (nd)
        H5Sget_simple_extent_dims(space, dims, NULL);
    m->ndims = nd ? nd : 1; /* a scalar: one element */
    m->shape[0] = 1;
    for (int k = 0; k < nd; k++)
        m->shape[k] = (int64_t)dims[k];
    m->storage = PASSION_ROW_MAJOR;
    if ((rc = type_of(ctx, where, type, m)))
        goto out;
    if (m->elem_size > 64) {
        rc = core_err(ctx, PASSION_ENOTSUP,
                      "%s: elements of %lld bytes (passion takes 1 to 64)",
                      where, (long long)m->elem_size);
        goto out;
    }
    int64_t bytes = m->elem_size;
    for (int k = 0; k < m->ndims; k++)
        if (!core_mul(bytes, m->shape[k], &bytes)) {
            rc = core_err(ctx, PASSION_EFORMAT,
                          "%s: its byte count overflows 64 bits", where);
            goto out;
        }
    m->data_bytes = bytes;

    size_t pl = strlen(path);
    int nc4 = pl > 3 && !strcmp(path + pl - 3, ".nc");
    if (lay != H5D_CONTIGUOUS && nc4) {
        int nf = H5Pget_nfilters(dcpl);
        rc = core_err(ctx, PASSION_ENOTSUP,
                      "%s: a netCDF-4 (HDF5) variable whose layout is %s%s; "
                      "passion reads and writes contiguous variables at "
                      "their file offset. Convert the file to netCDF "
                      "classic with `nccopy -k cdf5 %s OUT.nc`",
                      where, layout_name(lay),
                      nf > 0 ? " with filters (compressed)" : "", path);
        goto out;
    }
    if (lay != H5D_CONTIGUOUS) {
        int nf = H5Pget_nfilters(dcpl);
        rc = core_err(ctx, PASSION_ENOTSUP,
                      "%s: the dataset's layout is %s%s; passion reads and "
                      "writes contiguous datasets at their file offset. "
                      "Make it contiguous with `h5repack -l %s:CONTI %s "
                      "OUT.h5`",
                      where, layout_name(lay),
                      nf > 0 ? " with filters (compressed)" : "", dset,
                      path);
        goto out;
    }
    if (next > 0) {
        rc = core_err(ctx, PASSION_ENOTSUP,
                      "%s: contiguous, but its elements are in external "
                      "files; copy them in with `h5repack -l %s:CONTI %s "
                      "OUT.h5`",
                      where, dset, path);
        goto out;
    }
    haddr_t off = H5Dget_offset(d);
    if (off == HADDR_UNDEF) {
        if (bytes > 0) {
            *lay_name = "unallocated";
            rc = core_err(ctx, PASSION_ENOTSUP,
                          "%s: contiguous, but no space is allocated for it "
                          "yet (allocated late and never written: every "
                          "element is the fill value); write it once with "
                          "HDF5, or create it with "
                          "H5Pset_alloc_time(H5D_ALLOC_TIME_EARLY)",
                          where);
            goto out;
        }
        off = 0; /* no elements, nothing to find */
    } else if ((int64_t)H5Dget_storage_size(d) < bytes ||
               off > (haddr_t)(INT64_MAX - bytes) ||
               (int64_t)off + bytes > fsize) {
        rc = core_err(ctx, PASSION_EFORMAT,
                      "%s: its %lld bytes at offset %llu are not all in the "
                      "file (%lld bytes, %llu stored)",
                      where, (long long)bytes, (unsigned long long)off,
                      (long long)fsize,
                      (unsigned long long)H5Dget_storage_size(d));
        goto out;
    }
    m->data_offset = (int64_t)off;
out:
    close_id(dcpl, H5Pclose);
    close_id(type, H5Tclose);
    close_id(space, H5Sclose);
    close_id(d, H5Dclose);
    return rc;
}

/* Open path read-only as HDF5 (quiet already on): the file id, or -1
   with the code in *rc and the detail written. */
static hid_t open_file(passion_ctx *ctx, const char *path, int64_t *fsize,
                       int *rc)
{
    struct stat st;
    char why[160];
    *rc = PASSION_OK;
    if (stat(path, &st)) {
        *rc = core_err(ctx, core_errno_code(errno), "%s: %s", path,
                       strerror(errno));
        return -1;
    }
    *fsize = (int64_t)st.st_size;
    if (H5Fis_hdf5(path) <= 0) {
        *rc = core_err(ctx, PASSION_EFORMAT, "%s: not an HDF5 file", path);
        return -1;
    }
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0)
        *rc = core_err(ctx, PASSION_EFORMAT, "%s: HDF5 cannot open it: %s",
                       path, h5_why(why));
    return file;
}

int core_h5_meta(passion_ctx *ctx, const char *path, const char *dset,
                 core_fmt_meta *m)
{
    memset(m, 0, sizeof *m);
    h5_count cnt = {0, ""};
    h5_quiet q;
    quiet_on(&q);
    int64_t fsize = 0;
    int rc;
    const char *lay;
    hid_t file = open_file(ctx, path, &fsize, &rc);
    if (file < 0)
        goto out;
    /* no name: the file's only dataset */
    if (!dset || !*dset) {
        H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, count_dset, &cnt);
        if (cnt.n != 1) {
            rc = core_err(ctx, PASSION_EINVAL,
                          "%s: an HDF5 file of %d datasets: name one after "
                          "':' (%s:/path/to/dataset%s%s)",
                          path, cnt.n, path, cnt.n ? ", e.g. " : "",
                          cnt.first);
            goto out;
        }
        dset = cnt.first;
    }
    rc = dset_meta(ctx, file, path, dset, fsize, m, &lay);
out:
    close_id(file, H5Fclose);
    quiet_off(&q);
    if (rc)
        memset(m, 0, sizeof *m);
    return rc;
}

/* The datasets below a group (H5Lvisit from it), described one by one. */
typedef struct h5_lister {
    passion_ctx *ctx;
    hid_t file;
    const char *path;
    const char *base;   /* the group's path, "/" or "/g" */
    int64_t fsize;
    passion_array_entry *e;
    int max, n;
    int rc;             /* an error that stops the listing (ENOMEM...) */
} h5_lister;

/* ctx's detail without its "rank N: " prefix. */
static const char *detail_text(const passion_ctx *ctx)
{
    const char *s = ctx->detail;
    if (!strncmp(s, "rank ", 5)) {
        const char *c = strstr(s, ": ");
        if (c)
            s = c + 2;
    }
    return s;
}

static void list_one(h5_lister *L, const char *full)
{
    if (L->n >= L->max) {
        L->n++;
        return;
    }
    passion_array_entry *e = &L->e[L->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->name, sizeof e->name, "%s", full);
    core_fmt_meta m;
    memset(&m, 0, sizeof m);
    const char *lay = "";
    int rc = dset_meta(L->ctx, L->file, L->path, full, L->fsize, &m, &lay);
    snprintf(e->layout, sizeof e->layout, "%s", lay);
    passion_array_spec *s = &e->spec;
    s->ndims = m.ndims;
    for (int k = 0; k < m.ndims; k++) {
        s->shape[k] = m.shape[k];
        s->order[k] = k;
        s->grid[k] = 1;
    }
    s->kind = m.kind;
    s->elem_size = m.elem_size;
    s->endian = m.endian;
    s->storage = PASSION_ROW_MAJOR;
    s->placement = PASSION_PLACE_GLOBAL;
    e->data_bytes = m.data_bytes;
    e->data_offset = rc ? -1 : m.data_offset;
    e->status = rc;
    if (rc) {
        snprintf(e->why, sizeof e->why, "%s", detail_text(L->ctx));
        L->ctx->detail[0] = '\0';
    }
}

/* H5I_DATASET, H5I_GROUP... of the object at name (H5I_BADID if none);
   H5Oopen + H5Iget_type is the same in HDF5 1.10 and 1.12+. */
static H5I_type_t object_type(hid_t loc, const char *name)
{
    hid_t o = H5Oopen(loc, name, H5P_DEFAULT);
    if (o < 0)
        return H5I_BADID;
    H5I_type_t t = H5Iget_type(o);
    H5Oclose(o);
    return t;
}

static herr_t list_link(hid_t g, const char *name, const H5L_info_t *info,
                        void *p)
{
    h5_lister *L = p;
    if (info->type != H5L_TYPE_HARD || object_type(g, name) != H5I_DATASET)
        return 0;
    char full[PASSION_NAME_MAX];
    int n = snprintf(full, sizeof full, "%s%s%s", L->base,
                     strcmp(L->base, "/") ? "/" : "", name);
    if (n < 0 || (size_t)n >= sizeof full) {
        L->rc = core_err(L->ctx, PASSION_ENOTSUP,
                         "%s: a dataset path of %d bytes (passion lists "
                         "names below %d)",
                         L->path, n, PASSION_NAME_MAX);
        return -1;
    }
    list_one(L, full);
    return 0;
}

int core_h5_list(passion_ctx *ctx, const char *path, const char *obj,
                 passion_array_entry *e, int max, int *count)
{
    *count = 0;
    h5_quiet q;
    quiet_on(&q);
    int64_t fsize = 0;
    int rc;
    hid_t file = open_file(ctx, path, &fsize, &rc);
    h5_lister L = {.ctx = ctx, .file = file, .path = path, .base = "/",
                   .fsize = fsize, .e = e, .max = e ? max : 0};
    char base[PASSION_NAME_MAX];
    if (file < 0)
        goto out;
    if (obj && *obj && strcmp(obj, "/")) {
        /* a dataset (itself) or a group (the datasets below it) */
        snprintf(base, sizeof base, "%s%s", obj[0] == '/' ? "" : "/", obj);
        size_t bl = strlen(base);
        while (bl > 1 && base[bl - 1] == '/')
            base[--bl] = '\0';
        H5I_type_t t = H5I_BADID;
        if (H5Lexists(file, base, H5P_DEFAULT) > 0)
            t = object_type(file, base);
        if (t == H5I_BADID) {
            /* a missing parent group makes H5Lexists fail: same answer */
            rc = core_err(ctx, PASSION_EINVAL,
                          "%s:%s: no such dataset or group in the file",
                          path, obj);
            goto out;
        }
        if (t == H5I_DATASET) {
            list_one(&L, base);
            goto out;
        }
        if (t != H5I_GROUP) {
            rc = core_err(ctx, PASSION_EINVAL,
                          "%s:%s: neither a dataset nor a group", path, obj);
            goto out;
        }
        L.base = base;
    }
    if (H5Lvisit_by_name(file, L.base, H5_INDEX_NAME, H5_ITER_INC,
                          list_link, &L, H5P_DEFAULT) < 0 && !L.rc) {
        char why[160];
        L.rc = core_err(ctx, PASSION_EFORMAT, "%s: HDF5 cannot walk it: %s",
                        path, h5_why(why));
    }
    rc = L.rc;
out:
    close_id(file, H5Fclose);
    quiet_off(&q);
    *count = rc ? 0 : L.n;
    return rc;
}

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
                close_id(t, H5Tclose);
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
            close_id(t, H5Tclose);
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
            close_id(t, H5Tclose);
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

int core_h5_create(passion_ctx *ctx, const char *path, const char *dset,
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
    h5_quiet q;
    quiet_on(&q);
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
                      h5_why(why));
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
                      h5_why(why));
        goto out;
    }
    d = H5Dcreate2(file, dset, type, space, lcpl, dcpl, H5P_DEFAULT);
    if (d < 0) {
        rc = core_err(ctx, errno == ENOSPC ? PASSION_ENOSPC : PASSION_EIO,
                      "%s: HDF5 cannot create the dataset: %s", where,
                      h5_why(why));
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
    close_id(d, H5Dclose);
    close_id(space, H5Sclose);
    close_id(dcpl, H5Pclose);
    close_id(lcpl, H5Pclose);
    close_id(type, H5Tclose);
    if (file >= 0 && H5Fclose(file) < 0 && !rc)
        rc = core_err(ctx, PASSION_EIO, "%s: HDF5 cannot close it: %s",
                      path, h5_why(why));
    close_id(fapl, H5Pclose);
    quiet_off(&q);
    return rc;
}

#endif
