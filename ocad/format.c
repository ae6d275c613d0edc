/*
 * format.c - the format registry (passion_open itself is in open.c): files
 * that describe themselves (.npy, HDF5, netCDF classic, self-describing local
 * sets) next to raw files. A name is resolved once, on rank 0 (split into
 * PATH:OBJECT, format chosen by magic or extension, header read) and the
 * outcome broadcast as plain bytes, so metadata is read once rather than
 * by every rank.
 *
 * Invariants: every rank leaves ocad_fmt_resolve with the same code and
 * the same ocad_fmt_info; the registry's hooks are rank-local and called
 * on rank 0 only; a hook left NULL means the format is not in this build.
 */
#include "ocad.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int npy_magic(const unsigned char *b, int64_t n)
{
    return n >= 6 && !memcmp(b, "\x93NUMPY", 6);
}

static int hdf5_magic(const unsigned char *b, int64_t n)
{
    return n >= 8 && !memcmp(b, "\x89HDF\r\n\x1a\n", 8);
}

static int cdf_magic(const unsigned char *b, int64_t n)
{
    return n >= 4 && !memcmp(b, "CDF", 3) &&
           (b[3] == 1 || b[3] == 2 || b[3] == 5);
}

/* The registry. Helpers plug their hooks in here: HDF5 (ocad_h5_meta /
   ocad_h5_create), netCDF classic, and the local sets' description. */
static const ocad_format formats[OCAD_FMT_COUNT] = {
    [OCAD_FMT_RAW] = {.name = "raw", .exts = ""},
    [OCAD_FMT_NPY] = {.name = "npy", .exts = ".npy", .magic = npy_magic,
                      .read_meta = ocad_npy_meta,
                      .create = ocad_npy_create},
    [OCAD_FMT_HDF5] = {.name = "hdf5", .exts = ".h5 .hdf5", .objects = 1,
                       .magic = hdf5_magic, .read_meta = ocad_h5_meta,
                       .create = ocad_h5_create, .list = ocad_h5_list},
    [OCAD_FMT_NETCDF] = {.name = "netcdf", .exts = ".nc", .objects = 1,
                         .magic = cdf_magic, .read_meta = ocad_nc_meta,
                         .create = ocad_nc_create, .list = ocad_nc_list,
                         .grow = ocad_nc_grow, .endian = PASSION_ENDIAN_BIG},
    [OCAD_FMT_LOCAL] = {.name = "local", .exts = "",
                        .local_probe = ocad_lset_probe,
                        .local_spec = ocad_lset_spec0},
};

const ocad_format *ocad_format_get(int id)
{
    return id >= 0 && id < OCAD_FMT_COUNT ? &formats[id] : NULL;
}

/* 1 if path ends in one of the space-separated extensions. */
static int ends_in(const char *path, const char *exts)
{
    size_t pl = strlen(path);
    while (*exts) {
        while (*exts == ' ')
            exts++;
        size_t n = strcspn(exts, " ");
        if (n && pl > n && !memcmp(path + pl - n, exts, n))
            return 1;
        exts += n;
    }
    return 0;
}

int ocad_format_by_ext(const char *path)
{
    for (int i = 0; i < OCAD_FMT_COUNT; i++)
        if (formats[i].exts[0] && ends_in(path, formats[i].exts))
            return i;
    return OCAD_FMT_RAW;
}

/* 1 if path can be opened (exists), 0 if not (ENOENT), else the code. */
static int exists(passion_ctx *ctx, const char *path)
{
    core_fh *fh = NULL;
    int rc = core_io_open(ctx, path, CORE_O_RDONLY, &fh);
    if (!rc) {
        core_io_close(fh);
        return 1;
    }
    if (rc == PASSION_ENOENT) {
        ctx->detail[0] = '\0';
        return 0;
    }
    return rc;
}

/* The first bytes of path (up to OCAD_FMT_HEAD) into b; *n how many. */
static int read_head(passion_ctx *ctx, const char *path, unsigned char *b,
                     int64_t *n)
{
    core_fh *fh = NULL;
    int64_t sz;
    *n = 0;
    int rc = core_io_open(ctx, path, CORE_O_RDONLY, &fh);
    if (rc)
        return rc;
    if (!(rc = core_io_size(fh, &sz))) {
        *n = sz < OCAD_FMT_HEAD ? sz : OCAD_FMT_HEAD;
        if (*n > 0)
            rc = core_io_read(fh, b, *n, 0);
    }
    int rc2 = core_io_close(fh);
    return rc ? rc : rc2;
}

int ocad_fmt_split(passion_ctx *ctx, const char *name,
                   const ocad_fmt_info *info, char **path, char **obj)
{
    *path = *obj = NULL;
    size_t n = strlen(name);
    size_t k = info->split >= 0 && (size_t)info->split < n
                   ? (size_t)info->split
                   : n;
    *path = core_malloc(ctx, k + 1);
    *obj = core_strdup(ctx, k < n ? name + k + 1 : "");
    if (!*path || !*obj) {
        core_free(ctx, *path);
        core_free(ctx, *obj);
        *path = *obj = NULL;
        return core_err(ctx, PASSION_ENOMEM, "file name");
    }
    memcpy(*path, name, k);
    (*path)[k] = '\0';
    return PASSION_OK;
}

/* Rank 0's part of ocad_fmt_resolve. */
static int resolve0(passion_ctx *ctx, const char *name, int create,
                    int by_magic, ocad_fmt_info *info)
{
    info->split = -1;
    info->fmt = OCAD_FMT_RAW;
    const char *colon = strrchr(name, ':');
    int rc = 0;
    /* a local set, by its description (helper hook) */
    const ocad_format *lf = &formats[OCAD_FMT_LOCAL];
    if (by_magic && !create && lf->local_probe &&
        (rc = lf->local_probe(ctx, name)) != 0) {
        if (rc < 0)
            return rc;
        info->fmt = OCAD_FMT_LOCAL;
        if (!lf->local_spec)
            return core_err(ctx, PASSION_ENOTSUP,
                            "%s: local set descriptions are not readable "
                            "in this build", name);
        return lf->local_spec(ctx, name, &info->spec);
    }
    if (colon && colon != name) {
        char *pre = core_malloc(ctx, (size_t)(colon - name) + 1);
        if (!pre)
            return core_err(ctx, PASSION_ENOMEM, "file name");
        memcpy(pre, name, (size_t)(colon - name));
        pre[colon - name] = '\0';
        int split = 0;
        /* by magic (passion_open): PATH must exist; by extension
           (passion_file_open): PATH must name a format with objects */
        int objs = formats[ocad_format_by_ext(pre)].objects;
        if (create) {
            split = objs;
        } else if ((by_magic || objs) && (rc = exists(ctx, name)) == 0) {
            rc = exists(ctx, pre);
            split = rc == 1;
        }
        core_free(ctx, pre);
        if (rc < 0)
            return rc;
        if (split)
            info->split = (int)(colon - name);
    }
    char *path, *obj;
    if ((rc = ocad_fmt_split(ctx, name, info, &path, &obj)))
        return rc;
    if (by_magic && !create) {
        unsigned char head[OCAD_FMT_HEAD];
        int64_t n;
        rc = read_head(ctx, path, head, &n);
        info->fmt = OCAD_FMT_RAW;
        for (int i = 0; !rc && i < OCAD_FMT_COUNT; i++)
            if (formats[i].magic && formats[i].magic(head, n)) {
                info->fmt = i;
                break;
            }
        if (!rc && info->fmt == OCAD_FMT_RAW)
            info->fmt = ocad_format_by_ext(path);
    } else {
        info->fmt = ocad_format_by_ext(path);
    }
    const ocad_format *F = &formats[info->fmt];
    if (!rc && *obj && !F->objects)
        rc = core_err(ctx, PASSION_EINVAL,
                      "%s: a %s file holds one array: nothing to name after "
                      "':' ('%s')", path, F->name, obj);
    if (!rc && !create && info->fmt != OCAD_FMT_RAW) {
        if (!F->read_meta)
            rc = core_err(ctx, PASSION_ENOTSUP,
                          "%s: %s files are not supported by this build",
                          path, F->name);
        else if (!(rc = F->read_meta(ctx, path, obj, &info->m)))
            info->have_meta = 1;
    }
    core_free(ctx, path);
    core_free(ctx, obj);
    return rc;
}

int ocad_fmt_resolve(passion_ctx *ctx, const char *name, int create,
                     int by_magic, ocad_fmt_info *info)
{
    memset(info, 0, sizeof *info);
    int rc = 0;
    if (ctx->rank == 0)
        rc = resolve0(ctx, name, create, by_magic, info);
    rc = core_agree(ctx, rc);
    if (rc)
        return rc;
    if (ctx->size > 1) {
        double t0 = core_now();
        int e = MPI_Bcast(info, (int)sizeof *info, MPI_BYTE, 0, ctx->comm);
        ctx->cnt.t_comm += core_now() - t0;
        if (e != MPI_SUCCESS)
            rc = core_err(ctx, PASSION_EMPI, "MPI_Bcast of %s's metadata",
                          name);
        rc = core_agree(ctx, rc);
    }
    return rc;
}

/* Rank 0's part of ocad_fmt_list. */
static int list0(passion_ctx *ctx, const char *name, passion_array_entry *e,
                 int max, int *count)
{
    *count = 0;
    if (!e)
        max = 0;
    /* a local set, by its pattern or description: its one array */
    const ocad_format *lf = &formats[OCAD_FMT_LOCAL];
    int rc = lf->local_probe ? lf->local_probe(ctx, name) : 0;
    if (rc < 0)
        return rc;
    if (rc > 0) {
        passion_array_spec sp;
        if (!lf->local_spec)
            return core_err(ctx, PASSION_ENOTSUP,
                            "%s: local set descriptions are not readable "
                            "in this build", name);
        if ((rc = lf->local_spec(ctx, name, &sp)))
            return rc;
        if (max > 0) {
            memset(e, 0, sizeof *e);
            e->spec = sp;
            snprintf(e->layout, sizeof e->layout, "local");
            e->data_offset = -1;
            e->data_bytes = sp.elem_size;
            for (int d = 0; d < sp.ndims; d++)
                if (!core_mul(e->data_bytes, sp.shape[d], &e->data_bytes))
                    e->data_bytes = 0;
        }
        *count = 1;
        return PASSION_OK;
    }
    /* PATH or PATH:OBJECT, as passion_open splits it */
    ocad_fmt_info info;
    memset(&info, 0, sizeof info);
    info.split = -1;
    const char *colon = strrchr(name, ':');
    if ((rc = exists(ctx, name)) < 0)
        return rc;
    if (!rc && colon && colon != name) {
        char *pre = core_malloc(ctx, (size_t)(colon - name) + 1);
        if (!pre)
            return core_err(ctx, PASSION_ENOMEM, "file name");
        memcpy(pre, name, (size_t)(colon - name));
        pre[colon - name] = '\0';
        rc = exists(ctx, pre);
        core_free(ctx, pre);
        if (rc < 0)
            return rc;
        if (rc == 1)
            info.split = (int)(colon - name);
    }
    char *path, *obj;
    if ((rc = ocad_fmt_split(ctx, name, &info, &path, &obj)))
        return rc;
    unsigned char head[OCAD_FMT_HEAD];
    int64_t n;
    rc = read_head(ctx, path, head, &n);
    int fmt = OCAD_FMT_RAW;
    for (int i = 0; !rc && i < OCAD_FMT_COUNT; i++)
        if (formats[i].magic && formats[i].magic(head, n)) {
            fmt = i;
            break;
        }
    const ocad_format *F = &formats[fmt];
    if (rc) {
        /* read_head's code and detail */
    } else if (fmt == OCAD_FMT_RAW) {
        rc = core_err(ctx, PASSION_EFORMAT,
                      "%s: not a file that describes itself (.npy, HDF5, "
                      "netCDF, a local set): a raw file's array is what its "
                      "reader says (passion ls --shape --type)", path);
    } else if (*obj && !F->objects) {
        rc = core_err(ctx, PASSION_EINVAL,
                      "%s: a %s file holds one array: nothing to name after "
                      "':' ('%s')", path, F->name, obj);
    } else if (F->list) {
        rc = F->list(ctx, path, obj, e, max, count);
    } else if (!F->read_meta) {
        rc = core_err(ctx, PASSION_ENOTSUP,
                      "%s: %s files are not supported by this build", path,
                      F->name);
    } else if (!(rc = F->read_meta(ctx, path, "", &info.m))) {
        const core_fmt_meta *m = &info.m;
        if (max > 0) {
            memset(e, 0, sizeof *e);
            passion_array_spec *sp = &e->spec;
            passion_array_spec_init(sp, m->ndims, m->shape, m->elem_size);
            sp->kind = m->kind;
            sp->endian = m->endian;
            sp->storage = m->storage;
            for (int k = 0; k < m->ndims; k++)
                sp->order[k] = m->storage == PASSION_COL_MAJOR
                                   ? m->ndims - 1 - k
                                   : k;
            sp->placement = PASSION_PLACE_GLOBAL;
            snprintf(e->layout, sizeof e->layout, "contiguous");
            e->data_offset = m->data_offset;
            e->data_bytes = m->data_bytes;
        }
        *count = 1;
    }
    core_free(ctx, path);
    core_free(ctx, obj);
    return rc;
}

int ocad_fmt_list(passion_ctx *ctx, const char *name, passion_array_entry *e,
                  int max, int *count)
{
    int rc = 0, n = 0;
    if (ctx->rank == 0)
        rc = list0(ctx, name, e, max, &n);
    rc = core_agree(ctx, rc);
    if (!rc && ctx->size > 1) {
        double t0 = core_now();
        int err = MPI_Bcast(&n, 1, MPI_INT, 0, ctx->comm);
        int k = e ? (n < max ? n : max) : 0;
        /* in pieces of at most 2^16 entries (MPI counts are int) */
        for (int i = 0; err == MPI_SUCCESS && i < k; i += 1 << 16) {
            int m = k - i < (1 << 16) ? k - i : 1 << 16;
            err = MPI_Bcast(e + i, (int)(m * sizeof *e), MPI_BYTE, 0,
                            ctx->comm);
        }
        ctx->cnt.t_comm += core_now() - t0;
        if (err != MPI_SUCCESS)
            rc = core_err(ctx, PASSION_EMPI, "MPI_Bcast of %s's list", name);
        rc = core_agree(ctx, rc);
    }
    *count = rc ? 0 : n;
    return rc;
}

/* "[3, 4]" */
static void shape_str(int nd, const int64_t *shape, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int d = 0; d < nd && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? ", " : "",
                              (long long)shape[d]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
}

static const char *order_str(passion_storage s)
{
    return s == PASSION_ROW_MAJOR   ? "C order"
           : s == PASSION_COL_MAJOR ? "Fortran order"
                                    : "custom order";
}

int ocad_fmt_check(passion_ctx *ctx, const char *path, const core_fmt_meta *m,
                   const passion_array_spec *spec)
{
    int same = m->ndims == spec->ndims;
    for (int d = 0; same && d < m->ndims; d++)
        same = m->shape[d] == spec->shape[d];
    /* storage: compare the normalised order (one dimension: C = Fortran) */
    int fo = 1, co = 1;
    for (int k = 0; k < spec->ndims; k++) {
        co &= spec->order[k] == k;
        fo &= spec->order[k] == spec->ndims - 1 - k;
    }
    passion_storage ss = co ? PASSION_ROW_MAJOR
                         : fo ? PASSION_COL_MAJOR
                              : PASSION_ORDER_CUSTOM;
    if (same && m->ndims > 1 && !(ss == m->storage))
        same = 0;
    same = same && m->kind == spec->kind && m->elem_size == spec->elem_size;
    if (same && spec->endian != PASSION_ENDIAN_NATIVE)
        same = m->endian == spec->endian;
    if (same)
        return PASSION_OK;
    char ft[16], st[16], fs[200], ss2[200];
    ocad_type_str(m->kind, m->elem_size, m->endian, ft, sizeof ft);
    ocad_type_str(spec->kind, spec->elem_size, spec->endian, st, sizeof st);
    shape_str(m->ndims, m->shape, fs, sizeof fs);
    shape_str(spec->ndims, spec->shape, ss2, sizeof ss2);
    return core_err(ctx, PASSION_EFORMAT,
                    "%s: file has %s %s %s, spec says %s %s %s", path, ft, fs,
                    order_str(m->storage), st, ss2, order_str(ss));
}

int64_t ocad_fmt_span(const core_fmt_meta *m)
{
    if (m->rec_step <= 0 || m->ndims < 1 || m->shape[0] <= 0)
        return m->data_bytes;
    /* (records - 1) steps, then one record's elements */
    return (m->shape[0] - 1) * m->rec_step + m->data_bytes / m->shape[0];
}

int ocad_fmt_records(const core_fmt_meta *m, int ndims, const int64_t *shape,
                     int writable, core_fmt_meta *out)
{
    *out = *m;
    if (m->rec_step <= 0 || !writable || ndims != m->ndims ||
        shape[0] <= m->shape[0])
        return 0;
    int64_t bytes = m->elem_size, span, end;
    for (int d = 0; d < ndims; d++)
        if ((d > 0 && shape[d] != m->shape[d]) ||
            !core_mul(bytes, shape[d], &bytes))
            return 0;
    if (!core_mul(shape[0] - 1, m->rec_step, &span) ||
        !core_add(span, bytes / shape[0], &span) ||
        !core_add(m->data_offset, span, &end))
        return 0;
    out->shape[0] = shape[0];
    out->data_bytes = bytes;
    return 1;
}
