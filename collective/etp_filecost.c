/*
 * etp_filecost.c - the file's costs for the model: calibration reads on
 * the first uncached calls (file_calibrate, through the driver's
 * core_io_measure), the best reading kept, and the costs of one call
 * (coll_call_env: options, else memory-like on cached data, else
 * measured, else the defaults).
 *
 * Invariants: every rank takes part in a calibration or none (the
 * condition is read from the FAD) and the ranks agree on each reading,
 * so the model's latency and bandwidth are the same everywhere; the
 * model keeps the smallest latency and the largest bandwidth read (load
 * only ever slows a reading); the options io_latency / io_bandwidth,
 * when given, win.
 */
#include "coll.h"

#include <float.h>
#include <stdint.h>
#include <stdio.h>

#ifdef PASSION_TEST_HOOKS /* tests only */
int64_t coll_file_probes(passion_ctx *ctx)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    return e ? e->file_probes : 0;
}

void coll_file_costs(passion_ctx *ctx, double *lat, double *bw, int *nlat)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    *lat = e ? e->file_lat : 0;
    *bw = e ? e->file_bw : 0;
    *nlat = e ? e->file_nlat : 0;
}
#endif

/* still calibrating: fewer than COLL_FILE_SAMPLES latency samples and
   tries left (the early path waits for the measurement) */
int coll_file_pending(const coll_ext *e)
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
   or an application's set-up) and a short stream misses the readahead's ramp (CORE_MEASURE_STREAM).
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
       slowest one's time (one rank streaming while the others wait in
       the agreement, spinning on shared cores, reads far slower than
       the aggregators together). A smaller span: one rank
       streams on its extent, the one with the longest (the first of
       them). */
    int64_t part = file_part(p, p->me, &d0, &d1);
    int all = part > 0, streamer = file_streamer(p);
    if (all) {
        bw_len = part;
        core_io_measure(p->f->fh, d0, d1, &lat, &bw, &bw_len);
        e->file_probes++;
    }
    else if (p->elems[p->me] > 0 && (!long_only || streamer == p->me)) {
        core_io_measure(p->f->fh, p->x[p->me].foff0, p->x[p->me].fend, &lat,
                        streamer == p->me ? &bw : NULL, &bw_len);
        e->file_probes++;
    }
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
       single reading varies widely on a loaded machine and would flip
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

/* the file costs of a call: options, else measured, else the defaults;
   memory-like when the data is cached (warm): a request costs req, the
   learned cost of a cached read request (ocad_req_cost; 0: not learned
   yet, COLL_WARM_LATENCY), and reads of cached data do not overlap (the
   CPU copies them one after another) */
ocad_env coll_call_env(passion_ctx *ctx, int warm, double req,
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
           pages it dirties (priced at the read's cost, auto would write
           many small pieces direct where sieving is far cheaper) */
        if (op_write && env.lat < COLL_WARM_LATENCY)
            env.lat = COLL_WARM_LATENCY;
        env.bw = COLL_WARM_BANDWIDTH;
        env.conc = 1;
        env.warm = 1;
    }
    return env;
}

int64_t coll_write_pages(int64_t requests, int64_t bytes, int64_t ext)
{
    int64_t pg = requests + bytes / 4096, most = ext / 4096 + 1;
    return pg < most ? pg : most;
}

void coll_file_measure(coll_plan *p, int64_t probed)
{
    if (p->warm || probed == 0)
        return;
    /* the state is allocated before the FAD (coll_reserve_get) for the
       ETP methods; elsewhere a rank without it just skips the
       measurement, which every rank then sees as "not measured" */
    coll_ext *e = p->ctx->ext[CORE_EXT_COLL];
    /* measured by an earlier run (wisdom): then nothing is pending */
    if (coll_file_pending(e) || stream_pending(p, e)) {
        e = coll_ext_get(p->ctx);
        coll_file_wisdom(p, e);
    }
    if (coll_file_pending(e)) {
        coll_ext none = {0};
        file_calibrate(p, e ? e : &none, 0);
        coll_file_keep(p->ctx, e);
    } else if (stream_pending(p, e)) {
        file_calibrate(p, e, 1);
        coll_file_keep(p->ctx, e);
    }
}
