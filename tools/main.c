/*
 * main.c - the `passion` command: MPI set-up, subcommand dispatch, help.
 * Run it as `mpiexec -n P passion SUBCOMMAND ...` (or without mpiexec for
 * one rank).
 */
#include "files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_head[] =
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
    "  ls       FILE...: format, shape, element type, byte and storage\n"
    "           order, layout and size of each file; a local set's grid,\n"
    "           distributions, ghosts and files\n"
    "  dump     FILE[:NAME] [SECTION]: the values of a section as text\n"
    "  get      SRC[:NAME] SECTION -o OUT: copy a section into a new file\n"
    "  put      SRC DST[:NAME] SECTION: write a file into a section\n"
    "  convert  SRC DST: between local sets (any distribution), raw, .npy,\n"
    "           HDF5 and netCDF, collective at any P, bounded memory\n"
    "  wisdom   show FILE | merge OUT IN... | clear FILE: the planner's\n"
    "           wisdom files (options planner, wisdom): each record\n"
    "           readably, several merged into one, one emptied\n"
    "  info     the build (version, the MPI built with and the MPI running,\n"
    "           liburing, HDF5), the I/O engine this machine gets, and every\n"
    "           option with its value\n"
    "  help     this text; `passion COMMAND --help` for a command's\n"
    "  --version  the version\n"
    "\n"
    "files are named name.npy, name.h5:/path/to/dataset, name.nc:var, a\n"
    "local set by its pattern data.%d.laf (or its description\n"
    "data.laf.passion), or raw (any other name, with --shape and --type).\n"
    "SECTION is numpy-like, one entry per dimension: \"0:100:2,5:50\"\n"
    "(start:stop:step; negative indices count from the end).\n"
    "\n"
    "environment:\n"
    "  PASSION_OPTIONS  comma-separated key=value options applied to every\n"
    "                   context, e.g. memory_budget=16M,engine=thread,\n"
    "                   direct_io=1,verbosity=1; the drivers and exchange\n"
    "                   algorithms are\n";
/* after usage_head: the library's own names (passion_driver_name,
   passion_xchg_name), then the rest */
static const char usage_tail[] =
    "  PASSION_ENGINE   auto|uring|thread: the asynchronous I/O engine\n"
    "                   (thread = the driver on a worker thread, no io_uring)\n"
    "\n"
    "examples:\n"
    "  mpiexec -n 2 passion demo\n"
    "  mpiexec -n 2 passion demo --quick --dir /tmp\n"
    "  PASSION_ENGINE=thread mpiexec -n 2 passion demo --quick --ratio 32\n"
    "  mpiexec -n 2 passion demo --quick --budget 512K\n"
    "  passion ls run.h5:/fields/u\n"
    "  passion get run.nc:u 0:10,::4 -o u.npy\n"
    "  mpiexec -n 2 passion convert u.npy 'u.%d.laf' --dist 'CYCLIC(256),*'\n";

static int rank_;

/* A driver's name where this build has it (the options take it: a build
   without -Dtest_hooks=true has no fault driver), "" where it lacks it,
   NULL past the last. */
static const char *driver_name(int v)
{
    const char *name = passion_driver_name((passion_driver)v);
    passion_options *o = NULL;
    int has = name && passion_options_create(&o) == PASSION_OK &&
              passion_options_set_int(o, "driver", v) == PASSION_OK;
    passion_options_free(o);
    return !name || has ? name : "";
}

static const char *xchg_name(int v)
{
    return passion_xchg_name((passion_xchg)v);
}

/* The first name from v on that this build has (not ""), NULL if none. */
static const char *next_name(const char *(*name)(int v), int *v)
{
    for (; name(*v); ++*v)
        if (*name(*v))
            return name(*v);
    return NULL;
}

/* "KEY=a|b|c" under the usage's column 19, wrapped before column 80 */
static void usage_names(const char *key, const char *(*name)(int v))
{
    int col = printf("%19s%s=", "", key), indent = col, v = 0;
    for (const char *n = next_name(name, &v); n; n = next_name(name, &v)) {
        v++;
        int last = !next_name(name, &(int){v}), w = (int)strlen(n) + !last;
        if (col > indent && col + w > 79)
            col = printf("\n%*s", indent, "") - 1;
        col += printf("%s%s", n, last ? "" : "|");
    }
    printf("\n");
}

static void usage(void)
{
    cli_usage(stdout, usage_head);
    usage_names("driver", driver_name);
    usage_names("exchange", xchg_name);
    cli_usage(stdout, usage_tail);
}

static const char info_usage[] =
    "usage: passion info [--budget SIZE] [--options K=V,...]\n"
    "  The version, the build (MPI library and version, liburing, HDF5),\n"
    "  the ranks, the nodes (shared memory, or virtual_node_ranks), the I/O\n"
    "  engine this machine gets, and every option of a\n"
    "  context with its value (PASSION_OPTIONS and --options applied).\n";

static int info(int argc, char **argv)
{
    cli_common c = {.progress = 0};
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            if (rank_ == 0)
                cli_usage(stdout, info_usage);
            return 0;
        }
        int k = cli_common_arg(&c, argc, argv, &i);
        if (k < 0)
            return 2;
        if (!k) {
            if (rank_ == 0)
                fprintf(stderr, "passion info: unknown argument %s "
                        "(passion info --help)\n", argv[i]);
            return 2;
        }
    }
    passion_ctx *ctx;
    if (cli_ctx(&c, &ctx))
        return 1;
    passion_engine eng = PASSION_ENGINE_AUTO;
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc = passion_engine_get(ctx, &eng);
    int node_id = 0, nnodes = 1, node_rank = 0, node_size = 1;
    passion_ctx_node(ctx, &node_id, &nnodes, &node_rank, &node_size);
    if (rank_ == 0) {
        printf("passion %s\n", passion_version(NULL, NULL, NULL));
        /* the MPI compiled against, and the one running (which a wrong
           launcher or LD_LIBRARY_PATH may make another) */
        char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
        int len = 0;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n")] = 0;
        for (char *c = lib; *c; c++)
            if (*c == '\t')
                *c = ' ';
        printf("mpi (built)    %s\n", passion_mpi_build());
        printf("mpi (running)  %s\n", lib);
        printf("liburing       %s\n", CLI_URING);
        printf("hdf5           %s\n", CLI_HDF5);
        printf("ranks          %d\n", size);
        printf("nodes          %d (rank 0's node: %d ranks)\n", nnodes,
               node_size);
        printf("engine         %s%s\n",
               rc ? "none: " : passion_engine_name(eng),
               rc ? passion_ctx_errdetail(ctx) : "");
        /* every option the context holds, as PASSION_OPTIONS spells it */
        static const char *const keys[] = {
            "memory_budget", "driver", "direct_io", "exchange", "radix",
            "engine", "io_latency", "io_bandwidth", "io_concurrency",
            "msg_alpha", "msg_beta", "wait_spin", "netcdf_format", "file_format",
            "virtual_node_ranks", "sim_net_latency_us", "sim_net_byte_ns",
            "cb_nodes", "cb_per_node", "cb_ranks", "stripe_size", "planner",
            "wisdom",
            "verbosity", "fault_fail_at", "fault_errno", "fault_short",
            "fault_alloc_at", "fault_ranks"};
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
        status = info(argc - 2, argv + 2);
    } else if (!strcmp(cmd, "ls")) {
        status = cli_ls(argc - 2, argv + 2);
    } else if (!strcmp(cmd, "dump")) {
        status = cli_dump(argc - 2, argv + 2);
    } else if (!strcmp(cmd, "get")) {
        status = cli_get(argc - 2, argv + 2);
    } else if (!strcmp(cmd, "put")) {
        status = cli_put(argc - 2, argv + 2);
    } else if (!strcmp(cmd, "convert")) {
        status = cli_convert(argc - 2, argv + 2);
    } else if (!strcmp(cmd, "wisdom")) {
        status = cli_wisdom(argc - 2, argv + 2);
    } else if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") ||
               !strcmp(cmd, "-h")) {
        if (rank_ == 0)
            usage();
    } else if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        if (rank_ == 0)
            printf("passion %s\n", passion_version(NULL, NULL, NULL));
    } else {
        if (rank_ == 0)
            fprintf(stderr, "passion: unknown command '%s' (passion help)\n",
                    cmd);
        status = 2;
    }
    MPI_Finalize();
    return status;
}
