/*
 * fuzz_npy.c - fuzz target for the .npy header parser (ocad/npy.c).
 *
 * Input: the first bytes of a file. Properties: the parser never reads
 * outside the input (sanitizers); a rejected input names its fault; an
 * accepted header has 0..7 non-negative dimensions, a simple descr whose
 * item size computes without overflow, and a data offset inside the
 * input; serialised again (ocad_npy_format) it is a header numpy would
 * write (64-byte aligned, newline-terminated) that parses to the same
 * descriptor, and serialising that gives the same bytes (a fixed point);
 * the serialised header cut short by one byte is rejected.
 */
#include "fuzz.h"

#include "../../ocad/ocad.h"

static int same_info(const ocad_npy_info *a, const ocad_npy_info *b)
{
    if (strcmp(a->descr, b->descr) || a->fortran != b->fortran ||
        a->nd != b->nd)
        return 0;
    for (int d = 0; d < a->nd; d++)
        if (a->shape[d] != b->shape[d])
            return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ocad_npy_info in, again;
    const char *why = NULL;
    if (ocad_npy_parse(data, (int64_t)size, &in, &why)) {
        FZ_CHECK(why && *why, "a rejected header has no reason");
        return 0;
    }
    FZ_CHECK(in.version >= 1 && in.version <= 3, "version %d", in.version);
    FZ_CHECK(in.data_off > OCAD_NPY_PREAMBLE(in.version) &&
                 in.data_off <= (int64_t)size,
             "data offset %lld of %zu bytes", (long long)in.data_off, size);
    FZ_CHECK(in.nd >= 0 && in.nd <= PASSION_MAX_DIMS, "nd %d", in.nd);
    for (int d = 0; d < in.nd; d++)
        FZ_CHECK(in.shape[d] >= 0, "shape[%d] = %lld", d,
                 (long long)in.shape[d]);
    FZ_CHECK(in.fortran == 0 || in.fortran == 1, "fortran %d", in.fortran);
    FZ_CHECK(strlen(in.descr) < sizeof in.descr, "descr too long");
    FZ_CHECK(ocad_npy_itemsize(in.descr) >= 0, "item size < 0");

    char *h = NULL, *h2 = NULL;
    int64_t len = 0, len2 = 0;
    int rc = ocad_npy_format(&in, &h, &len);
    FZ_CHECK(rc == 0, "an accepted header does not serialise (%d)", rc);
    FZ_CHECK(len % 64 == 0 && len > 10 && h[len - 1] == '\n',
             "serialised header of %lld bytes", (long long)len);
    rc = ocad_npy_parse(h, len, &again, &why);
    FZ_CHECK(rc == 0, "re-parse of the serialised header fails: %s", why);
    FZ_CHECK(same_info(&in, &again), "re-parsed descriptor differs");
    FZ_CHECK(again.data_off == len, "data offset %lld, header %lld",
             (long long)again.data_off, (long long)len);
    FZ_CHECK(ocad_npy_format(&again, &h2, &len2) == 0 && len2 == len &&
                 !memcmp(h, h2, (size_t)len),
             "serialisation is not a fixed point");
    /* one byte short of the header: must be refused, never over-read */
    char *cut = malloc((size_t)len - 1);
    FZ_CHECK(cut, "out of memory");
    memcpy(cut, h, (size_t)len - 1);
    FZ_CHECK(ocad_npy_parse(cut, len - 1, &again, &why) != 0,
             "a truncated header is accepted");
    free(cut);
    free(h);
    free(h2);
    return 0;
}
