/*
 * xchg_p2p.c - point-to-point helpers of the exchange algorithms: the
 * waiting policy, messages split at the chunk limit, one-port steps, the
 * staging accounting of a call and the non-blocking allreduce used for
 * agreements.
 *
 * Invariants: a logical message of n bytes is ceil(n / chunk) MPI messages
 * with the same tag, sent and received in order (MPI does not overtake
 * between one pair on one tag), so both sides split alike; a zero-byte
 * known-size message is not sent at all.
 *
 * The waits are the core's (core_waitall, core_idle: poll for the
 * process's spin time, then yield the CPU between polls; see core.h).
 */
#include "xchg.h"

#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

static int wait_mode = COLL_WAIT_HYBRID;
static int64_t chunk_max = INT_MAX;

void coll_xchg_set_wait(int mode)
{
    wait_mode = mode == COLL_WAIT_SPIN ? COLL_WAIT_SPIN : COLL_WAIT_HYBRID;
}

#ifdef PASSION_TEST_HOOKS /* tests only */
void coll_xchg_set_chunk(int64_t bytes)
{
    /* at least the 16-byte header of a four-stage message */
    chunk_max = bytes < 1 || bytes > INT_MAX ? INT_MAX
                : bytes < 64                 ? 64
                                             : bytes;
}
#endif

int64_t coll_xchg_chunk(void)
{
    return chunk_max;
}

int64_t coll_nparts(int64_t bytes)
{
    return bytes <= 0 ? 0 : (bytes - 1) / chunk_max + 1;
}

/* GCC (12) reads MPICH's MPI_STATUSES_IGNORE, the constant pointer 1, as
   a zero-sized status array and warns; the pointer is never written. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
int coll_waitall(int n, MPI_Request *req)
{
    if (n <= 0)
        return PASSION_OK;
    if (wait_mode == COLL_WAIT_SPIN)
        return MPI_Waitall(n, req, MPI_STATUSES_IGNORE) == MPI_SUCCESS
                   ? PASSION_OK
                   : PASSION_EMPI;
    return core_waitall(n, req);
}
#pragma GCC diagnostic pop

/*
 * A receive of count 0 would drain a message in MPI's terms (a truncation
 * error, returned by passion's communicators), but Open MPI 4.1's shared
 * memory single-copy path (btl vader with CMA: process_vm_readv) writes
 * the whole message into the receive buffer before it reports the
 * truncation: the drains that received into a one-byte stack variable
 * smashed the stack (bench-soak at np2 under Open MPI crashed in 11 of 12
 * runs with MALLOC_PERTURB_ set; ASan: stack-buffer-overflow in
 * process_vm_readv called from the exchange's drain). So the message is
 * probed (matched: no other receive can take it in between) and received
 * whole into scratch memory; only without memory for it, truncated.
 */
void coll_drain(MPI_Comm comm, int src, int tag)
{
    MPI_Message msg;
    MPI_Status st;
    int n = 0;
    if (MPI_Mprobe(src, tag, comm, &msg, &st) != MPI_SUCCESS)
        return;
    if (MPI_Get_count(&st, MPI_BYTE, &n) != MPI_SUCCESS || n < 0)
        n = 0;
    char small[256];
    char *buf = n <= (int)sizeof small ? small : malloc((size_t)n);
    if (!buf) {
        MPI_Mrecv(small, 0, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        return;
    }
    MPI_Mrecv(buf, n, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
    if (buf != small)
        free(buf);
}

void coll_idle(double t0)
{
    if (wait_mode == COLL_WAIT_HYBRID)
        core_idle(t0);
}

int coll_isend(const coll_xchg_plan *pl, const void *buf, int64_t bytes,
               int peer, int tag, MPI_Request *req)
{
    const char *p = buf;
    for (int64_t k = 0; bytes > 0; k++) {
        int64_t n = bytes < chunk_max ? bytes : chunk_max;
        /* the core's send: counted within / between nodes, charged by
           the simulated network */
        if (coll_net_isend(pl, p, (int)n, MPI_BYTE, peer, tag,
                           CORE_NET_COUNTED, &req[k]))
            return PASSION_EMPI;
        p += n;
        bytes -= n;
    }
    return PASSION_OK;
}

int coll_net_isend(const coll_xchg_plan *pl, const void *buf, int count,
                   MPI_Datatype type, int peer, int tag, int flags,
                   MPI_Request *req)
{
    if (!pl->ranks)
        return core_net_isend(pl->ctx, buf, count, type, peer, tag,
                              pl->comm, flags, req);
    int size = 0;
    if (MPI_Type_size(type, &size) != MPI_SUCCESS)
        return PASSION_EMPI;
    core_net_charge(pl->ctx, pl->ranks[peer], (int64_t)count * size, flags);
    return MPI_Isend(buf, count, type, peer, tag, pl->comm, req) ==
                   MPI_SUCCESS
               ? PASSION_OK
               : PASSION_EMPI;
}

int coll_irecv(const coll_xchg_plan *pl, void *buf, int64_t bytes, int peer,
               int tag, MPI_Request *req)
{
    char *p = buf;
    for (int64_t k = 0; bytes > 0; k++) {
        int64_t n = bytes < chunk_max ? bytes : chunk_max;
        if (MPI_Irecv(p, (int)n, MPI_BYTE, peer, tag, pl->comm, &req[k]) !=
            MPI_SUCCESS)
            return PASSION_EMPI;
        p += n;
        bytes -= n;
    }
    return PASSION_OK;
}

int coll_a1_isends(coll_xchg_plan *pl, int tag, int *k)
{
    int rc = PASSION_OK;
    for (int j = 1; j < pl->P && !rc; j++) {
        int to = (pl->me + j) % pl->P;
        int64_t b = coll_sc(pl, to);
        if (b <= pl->fused_max)
            continue; /* it went inside its header's message */
        if (*k + coll_nparts(b) > pl->nreq)
            rc = PASSION_ENOMEM;
        else
            rc = coll_isend(pl, pl->sbuf + coll_sd(pl, to), b, to, tag,
                            pl->req + *k);
        *k += (int)coll_nparts(b);
        if (b > 0) {
            pl->st.messages++;
            pl->st.bytes_sent += b;
        }
    }
    return rc;
}

void coll_copy_self(coll_xchg_plan *pl)
{
    int64_t b = coll_sc(pl, pl->me);
    if (b > 0)
        memcpy(pl->rbuf + coll_rd(pl, pl->me), pl->sbuf + coll_sd(pl, pl->me),
               (size_t)b);
}

int coll_sendrecv(coll_xchg_plan *pl, const void *sbuf, int64_t sbytes,
                  int to, void *rbuf, int64_t rbytes, int from, int tag)
{
    int64_t nr = coll_nparts(rbytes), ns = coll_nparts(sbytes);
    if (nr + ns > pl->nreq)
        return core_err(pl->ctx, PASSION_ENOMEM,
                        "exchange step needs %lld requests (pool %d)",
                        (long long)(nr + ns), pl->nreq);
    int rc = coll_irecv(pl, rbuf, rbytes, from, tag, pl->req);
    if (!rc)
        rc = coll_isend(pl, sbuf, sbytes, to, tag, pl->req + nr);
    if (!rc)
        rc = coll_waitall((int)(nr + ns), pl->req);
    if (rc)
        return core_err(pl->ctx, rc, "MPI point-to-point in exchange step");
    if (sbytes > 0 || rbytes > 0)
        pl->st.rounds++;
    if (sbytes > 0) {
        pl->st.messages++;
        pl->st.bytes_sent += sbytes;
    }
    return PASSION_OK;
}

void *coll_stage_alloc(coll_xchg_plan *pl, int64_t bytes, int64_t payload)
{
    if (bytes <= 0)
        return NULL;
    if (pl->stage_now + bytes > pl->limit ||
        pl->ctx->staging_now - pl->base + bytes > pl->limit) {
        pl->limit_hit = 1;
        return NULL;
    }
    void *p = core_stage_alloc(pl->ctx, bytes);
    if (!p)
        return NULL;
    pl->stage_now += bytes;
    pl->payload_now += payload;
    if (pl->stage_now > pl->st.peak_staging)
        pl->st.peak_staging = pl->stage_now;
    if (pl->payload_now > pl->st.peak_payload)
        pl->st.peak_payload = pl->payload_now;
    return p;
}

void coll_stage_free(coll_xchg_plan *pl, void *p, int64_t bytes,
                     int64_t payload)
{
    if (!p)
        return;
    core_stage_free(pl->ctx, p, bytes);
    pl->stage_now -= bytes;
    pl->payload_now -= payload;
}

/* v[0] holds the number of summed entries that follow it. */
static void reduce_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int64_t *a = in;
    int64_t *b = inout;
    int n = *len;
    int nsum = (int)(a[0] > b[0] ? a[0] : b[0]);
    b[0] = nsum;
    for (int i = 1; i < n; i++) {
        if (i <= nsum)
            b[i] = (int64_t)((uint64_t)a[i] + (uint64_t)b[i]);
        else if (a[i] > b[i])
            b[i] = a[i];
    }
}

int coll_allreduce(MPI_Comm comm, int64_t *v, int n, int nsum)
{
    int64_t buf[64], out[64];
    if (n + 1 > 64 || nsum > n)
        return PASSION_EINVAL;
    buf[0] = nsum;
    memcpy(buf + 1, v, (size_t)n * sizeof *v);
    MPI_Op op;
    if (MPI_Op_create(reduce_fn, 1, &op) != MPI_SUCCESS)
        return PASSION_EMPI;
    MPI_Request req;
    int rc = PASSION_OK;
    if (MPI_Iallreduce(buf, out, n + 1, MPI_INT64_T, op, comm, &req) !=
        MPI_SUCCESS)
        rc = PASSION_EMPI;
    else
        rc = coll_waitall(1, &req);
    MPI_Op_free(&op);
    if (!rc)
        memcpy(v, out + 1, (size_t)n * sizeof *v);
    return rc;
}
