/*
 * io_req.c - one request on a file handle, below both io.c (which loops,
 * counts and reports) and the engine (which runs requests asynchronously):
 * a single driver call with O_DIRECT alignment (core_io_once and the span
 * of its bounce buffer, core_io_bounce_span), and the outcome of a request
 * as a code and a detail (core_io_fail, core_io_op_done), written in this
 * one place for synchronous, batched and asynchronous requests.
 */
#include "core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * The one place where a failed request becomes a code and a detail, for
 * synchronous, batched and asynchronous requests alike. e: a positive
 * errno, or CORE_EOF (a read that met the end of the file).
 */
int core_io_fail(core_fh *fh, const char *how, int write, int64_t off,
                 int64_t len, int e)
{
    if (e == CORE_EOF)
        return core_err(fh->ctx, PASSION_ESHORT,
                        "%sread %s at offset %lld: end of file with %lld "
                        "bytes still wanted", how, fh->path, (long long)off,
                        (long long)len);
    return core_err(fh->ctx, core_errno_code(e),
                    "%s%s %s at offset %lld (%lld bytes): %s", how,
                    write ? "write" : "read", fh->path, (long long)off,
                    (long long)len, strerror(e));
}

int core_io_bounce_span(const core_fh *fh, const void *buf, int64_t len,
                        int64_t off, int64_t limit, int64_t *a0,
                        int64_t *alen)
{
    const int64_t A = fh->align;
    if (A <= 1 || ((uintptr_t)buf % (uintptr_t)A == 0 && len % A == 0 &&
                   off % A == 0))
        return 0;
    int64_t s = off / A * A, e = (off + len + A - 1) / A * A;
    if (e - s > limit)
        e = s + limit / A * A;
    *a0 = s;
    *alen = e - s;
    return 1;
}

int64_t core_io_once(core_fh *fh, int write, void *buf, int64_t len,
                     int64_t off)
{
    if (len > CORE_MAXREQ)
        len = CORE_MAXREQ;
    int64_t a0, alen;
    if (write || !core_io_bounce_span(fh, buf, len, off, CORE_BOUNCE, &a0,
                                      &alen))
        return write ? fh->ops->pwrite(fh, buf, len, off)
                     : fh->ops->pread(fh, buf, len, off);
    void *b;
    if (core_alloc_fault(fh->ctx) ||
        posix_memalign(&b, (size_t)fh->align, (size_t)alen))
        return -ENOMEM;
    /* a short count that stops before the wanted bytes is not the end of
       the file: read on into the bounce */
    int64_t n, got = 0;
    do {
        n = fh->ops->pread(fh, (char *)b + got, alen - got, a0 + got);
        if (n > 0)
            got += n;
    } while ((n > 0 || n == -EINTR) && got > 0 && got <= off - a0);
    if (n >= 0 || got > off - a0) {
        n = got - (off - a0);
        if (n < 0)
            n = 0;
        if (n > len)
            n = len;
        memcpy(buf, (char *)b + (off - a0), (size_t)n);
    }
    free(b);
    return n;
}

/* Called by the engine on the calling thread when an op is complete:
   count it and turn its outcome into a code. */
void core_io_op_done(core_op *op)
{
    passion_ctx *ctx = op->fh->ctx;
    ctx->cnt.io_calls += (uint64_t)op->calls;
    if (op->write)
        ctx->cnt.bytes_written += (uint64_t)op->done;
    else
        ctx->cnt.bytes_read += (uint64_t)op->done;
    op->rc = op->err ? core_io_fail(op->fh, "asynchronous ", op->write,
                               op->off + op->done, op->len - op->done,
                               op->err)
                     : PASSION_OK;
}
