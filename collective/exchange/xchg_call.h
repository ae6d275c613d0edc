/*
 * xchg_call.h - the inside of one exchange call, shared by the files of
 * the dispatcher only: exchange.c (the call, step by step), xchg_round.c
 * (the entry agreement's header and its round), xchg_budget.c (the
 * budget: steps, reservations, retries) and xchg_api.c (the public
 * calls). No algorithm includes it: algorithms see coll_xchg_plan
 * (xchg.h) only.
 *
 * Invariants:
 *  - the header is COLL_V_N int64 words, the first COLL_V_NSUM summed
 *    over ranks, the others reduced with max; a minimum travels negated,
 *    and a value that all ranks must agree on travels with its negation
 *    (v[COLL_V_X] == -v[COLL_V_NX] after the fold exactly when every
 *    rank sent the same value);
 *  - every exit of a call after the agreement is taken by all ranks
 *    alike, with the same code.
 */
#ifndef PASSION_COLL_XCHG_CALL_H
#define PASSION_COLL_XCHG_CALL_H

#include "exchange.h"

/* the header's words */
enum {
    COLL_V_CHECK, COLL_V_TOTAL, COLL_V_NSUM,
    COLL_V_FAIL = COLL_V_NSUM, COLL_V_ALG, COLL_V_NALG, COLL_V_RADIX,
    COLL_V_NRADIX, COLL_V_MODE, COLL_V_NMODE, COLL_V_READY, COLL_V_NREADY,
    COLL_V_BLOCK, COLL_V_NBLOCK, COLL_V_LMAX, COLL_V_LMAX_X, COLL_V_MMAX,
    COLL_V_NBUDGET, COLL_V_GUESS, COLL_V_NGUESS, COLL_V_GRADIX,
    COLL_V_NGRADIX, COLL_V_GSTEPS, COLL_V_NGSTEPS, COLL_V_GRES,
    COLL_V_NGRES, COLL_V_N
};

/* this rank's sizes and checksum (exchange.c, local_scan) */
typedef struct coll_xchg_local {
    int64_t lout, lin, lout_x, lin_x, mmax, total_x;
    int64_t block; /* every count equal to it, else -1 */
    uint64_t check;
} coll_xchg_local;

/* ------------------------------------------ the round (xchg_round.c) */

/* The flat round of headers (P <= COLL_A2A_MAX), laid out in memory the
   context's exchange state keeps between calls. */
typedef struct coll_xchg_round {
    int64_t fuse;   /* largest message inside its header's message */
    int64_t slot;   /* bytes of a slot: the header and fuse */
    char *in, *out; /* P slots each: received and sent headers */
    int *rfirst, *rn; /* P each: receive requests of data with the round */
    int posted;     /* data receives posted into the receive buffer */
    int spec;       /* this rank's data went with its headers */
    int sfirst, sn; /* send requests */
    int nreq;       /* requests in use */
    int moved;      /* data went or came inside a header */
} coll_xchg_round;

/* The message length that rides inside a header on P ranks: identical on
   every rank (P and the chunk limit are). */
CORE_HIDDEN int64_t coll_xchg_round_fuse(int P);
/* Bytes of a round on P ranks. */
CORE_HIDDEN int64_t coll_xchg_round_bytes(int P, int64_t fuse);
/* The round laid out in mem (coll_xchg_round_bytes of it). */
CORE_HIDDEN coll_xchg_round *coll_xchg_round_layout(void *mem, int P,
                                                    int64_t fuse);
/* Headers v to everyone (and the first step of spec's algorithm when
   spec is not NULL); the fold of all headers in out. */
CORE_HIDDEN int coll_xchg_round_start(coll_xchg_plan *pl, coll_xchg_round *x,
                                      const int64_t *v, int nsum,
                                      const coll_xchg_ops *spec,
                                      int64_t *out);
/* End the round's data traffic: complete (not NULL) is what runs and
   finishes its step; else what has no place is drained. */
CORE_HIDDEN int coll_xchg_round_finish(coll_xchg_plan *pl, coll_xchg_round *x,
                                       const coll_xchg_ops *complete);
/* The round for a rank without the round's memory: headers only, its
   failure said in v[COLL_V_FAIL]; the fold in out. */
CORE_HIDDEN int coll_xchg_round_without_memory(coll_xchg_plan *pl,
                                               const int64_t *v, int nsum,
                                               int64_t *out);
/* The agreement by nodes without the exchange's node table (the
   context's node and leader communicators). In place. */
CORE_HIDDEN int coll_xchg_agree_nodes(coll_xchg_plan *pl, int64_t *v, int n,
                                      int nsum);

/* ------------------------------------------------------------ one call */

#define COLL_XCHG_REQ_SMALL 64
typedef struct coll_xchg_call {
    passion_ctx *ctx;
    const coll_xchg_args *a;
    coll_xchg_choice *predict; /* not NULL: say what would run, no run */
    coll_xchg_state *state;
    coll_xchg_auto au;       /* auto's planner (au.rec: this call's
                                record, NULL none) */
    coll_xchg_plan pl;
    coll_xchg_local L;
    coll_xchg_round *x;      /* the round of headers (P <= COLL_A2A_MAX) */
    int alg, radix;          /* asked (the option resolved) */
    int from_option;         /* alg is the context's option */
    coll_xchg_costs costs;
    int ready;               /* costs known without communication */
    int64_t budget;          /* this rank's budget for the call */
    int guess, guess_radix;  /* prepared for (-1: nothing) */
    int64_t guess_steps;
    int64_t v[COLL_V_N];     /* the agreed header */
    coll_xchg_shape shape;   /* agreed */
    int64_t abudget;         /* agreed: the smallest budget */
    int run, run_radix;      /* what runs */
    int64_t steps;           /* in how many steps */
    int64_t *step_arr;       /* 4 P words of one step's counts */
    int retries;             /* runs refused by the budget so far */
    int nodes_moved;         /* the guessed run rode on the agreement by
                                nodes on every rank (coll_nodes_agree) */
    int late;                /* this rank's failure after its status left
                                in the agreement by nodes: agreed after
                                the run (call_run) */
    /* the request pool when it is this small (a small exchange on few
       ranks): no pool block taken and given back per call */
    MPI_Request req_small[COLL_XCHG_REQ_SMALL];
} coll_xchg_call;

/* The call: rc is this rank's failure so far (it still takes part);
   predict (not NULL): say what would run, run nothing. Collective, the
   same code on every rank. */
CORE_HIDDEN int coll_xchg_call_all(passion_ctx *ctx, const coll_xchg_args *a,
                                   int rc, coll_xchg_choice *predict);

/* --------------------------------------- the budget (xchg_budget.c) */

/* The fewest steps in which alg's staging for s fits in budget, 0 when
   none does; *least (not NULL): the smallest budget that runs. */
CORE_HIDDEN int64_t coll_xchg_steps_for(int alg, int radix,
                                        const coll_xchg_shape *s,
                                        int64_t budget, int64_t *least);
/* ENOMEM for an agreed budget below the smallest the run fits in. */
CORE_HIDDEN int coll_xchg_budget_enomem(coll_xchg_call *c);
/* The request pool, alg's tables, its staging when the dispatcher
   allocates it, and the arrays of a step; a local code. */
CORE_HIDDEN int coll_xchg_prepare(coll_xchg_call *c, int alg, int radix,
                                  int64_t steps, const coll_xchg_shape *s);
/* What coll_xchg_prepare took, but the request pool. */
CORE_HIDDEN void coll_xchg_unprepare(coll_xchg_call *c);
/* The run's steps: slice t of every message in step t. */
CORE_HIDDEN int coll_xchg_run_steps(coll_xchg_call *c,
                                    const coll_xchg_ops *ops);
/* The agreed outcome of a run that may fail locally; *retry: run again
   in more steps. */
CORE_HIDDEN int coll_xchg_agree_outcome(coll_xchg_call *c, int rc,
                                        int *retry);

#endif
