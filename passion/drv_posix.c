/*
 * drv_posix.c - the posix driver: pread/pwrite on a file descriptor, with
 * optional O_DIRECT, and the posix means of the driver ops: descriptors
 * for the engine's io_uring (ring_fd), the page-cache probe (cachestat(2),
 * else mincore(2)), advice (posix_fadvise) and the calibration reads.
 *
 * With O_DIRECT the handle has align = 4096: reads come aligned (io.c's
 * core_io_once and the engine bounce unaligned ones through staging
 * memory, or shift them in the caller's buffer: preadv of aligned
 * segments) unless the memory budget left no room even for that; aligned
 * requests go straight to the device, unaligned ones (writes, mostly)
 * through a second, buffered descriptor (the kernel flushes cached pages
 * of a range before direct I/O on it, so both views stay coherent).
 *
 * Invariants: no descriptor leaves passion/ (ring_fd is for the engine
 * only); nothing here touches the context's counters.
 */
#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Lustre's user header, where the build has it (the stripe size) */
#if defined(__has_include)
#if __has_include(<linux/lustre/lustre_user.h>)
#include <linux/lustre/lustre_user.h>
#define POSIX_LUSTRE 1
#elif __has_include(<lustre/lustre_user.h>)
#include <lustre/lustre_user.h>
#define POSIX_LUSTRE 1
#endif
#endif

typedef struct posix_fh {
    core_fh base;
    int fd;   /* buffered */
    int dfd;  /* O_DIRECT, or -1 */
    int64_t ra; /* readahead bytes, 0 unknown, -1 not looked up yet */
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
    posix_fh *h = core_calloc(ctx, 1, sizeof *h);
    if (!h)
        return -ENOMEM;
    h->dfd = -1;
    h->ra = -1;
    h->fd = open(path, of | O_CLOEXEC, 0644);
    if (h->fd < 0) {
        int e = errno;
        core_free(ctx, h);
        return -e;
    }
    if (direct) {
        h->dfd = open(path, (of & ~(O_CREAT | O_TRUNC | O_EXCL)) | O_DIRECT |
                                O_CLOEXEC);
        if (h->dfd < 0) {
            int e = errno;
            close(h->fd);
            core_free(ctx, h);
            return -e;
        }
        h->base.align = CORE_ALIGN;
    }
    *out = &h->base;
    return 0;
}

static int aligned(const void *buf, int64_t len, int64_t off)
{
    return ((uintptr_t)buf % CORE_ALIGN) == 0 && len % CORE_ALIGN == 0 &&
           off % CORE_ALIGN == 0;
}

/* The descriptor for a request: O_DIRECT when there is one and the
   request is aligned, else the buffered one. */
static int fd_for(const posix_fh *h, const void *buf, int64_t len,
                  int64_t off)
{
    return h->dfd >= 0 && aligned(buf, len, off) ? h->dfd : h->fd;
}

/*
 * A long buffered read goes to the kernel as consecutive reads of
 * CORE_STREAM_PIECE bytes: the copy of one piece then overlaps the
 * device's reading of the next (the readahead runs ahead of a sequential
 * reader), where one large read(2) of uncached pages waited for most of
 * its pages before copying. The piece trades that overlap (smaller is
 * better) against one system call per piece (larger is better); the
 * sweep that chose CORE_STREAM_PIECE is in the commit that set it. The
 * result is the bytes read before the first short read or error (its
 * -errno when there were none); one driver request to the caller.
 */
static int64_t posix_pread(core_fh *fh, void *buf, int64_t len, int64_t off)
{
    posix_fh *h = (posix_fh *)fh;
    if (len > CORE_MAXREQ)
        len = CORE_MAXREQ;
    int fd = fd_for(h, buf, len, off);
    if (fd == h->dfd || len <= CORE_STREAM_MIN) {
        ssize_t n = pread(fd, buf, (size_t)len, off);
        return n < 0 ? -errno : n;
    }
    int64_t done = 0;
    while (done < len) {
        int64_t want = len - done < CORE_STREAM_PIECE ? len - done
                                                      : CORE_STREAM_PIECE;
        ssize_t n = pread(fd, (char *)buf + done, (size_t)want, off + done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return done ? done : -errno;
        done += n;
        if (n < want)
            break;
    }
    return done;
}

/* aligned segments (a shifted read): to the O_DIRECT descriptor */
static int64_t posix_preadv(core_fh *fh, const struct iovec *iov, int n,
                            int64_t off)
{
    posix_fh *h = (posix_fh *)fh;
    ssize_t r = preadv(h->dfd >= 0 ? h->dfd : h->fd, iov, n, off);
    return r < 0 ? -errno : r;
}

static int64_t posix_pwrite(core_fh *fh, const void *buf, int64_t len,
                            int64_t off)
{
    posix_fh *h = (posix_fh *)fh;
    if (len > CORE_MAXREQ)
        len = CORE_MAXREQ;
    ssize_t n = pwrite(fd_for(h, buf, len, off), buf, (size_t)len, off);
    return n < 0 ? -errno : n;
}

static int posix_ring_fd(core_fh *fh, int write, const void *buf, int64_t len,
                         int64_t off, int *buffered)
{
    (void)write;
    posix_fh *h = (posix_fh *)fh;
    int fd = fd_for(h, buf, len, off);
    *buffered = fd != h->dfd;
    return fd;
}
static int posix_size(core_fh *fh, int64_t *bytes)
{
    struct stat st;
    if (fstat(((posix_fh *)fh)->fd, &st))
        return -errno;
    *bytes = st.st_size;
    return 0;
}

int64_t core_posix_stripe(int fd)
{
#if defined(POSIX_LUSTRE) && defined(LL_IOC_LOV_GETSTRIPE) && \
    defined(LOV_MAX_STRIPE_COUNT)
    /* ROMIO's ad_lustre does the same: the layout of the file, whose
       lmm_stripe_size is the stripe size (fails with ENOTTY elsewhere) */
    size_t n = sizeof(struct lov_user_md) +
               LOV_MAX_STRIPE_COUNT * sizeof(struct lov_user_ost_data);
    struct lov_user_md *lum = calloc(1, n);
    if (lum) {
        lum->lmm_magic = LOV_USER_MAGIC;
        int e = ioctl(fd, LL_IOC_LOV_GETSTRIPE, (void *)lum);
        int64_t s = e == 0 ? (int64_t)lum->lmm_stripe_size : 0;
        free(lum);
        if (s > 0 && s <= (1LL << 30))
            return s;
    }
#endif
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_blksize > 0 &&
        st.st_blksize <= (1L << 30))
        return (int64_t)st.st_blksize;
    return 0;
}

static int64_t posix_stripe(core_fh *fh)
{
    return core_posix_stripe(((posix_fh *)fh)->fd);
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
    return core_posix_advise(h->fd, 0, 0, CORE_ADV_DONTNEED);
}

/* ---- advice, page-cache probe, calibration ---- */

int core_posix_advise(int fd, int64_t off, int64_t len, int advice)
{
    int a = advice == CORE_ADV_WILLNEED   ? POSIX_FADV_WILLNEED
            : advice == CORE_ADV_DONTNEED ? POSIX_FADV_DONTNEED
                                          : POSIX_FADV_RANDOM;
    int e = posix_fadvise(fd, off, len, a);
    return e ? -e : 0;
}

/* The readahead of the file's backing device: the file system's bdi
   (/sys/class/bdi/MAJ:MIN, named by the file's st_dev) holds the window
   the kernel's sequential readahead grows to (read_ahead_kb); looked up
   once per handle. 0 when there is none to read (tmpfs, no sysfs) and
   for an O_DIRECT handle (the kernel reads nothing ahead of it). */
static int64_t posix_readahead(core_fh *fh)
{
    posix_fh *h = (posix_fh *)fh;
    if (h->dfd >= 0)
        return 0;
    if (h->ra >= 0)
        return h->ra;
    h->ra = 0;
    struct stat st;
    if (fstat(h->fd, &st))
        return 0;
    char p[96];
    snprintf(p, sizeof p, "/sys/class/bdi/%u:%u/read_ahead_kb",
             major(st.st_dev), minor(st.st_dev));
    FILE *f = fopen(p, "r");
    long long kb = 0;
    if (f) {
        if (fscanf(f, "%lld", &kb) != 1 || kb < 0)
            kb = 0;
        fclose(f);
    }
    h->ra = kb * 1024;
    return h->ra;
}

static int posix_advise(core_fh *fh, int64_t off, int64_t len, int advice)
{
    posix_fh *h = (posix_fh *)fh;
    if (h->dfd >= 0)
        return 0; /* O_DIRECT bypasses the page cache: no hint */
    return core_posix_advise(h->fd, off, len, advice) == 0;
}

/*
 * cachestat(2) (Linux 6.5): the page-cache pages of a file range without
 * mapping the file. Its number is 451 in the common syscall
 * table (x86-64, arm64, riscv...). -1 where it is not available.
 */
#if defined(__NR_cachestat)
#define CORE_NR_CACHESTAT __NR_cachestat
#elif defined(__x86_64__) || defined(__aarch64__) || defined(__riscv)
#define CORE_NR_CACHESTAT 451
#endif

/* Pages of [off, off + len) in the page cache; -1 if unknown. */
static int64_t cached_pages(int fd, int64_t off, int64_t len)
{
#ifdef CORE_NR_CACHESTAT
    struct {
        uint64_t off, len;
    } range = {(uint64_t)off, (uint64_t)len};
    struct {
        uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted,
            nr_recently_evicted;
    } cs;
    memset(&cs, 0, sizeof cs);
    if (syscall(CORE_NR_CACHESTAT, (unsigned)fd, &range, &cs, 0u) != 0)
        return -1;
    return (int64_t)cs.nr_cache;
#else
    (void)fd, (void)off, (void)len;
    return -1;
#endif
}

/* Per mille of [lo, hi) cached, by cachestat; -1 if unavailable. At most
   16 looks of 16 pages spread over the extent: the kernel walks every page
   of the range asked (about 10 ns each), so a whole 64 MiB extent would
   cost more than a small section's read. */
static int cached_cachestat(int fd, int64_t lo, int64_t hi, int64_t pg)
{
    const int64_t win = 16, maxlooks = 16;
    int64_t p0 = lo / pg, p1 = (hi + pg - 1) / pg, npages = p1 - p0;
    int64_t looks = (npages + win - 1) / win, step = 1;
    if (looks < maxlooks || npages <= CORE_PROBE_EXACT) {
        /* one call over the whole extent counts every page: where the
           windows would tile it (a system call per window is a share of
           a tiny read's cost), and up to CORE_PROBE_EXACT pages (sampled
           windows of a strided extent under a memory limit can land on
           the rows just read, cached, and miss the holes between them:
           the sieve would be priced at memory speed and read the extent
           from the device) */
        int64_t c = cached_pages(fd, p0 * pg, npages * pg);
        if (c < 0)
            return -1;
        return npages ? (int)((c < npages ? c : npages) * 1000 / npages)
                      : -1;
    }
    if (looks > maxlooks) {
        step = (npages - win) / (maxlooks - 1);
        looks = maxlooks;
    }
    int64_t seen = 0, in = 0;
    for (int64_t k = 0; k < looks; k++) {
        int64_t a = looks == maxlooks ? p0 + k * step : p0 + k * win;
        int64_t n = p1 - a < win ? p1 - a : win;
        if (n <= 0)
            break;
        int64_t c = cached_pages(fd, a * pg, n * pg);
        if (c < 0)
            return -1;
        seen += n;
        in += c < n ? c : n;
    }
    return seen ? (int)(in * 1000 / seen) : -1;
}

int core_posix_cached(int fd, int64_t lo, int64_t hi)
{
    const int64_t pg = 4096, win = 256; /* pages per look */
    int64_t p0 = lo / pg, p1 = (hi + pg - 1) / pg, npages = p1 - p0;
    if (npages <= 0)
        return -1;
    int pm = cached_cachestat(fd, lo, hi, pg);
    if (pm >= 0)
        return pm;
    /* older kernels: mincore over at most 64 windows spread over the
       extent */
    int64_t looks = (npages + win - 1) / win, step = 1;
    if (looks > 64) {
        step = looks / 64;
        looks = 64;
    }
    unsigned char vec[256];
    int64_t seen = 0, in = 0;
    for (int64_t k = 0; k < looks; k++) {
        int64_t a = p0 + k * step * win, n = p1 - a < win ? p1 - a : win;
        if (n <= 0)
            break;
        void *m = mmap(NULL, (size_t)(n * pg), PROT_READ, MAP_SHARED, fd,
                       (off_t)(a * pg));
        if (m == MAP_FAILED)
            break;
        if (mincore(m, (size_t)(n * pg), vec) == 0)
            for (int64_t i = 0; i < n; i++) {
                seen++;
                in += vec[i] & 1;
            }
        munmap(m, (size_t)(n * pg));
    }
    return seen ? (int)(in * 1000 / seen) : -1;
}

static int posix_cached(core_fh *fh, int64_t lo, int64_t hi)
{
    return core_posix_cached(((posix_fh *)fh)->fd, lo, hi);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/*
 * One rank's measurement on uncached pages of its extent [lo, hi): up to
 * 8 single-page reads spread over the extent (latency: the least of
 * them, core_posix_latency), then a stream of up to CORE_MEASURE_STREAM
 * bytes, at most three quarters of the extent and at most *bw_len bytes
 * when it is given (> 0) (buffered, sfd: read in pieces of `big`
 * with readahead; O_DIRECT: one read of `big`). Bandwidth: the stream's
 * bytes after its first piece / their time, or the O_DIRECT read's bytes
 * / (its time - latency); *bw_len the bytes it timed. Pages the page
 * cache holds are never timed (a stream tolerates a few: the latency
 * reads' and other ranks').
 */
static void measure_fd(int fd, int sfd, int64_t lo, int64_t hi, char *buf,
                       int64_t big, double *lat, double *bw,
                       int64_t *bw_len)
{
    const int64_t pg = 4096;
    int64_t a0 = (lo + pg - 1) / pg * pg, a1 = hi / pg * pg;
    if (a1 - a0 < 16 * pg || big < pg)
        return;
    /* the latency first, on the descriptor without readahead: after a
       stream, whose readahead runs megabytes past it, a small extent has
       no uncached page left to time */
    double t[8];
    int nt = 0;
    int64_t span = (a1 - a0) / pg;
    for (int k = 0; k < 8; k++) {
        int64_t off = a0 + (span * (2 * k + 1) / 16) * pg;
        if (cached_pages(fd, off, pg) != 0)
            continue;
        double t0 = core_now();
        ssize_t n = pread(fd, buf, (size_t)pg, (off_t)off);
        double dt = core_now() - t0;
        if (n == (ssize_t)pg)
            t[nt++] = dt;
    }
    *lat = core_posix_latency(t, nt);
    if (!bw)
        return;
    /* the bandwidth window: the first of four candidates spread over the
       extent with at most a few cached pages. Buffered (sfd >= 0): a
       stream of up to CORE_MEASURE_STREAM bytes in pieces of `big` on a
       descriptor with the kernel's readahead, as long reads run
       (posix_pread); O_DIRECT: one read of `big`. */
    int64_t len = (a1 - a0) / 4 * 3 / pg * pg, got = 0;
    if (*bw_len > 0 && len > *bw_len)
        len = *bw_len / pg * pg;
    *bw_len = 0;
    double tbw = 0, srate = 0;
    /* a stream where the window holds four pieces or more; else one read
       without readahead */
    if (len < 4 * big)
        sfd = -1;
    int64_t want = sfd >= 0 ? CORE_MEASURE_STREAM : big;
    if (len > want)
        len = want;
    for (int k = 0; k < 4 && len >= 64 * 1024; k++) {
        int64_t off = a0 + ((a1 - a0 - len) * k / 3) / pg * pg;
        int64_t c = cached_pages(fd, off, len);
        if (off + len > a1 || (c != 0 && (sfd < 0 || c < 0 || c > 16)))
            continue;
        double t0 = core_now(), t1 = 0;
        int64_t done = 0, first = 0;
        while (done < len) {
            int64_t piece = len - done < big ? len - done : big;
            ssize_t n = pread(sfd >= 0 ? sfd : fd, buf, (size_t)piece,
                              (off_t)(off + done));
            if (n != (ssize_t)piece)
                break;
            done += n;
            if (!first) { /* the first piece: latency and ramp-up */
                first = done;
                t1 = core_now();
            }
        }
        tbw = core_now() - t0;
        got = done == len ? len : 0;
        /* a stream: its rate after the first piece, which pays the
           latency and the readahead's ramp-up */
        if (got && sfd >= 0 && tbw > t1 - t0)
            srate = (double)(len - first) / (tbw - (t1 - t0));
        break;
    }
    /* the stream's rate needs no latency (another rank's single-page
       reads of a shared extent may have cached every page left to time) */
    if (srate > 0) {
        *bw = srate;
        *bw_len = got;
    } else if (*lat > 0 && got && tbw > *lat) {
        *bw = (double)got / (tbw - *lat);
        *bw_len = got;
    }
}

double core_posix_latency(double *t, int n)
{
    if (n < 3)
        return 0;
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    return t[0];
}

/* The calibration's latency reads go to a descriptor of their own
   (O_DIRECT if the file uses it), without readahead: the kernel would
   otherwise read ahead of them and leave no uncached page to time; a
   buffered file's bandwidth stream to another, with the readahead the
   handle's own reads get (the handle's descriptors keep theirs). The
   stream's rate is what long reads see, and a read without readahead
   sees a fraction of it, so a bandwidth timed without readahead would
   price every long read too high. */
static void posix_measure(core_fh *fh, int64_t lo, int64_t hi, char *buf,
                          int64_t big, double *lat, double *bw,
                          int64_t *bw_len)
{
    posix_fh *h = (posix_fh *)fh;
    int cfd = open(fh->path, O_RDONLY | O_CLOEXEC |
                                 (h->dfd >= 0 ? O_DIRECT : 0));
    if (cfd < 0)
        return;
    int sfd = h->dfd >= 0 || !bw ? -1 : open(fh->path, O_RDONLY | O_CLOEXEC);
    core_posix_advise(cfd, 0, 0, CORE_ADV_RANDOM);
    measure_fd(cfd, sfd, lo, hi, buf, big, lat, bw, bw_len);
    if (sfd >= 0)
        close(sfd);
    close(cfd);
}

static int posix_close(core_fh *fh)
{
    posix_fh *h = (posix_fh *)fh;
    int rc = 0;
    if (h->dfd >= 0 && close(h->dfd))
        rc = -errno;
    if (close(h->fd) && !rc)
        rc = -errno;
    core_free(fh->ctx, h);
    return rc;
}

/* ---- path operations (atomic creation) ---- */

int core_posix_rename(passion_ctx *ctx, const char *from, const char *to,
                      int noreplace)
{
    (void)ctx;
    if (!noreplace)
        return rename(from, to) ? -errno : 0;
    if (!renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE))
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -errno;
    /* a file system without RENAME_NOREPLACE: link fails if to exists */
    if (link(from, to))
        return -errno;
    return unlink(from) ? -errno : 0;
}

int core_posix_unlink(passion_ctx *ctx, const char *path)
{
    (void)ctx;
    return unlink(path) && errno != ENOENT ? -errno : 0;
}

int core_posix_sync_dir(passion_ctx *ctx, const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = core_alloc_fault(ctx) ? NULL
                : slash ? strndup(path, slash == path ? 1
                                                      : (size_t)(slash - path))
                        : strdup(".");
    if (!dir)
        return -ENOMEM;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd < 0)
        return -errno;
    /* some file systems cannot sync a directory (EINVAL): nothing to do */
    int rc = fsync(fd) && errno != EINVAL ? -errno : 0;
    close(fd);
    return rc;
}

/* A small text file (the planner's wisdom) whole: *buf (malloc'd, NUL
   after the *len bytes); -ENOENT when there is none, -EFBIG above
   max bytes. */
int core_posix_slurp(const char *path, size_t max, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    int rc = 0;
    char *p = NULL;
    if (fstat(fd, &st))
        rc = -errno;
    else if (!S_ISREG(st.st_mode))
        rc = -EISDIR;
    else if ((uint64_t)st.st_size > max)
        rc = -EFBIG;
    else if (!(p = malloc((size_t)st.st_size + 1)))
        rc = -ENOMEM;
    size_t n = 0;
    while (!rc && n < (size_t)st.st_size) {
        ssize_t r = read(fd, p + n, (size_t)st.st_size - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            rc = r < 0 ? -errno : -EIO;
        else
            n += (size_t)r;
    }
    close(fd);
    if (rc) {
        free(p);
        return rc;
    }
    p[n] = '\0';
    *buf = p;
    *len = n;
    return 0;
}

/* Replace path with len bytes, atomically: a temporary beside it, synced,
   renamed over it (a reader sees the old file or the new, whole). */
int core_posix_replace(const char *path, const char *buf, size_t len)
{
    size_t pl = strlen(path);
    char *tmp = malloc(pl + 16);
    if (!tmp)
        return -ENOMEM;
    snprintf(tmp, pl + 16, "%s.tmp%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = fd < 0 ? -errno : 0;
    size_t n = 0;
    while (!rc && n < len) {
        ssize_t w = write(fd, buf + n, len - n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            rc = w < 0 ? -errno : -EIO;
        else
            n += (size_t)w;
    }
    if (!rc && fsync(fd))
        rc = -errno;
    if (fd >= 0 && close(fd) && !rc)
        rc = -errno;
    if (!rc && rename(tmp, path))
        rc = -errno;
    if (rc && fd >= 0)
        unlink(tmp);
    free(tmp);
    return rc;
}

const core_driver_ops core_drv_posix = {
    .id = PASSION_DRIVER_POSIX,
    .open = posix_open,
    .pread = posix_pread,
    .pwrite = posix_pwrite,
    .preadv = posix_preadv,
    .size = posix_size,
    .resize = posix_resize,
    .sync = posix_sync,
    .drop_cache = posix_drop_cache,
    .close = posix_close,
    .ring_fd = posix_ring_fd,
    .cached = posix_cached,
    .advise = posix_advise,
    .readahead = posix_readahead,
    .measure = posix_measure,
    .stripe = posix_stripe,
    .needs_mpi_thread = 0, /* system calls only: any thread */
    .rename = core_posix_rename,
    .unlink = core_posix_unlink,
    .sync_dir = core_posix_sync_dir,
};
