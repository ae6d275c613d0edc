/*
 * slab.c - slab iteration over a local array file with prefetch, data
 * reuse and asynchronous write-back (thesis 5.4, 5.5.2 figure 5.8, 5.5.3
 * figure 5.11).
 *
 * The local array is cut along `dim` into slabs of `width` indices; slab k
 * lands in an in-core buffer of (width + 2*halo) indices along dim and the
 * full file extent elsewhere. Buffers form a ring: with prefetch, slab k+1
 * is being read into the next slot while slab k is computed, and slab k's
 * output is written from its own out slot while slab k+1 is computed.
 * Reuse: the last 2*halo indices of slab k's buffer are exactly the first
 * 2*halo of slab k+1's, so they are copied (or, with one buffer, moved)
 * and only the rest is read; with in-place write-back reuse is forced
 * whenever halo > 0, because the shared cells may be dirty in memory.
 *
 * Buffered input (the driver takes page-cache advice, no O_DIRECT): the
 * next slab is prefetched by asking the kernel to read its file range into
 * the page cache (WILLNEED: the device works during the computation, no
 * thread copies anything), only the part beyond the kernel's own
 * sequential readahead window (hint_read), and the slab is read
 * synchronously when it is
 * handed out, a copy from the page cache that the run without prefetch
 * pays too. The asynchronous read would copy the same bytes on a kernel
 * worker that competes with the computation for the cores (every core is
 * busy when there is a rank per core) and cost a hand-off per slab; the
 * kernel's own sequential readahead already overlaps much of a buffered
 * sweep without prefetch, so there the asynchronous read lost.
 * Used when the slab's covering file range is dense (at most twice its
 * bytes); strided slabs, O_DIRECT and drivers without advice keep the
 * asynchronous read. Writes to a buffered file are a copy into the page
 * cache, so they too run on the calling thread at the point the
 * asynchronous write would have been issued: handed to a kernel worker they
 * waited for that worker to be scheduled (measured: the prefetching run
 * blocked on I/O several times t_io on the loaded 2-core VM). Writes to an
 * O_DIRECT file stay asynchronous (the device's transfer overlaps).
 *
 * Invariants: at most one write is in flight (a sieved write rewrites the
 * holes of its extent, which may belong to the previous slab); a slot is
 * handed to the caller only when its read is complete; a slot is refilled only
 * after its write-back completed; every local index along dim is read once per
 * sweep with reuse (plus 2*halo per slab boundary without); buffers total at
 * most the budget when the width comes from it.
 */
#include "pf.h"

#include <stdlib.h>
#include <string.h>

#define SLAB_NIN 3
#define SLAB_NOUT 2

struct passion_slab_iter {
    passion_ctx *ctx;
    passion_file *f, *out;
    passion_slab_opts o;
    int nd, dim, pos;          /* pos: dim's place in storage order */
    int64_t esize;
    int64_t n, halo, width, nslabs;
    int64_t pw;                /* planned width: width, less 2 (au - 1)
                                  when the boundaries are aligned */
    int64_t au, ab0;           /* aligned boundaries: ab0 + j au (au > 1),
                                  ab0 in [1, au]; au = 1: as planned */
    int64_t pad;               /* bytes before each buffer's index 0 */
    int64_t nmid;              /* ramped: full-width slabs between the ramps;
                                  -1 = no ramp */
    int64_t nloc[PASSION_MAX_DIMS], gh[PASSION_MAX_DIMS];
    int64_t bshape[PASSION_MAX_DIMS];
    int64_t outer, inner;      /* buffer = outer x bshape[dim] x inner */
    int64_t bbytes;
    int nin, nout;
    char *inb[SLAB_NIN], *outb[SLAB_NOUT];
    int inreg[SLAB_NIN], outreg[SLAB_NOUT]; /* registered slots, -1 none */
    passion_request *inreq[SLAB_NIN], *wbreq[SLAB_NIN], *outreq[SLAB_NOUT];
    int hinted[SLAB_NIN];      /* slot's slab advised, read at hand-out */
    int64_t hlo[SLAB_NIN], hhi[SLAB_NIN]; /* its advised file range */
    int64_t k;                 /* current slab, -1 before the first */
    int cur;                   /* its in slot */
    int dirty;
    int rc;
};

int passion_slab_opts_init(passion_slab_opts *o)
{
    if (!o)
        return PASSION_EINVAL;
    memset(o, 0, sizeof *o);
    o->dim = -1;
    o->halo = -1;
    o->prefetch = 1;
    o->reuse = 1;
    o->ramp = 1;
    o->method = PASSION_METHOD_AUTO;
    return PASSION_OK;
}

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
static void slab_range(const passion_slab_iter *it, int64_t k, int64_t *start,
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
 * throttling on the computing thread. Measured (bench-prefetch
 * memlimit, 23552x23552 u8 image, 23552-byte columns, slabs of 87
 * columns, P = 1, load 5-6): every slab's write was unaligned and the
 * prefetching O_DIRECT sweep waited 1.04-1.49 s for writes, of a t_io of
 * 1.7 s; aligned, its whole I/O wait was 0.23 and 0.41 s against 0.92 and
 * 0.64 s before, in interleaved runs at load 7-13. When the slabs are contiguous in the written file (dim slowest in
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
        it->n <= 0 || slice <= 0)
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
        slab_range(it, k, &st, &ct);
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
static void read_section(const passion_slab_iter *it, int64_t k, int skip,
                         passion_section *s, passion_memspec *m)
{
    int64_t start, count;
    slab_range(it, k, &start, &count);
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
static void write_section(const passion_slab_iter *it, int64_t k,
                          passion_section *s, passion_memspec *m)
{
    int64_t start, count;
    slab_range(it, k, &start, &count);
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
static void reuse_copy(passion_slab_iter *it, char *dst, const char *src,
                       int64_t from)
{
    int64_t b = it->bshape[it->dim], n = 2 * it->halo * it->inner;
    for (int64_t o = 0; o < it->outer; o++)
        memmove(dst + o * b * it->inner, src + (o * b + from) * it->inner,
                (size_t)n);
    it->ctx->cnt.reuse_bytes += (uint64_t)(n * it->outer);
}

static int setup(passion_slab_iter *it, passion_file *f,
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
 * for the sweep (core_aio_register) instead of by every request. Measured
 * (perf on bench-prefetch cold O_DIRECT, 2048x2048 f32, P = 1):
 * the submitting io_uring_enter calls took about 3.8 ms per prefetching
 * sweep, of which 2 ms pinning the caller's pages (gup_fast, slow with
 * interrupts toggled under this VM's paravirtualisation) and 0.6 ms the
 * device's doorbell, all on the computing thread. A buffer the engine
 * cannot register (thread engine, RLIMIT_MEMLOCK) is used as before.
 */
static void register_buffers(passion_slab_iter *it)
{
    int kind = 0;
    if (!it->o.prefetch || core_engine_kind(it->ctx, &kind) ||
        kind != PASSION_ENGINE_URING)
        return;
    /* registering pins (and closing unpins) the whole buffer, which cost
       more per byte than a request's own pinning (same perf runs: 0.34
       against 0.25 samples per MB): worth it only when the sweep moves at
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

static void release(passion_slab_iter *it)
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

static int slab_open_body(passion_file *f, const passion_slab_opts *opts,
                           passion_slab_iter **out)
{
    if (!out)
        return PASSION_EINVAL;
    *out = NULL;
    if (!f)
        return PASSION_EINVAL;
    core_enter(f->ctx);
    passion_slab_opts def;
    if (!opts) {
        passion_slab_opts_init(&def);
        opts = &def;
    }
    passion_slab_iter *it = core_calloc(f->ctx, 1, sizeof *it);
    if (!it)
        return core_err(f->ctx, PASSION_ENOMEM, "slab iterator");
    it->ctx = f->ctx;
    it->k = -1;
    for (int i = 0; i < SLAB_NIN; i++)
        it->inreg[i] = -1;
    for (int i = 0; i < SLAB_NOUT; i++)
        it->outreg[i] = -1;
    int rc = setup(it, f, opts);
    if (!rc && it->o.prefetch && it->nslabs > 0)
        rc = core_engine_kind(f->ctx, &(int){0});
    if (!rc && it->nslabs > 0)
        register_buffers(it);
    if (rc) {
        release(it);
        return rc;
    }
    /* input and output files stay open until passion_slab_close */
    ocad_file_hold(it->f);
    ocad_file_hold(it->out);
    *out = it;
    return PASSION_OK;
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_slab_open(passion_file *f, const passion_slab_opts *opts,
                       passion_slab_iter **out)
{
    passion_ctx *gctx = f ? f->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = slab_open_body(f, opts, out);
    core_call_end(gctx);
    return rc;
}

/* Wait for a request slot (NULL is fine); keep the first error and its
   detail (the wait, a public call, clears the detail at entry). */
static void settle(passion_slab_iter *it, passion_request **r)
{
    if (!*r)
        return;
    char keep[CORE_DETAIL_MAX];
    int had = it->rc;
    if (had)
        memcpy(keep, it->ctx->detail, sizeof keep);
    int rc = passion_request_wait(*r);
    *r = NULL;
    if (rc && !it->rc)
        it->rc = rc;
    if (had)
        memcpy(it->ctx->detail, keep, sizeof keep);
}

static int fail(passion_slab_iter *it, int rc)
{
    if (rc && !it->rc)
        it->rc = rc;
    return it->rc;
}

/* Write asynchronously to g? Only with prefetch and only to an O_DIRECT
   handle (see the top). */
static int async_write(const passion_slab_iter *it, const passion_file *g)
{
    return it->o.prefetch && g->fh->align > 1;
}

/* Write slab k's output and dirty input, sync or async. */
static int finish_current(passion_slab_iter *it)
{
    passion_section s;
    passion_memspec m;
    int rc = PASSION_OK;
    /* one write in flight per iterator: a sieved write rewrites the holes
       of its extent, which may hold the previous slab's cells */
    for (int i = 0; i < SLAB_NIN; i++)
        settle(it, &it->wbreq[i]);
    for (int i = 0; i < SLAB_NOUT; i++)
        settle(it, &it->outreq[i]);
    if (it->rc)
        return it->rc;
    write_section(it, it->k, &s, &m);
    if (it->out) {
        int os = (int)(it->k % it->nout);
        char *b = it->outb[os];
        rc = async_write(it, it->out)
                 ? passion_file_write_begin(it->out, &s, b, &m, it->o.method,
                                            &it->outreq[os])
                 : passion_file_write(it->out, &s, b, &m, it->o.method);
    }
    if (!rc && it->o.writeback && it->dirty) {
        char *b = it->inb[it->cur];
        CORE_CHAOS(SLAB_WRITEBACK);
        rc = async_write(it, it->f)
                 ? passion_file_write_begin(it->f, &s, b, &m, it->o.method,
                                               &it->wbreq[it->cur])
                 : passion_file_write(it->f, &s, b, &m, it->o.method);
    }
    it->dirty = 0;
    return rc;
}

/*
 * Advise the kernel to read section s (a buffered, dense range); 1 if the
 * slab is left to the page cache (read at hand-out), 0 if it must be read
 * asynchronously instead. The sweep reads the file in order, so the
 * kernel's own sequential readahead is already reading the first
 * read_ahead_kb bytes past the slab just read: only the part of the next
 * slab beyond that window is advised, and a slab inside it gets no advice
 * at all. The advice is not free on the calling thread: measured (issue
 * 14, bench-prefetch cold, 2048x2048-f32 3x3, P = 1, load 9) it took
 * 10-57 ms per sweep of 16 MiB, as long as the sweep's I/O alone, for
 * ranges the kernel was reading already.
 */
static int hint_read(passion_slab_iter *it, int slot,
                     const passion_section *s, char *buf,
                     const passion_memspec *m)
{
    ocad_xfer x;
    if (it->f->fh->align > 1)
        return 0; /* O_DIRECT: no page cache, no readahead, no advice */
    if (ocad_section_prepare(it->f, s, buf, m, it->o.method, 0, &x) ||
        x.nblocks == 0)
        return 0;
    int64_t span = x.fend - x.foff0, useful = x.nblocks * x.blen;
    if (span > 2 * useful)
        return 0;
    it->hlo[slot] = x.foff0;
    it->hhi[slot] = x.fend;
    int64_t ra = core_io_readahead(it->f->fh);
    if (ra >= span) {
        return 1;
    }
    return core_io_advise(it->f->fh, x.foff0 + ra, span - ra,
                          CORE_ADV_WILLNEED) == 1;
}

static int slab_next_body(passion_slab_iter *it, passion_slab *slab)
{
    if (!it || !slab)
        return PASSION_EINVAL;
    if (it->rc)
        return it->rc;
    core_enter(it->ctx);
    int rc;
    /* the next slab's read first: waiting reaps the ring, which submits
       whatever the plug (passion_slab_next) holds, so the waits come
       before this slab's write is queued and the write and the read after
       it go to the kernel in one system call */
    if (it->o.prefetch && it->k >= 0 && it->k + 1 < it->nslabs)
        settle(it, &it->inreq[(int)((it->k + 1) % it->nin)]);
    if (it->rc)
        return it->rc;
    if (it->k >= 0 && it->k < it->nslabs && (rc = finish_current(it)))
        return fail(it, rc);
    if (it->k >= it->nslabs)
        return 0;
    int64_t k = ++it->k;
    if (k >= it->nslabs)
        return 0;
    int reuse = it->o.reuse && it->halo > 0;
    int slot = it->o.prefetch ? (int)(k % it->nin) : 0;
    passion_section s;
    passion_memspec m;
    int64_t pstart = 0, pcount = 0;
    if (k > 0)
        slab_range(it, k - 1, &pstart, &pcount);
    if (k == 0) {
        read_section(it, 0, 0, &s, &m);
        if ((rc = passion_file_read(it->f, &s, it->inb[0], &m,
                                           it->o.method)))
            return fail(it, rc);
    } else if (it->o.prefetch) {
        settle(it, &it->inreq[slot]);
        if (it->rc)
            return it->rc;
        if (reuse)
            reuse_copy(it, it->inb[slot], it->inb[it->cur], pcount);
        if (it->hinted[slot]) {
            /* advised when the previous slab was handed out: now a copy
               from the page cache */
            it->hinted[slot] = 0;
            /* a prefetch hit: the advised range is all in the page cache
               (read in, or being read in, during the computation) */
            if (core_io_cached(it->f->fh, it->hlo[slot], it->hhi[slot]) >=
                1000)
                it->ctx->cnt.prefetch_hits++;
            read_section(it, k, reuse ? (int)(2 * it->halo) : 0, &s, &m);
            if ((rc = passion_file_read(it->f, &s, it->inb[slot], &m,
                                        it->o.method)))
                return fail(it, rc);
        }
    } else {
        if (reuse)
            reuse_copy(it, it->inb[0], it->inb[0], pcount);
        read_section(it, k, reuse ? (int)(2 * it->halo) : 0, &s, &m);
        if ((rc = passion_file_read(it->f, &s, it->inb[0], &m,
                                           it->o.method)))
            return fail(it, rc);
    }
    if (it->o.prefetch && k + 1 < it->nslabs) {
        int ns = (int)((k + 1) % it->nin);
        settle(it, &it->wbreq[ns]); /* its old slab must be on disk */
        if (it->rc)
            return it->rc;
        read_section(it, k + 1, reuse ? (int)(2 * it->halo) : 0, &s, &m);
        if (hint_read(it, ns, &s, it->inb[ns], &m))
            it->hinted[ns] = 1;
        else if ((rc = passion_file_read_begin(it->f, &s, it->inb[ns], &m,
                                               it->o.method,
                                               &it->inreq[ns])))
            return fail(it, rc);
    }
    int os = it->nout ? (int)(k % it->nout) : 0;
    if (it->nout)
        settle(it, &it->outreq[os]);
    if (it->rc)
        return it->rc;
    it->cur = slot;
    memset(slab, 0, sizeof *slab);
    slab->index = k;
    slab->nslabs = it->nslabs;
    slab_range(it, k, &slab->start, &slab->count);
    slab->dim = it->dim;
    slab->halo = it->halo;
    slab->in = it->inb[slot];
    slab->out = it->nout ? it->outb[os] : NULL;
    for (int d = 0; d < it->nd; d++) {
        slab->mem.shape[d] = it->bshape[d];
        slab->mem.offset[d] = d == it->dim ? it->halo : it->gh[d];
    }
    return 1;
}

/* the thread contract's guard (core_call_begin) around the call; the
   ring plugged, so that the writes and the read a call starts go to the
   kernel together (one io_uring_enter, one doorbell of the device instead
   of one each). The submission at unplug is I/O time (counter t_io), as a
   request's own submission is in request.c. */
int passion_slab_next(passion_slab_iter *it, passion_slab *slab)
{
    passion_ctx *gctx = it ? it->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    if (gctx)
        core_aio_plug(gctx);
    rc = slab_next_body(it, slab);
    if (gctx) {
        double t0 = core_now();
        core_aio_unplug(gctx);
        gctx->cnt.t_io += core_now() - t0;
    }
    core_call_end(gctx);
    return rc;
}

int passion_slab_dirty(passion_slab_iter *it)
{
    if (!it)
        return PASSION_EINVAL;
    core_enter(it->ctx);
    if (!it->o.writeback)
        return core_err(it->ctx, PASSION_ESTATE,
                        "slab marked dirty without write-back");
    it->dirty = 1;
    return PASSION_OK;
}

static int slab_close_body(passion_slab_iter *it)
{
    if (!it)
        return PASSION_OK;
    if (!it->rc)
        core_enter(it->ctx);
    /* the current slab's output, if the caller stopped after it */
    if (!it->rc && it->k >= 0 && it->k < it->nslabs) {
        int rc = finish_current(it);
        fail(it, rc);
        it->k = it->nslabs;
    }
    for (int i = 0; i < SLAB_NIN; i++) {
        settle(it, &it->inreq[i]);
        settle(it, &it->wbreq[i]);
    }
    for (int i = 0; i < SLAB_NOUT; i++)
        settle(it, &it->outreq[i]);
    int rc = it->rc;
    ocad_file_release(it->f);
    ocad_file_release(it->out);
    release(it);
    return rc;
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_slab_close(passion_slab_iter *it)
{
    passion_ctx *gctx = it ? it->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = slab_close_body(it);
    core_call_end(gctx);
    return rc;
}
