/*
 * etp_domain.c - file domains and the round schedule of the extended
 * two-phase method (thesis 6.4: static and dynamic partitioning; 6.3.1:
 * each domain read in pieces that fit the memory, figure 6.4 steps 2-5).
 *
 * Domains are contiguous ranges of file bytes, one per rank, that tile an
 * extent: static partitioning tiles the whole array (for the thesis's
 * column-major 2-D arrays these are its column blocks), dynamic tiles the
 * bytes from the first requested element to the end of the last (the
 * bounding section's extent), with boundaries rounded to 4 KiB so that no
 * file block is shared by two aggregators. An element belongs to the
 * domain that holds its first byte.
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

#define DOMAIN_ALIGN 4096

void coll_domains(coll_plan *p, int dynamic)
{
    int64_t A, B;
    if (dynamic) {
        A = p->lo;
        B = p->hi;
    } else {
        A = p->f->fv.base;
        B = A + p->f->a->global_bytes;
    }
    const int P = p->P;
    int64_t len = B > A ? B - A : 0, prev = A;
    for (int i = 0; i < P; i++) {
        int64_t end = B;
        if (i + 1 < P) {
            __int128 cut = (__int128)len * (i + 1) / P;
            end = A + (int64_t)cut;
            end = (end + DOMAIN_ALIGN / 2) / DOMAIN_ALIGN * DOMAIN_ALIGN;
            if (end < prev)
                end = prev;
            if (end > B)
                end = B;
        }
        p->dlo[i] = prev;
        p->dhi[i] = end;
        prev = end;
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

/* Does [a, b) of aggregator i stay within the exchange limits? */
static int chunk_fits(coll_plan *p, int i, int64_t b, const int64_t *base)
{
    const int P = p->P;
    int64_t share = P > 1 ? p->cap_xchg / (P - 1) : p->cap_xchg, sum = 0;
    for (int r = 0; r < P; r++) {
        if (r == i || !p->elems[r])
            continue;
        int64_t n = (coll_count_lt(&p->x[r], p->esize, b) - base[r]) *
                    p->esize;
        if (n > share)
            return 0;
        sum += n;
    }
    return sum <= p->cap_xchg;
}

int coll_chunk_next(coll_plan *p, int i, int64_t *pos, int64_t *a, int64_t *b)
{
    const int P = p->P;
    const int64_t es = p->esize, end = p->dhi[i];
    if (*pos < p->dlo[i])
        *pos = p->dlo[i];
    if (*pos >= end)
        return 0;
    int64_t A = INT64_MAX;
    for (int r = 0; r < P; r++)
        if (p->elems[r]) {
            int64_t o = coll_first_at(&p->x[r], es, *pos);
            if (o < A)
                A = o;
        }
    if (A >= end) {
        *pos = end;
        return 0;
    }
    int64_t *base = p->scratch;
    for (int r = 0; r < P; r++)
        base[r] = p->elems[r] ? coll_count_lt(&p->x[r], es, A) : 0;
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
    if (!chunk_fits(p, i, B, base)) {
        if (!chunk_fits(p, i, A + 1, base))
            return budget_error(p); /* not reached after the check */
        int64_t lo = A + 1, hi = B; /* fits(lo), !fits(hi) */
        while (hi - lo > 1) {
            int64_t mid = lo + (hi - lo) / 2;
            if (chunk_fits(p, i, mid, base))
                lo = mid;
            else
                hi = mid;
        }
        B = lo;
    }
    if (B < end && B / DOMAIN_ALIGN * DOMAIN_ALIGN > A)
        B = B / DOMAIN_ALIGN * DOMAIN_ALIGN;
    /* end just after the last element that starts before B: the stage
       then holds no tail of nothing */
    int64_t last = A;
    for (int r = 0; r < P; r++) {
        if (!p->elems[r])
            continue;
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
