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

/*
 * A bounce of what the budget leaves, but none below CORE_BOUNCE_MIN (or
 * the whole span when that is smaller): a read then goes unaligned to the
 * driver's buffered descriptor in one request. A bounce of the one page a
 * full budget left would split a 2 MiB read into 512 O_DIRECT reads of
 * 4 KiB, and a memory-limited slab iteration with prefetch would then
 * spend its time waiting on them.
 */
char *core_io_bounce_get(core_fh *fh, int64_t want, int64_t *got)
{
    passion_ctx *ctx = fh->ctx;
    const int64_t A = fh->align;
    int64_t left = ctx->opt.memory_budget - ctx->staging_now;
    int64_t n = want <= left ? want : left / A * A;
    int64_t floor = want < CORE_BOUNCE_MIN ? want : CORE_BOUNCE_MIN;
    *got = 0;
    if (n < A || n < floor)
        return NULL;
    char *b = core_stage_alloc(ctx, n);
    if (b)
        *got = n;
    return b;
}

int64_t core_io_once_via(core_fh *fh, int write, void *buf, int64_t len,
                         int64_t off, char *bounce, int64_t bsize)
{
    if (len > CORE_MAXREQ)
        len = CORE_MAXREQ;
    int64_t a0, alen;
    if (write || !bounce ||
        !core_io_bounce_span(fh, buf, len, off, bsize, &a0, &alen))
        /* aligned, a write, or no bounce: the driver takes it as it is
           (posix: an unaligned one through its buffered descriptor) */
        return write ? fh->ops->pwrite(fh, buf, len, off)
                     : fh->ops->pread(fh, buf, len, off);
    /* a short count that stops before the wanted bytes is not the end of
       the file: read on into the bounce */
    int64_t n, got = 0;
    do {
        n = fh->ops->pread(fh, bounce + got, alen - got, a0 + got);
        if (n > 0)
            got += n;
    } while ((n > 0 || n == -EINTR) && got > 0 && got <= off - a0);
    if (n >= 0 || got > off - a0) {
        n = got - (off - a0);
        if (n < 0)
            n = 0;
        if (n > len)
            n = len;
        memcpy(buf, bounce + (off - a0), (size_t)n);
    }
    return n;
}

int core_io_shift_plan(core_fh *fh, char *buf, int64_t len, int64_t off,
                       core_shift *s)
{
    const int64_t A = fh->align;
    memset(s, 0, sizeof *s);
    if (A <= 1 || len <= 0 ||
        ((uintptr_t)buf % (uintptr_t)A == 0 && len % A == 0 && off % A == 0))
        return 0;
    int64_t a0 = off / A * A, a1 = (off + len + A - 1) / A * A;
    uintptr_t b = (uintptr_t)buf, m = (b + (uintptr_t)A - 1) / A * A;
    if (m >= b + (uintptr_t)len)
        return 0;
    /* the middle: as many of the span's pages as fit in buf from its first
       aligned address; the first page (when any is left over) and the
       rest go to the edge */
    int64_t room = (int64_t)((b + (uintptr_t)len - m) / (uintptr_t)A);
    int64_t np = (a1 - a0) / A, k = room < np ? room : np, e = np - k;
    if (k < 1)
        return 0;
    if (e > 0 && A == 4096 &&
        (s->edge = core_stage_edge_get(fh->ctx, (int)e)) != NULL)
        s->pooled = 1;
    else if (e > 0) {
        int64_t got = 0;
        s->edge = core_io_bounce_get(fh, e * A, &got);
        if (s->edge && got != e * A) {
            core_stage_free(fh->ctx, s->edge, got);
            s->edge = NULL;
        }
        if (!s->edge)
            return 0;
    }
    s->a0 = a0;
    s->alen = a1 - a0;
    s->land = (char *)m;
    s->mid = k * A;
    s->elen = e * A;
    s->ehead = e > 0 ? A : 0;
    return 1;
}

int core_io_shift_iov(const core_shift *s, int64_t done, struct iovec *iov)
{
    char *p[3] = {s->edge, s->land, s->edge + s->ehead};
    int64_t n[3] = {s->ehead, s->mid, s->elen - s->ehead};
    int k = 0;
    for (int i = 0; i < 3; i++) {
        if (done >= n[i]) {
            done -= n[i];
            continue;
        }
        iov[k].iov_base = p[i] + done;
        iov[k].iov_len = (size_t)(n[i] - done);
        k++;
        done = 0;
    }
    return k;
}

int64_t core_io_shift_read(core_fh *fh, const core_shift *s, int64_t got,
                           int64_t *calls)
{
    const int64_t A = fh->align;
    int64_t r = 0;
    while (got < s->alen) {
        struct iovec iov[3];
        int n = core_io_shift_iov(s, got, iov);
        /* the segments are aligned while got is; after a short count off
           the alignment (the end of the file, or a driver's short count)
           the rest goes segment by segment to pread, which takes it
           unaligned (posix: the buffered descriptor, which returns 0 at
           the end of the file where O_DIRECT would refuse the offset) */
        if (fh->ops->preadv && got % A == 0)
            r = fh->ops->preadv(fh, iov, n, s->a0 + got);
        else
            r = fh->ops->pread(fh, iov[0].iov_base, (int64_t)iov[0].iov_len,
                               s->a0 + got);
        (*calls)++;
        if (r == -EINTR || r == -EAGAIN)
            continue;
        if (r <= 0)
            break;
        got += r;
    }
    return r < 0 ? r : got;
}

/* Copy the bytes of file range [foff, foff + flen) held at src that lie in
   [off, off + n) to their place in buf. */
static void shift_place(char *buf, int64_t off, int64_t n, const char *src,
                        int64_t foff, int64_t flen)
{
    int64_t lo = foff > off ? foff : off;
    int64_t hi = foff + flen < off + n ? foff + flen : off + n;
    if (hi > lo)
        memmove(buf + (lo - off), src + (lo - foff), (size_t)(hi - lo));
}

int64_t core_io_shift_done(const core_shift *s, char *buf, int64_t len,
                           int64_t off, int64_t got)
{
    int64_t n = s->a0 + got - off;
    if (n < 0)
        n = 0;
    if (n > len)
        n = len;
    /* the middle first: where it landed may be where the edges' bytes go
       (the edges' places and the middle's are disjoint) */
    shift_place(buf, off, n, s->land, s->a0 + s->ehead, s->mid);
    shift_place(buf, off, n, s->edge, s->a0, s->ehead);
    shift_place(buf, off, n, s->edge + s->ehead, s->a0 + s->ehead + s->mid,
                s->elen - s->ehead);
    return n;
}

void core_io_shift_free(core_fh *fh, core_shift *s)
{
    if (s->pooled)
        core_stage_edge_put(fh->ctx, s->edge, (int)(s->elen / 4096));
    else
        core_stage_free(fh->ctx, s->edge, s->elen);
    s->edge = NULL;
    s->elen = 0;
    s->pooled = 0;
}

int64_t core_io_once(core_fh *fh, int write, void *buf, int64_t len,
                     int64_t off)
{
    int64_t a0, alen, bsize = 0;
    char *b = NULL;
    if (len > CORE_MAXREQ)
        len = CORE_MAXREQ;
    if (!write && core_io_bounce_span(fh, buf, len, off, CORE_BOUNCE, &a0,
                                      &alen)) {
        b = core_io_bounce_get(fh, alen, &bsize);
        core_shift sh;
        if (!b && core_io_shift_plan(fh, buf, len, off, &sh)) {
            /* no bounce: O_DIRECT all the same, shifted in buf */
            int64_t calls = 0, got = core_io_shift_read(fh, &sh, 0, &calls);
            int64_t n = got < 0 ? got
                                : core_io_shift_done(&sh, buf, len, off, got);
            core_io_shift_free(fh, &sh);
            return n;
        }
    }
    int64_t n = core_io_once_via(fh, write, buf, len, off, b, bsize);
    core_stage_free(fh->ctx, b, bsize);
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
