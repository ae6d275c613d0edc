/*
 * bench_patterns.c - suite `patterns`: passion on random access patterns
 * that are not the thesis's, against the best of five peer modes in the
 * same run.
 *
 * Cases are drawn from a fixed seed (--seed S, default below; printed and
 * written in every row; --cases N, default 200; --case c003,c042 runs
 * only those). Arrays: 1-4 dimensions,
 * row- or column-major, elements of 1-16 bytes, sizes log-uniform from
 * 16 KiB to 64 MiB, one array in ten from 256 MiB to 1 GiB. Five cases
 * share an array (its file is made once). Sections per rank, by kind:
 *   random   start/count/stride drawn per dimension and rank (overlap by
 *            chance);
 *   disjoint the ranks split one dimension, each a random section of its
 *            block;
 *   shared   one random section, the same or shifted a little per rank
 *            (overlapping);
 *   slices   planes and pencils: some dimensions fixed at a rank's index;
 *   tiles    block-cyclic tiles over one or two dimensions, each rank up to
 *            8 tiles, one collective call per tile (ranks with fewer tiles
 *            take part with nothing);
 *   cyclic   element-wise: start = rank, stride = P in a dimension.
 * Four cases in ten are writes. A rank's section is at most 32 MiB, its
 * file extent at most 256 MiB and 2^19 contiguous runs (counts are halved
 * until it fits: keeps ROMIO's offset lists and the run time in bounds).
 *
 * Modes, every one on every case: passion (auto: what a user gets, the
 * planner measuring), passion-estimate (auto with planner=estimate: the
 * cost model alone), each auto in a context of its own (its file opened
 * there too: no other mode's calls reach its planner's records),
 * passion's fixed methods direct, sieve, etp-static, etp-dynamic (what
 * auto could have chosen), and the peers romio-coll, romio-coll-tuned,
 * romio-indep (as in bench_etp.c) and hdf5-coll, hdf5-indep (hyperslabs of
 * a contiguous dataset, bench_hdf5.c). The array is the HDF5 file's
 * dataset; passion and ROMIO access the same bytes after a header of its
 * offset. Reads: repetitions are interleaved over the modes (repetition 1
 * of every mode, then repetition 2...); writes run a mode's repetitions
 * back to back, then the file is checked and restored. The modes' order
 * turns by one every case (and, for reads, every repetition): the mode
 * run first after a case's set-up (a written file's write-back, the cache
 * drop) was always passion's auto, which took 3-4 ms on cold reads of a
 * few hundred bytes in 3-5 cases a run where the peers took 0.1 ms. Direct and
 * hdf5-indep (one MPI-IO request per contiguous run) are skipped where a
 * rank has more than 2^18 runs (2^16 cold): millions of requests. A mode
 * whose first call takes more than 5 s is not repeated. The auto modes
 * run at least BENCH_AUTO_REPS calls (the planner measures on the first
 * calls of a signature; the other modes' repetitions done, they run
 * alone, in turn), stopped after 60 s unless --reps is given (their
 * steady columns then empty).
 *
 * Verification: the file's byte at data offset b holds f(b), a hash of b;
 * every read is compared with it; a write stores f(b) ^ mask(mode, rank)
 * and after a write mode every rank scans its share of the sections'
 * union (plus a page either side) for: the writer's value (where sections
 * overlap: the highest rank's for passion, any writer's for the peers,
 * whose overlapping writes MPI leaves undefined) and f(b) elsewhere.
 *
 * Regimes: warm, cold (fdatasync + POSIX_FADV_DONTNEED of the file before
 * every call), memlimit (cold, inside a memory control group of
 * --memlimit bytes that bench/run makes: every array is 8-10 times the
 * limit, two arrays of 100 cases each; a rank's section at most limit/16,
 * its extent at most limit/2, 2^17 runs, a write's union of sections
 * limit/16 (the check holds three bytes per byte of it); passion's memory
 * budget limit/8 shared by the ranks, limit/(8P) each, as in
 * bench_prefetch.c: with limit/8 per rank, the budgets, kept in the
 * contexts between calls, took 64 of the 256 MiB at P=2 (half the limit
 * at P=4), the ranks' memory reached 237 MiB of it, the page cache had
 * about 20 MiB left and one run of 40 cases was OOM-killed).
 *
 * CSV: one row per case and mode; `chosen` is what auto did
 * (passion_ctx_last_method after each call: direct, sieve, etp-static or
 * etp-dynamic; per rank and tile call, joined with + when ranks, tiles or
 * repetitions differ; a call in which a rank moved no data independently
 * adds nothing) and `predicted` the seconds its cost model predicted (the
 * first repetition's, summed over a case's tile calls; empty when no call
 * made a prediction).
 * first_s: the first call's time; steady_s: the median of the last half
 * of the calls, steady_min_s and steady_p90_s its spread; planner: the
 * auto modes' planner; load: the 1-minute load average at the row;
 * steady_chosen: what an auto mode ran in its last call (as chosen).
 * bench/table.py gives the distribution of passion / best peer.
 */
#include "bench_hdf5.h"
#include "bench_util.h"

#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXD 4
#define MAXTILES 8
#define DEFAULT_SEED 20261123ULL
#define CASES_PER_ARRAY 5

enum { M_AUTO, M_AUTO_EST, M_DIRECT, M_SIEVE, M_STATIC, M_DYNAMIC,
       M_RCOLL, M_RTUNED, M_RINDEP, M_H5COLL, M_H5INDEP, NMODES };
static const char *mnames[NMODES] = {
    "passion", "passion-estimate", "direct", "sieve", "etp-static",
    "etp-dynamic", "romio-coll", "romio-coll-tuned", "romio-indep",
    "hdf5-coll", "hdf5-indep"};
/* passion's method, -1 ROMIO, -2 HDF5 */
static const int mids[NMODES] = {
    PASSION_METHOD_AUTO, PASSION_METHOD_AUTO, PASSION_METHOD_DIRECT,
    PASSION_METHOD_SIEVE, PASSION_METHOD_ETP_STATIC,
    PASSION_METHOD_ETP_DYNAMIC, -1, -1, -1, -2, -2};
#define TMAX 64 /* calls of a mode in a case at most */
/* the context (and file) a passion mode runs in: 0 the fixed methods',
   1 auto's with planner measure, 2 planner estimate */
static int ctx_index(int m)
{
    return m == M_AUTO ? 1 : m == M_AUTO_EST ? 2 : 0;
}

/* ---------------------------------------------------------------- random */

static double runit(uint64_t *s)
{
    return (double)(bench_rand(s) >> 11) / 9007199254740992.0;
}

/* uniform in [lo, hi] */
static int64_t rrange(uint64_t *s, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    return lo + (int64_t)(bench_rand(s) % (uint64_t)(hi - lo + 1));
}

/* log-uniform in [lo, hi] */
static int64_t rlog(uint64_t *s, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    double v = exp(log((double)lo) +
                   runit(s) * (log((double)hi + 1) - log((double)lo)));
    int64_t r = (int64_t)v;
    return r < lo ? lo : r > hi ? hi : r;
}

/* ------------------------------------------------------ the file's bytes */

static inline uint64_t hword(uint64_t w)
{
    uint64_t z = (w + 1) * 0x9E3779B97F4A7C15ULL;
    z ^= z >> 31;
    z *= 0xBF58476D1CE4E5B9ULL;
    return z ^ (z >> 29);
}

/* out[0..n) = f(b0 .. b0+n-1): byte b&7 of hword(b >> 3) */
static void fbytes(int64_t b0, int64_t n, uint8_t *out)
{
    int64_t b = b0, i = 0;
    while (i < n && (b & 7)) {
        out[i++] = (uint8_t)(hword((uint64_t)b >> 3) >> (8 * (b & 7)));
        b++;
    }
    for (; i + 8 <= n; i += 8, b += 8) {
        uint64_t w = hword((uint64_t)b >> 3);
        memcpy(out + i, &w, 8); /* little-endian machine: byte k = bits 8k */
    }
    for (; i < n; i++, b++)
        out[i] = (uint8_t)(hword((uint64_t)b >> 3) >> (8 * (b & 7)));
}

static uint8_t wmask(int salt, int q)
{
    return (uint8_t)(((salt & 15) << 4) | ((q & 15) + 1));
}

/* ---------------------------------------------------------------- cases */

typedef struct parr {
    int nd, col;
    int64_t esize, shape[MAXD], bytes;
    int sd[MAXD];      /* storage order: sd[0] slowest */
    int64_t es[MAXD];  /* element stride of storage position k */
} parr;

typedef struct pcase {
    int arr, write, ntiles;
    const char *kind;
    passion_section *sec; /* [q * ntiles + t] */
} pcase;

static void arr_finish(parr *a)
{
    a->bytes = a->esize;
    for (int k = 0; k < a->nd; k++) {
        a->sd[k] = a->col ? a->nd - 1 - k : k;
        a->bytes *= a->shape[k];
    }
    a->es[a->nd - 1] = 1;
    for (int k = a->nd - 2; k >= 0; k--)
        a->es[k] = a->es[k + 1] * a->shape[a->sd[k + 1]];
}

static void arr_gen(parr *a, uint64_t seed, int j, int64_t minb, int64_t maxb)
{
    uint64_t s = seed ^ (0xA77A0000ULL + (uint64_t)j * 7919);
    bench_rand(&s);
    memset(a, 0, sizeof *a);
    a->nd = (int)rrange(&s, 1, 4);
    a->col = (int)(bench_rand(&s) & 1);
    static const int64_t pow2[5] = {1, 2, 4, 8, 16};
    a->esize = runit(&s) < 0.5 ? pow2[rrange(&s, 0, 4)] : rrange(&s, 1, 16);
    int64_t target = rlog(&s, minb, maxb);
    int64_t elems = target / a->esize;
    if (elems < 16)
        elems = 16;
    /* split log(elems) over the dimensions by random weights */
    double w[MAXD], sum = 0;
    for (int d = 0; d < a->nd; d++)
        sum += (w[d] = 0.3 + runit(&s));
    double rest = log((double)elems);
    for (int d = 0; d < a->nd; d++) {
        int64_t n = (int64_t)llround(exp(rest * w[d] / sum));
        a->shape[d] = n < 2 ? 2 : n;
    }
    arr_finish(a);
}

static int64_t sec_elems(const parr *a, const passion_section *s)
{
    return passion_section_elems(s, a->nd);
}

/* contiguous runs of a section */
static int64_t sec_runs(const parr *a, const passion_section *s)
{
    int64_t e = sec_elems(a, s);
    if (!e)
        return 0;
    int64_t run = 1;
    for (int k = a->nd - 1; k >= 0; k--) {
        int d = a->sd[k];
        if (s->stride[d] != 1 && s->count[d] > 1)
            break;
        run *= s->count[d];
        if (s->count[d] != a->shape[d])
            break;
    }
    return e / run;
}

/* first and one-past-last data byte of a section */
static void sec_extent(const parr *a, const passion_section *s, int64_t *lo,
                       int64_t *hi)
{
    int64_t l = 0, h = 0;
    for (int k = 0; k < a->nd; k++) {
        int d = a->sd[k];
        l += s->start[d] * a->es[k];
        h += (s->start[d] + (s->count[d] - 1) * s->stride[d]) * a->es[k];
    }
    *lo = l * a->esize;
    *hi = (h + 1) * a->esize;
}

static void gen_dim(uint64_t *s, int64_t n, int64_t *start, int64_t *count,
                    int64_t *stride)
{
    int64_t st = 1;
    if (n >= 4 && runit(s) < 0.5)
        st = rlog(s, 2, n / 2 < 64 ? n / 2 : 64);
    int64_t maxc = (n - 1) / st + 1;
    int64_t c = rlog(s, 1, maxc);
    *stride = st;
    *count = c;
    *start = rrange(s, 0, n - 1 - (c - 1) * st);
}

static void full_dim(int64_t n, int64_t *start, int64_t *count,
                     int64_t *stride)
{
    *start = 0, *count = n, *stride = 1;
}

/* shrink a rank's sections (all tiles) until within the caps */
static void fit(const parr *a, passion_section *t, int nt, int64_t cap_bytes,
                int64_t cap_ext, int64_t cap_runs)
{
    for (int iter = 0; iter < 200; iter++) {
        int64_t bytes = 0, runs = 0, ext = 0;
        for (int i = 0; i < nt; i++) {
            if (!sec_elems(a, &t[i]))
                continue;
            bytes += sec_elems(a, &t[i]) * a->esize;
            runs += sec_runs(a, &t[i]);
            int64_t lo, hi;
            sec_extent(a, &t[i], &lo, &hi);
            ext += hi - lo;
        }
        if (bytes <= cap_bytes && runs <= cap_runs && ext <= cap_ext)
            return;
        /* halve the count of the slowest storage dimension that has more
           than one index (extent), else the largest count */
        int pick = -1;
        if (ext > cap_ext || runs > cap_runs) {
            for (int k = 0; k < a->nd && pick < 0; k++)
                for (int i = 0; i < nt; i++)
                    if (t[i].count[a->sd[k]] > 1)
                        pick = a->sd[k];
        } else {
            int64_t best = 1;
            for (int d = 0; d < a->nd; d++)
                for (int i = 0; i < nt; i++)
                    if (t[i].count[d] > best)
                        best = t[i].count[d], pick = d;
        }
        if (pick < 0)
            return;
        for (int i = 0; i < nt; i++)
            if (t[i].count[pick] > 1)
                t[i].count[pick] = (t[i].count[pick] + 1) / 2;
    }
}

static const char *kinds[] = {"random", "disjoint", "shared", "slices",
                              "tiles", "cyclic"};

static void case_gen(pcase *c, const parr *a, uint64_t seed, int ci, int P,
                     int64_t cap_bytes, int64_t cap_ext, int64_t cap_runs,
                     int64_t cap_region)
{
    uint64_t s = seed ^ (0xCA5E0000ULL + (uint64_t)ci * 104729);
    bench_rand(&s);
    double u = runit(&s);
    int kind = u < 0.25 ? 0 : u < 0.45 ? 1 : u < 0.55 ? 2 : u < 0.70 ? 3
               : u < 0.90 ? 4 : 5;
    if (a->nd == 1 && kind == 3)
        kind = 0;
    c->kind = kinds[kind];
    c->write = runit(&s) < 0.4;
    const int nd = a->nd;
    c->ntiles = 1;
    passion_section base;
    memset(&base, 0, sizeof base);
    for (int d = 0; d < nd; d++)
        gen_dim(&s, a->shape[d], &base.start[d], &base.count[d],
                &base.stride[d]);
    /* tiles: sizes per tiled dimension */
    int tdim[2] = {-1, -1}, ntd = 0;
    int64_t tsz[2] = {1, 1}, tn[2] = {1, 1};
    if (kind == 4) {
        ntd = nd >= 2 && (bench_rand(&s) & 1) ? 2 : 1;
        tdim[0] = (int)rrange(&s, 0, nd - 1);
        if (ntd == 2)
            tdim[1] = (tdim[0] + 1 + (int)rrange(&s, 0, nd - 2)) % nd;
        for (int i = 0; i < ntd; i++) {
            int64_t n = a->shape[tdim[i]];
            tsz[i] = rlog(&s, 1, n / 2 > 1 ? n / 2 : 1);
            tn[i] = (n + tsz[i] - 1) / tsz[i];
        }
        c->ntiles = MAXTILES;
    }
    int fixdim = (int)rrange(&s, 0, nd - 1);
    int fastest = a->sd[nd - 1];
    c->sec = calloc((size_t)(P * c->ntiles), sizeof *c->sec);
    int64_t tstart = kind == 4 ? rrange(&s, 0, tn[0] * tn[1] - 1) : 0;
    for (int q = 0; q < P; q++) {
        passion_section *t = &c->sec[q * c->ntiles];
        for (int i = 0; i < c->ntiles; i++)
            for (int d = 0; d < nd; d++)
                t[i].stride[d] = 1;
        switch (kind) {
        case 0: /* random */
            for (int d = 0; d < nd; d++)
                gen_dim(&s, a->shape[d], &t->start[d], &t->count[d],
                        &t->stride[d]);
            break;
        case 1: { /* disjoint: split fixdim into P blocks */
            *t = base;
            int64_t n = a->shape[fixdim], b0 = n * q / P, b1 = n * (q + 1) / P;
            if (b1 > b0) {
                gen_dim(&s, b1 - b0, &t->start[fixdim], &t->count[fixdim],
                        &t->stride[fixdim]);
                t->start[fixdim] += b0;
            } else {
                t->count[fixdim] = 0;
            }
            break;
        }
        case 2: /* shared: the same section, maybe shifted */
            *t = base;
            if (bench_rand(&s) & 1)
                for (int d = 0; d < nd; d++) {
                    int64_t room = a->shape[d] - 1 - t->start[d] -
                                   (t->count[d] - 1) * t->stride[d];
                    t->start[d] += rrange(&s, 0, room < 3 ? room : 3);
                }
            break;
        case 3: { /* slices: fix 1..nd-1 dimensions at a rank's index */
            int nfix = (int)rrange(&s, 1, nd - 1);
            for (int d = 0; d < nd; d++) {
                int fixed = ((d - fixdim + nd) % nd) < nfix;
                if (fixed) {
                    t->start[d] = rrange(&s, 0, a->shape[d] - 1);
                    t->count[d] = 1;
                } else if (runit(&s) < 0.6) {
                    full_dim(a->shape[d], &t->start[d], &t->count[d],
                             &t->stride[d]);
                } else {
                    t->start[d] = base.start[d], t->count[d] = base.count[d],
                    t->stride[d] = base.stride[d];
                }
            }
            break;
        }
        case 4: { /* tiles: linear tile index L goes to rank L % P */
            int n = 0;
            for (int64_t L = tstart; L < tn[0] * tn[1] && n < MAXTILES; L++) {
                if (L % P != q)
                    continue;
                passion_section *x = &t[n++];
                for (int d = 0; d < nd; d++)
                    full_dim(a->shape[d], &x->start[d], &x->count[d],
                             &x->stride[d]);
                int64_t ti[2] = {L % tn[0], L / tn[0]};
                for (int i = 0; i < ntd; i++) {
                    int d = tdim[i];
                    x->start[d] = ti[i] * tsz[i];
                    x->count[d] = a->shape[d] - x->start[d] < tsz[i]
                                      ? a->shape[d] - x->start[d]
                                      : tsz[i];
                }
            }
            for (int i = n; i < MAXTILES; i++)
                t[i].count[0] = 0; /* takes part with nothing */
            break;
        }
        default: { /* cyclic: start = rank, stride = P */
            int d = runit(&s) < 0.7 ? fastest : fixdim;
            for (int e = 0; e < nd; e++)
                full_dim(a->shape[e], &t->start[e], &t->count[e],
                         &t->stride[e]);
            if (a->shape[d] > q) {
                t->start[d] = q;
                t->stride[d] = P;
                t->count[d] = (a->shape[d] - 1 - q) / P + 1;
            } else {
                t->count[d] = 0;
            }
            break;
        }
        }
        fit(a, t, c->ntiles, cap_bytes, cap_ext, cap_runs);
    }
    /* writes: the sections' union within cap_region (it is scanned) */
    if (c->write) {
        int64_t lo = INT64_MAX, hi = 0;
        for (int i = 0; i < P * c->ntiles; i++) {
            if (!sec_elems(a, &c->sec[i]))
                continue;
            int64_t l, h;
            sec_extent(a, &c->sec[i], &l, &h);
            lo = l < lo ? l : lo;
            hi = h > hi ? h : hi;
        }
        if (hi > lo && hi - lo > cap_region)
            c->write = 0;
    }
}

/* ------------------------------------------------------------ the walk */

typedef void (*run_fn)(void *ud, int64_t off, int64_t len, int64_t moff);

/* every contiguous run of s in packed (storage) order: data byte offset,
   length, offset in the packed buffer */
static void walk(const parr *a, const passion_section *s, run_fn fn, void *ud)
{
    const int nd = a->nd;
    if (!sec_elems(a, s))
        return;
    int inner = a->sd[nd - 1];
    int64_t ilen = s->stride[inner] == 1 ? s->count[inner] : 1;
    int64_t icount = s->stride[inner] == 1 ? 1 : s->count[inner];
    int64_t idx[MAXD] = {0}, moff = 0;
    for (;;) {
        int64_t e = 0;
        for (int k = 0; k < nd - 1; k++) {
            int d = a->sd[k];
            e += (s->start[d] + idx[k] * s->stride[d]) * a->es[k];
        }
        e += s->start[inner];
        for (int64_t j = 0; j < icount; j++) {
            fn(ud, (e + j * s->stride[inner]) * a->esize, ilen * a->esize,
               moff);
            moff += ilen * a->esize;
        }
        int k = nd - 2;
        for (; k >= 0; k--) {
            if (++idx[k] < s->count[a->sd[k]])
                break;
            idx[k] = 0;
        }
        if (k < 0)
            break;
    }
}

static void fn_expect(void *ud, int64_t off, int64_t len, int64_t moff)
{
    fbytes(off, len, (uint8_t *)ud + moff);
}

typedef struct wmap {
    uint8_t *m;     /* writer per byte of [lo, hi): 0 none, q+1, |0x80 many */
    int64_t lo, hi;
    int q;
} wmap;

static void fn_mark(void *ud, int64_t off, int64_t len, int64_t moff)
{
    (void)moff;
    wmap *w = ud;
    int64_t a = off > w->lo ? off : w->lo, b = off + len < w->hi ? off + len
                                                                  : w->hi;
    for (int64_t i = a; i < b; i++) {
        uint8_t *p = &w->m[i - w->lo];
        *p = *p ? (uint8_t)(0x80 | (w->q + 1)) : (uint8_t)(w->q + 1);
    }
}

/* ------------------------------------------------------------ the peers */

/* the MPI-IO peer m's file: romio-coll the default hints, tuned
   collective buffering on every rank, indep none */
static MPI_File romio_open(const char *path, int m, int P)
{
    return bench_romio_open(path, m == M_RCOLL    ? BENCH_ROMIO_DEFAULT
                                  : m == M_RTUNED ? BENCH_ROMIO_TUNED
                                                  : BENCH_ROMIO_NOCB, P);
}

static int romio_access(MPI_File fh, int m, const parr *a, int64_t base,
                        const passion_section *s, void *buf, int op_write)
{
    MPI_Datatype ft;
    MPI_Offset disp;
    bench_section_filetype(a->nd, a->shape, a->sd, a->esize, base, s, &ft,
                           &disp);
    int rc = MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native",
                               MPI_INFO_NULL);
    int64_t n = sec_elems(a, s) * a->esize;
    MPI_Status st;
    if (rc == MPI_SUCCESS) {
        if (m == M_RINDEP)
            rc = op_write ? MPI_File_write(fh, buf, (int)n, MPI_BYTE, &st)
                          : MPI_File_read(fh, buf, (int)n, MPI_BYTE, &st);
        else
            rc = op_write ? MPI_File_write_all(fh, buf, (int)n, MPI_BYTE, &st)
                          : MPI_File_read_all(fh, buf, (int)n, MPI_BYTE, &st);
    }
    MPI_Type_free(&ft);
    return rc == MPI_SUCCESS ? 0 : -1;
}

static int hdf5_access(bench_h5 *h, int m, const parr *a,
                       const passion_section *s, void *buf, int op_write)
{
    int64_t st[MAXD], ct[MAXD], sd[MAXD];
    for (int k = 0; k < a->nd; k++) {
        st[k] = s->start[a->sd[k]];
        ct[k] = s->count[a->sd[k]];
        sd[k] = s->stride[a->sd[k]];
    }
    return bench_h5_access(h, m == M_H5COLL, op_write, a->nd, st, ct, sd,
                           buf);
}

/* ------------------------------------------------------------ the run */

typedef struct run {
    const bench_args *ba;
    passion_ctx *cx[3]; /* by ctx_index */
    passion_array *pa[3];
    passion_file *f[3];
    const char *path;
    const parr *a;   /* the array whose file is open */
    int64_t base;    /* its data offset in the file */
    int have_h5, calibrated;
    uint64_t seed;
    FILE *csv;       /* rank 0 */
    MPI_File fh[NMODES];
    bench_h5 *h5;
} run;

/* one case on this rank: buffers, and the figures of all ranks */
typedef struct cio {
    const pcase *c;
    char name[16];
    uint8_t *buf, *expect;
    int64_t nbytes, toff[MAXTILES];
    int64_t elems, runs, ext, lo, hi, maxruns;
    int reps, bits[2];  /* the auto modes' choices (chosen_bits) */
    int last_bits[2];   /* theirs in their last call */
    double predicted[2]; /* their predictions, first repetition */
    int skip[NMODES];
} cio;

/* one mode's results on this rank */
typedef struct mres {
    double t[TMAX], spent;
    int nrep, err;
    long peak, base;
    passion_counters cnt;
} mres;

/* auto's method on this rank (passion_ctx_last_method): 1 direct,
   2 sieve, 4 etp-static, 8 etp-dynamic, 0 none (no data moved) */
static int chosen_bits(const passion_ctx *ctx, double *predicted)
{
    passion_method m = PASSION_METHOD_AUTO;
    passion_ctx_last_method(ctx, &m, predicted);
    return m >= PASSION_METHOD_DIRECT && m <= PASSION_METHOD_ETP_DYNAMIC
               ? 1 << (m - 1)
               : 0;
}

/* one timed call of a mode: every tile of this rank; for auto, what it
   chose in any of the calls (*bits, or-ed: a tile call that moved no
   data on this rank records nothing) and the sum of its predictions */
static int call_mode(run *R, int m, const pcase *c, uint8_t *buf,
                     const int64_t *toff, int op_write, int *bits,
                     double *pred)
{
    int err = 0;
    const passion_section *t = &c->sec[R->ba->rank * c->ntiles];
    for (int i = 0; i < c->ntiles; i++) {
        uint8_t *b = buf + toff[i];
        int e;
        if (mids[m] == -1)
            e = romio_access(R->fh[m], m, R->a, R->base, &t[i], b, op_write);
        else if (mids[m] == -2)
            e = R->h5 ? hdf5_access(R->h5, m, R->a, &t[i], b, op_write) : -1;
        else if (op_write)
            e = passion_file_write_all(R->f[ctx_index(m)], &t[i], b, NULL,
                                       mids[m]);
        else
            e = passion_file_read_all(R->f[ctx_index(m)], &t[i], b, NULL,
                                      mids[m]);
        err |= e != 0;
        if (ctx_index(m) && bits) {
            double p = 0;
            *bits |= chosen_bits(R->cx[ctx_index(m)], &p);
            *pred += p;
        }
    }
    return err;
}

/* after a write mode: check this rank's share of [lo, hi) and restore it */
static int check_restore(run *R, const pcase *c, int64_t lo, int64_t hi,
                         int salt, int strict)
{
    const int P = R->ba->size, q = R->ba->rank;
    int64_t n = hi - lo, a = lo + n * q / P, b = lo + n * (q + 1) / P;
    if (b <= a)
        return 0;
    wmap w = {calloc((size_t)(b - a), 1), a, b, 0};
    uint8_t *got = malloc((size_t)(b - a)), *want = malloc((size_t)(b - a));
    if (!w.m || !got || !want) {
        free(w.m), free(got), free(want);
        return 1;
    }
    for (int r = 0; r < P; r++) {
        w.q = r;
        for (int i = 0; i < c->ntiles; i++)
            walk(R->a, &c->sec[r * c->ntiles + i], fn_mark, &w);
    }
    int bad = 0;
    int fd = open(R->path, O_RDWR);
    if (fd < 0 || pread(fd, got, (size_t)(b - a), R->base + a) != b - a)
        bad = 1;
    fbytes(a, b - a, want);
    for (int64_t i = 0; i < b - a && !bad; i++) {
        uint8_t m = w.m[i], v = got[i] ^ want[i];
        if (!m) {
            bad = v != 0;
        } else if (!(m & 0x80) || strict) {
            bad = v != wmask(salt, (m & 0x7f) - 1);
        } else {
            int any = 0;
            for (int r = 0; r < P && !any; r++)
                any = v == wmask(salt, r);
            bad = !any;
        }
    }
    if (fd >= 0) {
        if (pwrite(fd, want, (size_t)(b - a), R->base + a) != b - a)
            bad = 1;
        close(fd);
    }
    free(w.m), free(got), free(want);
    return bad;
}

static void fill_file(run *R)
{
    const int P = R->ba->size, q = R->ba->rank;
    int64_t n = R->a->bytes, a = n * q / P, b = n * (q + 1) / P;
    const int64_t chunk = 8 << 20;
    uint8_t *buf = malloc((size_t)chunk);
    int fd = open(R->path, O_WRONLY);
    for (int64_t o = a; o < b && fd >= 0 && buf; o += chunk) {
        int64_t len = b - o < chunk ? b - o : chunk;
        fbytes(o, len, buf);
        if (pwrite(fd, buf, (size_t)len, R->base + o) != len)
            break;
    }
    if (fd >= 0) {
        if (R->ba->cold)
            fdatasync(fd);
        close(fd);
    }
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void shape_str(const parr *a, char *out, size_t len)
{
    size_t o = 0;
    for (int d = 0; d < a->nd && o < len; d++)
        o += (size_t)snprintf(out + o, len - o, "%s%" PRId64, d ? "x" : "",
                              a->shape[d]);
}

/* Close the array's file in every context. Collective. */
static void array_close(run *R)
{
    for (int k = 2; k >= 0; k--) {
        if (R->f[k])
            passion_file_close(R->f[k]);
        if (R->pa[k])
            passion_array_free(R->pa[k]);
        R->f[k] = NULL, R->pa[k] = NULL;
    }
}

/* Make array a's file (the HDF5 dataset, or a raw file without HDF5),
   open it with passion in every context and fill it; the first time,
   auto's calibrations run here (in every context), outside any timing.
   Collective. */
static int array_open(run *R, const parr *a)
{
    const bench_args *ba = R->ba;
    array_close(R);
    R->a = a;
    passion_array_spec spec;
    passion_array_spec_init(&spec, a->nd, a->shape, a->esize);
    spec.storage = a->col ? PASSION_COL_MAJOR : PASSION_ROW_MAJOR;
    spec.placement = PASSION_PLACE_GLOBAL;
    int mode = PASSION_MODE_CREATE, rc = 0;
    R->base = 0;
    if (R->have_h5) {
        int64_t dims[MAXD];
        for (int k = 0; k < a->nd; k++)
            dims[k] = a->shape[a->sd[k]];
        rc = bench_h5_create(MPI_COMM_WORLD, R->path, a->nd, dims, a->esize,
                             &R->base) ? PASSION_EIO : 0;
        spec.header_bytes = R->base;
        mode = PASSION_MODE_RDWR;
    }
    for (int k = 0; k < 3 && !rc; k++) {
        rc = passion_array_create(R->cx[k], &spec, &R->pa[k]);
        if (!rc)
            rc = passion_file_open(R->pa[k], R->path,
                                   k ? PASSION_MODE_RDWR : mode, &R->f[k]);
    }
    if (rc)
        return rc;
    fill_file(R);
    if (!R->calibrated) {
        /* cold: auto's file-cost measurement (its first calls on
           uncached data) happens here, outside the timing */
        for (int k = 0; k < 3; k++)
            bench_first_use(ba, R->pa[k], R->f[k], R->path);
        R->calibrated = 1;
    }
    return 0;
}

/* The case's figures, this rank's buffers and expected bytes, the
   repetitions and the modes skipped. */
static void cio_init(run *R, const pcase *c, int ci, cio *io)
{
    const bench_args *ba = R->ba;
    const parr *a = R->a;
    const int P = ba->size;
    memset(io, 0, sizeof *io);
    io->c = c;
    snprintf(io->name, sizeof io->name, "c%03d", ci);
    const passion_section *mine = &c->sec[ba->rank * c->ntiles];
    for (int i = 0; i < c->ntiles; i++) {
        io->toff[i] = io->nbytes;
        io->nbytes += sec_elems(a, &mine[i]) * a->esize;
    }
    io->lo = INT64_MAX;
    for (int q = 0; q < P; q++) {
        int64_t qr = 0;
        for (int i = 0; i < c->ntiles; i++) {
            const passion_section *s = &c->sec[q * c->ntiles + i];
            if (!sec_elems(a, s))
                continue;
            io->elems += sec_elems(a, s);
            qr += sec_runs(a, s);
            int64_t l, h;
            sec_extent(a, s, &l, &h);
            io->ext += h - l;
            io->lo = l < io->lo ? l : io->lo;
            io->hi = h > io->hi ? h : io->hi;
        }
        io->runs += qr;
        io->maxruns = qr > io->maxruns ? qr : io->maxruns;
    }
    size_t nb = (size_t)(io->nbytes ? io->nbytes : 1);
    io->expect = malloc(nb);
    io->buf = malloc(nb);
    for (int i = 0; i < c->ntiles; i++)
        walk(a, &mine[i], fn_expect, io->expect + io->toff[i]);
    io->reps = ba->reps ? ba->reps : ba->cold ? 2 : 3;
    if (!ba->reps && ba->cold && io->ext > (512 << 20))
        io->reps = 1;
    if (io->reps > 16)
        io->reps = 16;
    /* direct and HDF5's independent transfer make one request per
       contiguous run: skipped beyond 2^18 runs on a rank (2^16 cold) */
    if (io->maxruns > (ba->cold ? (1 << 16) : (1 << 18)))
        io->skip[M_DIRECT] = io->skip[M_H5INDEP] = 1;
    if (!R->have_h5)
        io->skip[M_H5COLL] = io->skip[M_H5INDEP] = 1;
}

static void cio_free(cio *io)
{
    free(io->expect);
    free(io->buf);
}

/* One timed call of mode m (repetition r): the file dropped first (cold),
   synced after a write (cold), reads checked at once. Collective. */
static void timed_call(run *R, cio *io, int m, int r, mres *res)
{
    const bench_args *ba = R->ba;
    const int op_write = io->c->write;
    if (!op_write)
        memset(io->buf, 0, (size_t)io->nbytes);
    MPI_Barrier(MPI_COMM_WORLD);
    if (ba->cold && ba->rank == 0)
        bench_drop_cache_path(R->path);
    passion_ctx *mc = R->cx[ctx_index(m)];
    passion_counters_reset(mc);
    bench_rss_reset();
    long b0 = bench_rss_peak_kib();
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int bits = 0;
    double pred = 0;
    int e = call_mode(R, m, io->c, io->buf, io->toff, op_write, &bits, &pred);
    if (op_write && ba->cold) {
        MPI_Barrier(MPI_COMM_WORLD);
        int fd = ba->rank == 0 ? open(R->path, O_RDONLY) : -1;
        if (fd >= 0) {
            fdatasync(fd);
            close(fd);
        }
    }
    res->t[r] = bench_max_time(MPI_Wtime() - t0);
    res->spent += res->t[r];
    long p0 = bench_rss_peak_kib();
    res->peak = p0 > res->peak ? p0 : res->peak;
    res->base = b0 > res->base ? b0 : res->base;
    if (mids[m] >= 0) {
        passion_counters k;
        passion_counters_get(mc, &k);
        if (r == 0)
            res->cnt = k;
        if (ctx_index(m)) {
            io->bits[ctx_index(m) - 1] |= bits;
            io->last_bits[ctx_index(m) - 1] = bits;
            if (r == 0)
                io->predicted[ctx_index(m) - 1] = pred;
        }
    }
    res->err |= e;
    if (!op_write && memcmp(io->buf, io->expect, (size_t)io->nbytes))
        res->err = 1;
}

/* After call r of mode m: a mode whose first call took more than 5 s is
   not repeated; an auto mode's calls stop after 60 s (its steady columns
   then empty); never with --reps. */
static void cut_reps(const run *R, int m, int r, mres *res)
{
    if (R->ba->reps)
        return;
    if (ctx_index(m) ? res->spent > 60.0 : r == 0 && res->t[0] > 5.0)
        res->nrep = r + 1;
}

/* Reads: repetition 1 of every mode, then repetition 2... (the auto
   modes' calls beyond the others' repetitions alone, in turn). */
static void run_reads(run *R, cio *io, int ci, mres *res)
{
    int most = 0;
    for (int m = 0; m < NMODES; m++)
        most = res[m].nrep > most ? res[m].nrep : most;
    /* the modes' order turns by one every repetition and case (the
       mode first in a repetition runs right after the previous call's
       or case's work: the write-back and cache drop of a case just
       written); the same on every rank */
    for (int r = 0; r < most; r++)
        for (int k = 0; k < NMODES; k++) {
            const int m = (k + r + ci) % NMODES;
            if (io->skip[m] || r >= res[m].nrep)
                continue;
            timed_call(R, io, m, r, &res[m]);
            cut_reps(R, m, r, &res[m]);
        }
}

/* Writes: a mode's repetitions back to back, then the file checked and
   restored around the sections' union (and a page either side). */
static void run_writes(run *R, cio *io, int ci, mres *res)
{
    const bench_args *ba = R->ba;
    int64_t rlo = io->lo > 4096 ? io->lo - 4096 : 0,
            rhi = io->hi + 4096 < R->a->bytes ? io->hi + 4096 : R->a->bytes;
    /* the modes' order turns by one every case (as run_reads) */
    for (int k = 0; k < NMODES; k++) {
        const int m = (k + ci) % NMODES;
        if (io->skip[m])
            continue;
        int salt = (ci * 7 + m + 1) & 15;
        uint8_t mk = wmask(salt, ba->rank);
        for (int64_t i = 0; i < io->nbytes; i++)
            io->buf[i] = io->expect[i] ^ mk;
        for (int r = 0; r < res[m].nrep; r++) {
            timed_call(R, io, m, r, &res[m]);
            cut_reps(R, m, r, &res[m]);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (io->hi > io->lo)
            res[m].err |= check_restore(R, io->c, rlo, rhi, salt,
                                        mids[m] >= 0);
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* The case's rows (rank 0 writes): times, counters summed over ranks,
   memory and staging of the largest rank, what auto chose. Collective. */
static void write_rows(run *R, cio *io, mres *res)
{
    const bench_args *ba = R->ba;
    const parr *a = R->a;
    const pcase *c = io->c;
    int bits[4] = {0, 0, 0, 0}, err[NMODES], allerr[NMODES];
    long peak[NMODES], base[NMODES], maxpeak[NMODES], maxbase[NMODES];
    unsigned long long mine4[NMODES][4], sum4[NMODES][4], stg[NMODES],
        maxstg[NMODES];
    for (int m = 0; m < NMODES; m++) {
        err[m] = res[m].err;
        peak[m] = res[m].peak;
        base[m] = res[m].base;
        mine4[m][0] = res[m].cnt.io_calls;
        mine4[m][1] = res[m].cnt.bytes_read;
        mine4[m][2] = res[m].cnt.bytes_written;
        mine4[m][3] = res[m].cnt.messages_sent;
        stg[m] = res[m].cnt.peak_staging;
    }
    int mine[4] = {io->bits[0], io->bits[1], io->last_bits[0],
                   io->last_bits[1]};
    MPI_Allreduce(mine, bits, 4, MPI_INT, MPI_BOR, MPI_COMM_WORLD);
    MPI_Allreduce(err, allerr, NMODES, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    MPI_Reduce(peak, maxpeak, NMODES, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(base, maxbase, NMODES, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(mine4, sum4, NMODES * 4, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0,
               MPI_COMM_WORLD);
    MPI_Reduce(stg, maxstg, NMODES, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0,
               MPI_COMM_WORLD);
    FILE *csv = R->csv;
    if (!csv)
        return;
    /* chosen[0..1]: every call's choices, [2..3] the last call's */
    char shp[96], chosen[4][48] = {"", "", "", ""};
    shape_str(a, shp, sizeof shp);
    static const char *bn[4] = {"direct", "sieve", "etp-static",
                                "etp-dynamic"};
    for (int j = 0; j < 4; j++)
        for (int k = 0; k < 4; k++)
            if (bits[j] & (1 << k))
                snprintf(chosen[j] + strlen(chosen[j]),
                         sizeof chosen[j] - strlen(chosen[j]), "%s%s",
                         chosen[j][0] ? "+" : "", bn[k]);
    double load = bench_load();
    for (int m = 0; m < NMODES; m++) {
        const int ax = ctx_index(m); /* 1, 2: an auto mode */
        bench_steady sy;
        bench_steady_of(res[m].t, io->skip[m] ? 0 : res[m].nrep, &sy);
        fprintf(csv, "%s,%s,%s,%d,%s,%s,%s,", io->name, c->kind,
                c->write ? "write" : "read", ba->size, ba->ranks_note,
                ba->regime, mnames[m]);
        if (io->skip[m]) {
            fprintf(csv, ",,0,");
        } else {
            double tmin = res[m].t[0];
            for (int r = 1; r < res[m].nrep; r++)
                tmin = res[m].t[r] < tmin ? res[m].t[r] : tmin;
            fprintf(csv, "%.6g,%.6g,%d,",
                    bench_median(res[m].t, res[m].nrep), tmin, res[m].nrep);
        }
        fprintf(csv,
                "%d,%s,%" PRId64 ",%s,%" PRId64 ",%d,%" PRId64 ",%" PRId64
                ",%" PRId64 ",",
                a->nd, a->col ? "col" : "row", a->esize, shp, a->bytes,
                c->ntiles, io->elems, io->runs, io->ext);
        if (io->skip[m])
            fprintf(csv, ",,,,,,,,,%s,",
                    !R->have_h5 && mids[m] == -2
                        ? "skipped (no HDF5)"
                        : "skipped (runs: one request each)");
        else if (mids[m] < 0)
            fprintf(csv, ",,,,%ld,%ld,,,,%s,", maxpeak[m], maxbase[m],
                    allerr[m] ? "FAIL" : "ok");
        else {
            char pred[32] = "";
            if (ax && io->predicted[ax - 1] > 0) /* 0: none made */
                snprintf(pred, sizeof pred, "%.3g", io->predicted[ax - 1]);
            fprintf(csv, "%llu,%llu,%llu,%llu,%ld,%ld,%llu,%s,%s,%s,",
                    sum4[m][0], sum4[m][1], sum4[m][2], sum4[m][3],
                    maxpeak[m], maxbase[m], maxstg[m],
                    ax ? chosen[ax - 1] : "", pred,
                    allerr[m] ? "FAIL" : "ok");
        }
        fprintf(csv, "%" PRIu64 ",", R->seed);
        bench_steady_csv(csv, &sy, !ax || res[m].nrep >= BENCH_AUTO_REPS);
        fprintf(csv, ",%s,%.2f,%s\n", ax ? bench_planner(R->cx[ax]) : "",
                load, ax ? chosen[ax + 1] : "");
    }
    fflush(csv);
}

/* Is cname ("c042") in list ("c042" or "c003,c042,c117")? */
static int case_listed(const char *list, const char *cname)
{
    size_t n = strlen(cname);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, cname, n))
            return 1;
        p += len + (e != NULL);
    }
    return 0;
}

/* --list: the cases, one line each (rank 0) */
static void list_cases(const pcase *cases, int ncases, const parr *arrs,
                       int P)
{
    for (int i = 0; i < ncases; i++) {
        const pcase *c = &cases[i];
        const parr *a = &arrs[c->arr];
        char shp[96];
        shape_str(a, shp, sizeof shp);
        int64_t runs = 0, ext = 0, by = 0;
        for (int q = 0; q < P * c->ntiles; q++) {
            if (!sec_elems(a, &c->sec[q]))
                continue;
            int64_t l, h;
            sec_extent(a, &c->sec[q], &l, &h);
            runs += sec_runs(a, &c->sec[q]);
            ext += h - l;
            by += sec_elems(a, &c->sec[q]) * a->esize;
        }
        printf("c%03d %-8s %-5s %d-D %s %-24s x%-2" PRId64 " %11" PRId64
               " B  tiles %d  section %" PRId64 " B  runs %" PRId64
               "  extent %" PRId64 " B\n",
               i, c->kind, c->write ? "write" : "read", a->nd,
               a->col ? "col" : "row", shp, a->esize, a->bytes, c->ntiles,
               by, runs, ext);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_args ba;
    uint64_t seed = DEFAULT_SEED;
    int ncases = 200, list = 0;
    const char *only_case = NULL;
    int bad_args = bench_args_parse(&ba, argc, argv) != 0;
    if (!bad_args)
        bench_peer_labels(&ba, mnames, NMODES);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--cases") && i + 1 < argc)
            ncases = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--case") && i + 1 < argc)
            only_case = argv[i + 1];
        else if (!strcmp(argv[i], "--list"))
            list = 1; /* print the cases and stop */
    }
    if (bad_args || ncases < 1) {
        if (ba.rank == 0)
            fprintf(stderr, "usage: bench-patterns --csv F --regime "
                            "warm|cold|memlimit [--memlimit BYTES] "
                            "[--seed S] [--cases N] [--case cNNN[,cNNN...]] "
                            "[--reps N] [--scratch DIR] [--list]\n");
        MPI_Finalize();
        return 2;
    }
    const int P = ba.size;
    const int memlim = !strcmp(ba.regime, "memlimit");
    /* sizes and caps (see the top) */
    int64_t minb = 16 << 10, maxb = 64 << 20, bigmin = 256 << 20,
            bigmax = 1LL << 30, cap_bytes = 32 << 20, cap_ext = 256 << 20,
            cap_runs = 1 << 19, cap_region = 128 << 20;
    int per_array = CASES_PER_ARRAY;
    char opts[128] = "";
    if (memlim) {
        minb = bigmin = bench_memlimit_min_bytes(&ba);
        maxb = bigmax = minb + minb / 4;
        cap_bytes = ba.memlimit / 16;
        cap_ext = ba.memlimit / 2;
        cap_runs = 1 << 17;
        cap_region = ba.memlimit / 16; /* the check holds 3 bytes per byte of a rank's share */
        per_array = 100;
        snprintf(opts, sizeof opts, "memory_budget=%" PRId64,
                 ba.memlimit / 8 / P);
    }
    if (ba.quick)
        maxb = 4 << 20, bigmin = 8 << 20, bigmax = 32 << 20;
    /* the fixed methods' context, and auto's two (ctx_index) */
    passion_ctx *cx[3] = {NULL, NULL, NULL};
    int rc = bench_init(&cx[0], "%s", opts);
    if (!rc)
        rc = bench_init_planner(&cx[1], "measure", "%s", opts);
    if (!rc)
        rc = bench_init_planner(&cx[2], "estimate", "%s", opts);
    passion_ctx *ctx = cx[0];
    if (rc) {
        if (ba.rank == 0)
            fprintf(stderr, "patterns: passion_init: %s\n",
                    passion_strerror(rc));
        MPI_Finalize();
        return 1;
    }
    int narr = (ncases + per_array - 1) / per_array;
    parr *arrs = calloc((size_t)narr, sizeof *arrs);
    pcase *cases = calloc((size_t)ncases, sizeof *cases);
    for (int j = 0; j < narr; j++) {
        uint64_t s = seed ^ (0xB16B16ULL + (uint64_t)j * 31337);
        int big = !memlim && bench_rand(&s) % 10 == 9;
        arr_gen(&arrs[j], seed, j, big ? bigmin : minb, big ? bigmax : maxb);
    }
    for (int i = 0; i < ncases; i++) {
        cases[i].arr = i / per_array;
        case_gen(&cases[i], &arrs[cases[i].arr], seed, i, P, cap_bytes,
                 cap_ext, cap_runs, cap_region);
    }
    if (ba.rank == 0)
        fprintf(stderr,
                "patterns: seed %" PRIu64 ", %d cases on %d arrays, P=%d, "
                "%s%s, HDF5 %s\n",
                seed, ncases, narr, P, ba.regime,
                memlim ? " (arrays >= 8x the memory limit)" : "",
                bench_h5_version());
    if (ba.rank == 0)
        fprintf(stderr, "patterns: auto runs twice, planner=%s (passion) "
                "and planner=%s (passion-estimate), each in its own "
                "context, at least %d calls a case (the others: the "
                "suite's reps); steady = median of the last half of the "
                "calls\n", bench_planner(cx[1]), bench_planner(cx[2]),
                BENCH_AUTO_REPS);
    char path[600];
    run R;
    memset(&R, 0, sizeof R);
    R.ba = &ba, R.path = path, R.seed = seed;
    for (int k = 0; k < 3; k++)
        R.cx[k] = cx[k];
    R.have_h5 = bench_h5_available();
    for (int m = 0; m < NMODES; m++)
        R.fh[m] = MPI_FILE_NULL;
    snprintf(path, sizeof path, "%s/patterns-%d.%s", ba.scratch, P,
             R.have_h5 ? "h5" : "raw");
    if (list && ba.rank == 0)
        list_cases(cases, ncases, arrs, P);
    if (!list)
        R.csv = bench_csv_open(&ba,
            "case,kind,op,procs,ranks,regime,method,seconds,min_seconds,"
            "reps,nd,order,esize,shape,array_bytes,tiles,elems,runs,"
            "extent_bytes,io_calls,bytes_read,bytes_written,messages,"
            "peak_rss_kib,base_rss_kib,peak_staging,chosen,predicted,check,"
            "seed,first_s,steady_s,steady_min_s,steady_p90_s,planner,load,"
            "steady_chosen");
    for (int ci = 0; ci < ncases && !list; ci++) {
        const pcase *c = &cases[ci];
        const parr *a = &arrs[c->arr];
        char cname[16];
        snprintf(cname, sizeof cname, "c%03d", ci);
        if (only_case && !case_listed(only_case, cname))
            continue;
        if (a != R.a) {
            bench_progress(&ba, "patterns P=%d %s: array %d (%" PRId64
                           " bytes), making its file", P, ba.regime, c->arr,
                           a->bytes);
            if ((rc = array_open(&R, a))) {
                if (ba.rank == 0)
                    fprintf(stderr, "patterns: array %d: %s %s\n", c->arr,
                            passion_strerror(rc), passion_ctx_errdetail(ctx));
                break;
            }
        }
        cio io;
        cio_init(&R, c, ci, &io);
        mres res[NMODES];
        memset(res, 0, sizeof res);
        for (int m = 0; m < NMODES; m++)
            res[m].nrep = ctx_index(m) ? bench_auto_reps(io.reps) : io.reps;
        for (int m = 0; m < NMODES; m++)
            if (mids[m] == -1 && !io.skip[m])
                R.fh[m] = romio_open(path, m, P);
        if (R.have_h5 && bench_h5_open(MPI_COMM_WORLD, path, &R.h5))
            R.h5 = NULL;
        bench_progress(&ba, "patterns P=%d %s %s %s %s, %d reps (auto %d)",
                       P, ba.regime, io.name, c->kind,
                       c->write ? "write" : "read", io.reps,
                       res[M_AUTO].nrep);
        if (c->write)
            run_writes(&R, &io, ci, res);
        else
            run_reads(&R, &io, ci, res);
        for (int m = 0; m < NMODES; m++)
            if (R.fh[m] != MPI_FILE_NULL)
                MPI_File_close(&R.fh[m]);
        bench_h5_close(R.h5);
        R.h5 = NULL;
        write_rows(&R, &io, res);
        cio_free(&io);
    }
    if (!list)
        bench_progress(&ba, "patterns P=%d %s done\n", P, ba.regime);
    array_close(&R);
    if (R.csv && R.csv != stdout)
        fclose(R.csv);
    for (int i = 0; i < ncases; i++)
        free(cases[i].sec);
    free(cases);
    free(arrs);
    for (int k = 2; k >= 0; k--)
        passion_finalize(cx[k]);
    if (ba.rank == 0 && !list)
        unlink(path);
    MPI_Finalize();
    return 0;
}
