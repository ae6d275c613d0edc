/*
 * chaos.h - the schedule fuzzer (prefix core_chaos_): a seeded, random
 * short delay at the phase boundaries of every collective and asynchronous
 * path, so that interleavings of ranks and threads that are rare on an
 * idle machine (one rank's read-modify-write straddling another rank's
 * write, a completion arriving before a submission returns) become common.
 *
 * Compiled only with -Dtest_hooks=true (test builds: scripts/build turns it
 * on; PASSION_TEST_HOOKS); otherwise CORE_CHAOS(site) is nothing, chaos.c
 * is not built and the library carries no hook.
 * Even when compiled in it stays off until PASSION_CHAOS=SEED[:MAX_US[:PCT]]
 * is in the environment at the first hook, or core_chaos_config() is
 * called (the soak's --chaos).
 *
 * Invariants: a hook never fails, never changes data or control flow and
 * never calls MPI; it only yields the processor or sleeps (at most MAX_US
 * microseconds). Each thread draws from its own generator, seeded from the
 * seed, the process's rank as the launcher exports it and the thread's
 * first hook, so two runs of the same seed draw the same delays per thread
 * (the interleavings they cause still depend on the machine).
 */
#ifndef PASSION_CHAOS_H
#define PASSION_CHAOS_H

#include <stdint.h>

/* The hooks' sites: one name each, in the report (core_chaos_stats). */
#define CORE_CHAOS_SITES(X)                                                  \
    X(IO_READ, "io.read")             /* before a driver read            */ \
    X(IO_WRITE, "io.write")           /* before a driver write           */ \
    X(IO_BATCH, "io.batch")           /* before a batch of requests      */ \
    X(WAIT, "mpi.wait")               /* before a wait on MPI requests   */ \
    X(AGREE, "agree")                 /* before the outcome's agreement  */ \
    X(FAD_BEFORE, "fad.before")       /* before the FAD's all-gather     */ \
    X(FAD_AFTER, "fad.after")         /* after it, before any method     */ \
    X(EARLY_IO, "early.io")           /* before an access ahead of FAD   */ \
    X(ORDER_TOKEN, "order.token")     /* rank order: before passing on   */ \
    X(RMW_GAP, "rmw.gap")             /* sieve: between read and write   */ \
    X(ETP_ROUND, "etp.round")         /* two-phase: each round's start   */ \
    X(ETP_RMW, "etp.rmw")             /* two-phase: domain read to write */ \
    X(XCHG_ROUND, "xchg.round")       /* exchange: each round's start    */ \
    X(ENG_SUBMIT, "engine.submit")    /* engine: before a submission     */ \
    X(ENG_RUN, "engine.run")          /* worker: before running an op    */ \
    X(ENG_COMPLETE, "engine.complete") /* engine: before a completion    */ \
    X(PF_ISSUE, "prefetch.issue")     /* a request or prefetch issued    */ \
    X(SLAB_WRITEBACK, "slab.writeback") /* slab: before its write-back   */ \
    X(SHIFT, "shift")                 /* out-of-core shift's phases      */

enum core_chaos_site {
#define CORE_CHAOS_ENUM(id, name) CORE_CHAOS_##id,
    CORE_CHAOS_SITES(CORE_CHAOS_ENUM)
#undef CORE_CHAOS_ENUM
    CORE_CHAOS_NSITES
};

typedef struct core_chaos_stats {
    uint64_t hits[CORE_CHAOS_NSITES];   /* hooks passed */
    uint64_t delays[CORE_CHAOS_NSITES]; /* of which delayed */
    uint64_t delay_us;                  /* microseconds slept in all */
    uint64_t seed;
    int max_us, pct, on;
} core_chaos_stats;

#ifdef PASSION_TEST_HOOKS
void core_chaos_point(enum core_chaos_site site);
#define CORE_CHAOS(site) core_chaos_point(CORE_CHAOS_##site)

/* 1 (the hooks are compiled in: the races test asks) */
int core_chaos_built(void);
/* turn the hooks on (seed, delays up to max_us, a delay at pct percent of
   the hooks) or off (pct 0) */
int core_chaos_config(uint64_t seed, int max_us, int pct);
/* this process's counts so far */
void core_chaos_stats_get(core_chaos_stats *out);
/* the name of a site */
const char *core_chaos_site_name(int site);
#else
#define CORE_CHAOS(site) ((void)0)
#endif

#endif
