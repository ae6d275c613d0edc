/*
 * fmt_h5_chunkread.c - chunks of a chunked HDF5 dataset read and decoded
 * by this rank: any list of chunks handed, decoded, to a callback
 * (ocad_h5c_each: the collective layer's owners), and a section read
 * whole by this rank (ocad_h5c_read: every chunk it touches, copied into
 * the caller's buffer). The chunks are found in the chunk index
 * (ocad_h5c_locate), read in batches that fit the budget given, each
 * batch's chunks in file order with adjacent chunks merged into one read
 * (core_io_read_batch: in flight together where the engine can), then
 * decoded (fmt_h5_filter.c), byte-swapped to this machine's order and
 * handed on by worker threads. A chunk never written is handed on as
 * the fill value (data NULL).
 *
 * Invariants: every chunk given is handed on exactly once, on some
 * worker thread (the callback must write only that chunk's own bytes);
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

/* One chunk of a batch: its index and position in the caller's order,
   where it is stored, where its stored bytes land in the batch buffer. */
typedef struct rchunk {
    int64_t idx[PASSION_MAX_DIMS];
    int64_t pos;
    ocad_h5c_loc loc;
    int64_t at;
} rchunk;

/* The chunks to read, one after the other: 1 and the next into idx, or
   0 at the end (and 0 again if asked again). */
typedef int (*chunk_next)(void *arg, int64_t *idx);

/* What a batch's workers share. */
typedef struct batch {
    const ocad_h5c_geom *g;
    int swap;
    ocad_h5c_use use;
    void *uarg;
    rchunk *ch;
    int n;
    unsigned char *raw;
    int next;               /* the next chunk to take (atomic) */
    pthread_mutex_t mu;
    int rc;                 /* the first failure */
    int64_t bad;            /* its chunk */
    char why[300];
} batch;

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
static void *work(batch *b, unsigned char *scratch)
{
    const ocad_h5c_geom *g = b->g;
    const size_t cb = (size_t)g->chunk_bytes;
    for (;;) {
        int i = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED);
        if (i >= b->n || __atomic_load_n(&b->rc, __ATOMIC_RELAXED))
            return NULL;
        rchunk *c = &b->ch[i];
        if (c->loc.addr < 0) {
            b->use(b->uarg, c->pos, c->idx, NULL);
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
        b->use(b->uarg, c->pos, c->idx, out);
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

/* Decode and hand on batch b with nw workers (their scratch in scr, one
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

/* How many workers and how many stored bytes a batch may hold within
   budget: 0 or ENOMEM. */
static int batch_size(passion_ctx *ctx, const ocad_h5c_geom *g,
                      const char *where, int64_t budget, int *nw,
                      size_t *per, int64_t *raw_cap)
{
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
                        "left is %lld (option memory_budget)",
                        where, (long long)cb, (long long)(p + cb),
                        p ? " and its decoding scratch" : "",
                        (long long)budget);
    *nw = w;
    *per = (size_t)p;
    *raw_cap = budget - w * p;
    return PASSION_OK;
}

/* One batch: chunks from next (the one that did not fit the last batch
   first, *pend) until raw_cap stored bytes; 0 with b->n 0 at the end. */
static int batch_fill(passion_file *f, batch *b, chunk_next next, void *narg,
                      int64_t raw_cap, int maxch, int *pend, int64_t *pos,
                      int64_t *bytes)
{
    *bytes = 0;
    b->n = 0;
    rchunk keep;
    if (*pend)
        keep = b->ch[maxch]; /* the spare slot */
    for (;;) {
        if (b->n == maxch)
            return PASSION_OK;
        rchunk *c = &b->ch[b->n];
        if (*pend) {
            *c = keep;
            *pend = 0;
        } else {
            if (!next(narg, c->idx))
                return PASSION_OK;
            c->pos = (*pos)++;
            int rc = ocad_h5c_locate(f->ctx, f->h5c, c->idx, &c->loc);
            if (rc)
                return rc;
        }
        int64_t sz = c->loc.addr < 0 ? 0 : c->loc.size;
        if (b->n > 0 && *bytes + sz > raw_cap) {
            b->ch[maxch] = *c; /* starts the next batch */
            *pend = 1;
            return PASSION_OK;
        }
        *bytes += sz;
        b->n++;
    }
}

/* Every chunk of next read, decoded and handed on, in batches. */
static int run_all(passion_file *f, batch *b, chunk_next next, void *narg,
                   unsigned char *scr, int nw, size_t per, int64_t raw_cap,
                   int maxch)
{
    passion_ctx *ctx = f->ctx;
    const char *where = ocad_h5c_where(f->h5c);
    int pend = 0, rc = PASSION_OK;
    int64_t pos = 0, bytes;
    while (!rc && !(rc = batch_fill(f, b, next, narg, raw_cap, maxch, &pend,
                                    &pos, &bytes)) && b->n > 0) {
        b->raw = bytes ? core_stage_alloc(ctx, bytes) : NULL;
        if (bytes && !b->raw)
            return core_err(ctx, PASSION_ENOMEM, "%lld bytes of chunks",
                            (long long)bytes);
        if (!(rc = read_raw(ctx, f->fh, b))) {
            b->next = 0;
            run_workers(b, nw < b->n ? nw : b->n, scr, per);
            if (b->rc) {
                const rchunk *c = &b->ch[b->bad];
                rc = core_err(ctx, b->rc, "%s: the chunk at file offset "
                              "%lld (%lld bytes, element [%lld, ...]): %s",
                              where, (long long)c->loc.addr,
                              (long long)c->loc.size,
                              (long long)(c->idx[0] * b->g->chunk[0]),
                              b->why);
            }
        }
        if (b->raw)
            core_stage_free(ctx, b->raw, bytes);
        b->raw = NULL;
    }
    return rc;
}

/* The engine: the chunks of next (at most nch, for the batch's table),
   within budget, handed to use. */
static int engine(passion_file *f, chunk_next next, void *narg, int64_t nch,
                  int64_t budget, ocad_h5c_use use, void *uarg)
{
    passion_ctx *ctx = f->ctx;
    const ocad_h5c_geom *g = ocad_h5c_geom_of(f->h5c);
    int nw = 1;
    size_t per = 0;
    int64_t raw_cap = 0;
    int rc = batch_size(ctx, g, ocad_h5c_where(f->h5c), budget, &nw, &per,
                        &raw_cap);
    if (rc || nch <= 0)
        return rc;
    const int maxch = nch < 4096 ? (int)nch : 4096;
    batch b = {.g = g, .swap = f->fv.swap, .use = use, .uarg = uarg};
    b.ch = core_malloc(ctx, (size_t)(maxch + 1) * sizeof *b.ch);
    unsigned char *scr = per ? core_stage_alloc(ctx, (int64_t)(per * nw))
                             : NULL;
    if (!b.ch || (per && !scr)) {
        rc = core_err(ctx, PASSION_ENOMEM, "%s: chunk read state",
                      ocad_h5c_where(f->h5c));
    } else {
        pthread_mutex_init(&b.mu, NULL);
        rc = run_all(f, &b, next, narg, scr, nw, per, raw_cap, maxch);
        pthread_mutex_destroy(&b.mu);
    }
    if (scr)
        core_stage_free(ctx, scr, (int64_t)(per * nw));
    core_free(ctx, b.ch);
    return rc;
}

/* ocad_h5c_each's source: a list of n chunk indices. */
typedef struct list_src {
    const int64_t *idx;
    int64_t n, i;
    int nd;
} list_src;

static int list_next(void *arg, int64_t *idx)
{
    list_src *L = arg;
    if (L->i >= L->n)
        return 0;
    memcpy(idx, L->idx + L->i++ * L->nd, (size_t)L->nd * sizeof *idx);
    return 1;
}

int ocad_h5c_each(passion_file *f, int64_t n, const int64_t *idx,
                  int64_t budget, ocad_h5c_use use, void *arg)
{
    list_src L = {idx, n, 0, ocad_h5c_geom_of(f->h5c)->nd};
    return engine(f, list_next, &L, n, budget, use, arg);
}

/* ocad_h5c_read's source: the odometer over the per-dimension lists of
   the chunks the section touches; its use: the copy into memory. */
typedef struct sec_src {
    passion_file *f;
    const passion_section *s;
    int nd;
    int64_t *lists[PASSION_MAX_DIMS];
    int64_t nl[PASSION_MAX_DIMS], pos[PASSION_MAX_DIMS];
    int started, done;
    char *buf;
    int64_t mstride[PASSION_MAX_DIMS], moff[PASSION_MAX_DIMS];
} sec_src;

static int sec_next(void *arg, int64_t *idx)
{
    sec_src *S = arg;
    if (S->done)
        return 0;
    if (S->started) {
        int d = S->nd - 1;
        while (d >= 0 && ++S->pos[d] == S->nl[d])
            S->pos[d--] = 0;
        if (d < 0) {
            S->done = 1; /* and stays at the end */
            return 0;
        }
    }
    S->started = 1;
    for (int d = 0; d < S->nd; d++)
        idx[d] = S->lists[d][S->pos[d]];
    return 1;
}

static void sec_use(void *arg, int64_t pos, const int64_t *idx,
                    const unsigned char *data)
{
    (void)pos;
    sec_src *S = arg;
    ocad_h5c_put(S->f, S->s, idx, data, S->buf, S->mstride, S->moff);
}

int ocad_h5c_read(passion_file *f, const passion_section *s, void *buf,
                  const passion_memspec *m)
{
    passion_ctx *ctx = f->ctx;
    const int nd = ocad_h5c_geom_of(f->h5c)->nd;
    sec_src S = {.f = f, .s = s, .nd = nd, .buf = buf};
    int64_t total = 0, nch = 1;
    for (int d = nd - 1; d >= 0; d--) {
        if (s->count[d] == 0)
            return PASSION_OK;
        S.nl[d] = ocad_h5c_touched(f, s, d, NULL);
        total += S.nl[d];
        nch = nch > INT32_MAX ? nch : nch * S.nl[d];
        S.mstride[d] = d == nd - 1 ? 1
                                   : S.mstride[d + 1] *
                                         (m ? m->shape[d + 1]
                                            : s->count[d + 1]);
        S.moff[d] = m ? m->offset[d] : 0;
    }
    int64_t *all = core_malloc(ctx, (size_t)total * sizeof *all);
    if (!all)
        return core_err(ctx, PASSION_ENOMEM, "chunk lists");
    for (int d = 0, at = 0; d < nd; at += (int)S.nl[d], d++) {
        S.lists[d] = all + at;
        ocad_h5c_touched(f, s, d, S.lists[d]);
    }
    int64_t left = ctx->opt.memory_budget - ctx->staging_now;
    int rc = engine(f, sec_next, &S, nch, left > 0 ? left : 1, sec_use, &S);
    if (!rc)
        ctx->cnt.bytes_useful += (uint64_t)(passion_section_elems(s, nd) *
                                            ocad_h5c_geom_of(f->h5c)->esize);
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

int ocad_h5c_each(passion_file *f, int64_t n, const int64_t *idx,
                  int64_t budget, ocad_h5c_use use, void *arg)
{
    (void)n, (void)idx, (void)budget, (void)use, (void)arg;
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
