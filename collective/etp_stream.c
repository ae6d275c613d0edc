/*
 * etp_stream.c - the file's streaming bandwidth learned from the calls'
 * own long reads (coll_stream_note, the COLL_FAD_STREAM word) and the
 * readahead's ramp the model prices with (coll_stream_rate).
 *
 * Invariants: the learned rate is computed from the FAD (every rank's
 * long reads of the last uncached call), so it is the same on every
 * rank; only the best figure from at least COLL_STREAM_LEARN_MIN bytes is
 * kept; coll_stream_rate is io_bw up to ramp_short, bw_long from
 * ramp_long and linear between.
 */
#include "coll.h"

#include <stdint.h>
#include <stdio.h>

void coll_stream_note(passion_ctx *ctx, uint64_t bytes, double seconds)
{
    coll_ext *e = coll_ext_get(ctx);
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

#ifdef PASSION_TEST_HOOKS /* tests only */
double coll_stream_bw(passion_ctx *ctx)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    return e ? e->stream_bw : 0;
}
#endif

#ifdef PASSION_TEST_HOOKS /* tests only */
int64_t coll_file_streamed(passion_ctx *ctx)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    return e ? e->file_bw_len : 0;
}
#endif

int64_t coll_stream_word(passion_ctx *ctx)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    return e ? (int64_t)(((uint64_t)e->stream_pages << 32) | e->stream_us)
             : 0;
}

/* After the FAD: the ranks' long reads of the last uncached call, all
   together (coll_stream_note); the same on every rank */
void coll_stream_learn(passion_ctx *ctx, const int64_t *fad, int W)
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
        coll_file_keep(ctx, e); /* a context that measured keeps it */
        if (ctx->opt.verbosity >= 2 && ctx->rank == 0)
            fprintf(stderr, "passion: file bandwidth learned from the "
                    "last uncached call's long reads: %.3g B/s (%.3g MB "
                    "in %.3g s, %d rank(s))\n", bw, bytes / 1e6,
                    (double)us * 1e-6, n);
    }
}
