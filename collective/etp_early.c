/*
 * etp_early.c - what a rank does before the FAD (coll_io_early): the
 * page-cache probe and, for a read that independent access would do
 * anyway, the read itself; and the COLL_FAD_CACHED word that tells the
 * other ranks.
 *
 * Invariants: a write is never done here (no rank writes before the FAD
 * says the call may proceed); auto reads early only on cached data or
 * once the file's costs are measured, and only when the read costs at
 * most the rounds it saves, a one-request read, or the same access whose
 * ranks agreed on an independent method (coll_early_remember); what a
 * rank did is in its FAD word, so every rank sees the same flags.
 */
#include "coll.h"

#include <stdint.h>
#include <string.h>

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
    coll_ext *e = coll_ext_get(ctx);
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
    ocad_env env =
        coll_call_env(ctx, out->cached >= 950, ocad_req_cost(ctx), 0);
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
            coll_file_pending(e))
            return PASSION_OK;
        /* worth it when this rank's read costs at most the round it
           saves: if the ranks then choose the two-phase method, at most
           that is lost */
        double S = coll_sync_cost(ctx);
        /* the same read whose ranks chose an independent method last
           call (a memory layout aside): reading early saves the round
           the agreement after it costs, so that auto pays one round as
           the fixed method it chose does; read with the method chosen
           then (direct on every rank where the model found that cheaper
           than each rank's own sieve choice) */
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
           early whatever a round costs, so that a small cold read
           takes one collective round, as the fixed method does */
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
int64_t coll_early_word(const coll_early *e)
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

int coll_early_cached(const coll_plan *p, int r)
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
