/*
 * slab.c - slab iteration over a local array file with prefetch, data
 * reuse and asynchronous write-back (thesis 5.4, 5.5.2 figure 5.8, 5.5.3
 * figure 5.11): opening, handing slabs out, write-back, closing. The
 * plan (slab ranges, ramp, alignment, buffers, the sections of a slab) is
 * slab_plan.c's.
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
 * waited for that worker to be scheduled, which on a loaded machine costs
 * more than the copy. Writes to an
 * O_DIRECT file stay asynchronous (the device's transfer overlaps).
 *
 * Invariants: at most one write is in flight (a sieved write rewrites the
 * holes of its extent, which may belong to the previous slab); a slot is
 * handed to the caller only when its read is complete; a slot is refilled only
 * after its write-back completed; every local index along dim is read once per
 * sweep with reuse (plus 2*halo per slab boundary without); buffers total at
 * most the budget when the width comes from it.
 */
#include "slab.h"

#include <stdlib.h>
#include <string.h>

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

static int slab_open_body(passion_file *f, const passion_slab_opts *opts,
                           passion_slab_iter **out)
{
    if (!out)
        return PASSION_EINVAL;
    *out = NULL;
    if (!f)
        return PASSION_EINVAL;
    core_enter(f->ctx);
    int rc0 = ocad_file_chunked_refuse(f, "slab iteration");
    if (rc0)
        return rc0;
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
    int rc = pf_slab_setup(it, f, opts);
    if (!rc && it->o.prefetch && it->nslabs > 0)
        rc = core_engine_kind(f->ctx, &(int){0});
    if (!rc && it->nslabs > 0)
        pf_slab_register(it);
    if (rc) {
        pf_slab_release(it);
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
    pf_slab_write_section(it, it->k, &s, &m);
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
 * at all. The advice is not free on the calling thread: advising ranges
 * the kernel was reading already could cost as long as the sweep's I/O
 * alone.
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
        pf_slab_range(it, k - 1, &pstart, &pcount);
    if (k == 0) {
        pf_slab_read_section(it, 0, 0, &s, &m);
        if ((rc = passion_file_read(it->f, &s, it->inb[0], &m,
                                           it->o.method)))
            return fail(it, rc);
    } else if (it->o.prefetch) {
        settle(it, &it->inreq[slot]);
        if (it->rc)
            return it->rc;
        if (reuse)
            pf_slab_reuse_copy(it, it->inb[slot], it->inb[it->cur], pcount);
        if (it->hinted[slot]) {
            /* advised when the previous slab was handed out: now a copy
               from the page cache */
            it->hinted[slot] = 0;
            /* a prefetch hit: the advised range is all in the page cache
               (read in, or being read in, during the computation) */
            if (core_io_cached(it->f->fh, it->hlo[slot], it->hhi[slot]) >=
                1000)
                it->ctx->cnt.prefetch_hits++;
            pf_slab_read_section(it, k, reuse ? (int)(2 * it->halo) : 0, &s,
                                 &m);
            if ((rc = passion_file_read(it->f, &s, it->inb[slot], &m,
                                        it->o.method)))
                return fail(it, rc);
        }
    } else {
        if (reuse)
            pf_slab_reuse_copy(it, it->inb[0], it->inb[0], pcount);
        pf_slab_read_section(it, k, reuse ? (int)(2 * it->halo) : 0, &s, &m);
        if ((rc = passion_file_read(it->f, &s, it->inb[0], &m,
                                           it->o.method)))
            return fail(it, rc);
    }
    if (it->o.prefetch && k + 1 < it->nslabs) {
        int ns = (int)((k + 1) % it->nin);
        settle(it, &it->wbreq[ns]); /* its old slab must be on disk */
        if (it->rc)
            return it->rc;
        pf_slab_read_section(it, k + 1, reuse ? (int)(2 * it->halo) : 0, &s,
                             &m);
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
    pf_slab_range(it, k, &slab->start, &slab->count);
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
    pf_slab_release(it);
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
