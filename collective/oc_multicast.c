/*
 * oc_multicast.c - out-of-core multicast (thesis table 5.1,
 * PASSION_oc_multicast): the root reads a section of its local array file
 * and every rank of a group receives it, into a section of its own file or
 * into memory.
 *
 * Invariants: the section moves in pieces along the array's slowest
 * storage dimension, each within the memory budget, so staging is bounded
 * whatever the section's size; the ranks agree that every member holds
 * the piece buffer before the first broadcast; every member runs every
 * piece's broadcast even after a local failure, a piece the root could
 * not read is marked so (a status byte after it) and written nowhere, and
 * the outcome is agreed over the whole context, so nobody hangs and no
 * file receives bytes the root did not read.
 */
#include "../ocad/ocad.h"

#include <stdlib.h>
#include <string.h>

#define MC_MAXMSG (1LL << 30)
#define CALL "passion_file_multicast_all" /* the name details give */

/* Copy a packed box (count, storage order) into mem at offset / shape. */
static void unpack_box(const passion_array *a, const int64_t *count,
                       const char *src, char *dst, const passion_memspec *m)
{
    int nd = a->nd;
    const int *ord = a->spec.order;
    int64_t run = a->esize * count[ord[nd - 1]];
    int64_t idx[PASSION_MAX_DIMS] = {0};
    int64_t rows = 1;
    for (int k = 0; k < nd - 1; k++)
        rows *= count[ord[k]];
    for (int64_t r = 0; r < rows; r++) {
        int64_t off = 0;
        for (int k = 0; k < nd; k++) {
            int d = ord[k];
            int64_t shape = m ? m->shape[d] : count[d];
            int64_t o = (m ? m->offset[d] : 0) + (k < nd - 1 ? idx[k] : 0);
            off = off * shape + o;
        }
        memcpy(dst + off * a->esize, src + r * run, (size_t)run);
        for (int k = nd - 2; k >= 0; k--) {
            if (++idx[k] < count[ord[k]])
                break;
            idx[k] = 0;
        }
    }
}

/* one multicast call: its arguments and what the steps derive */
typedef struct mc_call {
    passion_file *f;
    int root, ngroup;
    const int *group;
    const passion_section *src, *dst;
    void *buf;
    const passion_memspec *mem;
    int member;   /* this rank receives */
    MPI_Comm sub; /* the root and the members (MPI_COMM_NULL: not in) */
    int cd;       /* the dimension the pieces cut: the slowest */
    int64_t per, k; /* bytes per index of cd; indices per piece */
    char *pb;     /* the piece buffer: per * k bytes and a status byte */
} mc_call;

/* Step 1: what must agree (root, group, the section) into key, and this
   rank's membership; a group rank out of range is this rank's error. */
static int mc_key(mc_call *c, uint64_t *key)
{
    passion_ctx *ctx = c->f->ctx;
    int rc = PASSION_OK;
    memset(key, 0, (3 + 3 * PASSION_MAX_DIMS) * sizeof *key);
    key[0] = (uint64_t)c->root;
    key[1] = (uint64_t)c->ngroup;
    uint64_t h = 1469598103934665603ULL;
    c->member = c->group ? 0 : 1;
    for (int i = 0; c->group && i < c->ngroup; i++) {
        h = (h ^ (uint64_t)c->group[i]) * 1099511628211ULL;
        if (c->group[i] < 0 || c->group[i] >= ctx->size)
            rc = core_err(ctx, PASSION_EINVAL, CALL ": group rank %d",
                          c->group[i]);
        if (c->group[i] == ctx->rank)
            c->member = 1;
    }
    key[2] = h;
    if (c->src)
        for (int d = 0; d < c->f->a->nd; d++) {
            key[3 + 3 * d] = (uint64_t)c->src->start[d];
            key[4 + 3 * d] = (uint64_t)c->src->count[d];
            key[5 + 3 * d] = (uint64_t)c->src->stride[d];
        }
    return rc;
}

/* Step 2: this rank's arguments: the root's section, a member's
   destination (a section of the same counts in a writable file, or
   memory). */
static int mc_check(const mc_call *c, int rc)
{
    passion_file *f = c->f;
    passion_ctx *ctx = f->ctx;
    const int nd = f->a->nd;
    const passion_section *src = c->src, *dst = c->dst;
    int64_t elems = 0;
    if (rc)
        ;
    else if (f->a->spec.placement != PASSION_PLACE_LOCAL)
        rc = core_err(ctx, PASSION_EINVAL, CALL " needs local placement");
    else if (c->root < 0 || c->root >= ctx->size)
        rc = core_err(ctx, PASSION_EINVAL, CALL ": root %d", c->root);
    else if (!src || (c->group && c->ngroup < 0))
        rc = core_err(ctx, PASSION_EINVAL, CALL ": no section or group");
    else if (ctx->rank == c->root)
        rc = ocad_section_check(ctx, nd, src, f->lo, f->hi, &elems);
    if (rc || !c->member)
        return rc;
    if (dst) {
        int64_t de;
        rc = ocad_section_check(ctx, nd, dst, f->lo, f->hi, &de);
        for (int d = 0; d < nd && !rc; d++)
            if (dst->count[d] != src->count[d])
                rc = core_err(ctx, PASSION_EINVAL, CALL ": dst "
                                  "counts differ from src counts");
        if (!rc && !f->writable)
            rc = core_err(ctx, PASSION_EACCES, CALL " into %s, "
                          "read-only", f->fh->path);
    } else {
        rc = ocad_memspec_check(ctx, nd, f->a->esize, src, c->mem);
        if (!rc && !c->buf && passion_section_elems(src, nd) > 0)
            rc = core_err(ctx, PASSION_EINVAL, CALL ": NULL buffer");
    }
    return rc;
}

/* Step 3: the piece buffer (the status byte the root sets to 1 when it
   read the piece, so that after a failed read nobody writes what the
   buffer happens to hold); busy: this rank takes part in pieces. */
static int mc_buffer(mc_call *c, int busy)
{
    passion_ctx *ctx = c->f->ctx;
    const passion_array *a = c->f->a;
    c->cd = a->spec.order[0];
    c->per = a->esize;
    c->k = 1;
    c->pb = NULL;
    if (!busy)
        return PASSION_OK;
    for (int d = 0; d < a->nd; d++)
        if (d != c->cd)
            c->per *= c->src->count[d];
    int64_t lim = ctx->opt.memory_budget < MC_MAXMSG
                      ? ctx->opt.memory_budget
                      : MC_MAXMSG;
    c->k = (lim - 1) / c->per; /* the status byte counts too */
    if (c->k < 1)
        c->k = 1;
    if (c->k > c->src->count[c->cd])
        c->k = c->src->count[c->cd];
    c->pb = core_stage_alloc(ctx, c->per * c->k + 1);
    if (!c->pb)
        return core_err(ctx, PASSION_ENOMEM, CALL ": buffer");
    return PASSION_OK;
}

/* A member's copy of piece i (n indices of cd) from the piece buffer:
   into its file's section, or into memory. */
static int mc_deliver(const mc_call *c, int64_t i, int64_t n)
{
    const passion_array *a = c->f->a;
    const int nd = a->nd, cd = c->cd;
    if (c->dst) {
        passion_section d1 = *c->dst;
        d1.start[cd] += i * c->dst->stride[cd];
        d1.count[cd] = n;
        return passion_file_write(c->f, &d1, c->pb, NULL,
                                  PASSION_METHOD_AUTO);
    }
    passion_memspec m1;
    memset(&m1, 0, sizeof m1);
    for (int d = 0; d < nd; d++) {
        m1.shape[d] = c->mem ? c->mem->shape[d] : c->src->count[d];
        m1.offset[d] = c->mem ? c->mem->offset[d] : 0;
    }
    m1.offset[cd] += i;
    int64_t cnt[PASSION_MAX_DIMS];
    memcpy(cnt, c->src->count, sizeof cnt);
    cnt[cd] = n;
    unpack_box(a, cnt, c->pb, c->buf, &m1);
    return PASSION_OK;
}

/* Step 4: every piece: the root reads it, broadcasts it in sub, the
   members deliver it. Every rank of sub runs every broadcast, even after
   a local failure (rc, returned). */
static int mc_pieces(mc_call *c, int rc)
{
    passion_ctx *ctx = c->f->ctx;
    const passion_section *src = c->src;
    const int cd = c->cd;
    const int64_t per = c->per;
    /* the root's rank in sub */
    int sroot = 0, root = c->root;
    MPI_Group wg, sg;
    MPI_Comm_group(ctx->comm, &wg);
    MPI_Comm_group(c->sub, &sg);
    MPI_Group_translate_ranks(wg, 1, &root, sg, &sroot);
    MPI_Group_free(&wg);
    MPI_Group_free(&sg);
    for (int64_t i = 0; i < src->count[cd]; i += c->k) {
        int64_t n = src->count[cd] - i < c->k ? src->count[cd] - i : c->k;
        passion_section s1 = *src;
        s1.start[cd] += i * src->stride[cd];
        s1.count[cd] = n;
        if (ctx->rank == root) {
            if (!rc)
                rc = passion_file_read(c->f, &s1, c->pb, NULL,
                                       PASSION_METHOD_AUTO);
            c->pb[per * n] = rc ? 0 : 1;
        }
        double t0 = core_now();
        MPI_Request req;
        if ((MPI_Ibcast(c->pb, (int)(per * n + 1), MPI_BYTE, sroot, c->sub,
                        &req) != MPI_SUCCESS ||
             core_wait(&req)) &&
            !rc)
            rc = core_err(ctx, PASSION_EMPI, "MPI_Ibcast in " CALL);
        ctx->cnt.t_comm += core_now() - t0;
        ctx->cnt.rounds++;
        if (ctx->rank == root) {
            ctx->cnt.messages_sent++;
            ctx->cnt.bytes_sent += (uint64_t)(per * n);
        }
        if (rc || !c->member || c->pb[per * n] != 1)
            continue;
        rc = mc_deliver(c, i, n);
    }
    return rc;
}

static int file_multicast_all_body(passion_file *f, int root,
                                   const passion_section *src,
                                   const int *group, int ngroup,
                                   const passion_section *dst, void *buf,
                                   const passion_memspec *mem)
{
    if (!f)
        return PASSION_EINVAL;
    passion_ctx *ctx = f->ctx;
    core_enter(ctx);
    int rc0 = ocad_file_chunked_refuse(f, "out-of-core multicast");
    if (rc0)
        return rc0;
    mc_call c = {.f = f, .root = root, .ngroup = ngroup, .group = group,
                 .src = src, .dst = dst, .buf = buf, .mem = mem};
    uint64_t key[3 + 3 * PASSION_MAX_DIMS];
    int rc = mc_check(&c, mc_key(&c, key));
    rc = core_same(ctx, rc, key, sizeof key, CALL ": root, group or "
                   "section");
    if (rc)
        return rc;
    int in = c.member || ctx->rank == root;
    if (MPI_Comm_split(ctx->comm, in ? 0 : MPI_UNDEFINED, ctx->rank,
                       &c.sub) != MPI_SUCCESS)
        return core_agree(ctx, core_err(ctx, PASSION_EMPI,
                                        "MPI_Comm_split in " CALL));
    int busy = c.sub != MPI_COMM_NULL &&
               passion_section_elems(src, f->a->nd) > 0;
    rc = mc_buffer(&c, busy);
    /* every member can take part in every broadcast, or nobody starts */
    const uint64_t wrote0 = ctx->cnt.bytes_written;
    const int refused = (rc = core_agree(ctx, rc)) != PASSION_OK;
    if (!refused && busy)
        rc = mc_pieces(&c, rc);
    core_stage_free(ctx, c.pb, c.per * c.k + 1);
    if (c.sub != MPI_COMM_NULL)
        MPI_Comm_free(&c.sub);
    if (refused) /* before the first broadcast: agreed already */
        return rc;
    /* a multicast into files that failed after some member wrote names
       who wrote */
    return core_agree_wrote(ctx, rc, ctx->cnt.bytes_written > wrote0);
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_file_multicast_all(passion_file *f, int root,
                             const passion_section *src, const int *group,
                             int ngroup, const passion_section *dst,
                             void *buf, const passion_memspec *mem)
{
    passion_ctx *gctx = f ? f->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = file_multicast_all_body(f, root, src, group, ngroup, dst, buf, mem);
    core_call_end(gctx);
    return rc;
}
