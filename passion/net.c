/*
 * net.c - nodes, and the messages between them.
 *
 * Nodes: passion_init splits the context's ranks into nodes, the ranks
 * that share memory (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED) or,
 * with the option virtual_node_ranks = k (the environment variable
 * PASSION_VIRTUAL_NODE_RANKS wins), virtual nodes of k consecutive ranks,
 * so that node-aware code runs on one machine. The context keeps the
 * node's communicator, the leaders' communicator and the node of every
 * rank (core.h, struct passion_ctx).
 *
 * Messages: every point-to-point message that the exchange subsystem
 * sends goes through core_net_isend (or is charged with core_net_charge
 * where MPI sends it inside a collective call), and so does the token that
 * orders independent writes (collective/global.c): it is counted, within
 * or between nodes, in the context's counters and, in a test build, the
 * simulated network charges it (net_sim.c).
 *
 * Invariants: every rank of a node holds the same node_id, nnodes and
 * node_size; node ids follow the nodes' lowest ranks, so leader_comm's
 * rank of a leader is its node_id; node_of[r] is the node of rank r of
 * ctx->comm (and of every duplicate of it).
 */
#include "core.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int core_nodes_wanted(const core_options *o, char *detail, size_t dlen)
{
    const char *env = getenv("PASSION_VIRTUAL_NODE_RANKS");
    if (!env || !*env)
        return o->virtual_node_ranks;
    char *end;
    errno = 0;
    long v = strtol(env, &end, 10);
    if (errno || end == env || *end || v < 0 || v > (1L << 30)) {
        if (detail && dlen)
            snprintf(detail, dlen,
                     "environment variable PASSION_VIRTUAL_NODE_RANKS: '%s' "
                     "is not an integer in 0..%ld",
                     env, 1L << 30);
        return -1;
    }
    return (int)v;
}

void core_nodes_free(passion_ctx *ctx)
{
#ifdef PASSION_TEST_HOOKS
    core_net_sim_close(ctx);
#endif
    if (ctx->node_comm != MPI_COMM_NULL)
        MPI_Comm_free(&ctx->node_comm);
    if (ctx->leader_comm != MPI_COMM_NULL)
        MPI_Comm_free(&ctx->leader_comm);
    core_free(NULL, ctx->node_of);
    ctx->node_of = NULL;
}

/* ---- the host, kept on the user's communicator (core.h, core_host) ----
 * The attribute's value is the host leader packed in its pointer (nothing
 * to allocate or free): bit 0 set, the leader above it. It is not copied
 * by MPI_Comm_dup and goes with the communicator. */
static int host_keyval = MPI_KEYVAL_INVALID;
static pthread_once_t host_once = PTHREAD_ONCE_INIT;

static void host_keyval_make(void)
{
    int kv;
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN,
                               &kv, NULL) == MPI_SUCCESS)
        host_keyval = kv;
}

int core_host_keyval(void)
{
    pthread_once(&host_once, host_keyval_make);
    return host_keyval;
}

int core_host_kept(MPI_Comm comm, core_host *h)
{
    int kv = core_host_keyval(), flag = 0;
    void *val = NULL;
    if (kv == MPI_KEYVAL_INVALID ||
        MPI_Comm_get_attr(comm, kv, &val, &flag) != MPI_SUCCESS || !flag)
        return 0;
    uintptr_t v = (uintptr_t)val;
    if (!(v & 1) || (v >> 1) > INT32_MAX)
        return 0;
    h->leader = (int)(v >> 1);
    return 1;
}

void core_host_keep(MPI_Comm comm, const core_host *h)
{
    int kv = core_host_keyval();
    if (kv == MPI_KEYVAL_INVALID || h->leader < 0)
        return;
    MPI_Comm_set_attr(comm, kv, (void *)((uintptr_t)h->leader << 1 | 1));
}

/* The lowest rank of comm in node (a subset of comm), -1 on failure. */
int core_host_leader(MPI_Comm node, MPI_Comm comm)
{
    MPI_Group gn = MPI_GROUP_NULL, gc = MPI_GROUP_NULL;
    int zero = 0, leader = -1;
    if (MPI_Comm_group(node, &gn) != MPI_SUCCESS ||
        MPI_Comm_group(comm, &gc) != MPI_SUCCESS ||
        MPI_Group_translate_ranks(gn, 1, &zero, gc, &leader) !=
            MPI_SUCCESS ||
        leader == MPI_UNDEFINED)
        leader = -1;
    if (gn != MPI_GROUP_NULL)
        MPI_Group_free(&gn);
    if (gc != MPI_GROUP_NULL)
        MPI_Group_free(&gc);
    return leader;
}

/* The context's ranks on this host and, from the processors their
   affinity masks cover together, ctx->cpu_share (and ctx->host.leader
   where the split by shared memory is made here). Collective. */
int core_host_count(passion_ctx *ctx, const core_host *known)
{
    /* the context's ranks sharing this node: a split by shared memory,
       which the nodes already are without virtual nodes (core_nodes_init:
       every rank has the same virtual_node_ranks, agreed, and a node
       communicator, or passion_init failed before), else made here
       (collective, on every rank whatever its options); on failure,
       assume the node is shared. (One split less per passion_init: a
       split by shared memory is a large share of passion_init's time
       on an oversubscribed node, and fault injection makes hundreds of
       contexts.) The processors they may run on: the
       union of their affinity masks (ranks bound to a core each cover
       the node's cores; ranks confined together, fewer). With virtual
       nodes and the host kept on the user's communicator (known, on
       every rank), a split by its leader instead. */
    int local = ctx->size, cover = 0;
    const int reuse = ctx->opt.virtual_node_ranks == 0 &&
                      ctx->node_comm != MPI_COMM_NULL;
    MPI_Comm node = ctx->node_comm;
    if (reuse ||
        (known ? MPI_Comm_split(ctx->comm, known->leader, ctx->rank, &node)
               : MPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED,
                                     ctx->rank, MPI_INFO_NULL, &node)) ==
            MPI_SUCCESS) {
        MPI_Comm_size(node, &local);
        if (!reuse && !known)
            ctx->host.leader = core_host_leader(node, ctx->comm);
        cpu_set_t set;
        CPU_ZERO(&set);
        if (sched_getaffinity(0, sizeof set, &set) != 0 ||
            CPU_COUNT(&set) == 0) {
            long n = sysconf(_SC_NPROCESSORS_ONLN);
            for (long c = 0; c < n && c < CPU_SETSIZE; c++)
                CPU_SET((int)c, &set);
        }
        if (MPI_Allreduce(MPI_IN_PLACE, &set, (int)sizeof set, MPI_BYTE,
                          MPI_BOR, node) == MPI_SUCCESS)
            cover = CPU_COUNT(&set);
        if (!reuse)
            MPI_Comm_free(&node);
    }
    ctx->cpu_share = cover > 0 && local > cover ? (double)local / cover : 1;
    return local;
}

int core_nodes_init(passion_ctx *ctx, const core_host *known)
{
    const int P = ctx->size, me = ctx->rank, k = ctx->opt.virtual_node_ranks;
    int rc = PASSION_OK;
    ctx->host.leader = -1;
    ctx->node_comm = ctx->leader_comm = MPI_COMM_NULL;
    ctx->node_id = 0;
    ctx->nnodes = 1;
    ctx->node_rank = 0;
    ctx->node_size = 1;
    /* every rank makes every collective call below, whatever failed */
    MPI_Comm node = MPI_COMM_NULL;
    /* real nodes: the split by shared memory, or by the host leader when
       every rank has its host kept (known: the same on every rank) */
    int e = k > 0 ? MPI_Comm_split(ctx->comm, me / k, me, &node)
            : known ? MPI_Comm_split(ctx->comm, known->leader, me, &node)
                    : MPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED,
                                          me, MPI_INFO_NULL, &node);
    int leader = me;
    if (e != MPI_SUCCESS || node == MPI_COMM_NULL) {
        rc = core_err(ctx, PASSION_EMPI, "%s in passion_init (nodes)",
                      k > 0 || known ? "MPI_Comm_split"
                                     : "MPI_Comm_split_type");
        node = MPI_COMM_NULL;
    } else {
        MPI_Comm_rank(node, &ctx->node_rank);
        MPI_Comm_size(node, &ctx->node_size);
        /* the leader is node rank 0, the node's lowest rank (key = rank) */
        leader = k == 0 && known ? known->leader
                                 : core_host_leader(node, ctx->comm);
        if (leader < 0) {
            rc = core_err(ctx, PASSION_EMPI,
                          "MPI group calls in passion_init (nodes)");
            leader = me;
        } else if (k == 0) {
            ctx->host.leader = leader;
        }
    }
    ctx->node_comm = node;
#ifdef PASSION_TEST_HOOKS
    /* the simulated network's interface of the node, its clock set before
       the allgather below, which every rank passes only after the node's
       leader has */
    core_net_sim_open(ctx, node);
#endif
    /* the leader of every rank, turned in place into node ids: a rank is
       its own leader (a new node) or its leader is lower (done before) */
    int *of = ctx->node_of;
    MPI_Request req;
    if (MPI_Iallgather(&leader, 1, MPI_INT, of, 1, MPI_INT, ctx->comm,
                       &req) != MPI_SUCCESS ||
        core_wait(&req)) {
        if (!rc)
            rc = core_err(ctx, PASSION_EMPI,
                          "MPI_Iallgather in passion_init (nodes)");
    } else {
        int n = 0;
        for (int r = 0; r < P; r++) {
            int l = of[r];
            if (l < 0 || l > r) {
                if (!rc)
                    rc = core_err(ctx, PASSION_EMPI,
                                  "passion_init: rank %d's node leader %d is "
                                  "not a lower rank", r, l);
                of[r] = n++;
            } else {
                of[r] = l == r ? n++ : of[l];
            }
        }
        ctx->nnodes = n;
        ctx->node_id = of[me];
    }
    /* the leaders' communicator; on one node, the leader's own (no
       collective call: every rank knows there is one node from its node's
       size, the same on every rank; an MPI_Comm_split of 3 ranks took 30
       ms here) */
    MPI_Comm lc = MPI_COMM_NULL;
    int one = k > 0 ? k >= P : ctx->node_size == P;
    if (one) {
        if (ctx->node_rank == 0 &&
            (MPI_Comm_dup(MPI_COMM_SELF, &lc) != MPI_SUCCESS ||
             MPI_Comm_set_errhandler(lc, MPI_ERRORS_RETURN) !=
                 MPI_SUCCESS)) {
            if (lc != MPI_COMM_NULL)
                MPI_Comm_free(&lc);
            if (!rc)
                rc = core_err(ctx, PASSION_EMPI,
                              "MPI_Comm_dup of MPI_COMM_SELF (the node "
                              "leader) in passion_init");
            lc = MPI_COMM_NULL;
        }
    } else if (MPI_Comm_split(ctx->comm,
                              ctx->node_rank == 0 ? 0 : MPI_UNDEFINED, me,
                              &lc) != MPI_SUCCESS) {
        if (!rc)
            rc = core_err(ctx, PASSION_EMPI,
                          "MPI_Comm_split of the node leaders in "
                          "passion_init");
        lc = MPI_COMM_NULL;
    }
    ctx->leader_comm = lc;
    return rc;
}

int passion_ctx_node(const passion_ctx *ctx, int *node_id, int *nnodes,
                     int *node_rank, int *node_size)
{
    if (!ctx)
        return PASSION_EINVAL;
    if (node_id)
        *node_id = ctx->node_id;
    if (nnodes)
        *nnodes = ctx->nnodes;
    if (node_rank)
        *node_rank = ctx->node_rank;
    if (node_size)
        *node_size = ctx->node_size;
    return PASSION_OK;
}

void core_net_charge(passion_ctx *ctx, int peer, int64_t bytes, int flags)
{
    if (peer == ctx->rank || peer < 0 || peer >= ctx->size)
        return;
    int inter = core_node_of(ctx, peer) != ctx->node_id;
    if (flags & CORE_NET_COUNTED) {
        if (inter) {
            ctx->cnt.messages_inter_node++;
            ctx->cnt.bytes_inter_node += (uint64_t)bytes;
        } else {
            ctx->cnt.messages_intra_node++;
            ctx->cnt.bytes_intra_node += (uint64_t)bytes;
        }
    }
#ifdef PASSION_TEST_HOOKS
    if (inter)
        core_net_sim_send(ctx, bytes, flags & CORE_NET_COUNTED);
#endif
}

int core_net_isend(passion_ctx *ctx, const void *buf, int count,
                   MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                   int flags, MPI_Request *req)
{
    int size = 0;
    if (MPI_Type_size(type, &size) != MPI_SUCCESS)
        return PASSION_EMPI;
    core_net_charge(ctx, peer, (int64_t)count * size, flags);
    return MPI_Isend(buf, count, type, peer, tag, comm, req) == MPI_SUCCESS
               ? PASSION_OK
               : PASSION_EMPI;
}
