/*
 * etp_state.c - the collective layer's per-context state (coll_ext, on the
 * context's extension slot CORE_EXT_COLL): made on first use, freed at
 * passion_finalize through the slot's free function.
 *
 * Invariants: the state holds only what this layer learns or keeps from
 * one call to the next (the round buffers' fallback reservation, the
 * learned costs); a rank without it (allocation failed) takes part in
 * every call as a rank that has learned nothing, so the ranks still
 * agree (what is learned travels in the FAD).
 */
#include "coll.h"

#include <stdlib.h>

static void ext_free(passion_ctx *ctx, void *ext)
{
    (void)ctx;
    coll_ext *e = ext;
    core_free(ctx, e->reserve);
    core_free(ctx, e);
}

coll_ext *coll_ext_get(passion_ctx *ctx)
{
    return core_ext_get(ctx, CORE_EXT_COLL, sizeof(coll_ext), NULL,
                        ext_free);
}

void *coll_reserve_get(passion_ctx *ctx, int64_t bytes)
{
    coll_ext *e = coll_ext_get(ctx);
    if (!e)
        return NULL;
    if (e->reserve && e->bytes >= bytes)
        return e->reserve;
    core_free(ctx, e->reserve);
    e->reserve = NULL;
    e->bytes = 0;
    void *res = NULL;
    if (core_alloc_fault(ctx) || posix_memalign(&res, 4096, (size_t)bytes))
        return NULL;
    e->reserve = res;
    e->bytes = bytes;
    return res;
}
