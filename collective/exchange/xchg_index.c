/*
 * xchg_index.c - the index algorithm (all-to-all personalized) of Bruck,
 * Ho, Kipnis, Upfal and Weathersby ("Efficient algorithms for all-to-all
 * communications in multiport message-passing systems", IEEE TPDS 1997,
 * section 3), one-port, any number of ranks n and any radix
 * r in 2..n, on blocks of b bytes:
 *
 *   phase 1: cur[k] = block (k + me) mod n of the send buffer;
 *   phase 2: for every radix-r digit position x and digit z = 1..r-1 with
 *            z*r^x < n, the blocks whose digit x is z travel packed in one
 *            message to rank me + z*r^x and the same positions are
 *            refilled from rank me - z*r^x;
 *   phase 3: block j of the receive buffer = cur[(me - j) mod n].
 *
 * Invariant: after the steps of digits 0..x, the block in position k has
 * travelled the low x+1 digits of k ranks to the right, so when phase 2
 * ends the block that started on rank s sits at position (me - s) mod n.
 * Counts (exact, equal on every rank): C1 = #steps, C2 = blocks sent;
 * r = 2 minimises C1 = ceil(log2 n), r = n minimises C2 = n - 1.
 */
#include "xchg.h"

#include <string.h>

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

/* largest number of blocks in one step */
static int64_t max_step_blocks(int n, int r)
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

static int radix_for(const coll_xchg_plan *pl)
{
    int n = pl->P, r = pl->radix;
    if (r < 2)
        r = 2;
    if (r > n)
        r = n;
    return r;
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
    return b * ((int64_t)n + 2 * max_step_blocks(n, r));
}

static int64_t index_staging(const coll_xchg_shape *s, int radix)
{
    return coll_index_staging(s->procs, radix, s->block);
}

static int index_run(coll_xchg_plan *pl)
{
    int n = pl->P, me = pl->me, r = radix_for(pl);
    int64_t b = pl->block >= 0 ? pl->block : coll_sc(pl, 0);
    pl->st.radix = n > 1 ? r : 0;
    if (n <= 1 || b <= 0) {
        if (b > 0)
            memcpy(pl->rbuf + coll_rd(pl, me), pl->sbuf + coll_sd(pl, me),
                   (size_t)b);
        return PASSION_OK;
    }
    int64_t mb = max_step_blocks(n, r);
    char *cur = pl->reserved, *out = cur + (int64_t)n * b, *in = out + mb * b;
    /* the reservation was counted as staging by the dispatcher */
    for (int k = 0; k < n; k++)
        memcpy(cur + k * b, pl->sbuf + coll_sd(pl, (k + me) % n), (size_t)b);
    int tag = COLL_TAG + 2;
    for (int64_t pw = 1; pw < n; pw *= r) {
        for (int z = 1; z < r && z * pw < n; z++) {
            int64_t m = 0;
            for (int k = 0; k < n; k++)
                if ((k / pw) % r == z)
                    memcpy(out + (m++) * b, cur + k * b, (size_t)b);
            int to = (int)((me + z * pw) % n);
            int from = (int)(((me - z * pw) % n + n) % n);
            int rc = coll_sendrecv(pl, out, m * b, to, in, m * b, from, tag);
            if (rc)
                return rc;
            m = 0;
            for (int k = 0; k < n; k++)
                if ((k / pw) % r == z)
                    memcpy(cur + k * b, in + (m++) * b, (size_t)b);
        }
    }
    for (int j = 0; j < n; j++)
        memcpy(pl->rbuf + coll_rd(pl, j), cur + ((me - j + n) % n) * b,
               (size_t)b);
    return PASSION_OK;
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

const coll_xchg_ops coll_xchg_index = {
    .id = PASSION_XCHG_INDEX,
    .regular_only = 1,
    .has_radix = 1,
    .agree_after = 0,
    .prealloc = 1,
    .model = index_model,
    .staging = index_staging,
    .net = index_net,
    .run = index_run,
};
