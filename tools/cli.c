/*
 * cli.c - what the `passion` command's subcommands share: progress on
 * rank 0, the context's budget (the rank: files.c). Below main.c and the
 * subcommands, which use it.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cli_usage(FILE *out, const char *text)
{
    const char *b = passion_mpi_build();
    const char *launcher = !strncmp(b, "MPICH", 5)      ? "mpiexec.mpich"
                           : !strncmp(b, "Open MPI", 8) ? "mpiexec.openmpi"
                                                        : "mpiexec";
    static const char word[] = "mpiexec ";
    for (const char *p = text, *q; *p; p = q + sizeof word - 1) {
        if (!(q = strstr(p, word))) {
            fputs(p, out);
            break;
        }
        fprintf(out, "%.*s%s ", (int)(q - p), p, launcher);
    }
}

void cli_progress(void *arg, const char *phase, double fraction)
{
    (void)arg;
    static int last = -1;
    if (cli_rank() != 0 || !isatty(2))
        return;
    int pct = (int)(fraction * 100 + 0.5);
    if (pct == last)
        return;
    last = pct;
    int bar = pct * 30 / 100;
    fprintf(stderr, "\r\033[K  %-8s [%.*s%*s] %3d%%", phase, bar,
            "##############################", 30 - bar, "", pct);
    fflush(stderr);
}

void cli_progress_done(void)
{
    if (cli_rank() == 0 && isatty(2))
        fprintf(stderr, "\r\033[K");
}

int64_t cli_budget(const passion_ctx *ctx)
{
    char v[32];
    if (passion_ctx_option_get(ctx, "memory_budget", v, sizeof v))
        return 0;
    return strtoll(v, NULL, 10);
}
