/*
 * etp_exchange.c - the one exchange call of the extended two-phase method
 * (thesis 6.3.1, second phase): an irregular all-to-all in bytes, through
 * the exchange ops table (collective/exchange.h: index, four-stage,
 * pairwise, a1, MPI, or auto by the calibrated cost model), chosen by the
 * context's `exchange` option.
 *
 * Invariants: counts are symmetric (what r sends j is what j expects from
 * r), which the extended two-phase schedule guarantees by construction;
 * the exchange layer counts messages, bytes_sent, rounds and t_comm; its
 * staging stays within the budget passed (what the rounds left).
 */
#include "coll.h"

int coll_etp_exchange(passion_ctx *ctx, const void *sendbuf,
                      const int64_t *sendcounts, const int64_t *sdispls,
                      void *recvbuf, const int64_t *recvcounts,
                      const int64_t *rdispls, int64_t budget,
                      const coll_xchg_shape *shape, int alg)
{
    coll_xchg_args a = {
        .sendbuf = sendbuf,
        .recvbuf = recvbuf,
        .block = -1,
        .sendcounts = sendcounts,
        .sdispls = sdispls,
        .recvcounts = recvcounts,
        .rdispls = rdispls,
        .alg = alg,
        .radix = 0,
        /* 0 would mean "what is left", which it is too; at least 1 so
           that the argument says it */
        .budget = budget > 0 ? budget : 1,
        .shape = shape,
    };
    return coll_exchange(ctx, &a);
}
