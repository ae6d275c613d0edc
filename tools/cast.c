/*
 * cast.c - converting element values between types for `passion put`
 * (README "The passion command"): which conversions are safe, and the
 * conversion itself, in place in the copy engine's buffer.
 *
 * Invariants: buffers hold values in the machine's byte order (the
 * library converts a file's byte order on every read and write), so two
 * types of one kind and size are the same type here and copy unchanged.
 * A conversion is always by value (never a reinterpretation of bits):
 *  - safe (the default) is numpy's can_cast(src, dst, 'safe') on the
 *    types passion has, except 64-bit integers to float64 or complex128
 *    (numpy calls them safe; they round above 2^53): integers go to a
 *    float only when the float's significand holds every value (a float
 *    at least twice the integer's size), so no safe conversion changes a
 *    value;
 *  - unsafe is numpy's astype(casting='unsafe') where C defines the
 *    result: integers wrap modulo 2^bits, floats round to nearest (even),
 *    complex drops the imaginary part, anything to bool is != 0; where C
 *    leaves it undefined (a float outside an integer type's range, NaN)
 *    the result saturates to the type's limits and NaN becomes 0;
 *  - opaque bytes (numpy "V") convert to nothing but the same bytes.
 */
#include "files.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* 16-byte floats are x86's 80-bit extended format (passion.h): only
   where long double is that format can they be converted here. */
#if LDBL_MANT_DIG == 64
#define CAST_LD80 1
#else
#define CAST_LD80 0
#endif

/* A value between load and store. */
typedef struct cast_val {
    char tag;          /* 'i' signed, 'u' unsigned, 'f' real, 'c' complex */
    int64_t i;
    uint64_t u;
    long double re, im;
} cast_val;

/* ------------------------------------------------------------- half */

static long double half_get(uint16_t h)
{
    int e = (h >> 10) & 0x1f;
    long double m = (long double)(h & 0x3ff);
    long double v = e == 0    ? ldexpl(m, -24)
                    : e == 31 ? (m != 0 ? (long double)NAN
                                        : (long double)INFINITY)
                              : ldexpl(1024 + m, e - 25);
    return h & 0x8000 ? -v : v;
}

/* Round to the nearest half (ties to even), from any long double: the
   scalings by powers of 2 are exact, so rintl rounds once. */
static uint16_t half_put(long double x)
{
    uint16_t s = signbit(x) ? 0x8000 : 0;
    if (isnan(x))
        return s | 0x7e00;
    long double a = fabsl(x);
    if (isinf(a))
        return s | 0x7c00;
    if (a == 0)
        return s;
    int e;
    frexpl(a, &e);
    e--; /* a = 1.f * 2^e */
    if (e < -14) /* subnormal: multiples of 2^-24; 1024 is the least
                    normal, encoded alike */
        return s | (uint16_t)rintl(ldexpl(a, 24));
    long double m = rintl(ldexpl(a, 10 - e));
    if (m >= 2048) {
        m /= 2;
        e++;
    }
    if (e > 15)
        return s | 0x7c00;
    return s | (uint16_t)((e + 15) << 10) | (uint16_t)((int)m - 1024);
}

/* ------------------------------------------------------ load, store */

static long double real_get(const unsigned char *p, int64_t size)
{
    switch (size) {
    case 2: {
        uint16_t h;
        memcpy(&h, p, 2);
        return half_get(h);
    }
    case 4: {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    case 8: {
        double f;
        memcpy(&f, p, 8);
        return f;
    }
    default: {
        long double f = 0;
        memcpy(&f, p, sizeof f < 16 ? sizeof f : 16);
        return f;
    }
    }
}

static void real_put(unsigned char *p, int64_t size, long double x)
{
    switch (size) {
    case 2: {
        uint16_t h = half_put(x);
        memcpy(p, &h, 2);
        return;
    }
    case 4: {
        float f = (float)x;
        memcpy(p, &f, 4);
        return;
    }
    case 8: {
        double f = (double)x;
        memcpy(p, &f, 8);
        return;
    }
    default:
        /* the 10 bytes of the extended format, the padding zero */
        memset(p, 0, 16);
        memcpy(p, &x, CAST_LD80 ? 10 : sizeof x < 16 ? sizeof x : 16);
    }
}

static void load(const unsigned char *p, char kind, int64_t size,
                 cast_val *v)
{
    v->im = 0;
    switch (kind) {
    case 'b':
        v->tag = 'u';
        v->u = *p != 0;
        return;
    case 'i':
    case 'u': {
        uint64_t u = 0;
        switch (size) {
        case 1: { uint8_t t; memcpy(&t, p, 1); u = t; break; }
        case 2: { uint16_t t; memcpy(&t, p, 2); u = t; break; }
        case 4: { uint32_t t; memcpy(&t, p, 4); u = t; break; }
        default: memcpy(&u, p, 8);
        }
        if (kind == 'i' && size < 8 && (u >> (size * 8 - 1)) & 1)
            u |= ~(uint64_t)0 << (size * 8); /* sign-extend */
        v->tag = kind;
        v->u = u;
        memcpy(&v->i, &u, sizeof u);
        return;
    }
    case 'f':
        v->tag = 'f';
        v->re = real_get(p, size);
        return;
    default: /* 'c': two reals of half the size */
        v->tag = 'c';
        v->re = real_get(p, size / 2);
        v->im = real_get(p + size / 2, size / 2);
    }
}

/* An integer's bits for a `size`-byte integer type (signed or not) from
   a real: truncated toward zero, saturated, NaN -> 0. */
static uint64_t int_of_real(long double x, int sgn, int64_t size)
{
    if (isnan(x))
        return 0;
    long double t = truncl(x);
    int bits = (int)size * 8;
    if (sgn) {
        long double lo = -ldexpl(1, bits - 1), hi = ldexpl(1, bits - 1);
        int64_t r = t <= lo ? (bits == 64 ? INT64_MIN
                                          : -((int64_t)1 << (bits - 1)))
                    : t >= hi ? (bits == 64 ? INT64_MAX
                                            : ((int64_t)1 << (bits - 1)) - 1)
                              : (int64_t)t;
        uint64_t u;
        memcpy(&u, &r, sizeof u);
        return u;
    }
    long double hi = ldexpl(1, bits);
    return t <= 0 ? 0
           : t >= hi ? (bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1)
                     : (uint64_t)t;
}

static long double real_of(const cast_val *v)
{
    return v->tag == 'i'   ? (long double)v->i
           : v->tag == 'u' ? (long double)v->u
                           : v->re;
}

static void store(unsigned char *p, char kind, int64_t size,
                  const cast_val *v)
{
    switch (kind) {
    case 'b':
        *p = v->tag == 'i'   ? v->i != 0
             : v->tag == 'u' ? v->u != 0
                             : v->re != 0 || v->im != 0;
        return;
    case 'i':
    case 'u': {
        /* integers wrap modulo 2^bits (two's complement), reals
           saturate */
        uint64_t u = v->tag == 'i' || v->tag == 'u'
                         ? v->u
                         : int_of_real(v->re, kind == 'i', size);
        switch (size) {
        case 1: { uint8_t t = (uint8_t)u; memcpy(p, &t, 1); break; }
        case 2: { uint16_t t = (uint16_t)u; memcpy(p, &t, 2); break; }
        case 4: { uint32_t t = (uint32_t)u; memcpy(p, &t, 4); break; }
        default: memcpy(p, &u, 8);
        }
        return;
    }
    case 'f':
        real_put(p, size, real_of(v));
        return;
    default:
        real_put(p, size / 2, real_of(v));
        real_put(p + size / 2, size / 2, v->tag == 'c' ? v->im : 0);
    }
}

/* -------------------------------------------------------- decisions */

/* Bytes of a real (a complex's part). */
static int64_t real_size(char k, int64_t size)
{
    return k == 'c' ? size / 2 : size;
}

int cli_cast_same(const passion_array_spec *s, const passion_array_spec *d)
{
    return cli_type_kind(s) == cli_type_kind(d) &&
           s->elem_size == d->elem_size;
}

/* 1 if every value of s is a value of d. */
static int safe(char ks, int64_t ns, char kd, int64_t nd)
{
    if (ks == 'b')
        return 1;
    switch (kd) {
    case 'b':
        return 0;
    case 'i':
        return (ks == 'i' && nd >= ns) || (ks == 'u' && nd > ns);
    case 'u':
        return ks == 'u' && nd >= ns;
    default: { /* 'f', 'c' */
        int64_t rd = real_size(kd, nd);
        if (ks == 'i' || ks == 'u')
            return rd >= 2 * ns; /* the significand holds the integer */
        if (ks == 'f')
            return rd >= ns;
        return kd == 'c' && nd >= ns;
    }
    }
}

int cli_cast_check(const passion_array_spec *s, const passion_array_spec *d,
                   int unsafe, const char *sname, const char *dname,
                   char *why, size_t wl)
{
    char ks = cli_type_kind(s), kd = cli_type_kind(d), ts[32], td[32];
    if (cli_cast_same(s, d))
        return 0;
    cli_type_name(s, ts, sizeof ts);
    cli_type_name(d, td, sizeof td);
    if (ks == 'V' || kd == 'V') {
        snprintf(why, wl, "%s holds %s, %s %s: opaque bytes convert to "
                 "nothing but the same bytes", sname, ts, dname, td);
        return -1;
    }
    int ld = ((ks == 'f' || ks == 'c') && real_size(ks, s->elem_size) == 16)
             || ((kd == 'f' || kd == 'c') && real_size(kd, d->elem_size) == 16);
    if (ld && !CAST_LD80) {
        snprintf(why, wl, "%s holds %s, %s %s: 16-byte floats (x86's "
                 "extended format) convert only on x86", sname, ts, dname,
                 td);
        return -1;
    }
    if (!unsafe && !safe(ks, s->elem_size, kd, d->elem_size)) {
        snprintf(why, wl, "%s holds %s, %s %s: not a safe cast (values "
                 "could change); --casting=unsafe converts them anyway, "
                 "like numpy's astype", sname, ts, dname, td);
        return -1;
    }
    return 0;
}

void cli_cast_run(void *buf, const passion_array_spec *s,
                  const passion_array_spec *d, int64_t n)
{
    unsigned char *b = buf;
    char ks = cli_type_kind(s), kd = cli_type_kind(d);
    int64_t es = s->elem_size, ed = d->elem_size;
    cast_val v;
    /* in place: element i is loaded before its bytes or any later
       element's are stored over, going up when d is not wider, else
       down */
    if (ed <= es) {
        for (int64_t i = 0; i < n; i++) {
            load(b + i * es, ks, es, &v);
            store(b + i * ed, kd, ed, &v);
        }
    } else {
        for (int64_t i = n - 1; i >= 0; i--) {
            load(b + i * es, ks, es, &v);
            store(b + i * ed, kd, ed, &v);
        }
    }
}
