/*
 * etp_domain.c - file domains and the round schedule of the extended
 * two-phase method (thesis 6.4: static and dynamic partitioning; 6.3.1:
 * each domain read in pieces that fit the memory, figure 6.4 steps 2-5).
 *
 * Domains are contiguous ranges of file bytes, one per aggregator, that
 * tile an extent: static partitioning tiles the whole array (for the
 * thesis's column-major 2-D arrays these are its column blocks), dynamic
 * tiles the bytes from the first requested element to the end of the last
 * (the bounding section's extent), with boundaries rounded to the stripe
 * size (p->align: the option stripe_size, else Lustre's stripe size, else
 * st_blksize, 4 KiB on most local file systems) so that no stripe or file
 * block is shared by two aggregators (ROMIO's Lustre driver aligns its
 * file domains to stripes for the same reason). An element belongs to
 * the domain that holds its first byte.
 *
 * Aggregators (ROMIO's cb_nodes / cb_config_list hints): the
 * ranks that do the file I/O, chosen by coll_aggregators_set (the options,
 * else the default: every rank on one node, one per node on several, or
 * the set method auto priced cheaper, p->aggr); the others get
 * an empty domain and only exchange. Results do not depend on the choice:
 * every element is read or written by the one aggregator whose domain
 * holds it.
 *
 * A chunk is the part of a domain handled in one round: it starts at the
 * first requested element at or after the previous chunk's end (empty
 * stretches cost nothing) and ends where the first limit is reached: the
 * staging buffer, the bytes for all other ranks together, or a fair share
 * (limit / (P-1)) for any one rank, so that no rank ever receives or sends
 * more than the limit in one round. Every count is arithmetic on the FAD,
 * so every rank computes every aggregator's chunk identically.
 */
#include "coll.h"

#include <stdint.h>
#include <stdlib.h>

int coll_aggr_option(const passion_ctx *ctx)
{
    const core_options *o = &ctx->opt;
    return o->cb_ranks[0] || o->cb_per_node > 0 || o->cb_nodes > 0;
}

#ifdef PASSION_TEST_HOOKS /* tests only */
int coll_aggregators(const passion_ctx *ctx, int64_t *agg, int64_t *tmp)
{
    return coll_aggregators_set(ctx, COLL_AGGR_RULE, agg, tmp);
}
#endif

int coll_aggregators_set(const passion_ctx *ctx, int set, int64_t *agg,
                         int64_t *tmp)
{
    const int P = ctx->size;
    /* every rank's rank within its node (nodes numbered below P) */
    for (int n = 0; n < P; n++)
        tmp[n] = 0;
    for (int r = 0; r < P; r++)
        agg[r] = tmp[core_node_of(ctx, r)]++;
    const core_options *o = &ctx->opt;
    int count = 0;
    if (o->cb_ranks[0]) {
        /* checked at passion_init: ranks of the context */
        for (int r = 0; r < P; r++)
            agg[r] = 0;
        for (const char *q = o->cb_ranks; *q;) {
            char *end;
            long r = strtol(q, &end, 10);
            if (r >= 0 && r < P)
                agg[r] = 1;
            q = *end ? end + 1 : end;
        }
    } else if (o->cb_per_node > 0 || o->cb_nodes <= 0) {
        /* the default: every rank on one node, else one per node,
           unless auto priced the other set (coll_plan.aggr) */
        int per = o->cb_per_node > 0     ? o->cb_per_node
                  : set == COLL_AGGR_ALL  ? P
                  : set == COLL_AGGR_NODE ? 1
                  : ctx->nnodes <= 1      ? P
                                          : 1;
        for (int r = 0; r < P; r++)
            agg[r] = agg[r] < per;
    } else {
        /* cb_nodes = n: node rank 0 of every node, then node rank 1 of
           every node..., the first n of that order (ROMIO spreads its
           aggregators over the nodes alike) */
        int64_t n = o->cb_nodes < P ? o->cb_nodes : P, below = 0;
        for (int l = 0; l < P; l++)
            tmp[l] = 0;
        for (int r = 0; r < P; r++)
            tmp[agg[r]]++;
        int t = 0;
        while (t < P && below + tmp[t] <= n)
            below += tmp[t++];
        int64_t extra = n - below;
        for (int r = 0; r < P; r++) {
            int64_t l = agg[r];
            agg[r] = l < t || (l == t && extra > 0);
            if (l == t && extra > 0)
                extra--;
        }
    }
    for (int r = 0; r < P; r++)
        count += agg[r] != 0;
    if (!count) { /* not reached: a list is never empty */
        for (int r = 0; r < P; r++)
            agg[r] = 1;
        count = P;
    }
    return count;
}

void coll_domains(coll_plan *p, int dynamic)
{
    int64_t A, B;
    if (dynamic) {
        A = p->lo;
        B = p->hi;
    } else {
        A = p->f->fv.base;
        /* a record variable's records span more than its bytes */
        B = p->f->fv.step0 > 0 ? p->f->data_bytes
                               : A + p->f->a->global_bytes;
    }
    const int P = p->P;
    const int64_t al = p->align > 0 ? p->align : 4096;
    /* the aggregators' flags in dhi (dlo as scratch): domain j of the
       naggr goes to the j-th aggregator in rank order; rank i's flag is
       read before its own entries are written */
    const int naggr = coll_aggregators_set(p->ctx, p->aggr, p->dhi, p->dlo);
    int64_t len = B > A ? B - A : 0, prev = A;
    for (int i = 0, j = 0; i < P; i++) {
        if (!p->dhi[i]) {
            p->dlo[i] = p->dhi[i] = prev; /* empty */
            continue;
        }
        int64_t end = B;
        if (j + 1 < naggr) {
            __int128 cut = (__int128)len * (j + 1) / naggr;
            end = A + (int64_t)cut;
            end = (end + al / 2) / al * al;
            if (end < prev)
                end = prev;
            if (end > B)
                end = B;
        }
        p->dlo[i] = prev;
        p->dhi[i] = end;
        prev = end;
        j++;
    }
}

int64_t coll_etp_min_budget(const coll_plan *p)
{
    /* plan_caps (etp_plan.c) then gives each exchange buffer room for one
       element per rank: the descriptors, five buffers and the exchange's
       own staging for them */
    int64_t x = (int64_t)(p->P > 1 ? p->P - 1 : 1) * p->esize;
    return coll_plan_desc_bytes(p->P, p->nd) + 5 * x +
           coll_xchg_need(p->ctx->opt.exchange, p->P, x);
}

static int budget_error(coll_plan *p)
{
    return core_err(p->ctx, PASSION_ENOMEM,
                    "memory budget %lld bytes is too small for the extended "
                    "two-phase method: it needs at least %lld bytes (the "
                    "descriptors, 5 x max(P-1, 1) elements and the "
                    "exchange's staging for them, P = %d, %lld-byte "
                    "elements)",
                    (long long)p->ctx->opt.memory_budget,
                    (long long)coll_etp_min_budget(p), p->P,
                    (long long)p->esize);
}

int coll_etp_budget_check(coll_plan *p)
{
    if (p->ctx->opt.memory_budget >= coll_etp_min_budget(p))
        return PASSION_OK;
    for (int r = 0; r < p->P; r++)
        if (p->elems[r])
            return budget_error(p);
    return PASSION_OK;
}

int coll_chunk_next(coll_plan *p, int i, int64_t *pos, int64_t *a, int64_t *b)
{
    const int P = p->P;
    const int64_t es = p->esize, end = p->dhi[i];
    if (*pos < p->dlo[i])
        *pos = p->dlo[i];
    if (*pos >= end)
        return 0;
    /* only the ranks whose extents meet the rest of the domain
       (coll_ranks_in), then the chunk's stretch of it */
    int64_t A = INT64_MAX;
    int k0, k1;
    coll_ranks_in(p, *pos, end, &k0, &k1);
    for (int k = k0; k < k1; k++) {
        const ocad_xfer *x = &p->x[p->byext[k]];
        if (x->fend <= *pos)
            continue;
        int64_t o = coll_first_at(x, es, *pos);
        if (o < A)
            A = o;
    }
    if (A >= end) {
        *pos = end;
        return 0;
    }
    /* the stage holds [A, B) plus the tail of an element cut at B */
    if (p->cap_stage - es <= 0)
        return core_err(p->ctx, PASSION_ENOMEM,
                        "memory budget %lld bytes cannot hold the "
                        "descriptors of %d ranks and one element of %lld "
                        "bytes in a round",
                        (long long)p->ctx->opt.memory_budget, P,
                        (long long)es);
    int64_t B = A + p->cap_stage - es;
    if (B > end)
        B = end;
    /* the exchange limits: no rank sends or receives more than its share
       of the exchange buffer (limit / (P-1)), so all together stay within
       the limit too; a rank's share ends before the start of its
       (q+1)-th element from A. One look per rank, where a bisection
       over [A, B) would count every rank's elements at each of its
       steps whenever this limit binds */
    const int64_t q = (P > 1 ? p->cap_xchg / (P - 1) : p->cap_xchg) / es;
    int64_t lim = INT64_MAX;
    coll_ranks_in(p, A, B, &k0, &k1);
    int64_t *base = p->scratch;
    for (int k = k0; k < k1; k++) {
        int r = (int)p->byext[k];
        base[r] = coll_count_lt(&p->x[r], es, A);
        if (r != i && base[r] + q < p->elems[r]) {
            int64_t o = coll_elem_off(&p->x[r], es, base[r] + q);
            lim = o < lim ? o : lim;
        }
    }
    if (lim <= A)
        return budget_error(p); /* not reached after the check */
    if (B > lim)
        B = lim;
    if (B < end && B / p->align * p->align > A)
        B = B / p->align * p->align;
    /* end just after the last element that starts before B: the stage
       then holds no tail of nothing */
    int64_t last = A;
    for (int j = k0; j < k1; j++) {
        int r = (int)p->byext[j];
        int64_t k = coll_count_lt(&p->x[r], es, B);
        if (k > base[r]) {
            int64_t o = coll_elem_off(&p->x[r], es, k - 1);
            last = o > last ? o : last;
        }
    }
    B = last + 1;
    *a = A;
    *b = B;
    *pos = B;
    return 1;
}
