/*
 * etp_plan.c - the File Access Descriptor (thesis 6.3.1, step 1 of figure
 * 6.4): one MPI_Allgather of a few integers per dimension per rank (start,
 * count, stride, plus the method, the operation and the cost options, so
 * that a disagreement is seen by every rank at once), and the per-rank
 * transfer plans built from it. The learned figures the FAD carries are
 * each their own file's (etp_sync.c, etp_fixed.c, etp_stream.c,
 * etp_early.c); the overlap tests are etp_overlap.c's, the file costs
 * etp_filecost.c's.
 *
 * Invariants: after coll_plan_init every rank holds identical fad, x[],
 * elems[], lo/hi and overlap flags; a rank whose arguments failed took
 * part with an empty section and every rank returned its code; the plan's
 * memory is O(ranks x dimensions), counted as staging.
 */
#include "coll.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* the words every rank sends in the FAD, whatever its array's dimensions
   (a rank may pass another array: found in the FAD) */
#define FAD_W (COLL_FAD_HEAD + 3 * PASSION_MAX_DIMS)

/* the rounds' cursors and vectors (etp.c), per rank */
int64_t coll_etp_desc_bytes(int P)
{
    return (int64_t)P * 13 * 8 +
           (int64_t)P * (int64_t)(sizeof(coll_cur) + sizeof(coll_vec));
}

/* the access descriptions' receive buffer of a rank that could not
   allocate its own (see coll_plan_init) */
#define FAD_STACK 32768

static int64_t dbits(double v)
{
    int64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

/*
 * The per-round limits: the stage holds 2x bytes, each exchange buffer x
 * (at most three at once: two send buffers and one receive buffer for
 * reads, the other way round for writes), and the exchange holds its own
 * staging for a round in which no rank sends or receives more than x
 * bytes (coll_xchg_need; for auto none, unless on several nodes the
 * candidate priced cheapest on its own rounds runs: coll_xchg_pick in
 * etp_model.c); all within what the descriptors leave of the
 * budget, so that the budget bounds the whole call. The same on every
 * rank (the budget and the exchange option are checked equal in the
 * FAD). x = 0 (a budget that cannot hold the descriptors) makes the
 * schedule fail with PASSION_ENOMEM on every rank.
 */
int64_t coll_plan_desc_bytes(int P, int nd)
{
    /* every rank sends words for PASSION_MAX_DIMS dimensions, whatever nd
       (see coll_plan_init) */
    (void)nd;
    int64_t W = COLL_FAD_HEAD + 3 * (int64_t)PASSION_MAX_DIMS;
    return ((int64_t)P * W + 5 * (int64_t)P) * 8 +
           (int64_t)P * (int64_t)sizeof(ocad_xfer) + coll_etp_desc_bytes(P);
}

void coll_plan_caps_alg(coll_plan *p, int64_t M, int alg)
{
    /* the search below depends on M, P and the algorithm alone: the last
       call's result when they are the same (the search, about forty
       evaluations of the exchange's staging, would weigh on a tiny
       call) */
    coll_ext *e = p->ctx->ext[CORE_EXT_COLL];
    if (e && e->caps_P == p->P && e->caps_M == M && e->caps_alg == alg) {
        p->cap_xchg = e->caps_xchg;
        p->cap_stage = 2 * e->caps_xchg;
        return;
    }
    int64_t left = M - coll_plan_desc_bytes(p->P, p->nd);
    int64_t lo = 0, hi = left > 0 ? left / 5 : 0;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (5 * mid + coll_xchg_need(alg, p->P, mid) <= left)
            lo = mid;
        else
            hi = mid - 1;
    }
    p->cap_xchg = lo;
    p->cap_stage = 2 * lo;
    if (e) {
        e->caps_P = p->P;
        e->caps_M = M;
        e->caps_alg = alg;
        e->caps_xchg = lo;
    }
}

static void plan_caps(coll_plan *p, int64_t M)
{
    coll_plan_caps_alg(p, M, p->ctx->opt.exchange);
}

/* Step 1: the plan's fixed fields, everything else zero. */
static void plan_start(coll_plan *p, passion_file *f, int method,
                       int op_write)
{
    passion_ctx *ctx = f->ctx;
    memset(p, 0, sizeof *p);
    p->ctx = ctx;
    p->f = f;
    p->P = ctx->size;
    p->me = ctx->rank;
    p->op_write = op_write;
    p->method = method;
    p->nd = f->a->nd;
    p->esize = f->a->esize;
    p->xalg = PASSION_XCHG_DEFAULT;
}

/*
 * Step 2: the descriptors' memory, the per-round limits and, for the
 * methods that run rounds, the rounds' reserved address space. A budget
 * that cannot hold the descriptors: this rank still takes part in the FAD
 * allgather (with memory outside the budget, held only for this failing
 * call) and every rank returns ENOMEM. Returns the memory (NULL: none, a
 * code in *rc).
 */
static char *plan_desc_alloc(coll_plan *p, int *rc)
{
    passion_ctx *ctx = p->ctx;
    const int P = p->P;
    int64_t words = (int64_t)P * FAD_W + 5 * (int64_t)P;
    p->bytes_desc = words * 8 + (int64_t)P * (int64_t)sizeof(ocad_xfer);
    /* (coll_plan_desc_bytes adds the rounds' descriptors to these) */
    char *mem;
    if (p->bytes_desc > ctx->opt.memory_budget) {
        if (!*rc)
            *rc = core_err(ctx, PASSION_ENOMEM,
                           "memory budget %lld bytes cannot hold the %lld "
                           "bytes of access descriptors of %d ranks",
                           (long long)ctx->opt.memory_budget,
                           (long long)p->bytes_desc, P);
        mem = malloc((size_t)p->bytes_desc);
        p->desc_uncounted = 1;
    } else {
        mem = core_stage_alloc(ctx, p->bytes_desc);
    }
    if (!mem && !*rc)
        *rc = core_err(ctx, PASSION_ENOMEM,
                       "%lld bytes of access descriptors",
                       (long long)p->bytes_desc);
    int64_t M = ctx->opt.memory_budget;
    plan_caps(p, M);
    if (!*rc && (p->method == PASSION_METHOD_AUTO ||
                 p->method == PASSION_METHOD_ETP_STATIC ||
                 p->method == PASSION_METHOD_ETP_DYNAMIC)) {
        p->reserve = coll_reserve_get(ctx, p->cap_stage + 4 * p->cap_xchg +
                                               7 * 4096 +
                                               coll_etp_desc_bytes(P));
        if (!p->reserve)
            *rc = core_err(ctx, PASSION_ENOMEM,
                           "reserving %lld bytes of address space for the "
                           "rounds", (long long)(M + M / 5));
    }
    if (mem) {
        p->fad = (int64_t *)mem;
        p->elems = p->fad + (int64_t)P * FAD_W;
        p->dlo = p->elems + P;
        p->dhi = p->dlo + P;
        p->scratch = p->dhi + P;
        p->byext = p->scratch + P;
        p->x = (ocad_xfer *)(p->byext + P);
    }
    return mem;
}

/* Step 3: this rank's FAD words: its outcome so far, the options that
   must agree, what it did before the FAD, what it learned, its section
   (none where it failed). */
static void fad_mine(const coll_plan *p, const passion_section *s, int rc,
                     const coll_early *early, int64_t *mine)
{
    passion_ctx *ctx = p->ctx;
    passion_file *f = p->f;
    memset(mine, 0, FAD_W * sizeof *mine);
    mine[COLL_FAD_RC] = rc;
    mine[COLL_FAD_METHOD] = p->method;
    mine[COLL_FAD_OP] = p->op_write;
    mine[COLL_FAD_BUDGET] = ctx->opt.memory_budget;
    mine[COLL_FAD_XCHG] = ctx->opt.exchange;
    mine[COLL_FAD_LAT] = dbits(ctx->opt.io_latency);
    mine[COLL_FAD_BW] = dbits(ctx->opt.io_bandwidth);
    mine[COLL_FAD_ALPHA] = dbits(ctx->opt.msg_alpha);
    mine[COLL_FAD_BETA] = dbits(ctx->opt.msg_beta);
    mine[COLL_FAD_FILE] = f->ident[0];
    mine[COLL_FAD_LAYOUT] = f->ident[1];
    coll_early none = {-1, 0, 0};
    mine[COLL_FAD_CACHED] = coll_early_word(rc ? &none : early);
    mine[COLL_FAD_STRIPE] = ctx->opt.stripe_size > 0 ? ctx->opt.stripe_size
                                                      : core_io_stripe(f->fh);
    /* the last round's timing (the state is made here: a rank without it
       sends 0, and no rank learns from this round) */
    mine[COLL_FAD_SYNC] = coll_sync_word(ctx);
    /* this rank's learned cost of a cached read request (0: none) */
    mine[COLL_FAD_REQ] = dbits(ocad_req_cost(ctx));
    /* and of each method's fixed cost (-1: none) */
    mine[COLL_FAD_FIXED] = coll_fixed_word(ctx);
    /* and its long reads in the last uncached call (coll_stream_note) */
    mine[COLL_FAD_STREAM] = coll_stream_word(ctx);
    const int nd = p->nd;
    if (!rc)
        for (int d = 0; d < nd; d++) {
            mine[COLL_FAD_HEAD + d] = s->start[d];
            mine[COLL_FAD_HEAD + nd + d] = s->count[d];
            mine[COLL_FAD_HEAD + 2 * nd + d] = s->stride[d];
        }
}

/* Step 4: the allgather of the FAD into fad, then what every rank learns
   from it (the round's cost, the long reads' bandwidth). Returns 0, or 1
   when the call ends here with the agreed code in *code. */
static int fad_exchange(coll_plan *p, const int64_t *mine, int64_t *fad,
                        int *code)
{
    passion_ctx *ctx = p->ctx;
    CORE_CHAOS(FAD_BEFORE);
    double t0 = core_now();
    MPI_Request req;
    int mrc = MPI_Iallgather(mine, FAD_W, MPI_INT64_T, fad, FAD_W,
                             MPI_INT64_T, ctx->comm, &req) != MPI_SUCCESS ||
              coll_waitall(1, &req);
    double t1 = core_now();
    ctx->cnt.t_comm += t1 - t0;
    ctx->cnt.rounds++;
    if (mrc) {
        *code = core_agree(ctx, core_err(ctx, PASSION_EMPI,
                                         "MPI_Iallgather of the FAD"));
        return 1;
    }
    CORE_CHAOS(FAD_AFTER);
    coll_sync_learn(ctx, fad, FAD_W, t0, t1);
    coll_stream_learn(ctx, fad, FAD_W);
    return 0;
}

/* Step 5: a rank failed, or the ranks disagree on what must agree.
   Returns 0, or 1 when the call ends here with the agreed code in
   *code. */
static int fad_check(const coll_plan *p, int rc, int *code)
{
    passion_ctx *ctx = p->ctx;
    const int P = p->P;
    int anybad = 0;
    for (int r = 0; r < P; r++)
        anybad |= p->fad[(int64_t)r * FAD_W + COLL_FAD_RC] != 0;
    if (anybad) {
        *code = core_agree(ctx, rc);
        return 1;
    }
    for (int r = 1; r < P; r++)
        for (int w = COLL_FAD_METHOD; w < COLL_FAD_AGREE_END; w++)
            if (p->fad[(int64_t)r * FAD_W + w] != p->fad[w]) {
                static const char *what[] = {"", "methods", "operations",
                                             "memory budgets",
                                             "exchange options",
                                             "io_latency options",
                                             "io_bandwidth options",
                                             "msg_alpha options",
                                             "msg_beta options",
                                             "files (paths)",
                                             "arrays (shape, element size, "
                                             "storage order or data "
                                             "offset)"};
                /* every rank finds it (the FAD is the same everywhere):
                   agreed, so that every rank has rank 0's detail */
                *code = core_agree(
                    ctx, core_err(ctx, PASSION_EMISMATCH,
                                  "ranks 0 and %d passed different %s to "
                                  "a collective section access",
                                  r, what[w]));
                return 1;
            }
    return 0;
}

/* Step 6: rank 0's stripe size as the domains' alignment, and every
   rank's element count. Returns 1 when every rank's read was done before
   the FAD (coll_io_early), else 0. */
static int plan_elems(coll_plan *p)
{
    const int P = p->P, nd = p->nd;
    /* rank 0's stripe size, so that every rank aligns alike */
    p->align = p->fad[COLL_FAD_STRIPE];
    if (p->align < 1 || p->align > (1LL << 30))
        p->align = 4096;
    int all_early = p->method != PASSION_METHOD_ETP_STATIC &&
                    p->method != PASSION_METHOD_ETP_DYNAMIC;
    for (int r = 0; r < P; r++) {
        const int64_t *e = p->fad + (int64_t)r * FAD_W + COLL_FAD_HEAD;
        int64_t n = 1;
        int empty = 0;
        for (int d = 0; d < nd; d++)
            empty |= e[nd + d] == 0;
        /* validated: the product of a non-empty section's counts fits; an
           empty one may hold any count elsewhere */
        for (int d = 0; d < nd && !empty; d++)
            n *= e[nd + d];
        p->elems[r] = empty ? 0 : n;
        all_early = all_early && coll_early_done(p, r);
    }
    return all_early;
}

/* Step 7: every rank's transfer plan from its FAD section, the union's
   bytes [lo, hi), and this rank's plan with its memory side. */
static void plan_extents(coll_plan *p, const passion_section *s,
                         const passion_memspec *m)
{
    passion_file *f = p->f;
    const int P = p->P, nd = p->nd;
    /* a rank whose read was done before the FAD has its data: it takes
       part in the rest of the call with nothing, so that the model
       prices only the other ranks' access and the two-phase method
       neither reads its bytes again nor sends them to it. The flags are
       in the FAD: every rank sees the same sections. */
    if (!p->op_write)
        for (int r = 0; r < P; r++)
            if (coll_early_done(p, r))
                p->elems[r] = 0;
    p->lo = INT64_MAX;
    p->hi = INT64_MIN;
    for (int r = 0; r < P; r++) {
        const int64_t *e = p->fad + (int64_t)r * FAD_W + COLL_FAD_HEAD;
        passion_section sec;
        memset(&sec, 0, sizeof sec);
        for (int d = 0; d < nd; d++) {
            sec.start[d] = e[d];
            sec.count[d] = e[nd + d];
            sec.stride[d] = e[2 * nd + d];
        }
        int64_t n = p->elems[r];
        ocad_xfer_build(&f->fv, &sec, NULL, &p->x[r]);
        if (n > 0) {
            if (p->x[r].foff0 < p->lo)
                p->lo = p->x[r].foff0;
            if (p->x[r].fend > p->hi)
                p->hi = p->x[r].fend;
        }
    }
    if (p->lo > p->hi)
        p->lo = p->hi = f->fv.base;
    if (p->elems[p->me] > 0)
        ocad_xfer_build(&f->fv, s, m, &p->xme);
}

/* Step 8: the page-cache probe's verdict (memory-like costs when the
   ranks found nearly all their data cached), then the file's
   calibration where it is due. */
static void plan_probe(coll_plan *p)
{
    int64_t cached = 0, probed = 0;
    for (int r = 0; r < p->P; r++) {
        int64_t c = coll_early_cached(p, r);
        if (c >= 0) {
            cached += c;
            probed++;
        }
    }
    p->warm = probed > 0 && cached >= 950 * probed;
    p->cached_pm = probed > 0 ? (int)(cached / probed) : 1000;
    coll_file_measure(p, probed);
}

/* Step 9: the file costs of this call (options, else memory-like when
   the data is cached, else measured, else the defaults), the methods'
   fixed costs and the readahead's ramp; the same on every rank (from
   the FAD). */
static void plan_costs(coll_plan *p)
{
    passion_ctx *ctx = p->ctx;
    const int P = p->P;
    /* a cached read request: the slowest rank's learned cost */
    double req_cost = 0;
    for (int r = 0; r < P; r++) {
        double v;
        int64_t b = p->fad[(int64_t)r * FAD_W + COLL_FAD_REQ];
        memcpy(&v, &b, sizeof v);
        req_cost = v > req_cost ? v : req_cost;
    }
    p->env = coll_call_env(ctx, p->warm, req_cost, p->op_write);
    /* the methods' fixed costs: the largest learned and the fewest
       samples (a rank that could not learn has none) */
    for (int c = 0; c < COLL_FIX_N; c++) {
        int64_t ns = 0, n = COLL_FIXED_KEEP;
        for (int r = 0; r < P; r++) {
            uint64_t w =
                (uint64_t)p->fad[(int64_t)r * FAD_W + COLL_FAD_FIXED] >>
                (32 * c);
            int64_t rn = (int64_t)((w >> 24) & 0xff),
                    rv = (int64_t)(w & 0xffffff);
            n = rn < n ? rn : n;
            ns = rv > ns ? rv : ns;
        }
        p->fixed[c] = n > 0 ? (double)ns * 1e-9 : -1;
        p->fixed_n[c] = (int)n;
    }
    p->io_lat = p->env.lat;
    p->io_bw = p->env.bw;
    /* the readahead's ramp (coll_stream_rate): on uncached data, where
       the calls' own streams were longer than the calibration's and
       faster, with the calibration's rate in use (no io_bandwidth
       option) */
    p->ramp_short = p->ramp_long = 0;
    p->bw_long = 0;
    coll_ext *e = ctx->ext[CORE_EXT_COLL];
    if (!p->warm && p->io_bw == (e ? e->file_bw : -1))
        coll_stream_ramp(ctx, &p->ramp_short, &p->ramp_long, &p->bw_long);
    double h = p->io_lat * p->io_bw;
    p->hole = h > (double)(INT64_MAX / 4) ? INT64_MAX / 4 : (int64_t)h;
}

int coll_plan_init(coll_plan *p, passion_file *f, const passion_section *s,
                   const passion_memspec *m, int method, int op_write, int rc,
                   const coll_early *early)
{
    passion_ctx *ctx = f->ctx;
    plan_start(p, f, method, op_write);
    char *mem = plan_desc_alloc(p, &rc);
    int64_t mine[FAD_W];
    fad_mine(p, s, rc, early, mine);
    /* A rank without the descriptors' memory still takes part in the
       allgather, into a buffer on the stack, and fails in the agreement
       after it like any other rank. Past FAD_STACK bytes (hundreds of
       ranks) the ranks agree on the allocation first: one more round. */
    int64_t fad_stack[FAD_STACK / 8];
    int64_t *fad = (int64_t *)mem;
    if ((int64_t)p->P * FAD_W * 8 > FAD_STACK) {
        int arc = core_agree(ctx, rc);
        if (arc)
            return arc;
    } else if (!mem) {
        fad = fad_stack;
    }
    int code;
    if (fad_exchange(p, mine, fad, &code))
        return code;
    if (!mem)
        return core_agree(ctx, rc);
    if (fad_check(p, rc, &code))
        return code;
    /* every rank's read was done before the FAD (coll_io_early; a
       write's only where no rank has elements): the call ends here
       (section_all), with nothing more to plan. The calibration is not
       needed either: a rank reads early only on cached data or once the
       file's costs are measured */
    if (plan_elems(p))
        return PASSION_OK;
    plan_extents(p, s, m);
    coll_plan_overlap(p);
    plan_probe(p);
    plan_costs(p);
    return PASSION_OK;
}

void coll_plan_free(coll_plan *p)
{
    if (p->fad && p->desc_uncounted)
        free(p->fad);
    else if (p->fad)
        core_stage_free(p->ctx, p->fad, p->bytes_desc);
    p->fad = NULL;
    p->reserve = NULL; /* the context's, kept for the next call */
}
