/*
 * exchange.c - the exchange layer's dispatcher: the table of algorithms,
 * the public passion_alltoall / passion_alltoallv, argument checks and
 * the agreement across ranks, the choice of `auto`, counters.
 *
 * One call goes:
 *   1. local checks, local sizes; a guess of what will run (fixed
 *      algorithm, or `auto` on a regular exchange with known costs) so
 *      that its staging and the request pool are allocated now;
 *   2. one non-blocking allreduce: any local failure, the algorithm and
 *      radix, the sizes the model needs (Lmax, Mmax, block), and a
 *      checksum that is zero exactly when sendcounts[j] on rank i equals
 *      recvcounts[i] on rank j for every pair (with high probability);
 *   3. calibration if the costs are needed and unknown (first call);
 *      the choice (same inputs on every rank, so the same choice); a
 *      second agreement only if the guess of step 1 was wrong;
 *   4. the algorithm; for the ones that allocate while running, an
 *      agreement on the outcome.
 * Invariant: every exit after step 2 is taken by all ranks alike.
 */
#include "exchange.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const coll_xchg_ops *const xchg_table[] = {
    &coll_xchg_mpi,
    &coll_xchg_pairwise,
    &coll_xchg_a1,
    &coll_xchg_index,
    &coll_xchg_fourstage,
    &coll_xchg_fourstage_nb,
};

const coll_xchg_ops *coll_xchg_ops_get(int alg)
{
    for (size_t i = 0; i < sizeof xchg_table / sizeof xchg_table[0]; i++)
        if (xchg_table[i]->id == alg)
            return xchg_table[i];
    return NULL;
}

const char *coll_xchg_name(int alg)
{
    if (alg == PASSION_XCHG_AUTO)
        return "auto";
    const coll_xchg_ops *ops = coll_xchg_ops_get(alg);
    return ops ? ops->name : NULL;
}

/* ------------------------------------------------------ per-context state */

static int state_key = MPI_KEYVAL_INVALID;

static int state_delete(MPI_Comm comm, int key, void *attr, void *extra)
{
    (void)comm;
    (void)key;
    (void)extra;
    coll_xchg_state *s = attr;
    if (s->comm != MPI_COMM_NULL)
        MPI_Comm_free(&s->comm);
    free(s);
    return MPI_SUCCESS;
}

coll_xchg_state *coll_xchg_state_get(passion_ctx *ctx)
{
    if (state_key == MPI_KEYVAL_INVALID &&
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, state_delete,
                               &state_key, NULL) != MPI_SUCCESS)
        return NULL;
    void *v = NULL;
    int flag = 0;
    if (MPI_Comm_get_attr(ctx->comm, state_key, &v, &flag) == MPI_SUCCESS &&
        flag)
        return v;
    coll_xchg_state *s = core_calloc(ctx, 1, sizeof *s);
    if (!s)
        return NULL;
    s->comm = MPI_COMM_NULL;
    if (MPI_Comm_set_attr(ctx->comm, state_key, s) != MPI_SUCCESS) {
        core_free(ctx, s);
        return NULL;
    }
    return s;
}

MPI_Comm coll_xchg_comm(passion_ctx *ctx)
{
    coll_xchg_state *s = coll_xchg_state_get(ctx);
    if (s && s->comm != MPI_COMM_NULL)
        return s->comm;
    /* the first collective call of the layer on ctx: every rank is here,
       and all keep the communicator or none does (agreed), so that every
       later call finds the same answer above on every rank */
    MPI_Comm c = MPI_COMM_NULL;
    int rc = PASSION_OK;
    if (MPI_Comm_dup(ctx->comm, &c) != MPI_SUCCESS)
        rc = core_err(ctx, PASSION_EMPI, "exchange: MPI_Comm_dup");
    else
        MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    if (!rc && !s)
        rc = core_err(ctx, PASSION_ENOMEM, "exchange: context state");
    if (core_agree(ctx, rc)) {
        if (c != MPI_COMM_NULL)
            MPI_Comm_free(&c);
        return MPI_COMM_NULL;
    }
    s->comm = c;
    return c;
}

int coll_xchg_last(passion_ctx *ctx, coll_xchg_stats *out)
{
    if (!ctx || !out)
        return PASSION_EINVAL;
    coll_xchg_state *s = coll_xchg_state_get(ctx);
    if (!s)
        return PASSION_ENOMEM;
    *out = s->last;
    return PASSION_OK;
}

/* --------------------------------------------------------------- checks */

typedef struct xchg_local {
    int64_t lout, lin, lout_x, lin_x, mmax, total_x;
    int64_t block; /* every count equal to it, else -1 */
    uint64_t check;
} xchg_local;

static uint64_t pair_hash(int i, int j)
{
    uint64_t z = ((uint64_t)(uint32_t)i << 32 | (uint32_t)j) +
                 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return (z ^ (z >> 31)) | 1;
}

static int local_scan(coll_xchg_plan *pl, xchg_local *L)
{
    passion_ctx *ctx = pl->ctx;
    int P = pl->P, me = pl->me;
    memset(L, 0, sizeof *L);
    if (pl->block < 0 && (!pl->sc || !pl->sd || !pl->rc || !pl->rd))
        return core_err(ctx, PASSION_EINVAL, "exchange: NULL count array");
    if (pl->block >= 0) {
        int64_t t;
        if (!core_mul(pl->block, P, &t))
            return core_err(ctx, PASSION_EOVERFLOW,
                            "exchange: %lld bytes x %d ranks overflows",
                            (long long)pl->block, P);
    }
    L->block = coll_sc(pl, 0);
    for (int j = 0; j < P; j++) {
        int64_t s = coll_sc(pl, j), r = coll_rc(pl, j);
        int64_t sd = coll_sd(pl, j), rd = coll_rd(pl, j), e;
        if (s < 0 || r < 0 || sd < 0 || rd < 0)
            return core_err(ctx, PASSION_EINVAL,
                            "exchange: negative count or displacement "
                            "for rank %d",
                            j);
        if (!core_add(s, sd, &e) || !core_add(r, rd, &e) ||
            !core_add(L->lout, s, &L->lout) || !core_add(L->lin, r, &L->lin))
            return core_err(ctx, PASSION_EOVERFLOW,
                            "exchange: byte counts overflow");
        if (s != L->block || r != L->block)
            L->block = -1;
        if (j != me) {
            L->lout_x += s;
            L->lin_x += r;
            if (s > L->mmax)
                L->mmax = s;
            if (r > L->mmax)
                L->mmax = r;
        }
        L->check += pair_hash(me, j) * (uint64_t)s;
        L->check -= pair_hash(j, me) * (uint64_t)r;
    }
    L->total_x = L->lout_x;
    if (L->lout > 0 && !pl->sbuf)
        return core_err(ctx, PASSION_EINVAL, "exchange: NULL send buffer");
    if (L->lin > 0 && !pl->rbuf)
        return core_err(ctx, PASSION_EINVAL, "exchange: NULL receive buffer");
    if (pl->sbuf == MPI_IN_PLACE)
        return core_err(ctx, PASSION_ENOTSUP, "exchange: MPI_IN_PLACE");
    return PASSION_OK;
}

/* staging an algorithm needs for shape (for the budget) */
static int64_t staging_need(int alg, int radix, const coll_xchg_shape *s)
{
    if (alg == PASSION_XCHG_INDEX && s->block >= 0)
        return coll_index_staging(s->procs, radix, s->block);
    if (alg == PASSION_XCHG_FOURSTAGE || alg == PASSION_XCHG_FOURSTAGE_NB) {
        int64_t c = (int64_t)ceil(sqrt((double)s->procs));
        return (int64_t)(2.0 * (double)(c * c) * (double)s->lmax /
                         (double)s->procs) +
               (64 << 10);
    }
    return 0;
}

/* auto's choice within the budget */
static coll_xchg_choice choose_model(const coll_xchg_costs *c,
                                     const coll_xchg_shape *s, int64_t budget)
{
    coll_xchg_choice ch = coll_xchg_choose(c, s, s->block >= 0);
    if (staging_need(ch.alg, ch.radix, s) <= budget)
        return ch;
    /* a1 needs no staging and is always applicable */
    ch.alg = PASSION_XCHG_A1;
    ch.radix = 0;
    ch.seconds = coll_xchg_model(c, PASSION_XCHG_A1, 0, s, NULL);
    return ch;
}

/* the same, remembered for the next call of the same shape (a pure
   function of its inputs, so every rank remembers alike) */
static coll_xchg_choice choose(coll_xchg_state *st, const coll_xchg_costs *c,
                               const coll_xchg_shape *s, int64_t budget)
{
    if (!st)
        return choose_model(c, s, budget);
    const coll_xchg_costs *mc = &st->memo_costs;
    const coll_xchg_shape *ms = &st->memo_shape;
    if (st->memo_ok && st->memo_budget == budget &&
        mc->round == c->round && mc->msg == c->msg && mc->byte == c->byte &&
        mc->copy == c->copy && ms->procs == s->procs &&
        ms->block == s->block && ms->lmax == s->lmax &&
        ms->lmax_x == s->lmax_x && ms->mmax == s->mmax &&
        ms->total == s->total)
        return st->memo;
    coll_xchg_choice ch = choose_model(c, s, budget);
    st->memo_ok = 1;
    st->memo_costs = *c;
    st->memo_shape = *s;
    st->memo_budget = budget;
    st->memo = ch;
    return ch;
}

/* the request pool and the algorithm's reserved staging */
static int prepare(coll_xchg_plan *pl, const xchg_local *L, int alg,
                   int radix)
{
    if (!pl->req) {
        int64_t big = L->lout > L->lin ? L->lout : L->lin;
        int64_t n = 2 * (int64_t)pl->P * (coll_nparts(big) + 1) + 8;
        pl->req = core_malloc(pl->ctx, (size_t)n * sizeof *pl->req);
        if (!pl->req)
            return core_err(pl->ctx, PASSION_ENOMEM,
                            "exchange: %lld MPI requests",
                            (long long)n);
        pl->nreq = (int)n;
    }
    const coll_xchg_ops *ops = coll_xchg_ops_get(alg);
    if (!ops)
        return PASSION_OK;
    pl->radix = radix;
    if (ops->scratch && !pl->scratch) {
        int64_t n = ops->scratch(pl);
        pl->scratch = n > 0 ? core_malloc(pl->ctx, (size_t)n) : NULL;
        if (n > 0 && !pl->scratch)
            return core_err(pl->ctx, PASSION_ENOMEM,
                            "exchange %s: %lld bytes of tables", ops->name,
                            (long long)n);
    }
    if (!ops->reserve)
        return PASSION_OK;
    int64_t n = ops->reserve(pl);
    if (n <= 0)
        return PASSION_OK;
    if (n > pl->ctx->opt.memory_budget)
        return core_err(pl->ctx, PASSION_ENOMEM,
                        "exchange %s needs %lld staging bytes, budget %lld",
                        ops->name, (long long)n,
                        (long long)pl->ctx->opt.memory_budget);
    pl->reserved = coll_stage_alloc(pl, n, n);
    if (!pl->reserved)
        return core_err(pl->ctx, PASSION_ENOMEM,
                        "exchange %s: %lld staging bytes", ops->name,
                        (long long)n);
    pl->reserved_bytes = n;
    return PASSION_OK;
}

static void unprepare(coll_xchg_plan *pl)
{
    coll_stage_free(pl, pl->reserved, pl->reserved_bytes,
                    pl->reserved_bytes);
    pl->reserved = NULL;
    pl->reserved_bytes = 0;
    core_free(pl->ctx, pl->scratch);
    pl->scratch = NULL;
}

enum {
    V_CHECK, V_TOTAL, V_NSUM,
    V_FAIL = V_NSUM, V_ALG, V_NALG, V_RADIX, V_NRADIX, V_MODE, V_NMODE,
    V_READY, V_NREADY, V_BLOCK, V_NBLOCK, V_LMAX, V_LMAX_X, V_MMAX,
    V_NBUDGET, V_GUESS, V_NGUESS, V_GRADIX, V_NGRADIX, V_N
};

/* fold header b into a: sums, then maxima */
static void fold(int64_t *a, const int64_t *b, int n, int nsum)
{
    for (int i = 0; i < n; i++)
        a[i] = i < nsum ? (int64_t)((uint64_t)a[i] + (uint64_t)b[i])
                        : (a[i] > b[i] ? a[i] : b[i]);
}

/*
 * The entry agreement when every rank sends its header to every rank, and
 * A1's data that may travel with it. hdr[i] is rank i's header; its last
 * entry is the number of bytes rank i sent to this rank with it (-1:
 * none).
 */
typedef struct xchg_round {
    int64_t hin[COLL_A2A_MAX][V_N + 1];
    int64_t hout[COLL_A2A_MAX][V_N + 1];
    int posted;  /* data receives posted into the receive buffer */
    int spec;    /* this rank's data went with its headers */
    int rfirst[COLL_A2A_MAX], rn[COLL_A2A_MAX]; /* receive requests */
    int sfirst, sn;                             /* send requests */
    int nreq;                                   /* requests in use */
} xchg_round;

#define TAG_HDR (COLL_TAG + 12)
#define TAG_A1 COLL_TAG /* xchg_a1.c's tag */

/* headers to everyone (and A1's data when spec); returns the fold of all
   headers in out. A1's data is received only once its sender's header
   has said how long it is, so that nothing is ever truncated. */
static int round_start(coll_xchg_plan *pl, xchg_round *x, const int64_t *v,
                       int nsum, int64_t *out)
{
    int P = pl->P, me = pl->me, n = 0, rc = PASSION_OK;
    MPI_Request hq[2 * COLL_A2A_MAX];
    for (int i = 0; i < P && !rc; i++)
        if (i != me &&
            MPI_Irecv(x->hin[i], V_N + 1, MPI_INT64_T, i, TAG_HDR, pl->comm,
                      &hq[n++]) != MPI_SUCCESS)
            rc = PASSION_EMPI;
    for (int j = 0; j < P && !rc; j++) {
        if (j == me)
            continue;
        memcpy(x->hout[j], v, V_N * sizeof *v);
        x->hout[j][V_N] = x->spec ? coll_sc(pl, j) : -1;
        if (MPI_Isend(x->hout[j], V_N + 1, MPI_INT64_T, j, TAG_HDR, pl->comm,
                      &hq[n++]) != MPI_SUCCESS)
            rc = PASSION_EMPI;
    }
    /* sends first in the pool: [0, sn) */
    int k = 0;
    if (!rc && x->spec)
        rc = coll_a1_isends(pl, TAG_A1, &k);
    x->sfirst = 0;
    x->sn = k;
    if (!rc)
        rc = coll_waitall(n, hq);
    if (rc)
        return rc;
    memcpy(x->hin[me], v, V_N * sizeof *v);
    x->hin[me][V_N] = -1;
    /* data that came with the headers and fits where it is expected */
    for (int i = 0; i < P && !rc; i++) {
        x->rfirst[i] = k;
        x->rn[i] = 0;
        int64_t sb = x->hin[i][V_N];
        if (i == me || !x->posted || sb < 0 || sb != coll_rc(pl, i))
            continue;
        x->rn[i] = (int)coll_nparts(sb);
        rc = coll_irecv(pl, pl->rbuf + coll_rd(pl, i), sb, i, TAG_A1,
                        pl->req + k);
        k += x->rn[i];
    }
    x->nreq = k;
    memcpy(out, v, V_N * sizeof *v);
    for (int i = 0; i < P; i++)
        if (i != me)
            fold(out, x->hin[i], V_N, nsum);
    return rc;
}

/* receive a message of a peer without a place for it (errors returned
   by our communicator) */
static void drain(coll_xchg_plan *pl, int src, int tag)
{
    char c;
    MPI_Recv(&c, 0, MPI_BYTE, src, tag, pl->comm, MPI_STATUS_IGNORE);
}

/*
 * End the round's data traffic. complete: A1 is what runs, so finish it
 * (data not yet sent with the headers goes now). Otherwise take what
 * arrived and drain what has no place (inconsistent arguments), so that
 * no message is left behind.
 */
static int round_finish(coll_xchg_plan *pl, xchg_round *x, int complete)
{
    int P = pl->P, me = pl->me, rc = PASSION_OK, k = x->nreq;
    if (complete) {
        for (int i = 0; i < P && !rc; i++) {
            if (i == me || x->hin[i][V_N] >= 0)
                continue;
            int64_t b = coll_rc(pl, i);
            rc = coll_irecv(pl, pl->rbuf + coll_rd(pl, i), b, i, TAG_A1,
                            pl->req + k);
            k += (int)coll_nparts(b);
        }
        if (!rc && !x->spec)
            rc = coll_a1_isends(pl, TAG_A1, &k);
        coll_copy_self(pl);
        if (!rc)
            rc = coll_waitall(k, pl->req);
        if (k > 0)
            pl->st.rounds = 1;
        pl->st.alg = PASSION_XCHG_A1;
        return rc ? core_err(pl->ctx, rc, "a1: exchange failed") : rc;
    }
    for (int i = 0; i < P; i++) {
        int64_t sb = x->hin[i][V_N];
        if (i == me || sb <= 0 || x->rn[i] > 0)
            continue;
        for (int64_t q = 0; q < coll_nparts(sb); q++)
            drain(pl, i, TAG_A1);
    }
    return coll_waitall(k, pl->req);
}

/* agree on the outcome; on failure every rank returns the same code */
static int agree_flag(coll_xchg_plan *pl, int rc)
{
    return core_agree(pl->ctx, rc);
}

static int exchange_call(passion_ctx *ctx, const coll_xchg_args *a, int rc,
                         coll_xchg_choice *predict)
{
    double t0 = core_now();
    coll_xchg_plan pl;
    memset(&pl, 0, sizeof pl);
    pl.ctx = ctx;
    pl.P = ctx->size;
    pl.me = ctx->rank;
    pl.st.alg = -1;
    int P = pl.P;
    xchg_local L;
    memset(&L, 0, sizeof L);
    void *calib = NULL;
    xchg_round xround, *x = NULL;
    coll_xchg_costs costs;
    memset(&costs, 0, sizeof costs);
    coll_xchg_state *state = coll_xchg_state_get(ctx);
    pl.comm = coll_xchg_comm(ctx);
    int alg = a->alg == PASSION_XCHG_DEFAULT ? ctx->opt.exchange : a->alg;
    int radix = a->radix ? a->radix : ctx->opt.radix;
    int rmax = P > 2 ? P : 2;

    /* 1. local checks and the guess */
    if (pl.comm == MPI_COMM_NULL) {
        /* no communicator of our own: agree on the context's */
        pl.comm = ctx->comm;
        if (!rc)
            rc = core_err(ctx, PASSION_ENOMEM, "exchange: communicator");
    }
    if (!rc && !state)
        rc = core_err(ctx, PASSION_ENOMEM, "exchange: context state");
    if (!rc && (alg < PASSION_XCHG_AUTO || alg > PASSION_XCHG_FOURSTAGE_NB))
        rc = core_err(ctx, PASSION_EINVAL, "unknown exchange algorithm %d",
                      alg);
    if (!rc && radix != 0 && (radix < 2 || radix > rmax))
        rc = core_err(ctx, PASSION_EINVAL, "radix %d outside 2..%d", radix,
                      rmax);
    if (!rc) {
        pl.sbuf = a->sendbuf;
        pl.rbuf = a->recvbuf;
        pl.block = a->block;
        pl.sc = a->sendcounts;
        pl.sd = a->sdispls;
        pl.rc = a->recvcounts;
        pl.rd = a->rdispls;
        rc = local_scan(&pl, &L);
    }
    int ready = coll_xchg_costs_ready(ctx, &costs);
    int need_costs =
        alg == PASSION_XCHG_AUTO || (alg == PASSION_XCHG_INDEX && !radix);
    if (!rc && alg == PASSION_XCHG_INDEX && L.block < 0)
        rc = core_err(ctx, PASSION_EINVAL,
                      "index exchange needs equal counts to every rank");
    if (!rc && need_costs && !ready) {
        calib = core_malloc(ctx, (size_t)coll_calib_bytes(P));
        if (!calib)
            rc = core_err(ctx, PASSION_ENOMEM, "exchange calibration");
    }
    int guess = -1, guess_radix = 0;
    if (!rc && alg != PASSION_XCHG_AUTO) {
        guess = alg;
        guess_radix = radix;
        if (alg == PASSION_XCHG_INDEX && !radix) {
            coll_xchg_shape s = coll_shape_regular(P, L.block);
            if (ready)
                coll_xchg_model(&costs, alg, 0, &s, &guess_radix);
            else
                guess = -1;
        }
    } else if (!rc && ready) {
        /* regular: the shape is known here; irregular: this rank's view
           of it, which the agreement may correct */
        coll_xchg_shape s = coll_shape_regular(P, L.block);
        if (L.block < 0) {
            s.block = -1;
            s.lmax = L.lout > L.lin ? L.lout : L.lin;
            s.lmax_x = L.lout_x > L.lin_x ? L.lout_x : L.lin_x;
            s.mmax = L.mmax;
            s.total = L.total_x * P;
        }
        coll_xchg_choice ch =
            choose(state, &costs, &s, ctx->opt.memory_budget);
        guess = ch.alg;
        guess_radix = ch.radix;
    }
    if (!rc && !predict)
        rc = prepare(&pl, &L, guess, guess_radix);

    /* 2. agreement, with A1's data when A1 is the guess */
    int64_t v[V_N];
    v[V_CHECK] = (int64_t)L.check;
    v[V_TOTAL] = L.total_x;
    v[V_FAIL] = rc ? 1 : 0;
    v[V_ALG] = alg;
    v[V_NALG] = -alg;
    v[V_RADIX] = radix;
    v[V_NRADIX] = -radix;
    v[V_MODE] = a->block >= 0;
    v[V_NMODE] = -(a->block >= 0);
    v[V_READY] = ready;
    v[V_NREADY] = -ready;
    v[V_BLOCK] = L.block;
    v[V_NBLOCK] = -L.block;
    v[V_LMAX] = L.lout > L.lin ? L.lout : L.lin;
    v[V_LMAX_X] = L.lout_x > L.lin_x ? L.lout_x : L.lin_x;
    v[V_MMAX] = L.mmax;
    v[V_NBUDGET] = -ctx->opt.memory_budget;
    v[V_GUESS] = guess;
    v[V_NGUESS] = -guess;
    v[V_GRADIX] = guess_radix;
    v[V_NGRADIX] = -guess_radix;
    int arc;
    if (P > 1 && P <= COLL_A2A_MAX) {
        /* on the stack: a rank must never miss the round for want of
           memory (its peers would wait for its headers) */
        x = &xround;
        memset(x, 0, sizeof *x);
        int a1ish = alg == PASSION_XCHG_A1 || alg == PASSION_XCHG_AUTO;
        x->posted = !rc && !predict && a1ish;
        x->spec = x->posted && guess == PASSION_XCHG_A1;
        int64_t w[V_N];
        arc = round_start(&pl, x, v, V_NSUM, w);
        memcpy(v, w, sizeof v);
    } else {
        arc = P > 1 ? coll_allreduce(pl.comm, v, V_N, V_NSUM) : PASSION_OK;
    }
    if (arc) {
        rc = core_err(ctx, arc, "exchange: argument agreement failed");
        goto out;
    }
    if (v[V_FAIL]) {
        rc = core_agree(ctx, rc);
        goto out;
    }
    if (v[V_ALG] != -v[V_NALG] || v[V_RADIX] != -v[V_NRADIX]) {
        rc = core_err(ctx, PASSION_EMISMATCH,
                      "ranks passed different exchange algorithms or radix");
        goto out;
    }
    if (v[V_MODE] != -v[V_NMODE] || v[V_READY] != -v[V_NREADY]) {
        rc = core_err(ctx, PASSION_EMISMATCH,
                      "ranks mix alltoall and alltoallv, or have different "
                      "cost options");
        goto out;
    }
    if (v[V_CHECK] != 0) {
        rc = core_err(ctx, PASSION_EMISMATCH,
                      "send counts do not match the receive counts of "
                      "their destinations");
        goto out;
    }
    coll_xchg_shape shape;
    memset(&shape, 0, sizeof shape);
    shape.procs = P;
    shape.block = v[V_BLOCK] == -v[V_NBLOCK] ? v[V_BLOCK] : -1;
    shape.lmax = v[V_LMAX];
    shape.lmax_x = v[V_LMAX_X];
    shape.mmax = v[V_MMAX];
    shape.total = v[V_TOTAL];
    int64_t budget = -v[V_NBUDGET];
    if (alg == PASSION_XCHG_INDEX && shape.block < 0) {
        rc = core_err(ctx, PASSION_EINVAL,
                      "index exchange needs equal counts on every rank");
        goto out;
    }

    /* 3. costs, choice */
    if (need_costs && !ready) {
        if (x)
            round_finish(&pl, x, 0);
        x = NULL;
        rc = coll_xchg_calibrate(ctx, calib, &costs);
        if (rc)
            goto out;
        state->calibrated = 1;
        state->costs = costs;
        ctx->msg_calibrated = 1;
        ctx->msg_alpha = costs.round + costs.msg;
        ctx->msg_beta = costs.byte;
        ready = 1;
    }
    int run = alg, run_radix = radix;
    if (alg == PASSION_XCHG_AUTO) {
        coll_xchg_choice ch = choose(state, &costs, &shape, budget);
        run = ch.alg;
        run_radix = ch.radix;
    } else if (alg == PASSION_XCHG_INDEX && !radix) {
        coll_xchg_model(&costs, alg, 0, &shape, &run_radix);
    }
    if (run == PASSION_XCHG_INDEX && run_radix > P)
        run_radix = P;
    if (alg != PASSION_XCHG_AUTO && alg != PASSION_XCHG_INDEX &&
        staging_need(run, run_radix, &shape) > budget) {
        rc = core_err(ctx, PASSION_ENOMEM,
                      "exchange %s needs about %lld staging bytes, budget "
                      "%lld",
                      coll_xchg_name(run),
                      (long long)staging_need(run, run_radix, &shape),
                      (long long)budget);
        goto out;
    }
    if (predict) {
        predict->alg = run;
        predict->radix = run == PASSION_XCHG_INDEX ? run_radix : 0;
        predict->seconds =
            coll_xchg_model(&costs, run, run_radix, &shape, NULL);
        goto out;
    }
    pl.shape = shape;
    pl.costs = costs;
    pl.radix = run_radix;
    pl.st.alg = run;
    pl.st.radix = run == PASSION_XCHG_INDEX ? run_radix : 0;
    if (ready)
        pl.st.predicted = coll_xchg_model(&costs, run, run_radix, &shape,
                                          NULL);
    /* A1 ends in the round that carried the agreement */
    if (x && x->posted && run == PASSION_XCHG_A1) {
        rc = round_finish(&pl, x, 1);
        x = NULL;
        goto out;
    }
    if (x) {
        round_finish(&pl, x, 0);
        x = NULL;
    }
    /* the guesses of step 1 may differ between ranks (budgets): then
       every rank prepares again */
    if (v[V_GUESS] != -v[V_NGUESS] || v[V_GRADIX] != -v[V_NGRADIX] ||
        run != guess || run_radix != guess_radix) {
        unprepare(&pl);
        rc = agree_flag(&pl, prepare(&pl, &L, run, run_radix));
        if (rc)
            goto out;
    }

    /* 4. run */
    const coll_xchg_ops *ops = coll_xchg_ops_get(run);
    rc = ops->run(&pl);
    if (ops->agree_after)
        rc = agree_flag(&pl, rc);

out:
    if (x) {
        round_finish(&pl, x, 0);
        x = NULL;
    }
    unprepare(&pl);
    core_free(ctx, pl.req);
    core_free(ctx, calib);
    pl.st.seconds = core_now() - t0;
    if (!predict) {
        ctx->cnt.messages_sent += (uint64_t)pl.st.messages;
        ctx->cnt.bytes_sent += (uint64_t)pl.st.bytes_sent;
        ctx->cnt.rounds += (uint64_t)pl.st.rounds;
        ctx->cnt.t_comm += pl.st.seconds;
        if (state)
            state->last = pl.st;
        if (a->stats)
            *a->stats = pl.st;
    }
    return rc;
}

int coll_exchange(passion_ctx *ctx, const coll_xchg_args *args)
{
    if (!ctx || !args)
        return PASSION_EINVAL;
    return exchange_call(ctx, args, PASSION_OK, NULL);
}

int coll_xchg_predict(passion_ctx *ctx, const coll_xchg_args *args,
                      coll_xchg_choice *out)
{
    if (!ctx || !args || !out)
        return PASSION_EINVAL;
    coll_xchg_args a = *args;
    if (a.alg == PASSION_XCHG_DEFAULT)
        a.alg = PASSION_XCHG_AUTO;
    return exchange_call(ctx, &a, PASSION_OK, out);
}

/* ------------------------------------------------------------ public API */

static int type_bytes(passion_ctx *ctx, MPI_Datatype t, int64_t *es)
{
    *es = 0;
    if (t == MPI_DATATYPE_NULL)
        return core_err(ctx, PASSION_EINVAL, "exchange: MPI_DATATYPE_NULL");
    MPI_Count size, lb, ext, tlb, text;
    if (MPI_Type_size_x(t, &size) != MPI_SUCCESS ||
        MPI_Type_get_extent_x(t, &lb, &ext) != MPI_SUCCESS ||
        MPI_Type_get_true_extent_x(t, &tlb, &text) != MPI_SUCCESS ||
        size == MPI_UNDEFINED)
        return core_err(ctx, PASSION_EMPI, "exchange: datatype query");
    if (lb != 0 || ext != size || tlb != 0 || text != size)
        return core_err(ctx, PASSION_ENOTSUP,
                        "exchange: datatype not contiguous (size %lld, "
                        "extent %lld)",
                        (long long)size, (long long)ext);
    *es = (int64_t)size;
    return PASSION_OK;
}

int passion_alltoall(passion_ctx *ctx, const void *sendbuf, void *recvbuf,
                     int64_t count, MPI_Datatype type, passion_xchg alg,
                     int radix)
{
    if (!ctx)
        return PASSION_EINVAL;
    core_enter(ctx);
    int64_t es = 0, block = 0;
    int rc = type_bytes(ctx, type, &es);
    if (!rc && count < 0)
        rc = core_err(ctx, PASSION_EINVAL, "alltoall: negative count");
    if (!rc && !core_mul(count, es, &block))
        rc = core_err(ctx, PASSION_EOVERFLOW, "alltoall: count overflows");
    coll_xchg_args a;
    memset(&a, 0, sizeof a);
    a.sendbuf = sendbuf;
    a.recvbuf = recvbuf;
    a.block = rc ? 0 : block;
    a.alg = alg;
    a.radix = radix;
    return exchange_call(ctx, &a, rc, NULL);
}

int passion_alltoallv(passion_ctx *ctx, const void *sendbuf,
                      const int64_t *sendcounts, const int64_t *sdispls,
                      void *recvbuf, const int64_t *recvcounts,
                      const int64_t *rdispls, MPI_Datatype type,
                      passion_xchg alg, int radix)
{
    if (!ctx)
        return PASSION_EINVAL;
    core_enter(ctx);
    int P = ctx->size;
    int64_t es = 0;
    int rc = type_bytes(ctx, type, &es);
    int64_t *b = core_calloc(ctx, 4 * (size_t)P, sizeof *b);
    if (!rc && !b)
        rc = core_err(ctx, PASSION_ENOMEM, "alltoallv: count arrays");
    if (!rc && (!sendcounts || !sdispls || !recvcounts || !rdispls))
        rc = core_err(ctx, PASSION_EINVAL, "alltoallv: NULL count array");
    for (int j = 0; j < P && !rc; j++) {
        const int64_t in[4] = {sendcounts[j], sdispls[j], recvcounts[j],
                               rdispls[j]};
        for (int k = 0; k < 4 && !rc; k++) {
            if (in[k] < 0)
                rc = core_err(ctx, PASSION_EINVAL,
                              "alltoallv: negative count or displacement "
                              "for rank %d",
                              j);
            else if (!core_mul(in[k], es, &b[k * P + j]))
                rc = core_err(ctx, PASSION_EOVERFLOW,
                              "alltoallv: bytes overflow for rank %d", j);
        }
    }
    coll_xchg_args a;
    memset(&a, 0, sizeof a);
    a.sendbuf = sendbuf;
    a.recvbuf = recvbuf;
    a.block = -1;
    if (rc && b)
        memset(b, 0, 4 * (size_t)P * sizeof *b);
    if (b) {
        a.sendcounts = b;
        a.sdispls = b + P;
        a.recvcounts = b + 2 * P;
        a.rdispls = b + 3 * P;
    } else {
        a.block = 0; /* take part with nothing */
    }
    a.alg = alg;
    a.radix = radix;
    rc = exchange_call(ctx, &a, rc, NULL);
    core_free(ctx, b);
    return rc;
}
