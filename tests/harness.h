/*
 * harness.h - CUnit under MPI for passion's tests.
 *
 * Every rank runs the same suites (collective calls need all ranks); only
 * rank 0 prints CUnit's report. Failures are summed across ranks at the
 * end, so a failure on any rank fails the program on every rank. Checks
 * never return early (CU_ASSERT, not _FATAL), so no rank leaves a
 * collective behind. Random tests take their seed from PASSION_TEST_SEED
 * (default fixed) and print it with every failure.
 */
#ifndef PASSION_TEST_HARNESS_H
#define PASSION_TEST_HARNESS_H

#include <CUnit/Basic.h>
#include <mpi.h>
#include "passion.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int th_rank, th_size;
extern uint64_t th_seed;      /* base seed of this run */
extern uint64_t th_case_seed; /* seed of the case being run */

/* Check a condition; on failure print rank, place, seed and message. */
#define TH_CHECK(cond, ...)                                                 \
    do {                                                                    \
        int th_ok_ = (cond) ? 1 : 0;                                        \
        if (!th_ok_) {                                                      \
            fprintf(stderr, "[rank %d] FAIL %s:%d (seed %llu): ", th_rank,  \
                    __FILE__, __LINE__, (unsigned long long)th_case_seed);  \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
        }                                                                   \
        CU_ASSERT(th_ok_);                                                  \
    } while (0)

/* Deterministic generator (splitmix64), shared by ranks that seed alike. */
static inline uint64_t th_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
/* Uniform in [lo, hi]. */
static inline int64_t th_range(uint64_t *s, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(th_next(s) % (uint64_t)(hi - lo + 1));
}

/*
 * A random array spec drawn from *s: 1 to 4 dimensions, element size one
 * of esizes[0..nes-1], P's prime factors spread over the grid, random
 * distributions, blocks, ghosts (up to 2) and storage order (row, column
 * or a random custom order).
 */
void th_random_spec(uint64_t *s, int P, const int64_t *esizes, int nes,
                    passion_array_spec *sp);

/* 1 if every rank passes ok != 0. Collective. */
int th_all(int ok);
/* 1 if every rank passes the same rc (a collective call's code). Collective. */
int th_same(int rc);
/* A scratch directory for this test program (same path on all ranks). */
const char *th_dir(void);

/*
 * Options from a printf-formatted "key=value,..." list (NULL or "": the
 * defaults); NULL (and a message) if it does not parse. Free with
 * passion_options_free.
 */
passion_options *th_options(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/* A context on MPI_COMM_WORLD with such options. Collective; 0 or the
   code (*ctx NULL then). */
int th_init(passion_ctx **ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * A 1-D global file of n doubles v(i) = i, th_dir()/name, written by rank
 * 0 (direct) before a barrier; *pa its array. Collective; NULL (and a
 * failed check) on error.
 */
passion_file *th_ramp_file(passion_ctx *ctx, passion_array **pa,
                           const char *name, int64_t n);
/* The same for an array a of doubles of any shape: v(i) = base + i in
   file order. Collective; NULL (and a failed check) on error. */
passion_file *th_ramp_create(passion_ctx *ctx, passion_array *a,
                             const char *name, double base);
/* An array (a failed check if refused): nd dimensions of shape, elements
   of esize bytes, with this storage order, placement and header. */
passion_array *th_array(passion_ctx *ctx, int nd, const int64_t *shape,
                        int64_t esize, int storage, int placement,
                        int64_t header);
/* A context with this memory budget (0: the default); a failed check if
   it cannot be made. Collective. */
passion_ctx *th_ctx_budget(int64_t budget);

/* The section-access methods, auto last, and their names. */
enum { TH_NMETH = 5 };
extern const passion_method th_meths[TH_NMETH];
extern const char *const th_mnames[TH_NMETH];
/*
 * A context with the options opts (a failed check if it cannot be made)
 * and th_ramp_file(name, n) on it. Collective; NULL with *ctx and *pa
 * NULL (nothing left open) on error. th_ramp_close closes the three.
 */
passion_file *th_ramp_open(const char *opts, const char *name, int64_t n,
                           passion_ctx **ctx, passion_array **pa);
void th_ramp_close(passion_file *f, passion_array *a, passion_ctx *ctx);
/* 1 if b holds th_ramp_file's values of the 1-D section s */
int th_ramp_ok(const double *b, const passion_section *s);
/* How many of v[0..n-1] differ from th_ramp_create's base + i. */
int th_ramp_bad(const double *v, int64_t n, double base);

/*
 * Run the suites: MPI_Init, CUnit registry, run, sum failures over ranks,
 * print "N passed, N failed" on rank 0, MPI_Finalize. Returns the exit
 * code (0 = all passed).
 */
int th_main(int argc, char **argv, CU_SuiteInfo *suites);

#endif
