/*
 * kill_creator.c - the job that test_kill.c kills: creates three kinds of
 * files over and over in DIR, each filled with the value of its generation
 * (uint64 elements, 256 x 256): a raw global file with a 64-byte header
 * area (g.raw), a .npy global file (g.npy) and a local set of one file per
 * rank (l.R.laf, (*, BLOCK) over the ranks). Generation numbers are
 * RUN * 1000000 + cycle, so that every creation writes new values.
 *
 * Usage: mpiexec -n P kill_creator DIR RUN CYCLES (0 = until killed).
 * Each rank first publishes its pid in DIR/pid.R (written aside and
 * renamed, so the test reads it whole), then starts creating.
 */
#include <mpi.h>
#include <passion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 256

static int fail(passion_ctx *ctx, int rc, const char *what)
{
    fprintf(stderr, "kill_creator: %s: %s (%s)\n", what,
            passion_strerror(rc), passion_ctx_errdetail(ctx));
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 4) {
        fprintf(stderr, "usage: kill_creator DIR RUN CYCLES\n");
        MPI_Finalize();
        return 2;
    }
    const char *dir = argv[1];
    long long run = atoll(argv[2]), cycles = atoll(argv[3]);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[4096], tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/pid.%d.tmp", dir, rank);
    snprintf(path, sizeof path, "%s/pid.%d", dir, rank);
    FILE *pf = fopen(tmp, "w");
    if (!pf || fprintf(pf, "%ld\n", (long)getpid()) < 0 || fclose(pf) ||
        rename(tmp, path)) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    passion_ctx *ctx;
    int rc = passion_init(MPI_COMM_WORLD, NULL, &ctx);
    if (rc) {
        fprintf(stderr, "passion_init: %s\n", passion_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int64_t shape[2] = {N, N};
    passion_array_spec gs, ls;
    passion_array_spec_init(&gs, 2, shape, 8);
    gs.placement = PASSION_PLACE_GLOBAL;
    passion_array_spec gn = gs;
    gs.header_bytes = 64;
    gn.kind = PASSION_KIND_UINT;
    gn.endian = PASSION_ENDIAN_LITTLE;
    passion_array_spec_init(&ls, 2, shape, 8);
    ls.grid[1] = size;
    ls.dist[0] = PASSION_DIST_COLLAPSED;
    passion_array *ga, *gna, *la;
    if ((rc = passion_array_create(ctx, &gs, &ga)) ||
        (rc = passion_array_create(ctx, &gn, &gna)) ||
        (rc = passion_array_create(ctx, &ls, &la)))
        return fail(ctx, rc, "array");
    /* this rank's rows of the global arrays; its whole local array */
    int64_t r0 = N * rank / size, r1 = N * (rank + 1) / size;
    int64_t lbytes;
    passion_array_local_bytes(la, rank, &lbytes);
    int64_t nbuf = (r1 - r0) * N > lbytes / 8 ? (r1 - r0) * N : lbytes / 8;
    uint64_t *buf = malloc((size_t)(nbuf ? nbuf : 1) * 8);
    if (!buf)
        return fail(ctx, PASSION_ENOMEM, "buffer");
    passion_section s;
    memset(&s, 0, sizeof s);
    s.start[0] = r0;
    s.count[0] = r1 - r0;
    s.count[1] = N;
    s.stride[0] = s.stride[1] = 1;
    int status = 0;
    for (long long c = 1; !status && (!cycles || c <= cycles); c++) {
        uint64_t gen = (uint64_t)(run * 1000000 + c);
        for (int64_t i = 0; i < nbuf; i++)
            buf[i] = gen;
        passion_file *f;
        snprintf(path, sizeof path, "%s/g.raw", dir);
        if ((rc = passion_file_open(ga, path, PASSION_MODE_CREATE, &f)) ||
            (rc = passion_file_write_all(f, &s, buf, NULL,
                                            PASSION_METHOD_AUTO)) ||
            (rc = passion_file_close(f)))
            status = fail(ctx, rc, path);
        snprintf(path, sizeof path, "%s/g.npy", dir);
        if (!status &&
            ((rc = passion_file_open(gna, path, PASSION_MODE_CREATE, &f)) ||
             (rc = passion_file_write_all(f, &s, buf, NULL,
                                             PASSION_METHOD_AUTO)) ||
             (rc = passion_file_close(f))))
            status = fail(ctx, rc, path);
        snprintf(path, sizeof path, "%s/l.%%d.laf", dir);
        if (!status &&
            ((rc = passion_file_open(la, path, PASSION_MODE_CREATE, &f)) ||
             (rc = passion_file_write_local(f, buf)) ||
             (rc = passion_file_close(f))))
            status = fail(ctx, rc, path);
    }
    free(buf);
    passion_array_free(ga);
    passion_array_free(gna);
    passion_array_free(la);
    passion_finalize(ctx);
    MPI_Finalize();
    return status;
}
