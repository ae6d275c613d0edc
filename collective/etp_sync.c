/*
 * etp_sync.c - the learned cost of a collective round (coll_sync_cost,
 * coll_round_inner): each collective call's FAD allgather carries every
 * rank's arrival and wait at the previous one (COLL_FAD_SYNC), and from
 * them every rank computes the same sample.
 *
 * Invariants: a sample is learned only when every rank sent a word (all
 * or none), so the samples, their sorted copy and their median are
 * identical on every rank; sync_sorted holds the sync_n samples of the
 * ring in increasing order.
 */
#include "coll.h"

#include <stdint.h>
#include <string.h>

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

#ifdef PASSION_TEST_HOOKS /* tests only */
int coll_sync_samples(passion_ctx *ctx, double *v)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    int n = e ? e->sync_n : 0;
    for (int i = 0; i < n; i++)
        v[i] = e->sync[i];
    return n;
}
#endif

int coll_sync_learned(passion_ctx *ctx)
{
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    return e ? e->sync_n : 0;
}

int64_t coll_sync_word(passion_ctx *ctx)
{
    const coll_ext *e = coll_ext_get(ctx);
    if (!e || !e->sync_wait)
        return 0;
    return (int64_t)(((uint64_t)e->sync_at << 32) | e->sync_wait);
}

/* After the FAD: learn the sample of the previous round from every
   rank's word (all or none: a rank without one sent 0), then keep this
   round's arrival t0 and wait for the next. */
void coll_sync_learn(passion_ctx *ctx, const int64_t *fad, int W,
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
