/*
 * sieve.c - independent access to a section of a file: the direct method
 * (one request per contiguous run) and data sieving (thesis 5.5.1: read the
 * covering extent in chunks that fit the memory budget, pick out the wanted
 * elements; writes read-modify-write, without the read when a chunk is
 * fully covered), plus the cost-aware variant that `auto` may choose.
 *
 * All three are one algorithm with a hole limit h: a window starts at a
 * block and takes the following blocks while the window stays within the
 * budget and no gap before a block exceeds h. h = 0 never merges (direct),
 * h = infinity is the thesis's sieve, h = L*B (bytes readable in one
 * request latency) skips a hole exactly when skipping is cheaper. A window
 * of a single block moves straight between the file and the caller's
 * memory, so no run is ever staged for nothing.
 *
 * Invariants: staging never exceeds the memory budget (a block larger than
 * the budget is moved without staging); file bytes outside the section are
 * written only with the values just read from them.
 */
#include "ocad.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Defaults of the file cost model when the options give none: a disk-like
   file (out-of-core data is mostly not in the page cache): 100 us per
   request, 600 MB/s, so holes up to 60 KB are read rather than skipped. */
#define SIEVE_DEFAULT_LATENCY 1e-4
#define SIEVE_DEFAULT_BANDWIDTH 6e8

ocad_env ocad_env_ctx(const passion_ctx *ctx)
{
    ocad_env e;
    e.lat = ctx->opt.io_latency > 0 ? ctx->opt.io_latency
                                    : SIEVE_DEFAULT_LATENCY;
    e.bw = ctx->opt.io_bandwidth > 0 ? ctx->opt.io_bandwidth
                                     : SIEVE_DEFAULT_BANDWIDTH;
    e.budget = ctx->opt.memory_budget > 0 ? ctx->opt.memory_budget : 1;
    e.conc = 0;
    e.warm = 0;
    return e;
}

int ocad_env_conc(const passion_ctx *ctx, const ocad_env *env)
{
    return env && env->conc > 0 ? env->conc : core_io_concurrency(ctx);
}

static void ext_free(passion_ctx *ctx, void *ext)
{
    core_free(ctx, ext);
}

const ocad_ext *ocad_ext_of(const passion_ctx *ctx)
{
    return ctx->ext[CORE_EXT_OCAD];
}

static ocad_ext *ext_get(passion_ctx *ctx)
{
    return core_ext_get(ctx, CORE_EXT_OCAD, sizeof(ocad_ext), NULL,
                        ext_free);
}

void ocad_req_learn(passion_ctx *ctx, double seconds)
{
    ocad_ext *e = ext_get(ctx);
    if (!e)
        return;
    seconds = seconds < 1e-7 ? 1e-7 : seconds > 1e-3 ? 1e-3 : seconds;
    e->req_warm[e->req_warm_i] = seconds;
    e->req_warm_i = (e->req_warm_i + 1) % OCAD_LEARN_KEEP;
    if (e->req_warm_n < OCAD_LEARN_KEEP)
        e->req_warm_n++;
    /* computed here, not at every call that prices requests (each
       collective call asks twice) */
    e->req_warm_med = core_learned(e->req_warm, e->req_warm_n);
}

/* Setting 0 (auto: none yet; no prediction) where the state does not
   exist changes nothing and allocates nothing, so that a call's first
   allocations stay those of its own work. */
void ocad_last_method(passion_ctx *ctx, int method)
{
    ocad_ext *e = method || ctx->ext[CORE_EXT_OCAD] ? ext_get(ctx) : NULL;
    if (e)
        e->last_method = method;
}

void ocad_last_predicted(passion_ctx *ctx, double predicted)
{
    ocad_ext *e = predicted != 0 || ctx->ext[CORE_EXT_OCAD] ? ext_get(ctx)
                                                            : NULL;
    if (e)
        e->last_predicted = predicted;
}

int passion_ctx_last_method(const passion_ctx *ctx, passion_method *method,
                            double *predicted)
{
    if (!ctx)
        return PASSION_EINVAL;
    const ocad_ext *e = ctx->ext[CORE_EXT_OCAD];
    if (method)
        *method = (passion_method)(e ? e->last_method : 0);
    if (predicted)
        *predicted = e ? e->last_predicted : 0;
    return PASSION_OK;
}

double ocad_req_cost(const passion_ctx *ctx)
{
    const ocad_ext *e = ctx->ext[CORE_EXT_OCAD];
    return e && e->req_warm_n > 0 ? e->req_warm_med : 0;
}

void ocad_req_calibrate(passion_ctx *ctx, core_fh *fh, int64_t lo,
                        int64_t hi, int64_t blen)
{
    /* only drivers that calibrate (posix: measure): the fault driver's
       requests are counted to inject failures */
    if (ocad_req_cost(ctx) > 0 || !fh || !fh->ops->measure || fh->align > 1 ||
        hi <= lo)
        return;
    enum { N = OCAD_CALIB_READS, MAX = OCAD_CALIB_MAX };
    char buf[N * MAX];
    int64_t len = blen < 1 ? 1 : blen > MAX ? MAX : blen;
    if (len > hi - lo)
        len = hi - lo;
    core_iov v[N];
    double t[OCAD_CALIB_TRIES];
    /* outside the counters, as the file-cost calibration */
    passion_counters keep = ctx->cnt;
    int rc = PASSION_OK, k = 0;
    /* try -1 warms up: the engine's first use (starting the ring) costs
       an order of magnitude more per request than the later tries, and
       is not what the calls will pay */
    for (int tr = -1; tr < OCAD_CALIB_TRIES && !rc; tr++) {
        for (int i = 0; i < N; i++)
            v[i] = (core_iov){buf + (size_t)i * MAX, len,
                              lo + (hi - lo - len) * i / (N - 1), 0};
        double t0 = core_now();
        rc = core_io_read_batch(fh, v, N);
        if (tr >= 0)
            t[k++] = (core_now() - t0) / N;
    }
    ctx->cnt = keep;
    if (rc) { /* a short or failed read: nothing learned, no error left */
        ctx->detail[0] = '\0';
        return;
    }
    /* the median try */
    for (int a = 1; a < k; a++)
        for (int b = a; b > 0 && t[b - 1] > t[b]; b--) {
            double c = t[b];
            t[b] = t[b - 1];
            t[b - 1] = c;
        }
    ocad_req_learn(ctx, t[k / 2] - (double)len / OCAD_COPY_BW);
    if (ctx->opt.verbosity >= 3)
        fprintf(stderr, "passion: cached read requests of %lld bytes "
                "measured: %.3g s each (the median of %d tries)\n",
                (long long)len, t[k / 2], k);
}

/* One window: from the iterator's block, as far as budget and holes let. */
typedef ocad_window window;

static window window_scan(ocad_iter *it, int64_t budget, int64_t hmax)
{
    const int64_t blen = it->x->blen;
    window w = {it->foff, it->foff, 0};
    while (it->left > 0) {
        int64_t vl = ocad_iter_vec_left(it), fst = ocad_iter_fstep(it);
        int64_t foff = it->foff;
        if (w.nblk > 0 && (foff - w.wend > hmax || foff + blen - w.w0 > budget))
            break;
        int64_t k = 1;
        if (vl > 1 && fst - blen <= hmax) {
            int64_t room = budget - blen - (foff - w.w0);
            k = room >= 0 ? room / fst + 1 : 1;
            if (k > vl)
                k = vl;
        }
        w.wend = foff + (k - 1) * fst + blen;
        w.nblk += k;
        ocad_iter_skip(it, k);
        if (k < vl)
            break;
    }
    return w;
}

/* Per-request latency as the model sees it: reads are kept in flight
   together (core_io_read_batch), so each costs L / concurrency (the
   env's: 1 for cached data, read by the CPU one after another). */
static double req_latency(const passion_ctx *ctx, const ocad_env *e,
                          int op_write)
{
    double L = e->lat;
    return op_write ? L : L / ocad_env_conc(ctx, e);
}

static int64_t hole_limit(const passion_ctx *ctx, const ocad_env *e,
                          int method, int op_write)
{
    switch (method) {
    case PASSION_METHOD_DIRECT: return -1;
    case PASSION_METHOD_SIEVE: return INT64_MAX / 4;
    default: {
        double h = req_latency(ctx, e, op_write) * e->bw;
        return h > (double)(INT64_MAX / 4) ? INT64_MAX / 4 : (int64_t)h;
    }
    }
}

/* Requests and bytes for hole limit h, by scanning windows (no I/O). */
static void count_windows(passion_ctx *ctx, const ocad_env *e,
                          const ocad_xfer *x, int64_t h, int op_write,
                          passion_plan_info *info)
{
    info->requests = 0;
    info->bytes_file = 0;
    if (h < 0) {
        info->requests = x->nblocks;
        info->bytes_file = x->nblocks * x->blen;
    } else {
        ocad_iter it;
        ocad_iter_begin(&it, x);
        while (it.left > 0) {
            window w = window_scan(&it, e->budget, h);
            int64_t len = w.wend - w.w0;
            int holes = w.nblk * x->blen < len;
            info->requests += (op_write && holes) ? 2 : 1;
            info->bytes_file += (op_write && holes) ? 2 * len : len;
        }
    }
    info->seconds = (double)info->requests * req_latency(ctx, e, op_write) +
                    (double)info->bytes_file / e->bw;
}

/* Runs: blocks that are not adjacent to the previous one in the file. */
static int64_t count_runs(const ocad_xfer *x)
{
    if (x->nblocks == 0)
        return 0;
    int64_t runs = 0;
    ocad_iter it;
    ocad_iter_begin(&it, x);
    int64_t prev_end = -1;
    while (it.left > 0) {
        int64_t vl = ocad_iter_vec_left(&it), fst = ocad_iter_fstep(&it);
        runs += it.foff == prev_end ? 0 : 1;
        if (vl > 1)
            runs += fst == x->blen ? 0 : vl - 1;
        prev_end = it.foff + (vl - 1) * fst + x->blen;
        ocad_iter_skip(&it, vl);
    }
    return runs;
}

/*
 * auto: the cheapest by the model among direct, sieve and the hole-limited
 * sieve; returns the hole limit to use (-1 = direct). info (or NULL): the
 * chosen plan's requests and bytes (count_windows), from the scan that
 * priced it, not a scan again: auto's model prices every rank's plan
 * (collective/etp_model.c), P plans per rank per call.
 */
static int64_t choose(passion_ctx *ctx, const ocad_env *e,
                      const ocad_xfer *x, int op_write, int method,
                      int *chosen, passion_plan_info *info)
{
    if (method == PASSION_METHOD_DIRECT || method == PASSION_METHOD_SIEVE ||
        x->nblocks <= 1) {
        /* one block: every candidate makes the one request of its bytes,
           and direct wins ties (as the loop below would find, without its
           three scans: a tiny call's cost) */
        *chosen = x->nblocks <= 1 && method != PASSION_METHOD_SIEVE
                      ? PASSION_METHOD_DIRECT
                      : method;
        int64_t h = hole_limit(ctx, e, *chosen, op_write);
        if (info)
            count_windows(ctx, e, x, h, op_write, info);
        return h;
    }
    static const int cand[3] = {PASSION_METHOD_DIRECT, PASSION_METHOD_SIEVE,
                                PASSION_METHOD_AUTO};
    passion_plan_info best = {0};
    int64_t bh = -1;
    *chosen = PASSION_METHOD_DIRECT;
    for (int i = 0; i < 3; i++) {
        passion_plan_info pi;
        int64_t h = hole_limit(ctx, e, cand[i], op_write);
        count_windows(ctx, e, x, h, op_write, &pi);
        if (i == 0 || pi.seconds < best.seconds) {
            best = pi;
            bh = h;
            *chosen = cand[i] == PASSION_METHOD_DIRECT ? PASSION_METHOD_DIRECT
                                                       : PASSION_METHOD_SIEVE;
        }
    }
    if (info) { /* the fields count_windows sets (the caller's others stay) */
        info->requests = best.requests;
        info->bytes_file = best.bytes_file;
        info->seconds = best.seconds;
    }
    return bh;
}

int64_t ocad_hole_choose(passion_ctx *ctx, const ocad_xfer *x, int op_write,
                         int method, int *chosen)
{
    ocad_env e = ocad_env_ctx(ctx);
    return choose(ctx, &e, x, op_write, method, chosen, NULL);
}

ocad_window ocad_window_next(ocad_iter *it, int64_t budget, int64_t hmax)
{
    return window_scan(it, budget, hmax);
}

int ocad_method_choose(passion_ctx *ctx, const ocad_xfer *x, int op_write,
                       int method, const ocad_env *env)
{
    ocad_env e = env ? *env : ocad_env_ctx(ctx);
    int chosen;
    choose(ctx, &e, x, op_write, method, &chosen, NULL);
    return chosen;
}

void ocad_plan_count(passion_ctx *ctx, const ocad_xfer *x, int method,
                     int op_write, passion_plan_info *info,
                     const ocad_env *env)
{
    ocad_env e = env ? *env : ocad_env_ctx(ctx);
    int chosen;
    choose(ctx, &e, x, op_write, method, &chosen, info);
    info->method = chosen;
    info->runs = 0;
}

int64_t ocad_count_runs(const ocad_xfer *x)
{
    return count_runs(x);
}

/* Copy the window's blocks between stage and memory, from iterator `it`. */
static void window_copy(ocad_iter *it, const window *w, char *stage, char *mem,
                        int to_mem)
{
    ocad_window_copy(it, w, w->w0, stage, mem, to_mem);
}

void ocad_window_copy(ocad_iter *it, const ocad_window *w, int64_t base,
                      char *stage, char *mem, int to_mem)
{
    int64_t left = w->nblk;
    while (left > 0) {
        int64_t n = ocad_iter_vec_left(it);
        if (n > left)
            n = left;
        char *s = stage + (it->foff - base), *m = mem + it->moff;
        int64_t ms = ocad_iter_mstep(it), fs = ocad_iter_fstep(it);
        int64_t blen = it->x->blen;
        /* byte order: swapped where the bytes land (memory on reads, the
           stage on writes: never the caller's buffer of a write) */
        if (to_mem) {
            ocad_copy_blocks(m, ms, s, fs, n, blen);
            ocad_swap_blocks(m, ms, n, blen, it->x->swap);
        } else {
            ocad_copy_blocks(s, fs, m, ms, n, blen);
            ocad_swap_blocks(s, fs, n, blen, it->x->swap);
        }
        ocad_iter_skip(it, n);
        left -= n;
    }
}

static int64_t stage_size(const ocad_env *e, const ocad_xfer *x)
{
    int64_t ext = x->fend - x->foff0;
    return ext < e->budget ? ext : e->budget;
}

#define SIEVE_BATCH 64
#define SIEVE_FEW 8

/*
 * Reads: windows go to the driver in batches (up to SIEVE_BATCH windows
 * whose staged ones fit the stage together), kept in flight at once, then
 * each staged window is sieved. Single-block windows read straight into
 * memory. Same windows, requests and bytes as one at a time.
 */
static int read_batched(passion_ctx *ctx, const ocad_env *e, core_fh *fh,
                        const ocad_xfer *x, char *mem, int64_t h,
                        int64_t *nreq, int64_t *nbytes, int64_t *ncopied)
{
    typedef struct bentry {
        ocad_iter start;
        window w;
        int64_t soff; /* offset in the stage, -1: straight to memory */
    } bentry;
    int64_t ssz = stage_size(e, x);
    char *stage = NULL;
    /* a few blocks (at most as many windows): the batch on the stack,
       without the allocator's lock and bookkeeping */
    bentry be_few[SIEVE_FEW];
    core_iov v_few[SIEVE_FEW];
    int few = x->nblocks <= SIEVE_FEW;
    bentry *be = few ? be_few
                     : core_tmp_alloc(ctx, SIEVE_BATCH * sizeof *be, 1);
    core_iov *v = few ? v_few
                      : core_tmp_alloc(ctx, SIEVE_BATCH * sizeof *v, 1);
    int rc = be && v ? PASSION_OK
                     : core_err(ctx, PASSION_ENOMEM, "read batch");
    ocad_iter it;
    ocad_iter_begin(&it, x);
    while (it.left > 0 && !rc) {
        int n = 0;
        int64_t used = 0;
        while (it.left > 0 && n < SIEVE_BATCH) {
            ocad_iter start = it;
            window w = window_scan(&it, e->budget, h);
            int64_t len = w.wend - w.w0;
            int64_t soff = -1;
            char *dst = mem + start.moff;
            if (w.nblk > 1) {
                if (used + len > ssz) {
                    it = start; /* next batch */
                    break;
                }
                if (!stage && !(stage = core_stage_alloc(ctx, ssz))) {
                    rc = core_err(ctx, PASSION_ENOMEM,
                                  "staging buffer of %lld bytes",
                                  (long long)ssz);
                    break;
                }
                soff = used;
                dst = stage + used;
                used += len;
            }
            be[n] = (bentry){start, w, soff};
            v[n] = (core_iov){dst, len, w.w0, 0};
            n++;
        }
        if (!rc)
            rc = core_io_read_batch(fh, v, n);
        for (int i = 0; i < n && !rc; i++) {
            *nreq += 1;
            *nbytes += v[i].len;
            if (be[i].soff >= 0) {
                window_copy(&be[i].start, &be[i].w, stage + be[i].soff, mem,
                            1);
                *ncopied += be[i].w.nblk * x->blen;
            } else { /* read straight into memory: convert it there */
                ocad_swap(v[i].buf, v[i].len, x->swap);
            }
        }
    }
    core_stage_free(ctx, stage, ssz);
    if (!few) {
        core_tmp_free(ctx, be);
        core_tmp_free(ctx, v);
    }
    return rc;
}

/*
 * Write len bytes of memory at file offset off. Data needing a byte swap
 * goes through the stage (*stage, allocated here on first use, *ssz
 * bytes: whole elements, at most the budget unless one element is larger),
 * a piece at a time, so the caller's buffer is never modified.
 */
static int write_run(passion_ctx *ctx, core_fh *fh, const ocad_xfer *x,
                     const char *src, int64_t len, int64_t off, char **stage,
                     int64_t *ssz)
{
    if (!x->swap)
        return core_io_write(fh, src, len, off);
    if (!*stage && !(*stage = core_stage_alloc(ctx, *ssz)))
        return core_err(ctx, PASSION_ENOMEM, "staging buffer of %lld bytes",
                        (long long)*ssz);
    int64_t piece = *ssz / x->esize * x->esize;
    int rc = PASSION_OK;
    for (int64_t d = 0; d < len && !rc; d += piece) {
        int64_t n = len - d < piece ? len - d : piece;
        memcpy(*stage, src + d, (size_t)n);
        ocad_swap(*stage, n, x->swap);
        rc = core_io_write(fh, *stage, n, off + d);
    }
    return rc;
}

int ocad_write_conv(passion_ctx *ctx, core_fh *fh, const char *src,
                    int64_t len, int64_t off, int unit, int64_t esize)
{
    if (unit < 2)
        return core_io_write(fh, src, len, off);
    ocad_xfer x;
    memset(&x, 0, sizeof x);
    x.swap = unit;
    x.esize = esize;
    int64_t b = ctx->opt.memory_budget;
    int64_t ssz = len < b ? len : b;
    if (ssz < esize)
        ssz = esize;
    char *stage = NULL;
    int rc = write_run(ctx, fh, &x, src, len, off, &stage, &ssz);
    core_stage_free(ctx, stage, ssz);
    return rc;
}

/* gather one run written straight from memory; the batch goes to the
   driver when full */
static int write_gather(core_fh *fh, core_iov *bat, int *nb, char *src,
                        int64_t len, int64_t off)
{
    bat[(*nb)++] = (core_iov){src, len, off, 0};
    if (*nb < SIEVE_BATCH)
        return PASSION_OK;
    *nb = 0;
    return core_io_write_batch(fh, bat, SIEVE_BATCH);
}

static int xfer_rw(passion_ctx *ctx, core_fh *fh, const ocad_xfer *x,
                   char *mem, int method, int op_write, const ocad_env *env)
{
    if (x->nblocks == 0)
        return PASSION_OK;
    ocad_env ev = env ? *env : ocad_env_ctx(ctx);
    const ocad_env *e = &ev;
    int chosen;
    int64_t h = choose(ctx, e, x, op_write, method, &chosen, NULL);
    ctx->cnt.bytes_useful += (uint64_t)(x->nblocks * x->blen);
    ocad_last_method(ctx, chosen);
    if (!op_write) {
        /* on cached data, learn what a request costs (ocad_req_learn) */
        double t0 = e->warm ? core_now() : 0;
        int64_t nreq = 0, nbytes = 0, ncopied = 0;
        int rc = read_batched(ctx, e, fh, x, mem, h, &nreq, &nbytes,
                              &ncopied);
        if (e->warm && !rc && nreq >= OCAD_LEARN_MIN)
            ocad_req_learn(ctx, (core_now() - t0 - (double)nbytes / e->bw -
                                 (double)ncopied / OCAD_COPY_BW) /
                                    (double)nreq);
        return rc;
    }
    int rc = PASSION_OK;
    ocad_iter it;
    ocad_iter_begin(&it, x);
    int64_t ssz = stage_size(e, x);
    if (x->swap && ssz < x->esize)
        ssz = x->esize; /* a budget below one element: one at a time */
    char *stage = NULL;
    /* runs written straight from memory go to the driver in batches */
    core_iov bat[SIEVE_BATCH];
    int nb = 0;
    if (h < 0) {
        while (it.left > 0 && !rc) {
            if (x->swap) {
                rc = write_run(ctx, fh, x, mem + it.moff, x->blen, it.foff,
                               &stage, &ssz);
            } else {
                rc = write_gather(fh, bat, &nb, mem + it.moff, x->blen,
                                  it.foff);
            }
            ocad_iter_skip(&it, 1);
        }
        if (nb && !rc)
            rc = core_io_write_batch(fh, bat, nb);
        core_stage_free(ctx, stage, ssz);
        return rc;
    }
    while (it.left > 0 && !rc) {
        ocad_iter start = it;
        window w = window_scan(&it, e->budget, h);
        int64_t len = w.wend - w.w0;
        if (w.nblk == 1 && !x->swap) {
            rc = write_gather(fh, bat, &nb, mem + start.moff, len, w.w0);
            continue;
        }
        if (nb) { /* in file order */
            rc = core_io_write_batch(fh, bat, nb);
            nb = 0;
            if (rc)
                break;
        }
        if (w.nblk == 1) {
            rc = write_run(ctx, fh, x, mem + start.moff, len, w.w0, &stage,
                           &ssz);
            continue;
        }
        if (!stage && !(stage = core_stage_alloc(ctx, ssz))) {
            rc = core_err(ctx, PASSION_ENOMEM,
                          "staging buffer of %lld bytes", (long long)ssz);
            break;
        }
        if (w.nblk * x->blen < len)
            rc = core_io_read(fh, stage, len, w.w0);
        if (rc)
            break;
        CORE_CHAOS(RMW_GAP);
        window_copy(&start, &w, stage, mem, 0);
        rc = core_io_write(fh, stage, len, w.w0);
    }
    if (nb && !rc)
        rc = core_io_write_batch(fh, bat, nb);
    core_stage_free(ctx, stage, ssz);
    return rc;
}

int ocad_xfer_read(passion_ctx *ctx, core_fh *fh, const ocad_xfer *x,
                   char *mem, int method, const ocad_env *env)
{
    return xfer_rw(ctx, fh, x, mem, method, 0, env);
}

int ocad_xfer_write(passion_ctx *ctx, core_fh *fh, const ocad_xfer *x,
                    const char *mem, int method, const ocad_env *env)
{
    return xfer_rw(ctx, fh, x, (char *)mem, method, 1, env);
}
