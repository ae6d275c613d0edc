/*
 * h5chunk_read.c - the reader that tests/test_h5chunk.py runs under
 * mpiexec: every rank opens NAME (file.h5:/dataset) with passion_open,
 * reads its own section (line `rank` of SECTIONS: start count stride per
 * dimension) with passion_file_read_all (mode "all") or passion_file_read
 * (mode "ind"), packed, or inside a larger memory array (mode "mem": one
 * element of margin on each side of every dimension, collective), and
 * writes the bytes it got to OUT.<rank> (mode "mem": the whole memory
 * array, margins set to 0xA5 before the read). It prints one line per rank,
 * "rank R open RC read RC bytes_read N: DETAIL" (N: the file bytes this
 * rank's read call read, passion_counters_get), and exits 0: the script
 * judges.
 */
#include <mpi.h>
#include <passion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_line(const char *path, int rank, int nd, passion_section *s)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return -1;
    char line[4096];
    int r = 0, ok = -1;
    while (fgets(line, sizeof line, fp)) {
        if (r++ != rank)
            continue;
        char *p = line;
        memset(s, 0, sizeof *s);
        ok = 0;
        for (int d = 0; d < nd && !ok; d++) {
            long long v[3];
            for (int j = 0; j < 3; j++) {
                char *e;
                v[j] = strtoll(p, &e, 10);
                if (e == p)
                    ok = -1;
                p = e;
            }
            s->start[d] = v[0];
            s->count[d] = v[1];
            s->stride[d] = v[2];
        }
        break;
    }
    fclose(fp);
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 5) {
        if (!rank)
            fprintf(stderr, "usage: h5chunk_read NAME SECTIONS OUT "
                            "all|ind|mem\n");
        MPI_Finalize();
        return 2;
    }
    const char *mode = argv[4];
    passion_ctx *ctx = NULL;
    int rc = passion_init(MPI_COMM_WORLD, NULL, &ctx);
    if (rc) {
        printf("rank %d init %d: %s\n", rank, rc,
               passion_ctx_errdetail(NULL));
        MPI_Finalize();
        return 0;
    }
    passion_array *a = NULL;
    passion_file *f = NULL;
    int orc = passion_open(ctx, argv[1], PASSION_MODE_RDONLY, NULL, &a, &f);
    int rrc = 0;
    long long nread = 0;
    char detail[1024] = "";
    if (orc)
        snprintf(detail, sizeof detail, "%s", passion_ctx_errdetail(ctx));
    if (!orc) {
        passion_array_spec sp = *passion_array_get_spec(a);
        passion_section s;
        if (read_line(argv[2], rank, sp.ndims, &s)) {
            fprintf(stderr, "rank %d: no section line\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        passion_memspec ms;
        int64_t n = sp.elem_size;
        for (int d = 0; d < sp.ndims; d++) {
            ms.shape[d] = s.count[d] + (strcmp(mode, "mem") ? 0 : 2);
            ms.offset[d] = strcmp(mode, "mem") ? 0 : 1;
            n *= ms.shape[d];
        }
        char *buf = malloc(n ? (size_t)n : 1);
        memset(buf, 0xA5, n ? (size_t)n : 1);
        passion_counters_reset(ctx);
        if (!strcmp(mode, "ind"))
            rrc = passion_file_read(f, &s, buf, NULL, PASSION_METHOD_AUTO);
        else
            rrc = passion_file_read_all(f, &s, buf,
                                        strcmp(mode, "mem") ? NULL : &ms,
                                        PASSION_METHOD_AUTO);
        if (rrc)
            snprintf(detail, sizeof detail, "%s",
                     passion_ctx_errdetail(ctx));
        passion_counters cn;
        passion_counters_get(ctx, &cn);
        nread = (long long)cn.bytes_read;
        char out[4096];
        snprintf(out, sizeof out, "%s.%d", argv[3], rank);
        FILE *fp = fopen(out, "wb");
        if (fp) {
            if (!rrc && n)
                fwrite(buf, 1, (size_t)n, fp);
            fclose(fp);
        }
        free(buf);
        passion_file_close(f);
        passion_array_free(a);
    }
    printf("rank %d open %d read %d bytes_read %lld: %s\n", rank, orc, rrc,
           nread, detail);
    fflush(stdout);
    passion_finalize(ctx);
    MPI_Finalize();
    return 0;
}
