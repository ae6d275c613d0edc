/* section.h - the command line's section and list syntax (section.c);
   no MPI, no library: the fuzz target tests/fuzz/fuzz_section.c uses it. */
#ifndef PASSION_CLI_SECTION_H
#define PASSION_CLI_SECTION_H

#include <stddef.h>
#include <stdint.h>

#define CLI_MAX_DIMS 7

typedef struct cli_sect {
    int64_t start[CLI_MAX_DIMS];
    int64_t count[CLI_MAX_DIMS];
    int64_t stride[CLI_MAX_DIMS];
} cli_sect;

/* Parse a numpy-like section ("0:100:2,5:50", section.c) of an array of
   nd dimensions of shape; 0, or -1 with a one-line reason in why. */
int cli_section_parse(const char *text, int nd, const int64_t *shape,
                      cli_sect *out, char *why, size_t wl);
/* Parse exactly n comma-separated integers >= lo ("1,2,3"); 0 or -1 with
   a reason. */
int cli_list_parse(const char *text, int n, int64_t lo, int64_t *v,
                   char *why, size_t wl);

#endif
