/*
 * core_net.h - network and node facts (prefix core_host_, core_nodes_,
 * core_net_; passion/net.c): the host split by shared memory, the (virtual)
 * nodes of a context, and, in test builds (PASSION_TEST_HOOKS; net_sim.c),
 * the simulated network that charges messages between nodes.
 *
 * Invariants: every rank of a node sees the same node fields; nodes are
 * numbered in the order of their lowest rank, whose node_rank is 0; a
 * message is charged on its sender before it is sent, and only between
 * nodes.
 */
#ifndef PASSION_CORE_NET_H
#define PASSION_CORE_NET_H

#include <stddef.h>
#include "passion.h"
#include "core_base.h"
#include "core_ctx.h"
#include "core_options.h"

/* ---- nodes and the simulated network (net.c) ----
 *
 * Every point-to-point message of the exchange subsystem (and so of the
 * extended two-phase method, whose data goes through it) is sent through
 * core_net_isend, or charged with core_net_charge just before MPI sends
 * it in a collective (the `mpi` algorithm), as is the token that orders
 * independent writes (uncounted): it is counted within / between
 * nodes (CORE_NET_COUNTED) and, when its receiver is on another node and
 * the simulated network is on (options sim_net_latency_us,
 * sim_net_byte_ns), the sender waits latency + bytes * byte_ns first,
 * after the messages its node's other ranks sent before it: one network
 * interface per node, shared by its ranks (net.c). A simulation for
 * tests and benchmarks: MPI's own collectives (the error agreement's
 * allreduce, the FAD's allgather) are not charged.
 */
enum { CORE_NET_COUNTED = 1 };
/*
 * What the split by shared memory (the host) tells a rank of a user's
 * communicator: its host leader, the lowest rank of comm on its host.
 * passion_init finds it with MPI_Comm_split_type, the dearest call it
 * makes (dearer than an MPI_Comm_split or an allreduce), and keeps it as
 * an attribute of the user's communicator (net.c), so that later contexts
 * on the same communicator split by the leader instead, when every rank
 * has it (agreed in the first reduction of passion_init: no rank calls
 * another collective than the others). The hosts do not change while the job
 * runs; what may, the ranks' affinity masks, is asked again by every
 * passion_init (core_host_count).
 */
/* This rank's kept host of comm: 1 and *h if kept, else 0. Local. */
CORE_HIDDEN int core_host_kept(MPI_Comm comm, core_host *h);
/* Keep *h on comm (replacing any; a failure keeps nothing). Local. */
CORE_HIDDEN void core_host_keep(MPI_Comm comm, const core_host *h);
/* The attribute key (tests: to forget the host on one rank). */
CORE_HIDDEN int core_host_keyval(void);
/* The lowest rank of comm among the ranks of node (a subset of comm); -1
   if the MPI group calls fail. Local. */
CORE_HIDDEN int core_host_leader(MPI_Comm node, MPI_Comm comm);
/* Collective over ctx->comm (passion_init): the context's ranks on this
   host (the split by shared memory: the nodes without virtual nodes, else
   one made here, by the kept leader when known), and ctx->cpu_share from
   the processors their affinity masks cover together. */
CORE_HIDDEN int core_host_count(passion_ctx *ctx, const core_host *known);
/* Collective over ctx->comm (passion_init): the node fields of ctx from
   the options (virtual_node_ranks, PASSION_VIRTUAL_NODE_RANKS); local
   code (the caller agrees; on failure the fields are cleared and freed
   by core_nodes_free). */
CORE_HIDDEN int core_nodes_init(passion_ctx *ctx, const core_host *known);
CORE_HIDDEN void core_nodes_free(passion_ctx *ctx);
/* The virtual node size asked for: the environment variable
   PASSION_VIRTUAL_NODE_RANKS if set (else the option); -1 and the reason
   in detail (dlen bytes) if the variable is not an integer >= 0. */
CORE_HIDDEN int core_nodes_wanted(const core_options *o, char *detail,
                                  size_t dlen);
/* Node of rank r of ctx->comm (ranks of the layers' duplicates are the
   same). */
static inline int core_node_of(const passion_ctx *ctx, int r)
{
    return ctx->node_of ? ctx->node_of[r] : 0;
}
/* One message of `bytes` to rank peer: count it (flags CORE_NET_COUNTED:
   messages/bytes_intra_node or _inter_node) and wait the simulated cost
   when peer is on another node. Sender side, before the send. */
CORE_HIDDEN void core_net_charge(passion_ctx *ctx, int peer, int64_t bytes,
                                 int flags);
/* MPI_Isend of count items of type to rank peer of comm (a duplicate of
   ctx->comm), after core_net_charge of its bytes. 0 or PASSION_EMPI. */
CORE_HIDDEN int core_net_isend(passion_ctx *ctx, const void *buf, int count,
                               MPI_Datatype type, int peer, int tag,
                               MPI_Comm comm, int flags, MPI_Request *req);
#ifdef PASSION_TEST_HOOKS
/* The simulated network (net_sim.c, test builds only). */
/* Collective over node (core_nodes_init): the node's interface, shared
   memory on node, when the network is on; none on failure. */
CORE_HIDDEN void core_net_sim_open(passion_ctx *ctx, MPI_Comm node);
CORE_HIDDEN void core_net_sim_close(passion_ctx *ctx);
/* Wait the cost of a message of `bytes` to another node (counted: in
   cnt, else in net_uncounted_inter). */
CORE_HIDDEN void core_net_sim_send(passion_ctx *ctx, int64_t bytes,
                                   int counted);
/* Seconds the simulated network charges for `bytes` between nodes (0
   when it is off). */
CORE_HIDDEN double core_net_cost(const passion_ctx *ctx, int64_t bytes);
#else
/* no simulated network: nothing charged */
static inline double core_net_cost(const passion_ctx *ctx, int64_t bytes)
{
    (void)ctx;
    (void)bytes;
    return 0;
}
#endif

#endif
