/*
 * core_wait.h - the waits of the library on MPI requests (prefix
 * core_wait, core_idle; passion/agree.c): spin, then yield or sleep.
 *
 * Invariants: the spin time and pause are process-wide, set by every
 * passion_init (core_wait_policy); a wait never returns before its requests
 * completed, except with PASSION_EMPI when MPI reports an error.
 */
#ifndef PASSION_CORE_WAIT_H
#define PASSION_CORE_WAIT_H

#include "passion.h"
#include "core_base.h"

/*
 * The waits of the library (core_wait, core_waitall, core_idle): poll MPI
 * for the spin time, then yield the CPU between polls. The spin time is
 * process-wide (MPI's waits know no context), set by every passion_init
 * (core_wait_policy): the option wait_spin, else, when the context's
 * ranks on this node do not outnumber the processors their affinity masks
 * cover together (ctx->cpu_share, core_host_count), CORE_SPIN_LONG (a
 * yield on a loaded machine gives the core away for a scheduler tick or
 * more: milliseconds, where the peer's answer takes microseconds), else
 * CORE_SPIN_SHORT (an oversubscribed node: the spinning rank would hold
 * the core its peer needs). Past the spin time a wait yields
 * (sched_yield) between polls, except on an oversubscribed node, where
 * it sleeps CORE_WAIT_PAUSE (core_wait_pause): a rank that
 * yields stays runnable, and the kernel's scheduler (CFS) lets the rank
 * running on its core, often one spinning in MPI's own busy-polling
 * waits, keep it until the next scheduler tick (milliseconds), even after
 * the data the yielding rank waits for has come; a rank that sleeps is
 * woken by its timer, and a waking rank preempts one that has run longer.
 */
#define CORE_SPIN_LONG 2e-3
#define CORE_SPIN_SHORT 20e-6
#define CORE_WAIT_PAUSE 50e-6
/* core_waitall reads the clock once every this many polls while it
   spins, never once it yields */
#define CORE_POLLS_PER_CLOCK 16
/* Local (passion_init): choose and set the spin time and the pause from
   ctx->cpu_share (core_host_count, called before); the spin's seconds. */
CORE_HIDDEN double core_wait_policy(passion_ctx *ctx);
#ifdef PASSION_TEST_HOOKS
/* Tests (test builds only): polls (MPI_Testall calls) and clock reads of
   core_waitall so far in this process; the process's spin time now
   (seconds); the sleep between polls after the spin time (0: a yield). */
CORE_HIDDEN void core_wait_counts(long long *polls, long long *reads);
CORE_HIDDEN double core_wait_spin(void);
CORE_HIDDEN double core_wait_pause(void);
#endif
/* Wait for one request / all n requests. PASSION_EMPI if MPI reports an
   error. */
CORE_HIDDEN int core_wait(MPI_Request *req);
CORE_HIDDEN int core_waitall(int n, MPI_Request *req);
/* Between two unsuccessful polls of a wait that started at time t0: yield
   once the spin time is over. */
CORE_HIDDEN void core_idle(double t0);

#endif
