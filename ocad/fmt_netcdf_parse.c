/*
 * fmt_netcdf_parse.c - the netCDF classic header's reader: a parser of
 * bytes and the format's element types (no file access, no context, no
 * MPI: the fuzz target tests/fuzz/fuzz_netcdf.c drives it, and the writer
 * of fmt_netcdf_write.c). ocad_nc_parse walks the header in named steps:
 * the magic, the dimensions, the variables, the selection, the array.
 *
 * Format: "NetCDF Classic and 64-bit Offset Formats" (CDF-1, CDF-2) and
 * PnetCDF's "CDF-5 file format specification". All numbers big-endian:
 *   header   = magic numrecs dim_list gatt_list var_list
 *   magic    = 'C' 'D' 'F' 1|2|5
 *   NON_NEG  = 4-byte signed int (CDF-1, CDF-2), 8-byte (CDF-5), >= 0
 *   numrecs  = NON_NEG | STREAMING (all bits set)
 *   list     = ABSENT (ZERO NON_NEG-sized zero) | TAG nelems items
 *              (TAG: 4 bytes, 0x0A dimensions, 0x0B variables,
 *               0x0C attributes)
 *   name     = nelems bytes, padded with zeros to a multiple of 4
 *   dim      = name dim_length (0 = the unlimited, record dimension)
 *   attr     = name nc_type nelems values (padded to a multiple of 4)
 *   var      = name nelems dimid... vatt_list nc_type vsize begin
 *   nc_type  = 4 bytes: 1 byte, 2 char, 3 short, 4 int, 5 float,
 *              6 double; CDF-5 also 7 ubyte, 8 ushort, 9 uint,
 *              10 int64, 11 uint64
 *   begin    = 4-byte signed (CDF-1), 8-byte signed (CDF-2, CDF-5)
 * A fixed-size variable is one contiguous row-major array at `begin`. A
 * record variable (first dimension the unlimited one) has numrecs records,
 * record r at begin + r * recsize, where recsize is the sum of every
 * record variable's record bytes padded to 4 (the records interleave),
 * except when it is the only record variable: then recsize is its record
 * bytes unpadded (the format's own rule), and its records are contiguous.
 * The slice bytes, recsize and the _FillValue come from the dimensions
 * and the attributes (the header's vsize is not trusted: CDF-1/2 cap it).
 *
 * Invariants: the parser never reads outside [buf, buf + n); every value
 * it reports has been checked (counts that cannot fit the file, negative
 * sizes, byte counts that overflow 64 bits, types the version does not
 * have, dimension ids out of range, data past the end of the file or
 * inside the header are all PASSION_EFORMAT with a message); a header the
 * writer makes parses back to the same array.
 */
#include "ocad.h"

#include <stdlib.h>
#include <string.h>

/* Bytes of one element of nc_type t (0 = not a type of `version`). */
static int64_t nc_type_size(int version, uint32_t t)
{
    static const int64_t sz[12] = {0, 1, 1, 2, 4, 4, 8, 1, 2, 4, 8, 8};
    if (t < 1 || t > 11 || (t > 6 && version != 5))
        return 0;
    return sz[t];
}

/* The element type passion sees for nc_type t. */
static void nc_type_kind(uint32_t t, passion_kind *k)
{
    switch (t) {
    case 2: *k = PASSION_KIND_BYTES; break; /* char: text */
    case 5: case 6: *k = PASSION_KIND_FLOAT; break;
    case 7: case 8: case 9: case 11: *k = PASSION_KIND_UINT; break;
    default: *k = PASSION_KIND_INT; break; /* byte short int int64 */
    }
}

int ocad_nc_type_of(int version, passion_kind kind, int64_t size)
{
    int t = 0;
    switch (kind) {
    case PASSION_KIND_INT:
        t = size == 1 ? 1 : size == 2 ? 3 : size == 4 ? 4 : size == 8 ? 10
                                                                       : 0;
        break;
    case PASSION_KIND_UINT:
        t = size == 1 ? 7 : size == 2 ? 8 : size == 4 ? 9 : size == 8 ? 11
                                                                       : 0;
        break;
    case PASSION_KIND_FLOAT:
        t = size == 4 ? 5 : size == 8 ? 6 : 0;
        break;
    case PASSION_KIND_BOOL:
        t = size == 1 ? (version == 5 ? 7 : 1) : 0;
        break;
    case PASSION_KIND_BYTES:
        t = size == 1 ? 2 : 0;
        break;
    default:
        t = 0;
    }
    return t && nc_type_size(version, (uint32_t)t) ? t : 0;
}

/* ---- the reader ---- */

typedef struct nc_rd {
    const unsigned char *b;
    int64_t n;     /* bytes of b */
    int64_t fsize; /* bytes of the file (>= n) */
    int64_t pos;
    int version;
    int wide;      /* 8-byte NON_NEG (CDF-5) */
    char *why;
    size_t wlen;
    int rc;        /* the first failure */
} nc_rd;

__attribute__((format(printf, 3, 4))) static int nc_fail(nc_rd *r, int code,
                                                         const char *fmt,
                                                         ...)
{
    if (!r->rc) {
        r->rc = code;
        if (r->why && r->wlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(r->why, r->wlen, fmt, ap);
            va_end(ap);
        }
    }
    return r->rc;
}

/* k more bytes available at pos? */
static int nc_need(nc_rd *r, int64_t k, const char *what)
{
    if (r->rc)
        return r->rc;
    if (k >= 0 && k <= r->n - r->pos)
        return 0;
    if (r->n < r->fsize)
        return nc_fail(r, PASSION_ESHORT,
                       "the header continues past the %lld bytes read",
                       (long long)r->n);
    return nc_fail(r, PASSION_EFORMAT,
                   "truncated header: %s at byte %lld needs %lld bytes, the "
                   "file has %lld",
                   what, (long long)r->pos, (long long)k,
                   (long long)r->fsize);
}

static uint64_t be(const unsigned char *p, int k)
{
    uint64_t v = 0;
    for (int i = 0; i < k; i++)
        v = v << 8 | p[i];
    return v;
}

static int nc_u32(nc_rd *r, uint32_t *v, const char *what)
{
    *v = 0;
    if (nc_need(r, 4, what))
        return r->rc;
    *v = (uint32_t)be(r->b + r->pos, 4);
    r->pos += 4;
    return 0;
}

/* A signed big-endian number of k bytes (4 or 8). */
static int nc_int(nc_rd *r, int k, int64_t *v, const char *what)
{
    *v = 0;
    if (nc_need(r, k, what))
        return r->rc;
    uint64_t u = be(r->b + r->pos, k);
    r->pos += k;
    if (k == 4)
        *v = (int32_t)(uint32_t)u;
    else
        memcpy(v, &u, sizeof *v);
    return 0;
}

/* NON_NEG: 4 or 8 bytes, never negative. */
static int nc_nonneg(nc_rd *r, int64_t *v, const char *what)
{
    if (nc_int(r, r->wide ? 8 : 4, v, what))
        return r->rc;
    if (*v < 0)
        return nc_fail(r, PASSION_EFORMAT, "negative %s (%lld) at byte %lld",
                       what, (long long)*v,
                       (long long)(r->pos - (r->wide ? 8 : 4)));
    return 0;
}

/* A count of items each at least `least` bytes long must fit in what is
   left of the file (no long loops over impossible counts). */
static int nc_count_fits(nc_rd *r, int64_t count, int64_t least,
                         const char *what)
{
    if (r->rc)
        return r->rc;
    int64_t need;
    if (!core_mul(count, least, &need) || need > r->fsize - r->pos)
        return nc_fail(r, PASSION_EFORMAT,
                       "%lld %s cannot fit in the %lld bytes left of the "
                       "file at byte %lld",
                       (long long)count, what,
                       (long long)(r->fsize - r->pos), (long long)r->pos);
    return 0;
}

/* name = nelems chars (padded to 4); copied NUL-terminated into out. */
static int nc_name(nc_rd *r, char *out, const char *what)
{
    int64_t len;
    out[0] = '\0';
    if (nc_nonneg(r, &len, what))
        return r->rc;
    if (len == 0 || len > OCAD_NC_NAME_MAX)
        return nc_fail(r, PASSION_EFORMAT,
                       "%s of %lld bytes at byte %lld (1 to %d)", what,
                       (long long)len, (long long)r->pos, OCAD_NC_NAME_MAX);
    int64_t padded = (len + 3) & ~(int64_t)3;
    if (nc_need(r, padded, what))
        return r->rc;
    memcpy(out, r->b + r->pos, (size_t)len);
    out[len] = '\0';
    if (memchr(out, '\0', (size_t)len))
        return nc_fail(r, PASSION_EFORMAT, "%s at byte %lld holds a NUL",
                       what, (long long)r->pos);
    r->pos += padded;
    return 0;
}

/* A list's tag and count: 0 elements for ABSENT. */
static int nc_list(nc_rd *r, uint32_t tag, int64_t *count, const char *what)
{
    uint32_t t;
    *count = 0;
    if (nc_u32(r, &t, what) || nc_nonneg(r, count, what))
        return r->rc;
    if (t == 0 && *count == 0)
        return 0; /* ABSENT */
    if (t != tag)
        return nc_fail(r, PASSION_EFORMAT,
                       "%s: tag 0x%08x at byte %lld, expected 0x%08x or an "
                       "absent list",
                       what, t, (long long)(r->pos - 4 - (r->wide ? 8 : 4)),
                       tag);
    return 0;
}

/* A variable's _FillValue attribute as the header has it (type, count,
   the first value's bytes, big-endian). */
typedef struct nc_fillatt {
    int found;
    uint32_t type;
    int64_t count;
    unsigned char v[8];
} nc_fillatt;

/* Skip an attribute list (global or of a variable); fill (or NULL)
   receives a _FillValue attribute. */
static int nc_skip_atts(nc_rd *r, const char *owner, nc_fillatt *fill)
{
    char what[64], name[OCAD_NC_NAME_MAX + 1];
    int64_t natt;
    snprintf(what, sizeof what, "attribute list of %s", owner);
    if (nc_list(r, OCAD_NC_TAG_ATT, &natt, what))
        return r->rc;
    /* at least a name (length + 4 chars), a type and a count */
    if (nc_count_fits(r, natt, 2 * (r->wide ? 8 : 4) + 8, "attributes"))
        return r->rc;
    for (int64_t i = 0; i < natt; i++) {
        uint32_t t;
        int64_t cnt, bytes;
        if (nc_name(r, name, "attribute name") ||
            nc_u32(r, &t, "attribute type") ||
            nc_nonneg(r, &cnt, "attribute length"))
            return r->rc;
        int64_t es = nc_type_size(r->version, t);
        if (!es)
            return nc_fail(r, PASSION_EFORMAT,
                           "attribute %s of %s: unknown type %u for CDF-%d",
                           name, owner, t, r->version);
        if (!core_mul(cnt, es, &bytes) || bytes > INT64_MAX - 3)
            return nc_fail(r, PASSION_EFORMAT,
                           "attribute %s of %s: %lld values overflow", name,
                           owner, (long long)cnt);
        bytes = (bytes + 3) & ~(int64_t)3;
        if (nc_need(r, bytes, "attribute values"))
            return r->rc;
        if (fill && !strcmp(name, "_FillValue")) {
            fill->found = 1;
            fill->type = t;
            fill->count = cnt;
            if (cnt > 0)
                memcpy(fill->v, r->b + r->pos, (size_t)es);
        }
        r->pos += bytes;
    }
    return 0;
}

/* Length of dimension k (already validated): walk the list again. */
static int64_t nc_dim_walk(nc_rd *r, int64_t dims_at, int64_t k)
{
    int64_t save = r->pos, len = 0;
    char name[OCAD_NC_NAME_MAX + 1];
    r->pos = dims_at;
    for (int64_t i = 0; i <= k; i++) {
        nc_name(r, name, "dimension name");
        nc_nonneg(r, &len, "dimension length");
    }
    r->pos = save;
    return len;
}

/* What ocad_nc_parse learns on its walk through the header, step by step:
   the dimension list, the variable list and the selected variable. */
#define NC_DIMS_KEPT 256 /* dimension lengths kept (the rest: walked) */
typedef struct nc_walk {
    int64_t numrecs;
    int64_t ndims, unlim, dims_at; /* unlim: the record dimension, or -1 */
    int64_t dimlen[NC_DIMS_KEPT];
    char unlim_name[OCAD_NC_NAME_MAX + 1];
    int64_t nvars, nrecvars, vars_at;
    int64_t recsize, last_rec; /* padded record bytes summed; the last
                                  record variable's record bytes */
    int64_t sel_dims_at, sel_nd, sel_begin, sel_slice;
    uint32_t sel_type;
    nc_fillatt sel_fill;
} nc_walk;

static int64_t nc_dim_len(nc_rd *r, const nc_walk *w, int64_t k)
{
    return k < NC_DIMS_KEPT ? w->dimlen[k] : nc_dim_walk(r, w->dims_at, k);
}

/* The magic: "CDF" and the version, which sets how wide the numbers are. */
static int nc_magic(nc_rd *r, ocad_nc_var *out)
{
    if (nc_need(r, 4, "magic"))
        return r->rc;
    if (memcmp(r->b, "CDF", 3) ||
        (r->b[3] != 1 && r->b[3] != 2 && r->b[3] != 5)) {
        if (!memcmp(r->b, "\x89HDF", 4))
            return nc_fail(r, PASSION_EFORMAT,
                           "a netCDF-4 (HDF5) file, not netCDF classic");
        if (!memcmp(r->b, "CDF", 3))
            return nc_fail(r, PASSION_EFORMAT,
                           "netCDF classic version %u (1, 2 and 5 exist)",
                           r->b[3]);
        return nc_fail(r, PASSION_EFORMAT,
                       "not a netCDF classic file (magic %02x %02x %02x %02x,"
                       " expected CDF\\001, \\002 or \\005)",
                       r->b[0], r->b[1], r->b[2], r->b[3]);
    }
    r->version = r->b[3];
    r->wide = r->version == 5;
    r->pos = 4;
    out->version = r->version;
    return 0;
}

/* numrecs (NON_NEG or STREAMING, -1), the dimension list (at most one
   unlimited dimension) and the global attributes, skipped. */
static int nc_dims(nc_rd *r, nc_walk *w, ocad_nc_var *out)
{
    if (nc_int(r, r->wide ? 8 : 4, &w->numrecs, "numrecs"))
        return r->rc;
    if (w->numrecs < -1)
        return nc_fail(r, PASSION_EFORMAT, "negative numrecs (%lld)",
                       (long long)w->numrecs);
    out->numrecs = w->numrecs;
    char name[OCAD_NC_NAME_MAX + 1];
    if (nc_list(r, OCAD_NC_TAG_DIM, &w->ndims, "dimension list") ||
        nc_count_fits(r, w->ndims, 2 * (r->wide ? 8 : 4) + 4, "dimensions"))
        return r->rc;
    w->dims_at = r->pos;
    for (int64_t i = 0; i < w->ndims; i++) {
        int64_t len;
        if (nc_name(r, name, "dimension name") ||
            nc_nonneg(r, &len, "dimension length"))
            return r->rc;
        if (i < NC_DIMS_KEPT)
            w->dimlen[i] = len;
        if (len == 0) {
            if (w->unlim >= 0)
                return nc_fail(r, PASSION_EFORMAT,
                               "two unlimited dimensions (%s and %s)",
                               w->unlim_name, name);
            w->unlim = i;
            strcpy(w->unlim_name, name);
        }
    }
    return nc_skip_atts(r, "the file", NULL);
}

/* The dimension ids of variable name (nd of them): each a dimension of
   the file, the unlimited one only first (then *rec = 1); *elems the
   product of the other dimensions' lengths (one record's elements). */
static int nc_var_dims(nc_rd *r, const nc_walk *w, const char *name,
                       int64_t nd, int *rec, int64_t *elems)
{
    *rec = 0;
    *elems = 1;
    for (int64_t k = 0; k < nd; k++) {
        int64_t id;
        if (nc_nonneg(r, &id, "dimension id"))
            return r->rc;
        if (id >= w->ndims)
            return nc_fail(r, PASSION_EFORMAT,
                           "variable %s: dimension id %lld of %lld "
                           "dimensions",
                           name, (long long)id, (long long)w->ndims);
        if (id == w->unlim) {
            if (k != 0)
                return nc_fail(r, PASSION_EFORMAT,
                               "variable %s: the unlimited dimension %s "
                               "is its dimension %lld, not the first",
                               name, w->unlim_name, (long long)k);
            *rec = 1;
        } else if (!core_mul(*elems, nc_dim_len(r, w, id), elems)) {
            return nc_fail(r, PASSION_EFORMAT,
                           "variable %s: its element count overflows 64 "
                           "bits", name);
        }
    }
    return 0;
}

/* A record variable's record of `bytes` into the record's size (padded
   to 4; the last one's unpadded bytes kept for the lone-variable rule). */
static int nc_rec_add(nc_rd *r, nc_walk *w, const char *name, int64_t bytes)
{
    if (bytes > INT64_MAX - 3 ||
        !core_add(w->recsize, (bytes + 3) & ~(int64_t)3, &w->recsize))
        return nc_fail(r, PASSION_EFORMAT,
                       "variable %s: the record size overflows 64 bits",
                       name);
    w->last_rec = bytes;
    return 0;
}

/* The variable list, every entry checked; the first variable named var
   (or the index-th when var is NULL) is selected into out and w. */
static int nc_vars(nc_rd *r, nc_walk *w, const char *var, int64_t index,
                   ocad_nc_var *out)
{
    char name[OCAD_NC_NAME_MAX + 1];
    if (nc_list(r, OCAD_NC_TAG_VAR, &w->nvars, "variable list") ||
        nc_count_fits(r, w->nvars,
                      2 * (r->wide ? 8 : 4) + 4 + (r->wide ? 8 : 4) + 8 +
                          (r->wide ? 8 : 4) + (r->version == 1 ? 4 : 8),
                      "variables"))
        return r->rc;
    out->nvars = w->nvars;
    w->vars_at = r->pos;
    for (int64_t v = 0; v < w->nvars; v++) {
        int64_t nd, begin, vsize;
        uint32_t t;
        if (nc_name(r, name, "variable name") ||
            nc_nonneg(r, &nd, "number of dimensions") ||
            nc_count_fits(r, nd, r->wide ? 8 : 4, "dimension ids"))
            return r->rc;
        int64_t ids_at = r->pos, elems, bytes;
        int rec;
        nc_fillatt fill = {0};
        if (nc_var_dims(r, w, name, nd, &rec, &elems) ||
            nc_skip_atts(r, name, &fill) || nc_u32(r, &t, "variable type"))
            return r->rc;
        if (!nc_type_size(r->version, t))
            return nc_fail(r, PASSION_EFORMAT,
                           "variable %s: unknown type %u for CDF-%d", name,
                           t, r->version);
        if (!core_mul(elems, nc_type_size(r->version, t), &bytes))
            return nc_fail(r, PASSION_EFORMAT,
                           "variable %s: its byte count overflows 64 bits",
                           name);
        if (rec && nc_rec_add(r, w, name, bytes))
            return r->rc;
        if (r->wide) {
            if (nc_nonneg(r, &vsize, "vsize"))
                return r->rc;
        } else {
            uint32_t u; /* 2^32 - 1 flags a large last variable */
            if (nc_u32(r, &u, "vsize"))
                return r->rc;
        }
        if (nc_int(r, r->version == 1 ? 4 : 8, &begin, "begin"))
            return r->rc;
        if (begin < 0)
            return nc_fail(r, PASSION_EFORMAT,
                           "variable %s: negative begin offset (%lld)", name,
                           (long long)begin);
        w->nrecvars += rec;
        if (out->index < 0 && (var ? !strcmp(var, name) : v == index)) {
            out->index = v;
            strcpy(out->name, name);
            w->sel_dims_at = ids_at;
            w->sel_nd = nd;
            w->sel_type = t;
            w->sel_begin = begin;
            w->sel_slice = bytes;
            w->sel_fill = fill;
            out->record = rec;
        }
    }
    out->header_len = r->pos;
    out->nrecvars = w->nrecvars;
    /* the format's rule: a lone record variable's records are unpadded */
    out->rec_size = w->nrecvars == 1 ? w->last_rec : w->recsize;
    return 0;
}

/* Names are unique in a valid file: another variable of the selected
   one's name makes the lookup ambiguous (walk the validated list). No
   selection: the reason, naming what was asked for. */
static int nc_selected(nc_rd *r, const nc_walk *w, const char *var,
                       int64_t index, ocad_nc_var *out)
{
    char name[OCAD_NC_NAME_MAX + 1];
    if (out->index >= 0) {
        int64_t save = r->pos;
        r->pos = w->vars_at;
        for (int64_t v = 0; v < w->nvars; v++) {
            int64_t nd, x;
            uint32_t t;
            nc_name(r, name, "variable name");
            nc_nonneg(r, &nd, "number of dimensions");
            r->pos += nd * (r->wide ? 8 : 4);
            nc_skip_atts(r, name, NULL);
            nc_u32(r, &t, "variable type");
            nc_int(r, r->wide ? 8 : 4, &x, "vsize");
            nc_int(r, r->version == 1 ? 4 : 8, &x, "begin");
            if (v != out->index && !strcmp(name, out->name))
                return nc_fail(r, PASSION_EFORMAT,
                               "two variables are named %s (%lld and %lld)",
                               name, (long long)out->index, (long long)v);
        }
        r->pos = save;
    }
    if (out->index < 0) {
        if (var)
            return nc_fail(r, PASSION_EINVAL,
                           "no variable '%s' among the %lld of the file",
                           var, (long long)w->nvars);
        return nc_fail(r, PASSION_EINVAL, "no variable %lld (%lld in all)",
                       (long long)index, (long long)w->nvars);
    }
    return 0;
}

/* The selected variable as an array: type, shape (a record variable's
   first dimension is numrecs, its records rec_size bytes apart), its
   placement (begin, a record's bytes, the _FillValue), and its data, which
   lies after the header and inside the file. */
static int nc_array(nc_rd *r, const nc_walk *w, ocad_nc_var *out)
{
    core_fmt_meta *m = &out->m;
    out->nc_type = (int)w->sel_type;
    out->begin = w->sel_begin;
    /* one record's bytes in the file: padded to 4 among several */
    out->vsize = (out->record && w->nrecvars == 1) ||
                         w->sel_slice > INT64_MAX - 3
                     ? w->sel_slice
                     : (w->sel_slice + 3) & ~(int64_t)3;
    out->fill_found = w->sel_fill.found;
    out->fill_ok = w->sel_fill.found && w->sel_fill.type == w->sel_type &&
                   w->sel_fill.count == 1;
    memcpy(out->fill, w->sel_fill.v, sizeof out->fill);
    m->rec_step = out->record ? out->rec_size : 0;
    m->elem_size = nc_type_size(r->version, w->sel_type);
    nc_type_kind(w->sel_type, &m->kind);
    m->endian = PASSION_ENDIAN_BIG;
    m->storage = PASSION_ROW_MAJOR;
    m->data_offset = w->sel_begin;
    if (w->sel_nd > PASSION_MAX_DIMS)
        return nc_fail(r, PASSION_ENOTSUP,
                       "variable %s has %lld dimensions; passion arrays have "
                       "at most %d",
                       out->name, (long long)w->sel_nd, PASSION_MAX_DIMS);
    m->ndims = w->sel_nd ? (int)w->sel_nd : 1; /* a scalar: one element */
    m->shape[0] = 1;
    int64_t save = r->pos;
    r->pos = w->sel_dims_at;
    for (int k = 0; k < w->sel_nd; k++) {
        int64_t id;
        nc_nonneg(r, &id, "dimension id");
        m->shape[k] = id == w->unlim ? w->numrecs : nc_dim_len(r, w, id);
    }
    r->pos = save;
    if (out->record && w->numrecs < 0)
        return nc_fail(r, PASSION_ENOTSUP,
                       "variable %s is a record variable and numrecs is "
                       "STREAMING (the file is still being written); close "
                       "it in its writer first",
                       out->name);
    int64_t bytes = m->elem_size, end;
    for (int k = 0; k < m->ndims; k++)
        if (!core_mul(bytes, m->shape[k], &bytes))
            return nc_fail(r, PASSION_EFORMAT,
                           "variable %s: its byte count overflows 64 bits",
                           out->name);
    m->data_bytes = bytes;
    if (bytes > 0 && w->sel_begin < out->header_len)
        return nc_fail(r, PASSION_EFORMAT,
                       "variable %s: data at byte %lld, inside the header "
                       "(%lld bytes)",
                       out->name, (long long)w->sel_begin,
                       (long long)out->header_len);
    /* a record variable's data ends with its last record */
    int64_t span = bytes;
    if (out->record && bytes > 0 &&
        (!core_mul(w->numrecs - 1, out->rec_size, &span) ||
         !core_add(span, w->sel_slice, &span)))
        return nc_fail(r, PASSION_EFORMAT,
                       "variable %s: %lld records of %lld bytes overflow",
                       out->name, (long long)w->numrecs,
                       (long long)out->rec_size);
    if (!core_add(w->sel_begin, span, &end) || end > r->fsize)
        return nc_fail(r, PASSION_EFORMAT,
                       "variable %s: data [%lld, +%lld bytes) past the end "
                       "of the file (%lld bytes)",
                       out->name, (long long)w->sel_begin, (long long)span,
                       (long long)r->fsize);
    return 0;
}

int ocad_nc_parse(const void *buf, int64_t n, int64_t file_size,
                  const char *var, int64_t index, ocad_nc_var *out,
                  char *why, size_t wlen)
{
    nc_rd r = {.b = buf, .n = n, .fsize = file_size, .why = why,
               .wlen = wlen};
    nc_walk w = {.unlim = -1, .sel_dims_at = -1};
    memset(out, 0, sizeof *out);
    out->index = -1;
    if (why && wlen)
        why[0] = '\0';
    if (!buf || n < 0 || file_size < n)
        return nc_fail(&r, PASSION_EINVAL, "bad arguments");
    if (nc_magic(&r, out) || nc_dims(&r, &w, out) ||
        nc_vars(&r, &w, var, index, out) ||
        nc_selected(&r, &w, var, index, out))
        return r.rc;
    return nc_array(&r, &w, out);
}
