/*
 * plan_wisdom.c - wisdom files as a user handles them (passion_wisdom_*
 * in passion.h; the command `passion wisdom`): a file's records shown
 * readably, files merged into one, a file emptied.
 *
 * Invariants: every input is read whole and parsed whole
 * (plan_wisdom_parse, the one parser) before anything is written, and
 * the output is written whole by core_posix_replace (a temporary renamed
 * over it), so a call that fails has changed no file; the text has one
 * spelling, plan_table.c's: the header is checked by that parser (on the
 * first line alone) and an empty wisdom file is plan_wisdom_format of an
 * empty table. No MPI: these calls are independent.
 */
#include "planner.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the largest file read: plan_state.c reads no more either */

/* ------------------------------------------------------------ reading */

/* 1 when text begins with the wisdom header (what the parser accepts as
   a first line: the header and its newline) */
static int is_wisdom(const char *text, size_t len)
{
    const char *nl = memchr(text, '\n', len);
    if (!nl)
        return 0;
    plan_table t;
    plan_table_init(&t);
    int rc = plan_wisdom_parse(&t, text, (size_t)(nl - text) + 1, NULL, 0);
    plan_table_clear(&t);
    return rc == PASSION_OK;
}

/* path's records added to t, a record replacing one of the same
   signature; the detail names path (and the line) on failure */
static int load(passion_ctx *ctx, plan_table *t, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    int e = core_posix_slurp(path, PLAN_WISDOM_MAX, &text, &len);
    if (e == -EFBIG)
        return core_err(ctx, PASSION_EFORMAT,
                        "%s: over %u bytes: not a wisdom file", path,
                        PLAN_WISDOM_MAX);
    if (e)
        return core_err(ctx, core_errno_code(-e), "%s: %s", path,
                        strerror(-e));
    int rc = PASSION_OK;
    char why[200] = "";
    if (!is_wisdom(text, len)) {
        rc = core_err(ctx, PASSION_EFORMAT,
                      "%s: not a wisdom file: its first line is not "
                      "'# passion wisdom 1'", path);
    } else if ((rc = plan_wisdom_parse(t, text, len, why, sizeof why))) {
        rc = rc == PASSION_ENOMEM
                 ? core_err(ctx, rc, "%s: no memory for its records", path)
                 : core_err(ctx, PASSION_EINVAL, "%s: %s", path, why);
    } else if (t->evict) {
        /* the table keeps PLAN_MAX_RECS records, dropping the oldest:
           refused rather than losing some */
        rc = core_err(ctx, PASSION_ENOTSUP,
                      "%s: more than %d signatures in all, the most a "
                      "planner keeps", path, PLAN_MAX_RECS);
    }
    free(text);
    return rc;
}

/* ------------------------------------------------------- the readable */

/*
 * How an operation's keys read. The keys are the dispatcher's: for the
 * exchange, plan_xchg_auto.c (auto_sig) makes them, for a
 * section access collective/etp_auto.c (sig_of); a change there is a
 * change here. An operation without a view shows its
 * keys and method as numbers.
 */
enum { KV_NONE, KV_INT, KV_FLAG, KV_POW2, KV_HEX };
typedef struct key_view {
    int how;
    const char *name; /* KV_FLAG: the word for 1 */
    const char *off;  /* KV_FLAG: the word for 0 */
} key_view;

typedef struct op_view {
    const char *op;         /* plan_op_name's */
    const char *const *methods; /* the methods' names by value, or NULL: */
    int nmethods;
    const char *method_opt; /* the option whose values name the methods */
    /* sets that option to a method (its enum value) */
    void (*method_set)(core_options *o, int method);
    const char *param;      /* what a method's parameter is */
    key_view key[PLAN_KEYS];
} op_view;

static void xchg_set(core_options *o, int method)
{
    o->exchange = method; /* enum passion_xchg */
}

/* enum passion_method: auto's independent candidate is each rank's own
   choice (etp_auto.c) */
static const char *const access_methods[] = {"independent", "direct",
                                             "sieve", "etp-static",
                                             "etp-dynamic"};
/* the keys of a collective access (collective/etp_auto.c: sig_of) */
#define ACCESS_KEYS                                                       \
    {{KV_INT, "P", NULL}, {KV_INT, "ndims", NULL},                        \
     {KV_INT, "elem_size", NULL}, {KV_HEX, "array", NULL},                \
     {KV_HEX, "sections", NULL}, {KV_FLAG, "cached", "uncached"},         \
     {KV_POW2, "budget", NULL}, {KV_INT, "nodes", NULL}}

static const op_view views[] = {
    {.op = "exchange", .method_opt = "exchange", .method_set = xchg_set,
     .param = "radix",
     .key = {{KV_INT, "P", NULL}, {KV_INT, "nodes", NULL},
             {KV_INT, "node_max", NULL}, {KV_FLAG, "regular", "irregular"},
             {KV_POW2, "lmax", NULL}, {KV_POW2, "mmax", NULL},
             {KV_HEX, "fit", NULL}, {KV_NONE, NULL, NULL}}},
    {.op = "read", .methods = access_methods, .nmethods = 5,
     .key = ACCESS_KEYS},
    {.op = "write", .methods = access_methods, .nmethods = 5,
     .key = ACCESS_KEYS},
};

static const op_view *view_of(int op)
{
    const char *name = plan_op_name(op);
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++)
        if (!strcmp(views[i].op, name))
            return &views[i];
    return NULL;
}

/* snprintf onto s[*n..cap), *n counting what did not fit too */
static void put(char *s, size_t cap, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *s, size_t cap, size_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(*n < cap ? s + *n : NULL, *n < cap ? cap - *n : 0, fmt,
                      ap);
    va_end(ap);
    if (k > 0)
        *n += (size_t)k;
}

/* one record, one line */
static void describe_rec(const plan_rec *r, char *s, size_t cap, size_t *n)
{
    const op_view *v = view_of(r->sig.op);
    put(s, cap, n, "%-9s", plan_op_name(r->sig.op));
    for (int k = 0; k < PLAN_KEYS; k++) {
        long long x = (long long)r->sig.key[k];
        int how = v ? v->key[k].how : KV_NONE;
        const char *name = v ? v->key[k].name : NULL;
        if (how == KV_INT)
            put(s, cap, n, " %s=%lld", name, x);
        else if (how == KV_FLAG && (x == 0 || x == 1))
            put(s, cap, n, " %s", x ? name : v->key[k].off);
        else if (how == KV_POW2)
            put(s, cap, n, " %s<=2^%lld", name, x);
        else if (how == KV_HEX)
            put(s, cap, n, " %s=0x%llx", name, (unsigned long long)x);
        else if (how != KV_NONE || x || !v)
            put(s, cap, n, " k%d=%lld", k, x);
    }
    const plan_cand *c = &r->cand[r->winner >= 0 ? r->winner : 0];
    char method[64] = "";
    if (v && v->methods) {
        if (c->method >= 0 && c->method < v->nmethods)
            snprintf(method, sizeof method, "%s", v->methods[c->method]);
    } else if (v) {
        /* the option's own spelling of the value (passion/options.c) */
        core_options o;
        core_options_default(&o);
        v->method_set(&o, c->method);
        if (core_options_get(&o, v->method_opt, method, sizeof method, NULL,
                             0) ||
            !strcmp(method, "?"))
            method[0] = '\0';
    }
    if (method[0])
        put(s, cap, n, " -> %s", method);
    else
        put(s, cap, n, " -> method %d", c->method);
    if (c->param)
        put(s, cap, n, " %s=%d", v ? v->param : "param", c->param);
    double sec = r->agreed[r->winner >= 0 ? r->winner : 0];
    if (sec < PLAN_SLOW)
        put(s, cap, n, " (%.3g s measured)\n", sec);
    else
        put(s, cap, n, " (not measured)\n");
}

/* every placement's costs, every record and the count line (of the
   records) into s (cap bytes, NUL included when
   it fits); the bytes of the whole text, NUL not counted */
static size_t describe_all(const plan_table *t, char *s, size_t cap)
{
    size_t n = 0;
    if (cap)
        s[0] = '\0';
    for (int i = 0; i < t->ncosts; i++) {
        const plan_msg_costs *c = &t->costs[i];
        put(s, cap, &n, "%-9s P=%lld nodes=%lld: round %.3g s, msg %.3g s, "
            "byte %.3g s, copy %.3g s/B\n", "costs", (long long)c->procs,
            (long long)c->nodes, c->round, c->msg, c->byte, c->copy);
    }
    for (int i = 0; i < t->nfcosts; i++) {
        const plan_file_costs *c = &t->fcosts[i];
        const char *d = passion_driver_name((passion_driver)c->driver);
        put(s, cap, &n, "%-9s %s fs=0x%llx dev=%lld P=%lld nodes=%lld: "
            "latency %.3g s, bandwidth %.3g B/s (%lld B a rank), long "
            "reads %.3g B/s (%lld B a rank)\n", "file", d ? d : "?",
            (unsigned long long)c->fstype, (long long)c->dev,
            (long long)c->procs, (long long)c->nodes, c->lat, c->bw,
            (long long)c->bw_rank, c->stream_bw, (long long)c->stream_len);
    }
    for (int i = 0; i < t->n; i++)
        describe_rec(&t->rec[i], s, cap, &n);
    put(s, cap, &n, "%d record%s\n", t->n, t->n == 1 ? "" : "s");
    return n;
}

/* ------------------------------------------------------------- public */

int passion_wisdom_describe(passion_ctx *ctx, const char *path, char *buf,
                            size_t len, size_t *need)
{
    if (need)
        *need = 0;
    if (!ctx)
        return PASSION_EINVAL;
    if (core_call_begin(ctx))
        return PASSION_ESTATE;
    core_enter(ctx);
    if (buf && len)
        buf[0] = '\0';
    plan_table t;
    plan_table_init(&t);
    int rc = PASSION_OK;
    if (!path || (!buf && len))
        rc = core_err(ctx, PASSION_EINVAL,
                      "wisdom describe: a NULL path, or a NULL buffer of "
                      "%zu bytes", len);
    if (!rc)
        rc = load(ctx, &t, path);
    if (!rc) {
        size_t n = describe_all(&t, buf, len);
        if (need)
            *need = n + 1;
        if (n >= len) {
            if (buf && len)
                buf[0] = '\0';
            rc = core_err(ctx, PASSION_ERANGE,
                          "%s: its description needs %zu bytes, the buffer "
                          "has %zu", path, n + 1, len);
        }
    }
    plan_table_clear(&t);
    core_call_end(ctx);
    return rc;
}

int passion_wisdom_merge(passion_ctx *ctx, const char *out,
                         const char *const *in, int nin)
{
    if (!ctx)
        return PASSION_EINVAL;
    if (core_call_begin(ctx))
        return PASSION_ESTATE;
    core_enter(ctx);
    plan_table t;
    plan_table_init(&t);
    int rc = PASSION_OK;
    if (!out || nin < 0 || (nin > 0 && !in))
        rc = core_err(ctx, PASSION_EINVAL,
                      "wisdom merge: a NULL output or input list, or %d "
                      "inputs", nin);
    for (int i = 0; !rc && i < nin; i++)
        if (!in[i])
            rc = core_err(ctx, PASSION_EINVAL, "wisdom merge: input %d is "
                          "NULL", i);
    /* every input whole before the output is touched (out may be one) */
    for (int i = 0; !rc && i < nin; i++)
        rc = load(ctx, &t, in[i]);
    char *text = NULL;
    size_t len = 0;
    if (!rc && !(text = plan_wisdom_format(&t, &len)))
        rc = core_err(ctx, PASSION_ENOMEM, "wisdom merge: no memory for "
                      "the text of %d records", t.n);
    int e = rc ? 0 : core_posix_replace(out, text, len);
    if (e)
        rc = core_err(ctx, core_errno_code(-e), "%s: %s", out, strerror(-e));
    free(text);
    plan_table_clear(&t);
    core_call_end(ctx);
    return rc;
}
