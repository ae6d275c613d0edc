/*
 * etp_plan.c - the File Access Descriptor (thesis 6.3.1, step 1 of figure
 * 6.4): one MPI_Allgather of a few integers per dimension per rank (start,
 * count, stride, plus the method, the operation and the cost options, so
 * that a disagreement is seen by every rank at once), and the per-rank
 * transfer plans built from it.
 *
 * Invariants: after coll_plan_init every rank holds identical fad, x[],
 * elems[], lo/hi and overlap flags; a rank whose arguments failed took
 * part with an empty section and every rank returned its code; the plan's
 * memory is O(ranks x dimensions), counted as staging.
 */
#include "coll.h"

#include <stdio.h>

#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* the rounds' cursors and vectors (etp.c), per rank */
int64_t coll_etp_desc_bytes(int P)
{
    return (int64_t)P * 13 * 8 +
           (int64_t)P * (int64_t)(sizeof(coll_cur) + sizeof(coll_vec));
}

/* the access descriptions' receive buffer of a rank that could not
   allocate its own (see coll_plan_init) */
#define FAD_STACK 32768

static int64_t dbits(double v)
{
    int64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

/*
 * The collective layer's per-context state (ctx->ext[CORE_EXT_COLL],
 * freed at passion_finalize):
 *  - the round buffers' fallback reservation, kept from one collective
 *    call to the next: mapping and unmapping it on every call cost
 *    several microseconds, a large share of a small section's time. Only
 *    address space: the rounds carve from it only when malloc fails, so
 *    it stays non-resident;
 *  - the file cost model, measured on the first uncached extents met
 *    (file_calibrate): tries made, the latency / bandwidth samples agreed
 *    over ranks (one per try that measured) and the best of them (0 = not
 *    measured). The message costs are the exchange subsystem's
 *    (coll_xchg_costs_get).
 */
typedef struct coll_ext {
    void *reserve;
    int64_t bytes;
    /* the FAD's round: this rank's last arrival (ns, mod 2^32) and wait
       (ns; 0 = none yet), and the samples learned (coll_sync_cost) */
    uint32_t sync_at, sync_wait;
    double sync[COLL_SYNC_KEEP];
    int sync_n, sync_i;
    double sync_med; /* their median (coll_sync_cost), kept as learned */
    double sync_sorted[COLL_SYNC_KEEP]; /* the samples in order (sync_n):
                                           the median without a sort */
    /* plan_caps of the last call: budget, ranks and exchange option it
       was computed for (caps_P 0 = none yet) */
    int64_t caps_M, caps_xchg;
    int caps_P, caps_alg;
    /* the fixed costs' samples per class (coll_fixed_learn) */
    double fixed[COLL_FIX_N][COLL_FIXED_KEEP];
    int fixed_n[COLL_FIX_N], fixed_i[COLL_FIX_N];
    int file_tries, file_nlat, file_nbw;
    double file_lat, file_bw;
    /* the bytes the best bandwidth reading streamed, and the tries made
       for a longer stream than that (stream_pending) */
    int64_t file_bw_len;
    int file_long_tries;
    /* this rank's long reads in the last collective call on uncached
       data (pages of 4 KiB, microseconds: the COLL_FAD_STREAM word), and
       the best bandwidth learned from them (coll_stream_note) */
    uint32_t stream_pages, stream_us;
    double stream_bw;
    int64_t stream_len; /* stream_bw's bytes per streaming rank */
    int64_t file_bw_rank; /* file_bw's stream bytes per streaming rank */
    /* the last auto read whose ranks chose an independent method: its
       access (coll_early_sig; 0 = none). The same access again is read
       early whatever its cost (coll_io_early) */
    uint64_t indep_sig;
    int indep_left; /* early reads left on it before auto chooses again */
    int indep_method; /* the method chosen: auto (sieve.c's) or direct */
} coll_ext;

static void coll_ext_free(passion_ctx *ctx, void *ext)
{
    (void)ctx;
    coll_ext *e = ext;
    core_free(ctx, e->reserve);
    core_free(ctx, e);
}

static coll_ext *ext_get(passion_ctx *ctx)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    if (!e) {
        if (!(e = core_calloc(ctx, 1, sizeof *e)))
            return NULL;
        ctx->ext[CORE_EXT_COLL] = e;
        ctx->ext_free[CORE_EXT_COLL] = coll_ext_free;
    }
    return e;
}

static void *reserve_get(passion_ctx *ctx, int64_t bytes)
{
    coll_ext *e = ext_get(ctx);
    if (!e)
        return NULL;
    if (e->reserve && e->bytes >= bytes)
        return e->reserve;
    core_free(ctx, e->reserve);
    e->reserve = NULL;
    e->bytes = 0;
    void *res = NULL;
    if (core_alloc_fault(ctx) || posix_memalign(&res, 4096, (size_t)bytes))
        return NULL;
    e->reserve = res;
    e->bytes = bytes;
    return res;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Inverse of a modulo m (gcd(a, m) = 1, m >= 1). */
static int64_t inv_mod(int64_t a, int64_t m)
{
    __int128 t = 0, nt = 1, r = m, nr = a % m;
    while (nr) {
        __int128 q = r / nr, tmp = t - q * nt;
        t = nt;
        nt = tmp;
        tmp = r - q * nr;
        r = nr;
        nr = tmp;
    }
    return (int64_t)(t < 0 ? t + m : t);
}

/* Do {a + i s : 0 <= i < n} and {b + j t : 0 <= j < m} share a value? */
static int progressions_meet(int64_t a, int64_t s, int64_t n, int64_t b,
                             int64_t t, int64_t m)
{
    int64_t lo = a > b ? a : b;
    int64_t ea = a + (n - 1) * s, eb = b + (m - 1) * t;
    int64_t hi = ea < eb ? ea : eb;
    if (lo > hi)
        return 0;
    int64_t g = gcd64(s, t);
    if (((b - a) % g + g) % g)
        return 0;
    /* x = a + i s with i s = b - a (mod t): i = ((b-a)/g) inv(s/g) mod t/g */
    int64_t tg = t / g;
    __int128 i0 = 0;
    if (tg > 1) {
        __int128 d = ((__int128)(b - a) / g) % tg;
        if (d < 0)
            d += tg;
        i0 = d * inv_mod((s / g) % tg, tg) % tg;
    }
    __int128 x = (__int128)a + i0 * s, L = (__int128)s * tg;
    if (x < lo)
        x += (lo - x + L - 1) / L * L;
    return x <= hi;
}

/* Do two validated, non-empty sections share an element? */
static int sections_meet(int nd, const int64_t *s1, const int64_t *s2)
{
    for (int d = 0; d < nd; d++)
        if (!progressions_meet(s1[d], s1[2 * nd + d], s1[nd + d], s2[d],
                               s2[2 * nd + d], s2[nd + d]))
            return 0;
    return 1;
}

/* Is {a + i s : i < n} inside {b + j t : j < m}? (n, m >= 1) */
static int progression_in(int64_t a, int64_t s, int64_t n, int64_t b,
                          int64_t t, int64_t m)
{
    if (a < b || a + (n - 1) * s > b + (m - 1) * t)
        return 0;
    if (m == 1)
        return n == 1; /* then a == b */
    if ((a - b) % t)
        return 0;
    return n == 1 || s % t == 0;
}

/* Is validated, non-empty section s1 inside s2 (every element of s1 an
   element of s2)? */
static int section_in(int nd, const int64_t *s1, const int64_t *s2)
{
    for (int d = 0; d < nd; d++)
        if (!progression_in(s1[d], s1[2 * nd + d], s1[nd + d], s2[d],
                            s2[2 * nd + d], s2[nd + d]))
            return 0;
    return 1;
}

int coll_shared_writers(const coll_plan *p, int *writes)
{
    const int P = p->P, nd = p->nd, W = COLL_FAD_HEAD + 3 * PASSION_MAX_DIMS;
    *writes = 1;
    for (int r = 0; r < P; r++) {
        if (!p->elems[r])
            continue;
        const int64_t *sr = p->fad + (int64_t)r * W + COLL_FAD_HEAD;
        int inside = 0, meets = 0;
        for (int q = r + 1; q < P && !inside; q++) {
            if (!p->elems[q])
                continue;
            const int64_t *sq = p->fad + (int64_t)q * W + COLL_FAD_HEAD;
            inside = section_in(nd, sr, sq);
            meets = meets || sections_meet(nd, sr, sq);
        }
        if (!inside && meets)
            return 0;
        if (r == p->me)
            *writes = !inside;
    }
    return 1;
}

void coll_file_costs(passion_ctx *ctx, double *lat, double *bw, int *nlat)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    *lat = e ? e->file_lat : 0;
    *bw = e ? e->file_bw : 0;
    *nlat = e ? e->file_nlat : 0;
}

/* still calibrating: fewer than COLL_FILE_SAMPLES latency samples and
   tries left (the early path waits for the measurement) */
static int file_pending(const coll_ext *e)
{
    return !e || (e->file_nlat < COLL_FILE_SAMPLES &&
                  e->file_tries < 2 * COLL_FILE_SAMPLES);
}

/* the calibration's streaming rank: the one with the longest extent (the
   first of them), -1 none */
static int file_streamer(const coll_plan *p)
{
    int streamer = -1;
    for (int r = 0; r < p->P; r++)
        if (p->elems[r] > 0 &&
            (streamer < 0 || p->x[r].fend - p->x[r].foff0 >
                                 p->x[streamer].fend - p->x[streamer].foff0))
            streamer = r;
    return streamer;
}

/* Rank r's part of the calls' span [lo, hi) (P equal parts, pages) and
   the bytes its calibration stream reads from the part's start, for the
   calibration's streams where every part can hold one of at least four
   pieces and the kernel's readahead past it (which must not reach the
   next part's stream: with three ranks on two cores, a rank found its
   part already read ahead by its neighbour's stream); 0 otherwise */
static int64_t file_part(const coll_plan *p, int r, int64_t *d0, int64_t *d1)
{
    const int64_t pg = 4096, span = p->hi - p->lo;
    int64_t ra = core_io_readahead(p->f->fh);
    *d0 = (p->lo + span / p->P * r) / pg * pg;
    *d1 = r + 1 == p->P ? p->hi : (p->lo + span / p->P * (r + 1)) / pg * pg;
    int64_t len = span / p->P - 2 * pg - (ra > 0 ? ra : span / p->P / 4);
    len = len > CORE_MEASURE_STREAM ? CORE_MEASURE_STREAM : len;
    return p->P > 1 && len >= 4 * CORE_STREAM_PIECE ? len / pg * pg : 0;
}

/* the bytes the calibration would stream, all ranks together (file_part;
   else measure_fd: three quarters of the streamer's extent, at most
   CORE_MEASURE_STREAM) */
static int64_t stream_len(const coll_plan *p)
{
    int64_t d0, d1, len = file_part(p, 0, &d0, &d1);
    int s = file_streamer(p);
    if (len || s < 0)
        return len * p->P;
    len = (p->x[s].fend - p->x[s].foff0) / 4 * 3;
    return len > CORE_MEASURE_STREAM ? CORE_MEASURE_STREAM : len;
}

/* A bandwidth reading from a stream at least twice as long as the best
   reading's is due: the first uncached calls may be small (a benchmark's
   or an application's set-up: etp 6.1-V's first three calls read 98 KB)
   and a short stream misses the readahead's ramp (CORE_MEASURE_STREAM).
   At most two such tries; the same on every rank (extents from the
   FAD). */
static int stream_pending(const coll_plan *p, const coll_ext *e)
{
    if (!e || e->file_long_tries >= 2 || e->file_nbw == 0)
        return 0;
    int64_t len = stream_len(p);
    return len >= 4 * CORE_STREAM_PIECE && len >= 2 * e->file_bw_len;
}

/*
 * The file's costs: called by every rank of the first auto or extended
 * two-phase calls whose data the probe found uncached (the condition is
 * read from the FAD, so all ranks take part), until COLL_FILE_SAMPLES
 * readings or twice as many tries (file_pending), and for a longer
 * stream (stream_pending, long_only: the bandwidth alone). The ranks
 * agree on the reading (largest latency; the bandwidth below), so that
 * the cost model stays identical everywhere; the model keeps the best
 * reading. The options io_latency / io_bandwidth, when given, win.
 */
static void file_calibrate(coll_plan *p, coll_ext *e, int long_only)
{
    passion_ctx *ctx = p->ctx;
    double lat = 0, bw = 0;
    int64_t bw_len = 0, d0, d1;
    /* the driver's calibration reads (core_io_measure), on uncached
       pages. The model's bandwidth is the file's, shared by the ranks
       that read at once, as the two-phase method's aggregators do:
       where the calls' span gives every rank a part of at least four
       stream pieces, every rank streams the same length in its own part,
       at once, and the file gave them together their bytes in the
       slowest one's time. One rank streaming while the others waited
       in the agreement (MPICH spins: two ranks on 2 cores) read 25 MB
       at 0.8-1.4 GB/s (etp 6.1-V, P = 2), where the two aggregators
       together read its 67 MB at 3.1-3.4 GB/s. A smaller span: one rank
       streams on its extent, the one with the longest (the first of
       them). */
    int64_t part = file_part(p, p->me, &d0, &d1);
    int all = part > 0, streamer = file_streamer(p);
    if (all) {
        bw_len = part;
        core_io_measure(p->f->fh, d0, d1, &lat, &bw, &bw_len);
    }
    else if (p->elems[p->me] > 0 && (!long_only || streamer == p->me))
        core_io_measure(p->f->fh, p->x[p->me].foff0, p->x[p->me].fend, &lat,
                        streamer == p->me ? &bw : NULL, &bw_len);
    /* all: the slowest stream's time and the shortest's bytes (0: a rank
       could not stream, no bandwidth this try); one streamer: its rate
       and bytes */
    double r[3] = {long_only ? 0 : lat, 0, 0};
    if (all && bw_len < part) /* a short stream: none */
        bw_len = 0;
    if (all) {
        r[1] = bw > 0 && bw_len > 0 ? (double)bw_len / bw : DBL_MAX;
        r[2] = -(double)bw_len;
    } else {
        r[1] = bw > 0 ? -bw : -DBL_MAX;
        r[2] = (double)bw_len;
    }
    if (long_only)
        e->file_long_tries++;
    else
        e->file_tries++;
    if (core_agree_max(ctx, PASSION_OK, r, 3))
        return;
    double got = 0, len = 0;
    if (all && r[1] < DBL_MAX && r[2] < 0) {
        len = -r[2] * p->P;
        got = len / r[1];
    } else if (!all && r[1] > -DBL_MAX) {
        len = r[2];
        got = -r[1];
    }
    /* one sample per try, the model on the best of them (the smallest
       latency, the largest bandwidth: load only ever slows a reading): a
       single measurement ranged 0.13-3.5 ms latency and 36-148 MB/s
       between runs of one benchmark on a loaded machine, and flipped
       auto's choices from run to run */
    if (r[0] > 0 && e->file_nlat < COLL_FILE_SAMPLES) {
        e->file_nlat++;
        if (e->file_lat == 0 || r[0] < e->file_lat)
            e->file_lat = r[0];
    }
    if (got > 0 && (long_only || e->file_nbw < COLL_FILE_SAMPLES)) {
        e->file_nbw += !long_only;
        if (got > e->file_bw) {
            e->file_bw = got;
            e->file_bw_rank = (int64_t)(all ? len / p->P : len);
        }
        if (len > (double)e->file_bw_len)
            e->file_bw_len = (int64_t)len;
    }
    if (ctx->opt.verbosity >= 2 && ctx->rank == 0)
        fprintf(stderr, "passion: file costs measured (try %d: latency "
                "%.3g s, bandwidth %.3g B/s from %.3g MB streamed by %d "
                "rank(s)): model latency %.3g s from %d, bandwidth %.3g "
                "B/s from %d (0 = not measured, default kept)%s\n",
                e->file_tries, r[0], got, len / 1e6, all ? p->P : 1,
                e->file_lat, e->file_nlat, e->file_bw, e->file_nbw,
                long_only ? "; a longer stream" : "");
}

/*
 * The per-round limits: the stage holds 2x bytes, each exchange buffer x
 * (at most three at once: two send buffers and one receive buffer for
 * reads, the other way round for writes), and the exchange holds its own
 * staging for a round in which no rank sends or receives more than x
 * bytes (coll_xchg_need; for auto none, unless on several nodes the
 * candidate priced cheapest on its own rounds runs: coll_xchg_pick in
 * etp_model.c); all within what the descriptors leave of the
 * budget, so that the budget bounds the whole call. The same on every
 * rank (the budget and the exchange option are checked equal in the
 * FAD). x = 0 (a budget that cannot hold the descriptors) makes the
 * schedule fail with PASSION_ENOMEM on every rank.
 */
int64_t coll_plan_desc_bytes(int P, int nd)
{
    /* every rank sends words for PASSION_MAX_DIMS dimensions, whatever nd
       (see coll_plan_init) */
    (void)nd;
    int64_t W = COLL_FAD_HEAD + 3 * (int64_t)PASSION_MAX_DIMS;
    return ((int64_t)P * W + 5 * (int64_t)P) * 8 +
           (int64_t)P * (int64_t)sizeof(ocad_xfer) + coll_etp_desc_bytes(P);
}

void coll_plan_caps_alg(coll_plan *p, int64_t M, int alg)
{
    /* the search below depends on M, P and the algorithm alone: the last
       call's result when they are the same (the search, about forty
       evaluations of the exchange's staging, was a large share of a tiny
       call's time) */
    coll_ext *e = p->ctx->ext[CORE_EXT_COLL];
    if (e && e->caps_P == p->P && e->caps_M == M && e->caps_alg == alg) {
        p->cap_xchg = e->caps_xchg;
        p->cap_stage = 2 * e->caps_xchg;
        return;
    }
    int64_t left = M - coll_plan_desc_bytes(p->P, p->nd);
    int64_t lo = 0, hi = left > 0 ? left / 5 : 0;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (5 * mid + coll_xchg_need(alg, p->P, mid) <= left)
            lo = mid;
        else
            hi = mid - 1;
    }
    p->cap_xchg = lo;
    p->cap_stage = 2 * lo;
    if (e) {
        e->caps_P = p->P;
        e->caps_M = M;
        e->caps_alg = alg;
        e->caps_xchg = lo;
    }
}

static void plan_caps(coll_plan *p, int64_t M)
{
    coll_plan_caps_alg(p, M, p->ctx->opt.exchange);
}

/* the file costs of a call: options, else measured, else the defaults;
   memory-like when the data is cached (warm): a request costs req, the
   learned cost of a cached read request (ocad_req_cost; 0: not learned
   yet, COLL_WARM_LATENCY), and reads of cached data do not overlap (the
   CPU copies them one after another) */
static ocad_env call_env(passion_ctx *ctx, int warm, double req,
                         int op_write)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    ocad_env env = ocad_env_ctx(ctx);
    if (ctx->opt.io_latency <= 0 && e && e->file_lat > 0)
        env.lat = e->file_lat;
    if (ctx->opt.io_bandwidth <= 0 && e && e->file_bw > 0)
        env.bw = e->file_bw;
    if (warm) {
        env.lat = req > 0 ? req : COLL_WARM_LATENCY;
        /* a write request costs more than a read's learned cost: the
           pages it dirties (patterns c001 warm, P = 2: 830 direct writes
           took 2.5-4.3 ms, 3-5 us each, against 0.3-0.44 us per cached
           read request measured in the same runs; priced at the read's
           cost, auto wrote them direct, 17-28x slower than sieving) */
        if (op_write && env.lat < COLL_WARM_LATENCY)
            env.lat = COLL_WARM_LATENCY;
        env.bw = COLL_WARM_BANDWIDTH;
        env.conc = 1;
        env.warm = 1;
    }
    return env;
}

double coll_sync_cost(passion_ctx *ctx)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    if (e && e->sync_n > 0)
        return e->sync_med;
    coll_xchg_costs mc;
    if (!coll_xchg_costs_ready(ctx, &mc))
        mc = coll_xchg_costs_default();
    return coll_xchg_alpha(&mc);
}

double coll_round_inner(passion_ctx *ctx)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    if (e && e->sync_n > 0)
        return e->sync_sorted[0];
    return coll_sync_cost(ctx);
}

int coll_sync_samples(passion_ctx *ctx, double *v)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    int n = e ? e->sync_n : 0;
    for (int i = 0; i < n; i++)
        v[i] = e->sync[i];
    return n;
}

void coll_fixed_learn(passion_ctx *ctx, int cls, double seconds)
{
    coll_ext *e = ext_get(ctx);
    if (!e || cls < 0 || cls >= COLL_FIX_N)
        return;
    seconds = seconds < 0 ? 0 : seconds > COLL_FIXED_CAP ? COLL_FIXED_CAP
                                                         : seconds;
    e->fixed[cls][e->fixed_i[cls]] = seconds;
    e->fixed_i[cls] = (e->fixed_i[cls] + 1) % COLL_FIXED_KEEP;
    if (e->fixed_n[cls] < COLL_FIXED_KEEP)
        e->fixed_n[cls]++;
}

double coll_fixed_mine(passion_ctx *ctx, int cls)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    if (!e || cls < 0 || cls >= COLL_FIX_N || e->fixed_n[cls] == 0)
        return -1;
    /* the lower quartile (the smallest of up to 4 samples) */
    double w[COLL_FIXED_KEEP];
    int n = e->fixed_n[cls];
    memcpy(w, e->fixed[cls], (size_t)n * sizeof *w);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && w[j - 1] > w[j]; j--) {
            double t = w[j];
            w[j] = w[j - 1];
            w[j - 1] = t;
        }
    return w[(n - 1) / 4];
}

/* the COLL_FAD_FIXED word: per class 32 bits, the samples held (bits
   24-31) and the learned cost in ns (bits 0-23: up to 16 ms, above
   COLL_FIXED_CAP) */
static int64_t fixed_word(passion_ctx *ctx)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    uint64_t w = 0;
    for (int c = 0; c < COLL_FIX_N && e; c++) {
        double v = coll_fixed_mine(ctx, c);
        if (v < 0)
            continue;
        uint64_t ns = (uint64_t)(v * 1e9 + 0.5);
        ns = ns > 0xffffff ? 0xffffff : ns;
        w |= (((uint64_t)e->fixed_n[c] << 24) | ns) << (32 * c);
    }
    return (int64_t)w;
}

void coll_stream_note(passion_ctx *ctx, uint64_t bytes, double seconds)
{
    coll_ext *e = ext_get(ctx);
    if (!e)
        return;
    uint64_t pg = bytes / 4096, us = (uint64_t)(seconds * 1e6 + 0.5);
    e->stream_pages = pg > UINT32_MAX ? UINT32_MAX : (uint32_t)pg;
    e->stream_us = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
    if (!e->stream_pages || !e->stream_us)
        e->stream_pages = e->stream_us = 0;
}

int coll_stream_ramp(passion_ctx *ctx, int64_t *len_short,
                     int64_t *len_long, double *bw_long)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    *len_short = *len_long = 0;
    *bw_long = 0;
    if (!e || ctx->opt.io_bandwidth > 0 || e->file_bw <= 0 ||
        e->file_bw_rank <= 0 || e->stream_bw <= e->file_bw ||
        e->stream_len <= e->file_bw_rank)
        return 0;
    *len_short = e->file_bw_rank;
    *len_long = e->stream_len;
    *bw_long = e->stream_bw;
    return 1;
}

double coll_stream_rate(const coll_plan *p, int64_t len)
{
    if (p->ramp_long <= p->ramp_short || len <= p->ramp_short)
        return p->io_bw;
    if (len >= p->ramp_long)
        return p->bw_long;
    double f = (double)(len - p->ramp_short) /
               (double)(p->ramp_long - p->ramp_short);
    return p->io_bw + f * (p->bw_long - p->io_bw);
}

double coll_stream_bw(passion_ctx *ctx)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    return e ? e->stream_bw : 0;
}

int64_t coll_file_streamed(passion_ctx *ctx)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    return e ? e->file_bw_len : 0;
}

static int64_t stream_word(passion_ctx *ctx)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    return e ? (int64_t)(((uint64_t)e->stream_pages << 32) | e->stream_us)
             : 0;
}

/* After the FAD: the ranks' long reads of the last uncached call, all
   together (coll_stream_note); the same on every rank */
static void stream_learn(passion_ctx *ctx, const int64_t *fad, int W)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    uint64_t pages = 0, us = 0;
    for (int r = 0; r < ctx->size; r++) {
        uint64_t w = (uint64_t)fad[(int64_t)r * W + COLL_FAD_STREAM];
        pages += w >> 32;
        us = (w & 0xffffffffu) > us ? (w & 0xffffffffu) : us;
    }
    int n = 0;
    for (int r = 0; r < ctx->size; r++)
        n += ((uint64_t)fad[(int64_t)r * W + COLL_FAD_STREAM] >> 32) > 0;
    double bytes = (double)pages * 4096;
    if (!e || us == 0 || bytes < (double)COLL_STREAM_LEARN_MIN)
        return;
    double bw = bytes / ((double)us * 1e-6);
    if (bw > e->stream_bw) {
        e->stream_bw = bw;
        e->stream_len = (int64_t)(bytes / (n > 0 ? n : 1));
        if (ctx->opt.verbosity >= 2 && ctx->rank == 0)
            fprintf(stderr, "passion: file bandwidth learned from the "
                    "last uncached call's long reads: %.3g B/s (%.3g MB "
                    "in %.3g s, %d rank(s))\n", bw, bytes / 1e6,
                    (double)us * 1e-6, n);
    }
}

int coll_sync_learned(passion_ctx *ctx)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    return e ? e->sync_n : 0;
}

int64_t coll_write_pages(int64_t requests, int64_t bytes, int64_t ext)
{
    int64_t pg = requests + bytes / 4096, most = ext / 4096 + 1;
    return pg < most ? pg : most;
}

/* this rank's FAD word of the previous round (0: none) */
static int64_t sync_word(const coll_ext *e)
{
    if (!e || !e->sync_wait)
        return 0;
    return (int64_t)(((uint64_t)e->sync_at << 32) | e->sync_wait);
}

/* After the FAD: learn the sample of the previous round from every
   rank's word (all or none: a rank without one sent 0), then keep this
   round's arrival t0 and wait for the next. */
static void sync_learn(passion_ctx *ctx, const int64_t *fad, int W,
                       double t0, double t1)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    const int P = ctx->size;
    int all = 1;
    int64_t amax = INT64_MIN, cmax = INT64_MIN, wmin = INT64_MAX, wmax = 0;
    uint32_t a0 = (uint32_t)((uint64_t)fad[COLL_FAD_SYNC] >> 32);
    for (int r = 0; r < P && all; r++) {
        uint64_t u = (uint64_t)fad[(int64_t)r * W + COLL_FAD_SYNC];
        int64_t w = (int64_t)(u & 0xffffffffu);
        all = w > 0;
        /* arrivals relative to rank 0's (one host's clock; elsewhere the
           clamp below keeps the sample within the waits) */
        int64_t a = (int32_t)((uint32_t)(u >> 32) - a0);
        amax = a > amax ? a : amax;
        cmax = a + w > cmax ? a + w : cmax;
        wmin = w < wmin ? w : wmin;
        wmax = w > wmax ? w : wmax;
    }
    if (e && all && P > 1) {
        int64_t v = cmax - amax;
        v = v < wmin ? wmin : v > wmax ? wmax : v;
        double x = (double)v * 1e-9;
        /* the sorted copy: the sample leaving the ring out, x in */
        int n = e->sync_n;
        if (n == COLL_SYNC_KEEP) {
            double old = e->sync[e->sync_i];
            int k = 0;
            while (k < n - 1 && e->sync_sorted[k] != old)
                k++;
            memmove(e->sync_sorted + k, e->sync_sorted + k + 1,
                    (size_t)(n - 1 - k) * sizeof *e->sync_sorted);
            n--;
        }
        int k = n;
        while (k > 0 && e->sync_sorted[k - 1] > x) {
            e->sync_sorted[k] = e->sync_sorted[k - 1];
            k--;
        }
        e->sync_sorted[k] = x;
        e->sync[e->sync_i] = x;
        e->sync_i = (e->sync_i + 1) % COLL_SYNC_KEEP;
        if (e->sync_n < COLL_SYNC_KEEP)
            e->sync_n++;
        /* the median: a round usually costs this; the mean followed the
           rare scheduling stalls of a loaded machine (milliseconds) and
           made auto trade cheap rounds for costly requests. Kept sorted
           as the samples come and go: what core_learned gives (the
           smallest until CORE_LEARN_TRUST samples, then the median),
           without a sort per call */
        e->sync_med = e->sync_n >= CORE_LEARN_TRUST
                          ? e->sync_sorted[e->sync_n / 2]
                          : e->sync_sorted[0];
    }
    if (e) {
        double w = (t1 - t0) * 1e9;
        e->sync_at = (uint32_t)(uint64_t)(t0 * 1e9);
        e->sync_wait = w < 1 ? 1 : w > 4e9 ? 0xffffffffu : (uint32_t)w;
    }
}

uint64_t coll_early_sig(const passion_file *f, const passion_section *s,
                        const passion_memspec *m, int op_write)
{
    /* FNV-1a over the file, the operation and the section (the memory
       layout too: it changes the early transfer, not the choice) */
    uint64_t h = 1469598103934665603ull;
    int64_t v[4 + 3 * PASSION_MAX_DIMS];
    int n = 0, nd = f->a->nd;
    v[n++] = f->ident[0];
    v[n++] = f->ident[1];
    v[n++] = op_write;
    v[n++] = m != NULL;
    for (int d = 0; d < nd; d++) {
        v[n++] = s->start[d];
        v[n++] = s->count[d];
        v[n++] = s->stride[d];
    }
    const unsigned char *b = (const unsigned char *)v;
    for (size_t i = 0; i < (size_t)n * sizeof *v; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h ? h : 1;
}

void coll_early_remember(passion_ctx *ctx, uint64_t sig, int method)
{
    coll_ext *e = ext_get(ctx);
    if (e) {
        e->indep_sig = method >= 0 ? sig : 0;
        e->indep_method = method >= 0 ? method : PASSION_METHOD_AUTO;
        e->indep_left = COLL_EARLY_AGAIN;
    }
}

int coll_io_early(passion_file *f, const passion_section *s,
                  const passion_memspec *m, void *buf, int method,
                  int op_write, int64_t elems, int rc, coll_early *out)
{
    passion_ctx *ctx = f->ctx;
    out->cached = -1;
    out->done = 0;
    out->pred = 0;
    if (rc)
        return rc;
    ocad_xfer x;
    int have_x = 0, unprobed = 0;
    if (method != PASSION_METHOD_DIRECT && method != PASSION_METHOD_SIEVE &&
        ctx->opt.io_latency <= 0 && ctx->opt.io_bandwidth <= 0 &&
        elems > 0) {
        ocad_xfer_build(&f->fv, s, m, &x);
        have_x = 1;
        /* an extent of at most COLL_PROBE_MIN bytes is read in one
           request whatever the cache holds: counted as cached without
           the probe's system call (and not learned from) */
        unprobed = x.nblocks > 0 && x.fend - x.foff0 <= COLL_PROBE_MIN;
        if (unprobed)
            out->cached = 1000;
        else if (x.nblocks > 0)
            out->cached = core_io_cached(f->fh, x.foff0, x.fend);
    }
    /* a write waits for the FAD, where every rank learns whether the
       call may proceed (a refused write writes nothing): only its probe
       is taken here */
    if (op_write || method == PASSION_METHOD_ETP_STATIC ||
        method == PASSION_METHOD_ETP_DYNAMIC)
        return PASSION_OK;
    if (elems == 0) { /* nothing to read: done */
        out->done = 1;
        return PASSION_OK;
    }
    if (!have_x)
        ocad_xfer_build(&f->fv, s, m, &x);
    if (out->cached >= 950 && !unprobed)
        ocad_req_calibrate(ctx, f->fh, x.foff0, x.fend, x.blen);
    ocad_env env = call_env(ctx, out->cached >= 950, ocad_req_cost(ctx), 0);
    if (unprobed)
        env.warm = 0;
    int64_t left = ctx->opt.memory_budget - ctx->staging_now;
    env.budget = left > 0 ? left : 1;
    int rmethod = method; /* auto's remembered choice below */
    if (method == PASSION_METHOD_AUTO) {
        /* not while the file's costs may still be measured on this
           uncached extent (file_calibrate, after the FAD) */
        coll_ext *e = ctx->ext[CORE_EXT_COLL];
        if (out->cached >= 0 && out->cached < 950 &&
            file_pending(e))
            return PASSION_OK;
        /* worth it when this rank's read costs at most the round it
           saves: if the ranks then choose the two-phase method, at most
           that is lost */
        double S = coll_sync_cost(ctx);
        /* the same read whose ranks chose an independent method last
           call (a memory layout aside): reading early saves the round
           the agreement after it costs (auto paid two rounds
           where the fixed method it chose paid one); read with the
           method chosen then (direct on every rank where the model
           found that cheaper than each rank's own sieve choice: before,
           the early read took each rank's own choice, and sieved where
           auto had chosen direct reads) */
        int again = !m && e && e->indep_sig && e->indep_left > 0 &&
                    e->indep_sig == coll_early_sig(f, s, m, op_write);
        if (again) { /* on every rank alike (the choice was agreed) */
            e->indep_left--;
            rmethod = e->indep_method;
        }
        passion_plan_info pi;
        ocad_plan_count(ctx, &x, rmethod, 0, &pi, &env);
        double t = pi.seconds;
        if (pi.method == PASSION_METHOD_SIEVE)
            t += (double)(elems * f->a->esize) / COLL_COPY_BW;
        /* a read early is what independent access would do anyway:
           lost only if the ranks choose the two-phase method */
        S *= 2;
        /* one request whose transfer costs no more than its latency
           (at most L B bytes, the hole size of the model): the
           two-phase method cannot bring these bytes sooner (its
           aggregator makes a request for them too, then a message),
           and once read they leave the plan (coll_plan_init): read
           early whatever a round costs. Before, a single uncached
           request (latency 0.1-0.3 ms here) was dearer than two
           learned rounds (tens of us) and waited for the FAD: two
           collective rounds where the fixed method took one, on the
           first call of every small cold read (patterns, P = 2
           cold: 8 of 24 reads) */
        int one = pi.requests <= 1 &&
                  (double)pi.bytes_file <= env.lat * env.bw;
        if (t > S && !(again && t <= COLL_FIXED_LEARN_MAX) && !one)
            return PASSION_OK;
        out->pred = t > 0 ? t : 1e-9;
    }
    out->done = 1;
    CORE_CHAOS(EARLY_IO);
    return ocad_xfer_read(ctx, f->fh, &x, buf, rmethod, &env);
}

/* the COLL_FAD_CACHED word: probe + 1 in bits 0-15, done in bit 16, the
   prediction as a float in bits 32-63 */
static int64_t early_word(const coll_early *e)
{
    float pf = (float)e->pred;
    uint32_t pb;
    memcpy(&pb, &pf, sizeof pb);
    uint64_t w = (uint64_t)(e->cached + 1) & 0xffff;
    w |= (uint64_t)(e->done != 0) << 16;
    w |= (uint64_t)pb << 32;
    return (int64_t)w;
}

static int64_t early_word_of(const coll_plan *p, int r)
{
    const int W = COLL_FAD_HEAD + 3 * PASSION_MAX_DIMS;
    return p->fad[(int64_t)r * W + COLL_FAD_CACHED];
}

static int early_cached(const coll_plan *p, int r)
{
    return (int)((uint64_t)early_word_of(p, r) & 0xffff) - 1;
}

int coll_early_done(const coll_plan *p, int r)
{
    return (int)(((uint64_t)early_word_of(p, r) >> 16) & 1);
}

double coll_early_pred(const coll_plan *p, int r)
{
    uint32_t pb = (uint32_t)((uint64_t)early_word_of(p, r) >> 32);
    float pf;
    memcpy(&pf, &pb, sizeof pf);
    return (double)pf;
}

/* p->byext: the ranks with elements by their extents' starts (a
   heapsort: qsort has no argument for the plans) */
static int before(const coll_plan *p, int64_t r, int64_t q)
{
    int64_t a = p->x[r].foff0, b = p->x[q].foff0;
    return a < b || (a == b && r < q);
}

static void sift(coll_plan *p, int64_t *h, int64_t k, int64_t n)
{
    for (int64_t c; (c = 2 * k + 1) < n; k = c) {
        if (c + 1 < n && before(p, h[c], h[c + 1]))
            c++;
        if (!before(p, h[k], h[c]))
            return;
        int64_t t = h[k];
        h[k] = h[c];
        h[c] = t;
    }
}

static void sort_by_extent(coll_plan *p)
{
    int64_t n = 0, *h = p->byext;
    for (int r = 0; r < p->P; r++)
        if (p->elems[r])
            h[n++] = r;
    for (int64_t k = n / 2 - 1; k >= 0; k--)
        sift(p, h, k, n);
    for (int64_t e = n - 1; e > 0; e--) {
        int64_t t = h[0];
        h[0] = h[e];
        h[e] = t;
        sift(p, h, 0, e);
    }
    p->nbyext = (int)n;
}

/*
 * Do two non-empty sections' file extents interleave? In O(P log P), not
 * pair by pair (P^2 pairs on every rank, every call; no change measurable
 * up to P = 32, where the plan's own work after the FAD took 14-30 us a
 * call per rank): by their starts (p->byext), the extents are disjoint
 * exactly when each ends at or before the next one starts (if two met,
 * every extent starting between them would meet the first).
 */
static int extents_meet(const coll_plan *p)
{
    for (int k = 0; k + 1 < p->nbyext; k++)
        if (p->x[p->byext[k]].fend > p->x[p->byext[k + 1]].foff0)
            return 1;
    return 0;
}

void coll_ranks_in(const coll_plan *p, int64_t a, int64_t b, int *k0,
                   int *k1)
{
    /* the first whose extent starts at or after b */
    int lo = 0, hi = p->nbyext;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (p->x[p->byext[mid]].foff0 < b)
            lo = mid + 1;
        else
            hi = mid;
    }
    *k1 = lo;
    /* disjoint extents: their ends are in the same order; the first
       that ends after a */
    lo = 0;
    if (!p->ext_overlap) {
        hi = *k1;
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (p->x[p->byext[mid]].fend <= a)
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    *k0 = lo;
}

int coll_plan_init(coll_plan *p, passion_file *f, const passion_section *s,
                   const passion_memspec *m, int method, int op_write, int rc,
                   const coll_early *early)
{
    passion_ctx *ctx = f->ctx;
    memset(p, 0, sizeof *p);
    p->ctx = ctx;
    p->f = f;
    p->P = ctx->size;
    p->me = ctx->rank;
    p->op_write = op_write;
    p->method = method;
    p->nd = f->a->nd;
    p->esize = f->a->esize;
    p->xalg = PASSION_XCHG_DEFAULT;
    /* every rank sends the same number of words, whatever its array's
       dimensions (a rank may pass another array: found in the FAD) */
    const int P = p->P, nd = p->nd, W = COLL_FAD_HEAD + 3 * PASSION_MAX_DIMS;

    int64_t words = (int64_t)P * W + 5 * (int64_t)P;
    p->bytes_desc = words * 8 + (int64_t)P * (int64_t)sizeof(ocad_xfer);
    /* (coll_plan_desc_bytes adds the rounds' descriptors to these) */
    /* a budget that cannot hold the descriptors: this rank still takes
       part in the FAD allgather (with memory outside the budget, held
       only for this failing call) and every rank returns ENOMEM */
    char *mem;
    if (p->bytes_desc > ctx->opt.memory_budget) {
        if (!rc)
            rc = core_err(ctx, PASSION_ENOMEM,
                          "memory budget %lld bytes cannot hold the %lld "
                          "bytes of access descriptors of %d ranks",
                          (long long)ctx->opt.memory_budget,
                          (long long)p->bytes_desc, P);
        mem = malloc((size_t)p->bytes_desc);
        p->desc_uncounted = 1;
    } else {
        mem = core_stage_alloc(ctx, p->bytes_desc);
    }
    int64_t mine[COLL_FAD_HEAD + 3 * PASSION_MAX_DIMS];
    memset(mine, 0, sizeof mine);
    if (!mem && !rc)
        rc = core_err(ctx, PASSION_ENOMEM, "%lld bytes of access descriptors",
                      (long long)p->bytes_desc);
    int64_t M = ctx->opt.memory_budget;
    plan_caps(p, M);
    if (!rc && (method == PASSION_METHOD_AUTO ||
                method == PASSION_METHOD_ETP_STATIC ||
                method == PASSION_METHOD_ETP_DYNAMIC)) {
        p->reserve = reserve_get(ctx, p->cap_stage + 4 * p->cap_xchg +
                                          7 * 4096 +
                                          coll_etp_desc_bytes(P));
        if (!p->reserve)
            rc = core_err(ctx, PASSION_ENOMEM,
                          "reserving %lld bytes of address space for the "
                          "rounds", (long long)(M + M / 5));
    }
    mine[COLL_FAD_RC] = rc;
    mine[COLL_FAD_METHOD] = method;
    mine[COLL_FAD_OP] = op_write;
    mine[COLL_FAD_BUDGET] = ctx->opt.memory_budget;
    mine[COLL_FAD_XCHG] = ctx->opt.exchange;
    mine[COLL_FAD_LAT] = dbits(ctx->opt.io_latency);
    mine[COLL_FAD_BW] = dbits(ctx->opt.io_bandwidth);
    mine[COLL_FAD_ALPHA] = dbits(ctx->opt.msg_alpha);
    mine[COLL_FAD_BETA] = dbits(ctx->opt.msg_beta);
    mine[COLL_FAD_FILE] = f->ident[0];
    mine[COLL_FAD_LAYOUT] = f->ident[1];
    coll_early none = {-1, 0, 0};
    mine[COLL_FAD_CACHED] = early_word(rc ? &none : early);
    mine[COLL_FAD_STRIPE] = ctx->opt.stripe_size > 0 ? ctx->opt.stripe_size
                                                      : core_io_stripe(f->fh);
    /* the last round's timing (the state is made here: a rank without it
       sends 0, and no rank learns from this round) */
    mine[COLL_FAD_SYNC] = sync_word(ext_get(ctx));
    /* this rank's learned cost of a cached read request (0: none) */
    mine[COLL_FAD_REQ] = dbits(ocad_req_cost(ctx));
    /* and of each method's fixed cost (-1: none) */
    mine[COLL_FAD_FIXED] = fixed_word(ctx);
    /* and its long reads in the last uncached call (coll_stream_note) */
    mine[COLL_FAD_STREAM] = stream_word(ctx);
    if (!rc)
        for (int d = 0; d < nd; d++) {
            mine[COLL_FAD_HEAD + d] = s->start[d];
            mine[COLL_FAD_HEAD + nd + d] = s->count[d];
            mine[COLL_FAD_HEAD + 2 * nd + d] = s->stride[d];
        }
    /* A rank without the descriptors' memory still takes part in the
       allgather, into a buffer on the stack, and fails in the agreement
       after it like any other rank. Past FAD_STACK bytes (hundreds of
       ranks) the ranks agree on the allocation first: one more round. */
    int64_t fad_stack[FAD_STACK / 8];
    int64_t *fad = (int64_t *)mem;
    if (mem) {
        p->fad = (int64_t *)mem;
        p->elems = p->fad + (int64_t)P * W;
        p->dlo = p->elems + P;
        p->dhi = p->dlo + P;
        p->scratch = p->dhi + P;
        p->byext = p->scratch + P;
        p->x = (ocad_xfer *)(p->byext + P);
    }
    if ((int64_t)P * W * 8 > FAD_STACK) {
        int arc = core_agree(ctx, rc);
        if (arc)
            return arc;
    } else if (!mem) {
        fad = fad_stack;
    }
    CORE_CHAOS(FAD_BEFORE);
    double t0 = core_now();
    MPI_Request req;
    int mrc = MPI_Iallgather(mine, W, MPI_INT64_T, fad, W, MPI_INT64_T,
                             ctx->comm, &req) != MPI_SUCCESS ||
              coll_waitall(1, &req);
    double t1 = core_now();
    ctx->cnt.t_comm += t1 - t0;
    ctx->cnt.rounds++;
    if (mrc)
        return core_agree(ctx, core_err(ctx, PASSION_EMPI,
                                        "MPI_Iallgather of the FAD"));
    CORE_CHAOS(FAD_AFTER);
    sync_learn(ctx, fad, W, t0, t1);
    stream_learn(ctx, fad, W);
    if (!mem)
        return core_agree(ctx, rc);
    int anybad = 0;
    for (int r = 0; r < P; r++)
        anybad |= p->fad[(int64_t)r * W + COLL_FAD_RC] != 0;
    if (anybad)
        return core_agree(ctx, rc);
    for (int r = 1; r < P; r++)
        for (int w = COLL_FAD_METHOD; w < COLL_FAD_AGREE_END; w++)
            if (p->fad[(int64_t)r * W + w] != p->fad[w]) {
                static const char *what[] = {"", "methods", "operations",
                                             "memory budgets",
                                             "exchange options",
                                             "io_latency options",
                                             "io_bandwidth options",
                                             "msg_alpha options",
                                             "msg_beta options",
                                             "files (paths)",
                                             "arrays (shape, element size, "
                                             "storage order or data "
                                             "offset)"};
                /* every rank finds it (the FAD is the same everywhere):
                   agreed, so that every rank has rank 0's detail */
                return core_agree(
                    ctx, core_err(ctx, PASSION_EMISMATCH,
                                  "ranks 0 and %d passed different %s to "
                                  "a collective section access",
                                  r, what[w]));
            }

    /* rank 0's stripe size, so that every rank aligns alike */
    p->align = p->fad[COLL_FAD_STRIPE];
    if (p->align < 1 || p->align > (1LL << 30))
        p->align = 4096;
    int all_early = method != PASSION_METHOD_ETP_STATIC &&
                    method != PASSION_METHOD_ETP_DYNAMIC;
    for (int r = 0; r < P; r++) {
        const int64_t *e = p->fad + (int64_t)r * W + COLL_FAD_HEAD;
        int64_t n = 1;
        int empty = 0;
        for (int d = 0; d < nd; d++)
            empty |= e[nd + d] == 0;
        /* validated: the product of a non-empty section's counts fits; an
           empty one may hold any count elsewhere */
        for (int d = 0; d < nd && !empty; d++)
            n *= e[nd + d];
        p->elems[r] = empty ? 0 : n;
        all_early = all_early && coll_early_done(p, r);
    }
    /* every rank's read was done before the FAD (coll_io_early; a
       write's only where no rank has elements): the call ends here
       (section_all), with nothing more to plan. The calibration below is
       not needed either: a rank reads early only on cached data or once
       the file's costs are measured */
    if (all_early)
        return PASSION_OK;
    /* a rank whose read was done before the FAD has its data: it takes
       part in the rest of the call with nothing, so that the model
       prices only the other ranks' access and the two-phase method
       neither reads its bytes again nor sends them to it (before, its
       elements stayed in the plan: the aggregators read them a second
       time and sent them over). The flags are in the FAD: every rank
       sees the same sections. */
    if (!op_write)
        for (int r = 0; r < P; r++)
            if (coll_early_done(p, r))
                p->elems[r] = 0;
    p->lo = INT64_MAX;
    p->hi = INT64_MIN;
    for (int r = 0; r < P; r++) {
        const int64_t *e = p->fad + (int64_t)r * W + COLL_FAD_HEAD;
        passion_section sec;
        memset(&sec, 0, sizeof sec);
        for (int d = 0; d < nd; d++) {
            sec.start[d] = e[d];
            sec.count[d] = e[nd + d];
            sec.stride[d] = e[2 * nd + d];
        }
        int64_t n = p->elems[r];
        ocad_xfer_build(&f->fv, &sec, NULL, &p->x[r]);
        if (n > 0) {
            if (p->x[r].foff0 < p->lo)
                p->lo = p->x[r].foff0;
            if (p->x[r].fend > p->hi)
                p->hi = p->x[r].fend;
        }
    }
    if (p->lo > p->hi)
        p->lo = p->hi = f->fv.base;
    if (p->elems[p->me] > 0)
        ocad_xfer_build(&f->fv, s, m, &p->xme);
    /* interleaved extents (sieved writes must then be ordered) and, for
       writes, overlapping elements (direct writes must then be ordered;
       elements meet only where extents do) */
    sort_by_extent(p);
    p->ext_overlap = extents_meet(p);
    p->overlap = 0;
    for (int r = 0; r < P && op_write && p->ext_overlap && !p->overlap;
         r++) {
        if (!p->elems[r])
            continue;
        for (int q = r + 1; q < P && !p->overlap; q++)
            p->overlap =
                p->elems[q] && p->x[r].foff0 < p->x[q].fend &&
                p->x[q].foff0 < p->x[r].fend &&
                sections_meet(nd, p->fad + (int64_t)r * W + COLL_FAD_HEAD,
                              p->fad + (int64_t)q * W + COLL_FAD_HEAD);
    }
    /* the file's costs: options, else memory-like when the ranks found
       (nearly) all their data in the page cache, else the disk defaults */
    int64_t cached = 0, probed = 0;
    for (int r = 0; r < P; r++) {
        int64_t c = early_cached(p, r);
        if (c >= 0) {
            cached += c;
            probed++;
        }
    }
    p->warm = probed > 0 && cached >= 950 * probed;
    p->cached_pm = probed > 0 ? (int)(cached / probed) : 1000;
    /* the state is allocated before the FAD (reserve_get) for the ETP
       methods; elsewhere a rank without it just skips the measurement,
       which every rank then sees as "not measured" */
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    int measure = !p->warm && probed > 0 &&
                  file_pending(e);
    if (measure) {
        e = ext_get(ctx);
        coll_ext none = {0};
        file_calibrate(p, e ? e : &none, 0);
    } else if (!p->warm && probed > 0 && stream_pending(p, e)) {
        file_calibrate(p, e, 1);
    }
    /* the file costs of this call: options, else memory-like when the
       data is cached, else measured, else the defaults */
    /* a cached read request: the slowest rank's learned cost, the same
       on every rank (from the FAD) */
    double req_cost = 0;
    for (int r = 0; r < P; r++) {
        double v;
        int64_t b = p->fad[(int64_t)r * W + COLL_FAD_REQ];
        memcpy(&v, &b, sizeof v);
        req_cost = v > req_cost ? v : req_cost;
    }
    p->env = call_env(ctx, p->warm, req_cost, p->op_write);
    /* the methods' fixed costs: the largest learned and the fewest
       samples (a rank that could not learn has none), the same
       everywhere */
    for (int c = 0; c < COLL_FIX_N; c++) {
        int64_t ns = 0, n = COLL_FIXED_KEEP;
        for (int r = 0; r < P; r++) {
            uint64_t w = (uint64_t)p->fad[(int64_t)r * W + COLL_FAD_FIXED] >>
                         (32 * c);
            int64_t rn = (int64_t)((w >> 24) & 0xff),
                    rv = (int64_t)(w & 0xffffff);
            n = rn < n ? rn : n;
            ns = rv > ns ? rv : ns;
        }
        p->fixed[c] = n > 0 ? (double)ns * 1e-9 : -1;
        p->fixed_n[c] = (int)n;
    }
    p->io_lat = p->env.lat;
    p->io_bw = p->env.bw;
    /* the readahead's ramp (coll_stream_rate): on uncached data, where
       the calls' own streams were longer than the calibration's and
       faster, with the calibration's rate in use (no io_bandwidth
       option); the same on every rank (learned from the FAD) */
    p->ramp_short = p->ramp_long = 0;
    p->bw_long = 0;
    if (!p->warm && p->io_bw == (e ? e->file_bw : -1))
        coll_stream_ramp(ctx, &p->ramp_short, &p->ramp_long, &p->bw_long);
    double h = p->io_lat * p->io_bw;
    p->hole = h > (double)(INT64_MAX / 4) ? INT64_MAX / 4 : (int64_t)h;
    return PASSION_OK;
}

int coll_extent_meets(const coll_plan *p, int r)
{
    if (!p->ext_overlap || !p->elems[r])
        return 0;
    for (int q = 0; q < p->P; q++)
        if (q != r && p->elems[q] && p->x[q].foff0 < p->x[r].fend &&
            p->x[r].foff0 < p->x[q].fend)
            return 1;
    return 0;
}

int coll_write_ordered(coll_plan *p, int method)
{
    if (p->P < 2)
        return 0;
    if (p->overlap)
        return 1;
    if (method == PASSION_METHOD_DIRECT || !p->ext_overlap)
        return 0;
    for (int r = 0; r < p->P; r++)
        if (coll_extent_meets(p, r) &&
            ocad_method_choose(p->ctx, &p->x[r], 1, method, &p->env) ==
                PASSION_METHOD_SIEVE)
            return 1;
    return 0;
}

void coll_plan_free(coll_plan *p)
{
    if (p->fad && p->desc_uncounted)
        free(p->fad);
    else if (p->fad)
        core_stage_free(p->ctx, p->fad, p->bytes_desc);
    p->fad = NULL;
    p->reserve = NULL; /* the context's, kept for the next call */
}
