/*
 * xchg.h - the inside of the exchange subsystem (see exchange.h for the
 * whole): the cost model, the per-context state, the plan of one call,
 * the ops table every algorithm fills, and the point-to-point helpers.
 * The algorithms, the model, the calibration and the state include this
 * header only; exchange.h adds the entry (coll_exchange), which only the
 * dispatcher (exchange.c) and the subsystem's users include, so that no
 * algorithm depends on the dispatcher.
 */
#ifndef PASSION_COLL_XCHG_H
#define PASSION_COLL_XCHG_H

#include "../../passion/core.h"
#include "../planner/planner.h"

#define COLL_TAG 0x5e00

/* --------------------------------------------------------- cost model */

/*
 * Linear cost model (the idea of CCL: Bala et al., "CCL: a portable and
 * tunable collective communication library for scalable parallel
 * computers", IEEE TPDS 1995): a communication round in which a rank
 * sends k messages of at most s bytes each costs
 * round + k*msg + (bytes sent)*byte,  a local copy of n bytes costs
 * n*copy. For one-port algorithms (one message per round) this is
 * Bruck's C1*alpha + C2*beta with alpha = round + msg.
 *
 * alpha, defined once for the whole library: the seconds of a round of
 * one message of a few bytes between two ranks (start-up and
 * synchronisation), coll_xchg_alpha(); beta: seconds per byte of a
 * message (costs.byte). The options msg_alpha / msg_beta give them
 * directly (the paper's model: round = 0, msg = alpha, every message pays
 * the whole start-up); otherwise one calibration per context measures
 * round, msg, byte and copy (xchg_calib.c), and both the exchange's
 * `auto` and the two-phase method's model use that one measurement.
 */
typedef struct coll_xchg_costs {
    double round; /* s per dependent round (synchronisation latency) */
    double msg;   /* s per message in a round */
    double byte;  /* s per byte sent */
    double copy;  /* s per byte copied locally */
    int source;   /* COLL_COSTS_* */
    /* what a message between two nodes costs its sender on top of the
       above (0: nodes cost alike; the simulated network's latency and
       per-byte time when it is on) */
    double net_msg;  /* s per message between nodes */
    double net_byte; /* s per byte sent between nodes */
} coll_xchg_costs;

enum { COLL_COSTS_DEFAULT = 0, COLL_COSTS_OPTIONS = 1,
       COLL_COSTS_MEASURED = 2,
       /* the simulated network is on: the on-node costs are the built-in
          figures (coll_xchg_costs_default), not measured (xchg_calib.c) */
       COLL_COSTS_SIMNET = 3 };

/* What the model needs to know of one exchange, identical on all ranks. */
typedef struct coll_xchg_shape {
    int procs;
    int64_t block;  /* >= 0: every pair moves block bytes; -1: irregular */
    int64_t lmax;   /* max over ranks of bytes sent or received, self
                       included (the paper's Lmax) */
    int64_t lmax_x; /* the same without the self message */
    int64_t mmax;   /* largest message between two different ranks */
    int64_t total;  /* bytes over all pairs of different ranks */
    int nodes;      /* nodes the ranks are on (0 or 1: one) */
    int node_max;   /* ranks on the largest node */
} coll_xchg_shape;

/* The shape of a regular exchange of `block` bytes per pair on P ranks. */
CORE_HIDDEN coll_xchg_shape coll_shape_regular(int procs, int64_t block);
/* An upper bound of the shape of one step when every message is cut in k
   slices of ceil(bytes / k). */
CORE_HIDDEN coll_xchg_shape coll_shape_step(const coll_xchg_shape *s,
                                            int64_t k);
/* Seconds of a round of one small message (see alpha above). */
static inline double coll_xchg_alpha(const coll_xchg_costs *c)
{
    return c->round + c->msg;
}

typedef struct coll_xchg_choice {
    int alg;        /* enum passion_xchg */
    int radix;      /* index radix, 0 otherwise */
    double seconds; /* model's prediction */
} coll_xchg_choice;

/* Model seconds of algorithm alg (radix 0 = the best radix for index,
   returned in *radix when not NULL); a huge value when not applicable. */
CORE_HIDDEN double coll_xchg_model(const coll_xchg_costs *c, int alg,
                                   int radix, const coll_xchg_shape *s,
                                   int *best_radix);
/* Model seconds of one agreement among P ranks (a round of headers to
   every rank, or an allreduce above COLL_A2A_MAX ranks). Every algorithm
   pays one at entry (coll_xchg_model adds it), except that A1 up to
   COLL_A2A_MAX ranks sends its headers in the round of its data (with
   the paper's model, costs from the options, it pays their messages). */
CORE_HIDDEN double coll_agree_cost(const coll_xchg_costs *c, int P);
/* Model seconds of the entry agreement of an exchange of shape s: by
   nodes (coll_agree_by_nodes, coll_nodes_agree: the headers of the
   largest node into its leader, a round of N - 1 messages between the
   leaders, each charged the network's cost, and back), else
   coll_agree_cost with the network's cost of the P - P/N headers that
   leave a rank's node. */
CORE_HIDDEN double coll_agree_cost_shape(const coll_xchg_costs *c,
                                         const coll_xchg_shape *s);
/* The cheapest algorithm (and radix) for s under c. allow_index: the
   algorithms that need equal blocks (index) are candidates (the exchange
   is regular). Deterministic. */
CORE_HIDDEN coll_xchg_choice coll_xchg_choose(const coll_xchg_costs *c,
                                              const coll_xchg_shape *s,
                                              int allow_index);
/* The same among the algorithms whose staging for s fits in budget
   bytes (some always do: a1, pairwise and mpi stage nothing). */
CORE_HIDDEN coll_xchg_choice coll_xchg_choose_within(const coll_xchg_costs *c,
                                                     const coll_xchg_shape *s,
                                                     int64_t budget);
/* Staging bytes algorithm alg holds at most for s (radix: index's). */
CORE_HIDDEN int64_t coll_xchg_staging(int alg, int radix,
                                      const coll_xchg_shape *s);
/* Staging a caller must leave for an irregular exchange on P ranks in
   which no rank sends or receives more than lmax bytes, with algorithm
   alg (PASSION_XCHG_AUTO: 0, auto chooses one that fits). */
CORE_HIDDEN int64_t coll_xchg_need(int alg, int P, int64_t lmax);
/*
 * The context's costs: from the options when msg_alpha/msg_beta > 0,
 * else measured once per context with a short exchange (collective the
 * first time: every rank must call it together). Same on all ranks.
 */
CORE_HIDDEN int coll_xchg_costs_get(passion_ctx *ctx,
                                    coll_xchg_costs *out /* out */);
/* The built-in costs (one rank, or a calibration that failed). */
CORE_HIDDEN coll_xchg_costs coll_xchg_costs_default(void);
/* 1 when the costs are known without communication (*out filled), 0 when
   a calibration is needed. Local. */
CORE_HIDDEN int coll_xchg_costs_ready(passion_ctx *ctx,
                                      coll_xchg_costs *out /* out */);

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
 * holds it): the calibrated costs, the memo of `auto`, the last call's
 * counters and the private communicator; hung on the context's extension
 * slot CORE_EXT_XCHG, freed by passion_finalize.
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
/* The measured costs: 1 and *out when calibrated, else 0. */
CORE_HIDDEN int coll_xchg_state_costs(const coll_xchg_state *st,
                                      coll_xchg_costs *out);
CORE_HIDDEN void coll_xchg_state_set_costs(coll_xchg_state *st,
                                           const coll_xchg_costs *c);
/* Memory of at least `bytes` kept in the state between calls (the round
   of headers: not staging, bookkeeping of one call at a time), NULL when
   out of memory. Counts as one allocation for fault_alloc_at every call,
   as a fresh one would. Local. */
CORE_HIDDEN void *coll_xchg_state_buf(passion_ctx *ctx, coll_xchg_state *st,
                                      size_t bytes);
/* auto through the planner (xchg_auto.c): the context, its exchange
   state and planner, the costs (known), the communicator of the call;
   rec and idx: the record and candidate coll_xchg_auto_next ran (rec
   NULL: none). */
typedef struct coll_xchg_auto {
    passion_ctx *ctx;
    coll_xchg_state *state;
    plan_state *plan;
    const coll_xchg_costs *costs;
    MPI_Comm comm;
    plan_rec *rec;
    int idx;
} coll_xchg_auto;
/* What auto would run, nothing counted (a guess, a prediction). */
CORE_HIDDEN coll_xchg_choice coll_xchg_auto_peek(const coll_xchg_auto *a,
                                                 const coll_xchg_shape *s,
                                                 int64_t budget);
/* What auto runs: collective over a->comm (every rank with the agreed s
   and budget), the wisdom read at the first call, the measured times
   agreed where a measurement ends; an error is agreed. */
CORE_HIDDEN int coll_xchg_auto_next(coll_xchg_auto *a,
                                    const coll_xchg_shape *s,
                                    int64_t budget, coll_xchg_choice *out);
/* The planner signature auto last computed, for the same shape and
   budget (a pure function of them once the costs are known: auto_sig
   prices every algorithm's staging, which a repeated exchange would pay
   per call): 1 and *key, else 0. */
CORE_HIDDEN int coll_xchg_sig_get(const coll_xchg_state *st,
                                  const coll_xchg_shape *s, int64_t budget,
                                  int64_t *key);
CORE_HIDDEN void coll_xchg_sig_put(coll_xchg_state *st,
                                   const coll_xchg_shape *s, int64_t budget,
                                   int64_t key);
CORE_HIDDEN void coll_xchg_state_set_last(coll_xchg_state *st,
                                          const coll_xchg_stats *last);

/* Up to this many ranks the agreement is an all-to-all of headers (one
   round); above, a non-blocking allreduce (log2 P rounds). */
#define COLL_A2A_MAX 64

/* The entry agreement goes by nodes (xchg_round.c, coll_xchg_agree_nodes:
   headers fold within each node, the node leaders exchange the folds,
   each leader gives the result to its node) when the ranks sit on
   several nodes, some with more than one rank; a property of the context
   (of the shape, for the model) alone, so that every rank takes the same
   path whatever algorithm it was passed. */
static inline int coll_agree_by_nodes(int procs, int nodes)
{
    return nodes > 1 && nodes < procs && nodes <= COLL_A2A_MAX;
}
static inline int coll_xchg_by_nodes(const passion_ctx *ctx)
{
    return coll_agree_by_nodes(ctx->size, ctx->nnodes);
}

/* Scratch bytes the calibration needs on P ranks. */
CORE_HIDDEN int64_t coll_calib_bytes(int P);
/* Measure the costs with a short exchange on every rank (collective),
   using scratch (coll_calib_bytes); the result is the same everywhere. */
CORE_HIDDEN int coll_xchg_calibrate(passion_ctx *ctx, void *scratch,
                                    coll_xchg_costs *out /* out */);

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
 * What an algorithm tells the dispatcher, which names no algorithm: the
 * model, the staging and the piggy-backed first step all come from here.
 */
typedef struct coll_xchg_ops {
    int id;           /* enum passion_xchg: its name is coll_xchg_name's */
    int regular_only; /* 1: needs equal blocks (index) */
    int has_radix;    /* 1: takes a radix; 0 asks the model for the best */
    int agree_after;  /* 1: run may fail locally (allocates once sizes are
                         known); the outcome is agreed after it */
    int prealloc;     /* 1: the dispatcher allocates staging() bytes before
                         the run (pl->reserved); 0: the run allocates them
                         itself (coll_stage_alloc), within pl->limit */
    /* Model seconds of the algorithm itself (the paper's count of
       start-ups and bytes under the linear model), without the entry
       agreement (coll_xchg_model adds it); radix: 0 = choose, the choice
       returned. */
    double (*model)(const coll_xchg_costs *costs,
                    const coll_xchg_shape *shape, int *radix);
    /* Staging bytes a rank holds at most for this shape and radix (an
       upper bound, the same on every rank); NULL: none. */
    int64_t (*staging)(const coll_xchg_shape *shape, int radix);
    /* Bytes of bookkeeping (schedules, tables) allocated before the run,
       not counted as staging; NULL: none. */
    int64_t (*scratch)(const coll_xchg_plan *pl);
    /* The first step, when it can travel in the round of the entry
       agreement: post this rank's messages (every message whole, landing
       at its receiver's displacement) from request slot *k on; NULL when
       the algorithm has no such step. When set, that step is the whole
       algorithm: the dispatcher completes it with the round. */
    int (*hdr_sends)(coll_xchg_plan *pl, int tag, int *k);
    /* Messages and bytes one rank sends to other nodes at most (the
       simulated or real network's share: coll_xchg_model charges them
       costs->net_msg and net_byte); NULL: every message to another rank
       is taken to leave the node with the share (P - P/nodes)/(P - 1). */
    void (*net)(const coll_xchg_shape *shape, int radix, double *msgs,
                double *bytes);
    /* 1: only a node's leader sends between nodes (net is then the
       node's), else every rank does, through the node's one interface */
    int net_leaders;
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

/* ------------------------------------------------ index (xchg_index.c) */

/* Bruck's counts for one rank, n ranks, radix r, one-port (exact):
   rounds C1 and blocks sent (C2 / block size). */
CORE_HIDDEN void coll_index_counts(int n, int r, int64_t *c1,
                                   int64_t *c2_blocks);
/* Staging bytes of the index algorithm (rotation buffer and the two
   step buffers) for blocks of b bytes; r < 2 means 2. */
CORE_HIDDEN int64_t coll_index_staging(int n, int r, int64_t b);

/* ---------------------------------------- four-stage (xchg_fourstage.c) */

/* The node array of section 3.2: C columns, R rows, the first r columns
   complete (r = 0: all complete). */
typedef struct coll_grid {
    int P, C, R, r;
} coll_grid;
CORE_HIDDEN coll_grid coll_grid_make(int P);

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
