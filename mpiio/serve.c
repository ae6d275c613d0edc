/*
 * Serving through passion: a file view becomes a passion array (raw global
 * file whose header is the common displacement, or, where ranks'
 * displacements differ, the lowest one rounded down to a whole plane of
 * the array) and this rank's box a passion section; a data access that is
 * exactly one filetype's data at the start of the view becomes one
 * passion_file_read / _write (independent) or _read_all / _write_all
 * (collective) of that section.
 *
 * Invariants:
 * - Every served/passed decision of a collective call (and every change
 *   of the file's served state) is taken from values all ranks hold alike
 *   or agreed by one MPI_Allreduce, so no rank serves while another
 *   passes through.
 * - Passion's file is open only while the real file is at least as long
 *   as the array (passion's rule); a collective write to a shorter file
 *   extends it, writes, and cuts it back to the larger of its old size and
 *   the highest byte written by any rank, which is the size MPI-IO leaves.
 * - Independent writes use the direct method (no read-modify-write of
 *   bytes other ranks may be writing).
 */
#include <stdio.h>
#include <string.h>

#include "mpiio.h"

/* Values of the view every rank must share, for one MIN reduction of the
 * values and their negations (minimum and maximum at once). */
enum { AG_OK, AG_NDIMS, AG_ORDER, AG_ELEM, AG_DISP, AG_PLACED, AG_Q, AG_QEND,
       AG_SIZE, AG_DIMS, AG_N = AG_DIMS + MPIIO_MAX_DIMS };

static int slow_dim(const mpiio_box *b)
{
    return b->order == MPI_ORDER_C ? 0 : b->ndims - 1;
}

/* Bytes of one index of the slowest dimension (a plane of the array). */
static int64_t plane_bytes(const mpiio_box *b)
{
    int64_t plane = b->elem;
    for (int d = 0; d < b->ndims; d++)
        if (d != slow_dim(b))
            plane *= b->sizes[d];
    return plane;
}

/* Move the box by the view's displacement, for ranks whose displacements
 * differ: whole planes go to *q, the rest must shift the box inside the
 * plane without wrapping. -1 when it cannot. */
static int box_place(mpiio_box *b, MPI_Offset disp, int64_t *q)
{
    int s = slow_dim(b);
    int64_t plane = plane_bytes(b), e;
    *q = disp / plane;
    if ((disp % plane) % b->elem)
        return -1;
    e = (disp % plane) / b->elem;
    for (int i = 0; i < b->ndims; i++) {
        int d = b->order == MPI_ORDER_C ? b->ndims - 1 - i : i;
        if (d == s)
            continue;
        b->starts[d] += e % b->sizes[d];
        e /= b->sizes[d];
        if (b->starts[d] + b->subsizes[d] > b->sizes[d])
            return -1;
    }
    return 0;
}

static int local_view(mpiio_file *st, MPI_Datatype etype,
                      MPI_Datatype filetype, const char *datarep,
                      mpiio_box *b, char *why, size_t len)
{
    int es = 0;
    int64_t tile;
    if (!st->enabled) {
        snprintf(why, len, "passion_enable=false");
        return -1;
    }
    if (strcmp(datarep, "native")) {
        snprintf(why, len, "data representation %s", datarep);
        return -1;
    }
    if (st->amode & (MPI_MODE_SEQUENTIAL | MPI_MODE_APPEND)) {
        snprintf(why, len, "sequential or append mode");
        return -1;
    }
    if (MPI_Type_size(etype, &es) != MPI_SUCCESS || es < 1) {
        snprintf(why, len, "etype of no size");
        return -1;
    }
    if (mpiio_decode_filetype(filetype, b, why, len))
        return -1;
    tile = b->elem;
    for (int d = 0; d < b->ndims; d++) {
        if (b->starts[d] < 0 || b->subsizes[d] < 1 ||
            b->starts[d] + b->subsizes[d] > b->sizes[d]) {
            snprintf(why, len, "filetype box outside its array");
            return -1;
        }
        tile *= b->subsizes[d];
    }
    if (tile % es) {
        snprintf(why, len, "filetype data not whole etypes");
        return -1;
    }
    st->etype_size = es;
    st->tile_bytes = tile;
    return 0;
}

void mpiio_view_drop(mpiio_file *st)
{
    mpiio_enter();
    if (st->pf)
        passion_file_close(st->pf);
    if (st->arr)
        passion_array_free(st->arr);
    mpiio_leave();
    st->pf = NULL;
    st->arr = NULL;
    st->view_ok = 0;
}

/* Open passion's file on the array (collective; the real file is at
 * least need_bytes long on every rank). */
static int pf_open(mpiio_file *st)
{
    int rc;
    passion_mode mode = (st->amode & MPI_MODE_RDONLY) ? PASSION_MODE_RDONLY
                                                      : PASSION_MODE_RDWR;
    mpiio_enter();
    rc = passion_file_open(st->arr, st->name, mode, &st->pf);
    mpiio_leave();
    if (rc)
        st->pf = NULL;
    return rc;
}

/* Make the array of the agreed view (collective): b is this rank's box,
 * already moved by shift planes; the array has `header` bytes before it
 * and `slow` indices in its slowest dimension. */
static int view_array(mpiio_file *st, const mpiio_box *b, int64_t shift,
                      int64_t header, int64_t slow, MPI_Offset fsize)
{
    int s = slow_dim(b), rc = 0;
    int64_t shape[MPIIO_MAX_DIMS], start[MPIIO_MAX_DIMS];
    int64_t count[MPIIO_MAX_DIMS];
    for (int d = 0; d < b->ndims; d++) {
        shape[d] = d == s ? slow : b->sizes[d];
        start[d] = d == s ? b->starts[d] + shift : b->starts[d];
        count[d] = b->subsizes[d];
    }
    mpiio_enter();
    if (!st->ctx)
        rc = passion_init(st->comm, NULL, &st->ctx);
    if (!rc)
        rc = passion_array_spec_init(&st->spec, b->ndims, shape, b->elem);
    if (!rc) {
        st->spec.kind = PASSION_KIND_BYTES;
        st->spec.storage = b->order == MPI_ORDER_C ? PASSION_ROW_MAJOR
                                                   : PASSION_COL_MAJOR;
        st->spec.placement = PASSION_PLACE_GLOBAL;
        st->spec.header_bytes = header;
        rc = passion_array_create(st->ctx, &st->spec, &st->arr);
    }
    if (!rc)
        rc = passion_section_set(&st->sec, b->ndims, start, count, NULL);
    mpiio_leave();
    if (rc)
        return rc;
    st->need_bytes = b->elem;
    for (int d = 0; d < b->ndims; d++)
        st->need_bytes *= shape[d];
    st->need_bytes += header;
    st->view_ok = 1;
    if (fsize >= st->need_bytes)
        return pf_open(st);
    return 0;
}

/* Collective. The view is served when every rank's filetype is a box of
 * the same array and either all displacements are equal (the array
 * starts there) or each moves its box by whole planes plus a shift
 * inside the plane (the array starts at the lowest such plane). */
void mpiio_view_set(mpiio_file *st, MPI_Offset disp, MPI_Datatype etype,
                    MPI_Datatype filetype, const char *datarep,
                    MPI_Info info)
{
    char why[MPIIO_REASON] = "";
    mpiio_box b, moved;
    int64_t q = 0;
    MPI_Offset fsize = 0;
    long long v[2 * AG_N];
    int agreed, same_disp, s = 0, rc;

    mpiio_view_drop(st);
    st->enabled = mpiio_info_enabled(info, st->enabled);
    memset(&b, 0, sizeof b);
    memset(v, 0, sizeof v);
    v[AG_OK] = local_view(st, etype, filetype, datarep, &b, why,
                          sizeof why) == 0;
    PMPI_File_get_size(st->fh, &fsize);
    if (v[AG_OK]) {
        s = slow_dim(&b);
        moved = b;
        v[AG_NDIMS] = b.ndims;
        v[AG_ORDER] = b.order;
        v[AG_ELEM] = b.elem;
        v[AG_DISP] = disp;
        v[AG_PLACED] = box_place(&moved, disp, &q) == 0;
        v[AG_Q] = q;
        v[AG_QEND] = q + b.sizes[s];
        for (int d = 0; d < b.ndims; d++)
            v[AG_DIMS + d] = d == s ? 0 : b.sizes[d];
    }
    v[AG_SIZE] = fsize;
    for (int i = 0; i < AG_N; i++)
        v[AG_N + i] = -v[i];
    MPI_Allreduce(MPI_IN_PLACE, v, 2 * AG_N, MPI_LONG_LONG, MPI_MIN,
                  st->comm);
    agreed = v[AG_OK] == 1;
    for (int i = AG_NDIMS; i < AG_N && agreed; i++)
        if ((i == AG_NDIMS || i == AG_ORDER || i == AG_ELEM ||
             i >= AG_DIMS) && v[i] != -v[AG_N + i])
            agreed = 0;
    same_disp = v[AG_DISP] == -v[AG_N + AG_DISP];
    if (agreed && !same_disp && v[AG_PLACED] != 1) {
        agreed = 0;
        snprintf(why, sizeof why, "displacements differ by more than "
                 "whole planes of the array");
    }
    if (!agreed) {
        if (!why[0])
            snprintf(why, sizeof why, v[AG_OK] == 1
                     ? "ranks' views are not boxes of one array"
                     : "another rank's view is not served");
        mpiio_pass(st, MPIIO_SET_VIEW, why);
        return;
    }
    if (same_disp)
        rc = view_array(st, &b, 0, disp, b.sizes[s],
                        (MPI_Offset)v[AG_SIZE]);
    else
        rc = view_array(st, &moved, q - v[AG_Q], v[AG_Q] * plane_bytes(&b),
                        -v[AG_N + AG_QEND] - v[AG_Q],
                        (MPI_Offset)v[AG_SIZE]);
    if (rc) {
        snprintf(why, sizeof why, "passion: %s", passion_strerror(rc));
        mpiio_pass(st, MPIIO_SET_VIEW, why);
        if (!st->pf)
            mpiio_view_drop(st);
    }
}

/* Byte just past this rank's last element of the section (0 if empty). */
static int64_t sec_end(const mpiio_file *st)
{
    const passion_array_spec *sp = &st->spec;
    int64_t idx = 0;
    for (int i = 0; i < sp->ndims; i++) {
        int d = sp->storage == PASSION_ROW_MAJOR ? i : sp->ndims - 1 - i;
        if (st->sec.count[d] < 1)
            return 0;
        idx = idx * sp->shape[d] + st->sec.start[d] + st->sec.count[d] - 1;
    }
    return sp->header_bytes + (idx + 1) * sp->elem_size;
}

/* Collective write to a file shorter than the array: extend, write, cut
 * back. *served 0 (nothing done) when passion cannot open the file. */
static int write_short_all(mpiio_file *st, const void *buf, int *served)
{
    MPI_Offset old = 0;
    long long end, top;
    int rc;
    PMPI_File_get_size(st->fh, &old);
    PMPI_File_set_size(st->fh, st->need_bytes);
    if (pf_open(st)) {
        PMPI_File_set_size(st->fh, old);
        *served = 0;
        return 0;
    }
    *served = 1;
    mpiio_enter();
    rc = passion_file_write_all(st->pf, &st->sec, buf, NULL,
                                PASSION_METHOD_AUTO);
    mpiio_leave();
    end = sec_end(st);
    MPI_Allreduce(&end, &top, 1, MPI_LONG_LONG, MPI_MAX, st->comm);
    if (top < old)
        top = old;
    if (top < st->need_bytes) {
        mpiio_enter();
        passion_file_close(st->pf);
        mpiio_leave();
        st->pf = NULL;
        PMPI_File_set_size(st->fh, top);
    }
    return rc;
}

static int mpi_code(int rc)
{
    switch (rc) {
    case PASSION_ENOMEM: return MPI_ERR_NO_MEM;
    case PASSION_ENOSPC: return MPI_ERR_NO_SPACE;
    case PASSION_EACCES: return MPI_ERR_ACCESS;
    default: return MPI_ERR_IO;
    }
}

static int local_access(mpiio_file *st, int write, int at,
                        MPI_Offset offset, int count, MPI_Datatype type,
                        int coll, char *why, size_t len)
{
    int64_t ms = 0;
    int atomic = 0;
    MPI_Offset pos = 0;
    if (!st->view_ok) {
        snprintf(why, len, "%s", st->reason[MPIIO_SET_VIEW][0]
                 ? st->reason[MPIIO_SET_VIEW]
                 : "no view set (the default byte view)");
        return -1;
    }
    if (!st->pf && (!write || !coll)) {
        snprintf(why, len, "file shorter than the view's array");
        return -1;
    }
    if (write && (st->amode & MPI_MODE_RDONLY)) {
        snprintf(why, len, "file opened read-only");
        return -1;
    }
    if (PMPI_File_get_atomicity(st->fh, &atomic) != MPI_SUCCESS || atomic) {
        snprintf(why, len, "atomic mode");
        return -1;
    }
    if (mpiio_memtype_size(type, &ms)) {
        snprintf(why, len, "memory type not contiguous");
        return -1;
    }
    if (count < 0 || ms * count != st->tile_bytes) {
        snprintf(why, len, "access of %lld bytes, the filetype holds %lld",
                 (long long)(ms * count), (long long)st->tile_bytes);
        return -1;
    }
    if (!at && PMPI_File_get_position(st->fh, &pos) != MPI_SUCCESS)
        pos = -1;
    if ((at ? offset : pos) != 0) {
        snprintf(why, len, "access not at the start of the view");
        return -1;
    }
    return 0;
}

int mpiio_access(mpiio_file *st, mpiio_kind kind, int coll, int at,
                 MPI_Offset offset, const void *wbuf, void *rbuf, int count,
                 MPI_Datatype type, MPI_Status *status, int *served)
{
    char why[MPIIO_REASON] = "";
    int write = kind == MPIIO_WRITE || kind == MPIIO_WRITE_AT ||
                kind == MPIIO_WRITE_ALL || kind == MPIIO_WRITE_AT_ALL;
    int ok, all, rc = 0;

    *served = 0;
    ok = local_access(st, write, at, offset, count, type, coll, why,
                      sizeof why) == 0;
    all = ok;
    if (coll && st->view_ok) /* else no rank serves: nothing to agree */
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, st->comm);
    if (!all) {
        mpiio_pass(st, kind, ok ? "another rank's access is not served"
                                : why);
        return MPI_SUCCESS;
    }
    *served = 1;
    if (write && coll && !st->pf) {
        rc = write_short_all(st, wbuf, served);
        if (!*served) {
            mpiio_pass(st, kind, "passion cannot open the file");
            return MPI_SUCCESS;
        }
    } else {
        mpiio_enter();
        if (write && coll)
            rc = passion_file_write_all(st->pf, &st->sec, wbuf, NULL,
                                        PASSION_METHOD_AUTO);
        else if (write)
            rc = passion_file_write(st->pf, &st->sec, wbuf, NULL,
                                    PASSION_METHOD_DIRECT);
        else if (coll)
            rc = passion_file_read_all(st->pf, &st->sec, rbuf, NULL,
                                       PASSION_METHOD_AUTO);
        else
            rc = passion_file_read(st->pf, &st->sec, rbuf, NULL,
                                   PASSION_METHOD_AUTO);
        mpiio_leave();
    }
    st->served++;
    if (rc) {
        int code = mpi_code(rc);
        MPI_File_call_errhandler(st->fh, code);
        return code;
    }
    if (!at)
        PMPI_File_seek(st->fh, st->tile_bytes / st->etype_size, MPI_SEEK_SET);
    if (status != MPI_STATUS_IGNORE) /* in bytes: right for any type's
                                        MPI_Get_count / _elements */
        MPI_Status_set_elements_x(status, MPI_BYTE, st->tile_bytes);
    return MPI_SUCCESS;
}

void mpiio_release(mpiio_file *st)
{
    mpiio_view_drop(st);
    mpiio_enter();
    if (st->ctx)
        passion_finalize(st->ctx);
    mpiio_leave();
    st->ctx = NULL;
    if (st->comm != MPI_COMM_NULL)
        MPI_Comm_free(&st->comm);
    st->fh = MPI_FILE_NULL;
}
