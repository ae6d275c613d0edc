/*
 * xchg_state.c - all per-context state of the exchange subsystem, in one
 * place: the last call's counters, the subsystem's private communicator
 * and its node table (the calibrated message costs and auto's memo are
 * the planner's state: plan_xchg.h). It hangs on the context's extension
 * slot CORE_EXT_XCHG and is freed by passion_finalize through the
 * destructor registered here.
 *
 * Invariants: the communicator is created collectively
 * by the first exchange call on the context, and kept by every rank or by
 * none (agreed), so that the next call finds the same on every rank.
 */
#include "xchg.h"

#include <string.h>

struct coll_xchg_state {
    coll_xchg_stats last;
    MPI_Comm comm; /* private duplicate of ctx->comm, errors returned */
    coll_nodes nodes; /* made with comm (xchg_nodes.c) */
    void *buf; /* coll_xchg_state_buf */
    size_t buf_bytes;
};

static void state_free(passion_ctx *ctx, void *p)
{
    coll_xchg_state *s = p;
    coll_nodes_free(ctx, &s->nodes);
    core_free(ctx, s->buf);
    if (s->comm != MPI_COMM_NULL)
        MPI_Comm_free(&s->comm);
    core_free(ctx, s);
}

static void state_init(void *p)
{
    coll_xchg_state *s = p;
    s->comm = MPI_COMM_NULL;
    s->nodes.leaders = MPI_COMM_NULL;
}

coll_xchg_state *coll_xchg_state_get(passion_ctx *ctx)
{
    return core_ext_get(ctx, CORE_EXT_XCHG, sizeof(coll_xchg_state),
                        state_init, state_free);
}

int coll_xchg_comm_setup(passion_ctx *ctx, MPI_Comm *out)
{
    coll_xchg_state *s = coll_xchg_state_get(ctx);
    *out = MPI_COMM_NULL;
    /* s->comm is set on every rank or on none (below), so every rank
       returns here or every rank goes on to the agreement */
    if (s && s->comm != MPI_COMM_NULL) {
        *out = s->comm;
        return PASSION_OK;
    }
    /* a rank without the state (out of memory) still duplicates and
       makes the node table, which are collective, and fails at the
       agreement: its peers, which have the state, are in the same calls
       (its peers have no communicator either, the last setup having been
       agreed) */
    MPI_Comm c = MPI_COMM_NULL;
    int rc = PASSION_OK;
    if (MPI_Comm_dup(ctx->comm, &c) != MPI_SUCCESS)
        rc = core_err(ctx, PASSION_EMPI, "exchange: MPI_Comm_dup");
    else if (MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN) != MPI_SUCCESS)
        rc = core_err(ctx, PASSION_EMPI, "exchange: MPI_Comm_set_errhandler");
    if (!s && !rc)
        rc = core_err(ctx, PASSION_ENOMEM, "exchange: context state");
    /* the node table, collective over the new communicator (every rank
       that has one: the dup succeeded everywhere or failed everywhere) */
    coll_nodes t;
    memset(&t, 0, sizeof t);
    t.leaders = MPI_COMM_NULL;
    if (c != MPI_COMM_NULL) {
        int nrc = coll_nodes_make(ctx, c, &t);
        if (!rc)
            rc = nrc;
    }
    rc = core_agree(ctx, rc);
    if (rc) {
        coll_nodes_free(ctx, &t);
        if (c != MPI_COMM_NULL)
            MPI_Comm_free(&c);
        return rc;
    }
    s->nodes = t;
    s->comm = c;
    *out = c;
    return PASSION_OK;
}

const coll_nodes *coll_xchg_nodes(passion_ctx *ctx)
{
    coll_xchg_state *s = ctx->ext[CORE_EXT_XCHG];
    return s && s->comm != MPI_COMM_NULL ? &s->nodes : NULL;
}

MPI_Comm coll_xchg_comm(passion_ctx *ctx)
{
    MPI_Comm c;
    coll_xchg_comm_setup(ctx, &c);
    return c;
}

int coll_xchg_costs_get(passion_ctx *ctx, coll_xchg_costs *out)
{
    /* the communicator (collective the first time) only when a
       measurement is needed */
    if (coll_xchg_costs_ready(ctx, out))
        return PASSION_OK;
    return plan_xchg_costs_get(ctx, coll_xchg_comm(ctx), out);
}

void *coll_xchg_state_buf(passion_ctx *ctx, coll_xchg_state *st,
                          size_t bytes)
{
    if (!st)
        return NULL;
    if (st->buf && st->buf_bytes >= bytes)
        return core_alloc_fault(ctx) ? NULL : st->buf;
    void *p = core_malloc(ctx, bytes);
    if (!p)
        return NULL;
    core_free(ctx, st->buf);
    st->buf = p;
    st->buf_bytes = bytes;
    return p;
}

void coll_xchg_state_set_last(coll_xchg_state *st, const coll_xchg_stats *l)
{
    if (st)
        st->last = *l;
}

int coll_xchg_last(passion_ctx *ctx, coll_xchg_stats *out)
{
    if (!ctx || !out)
        return PASSION_EINVAL;
    coll_xchg_state *s = coll_xchg_state_get(ctx);
    if (!s)
        return PASSION_ENOMEM;
    *out = s->last;
    return PASSION_OK;
}
