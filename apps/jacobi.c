/*
 * jacobi.c - out-of-core Jacobi solver for Laplace's equation, thesis
 * figure 5.3 (and 5.5.3 for reuse): on local array files, each sweep
 * exchanges B's ghost cells by out-of-core shift, then walks B slab by slab
 * (prefetching the next slab, reusing the two shared columns, writing A's
 * slab back asynchronously) computing
 *     A(i,j) = (B(i,j-1) + B(i,j+1) + B(i+1,j) + B(i-1,j)) / 4
 * on the interior of the global array; border cells are copied. A and B
 * then swap roles (the figure's B = A without the copy).
 *
 * Invariants: the arithmetic and its order are those of
 * app_jacobi_reference, so results agree bit for bit; every rank takes
 * part in every shift and reduction even after a local failure.
 */
#include "apps.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void app_jacobi_opts_init(app_jacobi_opts *o)
{
    memset(o, 0, sizeof *o);
    o->max_iter = 10;
    o->prefetch = 1;
    o->reuse = 1;
}

/* A block of cells to update: where it sits in the buffer and globally. */
typedef struct kgeom {
    const double *in;
    double *out;
    int64_t st0, st1;  /* element strides of dimensions 0 and 1 */
    int64_t b[2];      /* buffer position of the first cell */
    int64_t n[2];      /* cells per dimension */
    int64_t g[2];      /* global index of the first cell */
    int64_t N0, N1;    /* global shape */
    int col_major;
} kgeom;

/* Interior cells from in to out; returns max |change|. */
static double kernel(const kgeom *k)
{
    const double *in = k->in;
    double *out = k->out;
    int64_t st0 = k->st0, st1 = k->st1;
    double dmax = 0;
    /* outer loop over the slower storage dimension */
    int outer = k->col_major ? 1 : 0, inner = 1 - outer;
    for (int64_t a = 0; a < k->n[outer]; a++)
        for (int64_t b = 0; b < k->n[inner]; b++) {
            int64_t l[2];
            l[outer] = a;
            l[inner] = b;
            int64_t p = (k->b[0] + l[0]) * st0 + (k->b[1] + l[1]) * st1;
            int64_t gi = k->g[0] + l[0], gj = k->g[1] + l[1];
            if (gi == 0 || gj == 0 || gi == k->N0 - 1 || gj == k->N1 - 1) {
                out[p] = in[p];
                continue;
            }
            double v = (in[p - st1] + in[p + st1] + in[p + st0] +
                        in[p - st0]) / 4;
            double d = fabs(v - in[p]);
            if (d > dmax)
                dmax = d;
            out[p] = v;
        }
    return dmax;
}

/*
 * Update one block of n[d] cells per dimension from global index g[d],
 * held in `in` / `out` laid out as `m` (its first cell at m->offset).
 * Adds the kernel's time to *tcomp; returns the largest change.
 */
static double block_update(const void *in, void *out, const passion_memspec *m,
                           const int64_t *n, const int64_t *g,
                           const passion_array_spec *sp, double *tcomp)
{
    kgeom k;
    k.in = in;
    k.out = out;
    k.col_major = sp->order[0] == 1;
    k.st0 = k.col_major ? 1 : m->shape[1];
    k.st1 = k.col_major ? m->shape[0] : 1;
    for (int d = 0; d < 2; d++) {
        k.b[d] = m->offset[d];
        k.n[d] = n[d];
        k.g[d] = g[d];
    }
    k.N0 = sp->shape[0];
    k.N1 = sp->shape[1];
    double tk = MPI_Wtime();
    double change = kernel(&k);
    *tcomp += MPI_Wtime() - tk;
    return change;
}

int app_jacobi_local(passion_ctx *ctx, passion_array *arr, passion_file *B,
                     passion_file *A, const app_jacobi_opts *opt,
                     passion_file **result, app_report *rep)
{
    app_jacobi_opts defo;
    if (!opt) {
        app_jacobi_opts_init(&defo);
        opt = &defo;
    }
    memset(rep, 0, sizeof *rep);
    MPI_Comm comm = passion_ctx_comm(ctx);
    int rank;
    MPI_Comm_rank(comm, &rank);
    const passion_array_spec *sp = passion_array_get_spec(arr);
    int64_t lo[2], hi[2], nl[2];
    passion_array_local_bounds(arr, rank, 0, lo, hi);
    passion_array_local_shape(arr, rank, nl);
    int rc = PASSION_OK;
    if (sp->ndims != 2 || sp->elem_size != 8)
        rc = PASSION_EINVAL;
    passion_counters before;
    passion_counters_get(ctx, &before);
    double t0 = MPI_Wtime(), tcomp = 0;
    unsigned long long sweep_read = 0, sweep_sum = 0;
    *result = B;
    for (int it = 0; it < opt->max_iter; it++) {
        for (int d = 0; d < 2 && !rc; d++)
            if (sp->grid[d] > 1 && sp->ghost[d] > 0)
                rc = passion_file_shift_all(B, d, 0, 0, 1);
        if (rc)
            break; /* shift is collective: all ranks got the same rc */
        passion_slab_opts so;
        passion_slab_opts_init(&so);
        so.prefetch = opt->prefetch;
        so.reuse = opt->reuse;
        so.width = opt->slab_width;
        so.budget = opt->budget;
        so.halo = 1;
        so.out = A;
        passion_slab_iter *si = NULL;
        passion_counters c0, c1;
        passion_counters_get(ctx, &c0);
        int lrc = passion_slab_open(B, &so, &si);
        double dmax = 0;
        passion_slab s;
        int got;
        while (!lrc && (got = passion_slab_next(si, &s)) == 1) {
            if (!opt->io_only) {
                int64_t n[2], g[2];
                for (int d = 0; d < 2; d++) {
                    n[d] = d == s.dim ? s.count : nl[d];
                    g[d] = lo[d] + (d == s.dim ? s.start : 0);
                }
                double ch = block_update(s.in, s.out, &s.mem, n, g, sp, &tcomp);
                if (ch > dmax)
                    dmax = ch;
            }
            rep->slabs = s.nslabs;
            if (opt->progress)
                opt->progress(opt->progress_arg, "jacobi",
                              (it + (double)(s.index + 1) / s.nslabs) /
                                  opt->max_iter);
        }
        if (!lrc && got < 0)
            lrc = got;
        int erc = passion_slab_close(si);
        if (!lrc)
            lrc = erc;
        passion_counters_get(ctx, &c1);
        sweep_read += c1.bytes_read - c0.bytes_read;
        /* agree on errors and the residual in one reduction */
        double v[2] = {dmax, lrc ? -(double)lrc : 0}, r[2];
        MPI_Allreduce(v, r, 2, MPI_DOUBLE, MPI_MAX, comm);
        if (r[1] > 0) {
            rc = -(int)r[1];
            break;
        }
        rep->iterations = it + 1;
        rep->residual = r[0];
        passion_file *t = A;
        A = B;
        B = t;
        *result = B;
        if (opt->tol > 0 && r[0] < opt->tol)
            break;
    }
    app_report_finish(ctx, &before, t0, tcomp, rep);
    MPI_Allreduce(&sweep_read, &sweep_sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                  comm);
    rep->sweep_bytes_read = sweep_sum;
    return rc;
}

int app_jacobi_global(passion_ctx *ctx, passion_array *arr, passion_file *B,
                      passion_file *A, const app_jacobi_opts *opt,
                      passion_file **result, app_report *rep)
{
    app_jacobi_opts defo;
    if (!opt) {
        app_jacobi_opts_init(&defo);
        opt = &defo;
    }
    memset(rep, 0, sizeof *rep);
    MPI_Comm comm = passion_ctx_comm(ctx);
    const passion_array_spec *sp = passion_array_get_spec(arr);
    int rc = PASSION_OK;
    passion_counters before;
    passion_counters_get(ctx, &before);
    double t0 = MPI_Wtime(), tcomp = 0;
    *result = B;
    for (int it = 0; it < opt->max_iter && !rc; it++) {
        passion_part_opts po;
        passion_part_opts_init(&po);
        po.halo = 1;
        po.prefetch = opt->prefetch;
        po.width = opt->slab_width;
        po.budget = opt->budget;
        po.out = A;
        passion_part_iter *pi = NULL;
        rc = passion_part_open(B, &po, &pi); /* collective */
        double dmax = 0;
        passion_part p;
        int got = 0;
        while (!rc && (got = passion_part_next_all(pi, &p)) == 1) {
            if (!opt->io_only && p.count[0] > 0 && p.count[1] > 0) {
                double ch = block_update(p.in, p.out, &p.mem, p.count, p.lo,
                                         sp, &tcomp);
                if (ch > dmax)
                    dmax = ch;
            }
            rep->slabs = p.nparts;
            if (opt->progress)
                opt->progress(opt->progress_arg, "jacobi",
                              (it + (double)(p.index + 1) / p.nparts) /
                                  opt->max_iter);
        }
        if (!rc && got < 0)
            rc = got; /* passion_part_next_all is collective: agreed */
        int erc = pi ? passion_part_close_all(pi) : PASSION_OK;
        if (!rc)
            rc = erc;
        if (rc)
            break;
        double r;
        MPI_Allreduce(&dmax, &r, 1, MPI_DOUBLE, MPI_MAX, comm);
        rep->iterations = it + 1;
        rep->residual = r;
        passion_file *t = A;
        A = B;
        B = t;
        *result = B;
        if (opt->tol > 0 && r < opt->tol)
            break;
    }
    app_report_finish(ctx, &before, t0, tcomp, rep);
    return rc;
}

void app_jacobi_reference(double *b, double *a, int64_t n0, int64_t n1,
                          int max_iter, double tol, int *iters,
                          double *residual, double **result)
{
    *iters = 0;
    *residual = 0;
    for (int it = 0; it < max_iter; it++) {
        double dmax = 0;
        for (int64_t i = 0; i < n0; i++)
            for (int64_t j = 0; j < n1; j++) {
                int64_t p = i * n1 + j;
                if (i == 0 || j == 0 || i == n0 - 1 || j == n1 - 1) {
                    a[p] = b[p];
                    continue;
                }
                double v = (b[p - 1] + b[p + 1] + b[p + n1] + b[p - n1]) / 4;
                double d = fabs(v - b[p]);
                if (d > dmax)
                    dmax = d;
                a[p] = v;
            }
        double *t = a;
        a = b;
        b = t;
        *iters = it + 1;
        *residual = dmax;
        if (tol > 0 && dmax < tol)
            break;
    }
    *result = b;
}
