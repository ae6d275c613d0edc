/*
 * xchg_a1.c - algorithm A1 of Liu, Wang and Prasanna ("Portable and
 * scalable algorithm for irregular all-to-all communication", JPDC 2002,
 * section 3.1.1), in its non-blocking mode (section 4): one stage; in step
 * i = 1..P-1 rank j sends its message for rank (j + i) mod P. Every
 * receive is posted first, then the sends in step order, then one wait:
 * one round of P - 1 messages, no staging, no copy but the self message.
 *
 * Invariant: a message that both sides know to be empty is not sent.
 */
#include "xchg.h"

#include <string.h>

static int a1_run(coll_xchg_plan *pl)
{
    int P = pl->P, me = pl->me, n = 0, rc = PASSION_OK;
    for (int i = 1; i < P && !rc; i++) {
        int from = (me - i + P) % P;
        int64_t b = coll_rc(pl, from);
        if (n + coll_nparts(b) > pl->nreq)
            rc = PASSION_ENOMEM;
        else
            rc = coll_irecv(pl, pl->rbuf + coll_rd(pl, from), b, from,
                            COLL_TAG, pl->req + n);
        n += (int)coll_nparts(b);
    }
    if (!rc)
        rc = coll_a1_isends(pl, COLL_TAG, &n);
    coll_copy_self(pl);
    if (!rc)
        rc = coll_waitall(n, pl->req);
    if (rc)
        return core_err(pl->ctx, rc, "a1: posting or waiting failed");
    if (n > 0)
        pl->st.rounds++;
    return PASSION_OK;
}

const coll_xchg_ops coll_xchg_a1 = {
    .id = PASSION_XCHG_A1,
    .agree_after = 0,
    .hdr_sends = coll_a1_isends, /* its one step rides on the headers */
    .run = a1_run,
};
