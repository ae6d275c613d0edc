/*
 * launcher_probe.c - passion_init on MPI_COMM_WORLD, for
 * tests/foreign_launcher.sh: prints one line, "refused: DETAIL" when it
 * failed with PASSION_EINVAL, no context and a detail that names the
 * launcher that started it and the one to use, "accepted" when it
 * succeeded, else what happened. Exits 0 unless MPI itself failed: the
 * script judges the lines.
 */
#include "passion.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    passion_ctx *ctx = NULL;
    int rc = passion_init(MPI_COMM_WORLD, NULL, &ctx);
    const char *d = passion_ctx_errdetail(ctx);
    const char *want = !strncmp(passion_mpi_build(), "MPICH", 5)
                           ? "start it with mpiexec.mpich"
                           : "start it with mpiexec.openmpi";
    if (rc == PASSION_EINVAL && !ctx && strstr(d, want) &&
        strstr(d, "started by"))
        printf("refused: %s\n", d);
    else if (rc == 0 && ctx && !*passion_ctx_errdetail(NULL))
        printf("accepted\n");
    else
        printf("unexpected: rc %d (%s), detail '%s', want '%s'\n", rc,
               passion_strerror(rc), d, want);
    fflush(stdout);
    passion_finalize(ctx);
    MPI_Finalize();
    return 0;
}
