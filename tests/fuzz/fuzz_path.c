/*
 * fuzz_path.c - fuzz target for the local-file path pattern expansion
 * (ocad_local_path in ocad/file.c: "%d"/"%r" -> rank, "%%" -> '%',
 * ".rank" appended when the pattern has no conversion).
 *
 * Input: 4 bytes of rank (made non-negative), then the pattern (cut at a
 * NUL). Properties: the result equals an independent reference expansion
 * (written here as a different algorithm); distinct ranks give distinct
 * names (two ranks must never share a local file), checked for the
 * input's rank against neighbours and a few fixed ranks; a pattern without
 * '%' is kept verbatim with ".rank" appended.
 */
#include "fuzz.h"

#include "../../ocad/ocad.h"

#include <limits.h>

/* Reference: one pass, growing the output; conversions counted after. */
static char *ref_expand(const char *pat, int rank)
{
    char num[16];
    snprintf(num, sizeof num, "%d", rank);
    size_t cap = 16, n = 0;
    char *o = malloc(cap);
    int conv = 0;
    size_t i = 0, pl = strlen(pat);
    while (o && i < pl) {
        const char *piece;
        size_t plen;
        if (pat[i] == '%' && i + 1 < pl &&
            (pat[i + 1] == 'd' || pat[i + 1] == 'r')) {
            piece = num, plen = strlen(num), i += 2, conv = 1;
        } else if (pat[i] == '%' && i + 1 < pl && pat[i + 1] == '%') {
            piece = "%", plen = 1, i += 2;
        } else {
            piece = pat + i, plen = 1, i += 1;
        }
        while (o && n + plen + 16 >= cap)
            o = realloc(o, cap *= 2);
        if (o) {
            memcpy(o + n, piece, plen);
            n += plen;
        }
    }
    if (!o)
        return NULL;
    if (!conv)
        n += (size_t)sprintf(o + n, ".%s", num);
    o[n] = '\0';
    return o;
}

static char *expand(const char *pat, int rank)
{
    char *out = NULL;
    int rc = ocad_local_path(pat, rank, &out);
    FZ_CHECK(rc == 0 && out, "expansion failed (%d)", rc);
    char *ref = ref_expand(pat, rank);
    FZ_CHECK(ref, "out of memory");
    FZ_CHECK(!strcmp(out, ref), "pattern '%s' rank %d: got '%s', want '%s'",
             pat, rank, out, ref);
    free(ref);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    uint32_t r;
    memcpy(&r, data, 4);
    int rank = (int)(r & 0x7fffffff);
    if (r & 0x80000000u)
        rank %= 1024; /* half the inputs use small, realistic ranks */
    char *pat = fz_string(data + 4, size - 4);
    FZ_CHECK(pat, "out of memory");
    int ranks[] = {rank, rank < INT_MAX ? rank + 1 : 0, rank / 10, 0, 1,
                   10, 11, 100, INT_MAX};
    enum { NR = sizeof ranks / sizeof ranks[0] };
    char *names[NR];
    for (int i = 0; i < NR; i++)
        names[i] = expand(pat, ranks[i]);
    for (int i = 0; i < NR; i++)
        for (int j = i + 1; j < NR; j++)
            FZ_CHECK(ranks[i] == ranks[j] || strcmp(names[i], names[j]),
                     "pattern '%s': ranks %d and %d share '%s'", pat,
                     ranks[i], ranks[j], names[i]);
    if (!strchr(pat, '%')) {
        size_t pl = strlen(pat);
        char num[16];
        snprintf(num, sizeof num, ".%d", rank);
        FZ_CHECK(!strncmp(names[0], pat, pl) && !strcmp(names[0] + pl, num),
                 "plain pattern '%s' gave '%s'", pat, names[0]);
    }
    for (int i = 0; i < NR; i++)
        free(names[i]);
    free(pat);
    return 0;
}
