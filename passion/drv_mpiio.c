/*
 * drv_mpiio.c - the mpiio driver: independent MPI-IO (ROMIO) calls at
 * explicit offsets on a file opened on MPI_COMM_SELF, so that every rank
 * can use it independently; passion's collective methods sit above.
 *
 * Access: synchronous requests; batched reads one by one (no ring_fd:
 * ROMIO's descriptor stays ROMIO's); asynchronous requests on the engine's
 * worker thread when MPI provides MPI_THREAD_MULTIPLE, else run
 * synchronously when submitted (engine.c). The page-cache probe and
 * advice go through a descriptor of their own on the path (the page cache
 * is the file's, shared by every descriptor); no calibration reads (the
 * cost model keeps its defaults or the options).
 *
 * Names: a path is a file's path, as with every driver. ROMIO reads a
 * name with a colon as FSTYPE:PATH (and refuses an unknown FSTYPE);
 * Open MPI's OMPIO takes it literally. So a path with a colon is opened
 * by this process first and handed to MPI as /proc/self/fd/N, a name
 * every MPI-IO takes literally and on which ROMIO still finds the file
 * system (statfs follows the link).
 */
#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct mpiio_fh {
    core_fh base;
    MPI_File fh;
} mpiio_fh;

static int mpi_errno(int mrc)
{
    int cls;
    MPI_Error_class(mrc, &cls);
    switch (cls) {
    case MPI_ERR_NO_SPACE:
    case MPI_ERR_QUOTA: return ENOSPC;
    case MPI_ERR_NO_SUCH_FILE: return ENOENT;
    case MPI_ERR_FILE_EXISTS: return EEXIST;
    case MPI_ERR_ACCESS:
    case MPI_ERR_READ_ONLY: return EACCES;
    case MPI_ERR_NO_MEM: return ENOMEM;
    default: return EIO;
    }
}

/* MPI_File_open of path; a path with a colon through a descriptor of
   our own (the file's opening comment). */
static int open_named(const char *path, int flags, int amode, MPI_File *fh)
{
    if (!strchr(path, ':')) {
        int mrc = MPI_File_open(MPI_COMM_SELF, path, amode, MPI_INFO_NULL, fh);
        return mrc == MPI_SUCCESS ? 0 : -mpi_errno(mrc);
    }
    int oflags = O_CLOEXEC | ((flags & (CORE_O_RDWR | CORE_O_CREATE))
                                  ? O_RDWR
                                  : O_RDONLY);
    if (flags & CORE_O_CREATE)
        oflags |= O_CREAT;
    if ((flags & CORE_O_CREATE) && (flags & CORE_O_EXCL))
        oflags |= O_EXCL;
    int fd = open(path, oflags, 0666);
    if (fd < 0)
        return -errno;
    char name[48];
    snprintf(name, sizeof name, "/proc/self/fd/%d", fd);
    /* the file exists now: no MPI_MODE_CREATE / EXCL on the link */
    amode &= ~(MPI_MODE_CREATE | MPI_MODE_EXCL);
    int mrc = MPI_File_open(MPI_COMM_SELF, name, amode, MPI_INFO_NULL, fh);
    close(fd);
    return mrc == MPI_SUCCESS ? 0 : -mpi_errno(mrc);
}

static int mpiio_open(passion_ctx *ctx, const char *path, int flags,
                      int direct, core_fh **out)
{
    (void)direct;
    int amode = (flags & (CORE_O_RDWR | CORE_O_CREATE)) ? MPI_MODE_RDWR
                                                        : MPI_MODE_RDONLY;
    if (flags & CORE_O_CREATE)
        amode |= MPI_MODE_CREATE;
    if ((flags & CORE_O_CREATE) && (flags & CORE_O_EXCL))
        amode |= MPI_MODE_EXCL;
    mpiio_fh *h = core_calloc(ctx, 1, sizeof *h);
    if (!h)
        return -ENOMEM;
    int rc = open_named(path, flags, amode, &h->fh);
    if (rc) {
        core_free(ctx, h);
        return rc;
    }
    int mrc;
    if ((flags & CORE_O_TRUNC) &&
        (mrc = MPI_File_set_size(h->fh, 0)) != MPI_SUCCESS) {
        MPI_File_close(&h->fh);
        core_free(ctx, h);
        return -mpi_errno(mrc);
    }
    *out = &h->base;
    return 0;
}

static int64_t mpiio_pread(core_fh *fh, void *buf, int64_t len, int64_t off)
{
    mpiio_fh *h = (mpiio_fh *)fh;
    int n = len > (1 << 30) ? (1 << 30) : (int)len;
    MPI_Status st;
    int mrc = MPI_File_read_at(h->fh, off, buf, n, MPI_BYTE, &st);
    if (mrc != MPI_SUCCESS)
        return -mpi_errno(mrc);
    int got = 0;
    MPI_Get_count(&st, MPI_BYTE, &got);
    return got;
}

static int64_t mpiio_pwrite(core_fh *fh, const void *buf, int64_t len,
                            int64_t off)
{
    mpiio_fh *h = (mpiio_fh *)fh;
    int n = len > (1 << 30) ? (1 << 30) : (int)len;
    MPI_Status st;
    int mrc = MPI_File_write_at(h->fh, off, buf, n, MPI_BYTE, &st);
    if (mrc != MPI_SUCCESS)
        return -mpi_errno(mrc);
    int put = 0;
    MPI_Get_count(&st, MPI_BYTE, &put);
    return put;
}

static int mpiio_size(core_fh *fh, int64_t *bytes)
{
    MPI_Offset sz;
    int mrc = MPI_File_get_size(((mpiio_fh *)fh)->fh, &sz);
    if (mrc != MPI_SUCCESS)
        return -mpi_errno(mrc);
    *bytes = sz;
    return 0;
}

static int mpiio_resize(core_fh *fh, int64_t bytes)
{
    /* MPI_File_set_size is collective over the file's group (SELF). */
    int mrc = MPI_File_set_size(((mpiio_fh *)fh)->fh, bytes);
    return mrc == MPI_SUCCESS ? 0 : -mpi_errno(mrc);
}

static int mpiio_sync(core_fh *fh)
{
    int mrc = MPI_File_sync(((mpiio_fh *)fh)->fh);
    return mrc == MPI_SUCCESS ? 0 : -mpi_errno(mrc);
}

static int mpiio_drop_cache(core_fh *fh)
{
    int rc = mpiio_sync(fh);
    if (rc)
        return rc;
    int fd = open(fh->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    rc = core_posix_advise(fd, 0, 0, CORE_ADV_DONTNEED);
    close(fd);
    return rc;
}

static int mpiio_cached(core_fh *fh, int64_t lo, int64_t hi)
{
    int fd = open(fh->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int pm = core_posix_cached(fd, lo, hi);
    close(fd);
    return pm;
}

static int mpiio_advise(core_fh *fh, int64_t off, int64_t len, int advice)
{
    if (advice == CORE_ADV_RANDOM)
        return 0; /* a property of a descriptor: not ours to set */
    int fd = open(fh->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int rc = core_posix_advise(fd, off, len, advice);
    close(fd);
    return rc == 0;
}

static int mpiio_close(core_fh *fh)
{
    mpiio_fh *h = (mpiio_fh *)fh;
    int mrc = MPI_File_close(&h->fh);
    core_free(fh->ctx, h);
    return mrc == MPI_SUCCESS ? 0 : -mpi_errno(mrc);
}

const core_driver_ops core_drv_mpiio = {
    .id = PASSION_DRIVER_MPIIO,
    .open = mpiio_open,
    .pread = mpiio_pread,
    .pwrite = mpiio_pwrite,
    .size = mpiio_size,
    .resize = mpiio_resize,
    .sync = mpiio_sync,
    .drop_cache = mpiio_drop_cache,
    .close = mpiio_close,
    .cached = mpiio_cached,
    .advise = mpiio_advise,
    .needs_mpi_thread = 1,
    /* the files live on a posix file system: the same path operations */
    .rename = core_posix_rename,
    .unlink = core_posix_unlink,
    .sync_dir = core_posix_sync_dir,
};
