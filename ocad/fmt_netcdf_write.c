/*
 * fmt_netcdf_write.c - the netCDF classic header's writer: the header of
 * a new file holding one fixed-size variable, as bytes (no file access,
 * no context, no MPI: the fuzz target tests/fuzz/fuzz_netcdf.c parses
 * what it writes). Format: fmt_netcdf_parse.c.
 *
 * Invariants: a header ocad_nc_format makes parses back to the same array
 * (ocad_nc_parse); its length is a multiple of the alignment asked for,
 * and the variable's data starts right after it; a column-major array is
 * stored transposed (dimensions reversed), as netCDF's Fortran interface
 * does.
 */
#include "ocad.h"

#include <stdlib.h>
#include <string.h>

static const char *kind_name(passion_kind k)
{
    static const char *nm[] = {"bytes", "int", "uint", "float", "complex",
                               "bool"};
    return (unsigned)k < 6 ? nm[k] : "?";
}

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
    put(w, OCAD_NC_TAG_DIM, 4);
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
    put(w, OCAD_NC_TAG_VAR, 4);
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
