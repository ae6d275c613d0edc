/*
 * exchange.h - the exchange subsystem (collective/exchange/, prefix
 * coll_xchg_ / coll_): all-to-all exchange algorithms behind one ops table
 * and the point-to-point helpers the algorithms share. What they cost,
 * the message-cost calibration and `auto`'s choice are the planner's
 * (collective/planner/plan_xchg.h, one layer down), which the two-phase
 * method's model shares. It uses the core (passion/) and the planner; the
 * two-phase method and the public calls above use it.
 *
 * Files: exchange.c the dispatcher (one call), with xchg_call.h its
 * inside, xchg_round.c its round of headers and xchg_budget.c its budget
 * and steps; xchg_api.c the public calls; xchg_table.c the ops table;
 * xchg_state.c all per-context state; xchg_p2p.c messages, waits, staging
 * accounting; xchg_<algorithm>.c one algorithm each (the four-stage
 * with xchg_fs_grid.c, its schedule, and xchg_fs_msg.c, its messages;
 * the two-level with xchg_twolevel_node.c, a node's side, and
 * xchg_nodes_agree.c, the agreement by nodes it rides on).
 *
 * Everything here works on bytes: counts and displacements are int64 byte
 * counts, messages larger than the chunk limit (INT_MAX by default) travel
 * as several MPI messages, so there is no 2 GiB limit.
 *
 * Invariants:
 *  - a call is collective over ctx->comm and returns the same code on
 *    every rank: arguments, the algorithm and its radix are agreed on at
 *    entry in one round (every rank sends its header to every rank; a
 *    non-blocking allreduce above COLL_A2A_MAX ranks); A1's data travels
 *    with the headers when the caller's choice is A1 (fixed, or the local
 *    guess of `auto`), so A1 costs one round with its agreement; an
 *    algorithm whose run can fail locally (it allocates once the sizes are
 *    known) keeps the message protocol going with empty data and the
 *    outcome is agreed after it;
 *  - the choice of `auto` depends only on values that every rank holds
 *    identically (the agreed shape and the agreed calibration);
 *  - all messages travel on the layer's own duplicate of ctx->comm
 *    (coll_xchg_comm), whose errors are returned; algorithms receive only
 *    from ranks named by their schedule (never MPI_ANY_SOURCE), so
 *    messages of consecutive calls cannot be confused;
 *  - counters count the algorithm's own messages: a message split at the
 *    chunk limit still counts once; the agreements are not counted;
 *  - the staging a call holds stays within the budget its caller passes
 *    (coll_xchg_args.budget; by default what is left of the context's
 *    memory_budget): auto chooses among the algorithms that fit; a fixed
 *    algorithm that does not fit runs in steps (every message cut in k
 *    slices, slice t of every message in step t) that do; when no number
 *    of steps fits, every rank returns PASSION_ENOMEM with the smallest
 *    budget that runs in the detail. The
 *    dispatcher's allocations for an algorithm are refused beyond the
 *    budget (pl->limit), so the bound holds even where an algorithm's
 *    staging() estimate is short: the call is then re-run in more steps.
 *    MPI's own buffers (algorithm mpi) are not counted.
 *
 * Adding an algorithm: one file defining a coll_xchg_ops, one line in the
 * table of xchg_table.c, its price (a plan_xchg_alg) in the planner's
 * table at the same place (and, for a public choice, a value of enum
 * passion_xchg). The dispatcher names no algorithm.
 */
#ifndef PASSION_COLL_EXCHANGE_H
#define PASSION_COLL_EXCHANGE_H

#include "xchg.h"

/* One exchange. Counts and displacements in bytes. */
typedef struct coll_xchg_args {
    const void *sendbuf;
    void *recvbuf;
    /* >= 0: regular exchange, block bytes to every rank, displacements
       j*block on both sides (the arrays are ignored); -1: the arrays */
    int64_t block;
    const int64_t *sendcounts, *sdispls; /* P entries each */
    const int64_t *recvcounts, *rdispls;
    int alg;   /* enum passion_xchg; PASSION_XCHG_DEFAULT = ctx option
                  (an option naming an algorithm that needs equal blocks
                  runs auto's choice on an irregular exchange) */
    int radix; /* index radix 2..P; 0 = the option, else the model */
    /* staging bytes the call may hold; <= 0: what is left of the
       context's memory_budget (memory_budget - staging in use) */
    int64_t budget;
    coll_xchg_stats *stats; /* out, optional: this call's counters */
    /* optional: the exchange's shape (procs, block, lmax, lmax_x, mmax,
       total as the agreement folds them), which the caller knows the
       same on every rank (the two-phase method's rounds: from the
       sections every rank has). auto then guesses on it, not on this
       rank's own counts, so that every rank prepares what runs and the
       two-level exchange's data rides on the agreement; NULL: each rank
       guesses from its own counts (an irregular exchange's ranks then
       may guess differently, and the call pays for it) */
    const coll_xchg_shape *shape;
} coll_xchg_args;

/*
 * The exchange: every rank j receives in recvbuf + rdispls[i] the
 * recvcounts[i] bytes that rank i sends from sendbuf + sdispls[j].
 * Collective; checks arguments and their consistency across ranks
 * (PASSION_EMISMATCH), returns the same code on every rank. Adds to the
 * context's counters (messages_sent, bytes_sent, rounds, t_comm,
 * peak_staging).
 */
CORE_HIDDEN int coll_exchange(passion_ctx *ctx, const coll_xchg_args *args);
/* What `auto` would run for these arguments and the model's seconds.
   Collective (calibrates if needed); same result on every rank. */
#ifdef PASSION_TEST_HOOKS /* tests only: test builds */
CORE_HIDDEN int coll_xchg_predict(passion_ctx *ctx,
                                  const coll_xchg_args *args,
                                  coll_xchg_choice *out /* out */);
#endif
#endif
