/*
 * dump_text.c - `passion dump`'s values as text, and the buffer they are
 * written through.
 *
 * Invariants: a float prints with the fewest significant digits N that
 * read back to the same value of its own type (float16: N <= 5, float32:
 * N <= 9, float64: N <= 17, long double: N <= 21), so it parses back bit
 * for bit, positional from 1e-4 to 1e16 and d.ddde+XX otherwise, as
 * numpy's repr (nan and inf as numpy spells them); text prints quoted with its
 * trailing NULs dropped and every other byte that is not printable ASCII
 * escaped (as ncdump prints a char variable: \n \t \" \\ and \ooo).
 * Output goes to one buffer that reaches the stream only when it fills
 * or is flushed: one write system call per buffer, never one per value.
 */
#include "dump_text.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ buffer */

int cli_out_init(cli_out *o, FILE *f, size_t cap)
{
    memset(o, 0, sizeof o[0]);
    o->f = f;
    o->cap = cap < 2 * CLI_OUT_ITEM ? 2 * CLI_OUT_ITEM : cap;
    o->buf = malloc(o->cap);
    return o->buf ? 0 : -1;
}

int cli_out_flush(cli_out *o)
{
    if (o->len && fwrite(o->buf, 1, o->len, o->f) != o->len)
        o->err = 1;
    o->len = 0;
    if (fflush(o->f))
        o->err = 1;
    return o->err ? -1 : 0;
}

/* Room for one more item (at most CLI_OUT_ITEM bytes). */
static char *room(cli_out *o)
{
    if (o->cap - o->len < CLI_OUT_ITEM && o->len) {
        if (fwrite(o->buf, 1, o->len, o->f) != o->len)
            o->err = 1;
        o->len = 0;
    }
    return o->buf + o->len;
}

void cli_out_printf(cli_out *o, const char *fmt, ...)
{
    char *p = room(o);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(p, o->cap - o->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->len += (size_t)n < o->cap - o->len ? (size_t)n
                                              : o->cap - o->len - 1;
}

void cli_out_free(cli_out *o)
{
    free(o->buf);
    o->buf = NULL;
}

/* ------------------------------------------------------------ floats */

/* IEEE binary16 bits -> its value (exact in a double). */
static double half_value(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0    ? ldexp(m, -24)
               : e == 31 ? (m ? NAN : INFINITY)
                         : ldexp(m + 1024, e - 25);
    return h >> 15 ? -v : v;
}

/* A double -> the nearest binary16 (ties to even), as its bits. */
static uint16_t half_bits(double d)
{
    uint16_t s = signbit(d) ? 0x8000 : 0;
    double a = fabs(d);
    if (isnan(d))
        return s | 0x7e00;
    if (a >= 65520) /* halfway between 65504 and 2^16: rounds up */
        return s | 0x7c00;
    if (a < ldexp(1, -14)) /* subnormal: steps of 2^-24 (1024: normal) */
        return s | (uint16_t)nearbyint(ldexp(a, 24));
    int x;
    frexp(a, &x); /* a = f 2^x, f in [0.5, 1) */
    int e = x - 1;
    double m = nearbyint(ldexp(a, 10 - e)); /* 1024 .. 2048 */
    if (m == 2048)
        m = 1024, e++;
    return s | (uint16_t)((e + 15) << 10) | (uint16_t)((int)m - 1024);
}

/* nan / inf / -inf as numpy prints them; 0 when v is finite. */
static int special(char *out, size_t n, double v)
{
    if (isnan(v))
        return snprintf(out, n, "nan");
    if (isinf(v))
        return snprintf(out, n, v < 0 ? "-inf" : "inf");
    return 0;
}

/* "%.*e" text (sign, digits, exponent) of a value as numpy prints it:
   positional when 1e-4 <= |value| < 1e16 or it is 0 ("10000", "0.0001"),
   else d.ddde+XX; trailing zeros of the digits dropped. */
static int render(char *out, size_t n, const char *e_text, double value)
{
    char dig[48];
    size_t nd = 0;
    const char *c = e_text;
    int neg = *c == '-';
    c += neg;
    for (; *c && *c != 'e' && nd + 1 < sizeof dig; c++)
        if (*c >= '0' && *c <= '9')
            dig[nd++] = *c;
    int ex = *c == 'e' ? atoi(c + 1) : 0;
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    dig[nd] = '\0';
    const char *sg = neg ? "-" : "";
    double a = fabs(value);
    if (a != 0 && (a < 1e-4 || a >= 1e16))
        return snprintf(out, n, "%s%c%s%.*se%c%02d", sg, dig[0],
                        nd > 1 ? "." : "", (int)nd - 1, dig + 1,
                        ex < 0 ? '-' : '+', ex < 0 ? -ex : ex);
    if (ex < 0)
        return snprintf(out, n, "%s0.%.*s%s", sg, -ex - 1, "0000", dig);
    if ((size_t)ex + 1 >= nd) /* an integer: digits, then zeros */
        return snprintf(out, n, "%s%s%.*s", sg, dig, ex + 1 - (int)nd,
                        "0000000000000000");
    return snprintf(out, n, "%s%.*s.%s", sg, ex + 1, dig, dig + ex + 1);
}

/* The fewest significant digits of v that read back to the same value
   of a type of `bits` bits (16, 32 or 64), rendered as numpy does. */
static int shortest(char *out, size_t n, double v, int bits)
{
    int k = special(out, n, v);
    if (k)
        return k;
    int maxp = bits == 16 ? 5 : bits == 32 ? 9 : 17;
    char e[48];
    for (int p = 1; p <= maxp; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, v);
        double back = strtod(e, NULL);
        if (p == maxp ||
            (bits == 16 ? half_bits(back) == half_bits(v)
             : bits == 32 ? strtof(e, NULL) == (float)v
                          : back == v))
            break;
    }
    return render(out, n, e, v);
}

static int shortest_long(char *out, size_t n, long double v)
{
    int k = special(out, n, (double)v);
    if (k)
        return k;
    char e[64];
    for (int p = 1; p <= 21; p++) {
        snprintf(e, sizeof e, "%.*Le", p - 1, v);
        if (p == 21 || strtold(e, NULL) == v)
            break;
    }
    return render(out, n, e, (double)v);
}

/* A float of es bytes (2, 4, 8, 16) at p as text; 0 for another size. */
static int float_text(char *out, size_t n, const unsigned char *p,
                      int64_t es)
{
    if (es == 2) {
        uint16_t h;
        memcpy(&h, p, 2);
        return shortest(out, n, half_value(h), 16);
    }
    if (es == 4) {
        float f;
        memcpy(&f, p, 4);
        return shortest(out, n, (double)f, 32);
    }
    if (es == 8) {
        double f;
        memcpy(&f, p, 8);
        return shortest(out, n, f, 64);
    }
    if (es == 16 && sizeof(long double) == 16) {
        long double f;
        memcpy(&f, p, 16);
        return shortest_long(out, n, f);
    }
    return 0;
}

/* ------------------------------------------------------------ values */

int cli_value_text(char *out, size_t n, const unsigned char *p, char kind,
                   int64_t es)
{
    switch (kind) {
    case 'b':
        return snprintf(out, n, "%s", *p ? "True" : "False");
    case 'i':
    case 'u': {
        uint64_t u = 0;
        memcpy(&u, p, (size_t)es); /* little-endian machine */
        if (kind == 'i' && es < 8 && (u >> (es * 8 - 1)) & 1)
            u |= ~(uint64_t)0 << (es * 8);
        if (kind == 'i')
            return snprintf(out, n, "%" PRId64, (int64_t)u);
        return snprintf(out, n, "%" PRIu64, u);
    }
    case 'f': {
        int k = float_text(out, n, p, es);
        if (k)
            return k;
        break;
    }
    case 'c': {
        /* numpy's way: (re+imj), each part shortest for its type */
        char re[48], im[48];
        if (float_text(re, sizeof re, p, es / 2) &&
            float_text(im, sizeof im, p + es / 2, es / 2))
            return snprintf(out, n, "(%s%s%sj)", re,
                            im[0] == '-' || im[0] == '+' ? "" : "+", im);
        break;
    }
    default:
        break;
    }
    int k = snprintf(out, n, "0x"); /* anything else: its bytes, as stored */
    for (int64_t i = 0; i < es && (size_t)k + 3 <= n; i++)
        k += snprintf(out + k, n - (size_t)k, "%02x", p[i]);
    return k;
}

void cli_out_value(cli_out *o, const unsigned char *p, char kind,
                   int64_t es)
{
    char *d = room(o);
    o->len += (size_t)cli_value_text(d, o->cap - o->len, p, kind, es);
}

void cli_out_text(cli_out *o, const unsigned char *p, int64_t len)
{
    while (len > 0 && !p[len - 1])
        len--; /* NUL padding, as ncdump and numpy drop it */
    char *d = room(o);
    size_t k = 0;
    d[k++] = '"';
    for (int64_t i = 0; i < len; i++) {
        if (k + 8 > CLI_OUT_ITEM) { /* a long row: on in a new item */
            o->len += k;
            d = room(o);
            k = 0;
        }
        const char *e = p[i] == '\n'   ? "\\n"
                        : p[i] == '\t' ? "\\t"
                        : p[i] == '\r' ? "\\r"
                        : p[i] == '"'  ? "\\\""
                        : p[i] == '\\' ? "\\\\"
                                       : NULL;
        if (e)
            d[k++] = e[0], d[k++] = e[1];
        else if (p[i] < 32 || p[i] > 126)
            k += (size_t)snprintf(d + k, 5, "\\%03o", p[i]);
        else
            d[k++] = (char)p[i];
    }
    d[k++] = '"';
    o->len += k;
}
