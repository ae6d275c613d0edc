/* cli.h - the `passion` command's subcommands (prefix cli_). */
#ifndef PASSION_CLI_H
#define PASSION_CLI_H

#include "passion.h"

#include <stdio.h>

/* Progress and messages on rank 0 (stderr; a bar on a terminal). */
void cli_progress(void *arg, const char *phase, double fraction);
void cli_progress_done(void);
int cli_rank(void);
/* Print a usage or help text, each "mpiexec " in it named as the launcher
   of the MPI this passion was built with (mpiexec.mpich, mpiexec.openmpi:
   on a machine with both, a plain mpiexec may be the other one's). */
void cli_usage(FILE *out, const char *text);
/* The context's memory_budget option in bytes. */
int64_t cli_budget(const passion_ctx *ctx);

/* Subcommands: argc/argv after the subcommand name; MPI is initialised. */
int cli_demo(int argc, char **argv);
int cli_ls(int argc, char **argv);
int cli_dump(int argc, char **argv);
int cli_get(int argc, char **argv);
int cli_put(int argc, char **argv);
int cli_convert(int argc, char **argv);
int cli_wisdom(int argc, char **argv);
/* The demo's extended-two-phase-vs-ROMIO table (files in dir). Collective
   over MPI_COMM_WORLD; 0 or a passion error code. */
int cli_demo_etp(const char *dir, int quiet);

#endif
