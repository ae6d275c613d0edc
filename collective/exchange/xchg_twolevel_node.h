/*
 * xchg_twolevel_node.h - the inside of the two-level exchange (a node's side,
 * defined in xchg_twolevel_node.c), shared by its
 * files only: xchg_twolevel.c (the model and the run),
 * xchg_twolevel_node.c (a node's side: the tables, the streams, the
 * node's blocks at its leader) and xchg_nodes_agree.c (the entry
 * agreement by nodes, on which the run's data may ride).
 *
 * Invariants:
 *  - the nodes are those of the exchange's node table (xchg_nodes.c);
 *    member 0 of a node is its leader, and only leaders send between
 *    nodes;
 *  - the node's block for node b holds the data of (source rank i of
 *    this node, destination d of b) in order of i, then d; the incoming
 *    block from node b the data of (source i of b, member k of this
 *    node) in order of i, then k;
 *  - every logical message's length is known to both sides before it is
 *    posted, and both split it at the same chunk boundaries
 *    (coll_tl_stream).
 */
#ifndef PASSION_COLL_XCHG_TWOLEVEL_NODE_H
#define PASSION_COLL_XCHG_TWOLEVEL_NODE_H

#include "xchg.h"

#define COLL_TL_TAG_HDR (COLL_TAG + 20)  /* rank -> leader: counts */
#define COLL_TL_TAG_UP (COLL_TAG + 21)   /* rank -> leader: data out */
#define COLL_TL_TAG_DOWN (COLL_TAG + 22) /* leader -> rank: data in */
#define COLL_TL_TAG_NODE (COLL_TAG + 23) /* two ranks of one node */

/* one piece of a stream: n bytes at p */
typedef struct coll_tl_piece {
    char *p;
    int64_t n;
} coll_tl_piece;

/* the tables of a run, carved from pl->scratch (coll_tl_layout) */
typedef struct coll_tl_tabs {
    int64_t *hdr;       /* leader: S rows of 2 P counts; else one row */
    coll_tl_piece *pc;  /* P + 1 pieces of a stream */
    int *lens;          /* P + 2 */
    MPI_Aint *disp;     /* P + 2 */
    int64_t *sub;       /* leader: 4 N counts of the leaders' exchange */
    void *fs;           /* leader: the four-stage's tables */
    int64_t *ms;        /* leader: S pairs (data comes, its bytes) of the
                           agreement by nodes */
} coll_tl_tabs;

/* one rank's view of a run (or of the agreement by nodes) */
typedef struct coll_tl_run {
    coll_xchg_plan *pl;
    const coll_nodes *T;
    coll_tl_tabs tb;
    int a, S, f0, leader; /* my node, its size, first member, its leader */
    int n;                /* requests in use in pl->req */
} coll_tl_run;

/* r for pl on the node table T (tables not laid out). */
CORE_HIDDEN void coll_tl_begin(coll_tl_run *r, coll_xchg_plan *pl,
                               const coll_nodes *T);
/* Bytes of the tables for pl on T; with tb, carve them from base. */
CORE_HIDDEN int64_t coll_tl_layout(const coll_xchg_plan *pl,
                                   const coll_nodes *T, coll_tl_tabs *tb,
                                   char *base);
/* Post one logical message of n pieces (total bytes) to (send) or from
   peer, cut at the chunk limit; coll_nparts(total) requests from req. */
CORE_HIDDEN int coll_tl_stream(const coll_xchg_plan *pl, coll_tl_tabs *tb,
                               int send, const coll_tl_piece *v, int n,
                               int64_t total, int peer, int tag,
                               MPI_Request *req);
/* Receive and discard a message of total bytes from peer. */
CORE_HIDDEN void coll_tl_drain(const coll_xchg_plan *pl, int64_t total,
                               int peer, int tag);
/* Count a message of bytes (> 0) this rank sent, within the node or
   between nodes (net). */
CORE_HIDDEN void coll_tl_count(coll_xchg_plan *pl, int64_t bytes, int net);
/* Step 1's direct pairs of the node, and the self message. */
CORE_HIDDEN int coll_tl_direct(coll_tl_run *r);
/* Leader: its node's counts into r->tb.hdr. */
CORE_HIDDEN int coll_tl_node_counts(coll_tl_run *r);
/* Leader: the node's blocks' counts and displacements in r->tb.sub
   (osc, osd, irc, ird, N each); their totals. */
CORE_HIDDEN void coll_tl_node_blocks(coll_tl_run *r, int64_t *out,
                                     int64_t *in);
/* Leader: member k's bytes for other nodes; set: their pieces in the
   outgoing blocks ob. */
CORE_HIDDEN int64_t coll_tl_up_pieces(coll_tl_run *r, int k, char *ob,
                                      const int64_t *osd, int set, int *np);
/* Leader: its own data for other nodes into the pieces of member 0. */
CORE_HIDDEN void coll_tl_up_own(coll_tl_run *r);
/* Leader: member k's bytes from other nodes and, ib set, their pieces in
   the incoming blocks ib (member 0's copied to the receive buffer). */
CORE_HIDDEN int64_t coll_tl_down_pieces(coll_tl_run *r, int k, char *ib,
                                        const int64_t *ird, int *np);
/* Leader: the plan of the leaders' exchange (communicator, ranks). */
CORE_HIDDEN void coll_tl_leaders_plan(const coll_tl_run *r,
                                      coll_xchg_plan *sub);

/* counts of member k (local rank) of my node: sent to rank d, received
   from rank i */
static inline int64_t coll_tl_hs(const coll_tl_run *r, int k, int d)
{
    return r->tb.hdr[(int64_t)k * 2 * r->pl->P + d];
}
static inline int64_t coll_tl_hr(const coll_tl_run *r, int k, int i)
{
    return r->tb.hdr[(int64_t)k * 2 * r->pl->P + r->pl->P + i];
}

#endif
