/*
 * xchg_nodes.c - the node table of the exchange subsystem: which ranks
 * share a node, their order on it, and a communicator of the node leaders
 * (for the two-level exchange, xchg_twolevel.c, and the cost model's node
 * count). Made once per context with the subsystem's communicator.
 *
 * Where the nodes come from: the option virtual_node_ranks = k (env
 * PASSION_VIRTUAL_NODE_RANKS) makes virtual nodes of k consecutive ranks;
 * otherwise the ranks that share memory (MPI_Comm_split_type with
 * MPI_COMM_TYPE_SHARED) form a node. Nodes are numbered in the order of
 * their lowest rank.
 *
 * Invariant: the table is a pure function of the allgathered (node key,
 * rank on node) pairs, so it is identical on every rank.
 */
#include "exchange.h"

#include <stdlib.h>
#include <string.h>

/* This rank's node key (equal on the ranks of one node) and its rank on
   the node. */
static int node_key(passion_ctx *ctx, MPI_Comm comm, int *key, int *lrank)
{
    int me;
    MPI_Comm_rank(comm, &me);
    const char *v = getenv("PASSION_VIRTUAL_NODE_RANKS");
    long k = v ? strtol(v, NULL, 10) : 0;
    if (k > 0) {
        *key = me / (int)k;
        *lrank = me % (int)k;
        return PASSION_OK;
    }
    MPI_Comm sh;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL,
                            &sh) != MPI_SUCCESS)
        return core_err(ctx, PASSION_EMPI, "nodes: MPI_Comm_split_type");
    int first = me, rc = PASSION_OK;
    MPI_Comm_rank(sh, lrank);
    if (MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, sh) != MPI_SUCCESS)
        rc = core_err(ctx, PASSION_EMPI, "nodes: MPI_Allreduce");
    MPI_Comm_free(&sh);
    *key = first;
    return rc;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int coll_nodes_make(passion_ctx *ctx, MPI_Comm comm, coll_nodes *t)
{
    int P, me, key = 0, lrank = 0;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    memset(t, 0, sizeof *t);
    t->leaders = MPI_COMM_NULL;
    int rc = node_key(ctx, comm, &key, &lrank);
    int mine[2] = {key, lrank};
    int *all = core_malloc(ctx, 2 * (size_t)P * sizeof *all);
    int *keys = core_malloc(ctx, (size_t)P * sizeof *keys);
    t->node_of = core_malloc(ctx, (size_t)P * sizeof *t->node_of);
    t->first = core_malloc(ctx, ((size_t)P + 1) * sizeof *t->first);
    t->members = core_malloc(ctx, (size_t)P * sizeof *t->members);
    if (!rc && (!all || !keys || !t->node_of || !t->first || !t->members))
        rc = core_err(ctx, PASSION_ENOMEM, "nodes: tables of %d ranks", P);
    /* every rank takes part in the allgather, with or without memory */
    int dummy[2];
    if (MPI_Allgather(mine, 2, MPI_INT, all ? all : dummy, all ? 2 : 0,
                      MPI_INT, comm) != MPI_SUCCESS &&
        !rc)
        rc = core_err(ctx, PASSION_EMPI, "nodes: MPI_Allgather");
    if (!rc) {
        /* node numbers: the distinct keys in increasing order */
        for (int i = 0; i < P; i++)
            keys[i] = all[2 * i];
        qsort(keys, (size_t)P, sizeof *keys, cmp_int);
        int n = 0;
        for (int i = 0; i < P; i++)
            if (i == 0 || keys[i] != keys[i - 1])
                keys[n++] = keys[i];
        t->nnodes = n;
        for (int i = 0; i < P; i++) {
            int lo = 0, hi = n - 1;
            while (lo < hi) {
                int mid = (lo + hi) / 2;
                if (keys[mid] < all[2 * i])
                    lo = mid + 1;
                else
                    hi = mid;
            }
            t->node_of[i] = lo;
        }
        /* members by node, then rank on the node (counting sort) */
        memset(t->first, 0, ((size_t)n + 1) * sizeof *t->first);
        for (int i = 0; i < P; i++)
            t->first[t->node_of[i] + 1]++;
        for (int v = 0; v < n; v++) {
            if (t->first[v + 1] > t->max_size)
                t->max_size = t->first[v + 1];
            t->first[v + 1] += t->first[v];
        }
        for (int i = 0; i < P; i++)
            t->members[i] = -1;
        for (int i = 0; i < P && !rc; i++) {
            int v = t->node_of[i], size = t->first[v + 1] - t->first[v];
            int lr = all[2 * i + 1];
            if (lr < 0 || lr >= size || t->members[t->first[v] + lr] >= 0)
                rc = core_err(ctx, PASSION_EINVAL,
                              "nodes: rank %d has rank %d on a node of %d",
                              i, lr, size);
            else
                t->members[t->first[v] + lr] = i;
        }
        t->node = t->node_of[me];
        t->lrank = lrank;
    }
    /* the leaders' communicator: every rank takes part in the split */
    if (MPI_Comm_split(comm, !rc && lrank == 0 ? 0 : MPI_UNDEFINED, t->node,
                       &t->leaders) != MPI_SUCCESS &&
        !rc)
        rc = core_err(ctx, PASSION_EMPI, "nodes: MPI_Comm_split");
    if (!rc && t->leaders != MPI_COMM_NULL &&
        MPI_Comm_set_errhandler(t->leaders, MPI_ERRORS_RETURN) !=
            MPI_SUCCESS)
        rc = core_err(ctx, PASSION_EMPI, "nodes: MPI_Comm_set_errhandler");
    core_free(ctx, all);
    core_free(ctx, keys);
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
    memset(t, 0, sizeof *t);
    t->leaders = MPI_COMM_NULL;
}
