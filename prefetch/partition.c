/*
 * partition.c - the Partitioned In-Core Model (thesis 5.3.2): a global
 * array file processed in partitions that fit the aggregate memory of all
 * ranks, each partition read collectively with the extended two-phase
 * method (passion_file_read_all, thesis 6.3), computed in core, written
 * back collectively, the next partition prefetched.
 *
 * A partition is a block of global indices along one dimension, split
 * over the processor grid like the array (BLOCK over each grid
 * dimension); a rank's piece comes with a halo read straight from the
 * file (pieces overlap by their halos; reads may overlap, writes of
 * pieces never do).
 *
 * Prefetch: the collective read is blocking (every rank's file domain is
 * read, then exchanged), so the next partition cannot be read into a user
 * buffer behind the computation; instead, when the partition dimension is
 * the slowest in storage (the default: a partition is then one contiguous
 * byte range), each rank asks the kernel to read its 1/P share of the next
 * partition's range into the page cache (the driver's WILLNEED advice,
 * core_io_advise, which starts the reads and returns), so
 * the next collective read finds the data in memory. With O_DIRECT, or a
 * driver that gives no hints, there is no prefetch.
 *
 * Invariants: every rank makes the same sequence of collective calls
 * (partition count and outcomes are agreed), whatever it owns.
 */
#include "pf.h"

#include <stdlib.h>
#include <string.h>

#define PART_NBUF 1

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
    o->method = PASSION_METHOD_ETP_DYNAMIC;
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

/* ---- collective transfers and the page-cache prefetch ---- */

static int part_read(passion_part_iter *it, int64_t k)
{
    passion_section s;
    passion_memspec m;
    read_geom(it, k, &s, &m, NULL);
    return passion_file_read_all(it->f, &s, it->inb[0], &m, it->o.method);
}

static int part_write(passion_part_iter *it)
{
    passion_section s;
    passion_memspec m;
    write_geom(it, &it->cur, &s, &m);
    return passion_file_write_all(it->out, &s, it->outb[0], &m,
                                     it->o.method);
}

/* Ask the kernel for this rank's share of partition k (halo included). */
static void part_hint(passion_part_iter *it, int64_t k)
{
    passion_file *f = it->f;
    /* only an array contiguous in its file has its rows where asked */
    if (f->a->spec.order[0] != it->dim || f->fv.step0 > 0)
        return;
    int64_t per = f->a->esize, n = f->a->spec.shape[it->dim];
    for (int d = 0; d < it->nd; d++)
        if (d != it->dim)
            per *= f->a->spec.shape[d];
    int64_t i0 = k * it->width - it->o.halo, i1 = (k + 1) * it->width +
                                                   it->o.halo;
    i0 = i0 < 0 ? 0 : i0;
    i1 = i1 > n ? n : i1;
    int64_t len = (i1 - i0) * per, P = it->ctx->size, r = it->ctx->rank;
    int64_t a0 = f->fv.base + i0 * per + len * r / P;
    int64_t a1 = f->fv.base + i0 * per + len * (r + 1) / P;
    core_io_advise(f->fh, a0, a1 - a0, CORE_ADV_WILLNEED);
}

/* ---- iterator ---- */

static int setup(passion_part_iter *it, const passion_part_opts *o)
{
    passion_ctx *ctx = it->ctx;
    passion_array *a = it->f->a;
    const passion_array_spec *sp = &a->spec;
    if (!core_zero(o->reserved, sizeof o->reserved))
        return core_err(ctx, PASSION_EINVAL, "passion_part_opts: reserved "
                        "fields not zero (fill it with "
                        "passion_part_opts_init)");
    if (sp->placement == PASSION_PLACE_LOCAL)
        return core_err(ctx, PASSION_EINVAL,
                        "partitions need a global array file");
    /* pieces follow the array's processor grid: a global array on the
       default one-rank grid at P > 1 would give every rank the whole
       partition (each element computed P times) */
    int64_t procs = 1;
    for (int d = 0; d < a->nd; d++)
        procs *= sp->grid[d];
    if (procs != ctx->size)
        return core_err(ctx, PASSION_EINVAL,
                        "partitions are split over the array's processor "
                        "grid, which has %lld rank(s) for a communicator of "
                        "%d: set spec.grid[] (product = %d) when creating "
                        "the array", (long long)procs, ctx->size, ctx->size);
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
    it->nin = 1;
    it->nout = o->out ? 1 : 0;
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
    core_free(it->ctx, it);
}

static int part_open_body(passion_file *f, const passion_part_opts *opts,
                           passion_part_iter **out)
{
    if (!out)
        return PASSION_EINVAL;
    *out = NULL;
    if (!f)
        return PASSION_EINVAL;
    core_enter(f->ctx);
    int rc0 = ocad_file_chunked_refuse(f, "partition iteration");
    if (rc0)
        return rc0;
    passion_part_opts def;
    if (!opts) {
        passion_part_opts_init(&def);
        opts = &def;
    }
    passion_part_iter *it = core_calloc(f->ctx, 1, sizeof *it);
    int rc = it ? PASSION_OK
                : core_err(f->ctx, PASSION_ENOMEM, "partition iterator");
    if (it) {
        it->ctx = f->ctx;
        it->f = f;
        it->o = *opts;
        it->k = -1;
        rc = setup(it, opts);
    }
    int64_t key[5] = {opts->dim, opts->width, opts->halo, opts->prefetch,
                          opts->method};
    rc = core_same(f->ctx, rc, key, sizeof key, "partition options");
    if (rc) {
        if (it)
            release(it);
        return rc;
    }
    /* input and output files stay open until passion_part_close_all */
    ocad_file_hold(it->f);
    ocad_file_hold(it->out);
    *out = it;
    return PASSION_OK;
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_part_open(passion_file *f, const passion_part_opts *opts,
                       passion_part_iter **out)
{
    passion_ctx *gctx = f ? f->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = part_open_body(f, opts, out);
    core_call_end(gctx);
    return rc;
}

static int part_next_all_body(passion_part_iter *it, passion_part *p)
{
    if (!it || !p)
        return PASSION_EINVAL;
    if (it->rc)
        return it->rc;
    core_enter(it->ctx);
    int rc = PASSION_OK;
    if (it->k >= 0 && it->k < it->nparts && it->out)
        rc = part_write(it); /* collective: agreed */
    if (rc) {
        it->rc = rc;
        return rc;
    }
    if (it->k >= it->nparts)
        return 0;
    int64_t k = ++it->k;
    if (k >= it->nparts)
        return 0;
    rc = part_read(it, k); /* collective: agreed */
    if (rc) {
        it->rc = rc;
        return rc;
    }
    if (it->o.prefetch && k + 1 < it->nparts)
        part_hint(it, k + 1);
    memset(&it->cur, 0, sizeof it->cur);
    passion_section s;
    passion_memspec m;
    read_geom(it, k, &s, &m, &it->cur);
    it->cur.index = k;
    it->cur.nparts = it->nparts;
    it->cur.in = it->inb[0];
    it->cur.out = it->nout ? it->outb[0] : NULL;
    *p = it->cur;
    return 1;
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_part_next_all(passion_part_iter *it, passion_part *p)
{
    passion_ctx *gctx = it ? it->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = part_next_all_body(it, p);
    core_call_end(gctx);
    return rc;
}

static int part_close_all_body(passion_part_iter *it)
{
    if (!it)
        return PASSION_OK;
    int rc = it->rc;
    if (!rc)
        core_enter(it->ctx);
    /* the caller stopped after a partition: its output still goes out */
    if (!rc && it->k >= 0 && it->k < it->nparts && it->out)
        rc = part_write(it);
    rc = core_agree(it->ctx, rc);
    ocad_file_release(it->f);
    ocad_file_release(it->out);
    release(it);
    return rc;
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_part_close_all(passion_part_iter *it)
{
    passion_ctx *gctx = it ? it->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = part_close_all_body(it);
    core_call_end(gctx);
    return rc;
}
