/*
 * etp_walk.c - cursors over a transfer plan restricted to a range of file
 * offsets, and counting by arithmetic: the pieces of the extended two-phase
 * method that turn a file domain or a chunk into "which elements of whose
 * section", from the section description alone (thesis 6.3.1: the FDAT as
 * the intersection of the FAD with a file domain, computed symbolically).
 *
 * An element belongs to the range holding its first byte, so ranges that
 * tile the file give every element to exactly one of them, whatever the
 * element size and however a range boundary cuts a contiguous run.
 *
 * Invariants: the plan's loops nest (each loop's step exceeds the span of
 * the loops inside it), so file offsets grow with the lexicographic loop
 * index and a seek is one digit per loop; cursors and counts cost
 * O(dimensions) time and memory, never O(runs).
 */
#include "coll.h"

#include <stdint.h>
#include <string.h>

static int64_t ceil_to(int64_t v, int64_t e)
{
    return (v + e - 1) / e * e;
}

static void recompute(coll_cur *c)
{
    const ocad_xfer *x = c->x;
    c->foff = x->foff0;
    c->moff = x->moff0;
    for (int k = 0; k < x->nv; k++) {
        c->foff += c->idx[k] * x->fstep[k];
        c->moff += c->idx[k] * x->mstep[k];
    }
}

/* Move n blocks along the innermost loop (n <= blocks left in it). */
static void advance(coll_cur *c, int64_t n)
{
    const ocad_xfer *x = c->x;
    c->sub = 0;
    if (x->nv == 0) {
        c->done = 1;
        return;
    }
    int in = x->nv - 1;
    c->idx[in] += n;
    if (c->idx[in] < x->cnt[in]) {
        c->foff += n * x->fstep[in];
        c->moff += n * x->mstep[in];
        return;
    }
    c->idx[in] = 0;
    int k;
    for (k = in - 1; k >= 0; k--) {
        if (++c->idx[k] < x->cnt[k])
            break;
        c->idx[k] = 0;
    }
    if (k < 0) {
        c->done = 1;
        return;
    }
    recompute(c);
}

void coll_cur_seek(coll_cur *c, const ocad_xfer *x, int64_t esize, int64_t lo,
                   int64_t hi)
{
    memset(c, 0, sizeof *c);
    c->x = x;
    c->esize = esize;
    c->hi = hi;
    if (x->nblocks == 0 || lo >= x->fend || lo >= hi) {
        c->done = 1;
        return;
    }
    c->foff = x->foff0;
    c->moff = x->moff0;
    if (lo > x->foff0) {
        for (int k = 0; k < x->nv; k++) {
            int64_t q = (lo - c->foff) / x->fstep[k];
            if (q >= x->cnt[k])
                q = x->cnt[k] - 1;
            c->idx[k] = q;
            c->foff += q * x->fstep[k];
            c->moff += q * x->mstep[k];
        }
        int64_t e = ceil_to(lo - c->foff, esize);
        if (e >= x->blen)
            advance(c, 1);
        else
            c->sub = e;
    }
    if (!c->done && c->foff + c->sub >= hi)
        c->done = 1;
}

int coll_cur_next(coll_cur *c, coll_vec *v, int64_t maxn)
{
    if (c->done)
        return 0;
    const ocad_xfer *x = c->x;
    const int64_t es = c->esize, blen = x->blen, hi = c->hi;
    int64_t start = c->foff + c->sub;
    if (start >= hi) {
        c->done = 1;
        return 0;
    }
    if (c->sub > 0) { /* the rest of a block cut at the range start */
        int64_t len = blen - c->sub, lim = ceil_to(hi - start, es);
        *v = (coll_vec){start, c->moff + c->sub, 1, len, 0, 0};
        if (len > lim) {
            v->len = lim;
            c->done = 1;
        } else {
            advance(c, 1);
        }
        return 1;
    }
    int in = x->nv - 1;
    int64_t vl = x->nv ? x->cnt[in] - c->idx[in] : 1;
    int64_t fst = x->nv ? x->fstep[in] : 0, mst = x->nv ? x->mstep[in] : 0;
    int64_t last = c->foff + blen - es; /* start of the block's last element */
    int64_t n;
    if (last >= hi)
        n = 0;
    else if (vl == 1)
        n = 1;
    else
        n = (hi - 1 - last) / fst + 1 < vl ? (hi - 1 - last) / fst + 1 : vl;
    if (n > maxn)
        n = maxn;
    if (n == 0) { /* a block cut at the range end */
        *v = (coll_vec){c->foff, c->moff, 1, ceil_to(hi - c->foff, es), 0, 0};
        c->done = 1;
        return 1;
    }
    *v = (coll_vec){c->foff, c->moff, n, blen, fst, mst};
    advance(c, n);
    return 1;
}

int64_t coll_count_lt(const ocad_xfer *x, int64_t esize, int64_t off)
{
    if (x->nblocks == 0 || off <= x->foff0)
        return 0;
    const int64_t epb = x->blen / esize;
    int64_t sb[PASSION_MAX_DIMS];
    int64_t s = 1;
    for (int k = x->nv - 1; k >= 0; k--) {
        sb[k] = s;
        s *= x->cnt[k];
    }
    int64_t total = 0, base = x->foff0;
    for (int k = 0; k < x->nv; k++) {
        int64_t q = (off - base) / x->fstep[k];
        if (q >= x->cnt[k])
            return total + x->cnt[k] * sb[k] * epb;
        total += q * sb[k] * epb;
        base += q * x->fstep[k];
    }
    int64_t e = (off - base + esize - 1) / esize;
    return total + (e < epb ? e : epb);
}

int64_t coll_first_at(const ocad_xfer *x, int64_t esize, int64_t off)
{
    coll_cur c;
    coll_cur_seek(&c, x, esize, off, INT64_MAX);
    return c.done ? INT64_MAX : c.foff + c.sub;
}

int64_t coll_elem_off(const ocad_xfer *x, int64_t esize, int64_t k)
{
    const int64_t epb = x->blen / esize;
    int64_t b = k / epb, off = x->foff0 + (k % epb) * esize;
    for (int l = x->nv - 1; l >= 0; l--) {
        off += (b % x->cnt[l]) * x->fstep[l];
        b /= x->cnt[l];
    }
    return off;
}

/* n pieces of len bytes; one memcpy when both sides are contiguous. */
static void copy_vec(char *dst, int64_t dstep, const char *src, int64_t sstep,
                     int64_t n, int64_t len)
{
    if ((dstep == len && sstep == len) || n == 1)
        memcpy(dst, src, (size_t)(n * len));
    else
        ocad_copy_blocks(dst, dstep, src, sstep, n, len);
}

int64_t coll_copy(const ocad_xfer *x, int64_t esize, int64_t lo, int64_t hi,
                  int dir, char *stage, int64_t sbase, char *mem,
                  char **packed)
{
    coll_cur c;
    coll_vec v;
    int64_t total = 0;
    char *pk = packed ? *packed : NULL;
    coll_cur_seek(&c, x, esize, lo, hi);
    while (coll_cur_next(&c, &v, INT64_MAX)) {
        int64_t nb = v.n * v.len;
        char *s = NULL, *m = NULL;
        if (dir == COLL_FILE_TO_PACKED || dir == COLL_PACKED_TO_FILE ||
            dir == COLL_FILE_TO_MEM || dir == COLL_MEM_TO_FILE)
            s = stage + (v.foff - sbase);
        if (dir == COLL_FILE_TO_MEM || dir == COLL_MEM_TO_FILE ||
            dir == COLL_MEM_TO_PACKED || dir == COLL_PACKED_TO_MEM)
            m = mem + v.moff;
        switch (dir) {
        case COLL_FILE_TO_PACKED:
            copy_vec(pk, v.len, s, v.fstep, v.n, v.len);
            pk += nb;
            break;
        case COLL_PACKED_TO_FILE:
            copy_vec(s, v.fstep, pk, v.len, v.n, v.len);
            pk += nb;
            break;
        /* byte order: converted wherever bytes cross between memory and
           file order (the packed buffers are in file order), on the copy
           that lands, never in the caller's buffer of a write */
        case COLL_FILE_TO_MEM:
            copy_vec(m, v.mstep, s, v.fstep, v.n, v.len);
            ocad_swap_blocks(m, v.mstep, v.n, v.len, x->swap);
            break;
        case COLL_MEM_TO_FILE:
            copy_vec(s, v.fstep, m, v.mstep, v.n, v.len);
            ocad_swap_blocks(s, v.fstep, v.n, v.len, x->swap);
            break;
        case COLL_MEM_TO_PACKED:
            copy_vec(pk, v.len, m, v.mstep, v.n, v.len);
            ocad_swap(pk, nb, x->swap);
            pk += nb;
            break;
        default: /* COLL_PACKED_TO_MEM */
            copy_vec(m, v.mstep, pk, v.len, v.n, v.len);
            ocad_swap_blocks(m, v.mstep, v.n, v.len, x->swap);
            pk += nb;
            break;
        }
        total += nb;
    }
    if (packed)
        *packed = pk;
    return total;
}
