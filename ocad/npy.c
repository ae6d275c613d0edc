/*
 * npy.c - the NumPy .npy format for global array files (format versions
 * 1.0, 2.0 and 3.0): a magic string, a version, a little-endian header
 * length (2 bytes in 1.0, 4 bytes in 2.0 and 3.0) and a Python dict
 * literal {'descr': ..., 'fortran_order': ..., 'shape': (...)} padded with
 * spaces and a newline so that the data starts at a multiple of 64 bytes.
 *
 * Invariants: on open, the header's shape, item size (and descr, when the
 * spec names one) and order must equal the array spec's, else
 * PASSION_EFORMAT; on create, the header written is one numpy itself would
 * accept (np.load, with or without mmap_mode), version 1.0 whenever the
 * header fits in 65535 bytes. Data bytes are moved as they are: no byte
 * swapping, so a descr of the other byte order is accepted only when the
 * spec leaves dtype empty.
 */
#include "ocad.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64
#define NPY_MAX_HEADER (1 << 20) /* far beyond any 7-dimensional header */

int ocad_npy_name(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    return n > 4 && !strcmp(path + n - 4, ".npy");
}

/* Order of the array as npy sees it: 0 C, 1 Fortran, -1 neither. */
static int npy_order(const passion_array *a)
{
    int c = 1, f = 1;
    for (int k = 0; k < a->nd; k++) {
        c &= a->spec.order[k] == k;
        f &= a->spec.order[k] == a->nd - 1 - k;
    }
    return c ? 0 : f ? 1 : -1;
}

static void default_descr(int64_t esize, char *out, size_t n)
{
    switch (esize) {
    case 1: snprintf(out, n, "|u1"); break;
    case 2: snprintf(out, n, "<i2"); break;
    case 4: snprintf(out, n, "<f4"); break;
    case 8: snprintf(out, n, "<f8"); break;
    case 16: snprintf(out, n, "<c16"); break;
    default: snprintf(out, n, "|V%lld", (long long)esize); break;
    }
}

/* Item size of a simple descr ("<f4", "|u1", "<U3", "?"), 0 if unknown. */
static int64_t descr_itemsize(const char *d)
{
    if (*d == '<' || *d == '>' || *d == '|' || *d == '=')
        d++;
    char kind = *d++;
    if (!kind)
        return 0;
    if (!*d) {
        switch (kind) {
        case '?': case 'b': case 'B': return 1;
        case 'h': case 'H': case 'e': return 2;
        case 'i': case 'I': case 'f': return 4;
        case 'l': case 'L': case 'q': case 'Q': case 'd': return 8;
        case 'g': return 16;
        default: return 0;
        }
    }
    char *end;
    long long n = strtoll(d, &end, 10);
    if (n <= 0 || (*end && *end != '['))
        return 0;
    return kind == 'U' ? 4 * n : n;
}

/* Canonical form for comparison: explicit little/big/no byte order. */
static void descr_norm(const char *d, char *out, size_t n)
{
    char bo = '=';
    if (*d == '<' || *d == '>' || *d == '|' || *d == '=')
        bo = *d++;
    if (bo == '=')
        bo = '<'; /* passion runs on little-endian hosts (x86, arm64) */
    if (descr_itemsize(d) == 1 || strchr("SVab?", *d))
        bo = '|';
    snprintf(out, n, "%c%s", bo, d);
}

int ocad_npy_header(passion_ctx *ctx, const passion_array *a, char **hdr,
                    int64_t *len)
{
    *hdr = NULL;
    int fo = npy_order(a);
    if (fo < 0)
        return core_err(ctx, PASSION_ENOTSUP,
                        ".npy holds C or Fortran order only, not a custom "
                        "storage order");
    char descr[16];
    if (a->spec.dtype[0]) {
        if (descr_itemsize(a->spec.dtype) != a->esize)
            return core_err(ctx, PASSION_EINVAL,
                            "dtype '%s' is not %lld bytes per element",
                            a->spec.dtype, (long long)a->esize);
        snprintf(descr, sizeof descr, "%s", a->spec.dtype);
    } else {
        default_descr(a->esize, descr, sizeof descr);
    }
    char dict[512];
    int n = snprintf(dict, sizeof dict,
                     "{'descr': '%s', 'fortran_order': %s, 'shape': (",
                     descr, fo ? "True" : "False");
    for (int d = 0; d < a->nd; d++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld,%s",
                      (long long)a->spec.shape[d],
                      d + 1 < a->nd ? " " : "");
    if (a->nd > 1)
        n--; /* numpy writes (3, 4) but (3,) */
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    /* version 1.0: 10-byte preamble; 2.0: 12 bytes if the header is big */
    int pre = 10;
    int64_t total = (pre + n + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    if (total - pre > 65535) {
        pre = 12;
        total = (pre + n + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    }
    char *h = malloc((size_t)total);
    if (!h)
        return core_err(ctx, PASSION_ENOMEM, ".npy header");
    memcpy(h, NPY_MAGIC, NPY_MAGIC_LEN);
    int64_t hl = total - pre;
    h[6] = pre == 10 ? 1 : 2;
    h[7] = 0;
    for (int i = 0; i < pre - 8; i++)
        h[8 + i] = (char)((hl >> (8 * i)) & 0xff);
    memcpy(h + pre, dict, (size_t)n);
    memset(h + pre + n, ' ', (size_t)(total - pre - n - 1));
    h[total - 1] = '\n';
    *hdr = h;
    *len = total;
    return PASSION_OK;
}

/* ---- a small reader for the header's dict literal ---- */

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && isspace((unsigned char)*p))
        p++;
    return p;
}

/* The value after key 'name' (quoted with ' or "), or NULL. */
static const char *find_key(const char *p, const char *end, const char *name)
{
    size_t n = strlen(name);
    for (; p + n + 2 <= end; p++) {
        if ((*p == '\'' || *p == '"') && p[n + 1] == *p &&
            !memcmp(p + 1, name, n)) {
            const char *q = skip_ws(p + n + 2, end);
            if (q < end && *q == ':')
                return skip_ws(q + 1, end);
        }
    }
    return NULL;
}

typedef struct npy_info {
    char descr[32];
    int fortran;
    int nd;
    int64_t shape[PASSION_MAX_DIMS + 1];
} npy_info;

/* Parse the header dict; NULL on success, else what is wrong with it. */
static const char *parse_dict(const char *p, const char *end, npy_info *in)
{
    const char *v = find_key(p, end, "descr");
    if (!v)
        return "no 'descr' key";
    if (v >= end || (*v != '\'' && *v != '"'))
        return "'descr' is not a simple type string (structured dtypes are "
               "not supported)";
    const char *q = memchr(v + 1, *v, (size_t)(end - v - 1));
    if (!q)
        return "'descr' string is not terminated";
    if (q - v - 1 >= (long)sizeof in->descr)
        return "'descr' string is too long";
    memcpy(in->descr, v + 1, (size_t)(q - v - 1));
    in->descr[q - v - 1] = '\0';
    v = find_key(p, end, "fortran_order");
    if (!v)
        return "no 'fortran_order' key";
    if (end - v >= 4 && !memcmp(v, "True", 4))
        in->fortran = 1;
    else if (end - v >= 5 && !memcmp(v, "False", 5))
        in->fortran = 0;
    else
        return "'fortran_order' is neither True nor False";
    v = find_key(p, end, "shape");
    if (!v)
        return "no 'shape' key";
    if (v >= end || *v != '(')
        return "'shape' is not a tuple";
    v++;
    in->nd = 0;
    for (;;) {
        v = skip_ws(v, end);
        if (v < end && *v == ')')
            break;
        if (in->nd >= PASSION_MAX_DIMS)
            return "'shape' has more than 7 dimensions";
        if (v < end && *v == '-')
            return "'shape' has a negative dimension";
        if (v >= end || !isdigit((unsigned char)*v))
            return "'shape' holds something other than integers";
        char *e;
        errno = 0;
        long long x = strtoll(v, &e, 10);
        if (e > end || errno == ERANGE)
            return "'shape' has a dimension beyond 64 bits";
        if (x < 0)
            return "'shape' has a negative dimension";
        in->shape[in->nd++] = x;
        v = e;
        if (v < end && (*v == 'L' || *v == 'l'))
            v++;
        v = skip_ws(v, end);
        if (v < end && *v == ',')
            v++;
        else if (v < end && *v == ')')
            break;
        else
            return "'shape' tuple is malformed (no ',' or ')' after a "
                   "dimension)";
    }
    return NULL;
}

int ocad_npy_read_header(passion_ctx *ctx, const passion_array *a,
                         core_fh *fh, int64_t *data_off)
{
    const char *path = fh->path;
    unsigned char pre[12];
    int64_t fsize;
    int rc = core_io_size(fh, &fsize);
    if (rc)
        return rc;
    if (fsize < 10)
        return core_err(ctx, PASSION_EFORMAT, "%s: too short for .npy",
                        path);
    if ((rc = core_io_read(fh, pre, fsize < 12 ? 10 : 12, 0)))
        return rc;
    if (memcmp(pre, NPY_MAGIC, NPY_MAGIC_LEN))
        return core_err(ctx, PASSION_EFORMAT, "%s: no .npy magic string",
                        path);
    int major = pre[6], plen = major == 1 ? 10 : 12;
    if (major < 1 || major > 3 || (plen == 12 && fsize < 12))
        return core_err(ctx, PASSION_EFORMAT,
                        "%s: .npy format version %d.%d not supported", path,
                        major, pre[7]);
    int64_t hl = pre[8] | (int64_t)pre[9] << 8;
    if (plen == 12)
        hl |= (int64_t)pre[10] << 16 | (int64_t)pre[11] << 24;
    if (hl < 1 || hl > NPY_MAX_HEADER || plen + hl > fsize)
        return core_err(ctx, PASSION_EFORMAT,
                        "%s: .npy header length %lld is not plausible", path,
                        (long long)hl);
    char *h = malloc((size_t)hl);
    if (!h)
        return core_err(ctx, PASSION_ENOMEM, ".npy header");
    if ((rc = core_io_read(fh, h, hl, plen))) {
        free(h);
        return rc;
    }
    npy_info in;
    memset(&in, 0, sizeof in);
    const char *bad = parse_dict(h, h + hl, &in);
    free(h);
    if (bad)
        return core_err(ctx, PASSION_EFORMAT, "%s: .npy header: %s", path,
                        bad);
    int same = in.nd == a->nd;
    for (int d = 0; same && d < a->nd; d++)
        same = in.shape[d] == a->spec.shape[d];
    if (!same)
        return core_err(ctx, PASSION_EFORMAT,
                        "%s: .npy shape has %d dimensions or sizes unlike "
                        "the array spec", path, in.nd);
    if (descr_itemsize(in.descr) != a->esize)
        return core_err(ctx, PASSION_EFORMAT,
                        "%s: .npy descr '%s' is not %lld bytes per element",
                        path, in.descr, (long long)a->esize);
    if (a->spec.dtype[0]) {
        char x[40], y[40];
        descr_norm(in.descr, x, sizeof x);
        descr_norm(a->spec.dtype, y, sizeof y);
        if (strcmp(x, y))
            return core_err(ctx, PASSION_EFORMAT,
                            "%s: .npy descr '%s', the array spec says '%s'",
                            path, in.descr, a->spec.dtype);
    }
    int fo = npy_order(a);
    if (a->nd > 1 && fo != in.fortran)
        return core_err(ctx, PASSION_EFORMAT,
                        "%s: .npy fortran_order is %s, the array is stored "
                        "%s", path, in.fortran ? "True" : "False",
                        fo == 1 ? "column-major" : fo == 0 ? "row-major"
                                                          : "in a custom order");
    *data_off = plen + hl;
    return PASSION_OK;
}
