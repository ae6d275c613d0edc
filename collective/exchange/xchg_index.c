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

static int radix_for(const coll_xchg_plan *pl)
{
    int n = pl->P, r = pl->radix;
    if (r < 2)
        r = 2;
    if (r > n)
        r = n;
    return r;
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
    int64_t mb = coll_index_step_blocks(n, r);
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

const coll_xchg_ops coll_xchg_index = {
    .id = PASSION_XCHG_INDEX,
    .agree_after = 0,
    .prealloc = 1,
    .run = index_run,
};
