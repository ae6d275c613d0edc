/*
 * etp_fixed.c - the methods' learned fixed costs (coll_fixed_learn): per
 * class (independent, two-phase) a ring of the last COLL_FIXED_KEEP
 * samples per rank, and the FAD word that carries each rank's figure
 * (COLL_FAD_FIXED).
 *
 * Invariants: samples are clamped to [0, COLL_FIXED_CAP]; a rank's figure
 * is the lower quartile of its samples; the call prices with the largest
 * figure and the fewest samples over the ranks (from the FAD), the same
 * on every rank.
 */
#include "coll.h"

#include <stdint.h>
#include <string.h>

void coll_fixed_learn(passion_ctx *ctx, int cls, double seconds)
{
    coll_ext *e = coll_ext_get(ctx);
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
int64_t coll_fixed_word(passion_ctx *ctx)
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
