/*
 * drv_fault.c - test-only driver: the posix driver, except that the Nth
 * read or write request of the context (option fault_fail_at, counted from
 * 1 across all files of the context) fails with fault_errno, and with
 * fault_short every request moves at most half of what was asked (at least
 * one byte), to exercise the callers' short-count loops. fault_ranks limits
 * the faults to one rank.
 *
 * Access: synchronous requests; batched reads one by one and asynchronous
 * requests on the engine's worker thread (no ring_fd: every request goes
 * through fault_pread / fault_pwrite, so that every one can fail); the
 * page-cache probe is the posix driver's; no advice, no calibration.
 */
#include "core.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

/* The driver's state in the context's driver slot (CORE_EXT_DRV), made by
   the first open on the calling thread. Requests may come from the
   calling thread and the engine's worker at once: the count is atomic. */
typedef struct fault_state {
    _Atomic int64_t calls; /* requests seen */
} fault_state;

static void state_free(passion_ctx *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static fault_state *state(passion_ctx *ctx)
{
    return ctx->ext[CORE_EXT_DRV];
}

void core_fault_rearm(passion_ctx *ctx)
{
    if (state(ctx))
        atomic_store(&state(ctx)->calls, 0);
}

/* (here, not in alloc.c: it arms the I/O fault of this driver too) */
void core_fault_arm(passion_ctx *ctx, int64_t alloc_at, int64_t io_at,
                    int ranks)
{
    ctx->opt.fault_alloc_at = alloc_at > 0 ? alloc_at : 0;
    ctx->opt.fault_fail_at = io_at > 0 ? io_at : 0;
    ctx->opt.fault_ranks = ranks;
    __atomic_store_n(&ctx->fault_allocs, 0, __ATOMIC_RELAXED);
    core_fault_rearm(ctx);
}

int64_t core_fault_calls(passion_ctx *ctx)
{
    return state(ctx) ? atomic_load(&state(ctx)->calls) : 0;
}

static int faulty(passion_ctx *ctx)
{
    return ctx->opt.fault_ranks < 0 || ctx->opt.fault_ranks == ctx->rank;
}

/* 1 if this request must fail: counts requests per context. */
static int fail_now(passion_ctx *ctx)
{
    if (!faulty(ctx) || ctx->opt.fault_fail_at <= 0 || !state(ctx))
        return 0;
    return atomic_fetch_add(&state(ctx)->calls, 1) + 1 ==
           ctx->opt.fault_fail_at;
}

static int64_t shorten(passion_ctx *ctx, int64_t len)
{
    if (faulty(ctx) && ctx->opt.fault_short && len > 1)
        return len / 2;
    return len;
}

static int fault_open(passion_ctx *ctx, const char *path, int flags,
                      int direct, core_fh **out)
{
    if (!ctx->ext[CORE_EXT_DRV]) {
        fault_state *st = core_calloc(ctx, 1, sizeof *st);
        if (!st)
            return -ENOMEM;
        atomic_init(&st->calls, 0);
        ctx->ext[CORE_EXT_DRV] = st;
        ctx->ext_free[CORE_EXT_DRV] = state_free;
    }
    return core_drv_posix.open(ctx, path, flags, direct, out);
}

static int64_t fault_pread(core_fh *fh, void *buf, int64_t len, int64_t off)
{
    if (fail_now(fh->ctx))
        return -fh->ctx->opt.fault_errno;
    return core_drv_posix.pread(fh, buf, shorten(fh->ctx, len), off);
}

static int64_t fault_pwrite(core_fh *fh, const void *buf, int64_t len,
                            int64_t off)
{
    if (fail_now(fh->ctx))
        return -fh->ctx->opt.fault_errno;
    return core_drv_posix.pwrite(fh, buf, shorten(fh->ctx, len), off);
}

static int fault_size(core_fh *fh, int64_t *bytes)
{
    return core_drv_posix.size(fh, bytes);
}

static int fault_resize(core_fh *fh, int64_t bytes)
{
    return core_drv_posix.resize(fh, bytes);
}

static int fault_sync(core_fh *fh)
{
    return core_drv_posix.sync(fh);
}

static int fault_drop_cache(core_fh *fh)
{
    return core_drv_posix.drop_cache(fh);
}

static int fault_close(core_fh *fh)
{
    return core_drv_posix.close(fh);
}

static int fault_cached(core_fh *fh, int64_t lo, int64_t hi)
{
    return core_drv_posix.cached(fh, lo, hi);
}

const core_driver_ops core_drv_fault = {
    .id = PASSION_DRIVER_FAULT,
    .open = fault_open,
    .pread = fault_pread,
    .pwrite = fault_pwrite,
    .size = fault_size,
    .resize = fault_resize,
    .sync = fault_sync,
    .drop_cache = fault_drop_cache,
    .close = fault_close,
    .cached = fault_cached,
    .needs_mpi_thread = 0, /* posix calls underneath: any thread */
    /* the files live on a posix file system: the same path operations */
    .rename = core_posix_rename,
    .unlink = core_posix_unlink,
    .sync_dir = core_posix_sync_dir,
};
