/*
 * xfer.c - transfer plans: a section between a file view and memory as
 * nested loops of blocks that are contiguous on both sides, and an
 * iterator that walks them in increasing file offset.
 *
 * Invariants: loops are in storage order (slowest first) with positive
 * file steps, so file offsets grow along the walk (the outermost step may
 * exceed the inner loops' span: a netCDF record variable's records); a loop is folded into
 * the block only when it is contiguous in the file and in memory; the plan
 * costs O(dimensions) memory whatever the number of runs.
 */
#include "ocad.h"

#include <string.h>

void ocad_xfer_build(const ocad_fview *fv, const passion_section *s,
                     const passion_memspec *m, ocad_xfer *x)
{
    int nd = fv->nd;
    memset(x, 0, sizeof *x);
    x->swap = fv->swap;
    x->esize = fv->esize;
    for (int d = 0; d < nd; d++)
        if (s->count[d] == 0)
            return; /* empty: nblocks 0 */

    int64_t fs[PASSION_MAX_DIMS], ms[PASSION_MAX_DIMS];
    fs[nd - 1] = fv->esize;
    ms[nd - 1] = fv->esize;
    for (int k = nd - 2; k >= 0; k--) {
        int din = fv->order[k + 1];
        fs[k] = fs[k + 1] * fv->extent[din];
        ms[k] = ms[k + 1] * (m ? m->shape[din] : s->count[din]);
    }
    if (fv->step0 > 0)
        fs[0] = fv->step0; /* records interleaved with other variables' */
    int64_t cnt[PASSION_MAX_DIMS], fst[PASSION_MAX_DIMS], mst[PASSION_MAX_DIMS];
    int64_t foff = fv->base, moff = 0;
    for (int k = 0; k < nd; k++) {
        int d = fv->order[k];
        cnt[k] = s->count[d];
        fst[k] = s->stride[d] * fs[k];
        mst[k] = ms[k];
        foff += (s->start[d] + fv->shift[d]) * fs[k];
        moff += (m ? m->offset[d] : 0) * ms[k];
    }
    /* fold contiguous innermost loops into the block */
    int nv = nd;
    int64_t blen = fv->esize;
    while (nv > 0 && fst[nv - 1] == blen && mst[nv - 1] == blen) {
        blen *= cnt[nv - 1];
        nv--;
    }
    /* drop loops of one iteration, merge loops that nest evenly */
    int w = 0;
    for (int k = 0; k < nv; k++) {
        if (cnt[k] == 1)
            continue;
        if (w > 0 && fst[w - 1] == cnt[k] * fst[k] &&
            mst[w - 1] == cnt[k] * mst[k]) {
            cnt[w - 1] *= cnt[k];
            fst[w - 1] = fst[k];
            mst[w - 1] = mst[k];
            continue;
        }
        cnt[w] = cnt[k];
        fst[w] = fst[k];
        mst[w] = mst[k];
        w++;
    }
    x->nv = w;
    x->blen = blen;
    x->foff0 = foff;
    x->moff0 = moff;
    x->nblocks = 1;
    x->fend = foff + blen;
    for (int k = 0; k < w; k++) {
        x->cnt[k] = cnt[k];
        x->fstep[k] = fst[k];
        x->mstep[k] = mst[k];
        x->nblocks *= cnt[k];
        x->fend += (cnt[k] - 1) * fst[k];
    }
}

void ocad_iter_begin(ocad_iter *it, const ocad_xfer *x)
{
    memset(it, 0, sizeof *it);
    it->x = x;
    it->foff = x->foff0;
    it->moff = x->moff0;
    it->left = x->nblocks;
}

int64_t ocad_iter_vec_left(const ocad_iter *it)
{
    if (it->left == 0)
        return 0;
    if (it->x->nv == 0)
        return it->left;
    return it->x->cnt[it->x->nv - 1] - it->j;
}

int64_t ocad_iter_fstep(const ocad_iter *it)
{
    return it->x->nv ? it->x->fstep[it->x->nv - 1] : 0;
}

int64_t ocad_iter_mstep(const ocad_iter *it)
{
    return it->x->nv ? it->x->mstep[it->x->nv - 1] : 0;
}

void ocad_iter_skip(ocad_iter *it, int64_t n)
{
    const ocad_xfer *x = it->x;
    it->left -= n;
    if (x->nv == 0 || it->left == 0)
        return;
    int in = x->nv - 1;
    it->j += n;
    if (it->j < x->cnt[in]) {
        it->foff += n * x->fstep[in];
        it->moff += n * x->mstep[in];
        return;
    }
    /* carry into the outer loops and recompute the offsets */
    it->j = 0;
    for (int k = in - 1; k >= 0; k--) {
        if (++it->idx[k] < x->cnt[k])
            break;
        it->idx[k] = 0;
    }
    it->foff = x->foff0;
    it->moff = x->moff0;
    for (int k = 0; k < in; k++) {
        it->foff += it->idx[k] * x->fstep[k];
        it->moff += it->idx[k] * x->mstep[k];
    }
}

/* Constant-size copies let the compiler emit single moves. */
#define COPY_LOOP(sz)                                                       \
    for (int64_t i = 0; i < n; i++, dst += dstep, src += sstep)             \
        memcpy(dst, src, sz)

void ocad_copy_blocks(char *dst, int64_t dstep, const char *src, int64_t sstep,
                      int64_t n, int64_t blen)
{
    switch (blen) {
    case 1: COPY_LOOP(1); break;
    case 2: COPY_LOOP(2); break;
    case 4: COPY_LOOP(4); break;
    case 8: COPY_LOOP(8); break;
    case 16: COPY_LOOP(16); break;
    default: COPY_LOOP((size_t)blen); break;
    }
}
