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

/* The parts of a simple descr: byte order, kind, digits, [unit]; 1 if it
   is one ("<f4", "|u1", "<U3", "?", "<M8[ns]"), else 0. */
static int descr_valid(const char *d)
{
    if (*d == '<' || *d == '>' || *d == '|' || *d == '=')
        d++;
    if (!isalpha((unsigned char)*d) && *d != '?')
        return 0;
    d++;
    while (isdigit((unsigned char)*d))
        d++;
    if (*d == '[') {
        const char *u = ++d;
        while (isalnum((unsigned char)*d))
            d++;
        if (d == u || *d++ != ']')
            return 0;
    }
    return *d == '\0';
}

int64_t ocad_npy_itemsize(const char *d)
{
    if (!descr_valid(d))
        return 0;
    if (*d == '<' || *d == '>' || *d == '|' || *d == '=')
        d++;
    char kind = *d++;
    if (!isdigit((unsigned char)*d)) {
        if (*d)
            return 0; /* a unit without a size */
        switch (kind) {
        case '?': case 'b': case 'B': return 1;
        case 'h': case 'H': case 'e': return 2;
        case 'i': case 'I': case 'f': return 4;
        case 'l': case 'L': case 'q': case 'Q': case 'd': return 8;
        case 'g': return 16;
        default: return 0;
        }
    }
    int64_t n = 0;
    for (; isdigit((unsigned char)*d); d++)
        if (!core_mul(n, 10, &n) || !core_add(n, *d - '0', &n))
            return 0;
    if (n <= 0)
        return 0;
    if (kind != 'U')
        return n;
    return core_mul(n, 4, &n) ? n : 0; /* UCS-4 characters */
}

/* Canonical form for comparison: explicit little/big/no byte order. */
static void descr_norm(const char *d, char *out, size_t n)
{
    char bo = '=';
    if (*d == '<' || *d == '>' || *d == '|' || *d == '=')
        bo = *d++;
    if (bo == '=')
        bo = '<'; /* passion runs on little-endian hosts (x86, arm64) */
    if (ocad_npy_itemsize(d) == 1 || strchr("SVab?", *d))
        bo = '|';
    snprintf(out, n, "%c%s", bo, d);
}

int ocad_npy_format(const ocad_npy_info *in, char **hdr, int64_t *len)
{
    *hdr = NULL;
    *len = 0;
    if (in->nd < 0 || in->nd > PASSION_MAX_DIMS || !descr_valid(in->descr) ||
        strlen(in->descr) >= sizeof in->descr)
        return -EINVAL;
    /* at most 31 + 7 * 21 + 60 bytes: the dict always fits */
    char dict[512];
    int n = snprintf(dict, sizeof dict,
                     "{'descr': '%s', 'fortran_order': %s, 'shape': (",
                     in->descr, in->fortran ? "True" : "False");
    for (int d = 0; d < in->nd; d++) {
        if (in->shape[d] < 0)
            return -EINVAL;
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld,%s",
                      (long long)in->shape[d], d + 1 < in->nd ? " " : "");
    }
    if (in->nd > 1)
        n--; /* numpy writes (3, 4) but (3,) */
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    /* version 1.0: 10-byte preamble; 2.0: 12 bytes if the header is big */
    int pre = OCAD_NPY_PREAMBLE(1);
    int64_t total = (pre + n + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    if (total - pre > 65535) {
        pre = OCAD_NPY_PREAMBLE(2);
        total = (pre + n + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    }
    char *h = malloc((size_t)total);
    if (!h)
        return -ENOMEM;
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
    return 0;
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
    ocad_npy_info in;
    memset(&in, 0, sizeof in);
    if (a->spec.dtype[0]) {
        if (ocad_npy_itemsize(a->spec.dtype) != a->esize)
            return core_err(ctx, PASSION_EINVAL,
                            "dtype '%s' is not %lld bytes per element",
                            a->spec.dtype, (long long)a->esize);
        snprintf(in.descr, sizeof in.descr, "%s", a->spec.dtype);
    } else {
        default_descr(a->esize, in.descr, sizeof in.descr);
    }
    in.fortran = fo;
    in.nd = a->nd;
    memcpy(in.shape, a->spec.shape, sizeof(int64_t) * (size_t)a->nd);
    int rc = ocad_npy_format(&in, hdr, len);
    if (rc == -ENOMEM)
        return core_err(ctx, PASSION_ENOMEM, ".npy header");
    if (rc)
        return core_err(ctx, PASSION_EINVAL,
                        ".npy header: dtype '%s' is not a simple type string",
                        in.descr);
    return PASSION_OK;
}

/* ---- a strict reader for the header's dict literal ---- */

typedef struct npy_scan {
    const char *p, *end;
} npy_scan;

static void skip_ws(npy_scan *s)
{
    while (s->p < s->end && isspace((unsigned char)*s->p))
        s->p++;
}

/* 1 if the next bytes are c (after white space); consumes them. */
static int eat(npy_scan *s, char c)
{
    skip_ws(s);
    if (s->p < s->end && *s->p == c) {
        s->p++;
        return 1;
    }
    return 0;
}

/* A quoted string without escapes into out (NUL-terminated); -1 if it is
   not one or does not fit. */
static int scan_string(npy_scan *s, char *out, size_t cap)
{
    skip_ws(s);
    if (s->p >= s->end || (*s->p != '\'' && *s->p != '"'))
        return -1;
    char q = *s->p++;
    const char *b = s->p;
    while (s->p < s->end && *s->p != q && *s->p != '\\')
        s->p++;
    if (s->p >= s->end || *s->p != q || (size_t)(s->p - b) >= cap)
        return -1;
    memcpy(out, b, (size_t)(s->p - b));
    out[s->p - b] = '\0';
    s->p++;
    return 0;
}

/* The word w, not followed by an identifier character. */
static int eat_word(npy_scan *s, const char *w)
{
    skip_ws(s);
    size_t n = strlen(w);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n))
        return 0;
    if (s->p + n < s->end &&
        (isalnum((unsigned char)s->p[n]) || s->p[n] == '_'))
        return 0;
    s->p += n;
    return 1;
}

/* (d0, d1, ...) with a trailing comma required for one dimension, as a
   Python tuple literal; an 'L' suffix (Python 2) is accepted. */
static int scan_shape(npy_scan *s, ocad_npy_info *in, const char **why)
{
    *why = "shape must be a tuple of integers, like (3,) or (3, 4)";
    if (!eat(s, '('))
        return -1;
    in->nd = 0;
    int comma = 0;
    for (;;) {
        if (eat(s, ')'))
            break;
        skip_ws(s);
        if (s->p < s->end && *s->p == '-') {
            *why = "negative dimension in shape";
            return -1;
        }
        if (s->p >= s->end || !isdigit((unsigned char)*s->p))
            return -1;
        int64_t x = 0;
        for (; s->p < s->end && isdigit((unsigned char)*s->p); s->p++)
            if (!core_mul(x, 10, &x) || !core_add(x, *s->p - '0', &x)) {
                *why = "dimension in shape overflows 64 bits";
                return -1;
            }
        if (s->p < s->end && (*s->p == 'L' || *s->p == 'l'))
            s->p++;
        if (in->nd == PASSION_MAX_DIMS) {
            *why = "shape has more than 7 dimensions";
            return -1;
        }
        in->shape[in->nd++] = x;
        comma = eat(s, ',');
        if (!comma) {
            if (!eat(s, ')'))
                return -1;
            break;
        }
    }
    if (in->nd == 1 && !comma)
        return -1; /* (3) is an int in Python, not a tuple */
    return 0;
}

static int parse_dict(npy_scan *s, ocad_npy_info *in, const char **why)
{
    enum { K_DESCR = 1, K_FORTRAN = 2, K_SHAPE = 4 };
    int seen = 0;
    *why = "header is not a dict literal {...}";
    if (!eat(s, '{'))
        return -1;
    for (;;) {
        if (eat(s, '}'))
            break;
        char key[16];
        if (scan_string(s, key, sizeof key) || !eat(s, ':')) {
            *why = "header dict: expected 'key': value";
            return -1;
        }
        int k = !strcmp(key, "descr")           ? K_DESCR
                : !strcmp(key, "fortran_order") ? K_FORTRAN
                : !strcmp(key, "shape")         ? K_SHAPE
                                                : 0;
        if (!k) {
            *why = "header dict has a key other than descr, fortran_order "
                   "and shape";
            return -1;
        }
        if (seen & k) {
            *why = "header dict repeats a key";
            return -1;
        }
        seen |= k;
        if (k == K_DESCR) {
            if (scan_string(s, in->descr, sizeof in->descr) ||
                !descr_valid(in->descr)) {
                *why = "descr must be a simple type string (structured "
                       "dtypes are not supported)";
                return -1;
            }
        } else if (k == K_FORTRAN) {
            if (eat_word(s, "True"))
                in->fortran = 1;
            else if (eat_word(s, "False"))
                in->fortran = 0;
            else {
                *why = "fortran_order must be True or False";
                return -1;
            }
        } else if (scan_shape(s, in, why)) {
            return -1;
        }
        if (!eat(s, ',')) {
            if (!eat(s, '}')) {
                *why = "header dict: expected ',' or '}' after a value";
                return -1;
            }
            break;
        }
    }
    skip_ws(s);
    if (s->p != s->end) {
        *why = "bytes other than white space after the header dict";
        return -1;
    }
    *why = !(seen & K_DESCR)     ? "header dict has no descr"
           : !(seen & K_FORTRAN) ? "header dict has no fortran_order"
           : !(seen & K_SHAPE)   ? "header dict has no shape"
                                 : NULL;
    return *why ? -1 : 0;
}

int ocad_npy_parse_preamble(const unsigned char *b, int64_t n,
                            ocad_npy_info *in, const char **why)
{
    if (n < OCAD_NPY_PREAMBLE(1) || memcmp(b, NPY_MAGIC, NPY_MAGIC_LEN)) {
        *why = n < NPY_MAGIC_LEN || memcmp(b, NPY_MAGIC, NPY_MAGIC_LEN)
                   ? "no .npy magic string"
                   : "too short for .npy";
        return -1;
    }
    in->version = b[6];
    if (b[6] < 1 || b[6] > 3) {
        *why = "format version not supported (1.0, 2.0 and 3.0 are)";
        return -1;
    }
    int plen = OCAD_NPY_PREAMBLE(in->version);
    if (n < plen) {
        *why = "too short for .npy";
        return -1;
    }
    int64_t hl = b[8] | (int64_t)b[9] << 8;
    if (plen == 12)
        hl |= (int64_t)b[10] << 16 | (int64_t)b[11] << 24;
    if (hl < 1 || hl > NPY_MAX_HEADER) {
        *why = "header length is not plausible";
        return -1;
    }
    in->data_off = plen + hl;
    return 0;
}

int ocad_npy_parse(const void *buf, int64_t n, ocad_npy_info *in,
                   const char **why)
{
    memset(in, 0, sizeof *in);
    if (ocad_npy_parse_preamble(buf, n, in, why))
        return -1;
    if (in->data_off > n) {
        *why = "header longer than the file";
        return -1;
    }
    const char *p = buf;
    npy_scan s = {p + OCAD_NPY_PREAMBLE(in->version), p + in->data_off};
    return parse_dict(&s, in, why);
}

int ocad_npy_read_header(passion_ctx *ctx, const passion_array *a,
                         core_fh *fh, int64_t *data_off)
{
    const char *path = fh->path;
    unsigned char pre[12];
    int64_t fsize;
    const char *why;
    ocad_npy_info in;
    int rc = core_io_size(fh, &fsize);
    if (rc)
        return rc;
    int64_t n = fsize < 12 ? fsize : 12;
    if (n > 0 && (rc = core_io_read(fh, pre, n, 0)))
        return rc;
    if (ocad_npy_parse_preamble(pre, n, &in, &why))
        return core_err(ctx, PASSION_EFORMAT, "%s: .npy: %s", path, why);
    if (in.data_off > fsize)
        return core_err(ctx, PASSION_EFORMAT,
                        "%s: .npy header length %lld is beyond the end of "
                        "the file", path, (long long)in.data_off);
    char *h = malloc((size_t)in.data_off);
    if (!h)
        return core_err(ctx, PASSION_ENOMEM, ".npy header");
    if ((rc = core_io_read(fh, h, in.data_off, 0))) {
        free(h);
        return rc;
    }
    int bad = ocad_npy_parse(h, in.data_off, &in, &why);
    free(h);
    if (bad)
        return core_err(ctx, PASSION_EFORMAT, "%s: .npy: %s", path, why);
    int same = in.nd == a->nd;
    for (int d = 0; same && d < a->nd; d++)
        same = in.shape[d] == a->spec.shape[d];
    if (!same)
        return core_err(ctx, PASSION_EFORMAT,
                        "%s: .npy shape has %d dimensions or sizes unlike "
                        "the array spec", path, in.nd);
    if (ocad_npy_itemsize(in.descr) != a->esize)
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
    *data_off = in.data_off;
    return PASSION_OK;
}
