/*
 * apps.h - passion's out-of-core applications (prefix app_), written on the
 * public API only, as a user of passion would write them: the Jacobi
 * solver for Laplace's equation (thesis figure 5.3) and the median filter
 * (thesis 5.5.2). The CLI demo, the tests and the benchmarks call them.
 *
 * Both work on local array files (LPM): the caller creates the array and
 * opens the files, the application iterates slab by slab with prefetch,
 * reuse and out-of-core shift. Every call is collective over the files'
 * context and returns 0 or a negative PASSION_E* code, the same on every
 * rank.
 */
#ifndef PASSION_APPS_H
#define PASSION_APPS_H

#include "passion.h"

/* Called on every rank after each slab / sweep; fraction in [0, 1]. */
typedef void (*app_progress_fn)(void *arg, const char *phase,
                                double fraction);

/* What a run did, reduced over ranks (max of times, sum of bytes). */
typedef struct app_report {
    double seconds;        /* wall time of the run */
    double t_io_wait;      /* time blocked on I/O (max over ranks) */
    double t_compute;      /* time in the kernel (max over ranks) */
    uint64_t bytes_read, bytes_written, reuse_bytes, prefetch_hits;
    uint64_t io_calls;
    int iterations;        /* Jacobi sweeps done */
    double residual;       /* Jacobi: max |change| of the last sweep */
    int64_t slabs;         /* slabs per sweep (max over ranks) */
    uint64_t sweep_bytes_read; /* Jacobi: bytes read by the slab sweeps
                                  alone (shifts excluded), summed */
} app_report;

/* ---- Jacobi (jacobi.c) ---- */

/* Jacobi options: defaults from app_jacobi_opts_init. */
typedef struct app_jacobi_opts {
    int max_iter;        /* sweeps at most (default 10) */
    double tol;          /* stop when max |change| < tol; 0 = run max_iter */
    int prefetch, reuse; /* slab iterator switches (default 1, 1) */
    int64_t slab_width;  /* 0 = from the budget */
    int64_t budget;      /* bytes for slab buffers; 0 = memory_budget */
    int io_only;         /* benchmark: skip the kernel (I/O alone) */
    app_progress_fn progress;
    void *progress_arg;
} app_jacobi_opts;

void app_jacobi_opts_init(app_jacobi_opts *o);

/*
 * Solve on the local array files B (initial values; the global array's
 * border is the fixed boundary) and A (scratch, same array), 2-D, float64,
 * any processor grid with BLOCK distributions and ghost width 1 where the
 * grid has more than one rank (column-block: grid 1 x P; (block, block)).
 * Each sweep: out-of-core shift of B's ghosts, one slab sweep B -> A
 * (figure 5.3: A(i,j) = (B(i,j-1) + B(i,j+1) + B(i+1,j) + B(i-1,j)) / 4 on
 * the interior), then A and B swap roles. *result is the file holding the
 * last iterate (A or B). Collective.
 */
int app_jacobi_local(passion_ctx *ctx, passion_array *arr,
                     passion_file *B, passion_file *A,
                     const app_jacobi_opts *o, passion_file **result,
                     app_report *rep);

/*
 * The same solver on global array files (one file each, global placement),
 * processed in partitions that fit the aggregate memory (PIM, thesis
 * 5.3.2) with the next partition prefetched. Collective.
 */
int app_jacobi_global(passion_ctx *ctx, passion_array *arr,
                      passion_file *B, passion_file *A,
                      const app_jacobi_opts *o, passion_file **result,
                      app_report *rep);

/* In-core reference on a whole n0 x n1 array (row-major, float64). */
void app_jacobi_reference(double *b, double *a, int64_t n0, int64_t n1,
                          int max_iter, double tol, int *iters,
                          double *residual, double **result);

/* ---- median filter (median.c) ---- */

enum app_pixel { APP_PIXEL_U8 = 1, APP_PIXEL_U16 = 2, APP_PIXEL_F32 = 4 };

typedef struct app_median_opts {
    int window;          /* odd: 3, 5, ... (default 3) */
    int pixel;           /* enum app_pixel (default U8) */
    int prefetch;        /* default 1 */
    int64_t slab_width;  /* 0 = from the budget */
    int64_t budget;      /* bytes for slab buffers; 0 = memory_budget */
    int io_only;         /* benchmark: skip the kernel (I/O alone) */
    app_progress_fn progress;
    void *progress_arg;
} app_median_opts;

void app_median_opts_init(app_median_opts *o);

/*
 * Median filter of the image in `in` into `out`: 2-D, distributed by
 * columns (grid 1 x P, BLOCK, ghost window/2 in dimension 1), pixels of
 * the size given by `pixel`; out-of-core shift fills the ghost columns of
 * `in` (which must be writable), then a slab sweep with prefetch computes
 * every pixel as the median of its window, the image replicated at its
 * edges. Collective.
 */
int app_median_local(passion_ctx *ctx, passion_array *arr,
                     passion_file *in, passion_file *out,
                     const app_median_opts *o, app_report *rep);

/* In-core reference on a whole h x w image (row-major). */
void app_median_reference(const void *in, void *out, int64_t h, int64_t w,
                          int window, int pixel);

/* ---- shared (report.c) ---- */

/* Fill rep from the counters difference and the times, over ranks. */
void app_report_finish(passion_ctx *ctx, const passion_counters *before,
                       double t0, double t_compute, app_report *rep);

#endif
