/*
 * fmt_h5_chunkgeom.c - a regular section against a chunked dataset's
 * chunks (pure arithmetic, no I/O, no libhdf5): which chunks a section
 * touches along each dimension (ocad_h5c_touched), the box of section
 * indices inside one chunk (ocad_h5c_box), and the copy of those
 * elements from a decoded chunk (or the fill value) into any strided
 * destination (ocad_h5c_put): the caller's memory, or a packed piece
 * that the collective layer sends to the rank that needs it.
 *
 * Invariants: the boxes of one section over all its chunks partition its
 * elements (each element lies in exactly one chunk), and a box's
 * elements are visited in the section's index order (last dimension
 * fastest), so a packed piece made by one rank and placed by another
 * agree without any descriptor travelling. Any thread.
 */
#include "ocad.h"

#include <string.h>

#ifdef PASSION_HAVE_HDF5

#include "fmt_h5_chunk.h"

void ocad_h5c_shape_of(const passion_file *f, ocad_h5c_shape *out)
{
    const ocad_h5c_geom *g = ocad_h5c_geom_of(f->h5c);
    memset(out, 0, sizeof *out);
    out->nd = g->nd;
    out->esize = g->esize;
    out->chunk_bytes = g->chunk_bytes;
    for (int d = 0; d < g->nd; d++) {
        out->chunk[d] = g->chunk[d];
        out->nchunks[d] = g->nchunks[d];
    }
}

int64_t ocad_h5c_touched(const passion_file *f, const passion_section *s,
                         int d, int64_t *list)
{
    const ocad_h5c_geom *g = ocad_h5c_geom_of(f->h5c);
    int64_t st = s->start[d], str = s->stride[d], cnt = s->count[d];
    int64_t cd = g->chunk[d], n = 0;
    if (cnt <= 0)
        return 0;
    int64_t last = st + (cnt - 1) * str;
    for (int64_t c = st / cd; c <= last / cd; c++) {
        int64_t lo = c * cd;
        int64_t k = lo <= st ? 0 : (lo - st + str - 1) / str;
        if (k >= cnt)
            break;
        if (st + k * str < lo + cd) {
            if (list)
                list[n] = c;
            n++;
        } else {
            c = (st + k * str) / cd - 1; /* the next element's chunk */
        }
    }
    return n;
}

int ocad_h5c_box(const passion_file *f, const passion_section *s,
                 const int64_t *idx, int64_t *k0, int64_t *k1)
{
    const ocad_h5c_geom *g = ocad_h5c_geom_of(f->h5c);
    for (int d = 0; d < g->nd; d++) {
        int64_t lo = idx[d] * g->chunk[d], hi = lo + g->chunk[d];
        int64_t st = s->start[d], str = s->stride[d];
        if (s->count[d] <= 0 || hi <= st)
            return 0;
        k0[d] = lo <= st ? 0 : (lo - st + str - 1) / str;
        k1[d] = (hi - 1 - st) / str + 1; /* exclusive */
        if (k1[d] > s->count[d])
            k1[d] = s->count[d];
        if (k0[d] >= k1[d])
            return 0;
    }
    return 1;
}

void ocad_h5c_put(const passion_file *f, const passion_section *s,
                  const int64_t *idx, const unsigned char *data, char *dst,
                  const int64_t *dstride, const int64_t *doff)
{
    const ocad_h5c_geom *g = ocad_h5c_geom_of(f->h5c);
    const int nd = g->nd;
    const int64_t es = g->esize;
    int64_t k0[PASSION_MAX_DIMS], k1[PASSION_MAX_DIMS], k[PASSION_MAX_DIMS];
    int64_t cstr[PASSION_MAX_DIMS];
    if (!ocad_h5c_box(f, s, idx, k0, k1))
        return;
    unsigned char fill[64];
    if (!data) { /* the fill value, in this machine's order */
        memcpy(fill, g->fill, sizeof fill);
        if (f->fv.swap)
            ocad_swap(fill, es, f->fv.swap);
    }
    for (int d = nd - 1; d >= 0; d--) {
        k[d] = k0[d];
        cstr[d] = d == nd - 1 ? 1 : cstr[d + 1] * g->chunk[d + 1];
    }
    const int in = nd - 1;
    const int64_t run = k1[in] - k0[in], sin = s->stride[in];
    const int contig = sin == 1 && dstride[in] == 1;
    for (;;) {
        int64_t co = 0, mo = 0;
        for (int d = 0; d < nd; d++) {
            co += (s->start[d] + k[d] * s->stride[d] - idx[d] * g->chunk[d]) *
                  cstr[d];
            mo += (doff[d] + k[d]) * dstride[d];
        }
        char *o = dst + mo * es;
        if (data && contig)
            memcpy(o, data + co * es, (size_t)(run * es));
        else
            for (int64_t j = 0; j < run; j++)
                memcpy(o + j * dstride[in] * es,
                       data ? data + (co + j * sin) * es : fill, (size_t)es);
        int d = in - 1;
        while (d >= 0 && ++k[d] == k1[d]) {
            k[d] = k0[d];
            d--;
        }
        if (d < 0)
            return;
    }
}

#else

void ocad_h5c_shape_of(const passion_file *f, ocad_h5c_shape *out)
{
    (void)f;
    memset(out, 0, sizeof *out);
}

int64_t ocad_h5c_touched(const passion_file *f, const passion_section *s,
                         int d, int64_t *list)
{
    (void)f, (void)s, (void)d, (void)list;
    return 0;
}

int ocad_h5c_box(const passion_file *f, const passion_section *s,
                 const int64_t *idx, int64_t *k0, int64_t *k1)
{
    (void)f, (void)s, (void)idx, (void)k0, (void)k1;
    return 0;
}

void ocad_h5c_put(const passion_file *f, const passion_section *s,
                  const int64_t *idx, const unsigned char *data, char *dst,
                  const int64_t *dstride, const int64_t *doff)
{
    (void)f, (void)s, (void)idx, (void)data, (void)dst, (void)dstride,
        (void)doff;
}

#endif
