/*
 * fmt_netcdf.c - the netCDF classic header: a parser and a writer of bytes
 * (no file access, no context, no MPI: the fuzz target
 * tests/fuzz/fuzz_netcdf.c drives both).
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
 * record variable (first dimension the unlimited one) has its records
 * interleaved with the other record variables' unless it is the only one,
 * when its numrecs records are contiguous (the format's own rule: no
 * padding between the records of a lone record variable); passion takes
 * that case as an array of numrecs x ..., and refuses the interleaved one.
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

#define NC_TAG_DIM 0x0A
#define NC_TAG_VAR 0x0B
#define NC_TAG_ATT 0x0C

/* Bytes of one element of nc_type t (0 = not a type of `version`). */
static int64_t nc_type_size(int version, uint32_t t)
{
    static const int64_t sz[12] = {0, 1, 1, 2, 4, 4, 8, 1, 2, 4, 8, 8};
    if (t < 1 || t > 11 || (t > 6 && version != 5))
        return 0;
    return sz[t];
}

static const char *nc_type_name(uint32_t t)
{
    static const char *nm[12] = {"?", "byte", "char", "short", "int",
                                 "float", "double", "ubyte", "ushort",
                                 "uint", "int64", "uint64"};
    return t <= 11 ? nm[t] : "?";
}

const char *ocad_nc_type_name(int t)
{
    return nc_type_name((uint32_t)t);
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

static const char *kind_name(passion_kind k)
{
    static const char *nm[] = {"bytes", "int", "uint", "float", "complex",
                               "bool"};
    return (unsigned)k < 6 ? nm[k] : "?";
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

/* Skip an attribute list (global or of a variable). */
static int nc_skip_atts(nc_rd *r, const char *owner)
{
    char what[64], name[OCAD_NC_NAME_MAX + 1];
    int64_t natt;
    snprintf(what, sizeof what, "attribute list of %s", owner);
    if (nc_list(r, NC_TAG_ATT, &natt, what))
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
        r->pos += bytes;
    }
    return 0;
}

/* Length of dimension k (already validated): walk the list again. */
static int64_t nc_dim_len(nc_rd *r, int64_t dims_at, int64_t k)
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

int ocad_nc_parse(const void *buf, int64_t n, int64_t file_size,
                  const char *var, int64_t index, ocad_nc_var *out,
                  char *why, size_t wlen)
{
    nc_rd r = {.b = buf, .n = n, .fsize = file_size, .why = why,
               .wlen = wlen};
    memset(out, 0, sizeof *out);
    out->index = -1;
    if (why && wlen)
        why[0] = '\0';
    if (!buf || n < 0 || file_size < n)
        return nc_fail(&r, PASSION_EINVAL, "bad arguments");
    if (nc_need(&r, 4, "magic"))
        return r.rc;
    if (memcmp(r.b, "CDF", 3) ||
        (r.b[3] != 1 && r.b[3] != 2 && r.b[3] != 5)) {
        if (!memcmp(r.b, "\x89HDF", 4))
            return nc_fail(&r, PASSION_EFORMAT,
                           "a netCDF-4 (HDF5) file, not netCDF classic");
        if (!memcmp(r.b, "CDF", 3))
            return nc_fail(&r, PASSION_EFORMAT,
                           "netCDF classic version %u (1, 2 and 5 exist)",
                           r.b[3]);
        return nc_fail(&r, PASSION_EFORMAT,
                       "not a netCDF classic file (magic %02x %02x %02x %02x,"
                       " expected CDF\\001, \\002 or \\005)",
                       r.b[0], r.b[1], r.b[2], r.b[3]);
    }
    r.version = r.b[3];
    r.wide = r.version == 5;
    r.pos = 4;
    out->version = r.version;

    /* numrecs: NON_NEG or STREAMING (-1) */
    int64_t numrecs;
    if (nc_int(&r, r.wide ? 8 : 4, &numrecs, "numrecs"))
        return r.rc;
    if (numrecs < -1)
        return nc_fail(&r, PASSION_EFORMAT, "negative numrecs (%lld)",
                       (long long)numrecs);
    out->numrecs = numrecs;

    /* dimensions */
    int64_t ndims, unlim = -1, dims_at;
    char name[OCAD_NC_NAME_MAX + 1], unlim_name[OCAD_NC_NAME_MAX + 1] = "";
    if (nc_list(&r, NC_TAG_DIM, &ndims, "dimension list") ||
        nc_count_fits(&r, ndims, 2 * (r.wide ? 8 : 4) + 4, "dimensions"))
        return r.rc;
    dims_at = r.pos;
    for (int64_t i = 0; i < ndims; i++) {
        int64_t len;
        if (nc_name(&r, name, "dimension name") ||
            nc_nonneg(&r, &len, "dimension length"))
            return r.rc;
        if (len == 0) {
            if (unlim >= 0)
                return nc_fail(&r, PASSION_EFORMAT,
                               "two unlimited dimensions (%s and %s)",
                               unlim_name, name);
            unlim = i;
            strcpy(unlim_name, name);
        }
    }
    if (nc_skip_atts(&r, "the file"))
        return r.rc;

    /* variables */
    int64_t nvars;
    if (nc_list(&r, NC_TAG_VAR, &nvars, "variable list") ||
        nc_count_fits(&r, nvars,
                      2 * (r.wide ? 8 : 4) + 4 + (r.wide ? 8 : 4) + 8 +
                          (r.wide ? 8 : 4) + (r.version == 1 ? 4 : 8),
                      "variables"))
        return r.rc;
    out->nvars = nvars;
    int64_t nrecvars = 0, sel_dims_at = -1, sel_nd = 0, vars_at = r.pos;
    uint32_t sel_type = 0;
    int64_t sel_begin = 0;
    for (int64_t v = 0; v < nvars; v++) {
        int64_t nd, begin, vsize;
        uint32_t t;
        if (nc_name(&r, name, "variable name") ||
            nc_nonneg(&r, &nd, "number of dimensions") ||
            nc_count_fits(&r, nd, r.wide ? 8 : 4, "dimension ids"))
            return r.rc;
        int64_t ids_at = r.pos;
        int rec = 0;
        for (int64_t k = 0; k < nd; k++) {
            int64_t id;
            if (nc_nonneg(&r, &id, "dimension id"))
                return r.rc;
            if (id >= ndims)
                return nc_fail(&r, PASSION_EFORMAT,
                               "variable %s: dimension id %lld of %lld "
                               "dimensions",
                               name, (long long)id, (long long)ndims);
            if (id == unlim) {
                if (k != 0)
                    return nc_fail(&r, PASSION_EFORMAT,
                                   "variable %s: the unlimited dimension %s "
                                   "is its dimension %lld, not the first",
                                   name, unlim_name, (long long)k);
                rec = 1;
            }
        }
        if (nc_skip_atts(&r, name) || nc_u32(&r, &t, "variable type"))
            return r.rc;
        if (!nc_type_size(r.version, t))
            return nc_fail(&r, PASSION_EFORMAT,
                           "variable %s: unknown type %u for CDF-%d", name,
                           t, r.version);
        if (r.wide) {
            if (nc_nonneg(&r, &vsize, "vsize"))
                return r.rc;
        } else {
            uint32_t u; /* 2^32 - 1 flags a large last variable */
            if (nc_u32(&r, &u, "vsize"))
                return r.rc;
        }
        if (nc_int(&r, r.version == 1 ? 4 : 8, &begin, "begin"))
            return r.rc;
        if (begin < 0)
            return nc_fail(&r, PASSION_EFORMAT,
                           "variable %s: negative begin offset (%lld)", name,
                           (long long)begin);
        nrecvars += rec;
        if (out->index < 0 && (var ? !strcmp(var, name) : v == index)) {
            out->index = v;
            strcpy(out->name, name);
            sel_dims_at = ids_at;
            sel_nd = nd;
            sel_type = t;
            sel_begin = begin;
            out->record = rec;
        }
    }
    out->header_len = r.pos;
    /* names are unique in a valid file: another variable of the selected
       one's name makes the lookup ambiguous (walk the validated list) */
    if (out->index >= 0) {
        int64_t save = r.pos;
        r.pos = vars_at;
        for (int64_t v = 0; v < nvars; v++) {
            int64_t nd, x;
            uint32_t t;
            nc_name(&r, name, "variable name");
            nc_nonneg(&r, &nd, "number of dimensions");
            r.pos += nd * (r.wide ? 8 : 4);
            nc_skip_atts(&r, name);
            nc_u32(&r, &t, "variable type");
            nc_int(&r, r.wide ? 8 : 4, &x, "vsize");
            nc_int(&r, r.version == 1 ? 4 : 8, &x, "begin");
            if (v != out->index && !strcmp(name, out->name))
                return nc_fail(&r, PASSION_EFORMAT,
                               "two variables are named %s (%lld and %lld)",
                               name, (long long)out->index, (long long)v);
        }
        r.pos = save;
    }
    if (out->index < 0) {
        if (var)
            return nc_fail(&r, PASSION_EINVAL,
                           "no variable '%s' among the %lld of the file",
                           var, (long long)nvars);
        return nc_fail(&r, PASSION_EINVAL, "no variable %lld (%lld in all)",
                       (long long)index, (long long)nvars);
    }

    /* the selected variable */
    core_fmt_meta *m = &out->m;
    out->nc_type = (int)sel_type;
    m->elem_size = nc_type_size(r.version, sel_type);
    nc_type_kind(sel_type, &m->kind);
    m->endian = PASSION_ENDIAN_BIG;
    m->storage = PASSION_ROW_MAJOR;
    m->data_offset = sel_begin;
    if (sel_nd > PASSION_MAX_DIMS)
        return nc_fail(&r, PASSION_ENOTSUP,
                       "variable %s has %lld dimensions; passion arrays have "
                       "at most %d",
                       out->name, (long long)sel_nd, PASSION_MAX_DIMS);
    m->ndims = sel_nd ? (int)sel_nd : 1; /* a scalar: one element */
    m->shape[0] = 1;
    int64_t save = r.pos;
    r.pos = sel_dims_at;
    for (int k = 0; k < sel_nd; k++) {
        int64_t id;
        nc_nonneg(&r, &id, "dimension id");
        m->shape[k] = id == unlim ? numrecs : nc_dim_len(&r, dims_at, id);
    }
    r.pos = save;
    if (out->record) {
        if (nrecvars > 1)
            return nc_fail(&r, PASSION_ENOTSUP,
                           "variable %s is a record variable (its first "
                           "dimension %s is unlimited) and the file has "
                           "%lld record variables, whose records are "
                           "interleaved: passion accesses fixed-size "
                           "variables (and a lone record variable) at "
                           "their offsets; make it fixed-size with "
                           "`nccopy -u in.nc out.nc`",
                           out->name, unlim_name, (long long)nrecvars);
        if (numrecs < 0)
            return nc_fail(&r, PASSION_ENOTSUP,
                           "variable %s is a record variable and numrecs "
                           "is STREAMING (the file is still being written);"
                           " close it in its writer first",
                           out->name);
    }
    int64_t bytes = m->elem_size, end;
    for (int k = 0; k < m->ndims; k++)
        if (!core_mul(bytes, m->shape[k], &bytes))
            return nc_fail(&r, PASSION_EFORMAT,
                           "variable %s: its byte count overflows 64 bits",
                           out->name);
    m->data_bytes = bytes;
    if (bytes > 0 && sel_begin < out->header_len)
        return nc_fail(&r, PASSION_EFORMAT,
                       "variable %s: data at byte %lld, inside the header "
                       "(%lld bytes)",
                       out->name, (long long)sel_begin,
                       (long long)out->header_len);
    if (!core_add(sel_begin, bytes, &end) || end > r.fsize)
        return nc_fail(&r, PASSION_EFORMAT,
                       "variable %s: data [%lld, +%lld bytes) past the end "
                       "of the file (%lld bytes)",
                       out->name, (long long)sel_begin, (long long)bytes,
                       (long long)r.fsize);
    return 0;
}

/* ---- the writer ---- */

int ocad_nc_name_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > OCAD_NC_NAME_MAX)
        return 0;
    unsigned char c = (unsigned char)s[0];
    if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
          (c >= '0' && c <= '9') || c >= 0x80))
        return 0;
    for (size_t i = 0; i < n; i++) {
        c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f || c == '/')
            return 0;
    }
    return s[n - 1] != ' ';
}

typedef struct nc_wr {
    unsigned char *b; /* NULL: only count */
    int64_t pos;
} nc_wr;

static void put(nc_wr *w, uint64_t v, int k)
{
    if (w->b)
        for (int i = 0; i < k; i++)
            w->b[w->pos + i] = (unsigned char)(v >> (8 * (k - 1 - i)));
    w->pos += k;
}

static void put_name(nc_wr *w, const char *s, int wide)
{
    int64_t len = (int64_t)strlen(s);
    put(w, (uint64_t)len, wide ? 8 : 4);
    if (w->b) {
        memcpy(w->b + w->pos, s, (size_t)len);
        memset(w->b + w->pos + len, 0, (size_t)(((len + 3) & ~3) - len));
    }
    w->pos += (len + 3) & ~(int64_t)3;
}

/* The header, begin excluded from the count until known. */
static void nc_emit(nc_wr *w, int version, const char *var, int nd,
                    const int64_t *shape, int t, int64_t vsize,
                    int64_t begin)
{
    int wide = version == 5, k = wide ? 8 : 4;
    char dn[OCAD_NC_NAME_MAX + 16];
    put(w, 0x43444600u | (uint32_t)version, 4);
    put(w, 0, k); /* numrecs */
    put(w, NC_TAG_DIM, 4);
    put(w, (uint64_t)nd, k);
    for (int d = 0; d < nd; d++) {
        snprintf(dn, sizeof dn, "%s_dim%d", var, d);
        if (strlen(dn) > OCAD_NC_NAME_MAX)
            snprintf(dn, sizeof dn, "dim%d", d);
        put_name(w, dn, wide);
        put(w, (uint64_t)shape[d], k);
    }
    put(w, 0, 4); /* no global attributes */
    put(w, 0, k);
    put(w, NC_TAG_VAR, 4);
    put(w, 1, k);
    put_name(w, var, wide);
    put(w, (uint64_t)nd, k);
    for (int d = 0; d < nd; d++)
        put(w, (uint64_t)d, k);
    put(w, 0, 4); /* no variable attributes */
    put(w, 0, k);
    put(w, (uint64_t)t, 4);
    put(w, (uint64_t)vsize, k);
    put(w, (uint64_t)begin, version == 1 ? 4 : 8);
}

int ocad_nc_format(int version, const char *var, const core_fmt_meta *m,
                   int64_t align, unsigned char **hdr, int64_t *len,
                   char *why, size_t wlen)
{
    *hdr = NULL;
    *len = 0;
#define NC_ERR(code, ...) \
    (snprintf(why, wlen, __VA_ARGS__), (code))
    if (version != 1 && version != 2 && version != 5)
        return NC_ERR(PASSION_EINVAL, "netCDF classic version %d (1, 2, 5)",
                      version);
    if (!ocad_nc_name_ok(var))
        return NC_ERR(PASSION_EINVAL,
                      "'%s' is not a netCDF variable name (1 to %d bytes, "
                      "no '/', no control characters, starting with a "
                      "letter, digit or '_')",
                      var ? var : "", OCAD_NC_NAME_MAX);
    if (m->ndims < 1 || m->ndims > PASSION_MAX_DIMS)
        return NC_ERR(PASSION_EINVAL, "%d dimensions", m->ndims);
    int t = ocad_nc_type_of(version, m->kind, m->elem_size);
    if (!t)
        return NC_ERR(PASSION_ENOTSUP,
                      "netCDF CDF-%d has no type for %s of %lld bytes "
                      "(CDF-5 has signed and unsigned integers of 1, 2, 4 "
                      "and 8 bytes, float, double and char; CDF-1 and "
                      "CDF-2 no unsigned and no 8-byte integers)",
                      version, kind_name(m->kind), (long long)m->elem_size);
    /* netCDF is row-major: a column-major array is stored transposed
       (dimensions reversed), as netCDF's Fortran interface does */
    int nd = m->ndims;
    int64_t shape[PASSION_MAX_DIMS], bytes = m->elem_size;
    for (int d = 0; d < nd; d++) {
        shape[d] = m->storage == PASSION_COL_MAJOR ? m->shape[nd - 1 - d]
                                                   : m->shape[d];
        if (shape[d] <= 0)
            return NC_ERR(PASSION_EINVAL,
                          "dimension %d of length %lld (netCDF: a fixed "
                          "dimension has length >= 1)",
                          d, (long long)shape[d]);
        if (version != 5 && shape[d] > INT32_MAX)
            return NC_ERR(PASSION_ENOTSUP,
                          "dimension %d of length %lld: CDF-%d allows %d at "
                          "most; use CDF-5",
                          d, (long long)shape[d], version, INT32_MAX);
        if (!core_mul(bytes, shape[d], &bytes))
            return NC_ERR(PASSION_EOVERFLOW, "byte count overflows");
    }
    if (bytes > INT64_MAX - 4)
        return NC_ERR(PASSION_EOVERFLOW, "byte count overflows");
    int64_t vsize = (bytes + 3) & ~(int64_t)3;
    if (version != 5 && vsize > (int64_t)UINT32_MAX - 4)
        vsize = UINT32_MAX; /* the format's mark of a large last variable */
    if (align < 4)
        align = 4;
    nc_wr w = {NULL, 0};
    nc_emit(&w, version, var, nd, shape, t, vsize, 0);
    int64_t begin = (w.pos + align - 1) / align * align;
    if (version == 1 && begin > INT32_MAX)
        return NC_ERR(PASSION_ENOTSUP, "header too large for CDF-1");
    unsigned char *b = calloc(1, (size_t)begin);
    if (!b)
        return NC_ERR(PASSION_ENOMEM, "netCDF header");
    w.b = b;
    w.pos = 0;
    nc_emit(&w, version, var, nd, shape, t, vsize, begin);
    *hdr = b;
    *len = begin;
    return 0;
#undef NC_ERR
}

/* ---- the format hooks (format.c runs them on rank 0) ---- */

#define NC_HEAD_FIRST (64 << 10)  /* bytes read first for a header */
#define NC_HEAD_MAX (256LL << 20) /* a header beyond this is refused */
#define NC_DATA_ALIGN 4096        /* created files: data on a page */

/* Read the header of the open file fh (fsize bytes) into *buf (n bytes,
   core_malloc'ed; the caller frees it) until it parses, describing var
   (or variable index when var is NULL) into v: the parser's code, with the
   reason in why (or a code with the detail written for a read error,
   ENOMEM, a header too long). */
static int nc_load(passion_ctx *ctx, core_fh *fh, const char *path,
                   int64_t fsize, const char *var, int64_t index,
                   unsigned char **buf, int64_t *n, ocad_nc_var *v,
                   char *why, size_t wlen, int *parsed)
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
    rc = nc_load(ctx, fh, path, fsize, obj && *obj ? obj : NULL, 0, &buf, &n,
                 v, why, sizeof why, &parsed);
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
    rc = nc_load(ctx, fh, path, fsize, var, 0, &buf, &n, &v, why,
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
