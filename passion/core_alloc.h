/*
 * core_alloc.h - memory: every allocation of the library goes through
 * these (prefix core_; passion/alloc.c), so that the fault option can fail
 * any one of them.
 *
 * Invariants: memory from core_malloc/calloc/realloc/strdup is freed with
 * core_free, from core_tmp_alloc with core_tmp_free on the same context; an
 * injected failure fails one allocation, once, on the selected ranks.
 */
#ifndef PASSION_CORE_ALLOC_H
#define PASSION_CORE_ALLOC_H

#include <stddef.h>
#include "passion.h"
#include "core_base.h"

/* ---- memory: every allocation of the library goes through these ----
 *
 * They are malloc/calloc/realloc/free, except that the fault option
 * fault_alloc_at = N makes the Nth allocation counted since the fault was
 * armed (at passion_init, where the context's own allocation is the first,
 * or by core_fault_arm) fail once, on the ranks fault_ranks selects. ctx
 * may be NULL (no injection). core_alloc_fault() is the same check for
 * allocations made some other way (posix_memalign, mmap): 1 = fail now.
 * The injection is a test build's (PASSION_TEST_HOOKS).
 */
CORE_HIDDEN void *core_malloc(passion_ctx *ctx, size_t n);
CORE_HIDDEN void *core_calloc(passion_ctx *ctx, size_t n, size_t size);
CORE_HIDDEN void *core_realloc(passion_ctx *ctx, void *p, size_t n);
CORE_HIDDEN void core_free(passion_ctx *ctx, void *p);
CORE_HIDDEN char *core_strdup(passion_ctx *ctx, const char *s);
#ifdef PASSION_TEST_HOOKS
CORE_HIDDEN int core_alloc_fault(passion_ctx *ctx);
#else
/* a build without test hooks injects nothing (no fault_* options) */
static inline int core_alloc_fault(passion_ctx *ctx)
{
    (void)ctx;
    return 0;
}
#endif
/* A call's small temporary array (request lists, batch tables: not
   staging), from a per-context cache of freed ones (alloc.c); counted = 1
   makes it an allocation fault_alloc_at counts (as core_malloc). Freed
   with core_tmp_free on the same context (any thread); the cache goes at
   finalize (core_tmp_release). ctx may be NULL (plain malloc/free). */
CORE_HIDDEN void *core_tmp_alloc(passion_ctx *ctx, size_t n, int counted);
CORE_HIDDEN void core_tmp_free(passion_ctx *ctx, void *p);
CORE_HIDDEN void core_tmp_release(passion_ctx *ctx);
#ifdef PASSION_TEST_HOOKS
/* Tests: arm the fault options now (counters restart at 0): fail the
   alloc_at-th allocation and the io_at-th I/O request (0 = never) on the
   ranks `ranks` selects (-1 all). */
CORE_HIDDEN void core_fault_arm(passion_ctx *ctx, int64_t alloc_at,
                                int64_t io_at, int ranks);
/* Whether this rank is one fault_ranks selects. */
CORE_HIDDEN int core_fault_rank(const passion_ctx *ctx);
#endif

#endif
