/*
 * alloc.c - the library's allocator: malloc/calloc/realloc/free with an
 * allocation failure that tests can inject.
 *
 * Every allocation of passion/, ocad/, collective/ and prefetch/ that can
 * reach a context goes through core_malloc / core_calloc / core_realloc /
 * core_strdup (or, for aligned or mapped memory, asks core_alloc_fault
 * first), so that the option fault_alloc_at = N makes exactly the Nth of
 * them fail, once, on the ranks fault_ranks selects. N counts from when
 * the fault was armed: from passion_init (the context's own allocation is
 * the first) or from core_fault_arm. A test that arms the fault just
 * before a public call therefore fails that call's Nth allocation, and
 * reads ctx->fault_allocs afterwards to know whether the call made N
 * allocations at all.
 *
 * Invariant: an injected failure looks exactly like malloc returning NULL
 * (errno ENOMEM); the counter is atomic, as the prefetch worker may
 * allocate while the caller's thread does.
 */
#include "core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int core_fault_rank(const passion_ctx *ctx)
{
    return ctx->opt.fault_ranks < 0 || ctx->opt.fault_ranks == ctx->rank;
}

int core_alloc_fault(passion_ctx *ctx)
{
    if (!ctx || ctx->opt.fault_alloc_at <= 0 || !core_fault_rank(ctx))
        return 0;
    int64_t n = __atomic_add_fetch(&ctx->fault_allocs, 1, __ATOMIC_RELAXED);
    if (n != ctx->opt.fault_alloc_at)
        return 0;
    errno = ENOMEM;
    return 1;
}

void *core_malloc(passion_ctx *ctx, size_t n)
{
    return core_alloc_fault(ctx) ? NULL : malloc(n);
}

void *core_calloc(passion_ctx *ctx, size_t n, size_t size)
{
    return core_alloc_fault(ctx) ? NULL : calloc(n, size);
}

void *core_realloc(passion_ctx *ctx, void *p, size_t n)
{
    return core_alloc_fault(ctx) ? NULL : realloc(p, n);
}

void core_free(passion_ctx *ctx, void *p)
{
    (void)ctx;
    free(p);
}

char *core_strdup(passion_ctx *ctx, const char *s)
{
    return core_alloc_fault(ctx) ? NULL : strdup(s);
}
