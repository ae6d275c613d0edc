/*
 * open.c - opening an array by its file: passion_open (the registry's
 * resolution, then the descriptor and the file), passion_array_list (the
 * arrays a file holds, format.c's ocad_fmt_list) and ocad_lset_open (a
 * local set by its description). Kept above file.c, format.c and lset.c
 * so that those three do not call one another in a circle.
 */
#include "ocad.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The spec passion_open builds from the file's metadata and the layout. */
static int open_spec(passion_ctx *ctx, const char *name,
                     const ocad_fmt_info *info,
                     const passion_array_spec *layout, int writable,
                     passion_array_spec *sp)
{
    /* a record variable opened writable with more records: appended */
    core_fmt_meta grown;
    const core_fmt_meta *m = &info->m;
    if (layout && layout->ndims > 0 && layout->ndims <= PASSION_MAX_DIMS &&
        ocad_fmt_records(m, layout->ndims, layout->shape, writable, &grown))
        m = &grown;
    if (info->fmt == OCAD_FMT_LOCAL) {
        *sp = info->spec;
        if (layout)
            return core_err(ctx, PASSION_EINVAL,
                            "%s: a local set's layout is its description's; "
                            "pass layout NULL (passion convert changes it)",
                            name);
        return PASSION_OK;
    }
    if (m->ndims < 1 || m->ndims > PASSION_MAX_DIMS)
        return core_err(ctx, PASSION_EFORMAT, "%s: %d dimensions", name,
                        m->ndims);
    passion_array_spec_init(sp, m->ndims, m->shape, m->elem_size);
    sp->kind = m->kind;
    sp->endian = m->endian;
    sp->storage = m->storage;
    sp->placement = PASSION_PLACE_GLOBAL;
    if (!layout)
        return PASSION_OK;
    if (!core_zero(layout->reserved, sizeof layout->reserved))
        return core_err(ctx, PASSION_EINVAL, "layout: reserved fields not "
                        "zero (fill it with passion_array_spec_init)");
    if (layout->placement == PASSION_PLACE_PARTITIONED)
        sp->placement = PASSION_PLACE_PARTITIONED;
    else if (layout->placement != PASSION_PLACE_LOCAL &&
             layout->placement != PASSION_PLACE_GLOBAL)
        return core_err(ctx, PASSION_EINVAL, "layout: unknown placement %d",
                        (int)layout->placement);
    for (int d = 0; d < m->ndims; d++) {
        sp->grid[d] = layout->grid[d];
        sp->dist[d] = layout->dist[d];
        sp->block[d] = layout->block[d];
        sp->ghost[d] = layout->ghost[d];
    }
    if (layout->ndims != 0 || layout->elem_size != 0) {
        /* what the caller states must be what the file holds */
        passion_array_spec want = *sp;
        if (layout->ndims != 0) {
            want.ndims = layout->ndims;
            for (int d = 0; d < PASSION_MAX_DIMS; d++)
                want.shape[d] = d < layout->ndims ? layout->shape[d] : 0;
            want.storage = layout->storage;
            memcpy(want.order, layout->order, sizeof want.order);
            if (layout->storage != PASSION_ORDER_CUSTOM)
                for (int k = 0; k < layout->ndims && k < PASSION_MAX_DIMS;
                     k++)
                    want.order[k] = layout->storage == PASSION_ROW_MAJOR
                                        ? k
                                        : layout->ndims - 1 - k;
        }
        if (layout->elem_size != 0) {
            want.kind = layout->kind;
            want.elem_size = layout->elem_size;
            want.endian = layout->endian;
        }
        if (layout->ndims < 0 || layout->ndims > PASSION_MAX_DIMS)
            return core_err(ctx, PASSION_EINVAL, "layout: ndims %d",
                            layout->ndims);
        int rc = ocad_fmt_check(ctx, name, m, &want);
        if (rc)
            return rc;
    }
    return PASSION_OK;
}

/* The file name both calls take: non-empty and shorter than PATH_MAX. */
static int name_check(passion_ctx *ctx, const char *name)
{
    if (!name || !*name)
        return core_err(ctx, PASSION_EINVAL, "empty name");
    if (strlen(name) >= PATH_MAX)
        return core_err(ctx, PASSION_EINVAL, "name of %zu bytes: longer "
                        "than PATH_MAX (%d)", strlen(name), PATH_MAX);
    return PASSION_OK;
}

static int open_body(passion_ctx *ctx, const char *name, passion_mode mode,
                     const passion_array_spec *layout, passion_array **a,
                     passion_file **f)
{
    if (a)
        *a = NULL;
    if (f)
        *f = NULL;
    if (!ctx || !a || !f)
        return PASSION_EINVAL;
    core_enter(ctx);
    int rc = PASSION_OK;
    if ((rc = name_check(ctx, name))) {
        /* the detail is set */
    } else if (mode != PASSION_MODE_RDONLY && mode != PASSION_MODE_RDWR)
        rc = core_err(ctx, PASSION_EINVAL,
                      "passion_open opens existing files (RDONLY or RDWR); "
                      "create with passion_array_create + "
                      "passion_file_open");
    uint64_t key[2] = {(uint64_t)mode, 1469598103934665603ULL};
    for (const char *c = name && !rc ? name : ""; *c; c++)
        key[1] = (key[1] ^ (unsigned char)*c) * 1099511628211ULL;
    rc = core_same(ctx, rc, key, sizeof key, "names or modes");
    if (rc)
        return rc;
    ocad_fmt_info info;
    if ((rc = ocad_fmt_resolve(ctx, name, 0, 1, &info)))
        return rc;
    if (info.fmt == OCAD_FMT_RAW)
        return core_agree(ctx, core_err(
            ctx, PASSION_EFORMAT,
            "%s: not a file that describes itself (.npy, HDF5, netCDF, a "
            "local set); a raw file needs passion_array_create and "
            "passion_file_open with its spec", name));
    passion_array_spec sp;
    rc = core_agree(ctx, open_spec(ctx, name, &info, layout,
                                   mode != PASSION_MODE_RDONLY, &sp));
    if (rc)
        return rc;
    if (info.fmt == OCAD_FMT_LOCAL)
        /* the set's files and its writers' rank count are in its
           description (rank 0 reads those few hundred bytes once more) */
        return ocad_lset_open(ctx, name, mode, a, f);
    if ((rc = passion_array_create(ctx, &sp, a)))
        return rc;
    if ((rc = ocad_file_open_resolved(*a, name, mode, &info, f))) {
        char keep[CORE_DETAIL_MAX];
        memcpy(keep, ctx->detail, sizeof keep);
        passion_array_free(*a); /* clears the detail at entry */
        memcpy(ctx->detail, keep, sizeof keep);
        *a = NULL;
        return rc;
    }
    return PASSION_OK;
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_open(passion_ctx *ctx, const char *name, passion_mode mode,
                 const passion_array_spec *layout, passion_array **a,
                 passion_file **f)
{
    passion_ctx *gctx = ctx;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = open_body(ctx, name, mode, layout, a, f);
    core_call_end(gctx);
    return rc;
}

static int list_body(passion_ctx *ctx, const char *name,
                     passion_array_entry *entries, int max, int *count)
{
    if (count)
        *count = 0;
    if (!ctx || !count)
        return PASSION_EINVAL;
    core_enter(ctx);
    int rc = PASSION_OK;
    if ((rc = name_check(ctx, name))) {
        /* the detail is set */
    } else if (max < 0 || (max > 0 && !entries))
        rc = core_err(ctx, PASSION_EINVAL,
                      "max %d with entries %s: max >= 0, and entries must "
                      "hold max entries", max, entries ? "given" : "NULL");
    uint64_t key[2] = {(uint64_t)(int64_t)max, 1469598103934665603ULL};
    for (const char *c = name && !rc ? name : ""; *c; c++)
        key[1] = (key[1] ^ (unsigned char)*c) * 1099511628211ULL;
    rc = core_same(ctx, rc, key, sizeof key, "names or max");
    if (rc)
        return rc;
    return ocad_fmt_list(ctx, name, entries, max, count);
}

int passion_array_list(passion_ctx *ctx, const char *name,
                       passion_array_entry *entries, int max, int *count)
{
    passion_ctx *gctx = ctx;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = list_body(ctx, name, entries, max, count);
    core_call_end(gctx);
    return rc;
}

int ocad_lset_open(passion_ctx *ctx, const char *name, passion_mode mode,
                   passion_array **a, passion_file **f)
{
    *a = NULL;
    *f = NULL;
    ocad_lset d;
    char *pat = NULL;
    int rc = ocad_lset_read(ctx, name, &d, &pat);
    if (!rc && d.nranks != ctx->size)
        rc = core_err(ctx, PASSION_EMISMATCH,
                      "%s: the local set was written by %d ranks, this run "
                      "has %d: run with %d ranks, or turn it into a set for "
                      "%d ranks (or a global file) with `passion convert`",
                      name, d.nranks, ctx->size, d.nranks, ctx->size);
    if (!rc && mode != PASSION_MODE_RDONLY && mode != PASSION_MODE_RDWR)
        rc = core_err(ctx, PASSION_EINVAL,
                      "%s: an existing local set opens read-only or "
                      "read-write", name);
    rc = core_agree(ctx, rc);
    passion_array_spec s;
    if (!rc)
        rc = ocad_lset_spec(&d, &s);
    if (!rc)
        rc = passion_array_create(ctx, &s, a);
    if (!rc && (rc = passion_file_open(*a, pat, mode, f))) {
        char keep[CORE_DETAIL_MAX];
        memcpy(keep, ctx->detail, sizeof keep);
        passion_array_free(*a); /* clears the detail at entry */
        memcpy(ctx->detail, keep, sizeof keep);
        *a = NULL;
    }
    free(pat);
    return rc;
}
