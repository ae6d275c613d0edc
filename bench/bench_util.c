/* bench_util.c - see bench_util.h. */
#include "bench_util.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static const char *mpiio_detect(const char *scratch);

int bench_args_parse(bench_args *a, int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    a->regime = "warm";
    a->scratch = "/tmp";
    MPI_Comm_rank(MPI_COMM_WORLD, &a->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &a->size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv") && i + 1 < argc)
            a->csv = argv[++i];
        else if (!strcmp(argv[i], "--regime") && i + 1 < argc)
            a->regime = argv[++i];
        else if (!strcmp(argv[i], "--scratch") && i + 1 < argc)
            a->scratch = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            a->reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick"))
            a->quick = 1;
        else if (!strcmp(argv[i], "--memlimit") && i + 1 < argc)
            a->memlimit = strtoll(argv[++i], NULL, 10);
    }
    if (strcmp(a->regime, "warm") && strcmp(a->regime, "cold") &&
        strcmp(a->regime, "memlimit"))
        return -1;
    if (!strcmp(a->regime, "memlimit") && a->memlimit <= 0)
        return -1;
    a->cold = strcmp(a->regime, "warm") != 0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    a->ranks_note = a->size > cpus ? "oversubscribed" : "dedicated";
    a->mpiio = mpiio_detect(a->scratch);
    if (a->rank == 0)
        fprintf(stderr, "MPI: %s; the MPI-IO peers (%s-*) run on %s\n",
                passion_mpi_build(), a->mpiio[0] == 'R' ? "romio" : "ompio",
                a->mpiio);
    return 0;
}

/* The MPI-IO implementation this run uses, found at run time: rank 0
   opens a scratch file on MPI_COMM_SELF with no hints and looks at the
   hints the file reports: MPICH's ROMIO reports its romio_* defaults.
   Open MPI (4.1) reports only the hints given, with OMPIO and with its
   romio321 component alike, so there the io component selected for this
   run decides (OMPI_MCA_io, which `mpiexec --mca io romio321` also sets;
   OMPIO unless it names romio). The library's version string decides
   when the file cannot be opened. Collective over the world. */
static const char *mpiio_detect(const char *scratch)
{
    int rank, kind = 0; /* 1 ROMIO, 2 OMPIO */
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s/.bench-mpiio-%ld", scratch,
                 (long)getpid());
        MPI_File fh;
        if (MPI_File_open(MPI_COMM_SELF, path,
                          MPI_MODE_CREATE | MPI_MODE_RDWR |
                              MPI_MODE_DELETE_ON_CLOSE,
                          MPI_INFO_NULL, &fh) == MPI_SUCCESS) {
            MPI_Info info;
            int nkeys = 0;
            kind = 2;
            if (MPI_File_get_info(fh, &info) == MPI_SUCCESS) {
                MPI_Info_get_nkeys(info, &nkeys);
                for (int k = 0; k < nkeys; k++) {
                    char key[MPI_MAX_INFO_KEY + 1];
                    MPI_Info_get_nthkey(info, k, key);
                    if (!strncmp(key, "romio_", 6))
                        kind = 1;
                }
                MPI_Info_free(&info);
            }
            MPI_File_close(&fh);
            unlink(path); /* if DELETE_ON_CLOSE was not honoured */
            char v[MPI_MAX_LIBRARY_VERSION_STRING];
            int len = 0;
            const char *io = getenv("OMPI_MCA_io");
            MPI_Get_library_version(v, &len);
            if (kind == 2 && strstr(v, "Open MPI") && io &&
                strstr(io, "romio") && !strchr(io, '^'))
                kind = 1;
        } else {
            char v[MPI_MAX_LIBRARY_VERSION_STRING];
            int len = 0;
            MPI_Get_library_version(v, &len);
            kind = strstr(v, "Open MPI") ? 2 : 1;
        }
    }
    MPI_Bcast(&kind, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return kind == 1 ? "ROMIO" : "OMPIO";
}

void bench_peer_labels(const bench_args *a, const char **names, int n)
{
    static char pool[32][48];
    static int used;
    if (a->mpiio[0] == 'R')
        return;
    for (int i = 0; i < n; i++) {
        if (strncmp(names[i], "romio-", 6) || used == 32)
            continue;
        snprintf(pool[used], sizeof pool[used], "ompio-%s", names[i] + 6);
        names[i] = pool[used++];
    }
}

int64_t bench_memlimit_min_bytes(const bench_args *a)
{
    return strcmp(a->regime, "memlimit") ? 0 : 8 * a->memlimit;
}

FILE *bench_csv_open(const bench_args *a, const char *header)
{
    if (a->rank != 0)
        return NULL;
    FILE *f = a->csv ? fopen(a->csv, "a") : stdout;
    if (!f)
        return NULL;
    if (f != stdout) {
        fseek(f, 0, SEEK_END);
        if (ftell(f) == 0)
            fprintf(f, "%s\n", header);
    } else {
        fprintf(f, "%s\n", header);
    }
    return f;
}

long bench_peak_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

void bench_rss_reset(void)
{
    malloc_trim(0); /* freed heap back to the system: a fair baseline */
    int fd = open("/proc/self/clear_refs", O_WRONLY);
    if (fd >= 0) {
        if (write(fd, "5", 1) < 0) {
            /* older kernels: the peak stays cumulative */
        }
        close(fd);
    }
}

long bench_rss_peak_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6))
            kib = atol(line + 6);
    if (f)
        fclose(f);
    return kib >= 0 ? kib : bench_peak_rss_kib();
}

int bench_drop_cache_path(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -errno;
    fdatasync(fd);
    int e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    return -e;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

uint64_t bench_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

double bench_median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int bench_init(passion_ctx **ctx, const char *fmt, ...)
{
    char list[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(list, sizeof list, fmt, ap);
    va_end(ap);
    *ctx = NULL;
    passion_options *o;
    int rc = passion_options_create(&o);
    if (!rc && list[0] && (rc = passion_options_parse(o, list)))
        fprintf(stderr, "options '%s': %s\n", list,
                passion_options_errdetail(o));
    if (!rc)
        rc = passion_init(MPI_COMM_WORLD, o, ctx);
    passion_options_free(o);
    return rc;
}

double bench_max_time(double t)
{
    double m = t;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

int bench_section_filetype(int nd, const int64_t *extent, const int *order,
                           int64_t esize, int64_t base,
                           const passion_section *s, MPI_Datatype *type,
                           MPI_Offset *disp)
{
    int64_t fs[PASSION_MAX_DIMS];
    fs[nd - 1] = esize;
    for (int k = nd - 2; k >= 0; k--)
        fs[k] = fs[k + 1] * extent[order[k + 1]];
    MPI_Datatype t;
    MPI_Type_contiguous((int)esize, MPI_BYTE, &t);
    int empty = 0;
    *disp = base;
    for (int k = nd - 1; k >= 0; k--) {
        int d = order[k];
        if (s->count[d] == 0)
            empty = 1;
        *disp += s->start[d] * fs[k];
        MPI_Datatype v;
        MPI_Type_create_hvector((int)s->count[d], 1,
                                (MPI_Aint)(s->stride[d] * fs[k]), t, &v);
        MPI_Type_free(&t);
        t = v;
    }
    if (empty) {
        MPI_Type_free(&t);
        MPI_Type_contiguous(0, MPI_BYTE, &t);
    }
    MPI_Type_commit(&t);
    *type = t;
    return 0;
}

MPI_File bench_romio_open(const char *path, int hints, int nodes)
{
    MPI_Info info = MPI_INFO_NULL;
    if (hints != BENCH_ROMIO_DEFAULT) {
        MPI_Info_create(&info);
        if (hints == BENCH_ROMIO_TUNED) {
            char n[16];
            snprintf(n, sizeof n, "%d", nodes);
            MPI_Info_set(info, "cb_config_list", "*:*");
            MPI_Info_set(info, "cb_nodes", n);
            MPI_Info_set(info, "romio_cb_read", "enable");
            MPI_Info_set(info, "romio_cb_write", "enable");
        } else {
            MPI_Info_set(info, "romio_cb_read", "disable");
            MPI_Info_set(info, "romio_cb_write", "disable");
        }
    }
    MPI_File fh = MPI_FILE_NULL;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, info, &fh);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    return fh;
}

void bench_first_use(const bench_args *a, const passion_array *pa,
                     passion_file *f, const char *path)
{
    /* cold: up to 4 elements a dimension, spread over the whole array:
       an extent the page-cache probe looks at (a single element's is
       not, and calibrated nothing), few bytes. Warm: one element, once
       (only the message calibration is first-use there; the spread
       reads on a cached file taught auto a request cost of 0.31 ms and
       the independent class its 1 ms fixed-cost cap, and auto then wrote
       patterns c001-c003 direct, 830-6,375 requests, 9-10x slower than
       sieving them) */
    const passion_array_spec *sp = passion_array_get_spec(pa);
    int64_t ct[PASSION_MAX_DIMS], sd[PASSION_MAX_DIMS], n = 1;
    for (int d = 0; d < sp->ndims; d++) {
        ct[d] = !a->cold ? 1 : sp->shape[d] < 4 ? sp->shape[d] : 4;
        sd[d] = sp->shape[d] / ct[d];
        n *= ct[d];
    }
    passion_section s;
    passion_section_set(&s, sp->ndims, NULL, ct, sd);
    void *v = malloc((size_t)(n * sp->elem_size));
    for (int k = 0; k < (a->cold ? BENCH_FIRST_READS : 1) && v; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (a->cold && a->rank == 0)
            bench_drop_cache_path(path);
        MPI_Barrier(MPI_COMM_WORLD);
        passion_file_read_all(f, &s, v, NULL, PASSION_METHOD_AUTO);
    }
    free(v);
}

void bench_progress(const bench_args *a, const char *fmt, ...)
{
    if (a->rank != 0)
        return;
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (isatty(2))
        fprintf(stderr, "\r\033[K%s", line);
    else
        fprintf(stderr, "%s\n", line);
}

double bench_load(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

int bench_init_planner(passion_ctx **ctx, const char *mode,
                       const char *fmt, ...)
{
    char list[448];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(list, sizeof list, fmt, ap);
    va_end(ap);
    return bench_init(ctx, "%s%splanner=%s", list, list[0] ? "," : "",
                      mode);
}

const char *bench_planner(const passion_ctx *ctx)
{
    static char buf[4][32];
    static int k;
    char *b = buf[k++ & 3];
    if (passion_ctx_option_get(ctx, "planner", b, sizeof buf[0]))
        b[0] = '\0';
    return b;
}

int bench_auto_reps(int reps)
{
    return reps > BENCH_AUTO_REPS ? reps : BENCH_AUTO_REPS;
}

void bench_steady_of(const double *t, int n, bench_steady *s)
{
    memset(s, 0, sizeof *s);
    if (n <= 0)
        return;
    int w0 = n / 2, w = n - w0;
    double *v = malloc((size_t)w * sizeof *v);
    if (!v)
        return;
    memcpy(v, t + w0, (size_t)w * sizeof *v);
    s->first = t[0];
    s->window = w;
    s->steady = bench_median(v, w); /* sorts v */
    s->steady_min = v[0];
    int k = (9 * w + 9) / 10; /* nearest rank: ceil(0.9 w) */
    s->steady_p90 = v[(k > 0 ? k : 1) - 1];
    free(v);
}

void bench_steady_csv(FILE *csv, const bench_steady *s, int steady)
{
    if (s->window <= 0)
        fprintf(csv, ",,,");
    else if (!steady)
        fprintf(csv, "%.6g,,,", s->first);
    else
        fprintf(csv, "%.6g,%.6g,%.6g,%.6g", s->first, s->steady,
                s->steady_min, s->steady_p90);
}
