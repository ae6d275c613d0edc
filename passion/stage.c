/*
 * stage.c - staging memory: buffers counted against the memory budget and
 * kept in the context between calls.
 *
 * Why keep them: a fresh buffer of tens of MiB costs one page fault per
 * 4 KiB page on first touch, which can dominate a sieved read of a few
 * MiB. Freed blocks stay mapped in a small
 * per-context cache and serve later requests of a similar size.
 *
 * Invariants: staging_now counts the bytes the callers asked for (a
 * reused block larger than the request counts at the request, so that a
 * caller that plans its allocations against the budget, as a collective
 * call does, stays within it; the difference is `slack`); the real bytes
 * of the blocks in use plus the blocks cached never exceed
 * max(memory_budget, what is in use): cached blocks are released before a
 * request would cross the budget; every block is 4 KiB aligned
 * (O_DIRECT takes it as it is), 2 MiB aligned from 2 MiB on. The cache is guarded by a mutex because
 * helper threads may free staging.
 *
 * Huge pages: a block of 2 MiB or more starts on a 2 MiB boundary and its
 * whole 2 MiB pages are advised MADV_HUGEPAGE (transparent huge pages, in
 * the kernel's madvise mode, this machine's default). An O_DIRECT request
 * becomes one block-layer segment per physically contiguous range, so on
 * 4 KiB pages a 1 MiB request is 256 segments, and this VM's virtio disk
 * (no indirect descriptors, 254 segments per request) fills its queue with
 * one such request, where a buffer on huge pages makes it a few segments.
 * First touch costs one fault per 2 MiB instead of 512. Only whole huge pages inside the block are advised, so
 * the block never takes more memory than its bytes; where the kernel has
 * no huge page at hand it uses small ones, as before.
 */
#include "core.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define STAGE_CACHED 12
#define STAGE_HUGE (2LL << 20) /* x86-64's transparent huge page */

typedef struct stage_blk {
    void *p;
    int64_t bytes;   /* real size */
    int64_t counted; /* counted in staging_now (live blocks) */
} stage_blk;

struct core_stage_pool {
    pthread_mutex_t mu;
    stage_blk cached[STAGE_CACHED];
    int ncached;
    int64_t cached_bytes;
    int64_t slack;   /* real minus counted bytes of the live blocks */
    stage_blk *live; /* blocks handed out whose real size differs */
    int nlive, cap;
    char *edge;          /* CORE_EDGE_PAGES pages, or NULL before use */
    uint32_t edge_used;  /* bit i: page i handed out */
};

static struct core_stage_pool *pool_get(passion_ctx *ctx)
{
    if (!ctx->stage) {
        struct core_stage_pool *sp = core_calloc(ctx, 1, sizeof *sp);
        if (!sp)
            return NULL;
        pthread_mutex_init(&sp->mu, NULL);
        ctx->stage = sp;
    }
    return ctx->stage;
}

/* Free a block; a huge one's advice undone first, so that memory the C
   library hands out again for small objects stays on small pages. */
static void blk_free(void *p, int64_t bytes)
{
#ifdef MADV_NOHUGEPAGE
    if (p && bytes >= STAGE_HUGE)
        (void)madvise(p, (size_t)(bytes / STAGE_HUGE * STAGE_HUGE),
                      MADV_NOHUGEPAGE);
#endif
    free(p);
}

static void drop_cached(struct core_stage_pool *sp, int i)
{
    blk_free(sp->cached[i].p, sp->cached[i].bytes);
    sp->cached_bytes -= sp->cached[i].bytes;
    sp->cached[i] = sp->cached[--sp->ncached];
}

static void account(passion_ctx *ctx, int64_t bytes)
{
    ctx->staging_now += bytes;
    if ((uint64_t)ctx->staging_now > ctx->cnt.peak_staging)
        ctx->cnt.peak_staging = (uint64_t)ctx->staging_now;
}

/* Record that p (of real size bytes, counted as counted) is in use; 0 on
   success. */
static int live_add(struct core_stage_pool *sp, void *p, int64_t bytes,
                    int64_t counted)
{
    if (sp->nlive == sp->cap) {
        int cap = sp->cap ? 2 * sp->cap : 8;
        stage_blk *n = realloc(sp->live, (size_t)cap * sizeof *n);
        if (!n)
            return -1;
        sp->live = n;
        sp->cap = cap;
    }
    sp->live[sp->nlive++] = (stage_blk){p, bytes, counted};
    sp->slack += bytes - counted;
    return 0;
}

void *core_stage_alloc(passion_ctx *ctx, int64_t bytes)
{
    if (bytes <= 0)
        bytes = 1;
    /* an injected failure (fault_alloc_at), cached block or not */
    if (core_alloc_fault(ctx))
        return NULL;
    struct core_stage_pool *sp = pool_get(ctx);
    if (!sp)
        return NULL;
    int64_t budget = ctx->opt.memory_budget;
    void *p = NULL;
    pthread_mutex_lock(&sp->mu);
    /* best fit among the cached blocks that keep us within the budget */
    int best = -1;
    int64_t real = ctx->staging_now + sp->slack;
    int64_t cap = real + bytes > budget ? real + bytes : budget;
    for (int i = 0; i < sp->ncached; i++) {
        int64_t b = sp->cached[i].bytes;
        if (b >= bytes && real + b <= cap &&
            (best < 0 || b < sp->cached[best].bytes))
            best = i;
    }
    if (best >= 0 &&
        !live_add(sp, sp->cached[best].p, sp->cached[best].bytes, bytes)) {
        stage_blk blk = sp->cached[best];
        sp->cached_bytes -= blk.bytes;
        sp->cached[best] = sp->cached[--sp->ncached];
        account(ctx, bytes);
        pthread_mutex_unlock(&sp->mu);
        return blk.p;
    }
    /* release cached blocks until the new one fits beside them */
    while (sp->ncached &&
           real + sp->cached_bytes + bytes > budget) {
        int big = 0;
        for (int i = 1; i < sp->ncached; i++)
            if (sp->cached[i].bytes > sp->cached[big].bytes)
                big = i;
        drop_cached(sp, big);
    }
    int huge = bytes >= STAGE_HUGE;
    if (!posix_memalign(&p, huge ? STAGE_HUGE : 4096, (size_t)bytes)) {
#ifdef MADV_HUGEPAGE
        /* advice only: a kernel without THP refuses it, nothing changes */
        if (huge)
            (void)madvise(p, (size_t)(bytes / STAGE_HUGE * STAGE_HUGE),
                          MADV_HUGEPAGE);
#endif
        if (live_add(sp, p, bytes, bytes)) {
            blk_free(p, bytes);
            p = NULL;
        } else {
            account(ctx, bytes);
        }
    }
    pthread_mutex_unlock(&sp->mu);
    return p;
}

void core_stage_free(passion_ctx *ctx, void *p, int64_t bytes)
{
    if (!p)
        return;
    struct core_stage_pool *sp = ctx->stage;
    pthread_mutex_lock(&sp->mu);
    int64_t real = bytes <= 0 ? 1 : bytes, counted = real;
    for (int i = sp->nlive - 1; i >= 0; i--)
        if (sp->live[i].p == p) {
            real = sp->live[i].bytes;
            counted = sp->live[i].counted;
            sp->slack -= real - counted;
            sp->live[i] = sp->live[--sp->nlive];
            break;
        }
    ctx->staging_now -= counted;
    /* keep it unless it alone is beyond the budget; the cache holds the
       STAGE_CACHED largest recent blocks */
    if (real <= ctx->opt.memory_budget) {
        if (sp->ncached == STAGE_CACHED) {
            int small = 0;
            for (int i = 1; i < sp->ncached; i++)
                if (sp->cached[i].bytes < sp->cached[small].bytes)
                    small = i;
            if (sp->cached[small].bytes < real)
                drop_cached(sp, small);
        }
        if (sp->ncached < STAGE_CACHED) {
            sp->cached[sp->ncached++] = (stage_blk){p, real, 0};
            sp->cached_bytes += real;
            p = NULL;
        }
    }
    pthread_mutex_unlock(&sp->mu);
    blk_free(p, real);
}

/*
 * The edge pool: a shifted O_DIRECT read (io_req.c) needs a page or three
 * beside the caller's buffer, also when the caller's own staging (slab
 * buffers as wide as it asked) has used the whole budget; a fixed
 * CORE_EDGE_PAGES pages per context serve them (the O_DIRECT
 * slab reads of bench-prefetch's 16384x16384 image, whose four slab
 * buffers exceed the 64 MiB budget, otherwise went through the buffered
 * descriptor).
 */
char *core_stage_edge_get(passion_ctx *ctx, int n)
{
    struct core_stage_pool *sp = pool_get(ctx);
    if (!sp || n < 1 || n > CORE_EDGE_PAGES)
        return NULL;
    char *p = NULL;
    pthread_mutex_lock(&sp->mu);
    if (!sp->edge) {
        void *e = NULL;
        if (!posix_memalign(&e, 4096, (size_t)CORE_EDGE_PAGES * 4096))
            sp->edge = e;
    }
    uint32_t want = n >= 32 ? UINT32_MAX : ((uint32_t)1 << n) - 1;
    for (int i = 0; sp->edge && i + n <= CORE_EDGE_PAGES; i++)
        if (!(sp->edge_used & (want << i))) {
            sp->edge_used |= want << i;
            p = sp->edge + (size_t)i * 4096;
            break;
        }
    pthread_mutex_unlock(&sp->mu);
    return p;
}

void core_stage_edge_put(passion_ctx *ctx, char *p, int n)
{
    struct core_stage_pool *sp = ctx->stage;
    if (!p || !sp)
        return;
    int i = (int)((p - sp->edge) / 4096);
    uint32_t want = n >= 32 ? UINT32_MAX : ((uint32_t)1 << n) - 1;
    pthread_mutex_lock(&sp->mu);
    sp->edge_used &= ~(want << i);
    pthread_mutex_unlock(&sp->mu);
}

void core_stage_release(passion_ctx *ctx)
{
    struct core_stage_pool *sp = ctx ? ctx->stage : NULL;
    if (!sp)
        return;
    free(sp->edge);
    while (sp->ncached)
        drop_cached(sp, 0);
    free(sp->live);
    pthread_mutex_destroy(&sp->mu);
    free(sp);
    ctx->stage = NULL;
}
