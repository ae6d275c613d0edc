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

static int file_multicast_all_body(passion_file *f, int root,
                             const passion_section *src, const int *group,
                             int ngroup, const passion_section *dst,
                             void *buf, const passion_memspec *mem)
{
    if (!f)
        return PASSION_EINVAL;
    passion_ctx *ctx = f->ctx;
    core_enter(ctx);
    passion_array *a = f->a;
    int nd = a->nd, rc = PASSION_OK;
    /* what must agree: root, group, the section */
    uint64_t key[3 + 3 * PASSION_MAX_DIMS];
    memset(key, 0, sizeof key);
    key[0] = (uint64_t)root;
    key[1] = (uint64_t)ngroup;
    uint64_t h = 1469598103934665603ULL;
    int member = group ? 0 : 1;
    for (int i = 0; group && i < ngroup; i++) {
        h = (h ^ (uint64_t)group[i]) * 1099511628211ULL;
        if (group[i] < 0 || group[i] >= ctx->size)
            rc = core_err(ctx, PASSION_EINVAL, CALL ": group rank %d",
                          group[i]);
        if (group[i] == ctx->rank)
            member = 1;
    }
    key[2] = h;
    if (src)
        for (int d = 0; d < nd; d++) {
            key[3 + 3 * d] = (uint64_t)src->start[d];
            key[4 + 3 * d] = (uint64_t)src->count[d];
            key[5 + 3 * d] = (uint64_t)src->stride[d];
        }
    int64_t elems = 0;
    if (rc)
        ;
    else if (a->spec.placement != PASSION_PLACE_LOCAL)
        rc = core_err(ctx, PASSION_EINVAL, CALL " needs local placement");
    else if (root < 0 || root >= ctx->size)
        rc = core_err(ctx, PASSION_EINVAL, CALL ": root %d", root);
    else if (!src || (group && ngroup < 0))
        rc = core_err(ctx, PASSION_EINVAL, CALL ": no section or group");
    else if (ctx->rank == root)
        rc = ocad_section_check(ctx, nd, src, f->lo, f->hi, &elems);
    if (!rc && member) {
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
            rc = ocad_memspec_check(ctx, nd, a->esize, src, mem);
            if (!rc && !buf && passion_section_elems(src, nd) > 0)
                rc = core_err(ctx, PASSION_EINVAL, CALL ": NULL buffer");
        }
    }
    rc = core_same(ctx, rc, key, sizeof key, CALL ": root, group or "
                   "section");
    if (rc)
        return rc;
    MPI_Comm sub;
    int in = member || ctx->rank == root;
    if (MPI_Comm_split(ctx->comm, in ? 0 : MPI_UNDEFINED, ctx->rank, &sub) !=
        MPI_SUCCESS)
        return core_agree(ctx, core_err(ctx, PASSION_EMPI,
                                            "MPI_Comm_split in " CALL));
    /* the piece buffer: per * k bytes and a status byte the root sets to
       1 when it read the piece, so that after a failed read nobody writes
       what the buffer happens to hold */
    int busy = sub != MPI_COMM_NULL && passion_section_elems(src, nd) > 0;
    int cd = a->spec.order[0];
    int64_t per = a->esize, k = 1;
    char *pb = NULL;
    if (busy) {
        for (int d = 0; d < nd; d++)
            if (d != cd)
                per *= src->count[d];
        int64_t lim = ctx->opt.memory_budget < MC_MAXMSG
                          ? ctx->opt.memory_budget
                          : MC_MAXMSG;
        k = (lim - 1) / per; /* the status byte counts too */
        if (k < 1)
            k = 1;
        if (k > src->count[cd])
            k = src->count[cd];
        pb = core_stage_alloc(ctx, per * k + 1);
        if (!pb)
            rc = core_err(ctx, PASSION_ENOMEM, CALL ": buffer");
    }
    /* every member can take part in every broadcast, or nobody starts */
    const uint64_t wrote0 = ctx->cnt.bytes_written;
    if ((rc = core_agree(ctx, rc))) {
        core_stage_free(ctx, pb, per * k + 1);
        if (sub != MPI_COMM_NULL)
            MPI_Comm_free(&sub);
        return rc;
    }
    if (busy) {
        /* the root's rank in sub */
        int sroot = 0;
        MPI_Group wg, sg;
        MPI_Comm_group(ctx->comm, &wg);
        MPI_Comm_group(sub, &sg);
        MPI_Group_translate_ranks(wg, 1, &root, sg, &sroot);
        MPI_Group_free(&wg);
        MPI_Group_free(&sg);
        for (int64_t i = 0; i < src->count[cd]; i += k) {
            int64_t c = src->count[cd] - i < k ? src->count[cd] - i : k;
            passion_section s1 = *src;
            s1.start[cd] += i * src->stride[cd];
            s1.count[cd] = c;
            if (ctx->rank == root) {
                if (!rc)
                    rc = passion_file_read(f, &s1, pb, NULL,
                                               PASSION_METHOD_AUTO);
                pb[per * c] = rc ? 0 : 1;
            }
            double t0 = core_now();
            MPI_Request req;
            if ((MPI_Ibcast(pb, (int)(per * c + 1), MPI_BYTE, sroot, sub,
                            &req) != MPI_SUCCESS ||
                 core_wait(&req)) &&
                !rc)
                rc = core_err(ctx, PASSION_EMPI, "MPI_Ibcast in " CALL);
            ctx->cnt.t_comm += core_now() - t0;
            ctx->cnt.rounds++;
            if (ctx->rank == root) {
                ctx->cnt.messages_sent++;
                ctx->cnt.bytes_sent += (uint64_t)(per * c);
            }
            if (rc || !member || pb[per * c] != 1)
                continue;
            if (dst) {
                passion_section d1 = *dst;
                d1.start[cd] += i * dst->stride[cd];
                d1.count[cd] = c;
                rc = passion_file_write(f, &d1, pb, NULL,
                                               PASSION_METHOD_AUTO);
            } else {
                passion_memspec m1;
                memset(&m1, 0, sizeof m1);
                for (int d = 0; d < nd; d++) {
                    m1.shape[d] = mem ? mem->shape[d] : src->count[d];
                    m1.offset[d] = mem ? mem->offset[d] : 0;
                }
                m1.offset[cd] += i;
                int64_t cnt[PASSION_MAX_DIMS];
                memcpy(cnt, src->count, sizeof cnt);
                cnt[cd] = c;
                unpack_box(a, cnt, pb, buf, &m1);
            }
        }
    }
    core_stage_free(ctx, pb, per * k + 1);
    if (sub != MPI_COMM_NULL)
        MPI_Comm_free(&sub);
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
