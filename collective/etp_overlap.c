/*
 * etp_overlap.c - where the ranks' sections meet: exact tests on
 * section descriptions (arithmetic progressions per dimension, never
 * lists of offsets), the ranks' extents in file order (p->byext), and
 * the answers the write paths need (coll_write_ordered,
 * coll_shared_writers).
 *
 * Invariants: every answer is computed from the FAD alone, so it is the
 * same on every rank; elements meet only where extents do, so the
 * element test runs only on interleaving extents; p->byext lists the
 * ranks with elements by extent start, ties by rank.
 */
#include "coll.h"

#include <stdint.h>

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
 * pair by pair (P^2 pairs on every rank, every call): by their starts
 * (p->byext), the extents are disjoint
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

void coll_plan_overlap(coll_plan *p)
{
    /* interleaved extents (sieved writes must then be ordered) and, for
       writes, overlapping elements (direct writes must then be ordered;
       elements meet only where extents do) */
    const int P = p->P, nd = p->nd, W = COLL_FAD_HEAD + 3 * PASSION_MAX_DIMS;
    sort_by_extent(p);
    p->ext_overlap = extents_meet(p);
    p->overlap = 0;
    for (int r = 0; r < P && p->op_write && p->ext_overlap && !p->overlap;
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
