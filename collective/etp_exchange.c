/*
 * etp_exchange.c - the one exchange call of the extended two-phase method
 * (thesis 6.3.1, second phase): an irregular all-to-all in bytes.
 *
 * Kept behind this single function so that it can be pointed at the
 * exchange ops table (collective/exchange.h: index, four-stage, pairwise,
 * MPI) with a one-line change. Until then: MPI_Alltoallv when every count
 * and displacement fits an int, else (or with the option exchange=pairwise)
 * a pairwise schedule (Bokhari 1991: XOR partners when P is a power of
 * two, shift partners otherwise) of point-to-point messages of at most
 * 1 GiB, in which pairs with nothing to move in either direction skip
 * their step (both ends know the counts).
 *
 * Invariants: counts are symmetric (what r sends j is what j expects from
 * r); own data is copied locally; counters: messages = non-empty messages
 * sent to other ranks, bytes_sent, rounds = exchange steps.
 */
#include "coll.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

#define XCHG_PIECE (1LL << 30)

static int fits_int(const int64_t *v, int n)
{
    for (int i = 0; i < n; i++)
        if (v[i] < 0 || v[i] > INT_MAX)
            return 0;
    return 1;
}

static int alltoallv(passion_ctx *ctx, const void *sb, const int64_t *sc,
                     const int64_t *sd, void *rb, const int64_t *rc,
                     const int64_t *rd)
{
    const int P = ctx->size;
    int64_t bytes = 4 * (int64_t)P * (int64_t)sizeof(int);
    int *v = core_stage_alloc(ctx, bytes);
    if (!v)
        return core_err(ctx, PASSION_ENOMEM, "exchange counts");
    for (int i = 0; i < P; i++) {
        v[i] = (int)sc[i];
        v[P + i] = (int)sd[i];
        v[2 * P + i] = (int)rc[i];
        v[3 * P + i] = (int)rd[i];
    }
    int mrc = MPI_Alltoallv(sb, v, v + P, MPI_BYTE, rb, v + 2 * P, v + 3 * P,
                            MPI_BYTE, ctx->comm);
    core_stage_free(ctx, v, bytes);
    ctx->cnt.rounds++;
    return mrc == MPI_SUCCESS
               ? PASSION_OK
               : core_err(ctx, PASSION_EMPI, "MPI_Alltoallv in the exchange");
}

/* Post the pieces of one message; returns requests used. */
static int post(passion_ctx *ctx, char *buf, int64_t n, int peer, int recv,
                MPI_Request *req, int *rc)
{
    int k = 0;
    for (int64_t off = 0; off < n; off += XCHG_PIECE, k++) {
        int len = (int)(n - off < XCHG_PIECE ? n - off : XCHG_PIECE);
        int mrc = recv ? MPI_Irecv(buf + off, len, MPI_BYTE, peer, 77,
                                   ctx->comm, &req[k])
                       : MPI_Isend(buf + off, len, MPI_BYTE, peer, 77,
                                   ctx->comm, &req[k]);
        if (mrc != MPI_SUCCESS && !*rc)
            *rc = core_err(ctx, PASSION_EMPI, "posting an exchange message");
    }
    return k;
}

static int pairwise(passion_ctx *ctx, const char *sb, const int64_t *sc,
                    const int64_t *sd, char *rb, const int64_t *rc,
                    const int64_t *rd)
{
    const int P = ctx->size, me = ctx->rank;
    const int pow2 = (P & (P - 1)) == 0;
    int err = PASSION_OK;
    for (int s = 1; s < P; s++) {
        int dst = pow2 ? me ^ s : (me + s) % P;
        int src = pow2 ? me ^ s : (me - s + P) % P;
        if (sc[dst] == 0 && rc[src] == 0)
            continue;
        int nreq = (int)((sc[dst] + XCHG_PIECE - 1) / XCHG_PIECE +
                         (rc[src] + XCHG_PIECE - 1) / XCHG_PIECE);
        MPI_Request req[16], *rq = req;
        int64_t rqb = (int64_t)nreq * (int64_t)sizeof(MPI_Request);
        if (nreq > 16 && !(rq = core_stage_alloc(ctx, rqb)))
            return core_err(ctx, PASSION_ENOMEM, "exchange requests");
        int k = post(ctx, rb + rd[src], rc[src], src, 1, rq, &err);
        k += post(ctx, (char *)sb + sd[dst], sc[dst], dst, 0, rq + k, &err);
        if (MPI_Waitall(k, rq, MPI_STATUSES_IGNORE) != MPI_SUCCESS && !err)
            err = core_err(ctx, PASSION_EMPI, "exchange step %d", s);
        if (rq != req)
            core_stage_free(ctx, rq, rqb);
        ctx->cnt.rounds++;
    }
    return err;
}

int coll_etp_exchange(passion_ctx *ctx, const void *sendbuf,
                      const int64_t *sendcounts, const int64_t *sdispls,
                      void *recvbuf, const int64_t *recvcounts,
                      const int64_t *rdispls)
{
    const int P = ctx->size, me = ctx->rank;
    double t0 = core_now();
    for (int j = 0; j < P; j++)
        if (j != me && sendcounts[j] > 0) {
            ctx->cnt.messages_sent++;
            ctx->cnt.bytes_sent += (uint64_t)sendcounts[j];
        }
    int rc;
    if (ctx->opt.exchange != PASSION_XCHG_PAIRWISE &&
        fits_int(sendcounts, P) && fits_int(sdispls, P) &&
        fits_int(recvcounts, P) && fits_int(rdispls, P)) {
        rc = alltoallv(ctx, sendbuf, sendcounts, sdispls, recvbuf, recvcounts,
                       rdispls);
    } else {
        if (sendcounts[me] > 0)
            memmove((char *)recvbuf + rdispls[me],
                    (const char *)sendbuf + sdispls[me],
                    (size_t)sendcounts[me]);
        rc = pairwise(ctx, sendbuf, sendcounts, sdispls, recvbuf, recvcounts,
                      rdispls);
    }
    ctx->cnt.t_comm += core_now() - t0;
    return rc;
}
