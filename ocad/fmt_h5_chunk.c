/*
 * fmt_h5_chunk.c - a chunked HDF5 dataset opened for reading
 * (ocad_h5c_open / _close, ocad_h5c_locate): its chunk geometry, its
 * filter pipeline, its fill value, and where each chunk's stored bytes
 * lie in the file.
 *
 * Why libhdf5 for the chunk index: a chunk's address, stored size and
 * filter mask live in one of six index structures (version 1 B-tree,
 * single chunk, implicit, fixed array, extensible array, version 2
 * B-tree), chosen by the file format version and the dataset's maximum
 * dimensions, each with its own paging and checksums. H5Dget_chunk_info_
 * by_coord answers for all of them, as the library that wrote them reads
 * them, so passion parses none of them itself. It asks only for that
 * metadata: the chunks' bytes are read through passion's own driver
 * (large merged reads where chunks are adjacent) and decoded by passion
 * (fmt_h5_filter.c), outside libhdf5 and on worker threads.
 *
 * Invariants: every rank holds its own read-only libhdf5 handle on the
 * dataset (opened at passion_open, closed at passion_file_close);
 * libhdf5 is called only from the thread of the public call; the
 * geometry is fixed at open; no HDF5 object outlives the state.
 */
#include "ocad.h"

#ifndef PASSION_HAVE_HDF5

int ocad_h5c_open(passion_ctx *ctx, const char *path, const char *dset,
                  ocad_h5c **out)
{
    (void)dset;
    *out = NULL;
    return core_err(ctx, PASSION_ENOTSUP,
                    "%s: this passion was built without HDF5", path);
}

void ocad_h5c_close(ocad_h5c *c)
{
    (void)c;
}

#else

#include "fmt_h5_chunk.h"
#include "fmt_h5_util.h"
#include "fmt_hdf5_dset.h"

#include <limits.h>
#include <string.h>

struct ocad_h5c {
    passion_ctx *ctx;
    hid_t file, dset;
    ocad_h5c_geom g;
    char where[PATH_MAX + 64];
};

const ocad_h5c_geom *ocad_h5c_geom_of(const ocad_h5c *c)
{
    return &c->g;
}

const char *ocad_h5c_where(const ocad_h5c *c)
{
    return c->where;
}

int ocad_h5c_pipe(passion_ctx *ctx, const char *where, hid_t dcpl,
                  ocad_h5f_pipe *p)
{
    memset(p, 0, sizeof *p);
    int n = H5Pget_nfilters(dcpl);
    if (n < 0 || n > OCAD_H5F_MAX)
        return core_err(ctx, PASSION_ENOTSUP,
                        "%s: a filter pipeline of %d filters (passion "
                        "decodes at most %d)", where, n, OCAD_H5F_MAX);
    p->n = n;
    for (int i = 0; i < n; i++) {
        unsigned flags = 0, cfg = 0;
        size_t ncd = OCAD_H5F_CD;
        char name[64] = "", why[300];
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd,
                                         p->cd[i], sizeof name, name, &cfg);
        p->id[i] = (int)id;
        p->ncd[i] = (int)(ncd < OCAD_H5F_CD ? ncd : OCAD_H5F_CD);
        if (id < 0)
            return core_err(ctx, PASSION_EFORMAT,
                            "%s: filter %d of its pipeline is unreadable",
                            where, i);
        if (ocad_h5f_supported((int)id, name, why, sizeof why))
            return core_err(ctx, PASSION_ENOTSUP, "%s: chunked with %s",
                            where, why);
    }
    return PASSION_OK;
}

/* Chunk extent, counts, element size and fill value of the open dataset. */
static int geom_read(ocad_h5c *c, hid_t dcpl, hid_t type, hid_t space)
{
    ocad_h5c_geom *g = &c->g;
    hsize_t cd[H5S_MAX_RANK], dims[H5S_MAX_RANK];
    int nd = H5Sget_simple_extent_ndims(space);
    if (nd < 1 || nd > PASSION_MAX_DIMS || H5Pget_chunk(dcpl, nd, cd) != nd)
        return core_err(c->ctx, PASSION_EFORMAT,
                        "%s: its chunk shape is unreadable", c->where);
    H5Sget_simple_extent_dims(space, dims, NULL);
    g->nd = nd;
    g->esize = (int64_t)H5Tget_size(type);
    g->chunk_bytes = g->esize;
    for (int d = 0; d < nd; d++) {
        g->shape[d] = (int64_t)dims[d];
        g->chunk[d] = (int64_t)cd[d];
        if (g->chunk[d] < 1 ||
            !core_mul(g->chunk_bytes, g->chunk[d], &g->chunk_bytes))
            return core_err(c->ctx, PASSION_EFORMAT,
                            "%s: chunk dimension %d is %lld", c->where, d,
                            (long long)g->chunk[d]);
        g->nchunks[d] = (g->shape[d] + g->chunk[d] - 1) / g->chunk[d];
    }
    /* the fill value in the dataset's own (file) type: HDF5's default is
       zero bytes, and so is an undefined one */
    H5D_fill_value_t fs = H5D_FILL_VALUE_DEFAULT;
    memset(g->fill, 0, sizeof g->fill);
    if (H5Pfill_value_defined(dcpl, &fs) >= 0 &&
        fs == H5D_FILL_VALUE_USER_DEFINED && g->esize <= 64 &&
        H5Pget_fill_value(dcpl, type, g->fill) < 0)
        return core_err(c->ctx, PASSION_EFORMAT,
                        "%s: its fill value is unreadable", c->where);
    return ocad_h5c_pipe(c->ctx, c->where, dcpl, &g->pipe);
}

int ocad_h5c_open(passion_ctx *ctx, const char *path, const char *dset,
                  ocad_h5c **out)
{
    *out = NULL;
    ocad_h5c *c = core_calloc(ctx, 1, sizeof *c);
    if (!c)
        return core_err(ctx, PASSION_ENOMEM, "chunked dataset state");
    c->ctx = ctx;
    c->file = c->dset = -1;
    ocad_h5_quiet q;
    ocad_h5_quiet_on(&q);
    int64_t fsize;
    int rc;
    hid_t dcpl = -1, type = -1, space = -1;
    char first[PATH_MAX];
    c->file = ocad_h5_open(ctx, path, &fsize, &rc);
    if (c->file < 0)
        goto out;
    if (!dset || !*dset) { /* the file's only dataset (as ocad_h5_meta) */
        ocad_h5_only_dset(c->file, first, sizeof first);
        dset = first;
    }
    snprintf(c->where, sizeof c->where, "%s:%s", path, dset);
    c->dset = H5Dopen2(c->file, dset, H5P_DEFAULT);
    dcpl = c->dset >= 0 ? H5Dget_create_plist(c->dset) : -1;
    type = c->dset >= 0 ? H5Dget_type(c->dset) : -1;
    space = c->dset >= 0 ? H5Dget_space(c->dset) : -1;
    if (dcpl < 0 || type < 0 || space < 0) {
        char why[160];
        rc = core_err(ctx, PASSION_EFORMAT, "%s: HDF5 cannot open it: %s",
                      c->where, ocad_h5_why(why));
        goto out;
    }
    rc = geom_read(c, dcpl, type, space);
out:
    ocad_h5_close(space, H5Sclose);
    ocad_h5_close(type, H5Tclose);
    ocad_h5_close(dcpl, H5Pclose);
    ocad_h5_quiet_off(&q);
    if (rc)
        ocad_h5c_close(c);
    else
        *out = c;
    return rc;
}

void ocad_h5c_close(ocad_h5c *c)
{
    if (!c)
        return;
    ocad_h5_quiet q;
    ocad_h5_quiet_on(&q);
    ocad_h5_close(c->dset, H5Dclose);
    ocad_h5_close(c->file, H5Fclose);
    ocad_h5_quiet_off(&q);
    core_free(c->ctx, c);
}

int ocad_h5c_locate(passion_ctx *ctx, ocad_h5c *c, const int64_t *idx,
                    ocad_h5c_loc *loc)
{
    hsize_t off[H5S_MAX_RANK];
    for (int d = 0; d < c->g.nd; d++)
        off[d] = (hsize_t)(idx[d] * c->g.chunk[d]);
    unsigned mask = 0;
    haddr_t addr = HADDR_UNDEF;
    hsize_t size = 0;
    ocad_h5_quiet q;
    ocad_h5_quiet_on(&q);
    herr_t e = H5Dget_chunk_info_by_coord(c->dset, off, &mask, &addr, &size);
    char why[160];
    int rc = e < 0 ? core_err(ctx, PASSION_EFORMAT,
                              "%s: HDF5 cannot find chunk %lld...: %s",
                              c->where, (long long)idx[0], ocad_h5_why(why))
                   : PASSION_OK;
    ocad_h5_quiet_off(&q);
    loc->mask = mask;
    loc->size = (int64_t)size;
    loc->addr = e < 0 || addr == HADDR_UNDEF || addr > (haddr_t)INT64_MAX
                    ? -1
                    : (int64_t)addr;
    if (!rc && loc->addr >= 0 && (loc->size < 1 || loc->size > INT32_MAX))
        rc = core_err(ctx, PASSION_EFORMAT,
                      "%s: a chunk of %lld stored bytes", c->where,
                      (long long)loc->size);
    return rc;
}

#endif
