/*
 * fmt_netcdf.c - netCDF classic files as a format of the registry
 * (format.c runs these hooks on rank 0): a variable's description, the
 * list of a file's variables, and a new file holding one variable. The
 * header's bytes are parsed by fmt_netcdf_parse.c and written by
 * fmt_netcdf_write.c; this file reads and writes the file.
 *
 * Invariants: the header is read from offset 0, more of it until it
 * parses (at most NC_HEAD_MAX bytes); every file opened is closed on every
 * path; errors carry the path and, for a variable, its name.
 */
#include "ocad.h"

#include <stdlib.h>
#include <string.h>

#define NC_HEAD_FIRST (64 << 10)  /* bytes read first for a header */
#define NC_HEAD_MAX (256LL << 20) /* a header beyond this is refused */
#define NC_DATA_ALIGN 4096        /* created files: data on a page */

/* Read the header of the open file fh (fsize bytes) into *buf (*n bytes,
   core_malloc'ed; the caller frees it) until it parses, describing var
   (or variable index when var is NULL) into v: the parser's code, with the
   reason in why (or a code with the detail written for a read error,
   ENOMEM, a header too long). */
int ocad_nc_load(passion_ctx *ctx, core_fh *fh, const char *path,
                 int64_t fsize, const char *var, int64_t index,
                 unsigned char **buf, int64_t *n, ocad_nc_var *v, char *why,
                 size_t wlen, int *parsed)
{
    int rc;
    *parsed = 0;
    /* the header has no length field: read more until it parses */
    for (*n = fsize < NC_HEAD_FIRST ? fsize : NC_HEAD_FIRST;;) {
        unsigned char *b = core_realloc(ctx, *buf, (size_t)(*n ? *n : 1));
        if (!b)
            return core_err(ctx, PASSION_ENOMEM, "%s: netCDF header of %lld "
                            "bytes", path, (long long)*n);
        *buf = b;
        if (*n > 0 && (rc = core_io_read(fh, *buf, *n, 0)))
            return rc;
        rc = ocad_nc_parse(*buf, *n, fsize, var, index, v, why, wlen);
        if (rc != PASSION_ESHORT) {
            *parsed = 1;
            return rc;
        }
        if (*n >= NC_HEAD_MAX)
            return core_err(ctx, PASSION_EFORMAT,
                            "%s: a netCDF header longer than %lld bytes",
                            path, (long long)NC_HEAD_MAX);
        *n = *n * 4 < fsize ? *n * 4 : fsize;
        if (*n > NC_HEAD_MAX)
            *n = NC_HEAD_MAX;
    }
}

int ocad_nc_describe(passion_ctx *ctx, const char *path, const char *obj,
                     ocad_nc_var *v)
{
    memset(v, 0, sizeof *v);
    core_fh *fh = NULL;
    int rc = core_io_open(ctx, path, CORE_O_RDONLY, &fh);
    if (rc)
        return rc;
    int64_t fsize = 0, n = 0;
    unsigned char *buf = NULL;
    char why[400];
    int parsed = 0;
    if ((rc = core_io_size(fh, &fsize)))
        goto out;
    /* "" = the file's only variable (by index 0 when there is one) */
    rc = ocad_nc_load(ctx, fh, path, fsize, obj && *obj ? obj : NULL, 0,
                      &buf, &n, v, why, sizeof why, &parsed);
    if (!parsed)
        goto out;
    if (!rc && (!obj || !*obj) && v->nvars != 1)
        rc = core_err(ctx, PASSION_EINVAL,
                      "%s: a netCDF file of %lld variables: name one after "
                      "':' (%s:VARIABLE)",
                      path, (long long)v->nvars, path);
    else if (rc)
        rc = core_err(ctx, rc, "%s: netCDF: %s", path, why);
out:
    core_free(ctx, buf);
    int rc2 = core_io_close(fh);
    return rc ? rc : rc2;
}

/* One variable as a list entry (rc: the parser's code for it). */
static void nc_entry(passion_array_entry *e, const ocad_nc_var *v, int rc,
                     const char *path, const char *why)
{
    memset(e, 0, sizeof *e);
    snprintf(e->name, sizeof e->name, "%s", v->name);
    const core_fmt_meta *m = &v->m;
    passion_array_spec *s = &e->spec;
    s->ndims = m->ndims;
    int64_t bytes = m->elem_size;
    for (int k = 0; k < m->ndims && k < PASSION_MAX_DIMS; k++) {
        s->shape[k] = m->shape[k];
        s->order[k] = k;
        s->grid[k] = 1;
        if (!core_mul(bytes, m->shape[k] < 0 ? 0 : m->shape[k], &bytes))
            bytes = 0;
    }
    s->kind = m->kind;
    s->elem_size = m->elem_size;
    s->endian = PASSION_ENDIAN_BIG;
    s->storage = PASSION_ROW_MAJOR;
    s->placement = PASSION_PLACE_GLOBAL;
    snprintf(e->layout, sizeof e->layout, "%s",
             v->record ? "record" : "contiguous");
    e->data_bytes = m->data_bytes ? m->data_bytes : bytes;
    e->data_offset = rc ? -1 : m->data_offset;
    e->status = rc;
    e->text = m->kind == PASSION_KIND_BYTES; /* char: the only such type */
    if (rc)
        snprintf(e->why, sizeof e->why, "%s:%s: %s", path, v->name, why);
}

int ocad_nc_list(passion_ctx *ctx, const char *path, const char *obj,
                 passion_array_entry *e, int max, int *count)
{
    *count = 0;
    core_fh *fh = NULL;
    int rc = core_io_open(ctx, path, CORE_O_RDONLY, &fh);
    if (rc)
        return rc;
    int64_t fsize = 0, n = 0;
    unsigned char *buf = NULL;
    char why[400];
    int parsed = 0;
    ocad_nc_var v;
    if (!e)
        max = 0;
    if ((rc = core_io_size(fh, &fsize)))
        goto out;
    const char *var = obj && *obj ? obj : NULL;
    rc = ocad_nc_load(ctx, fh, path, fsize, var, 0, &buf, &n, &v, why,
                      sizeof why, &parsed);
    if (!parsed)
        goto out;
    if (var) {
        /* one variable: a missing one is the caller's error */
        if (rc == PASSION_EINVAL || v.header_len == 0) {
            rc = core_err(ctx, rc, "%s: netCDF: %s", path, why);
            goto out;
        }
        if (max > 0)
            nc_entry(&e[0], &v, rc, path, why);
        *count = 1;
        rc = PASSION_OK;
        goto out;
    }
    /* the header as a whole must be sound (the parser got past the
       variable list); a variable's own trouble is its entry's status */
    if (v.header_len == 0) {
        rc = core_err(ctx, rc ? rc : PASSION_EFORMAT, "%s: netCDF: %s",
                      path, why);
        goto out;
    }
    int64_t nvars = v.nvars;
    if (nvars > INT32_MAX) {
        rc = core_err(ctx, PASSION_ENOTSUP, "%s: %lld variables", path,
                      (long long)nvars);
        goto out;
    }
    for (int64_t i = 0; i < nvars && i < max; i++) {
        int r = ocad_nc_parse(buf, n, fsize, NULL, i, &v, why, sizeof why);
        nc_entry(&e[i], &v, r, path, why);
    }
    *count = (int)nvars;
    rc = PASSION_OK;
out:
    core_free(ctx, buf);
    int rc2 = core_io_close(fh);
    return rc ? rc : rc2;
}

int ocad_nc_meta(passion_ctx *ctx, const char *path, const char *obj,
                 core_fmt_meta *m)
{
    ocad_nc_var v;
    int rc = ocad_nc_describe(ctx, path, obj, &v);
    if (rc)
        memset(m, 0, sizeof *m);
    else
        *m = v.m;
    return rc;
}

int ocad_nc_create(passion_ctx *ctx, const char *path, const char *obj,
                   const core_fmt_meta *m, int64_t *data_offset)
{
    static const int versions[] = {5, 2, 1};
    int version = versions[ctx->opt.netcdf_format];
    *data_offset = 0;
    if (!obj || !*obj)
        return core_err(ctx, PASSION_EINVAL,
                        "%s: name the netCDF variable to create after ':' "
                        "(%s:u)",
                        path, path);
    if (m->endian == PASSION_ENDIAN_LITTLE && m->elem_size > 1 &&
        m->kind != PASSION_KIND_BYTES)
        return core_err(ctx, PASSION_EINVAL,
                        "%s:%s: netCDF classic data is big-endian; the "
                        "spec asks for little-endian (use NATIVE or BIG)",
                        path, obj);
    if (m->storage != PASSION_ROW_MAJOR && m->storage != PASSION_COL_MAJOR)
        return core_err(ctx, PASSION_ENOTSUP,
                        "%s:%s: netCDF holds row-major arrays (or "
                        "column-major ones transposed), not a custom "
                        "storage order",
                        path, obj);
    unsigned char *hdr = NULL;
    int64_t hlen = 0, end;
    char why[400];
    int rc = ocad_nc_format(version, obj, m, NC_DATA_ALIGN, &hdr, &hlen, why,
                            sizeof why);
    if (rc)
        return core_err(ctx, rc, "%s:%s: netCDF CDF-%d: %s", path, obj,
                        version, why);
    /* the variable's data padded to 4 bytes, as the format sizes it */
    if (!core_add(hlen, (m->data_bytes + 3) & ~(int64_t)3, &end)) {
        free(hdr);
        return core_err(ctx, PASSION_EOVERFLOW, "%s: file size", path);
    }
    core_fh *fh = NULL;
    rc = core_io_open(ctx, path, CORE_O_RDWR | CORE_O_CREATE | CORE_O_TRUNC,
                      &fh);
    if (!rc)
        rc = core_io_resize(fh, end);
    if (!rc)
        rc = core_io_write(fh, hdr, hlen, 0);
    free(hdr);
    if (fh) {
        int rc2 = core_io_close(fh);
        rc = rc ? rc : rc2;
    }
    if (!rc)
        *data_offset = hlen;
    return rc;
}
