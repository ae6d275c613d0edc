/*
 * The MPI-IO calls the layer intercepts (MPI profiling interface: each is
 * defined here and reaches MPI through its PMPI_ name). A call is served
 * through passion (serve.c) when its file view and access qualify, else it
 * goes to PMPI unchanged; calls not defined here never meet the layer.
 *
 * Invariants: while passion runs a call for the layer (mpiio_inside())
 * every call goes straight to PMPI; the real file is opened, viewed,
 * sized and closed through PMPI whatever is served, so the handle works
 * for every call passed through.
 */
#include <stdio.h>

#include "mpiio.h"

static mpiio_file *state_of(MPI_File fh)
{
    return mpiio_inside() ? NULL : mpiio_lookup(fh);
}

MPIIO_EXPORT int MPI_File_open(MPI_Comm comm, const char *filename,
                               int amode, MPI_Info info, MPI_File *fh)
{
    mpiio_file *st;
    int rc = PMPI_File_open(comm, filename, amode, info, fh);
    if (rc != MPI_SUCCESS || mpiio_inside() || !mpiio_mode_on())
        return rc;
    st = mpiio_add(*fh);
    if (!st)
        return rc;
    if (MPI_Comm_dup(comm, &st->comm) != MPI_SUCCESS) {
        st->comm = MPI_COMM_NULL;
        st->enabled = 0;
    } else {
        st->enabled = 1;
        st->method = PASSION_METHOD_AUTO;
        mpiio_info_apply(st, info);
    }
    snprintf(st->name, sizeof st->name, "%s", filename);
    st->amode = amode;
    return rc;
}

MPIIO_EXPORT int MPI_File_close(MPI_File *fh)
{
    mpiio_file *st = state_of(*fh);
    if (st)
        mpiio_release(st);
    return PMPI_File_close(fh);
}

MPIIO_EXPORT int MPI_File_set_view(MPI_File fh, MPI_Offset disp,
                                   MPI_Datatype etype, MPI_Datatype filetype,
                                   const char *datarep, MPI_Info info)
{
    mpiio_file *st = state_of(fh);
    int rc = PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
    if (rc == MPI_SUCCESS && st && st->comm != MPI_COMM_NULL)
        mpiio_view_set(st, disp, etype, filetype, datarep, info);
    return rc;
}

MPIIO_EXPORT int MPI_File_get_view(MPI_File fh, MPI_Offset *disp,
                                   MPI_Datatype *etype,
                                   MPI_Datatype *filetype, char *datarep)
{
    return PMPI_File_get_view(fh, disp, etype, filetype, datarep);
}

/* One data access: served, or passed to PMPI by the caller. */
static int access_of(MPI_File fh, mpiio_kind kind, int coll, int at,
                     MPI_Offset offset, const void *wbuf, void *rbuf,
                     int count, MPI_Datatype type, MPI_Status *status,
                     int *served)
{
    mpiio_file *st = state_of(fh);
    *served = 0;
    if (!st || st->comm == MPI_COMM_NULL) {
        mpiio_pass(st, kind, "layer state not set up at open");
        return MPI_SUCCESS;
    }
    return mpiio_access(st, kind, coll, at, offset, wbuf, rbuf, count, type,
                        status, served);
}

MPIIO_EXPORT int MPI_File_read(MPI_File fh, void *buf, int count,
                               MPI_Datatype type, MPI_Status *status)
{
    int served, rc = access_of(fh, MPIIO_READ, 0, 0, 0, NULL, buf, count,
                               type, status, &served);
    return served ? rc : PMPI_File_read(fh, buf, count, type, status);
}

MPIIO_EXPORT int MPI_File_write(MPI_File fh, const void *buf, int count,
                                MPI_Datatype type, MPI_Status *status)
{
    int served, rc = access_of(fh, MPIIO_WRITE, 0, 0, 0, buf, NULL, count,
                               type, status, &served);
    return served ? rc : PMPI_File_write(fh, buf, count, type, status);
}

MPIIO_EXPORT int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf,
                                  int count, MPI_Datatype type,
                                  MPI_Status *status)
{
    int served, rc = access_of(fh, MPIIO_READ_AT, 0, 1, offset, NULL, buf,
                               count, type, status, &served);
    return served ? rc
                  : PMPI_File_read_at(fh, offset, buf, count, type, status);
}

MPIIO_EXPORT int MPI_File_write_at(MPI_File fh, MPI_Offset offset,
                                   const void *buf, int count,
                                   MPI_Datatype type, MPI_Status *status)
{
    int served, rc = access_of(fh, MPIIO_WRITE_AT, 0, 1, offset, buf, NULL,
                               count, type, status, &served);
    return served ? rc
                  : PMPI_File_write_at(fh, offset, buf, count, type, status);
}

MPIIO_EXPORT int MPI_File_read_all(MPI_File fh, void *buf, int count,
                                   MPI_Datatype type, MPI_Status *status)
{
    int served, rc = access_of(fh, MPIIO_READ_ALL, 1, 0, 0, NULL, buf, count,
                               type, status, &served);
    return served ? rc : PMPI_File_read_all(fh, buf, count, type, status);
}

MPIIO_EXPORT int MPI_File_write_all(MPI_File fh, const void *buf, int count,
                                    MPI_Datatype type, MPI_Status *status)
{
    int served, rc = access_of(fh, MPIIO_WRITE_ALL, 1, 0, 0, buf, NULL,
                               count, type, status, &served);
    return served ? rc : PMPI_File_write_all(fh, buf, count, type, status);
}

MPIIO_EXPORT int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset,
                                      void *buf, int count,
                                      MPI_Datatype type, MPI_Status *status)
{
    int served, rc = access_of(fh, MPIIO_READ_AT_ALL, 1, 1, offset, NULL,
                               buf, count, type, status, &served);
    return served ? rc
                  : PMPI_File_read_at_all(fh, offset, buf, count, type,
                                          status);
}

MPIIO_EXPORT int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset,
                                       const void *buf, int count,
                                       MPI_Datatype type, MPI_Status *status)
{
    int served, rc = access_of(fh, MPIIO_WRITE_AT_ALL, 1, 1, offset, buf,
                               NULL, count, type, status, &served);
    return served ? rc
                  : PMPI_File_write_at_all(fh, offset, buf, count, type,
                                           status);
}

/* Collective: the layer's keys take effect at once; the view is decoded
 * again when any rank's keys changed. */
MPIIO_EXPORT int MPI_File_set_info(MPI_File fh, MPI_Info info)
{
    mpiio_file *st = state_of(fh);
    int rc = PMPI_File_set_info(fh, info), changed, any = 0;
    if (rc != MPI_SUCCESS || !st || st->comm == MPI_COMM_NULL)
        return rc;
    {
        int en = st->enabled;
        int64_t budget = st->budget;
        passion_method method = st->method;
        mpiio_info_apply(st, info);
        changed = en != st->enabled || budget != st->budget ||
                  method != st->method;
    }
    MPI_Allreduce(&changed, &any, 1, MPI_INT, MPI_MAX, st->comm);
    if (any)
        mpiio_view_redo(st);
    return rc;
}

/* MPI's hints, and the layer's keys in effect for this file. */
MPIIO_EXPORT int MPI_File_get_info(MPI_File fh, MPI_Info *info)
{
    mpiio_file *st = state_of(fh);
    int rc = PMPI_File_get_info(fh, info);
    if (rc == MPI_SUCCESS && st && st->comm != MPI_COMM_NULL)
        mpiio_info_add(st, *info);
    return rc;
}

/* Collective; MPI grows the file. passion's file opens at the next
 * collective access or set_view that finds it long enough. */
MPIIO_EXPORT int MPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    return PMPI_File_preallocate(fh, size);
}

MPIIO_EXPORT int MPI_File_sync(MPI_File fh)
{
    mpiio_file *st = state_of(fh);
    if (st && st->pf) {
        mpiio_enter();
        passion_file_sync(st->pf);
        mpiio_leave();
    }
    return PMPI_File_sync(fh);
}

MPIIO_EXPORT int MPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    return PMPI_File_get_size(fh, size);
}

/* Collective: a size below the array's closes passion's file on every
 * rank (passion keeps a file open only while it holds the array). */
MPIIO_EXPORT int MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    mpiio_file *st = state_of(fh);
    int rc = PMPI_File_set_size(fh, size);
    if (rc == MPI_SUCCESS && st && st->pf && size < st->need_bytes) {
        mpiio_enter();
        passion_file_close(st->pf);
        mpiio_leave();
        st->pf = NULL;
    }
    return rc;
}

MPIIO_EXPORT int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    return PMPI_File_seek(fh, offset, whence);
}

MPIIO_EXPORT int MPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    return PMPI_File_get_position(fh, offset);
}

MPIIO_EXPORT int MPI_Finalize(void)
{
    mpiio_report();
    return PMPI_Finalize();
}
