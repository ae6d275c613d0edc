/*
 * xchg_pairwise.c - complete exchange by pairwise steps, Bokhari
 * ("Complete exchange on the iPSC-860", ICASE report 91-4, 1991, section
 * "pairwise"): when P is a power of two, step i = 1..P-1 exchanges
 * with rank (me XOR i), so every step is a set of disjoint pairs; for other
 * P the shift schedule (send to me + i, receive from me - i). One-port:
 * P - 1 rounds, each one send and one receive, no staging.
 *
 * Invariant: steps run in order and each waits for its own send and
 * receive, so a rank is never more than one step ahead of a partner.
 */
#include "xchg.h"

#include <string.h>

static int pw_run(coll_xchg_plan *pl)
{
    int P = pl->P, me = pl->me;
    int pow2 = (P & (P - 1)) == 0;
    coll_copy_self(pl);
    for (int i = 1; i < P; i++) {
        int to = pow2 ? (me ^ i) : (me + i) % P;
        int from = pow2 ? (me ^ i) : (me - i + P) % P;
        int rc = coll_sendrecv(pl, pl->sbuf + coll_sd(pl, to),
                               coll_sc(pl, to), to,
                               pl->rbuf + coll_rd(pl, from),
                               coll_rc(pl, from), from, COLL_TAG + 1);
        if (rc)
            return rc;
    }
    return PASSION_OK;
}

const coll_xchg_ops coll_xchg_pairwise = {
    .id = PASSION_XCHG_PAIRWISE,
    .agree_after = 0,
    .run = pw_run,
};
