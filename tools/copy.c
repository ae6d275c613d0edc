/*
 * copy.c - the copy engine of `passion get`, `put` and `convert`: moves
 * a section of one file into a section of another in rounds, each rank at
 * most `chunk` bytes per round (bounded memory for any size), at any
 * number of ranks.
 *
 * Three ways, by where the data lives:
 *  - global to global: the count box is cut into chunks (the source's
 *    slowest storage dimensions first), chunk i goes to rank i mod P; both
 *    sides collective (passion_file_read_all / write_all).
 *  - global to a local set (this run's ranks): every rank fills its own
 *    local file. Its part of the global array is, per dimension, one run
 *    (BLOCK, BLOCK(m), collapsed) or for CYCLIC(m) either m residue
 *    sections (global stride P*m, local stride m) or one section per
 *    local block (stride 1), whichever is fewer: so every piece is one
 *    regular section on both sides. Source reads collective, local writes
 *    independent.
 *  - a local set (written by any number of ranks) to global: rank r reads
 *    files r, r+P, ... of the set, each through a one-rank view of the
 *    file (its local array with ghosts as a plain array), in the same
 *    pieces; global writes collective.
 * Every round ends with the same outcome on every rank: independent steps
 * are agreed (MPI_Allreduce) before the next collective call. Between a
 * source and a destination of different element types (put) each round's
 * values are converted in place (cast.c) before they are written.
 */
#include "files.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- chunker */

void cli_chunks_init(cli_chunks *k, int nd, const int64_t *count,
                     const int *order, int64_t max_elems)
{
    memset(k, 0, sizeof *k);
    k->nd = nd;
    if (max_elems < 1)
        max_elems = 1;
    int64_t inner = 1;
    int cut = 0; /* dimensions slower than the cut get step 1 */
    for (int j = nd - 1; j >= 0; j--) {
        int d = order[j];
        k->count[d] = count[d];
        if (cut) {
            k->step[d] = 1;
        } else if (count[d] <= max_elems / inner) {
            k->step[d] = count[d] ? count[d] : 1;
            inner *= count[d] ? count[d] : 1;
        } else {
            k->step[d] = max_elems / inner;
            cut = 1;
        }
    }
    k->total = 1;
    for (int d = 0; d < nd; d++) {
        k->nper[d] = count[d] ? (count[d] - 1) / k->step[d] + 1 : 0;
        k->total *= k->nper[d];
    }
}

void cli_chunks_get(const cli_chunks *k, int64_t i, int64_t *off,
                    int64_t *cnt)
{
    for (int d = k->nd - 1; d >= 0; d--) {
        int64_t c = i % k->nper[d];
        i /= k->nper[d];
        off[d] = c * k->step[d];
        cnt[d] = k->count[d] - off[d] < k->step[d] ? k->count[d] - off[d]
                                                   : k->step[d];
    }
}

/* Element strides of a packed box of cnt in storage order `order`. */
static void strides(int nd, const int *order, const int64_t *cnt,
                    int64_t *st)
{
    int64_t s = 1;
    for (int j = nd - 1; j >= 0; j--) {
        st[order[j]] = s;
        s *= cnt[order[j]];
    }
}

void cli_permute(char *dst, const int *dorder, const char *src,
                 const int *sorder, int nd, const int64_t *cnt,
                 int64_t esize)
{
    int64_t ss[CLI_MAX_DIMS] = {0}, n = 1;
    int64_t dsn[CLI_MAX_DIMS] = {0};
    strides(nd, sorder, cnt, ss);
    strides(nd, dorder, cnt, dsn);
    for (int d = 0; d < nd; d++)
        n *= cnt[d];
    if (!n)
        return;
    /* walk dst in its order; the source offset follows */
    int64_t idx[CLI_MAX_DIMS] = {0};
    int fast = dorder[nd - 1];
    int64_t run = cnt[fast], sstep = ss[fast] * esize;
    for (int64_t done = 0; done < n; done += run) {
        int64_t so = 0;
        for (int d = 0; d < nd; d++)
            so += idx[d] * ss[d];
        const char *s = src + so * esize;
        char *o = dst + done * esize;
        for (int64_t r = 0; r < run; r++, s += sstep, o += esize)
            memcpy(o, s, (size_t)esize);
        for (int j = nd - 2; j >= 0; j--) {
            int d = dorder[j];
            if (++idx[d] < cnt[d])
                break;
            idx[d] = 0;
        }
    }
}

/* --------------------------------------------------- pieces of a rank */

typedef struct piece {
    int64_t lstart, lstride, gstart, gstride, cnt;
} piece;

/* The pieces of grid coordinate p in dimension d (module comment);
   *np of them, malloc'ed (NULL and 0 when p owns nothing). */
static piece *dim_pieces(const passion_array_spec *s, int d, int p,
                         int64_t *np)
{
    int64_t cnt = cli_local_count(s, d, p), m = s->block[d],
            P = s->grid[d];
    *np = 0;
    if (cnt <= 0)
        return NULL;
    piece *v;
    if (s->dist[d] != PASSION_DIST_CYCLIC) {
        if (!(v = malloc(sizeof *v)))
            return NULL;
        v->lstart = 0;
        v->lstride = 1;
        v->gstart = s->dist[d] == PASSION_DIST_BLOCK ? p * m : 0;
        v->gstride = 1;
        v->cnt = cnt;
        *np = 1;
        return v;
    }
    int64_t nb = (cnt - 1) / m + 1; /* local blocks */
    if (m < nb) {
        /* residues: index j of every block */
        if (!(v = malloc(sizeof *v * (size_t)m)))
            return NULL;
        for (int64_t j = 0; j < m && j < cnt; j++) {
            v[j].lstart = j;
            v[j].lstride = m;
            v[j].gstart = p * m + j;
            v[j].gstride = P * m;
            v[j].cnt = (cnt - j - 1) / m + 1;
            (*np)++;
        }
    } else {
        if (!(v = malloc(sizeof *v * (size_t)nb)))
            return NULL;
        for (int64_t b = 0; b < nb; b++) {
            v[b].lstart = b * m;
            v[b].lstride = 1;
            v[b].gstart = (b * P + p) * m;
            v[b].gstride = 1;
            v[b].cnt = cnt - b * m < m ? cnt - b * m : m;
        }
        *np = nb;
    }
    return v;
}

/* Walks (piece, chunk) pairs of the local files this rank handles. */
typedef struct walk {
    const passion_array_spec *ls; /* the local side's spec */
    int nd;
    int64_t max_elems;
    const int *order;  /* chunking order (the source's storage) */
    int q, qstep, nq;  /* files q, q + qstep, ... < nq */
    piece *pc[CLI_MAX_DIMS];
    int64_t np[CLI_MAX_DIMS];
    int64_t pi, npieces; /* piece index (mixed radix) */
    cli_chunks ck;
    int64_t ci;          /* chunk in piece */
    int started;
} walk;

static void walk_free_dims(walk *w)
{
    for (int d = 0; d < w->nd; d++) {
        free(w->pc[d]);
        w->pc[d] = NULL;
    }
}

/* Load the pieces of file w->q; -1 out of memory. */
static int walk_load(walk *w)
{
    walk_free_dims(w);
    int c[CLI_MAX_DIMS], r = w->q;
    for (int d = w->nd - 1; d >= 0; d--) {
        c[d] = r % w->ls->grid[d];
        r /= w->ls->grid[d];
    }
    w->npieces = 1;
    for (int d = 0; d < w->nd; d++) {
        w->pc[d] = dim_pieces(w->ls, d, c[d], &w->np[d]);
        if (!w->pc[d] && w->np[d] == 0 &&
            cli_local_count(w->ls, d, c[d]) > 0)
            return -1;
        w->npieces *= w->np[d];
    }
    w->pi = 0;
    w->ci = 0;
    w->started = 0;
    return 0;
}

/* The box of piece pi: per dimension its piece. */
static void piece_box(const walk *w, int64_t pi, piece *box)
{
    for (int d = w->nd - 1; d >= 0; d--) {
        box[d] = w->pc[d][pi % w->np[d]];
        pi /= w->np[d];
    }
}

/*
 * Next (local section, global section) pair: 1, 0 at the end, -1 out of
 * memory. local: indices of the local array (no ghost offset).
 */
static int walk_next(walk *w, passion_section *loc, passion_section *glob,
                     int64_t *elems)
{
    for (;;) {
        if (w->q >= w->nq)
            return 0;
        if (!w->started) {
            if (walk_load(w))
                return -1;
            w->started = 1;
            w->ci = -1;
            w->ck.total = 0;
            w->pi = -1;
        }
        if (w->ci + 1 < w->ck.total) {
            w->ci++;
        } else if (w->pi + 1 < w->npieces) {
            w->pi++;
            piece box[CLI_MAX_DIMS];
            piece_box(w, w->pi, box);
            int64_t cnt[CLI_MAX_DIMS];
            for (int d = 0; d < w->nd; d++)
                cnt[d] = box[d].cnt;
            cli_chunks_init(&w->ck, w->nd, cnt, w->order, w->max_elems);
            w->ci = 0;
            if (!w->ck.total)
                continue;
        } else {
            w->q += w->qstep;
            w->started = 0;
            continue;
        }
        piece box[CLI_MAX_DIMS];
        piece_box(w, w->pi, box);
        int64_t off[CLI_MAX_DIMS], cnt[CLI_MAX_DIMS];
        cli_chunks_get(&w->ck, w->ci, off, cnt);
        *elems = 1;
        memset(loc, 0, sizeof *loc);
        memset(glob, 0, sizeof *glob);
        for (int d = 0; d < w->nd; d++) {
            loc->start[d] = box[d].lstart + off[d] * box[d].lstride;
            loc->stride[d] = box[d].lstride;
            glob->start[d] = box[d].gstart + off[d] * box[d].gstride;
            glob->stride[d] = box[d].gstride;
            loc->count[d] = glob->count[d] = cnt[d];
            *elems *= cnt[d];
        }
        return 1;
    }
}

/* Chunks the walk will give in all (for the rounds). */
static int walk_count(walk w0, int64_t *n)
{
    walk w = w0;
    memset(w.pc, 0, sizeof w.pc);
    *n = 0;
    for (int q = w.q; q < w.nq; q += w.qstep) {
        w.q = q;
        if (walk_load(&w)) {
            walk_free_dims(&w);
            return -1;
        }
        for (int64_t pi = 0; pi < w.npieces; pi++) {
            piece box[CLI_MAX_DIMS];
            piece_box(&w, pi, box);
            int64_t cnt[CLI_MAX_DIMS];
            for (int d = 0; d < w.nd; d++)
                cnt[d] = box[d].cnt;
            cli_chunks k;
            cli_chunks_init(&k, w.nd, cnt, w.order, w.max_elems);
            *n += k.total;
        }
    }
    walk_free_dims(&w);
    return 0;
}

/* ------------------------------------------------------ one-rank views */

/* Open file q of a local set as a plain array (its local array with
   ghosts) on a one-rank context. */
int cli_view_open(const cli_common *c, const char *cmd, cli_obj *o,
                     int q)
{
    if (o->q == q)
        return 0;
    if (o->qf) {
        passion_file_close(o->qf);
        passion_array_free(o->qa);
        o->qf = NULL;
        o->qa = NULL;
        o->q = -1;
    }
    int rc;
    if (!o->self && (rc = cli_ctx_self(c, &o->self)))
        return cli_fail(cmd, "a one-rank context: %s", passion_strerror(rc));
    const passion_array_spec *s = &o->spec;
    int co[CLI_MAX_DIMS], r = q;
    for (int d = s->ndims - 1; d >= 0; d--) {
        co[d] = r % s->grid[d];
        r /= s->grid[d];
    }
    int64_t ext[CLI_MAX_DIMS];
    for (int d = 0; d < s->ndims; d++)
        ext[d] = cli_local_count(s, d, co[d]) + 2 * s->ghost[d];
    passion_array_spec v;
    passion_array_spec_init(&v, s->ndims, ext, s->elem_size);
    cli_type_copy(&v, s);
    v.storage = PASSION_ORDER_CUSTOM;
    memcpy(v.order, s->order, sizeof v.order);
    v.placement = PASSION_PLACE_GLOBAL;
    char path[PATH_MAX];
    if (cli_pattern_path(o->pattern, q, path, sizeof path))
        return cli_fail(cmd, "%s: file %d's name is too long", o->pattern,
                        q);
    if ((rc = passion_array_create(o->self, &v, &o->qa)))
        return cli_fail_rc(cmd, o->self, rc, path);
    if ((rc = passion_file_open(o->qa, path, PASSION_MODE_RDONLY, &o->qf))) {
        cli_fail_rc(cmd, o->self, rc, path);
        passion_array_free(o->qa);
        o->qa = NULL;
        return 1;
    }
    o->q = q;
    return 0;
}

/* --------------------------------------------------------------- copy */

/* Agree on a local failure (1 = some rank failed). */
static int any_failed(int bad)
{
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return bad;
}

int cli_copy(passion_ctx *ctx, const cli_common *c, const char *cmd,
             cli_obj *src, const cli_sect *ss, cli_obj *dst,
             const cli_sect *ds, int64_t chunk, cli_prog *prog)
{
    const passion_array_spec *sp = &src->spec, *dp = &dst->spec;
    int nd = sp->ndims, rank, size;
    /* es: a source element; ed: a destination element (the caller has
       checked that the values may be cast); ew: the wider, which a
       conversion in place needs */
    int64_t es = sp->elem_size, ed = dp->elem_size, ew = es > ed ? es : ed;
    int cast = !cli_cast_same(sp, dp);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (src->local && dst->local)
        return cli_fail(cmd, "local set to local set: convert to a global "
                        "file first (e.g. raw or .npy), then to the new set");
    int same = !memcmp(sp->order, dp->order, sizeof(int) * (size_t)nd);
    int64_t max_elems = (same ? chunk : chunk / 2) / ew;
    if (max_elems < 1)
        max_elems = 1;
    char *buf = malloc((size_t)(max_elems * ew));
    char *buf2 = same ? buf : malloc((size_t)(max_elems * ed));
    if (any_failed(!buf || !buf2)) {
        free(buf);
        if (!same)
            free(buf2);
        return cli_fail(cmd, "no memory for the %lld-byte buffers",
                        (long long)(max_elems * ew));
    }
    int64_t rounds = 0, mine = 0, done = 0;
    cli_chunks gk;
    walk w;
    memset(&w, 0, sizeof w);
    int mode = !src->local && !dst->local ? 'g' : dst->local ? 'b' : 'c';
    int bad = 0;
    if (mode == 'g') {
        cli_chunks_init(&gk, nd, ss->count, sp->order, max_elems);
        rounds = (gk.total + size - 1) / size;
    } else {
        w.ls = mode == 'b' ? dp : sp;
        w.nd = nd;
        w.max_elems = max_elems;
        w.order = sp->order;
        w.q = rank;
        w.qstep = size;
        w.nq = mode == 'b' ? rank + 1 : src->nfiles;
        if (walk_count(w, &mine))
            bad = 1;
        int64_t mx = mine;
        MPI_Allreduce(MPI_IN_PLACE, &mx, 1, MPI_INT64_T, MPI_MAX,
                      MPI_COMM_WORLD);
        rounds = mx;
    }
    int64_t total_mine = mode == 'g' ? 0 : mine;
    if (mode == 'g')
        for (int64_t i = rank; i < gk.total; i += size)
            total_mine++;
    int rc = 0;
    uint64_t bytes = 0;
    if (any_failed(bad)) {
        rc = cli_fail(cmd, "no memory for the piece lists");
        rounds = 0;
    }
    for (int64_t r = 0; r < rounds && !rc; r++) {
        passion_section a, b; /* source, destination */
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        for (int d = 0; d < CLI_MAX_DIMS; d++)
            a.stride[d] = b.stride[d] = 1;
        int64_t elems = 0, cnt[CLI_MAX_DIMS] = {0};
        if (mode == 'g') {
            int64_t i = r * size + rank;
            if (i < gk.total) {
                int64_t off[CLI_MAX_DIMS];
                cli_chunks_get(&gk, i, off, cnt);
                elems = 1;
                for (int d = 0; d < nd; d++) {
                    a.start[d] = ss->start[d] + off[d] * ss->stride[d];
                    a.stride[d] = ss->stride[d];
                    b.start[d] = ds->start[d] + off[d] * ds->stride[d];
                    b.stride[d] = ds->stride[d];
                    a.count[d] = b.count[d] = cnt[d];
                    elems *= cnt[d];
                }
            }
        } else {
            passion_section loc, glob;
            int k = walk_next(&w, &loc, &glob, &elems);
            if (k < 0)
                bad = 1;
            if (k > 0) {
                for (int d = 0; d < nd; d++)
                    cnt[d] = loc.count[d];
                if (mode == 'b') {
                    a = glob;
                    b = loc;
                } else {
                    a = loc;
                    for (int d = 0; d < nd; d++)
                        a.start[d] += sp->ghost[d];
                    b = glob;
                }
            } else {
                elems = 0;
            }
        }
        /* read */
        if (mode == 'c') {
            int q = w.q;
            if (elems && !bad && cli_view_open(c, cmd, src, q))
                bad = 2;
            if (elems && !bad &&
                (rc = passion_file_read(src->qf, &a, buf, NULL,
                                        PASSION_METHOD_AUTO))) {
                cli_fail_rc(cmd, src->self, rc, "read");
                bad = 2;
            }
            if (any_failed(bad)) {
                rc = 1;
                break;
            }
        } else {
            if (any_failed(bad)) {
                rc = cli_fail(cmd, "out of memory");
                break;
            }
            if ((rc = passion_file_read_all(src->f, &a, buf, NULL,
                                            PASSION_METHOD_AUTO))) {
                cli_fail_rc(cmd, ctx, rc, src->name);
                break;
            }
        }
        if (cast && elems)
            cli_cast_run(buf, sp, dp, elems);
        if (!same && elems)
            cli_permute(buf2, dp->order, buf, sp->order, nd, cnt, ed);
        /* write */
        if (mode == 'b') {
            if (elems && (rc = passion_file_write(dst->f, &b, buf2, NULL,
                                                  PASSION_METHOD_AUTO)))
                bad = 1;
            if (any_failed(bad)) {
                if (bad)
                    fprintf(stderr, "passion %s: write %s: %s (%s)\n", cmd,
                            dst->name, passion_strerror(rc),
                            passion_ctx_errdetail(ctx));
                rc = 1;
                break;
            }
        } else if ((rc = passion_file_write_all(dst->f, &b, buf2, NULL,
                                                PASSION_METHOD_AUTO))) {
            cli_fail_rc(cmd, ctx, rc, dst->name);
            break;
        }
        bytes += (uint64_t)(elems * es);
        if (elems)
            done++;
        cli_prog_update(prog, total_mine ? (double)done / (double)total_mine
                                         : 1,
                        bytes * (uint64_t)size);
    }
    walk_free_dims(&w);
    free(buf);
    if (!same)
        free(buf2);
    cli_prog_end(prog, bytes * (uint64_t)size);
    return rc ? 1 : 0;
}
