/*
 * section.c - the command line's section syntax (README "The passion
 * command"), parsed without MPI or the library (tests/fuzz/fuzz_section.c
 * drives it).
 *
 * A section is a comma-separated list, one entry per dimension, in the
 * array's index order (dimension 0 first), each like a numpy slice:
 *   i          one index (count 1; the dimension is kept)
 *   a:b        indices a .. b-1
 *   a:b:s      every s-th index from a below b (s >= 1)
 *   :  ::s  a:  :b   omitted start = 0, stop = the size, step = 1
 * Negative a or b count from the end (-1 is the last index), as in numpy;
 * slice bounds past either end are clipped (numpy), a single index out of
 * range is an error. Missing trailing dimensions are taken whole; "" and
 * ":" select everything. A negative or zero step is refused (passion's
 * strides are positive). An empty slice (a >= b) is a section of no
 * elements, allowed.
 *
 * Invariants of a parsed section: for every dimension d < nd,
 * stride >= 1, 0 <= count, and when count > 0, 0 <= start and
 * start + (count - 1) * stride < shape[d].
 */
#include "section.h"

#include <stdio.h>
#include <string.h>

/* Parse an optional signed decimal at *p (up to end); 1 = a number was
   there, 0 = empty, -1 = malformed or overflowing. */
static int snum(const char **p, const char *end, int64_t *v)
{
    const char *s = *p;
    while (s < end && *s == ' ')
        s++;
    int neg = 0;
    if (s < end && (*s == '-' || *s == '+'))
        neg = *s == '-', s++;
    if (s >= end || *s < '0' || *s > '9') {
        /* nothing but blanks and no sign: empty */
        if (neg || (s > *p && (s[-1] == '+')))
            return -1;
        *p = s;
        return 0;
    }
    uint64_t x = 0;
    while (s < end && *s >= '0' && *s <= '9') {
        x = x * 10 + (uint64_t)(*s - '0');
        if (x > (uint64_t)INT64_MAX)
            return -1;
        s++;
    }
    while (s < end && *s == ' ')
        s++;
    *v = neg ? -(int64_t)x : (int64_t)x;
    *p = s;
    return 1;
}

int cli_section_parse(const char *text, int nd, const int64_t *shape,
                      cli_sect *out, char *why, size_t wl)
{
    if (nd < 1 || nd > CLI_MAX_DIMS) {
        snprintf(why, wl, "the array has %d dimensions", nd);
        return -1;
    }
    for (int d = 0; d < nd; d++) {
        out->start[d] = 0;
        out->count[d] = shape[d];
        out->stride[d] = 1;
    }
    const char *p = text ? text : "", *all = p + strlen(p);
    int d = 0;
    while (p < all) {
        const char *end = memchr(p, ',', (size_t)(all - p));
        if (!end)
            end = all;
        if (d >= nd) {
            snprintf(why, wl, "section '%s' has more than %d dimension%s",
                     text, nd, nd == 1 ? "" : "s");
            return -1;
        }
        int64_t n = shape[d], v[3] = {0, n, 1};
        int have[3] = {0, 0, 0}, parts = 0;
        const char *q = p;
        for (;;) {
            int r = snum(&q, end, &v[parts]);
            if (r < 0) {
                snprintf(why, wl, "dimension %d of section '%s': not "
                         "start:stop:step with integers", d, text);
                return -1;
            }
            have[parts] = r;
            parts++;
            if (q < end && *q == ':' && parts < 3) {
                q++;
                continue;
            }
            break;
        }
        if (q != end) {
            snprintf(why, wl, "dimension %d of section '%s': not "
                     "start:stop:step with integers", d, text);
            return -1;
        }
        if (parts == 1) {
            /* one index (or an empty entry: the whole dimension) */
            if (have[0]) {
                int64_t i = v[0] < 0 ? v[0] + n : v[0];
                if (i < 0 || i >= n) {
                    snprintf(why, wl, "index %lld out of range 0..%lld in "
                             "dimension %d", (long long)v[0],
                             (long long)(n - 1), d);
                    return -1;
                }
                out->start[d] = i;
                out->count[d] = 1;
            }
        } else {
            int64_t step = have[2] ? v[2] : 1;
            if (step < 1) {
                snprintf(why, wl, "step %lld in dimension %d: steps must be "
                         ">= 1", (long long)step, d);
                return -1;
            }
            int64_t a = have[0] ? v[0] : 0, b = have[1] ? v[1] : n;
            if (a < 0)
                a = a + n < 0 ? 0 : a + n;
            if (b < 0)
                b = b + n < 0 ? 0 : b + n;
            if (a > n)
                a = n;
            if (b > n)
                b = n;
            int64_t cnt = b > a ? (b - a - 1) / step + 1 : 0;
            out->start[d] = cnt ? a : 0;
            out->count[d] = cnt;
            out->stride[d] = step;
        }
        d++;
        p = end < all ? end + 1 : end;
        if (end < all && p == all) {
            snprintf(why, wl, "section '%s' ends in a comma", text);
            return -1;
        }
    }
    return 0;
}

int cli_list_parse(const char *text, int n, int64_t lo, int64_t *v,
                   char *why, size_t wl)
{
    const char *p = text;
    for (int i = 0; i < n; i++) {
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        int64_t x;
        const char *q = p;
        if (snum(&q, end, &x) != 1 || q != end || x < lo) {
            snprintf(why, wl, "'%s': want %d integer%s >= %lld separated by "
                     "commas", text, n, n == 1 ? "" : "s", (long long)lo);
            return -1;
        }
        v[i] = x;
        if (i + 1 < n && !*end) {
            snprintf(why, wl, "'%s': want %d integers separated by commas",
                     text, n);
            return -1;
        }
        p = end + 1;
        if (i + 1 == n && *end) {
            snprintf(why, wl, "'%s': want %d integers separated by commas",
                     text, n);
            return -1;
        }
    }
    return 0;
}
