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

static int64_t dbits(double v)
{
    int64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

/*
 * The round buffers' fallback reservation, kept in the context from one
 * collective call to the next (freed at passion_finalize): mapping and
 * unmapping it on every call cost several microseconds, a large share of
 * a small section's time. Only address space: the rounds carve from it
 * only when malloc fails, so it stays non-resident.
 */
typedef struct coll_ext {
    void *reserve;
    int64_t bytes;
} coll_ext;

static void coll_ext_free(passion_ctx *ctx, void *ext)
{
    (void)ctx;
    coll_ext *e = ext;
    free(e->reserve);
    free(e);
}

static void *reserve_get(passion_ctx *ctx, int64_t bytes)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    if (!e) {
        if (!(e = calloc(1, sizeof *e)))
            return NULL;
        ctx->ext[CORE_EXT_COLL] = e;
        ctx->ext_free[CORE_EXT_COLL] = coll_ext_free;
    }
    if (e->reserve && e->bytes >= bytes)
        return e->reserve;
    free(e->reserve);
    e->reserve = NULL;
    e->bytes = 0;
    void *res = NULL;
    if (posix_memalign(&res, 4096, (size_t)bytes))
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

/*
 * The file's costs, measured once per context ("calibrated costs ...
 * measured once per context"): called by every rank of the first auto or
 * extended two-phase call whose data the probe found uncached (the
 * condition is read from the FAD, so all ranks take part). Each rank
 * measures on its own extent, then the ranks agree on the slowest figures
 * (largest latency, smallest bandwidth), so that the cost model stays
 * identical everywhere. Up to 3 calls try while no rank has enough
 * uncached data; the options io_latency / io_bandwidth, when given, win.
 */
static void file_calibrate(coll_plan *p)
{
    passion_ctx *ctx = p->ctx;
    double lat = 0, bw = 0;
    /* the driver's calibration reads (core_io_measure): uncached pages of
       this rank's extent, a descriptor of their own without readahead */
    if (p->elems[p->me] > 0)
        core_io_measure(p->f->fh, p->x[p->me].foff0, p->x[p->me].fend, &lat,
                        &bw);
    double v[2] = {lat, bw > 0 ? -bw : -DBL_MAX}, r[2];
    ctx->file_tries++;
    MPI_Request req;
    if (MPI_Iallreduce(v, r, 2, MPI_DOUBLE, MPI_MAX, ctx->comm, &req) !=
            MPI_SUCCESS ||
        coll_waitall(1, &req))
        return;
    if (r[0] > 0)
        ctx->file_lat = r[0];
    if (r[1] > -DBL_MAX)
        ctx->file_bw = -r[1];
    if (ctx->opt.verbosity >= 2 && ctx->rank == 0)
        fprintf(stderr, "passion: file costs measured (try %d): latency %.3g "
                "s, bandwidth %.3g B/s (0 = not measured, default kept)\n",
                ctx->file_tries, ctx->file_lat, ctx->file_bw);
}

int coll_agree(passion_ctx *ctx, int rc)
{
    long long key = rc < 0 ? (long long)ctx->rank * 65536 + (-rc)
                           : (long long)ctx->size * 65536;
    long long min = key;
    MPI_Request req;
    double t0 = core_now();
    int bad = MPI_Iallreduce(&key, &min, 1, MPI_LONG_LONG, MPI_MIN, ctx->comm,
                             &req) != MPI_SUCCESS ||
              coll_waitall(1, &req);
    if (!bad && min < (long long)ctx->size * 65536) {
        int root = (int)(min / 65536);
        rc = -(int)(min % 65536);
        bad = MPI_Ibcast(ctx->detail, CORE_DETAIL_MAX, MPI_CHAR, root,
                         ctx->comm, &req) != MPI_SUCCESS ||
              coll_waitall(1, &req);
        ctx->detail[CORE_DETAIL_MAX - 1] = '\0';
    } else if (!bad) {
        rc = PASSION_OK;
    }
    ctx->cnt.t_comm += core_now() - t0;
    return bad ? core_err(ctx, PASSION_EMPI, "agreement on the outcome") : rc;
}

int coll_plan_init(coll_plan *p, passion_file *f, const passion_section *s,
                   const passion_memspec *m, int method, int op_write, int rc)
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
    const int P = p->P, nd = p->nd, W = COLL_FAD_HEAD + 3 * nd;

    int64_t words = (int64_t)P * W + 4 * (int64_t)P;
    p->bytes_desc = words * 8 + (int64_t)P * (int64_t)sizeof(ocad_xfer);
    char *mem = core_stage_alloc(ctx, p->bytes_desc);
    int64_t mine[COLL_FAD_HEAD + 3 * PASSION_MAX_DIMS];
    memset(mine, 0, sizeof mine);
    if (!mem && !rc)
        rc = core_err(ctx, PASSION_ENOMEM, "%lld bytes of access descriptors",
                      (long long)p->bytes_desc);
    int64_t M = ctx->opt.memory_budget;
    p->cap_stage = M / 5 * 2;
    p->cap_xchg = M / 5;
    if (!rc && (method == PASSION_METHOD_AUTO ||
                method == PASSION_METHOD_ETP_STATIC ||
                method == PASSION_METHOD_ETP_DYNAMIC)) {
        p->reserve = reserve_get(ctx, p->cap_stage + 4 * p->cap_xchg +
                                          5 * 4096);
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
    mine[COLL_FAD_CACHED] = -1;
    if (!rc && method != PASSION_METHOD_DIRECT &&
        method != PASSION_METHOD_SIEVE && ctx->opt.io_latency <= 0 &&
        ctx->opt.io_bandwidth <= 0) {
        ocad_xfer x;
        ocad_xfer_build(&f->fv, s, NULL, &x);
        if (x.nblocks > 0)
            mine[COLL_FAD_CACHED] = core_io_cached(f->fh, x.foff0, x.fend);
    }
    if (!rc)
        for (int d = 0; d < nd; d++) {
            mine[COLL_FAD_HEAD + d] = s->start[d];
            mine[COLL_FAD_HEAD + nd + d] = s->count[d];
            mine[COLL_FAD_HEAD + 2 * nd + d] = s->stride[d];
        }
    if (!mem) {
        /* Known limit: a rank that cannot allocate these O(P) bytes cannot
           receive the allgather; it fails alone (the others would wait in
           the allgather), the one place where a local failure is not
           turned into an agreed code. */
        return rc;
    }
    p->fad = (int64_t *)mem;
    p->elems = p->fad + (int64_t)P * W;
    p->dlo = p->elems + P;
    p->dhi = p->dlo + P;
    p->scratch = p->dhi + P;
    p->x = (ocad_xfer *)(p->scratch + P);
    double t0 = core_now();
    MPI_Request req;
    int mrc = MPI_Iallgather(mine, W, MPI_INT64_T, p->fad, W, MPI_INT64_T,
                             ctx->comm, &req) != MPI_SUCCESS ||
              coll_waitall(1, &req);
    ctx->cnt.t_comm += core_now() - t0;
    ctx->cnt.rounds++;
    if (mrc)
        return coll_agree(ctx, core_err(ctx, PASSION_EMPI,
                                        "MPI_Iallgather of the FAD"));
    int anybad = 0;
    for (int r = 0; r < P; r++)
        anybad |= p->fad[(int64_t)r * W + COLL_FAD_RC] != 0;
    if (anybad)
        return coll_agree(ctx, rc);
    for (int r = 1; r < P; r++)
        for (int w = COLL_FAD_METHOD; w < COLL_FAD_AGREE_END; w++)
            if (p->fad[(int64_t)r * W + w] != p->fad[w]) {
                static const char *what[] = {"", "methods", "operations",
                                             "memory budgets",
                                             "exchange options",
                                             "io_latency options",
                                             "io_bandwidth options",
                                             "msg_alpha options",
                                             "msg_beta options"};
                return core_err(ctx, PASSION_EMISMATCH,
                                "ranks 0 and %d passed different %s to a "
                                "collective section access", r, what[w]);
            }

    p->lo = INT64_MAX;
    p->hi = INT64_MIN;
    for (int r = 0; r < P; r++) {
        const int64_t *e = p->fad + (int64_t)r * W + COLL_FAD_HEAD;
        passion_section sec;
        memset(&sec, 0, sizeof sec);
        int64_t n = 1;
        for (int d = 0; d < nd; d++) {
            sec.start[d] = e[d];
            sec.count[d] = e[nd + d];
            sec.stride[d] = e[2 * nd + d];
            n *= sec.count[d];
        }
        p->elems[r] = n;
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
    /* overlapping elements (direct writes must then be ordered) and
       interleaved extents (sieved writes must then be ordered) */
    for (int r = 0; r < P && !(p->overlap && p->ext_overlap); r++) {
        if (!p->elems[r])
            continue;
        for (int q = r + 1; q < P; q++) {
            if (!p->elems[q])
                continue;
            if (p->x[r].foff0 < p->x[q].fend && p->x[q].foff0 < p->x[r].fend)
                p->ext_overlap = 1;
            if (!p->overlap &&
                sections_meet(nd, p->fad + (int64_t)r * W + COLL_FAD_HEAD,
                              p->fad + (int64_t)q * W + COLL_FAD_HEAD))
                p->overlap = 1;
        }
    }
    /* the file's costs: options, else memory-like when the ranks found
       (nearly) all their data in the page cache, else the disk defaults */
    int64_t cached = 0, probed = 0;
    for (int r = 0; r < P; r++) {
        int64_t c = p->fad[(int64_t)r * W + COLL_FAD_CACHED];
        if (c >= 0) {
            cached += c;
            probed++;
        }
    }
    p->warm = probed > 0 && cached >= 950 * probed;
    if (!p->warm && probed > 0 && ctx->file_lat == 0 && ctx->file_tries < 3)
        file_calibrate(p);
    p->io_lat = ocad_io_latency(ctx);
    p->io_bw = ocad_io_bandwidth(ctx);
    if (p->warm) {
        p->io_lat = COLL_WARM_LATENCY;
        p->io_bw = COLL_WARM_BANDWIDTH;
    }
    double h = p->io_lat * p->io_bw;
    p->hole = h > (double)(INT64_MAX / 4) ? INT64_MAX / 4 : (int64_t)h;
    return PASSION_OK;
}

int coll_write_ordered(coll_plan *p, int method)
{
    if (p->P < 2)
        return 0;
    if (p->overlap)
        return 1;
    if (method == PASSION_METHOD_DIRECT || !p->ext_overlap)
        return 0;
    for (int r = 0; r < p->P; r++) {
        if (!p->elems[r] ||
            ocad_method_choose(p->ctx, &p->x[r], 1, method) !=
                PASSION_METHOD_SIEVE)
            continue;
        for (int q = 0; q < p->P; q++)
            if (q != r && p->elems[q] && p->x[q].foff0 < p->x[r].fend &&
                p->x[r].foff0 < p->x[q].fend)
                return 1;
    }
    return 0;
}

void coll_plan_free(coll_plan *p)
{
    if (p->fad)
        core_stage_free(p->ctx, p->fad, p->bytes_desc);
    p->fad = NULL;
    p->reserve = NULL; /* the context's, kept for the next call */
}
