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
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "mpiio.h"

/* One MPI_Allreduce (MIN) of values every rank pushes in the same order:
 * a minimum as is, a maximum negated, a value that must be the same on
 * every rank as itself and its negation. */
#define AG_CAP 64
typedef struct agree {
    int n;
    long long v[AG_CAP];
} agree;

static int ag_min(agree *a, long long x)
{
    a->v[a->n] = x;
    return a->n++;
}
static int ag_max(agree *a, long long x) { return ag_min(a, -x); }
static int ag_same(agree *a, long long x)
{
    int i = ag_min(a, x);
    ag_min(a, -x);
    return i;
}
static long long ag_getmax(const agree *a, int i) { return -a->v[i]; }
static int ag_equal(const agree *a, int i) { return a->v[i] == -a->v[i + 1]; }

/* Variants of a view's array, tried in this order: tiled (several
 * filetypes) before one filetype; the array at the lowest displacement
 * before the array placed in absolute file offsets. */
enum { V_TILED_LOW, V_TILED_ABS, V_ONE_LOW, V_ONE_ABS, V_N };

static MPI_Offset v_origin(int v, MPI_Offset low)
{
    return v == V_TILED_ABS || v == V_ONE_ABS ? 0 : low;
}

static int local_view(mpiio_file *st, MPI_Datatype etype,
                      MPI_Datatype filetype, const char *datarep,
                      mpiio_strided *g, char *why, size_t len)
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
    if (mpiio_decode(filetype, g, why, len)) {
        char what[MPIIO_REASON];
        snprintf(what, sizeof what, "filetype: %s", why);
        snprintf(why, len, "%s", what);
        return -1;
    }
    tile = g->elem;
    for (int d = 0; d < g->ndims; d++)
        tile *= g->count[d];
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

/* The file's context, made with the file's memory budget (collective). */
static int ctx_make(mpiio_file *st)
{
    passion_options *o = NULL;
    int rc = 0;
    if (st->ctx && st->ctx_budget == st->budget)
        return 0;
    mpiio_enter();
    if (st->ctx)
        passion_finalize(st->ctx);
    st->ctx = NULL;
    /* the file as raw bytes whatever its name or contents (an HDF5 or
       netCDF file's view is bytes of it) */
    rc = passion_options_create(&o);
    if (!rc)
        rc = passion_options_set(o, "file_format", "raw");
    if (!rc && st->budget > 0)
        rc = passion_options_set_int(o, "memory_budget", st->budget);
    if (!rc)
        rc = passion_init(st->comm, o, &st->ctx);
    passion_options_free(o);
    mpiio_leave();
    st->ctx_budget = st->budget;
    return rc;
}

/* Make the array of the agreed view (collective): st->lay's shape and
 * st->header; open passion's file when the real one is long enough. */
static int view_array(mpiio_file *st, MPI_Offset fsize)
{
    const mpiio_layout *L = &st->lay;
    int rc = ctx_make(st);
    mpiio_enter();
    if (!rc)
        rc = passion_array_spec_init(&st->spec, L->ndims, L->shape, L->elem);
    if (!rc) {
        st->spec.kind = PASSION_KIND_BYTES;
        st->spec.storage = PASSION_ROW_MAJOR;
        st->spec.placement = PASSION_PLACE_GLOBAL;
        st->spec.header_bytes = st->header;
        rc = passion_array_create(st->ctx, &st->spec, &st->arr);
    }
    mpiio_leave();
    if (rc)
        return rc;
    st->need_bytes = L->elem;
    for (int d = 0; d < L->ndims; d++)
        st->need_bytes *= L->shape[d];
    st->need_bytes += st->header;
    st->view_ok = 1;
    if (fsize >= st->need_bytes)
        return pf_open(st);
    return 0;
}

/* This rank's layouts of the view in every variant, into the agreement:
 * per variant served-flag, lowest and highest index of dimension 0. */
static void view_variants(const mpiio_strided *g, MPI_Offset disp,
                          MPI_Offset low, unsigned live, int ok, int empty,
                          mpiio_layout *L, agree *a, int *at)
{
    for (int v = 0; v < V_N; v++) {
        int tiled = v == V_TILED_LOW || v == V_TILED_ABS;
        int64_t pos = g->off + disp - v_origin(v, low);
        int good = ok && mpiio_layout_make(g, tiled, pos, live, &L[v]) == 0;
        int64_t s0 = good && !empty ? L[v].start[0] : 0, e0 = 0;
        if (good && !empty)
            e0 = s0 + (tiled ? 1 : (L[v].count[0] - 1) * L[v].stride[0] + 1);
        at[v] = ag_min(a, good);
        ag_min(a, good && !empty ? s0 : LLONG_MAX);
        ag_max(a, e0);
    }
}

/* The values of the view every rank must share; their first index. */
static int view_same(const mpiio_file *st, const mpiio_strided *g, int ok,
                     unsigned live, agree *a)
{
    int first = ag_same(a, ok ? g->elem : 0);
    ag_same(a, ok ? g->ndims : 0);
    for (int d = 0; d < MPIIO_MAX_DIMS - 1; d++)
        ag_same(a, ok && (live & (1u << d)) ? g->stride[d] : 0);
    ag_same(a, st->budget);
    ag_same(a, st->method);
    return first;
}

/* Collective: every rank's pattern re-expressed over the union of the
 * strides of all ranks' dimensions of more than one index (descending),
 * a dimension a rank lacks taking count 1, then an innermost dimension
 * of one element (while the limit allows), so that the ranks' dimensions
 * correspond one to one (decoding drops dimensions of count 1, and ranks
 * whose selections differ, such as HDF5's hyperslabs of different
 * counts, keep different ones). The typemap is unchanged: the strides of
 * a decoded pattern decrease outward, as the union's do. 0, or -1 (the
 * same on every rank) when the union has too many dimensions. */
static int align_strides(const mpiio_file *st, mpiio_strided *g, int ok)
{
    enum { K = MPIIO_MAX_DIMS - 1 };
    long long uni[K + 1], below = LLONG_MAX;
    int nu = 0, empty = 0;
    for (int d = 0; ok && d < g->ndims; d++)
        empty |= g->count[d] == 0;
    /* the union, largest first: each round agrees on the largest stride
       any rank has below the last one (0: none left); a round more than
       K finds whether the union is too large */
    for (;;) {
        long long x = 0;
        for (int d = 0; ok && d < g->ndims; d++)
            if (g->count[d] > 1 && g->stride[d] < below && g->stride[d] > x)
                x = g->stride[d];
        MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_LONG_LONG, MPI_MAX, st->comm);
        if (x <= 0)
            break;
        if (nu == K)
            return -1;
        uni[nu++] = x;
        below = x;
    }
    if (!ok)
        return 0;
    mpiio_strided h = *g;
    h.ndims = nu;
    for (int j = 0; j < nu; j++) {
        h.count[j] = 1;
        h.stride[j] = uni[j];
        for (int d = 0; d < g->ndims; d++)
            if (g->count[d] > 1 && g->stride[d] == uni[j])
                h.count[j] = g->count[d];
    }
    /* an innermost dimension of one element, as decoding with every
       dimension kept gives: the memory side may then stride the data's
       innermost dimension (a column of a wider array in memory) */
    if (nu < K) {
        h.count[nu] = 1;
        h.stride[nu] = g->elem;
        h.ndims = ++nu;
    }
    if (empty)
        h.count[nu - 1] = 0;
    *g = h;
    return 0;
}

/* Collective. The view is served when every rank's filetype is a
 * section of one array (variants above); the array's outer dimension
 * spans every rank's data (tiled: and the whole filetypes the file
 * holds). */
void mpiio_view_set(mpiio_file *st, MPI_Offset disp, MPI_Datatype etype,
                    MPI_Datatype filetype, const char *datarep,
                    MPI_Info info)
{
    char why[MPIIO_REASON] = "";
    mpiio_strided g;
    mpiio_layout L[V_N];
    agree a = {.n = 0};
    MPI_Offset fsize = 0;
    long long pre[MPIIO_MAX_DIMS + 1];
    unsigned live = 0;
    int at[V_N], ok, iok, same, isize, iext, chosen = -1, empty = 0, rc;

    mpiio_view_drop(st);
    st->user_view = 1;
    mpiio_info_apply(st, info);
    memset(&g, 0, sizeof g);
    ok = local_view(st, etype, filetype, datarep, &g, why, sizeof why) == 0;
    if (align_strides(st, &g, ok) && ok) {
        ok = 0;
        snprintf(why, sizeof why, "the ranks' filetypes together have "
                 "more than %d strides", MPIIO_MAX_DIMS - 1);
    }
    for (int d = 0; ok && d < g.ndims; d++)
        empty |= g.count[d] == 0;
    PMPI_File_get_size(st->fh, &fsize);
    /* the lowest displacement; dimensions of more than one index */
    pre[0] = disp;
    for (int d = 0; d < MPIIO_MAX_DIMS; d++)
        pre[d + 1] = ok && d < g.ndims ? -g.count[d] : 0;
    MPI_Allreduce(MPI_IN_PLACE, pre, MPIIO_MAX_DIMS + 1, MPI_LONG_LONG,
                  MPI_MIN, st->comm);
    for (int d = 0; d < MPIIO_MAX_DIMS; d++)
        live |= pre[d + 1] < -1 ? 1u << d : 0;
    iok = ag_min(&a, ok);
    same = view_same(st, &g, ok, live, &a);
    isize = ag_min(&a, fsize);
    iext = ag_same(&a, ok ? g.extent : 0); /* tiling needs one extent */
    view_variants(&g, disp, (MPI_Offset)pre[0], live, ok, empty, L, &a, at);
    MPI_Allreduce(MPI_IN_PLACE, a.v, a.n, MPI_LONG_LONG, MPI_MIN, st->comm);
    ok = ok && a.v[iok] == 1;
    for (int i = same; i < isize && ok; i += 2)
        if (!ag_equal(&a, i)) {
            ok = 0;
            snprintf(why, sizeof why, "ranks' filetypes are not sections "
                     "of one array, or their passion info keys differ");
        }
    for (int v = 0; v < V_N && ok && chosen < 0; v++)
        if (a.v[at[v]] == 1 && a.v[at[v] + 1] != LLONG_MAX &&
            (v >= V_ONE_LOW || ag_equal(&a, iext)))
            chosen = v;
    if (chosen < 0) {
        if (!why[0])
            snprintf(why, sizeof why, ok ? "the filetypes' data are not "
                     "sections of one array" : "another rank's view is not "
                     "served");
        mpiio_pass(st, MPIIO_SET_VIEW, why);
        return;
    }
    {
        long long s0 = a.v[at[chosen] + 1], e0 = ag_getmax(&a, at[chosen] + 2);
        int tiled = chosen == V_TILED_LOW || chosen == V_TILED_ABS;
        MPI_Offset origin = v_origin(chosen, (MPI_Offset)pre[0]);
        int64_t unit0 = L[chosen].unit[0] * g.elem;
        st->lay = L[chosen];
        st->header = origin + s0 * unit0;
        if (!empty)
            st->lay.start[0] -= s0;
        st->lay.shape[0] = e0 - s0;
        if (tiled && (a.v[isize] - st->header) / unit0 > st->lay.shape[0])
            st->lay.shape[0] = (a.v[isize] - st->header) / unit0;
    }
    rc = view_array(st, (MPI_Offset)a.v[isize]);
    if (rc) {
        snprintf(why, sizeof why, "passion: %s", passion_strerror(rc));
        mpiio_pass(st, MPIIO_SET_VIEW, why);
        if (!st->pf)
            mpiio_view_drop(st);
    }
}

/* Collective: the view again, as MPI holds it (after info changes). */
void mpiio_view_redo(mpiio_file *st)
{
    MPI_Offset disp = 0;
    MPI_Datatype et = MPI_DATATYPE_NULL, ft = MPI_DATATYPE_NULL;
    char rep[MPI_MAX_DATAREP_STRING + 1] = "";
    if (!st->user_view ||
        PMPI_File_get_view(st->fh, &disp, &et, &ft, rep) != MPI_SUCCESS)
        return;
    mpiio_view_set(st, disp, et, ft, rep, MPI_INFO_NULL);
    for (int i = 0; i < 2; i++) {
        MPI_Datatype *t = i ? &ft : &et;
        int ni, na, nd, comb;
        if (MPI_Type_get_envelope(*t, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
            comb != MPI_COMBINER_NAMED)
            MPI_Type_free(t);
    }
}

/* Byte just past this rank's last element of sec (0 if empty). */
static int64_t sec_end(const mpiio_file *st, const passion_section *sec)
{
    const passion_array_spec *sp = &st->spec;
    int64_t idx = 0;
    for (int d = 0; d < sp->ndims; d++) {
        if (sec->count[d] < 1)
            return 0;
        idx = idx * sp->shape[d] + sec->start[d] +
              (sec->count[d] - 1) * sec->stride[d];
    }
    return sp->header_bytes + (idx + 1) * sp->elem_size;
}

/* One served access: this rank's section and memory side. */
typedef struct access {
    int write, coll, at;
    passion_section sec;
    passion_memspec mem;
    int packed;
    int64_t memoff;  /* bytes from the user's buffer to the first element */
    int64_t data;    /* bytes moved */
    int64_t tile_end; /* tiled: tiles of the array this access needs */
    MPI_Offset pos;  /* the access's place in the view, in etypes */
} access;

static int section_access(mpiio_file *st, access *x, const void *wbuf,
                          void *rbuf)
{
    const passion_memspec *m = x->packed ? NULL : &x->mem;
    passion_method cm = st->method;
    int rc;
    const char *w = (const char *)wbuf + x->memoff;
    char *r = (char *)rbuf + x->memoff;
    mpiio_enter();
    if (x->write && x->coll)
        rc = passion_file_write_all(st->pf, &x->sec, w, m, cm);
    else if (x->write)
        rc = passion_file_write(st->pf, &x->sec, w, m, PASSION_METHOD_DIRECT);
    else if (x->coll)
        rc = passion_file_read_all(st->pf, &x->sec, r, m, cm);
    else
        rc = passion_file_read(st->pf, &x->sec, r, m, PASSION_METHOD_AUTO);
    mpiio_leave();
    return rc;
}

/* Collective write to a file shorter than the array: extend, write, cut
 * back. *served 0 (nothing done) when passion cannot open the file. */
static int write_short_all(mpiio_file *st, access *x, const void *buf,
                           int *served)
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
    rc = section_access(st, x, buf, NULL);
    end = sec_end(st, &x->sec);
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

/* The access's filetypes: tiles j .. j+m-1 of the view (m = 1, j = 0
 * unless tiled), as this rank's section. */
static int access_tiles(mpiio_file *st, access *x, char *why, size_t len)
{
    const mpiio_layout *L = &st->lay;
    int64_t m = 0, j = 0, start = x->pos * st->etype_size;
    if (st->tile_bytes > 0) {
        m = x->data / st->tile_bytes;
        j = start / st->tile_bytes;
    }
    if (st->tile_bytes > 0 ? x->data % st->tile_bytes ||
                                 start % st->tile_bytes : x->data != 0) {
        snprintf(why, len, "access of %lld bytes at byte %lld of the view, "
                 "filetypes of %lld", (long long)x->data, (long long)start,
                 (long long)st->tile_bytes);
        return -1;
    }
    if (!L->tiled && m > 0 && (m != 1 || j != 0)) {
        snprintf(why, len, "access of %lld filetypes at filetype %lld, the "
                 "filetypes do not tile one array", (long long)m,
                 (long long)j);
        return -1;
    }
    if (passion_section_set(&x->sec, L->ndims, L->start, L->count,
                            L->stride))
        return snprintf(why, len, "section"), -1;
    if (m == 0)
        x->sec.count[0] = 0;
    else if (L->tiled) { /* tile j: j strides of dimension 0 further */
        x->sec.start[0] += j * L->stride[0];
        x->sec.count[0] = m;
    }
    x->tile_end = m ? x->sec.start[0] + (m - 1) * x->sec.stride[0] + 1 : 0;
    if (L->tiled && !x->coll && x->tile_end > L->shape[0]) {
        snprintf(why, len, "independent access past the array of the "
                 "file's size at the last collective call");
        return -1;
    }
    return 0;
}

static int local_access(mpiio_file *st, access *x, MPI_Offset offset,
                        int count, MPI_Datatype type, char *why, size_t len)
{
    MPI_Count ts = 0;
    int atomic = 0;
    mpiio_layout L;
    if (!st->view_ok) {
        snprintf(why, len, "%s", st->reason[MPIIO_SET_VIEW][0]
                 ? st->reason[MPIIO_SET_VIEW]
                 : "no view set (the default byte view)");
        return -1;
    }
    if (x->write && (st->amode & MPI_MODE_RDONLY)) {
        snprintf(why, len, "file opened read-only");
        return -1;
    }
    if (PMPI_File_get_atomicity(st->fh, &atomic) != MPI_SUCCESS || atomic) {
        snprintf(why, len, "atomic mode");
        return -1;
    }
    if (count < 0 || MPI_Type_size_x(type, &ts) != MPI_SUCCESS) {
        snprintf(why, len, "negative count or bad type");
        return -1;
    }
    x->data = (int64_t)ts * count;
    if (!x->at && PMPI_File_get_position(st->fh, &x->pos) != MPI_SUCCESS)
        return snprintf(why, len, "no file position"), -1;
    if (x->at)
        x->pos = offset;
    if (x->pos < 0)
        return snprintf(why, len, "negative offset"), -1;
    if (access_tiles(st, x, why, len))
        return -1;
    L = st->lay; /* the access's counts, for the memory side */
    for (int d = 0; d < L.ndims; d++)
        L.count[d] = x->sec.count[d];
    if (mpiio_layout_mem(&L, type, count, &x->mem, &x->packed, &x->memoff,
                         why, len))
        return -1;
    if (!x->packed && passion_section_elems(&x->sec, st->lay.ndims) !=
                          x->data / st->lay.elem)
        return snprintf(why, len, "memory type not one filetype's "
                        "section"), -1;
    return 0;
}

/* Collective, tiled: the array grows to hold the access's tiles. */
static int grow_array(mpiio_file *st, long long tiles, long long fsize)
{
    if (tiles <= st->lay.shape[0])
        return 0;
    mpiio_enter();
    if (st->pf)
        passion_file_close(st->pf);
    if (st->arr)
        passion_array_free(st->arr);
    mpiio_leave();
    st->pf = NULL;
    st->arr = NULL;
    st->view_ok = 0;
    st->lay.shape[0] = tiles;
    return view_array(st, (MPI_Offset)fsize);
}

int mpiio_access(mpiio_file *st, mpiio_kind kind, int coll, int at,
                 MPI_Offset offset, const void *wbuf, void *rbuf, int count,
                 MPI_Datatype type, MPI_Status *status, int *served)
{
    char why[MPIIO_REASON] = "";
    access x = {.coll = coll, .at = at};
    long long v[3];
    int rc = 0;

    x.write = kind == MPIIO_WRITE || kind == MPIIO_WRITE_AT ||
              kind == MPIIO_WRITE_ALL || kind == MPIIO_WRITE_AT_ALL;
    *served = 0;
    v[0] = local_access(st, &x, offset, count, type, why, sizeof why) == 0;
    v[1] = v[0] ? -(long long)x.tile_end : 0;
    v[2] = 0;
    if (coll && st->view_ok) { /* else no rank serves: nothing to agree */
        MPI_Offset fsize = 0;
        PMPI_File_get_size(st->fh, &fsize);
        v[2] = fsize;
        MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_LONG_LONG, MPI_MIN, st->comm);
        if (v[0] == 1 && st->lay.tiled &&
            grow_array(st, -v[1], v[2]) && !st->view_ok)
            v[0] = 0;
        if (v[0] == 1 && !st->pf && v[2] >= st->need_bytes)
            pf_open(st); /* the file has grown (preallocate, set_size) */
    }
    if (v[0] == 1 && !st->pf && (!x.write || !coll))
        snprintf(why, sizeof why, "file shorter than the view's array");
    if (v[0] != 1 || why[0]) {
        mpiio_pass(st, kind, why[0] ? why : "another rank's access is not "
                                            "served");
        return MPI_SUCCESS;
    }
    *served = 1;
    if (x.write && coll && !st->pf) {
        rc = write_short_all(st, &x, wbuf, served);
        if (!*served) {
            mpiio_pass(st, kind, "passion cannot open the file");
            return MPI_SUCCESS;
        }
    } else {
        rc = section_access(st, &x, wbuf, rbuf);
    }
    st->served++;
    if (rc) {
        int code = mpi_code(rc);
        MPI_File_call_errhandler(st->fh, code);
        return code;
    }
    if (!at)
        PMPI_File_seek(st->fh, x.pos + x.data / st->etype_size, MPI_SEEK_SET);
    if (status != MPI_STATUS_IGNORE) /* in bytes: right for any type's
                                        MPI_Get_count / _elements */
        MPI_Status_set_elements_x(status, MPI_BYTE, x.data);
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
