/*
 * oc_shift.c - out-of-core shift (thesis 5.4 and table 5.1,
 * PASSION_oc_shift): ghost exchange between neighbouring ranks' local
 * array files. Each rank reads the boundary cells from its own file,
 * exchanges them with its grid neighbour, and stores what it receives in
 * the ghost area of its own file.
 *
 * Invariants: partners along a grid dimension have the same local extents
 * in every other dimension, so both cut the boundary into the same pieces
 * (along the slowest other dimension in storage, each piece within half
 * the memory budget, send + receive); each rank holds its piece buffers
 * before the arguments' agreement, so a call refused for its arguments or
 * its memory writes nothing; every rank runs every piece's sendrecv even
 * after a local failure (sending nothing, so that the partner writes
 * nothing of that piece), and the outcome is agreed at the end (naming
 * the ranks that wrote, where some failed), so no rank hangs; only ghost
 * cells are written, and only with the partner's data.
 */
#include "../ocad/ocad.h"

#include <stdlib.h>
#include <string.h>

#define SHIFT_MAXMSG (1LL << 30)
#define CALL "passion_file_shift_all" /* the name details give */

/* Rank of the neighbour at coordinate offset `step` along dim. */
static int neighbour(const passion_array *a, int rank, int dim, int step,
                     int periodic)
{
    int c[PASSION_MAX_DIMS];
    ocad_coords(a, rank, c);
    int g = a->spec.grid[dim];
    int p = c[dim] + step;
    if (p < 0 || p >= g) {
        if (!periodic)
            return MPI_PROC_NULL;
        p = (p % g + g) % g;
    }
    c[dim] = p;
    int r = 0;
    for (int d = 0; d < a->nd; d++)
        r = r * a->spec.grid[d] + c[d];
    return r;
}

/* The boundary's pieces, the same in both directions: the boundary
   section (its start along dim set per direction by shift_one), the
   dimension cut into pieces (cd, -1: none), the bytes of one index of it
   (per), its extent, the indices of a piece (k) and a piece's bytes */
typedef struct shift_geom {
    passion_section snd;
    int cd;
    int64_t per, ext, k, total;
} shift_geom;

static void shift_geom_init(const passion_file *f, int dim, int64_t w,
                            const int64_t *nl, shift_geom *g)
{
    const passion_array *a = f->a;
    const passion_array_spec *sp = &a->spec;
    memset(g, 0, sizeof *g);
    for (int d = 0; d < a->nd; d++) {
        g->snd.stride[d] = 1;
        g->snd.start[d] = -sp->ghost[d];
        g->snd.count[d] = nl[d] + 2 * sp->ghost[d];
    }
    g->snd.count[dim] = w;
    /* pieces along the slowest other dimension */
    g->cd = -1;
    for (int k = 0; k < a->nd && g->cd < 0; k++)
        if (sp->order[k] != dim)
            g->cd = sp->order[k];
    g->per = a->esize;
    for (int d = 0; d < a->nd; d++)
        if (d != g->cd)
            g->per *= g->snd.count[d];
    g->ext = g->cd >= 0 ? g->snd.count[g->cd] : 1;
    int64_t half = f->ctx->opt.memory_budget / 2;
    if (half > SHIFT_MAXMSG)
        half = SHIFT_MAXMSG;
    g->k = g->per > 0 ? half / g->per : 1;
    if (g->k < 1)
        g->k = 1; /* one index of the other dimension at least */
    if (g->k > g->ext)
        g->k = g->ext;
    g->total = g->per * g->k;
}

/* One direction: boundary -> partner `to`, ghost <- partner `from`, in
   pieces through sb and rb (g->total bytes each). */
static int shift_one(passion_file *f, int dim, int step, int periodic,
                     int64_t w, const int64_t *nl, const shift_geom *g,
                     char *sb, char *rb, int rc)
{
    passion_ctx *ctx = f->ctx;
    passion_array *a = f->a;
    int to = neighbour(a, ctx->rank, dim, step, periodic);
    int from = neighbour(a, ctx->rank, dim, -step, periodic);
    CORE_CHAOS(SHIFT);
    int64_t n = nl[dim];
    passion_section snd = g->snd, rcv;
    snd.start[dim] = step > 0 ? n - w : 0;
    rcv = snd;
    rcv.start[dim] = step > 0 ? -w : n;
    const int cd = g->cd;
    const int64_t per = g->per, ext = g->ext, k = g->k;
    for (int64_t i = 0; i < ext; i += k) {
        int64_t c = ext - i < k ? ext - i : k;
        passion_section s1 = snd, r1 = rcv;
        if (cd >= 0) {
            s1.start[cd] += i;
            s1.count[cd] = c;
            r1.start[cd] += i;
            r1.count[cd] = c;
        }
        int bytes = (int)(per * c);
        if (!rc && to != MPI_PROC_NULL && sb)
            rc = passion_file_read(f, &s1, sb, NULL, PASSION_METHOD_AUTO);
        double t0 = core_now();
        /* after a failure keep the pairing, but send nothing: the partner
           then receives fewer bytes than the piece and writes nothing of
           it (its ghosts keep their old values, never garbage) */
        static char dummy[1];
        int sbytes = !rc && sb ? bytes : 0, got = 0;
        MPI_Status st;
        int mrc = MPI_Sendrecv(sb ? sb : dummy, sbytes, MPI_BYTE, to, 77,
                               rb ? rb : dummy, rb ? bytes : 0, MPI_BYTE,
                               from, 77, ctx->comm, &st);
        ctx->cnt.t_comm += core_now() - t0;
        if (mrc != MPI_SUCCESS && !rc)
            rc = core_err(ctx, PASSION_EMPI, "MPI_Sendrecv in " CALL);
        if (mrc == MPI_SUCCESS &&
            MPI_Get_count(&st, MPI_BYTE, &got) != MPI_SUCCESS)
            got = -1;
        if (to != MPI_PROC_NULL) {
            ctx->cnt.messages_sent++;
            ctx->cnt.bytes_sent += (uint64_t)bytes;
        }
        ctx->cnt.rounds++;
        if (!rc && from != MPI_PROC_NULL && got == bytes)
            rc = passion_file_write(f, &r1, rb, NULL, PASSION_METHOD_AUTO);
    }
    return rc;
}

static int file_shift_all_body(passion_file *f, int dim, int dir, int periodic,
                         int64_t width)
{
    if (!f)
        return PASSION_EINVAL;
    passion_ctx *ctx = f->ctx;
    core_enter(ctx);
    passion_array *a = f->a;
    int rc = ocad_file_chunked_refuse(f, "out-of-core shift");
    if (rc)
        return rc;
    int64_t args[4] = {dim, dir, periodic, width};
    int64_t nl[PASSION_MAX_DIMS] = {0};
    int64_t w = 0;
    if (a->spec.placement != PASSION_PLACE_LOCAL)
        rc = core_err(ctx, PASSION_EINVAL, CALL " needs local placement");
    else if (dim < 0 || dim >= a->nd)
        rc = core_err(ctx, PASSION_EINVAL, CALL ": dimension %d", dim);
    else if (dir < -1 || dir > 1)
        rc = core_err(ctx, PASSION_EINVAL, CALL ": direction %d", dir);
    else if (!f->writable)
        rc = core_err(ctx, PASSION_EACCES, CALL ": %s is read-only",
                      f->fh->path);
    if (!rc) {
        w = width > 0 ? width : a->spec.ghost[dim];
        passion_array_local_shape(a, ctx->rank, nl);
        if (width < 0 || w > a->spec.ghost[dim])
            rc = core_err(ctx, PASSION_EINVAL,
                          CALL ": width %lld, ghost width %lld",
                          (long long)width, (long long)a->spec.ghost[dim]);
        else if (w > nl[dim])
            rc = core_err(ctx, PASSION_EINVAL,
                          CALL ": width %lld exceeds the local extent "
                          "%lld along dimension %d", (long long)w,
                          (long long)nl[dim], dim);
    }
    /* the buffers before the arguments' agreement: a rank that cannot
       hold them refuses the call before any rank writes */
    shift_geom g = {.cd = -1};
    char *sb = NULL, *rb = NULL;
    if (!rc && w > 0) {
        shift_geom_init(f, dim, w, nl, &g);
        sb = core_stage_alloc(ctx, g.total);
        rb = core_stage_alloc(ctx, g.total);
        if (!sb || !rb)
            rc = core_err(ctx, PASSION_ENOMEM, CALL ": buffers of %lld "
                          "bytes", (long long)g.total);
    }
    const uint64_t wrote0 = ctx->cnt.bytes_written;
    rc = core_same(ctx, rc, args, sizeof args, CALL " arguments");
    if (!rc && w > 0) {
        if (dir >= 0)
            rc = shift_one(f, dim, +1, periodic, w, nl, &g, sb, rb, rc);
        if (dir <= 0)
            rc = shift_one(f, dim, -1, periodic, w, nl, &g, sb, rb, rc);
        /* a shift that failed after some rank wrote names who wrote */
        rc = core_agree_wrote(ctx, rc, ctx->cnt.bytes_written > wrote0);
    }
    if (sb || rb) {
        core_stage_free(ctx, rb, g.total);
        core_stage_free(ctx, sb, g.total);
    }
    return rc;
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_file_shift_all(passion_file *f, int dim, int dir, int periodic,
                         int64_t width)
{
    passion_ctx *gctx = f ? f->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = file_shift_all_body(f, dim, dir, periodic, width);
    core_call_end(gctx);
    return rc;
}
