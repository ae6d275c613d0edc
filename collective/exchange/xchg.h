/*
 * xchg.h - the inside of the exchange subsystem (see exchange.h for the
 * whole): the per-context state, the plan of one call, the ops table
 * every algorithm fills, and the point-to-point helpers. The cost model,
 * the calibration and auto's choice are the planner's
 * (collective/planner/plan_xchg.h, one layer down): an algorithm here
 * runs what it is given and prices nothing. The algorithms and the
 * state include this header only; exchange.h adds the entry
 * (coll_exchange), which only the dispatcher (exchange.c) and the
 * subsystem's users include, so that no algorithm depends on the
 * dispatcher.
 */
#ifndef PASSION_COLL_XCHG_H
#define PASSION_COLL_XCHG_H

#include "../../passion/core.h"
#include "../planner/plan_xchg.h"

/* ------------------------------------------------------------ one call */

/* Counters of one call on this rank. */
typedef struct coll_xchg_stats {
    int alg, radix;        /* what ran (auto resolved) */
    int64_t rounds;        /* communication steps this rank took part in */
    int64_t messages;      /* messages sent to other ranks */
    int64_t bytes_sent;    /* bytes sent to other ranks (framing included) */
    int64_t peak_staging;  /* staging bytes held at once */
    int64_t peak_payload;  /* of which data bytes (no descriptors) */
    int64_t steps;         /* steps the budget asked for (1: none) */
    /* the messages and bytes above split by where they went: to a rank
       of this rank's node, or of another node (set by the algorithms
       that know the nodes: twolevel) */
    int64_t msgs_node, bytes_node, msgs_net, bytes_net;
    double seconds;        /* wall time of the call on this rank */
    double predicted;      /* model's seconds for what ran */
} coll_xchg_stats;

/*
 * Per-context state of the subsystem (xchg_state.c, the one file that
 * holds it): the last call's counters, the private communicator and its
 * node table (the calibrated costs and auto's memo are the planner's:
 * plan_xchg_state); hung on the context's extension slot CORE_EXT_XCHG,
 * freed by passion_finalize.
 */
typedef struct coll_xchg_state coll_xchg_state;
/* NULL only when out of memory. Local. */
CORE_HIDDEN coll_xchg_state *coll_xchg_state_get(passion_ctx *ctx);
/* The layer's own communicator (a duplicate of ctx->comm whose errors are
   returned, not fatal: a receive truncated by inconsistent arguments is
   reported and drained) in *out. Collective until it exists on ctx: every
   rank keeps it or none does (agreed, core_agree), so the same calls find
   it on every rank; then 0, else the agreed code and MPI_COMM_NULL. */
CORE_HIDDEN int coll_xchg_comm_setup(passion_ctx *ctx, MPI_Comm *out);
/* The same, MPI_COMM_NULL on failure. */
CORE_HIDDEN MPI_Comm coll_xchg_comm(passion_ctx *ctx);
/* The context's costs (plan_xchg_costs_get) measured, when needed, on
   the exchange's communicator (coll_xchg_comm). Collective the first
   time; same on all ranks. */
CORE_HIDDEN int coll_xchg_costs_get(passion_ctx *ctx,
                                    coll_xchg_costs *out /* out */);
/* Memory of at least `bytes` kept in the state between calls (the round
   of headers: not staging, bookkeeping of one call at a time), NULL when
   out of memory. Counts as one allocation for fault_alloc_at every call,
   as a fresh one would. Local. */
CORE_HIDDEN void *coll_xchg_state_buf(passion_ctx *ctx, coll_xchg_state *st,
                                      size_t bytes);
CORE_HIDDEN void coll_xchg_state_set_last(coll_xchg_state *st,
                                          const coll_xchg_stats *last);

/* The entry agreement goes by nodes for this context
   (coll_agree_by_nodes). */
static inline int coll_xchg_by_nodes(const passion_ctx *ctx)
{
    return coll_agree_by_nodes(ctx->size, ctx->nnodes);
}

/* Counters of the last exchange on ctx (zero if none). Local. */
CORE_HIDDEN int coll_xchg_last(passion_ctx *ctx,
                               coll_xchg_stats *out /* out */);
/* Name of an algorithm ("index", "fourstage-nb"...), NULL if unknown. */
CORE_HIDDEN const char *coll_xchg_name(int alg);

/* --------------------------------------------------------- algorithms */

typedef struct coll_xchg_plan coll_xchg_plan;

/* The next table of `bytes` in a block of tables at base, 16-byte
   aligned from *pos on (*pos advanced past it); NULL when base is NULL,
   so that the same code computes a block's size (the final *pos) and
   carves it. */
static inline void *coll_xchg_carve(char *base, int64_t *pos, int64_t bytes)
{
    *pos = (*pos + 15) & ~(int64_t)15;
    void *p = base ? base + *pos : NULL;
    *pos += bytes;
    return p;
}

/*
 * What an algorithm tells the dispatcher, which names no algorithm: its
 * run, its bookkeeping and the piggy-backed first step. What it costs,
 * the memory it stages, whether it needs equal blocks or takes a radix
 * are the planner's facts about it (plan_xchg_alg_get(id)), one layer
 * down, so that the choice is made without the executors.
 */
typedef struct coll_xchg_ops {
    int id;           /* enum passion_xchg: its name is coll_xchg_name's,
                         its price plan_xchg_alg_get(id)'s */
    int agree_after;  /* 1: run may fail locally (allocates once sizes are
                         known); the outcome is agreed after it */
    int prealloc;     /* 1: the dispatcher allocates the planner's staging
                         bytes (coll_xchg_staging) before the run
                         (pl->reserved); 0: the run allocates them itself
                         (coll_stage_alloc), within pl->limit */
    /* Bytes of bookkeeping (schedules, tables) allocated before the run,
       not counted as staging; NULL: none. */
    int64_t (*scratch)(const coll_xchg_plan *pl);
    /* The first step, when it can travel in the round of the entry
       agreement: post this rank's messages (every message whole, landing
       at its receiver's displacement) from request slot *k on; NULL when
       the algorithm has no such step. When set, that step is the whole
       algorithm: the dispatcher completes it with the round (the
       planner's hdr_step says so, tests/check_tables.py checks both). */
    int (*hdr_sends)(coll_xchg_plan *pl, int tag, int *k);
    /* 1: the whole run rides on the entry agreement by nodes
       (coll_nodes_agree) when every rank guessed this algorithm */
    int nodes_fused;
    /* Run on this rank; 0 or a local error code. With agree_after == 0
       it must not fail once the agreement passed. Adds to pl->st. */
    int (*run)(coll_xchg_plan *pl);
} coll_xchg_ops;

/* The state of one call, shared by the dispatcher and the algorithm. */
struct coll_xchg_plan {
    passion_ctx *ctx;
    MPI_Comm comm;
    int P, me;
    const char *sbuf;
    char *rbuf;
    int64_t block; /* >= 0 regular */
    const int64_t *sc, *sd, *rc, *rd;
    int radix;
    coll_xchg_shape shape;   /* agreed (of the current step) */
    coll_xchg_costs costs;   /* agreed (or defaults) */
    void *reserved;          /* staging() bytes when prealloc */
    int64_t reserved_bytes;
    void *scratch;           /* ops->scratch bytes */
    MPI_Request *req;        /* request pool allocated before agreement */
    int nreq;
    int64_t limit;           /* staging bytes this call may hold */
    int64_t base;            /* the context's staging at entry (the
                                limit counts blocks at their real size) */
    int limit_hit;           /* an allocation was refused by the limit */
    int64_t stage_now, payload_now;
    coll_xchg_stats st;
    /* messages of at most this many bytes went inside the headers of the
       entry agreement: hdr_sends skips them (-1: none did) */
    int64_t fused_max;
    /* rank in ctx->comm of every rank of comm (the simulated network and
       the node counters know those); NULL: comm's ranks are ctx's */
    const int *ranks;
};

static inline int64_t coll_sc(const coll_xchg_plan *pl, int j)
{
    return pl->block >= 0 ? pl->block : pl->sc[j];
}
static inline int64_t coll_sd(const coll_xchg_plan *pl, int j)
{
    return pl->block >= 0 ? pl->block * j : pl->sd[j];
}
static inline int64_t coll_rc(const coll_xchg_plan *pl, int j)
{
    return pl->block >= 0 ? pl->block : pl->rc[j];
}
static inline int64_t coll_rd(const coll_xchg_plan *pl, int j)
{
    return pl->block >= 0 ? pl->block * j : pl->rd[j];
}

extern CORE_HIDDEN const coll_xchg_ops coll_xchg_mpi;
/* tests: the largest count or displacement the "mpi" algorithm gives to
   MPI's int interfaces (0: INT_MAX); past it, MPI 4's large-count calls or
   (MPI 3) MPI_Alltoallw with one byte-run datatype per peer */
CORE_HIDDEN void coll_xchg_mpi_set_int_limit(int64_t limit);
extern CORE_HIDDEN const coll_xchg_ops coll_xchg_pairwise;
extern CORE_HIDDEN const coll_xchg_ops coll_xchg_a1;
extern CORE_HIDDEN const coll_xchg_ops coll_xchg_index;
extern CORE_HIDDEN const coll_xchg_ops coll_xchg_fourstage;
extern CORE_HIDDEN const coll_xchg_ops coll_xchg_fourstage_nb;
extern CORE_HIDDEN const coll_xchg_ops coll_xchg_twolevel;

/* The table (xchg_table.c): our own algorithms first, so that on a tie
   of the model they win over MPI's call. */
CORE_HIDDEN const coll_xchg_ops *coll_xchg_ops_get(int alg); /* NULL: none */
CORE_HIDDEN int coll_xchg_ops_count(void);
CORE_HIDDEN const coll_xchg_ops *coll_xchg_ops_at(int i);

/* ---------------------------------------- four-stage (xchg_fourstage.c) */

/* (the node array, coll_grid, is the planner's: plan_xchg.h) */
/* One send of a schedule step: this node sends to `to` (-1: none) and
   receives from `from` (-1: none). */
typedef struct coll_step {
    int to, from;
} coll_step;
/*
 * Steps of the row stage (I and III, Revised R-Schedule with the
 * priority stalls of 3.2.2 (B)) for `node`; steps[] has room for 2*C
 * entries (step t at index t-1), work for 2*C ints; returns the number
 * of steps (at most C: C - 1 and one more when the row takes messages of
 * the incomplete row). Contention-free: in every step each node receives
 * at most one message.
 */
CORE_HIDDEN int coll_row_schedule(const coll_grid *g, int node,
                                  coll_step *steps, int *work);

/* ------------------------------------------------ nodes (xchg_nodes.c) */

/*
 * Which ranks share a node, as the exchange sees it (kept in the
 * subsystem's state, made with its communicator by coll_xchg_comm_setup,
 * the same on every rank): nodes are numbered 0..nnodes-1, a node's
 * ranks in order of their rank on the node; rank 0 of a node is its
 * leader. leaders is a communicator of the leaders (rank = node number,
 * errors returned), MPI_COMM_NULL on the other ranks.
 */
typedef struct coll_nodes {
    int nnodes, max_size;
    int node, lrank;   /* this rank's */
    int *node_of;      /* P: node of a rank */
    int *first;        /* nnodes + 1: node n's ranks are */
    int *members;      /*   members[first[n] .. first[n+1]) */
    int *leader_rank;  /* nnodes: rank of node n's leader */
    MPI_Comm leaders;
} coll_nodes;
/* The context's node table; NULL before the subsystem's communicator
   exists. Local. */
CORE_HIDDEN const coll_nodes *coll_xchg_nodes(passion_ctx *ctx);
/* Build t collectively over comm (every rank of ctx); 0 or a local code
   (the caller agrees on it). */
CORE_HIDDEN int coll_nodes_make(passion_ctx *ctx, MPI_Comm comm,
                                coll_nodes *t);
CORE_HIDDEN void coll_nodes_free(passion_ctx *ctx, coll_nodes *t);
/*
 * The entry agreement by nodes (xchg_nodes_agree.c): the n header values v
 * (the first nsum summed, the others reduced with max) folded over every
 * rank, in place, in three rounds (to the node's leader, among the
 * leaders, back); with spec (this rank guessed the two-level exchange in
 * one step, its tables and requests prepared) its data rides along, and
 * *moved says, the same on every rank, that every rank's did and the
 * exchange is done. Collective over pl->comm (= the context's ranks).
 * v[fail] (a maximum) is the failure flag: a rank that failed before the
 * agreement sets it, and a failure of the agreement on a rank before
 * its status left (a leader's receive of its node's headers or data) is
 * folded into it, so that every rank sees it. Returns 0 or this rank's
 * own code (PASSION_EMPI; PASSION_EINVAL without a node table, with
 * v[fail] set): a failure after this rank's status left (the data that
 * rides, the last headers) is this rank's alone, and every header and
 * message owed is still sent, so that no rank waits: the caller agrees
 * on it (after the moved exchange, or in the run's outcome).
 */
CORE_HIDDEN int coll_nodes_agree(coll_xchg_plan *pl, int64_t *v, int n,
                                 int nsum, int fail, int spec, int *moved);

/* ------------------------------------------ point to point (xchg_p2p.c) */

/* Wait policy: the core's (core_waitall: poll for the process's spin
   time, then yield the CPU between polls). COLL_WAIT_SPIN never yields
   (diagnostics). */
enum { COLL_WAIT_HYBRID = 0, COLL_WAIT_SPIN = 1 };
CORE_HIDDEN void coll_xchg_set_wait(int mode);
CORE_HIDDEN int coll_waitall(int n, MPI_Request *req);
/* Between two unsuccessful polls that started at time t0: yield when the
   policy allows and the spin time is over. */
CORE_HIDDEN void coll_idle(double t0);

/* Largest MPI message (bytes); longer messages are split. Tests lower it
   to exercise the split. */
#ifdef PASSION_TEST_HOOKS /* tests only: test builds */
CORE_HIDDEN void coll_xchg_set_chunk(int64_t bytes);
#endif
CORE_HIDDEN int64_t coll_xchg_chunk(void);
/* core_net_isend (counted, charged by the simulated network) of a
   message to rank peer of pl->comm, which may be a sub-communicator
   (pl->ranks). 0 or PASSION_EMPI. */
CORE_HIDDEN int coll_net_isend(const coll_xchg_plan *pl, const void *buf,
                               int count, MPI_Datatype type, int peer,
                               int tag, int flags, MPI_Request *req);
/* MPI messages of a logical message of `bytes` (0 for 0 bytes). */
CORE_HIDDEN int64_t coll_nparts(int64_t bytes);
/* Receive and discard the next message from rank src of comm with tag,
   whatever its length (a message without a place: a failed peer's or
   an inconsistent one's). Errors are not reported: the caller's outcome
   is a failure already. */
CORE_HIDDEN void coll_drain(MPI_Comm comm, int src, int tag);

/* Post a known-size transfer split at the chunk limit; uses
   coll_nparts(bytes) requests from req. Returns 0 or PASSION_EMPI. */
CORE_HIDDEN int coll_isend(const coll_xchg_plan *pl, const void *buf,
                           int64_t bytes, int peer, int tag,
                           MPI_Request *req);
CORE_HIDDEN int coll_irecv(const coll_xchg_plan *pl, void *buf,
                           int64_t bytes, int peer, int tag,
                           MPI_Request *req);
/* A1's sends: step j = 1..P-1 to rank (me + j) mod P, posted from request
   slot *k on (advanced past them); counts messages and bytes. Returns 0,
   PASSION_EMPI, or PASSION_ENOMEM when the request pool is too small. */
CORE_HIDDEN int coll_a1_isends(coll_xchg_plan *pl, int tag, int *k);
/* The rank's message to itself, copied from the send to the receive
   buffer. */
CORE_HIDDEN void coll_copy_self(coll_xchg_plan *pl);
/* One step of a one-port algorithm: send and receive, then wait. Counts
   a round (and a message when bytes are sent). */
CORE_HIDDEN int coll_sendrecv(coll_xchg_plan *pl, const void *sbuf,
                              int64_t sbytes, int to, void *rbuf,
                              int64_t rbytes, int from, int tag);

/* Staging accounting of one call (on top of core_stage_alloc, where the
   fault option fault_alloc_at counts it); refuses (NULL, pl->limit_hit
   set) what would take the call past pl->limit. */
CORE_HIDDEN void *coll_stage_alloc(coll_xchg_plan *pl, int64_t bytes,
                                   int64_t payload);
CORE_HIDDEN void coll_stage_free(coll_xchg_plan *pl, void *p, int64_t bytes,
                                 int64_t payload);

/* Allreduce of n int64 with the yielding wait: the first nsum entries
   are summed (modulo 2^64), the others reduced with max. In place. */
CORE_HIDDEN int coll_allreduce(MPI_Comm comm, int64_t *v, int n, int nsum);

#endif
