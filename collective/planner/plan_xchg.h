/*
 * plan_xchg.h - the exchange's planner: the linear cost model, the price
 * of every exchange algorithm, the choice among them, the message-cost
 * calibration and `auto`'s signature and candidates (planner.h's
 * machinery). The exchange (collective/exchange/, one layer up) runs
 * what this chooses and prices nothing itself.
 *
 * Files: plan_xchg_model.c the choice (the pure plan_xchg_choose, the
 * model of one algorithm with the entry agreement, the staging bound);
 * plan_xchg_price.c and plan_xchg_price_tl.c the table of the
 * algorithms' prices (the papers' counts, staging, network share);
 * plan_xchg_cost.c the shapes and the agreement's cost;
 * plan_xchg_calib.c the calibration (MPI, on a communicator the caller
 * passes); plan_xchg_auto.c auto's signature and candidates.
 *
 * Invariant: apart from the calibration and auto_next (collective), every
 * function here is a pure function of its arguments and of the price
 * table: no MPI, no I/O, no global state, so equal inputs on every rank
 * give equal choices, and tests/test_planner_unit.c checks them without
 * MPI.
 */
#ifndef PASSION_PLAN_XCHG_H
#define PASSION_PLAN_XCHG_H

#include "planner.h"

/* The tags of the exchange's messages (on its communicator) start here;
   the calibration, run on that communicator, takes COLL_TAG + 14. */
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
 * round, msg, byte and copy (plan_xchg_calib.c), and both the exchange's
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
          figures (coll_xchg_costs_default), not measured
          (plan_xchg_calib.c) */
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
 * else measured once per context with a short exchange on comm (the
 * exchange's communicator, collective the first time: every rank must
 * call it together) and kept in the planner's state. Same on all ranks.
 */
CORE_HIDDEN int plan_xchg_costs_get(passion_ctx *ctx, MPI_Comm comm,
                                    coll_xchg_costs *out /* out */);
/* The built-in costs (one rank, or a calibration that failed). */
CORE_HIDDEN coll_xchg_costs coll_xchg_costs_default(void);
/* 1 when the costs are known without communication (*out filled), 0 when
   a calibration is needed. Local. */
CORE_HIDDEN int coll_xchg_costs_ready(passion_ctx *ctx,
                                      coll_xchg_costs *out /* out */);

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

/* Scratch bytes the calibration needs on P ranks. */
CORE_HIDDEN int64_t coll_calib_bytes(int P);
/* Measure the costs with a short exchange on comm (collective over every
   rank of ctx), using scratch (coll_calib_bytes); the result is the same
   everywhere. */
CORE_HIDDEN int coll_xchg_calibrate(passion_ctx *ctx, MPI_Comm comm,
                                    void *scratch,
                                    coll_xchg_costs *out /* out */);

/* ------------------------------------------ prices (plan_xchg_price.c) */

/*
 * What the planner knows of one exchange algorithm (enum passion_xchg),
 * one entry per algorithm the exchange's ops table runs, in its order
 * (tests/check_tables.py checks both): our own algorithms first, MPI's
 * call last, so that on a tie of the model they win over MPI's.
 */
typedef struct plan_xchg_alg {
    int id;           /* enum passion_xchg */
    int regular_only; /* 1: needs equal blocks (index) */
    int has_radix;    /* 1: takes a radix; 0 asks the model for the best */
    int hdr_step;     /* 1: its one step travels in the round of the entry
                         agreement (the exchange's ops->hdr_sends) */
    /* 1: only a node's leader sends between nodes (net is then the
       node's), else every rank does, through the node's one interface */
    int net_leaders;
    /* Model seconds of the algorithm itself (the paper's count of
       start-ups and bytes under the linear model), without the entry
       agreement (coll_xchg_model adds it); radix: 0 = choose, the choice
       returned. */
    double (*model)(const coll_xchg_costs *costs,
                    const coll_xchg_shape *shape, int *radix);
    /* Staging bytes a rank holds at most for this shape and radix (an
       upper bound, the same on every rank); NULL: none. */
    int64_t (*staging)(const coll_xchg_shape *shape, int radix);
    /* Messages and bytes one rank sends to other nodes at most (the
       simulated or real network's share: coll_xchg_model charges them
       costs->net_msg and net_byte); NULL: every message to another rank
       is taken to leave the node with the share (P - P/nodes)/(P - 1). */
    void (*net)(const coll_xchg_shape *shape, int radix, double *msgs,
                double *bytes);
} plan_xchg_alg;

CORE_HIDDEN const plan_xchg_alg *plan_xchg_alg_get(int id); /* NULL: none */
CORE_HIDDEN int plan_xchg_alg_count(void);
CORE_HIDDEN const plan_xchg_alg *plan_xchg_alg_at(int i);
/* The entries (plan_xchg_price*.c); the prices of the composite
   algorithms (mpi, twolevel) call the others' model. */
extern CORE_HIDDEN const plan_xchg_alg plan_xchg_a1;
extern CORE_HIDDEN const plan_xchg_alg plan_xchg_pairwise;
extern CORE_HIDDEN const plan_xchg_alg plan_xchg_index;
extern CORE_HIDDEN const plan_xchg_alg plan_xchg_fourstage;
extern CORE_HIDDEN const plan_xchg_alg plan_xchg_fourstage_nb;
extern CORE_HIDDEN const plan_xchg_alg plan_xchg_twolevel;
extern CORE_HIDDEN const plan_xchg_alg plan_xchg_mpi;
/* The two-level exchange's leaders exchange by A1 (1) or by the
   non-blocking four-stage (0): a function of the number of nodes N
   alone, so every leader takes the same; its run asks here. */
CORE_HIDDEN int coll_tl_leaders_a1(int N);

/* ------------------------------------- the pure choice (plan_xchg_model.c) */

/* Everything the choice depends on, identical on every rank. */
typedef struct plan_xchg_in {
    coll_xchg_costs costs; /* the agreed costs */
    coll_xchg_shape shape; /* P, block or the irregular maxima and sum,
                              the nodes */
    int allow_regular;     /* the algorithms that need equal blocks
                              (index) are candidates */
    int64_t budget;        /* staging bytes the choice may hold; < 0: no
                              limit */
} plan_xchg_in;
/* The model's seconds of algorithm alg for s within budget staging bytes
   (< 0: no limit), its radix in *radix: the radix the model prefers, or,
   where that one stages more than the budget, the cheapest that fits;
   HUGE_VAL when none fits. Pure. */
CORE_HIDDEN double plan_xchg_price_within(const coll_xchg_costs *c, int alg,
                                          const coll_xchg_shape *s,
                                          int64_t budget, int *radix);
/* The cheapest algorithm of the price table for in (coll_xchg_model's
   seconds; the first in table order on a tie) whose staging fits the
   budget, its radix and predicted seconds; A1 with HUGE_VAL seconds when
   none applies. Pure: no MPI, no I/O, no global state. */
CORE_HIDDEN coll_xchg_choice plan_xchg_choose(const plan_xchg_in *in);

/* auto's candidates (plan_xchg_auto.c) for shape s within budget staging
   bytes, best estimate first (ties keep the price table's order): the
   algorithms the model ranks within a factor 3 of its best, at most
   PLAN_XCHG_CANDS - 1 of them, and MPI's own call always, so that,
   measured, auto is never slower than what it wraps. Into out (room for
   PLAN_XCHG_CANDS); returns how many (0: nothing fits). Pure. */
#define PLAN_XCHG_CANDS 4
CORE_HIDDEN int plan_xchg_cands(const coll_xchg_costs *c,
                                const coll_xchg_shape *s, int64_t budget,
                                plan_cand *out);

/* ------------------------------------------------ the planner's state */

/* The exchange's part of the context's planner state (plan_state.c
   holds it): the calibrated costs and auto's memo of its last signature
   key. Identical on every rank. */
typedef struct plan_xchg_state {
    int calibrated;
    coll_xchg_costs costs;
    int sig_ok;
    coll_xchg_shape sig_shape;
    int64_t sig_budget, sig_key;
} plan_xchg_state;
/* NULL when s is NULL. */
CORE_HIDDEN plan_xchg_state *plan_state_xchg(plan_state *s);

/* auto through the planner (plan_xchg_auto.c): the context, its
   planner, the costs (known), the communicator of the call;
   rec and idx: the record and candidate coll_xchg_auto_next ran (rec
   NULL: none). */
typedef struct coll_xchg_auto {
    passion_ctx *ctx;
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

/* ------------------------------- index (plan_xchg_price.c: Bruck et al.) */

/* Bruck's counts for one rank, n ranks, radix r, one-port (exact):
   rounds C1 and blocks sent (C2 / block size). */
CORE_HIDDEN void coll_index_counts(int n, int r, int64_t *c1,
                                   int64_t *c2_blocks);
/* Staging bytes of the index algorithm (rotation buffer and the two
   step buffers) for blocks of b bytes; r < 2 means 2. */
CORE_HIDDEN int64_t coll_index_staging(int n, int r, int64_t b);
/* The largest number of blocks one step of it sends (its step buffers
   hold that many; xchg_index.c carves them). */
CORE_HIDDEN int64_t coll_index_step_blocks(int n, int r);

/* ------------------------- four-stage (plan_xchg_price.c: its node array) */

/* The node array of section 3.2: C columns, R rows, the first r columns
   complete (r = 0: all complete); a function of P alone. Its price and
   its schedule (xchg_fs_grid.c) both stand on it. */
typedef struct coll_grid {
    int P, C, R, r;
} coll_grid;
CORE_HIDDEN coll_grid coll_grid_make(int P);

#endif
