/*
 * chunked.c - a collective read of a chunked HDF5 dataset in which every
 * chunk the call needs is read and decoded once, by one rank, and its
 * pieces travel to the ranks whose sections need them
 * (coll_chunked_read_all). It is the two-phase idea (thesis 6.3: the
 * ranks read the file in large pieces, then redistribute) with the
 * chunk as the file's unit: a chunk is stored compressed and can only be
 * decoded whole, so two ranks that each decode it waste the read and the
 * decode; here one does.
 *
 * Steps: every rank's section is gathered (a few integers per rank);
 * every rank computes, identically, the sorted union of the chunks the
 * sections touch, an owner per chunk (the rank of its block of the
 * union when that rank needs the chunk, so that neighbouring chunks
 * share a reader and merge into long reads; else the least loaded rank
 * that needs it) and rounds (consecutive chunks of the union while every
 * rank's send and receive pieces fit a third of the memory budget). In a
 * round each owner reads and decodes its chunks (ocad_h5c_each, worker
 * threads), copies its own elements into its buffer and packs every
 * other rank's elements of the chunk in that rank's section order
 * (ocad_h5c_put); the pieces travel in one exchange (coll_exchange, any
 * of passion's all-to-all algorithms) and each rank places what it
 * received. The piece layout is implied by the sections and the chunk
 * order, known to all, so no descriptor travels.
 *
 * Invariants: the union, owners and rounds depend only on the gathered
 * sections and the chunk geometry, the same on every rank, so every rank
 * takes part in every round's exchange; a rank whose read or decode
 * failed keeps exchanging (its pieces are then garbage) and the call's
 * outcome is agreed at the end, so every rank returns the same code and
 * a failure never comes back as data.
 */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

/* One call's shared plan. */
typedef struct ck_plan {
    passion_file *f;
    ocad_h5c_shape sh;
    int P, me, nd;
    passion_section *sec;   /* every rank's section (empty if failed) */
    int64_t n;              /* chunks in the union */
    int64_t *idx;           /* their indices, n * nd */
    int64_t *pe;            /* elements of rank r in chunk i: pe[i*P + r] */
    int *owner;             /* per chunk */
    char *buf;              /* this rank's memory side */
    int64_t mstride[PASSION_MAX_DIMS], moff[PASSION_MAX_DIMS];
    /* the round being run */
    int64_t i0;
    const int64_t *mine;    /* positions (in the union) of my chunks */
    char *sendbuf;
    int64_t *poff;          /* send offset of piece (chunk i - i0, rank r) */
} ck_plan;

static int64_t box_elems(const int64_t *k0, const int64_t *k1, int nd)
{
    int64_t e = 1;
    for (int d = 0; d < nd; d++)
        e *= k1[d] - k0[d];
    return e;
}

static int cmp64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* The chunks of every section, as linear ids sorted without repeats,
   into p->idx (per dimension); 0 or ENOMEM. */
static int chunk_union(passion_ctx *ctx, ck_plan *p)
{
    int64_t total = 0, nl[PASSION_MAX_DIMS], *lists = NULL, *ids = NULL;
    int rc = PASSION_OK;
    for (int r = 0; r < p->P; r++) {
        int64_t c = 1;
        for (int d = 0; d < p->nd; d++)
            c *= ocad_h5c_touched(p->f, &p->sec[r], d, NULL);
        total += c;
    }
    int64_t lsum = 0;
    for (int d = 0; d < p->nd; d++)
        lsum += p->sh.nchunks[d];
    ids = core_malloc(ctx, (size_t)(total + 1) * sizeof *ids);
    lists = core_malloc(ctx, (size_t)(lsum + 1) * sizeof *lists);
    if (!ids || !lists) {
        rc = core_err(ctx, PASSION_ENOMEM, "chunk union");
        goto out;
    }
    int64_t n = 0;
    for (int r = 0; r < p->P; r++) {
        int64_t *L[PASSION_MAX_DIMS], pos[PASSION_MAX_DIMS] = {0}, c = 1;
        for (int d = 0, at = 0; d < p->nd; at += (int)nl[d], d++) {
            L[d] = lists + at;
            nl[d] = ocad_h5c_touched(p->f, &p->sec[r], d, L[d]);
            c *= nl[d];
        }
        for (int64_t k = 0; k < c; k++) {
            int64_t id = 0;
            for (int d = 0; d < p->nd; d++)
                id = id * p->sh.nchunks[d] + L[d][pos[d]];
            ids[n++] = id;
            for (int d = p->nd - 1; d >= 0 && ++pos[d] == nl[d]; d--)
                pos[d] = 0;
        }
    }
    qsort(ids, (size_t)n, sizeof *ids, cmp64);
    int64_t u = 0;
    for (int64_t k = 0; k < n; k++)
        if (!u || ids[k] != ids[u - 1])
            ids[u++] = ids[k];
    p->n = u;
    p->idx = core_malloc(ctx, (size_t)(u * p->nd + 1) * sizeof *p->idx);
    if (!p->idx) {
        rc = core_err(ctx, PASSION_ENOMEM, "chunk union");
        goto out;
    }
    for (int64_t k = 0; k < u; k++) {
        int64_t id = ids[k];
        for (int d = p->nd - 1; d >= 0; d--) {
            p->idx[k * p->nd + d] = id % p->sh.nchunks[d];
            id /= p->sh.nchunks[d];
        }
    }
out:
    core_free(ctx, lists);
    core_free(ctx, ids);
    return rc;
}

/* Every rank's elements in every chunk (p->pe) and the owners. */
static int owners(passion_ctx *ctx, ck_plan *p)
{
    const int P = p->P;
    p->pe = core_malloc(ctx, (size_t)(p->n * P + 1) * sizeof *p->pe);
    p->owner = core_malloc(ctx, (size_t)(p->n + 1) * sizeof *p->owner);
    int64_t *load = core_calloc(ctx, (size_t)P, sizeof *load);
    if (!p->pe || !p->owner || !load) {
        core_free(ctx, load);
        return core_err(ctx, PASSION_ENOMEM, "chunk owners");
    }
    for (int64_t i = 0; i < p->n; i++) {
        const int64_t *idx = p->idx + i * p->nd;
        int64_t k0[PASSION_MAX_DIMS], k1[PASSION_MAX_DIMS];
        for (int r = 0; r < P; r++)
            p->pe[i * P + r] = ocad_h5c_box(p->f, &p->sec[r], idx, k0, k1)
                                   ? box_elems(k0, k1, p->nd)
                                   : 0;
        int o = (int)(i * P / p->n);
        if (!p->pe[i * P + o]) {
            o = -1;
            for (int r = 0; r < P; r++)
                if (p->pe[i * P + r] && (o < 0 || load[r] < load[o]))
                    o = r;
        }
        p->owner[i] = o;
        load[o]++;
    }
    core_free(ctx, load);
    return PASSION_OK;
}

/* The end of the round that starts at chunk i0: while every rank's
   pieces to send plus pieces to receive stay within cap bytes. */
static int64_t round_end(const ck_plan *p, int64_t i0, int64_t cap,
                         int64_t *io)
{
    const int P = p->P;
    const int64_t es = p->sh.esize;
    memset(io, 0, (size_t)P * sizeof *io);
    int64_t i = i0;
    for (; i < p->n; i++) {
        int o = p->owner[i], over = 0;
        for (int r = 0; r < P; r++) {
            int64_t b = r == o ? 0 : p->pe[i * P + r] * es;
            over |= b && (io[r] + b > cap || io[o] + b > cap);
        }
        if (over && i > i0)
            break;
        for (int r = 0; r < P; r++) {
            int64_t b = r == o ? 0 : p->pe[i * P + r] * es;
            io[r] += b;
            io[o] += b;
        }
    }
    return i;
}

/* A decoded chunk (ocad_h5c_each, on a worker thread): this rank's
   elements into its buffer, every other rank's packed into its piece. */
static void ck_use(void *arg, int64_t pos, const int64_t *idx,
                   const unsigned char *data)
{
    const ck_plan *p = arg;
    const int64_t i = p->mine[pos];
    for (int r = 0; r < p->P; r++) {
        if (!p->pe[i * p->P + r])
            continue;
        if (r == p->me) {
            ocad_h5c_put(p->f, &p->sec[r], idx, data, p->buf, p->mstride,
                         p->moff);
            continue;
        }
        int64_t k0[PASSION_MAX_DIMS], k1[PASSION_MAX_DIMS];
        int64_t st[PASSION_MAX_DIMS], off[PASSION_MAX_DIMS];
        ocad_h5c_box(p->f, &p->sec[r], idx, k0, k1);
        for (int d = p->nd - 1; d >= 0; d--) {
            st[d] = d == p->nd - 1 ? 1 : st[d + 1] * (k1[d + 1] - k0[d + 1]);
            off[d] = -k0[d];
        }
        ocad_h5c_put(p->f, &p->sec[r], idx, data,
                     p->sendbuf + p->poff[(i - p->i0) * p->P + r], st, off);
    }
}

/* A received piece (packed, section order) of chunk idx into memory. */
static void unpack(const ck_plan *p, const int64_t *idx, const char *piece)
{
    int64_t k0[PASSION_MAX_DIMS], k1[PASSION_MAX_DIMS], k[PASSION_MAX_DIMS];
    const int nd = p->nd;
    const int64_t es = p->sh.esize;
    ocad_h5c_box(p->f, &p->sec[p->me], idx, k0, k1);
    memcpy(k, k0, sizeof k);
    const int64_t run = (k1[nd - 1] - k0[nd - 1]) * es;
    for (;;) {
        int64_t mo = 0;
        for (int d = 0; d < nd; d++)
            mo += (p->moff[d] + k[d]) * p->mstride[d];
        if (p->mstride[nd - 1] == 1) {
            memcpy(p->buf + mo * es, piece, (size_t)run);
        } else {
            for (int64_t j = 0; j < run / es; j++)
                memcpy(p->buf + (mo + j * p->mstride[nd - 1]) * es,
                       piece + j * es, (size_t)es);
        }
        piece += run;
        int d = nd - 2;
        while (d >= 0 && ++k[d] == k1[d]) {
            k[d] = k0[d];
            d--;
        }
        if (d < 0)
            return;
    }
}

/* Round [i0, i1): my chunks read, decoded and packed, the exchange, what
   came placed. *lrc: this rank's first local failure (kept exchanging);
   returns the exchange's agreed code. */
static int run_round(passion_ctx *ctx, ck_plan *p, int64_t i0, int64_t i1,
                     int64_t *cnt, int *lrc)
{
    const int P = p->P, me = p->me;
    const int64_t es = p->sh.esize, m = i1 - i0;
    int64_t *sc = cnt, *sd = cnt + P, *rcn = cnt + 2 * P, *rd = cnt + 3 * P;
    memset(cnt, 0, (size_t)(4 * P) * sizeof *cnt);
    int64_t nmine = 0;
    for (int64_t i = i0; i < i1; i++) {
        int o = p->owner[i];
        nmine += o == me;
        for (int r = 0; r < P; r++)
            if (r != o && p->pe[i * P + r]) {
                if (o == me)
                    sc[r] += p->pe[i * P + r] * es;
                if (r == me)
                    rcn[o] += p->pe[i * P + r] * es;
            }
    }
    for (int r = 1; r < P; r++) {
        sd[r] = sd[r - 1] + sc[r - 1];
        rd[r] = rd[r - 1] + rcn[r - 1];
    }
    /* at least a byte each: stage allocations and frees then match */
    int64_t sbytes = sd[P - 1] + sc[P - 1] + 1;
    int64_t rbytes = rd[P - 1] + rcn[P - 1] + 1;
    int64_t *mine = core_malloc(ctx, (size_t)(nmine + 1) * sizeof *mine);
    int64_t *poff = core_malloc(ctx, (size_t)(m * P + 1) * sizeof *poff);
    int64_t *idx = core_malloc(ctx, (size_t)(nmine * p->nd + 1) *
                                        sizeof *idx);
    char *sb = core_stage_alloc(ctx, sbytes), *rb = core_stage_alloc(ctx,
                                                                     rbytes);
    if (!mine || !poff || !idx || !sb || !rb) {
        if (!*lrc)
            *lrc = core_err(ctx, PASSION_ENOMEM, "chunk pieces (%lld bytes "
                            "out, %lld in)", (long long)sbytes,
                            (long long)rbytes);
    } else {
        int64_t k = 0, *off = cnt + 4 * P;
        memcpy(off, sd, (size_t)P * sizeof *off);
        for (int64_t i = i0; i < i1; i++) {
            if (p->owner[i] != me)
                continue;
            for (int r = 0; r < P; r++)
                if (r != me && p->pe[i * P + r]) {
                    poff[(i - i0) * P + r] = off[r];
                    off[r] += p->pe[i * P + r] * es;
                }
            memcpy(idx + k * p->nd, p->idx + i * p->nd,
                   (size_t)p->nd * sizeof *idx);
            mine[k++] = i;
        }
        p->i0 = i0;
        p->mine = mine;
        p->sendbuf = sb;
        p->poff = poff;
        int64_t left = ctx->opt.memory_budget - ctx->staging_now;
        int rc = ocad_h5c_each(p->f, nmine, idx, left > 0 ? left : 1, ck_use,
                               p);
        if (rc && !*lrc)
            *lrc = rc;
    }
    /* every rank exchanges, whatever happened above (sizes come from the
       plan, the same everywhere); a rank without buffers offers nothing,
       which the exchange finds inconsistent on every rank */
    coll_xchg_args a;
    memset(&a, 0, sizeof a);
    if (!sb || !rb) {
        memset(sc, 0, (size_t)P * sizeof *sc);
        memset(rcn, 0, (size_t)P * sizeof *rcn);
    }
    a.sendbuf = sb;
    a.recvbuf = rb;
    a.block = -1;
    a.sendcounts = sc;
    a.sdispls = sd;
    a.recvcounts = rcn;
    a.rdispls = rd;
    int rc = coll_exchange(ctx, &a);
    if (!rc && !*lrc) {
        int64_t *got = cnt + 4 * P;
        memcpy(got, rd, (size_t)P * sizeof *got);
        for (int64_t i = i0; i < i1; i++) {
            int o = p->owner[i];
            if (o == me || !p->pe[i * P + me])
                continue;
            unpack(p, p->idx + i * p->nd, rb + got[o]);
            got[o] += p->pe[i * P + me] * es;
        }
    }
    if (rb)
        core_stage_free(ctx, rb, rbytes);
    if (sb)
        core_stage_free(ctx, sb, sbytes);
    core_free(ctx, idx);
    core_free(ctx, poff);
    core_free(ctx, mine);
    return rc;
}

/* Every rank's section (the failed ones empty) into p->sec; 0 or the
   agreed code. */
static int gather_sections(passion_ctx *ctx, ck_plan *p,
                           const passion_section *s, int failed)
{
    const int nd = p->nd, w = 3 * nd;
    int64_t mine[3 * PASSION_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        mine[d] = failed ? 0 : s->start[d];
        mine[nd + d] = failed ? 0 : s->count[d];
        mine[2 * nd + d] = failed ? 1 : s->stride[d];
    }
    int64_t *all = core_malloc(ctx, (size_t)(p->P * w) * sizeof *all);
    p->sec = core_calloc(ctx, (size_t)p->P, sizeof *p->sec);
    int rc = all && p->sec ? PASSION_OK
                           : core_err(ctx, PASSION_ENOMEM, "sections");
    /* one dataset, the same on every rank (its path and layout) */
    if ((rc = core_same(ctx, rc, p->f->ident, sizeof p->f->ident,
                        "files (datasets) of a collective read"))) {
        core_free(ctx, all);
        return rc;
    }
    double t0 = core_now();
    int e = MPI_Allgather(mine, w, MPI_INT64_T, all, w, MPI_INT64_T,
                          ctx->comm);
    ctx->cnt.t_comm += core_now() - t0;
    rc = core_agree(ctx, e == MPI_SUCCESS
                             ? 0
                             : core_err(ctx, PASSION_EMPI,
                                        "MPI_Allgather of the sections"));
    for (int r = 0; !rc && r < p->P; r++)
        for (int d = 0; d < nd; d++) {
            p->sec[r].start[d] = all[r * w + d];
            p->sec[r].count[d] = all[r * w + nd + d];
            p->sec[r].stride[d] = all[r * w + 2 * nd + d];
        }
    core_free(ctx, all);
    return rc;
}

/* 1 if the chunks can be numbered in 64 bits (the union's ids). */
static int ids_fit(const ocad_h5c_shape *sh)
{
    int64_t n = 1;
    for (int d = 0; d < sh->nd; d++)
        if (!core_mul(n, sh->nchunks[d], &n))
            return 0;
    return 1;
}

int coll_chunked_read_all(passion_file *f, const passion_section *s,
                          void *buf, const passion_memspec *m, int rc)
{
    passion_ctx *ctx = f->ctx;
    ck_plan p;
    memset(&p, 0, sizeof p);
    p.f = f;
    ocad_h5c_shape_of(f, &p.sh);
    p.P = ctx->size;
    p.me = ctx->rank;
    p.nd = p.sh.nd;
    p.buf = buf;
    if (p.P == 1 || !ids_fit(&p.sh)) /* each rank its own chunks */
        return core_agree(ctx, rc ? rc : ocad_h5c_read(f, s, buf, m));
    for (int d = p.nd - 1; d >= 0; d--) {
        p.mstride[d] = d == p.nd - 1 ? 1
                                     : p.mstride[d + 1] *
                                           (m ? m->shape[d + 1]
                                              : s->count[d + 1]);
        p.moff[d] = m ? m->offset[d] : 0;
    }
    int lrc = rc, arc = gather_sections(ctx, &p, s, rc != 0);
    if (!arc)
        arc = core_agree(ctx, chunk_union(ctx, &p));
    if (!arc)
        arc = core_agree(ctx, owners(ctx, &p));
    int64_t *cnt = arc ? NULL
                       : core_malloc(ctx, (size_t)(5 * p.P) * sizeof *cnt);
    if (!arc && (arc = core_agree(ctx, cnt ? 0 : core_err(ctx,
                                  PASSION_ENOMEM, "exchange counts"))))
        cnt = NULL;
    int64_t left = ctx->opt.memory_budget - ctx->staging_now;
    int64_t cap = left / 3 > 1 ? left / 3 : 1;
    for (int64_t i0 = 0; !arc && i0 < p.n;) {
        int64_t i1 = round_end(&p, i0, cap, cnt);
        arc = run_round(ctx, &p, i0, i1, cnt, &lrc);
        i0 = i1;
    }
    if (!arc && !lrc)
        ctx->cnt.bytes_useful += (uint64_t)(passion_section_elems(s, p.nd) *
                                            p.sh.esize);
    core_free(ctx, cnt);
    core_free(ctx, p.owner);
    core_free(ctx, p.pe);
    core_free(ctx, p.idx);
    core_free(ctx, p.sec);
    /* an agreed failure (the exchange's) stands; else each rank's own */
    return arc ? arc : core_agree(ctx, lrc);
}
