/*
 * plan_xchg_price_index.c - the price of the index algorithm of Bruck,
 * Ho, Kipnis, Upfal and Weathersby ("Efficient algorithms for all-to-all
 * communications in multiport message-passing systems", IEEE TPDS 1997,
 * section 3), one-port, n ranks, radix r in 2..n, blocks of b bytes
 * (collective/exchange/xchg_index.c runs it): its exact counts C1 (steps)
 * and C2 (blocks sent), the staging it holds (the rotation buffer and
 * two step buffers of the largest step), its share of the network.
 * r = 2 minimises C1 = ceil(log2 n), r = n minimises C2 = n - 1; the
 * price takes the radix with the least seconds.
 *
 * Invariant: pure functions of their arguments, equal on every rank.
 */
#include "plan_xchg.h"

/* blocks k in [0, n) whose digit x (weight pw) equals z: every run of
   pw*r consecutive ids has pw of them, the last partial run the part of
   [z*pw, (z+1)*pw) it reaches */
static int64_t digit_count(int n, int64_t pw, int r, int z)
{
    int64_t run = pw * r, rest = n % run - (int64_t)z * pw;
    return (n / run) * pw + (rest < 0 ? 0 : rest > pw ? pw : rest);
}

void coll_index_counts(int n, int r, int64_t *c1, int64_t *c2)
{
    *c1 = *c2 = 0;
    if (n <= 1 || r < 2)
        return;
    for (int64_t pw = 1; pw < n; pw *= r)
        for (int z = 1; z < r && z * pw < n; z++) {
            (*c1)++;
            *c2 += digit_count(n, pw, r, z);
        }
}

int64_t coll_index_step_blocks(int n, int r)
{
    int64_t m = 0;
    for (int64_t pw = 1; pw < n; pw *= r)
        for (int z = 1; z < r && z * pw < n; z++) {
            int64_t c = digit_count(n, pw, r, z);
            if (c > m)
                m = c;
        }
    return m;
}

static double index_model(const coll_xchg_costs *c, const coll_xchg_shape *s,
                          int *radix)
{
    int n = s->procs;
    int64_t b = s->block;
    if (b < 0)
        return 1e300;
    if (n <= 1) {
        *radix = 0;
        return c->copy * (double)b;
    }
    int lo = 2, hi = n;
    if (*radix >= 2)
        lo = hi = *radix > n ? n : *radix;
    double best = 1e300;
    int br = lo;
    for (int r = lo; r <= hi; r++) {
        int64_t c1, c2;
        coll_index_counts(n, r, &c1, &c2);
        double t = (double)c1 * (c->round + c->msg) +
                   (double)c2 * (double)b * c->byte +
                   (double)(2 * (int64_t)n + 2 * c2) * (double)b * c->copy;
        if (t < best) {
            best = t;
            br = r;
        }
    }
    *radix = br;
    return best;
}

int64_t coll_index_staging(int n, int r, int64_t b)
{
    if (r < 2)
        r = 2;
    if (r > n)
        r = n;
    if (n <= 1 || b <= 0)
        return 0;
    return b * ((int64_t)n + 2 * coll_index_step_blocks(n, r));
}

static int64_t index_staging(const coll_xchg_shape *s, int radix)
{
    return coll_index_staging(s->procs, radix, s->block);
}

/* every step may leave the node: C1 messages; of the C2 blocks the
   share bound for other nodes */
static void index_net(const coll_xchg_shape *s, int radix, double *msgs,
                      double *bytes)
{
    int64_t c1, c2;
    int n = s->procs, N = s->nodes > 1 ? s->nodes : 1;
    coll_index_counts(n, radix < 2 ? 2 : radix > n ? n : radix, &c1, &c2);
    double share = n > 1 ? (double)(n - n / N) / (double)(n - 1) : 0;
    *msgs = (double)c1;
    *bytes = (double)c2 * (double)(s->block > 0 ? s->block : 0) * share;
}

const plan_xchg_alg plan_xchg_index = {
    .id = PASSION_XCHG_INDEX,
    .regular_only = 1,
    .has_radix = 1,
    .model = index_model,
    .staging = index_staging,
    .net = index_net,
};
