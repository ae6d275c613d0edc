/*
 * bench_util.h - shared pieces of passion's benchmark programs (prefix
 * bench_): arguments, CSV output (rank 0 appends rows), regimes (cold =
 * drop the file's pages before each repetition), peak RSS, and ROMIO file
 * views of sections for the peer methods.
 *
 * Benchmarks are not tests: they assert nothing about time, but every
 * method checks its result, and a wrong result is reported in the row.
 */
#ifndef PASSION_BENCH_UTIL_H
#define PASSION_BENCH_UTIL_H

#include "passion.h"
#include <stdint.h>
#include <stdio.h>

typedef struct bench_args {
    const char *csv;     /* --csv FILE (rows appended by rank 0) */
    const char *regime;  /* --regime warm|cold|memlimit */
    const char *scratch; /* --scratch DIR for data files */
    int reps;            /* --reps N (0 = the suite's default) */
    int quick;           /* --quick: smaller sizes, fewer points */
    int cold;            /* regime cold or memlimit: pages dropped before
                            every repetition */
    int64_t memlimit;    /* --memlimit BYTES: the memory control group's
                            limit the run sits in (bench/run sets it with
                            --regime memlimit; required there) */
    int rank, size;
    const char *ranks_note; /* "dedicated" or "oversubscribed" */
    const char *mpiio;   /* the MPI-IO the MPI-IO peers run on, found at
                            run time (the hints an opened file reports):
                            "ROMIO" (MPICH, or Open MPI's romio component
                            chosen with OMPI_MCA_io) or "OMPIO" (Open MPI's
                            default); printed by bench_args_parse */
} bench_args;

/* Parse the common arguments; unknown ones are left to the caller.
   Collective over MPI_COMM_WORLD (rank 0 opens a file in the scratch
   directory to see which MPI-IO runs). */
int bench_args_parse(bench_args *a, int argc, char **argv);

/* The MPI-IO peers' method labels by the implementation in use: under
   OMPIO every name in names[0..n-1] that begins "romio-" becomes
   "ompio-..." (so a CSV never calls OMPIO ROMIO); unchanged under ROMIO. */
void bench_peer_labels(const bench_args *a, const char **names, int n);

/*
 * The smallest array size a suite uses in the memory-limited regime:
 * 8 times the control group's limit, so the page cache cannot hold it.
 * 0 in the other regimes.
 */
int64_t bench_memlimit_min_bytes(const bench_args *a);


/* Open the CSV (rank 0) and write the header if the file is new. */
FILE *bench_csv_open(const bench_args *a, const char *header);

/* Peak resident set of this process, KiB (getrusage). */
long bench_peak_rss_kib(void);

/* Reset the peak resident set (malloc_trim, then /proc/self/clear_refs
   "5") so that bench_rss_peak_kib measures from here; and read it (VmHWM,
   KiB; getrusage's cumulative peak where VmHWM is missing). */
void bench_rss_reset(void);
long bench_rss_peak_kib(void);

/* fdatasync + posix_fadvise(DONTNEED) on a path. 0 or -errno. */
int bench_drop_cache_path(const char *path);

/* Median of n doubles (sorts in place). */
double bench_median(double *v, int n);

/* The benchmarks' seeded random stream (splitmix64): the next value of
   the stream whose state is *s; the same seed gives the same stream on
   every rank. */
uint64_t bench_rand(uint64_t *s);

/*
 * A context on MPI_COMM_WORLD with the options of a printf-formatted
 * "key=value,..." list ("" = defaults). Collective; 0 or the code.
 */
int bench_init(passion_ctx **ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Maximum over ranks of a local time. Collective. */
double bench_max_time(double t);

/*
 * A ROMIO file view for a section of an array stored in a file: nested
 * hvectors in storage order (order[0] slowest) over an element of esize
 * bytes; *disp is the byte offset of the section's first element from
 * `base`. Empty sections give a zero-size type.
 */
int bench_section_filetype(int nd, const int64_t *extent, const int *order,
                           int64_t esize, int64_t base,
                           const passion_section *s, MPI_Datatype *type,
                           MPI_Offset *disp);

/*
 * Open path read-write on MPI_COMM_WORLD for an MPI-IO peer with the
 * hints `hints`: BENCH_ROMIO_DEFAULT none (the MPI-IO's own collective
 * buffering), BENCH_ROMIO_TUNED cb_config_list "*:*", cb_nodes `nodes`
 * and collective buffering enabled for reads and writes,
 * BENCH_ROMIO_NOCB collective buffering disabled. MPI_FILE_NULL if the
 * open fails. Collective.
 */
enum { BENCH_ROMIO_DEFAULT, BENCH_ROMIO_TUNED, BENCH_ROMIO_NOCB };
MPI_File bench_romio_open(const char *path, int hints, int nodes);

/*
 * Before a suite's timed calls on the file f of array pa at path: in a
 * cold regime its pages dropped (rank 0, between barriers), then an auto
 * read_all of a few elements spread over the array, BENCH_FIRST_READS
 * times (auto measures the file's costs on its first uncached calls, up
 * to three readings); warm, one element once; so that auto's first-use measurements (message
 * calibration, the file's costs) fall outside every timing. Before, one
 * element was read: an extent the page-cache probe does not look at, so
 * no file costs were measured there and the first cases' timed auto
 * calls carried the readings. Collective.
 */
#define BENCH_FIRST_READS 3
void bench_first_use(const bench_args *a, const passion_array *pa,
                     passion_file *f, const char *path);

/*
 * auto under the planner (collective/planner/planner.h). The suites run
 * method auto twice, each in a context of its own (no other method's
 * calls reach its planner's records): `auto` with planner=measure (the
 * default; its first calls of a call signature try the candidates) and
 * `auto-estimate` with planner=estimate (the cost model alone).
 * BENCH_PLAN_CALLS: calls of one signature by which measure has decided
 * (at most 5 candidates x 3 trials, then the agreement). An auto method
 * runs at least BENCH_AUTO_REPS calls of a case, so that the steady
 * window (the last half) begins after them.
 */
#define BENCH_PLAN_CALLS 16
#define BENCH_AUTO_REPS (2 * BENCH_PLAN_CALLS)

/* A context as bench_init's, with planner=mode ("measure" or "estimate")
   added to the printf-formatted options. Collective; 0 or the code. */
int bench_init_planner(passion_ctx **ctx, const char *mode,
                       const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The planner mode ctx runs (its option planner, after PASSION_OPTIONS:
   what ran, whatever was asked), "" on error. */
const char *bench_planner(const passion_ctx *ctx);

/* The repetitions an auto method runs where the others run reps. */
int bench_auto_reps(int reps);

/*
 * A method's times of n calls in call order (the slowest rank's each):
 * first = call 0, steady = the median of the last half (calls n/2..n-1),
 * steady_min and steady_p90 (nearest rank) of that window. Nothing in t
 * is changed.
 */
typedef struct bench_steady {
    double first, steady, steady_min, steady_p90;
    int window; /* calls in the window, 0: no call */
} bench_steady;
void bench_steady_of(const double *t, int n, bench_steady *s);

/* The CSV fields first_s,steady_s,steady_min_s,steady_p90_s of s (no
   separator before or after; all empty when no call ran); the steady ones
   left empty when steady is 0 (an auto method that ran fewer than
   BENCH_AUTO_REPS calls: its window would hold the planner's trials). */
void bench_steady_csv(FILE *csv, const bench_steady *s, int steady);

/* 1-minute load average (other jobs on the machine skew times); -1 if
   unknown. */
double bench_load(void);

/* Print a progress line on stderr (rank 0), overwriting on a terminal. */
void bench_progress(const bench_args *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
