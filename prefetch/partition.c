/*
 * partition.c - the Partitioned In-Core Model (thesis 5.3.2): a global
 * array file processed in partitions that fit the aggregate memory of all
 * ranks, each partition read collectively, computed in core, written
 * back, the next partition prefetched.
 *
 * A partition is a block of global indices along one dimension, split
 * over the processor grid like the array (BLOCK over each grid
 * dimension); a rank's piece comes with a halo read straight from the
 * file (reads may overlap between ranks; writes of pieces never do).
 *
 * TEMPORARY COLLECTIVE: the extended two-phase collective
 * (passion_read_section_all / passion_write_section_all) is being written
 * on another branch. Until it is merged, part_read_begin/part_wait below
 * stand in for it: each rank reads its own piece independently with an
 * asynchronous request and the ranks then agree on the outcome (a
 * collective reduction, the barrier). Writes use the direct method, so no
 * sieved write of one rank rewrites bytes of another's piece. Switching
 * to the real collective only changes these two functions.
 *
 * Invariants: every rank makes the same sequence of collective calls
 * (partition count and outcome are agreed), whatever it owns; a buffer is
 * refilled only after its previous write completed.
 */
#include "pf.h"

#include <stdlib.h>
#include <string.h>

#define PART_NBUF 2

struct passion_part_iter {
    passion_ctx *ctx;
    passion_file *f, *out;
    passion_part_opts o;
    int nd, dim;
    int64_t esize, width, nparts;
    int64_t bshape[PASSION_MAX_DIMS];
    int64_t bbytes;
    int nin, nout;
    char *inb[PART_NBUF], *outb[PART_NBUF];
    passion_request *inreq[PART_NBUF], *outreq[PART_NBUF];
    int in_rc[PART_NBUF];         /* local outcome of a prefetch */
    passion_part cur;
    int64_t k;
    int rc;
};

int passion_part_opts_init(passion_part_opts *o)
{
    if (!o)
        return PASSION_EINVAL;
    memset(o, 0, sizeof *o);
    o->dim = -1;
    o->prefetch = 1;
    return PASSION_OK;
}

/* This rank's piece of partition k (interior, global indices). */
static void piece(const passion_part_iter *it, int64_t k, int64_t *lo,
                  int64_t *cnt)
{
    const passion_array *a = it->f->a;
    int c[PASSION_MAX_DIMS];
    ocad_coords(a, it->ctx->rank, c);
    for (int d = 0; d < it->nd; d++) {
        int64_t b0 = 0, n = a->spec.shape[d];
        if (d == it->dim) {
            b0 = k * it->width;
            n = n - b0 < it->width ? n - b0 : it->width;
        }
        int64_t g = a->spec.grid[d], m = (n + g - 1) / g;
        int64_t s = c[d] * m, e = s + m < n ? s + m : n;
        lo[d] = b0 + s;
        cnt[d] = e > s ? e - s : 0;
    }
}

/* Section of piece k plus its halo (clipped) and where it lands. */
static int64_t read_geom(const passion_part_iter *it, int64_t k,
                         passion_section *s, passion_memspec *m,
                         passion_part *p)
{
    const passion_array *a = it->f->a;
    int64_t lo[PASSION_MAX_DIMS], cnt[PASSION_MAX_DIMS], elems = 1;
    piece(it, k, lo, cnt);
    memset(s, 0, sizeof *s);
    memset(m, 0, sizeof *m);
    for (int d = 0; d < it->nd; d++) {
        int64_t h = it->o.halo;
        int64_t s0 = lo[d] - h < 0 ? 0 : lo[d] - h;
        int64_t e0 = lo[d] + cnt[d] + h > a->spec.shape[d]
                         ? a->spec.shape[d]
                         : lo[d] + cnt[d] + h;
        s->start[d] = s0;
        s->stride[d] = 1;
        s->count[d] = cnt[d] ? e0 - s0 : 0;
        m->shape[d] = it->bshape[d];
        m->offset[d] = s0 - (lo[d] - h);
        elems *= cnt[d];
        if (p) {
            p->lo[d] = lo[d];
            p->count[d] = cnt[d];
            p->mem.shape[d] = it->bshape[d];
            p->mem.offset[d] = h;
        }
    }
    return elems;
}

static void write_geom(const passion_part_iter *it, const passion_part *p,
                       passion_section *s, passion_memspec *m)
{
    memset(s, 0, sizeof *s);
    memset(m, 0, sizeof *m);
    for (int d = 0; d < it->nd; d++) {
        s->start[d] = p->lo[d];
        s->count[d] = p->count[d];
        s->stride[d] = 1;
        m->shape[d] = it->bshape[d];
        m->offset[d] = it->o.halo;
    }
}

/* ---- the stand-in collective (see the file comment) ---- */

static int part_read_begin(passion_part_iter *it, int64_t k, int slot)
{
    passion_section s;
    passion_memspec m;
    read_geom(it, k, &s, &m, NULL);
    it->in_rc[slot] = passion_read_section_begin(
        it->f, &s, it->inb[slot], &m, PASSION_METHOD_AUTO, &it->inreq[slot]);
    return PASSION_OK; /* the outcome is agreed in part_wait */
}

/* Wait for a request, then agree over all ranks (collective). */
static int part_wait(passion_part_iter *it, passion_request **r, int lrc)
{
    int rc = passion_request_wait(*r);
    *r = NULL;
    if (!lrc)
        lrc = rc;
    return core_agree(it->ctx, lrc);
}

static int part_write_begin(passion_part_iter *it, int slot)
{
    passion_section s;
    passion_memspec m;
    write_geom(it, &it->cur, &s, &m);
    return passion_write_section_begin(it->out, &s, it->outb[slot], &m,
                                       PASSION_METHOD_DIRECT,
                                       &it->outreq[slot]);
}

/* ---- iterator ---- */

static int setup(passion_part_iter *it, const passion_part_opts *o)
{
    passion_ctx *ctx = it->ctx;
    passion_array *a = it->f->a;
    const passion_array_spec *sp = &a->spec;
    if (sp->placement == PASSION_PLACE_LOCAL)
        return core_err(ctx, PASSION_EINVAL,
                        "partitions need a global array file");
    it->nd = a->nd;
    it->esize = a->esize;
    it->dim = o->dim < 0 ? sp->order[0] : o->dim;
    if (it->dim >= a->nd || o->halo < 0)
        return core_err(ctx, PASSION_EINVAL, "partition dimension %d or "
                        "halo %lld", it->dim, (long long)o->halo);
    if (o->out) {
        if (o->out->a->nd != a->nd || o->out->a->esize != a->esize ||
            memcmp(o->out->a->spec.shape, sp->shape,
                   sizeof(int64_t) * (size_t)a->nd) ||
            o->out->a->spec.placement == PASSION_PLACE_LOCAL)
            return core_err(ctx, PASSION_EINVAL, "partition output: not a "
                            "global array of the same shape");
        if (!o->out->writable)
            return core_err(ctx, PASSION_EACCES, "partition output is "
                            "read-only");
        it->out = o->out;
    }
    it->nin = o->prefetch ? 2 : 1;
    it->nout = o->out ? (o->prefetch ? 2 : 1) : 0;
    int64_t other = a->esize;
    for (int d = 0; d < a->nd; d++) {
        if (d == it->dim)
            continue;
        int64_t g = sp->grid[d];
        it->bshape[d] = (sp->shape[d] + g - 1) / g + 2 * o->halo;
        if (!core_mul(other, it->bshape[d], &other))
            return core_err(ctx, PASSION_EOVERFLOW, "partition overflows");
    }
    int64_t gdim = sp->grid[it->dim];
    int64_t budget = o->budget > 0 ? o->budget : ctx->opt.memory_budget;
    it->width = o->width;
    if (it->width <= 0) {
        int64_t per = budget / (it->nin + it->nout) / other - 2 * o->halo;
        if (per < 1)
            return core_err(ctx, PASSION_ENOMEM,
                            "memory budget %lld too small for a partition "
                            "piece", (long long)budget);
        it->width = per * gdim;
    }
    if (it->width > sp->shape[it->dim])
        it->width = sp->shape[it->dim];
    it->nparts = (sp->shape[it->dim] + it->width - 1) / it->width;
    it->bshape[it->dim] = (it->width + gdim - 1) / gdim + 2 * o->halo;
    if (!core_mul(other, it->bshape[it->dim], &it->bbytes))
        return core_err(ctx, PASSION_EOVERFLOW, "partition overflows");
    for (int i = 0; i < it->nin; i++)
        if (!(it->inb[i] = core_stage_alloc(ctx, it->bbytes)))
            return core_err(ctx, PASSION_ENOMEM, "partition buffer");
    for (int i = 0; i < it->nout; i++) {
        if (!(it->outb[i] = core_stage_alloc(ctx, it->bbytes)))
            return core_err(ctx, PASSION_ENOMEM, "partition buffer");
        memset(it->outb[i], 0, (size_t)it->bbytes);
    }
    return PASSION_OK;
}

static void release(passion_part_iter *it)
{
    for (int i = 0; i < PART_NBUF; i++) {
        core_stage_free(it->ctx, it->inb[i], it->bbytes);
        core_stage_free(it->ctx, it->outb[i], it->bbytes);
    }
    free(it);
}

int passion_part_begin(passion_file *f, const passion_part_opts *opts,
                       passion_part_iter **out)
{
    if (!out)
        return PASSION_EINVAL;
    *out = NULL;
    if (!f)
        return PASSION_EINVAL;
    passion_part_opts def;
    if (!opts) {
        passion_part_opts_init(&def);
        opts = &def;
    }
    passion_part_iter *it = calloc(1, sizeof *it);
    int rc = it ? PASSION_OK
                : core_err(f->ctx, PASSION_ENOMEM, "partition iterator");
    if (it) {
        it->ctx = f->ctx;
        it->f = f;
        it->o = *opts;
        it->k = -1;
        rc = setup(it, opts);
    }
    int64_t key[4] = {opts->dim, opts->width, opts->halo, opts->prefetch};
    rc = core_same(f->ctx, rc, key, sizeof key, "partition options");
    if (rc) {
        if (it)
            release(it);
        return rc;
    }
    *out = it;
    return PASSION_OK;
}

/* Write the current partition's output (collective agreement inside the
   wait of the next use of its slot, or at the end). */
static int finish_current(passion_part_iter *it)
{
    if (!it->out)
        return PASSION_OK;
    int os = (int)(it->k % it->nout);
    int lrc = part_write_begin(it, os);
    if (!it->o.prefetch)
        return part_wait(it, &it->outreq[os], lrc);
    if (lrc && !it->rc)
        it->rc = lrc;
    return PASSION_OK;
}

int passion_part_next(passion_part_iter *it, passion_part *p)
{
    if (!it || !p)
        return PASSION_EINVAL;
    int rc = it->rc;
    if (it->k >= 0 && it->k < it->nparts && !rc)
        rc = finish_current(it);
    rc = core_agree(it->ctx, rc);
    if (rc) {
        it->rc = rc;
        return rc;
    }
    if (it->k >= it->nparts)
        return 0;
    int64_t k = ++it->k;
    if (k >= it->nparts)
        return 0;
    int slot = it->o.prefetch ? (int)(k % it->nin) : 0;
    if (k == 0 || !it->o.prefetch)
        part_read_begin(it, k, slot);
    rc = part_wait(it, &it->inreq[slot], it->in_rc[slot]);
    if (!rc && it->o.prefetch && k + 1 < it->nparts)
        part_read_begin(it, k + 1, (int)((k + 1) % it->nin));
    int os = it->nout ? (int)(k % it->nout) : 0;
    /* the slot's previous write (issued on every rank alike) */
    if (!rc && it->o.prefetch && it->nout && k >= it->nout)
        rc = part_wait(it, &it->outreq[os], 0);
    if (rc) {
        it->rc = rc;
        return rc;
    }
    memset(&it->cur, 0, sizeof it->cur);
    passion_section s;
    passion_memspec m;
    read_geom(it, k, &s, &m, &it->cur);
    it->cur.index = k;
    it->cur.nparts = it->nparts;
    it->cur.in = it->inb[slot];
    it->cur.out = it->nout ? it->outb[os] : NULL;
    *p = it->cur;
    return 1;
}

int passion_part_end(passion_part_iter *it)
{
    if (!it)
        return PASSION_OK;
    int rc = it->rc;
    if (!rc && it->k >= 0 && it->k < it->nparts) {
        rc = finish_current(it);
        it->k = it->nparts;
    }
    /* every rank waits for all its requests, then one agreement */
    for (int i = 0; i < PART_NBUF; i++) {
        int r1 = passion_request_wait(it->inreq[i]);
        int r2 = passion_request_wait(it->outreq[i]);
        if (!rc)
            rc = r1 ? r1 : r2;
    }
    rc = core_agree(it->ctx, rc);
    release(it);
    return rc;
}
