/*
 * io.c - the I/O driver table and the loops every layer uses on top of it.
 *
 * Drivers do single requests and may return short counts; here we loop on
 * short counts and EINTR, count each request in the context's counters,
 * turn errno into passion codes, and write the detail (path, offset).
 */
#include "core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const core_driver_ops *const drivers[] = {
    [PASSION_DRIVER_POSIX] = &core_drv_posix,
    [PASSION_DRIVER_MPIIO] = &core_drv_mpiio,
    [PASSION_DRIVER_FAULT] = &core_drv_fault,
};

const core_driver_ops *core_driver_get(int id)
{
    if (id < 0 || (size_t)id >= sizeof drivers / sizeof drivers[0])
        return NULL;
    return drivers[id];
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
                        path, ops->name, strerror(-rc));
    (*fh)->ops = ops;
    (*fh)->ctx = ctx;
    (*fh)->path = strdup(path);
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
    free(path);
    return rc;
}

int core_io_read(core_fh *fh, void *buf, int64_t len, int64_t off)
{
    passion_ctx *ctx = fh->ctx;
    char *p = buf;
    double t0 = core_now();
    int rc = PASSION_OK;
    while (len > 0) {
        int64_t n = fh->ops->pread(fh, p, len, off);
        ctx->cnt.io_calls++;
        if (n == -EINTR)
            continue;
        if (n < 0) {
            rc = core_err(ctx, core_errno_code((int)-n),
                          "read %s at offset %lld (%lld bytes): %s", fh->path,
                          (long long)off, (long long)len, strerror((int)-n));
            break;
        }
        if (n == 0) {
            rc = core_err(ctx, PASSION_ESHORT,
                          "read %s at offset %lld: end of file with %lld "
                          "bytes still wanted", fh->path, (long long)off,
                          (long long)len);
            break;
        }
        ctx->cnt.bytes_read += (uint64_t)n;
        p += n;
        off += n;
        len -= n;
    }
    ctx->cnt.t_io += core_now() - t0;
    return rc;
}

int core_io_write(core_fh *fh, const void *buf, int64_t len, int64_t off)
{
    passion_ctx *ctx = fh->ctx;
    const char *p = buf;
    double t0 = core_now();
    int rc = PASSION_OK;
    while (len > 0) {
        int64_t n = fh->ops->pwrite(fh, p, len, off);
        ctx->cnt.io_calls++;
        if (n == -EINTR)
            continue;
        if (n <= 0) {
            int e = n == 0 ? ENOSPC : (int)-n;
            rc = core_err(ctx, core_errno_code(e),
                          "write %s at offset %lld (%lld bytes): %s",
                          fh->path, (long long)off, (long long)len,
                          strerror(e));
            break;
        }
        ctx->cnt.bytes_written += (uint64_t)n;
        p += n;
        off += n;
        len -= n;
    }
    ctx->cnt.t_io += core_now() - t0;
    return rc;
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

int core_io_concurrency(const passion_ctx *ctx)
{
    const core_driver_ops *ops = core_driver_get(ctx->opt.driver);
    if (!ops || !ops->read_batch)
        return 1;
    return ctx->opt.io_concurrency > 0 ? ctx->opt.io_concurrency : 8;
}

int core_io_read_batch(core_fh *fh, core_iov *v, int n)
{
    passion_ctx *ctx = fh->ctx;
    int rc = PASSION_OK;
    int batched = n > 1 && fh->ops->read_batch &&
                  core_io_concurrency(ctx) > 1;
    if (batched) {
        double t0 = core_now();
        int e = fh->ops->read_batch(fh, v, n);
        ctx->cnt.t_io += core_now() - t0;
        batched = e == 0;
        if (e && e != -ENOSYS)
            return core_err(ctx, core_errno_code(-e),
                            "batched read of %s: %s", fh->path, strerror(-e));
    }
    for (int i = 0; i < n && !rc; i++) {
        int64_t done = 0;
        if (batched) {
            ctx->cnt.io_calls++;
            if (v[i].res < 0 && v[i].res != -EINTR)
                return core_err(ctx, core_errno_code((int)-v[i].res),
                                "read %s at offset %lld (%lld bytes): %s",
                                fh->path, (long long)v[i].off,
                                (long long)v[i].len,
                                strerror((int)-v[i].res));
            done = v[i].res > 0 ? v[i].res : 0;
            ctx->cnt.bytes_read += (uint64_t)done;
            if (done == v[i].len)
                continue;
        }
        /* one by one, or the rest of a short piece */
        rc = core_io_read(fh, (char *)v[i].buf + done, v[i].len - done,
                          v[i].off + done);
    }
    return rc;
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
    char *np = strdup(path);
    if (!np)
        return core_err(ctx, PASSION_ENOMEM, "file name");
    /* the data and size first, then the name, then the name's directory */
    int rc = ops->sync(fh);
    if (rc < 0) {
        free(np);
        return core_err(ctx, core_errno_code(-rc), "sync %s: %s", fh->path,
                        strerror(-rc));
    }
    rc = ops->rename ? ops->rename(ctx, fh->path, path, noreplace)
                     : -ENOTSUP;
    if (rc < 0) {
        free(np);
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
