/*
 * io.c - the I/O driver table and the calls every layer uses on top of it.
 *
 * Drivers do single requests and may return short counts; here we loop on
 * short counts and EINTR, count each request in the context's counters,
 * turn errno into passion codes and write the detail (path, offset): the
 * one place that does so for synchronous, batched and asynchronous
 * requests (the engine hands completed ops to core_io_op_done on the
 * calling thread). O_DIRECT alignment is also done once, here: unaligned
 * reads on an aligned handle go through an aligned bounce buffer of
 * staging memory, within the memory budget (core_io_once in io_req.c; the
 * engine's ring uses the same core_io_bounce_span).
 * Batched reads go to the context's engine, so that one io_uring ring
 * serves them and the asynchronous requests.
 */
#include "core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The drivers this build has. An entry names its driver by its id (enum
   passion_driver) alone: the name is names.c's. A value without an entry
   is a driver of test builds only (fault); the options refuse it. */
static const core_driver_ops *const drivers[] = {
    &core_drv_posix,
    &core_drv_mpiio,
#ifdef PASSION_TEST_HOOKS
    &core_drv_fault, /* a test build's */
#endif
};

const core_driver_ops *core_driver_get(int id)
{
    for (size_t i = 0; i < sizeof drivers / sizeof drivers[0]; i++)
        if (drivers[i]->id == id)
            return drivers[i];
    return NULL;
}

int core_io_open(passion_ctx *ctx, const char *path, int flags, core_fh **fh)
{
    const core_driver_ops *ops = core_driver_get(ctx->opt.driver);
    *fh = NULL;
    if (!ops)
        return core_err(ctx, PASSION_EINVAL, "unknown driver %d",
                        ctx->opt.driver);
    int rc = ops->open(ctx, path, flags, ctx->opt.direct_io, fh);
    if (rc < 0)
        return core_err(ctx, core_errno_code(-rc), "open %s (%s driver): %s",
                        path, passion_driver_name(ops->id), strerror(-rc));
    (*fh)->ops = ops;
    (*fh)->ctx = ctx;
    (*fh)->path = core_strdup(ctx, path);
    if (!(*fh)->path) {
        ops->close(*fh);
        *fh = NULL;
        return core_err(ctx, PASSION_ENOMEM, "open %s: out of memory", path);
    }
    return PASSION_OK;
}

int core_io_close(core_fh *fh)
{
    if (!fh)
        return PASSION_OK;
    passion_ctx *ctx = fh->ctx;
    char *path = fh->path;
    int rc = fh->ops->close(fh);
    if (rc < 0)
        rc = core_err(ctx, core_errno_code(-rc), "close %s: %s", path,
                      strerror(-rc));
    core_free(ctx, path);
    return rc;
}

static int io_rw(core_fh *fh, int write, char *p, int64_t len, int64_t off)
{
    passion_ctx *ctx = fh->ctx;
    if (write)
        CORE_CHAOS(IO_WRITE);
    else
        CORE_CHAOS(IO_READ);
    double t0 = core_now();
    int rc = PASSION_OK;
    const int64_t len0 = len;
    while (len > 0) {
        int64_t n = core_io_once(fh, write, p, len, off);
        ctx->cnt.io_calls++;
        if (n == -EINTR)
            continue;
        if (n <= 0) {
            rc = core_io_fail(fh, "", write, off, len,
                         n < 0 ? (int)-n : write ? ENOSPC : CORE_EOF);
            break;
        }
        if (write)
            ctx->cnt.bytes_written += (uint64_t)n;
        else
            ctx->cnt.bytes_read += (uint64_t)n;
        p += n;
        off += n;
        len -= n;
    }
    double dt = core_now() - t0;
    ctx->cnt.t_io += dt;
    if (!write && !rc && len0 > CORE_STREAM_MIN) {
        ctx->stream_bytes += (uint64_t)len0;
        ctx->stream_t += dt;
    }
    return rc;
}

int core_io_read(core_fh *fh, void *buf, int64_t len, int64_t off)
{
    return io_rw(fh, 0, buf, len, off);
}

int core_io_write(core_fh *fh, const void *buf, int64_t len, int64_t off)
{
    return io_rw(fh, 1, (char *)buf, len, off);
}

static int io_check(core_fh *fh, int rc, const char *what)
{
    if (rc < 0)
        return core_err(fh->ctx, core_errno_code(-rc), "%s %s: %s", what,
                        fh->path, strerror(-rc));
    return PASSION_OK;
}

int core_io_size(core_fh *fh, int64_t *bytes)
{
    return io_check(fh, fh->ops->size(fh, bytes), "size of");
}

int64_t core_io_stripe(core_fh *fh)
{
    if (fh->stripe > 0)
        return fh->stripe;
    int64_t s = fh->ops->stripe ? fh->ops->stripe(fh) : 0;
    struct stat st;
    if (s <= 0 && fh->path && stat(fh->path, &st) == 0 && st.st_blksize > 0 &&
        st.st_blksize <= (1L << 30))
        s = (int64_t)st.st_blksize;
    fh->stripe = s > 0 ? s : 4096;
    return fh->stripe;
}

int core_io_resize(core_fh *fh, int64_t bytes)
{
    return io_check(fh, fh->ops->resize(fh, bytes), "resize");
}

int core_io_sync(core_fh *fh)
{
    return io_check(fh, fh->ops->sync(fh), "sync");
}

int core_io_drop_cache(core_fh *fh)
{
    return io_check(fh, fh->ops->drop_cache(fh), "drop cache of");
}

int core_io_cached(core_fh *fh, int64_t lo, int64_t hi)
{
    return fh->ops->cached && hi > lo ? fh->ops->cached(fh, lo, hi) : -1;
}

int64_t core_io_readahead(core_fh *fh)
{
    return fh->ops->readahead ? fh->ops->readahead(fh) : 0;
}

int core_io_advise(core_fh *fh, int64_t off, int64_t len, int advice)
{
    return fh->ops->advise && len > 0 ? fh->ops->advise(fh, off, len, advice)
                                      : 0;
}

void core_io_measure(core_fh *fh, int64_t lo, int64_t hi, double *lat,
                     double *bw, int64_t *bw_len)
{
    passion_ctx *ctx = fh->ctx;
    int64_t len = bw_len ? *bw_len : 0;
    *lat = 0;
    if (bw)
        *bw = 0;
    if (bw_len)
        *bw_len = 0;
    /* within what the caller (a collective call's descriptors) left of
       the budget */
    int64_t left = ctx->opt.memory_budget - ctx->staging_now;
    int64_t big = left < (1 << 20) ? left / CORE_ALIGN * CORE_ALIGN
                                   : (1 << 20);
    if (!fh->ops->measure || big < CORE_ALIGN)
        return;
    char *buf = core_stage_alloc(ctx, big);
    if (!buf)
        return;
    fh->ops->measure(fh, lo, hi, buf, big, lat, bw, &len);
    core_stage_free(ctx, buf, big);
    if (bw_len)
        *bw_len = len;
}

/* Engine state query (engine.c): 0 when io_uring is kept out. */
CORE_HIDDEN int core_engine_may_ring(const passion_ctx *ctx);

int core_io_concurrency(const passion_ctx *ctx)
{
    const core_driver_ops *ops = core_driver_get(ctx->opt.driver);
    if (!ops || !ops->ring_fd || !core_engine_may_ring(ctx))
        return 1;
    return ctx->opt.io_concurrency > 0 ? ctx->opt.io_concurrency : 8;
}

typedef struct batch_wait {
    int64_t left;
} batch_wait;

static void batch_done(core_op *op)
{
    ((batch_wait *)op->arg)->left--;
}

#define IO_BATCH_FEW 8

/* A long buffered read in a batch (CORE_STREAM_MIN): kept out of the
   ring and read as a stream (the posix driver's pieces), since the
   ring's concurrent requests defeat the kernel's readahead (buffered
   reads in flight together read slower than the same reads one at a
   time). */
static int is_stream(core_fh *fh, const core_iov *v, int write)
{
    int buffered = 0;
    return !write && v->len > CORE_STREAM_MIN && fh->ops->ring_fd &&
           fh->ops->ring_fd(fh, 0, v->buf, v->len, v->off, &buffered) >= 0 &&
           buffered;
}

static int io_batch(core_fh *fh, core_iov *v, int n, int write)
{
    passion_ctx *ctx = fh->ctx;
    CORE_CHAOS(IO_BATCH);
    int kind = PASSION_ENGINE_THREAD;
    if (n > 1 && fh->ops->ring_fd && core_io_concurrency(ctx) > 1 &&
        core_engine_kind(ctx, &kind))
        kind = PASSION_ENGINE_THREAD; /* no engine: read one by one */
    if (kind != PASSION_ENGINE_URING) {
        int rc = PASSION_OK;
        for (int i = 0; i < n && !rc; i++)
            rc = write ? core_io_write(fh, v[i].buf, v[i].len, v[i].off)
                       : core_io_read(fh, v[i].buf, v[i].len, v[i].off);
        return rc;
    }
    /* a few pieces: the table on the stack, without the allocator (a
       tiny call makes one allocation at most: test_tiny) */
    core_op few[IO_BATCH_FEW];
    core_op *ops = n <= IO_BATCH_FEW
                       ? few
                       : core_tmp_alloc(ctx, (size_t)n * sizeof *ops, 1);
    if (ops)
        memset(ops, 0, (size_t)n * sizeof *ops);
    if (!ops)
        return core_err(ctx, PASSION_ENOMEM, "batched %s of %s",
                        write ? "write" : "read", fh->path);
    double t0 = core_now();
    batch_wait bw = {0};
    int rc = PASSION_OK;
    core_aio_plug(ctx); /* the whole batch in one system call */
    for (int i = 0; i < n && !rc; i++) {
        if (is_stream(fh, &v[i], write)) {
            ops[i].calls = -1; /* read below, on this thread */
            continue;
        }
        core_op *op = &ops[i];
        op->write = write;
        op->buf = v[i].buf;
        op->len = v[i].len;
        op->off = v[i].off;
        /* page-cache hits are copied in the submit (writes: where the
           file system takes buffered writes without blocking) */
        op->noasync = 1;
        op->fn = batch_done;
        op->arg = &bw;
        if (!(rc = core_aio_submit(fh, op)))
            bw.left++;
    }
    core_aio_unplug(ctx);
    /* the streams one after another while the ring holds the rest (their
       time is the batch's, counted below once) */
    const double tio = ctx->cnt.t_io;
    for (int i = 0; i < n && !rc; i++)
        if (ops[i].calls == -1) {
            rc = core_io_read(fh, v[i].buf, v[i].len, v[i].off);
            ops[i].calls = 0;
            ops[i].done = rc ? 0 : v[i].len;
        }
    ctx->cnt.t_io = tio;
    while (bw.left > 0)
        if (core_aio_progress(ctx, 1) <= 0) {
            rc = core_err(ctx, PASSION_EIO, "batched %s of %s: the "
                          "engine stopped answering",
                          write ? "write" : "read", fh->path);
            break; /* cannot happen while ops are in flight */
        }
    ctx->cnt.t_io += core_now() - t0;
    for (int i = 0; i < n && !rc; i++) {
        v[i].res = ops[i].done;
        if (ops[i].err) /* the first failing piece's detail */
            rc = core_io_fail(fh, "", write, ops[i].off + ops[i].done,
                         ops[i].len - ops[i].done, ops[i].err);
    }
    if (bw.left == 0 && ops != few)
        core_tmp_free(ctx, ops);
    return rc;
}

int core_io_read_batch(core_fh *fh, core_iov *v, int n)
{
    return io_batch(fh, v, n, 0);
}

int core_io_write_batch(core_fh *fh, core_iov *v, int n)
{
    return io_batch(fh, v, n, 1);
}

/* ---- atomic creation: a temporary renamed into place ---- */

char *core_io_temp_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
    char *t = NULL;
    if (asprintf(&t, "%.*s.%s" CORE_TEMP_SUFFIX, (int)dl, path,
                 path + dl) < 0)
        return NULL;
    return t;
}

int core_io_publish(core_fh *fh, const char *path, int noreplace)
{
    passion_ctx *ctx = fh->ctx;
    const core_driver_ops *ops = fh->ops;
    char *np = core_strdup(ctx, path);
    if (!np)
        return core_err(ctx, PASSION_ENOMEM, "file name");
    /* the data and size first, then the name, then the name's directory */
    int rc = ops->sync(fh);
    if (rc < 0) {
        core_free(ctx, np);
        return core_err(ctx, core_errno_code(-rc), "sync %s: %s", fh->path,
                        strerror(-rc));
    }
    rc = ops->rename ? ops->rename(ctx, fh->path, path, noreplace)
                     : -ENOTSUP;
    if (rc < 0) {
        core_free(ctx, np);
        return core_err(ctx, core_errno_code(-rc), "rename %s to %s: %s",
                        fh->path, path, strerror(-rc));
    }
    free(fh->path);
    fh->path = np;
    rc = ops->sync_dir ? ops->sync_dir(ctx, path) : -ENOTSUP;
    if (rc < 0)
        return core_err(ctx, core_errno_code(-rc),
                        "sync the directory of %s: %s", path, strerror(-rc));
    return PASSION_OK;
}

int core_io_discard(passion_ctx *ctx, const char *temp)
{
    /* best effort, after a failure whose detail must stay: no core_err */
    const core_driver_ops *ops = core_driver_get(ctx->opt.driver);
    return ops && ops->unlink ? ops->unlink(ctx, temp) : -ENOTSUP;
}
