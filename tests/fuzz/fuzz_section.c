/*
 * fuzz_section.c - fuzz target for the passion command's section syntax
 * (cli_section_parse in tools/section.c) and its integer lists
 * (cli_list_parse).
 *
 * Input: byte 0 gives the number of dimensions (1..7), the next ones the
 * shape (1..64 each, small so that the reference can enumerate), the rest
 * is the section text. Properties: a parsed section lies inside the array
 * (stride >= 1, count >= 0, first and last index in range); it selects
 * exactly the indices that an independent reference, written after
 * Python's slice semantics (slice.indices, then range), selects; text the
 * reference refuses is refused (and the other way round).
 */
#include "fuzz.h"

#include "../../tools/section.h"

#include <ctype.h>

/* Reference for one entry (no commas): 1 ok with start/count/stride, 0
   refused. Python: int(x) for an index; slice(a, b, c).indices(n). */
static int ref_entry(const char *e, size_t len, int64_t n, int64_t *st,
                     int64_t *cn, int64_t *sd)
{
    char buf[256];
    if (len >= sizeof buf)
        return -1; /* too long for the reference: skip the comparison */
    memcpy(buf, e, len);
    buf[len] = '\0';
    char *f[4];
    int nf = 0;
    f[nf++] = buf;
    for (char *c = buf; *c; c++)
        if (*c == ':') {
            if (nf == 3)
                return 0;
            *c = '\0';
            f[nf++] = c + 1;
        }
    int64_t v[3];
    int have[3] = {0, 0, 0};
    for (int i = 0; i < nf; i++) {
        char *s = f[i];
        while (*s == ' ')
            s++;
        char *t = s + strlen(s);
        while (t > s && t[-1] == ' ')
            *--t = '\0';
        if (!*s)
            continue;
        char *p = s;
        if (*p == '+' || *p == '-')
            p++;
        if (!*p)
            return 0;
        for (char *q = p; *q; q++)
            if (!isdigit((unsigned char)*q))
                return 0;
        if (strlen(p) > 15)
            return -1; /* huge numbers: not compared */
        v[i] = strtoll(s, NULL, 10);
        have[i] = 1;
    }
    if (nf == 1) {
        if (!have[0]) {
            *st = 0, *cn = n, *sd = 1;
            return 1;
        }
        int64_t i = v[0] < 0 ? v[0] + n : v[0];
        if (i < 0 || i >= n)
            return 0;
        *st = i, *cn = 1, *sd = 1;
        return 1;
    }
    int64_t step = nf == 3 && have[2] ? v[2] : 1;
    if (step < 1)
        return 0;
    int64_t a = have[0] ? v[0] : 0, b = have[1] ? v[1] : n;
    if (a < 0)
        a = a + n < 0 ? 0 : a + n;
    else if (a > n)
        a = n;
    if (b < 0)
        b = b + n < 0 ? 0 : b + n;
    else if (b > n)
        b = n;
    int64_t c = 0, first = -1;
    for (int64_t i = a; i < b; i += step) /* range(a, b, step) */
        if (c++ == 0)
            first = i;
    *st = c ? first : 0, *cn = c, *sd = step;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int nd = 1 + data[0] % CLI_MAX_DIMS;
    if (size < 1 + (size_t)nd)
        return 0;
    int64_t shape[CLI_MAX_DIMS];
    for (int d = 0; d < nd; d++)
        shape[d] = 1 + data[1 + d] % 64;
    char *text = fz_string(data + 1 + nd, size - 1 - (size_t)nd);
    FZ_CHECK(text, "out of memory");
    cli_sect s;
    char why[256];
    int rc = cli_section_parse(text, nd, shape, &s, why, sizeof why);
    if (rc == 0) {
        for (int d = 0; d < nd; d++) {
            FZ_CHECK(s.stride[d] >= 1 && s.count[d] >= 0, "'%s' dim %d",
                     text, d);
            if (s.count[d])
                FZ_CHECK(s.start[d] >= 0 &&
                         s.start[d] + (s.count[d] - 1) * s.stride[d] <
                             shape[d],
                         "'%s' dim %d leaves the array", text, d);
        }
    } else {
        FZ_CHECK(why[0], "refused without a reason");
    }
    /* the reference, entry by entry */
    int ref_ok = 1, skip = 0, d = 0;
    cli_sect r;
    for (int k = 0; k < nd; k++)
        r.start[k] = 0, r.count[k] = shape[k], r.stride[k] = 1;
    const char *p = text, *all = text + strlen(text);
    while (p < all && ref_ok && !skip) {
        const char *e = strchr(p, ',');
        if (!e)
            e = all;
        if (d >= nd) {
            ref_ok = 0;
            break;
        }
        int k = ref_entry(p, (size_t)(e - p), shape[d], &r.start[d],
                          &r.count[d], &r.stride[d]);
        if (k < 0)
            skip = 1;
        else if (!k)
            ref_ok = 0;
        d++;
        if (e < all && e + 1 == all)
            ref_ok = 0; /* a trailing comma */
        p = e < all ? e + 1 : e;
    }
    if (!skip) {
        FZ_CHECK((rc == 0) == ref_ok, "'%s': parser %s, reference %s", text,
                 rc ? "refused" : "accepted", ref_ok ? "accepts" : "refuses");
        if (rc == 0)
            for (int k = 0; k < nd; k++)
                FZ_CHECK(s.count[k] == r.count[k] &&
                             (!s.count[k] || (s.start[k] == r.start[k] &&
                                              (s.count[k] == 1 ||
                                               s.stride[k] == r.stride[k]))),
                         "'%s' dim %d: got %lld:%lld:%lld, want "
                         "%lld:%lld:%lld", text, k, (long long)s.start[k],
                         (long long)s.count[k], (long long)s.stride[k],
                         (long long)r.start[k], (long long)r.count[k],
                         (long long)r.stride[k]);
    }
    /* the list parser on the same text: never crashes, gives n values */
    int64_t v[CLI_MAX_DIMS];
    if (cli_list_parse(text, nd, 0, v, why, sizeof why) == 0)
        for (int k = 0; k < nd; k++)
            FZ_CHECK(v[k] >= 0, "list value below its bound");
    free(text);
    return 0;
}
