#include <passion.h>   /* pkg-config --cflags --libs passion */
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int nprocs;
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    passion_options *opt;
    passion_options_create(&opt);
    passion_options_set(opt, "memory_budget", "64M"); /* staging memory */
    passion_ctx *ctx;
    passion_init(MPI_COMM_WORLD, opt, &ctx);  /* collective */
    passion_options_free(opt);                /* ctx keeps a copy */

    int64_t shape[2] = {2048, 2048};
    passion_array_spec spec;
    passion_array_spec_init(&spec, 2, shape, sizeof(float));
    spec.storage = PASSION_COL_MAJOR;
    spec.grid[1] = nprocs;                    /* (*, BLOCK) over columns */
    spec.dist[0] = PASSION_DIST_COLLAPSED;
    spec.ghost[1] = 1;
    passion_array *a;
    passion_array_create(ctx, &spec, &a);     /* collective, validated */

    passion_file *f;                          /* one file per rank: */
    passion_file_open(a, "data.%d.laf", PASSION_MODE_CREATE, &f);
    static float buf[1024 * 16];
    passion_section s = {.start = {0, 0}, .count = {1024, 16},
                         .stride = {2, 2}};
    int rc = passion_file_read(f, &s, buf, NULL, PASSION_METHOD_AUTO);
    if (rc)
        fprintf(stderr, "%s: %s\n", passion_strerror(rc),
                passion_ctx_errdetail(ctx));

    passion_file_close(f);                    /* children before parents */
    passion_array_free(a);
    passion_finalize(ctx);
    MPI_Finalize();
    return rc != 0;
}
