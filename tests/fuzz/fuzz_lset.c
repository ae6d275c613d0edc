/*
 * fuzz_lset.c - fuzz target for the local set description parser
 * (ocad_lset_parse in ocad/lset.c) and its name rule (ocad_lset_name).
 *
 * Input: the description text. Properties: a description that parses
 * satisfies every invariant lset.c states (so the spec built from it
 * passes the library's own check); formatting it and parsing the text
 * again gives the same numbers (round trip); the input with its last byte
 * removed never crashes either. The input as a pattern: the description's
 * name never contains a conversion in its file name, ends in ".passion",
 * and is refused only when the directory part holds a conversion.
 */
#include "fuzz.h"

#include "../../ocad/ocad.h"

#include <errno.h>

static void check_invariants(const ocad_lset *d)
{
    FZ_CHECK(d->version == OCAD_LSET_VERSION, "version %d", d->version);
    FZ_CHECK(d->ndims >= 1 && d->ndims <= PASSION_MAX_DIMS, "ndims %d",
             d->ndims);
    FZ_CHECK(d->elem_size >= 1 && d->elem_size <= 64, "elem_size");
    FZ_CHECK(d->kind >= 0 && d->kind <= 5, "kind");
    FZ_CHECK(d->storage >= 0 && d->storage <= 2, "storage");
    FZ_CHECK(d->files[0] && !strchr(d->files, '/'), "files '%s'", d->files);
    int64_t procs = 1, bytes = d->elem_size;
    int seen[PASSION_MAX_DIMS] = {0};
    for (int i = 0; i < d->ndims; i++) {
        FZ_CHECK(d->shape[i] > 0, "shape");
        FZ_CHECK(!__builtin_mul_overflow(bytes, d->shape[i], &bytes),
                 "byte count overflows");
        FZ_CHECK(d->order[i] >= 0 && d->order[i] < d->ndims &&
                 !seen[d->order[i]]++, "order");
        FZ_CHECK(d->grid[i] >= 1, "grid");
        procs *= d->grid[i];
        FZ_CHECK(d->block[i] >= 1 && d->block[i] <= d->shape[i], "block");
        if (d->dist[i] == PASSION_DIST_COLLAPSED)
            FZ_CHECK(d->grid[i] == 1 && d->block[i] == d->shape[i],
                     "collapsed");
        else if (d->dist[i] == PASSION_DIST_BLOCK)
            FZ_CHECK(d->block[i] * (int64_t)d->grid[i] >= d->shape[i],
                     "BLOCK(m) covers");
        else
            FZ_CHECK(d->dist[i] == PASSION_DIST_CYCLIC, "dist %d",
                     d->dist[i]);
        FZ_CHECK(d->ghost[i] >= 0 && d->ghost[i] <= d->shape[i], "ghost");
    }
    FZ_CHECK(procs == d->nranks, "grid product %lld, ranks %d",
             (long long)procs, d->nranks);
}

static void check_name(const char *pat)
{
    char *n = NULL;
    int rc = ocad_lset_name(pat, &n);
    const char *slash = strrchr(pat, '/');
    size_t dl = slash ? (size_t)(slash - pat) + 1 : 0;
    int conv_dir = 0;
    for (size_t i = 0; i < dl; i++) {
        if (pat[i] == '%' && (pat[i + 1] == 'd' || pat[i + 1] == 'r'))
            conv_dir = 1;
        if (pat[i] == '%' && pat[i + 1] == '%')
            i++;
    }
    if (conv_dir) {
        FZ_CHECK(rc == -EINVAL, "pattern '%s' with %%d in its directory: "
                 "rc %d", pat, rc);
        return;
    }
    FZ_CHECK(rc == 0 && n, "name of '%s' failed (%d)", pat, rc);
    size_t l = strlen(n);
    FZ_CHECK(l >= 8 && !strcmp(n + l - 8, ".passion"), "'%s' -> '%s'", pat,
             n);
    FZ_CHECK(!strncmp(n, pat, dl), "directory of '%s' changed: '%s'", pat,
             n);
    free(n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ocad_lset d, e;
    const char *why = NULL;
    if (ocad_lset_parse(data, (int64_t)size, &d, &why) == 0) {
        check_invariants(&d);
        char *text = NULL;
        int64_t len = 0;
        FZ_CHECK(ocad_lset_format(&d, &text, &len) == 0, "format failed");
        FZ_CHECK(ocad_lset_parse(text, len, &e, &why) == 0,
                 "its own text does not parse: %s\n%s", why, text);
        FZ_CHECK(!memcmp(&d, &e, sizeof d), "round trip differs:\n%s",
                 text);
        free(text);
    } else {
        FZ_CHECK(why && *why, "failure without a reason");
    }
    if (size)
        (void)ocad_lset_parse(data, (int64_t)size - 1, &e, &why);
    char *pat = fz_string(data, size < 512 ? size : 512);
    FZ_CHECK(pat, "out of memory");
    check_name(pat);
    free(pat);
    return 0;
}
