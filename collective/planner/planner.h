/*
 * planner.h - the planner: which of several correct ways of doing one call
 * runs. FFTW's planner is the model (Frigo and Johnson, "The Design and
 * Implementation of FFTW3", Proc. IEEE 93(2), 2005, section 7: the
 * planner separate from what it plans, ESTIMATE and MEASURE, wisdom).
 *
 * A dispatcher (the exchange's, the collective I/O's) describes a call by
 * a signature: an operation and PLAN_KEYS integers, agreed on every rank.
 * The first time a signature comes it offers its candidates with their
 * estimates, best first; from then on the record decides:
 *   estimate: the candidate the estimate ranks first (or wisdom's
 *     winner), the same answer every time;
 *   measure: the candidates run in turn, PLAN_TRIALS times each, on real
 *     calls; each call's time on this rank is observed (plan_observe);
 *     then the ranks agree on every candidate's slowest-rank best time
 *     (one reduction of plan_times' vector, made by the dispatcher, given
 *     back to plan_decide) and the fastest is kept (the estimate's first
 *     unless another beat it by PLAN_MARGIN); after PLAN_RECHECK
 *     calls the candidates are measured again. A signature that wisdom
 *     holds runs wisdom's winner from its first call and is not measured.
 * Invariant: what plan_next answers depends only on agreed inputs (the
 * signature, the candidates, the count of plan_next calls of the record,
 * the agreed times), so every rank runs the same candidate; nothing here
 * does MPI or I/O (plan_state.c does both, plan_xchg_calib.c the
 * exchange's calibration), so every rule is testable without MPI.
 *
 * The exchange's model, prices, pure choice and calibration are in
 * plan_xchg.h (plan_xchg_*.c); the collective access's model is still
 * in collective/ (etp_model.c and its neighbours).
 */
#ifndef PASSION_PLANNER_H
#define PASSION_PLANNER_H

#include <stddef.h>
#include <stdint.h>

#include "../../passion/core.h"

enum { PLAN_ESTIMATE = 0, PLAN_MEASURE = 1 };
/* operations (the first word of a wisdom line names them: plan_op_name) */
enum { PLAN_OP_XCHG = 0, PLAN_OP_READ = 1, PLAN_OP_WRITE = 2,
       PLAN_OP_N = 3 };

#define PLAN_KEYS 8
#define PLAN_CANDS 6
#define PLAN_TRIALS 3     /* calls per candidate in one measurement */
#define PLAN_RECHECK 4096 /* calls of a decided signature between two */
#define PLAN_SLOW 1e300   /* a time no candidate reaches: not observed */
#define PLAN_MARGIN 0.1   /* how much faster than the estimate's first
                             another candidate must be measured to win */
#define PLAN_WISDOM_MAX (16u << 20) /* bytes of the largest wisdom file */

/* the least k with 2^k >= x (0 for x <= 1): signatures' size classes */
static inline int64_t plan_log2_up(int64_t x)
{
    int64_t k = 0;
    while (k < 62 && ((int64_t)1 << k) < x)
        k++;
    return k;
}

typedef struct plan_sig {
    int op;
    int64_t key[PLAN_KEYS];
} plan_sig;

typedef struct plan_cand {
    int method;      /* the dispatcher's id (enum passion_xchg...) */
    int param;       /* its parameter (a radix), 0 none */
    double estimate; /* seconds the model gives it */
} plan_cand;

typedef struct plan_rec {
    plan_sig sig;
    int n;                       /* candidates */
    plan_cand cand[PLAN_CANDS];  /* best estimate first */
    double best[PLAN_CANDS];     /* this rank's best time of each, this
                                    measurement (PLAN_SLOW: none yet) */
    double agreed[PLAN_CANDS];   /* the agreed times of the last decision */
    int64_t calls;               /* plan_next calls since the measurement
                                    began */
    int winner;                  /* index, -1 while measuring */
    int wisdom;                  /* winner from wisdom: never measured */
} plan_rec;

/* The exchange's measured message costs (coll_xchg_costs' round, msg,
   byte, copy; plan_xchg_calib.c) of a placement, P ranks on `nodes`
   nodes, kept with the records and in wisdom, so that a run that loads
   them calibrates nothing. */
#define PLAN_COSTS_MAX 64
typedef struct plan_msg_costs {
    int64_t procs, nodes;
    double round, msg, byte, copy;
} plan_msg_costs;

/* The file's measured costs (collective/etp_filecost.c: the calibration's
   latency and bandwidth, the bytes a rank and all ranks streamed for the
   best bandwidth reading; etp_stream.c: the calls' own long reads' rate
   and bytes a rank, the readahead's ramp), keyed by what makes them
   valid: the driver (enum passion_driver), the file system's type
   (statfs f_type) and device (st_dev) of the file calibrated on, and the
   placement that read together (P ranks on `nodes` nodes). Kept with the
   records and in wisdom, so that a run that loads them calibrates
   nothing. */
typedef struct plan_file_costs {
    int64_t driver, fstype, dev, procs, nodes;
    double lat, bw;
    int64_t bw_rank, bw_len;
    double stream_bw;
    int64_t stream_len;
} plan_file_costs;

#define PLAN_MAX_RECS 1024
typedef struct plan_table {
    plan_rec *rec;
    int n, cap;
    int evict; /* the next slot to reuse once full */
    plan_msg_costs costs[PLAN_COSTS_MAX]; /* by placement, oldest first */
    int ncosts;
    plan_file_costs fcosts[PLAN_COSTS_MAX]; /* by key, oldest first */
    int nfcosts;
} plan_table;

/* What runs: cand index; agree: before it runs, reduce plan_times'
   vector (maximum over ranks) and pass it to plan_decide, which sets
   index again. */
typedef struct plan_pick {
    int index;
    int agree;
    int trial; /* this call is a measurement */
} plan_pick;

CORE_HIDDEN void plan_table_init(plan_table *t);
CORE_HIDDEN void plan_table_clear(plan_table *t);
/* The record of sig, NULL when the signature is new. */
CORE_HIDDEN plan_rec *plan_find(plan_table *t, const plan_sig *sig);
/* A new record of sig with n candidates (at most PLAN_CANDS, best
   estimate first); NULL when out of memory. */
CORE_HIDDEN plan_rec *plan_add(plan_table *t, const plan_sig *sig,
                               const plan_cand *cand, int n);
/* The candidate the next call runs, counted (one call of the record). */
CORE_HIDDEN plan_pick plan_next(plan_rec *r, int mode);
/* What plan_next would answer, nothing counted (guesses, predictions). */
CORE_HIDDEN int plan_peek(const plan_rec *r, int mode);
/* This rank's best times (n words) to be reduced with maximum. */
CORE_HIDDEN int plan_times(const plan_rec *r, double *v);
/* The agreed times: the winner kept, the pick's index set to it. */
CORE_HIDDEN void plan_decide(plan_rec *r, const double *v, plan_pick *pk);
/* A call of candidate idx took seconds on this rank. */
CORE_HIDDEN void plan_observe(plan_rec *r, int idx, double seconds);
/* Wisdom: a decided record (winner idx, agreed seconds) for sig; replaces
   the record of sig. */
CORE_HIDDEN int plan_wisdom_put(plan_table *t, const plan_sig *sig,
                                const plan_cand *win, double seconds);

/* The costs of placement (procs, nodes), NULL when t holds none. */
CORE_HIDDEN const plan_msg_costs *plan_msg_costs_find(const plan_table *t,
                                              int64_t procs, int64_t nodes);
/* c replaces the costs of its placement (the oldest placement dropped
   when PLAN_COSTS_MAX are held). */
CORE_HIDDEN void plan_msg_costs_put(plan_table *t, const plan_msg_costs *c);
/* The file costs of k's key (driver, fstype, dev, procs, nodes), NULL
   when t holds none; c replaces those of its key (the oldest dropped
   when PLAN_COSTS_MAX are held). */
CORE_HIDDEN const plan_file_costs *plan_file_costs_find(const plan_table *t,
                                               const plan_file_costs *k);
CORE_HIDDEN void plan_file_costs_put(plan_table *t, const plan_file_costs *c);
/* Their lines in wisdom (plan_fcosts.c): format into s (cap bytes), the
   bytes written; parse the rest of a line after its first word (strtok_r
   state *save), 0 or -1 with the reason in why. */
#define PLAN_FCOSTS_WORD "file-costs"
#define PLAN_FCOSTS_VERSION 1
#define PLAN_FCOSTS_LINE 320 /* the longest line formatted */
CORE_HIDDEN size_t plan_file_costs_format(const plan_table *t, char *s,
                                          size_t cap);
CORE_HIDDEN int plan_file_costs_parse(plan_table *t, char **save, char *why,
                                      size_t wlen);

/* The text of wisdom (one line a decided record, plan_wisdom_format) and
   its parser; out of memory or a malformed line (its number and reason in
   detail) is an error. Records from text replace those of the same
   signature. */
CORE_HIDDEN char *plan_wisdom_format(const plan_table *t, size_t *len);
CORE_HIDDEN int plan_wisdom_parse(plan_table *t, const char *text,
                                  size_t len, char *detail, size_t dlen);
CORE_HIDDEN const char *plan_op_name(int op);

/* The per-context planner (plan_state.c): mode from the option planner,
   wisdom loaded (collective, once: rank 0 reads the file the option
   wisdom names and broadcasts it on comm) before the first decision, and
   saved by rank 0 when the context is freed. */
typedef struct plan_state plan_state;
CORE_HIDDEN plan_state *plan_state_get(passion_ctx *ctx);
CORE_HIDDEN plan_table *plan_state_table(plan_state *s);
/* Something was learned that the wisdom file should keep (measured
   costs): saved when the context is freed, as a decided record is. */
CORE_HIDDEN void plan_state_learned(plan_state *s);
CORE_HIDDEN int plan_state_mode(const passion_ctx *ctx);
/* Collective over the context's ranks (every rank with the same record):
   the candidate the call runs (plan_next), the measured times agreed
   (maximum over ranks) and the winner kept where a measurement ends; an
   error is agreed. */
CORE_HIDDEN int plan_state_next(passion_ctx *ctx, plan_state *s,
                                plan_rec *r, plan_pick *pk);
/* Collective over comm (every rank of the context): the wisdom file read
   on the first call, agreed code. */
CORE_HIDDEN int plan_state_load(passion_ctx *ctx, plan_state *s,
                                MPI_Comm comm);

#endif
