/*
 * demo_etp.c - the demo's short table of the extended two-phase method
 * against ROMIO: collective reads and writes of strided sections of one
 * global array file (4096x4096 4-byte elements, column-major, 64 MiB) by
 * every rank, thesis tables 6.1, 6.2, 6.5 and 6.6 cases, cold (pages
 * dropped before each run). passion: passion_file_read_all /
 * passion_file_write_all with the default method (auto); ROMIO:
 * MPI_File_read_all / write_all with the section as file view
 * (passion_section_filetype), default hints.
 * Best of three alternating runs per method; every result is checked
 * element by element.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096
#define DEMO_REPS 3 /* best of 3, each method, alternating */

typedef struct ecase {
    const char *name;
    int op_write;
    /* 0-based start, count, stride per dimension at rank p */
    int64_t r0, rp, rc, rs, c0, cp, cc, cs;
} ecase;

/* thesis notation l:u:s (1-based) converted; rp/cp: shift per rank */
static const ecase cases[] = {
    {"6.1-III", 0, 399, 0, 401, 1, 399, 0, 401, 1},     /* 400:800 both */
    {"6.2-III", 0, 399, 0, 401, 1, 399, 100, 401, 1},   /* cols +100p */
    {"6.5-II", 0, 0, 250, 125, 2, 0, 250, 125, 2},      /* 1+250p:250+250p:2 */
    {"6.6-II", 1, 0, 250, 125, 2, 0, 250, 125, 2},
};

static uint32_t val(int64_t i, int64_t j, uint32_t salt)
{
    return (uint32_t)(j * N + i) ^ salt;
}

static void section_at(const ecase *e, int p, passion_section *s)
{
    memset(s, 0, sizeof *s);
    s->start[0] = e->r0 + e->rp * p;
    s->count[0] = e->rc;
    s->stride[0] = e->rs;
    s->start[1] = e->c0 + e->cp * p;
    s->count[1] = e->cc;
    s->stride[1] = e->cs;
}

/* Fill buf with the section's values (writes) or check them (reads). */
static int64_t values(const passion_section *s, uint32_t *buf, uint32_t salt,
                      int check)
{
    int64_t bad = 0, k = 0;
    for (int64_t b = 0; b < s->count[1]; b++)
        for (int64_t a = 0; a < s->count[0]; a++, k++) {
            uint32_t v = val(s->start[0] + a * s->stride[0],
                             s->start[1] + b * s->stride[1], salt);
            if (check)
                bad += buf[k] != v;
            else
                buf[k] = v;
        }
    return bad;
}

static int romio_rw(passion_file *f, MPI_File fh, const passion_section *s,
                    uint32_t *buf, int op_write)
{
    MPI_Datatype t;
    MPI_Offset disp;
    int rc = passion_section_filetype(f, s, &t, &disp);
    if (rc)
        return rc;
    MPI_File_set_view(fh, disp, MPI_BYTE, t, "native", MPI_INFO_NULL);
    int n = (int)(s->count[0] * s->count[1] * 4);
    MPI_Status st;
    int mrc = op_write ? MPI_File_write_all(fh, buf, n, MPI_BYTE, &st)
                       : MPI_File_read_all(fh, buf, n, MPI_BYTE, &st);
    MPI_Type_free(&t);
    return mrc == MPI_SUCCESS ? 0 : PASSION_EMPI;
}

int cli_demo_etp(const char *dir, int quiet)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    passion_ctx *ctx = NULL;
    passion_array *a = NULL;
    passion_file *f = NULL;
    char path[512];
    snprintf(path, sizeof path, "%s/etp-demo.raw", dir);
    int64_t shape[2] = {N, N};
    passion_array_spec sp;
    passion_array_spec_init(&sp, 2, shape, 4);
    sp.storage = PASSION_COL_MAJOR;
    sp.placement = PASSION_PLACE_GLOBAL;
    int rc = passion_init(MPI_COMM_WORLD, NULL, &ctx);
    if (!rc)
        rc = passion_array_create(ctx, &sp, &a);
    if (!rc)
        rc = passion_file_open(a, path, PASSION_MODE_CREATE, &f);
    /* fill: each rank its block of columns, in pieces of 256 columns */
    uint32_t *buf = malloc((size_t)N * 256 * 4);
    if (!buf && !rc)
        rc = PASSION_ENOMEM;
    int64_t c0 = (int64_t)N * rank / size, c1 = (int64_t)N * (rank + 1) / size;
    for (int64_t c = c0; !rc && c < c0 + (c1 - c0 + 255) / 256 * 256;
         c += 256) {
        passion_section s;
        int64_t st[2] = {0, c}, cnt[2] = {N, c < c1 ? (c1 - c < 256 ? c1 - c
                                                                    : 256)
                                                       : 0};
        passion_section_set(&s, 2, st, cnt, NULL);
        values(&s, buf, 0, 0);
        rc = passion_file_write_all(f, &s, buf, NULL, PASSION_METHOD_AUTO);
    }
    MPI_File fh = MPI_FILE_NULL;
    if (!rc && MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR,
                             MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        rc = PASSION_EMPI;
    if (rc) {
        if (rank == 0)
            fprintf(stderr, "passion demo: ETP table setup: %s (%s)\n",
                    passion_strerror(rc),
                    ctx ? passion_ctx_errdetail(ctx) : "");
        goto done;
    }
    if (rank == 0 && !quiet)
        printf(
            "\n  extended two-phase (passion, auto) against ROMIO collective"
            " I/O (MPI_File_*_all, default hints), P=%d%s, cold,\n"
            "  one global %dx%d 4-byte column-major file (64 MiB), each "
            "rank its section (thesis case in the name), best of %d:\n\n"
            "  %-8s %-5s %12s %10s %10s %15s %s\n",
            size, size > 2 ? " (oversubscribed)" : "", N, N, DEMO_REPS, "case",
            "op", "KiB per rank", "passion s", "ROMIO s", "ROMIO/passion",
            "check");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] && !rc; i++) {
        const ecase *e = &cases[i];
        passion_section s;
        section_at(e, rank, &s);
        double t[2] = {1e30, 1e30};
        int64_t bad = 0;
        for (int it = 0; it < 2 * DEMO_REPS && !rc; it++) {
            int m = it % 2; /* alternate passion and ROMIO */
            uint32_t salt = e->op_write ? 0x5a5a0000u + (uint32_t)m : 0;
            if (e->op_write)
                values(&s, buf, salt, 0);
            else
                memset(buf, 0, (size_t)(s.count[0] * s.count[1] * 4));
            passion_file_drop_cache(f);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (m == 0)
                rc = e->op_write ? passion_file_write_all(f, &s, buf, NULL,
                                                             0)
                                 : passion_file_read_all(f, &s, buf, NULL,
                                                            0);
            else
                rc = romio_rw(f, fh, &s, buf, e->op_write);
            if (e->op_write) {
                MPI_File_sync(fh);
                passion_file_sync(f);
            }
            double dt = MPI_Wtime() - t0, tmax;
            MPI_Allreduce(&dt, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            t[m] = tmax < t[m] ? tmax : t[m];
            if (e->op_write && !rc) {
                /* read back independently; overlapping sections: the
                   highest rank wins, so only the last rank's can be
                   checked everywhere -- sections here do not overlap */
                memset(buf, 0, (size_t)(s.count[0] * s.count[1] * 4));
                MPI_Barrier(MPI_COMM_WORLD);
                rc = passion_file_read(f, &s, buf, NULL, 0);
            }
            bad += values(&s, buf, salt, 1);
        }
        int64_t allbad = 0;
        MPI_Allreduce(&bad, &allbad, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0 && !rc && !quiet)
            printf("  %-8s %-5s %12.1f %10.4f %10.4f %15.2f %s\n", e->name,
                   e->op_write ? "write" : "read",
                   (double)(s.count[0] * s.count[1] * 4) / 1024, t[0], t[1],
                   t[1] / t[0], allbad ? "WRONG" : "ok");
        if (allbad && !rc)
            rc = PASSION_EIO;
    }
    if (rc && rank == 0)
        fprintf(stderr, "passion demo: ETP table: %s (%s)\n",
                passion_strerror(rc), passion_ctx_errdetail(ctx));
done:
    if (fh != MPI_FILE_NULL)
        MPI_File_close(&fh);
    free(buf);
    passion_file_close(f);
    if (rank == 0)
        remove(path);
    passion_array_free(a);
    passion_finalize(ctx);
    return rc;
}
