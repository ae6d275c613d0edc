/*
 * bench_etp.c - suites `etp` (thesis tables 6.1-6.6: 4096 x 4096 4-byte
 * elements, column-major) and `etp-large` (table 6.8: 16384 x 16384, a
 * 1 GiB file; built from bench_etp_large.c): collective section access to
 * one global array file.
 *
 * Methods: direct (every rank its own runs), etp-static, etp-dynamic,
 * passion (= auto, the default a user gets: planner measure) and
 * passion-estimate (auto with planner=estimate, the cost model alone),
 * each auto in a context of its own (column planner), and ROMIO in the
 * same run:
 * romio-coll (MPI_File_read_all / write_all with the section as file view,
 * default hints), romio-coll-tuned (cb_config_list=*:*, cb_nodes=P,
 * romio_cb_read/write=enable), romio-indep (romio_cb_read/write=disable,
 * MPI_File_read / write: ROMIO's data sieving), and HDF5 (bench_hdf5.c):
 * hdf5-coll and hdf5-indep, the section as a hyperslab of a contiguous
 * dataset with H5FD_MPIO_COLLECTIVE / INDEPENDENT transfer. The file is
 * an HDF5 file whose one dataset (shape reversed: the array is
 * column-major) holds the global array; passion and ROMIO access the same
 * bytes as a raw array after a header of the dataset's offset, so all
 * methods move the very same bytes (without HDF5 in the build: a plain
 * raw file, the HDF5 rows say skipped). The timed region is the call
 * (plus MPI_File_set_view for ROMIO, the hyperslab selection for HDF5,
 * which is how their users state the section; plus a sync of the file for
 * writes in the cold regime); the file handles are opened outside it.
 *
 * Memory-limited regime (--regime memlimit --memlimit BYTES, set by
 * bench/run, which runs the program inside a memory control group of that
 * limit): cold, and the array is the smallest N x N (N a multiple of 1024,
 * at least the suite's own N) of at least 8 times the limit.
 *
 * Sections are the thesis's formulas (1-based l:u:s, p = rank, nprocs = P)
 * evaluated at each rank for the P of the run (the thesis had P = 16).
 * Every read is compared with the file's known values; after every write
 * method rank 0 scans the whole file (each section holds its writer's
 * values, everything else the original), then the sections are restored.
 *
 * Repetitions: a method's repetitions run back to back; the auto methods
 * at least BENCH_AUTO_REPS of them (the planner measures on the first
 * calls of a signature; stopped after 60 s unless --reps is given, their
 * steady columns then left empty); first_s is the first call's time,
 * steady_s the median of the last half (steady_min_s, steady_p90_s its
 * spread), load the 1-minute load average when the row was written,
 * steady_chosen the method an auto method ran in its last call.
 *
 * peak_rss_kib: the largest peak resident set over ranks during the
 * method's repetitions (VmHWM, reset before each method through
 * /proc/self/clear_refs after malloc_trim); base_rss_kib: the largest
 * resident set at that reset, so peak - base is what the method added;
 * peak_staging: passion's own staging memory beyond the user's buffers
 * (its counter, largest over ranks).
 */
#include "bench_hdf5.h"
#include "bench_thesis.h"
#include "bench_util.h"

#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef BENCH_ETP_LARGE
#define SUITE "etp-large"
#define N_FULL 16384
#else
#define SUITE "etp"
#define N_FULL 4096
#endif

/* The thesis's cases (bench_thesis.c) */
#ifdef BENCH_ETP_LARGE
#define CASES bench_thesis_large
#define NCASES bench_thesis_nlarge
#else
#define CASES bench_thesis_cases
#define NCASES bench_thesis_ncases
#endif


enum { M_DIRECT, M_STATIC, M_DYNAMIC, M_PASSION, M_PEST, M_RCOLL,
       M_RTUNED, M_RINDEP, M_H5COLL, M_H5INDEP, NMETH };
static const char *mnames[NMETH] = {"direct", "etp-static", "etp-dynamic",
                                    "passion", "passion-estimate",
                                    "romio-coll", "romio-coll-tuned",
                                    "romio-indep", "hdf5-coll",
                                    "hdf5-indep"};
/* passion's method, or -1 for ROMIO, -2 for HDF5 */
static const int mids[NMETH] = {PASSION_METHOD_DIRECT,
                                PASSION_METHOD_ETP_STATIC,
                                PASSION_METHOD_ETP_DYNAMIC,
                                PASSION_METHOD_AUTO, PASSION_METHOD_AUTO,
                                -1, -1, -1, -2, -2};
/* the context a passion method runs in: 0 the fixed methods', 1 auto's
   with planner measure, 2 planner estimate */
static int ctx_index(int m)
{
    return m == M_PASSION ? 1 : m == M_PEST ? 2 : 0;
}

#define TMAX 64 /* repetitions at most */

static int64_t N;     /* rows = columns */
static int64_t DATA0; /* byte offset of the array in the file (the HDF5
                         dataset's data) */

/* ---- ROMIO ---- */

/* the MPI-IO peer m's file: romio-coll the default hints, tuned
   collective buffering on every rank, indep none */
static MPI_File romio_open(const char *path, int m, int P)
{
    return bench_romio_open(path, m == M_RCOLL    ? BENCH_ROMIO_DEFAULT
                                  : m == M_RTUNED ? BENCH_ROMIO_TUNED
                                                  : BENCH_ROMIO_NOCB, P);
}

/* is name one of the comma-separated names of list? */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *q = list; q; q = strchr(q, ',') ? strchr(q, ',') + 1
                                                       : NULL)
        if (!strncmp(q, name, n) && (q[n] == ',' || q[n] == '\0'))
            return 1;
    return 0;
}

static int romio_access(MPI_File fh, int m, const passion_section *s,
                        void *buf, int op_write)
{
    const int64_t extent[2] = {N, N};
    const int order[2] = {1, 0}; /* column-major: columns slowest */
    MPI_Datatype ft;
    MPI_Offset disp;
    bench_section_filetype(2, extent, order, 4, DATA0, s, &ft, &disp);
    int rc = MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native",
                               MPI_INFO_NULL);
    int n = (int)(passion_section_elems(s, 2) * 4);
    MPI_Status st;
    if (rc == MPI_SUCCESS) {
        if (m == M_RINDEP)
            rc = op_write ? MPI_File_write(fh, buf, n, MPI_BYTE, &st)
                          : MPI_File_read(fh, buf, n, MPI_BYTE, &st);
        else
            rc = op_write ? MPI_File_write_all(fh, buf, n, MPI_BYTE, &st)
                          : MPI_File_read_all(fh, buf, n, MPI_BYTE, &st);
    }
    MPI_Type_free(&ft);
    return rc == MPI_SUCCESS ? 0 : -1;
}

/* HDF5: the section as a hyperslab of the dataset (dimension 0 of the
   dataset is the array's columns) */
static int hdf5_access(bench_h5 *h, int m, const passion_section *s,
                       void *buf, int op_write)
{
    int64_t st[2] = {s->start[1], s->start[0]},
            ct[2] = {s->count[1], s->count[0]},
            sd[2] = {s->stride[1], s->stride[0]};
    return bench_h5_access(h, m == M_H5COLL, op_write, 2, st, ct, sd, buf);
}

static void sync_path(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        fdatasync(fd);
        close(fd);
    }
}

/*
 * Rank 0: the file against the model (after a write method): the whole
 * array up to 4096 x 4096, beyond that (the memory-limited regime's large
 * arrays) the columns of the sections' union and 64 on either side.
 */
static int scan_file(const char *path, const passion_section *all, int P,
                     uint32_t salt)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 1;
    int64_t colbytes = N * 4, cols_per = (64 << 20) / colbytes;
    if (cols_per < 1)
        cols_per = 1;
    int64_t cbeg = 0, cend = N;
    if (N > 4096) {
        cbeg = N, cend = 0;
        for (int q = 0; q < P; q++) {
            const passion_section *s = &all[q];
            if (!s->count[0] || !s->count[1])
                continue;
            int64_t lo = s->start[1],
                    hi = s->start[1] + (s->count[1] - 1) * s->stride[1] + 1;
            cbeg = lo < cbeg ? lo : cbeg;
            cend = hi > cend ? hi : cend;
        }
        cbeg = cbeg > 64 ? cbeg - 64 : 0;
        cend = cend + 64 < N ? cend + 64 : N;
    }
    uint32_t *b = malloc((size_t)(cols_per * colbytes));
    int bad = 0;
    for (int64_t c0 = cbeg; c0 < cend && !bad; c0 += cols_per) {
        int64_t nc = cend - c0 < cols_per ? cend - c0 : cols_per;
        if (pread(fd, b, (size_t)(nc * colbytes), DATA0 + c0 * colbytes) !=
            (ssize_t)(nc * colbytes)) {
            bad = 1;
            break;
        }
        for (int64_t c = c0; c < c0 + nc && !bad; c++)
            for (int64_t r = 0; r < N; r++) {
                uint32_t want = bench_thesis_orig(N, r, c);
                /* highest rank wins where sections overlap */
                for (int q = P - 1; q >= 0; q--) {
                    const passion_section *s = &all[q];
                    int64_t dr = r - s->start[0], dc = c - s->start[1];
                    if (s->count[0] && s->count[1] && dr >= 0 && dc >= 0 &&
                        dr % s->stride[0] == 0 && dc % s->stride[1] == 0 &&
                        dr / s->stride[0] < s->count[0] &&
                        dc / s->stride[1] < s->count[1]) {
                        want = bench_thesis_wval(N, r, c, salt);
                        break;
                    }
                }
                if (b[(c - c0) * N + r] != want) {
                    bad = 1;
                    break;
                }
            }
    }
    free(b);
    close(fd);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_args a;
    if (bench_args_parse(&a, argc, argv)) {
        if (a.rank == 0)
            fprintf(stderr, "usage: bench-" SUITE
                            " --csv F --regime warm|cold\n");
        MPI_Finalize();
        return 2;
    }
    bench_peer_labels(&a, mnames, NMETH);
    N = a.quick ? 1024 : N_FULL;
    const int memlim = bench_memlimit_min_bytes(&a) > 0;
    for (int64_t mb = bench_memlimit_min_bytes(&a); N * N * 4 < mb;)
        N += 1024;
    /* --case NAME[,NAME...] and --method NAME[,NAME...] restrict the run
       (for experiments) */
    const char *only_case = NULL, *only_method = NULL;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--case"))
            only_case = argv[i + 1];
        if (!strcmp(argv[i], "--method"))
            only_method = argv[i + 1];
    }
    const int P = a.size;
    /* the fixed methods' context, and auto's two (see ctx_index) */
    passion_ctx *cx[3] = {NULL, NULL, NULL};
    if (bench_init(&cx[0], "%s", "") ||
        bench_init_planner(&cx[1], "measure", "%s", "") ||
        bench_init_planner(&cx[2], "estimate", "%s", "")) {
        MPI_Finalize();
        return 1;
    }
    passion_ctx *ctx = cx[0];
    int64_t shape[2] = {N, N};
    passion_array_spec spec;
    passion_array_spec_init(&spec, 2, shape, 4);
    spec.storage = PASSION_COL_MAJOR;
    spec.placement = PASSION_PLACE_GLOBAL;
    passion_array *ax[3] = {NULL, NULL, NULL};
    passion_file *fx[3] = {NULL, NULL, NULL};
    char path[600];
    /* the HDF5 file's dataset holds the array (see the top) */
    int have_h5 = bench_h5_available(), rc = 0, mode = PASSION_MODE_CREATE;
    snprintf(path, sizeof path, "%s/" SUITE "-%d.%s", a.scratch, P,
             have_h5 ? "h5" : "raw");
    if (have_h5) {
        int64_t dims[2] = {N, N};
        rc = bench_h5_create(MPI_COMM_WORLD, path, 2, dims, 4, &DATA0);
        spec.header_bytes = DATA0;
        mode = PASSION_MODE_RDWR;
        if (rc && a.rank == 0)
            fprintf(stderr, "setup: HDF5 file %s not created\n", path);
    }
    /* the file in every context (made by the first) */
    for (int k = 0; k < 3 && !rc; k++) {
        rc = passion_array_create(cx[k], &spec, &ax[k]);
        if (!rc)
            rc = passion_file_open(ax[k], path, k ? PASSION_MODE_RDWR : mode,
                                   &fx[k]);
    }
    passion_file *f = fx[0];
    if (rc) {
        if (a.rank == 0 && rc < 0)
            fprintf(stderr, "setup: %s: %s\n", passion_strerror(rc),
                    passion_ctx_errdetail(ctx));
        MPI_Finalize();
        return 1;
    }
    /* fill: each rank a block of columns (a failure shows in the
       checks) */
    {
        bench_thesis_fill(f, N, a.rank, P);
        MPI_Barrier(MPI_COMM_WORLD);
        if (a.rank == 0)
            sync_path(path);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    FILE *csv = bench_csv_open(&a,
        "case,method,op,procs,ranks,regime,seconds,min_seconds,io_calls,"
        "bytes_read,"
        "bytes_written,messages,peak_rss_kib,base_rss_kib,peak_staging,reps,"
        "section,"
        "check,first_s,steady_s,steady_min_s,steady_p90_s,planner,load,"
        "steady_chosen");
    passion_section *all = malloc(sizeof *all * (size_t)P);
    /* first use: message calibration of `auto` and (cold) the file
       costs it measures on uncached data, outside any timing (in every
       context: each measures its own) */
    for (int k = 0; k < 3; k++)
        bench_first_use(&a, ax[k], fx[k], path);
    if (a.rank == 0)
        fprintf(stderr, SUITE ": auto runs twice, planner=%s (passion) and "
                "planner=%s (passion-estimate), each in its own context, "
                "at least %d calls a case (the others: the suite's reps); "
                "steady = median of the last half of the calls\n",
                bench_planner(cx[1]), bench_planner(cx[2]),
                BENCH_AUTO_REPS);
    for (int ci = 0; ci < NCASES; ci++) {
        const bench_tcase *c = &CASES[ci];
        if (only_case && !listed(only_case, c->name))
            continue;
        int op_write = !strcmp(c->op, "write");
        for (int q = 0; q < P; q++)
            bench_thesis_section(c->sec, q, P, N, &all[q]);
        passion_section *s = &all[a.rank];
        int64_t ne = passion_section_elems(s, 2);
        uint32_t *buf = malloc((size_t)(ne > 0 ? ne : 1) * 4);
        int64_t total_elems = 0, total_runs = 0;
        for (int q = 0; q < P; q++) {
            int64_t e = passion_section_elems(&all[q], 2);
            total_elems += e;
            /* contiguous runs: a column's rows are one run at stride 1 */
            total_runs += all[q].stride[0] == 1 && e ? all[q].count[1] : e;
        }
        for (int m = 0; m < NMETH; m++) {
            if (only_method && !listed(only_method, mnames[m]))
                continue;
            /* the thesis's direct method on element-wise sections of the
               whole array is millions of 4-byte requests (210 s in table
               6.5): skipped beyond 2^20 requests to keep the suite short */
            if (m == M_DIRECT && total_runs > (1 << 20) && !a.reps) {
                if (csv)
                    fprintf(csv, "%s,%s,%s,%d,%s,%s,,,,,,,,,,0,\"%s\","
                            "skipped (%lld requests),,,,,,,\n", c->name,
                            mnames[m],
                            c->op, P, a.ranks_note, a.regime, c->sec,
                            (long long)total_runs);
                continue;
            }
            /* HDF5's independent transfer makes one MPI-IO request per
               contiguous run, like direct: skipped beyond 2^20 of them
               (6.5-I took 115 s at P=2) */
            const char *why = NULL;
            char whyb[96];
            if (mids[m] == -2 && !have_h5)
                why = "skipped (no HDF5 in this build)";
            else if (m == M_H5INDEP && total_runs > (1 << 20) && !a.reps) {
                snprintf(whyb, sizeof whyb, "skipped (%lld requests)",
                         (long long)total_runs);
                why = whyb;
            } else if (memlim && (m == M_RCOLL || m == M_RTUNED ||
                                  m == M_H5COLL ||
                                  (m == M_RINDEP && op_write)) &&
                       total_runs * 128 > a.memlimit / 2) {
                /* ROMIO's collective path keeps offset/length lists of
                   16 bytes per run, several copies: 0.5 GB per rank on
                   6.5-I, beyond the control group's limit; so does its
                   independent strided write (6.6-I, 8.4 million runs at
                   P = 2 in the 256 MiB group: the run was OOM-killed
                   there; its strided reads of 6.5-I ran) */
                snprintf(whyb, sizeof whyb, "skipped (%lld runs: offset "
                         "lists beyond the memory limit)",
                         (long long)total_runs);
                why = whyb;
            }
            if (why) {
                if (csv)
                    fprintf(csv, "%s,%s,%s,%d,%s,%s,,,,,,,,,,0,\"%s\","
                            "%s,,,,,,,\n", c->name, mnames[m], c->op, P,
                            a.ranks_note, a.regime, c->sec, why);
                continue;
            }
            bench_progress(&a, SUITE " P=%d %s %s %s %s", P, a.regime,
                           c->name, c->op, mnames[m]);
            /* repetitions: the short cases (at most 2^20 elements, no
               long direct run) 7 warm / 5 cold, whose times are a few
               milliseconds and vary most; fewer for the rest, and for the
               long runs (direct on element-wise sections, big sections at
               P > 2) */
            int small = total_elems <= (1 << 20) &&
                        !(m == M_DIRECT && total_runs > (1 << 16));
            int reps = a.reps ? a.reps : small ? (a.cold ? 5 : 7)
                                               : (a.cold ? 2 : 3);
            if (!a.reps && !small &&
                (P > 2 || total_elems > (4 << 20) ||
                 (m == M_DIRECT && total_runs > (1 << 18))))
                reps = a.cold ? 1 : 2;
            /* quick: 2, so that a steady window (the last half) is not
               the first call */
            if (a.quick)
                reps = 2;
            if (reps > 8)
                reps = 8;
            /* auto: enough calls for the planner to decide before the
               steady window (the last half) */
            const int is_auto = mids[m] == PASSION_METHOD_AUTO;
            if (is_auto)
                reps = bench_auto_reps(reps);
            if (reps > TMAX)
                reps = TMAX;
            passion_ctx *mc = cx[ctx_index(m)];
            passion_file *mf = fx[ctx_index(m)];
            uint32_t salt = (uint32_t)(ci * 16 + m + 1);
            if (op_write)
                for (int64_t i = 0; i < ne; i++) {
                    int64_t r = s->start[0] + (i % s->count[0]) * s->stride[0];
                    int64_t col = s->start[1] + (i / s->count[0]) * s->stride[1];
                    buf[i] = bench_thesis_wval(N, r, col, salt);
                }
            MPI_File fh = MPI_FILE_NULL;
            bench_h5 *h5 = NULL;
            if (mids[m] == -1)
                fh = romio_open(path, m, P);
            int err = 0;
            if (mids[m] == -2)
                err = bench_h5_open(MPI_COMM_WORLD, path, &h5) != 0;
            bench_rss_reset();
            long base = bench_rss_peak_kib(), maxbase = 0;
            MPI_Reduce(&base, &maxbase, 1, MPI_LONG, MPI_MAX, 0,
                       MPI_COMM_WORLD);
            double t[TMAX], spent = 0;
            passion_counters cnt;
            memset(&cnt, 0, sizeof cnt);
            for (int r = 0; r < reps; r++) {
                /* a method whose first call took more than 5 s is not
                   repeated (its time is far from any noise); auto's
                   calls stop after 60 s (its steady columns then
                   empty) */
                if (!a.reps && ((!is_auto && r == 1 && t[0] > 5.0) ||
                                (is_auto && spent > 60.0))) {
                    reps = r;
                    break;
                }
                if (!op_write)
                    memset(buf, 0, (size_t)(ne > 0 ? ne : 1) * 4);
                MPI_Barrier(MPI_COMM_WORLD);
                if (a.cold && a.rank == 0)
                    bench_drop_cache_path(path);
                passion_counters_reset(mc);
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                int e;
                if (mids[m] == -1)
                    e = romio_access(fh, m, s, buf, op_write);
                else if (mids[m] == -2)
                    e = h5 ? hdf5_access(h5, m, s, buf, op_write) : -1;
                else if (op_write)
                    e = passion_file_write_all(mf, s, buf, NULL, mids[m]);
                else
                    e = passion_file_read_all(mf, s, buf, NULL, mids[m]);
                if (op_write && a.cold) {
                    MPI_Barrier(MPI_COMM_WORLD);
                    if (a.rank == 0)
                        sync_path(path);
                }
                t[r] = bench_max_time(MPI_Wtime() - t0);
                spent += t[r];
                passion_counters_get(mc, &cnt);
                err |= e != 0;
            }
            if (fh != MPI_FILE_NULL)
                MPI_File_close(&fh);
            bench_h5_close(h5);
            /* what auto ran last (a rank that moved nothing has none:
               the largest id over ranks) */
            int last = 0, lastmax = 0;
            if (is_auto) {
                passion_method pm = PASSION_METHOD_AUTO;
                passion_ctx_last_method(mc, &pm, NULL);
                last = pm;
            }
            MPI_Allreduce(&last, &lastmax, 1, MPI_INT, MPI_MAX,
                          MPI_COMM_WORLD);
            long rss = bench_rss_peak_kib(), maxrss = 0;
            MPI_Reduce(&rss, &maxrss, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
            /* check */
            int bad = err;
            if (!op_write) {
                for (int64_t i = 0; i < ne && !bad; i++) {
                    int64_t r = s->start[0] + (i % s->count[0]) * s->stride[0];
                    int64_t col = s->start[1] + (i / s->count[0]) * s->stride[1];
                    bad = buf[i] != bench_thesis_orig(N, r, col);
                }
            } else {
                MPI_Barrier(MPI_COMM_WORLD);
                if (a.rank == 0)
                    bad |= scan_file(path, all, P, salt);
                /* nobody restores before rank 0 has scanned: a collective
                   write need not wait for the other ranks before writing
                   (passion's direct write writes before its agreement,
                   as ROMIO's independent path may), and rank 1's restore
                   landed inside rank 0's scan: 14 of 20 runs of 6.4-I
                   FAILed under load, the data right in the file after
                   every write (read back by each rank at once) */
                MPI_Barrier(MPI_COMM_WORLD);
                /* restore the sections' original values */
                for (int64_t i = 0; i < ne; i++) {
                    int64_t r = s->start[0] + (i % s->count[0]) * s->stride[0];
                    int64_t col = s->start[1] + (i / s->count[0]) * s->stride[1];
                    buf[i] = bench_thesis_orig(N, r, col);
                }
                passion_file_write_all(f, s, buf, NULL,
                                          PASSION_METHOD_AUTO);
            }
            int allbad = 0;
            MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
            unsigned long long mine[5] = {cnt.io_calls, cnt.bytes_read,
                                          cnt.bytes_written,
                                          cnt.messages_sent, 0},
                               sum[5];
            MPI_Reduce(mine, sum, 4, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0,
                       MPI_COMM_WORLD);
            unsigned long long stg = cnt.peak_staging, maxstg = 0;
            MPI_Reduce(&stg, &maxstg, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0,
                       MPI_COMM_WORLD);
            if (csv) {
                double tmin = t[0];
                for (int r = 1; r < reps; r++)
                    tmin = t[r] < tmin ? t[r] : tmin;
                bench_steady sy;
                bench_steady_of(t, reps, &sy); /* before the median sorts */
                fprintf(csv, "%s,%s,%s,%d,%s,%s,%.6g,%.6g,", c->name,
                        mnames[m], c->op, P, a.ranks_note, a.regime,
                        bench_median(t, reps), tmin);
                if (mids[m] < 0)
                    fprintf(csv, ",,,,%ld,%ld,,", maxrss, maxbase);
                else
                    fprintf(csv, "%llu,%llu,%llu,%llu,%ld,%ld,%llu,", sum[0],
                            sum[1], sum[2], sum[3], maxrss, maxbase, maxstg);
                fprintf(csv, "%d,\"%s\",%s,", reps, c->sec,
                        allbad ? "FAIL" : "ok");
                bench_steady_csv(csv, &sy,
                                 !is_auto || reps >= BENCH_AUTO_REPS);
                static const char *mn[] = {"", "direct", "sieve",
                                           "etp-static", "etp-dynamic"};
                fprintf(csv, ",%s,%.2f,%s\n", is_auto ? bench_planner(mc) : "",
                        bench_load(),
                        is_auto && lastmax >= PASSION_METHOD_DIRECT &&
                                lastmax <= PASSION_METHOD_ETP_DYNAMIC
                            ? mn[lastmax]
                            : "");
                fflush(csv);
            }
        }
        free(buf);
    }
    bench_progress(&a, SUITE " P=%d %s done\n", P, a.regime);
    if (csv && csv != stdout)
        fclose(csv);
    free(all);
    for (int k = 2; k >= 0; k--) {
        passion_file_close(fx[k]);
        passion_array_free(ax[k]);
        passion_finalize(cx[k]);
    }
    if (a.rank == 0)
        unlink(path);
    MPI_Finalize();
    return 0;
}
