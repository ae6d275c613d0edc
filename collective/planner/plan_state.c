/*
 * plan_state.c - the planner of one context: its table of records
 * (plan_table.c), its mode (the option planner), the exchange's measured
 * costs and auto's memo (plan_xchg_state), and its wisdom: read
 * from the file the option wisdom names before the first decision, and
 * written back by rank 0 when the context is freed, merged into what the
 * file holds then (a signature learned in this run replaces the file's
 * line for it; the file's other lines stay).
 *
 * Invariants: the table is the same on every rank (wisdom is read by
 * rank 0 alone and broadcast, and every later change comes from agreed
 * inputs); the state hangs on the context's extension slot CORE_EXT_PLAN
 * and goes with the context (passion_finalize runs its destructor). A
 * wisdom file is read only whole and replaced only whole (a temporary
 * renamed over it), so a reader never sees half of one.
 */
#include "plan_xchg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


struct plan_state {
    plan_table table;
    int loaded; /* the wisdom file was read (or there was none) */
    int learned; /* a record was decided by measurement since, or the
                    exchange's or the file's costs measured */
    plan_xchg_state xchg; /* the exchange's costs and memo */
};

/* rank 0: merge the table's decided records into the file */
static int save(passion_ctx *ctx, plan_state *s, char *why, size_t wlen)
{
    const char *path = ctx->opt.wisdom;
    plan_table merged;
    plan_table_init(&merged);
    char *old = NULL;
    size_t len = 0;
    int rc = core_posix_slurp(path, PLAN_WISDOM_MAX, &old, &len);
    if (rc == -ENOENT) {
        rc = 0;
    } else if (rc) {
        snprintf(why, wlen, "%s", strerror(-rc));
    } else {
        rc = plan_wisdom_parse(&merged, old, len, why, wlen);
        if (rc)
            rc = -EINVAL;
    }
    free(old);
    for (int i = 0; !rc && i < s->table.ncosts; i++)
        plan_msg_costs_put(&merged, &s->table.costs[i]);
    for (int i = 0; !rc && i < s->table.nfcosts; i++)
        plan_file_costs_put(&merged, &s->table.fcosts[i]);
    for (int i = 0; !rc && i < s->table.n; i++) {
        const plan_rec *r = &s->table.rec[i];
        if (r->winner >= 0 &&
            plan_wisdom_put(&merged, &r->sig, &r->cand[r->winner],
                            r->agreed[r->winner]))
            rc = -ENOMEM;
    }
    char *text = NULL;
    if (!rc && !(text = plan_wisdom_format(&merged, &len)))
        rc = -ENOMEM;
    if (!rc)
        rc = core_posix_replace(path, text, len);
    if (rc && !why[0])
        snprintf(why, wlen, "%s", strerror(-rc));
    free(text);
    plan_table_clear(&merged);
    return rc;
}

static void state_free(passion_ctx *ctx, void *p)
{
    plan_state *s = p;
    if (ctx->rank == 0 && ctx->opt.wisdom[0] && s->learned) {
        char why[256] = "";
        /* the context is going: no code to return, so the reason goes to
           stderr (the option asked for the file) */
        if (save(ctx, s, why, sizeof why))
            fprintf(stderr, "passion: wisdom not saved to %s: %s\n",
                    ctx->opt.wisdom, why);
    }
    plan_table_clear(&s->table);
    core_free(ctx, s);
}

static void state_init(void *p)
{
    plan_table_init(&((plan_state *)p)->table);
}

plan_state *plan_state_get(passion_ctx *ctx)
{
    return core_ext_get(ctx, CORE_EXT_PLAN, sizeof(plan_state), state_init,
                        state_free);
}

plan_table *plan_state_table(plan_state *s)
{
    return s ? &s->table : NULL;
}

void plan_state_learned(plan_state *s)
{
    if (s)
        s->learned = 1;
}

plan_xchg_state *plan_state_xchg(plan_state *s)
{
    return s ? &s->xchg : NULL;
}

int plan_state_mode(const passion_ctx *ctx)
{
    return ctx->opt.planner == 0 ? PLAN_ESTIMATE : PLAN_MEASURE;
}

int plan_state_next(passion_ctx *ctx, plan_state *s, plan_rec *r,
                    plan_pick *pk)
{
    *pk = plan_next(r, plan_state_mode(ctx));
    if (!pk->agree)
        return PASSION_OK;
    /* a measurement ends: the slowest rank's best time of each */
    double v[PLAN_CANDS];
    int n = plan_times(r, v);
    int rc = core_agree_max(ctx, PASSION_OK, v, n);
    if (rc)
        return rc;
    plan_decide(r, v, pk);
    s->learned = 1;
    return PASSION_OK;
}

int plan_state_load(passion_ctx *ctx, plan_state *s, MPI_Comm comm)
{
    /* s is there on every rank or on none (the caller agreed on it) */
    if (!s || s->loaded)
        return PASSION_OK;
    s->loaded = 1;
    /* a wisdom file on every rank or on none (passion_init checks) */
    if (!ctx->opt.wisdom[0])
        return PASSION_OK;
    /* rank 0 reads; [code, bytes] then the bytes go to every rank */
    int64_t head[2] = {0, 0};
    char *text = NULL;
    size_t len = 0;
    if (ctx->rank == 0) {
        int r = core_posix_slurp(ctx->opt.wisdom, PLAN_WISDOM_MAX, &text, &len);
        if (r == -ENOENT)
            r = 0; /* no wisdom yet: this run makes it */
        head[0] = r;
        head[1] = (int64_t)len;
    }
    int rc = PASSION_OK;
    if (MPI_Bcast(head, 2, MPI_INT64_T, 0, comm) != MPI_SUCCESS)
        rc = core_err(ctx, PASSION_EMPI, "planner: broadcast of wisdom");
    if (!rc && head[0])
        rc = core_err(ctx, core_errno_code((int)-head[0]),
                      "planner: wisdom file %s: %s", ctx->opt.wisdom,
                      strerror((int)-head[0]));
    /* the bytes' room on every rank, agreed before the broadcast that
       fills it (no rank may miss it) */
    if (!rc && head[1] > 0 && ctx->rank != 0 &&
        !(text = malloc((size_t)head[1] + 1)))
        rc = core_err(ctx, PASSION_ENOMEM, "planner: %lld bytes of wisdom",
                      (long long)head[1]);
    rc = core_agree(ctx, rc);
    if (!rc && head[1] > 0 &&
        MPI_Bcast(text, (int)head[1], MPI_CHAR, 0, comm) != MPI_SUCCESS)
        rc = core_err(ctx, PASSION_EMPI, "planner: broadcast of wisdom");
    char detail[200] = "";
    if (!rc && head[1] > 0 &&
        plan_wisdom_parse(&s->table, text, (size_t)head[1], detail,
                          sizeof detail))
        rc = core_err(ctx, PASSION_EINVAL, "planner: wisdom file %s: %s",
                      ctx->opt.wisdom, detail);
    free(text);
    return core_agree(ctx, rc);
}
