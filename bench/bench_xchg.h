/*
 * bench_xchg.h - what the exchange suites (bench-index, bench-irregular)
 * share (prefix xb_): the methods compared, the timed loop, the check of
 * every result against MPI's, the CSV rows with the model's prediction
 * next to each measurement, and the projection rows.
 *
 * A case is a P x P matrix of byte counts (or a regular block size). Each
 * repetition runs every method once, in turn, after a barrier; a method's
 * time for a repetition is the maximum over ranks; the row gives the
 * median and the minimum over repetitions, first_s the first call's,
 * steady_s the median of the last half (steady_min_s, steady_p90_s its
 * spread; bench_steady_of). The auto methods run in contexts of their own
 * (planner measure and estimate, column planner), at least
 * BENCH_AUTO_REPS repetitions: beyond the case's reps only they run, in
 * turn. Every call's receive buffer is compared with MPI_Alltoall(v)'s.
 * Regime warm: buffers stay in the CPU caches between repetitions; cold:
 * every rank writes 32 MiB of other data before each call (an in-memory
 * exchange has no page cache).
 */
#ifndef PASSION_BENCH_XCHG_H
#define PASSION_BENCH_XCHG_H

#include "../collective/exchange/exchange.h"
#include "bench_util.h"

typedef struct xb_method {
    char name[32];
    int alg;   /* enum passion_xchg; -1: MPI's own call (mpi-raw) */
    int radix;
    int spin;  /* 1: wait by spinning (diagnostic) */
    int fixed; /* counts as a fixed algorithm for the goal */
    passion_ctx *ctx; /* NULL: the suite's context; the auto methods
                         their own (planner measure or estimate) */
} xb_method;

typedef struct xb_case {
    char name[48];
    int64_t block;       /* >= 0: regular exchange of block bytes */
    const int64_t *m;    /* else P x P bytes, m[i*P + j] from i to j */
    int64_t bytes;       /* the size reported (block or Mmax) */
} xb_case;

#define XB_CSV_HEADER                                                      \
    "case,op,method,procs,ranks,regime,bytes,seconds,seconds_min,rounds,"  \
    "messages,bytes_sent,peak_staging,radix,predicted_seconds,chosen,"     \
    "reps,check,first_s,steady_s,steady_min_s,steady_p90_s,planner,load"

/* The shape of a case (for the model). */
coll_xchg_shape xb_shape(int P, const xb_case *c);

/* Run every method on the case, write one row per method. Collective. */
int xb_run_case(passion_ctx *ctx, const bench_args *a, FILE *csv,
                const coll_xchg_costs *costs, const xb_case *c,
                const xb_method *m, int nm, int reps);

/* Model-only rows for a shape on P ranks (op "projection"). Rank 0. */
void xb_project(FILE *csv, const bench_args *a, const coll_xchg_costs *costs,
                const char *casename, int64_t bytes,
                const coll_xchg_shape *s, int allow_index);

/* Start of an exchange suite's main: MPI_Init, the arguments (usage on
   error), a context, the auto methods' two (autos[0] planner=measure,
   autos[1] planner=estimate), the CSV and the calibration of all three
   (the first's row written). 0, or the status main returns (MPI already
   finalised). */
int xb_begin(int argc, char **argv, const char *prog, bench_args *a,
             passion_ctx **ctx, passion_ctx *autos[2], FILE **csv,
             coll_xchg_costs *costs);

/* The two auto methods (`auto`: measure, `auto-estimate`) at m[*nm]. */
void xb_add_autos(xb_method *m, int *nm, passion_ctx *const autos[2]);

/* A row describing the calibration (op "calibration"). Rank 0. */
void xb_calibration_row(FILE *csv, const bench_args *a,
                        const coll_xchg_costs *c, double seconds);

#endif
