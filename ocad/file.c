/*
 * file.c - files of the placement models: opening (or creating) and
 * closing them. An open file's name and durability are file_name.c's, its
 * independent section access file_access.c's.
 *
 * Local placement (LPM, thesis 5.3.2): each rank's local array file holds
 * its local array with the ghost areas, in the array's storage order;
 * section indices are local, the ghosts addressable as -g..-1 and n..n+g-1.
 * Global placement (GPM): one file holding the global array after
 * header_bytes, or a file of a format (.npy, HDF5, netCDF) whose header
 * gives the offset (and, for a netCDF record variable, the step between
 * its records, which interleave with other variables'); section indices
 * are global.
 *
 * Invariants: an open file is at least data_bytes long (checked at open,
 * sized at create); open and close are collective and agree on the
 * outcome, so a failure on one rank fails the call on all.
 */
#include "ocad.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int ocad_local_path(const char *pat, int rank, char **out)
{
    char num[16];
    int nl = snprintf(num, sizeof num, "%d", rank);
    size_t len = 0, conv = 0;
    for (const char *c = pat; *c; c++) {
        if (c[0] == '%' && (c[1] == 'd' || c[1] == 'r')) {
            conv++;
            len += (size_t)nl;
            c++;
        } else {
            if (c[0] == '%' && c[1] == '%')
                c++;
            len++;
        }
    }
    if (!conv)
        len += 1 + (size_t)nl;
    char *o = malloc(len + 1), *w = o;
    *out = o;
    if (!o)
        return -ENOMEM;
    for (const char *c = pat; *c; c++) {
        if (c[0] == '%' && (c[1] == 'd' || c[1] == 'r')) {
            memcpy(w, num, (size_t)nl);
            w += nl;
            c++;
        } else {
            if (c[0] == '%' && c[1] == '%')
                c++;
            *w++ = *c;
        }
    }
    if (!conv)
        w += sprintf(w, ".%s", num);
    *w = '\0';
    return 0;
}

int ocad_file_local_name(passion_ctx *ctx, const char *pat, char **out)
{
    *out = NULL;
    if (core_alloc_fault(ctx)) /* ocad_local_path has no context */
        return core_err(ctx, PASSION_ENOMEM, "file name");
    if (ocad_local_path(pat, ctx->rank, out))
        return core_err(ctx, PASSION_ENOMEM, "file name");
    return PASSION_OK;
}

/* FNV-1a over bytes, continuing from h. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

/* The file's identity (its path) and the array's layout in it, once per
   open: a collective call sends both in its FAD. */
void ocad_file_ident(passion_file *f)
{
    const char *path = f->fh->path;
    uint64_t h = fnv(1469598103934665603ULL, path, strlen(path));
    const ocad_fview *v = &f->fv;
    int64_t w[5 + 2 * PASSION_MAX_DIMS];
    memset(w, 0, sizeof w);
    w[0] = v->nd;
    w[1] = v->esize;
    w[2] = v->base;
    w[3 + 2 * PASSION_MAX_DIMS] = v->swap;
    w[4 + 2 * PASSION_MAX_DIMS] = v->step0;
    for (int d = 0; d < v->nd; d++) {
        w[3 + d] = v->extent[d];
        w[3 + PASSION_MAX_DIMS + d] = v->order[d];
    }
    uint64_t l = fnv(1469598103934665603ULL, w, sizeof w);
    memcpy(&f->ident[0], &h, sizeof h);
    memcpy(&f->ident[1], &l, sizeof l);
}

static void fill_view(passion_file *f)
{
    passion_array *a = f->a;
    ocad_fview *fv = &f->fv;
    memset(fv, 0, sizeof *fv);
    fv->nd = a->nd;
    fv->esize = a->esize;
    memcpy(fv->order, a->spec.order, sizeof fv->order);
    if (a->spec.placement == PASSION_PLACE_LOCAL) {
        int c[PASSION_MAX_DIMS];
        ocad_coords(a, f->ctx->rank, c);
        f->data_bytes = a->esize;
        for (int d = 0; d < a->nd; d++) {
            int64_t n = ocad_local_count(a, d, c[d]), g = a->spec.ghost[d];
            fv->extent[d] = n + 2 * g;
            fv->shift[d] = g;
            f->lo[d] = -g;
            f->hi[d] = n + g;
            f->data_bytes *= fv->extent[d];
        }
    } else {
        fv->base = a->spec.header_bytes;
        for (int d = 0; d < a->nd; d++) {
            fv->extent[d] = a->spec.shape[d];
            f->lo[d] = 0;
            f->hi[d] = a->spec.shape[d];
        }
        f->data_bytes = a->global_bytes + a->spec.header_bytes;
    }
}

/* The open file must hold data_bytes at least. */
static int open_one_size(passion_file *f, const char *name)
{
    int64_t sz;
    int rc = core_io_size(f->fh, &sz);
    if (rc)
        return rc;
    if (sz < f->data_bytes)
        return core_err(f->ctx, PASSION_ESHORT,
                        "%s holds %lld bytes, the array needs %lld", name,
                        (long long)sz, (long long)f->data_bytes);
    return PASSION_OK;
}

/* Open this rank's existing file and check its size. */
static int open_one(passion_file *f, const char *name, passion_mode mode,
                    int check_size)
{
    int flags = mode == PASSION_MODE_RDONLY ? CORE_O_RDONLY : CORE_O_RDWR;
    int rc = core_io_open(f->ctx, name, flags, &f->fh);
    if (rc)
        return rc;
    return check_size ? open_one_size(f, name) : PASSION_OK;
}

/*
 * Create this rank's file under its temporary name (*tmp, in the same
 * directory; a stale temporary of an earlier, killed create is replaced),
 * sized to data_bytes (zeros) with the header written (hlen > 0). Nothing
 * is visible under name until core_io_publish.
 */
static int create_temp(passion_file *f, const char *name, const char *hdr,
                       int64_t hlen, char **tmp)
{
    passion_ctx *ctx = f->ctx;
    if (!(*tmp = core_io_temp_name(name)))
        return core_err(ctx, PASSION_ENOMEM, "file name");
    int rc = core_io_open(ctx, *tmp, CORE_O_RDWR | CORE_O_CREATE |
                                          CORE_O_TRUNC, &f->fh);
    if (!rc)
        rc = core_io_resize(f->fh, f->data_bytes);
    if (!rc && hlen > 0)
        rc = core_io_write(f->fh, hdr, hlen, 0);
    return rc;
}

/*
 * Exclusive create: PASSION_EEXIST if name can be opened. Probing first
 * (and agreeing) means that no rank creates its file when another rank's
 * exists; O_EXCL at the create itself still catches a file made between.
 */
static int probe_absent(passion_ctx *ctx, const char *name)
{
    core_fh *fh = NULL;
    int rc = core_io_open(ctx, name, CORE_O_RDONLY, &fh);
    if (rc == PASSION_OK) {
        core_io_close(fh);
        return core_err(ctx, PASSION_EEXIST,
                        "%s exists (PASSION_MODE_CREATE_EXCL)", name);
    }
    if (rc == PASSION_ENOENT) {
        ctx->detail[0] = '\0';
        return PASSION_OK;
    }
    return rc;
}

/* The description of a's local set (lset.c) for pattern pat. */
static void lset_fill(const passion_array *a, const char *pat, ocad_lset *d)
{
    memset(d, 0, sizeof *d);
    const passion_array_spec *s = &a->spec;
    const char *slash = strrchr(pat, '/');
    snprintf(d->files, sizeof d->files, "%s", slash ? slash + 1 : pat);
    d->version = OCAD_LSET_VERSION;
    d->nranks = a->ctx->size;
    d->ndims = s->ndims;
    d->elem_size = s->elem_size;
    d->storage = s->storage;
    /* element type: the spec's kind and the files' byte order */
    d->kind = ocad_lset_kind(s);
    d->big_endian = ocad_lset_big_endian(s);
    for (int i = 0; i < s->ndims; i++) {
        d->shape[i] = s->shape[i];
        d->order[i] = s->order[i];
        d->grid[i] = s->grid[i];
        d->dist[i] = s->dist[i];
        d->block[i] = s->block[i];
        d->ghost[i] = s->ghost[i];
    }
}

/*
 * Rank 0 writes the description of the local set just created under pat
 * (lset.c): made complete under a temporary name, synced and renamed into
 * place, after the data files (so a description names a complete set). A
 * pattern whose directory holds a conversion, or whose file name does not
 * fit the description, gets none (no error: the set is still usable by
 * its spec).
 */
int ocad_file_lset_write(passion_file *f, const char *pat)
{
    passion_ctx *ctx = f->ctx;
    char *name = NULL, *tmp = NULL, *text = NULL;
    int64_t len = 0;
    const char *slash = strrchr(pat, '/');
    if (strlen(slash ? slash + 1 : pat) >= OCAD_LSET_FILES)
        return PASSION_OK;
    int e = ocad_lset_name(pat, &name);
    if (e == -EINVAL)
        return PASSION_OK;
    if (e || core_alloc_fault(ctx)) {
        free(name);
        return core_err(ctx, PASSION_ENOMEM, "local set description");
    }
    ocad_lset d;
    lset_fill(f->a, pat, &d);
    int rc = PASSION_OK;
    if (ocad_lset_format(&d, &text, &len))
        rc = core_err(ctx, PASSION_ENOMEM, "local set description");
    else if (!(tmp = core_io_temp_name(name)))
        rc = core_err(ctx, PASSION_ENOMEM, "file name");
    core_fh *fh = NULL;
    if (!rc)
        rc = core_io_open(ctx, tmp, CORE_O_RDWR | CORE_O_CREATE |
                                        CORE_O_TRUNC, &fh);
    if (!rc)
        rc = core_io_write(fh, text, len, 0);
    if (!rc)
        rc = core_io_publish(fh, name, 0);
    if (fh)
        core_io_close(fh);
    if (rc && tmp)
        core_io_discard(ctx, tmp);
    free(tmp);
    free(text);
    free(name);
    return rc;
}

/* The file's metadata for a new file of a's spec (format create hooks). */
static void meta_of(const passion_array *a, core_fmt_meta *m)
{
    memset(m, 0, sizeof *m);
    m->ndims = a->nd;
    memcpy(m->shape, a->spec.shape, sizeof(int64_t) * (size_t)a->nd);
    m->kind = a->spec.kind;
    m->elem_size = a->esize;
    m->endian = ocad_endian_resolve(a->spec.endian);
    int c = 1, fo = 1;
    for (int k = 0; k < a->nd; k++) {
        c &= a->spec.order[k] == k;
        fo &= a->spec.order[k] == a->nd - 1 - k;
    }
    m->storage = c ? PASSION_ROW_MAJOR
                 : fo ? PASSION_COL_MAJOR
                      : PASSION_ORDER_CUSTOM;
    m->data_bytes = a->global_bytes;
}

/*
 * An existing file's metadata against a's spec: the view (data offset, a
 * record variable's record step) and the bytes the file must hold. A
 * record variable opened writable with more records than the file has
 * grows first (collective: rank 0 runs the format's grow hook, every rank
 * agrees; the condition is the same on every rank, the metadata being
 * broadcast and the mode agreed).
 */
static int open_meta(passion_file *f, const ocad_format *F, const char *path,
                     const char *obj, const ocad_fmt_info *info,
                     passion_endian *endian)
{
    passion_ctx *ctx = f->ctx;
    core_fmt_meta m;
    int grow = ocad_fmt_records(&info->m, f->a->nd, f->a->spec.shape,
                                f->writable, &m);
    int rc = ocad_fmt_check(ctx, path, &m, &f->a->spec);
    f->fv.base = m.data_offset;
    f->fv.step0 = m.rec_step;
    f->data_bytes = m.data_offset + ocad_fmt_span(&m);
    *endian = m.endian;
    if (info->m.rec_step <= 0 || !f->writable)
        return rc;
    if (!rc && grow && ctx->rank == 0)
        rc = F->grow ? F->grow(ctx, path, obj, info->m.shape[0], m.shape[0])
                     : core_err(ctx, PASSION_ENOTSUP,
                                "%s: %s files cannot grow", path, F->name);
    return core_agree(ctx, rc);
}

/*
 * A chunked HDF5 dataset: read-only (passion does not rewrite chunks),
 * no size check (its chunks are compressed or sparse), and every rank's
 * own handle on its chunk index (the condition is the same on every
 * rank: the metadata is broadcast and the mode agreed).
 */
static int open_chunked(passion_file *f, const char *path, const char *obj,
                        passion_mode mode)
{
    passion_ctx *ctx = f->ctx;
    f->data_bytes = 0;
    int rc = mode == PASSION_MODE_RDONLY
                 ? ocad_h5c_open(ctx, path, obj, &f->h5c)
                 : core_err(ctx, PASSION_ENOTSUP,
                            "%s:%s: a chunked HDF5 dataset; passion reads "
                            "its sections but does not write chunks: open "
                            "it read-only, or make it contiguous with "
                            "`h5repack -l CONTI %s OUT.h5` to write it",
                            path, obj, path);
    return core_agree(ctx, rc);
}

/*
 * Global file of a resolved name: existing (the metadata, read on rank 0,
 * checked against the spec; every rank opens the file) or created (rank 0
 * makes it complete under a temporary name with the format's hook, or
 * sized and zero for raw, and renames it into place; the others open it).
 * *endian receives the file's byte order.
 */
static int open_global(passion_file *f, const char *name, passion_mode mode,
                       const ocad_fmt_info *info, int create, char **tmp,
                       passion_endian *endian)
{
    passion_ctx *ctx = f->ctx;
    passion_array *a = f->a;
    const ocad_format *F = ocad_format_get(info->fmt);
    char *path = NULL, *obj = NULL;
    int rc = ocad_fmt_split(ctx, name, info, &path, &obj);
    *endian = a->spec.endian;
    if (!rc && strlen(path) >= PATH_MAX)
        rc = core_err(ctx, PASSION_EINVAL,
                      "path of %zu bytes: longer than PATH_MAX (%d)",
                      strlen(path), PATH_MAX);
    if (!rc && info->fmt != OCAD_FMT_RAW && a->spec.header_bytes)
        rc = core_err(ctx, PASSION_EINVAL,
                      "%s: header_bytes must be 0 for a %s file (the header "
                      "gives the data offset)", path, F->name);
    if (create == 2 && !rc && ctx->rank == 0)
        rc = probe_absent(ctx, path);
    /* every rank takes the same collective steps from here on */
    if ((rc = core_agree(ctx, rc)))
        goto out;
    if (!create) {
        if (info->have_meta)
            rc = open_meta(f, F, path, obj, info, endian);
        if (!rc && info->have_meta && info->m.chunked)
            rc = open_chunked(f, path, obj, mode);
        if (!rc)
            rc = open_one(f, path, mode, 1);
        goto out;
    }
    int64_t off = 0;
    if (info->fmt != OCAD_FMT_RAW) {
        core_fmt_meta m;
        meta_of(a, &m);
        /* a format of one byte order (netCDF: big-endian) stores the data
           so; a spec asking for the other order is refused */
        if (F->endian && a->spec.endian != PASSION_ENDIAN_NATIVE &&
            a->spec.endian != F->endian && ocad_swap_unit(a->spec.kind,
                                                          a->esize,
                                                          F->endian)) {
            rc = core_err(ctx, PASSION_EINVAL,
                          "%s: %s data is %s-endian; the spec asks for the "
                          "other byte order (use NATIVE)", path, F->name,
                          F->endian == PASSION_ENDIAN_BIG ? "big" : "little");
            goto out;
        }
        if (F->endian)
            m.endian = F->endian;
        *endian = m.endian;
        if (ctx->rank == 0) {
            if (!F->create)
                rc = core_err(ctx, PASSION_ENOTSUP,
                              "%s: creating %s files is not supported by "
                              "this build", path, F->name);
            else if (!(*tmp = core_io_temp_name(path)))
                rc = core_err(ctx, PASSION_ENOMEM, "file name");
            else if (!(rc = F->create(ctx, *tmp, obj, &m, &off)) &&
                     !(rc = core_io_open(ctx, *tmp, CORE_O_RDWR, &f->fh))) {
                f->fv.base = off;
                f->data_bytes = off + a->global_bytes;
                rc = open_one_size(f, *tmp);
            }
        }
        rc = core_agree(ctx, rc);
        if (!rc && ctx->size > 1) {
            int e = MPI_Bcast(&off, 1, MPI_INT64_T, 0, ctx->comm);
            rc = core_agree(ctx, e == MPI_SUCCESS
                                     ? 0
                                     : core_err(ctx, PASSION_EMPI,
                                                "MPI_Bcast of the data "
                                                "offset"));
        }
        f->fv.base = off;
        f->data_bytes = off + a->global_bytes;
    } else if (ctx->rank == 0) {
        rc = create_temp(f, path, NULL, 0, tmp);
    }
    /* one global file: rank 0 made it complete; it renames it into place,
       then the others open it */
    if (!rc && ctx->rank == 0 &&
        !(rc = core_io_publish(f->fh, path, create == 2))) {
        free(*tmp);
        *tmp = NULL;
    }
    int rc0 = core_agree(ctx, rc);
    if (!rc0 && ctx->rank != 0)
        rc = open_one(f, path, PASSION_MODE_RDWR, 1);
    else if (rc0)
        rc = rc0;
out:
    core_free(ctx, path);
    core_free(ctx, obj);
    return rc;
}

int ocad_file_open_resolved(passion_array *a, const char *path,
                            passion_mode mode, const ocad_fmt_info *info,
                            passion_file **out)
{
    passion_ctx *ctx = a->ctx;
    *out = NULL;
    int rc = PASSION_OK;
    char *name = NULL, *tmp = NULL;
    passion_file *f = core_calloc(ctx, 1, sizeof *f);
    if (!f)
        rc = core_err(ctx, PASSION_ENOMEM, "file handle");
    rc = core_agree(ctx, rc);
    if (rc) {
        core_free(ctx, f);
        return rc;
    }
    int local = a->spec.placement == PASSION_PLACE_LOCAL;
    int create = mode == PASSION_MODE_CREATE       ? 1
                 : mode == PASSION_MODE_CREATE_EXCL ? 2
                                                    : 0;
    f->a = a;
    f->ctx = ctx;
    f->writable = mode != PASSION_MODE_RDONLY;
    fill_view(f);
    passion_endian endian = a->spec.endian;
    if (!local) {
        rc = open_global(f, path, mode, info, create, &tmp, &endian);
    } else {
        rc = ocad_file_local_name(ctx, path, &name);
        if (!rc && strlen(name) >= PATH_MAX)
            rc = core_err(ctx, PASSION_EINVAL,
                          "path of %zu bytes: longer than PATH_MAX (%d)",
                          strlen(name), PATH_MAX);
        if (create == 2) {
            if (!rc)
                rc = probe_absent(ctx, name);
            rc = core_agree(ctx, rc);
        }
        if (!create) {
            if (!rc)
                rc = open_one(f, name, mode, 1);
        } else {
            /* every rank its own file: all temporaries first, then (if
               every rank made its own) every rank renames its own */
            if (!rc)
                rc = create_temp(f, name, NULL, 0, &tmp);
            if (!(rc = core_agree(ctx, rc)) &&
                !(rc = core_io_publish(f->fh, name, create == 2))) {
                free(tmp);
                tmp = NULL;
            }
            /* then the set's description, once every file is in place */
            if (!(rc = core_agree(ctx, rc)) && ctx->rank == 0)
                rc = ocad_file_lset_write(f, path);
        }
    }
    core_free(ctx, name);
    rc = core_agree(ctx, rc);
    if (rc) {
        ocad_h5c_close(f->h5c);
        if (f->fh)
            core_io_close(f->fh);
        if (tmp)
            core_io_discard(ctx, tmp); /* the old file stays as it was */
        free(tmp);
        core_free(ctx, f);
        return rc;
    }
    if (local && !(f->pattern = core_strdup(ctx, path)))
        rc = core_err(ctx, PASSION_ENOMEM, "file name");
    if ((rc = core_agree(ctx, rc))) {
        /* another rank's copy failed: this rank's copy is freed too */
        core_free(ctx, f->pattern);
        ocad_h5c_close(f->h5c);
        core_io_close(f->fh);
        core_free(ctx, f);
        return rc;
    }
    f->fv.swap = ocad_swap_unit(a->spec.kind, a->esize, endian);
    ocad_file_ident(f);
    a->open_files++;
    ctx->live_files++;
    *out = f;
    return PASSION_OK;
}

static int file_open_body(passion_array *a, const char *path, passion_mode mode,
                          passion_file **out)
{
    if (out)
        *out = NULL;
    if (!a || !out)
        return PASSION_EINVAL;
    passion_ctx *ctx = a->ctx;
    core_enter(ctx);
    int rc = PASSION_OK;
    if (!path || !*path)
        rc = core_err(ctx, PASSION_EINVAL, "empty path");
    else if ((int)mode < PASSION_MODE_RDONLY ||
             (int)mode > PASSION_MODE_CREATE_EXCL)
        rc = core_err(ctx, PASSION_EINVAL, "unknown mode %d", (int)mode);
    /* all ranks must agree on the mode and the path (pattern) */
    uint64_t key[2] = {(uint64_t)mode, 1469598103934665603ULL};
    for (const char *c = path ? path : ""; *c; c++)
        key[1] = (key[1] ^ (unsigned char)*c) * 1099511628211ULL;
    rc = core_same(ctx, rc, key, sizeof key, "file modes or paths");
    if (rc)
        return rc;
    ocad_fmt_info info;
    memset(&info, 0, sizeof info);
    info.split = -1;
    int create =
        mode == PASSION_MODE_CREATE || mode == PASSION_MODE_CREATE_EXCL;
    int ext = ocad_format_by_ext(path);
    /* a global file is resolved by its name's extension; an HDF5 or netCDF
       name with header_bytes > 0 is a raw view at that offset; with the
       option file_format=raw every global file is raw and its name is
       taken whole (colons included) */
    if (a->spec.placement != PASSION_PLACE_LOCAL && !ctx->opt.file_format &&
        !(a->spec.header_bytes > 0 && ocad_format_get(ext)->objects) &&
        (ext != OCAD_FMT_RAW || strchr(path, ':')) &&
        (rc = ocad_fmt_resolve(ctx, path, create, 0, &info)))
        return rc;
    return ocad_file_open_resolved(a, path, mode, &info, out);
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_file_open(passion_array *a, const char *path, passion_mode mode,
                      passion_file **out)
{
    passion_ctx *gctx = a ? a->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = file_open_body(a, path, mode, out);
    core_call_end(gctx);
    return rc;
}

static int file_close_body(passion_file *f)
{
    if (!f)
        return PASSION_OK;
    passion_ctx *ctx = f->ctx;
    core_enter(ctx);
    int rc = PASSION_OK;
    if (f->busy > 0)
        rc = core_err(ctx, PASSION_ESTATE,
                      "passion_file_close: %s has %lld request(s) in flight "
                      "or iterator(s) open; wait for / close them first",
                      f->fh->path, (long long)f->busy);
    rc = core_agree(ctx, rc);
    if (rc)
        return rc; /* every rank keeps the file open */
    ocad_h5c_close(f->h5c);
    rc = core_io_close(f->fh);
    f->a->open_files--;
    ctx->live_files--;
    core_free(ctx, f->pattern);
    core_free(ctx, f);
    return core_agree(ctx, rc);
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_file_close(passion_file *f)
{
    passion_ctx *gctx = f ? f->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = file_close_body(f);
    core_call_end(gctx);
    return rc;
}
