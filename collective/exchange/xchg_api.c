/*
 * xchg_api.c - the public all-to-all calls, passion_alltoall and
 * passion_alltoallv: element counts of an MPI datatype turned into byte
 * counts, then the exchange (coll_xchg_call_all).
 *
 * Invariants:
 *  - only contiguous datatypes (lower bound 0, extent = size) are taken;
 *  - a rank whose arguments fail locally still takes part in the call,
 *    with nothing to move, so that no rank waits; the code is agreed;
 *  - each call runs inside the thread contract's guard (core_call_begin).
 */
#include "xchg_call.h"

#include <string.h>

static int type_bytes(passion_ctx *ctx, MPI_Datatype t, int64_t *es)
{
    *es = 0;
    if (t == MPI_DATATYPE_NULL)
        return core_err(ctx, PASSION_EINVAL, "exchange: MPI_DATATYPE_NULL");
    /* MPI's basic types are contiguous, lower bound 0, extent their
       size: only the size is asked (one call instead of three) */
    if (t == MPI_BYTE || t == MPI_CHAR || t == MPI_SIGNED_CHAR ||
        t == MPI_UNSIGNED_CHAR || t == MPI_SHORT || t == MPI_UNSIGNED_SHORT ||
        t == MPI_INT || t == MPI_UNSIGNED || t == MPI_LONG ||
        t == MPI_UNSIGNED_LONG || t == MPI_LONG_LONG ||
        t == MPI_UNSIGNED_LONG_LONG || t == MPI_FLOAT || t == MPI_DOUBLE ||
        t == MPI_INT8_T || t == MPI_INT16_T || t == MPI_INT32_T ||
        t == MPI_INT64_T || t == MPI_UINT8_T || t == MPI_UINT16_T ||
        t == MPI_UINT32_T || t == MPI_UINT64_T) {
        int size = 0;
        if (MPI_Type_size(t, &size) != MPI_SUCCESS || size <= 0)
            return core_err(ctx, PASSION_EMPI, "exchange: datatype query");
        *es = size;
        return PASSION_OK;
    }
    MPI_Count size, lb, ext, tlb, text;
    if (MPI_Type_size_x(t, &size) != MPI_SUCCESS ||
        MPI_Type_get_extent_x(t, &lb, &ext) != MPI_SUCCESS ||
        MPI_Type_get_true_extent_x(t, &tlb, &text) != MPI_SUCCESS ||
        size == MPI_UNDEFINED)
        return core_err(ctx, PASSION_EMPI, "exchange: datatype query");
    if (lb != 0 || ext != size || tlb != 0 || text != size)
        return core_err(ctx, PASSION_ENOTSUP,
                        "exchange: datatype not contiguous (size %lld, "
                        "extent %lld)",
                        (long long)size, (long long)ext);
    *es = (int64_t)size;
    return PASSION_OK;
}

static int alltoall_body(passion_ctx *ctx, const void *sendbuf, void *recvbuf,
                         int64_t count, MPI_Datatype type, passion_xchg alg,
                         int radix)
{
    if (!ctx)
        return PASSION_EINVAL;
    int64_t es = 0, block = 0;
    int rc = type_bytes(ctx, type, &es);
    if (!rc && count < 0)
        rc = core_err(ctx, PASSION_EINVAL, "alltoall: negative count");
    if (!rc && !core_mul(count, es, &block))
        rc = core_err(ctx, PASSION_EOVERFLOW, "alltoall: count overflows");
    coll_xchg_args a;
    memset(&a, 0, sizeof a);
    a.sendbuf = sendbuf;
    a.recvbuf = recvbuf;
    a.block = rc ? 0 : block;
    a.alg = alg;
    a.radix = radix;
    return coll_xchg_call_all(ctx, &a, rc, NULL);
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_alltoall(passion_ctx *ctx, const void *sendbuf, void *recvbuf,
                     int64_t count, MPI_Datatype type, passion_xchg alg,
                     int radix)
{
    passion_ctx *gctx = ctx;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = alltoall_body(ctx, sendbuf, recvbuf, count, type, alg, radix);
    core_call_end(gctx);
    return rc;
}

static int alltoallv_body(passion_ctx *ctx, const void *sendbuf,
                          const int64_t *sendcounts, const int64_t *sdispls,
                          void *recvbuf, const int64_t *recvcounts,
                          const int64_t *rdispls, MPI_Datatype type,
                          passion_xchg alg, int radix)
{
    if (!ctx)
        return PASSION_EINVAL;
    int P = ctx->size;
    int64_t es = 0;
    int rc = type_bytes(ctx, type, &es);
    int64_t *b = core_calloc(ctx, 4 * (size_t)P, sizeof *b);
    if (!rc && !b)
        rc = core_err(ctx, PASSION_ENOMEM, "alltoallv: count arrays");
    if (!rc && (!sendcounts || !sdispls || !recvcounts || !rdispls))
        rc = core_err(ctx, PASSION_EINVAL, "alltoallv: NULL count array");
    for (int j = 0; j < P && !rc; j++) {
        const int64_t in[4] = {sendcounts[j], sdispls[j], recvcounts[j],
                                   rdispls[j]};
        for (int k = 0; k < 4 && !rc; k++) {
            if (in[k] < 0)
                rc = core_err(ctx, PASSION_EINVAL,
                                  "alltoallv: negative count or displacement "
                                  "for rank %d",
                                  j);
            else if (!core_mul(in[k], es, &b[k * P + j]))
                rc = core_err(ctx, PASSION_EOVERFLOW,
                                  "alltoallv: bytes overflow for rank %d", j);
        }
    }
    coll_xchg_args a;
    memset(&a, 0, sizeof a);
    a.sendbuf = sendbuf;
    a.recvbuf = recvbuf;
    a.block = -1;
    if (rc && b)
        memset(b, 0, 4 * (size_t)P * sizeof *b);
    if (b) {
        a.sendcounts = b;
        a.sdispls = b + P;
        a.recvcounts = b + 2 * P;
        a.rdispls = b + 3 * P;
    } else {
        a.block = 0; /* take part with nothing */
    }
    a.alg = alg;
    a.radix = radix;
    rc = coll_xchg_call_all(ctx, &a, rc, NULL);
    core_free(ctx, b);
    return rc;
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_alltoallv(passion_ctx *ctx, const void *sendbuf,
                      const int64_t *sendcounts, const int64_t *sdispls,
                      void *recvbuf, const int64_t *recvcounts,
                      const int64_t *rdispls, MPI_Datatype type,
                      passion_xchg alg, int radix)
{
    passion_ctx *gctx = ctx;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = alltoallv_body(ctx, sendbuf, sendcounts, sdispls, recvbuf, recvcounts,
                        rdispls, type, alg, radix);
    core_call_end(gctx);
    return rc;
}
