/*
 * fmt_netcdf_rec.c - a netCDF classic file's record dimension grown (the
 * format's grow hook, run on rank 0 by file.c when a record variable is
 * opened writable with more records than the file has): the new records
 * of every record variable are written with its fill value, then the
 * header's numrecs is set, as the netCDF library does in its default fill
 * mode when a write reaches past the last record ("NetCDF Classic and
 * 64-bit Offset Formats": numrecs; netcdf.h: the NC_FILL_* values).
 *
 * Invariants: record r of a record variable lies at begin + r * recsize
 * (fmt_netcdf_parse.c); the record variables tile one record (sorted by
 * begin, each one starting where the one before ends, recsize bytes in
 * all) or nothing is written; the data is written and synced before
 * numrecs, so a reader never sees a record count whose records are not
 * in the file; a file whose numrecs changed since it was opened is left
 * as it is.
 */
#include "ocad.h"

#include <stdlib.h>
#include <string.h>

#define NC_FILL_BUF (1 << 20) /* at most these bytes of fill values are
                                 written at a time */

/* One record variable's part of a record: bytes [off, off + len) of the
   file's record 0, each element of esize bytes the value fill. */
typedef struct nc_slot {
    int64_t off, len, esize;
    unsigned char fill[8];
} nc_slot;

/* netCDF's default fill value of nc_type t, big-endian (netcdf.h:
   NC_FILL_BYTE -127, NC_FILL_CHAR 0, NC_FILL_SHORT -32767, NC_FILL_INT
   -2147483647, NC_FILL_FLOAT and NC_FILL_DOUBLE 9.9692099683868690e+36,
   the unsigned types' largest value, NC_FILL_INT64 -9223372036854775806,
   NC_FILL_UINT64 18446744073709551614). */
static void nc_default_fill(int t, int64_t esize, unsigned char *v)
{
    static const uint64_t fills[12] = {
        0, 0x81, 0x00, 0x8001, 0x80000001, 0x7cf00000,
        0x479e000000000000ULL, 0xff, 0xffff, 0xffffffffULL,
        0x8000000000000002ULL, 0xfffffffffffffffeULL};
    uint64_t f = t >= 1 && t <= 11 ? fills[t] : 0;
    for (int64_t i = 0; i < esize && i < 8; i++)
        v[i] = (unsigned char)(f >> (8 * (esize - 1 - i)));
}

static int slot_cmp(const void *a, const void *b)
{
    const nc_slot *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* The record variables of the header in buf (n bytes of fsize) as slots,
   sorted, checked to tile one record of rec_size bytes. */
static int nc_slots(passion_ctx *ctx, const char *path, const void *buf,
                    int64_t n, int64_t fsize, const ocad_nc_var *sel,
                    nc_slot *s, int64_t *ns)
{
    char why[400];
    ocad_nc_var v;
    *ns = 0;
    for (int64_t i = 0; i < sel->nvars && *ns < sel->nrecvars; i++) {
        int rc = ocad_nc_parse(buf, n, fsize, NULL, i, &v, why, sizeof why);
        if (rc == PASSION_EFORMAT || v.header_len == 0)
            return core_err(ctx, rc ? rc : PASSION_EFORMAT,
                            "%s: netCDF: %s", path, why);
        if (!v.record)
            continue;
        if (v.fill_found && !v.fill_ok)
            return core_err(ctx, PASSION_ENOTSUP,
                            "%s:%s: its _FillValue is not one value of the "
                            "variable's type (netCDF's NC_EBADTYPE): its "
                            "new records cannot be filled",
                            path, v.name);
        nc_slot *t = &s[(*ns)++];
        t->off = v.begin;
        t->len = v.vsize;
        t->esize = v.m.elem_size;
        if (v.fill_ok)
            memcpy(t->fill, v.fill, sizeof t->fill);
        else
            nc_default_fill(v.nc_type, t->esize, t->fill);
    }
    qsort(s, (size_t)*ns, sizeof *s, slot_cmp);
    int64_t end = *ns ? s[0].off : 0;
    for (int64_t k = 0; k < *ns; k++) {
        if (s[k].off != end || !core_add(end, s[k].len, &end))
            break;
    }
    if (*ns != sel->nrecvars || !*ns || end - s[0].off != sel->rec_size)
        return core_err(ctx, PASSION_ENOTSUP,
                        "%s: the record variables do not tile a record of "
                        "%lld bytes (begin offsets not consecutive): "
                        "passion does not append records to this file",
                        path, (long long)sel->rec_size);
    return PASSION_OK;
}

/* dst[0, len) as repeated elements of esize bytes (a partial last one). */
static void nc_pattern(unsigned char *dst, int64_t len, const nc_slot *s)
{
    for (int64_t i = 0; i < len; i += s->esize)
        memcpy(dst + i, s->fill,
               (size_t)(len - i < s->esize ? len - i : s->esize));
}

/* Records [from, to): whole records built in buf (of bsz bytes, a
   multiple of the record's when one fits) when one fits, else each
   variable's part in pieces of buf (bsz a multiple of 8). */
static int nc_fill(core_fh *fh, const nc_slot *s, int64_t ns, int64_t rsz,
                   int64_t from, int64_t to, unsigned char *buf, int64_t bsz)
{
    int64_t rec0 = s[0].off;
    int rc = 0;
    if (rsz <= bsz) {
        int64_t k = bsz / rsz;
        for (int64_t j = 0; j < ns; j++)
            nc_pattern(buf + (s[j].off - rec0), s[j].len, &s[j]);
        for (int64_t i = 1; i < k; i++)
            memcpy(buf + i * rsz, buf, (size_t)rsz);
        for (int64_t r = from; !rc && r < to; r += k) {
            int64_t m = to - r < k ? to - r : k;
            rc = core_io_write(fh, buf, m * rsz, rec0 + r * rsz);
        }
        return rc;
    }
    for (int64_t j = 0; j < ns; j++) {
        int64_t piece = bsz - bsz % (s[j].esize > 0 ? s[j].esize : 1);
        nc_pattern(buf, piece, &s[j]);
        for (int64_t r = from; !rc && r < to; r++)
            for (int64_t d = 0; !rc && d < s[j].len; d += piece)
                rc = core_io_write(fh, buf,
                                   s[j].len - d < piece ? s[j].len - d
                                                        : piece,
                                   s[j].off + r * rsz + d);
    }
    return rc;
}

/* numrecs, at byte 4: 4 bytes big-endian (CDF-1, CDF-2) or 8 (CDF-5). */
static int nc_set_numrecs(core_fh *fh, int version, int64_t numrecs)
{
    unsigned char b[8];
    int k = version == 5 ? 8 : 4;
    for (int i = 0; i < k; i++)
        b[i] = (unsigned char)((uint64_t)numrecs >> (8 * (k - 1 - i)));
    return core_io_write(fh, b, k, 4);
}

/* The header's variable obj and the record variables as slots. */
static int nc_grow_plan(passion_ctx *ctx, core_fh *fh, const char *path,
                        const char *obj, int64_t from, int64_t to,
                        ocad_nc_var *v, nc_slot **s, int64_t *ns)
{
    int64_t fsize = 0, n = 0;
    unsigned char *buf = NULL;
    char why[400];
    int parsed = 0, rc = core_io_size(fh, &fsize);
    if (!rc)
        rc = ocad_nc_load(ctx, fh, path, fsize, *obj ? obj : NULL, 0, &buf,
                          &n, v, why, sizeof why, &parsed);
    if (parsed && rc)
        rc = core_err(ctx, rc, "%s: netCDF: %s", path, why);
    else if (!rc && (!v->record || v->numrecs != from))
        rc = core_err(ctx, PASSION_EMISMATCH,
                      "%s:%s: the file has %lld records now, %lld when it "
                      "was opened: not grown",
                      path, v->name, (long long)v->numrecs,
                      (long long)from);
    else if (!rc && v->version != 5 && to > INT32_MAX)
        rc = core_err(ctx, PASSION_ENOTSUP,
                      "%s: %lld records: CDF-%d counts at most %d (CDF-5 "
                      "more)",
                      path, (long long)to, v->version, INT32_MAX);
    if (!rc && !(*s = core_malloc(ctx, (size_t)v->nrecvars * sizeof **s)))
        rc = core_err(ctx, PASSION_ENOMEM, "%s: %lld record variables",
                      path, (long long)v->nrecvars);
    if (!rc)
        rc = nc_slots(ctx, path, buf, n, fsize, v, *s, ns);
    core_free(ctx, buf);
    return rc;
}

int ocad_nc_grow(passion_ctx *ctx, const char *path, const char *obj,
                 int64_t from, int64_t to)
{
    core_fh *fh = NULL;
    nc_slot *s = NULL;
    unsigned char *buf = NULL;
    int64_t ns = 0;
    ocad_nc_var v;
    int rc = core_io_open(ctx, path, CORE_O_RDWR, &fh);
    if (!rc)
        rc = nc_grow_plan(ctx, fh, path, obj, from, to, &v, &s, &ns);
    /* within the memory budget (at least one element of the widest type) */
    int64_t bsz = ocad_env_ctx(ctx).budget;
    bsz = bsz > NC_FILL_BUF ? NC_FILL_BUF : bsz < 8 ? 8 : bsz & ~(int64_t)7;
    if (!rc && v.rec_size <= bsz)
        bsz = bsz / v.rec_size * v.rec_size;
    if (!rc && !(buf = core_malloc(ctx, (size_t)bsz)))
        rc = core_err(ctx, PASSION_ENOMEM, "%s: fill values", path);
    /* the records' data first, on disk, then the count that shows them */
    if (!rc)
        rc = nc_fill(fh, s, ns, v.rec_size, from, to, buf, bsz);
    if (!rc)
        rc = core_io_sync(fh);
    if (!rc)
        rc = nc_set_numrecs(fh, v.version, to);
    if (!rc)
        rc = core_io_sync(fh);
    core_free(ctx, buf);
    core_free(ctx, s);
    if (fh) {
        int rc2 = core_io_close(fh);
        rc = rc ? rc : rc2;
    }
    return rc;
}
