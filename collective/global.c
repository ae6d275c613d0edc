/*
 * global.c - collective section access to a global array file:
 * passion_file_read_all / passion_file_write_all (thesis 6.1:
 * PASSION_global_read / PASSION_global_write).
 *
 * Every rank passes its own section (empty, overlapping or identical
 * sections are all fine). Arguments are checked locally; a rank whose
 * check failed takes part with an empty section and its code reaches
 * every rank through the FAD, so all return it and none waits. Then the
 * method: independent (direct, or sieving: each rank its own runs) or the
 * extended two-phase method with static or dynamic domains; `auto` asks
 * the cost model (etp_model.c). Finally the ranks agree on the outcome.
 *
 * No rank writes a byte before the FAD: whatever refuses a write (a
 * rank's arguments, the budget, the descriptors, ranks that disagree) is
 * known to every rank there, so a refused write leaves the file as it
 * was. What fails after it (a rank's I/O) may leave a file partly
 * written: the outcome's detail then names the ranks that wrote
 * (core_agree_wrote).
 *
 * Independent writes stay deterministic where sections share elements
 * (direct) or where extents interleave (sieving reads and rewrites other
 * ranks' bytes): the ranks then write one after another in increasing
 * rank order, so the highest rank's data wins, as in the two-phase method.
 */
#include "coll.h"

#include <string.h>

/* Independent access; writes ordered by rank when they could collide,
   unless each shared element has one writer (coll_shared_writers: direct
   writes whose sections nest, as identical ones do), which then writes
   without waiting. skip: this rank's read is done (coll_io_early): it
   only takes part. */
static int independent(coll_plan *p, char *buf, int method, int skip)
{
    passion_ctx *ctx = p->ctx;
    int ordered = p->op_write && coll_write_ordered(p, method);
    int writes = 1;
    if (ordered && method == PASSION_METHOD_DIRECT &&
        coll_shared_writers(p, &writes)) {
        ordered = 0;
        if (!writes) {
            skip = 1; /* a higher rank writes these elements */
            ctx->cnt.bytes_useful += (uint64_t)(p->elems[p->me] * p->esize);
        }
    }
    /* auto decided the order from every rank's plan with a packed buffer
       (coll_write_ordered: the FAD holds no memory layout), and this
       rank's own plan may choose otherwise: memory runs shorter than the
       file's make sieving cheaper than direct. Unordered, a sieved window
       that holds another rank's bytes reads them before that rank writes
       them and writes the old values back (found by the soak; test_global
       checks it: auto write order with a memory layout). A rank whose extent
       interleaves another's was priced direct there: it writes direct. */
    if (p->op_write && !ordered && method == PASSION_METHOD_AUTO &&
        coll_extent_meets(p, p->me))
        method = PASSION_METHOD_DIRECT;
    int rc = PASSION_OK, token = 0;
    MPI_Request req;
    if (ordered && p->me > 0 &&
        (MPI_Irecv(&token, 1, MPI_INT, p->me - 1, 78, ctx->comm, &req) !=
             MPI_SUCCESS ||
         coll_waitall(1, &req)))
        rc = core_err(ctx, PASSION_EMPI, "ordering token");
    if (ordered)
        CORE_CHAOS(ORDER_TOKEN); /* the token in hand, before the write */
    /* this call's file costs, and what the plan left of the budget */
    ocad_env env = p->env;
    int64_t left = ctx->opt.memory_budget - ctx->staging_now;
    env.budget = left > 0 ? left : 1;
    if (!rc && p->elems[p->me] > 0 && !skip)
        rc = p->op_write
                 ? ocad_xfer_write(ctx, p->f->fh, &p->xme, buf, method, &env)
                 : ocad_xfer_read(ctx, p->f->fh, &p->xme, buf, method, &env);
    if (ordered && p->me + 1 < p->P) {
        CORE_CHAOS(ORDER_TOKEN);
        /* a message between nodes like any other of passion's: the
           simulated network charges it (passion/net.c; not counted with
           the exchange's messages) */
        core_net_charge(ctx, p->me + 1, (int64_t)sizeof token, 0);
        if (MPI_Send(&token, 1, MPI_INT, p->me + 1, 78, ctx->comm) !=
                MPI_SUCCESS && !rc)
            rc = core_err(ctx, PASSION_EMPI, "ordering token");
        ctx->cnt.messages_sent++;
    }
    return rc;
}

/* The file's streaming bandwidth: this call's long reads (since sb0,
   st0), where the ranks found the data uncached (from the FAD: every
   rank alike; coll_stream_note) */
static void note_streams(passion_ctx *ctx, const coll_plan *p, uint64_t sb0,
                         double st0)
{
    if (!p->warm && p->cached_pm <= COLL_STREAM_CACHED_PM)
        coll_stream_note(ctx, ctx->stream_bytes - sb0, ctx->stream_t - st0);
}

/* Step 1: this rank's arguments (a failing rank still takes part, with
   an empty section); *elems its section's elements. */
static int section_check(passion_file *f, const passion_section *s,
                         const void *buf, const passion_memspec *m,
                         int method, int op_write, int64_t *elems)
{
    passion_ctx *ctx = f->ctx;
    int rc = PASSION_OK;
    if (f->a->spec.placement == PASSION_PLACE_LOCAL)
        rc = core_err(ctx, PASSION_EINVAL,
                      "collective section access needs a global array file");
    else if (method < PASSION_METHOD_AUTO ||
             method > PASSION_METHOD_ETP_DYNAMIC)
        rc = core_err(ctx, PASSION_EINVAL, "unknown method %d", method);
    else if (op_write && !f->writable)
        rc = core_err(ctx, PASSION_EACCES, "%s is open read-only",
                      f->fh->path);
    else if (!(rc = ocad_section_check(ctx, f->a->nd, s, f->lo, f->hi,
                                       elems)) &&
             !(rc = ocad_memspec_check(ctx, f->a->nd, f->a->esize, s, m)) &&
             *elems > 0 && !buf)
        rc = core_err(ctx, PASSION_EINVAL, "NULL buffer");
    return rc;
}

/* Step 2: was every rank's part done before the FAD (coll_io_early; a
   write's only where empty)? *predicted: the slowest early read's
   prediction. */
static int section_done_early(const coll_plan *p, int method,
                              double *predicted)
{
    int all_done = method != PASSION_METHOD_ETP_STATIC &&
                   method != PASSION_METHOD_ETP_DYNAMIC;
    *predicted = 0;
    for (int r = 0; r < p->P && all_done; r++) {
        all_done = coll_early_done(p, r);
        double t = coll_early_pred(p, r);
        *predicted = t > *predicted ? t : *predicted;
    }
    return all_done;
}

/* Step 3, method auto: the model's choice (unless the planner's record
   decides without it), then the planner's. An error is agreed. */
static int section_choose(coll_plan *p, int *chosen, double *predicted,
                          coll_auto *ap)
{
    double est[PASSION_METHOD_ETP_DYNAMIC + 1];
    int fresh = coll_auto_begin(p, ap);
    *chosen = ap->no_model ? PASSION_METHOD_AUTO
                           : coll_method_choose(p, predicted,
                                                fresh ? est : NULL);
    /* the planner: the model's choice, or the measured one */
    return coll_auto_pick(p, chosen, predicted, fresh ? est : NULL, ap);
}

/* Step 4: the chosen method runs (this rank's outcome; not agreed).
   early_done: this rank's read was done before the FAD. */
static int section_run(coll_plan *p, void *buf, int method, int chosen,
                       const coll_auto *ap, int early_done, int64_t elems)
{
    passion_ctx *ctx = p->ctx;
    int rc;
    uint64_t useful = ctx->cnt.bytes_useful;
    if (chosen == PASSION_METHOD_ETP_STATIC ||
        chosen == PASSION_METHOD_ETP_DYNAMIC) {
        coll_domains(p, chosen == PASSION_METHOD_ETP_DYNAMIC);
        /* auto's own choice: coll_method_choose set them */
        if (method != PASSION_METHOD_AUTO || ap->overridden)
            coll_xchg_pick(p);
        if (!early_done) /* else counted by the early access */
            ctx->cnt.bytes_useful += (uint64_t)(elems * p->esize);
        rc = coll_etp_run(p, buf);
        ocad_last_method(ctx, chosen);
    } else {
        /* the independent engine counts bytes_useful itself and sets
           last_method where this rank moves data */
        rc = independent(p, buf, chosen, early_done);
        if (early_done) /* counted once, by the early access */
            ctx->cnt.bytes_useful = useful;
    }
    return rc;
}

/* Step 5, after the agreed outcome rc of an auto call: the same read
   next time early with the independent method auto chose (unless the
   planner is still measuring the call), and on cached data the chosen
   class's fixed cost: took seconds against raw predicted. */
static void section_learn(passion_file *f, const passion_section *s,
                          const passion_memspec *m, int op_write, int rc,
                          int chosen, const coll_auto *ap, int warm,
                          double raw, double took)
{
    passion_ctx *ctx = f->ctx;
    const int etp = chosen == PASSION_METHOD_ETP_STATIC ||
                    chosen == PASSION_METHOD_ETP_DYNAMIC;
    coll_early_remember(ctx, coll_early_sig(f, s, m, op_write),
                        !rc && !etp && (!ap->applies || ap->decided)
                            ? chosen
                            : -1);
    if (rc || !warm || ap->overridden || raw >= COLL_FIXED_LEARN_MAX)
        return;
    coll_fixed_learn(ctx, etp ? COLL_FIX_ETP : COLL_FIX_IND, took - raw);
    if (ctx->opt.verbosity >= 3 && ctx->rank == 0)
        fprintf(stderr, "passion: auto: %s took %.3g s, predicted %.3g "
                "s without its fixed cost\n",
                etp ? "two-phase" : "independent", took, raw);
}

/* A chunked HDF5 dataset (ocad/fmt_h5_chunk.c): writes refused; a read
   reads each chunk once and exchanges its pieces (chunked.c); rc is this
   rank's argument check. The outcome is agreed, so every rank returns
   the same code. */
static int chunked_all(passion_file *f, const passion_section *s, void *buf,
                       const passion_memspec *m, int op_write, int rc)
{
    if (op_write)
        return core_agree(f->ctx, ocad_file_chunked_refuse(
                                      f, "writes (it is read-only to "
                                         "passion)"));
    return coll_chunked_read_all(f, s, buf, m, rc);
}

static int section_all(passion_file *f, const passion_section *s, void *buf,
                       const passion_memspec *m, int method, int op_write)
{
    if (!f)
        return PASSION_EINVAL;
    passion_ctx *ctx = f->ctx;
    core_enter(ctx);
    ocad_last_method(ctx, PASSION_METHOD_AUTO); /* passion_ctx_last_method */
    ocad_last_predicted(ctx, 0);
    /* this call's long reads (coll_stream_note) */
    const uint64_t sb0 = ctx->stream_bytes;
    const double st0 = ctx->stream_t;
    int64_t elems = 0;
    int rc = section_check(f, s, buf, m, method, op_write, &elems);
    if (f->h5c)
        return chunked_all(f, s, buf, m, op_write, rc);
    /* a read may be done before the FAD (coll_io_early): its outcome
       travels in the FAD, so that when every rank's part is done the call
       ends there, one collective round in all. A write never is: the FAD
       is where every rank learns that every other's arguments, budget and
       descriptors let the call proceed, and a refused call writes no
       byte (this rank's bytes written so far: who wrote, if it fails) */
    const uint64_t wrote0 = ctx->cnt.bytes_written;
    const double t_call = core_now(); /* the planner's measurement */
    /* the planner's state, made before the FAD so that a failure is
       agreed there and every rank has it after */
    if (!rc && method == PASSION_METHOD_AUTO && !plan_state_get(ctx))
        rc = core_err(ctx, PASSION_ENOMEM, "planner: context state");
    coll_early early;
    rc = coll_io_early(f, s, m, buf, method, op_write, elems, rc, &early);
    coll_plan p;
    rc = coll_plan_init(&p, f, s, m, method, op_write, rc, &early);
    if (rc) {
        coll_plan_free(&p);
        ocad_last_method(ctx, PASSION_METHOD_AUTO); /* the early read's */
        return rc;
    }
    double predicted;
    if (section_done_early(&p, method, &predicted)) {
        coll_plan_free(&p);
        note_streams(ctx, &p, sb0, st0);
        /* the reads, and the FAD's round (the learned round's cost) */
        ocad_last_predicted(ctx, method == PASSION_METHOD_AUTO
                                     ? predicted + coll_sync_cost(ctx)
                                     : 0);
        return PASSION_OK;
    }
    /* this call's costs travel in the plan (p.env), passed as arguments
       to the independent engine: nothing in the context is rewritten */
    int chosen = method;
    predicted = 0;
    coll_auto ap;
    memset(&ap, 0, sizeof ap);
    if (method == PASSION_METHOD_AUTO &&
        (rc = section_choose(&p, &chosen, &predicted, &ap))) {
        coll_plan_free(&p); /* agreed */
        return rc;
    }
    /* the chosen method's fixed cost is learned from here to the
       outcome's agreement (coll_fixed_learn), on cached data only: on an
       uncached file the time minus the prediction is mostly the device's
       error from the model */
    double t_run = core_now(), raw = p.pred_raw;
    const int warm = p.warm;
    rc = section_run(&p, buf, method, chosen, &ap, early.done, elems);
    coll_plan_free(&p);
    /* the sample ends before the outcome's agreement: its round is the
       same for both classes (coll_fixed_cost adds one learned round to
       each), and under load it holds the other ranks' scheduling
       delays */
    double t_end = core_now();
    /* a write that failed after some rank wrote names who wrote */
    rc = op_write ? core_agree_wrote(ctx, rc,
                                     ctx->cnt.bytes_written > wrote0)
                  : core_agree(ctx, rc);
    if (!rc)
        note_streams(ctx, &p, sb0, st0);
    if (method == PASSION_METHOD_AUTO)
        section_learn(f, s, m, op_write, rc, chosen, &ap, warm, raw,
                      t_end - t_run);
    if (rc)
        ocad_last_method(ctx, PASSION_METHOD_AUTO);
    if (!rc)
        coll_auto_observe(ctx, &ap, core_now() - t_call);
    ocad_last_predicted(ctx, rc ? 0 : predicted);
    return rc;
}

/* section_all inside the thread contract's guard (core_call_begin) */
static int section_all_guarded(passion_file *f, const passion_section *s,
                               void *buf, const passion_memspec *m,
                               passion_method method, int op_write)
{
    passion_ctx *gctx = f ? f->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = section_all(f, s, buf, m, method, op_write);
    core_call_end(gctx);
    return rc;
}

int passion_file_read_all(passion_file *f, const passion_section *s,
                          void *buf, const passion_memspec *mem,
                          passion_method method)
{
    return section_all_guarded(f, s, buf, mem, method, 0);
}

int passion_file_write_all(passion_file *f, const passion_section *s,
                           const void *buf, const passion_memspec *mem,
                           passion_method method)
{
    return section_all_guarded(f, s, (void *)buf, mem, method, 1);
}
