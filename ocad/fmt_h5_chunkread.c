/*
 * fmt_h5_chunkread.c - a section of a chunked HDF5 dataset read by this
 * rank (ocad_h5c_read): the chunks the section touches are found in the
 * chunk index (ocad_h5c_locate), read in batches that fit the memory
 * budget, each batch's chunks in file order with adjacent chunks merged
 * into one read (core_io_read_batch: in flight together where the engine
 * can), then decoded (fmt_h5_filter.c), byte-swapped to this machine's
 * order and copied into the caller's buffer by worker threads. A chunk
 * never written reads as the dataset's fill value.
 *
 * Invariants: every element of the section is written exactly once, from
 * the one chunk that holds it, so workers never write the same bytes;
 * libhdf5 is called only on the calling thread (the lookups, before the
 * workers start); a batch holds its chunks' stored bytes plus each
 * worker's scratch (three chunk sizes) within the memory budget, and a
 * budget below one chunk and one worker is ENOMEM, naming both; any
 * chunk that fails to decode (a checksum mismatch) fails the whole read,
 * never a partial result taken as data.
 */
#include "ocad.h"

#ifdef PASSION_HAVE_HDF5

#include "fmt_h5_chunk.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WORKERS_MAX 8

/* One chunk of a batch: its index, where it is stored, where its stored
   bytes land in the batch buffer. */
typedef struct rchunk {
    int64_t idx[PASSION_MAX_DIMS];
    ocad_h5c_loc loc;
    int64_t at;
} rchunk;

/* What a batch's workers share. */
typedef struct batch {
    const ocad_h5c_geom *g;
    const passion_section *s;
    const int64_t *mstride; /* memory strides (elements) per dimension */
    const int64_t *moff;    /* memory offset per dimension */
    char *buf;
    int swap;
    const unsigned char *fill; /* the fill value, this machine's order */
    rchunk *ch;
    int n;
    unsigned char *raw;
    int next;               /* the next chunk to take (atomic) */
    pthread_mutex_t mu;
    int rc;                 /* the first failure */
    int64_t bad;            /* its chunk */
    char why[300];
} batch;

/* The chunks of dimension d that section s touches, ascending, into list
   (NULL: count only); how many. */
static int64_t touched(const ocad_h5c_geom *g, int d,
                       const passion_section *s, int64_t *list)
{
    int64_t st = s->start[d], str = s->stride[d], cnt = s->count[d];
    int64_t cd = g->chunk[d], last = st + (cnt - 1) * str, n = 0;
    for (int64_t c = st / cd; c <= last / cd; c++) {
        int64_t lo = c * cd;
        int64_t k = lo <= st ? 0 : (lo - st + str - 1) / str;
        if (k < cnt && st + k * str < lo + cd) {
            if (list)
                list[n] = c;
            n++;
        } else if (str > cd) {
            /* jump to the chunk of the next element */
            int64_t nx = st + k * str;
            if (k >= cnt)
                break;
            c = nx / cd - 1;
        }
    }
    return n;
}

/* Copy the elements of section s inside chunk idx (data: the decoded
   chunk, this machine's order; NULL: the fill value) into memory. */
static void scatter(const batch *b, const int64_t *idx,
                    const unsigned char *data)
{
    const ocad_h5c_geom *g = b->g;
    const passion_section *s = b->s;
    const int nd = g->nd;
    const int64_t es = g->esize;
    int64_t k0[PASSION_MAX_DIMS], k1[PASSION_MAX_DIMS], k[PASSION_MAX_DIMS];
    int64_t cstr[PASSION_MAX_DIMS];
    for (int d = nd - 1; d >= 0; d--) {
        int64_t lo = idx[d] * g->chunk[d], hi = lo + g->chunk[d];
        int64_t st = s->start[d], str = s->stride[d];
        k0[d] = lo <= st ? 0 : (lo - st + str - 1) / str;
        k1[d] = (hi - 1 - st) / str + 1; /* exclusive */
        if (k1[d] > s->count[d])
            k1[d] = s->count[d];
        if (k0[d] >= k1[d])
            return;
        k[d] = k0[d];
        cstr[d] = d == nd - 1 ? 1 : cstr[d + 1] * g->chunk[d + 1];
    }
    const int in = nd - 1;
    const int64_t run = k1[in] - k0[in];
    const int contig = s->stride[in] == 1;
    for (;;) {
        int64_t co = 0, mo = 0;
        for (int d = 0; d < nd; d++) {
            co += (s->start[d] + k[d] * s->stride[d] - idx[d] * g->chunk[d]) *
                  cstr[d];
            mo += (b->moff[d] + k[d]) * b->mstride[d];
        }
        char *dst = b->buf + mo * es;
        if (data && contig) {
            memcpy(dst, data + co * es, (size_t)(run * es));
        } else {
            for (int64_t j = 0; j < run; j++)
                memcpy(dst + j * es,
                       data ? data + (co + j * s->stride[in]) * es : b->fill,
                       (size_t)es);
        }
        int d = in - 1;
        while (d >= 0 && ++k[d] == k1[d]) {
            k[d] = k0[d];
            d--;
        }
        if (d < 0)
            return;
    }
}

static void fail(batch *b, int i, int rc, const char *why)
{
    pthread_mutex_lock(&b->mu);
    if (!b->rc) {
        b->rc = rc;
        b->bad = i;
        snprintf(b->why, sizeof b->why, "%s", why);
    }
    pthread_mutex_unlock(&b->mu);
}

/* A worker: takes chunks until none is left or one has failed. scratch
   holds 3 * (chunk_bytes + 32) bytes. */
static void *work(void *arg, unsigned char *scratch)
{
    batch *b = arg;
    const ocad_h5c_geom *g = b->g;
    const size_t cb = (size_t)g->chunk_bytes;
    for (;;) {
        int i = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED);
        if (i >= b->n || __atomic_load_n(&b->rc, __ATOMIC_RELAXED))
            return NULL;
        rchunk *c = &b->ch[i];
        if (c->loc.addr < 0) {
            scatter(b, c->idx, NULL);
            continue;
        }
        unsigned char *raw = b->raw + c->at, *out = raw;
        char why[300];
        if (g->pipe.n > 0) {
            out = scratch;
            int rc = ocad_h5f_decode(&g->pipe, c->loc.mask, raw,
                                     (size_t)c->loc.size, out, cb,
                                     scratch + cb + 32, why, sizeof why);
            if (rc) {
                fail(b, i, rc, why);
                return NULL;
            }
        } else if ((size_t)c->loc.size != cb) {
            snprintf(why, sizeof why, "%lld stored bytes in an unfiltered "
                     "chunk of %zu", (long long)c->loc.size, cb);
            fail(b, i, PASSION_EFORMAT, why);
            return NULL;
        }
        if (b->swap)
            ocad_swap(out, (int64_t)cb, b->swap);
        scatter(b, c->idx, out);
    }
}

typedef struct wslot {
    batch *b;
    unsigned char *scratch;
} wslot;

static void *work_thread(void *p)
{
    wslot *w = p;
    return work(w->b, w->scratch);
}

/* Decode and place batch b with nw workers (their scratch in scr, one
   after the other); nw 1 runs on the calling thread. */
static void run_workers(batch *b, int nw, unsigned char *scr, size_t per)
{
    pthread_t t[WORKERS_MAX];
    wslot ws[WORKERS_MAX];
    int started = 0;
    for (int w = 1; w < nw; w++) {
        ws[w] = (wslot){b, scr + (size_t)w * per};
        if (pthread_create(&t[w], NULL, work_thread, &ws[w]))
            break;
        started = w;
    }
    work(b, scr); /* the calling thread is worker 0 */
    for (int w = 1; w <= started; w++)
        pthread_join(t[w], NULL);
}

static int by_addr(const void *x, const void *y)
{
    const rchunk *a = x, *b = y;
    return (a->loc.addr > b->loc.addr) - (a->loc.addr < b->loc.addr);
}

/* Read the stored bytes of batch b's chunks (sorted by address) into
   b->raw: one read per run of adjacent chunks. */
static int read_raw(passion_ctx *ctx, core_fh *fh, batch *b)
{
    qsort(b->ch, (size_t)b->n, sizeof *b->ch, by_addr);
    core_iov *v = core_malloc(ctx, (size_t)b->n * sizeof *v + 1);
    if (!v)
        return core_err(ctx, PASSION_ENOMEM, "chunk reads");
    int nv = 0;
    int64_t at = 0;
    for (int i = 0; i < b->n; i++) {
        rchunk *c = &b->ch[i];
        if (c->loc.addr < 0)
            continue;
        c->at = at;
        if (nv && v[nv - 1].off + v[nv - 1].len == c->loc.addr)
            v[nv - 1].len += c->loc.size;
        else
            v[nv++] = (core_iov){b->raw + at, c->loc.size, c->loc.addr, 0};
        at += c->loc.size;
    }
    int rc = nv ? core_io_read_batch(fh, v, nv) : PASSION_OK;
    core_free(ctx, v);
    return rc;
}

/* How many workers and how many stored bytes a batch may hold, within
   the budget: 0 or ENOMEM. */
static int batch_size(passion_ctx *ctx, const ocad_h5c_geom *g,
                      const char *where, int *nw, size_t *per,
                      int64_t *raw_cap)
{
    const int64_t budget = ctx->opt.memory_budget;
    const int64_t cb = g->chunk_bytes;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int w = cpus < 1 ? 1 : cpus > WORKERS_MAX ? WORKERS_MAX : (int)cpus;
    int64_t p = g->pipe.n > 0 ? 3 * (cb + 32) : 0;
    while (w > 1 && w * p > budget / 2)
        w--;
    if (p + cb > budget)
        return core_err(ctx, PASSION_ENOMEM,
                        "%s: chunks of %lld bytes need %lld bytes of "
                        "staging (the stored chunk%s); the memory budget "
                        "is %lld (option memory_budget)",
                        where, (long long)cb, (long long)(p + cb),
                        p ? " and its decoding scratch" : "",
                        (long long)budget);
    *nw = w;
    *per = (size_t)p;
    *raw_cap = budget - w * p;
    return PASSION_OK;
}

/* The odometer over the per-dimension chunk lists (nl entries each):
   the next position; 0 at the end. */
static int next_chunk(int nd, const int64_t *nl, int64_t *pos)
{
    for (int d = nd - 1; d >= 0; d--) {
        if (++pos[d] < nl[d])
            return 1;
        pos[d] = 0;
    }
    return 0;
}

/* The batches: locate up to cap stored bytes of chunks, read, decode. */
static int read_batches(passion_file *f, batch *b, const int64_t *const *lists,
                        const int64_t *nl, unsigned char *scr, int nw,
                        size_t per, int64_t raw_cap, int maxch,
                        const char *where)
{
    passion_ctx *ctx = f->ctx;
    const ocad_h5c_geom *g = b->g;
    int64_t pos[PASSION_MAX_DIMS] = {0};
    int more = 1, rc = PASSION_OK;
    while (more && !rc) {
        int64_t bytes = 0;
        b->n = 0;
        while (more && b->n < maxch) {
            rchunk *c = &b->ch[b->n];
            for (int d = 0; d < g->nd; d++)
                c->idx[d] = lists[d][pos[d]];
            if ((rc = ocad_h5c_locate(ctx, f->h5c, c->idx, &c->loc)))
                break;
            int64_t sz = c->loc.addr < 0 ? 0 : c->loc.size;
            if (b->n > 0 && bytes + sz > raw_cap)
                break; /* this one starts the next batch */
            bytes += sz;
            b->n++;
            more = next_chunk(g->nd, nl, pos);
        }
        if (rc)
            break;
        b->raw = bytes ? core_stage_alloc(ctx, bytes) : NULL;
        if (bytes && !b->raw) {
            rc = core_err(ctx, PASSION_ENOMEM, "%lld bytes of chunks",
                          (long long)bytes);
            break;
        }
        if (!(rc = read_raw(ctx, f->fh, b))) {
            b->next = 0;
            run_workers(b, nw < b->n ? nw : b->n, scr, per);
            if (b->rc) {
                const rchunk *c = &b->ch[b->bad];
                rc = core_err(ctx, b->rc, "%s: the chunk at file offset "
                              "%lld (%lld bytes, element [%lld, ...]): %s",
                              where, (long long)c->loc.addr,
                              (long long)c->loc.size,
                              (long long)(c->idx[0] * g->chunk[0]), b->why);
            }
        }
        if (b->raw)
            core_stage_free(ctx, b->raw, bytes);
        b->raw = NULL;
    }
    return rc;
}

int ocad_h5c_read(passion_file *f, const passion_section *s, void *buf,
                  const passion_memspec *m)
{
    passion_ctx *ctx = f->ctx;
    const ocad_h5c_geom *g = ocad_h5c_geom_of(f->h5c);
    const char *where = ocad_h5c_where(f->h5c);
    const int nd = g->nd;
    int64_t total = 0, nl[PASSION_MAX_DIMS], mstride[PASSION_MAX_DIMS];
    int64_t moff[PASSION_MAX_DIMS], nch = 1;
    for (int d = 0; d < nd; d++)
        if (s->count[d] == 0)
            return PASSION_OK;
    for (int d = nd - 1; d >= 0; d--) {
        nl[d] = touched(g, d, s, NULL);
        total += nl[d];
        nch = nch > INT32_MAX ? nch : nch * nl[d];
        mstride[d] = d == nd - 1 ? 1 : mstride[d + 1] * (m ? m->shape[d + 1]
                                                       : s->count[d + 1]);
        moff[d] = m ? m->offset[d] : 0;
    }
    int nw = 1;
    size_t per = 0;
    int64_t raw_cap = 0;
    int rc = batch_size(ctx, g, where, &nw, &per, &raw_cap);
    if (rc)
        return rc;
    const int maxch = nch < 4096 ? (int)nch : 4096;
    int64_t *lists[PASSION_MAX_DIMS];
    int64_t *all = core_malloc(ctx, (size_t)total * sizeof *all);
    batch b = {.g = g, .s = s, .mstride = mstride, .moff = moff,
               .buf = buf, .swap = f->fv.swap};
    unsigned char fill[64];
    memcpy(fill, g->fill, sizeof fill);
    if (b.swap)
        ocad_swap(fill, g->esize, b.swap);
    b.fill = fill;
    b.ch = core_malloc(ctx, (size_t)maxch * sizeof *b.ch);
    unsigned char *scr = per ? core_stage_alloc(ctx, (int64_t)(per * nw))
                             : NULL;
    if (!all || !b.ch || (per && !scr)) {
        rc = core_err(ctx, PASSION_ENOMEM, "%s: chunk read state", where);
        goto out;
    }
    for (int d = 0, at = 0; d < nd; at += (int)nl[d], d++) {
        lists[d] = all + at;
        touched(g, d, s, lists[d]);
    }
    pthread_mutex_init(&b.mu, NULL);
    rc = read_batches(f, &b, (const int64_t *const *)lists, nl, scr, nw, per,
                      raw_cap, maxch, where);
    pthread_mutex_destroy(&b.mu);
    if (!rc) {
        int64_t elems = passion_section_elems(s, nd);
        ctx->cnt.bytes_useful += (uint64_t)(elems * g->esize);
    }
out:
    if (scr)
        core_stage_free(ctx, scr, (int64_t)(per * nw));
    core_free(ctx, b.ch);
    core_free(ctx, all);
    return rc;
}

#else

int ocad_h5c_read(passion_file *f, const passion_section *s, void *buf,
                  const passion_memspec *m)
{
    (void)s;
    (void)buf;
    (void)m;
    return core_err(f->ctx, PASSION_ENOTSUP, "built without HDF5");
}

#endif

int ocad_file_chunked_refuse(const passion_file *f, const char *what)
{
    if (!f || !f->h5c)
        return PASSION_OK;
    return core_err(f->ctx, PASSION_ENOTSUP,
                    "%s: a chunked HDF5 dataset; passion reads its "
                    "sections (passion_file_read, passion_file_read_all) "
                    "but not %s. Make it contiguous with `h5repack -l "
                    "CONTI IN.h5 OUT.h5` for every access",
                    f->fh->path, what);
}
