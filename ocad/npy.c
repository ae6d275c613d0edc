/*
 * npy.c - the NumPy .npy format for global array files (format versions
 * 1.0, 2.0 and 3.0): a magic string, a version, a little-endian header
 * length (2 bytes in 1.0, 4 bytes in 2.0 and 3.0) and a Python dict
 * literal {'descr': ..., 'fortran_order': ..., 'shape': (...)} padded with
 * spaces and a newline so that the data starts at a multiple of 64 bytes.
 *
 * Invariants: an accepted header names a numeric type passion knows
 * (ocad_npy_descr_type: b1 i1..i8 u1..u8 f2 f4 f8 f16 c8 c16 c32 V<n> S<n>
 * in either byte order) and a shape of 1..7 positive sizes whose byte
 * count fits 64 bits; every other header is refused with its own message.
 * The metadata is read on one rank (ocad_npy_meta, run by format.c on rank
 * 0 and broadcast). On create, the header written is one numpy itself
 * would accept (np.load, with or without mmap_mode), version 1.0 whenever
 * the header fits in 65535 bytes, declaring the array's own type and byte
 * order; data in the other byte order is converted by the access paths.
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

int ocad_npy_descr_type(const char *d, passion_kind *kind, int64_t *size,
                        passion_endian *endian, const char **why)
{
    *why = "descr is not a simple type string";
    if (!descr_valid(d))
        return -1;
    passion_endian e = PASSION_ENDIAN_NATIVE;
    if (*d == '<')
        e = PASSION_ENDIAN_LITTLE;
    else if (*d == '>')
        e = PASSION_ENDIAN_BIG;
    if (*d == '<' || *d == '>' || *d == '|' || *d == '=')
        d++;
    char c = *d;
    int digits = isdigit((unsigned char)d[1]);
    if (c == 'O') {
        *why = "object dtype 'O' holds Python object pointers, not data "
               "(save a numeric array)";
        return -1;
    }
    if (strchr("UMmaw", c) || strchr(d, '[')) {
        *why = "descr is not a numeric type passion supports (strings, "
               "datetimes and timedeltas are not)";
        return -1;
    }
    int64_t n = ocad_npy_itemsize(d);
    passion_kind k;
    if (!digits) {
        /* one-letter type codes (numpy writes the digit form, but
           accepts these) */
        switch (c) {
        case '?': k = PASSION_KIND_BOOL; break;
        case 'b': case 'h': case 'i': case 'l': case 'q':
            k = PASSION_KIND_INT;
            break;
        case 'B': case 'H': case 'I': case 'L': case 'Q':
            k = PASSION_KIND_UINT;
            break;
        case 'e': case 'f': case 'd': case 'g': k = PASSION_KIND_FLOAT; break;
        case 'F': n = 8; k = PASSION_KIND_COMPLEX; break;
        case 'D': n = 16; k = PASSION_KIND_COMPLEX; break;
        case 'G': n = 32; k = PASSION_KIND_COMPLEX; break;
        default: n = 0; k = PASSION_KIND_BYTES; break;
        }
    } else {
        switch (c) {
        case 'b': k = n == 1 ? PASSION_KIND_BOOL : PASSION_KIND_BYTES;
                  n = n == 1 ? 1 : 0;
                  break;
        case '?': k = PASSION_KIND_BOOL; break;
        case 'i': k = PASSION_KIND_INT; break;
        case 'u': k = PASSION_KIND_UINT; break;
        case 'f': k = PASSION_KIND_FLOAT; break;
        case 'c': k = PASSION_KIND_COMPLEX; break;
        case 'V': case 'S': k = PASSION_KIND_BYTES; break;
        default: n = 0; k = PASSION_KIND_BYTES; break;
        }
    }
    if (n <= 0) {
        *why = "descr names an unknown type";
        return -1;
    }
    if (!ocad_type_valid(k, n)) {
        *why = k == PASSION_KIND_BYTES
                   ? "descr: bytes (V/S) items of more than 64 bytes are "
                     "not supported"
                   : "descr: no such size for that kind (i/u 1 2 4 8, f 2 "
                     "4 8 16, c 8 16 32, b1)";
        return -1;
    }
    *kind = k;
    *size = n;
    *endian = e == PASSION_ENDIAN_NATIVE ? ocad_native() : e;
    return 0;
}

int ocad_npy_descr_make(passion_kind k, int64_t size, passion_endian e,
                        char *out, size_t n)
{
    if (!ocad_type_valid(k, size))
        return -1;
    ocad_type_str(k, size, ocad_endian_resolve(e), out, n);
    return 0;
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
    if (parse_dict(&s, in, why))
        return -1;
    passion_kind k;
    passion_endian e;
    int64_t sz;
    if (ocad_npy_descr_type(in->descr, &k, &sz, &e, why))
        return -1;
    int64_t bytes = sz;
    for (int d = 0; d < in->nd; d++)
        if (!core_mul(bytes, in->shape[d], &bytes)) {
            *why = "shape's byte count overflows 64 bits";
            return -1;
        }
    if (!core_add(bytes, in->data_off, &bytes)) {
        *why = "header plus data overflow 64 bits";
        return -1;
    }
    return 0;
}

int ocad_npy_meta(passion_ctx *ctx, const char *path, const char *obj,
                  core_fmt_meta *m)
{
    memset(m, 0, sizeof *m);
    if (obj && *obj)
        return core_err(ctx, PASSION_EINVAL,
                        "%s: a .npy file holds one array: nothing to name "
                        "after ':' ('%s')", path, obj);
    core_fh *fh = NULL;
    int rc = core_io_open(ctx, path, CORE_O_RDONLY, &fh);
    if (rc)
        return rc;
    unsigned char pre[12];
    int64_t fsize;
    const char *why;
    ocad_npy_info in;
    char *h = NULL;
    if ((rc = core_io_size(fh, &fsize)))
        goto out;
    int64_t n = fsize < 12 ? fsize : 12;
    if (n > 0 && (rc = core_io_read(fh, pre, n, 0)))
        goto out;
    if (ocad_npy_parse_preamble(pre, n, &in, &why)) {
        rc = core_err(ctx, PASSION_EFORMAT, "%s: .npy: %s", path, why);
        goto out;
    }
    if (in.data_off > fsize) {
        rc = core_err(ctx, PASSION_EFORMAT,
                      "%s: .npy header length %lld is beyond the end of "
                      "the file (%lld bytes)", path, (long long)in.data_off,
                      (long long)fsize);
        goto out;
    }
    if (!(h = core_malloc(ctx, (size_t)in.data_off))) {
        rc = core_err(ctx, PASSION_ENOMEM, ".npy header");
        goto out;
    }
    if ((rc = core_io_read(fh, h, in.data_off, 0)))
        goto out;
    if (ocad_npy_parse(h, in.data_off, &in, &why)) {
        rc = core_err(ctx, PASSION_EFORMAT, "%s: .npy: %s", path, why);
        goto out;
    }
    if (in.nd == 0) {
        rc = core_err(ctx, PASSION_EFORMAT,
                      "%s: .npy: a 0-dimensional (scalar) array; passion "
                      "arrays have 1 to %d dimensions", path,
                      PASSION_MAX_DIMS);
        goto out;
    }
    for (int d = 0; d < in.nd; d++)
        if (in.shape[d] == 0) {
            rc = core_err(ctx, PASSION_EFORMAT,
                          "%s: .npy: shape[%d] is 0: an empty array; passion "
                          "arrays have positive sizes", path, d);
            goto out;
        }
    ocad_npy_descr_type(in.descr, &m->kind, &m->elem_size, &m->endian, &why);
    m->ndims = in.nd;
    memcpy(m->shape, in.shape, sizeof(int64_t) * (size_t)in.nd);
    m->storage = in.fortran && in.nd > 1 ? PASSION_COL_MAJOR
                                         : PASSION_ROW_MAJOR;
    m->data_offset = in.data_off;
    m->data_bytes = m->elem_size;
    for (int d = 0; d < in.nd; d++)
        m->data_bytes *= in.shape[d]; /* checked by ocad_npy_parse */
out:
    core_free(ctx, h);
    int rc2 = core_io_close(fh);
    return rc ? rc : rc2;
}

int ocad_npy_create(passion_ctx *ctx, const char *path, const char *obj,
                    const core_fmt_meta *m, int64_t *data_offset)
{
    *data_offset = 0;
    if (obj && *obj)
        return core_err(ctx, PASSION_EINVAL,
                        "%s: a .npy file holds one array: nothing to name "
                        "after ':' ('%s')", path, obj);
    if (m->storage != PASSION_ROW_MAJOR && m->storage != PASSION_COL_MAJOR)
        return core_err(ctx, PASSION_ENOTSUP,
                        ".npy holds C or Fortran order only, not a custom "
                        "storage order");
    ocad_npy_info in;
    memset(&in, 0, sizeof in);
    if (ocad_npy_descr_make(m->kind, m->elem_size, m->endian, in.descr,
                            sizeof in.descr))
        return core_err(ctx, PASSION_EINVAL, "no .npy type for kind %s of "
                        "%lld bytes", ocad_kind_name(m->kind),
                        (long long)m->elem_size);
    in.fortran = m->storage == PASSION_COL_MAJOR;
    in.nd = m->ndims;
    memcpy(in.shape, m->shape, sizeof(int64_t) * (size_t)m->ndims);
    char *hdr = NULL;
    int64_t hlen = 0;
    int rc = ocad_npy_format(&in, &hdr, &hlen);
    if (rc == -ENOMEM)
        return core_err(ctx, PASSION_ENOMEM, ".npy header");
    if (rc)
        return core_err(ctx, PASSION_EINVAL, ".npy header for '%s'",
                        in.descr);
    core_fh *fh = NULL;
    int64_t total;
    if (!core_add(hlen, m->data_bytes, &total))
        rc = core_err(ctx, PASSION_EOVERFLOW, "file bytes overflow 64 bits");
    else if (!(rc = core_io_open(ctx, path, CORE_O_RDWR | CORE_O_CREATE |
                                                CORE_O_TRUNC, &fh))) {
        if (!(rc = core_io_resize(fh, total)))
            rc = core_io_write(fh, hdr, hlen, 0);
        int rc2 = core_io_close(fh);
        rc = rc ? rc : rc2;
    }
    free(hdr);
    *data_offset = hlen;
    return rc;
}
