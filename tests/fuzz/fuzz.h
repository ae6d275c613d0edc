/*
 * fuzz.h - shared by the fuzz targets in tests/fuzz/.
 *
 * Each target defines LLVMFuzzerTestOneInput(data, size): it feeds the
 * bytes to one parser of outside input and checks properties of the
 * result (beyond "no crash": results consistent, round trips exact). A
 * failed property prints what failed and aborts, which libFuzzer reports
 * as a crash and the replay driver (replay.c) as a failed test. The same
 * source builds with clang -fsanitize=fuzzer (meson -Dfuzz=true) and with
 * gcc against replay.c's main(), which runs the corpus and the saved
 * crashes in the normal test suite.
 */
#ifndef PASSION_FUZZ_H
#define PASSION_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_CHECK(cond, ...)                                                 \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "fuzz property failed at %s:%d: %s: ",         \
                    __FILE__, __LINE__, #cond);                             \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
            abort();                                                        \
        }                                                                   \
    } while (0)

/* The input as a NUL-terminated string (cut at its first NUL byte). */
static inline char *fz_string(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return NULL;
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#endif
