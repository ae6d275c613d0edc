/*
 * drv_posix.c - the posix driver: pread/pwrite on a file descriptor, with
 * optional O_DIRECT.
 *
 * With O_DIRECT, requests whose buffer, offset and length are aligned go
 * straight to the device; unaligned reads go through an aligned bounce
 * buffer (the covering aligned range, at most POSIX_BOUNCE bytes per call,
 * so the caller's loop sees a short count), unaligned writes through a
 * second, buffered descriptor (the kernel flushes cached pages of a range
 * before direct I/O on it, so both views stay coherent).
 *
 * Batched reads (read_batch) go through a small io_uring ring per handle,
 * made on first use and guarded by a mutex, so that many requests are in
 * flight at once: a disk serves them concurrently, which hides most of
 * each request's latency. Without io_uring (or for unaligned O_DIRECT
 * pieces) the batch is refused with -ENOSYS and read one by one.
 */
#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#ifdef PASSION_HAVE_URING
#include <liburing.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define POSIX_ALIGN 4096
#define POSIX_BOUNCE (4 << 20)

#define POSIX_RING 64

typedef struct posix_fh {
    core_fh base;
    int fd;   /* buffered */
    int dfd;  /* O_DIRECT, or -1 */
    pthread_mutex_t lock; /* guards the ring */
    int ring_state;       /* 0 not tried, 1 ready, -1 unavailable */
#ifdef PASSION_HAVE_URING
    struct io_uring ring;
#endif
} posix_fh;

static int posix_open(passion_ctx *ctx, const char *path, int flags,
                      int direct, core_fh **out)
{
    (void)ctx;
    int of = (flags & CORE_O_RDWR) ? O_RDWR : O_RDONLY;
    if (flags & CORE_O_CREATE)
        of |= O_CREAT | O_RDWR;
    if (flags & CORE_O_TRUNC)
        of |= O_TRUNC;
    if ((flags & CORE_O_CREATE) && (flags & CORE_O_EXCL))
        of |= O_EXCL;
    posix_fh *h = calloc(1, sizeof *h);
    if (!h)
        return -ENOMEM;
    h->dfd = -1;
    pthread_mutex_init(&h->lock, NULL);
    h->fd = open(path, of | O_CLOEXEC, 0644);
    if (h->fd < 0) {
        int e = errno;
        free(h);
        return -e;
    }
    if (direct) {
        h->dfd = open(path, (of & ~(O_CREAT | O_TRUNC | O_EXCL)) | O_DIRECT |
                                O_CLOEXEC);
        if (h->dfd < 0) {
            int e = errno;
            close(h->fd);
            free(h);
            return -e;
        }
    }
    *out = &h->base;
    return 0;
}

static int aligned(const void *buf, int64_t len, int64_t off)
{
    return ((uintptr_t)buf % POSIX_ALIGN) == 0 && len % POSIX_ALIGN == 0 &&
           off % POSIX_ALIGN == 0;
}

static int64_t posix_pread(core_fh *fh, void *buf, int64_t len, int64_t off)
{
    posix_fh *h = (posix_fh *)fh;
    if (len > (1LL << 30))
        len = 1LL << 30;
    if (h->dfd < 0 || aligned(buf, len, off)) {
        ssize_t n = pread(h->dfd >= 0 ? h->dfd : h->fd, buf, (size_t)len, off);
        return n < 0 ? -errno : n;
    }
    int64_t a0 = off / POSIX_ALIGN * POSIX_ALIGN;
    int64_t a1 = (off + len + POSIX_ALIGN - 1) / POSIX_ALIGN * POSIX_ALIGN;
    if (a1 - a0 > POSIX_BOUNCE)
        a1 = a0 + POSIX_BOUNCE;
    void *b;
    if (posix_memalign(&b, POSIX_ALIGN, (size_t)(a1 - a0)))
        return -ENOMEM;
    ssize_t n = pread(h->dfd, b, (size_t)(a1 - a0), a0);
    int64_t r;
    if (n < 0) {
        r = -errno;
    } else {
        r = n - (off - a0);
        if (r < 0)
            r = 0;
        if (r > len)
            r = len;
        memcpy(buf, (char *)b + (off - a0), (size_t)r);
    }
    free(b);
    return r;
}

static int64_t posix_pwrite(core_fh *fh, const void *buf, int64_t len,
                            int64_t off)
{
    posix_fh *h = (posix_fh *)fh;
    if (len > (1LL << 30))
        len = 1LL << 30;
    int fd = (h->dfd >= 0 && aligned(buf, len, off)) ? h->dfd : h->fd;
    ssize_t n = pwrite(fd, buf, (size_t)len, off);
    return n < 0 ? -errno : n;
}

static int posix_size(core_fh *fh, int64_t *bytes)
{
    struct stat st;
    if (fstat(((posix_fh *)fh)->fd, &st))
        return -errno;
    *bytes = st.st_size;
    return 0;
}

static int posix_resize(core_fh *fh, int64_t bytes)
{
    return ftruncate(((posix_fh *)fh)->fd, bytes) ? -errno : 0;
}

static int posix_sync(core_fh *fh)
{
    return fdatasync(((posix_fh *)fh)->fd) ? -errno : 0;
}

static int posix_drop_cache(core_fh *fh)
{
    posix_fh *h = (posix_fh *)fh;
    if (fdatasync(h->fd) && errno != EINVAL && errno != EBADF)
        return -errno;
    int e = posix_fadvise(h->fd, 0, 0, POSIX_FADV_DONTNEED);
    return e ? -e : 0;
}

static int posix_fds(core_fh *fh, int *fd, int *dfd)
{
    posix_fh *h = (posix_fh *)fh;
    *fd = h->fd;
    *dfd = h->dfd;
    return 0;
}

static int posix_read_batch(core_fh *fh, core_iov *v, int n)
{
#ifdef PASSION_HAVE_URING
    posix_fh *h = (posix_fh *)fh;
    for (int i = 0; i < n; i++)
        if (h->dfd >= 0 && !aligned(v[i].buf, v[i].len, v[i].off))
            return -ENOSYS;
    pthread_mutex_lock(&h->lock);
    if (h->ring_state == 0)
        h->ring_state =
            io_uring_queue_init(POSIX_RING, &h->ring, 0) == 0 ? 1 : -1;
    int rc = h->ring_state == 1 ? 0 : -ENOSYS;
    int fd = h->dfd >= 0 ? h->dfd : h->fd;
    for (int first = 0; first < n && !rc; first += POSIX_RING) {
        int m = n - first < POSIX_RING ? n - first : POSIX_RING;
        for (int i = 0; i < m; i++) {
            core_iov *p = &v[first + i];
            struct io_uring_sqe *sqe = io_uring_get_sqe(&h->ring);
            unsigned len = p->len > (1LL << 30) ? 1U << 30 : (unsigned)p->len;
            io_uring_prep_read(sqe, fd, p->buf, len, (uint64_t)p->off);
            io_uring_sqe_set_data64(sqe, (uint64_t)(first + i));
            p->res = -EINTR; /* not completed yet */
        }
        int sub = io_uring_submit(&h->ring);
        if (sub < 0) {
            rc = sub;
            break;
        }
        for (int got = 0; got < sub;) {
            struct io_uring_cqe *cqe;
            int e = io_uring_wait_cqe(&h->ring, &cqe);
            if (e == -EINTR)
                continue;
            if (e < 0) {
                rc = e;
                break;
            }
            v[io_uring_cqe_get_data64(cqe)].res = cqe->res;
            io_uring_cqe_seen(&h->ring, cqe);
            got++;
        }
        if (!rc && sub < m)
            rc = -EIO; /* the kernel took fewer than prepared */
    }
    pthread_mutex_unlock(&h->lock);
    return rc;
#else
    (void)fh;
    (void)v;
    (void)n;
    return -ENOSYS;
#endif
}

static int posix_close(core_fh *fh)
{
    posix_fh *h = (posix_fh *)fh;
    int rc = 0;
#ifdef PASSION_HAVE_URING
    if (h->ring_state == 1)
        io_uring_queue_exit(&h->ring);
#endif
    pthread_mutex_destroy(&h->lock);
    if (h->dfd >= 0 && close(h->dfd))
        rc = -errno;
    if (close(h->fd) && !rc)
        rc = -errno;
    free(h);
    return rc;
}

const core_driver_ops core_drv_posix = {
    .name = "posix",
    .open = posix_open,
    .pread = posix_pread,
    .pwrite = posix_pwrite,
    .size = posix_size,
    .resize = posix_resize,
    .sync = posix_sync,
    .drop_cache = posix_drop_cache,
    .close = posix_close,
    .read_batch = posix_read_batch,
    .fds = posix_fds,
};
