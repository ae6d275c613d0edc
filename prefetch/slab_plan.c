/*
 * slab_plan.c - the slab iterator's plan (thesis 5.4): the options
 * checked, the slab width from the budget, the slabs' ranges along dim
 * (ramped at both ends under prefetch, boundaries aligned for O_DIRECT
 * write-back), the buffers, and the file sections of a slab.
 *
 * Invariants: the slabs cover the local extent in order, none wider than
 * width, so each fits its buffer; with a width from the budget the buffers
 * (pads included) total at most the budget; a plan that alignment would
 * break is left unaligned (au = 1).
 */
#include "slab.h"

#include <stdlib.h>
#include <string.h>

/*
 * The ramp (prefetch only): the first slab's read and the last slab's
 * write overlap no computation, so with s equal slabs at most 1 - 1/s of
 * the I/O can be hidden. Ramped, the first width-wide stretch is cut into
 * q, q, width - 2q (q = width/4) and the last into width - 2q, q, q: the
 * unhidden I/O shrinks to a quarter slab at each end, and each ramp step at
 * most doubles the width, so slab k+1's read still hides behind slab k's
 * computation while I/O per index is at most half the computation's. The
 * stretches between the ramps are width wide (the last of them shorter).
 * Applied when width >= 4 and n >= 2 width; slab k's range is computed,
 * not stored (n / width may be large).
 */
static void ramp_plan(passion_slab_iter *it)
{
    it->nmid = -1;
    it->nslabs = it->n > 0 ? (it->n + it->pw - 1) / it->pw : 0;
    if (!it->o.prefetch || !it->o.ramp || it->pw < 4 || it->n < 2 * it->pw)
        return;
    it->nmid = (it->n - 2 * it->pw + it->pw - 1) / it->pw;
    /* aligned: a last middle stretch shorter than au joins the one
       before (it would vanish when its ends are aligned) */
    int64_t rem = (it->n - 2 * it->pw) % it->pw;
    if (it->au > 1 && rem > 0 && rem < it->au && it->nmid > 1)
        it->nmid--;
    it->nslabs = it->nmid + 6;
}

/* The slab plan before alignment. */
static void plan_range(const passion_slab_iter *it, int64_t k, int64_t *start,
                       int64_t *count)
{
    int64_t w = it->pw;
    if (it->nmid < 0) {
        *start = k * w;
        *count = it->n - *start < w ? it->n - *start : w;
        return;
    }
    int64_t q = w / 4, h = w - 2 * q;
    const int64_t up_s[3] = {0, q, 2 * q}, up_c[3] = {q, q, h};
    const int64_t dn_s[3] = {0, h, h + q}, dn_c[3] = {h, q, q};
    if (k < 3) {
        *start = up_s[k];
        *count = up_c[k];
    } else if (k < 3 + it->nmid) {
        *start = w + (k - 3) * w;
        int64_t left = it->n - w - *start;
        *count = left < w || (it->au > 1 && k == 2 + it->nmid) ? left : w;
    } else {
        int64_t j = k - 3 - it->nmid;
        *start = it->n - w + dn_s[j];
        *count = dn_c[j];
    }
}

/* The last aligned boundary at or below x (0 below the first). */
static int64_t align_down(const passion_slab_iter *it, int64_t x)
{
    return x < it->ab0 ? 0 : it->ab0 + (x - it->ab0) / it->au * it->au;
}

/* Slab k's indices along dim: the plan, its inner boundaries moved down to
   aligned ones when au > 1. */
void pf_slab_range(const passion_slab_iter *it, int64_t k, int64_t *start,
                   int64_t *count)
{
    plan_range(it, k, start, count);
    if (it->au <= 1)
        return;
    int64_t s = k == 0 ? 0 : align_down(it, *start);
    int64_t e = k == it->nslabs - 1 ? it->n : align_down(it, *start + *count);
    *start = s;
    *count = e - s;
}

/*
 * Aligned slabs (prefetch, O_DIRECT output): a slab's write goes straight
 * to the device only when its file range and its memory are aligned to the
 * handle's unit (drv_posix: 4 KiB); otherwise the driver writes it through
 * the page cache, which under memory pressure stalls in the kernel's dirty
 * throttling on the computing thread. When the slabs are contiguous in
 * the written file (dim slowest in
 * storage, no ghost cells in the other dimensions), the slab boundaries
 * move down to the indices whose file offset is aligned (every au-th
 * index, au = align / gcd(slice, align)) and the buffers start pad bytes
 * past an aligned address so that the interior lands aligned in memory
 * too; the plan is made with width - 2 (au - 1) so every slab still fits
 * its buffer when its ends move down (and a last middle stretch shorter
 * than au joins the one before it, which then has less than
 * width - (au - 1) indices). Only the first and the last slab's write stay
 * unaligned. Applied when au <= width / 8, every slab stays non-empty and,
 * with a width from the budget, the pads fit in it; 0 (plan unchanged)
 * otherwise (also beyond 2^24 slabs, which the check would walk).
 */
static int align_plan(passion_slab_iter *it, int64_t slice, int nbuf,
                      int64_t budget, int from_budget)
{
    const passion_file *g = it->out ? it->out
                                    : (it->o.writeback ? it->f : NULL);
    if (!g || !it->o.prefetch || it->outer != 1 || g->fh->align <= 1 ||
        it->n <= 0 || slice <= 0 || g->fv.step0 > 0)
        return 0;
    for (int d = 0; d < it->nd; d++)
        if (d != it->dim && it->gh[d] != 0)
            return 0;
    int64_t A = g->fh->align, a = slice % A, gcd = A;
    for (int64_t x = a; x;) {
        int64_t t = gcd % x;
        gcd = x;
        x = t;
    }
    int64_t au = A / gcd, c = (g->fv.base % A + it->gh[it->dim] % A * a) % A;
    if (au <= 1 || au > it->width / 8 || it->n / it->width > (1 << 24))
        return 0;
    int64_t b0 = 0;
    for (int64_t b = 1; b <= au && !b0; b++)
        if ((c + b % A * a) % A == 0)
            b0 = b;
    if (!b0)
        return 0;
    int64_t pad = (A - it->halo % A * a % A) % A;
    if (from_budget && nbuf * (it->bbytes + pad) > budget)
        return 0;
    it->au = au;
    it->ab0 = b0;
    it->pw = it->width - 2 * (au - 1);
    ramp_plan(it);
    int64_t at = 0, st, ct;
    for (int64_t k = 0; k < it->nslabs; k++) {
        pf_slab_range(it, k, &st, &ct);
        if (st != at || ct < 1 || ct > it->width)
            break;
        at += ct;
    }
    if (at != it->n) {
        it->au = 1;
        it->pw = it->width;
        ramp_plan(it);
        return 0;
    }
    it->pad = pad;
    return 1;
}

/* Section of slab k from local index `from` along dim, into its buffer. */
void pf_slab_read_section(const passion_slab_iter *it, int64_t k, int skip,
                          passion_section *s, passion_memspec *m)
{
    int64_t start, count;
    pf_slab_range(it, k, &start, &count);
    memset(s, 0, sizeof *s);
    memset(m, 0, sizeof *m);
    for (int d = 0; d < it->nd; d++) {
        s->stride[d] = 1;
        m->shape[d] = it->bshape[d];
        if (d == it->dim) {
            s->start[d] = start - it->halo + skip;
            s->count[d] = count + 2 * it->halo - skip;
            m->offset[d] = skip;
        } else {
            s->start[d] = -it->gh[d];
            s->count[d] = it->nloc[d] + 2 * it->gh[d];
        }
    }
}

/* The interior of slab k (what is written back). */
void pf_slab_write_section(const passion_slab_iter *it, int64_t k,
                           passion_section *s, passion_memspec *m)
{
    int64_t start, count;
    pf_slab_range(it, k, &start, &count);
    memset(s, 0, sizeof *s);
    memset(m, 0, sizeof *m);
    for (int d = 0; d < it->nd; d++) {
        s->stride[d] = 1;
        m->shape[d] = it->bshape[d];
        if (d == it->dim) {
            s->start[d] = start;
            s->count[d] = count;
            m->offset[d] = it->halo;
        } else {
            s->count[d] = it->nloc[d];
            m->offset[d] = it->gh[d];
        }
    }
}

/* Copy 2*halo indices along dim: src positions [from, ..) to dst [0, ..). */
void pf_slab_reuse_copy(passion_slab_iter *it, char *dst, const char *src,
                        int64_t from)
{
    int64_t b = it->bshape[it->dim], n = 2 * it->halo * it->inner;
    for (int64_t o = 0; o < it->outer; o++)
        memmove(dst + o * b * it->inner, src + (o * b + from) * it->inner,
                (size_t)n);
    it->ctx->cnt.reuse_bytes += (uint64_t)(n * it->outer);
}

int pf_slab_setup(passion_slab_iter *it, passion_file *f,
                  const passion_slab_opts *o)
{
    passion_ctx *ctx = f->ctx;
    passion_array *a = f->a;
    const passion_array_spec *sp = &a->spec;
    if (!core_zero(o->reserved, sizeof o->reserved))
        return core_err(ctx, PASSION_EINVAL, "passion_slab_opts: reserved "
                        "fields not zero (fill it with "
                        "passion_slab_opts_init)");
    if (sp->placement != PASSION_PLACE_LOCAL)
        return core_err(ctx, PASSION_EINVAL,
                        "slab iteration needs a local array file (LPM)");
    it->ctx = ctx;
    it->f = f;
    it->o = *o;
    it->nd = a->nd;
    it->esize = a->esize;
    it->dim = o->dim < 0 ? sp->order[0] : o->dim;
    if (it->dim >= a->nd)
        return core_err(ctx, PASSION_EINVAL, "slab dimension %d of a %d-d "
                        "array", it->dim, a->nd);
    for (int k = 0; k < a->nd; k++)
        if (sp->order[k] == it->dim)
            it->pos = k;
    passion_array_local_shape(a, ctx->rank, it->nloc);
    for (int d = 0; d < a->nd; d++)
        it->gh[d] = sp->ghost[d];
    it->n = it->nloc[it->dim];
    it->halo = o->halo < 0 ? it->gh[it->dim] : o->halo;
    if (it->halo > it->gh[it->dim])
        return core_err(ctx, PASSION_EINVAL,
                        "halo %lld exceeds the ghost width %lld of dimension "
                        "%d", (long long)it->halo,
                        (long long)it->gh[it->dim], it->dim);
    if (o->writeback && !f->writable)
        return core_err(ctx, PASSION_EACCES, "write-back to %s, open "
                        "read-only", f->fh->path);
    if (o->writeback && it->halo > 0)
        it->o.reuse = 1; /* shared cells may be dirty in memory */
    if (o->out) {
        passion_file *g = o->out;
        int64_t ol[PASSION_MAX_DIMS];
        if (g->a->spec.placement != PASSION_PLACE_LOCAL || g->a->nd != a->nd ||
            g->a->esize != a->esize)
            return core_err(ctx, PASSION_EINVAL, "output file: not a local "
                            "array of the same rank and element size");
        passion_array_local_shape(g->a, ctx->rank, ol);
        if (memcmp(ol, it->nloc, sizeof(int64_t) * (size_t)a->nd))
            return core_err(ctx, PASSION_EINVAL, "output file: local shape "
                            "differs from the input's");
        if (!g->writable)
            return core_err(ctx, PASSION_EACCES, "output file %s is "
                            "read-only", g->fh->path);
        it->out = g;
    }
    it->nin = o->prefetch ? (o->writeback ? 3 : 2) : 1;
    it->nout = o->out ? (o->prefetch ? 2 : 1) : 0;
    /* bytes of one index along dim */
    int64_t slice = a->esize;
    it->inner = a->esize;
    it->outer = 1;
    for (int k = 0; k < a->nd; k++) {
        int d = sp->order[k];
        if (d == it->dim)
            continue;
        int64_t e = it->nloc[d] + 2 * it->gh[d];
        if (!core_mul(slice, e, &slice))
            return core_err(ctx, PASSION_EOVERFLOW, "slab size overflows");
        if (k > it->pos)
            it->inner *= e;
        else
            it->outer *= e;
    }
    int64_t budget = o->budget > 0 ? o->budget : ctx->opt.memory_budget;
    int nbuf = it->nin + it->nout;
    it->width = o->width;
    if (it->width <= 0) {
        /* slice 0: this rank owns nothing in another dimension, its
           slabs are empty whatever their width */
        it->width = slice > 0 ? budget / nbuf / slice - 2 * it->halo
                              : (it->n > 0 ? it->n : 1);
        if (it->width < 1)
            return core_err(ctx, PASSION_ENOMEM,
                            "memory budget %lld too small for %d slab "
                            "buffers of one index (%lld bytes) plus halos",
                            (long long)budget, nbuf, (long long)slice);
    }
    if (it->width > it->n)
        it->width = it->n > 0 ? it->n : 1;
    it->pw = it->width;
    it->au = 1;
    ramp_plan(it);
    for (int d = 0; d < a->nd; d++)
        it->bshape[d] = d == it->dim ? it->width + 2 * it->halo
                                     : it->nloc[d] + 2 * it->gh[d];
    if (!core_mul(slice, it->width + 2 * it->halo, &it->bbytes))
        return core_err(ctx, PASSION_EOVERFLOW, "slab buffer overflows");
    align_plan(it, slice, nbuf, budget, o->width <= 0);
    if (it->nslabs == 0)
        return PASSION_OK;
    int64_t real = it->bbytes + it->pad;
    for (int i = 0; i < it->nin; i++) {
        char *b = core_stage_alloc(ctx, real);
        if (!b)
            return core_err(ctx, PASSION_ENOMEM, "slab buffer of %lld bytes",
                            (long long)real);
        it->inb[i] = b + it->pad;
    }
    for (int i = 0; i < it->nout; i++) {
        char *b = core_stage_alloc(ctx, real);
        if (!b)
            return core_err(ctx, PASSION_ENOMEM, "slab buffer of %lld bytes",
                            (long long)real);
        it->outb[i] = b + it->pad;
        memset(it->outb[i], 0, (size_t)it->bbytes);
    }
    return PASSION_OK;
}

/*
 * Registered buffers (prefetch, io_uring, O_DIRECT): each buffer that an
 * O_DIRECT handle reads into or writes from asynchronously is pinned once
 * for the sweep (core_aio_register) instead of by every request: pinning
 * the caller's pages was the larger part of the submitting system call's
 * time, all on the computing thread. A buffer the engine
 * cannot register (thread engine, RLIMIT_MEMLOCK) is used as before.
 */
void pf_slab_register(passion_slab_iter *it)
{
    int kind = 0;
    if (!it->o.prefetch || core_engine_kind(it->ctx, &kind) ||
        kind != PASSION_ENGINE_URING)
        return;
    /* registering pins (and closing unpins) the whole buffer, which cost
       more per byte than a request's own pinning: worth it only when the
       sweep moves at
       least twice the bytes of the buffers registered for it */
    int64_t real = it->bbytes + it->pad, sweep = it->n * (it->bbytes /
                                                          (it->width +
                                                           2 * it->halo));
    if (it->f->fh->align > 1 && sweep >= 2 * it->nin * real)
        for (int i = 0; i < it->nin; i++)
            it->inreg[i] = core_aio_register(it->ctx, it->inb[i] - it->pad,
                                             real);
    if (it->out && it->out->fh->align > 1 && sweep >= 2 * it->nout * real)
        for (int i = 0; i < it->nout; i++)
            it->outreg[i] = core_aio_register(it->ctx, it->outb[i] - it->pad,
                                              real);
}

void pf_slab_release(passion_slab_iter *it)
{
    int64_t real = it->bbytes + it->pad;
    for (int i = 0; i < SLAB_NIN; i++)
        core_aio_unregister(it->ctx, it->inreg[i]);
    for (int i = 0; i < SLAB_NOUT; i++)
        core_aio_unregister(it->ctx, it->outreg[i]);
    for (int i = 0; i < SLAB_NIN; i++)
        if (it->inb[i])
            core_stage_free(it->ctx, it->inb[i] - it->pad, real);
    for (int i = 0; i < SLAB_NOUT; i++)
        if (it->outb[i])
            core_stage_free(it->ctx, it->outb[i] - it->pad, real);
    core_free(it->ctx, it);
}
