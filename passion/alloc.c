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
 * The injection is a test build's (-Dtest_hooks=true); elsewhere the
 * option does not exist and core_alloc_fault is a constant 0.
 *
 * Invariant: an injected failure looks exactly like malloc returning NULL
 * (errno ENOMEM); the counter is atomic, as the prefetch worker may
 * allocate while the caller's thread does.
 */
#include "core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifdef PASSION_TEST_HOOKS
/* (a test build's: elsewhere core_alloc_fault is 0, core_alloc.h) */
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
#endif

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

/* ---- small temporary arrays kept between calls ----
 *
 * Why: a call's request lists and batch tables were malloc'ed and freed
 * every call; memory the process hands back to the system in between
 * (glibc trims the heap's top and unmaps large chunks; a caller may run
 * malloc_trim) comes back as fresh pages, a page fault each, which in
 * a call of a few bytes costs more than the call's own work. The
 * blocks are kept in a per-context cache, each with its size in a
 * header; at most TMP_CACHED of up to TMPA_MAX bytes.
 */
#include <pthread.h>

#define TMP_CACHED 16
#define TMPA_MAX (1 << 20)
#define TMP_HEAD 16

struct core_tmp_pool {
    pthread_mutex_t mu;
    void *blk[TMP_CACHED]; /* the header's address */
    size_t size[TMP_CACHED];
    int n;
};

void *core_tmp_alloc(passion_ctx *ctx, size_t n, int counted)
{
    if (counted && core_alloc_fault(ctx))
        return NULL;
    if (!n)
        n = 1;
    struct core_tmp_pool *tp = ctx ? ctx->tmp : NULL;
    if (ctx && !tp && n <= TMPA_MAX && (tp = calloc(1, sizeof *tp))) {
        pthread_mutex_init(&tp->mu, NULL);
        ctx->tmp = tp;
    }
    if (tp) {
        /* best fit, and no block more than 8 times the request */
        pthread_mutex_lock(&tp->mu);
        int best = -1;
        for (int i = 0; i < tp->n; i++)
            if (tp->size[i] >= n && tp->size[i] / 8 <= n &&
                (best < 0 || tp->size[i] < tp->size[best]))
                best = i;
        void *b = NULL;
        if (best >= 0) {
            b = tp->blk[best];
            tp->blk[best] = tp->blk[--tp->n];
            tp->size[best] = tp->size[tp->n];
        }
        pthread_mutex_unlock(&tp->mu);
        if (b)
            return (char *)b + TMP_HEAD;
    }
    /* a power of two from 256 bytes: a later, slightly larger request
       fits the kept block */
    size_t sz = 256;
    while (sz < n && sz < TMPA_MAX)
        sz *= 2;
    if (sz < n)
        sz = n;
    char *b = malloc(sz + TMP_HEAD);
    if (!b)
        return NULL;
    memcpy(b, &sz, sizeof sz);
    return b + TMP_HEAD;
}

void core_tmp_free(passion_ctx *ctx, void *p)
{
    if (!p)
        return;
    char *b = (char *)p - TMP_HEAD;
    size_t sz;
    memcpy(&sz, b, sizeof sz);
    struct core_tmp_pool *tp = ctx ? ctx->tmp : NULL;
    if (tp && sz <= TMPA_MAX) {
        pthread_mutex_lock(&tp->mu);
        if (tp->n == TMP_CACHED) { /* make room: drop the smallest */
            int small = 0;
            for (int i = 1; i < tp->n; i++)
                if (tp->size[i] < tp->size[small])
                    small = i;
            if (tp->size[small] < sz) {
                free(tp->blk[small]);
                tp->blk[small] = tp->blk[--tp->n];
                tp->size[small] = tp->size[tp->n];
            }
        }
        if (tp->n < TMP_CACHED) {
            tp->blk[tp->n] = b;
            tp->size[tp->n++] = sz;
            b = NULL;
        }
        pthread_mutex_unlock(&tp->mu);
    }
    free(b);
}

void core_tmp_release(passion_ctx *ctx)
{
    struct core_tmp_pool *tp = ctx ? ctx->tmp : NULL;
    if (!tp)
        return;
    for (int i = 0; i < tp->n; i++)
        free(tp->blk[i]);
    pthread_mutex_destroy(&tp->mu);
    free(tp);
    ctx->tmp = NULL;
}
