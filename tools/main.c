/*
 * main.c - the `passion` command: MPI set-up, subcommand dispatch, help.
 * Run it as `mpiexec -n P passion SUBCOMMAND ...` (or without mpiexec for
 * one rank).
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: mpiexec -n P passion COMMAND [OPTIONS]\n"
    "\n"
    "passion " PASSION_VERSION_STRING
    ": out-of-core arrays for MPI programs (sections, data sieving,\n"
    "extended two-phase I/O, prefetch on io_uring, data reuse, out-of-core\n"
    "shift), after R. Thakur's PASSION runtime (1995).\n"
    "\n"
    "commands:\n"
    "  demo     create arrays many times larger than the memory budget, run\n"
    "           the out-of-core Jacobi solver and median filter on them, and\n"
    "           print what they did (time, bytes moved, I/O hidden by\n"
    "           prefetch, bytes saved by reuse). `passion demo --help` lists\n"
    "           its options (sizes, budget, engine, directory).\n"
    "  info     print the build, the I/O engine this machine gets, and the\n"
    "           options in force\n"
    "  help     this text\n"
    "\n"
    "environment:\n"
    "  PASSION_OPTIONS  comma-separated key=value options applied to every\n"
    "                   context, e.g. memory_budget=16M,engine=thread,\n"
    "                   direct_io=1,verbosity=1\n"
    "  PASSION_ENGINE   auto|uring|thread: the asynchronous I/O engine\n"
    "                   (thread = the driver on a worker thread, no io_uring)\n"
    "\n"
    "examples:\n"
    "  mpiexec -n 2 passion demo\n"
    "  mpiexec -n 2 passion demo --quick --dir /tmp\n"
    "  PASSION_ENGINE=thread mpiexec -n 2 passion demo --budget 4M\n";

static int rank_;

static int info(void)
{
    passion_ctx *ctx;
    int rc = passion_init(MPI_COMM_WORLD, NULL, &ctx);
    if (rc) {
        if (rank_ == 0)
            fprintf(stderr, "passion: init: %s\n", passion_strerror(rc));
        return 1;
    }
    passion_engine eng = PASSION_ENGINE_AUTO;
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rc = passion_engine_get(ctx, &eng);
    if (rank_ == 0) {
        printf("passion %s\n", passion_version(NULL, NULL, NULL));
        printf("ranks          %d\n", size);
        printf("engine         %s%s\n", rc ? "none: " : passion_engine_name(eng),
               rc ? passion_ctx_errdetail(ctx) : "");
        /* every option the context holds, as PASSION_OPTIONS spells it */
        static const char *const keys[] = {
            "memory_budget", "driver", "direct_io", "exchange", "radix",
            "engine", "io_latency", "io_bandwidth", "io_concurrency",
            "msg_alpha", "msg_beta", "verbosity"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            char v[64];
            if (passion_ctx_option_get(ctx, keys[i], v, sizeof v) == 0)
                printf("%-14s %s\n", keys[i], v);
        }
    }
    passion_finalize(ctx);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    int status = 0;
    const char *cmd = argc > 1 ? argv[1] : "help";
    if (!strcmp(cmd, "demo")) {
        status = cli_demo(argc - 2, argv + 2);
    } else if (!strcmp(cmd, "info")) {
        status = info();
    } else if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") ||
               !strcmp(cmd, "-h")) {
        if (rank_ == 0)
            fputs(usage, stdout);
    } else if (!strcmp(cmd, "--version")) {
        if (rank_ == 0)
            printf("passion %s\n", passion_version(NULL, NULL, NULL));
    } else {
        if (rank_ == 0)
            fprintf(stderr, "passion: unknown command '%s'\n\n%s", cmd, usage);
        status = 2;
    }
    MPI_Finalize();
    return status;
}
