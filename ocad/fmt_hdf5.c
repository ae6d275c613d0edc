/*
 * fmt_hdf5.c - the HDF5 glue: with fmt_hdf5_dset.c and fmt_hdf5_create.c
 * the only code that calls libhdf5 (built with the meson option hdf5,
 * PASSION_HAVE_HDF5). It reads where a dataset's elements lie in its
 * file, and creates a file with one dataset whose elements lie at a known
 * offset; passion then moves the elements itself with its own methods
 * (sieving, two-phase, prefetch, slabs), as it does for a raw or .npy
 * file. This file: the format hooks ocad_h5_meta and ocad_h5_list;
 * what the HDF5 files share is in fmt_h5_util.c.
 *
 * ocad_h5_list walks a file's links (H5Lvisit, hard links only) and
 * describes every dataset with the same checks as ocad_h5_meta
 * (ocad_h5_dset_meta), keeping the refused ones with their reason.
 *
 * Invariants: the calls are rank-local (the caller runs them on one rank
 * and broadcasts the result), leave no HDF5 object open and HDF5's own
 * error printing off, and return 0 or a PASSION_E* code with the detail
 * written. Without HDF5 every hook is PASSION_ENOTSUP with a message
 * saying how to build with it.
 */
#include "ocad.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#ifndef PASSION_HAVE_HDF5

static int no_hdf5(passion_ctx *ctx, const char *path)
{
    return core_err(ctx, PASSION_ENOTSUP,
                    "%s: this passion was built without HDF5 (meson "
                    "option -Dhdf5=enabled with the parallel HDF5 package, "
                    "Debian libhdf5-mpich-dev)",
                    path);
}

int ocad_h5_meta(passion_ctx *ctx, const char *path, const char *dset,
                 core_fmt_meta *m)
{
    (void)dset;
    memset(m, 0, sizeof *m);
    return no_hdf5(ctx, path);
}

int ocad_h5_create(passion_ctx *ctx, const char *path, const char *dset,
                   const core_fmt_meta *m, int64_t *data_offset)
{
    (void)dset;
    (void)m;
    *data_offset = 0;
    return no_hdf5(ctx, path);
}

int ocad_h5_list(passion_ctx *ctx, const char *path, const char *obj,
                 passion_array_entry *e, int max, int *count)
{
    (void)obj;
    (void)e;
    (void)max;
    *count = 0;
    return no_hdf5(ctx, path);
}

#else

#include "fmt_h5_util.h"
#include "fmt_hdf5_dset.h"

int ocad_h5_meta(passion_ctx *ctx, const char *path, const char *dset,
                 core_fmt_meta *m)
{
    memset(m, 0, sizeof *m);
    char first[PATH_MAX];
    ocad_h5_quiet q;
    ocad_h5_quiet_on(&q);
    int64_t fsize = 0;
    int rc;
    const char *lay;
    hid_t file = ocad_h5_open(ctx, path, &fsize, &rc);
    if (file < 0)
        goto out;
    /* no name: the file's only dataset */
    if (!dset || !*dset) {
        int n = ocad_h5_only_dset(file, first, sizeof first);
        if (n != 1) {
            rc = core_err(ctx, PASSION_EINVAL,
                          "%s: an HDF5 file of %d datasets: name one after "
                          "':' (%s:/path/to/dataset%s%s)",
                          path, n, path, n ? ", e.g. " : "", first);
            goto out;
        }
        dset = first;
    }
    rc = ocad_h5_dset_meta(ctx, file, path, dset, fsize, m, &lay);
out:
    ocad_h5_close(file, H5Fclose);
    ocad_h5_quiet_off(&q);
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

/* 1 if the dataset's elements are fixed-length strings (quiet on). */
static int is_text(hid_t file, const char *full)
{
    hid_t d = H5Dopen2(file, full, H5P_DEFAULT);
    hid_t t = d >= 0 ? H5Dget_type(d) : -1;
    int text = t >= 0 && H5Tget_class(t) == H5T_STRING;
    ocad_h5_close(t, H5Tclose);
    ocad_h5_close(d, H5Dclose);
    return text;
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
    int rc = ocad_h5_dset_meta(L->ctx, L->file, L->path, full, L->fsize, &m,
                               &lay);
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
    e->data_offset = rc || m.chunked ? -1 : m.data_offset;
    e->status = rc;
    e->text = !rc && m.kind == PASSION_KIND_BYTES && is_text(L->file, full);
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

int ocad_h5_list(passion_ctx *ctx, const char *path, const char *obj,
                 passion_array_entry *e, int max, int *count)
{
    *count = 0;
    ocad_h5_quiet q;
    ocad_h5_quiet_on(&q);
    int64_t fsize = 0;
    int rc;
    hid_t file = ocad_h5_open(ctx, path, &fsize, &rc);
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
                        path, ocad_h5_why(why));
    }
    rc = L.rc;
out:
    ocad_h5_close(file, H5Fclose);
    ocad_h5_quiet_off(&q);
    *count = rc ? 0 : L.n;
    return rc;
}

#endif
