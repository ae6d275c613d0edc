/*
 * core_stage.h - staging memory counted against the memory budget (prefix
 * core_stage_; passion/stage.c).
 *
 * Invariants: staging bytes in use never go negative and never exceed the
 * budget; peak_staging is their maximum; the edge pool lies beside the
 * budget and has CORE_EDGE_PAGES pages.
 */
#ifndef PASSION_CORE_STAGE_H
#define PASSION_CORE_STAGE_H

#include "passion.h"
#include "core_base.h"

/* ---- staging memory (counted against the budget) ---- */

CORE_HIDDEN void *core_stage_alloc(passion_ctx *ctx, int64_t bytes);
CORE_HIDDEN void core_stage_free(passion_ctx *ctx, void *p, int64_t bytes);
/* Free the blocks the context keeps for reuse (at finalize). */
CORE_HIDDEN void core_stage_release(passion_ctx *ctx);
/* Edge pages of shifted O_DIRECT reads (core_shift): n contiguous aligned
   pages of the context's small fixed pool (CORE_EDGE_PAGES, made on first
   use, beside the budget like the io_uring ring's own memory), or NULL
   when the pool has no n free in a row. Any thread. */
#define CORE_EDGE_PAGES 16
CORE_HIDDEN char *core_stage_edge_get(passion_ctx *ctx, int n);
CORE_HIDDEN void core_stage_edge_put(passion_ctx *ctx, char *p, int n);

#endif
