/*
 * bench_sieve.c - suite `sieve`: direct access versus data sieving on each
 * rank's local array file, thesis tables 5.2 and 5.3.
 *
 * Each rank's local array is 2048x32 4-byte elements, column-major, the
 * memory budget (slab) 16 columns; the five sections of the thesis, read
 * and write, methods direct, sieve, auto (passion's default) and
 * romio-indep (MPI_File_read/write with the section as file view: ROMIO's
 * own data sieving). Every read is checked element by element; every write
 * is checked by reading the whole file back (section changed, rest not).
 */
#include "bench_util.h"

#include <stdlib.h>
#include <string.h>

#define ROWS 2048
#define COLS 32

/* The thesis's cases (1-based l:u:s, dimension 1 = rows) and table 5.3. */
static const struct tcase {
    const char *name;
    int64_t l1, u1, s1, l2, u2, s2;
    long direct_requests, sieve_requests, direct_elems, sieve_elems;
} cases[] = {
    {"5.2-1", 1, 2048, 2, 1, 32, 2, 16384, 2, 16384, 65536},
    {"5.2-2", 1, 2048, 4, 1, 32, 4, 4096, 2, 4096, 65536},
    {"5.2-3", 10, 1024, 3, 3, 22, 3, 2373, 2, 2373, 40960},
    {"5.2-4", 100, 2048, 6, 5, 32, 4, 2275, 2, 2275, 57344},
    {"5.2-5", 1024, 2048, 2, 1, 32, 3, 5643, 2, 5643, 65536},
};

static const char *methods[] = {"direct", "sieve", "auto", "romio-indep"};
static const int method_ids[] = {PASSION_METHOD_DIRECT, PASSION_METHOD_SIEVE,
                                 PASSION_METHOD_AUTO, -1};

static uint32_t val(int rank, int64_t i, uint32_t salt)
{
    uint64_t z = ((uint64_t)rank << 40) ^ (uint64_t)i ^ ((uint64_t)salt << 20);
    z = (z ^ (z >> 31)) * 0x9E3779B97F4A7C15ULL;
    return (uint32_t)(z >> 32);
}

static void section_of(const struct tcase *c, passion_section *s)
{
    memset(s, 0, sizeof *s);
    s->start[0] = c->l1 - 1;
    s->count[0] = (c->u1 - c->l1) / c->s1 + 1;
    s->stride[0] = c->s1;
    s->start[1] = c->l2 - 1;
    s->count[1] = (c->u2 - c->l2) / c->s2 + 1;
    s->stride[1] = c->s2;
}

/* ROMIO independent access with the section as file view. */
static int romio_rw(const char *path, const passion_section *s, void *buf,
                    int op_write)
{
    static const int64_t extent[2] = {ROWS, COLS};
    static const int order[2] = {1, 0}; /* column-major: dim 1 slowest */
    MPI_Datatype ft;
    MPI_Offset disp;
    bench_section_filetype(2, extent, order, 4, 0, s, &ft, &disp);
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR, MPI_INFO_NULL,
                           &fh);
    if (rc == MPI_SUCCESS) {
        MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native", MPI_INFO_NULL);
        int n = (int)(s->count[0] * s->count[1] * 4);
        MPI_Status st;
        rc = op_write ? MPI_File_write(fh, buf, n, MPI_BYTE, &st)
                      : MPI_File_read(fh, buf, n, MPI_BYTE, &st);
        MPI_File_close(&fh);
    }
    MPI_Type_free(&ft);
    return rc == MPI_SUCCESS ? 0 : -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_args a;
    if (bench_args_parse(&a, argc, argv)) {
        if (a.rank == 0)
            fprintf(stderr, "usage: bench-sieve --csv F --regime warm|cold\n");
        MPI_Finalize();
        return 2;
    }
    bench_peer_labels(&a, methods, (int)(sizeof methods / sizeof *methods));
    int reps = a.reps ? a.reps : (a.cold ? 3 : 5);
    if (a.quick)
        reps = 2;

    passion_ctx *ctx; /* budget: a slab of 16 columns */
    if (bench_init(&ctx, "memory_budget=%d", 16 * ROWS * 4)) {
        MPI_Finalize();
        return 1;
    }
    int64_t shape[2] = {ROWS, (int64_t)COLS * a.size};
    passion_array_spec spec;
    passion_array_spec_init(&spec, 2, shape, 4);
    spec.storage = PASSION_COL_MAJOR;
    spec.grid[0] = 1;
    spec.grid[1] = a.size;
    spec.dist[0] = PASSION_DIST_COLLAPSED;
    passion_array *arr;
    passion_file *f;
    char pat[512];
    snprintf(pat, sizeof pat, "%s/sieve.%%d.laf", a.scratch);
    int rc = passion_array_create(ctx, &spec, &arr);
    if (!rc)
        rc = passion_file_open(arr, pat, PASSION_MODE_CREATE, &f);
    if (rc) {
        if (a.rank == 0)
            fprintf(stderr, "setup: %s: %s\n", passion_strerror(rc),
                    passion_ctx_errdetail(ctx));
        MPI_Finalize();
        return 1;
    }
    const int64_t n = (int64_t)ROWS * COLS;
    uint32_t *orig = malloc(n * 4), *whole = malloc(n * 4),
             *buf = malloc(n * 4);
    for (int64_t i = 0; i < n; i++)
        orig[i] = val(a.rank, i, 0);
    passion_file_write_local(f, orig);
    passion_file_sync(f);
    char path[600];
    snprintf(path, sizeof path, "%s", passion_file_path(f));

    FILE *csv = bench_csv_open(&a,
        "case,method,op,procs,ranks,regime,seconds,io_calls,bytes_read,"
        "bytes_written,elements_read,thesis_requests,thesis_elements,"
        "peak_rss_kib,check");
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const struct tcase *c = &cases[ci];
        passion_section s;
        section_of(c, &s);
        int64_t ne = s.count[0] * s.count[1];
        for (int op = 0; op < 2; op++) {
            for (int mi = 0; mi < 4; mi++) {
                bench_progress(&a, "sieve P=%d %s %s %s %s", a.size, a.regime,
                               c->name, op ? "write" : "read", methods[mi]);
                double t[16];
                passion_counters cnt;
                uint32_t salt = (uint32_t)(ci * 8 + mi + 1);
                for (int i = 0; i < ne; i++) {
                    int64_t r = s.start[0] + (i % s.count[0]) * s.stride[0];
                    int64_t col = s.start[1] + (i / s.count[0]) * s.stride[1];
                    buf[i] = op ? val(a.rank, col * ROWS + r, salt) : 0;
                }
                int err = 0;
                for (int r = 0; r < reps; r++) {
                    if (a.cold)
                        passion_file_drop_cache(f);
                    passion_counters_reset(ctx);
                    MPI_Barrier(MPI_COMM_WORLD);
                    double t0 = MPI_Wtime();
                    int e;
                    if (method_ids[mi] < 0)
                        e = romio_rw(path, &s, buf, op);
                    else if (op)
                        e = passion_file_write(f, &s, buf, NULL,
                                                  method_ids[mi]);
                    else
                        e = passion_file_read(f, &s, buf, NULL,
                                                 method_ids[mi]);
                    if (op)
                        passion_file_sync(f);
                    t[r] = bench_max_time(MPI_Wtime() - t0);
                    passion_counters_get(ctx, &cnt);
                    err |= e != 0;
                }
                /* check: reads against the values, writes by reading back */
                int bad = err;
                if (op)
                    passion_file_read_local(f, whole);
                for (int64_t i = 0; i < ne && !bad; i++) {
                    int64_t r = s.start[0] + (i % s.count[0]) * s.stride[0];
                    int64_t col = s.start[1] + (i / s.count[0]) * s.stride[1];
                    uint32_t want = val(a.rank, col * ROWS + r, op ? salt : 0);
                    bad = (op ? whole[col * ROWS + r] : buf[i]) != want;
                    if (op)
                        whole[col * ROWS + r] = orig[col * ROWS + r];
                }
                if (op) {
                    bad |= memcmp(whole, orig, n * 4) != 0; /* rest intact */
                    passion_file_write_local(f, orig);
                    passion_file_sync(f);
                }
                int allbad = 0;
                MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_LOR,
                              MPI_COMM_WORLD);
                long rss = bench_peak_rss_kib(), maxrss = 0;
                MPI_Reduce(&rss, &maxrss, 1, MPI_LONG, MPI_MAX, 0,
                           MPI_COMM_WORLD);
                if (csv) {
                    int romio = method_ids[mi] < 0;
                    long treq = 0, tel = 0;
                    if (mi == 0) {
                        treq = c->direct_requests;
                        tel = c->direct_elems;
                    } else if (mi == 1) {
                        treq = c->sieve_requests * (op ? 2 : 1);
                        tel = c->sieve_elems * (op ? 2 : 1);
                    }
                    fprintf(csv, "%s,%s,%s,%d,%s,%s,%.6g,", c->name,
                            methods[mi], op ? "write" : "read", a.size,
                            a.ranks_note, a.regime, bench_median(t, reps));
                    if (romio)
                        fprintf(csv, ",,,,");
                    else
                        fprintf(csv, "%llu,%llu,%llu,%llu,",
                                (unsigned long long)cnt.io_calls,
                                (unsigned long long)cnt.bytes_read,
                                (unsigned long long)cnt.bytes_written,
                                (unsigned long long)(cnt.bytes_read / 4));
                    if (treq)
                        fprintf(csv, "%ld,%ld,", treq, tel);
                    else
                        fprintf(csv, ",,");
                    fprintf(csv, "%ld,%s\n", maxrss, allbad ? "FAIL" : "ok");
                    fflush(csv);
                }
            }
        }
    }
    bench_progress(&a, "sieve P=%d %s done\n", a.size, a.regime);
    if (csv && csv != stdout)
        fclose(csv);
    passion_file_close(f);
    passion_array_free(arr);
    passion_finalize(ctx);
    free(orig);
    free(whole);
    free(buf);
    MPI_Finalize();
    return 0;
}
