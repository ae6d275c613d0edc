/*
 * xchg_nodes.c - the node table of the exchange subsystem: which ranks
 * share a node, their order on it, and a communicator of the node leaders
 * (for the two-level exchange, xchg_twolevel.c, and the cost model's node
 * count). Made once per context with the subsystem's communicator.
 *
 * The nodes are the context's (passion/net.c: ctx->node_of, node_id,
 * node_rank; virtual nodes with virtual_node_ranks, else the ranks that
 * share memory); this table adds each node's ranks in order (rank on the
 * node = position) and a leaders' communicator of the subsystem's own.
 *
 * Invariant: the table is a pure function of ctx->node_of, identical on
 * every rank.
 */
#include "xchg.h"

#include <string.h>

int coll_nodes_make(passion_ctx *ctx, MPI_Comm comm, coll_nodes *t)
{
    int P = ctx->size, N = ctx->nnodes > 0 ? ctx->nnodes : 1;
    int rc = PASSION_OK;
    memset(t, 0, sizeof *t);
    t->leaders = MPI_COMM_NULL;
    t->node_of = core_malloc(ctx, (size_t)P * sizeof *t->node_of);
    t->first = core_malloc(ctx, ((size_t)N + 1) * sizeof *t->first);
    t->members = core_malloc(ctx, (size_t)P * sizeof *t->members);
    t->leader_rank = core_malloc(ctx, (size_t)N * sizeof *t->leader_rank);
    if (!t->node_of || !t->first || !t->members || !t->leader_rank)
        rc = core_err(ctx, PASSION_ENOMEM, "nodes: tables of %d ranks", P);
    if (!rc) {
        t->nnodes = N;
        /* members by node, in rank order (a node's ranks keep their
           order on node_comm: rank on the node = position here) */
        memset(t->first, 0, ((size_t)N + 1) * sizeof *t->first);
        for (int i = 0; i < P; i++) {
            t->node_of[i] = core_node_of(ctx, i);
            t->first[t->node_of[i] + 1]++;
        }
        for (int v = 0; v < N; v++) {
            if (t->first[v + 1] > t->max_size)
                t->max_size = t->first[v + 1];
            t->first[v + 1] += t->first[v];
        }
        int *fill = t->leader_rank; /* next free slot per node, for now */
        for (int v = 0; v < N; v++)
            fill[v] = t->first[v];
        for (int i = 0; i < P; i++)
            t->members[fill[t->node_of[i]]++] = i;
        for (int v = 0; v < N; v++)
            t->leader_rank[v] = t->members[t->first[v]];
        t->node = ctx->node_id;
        t->lrank = ctx->node_rank;
        if (t->members[t->first[t->node] + t->lrank] != ctx->rank)
            rc = core_err(ctx, PASSION_EINVAL,
                          "nodes: rank %d is not rank %d of node %d",
                          ctx->rank, t->lrank, t->node);
    }
    /* the leaders' communicator of the subsystem (errors returned, rank
       = node number): every rank takes part in the split */
    if (MPI_Comm_split(comm, !rc && t->lrank == 0 ? 0 : MPI_UNDEFINED,
                       t->node, &t->leaders) != MPI_SUCCESS &&
        !rc)
        rc = core_err(ctx, PASSION_EMPI, "nodes: MPI_Comm_split");
    if (!rc && t->leaders != MPI_COMM_NULL &&
        MPI_Comm_set_errhandler(t->leaders, MPI_ERRORS_RETURN) !=
            MPI_SUCCESS)
        rc = core_err(ctx, PASSION_EMPI, "nodes: MPI_Comm_set_errhandler");
    if (rc)
        coll_nodes_free(ctx, t);
    return rc;
}

void coll_nodes_free(passion_ctx *ctx, coll_nodes *t)
{
    if (t->leaders != MPI_COMM_NULL)
        MPI_Comm_free(&t->leaders);
    core_free(ctx, t->node_of);
    core_free(ctx, t->first);
    core_free(ctx, t->members);
    core_free(ctx, t->leader_rank);
    memset(t, 0, sizeof *t);
    t->leaders = MPI_COMM_NULL;
}
