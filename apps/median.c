/*
 * median.c - out-of-core median filter, thesis 5.5.2 (tables 5.4, 5.5):
 * the image is distributed by columns into local array files with
 * window/2 ghost columns, filled by out-of-core shift; then a slab sweep
 * with prefetch computes each pixel's median over its window, the image
 * replicated at its edges, into the output file.
 *
 * The kernel runs a selection network on whole runs of rows at once, so
 * the compiler turns it into SIMD min/max: Batcher's odd-even merge sort
 * for the next power of two (wires past k*k hold +infinity, so their
 * comparators are no-ops and dropped), pruned backwards to what the median
 * wire depends on. A sorting network outputs the same multiset in order,
 * so the median is exactly the one app_median_reference gets by sorting.
 *
 * Invariants: each output pixel depends only on input pixels, so slabs
 * may be computed in any order; ghost columns past the image's edge are
 * never read (indices are clamped first).
 */
#include "apps.h"

#include <stdlib.h>
#include <string.h>

#define MED_MAXW 15  /* window at most 15 x 15 */
#define MED_RB 512   /* rows per block in the kernel */

void app_median_opts_init(app_median_opts *o)
{
    memset(o, 0, sizeof *o);
    o->window = 3;
    o->pixel = APP_PIXEL_U8;
    o->prefetch = 1;
}

/* One comparator: lo gets the min (if wanted), hi the max (if wanted). */
typedef struct cmpx {
    short lo, hi;
    char want_min, want_max;
} cmpx;

typedef struct network {
    int n, median, ncmp;
    cmpx *c;
} network;

static int net_build(network *net, int n)
{
    int N = 1;
    while (N < n)
        N <<= 1;
    int cap = 64, cnt = 0;
    cmpx *c = malloc(sizeof *c * (size_t)cap);
    if (!c)
        return -1;
    for (int p = 1; p < N; p <<= 1)
        for (int k = p; k >= 1; k >>= 1)
            for (int j = k % p; j + k < N; j += 2 * k)
                for (int i = 0; i < k && i + j + k < N; i++)
                    if ((i + j) / (2 * p) == (i + j + k) / (2 * p) &&
                        i + j + k < n) {
                        if (cnt == cap) {
                            cmpx *t = realloc(c, sizeof *c * (size_t)cap * 2);
                            if (!t) {
                                free(c);
                                return -1;
                            }
                            c = t;
                            cap *= 2;
                        }
                        c[cnt].lo = (short)(i + j);
                        c[cnt].hi = (short)(i + j + k);
                        cnt++;
                    }
    /* prune backwards from the median wire */
    char need[MED_MAXW * MED_MAXW + 1] = {0};
    int m = n / 2, w = 0;
    need[m] = 1;
    for (int t = cnt - 1; t >= 0; t--) {
        int lo = c[t].lo, hi = c[t].hi;
        c[t].want_min = need[lo];
        c[t].want_max = need[hi];
        if (need[lo] || need[hi])
            need[lo] = need[hi] = 1;
    }
    for (int t = 0; t < cnt; t++)
        if (c[t].want_min || c[t].want_max)
            c[w++] = c[t];
    net->n = n;
    net->median = m;
    net->ncmp = w;
    net->c = c;
    return 0;
}

/* Geometry of a slab for the kernel. */
typedef struct mgeom {
    int64_t h, w;        /* image shape */
    int64_t lo1;         /* global column of local column 0 */
    int64_t st0, st1;    /* element strides of rows and columns */
    int r;               /* window radius */
} mgeom;

/*
 * Floats are sorted as integer keys: flipping the sign bit of positives and
 * every bit of negatives maps IEEE order to unsigned order (-0 below +0,
 * NaNs at the ends), so the network runs on branch-free integer min/max and
 * the pixel's bits come back unchanged.
 */
static inline uint32_t f2key(uint32_t b)
{
    return b ^ ((uint32_t)((int32_t)b >> 31) | 0x80000000u);
}
static inline uint32_t key2f(uint32_t k)
{
    return k ^ (((k >> 31) - 1) | 0x80000000u);
}
#define ID(x) (x)

/* The kernel for one pixel type T, sorted as keys of type T too. */
#define MEDIAN_KERNEL(NAME, T, TOKEY, FROMKEY)                               \
    static void NAME(const passion_slab *s, const mgeom *g,                  \
                     const network *net, T *tmp)                             \
    {                                                                        \
        const T *in = s->in;                                                 \
        T *out = s->out;                                                     \
        int k = 2 * g->r + 1;                                                \
        int64_t off0 = s->mem.offset[0], off1 = s->mem.offset[1];            \
        for (int64_t j = s->start; j < s->start + s->count; j++) {           \
            int64_t bj = j - s->start + off1;                                \
            for (int64_t i0 = 0; i0 < g->h; i0 += MED_RB) {                  \
                int64_t nb = g->h - i0 < MED_RB ? g->h - i0 : MED_RB;        \
                int wi = 0;                                                  \
                for (int dc = -g->r; dc <= g->r; dc++) {                     \
                    int64_t gc = g->lo1 + j + dc;                            \
                    gc = gc < 0 ? 0 : gc >= g->w ? g->w - 1 : gc;            \
                    int64_t bc = gc - g->lo1 - s->start + off1;              \
                    const T *col = in + bc * g->st1;                         \
                    for (int dr = -g->r; dr <= g->r; dr++, wi++) {           \
                        T *d = tmp + (int64_t)wi * MED_RB;                   \
                        if (i0 + dr >= 0 && i0 + nb + dr <= g->h) {          \
                            const T *c0 = col + (i0 + dr + off0) * g->st0;   \
                            for (int64_t t = 0; t < nb; t++)                 \
                                d[t] = TOKEY(c0[t * g->st0]);                \
                            continue;                                        \
                        }                                                    \
                        for (int64_t t = 0; t < nb; t++) {                   \
                            int64_t gr = i0 + t + dr;                        \
                            gr = gr < 0 ? 0 : gr >= g->h ? g->h - 1 : gr;    \
                            d[t] = TOKEY(col[(gr + off0) * g->st0]);         \
                        }                                                    \
                    }                                                        \
                }                                                            \
                (void)k;                                                     \
                for (int c = 0; c < net->ncmp; c++) {                        \
                    T *a = tmp + (int64_t)net->c[c].lo * MED_RB;             \
                    T *b = tmp + (int64_t)net->c[c].hi * MED_RB;             \
                    if (net->c[c].want_min && net->c[c].want_max) {          \
                        for (int64_t t = 0; t < nb; t++) {                   \
                            T x = a[t], y = b[t];                            \
                            a[t] = y < x ? y : x;                            \
                            b[t] = y < x ? x : y;                            \
                        }                                                    \
                    } else if (net->c[c].want_min) {                         \
                        for (int64_t t = 0; t < nb; t++)                     \
                            a[t] = b[t] < a[t] ? b[t] : a[t];                \
                    } else {                                                 \
                        for (int64_t t = 0; t < nb; t++)                     \
                            b[t] = b[t] < a[t] ? a[t] : b[t];                \
                    }                                                        \
                }                                                            \
                const T *m = tmp + (int64_t)net->median * MED_RB;            \
                for (int64_t t = 0; t < nb; t++)                             \
                    out[(i0 + t + off0) * g->st0 + bj * g->st1] =            \
                        FROMKEY(m[t]);                                       \
            }                                                                \
        }                                                                    \
    }

MEDIAN_KERNEL(kernel_u8, uint8_t, ID, ID)
MEDIAN_KERNEL(kernel_u16, uint16_t, ID, ID)
MEDIAN_KERNEL(kernel_f32, uint32_t, f2key, key2f) /* float bits */

int app_median_local(passion_ctx *ctx, passion_array *arr, passion_file *in,
                     passion_file *out, const app_median_opts *opt,
                     app_report *rep)
{
    app_median_opts defo;
    if (!opt) {
        app_median_opts_init(&defo);
        opt = &defo;
    }
    memset(rep, 0, sizeof *rep);
    MPI_Comm comm = passion_ctx_comm(ctx);
    int rank;
    MPI_Comm_rank(comm, &rank);
    const passion_array_spec *sp = passion_array_get_spec(arr);
    int r = opt->window / 2;
    int rc = PASSION_OK;
    if (sp->ndims != 2 || opt->window < 1 || opt->window % 2 == 0 ||
        opt->window > MED_MAXW || sp->elem_size != opt->pixel ||
        sp->ghost[1] < r || sp->grid[0] != 1)
        rc = PASSION_EINVAL;
    network net = {0};
    if (!rc && net_build(&net, opt->window * opt->window))
        rc = PASSION_ENOMEM;
    void *tmp = rc ? NULL
                   : malloc((size_t)opt->window * opt->window * MED_RB * 4);
    if (!rc && !tmp)
        rc = PASSION_ENOMEM;
    /* agree before the collective shift */
    int agreed;
    MPI_Allreduce(&rc, &agreed, 1, MPI_INT, MPI_MIN, comm);
    rc = agreed;
    passion_counters before;
    passion_counters_get(ctx, &before);
    double t0 = MPI_Wtime(), tcomp = 0;
    if (!rc && r > 0 && sp->grid[1] > 1)
        rc = passion_file_shift_all(in, 1, 0, 0, r);
    if (!rc) {
        mgeom g;
        g.h = sp->shape[0];
        g.w = sp->shape[1];
        int64_t lo[2], hi[2];
        passion_array_local_bounds(arr, rank, 0, lo, hi);
        g.lo1 = lo[1];
        g.r = r;
        passion_slab_opts so;
        passion_slab_opts_init(&so);
        so.dim = 1;
        so.halo = r;
        so.prefetch = opt->prefetch;
        so.reuse = 1;
        so.width = opt->slab_width;
        so.budget = opt->budget;
        so.out = out;
        passion_slab_iter *si = NULL;
        int lrc = passion_slab_open(in, &so, &si), got = 0;
        passion_slab s;
        while (!lrc && (got = passion_slab_next(si, &s)) == 1) {
            int col_major = sp->order[0] == 1;
            g.st0 = col_major ? 1 : s.mem.shape[1];
            g.st1 = col_major ? s.mem.shape[0] : 1;
            if (!opt->io_only) {
                double tk = MPI_Wtime();
                if (opt->pixel == APP_PIXEL_U8)
                    kernel_u8(&s, &g, &net, tmp);
                else if (opt->pixel == APP_PIXEL_U16)
                    kernel_u16(&s, &g, &net, tmp);
                else
                    kernel_f32(&s, &g, &net, tmp);
                tcomp += MPI_Wtime() - tk;
            }
            rep->slabs = s.nslabs;
            if (opt->progress)
                opt->progress(opt->progress_arg, "median",
                              (double)(s.index + 1) / s.nslabs);
        }
        if (!lrc && got < 0)
            lrc = got;
        int erc = passion_slab_close(si);
        if (!lrc)
            lrc = erc;
        MPI_Allreduce(&lrc, &rc, 1, MPI_INT, MPI_MIN, comm);
    }
    free(tmp);
    free(net.c);
    app_report_finish(ctx, &before, t0, tcomp, rep);
    return rc;
}

/* ---- in-core reference: gather, sort, take the middle ---- */

static int cmp_u8(const void *a, const void *b)
{
    return (int)*(const uint8_t *)a - (int)*(const uint8_t *)b;
}
static int cmp_u16(const void *a, const void *b)
{
    return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}
static int cmp_f32(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

void app_median_reference(const void *in, void *out, int64_t h, int64_t w,
                          int window, int pixel)
{
    int r = window / 2, n = window * window;
    size_t es = (size_t)pixel;
    char v[MED_MAXW * MED_MAXW * 4];
    int (*cmp)(const void *, const void *) =
        pixel == APP_PIXEL_U8 ? cmp_u8 : pixel == APP_PIXEL_U16 ? cmp_u16
                                                                : cmp_f32;
    for (int64_t i = 0; i < h; i++)
        for (int64_t j = 0; j < w; j++) {
            int c = 0;
            for (int di = -r; di <= r; di++)
                for (int dj = -r; dj <= r; dj++) {
                    int64_t a = i + di, b = j + dj;
                    a = a < 0 ? 0 : a >= h ? h - 1 : a;
                    b = b < 0 ? 0 : b >= w ? w - 1 : b;
                    memcpy(v + es * (size_t)c++,
                           (const char *)in + es * (size_t)(a * w + b), es);
                }
            qsort(v, (size_t)n, es, cmp);
            memcpy((char *)out + es * (size_t)(i * w + j),
                   v + es * (size_t)(n / 2), es);
        }
}
