/*
 * plan_table.c - the planner's records and its rule (planner.h): which
 * candidate the next call of a signature runs, how measurements end in a
 * winner, and wisdom's text.
 *
 * Invariants: a record's answer is a function of its signature, its
 * candidates, its count of plan_next calls and the agreed times given to
 * plan_decide, never of this rank's own times; a measurement runs every
 * candidate PLAN_TRIALS times, interleaved (candidate k at calls k,
 * k + n, k + 2n: a drift of the machine's load falls on all alike), and
 * the next call agrees and decides; a record with one candidate is
 * decided from its first call. No MPI, no I/O.
 */
#include "planner.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[PLAN_OP_N] = {"exchange", "read",
                                                "write"};

const char *plan_op_name(int op)
{
    return op >= 0 && op < PLAN_OP_N ? op_names[op] : "?";
}

void plan_table_init(plan_table *t)
{
    memset(t, 0, sizeof *t);
}

void plan_table_clear(plan_table *t)
{
    free(t->rec);
    plan_table_init(t);
}

const plan_msg_costs *plan_msg_costs_find(const plan_table *t, int64_t procs,
                                  int64_t nodes)
{
    for (int i = 0; i < t->ncosts; i++)
        if (t->costs[i].procs == procs && t->costs[i].nodes == nodes)
            return &t->costs[i];
    return NULL;
}

void plan_msg_costs_put(plan_table *t, const plan_msg_costs *c)
{
    plan_msg_costs *old = (plan_msg_costs *)plan_msg_costs_find(t, c->procs, c->nodes);
    if (old) {
        *old = *c;
        return;
    }
    if (t->ncosts == PLAN_COSTS_MAX) {
        memmove(t->costs, t->costs + 1,
                (PLAN_COSTS_MAX - 1) * sizeof t->costs[0]);
        t->ncosts--;
    }
    t->costs[t->ncosts++] = *c;
}

static int sig_eq(const plan_sig *a, const plan_sig *b)
{
    if (a->op != b->op)
        return 0;
    for (int i = 0; i < PLAN_KEYS; i++)
        if (a->key[i] != b->key[i])
            return 0;
    return 1;
}

plan_rec *plan_find(plan_table *t, const plan_sig *sig)
{
    /* the newest first: a loop of calls repeats the signature it added */
    for (int i = t->n - 1; i >= 0; i--)
        if (sig_eq(&t->rec[i].sig, sig))
            return &t->rec[i];
    return NULL;
}

static plan_rec *slot(plan_table *t, const plan_sig *sig)
{
    plan_rec *r = plan_find(t, sig);
    if (r)
        return r;
    if (t->n == PLAN_MAX_RECS) {
        /* full: the oldest slot goes (a program with more signatures
           than this measures some of them again) */
        r = &t->rec[t->evict++ % PLAN_MAX_RECS];
        memset(r, 0, sizeof *r);
        r->sig = *sig;
        return r;
    }
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        plan_rec *p = realloc(t->rec, (size_t)cap * sizeof *p);
        if (!p)
            return NULL;
        t->rec = p;
        t->cap = cap;
    }
    r = &t->rec[t->n++];
    memset(r, 0, sizeof *r);
    r->sig = *sig;
    return r;
}

static void restart(plan_rec *r)
{
    r->calls = 0;
    r->winner = r->n == 1 ? 0 : -1;
    for (int i = 0; i < PLAN_CANDS; i++)
        r->best[i] = PLAN_SLOW;
}

plan_rec *plan_add(plan_table *t, const plan_sig *sig, const plan_cand *cand,
                   int n)
{
    if (n < 1)
        return NULL;
    plan_rec *r = slot(t, sig);
    if (!r)
        return NULL;
    r->n = n > PLAN_CANDS ? PLAN_CANDS : n;
    memcpy(r->cand, cand, (size_t)r->n * sizeof *cand);
    r->wisdom = 0;
    for (int i = 0; i < PLAN_CANDS; i++)
        r->agreed[i] = PLAN_SLOW;
    restart(r);
    return r;
}

/* the answer at call count c of a record without a winner: the trials,
   then the decision (agree) */
static int trial_at(const plan_rec *r, int64_t c, int *agree)
{
    int64_t trials = (int64_t)PLAN_TRIALS * r->n;
    *agree = c >= trials;
    return c < trials ? (int)(c % r->n) : 0;
}

int plan_peek(const plan_rec *r, int mode)
{
    if (r->winner >= 0)
        return r->winner;
    if (mode == PLAN_ESTIMATE)
        return 0;
    int agree;
    int k = trial_at(r, r->calls, &agree);
    /* the decision is not known before the agreement: the estimate's */
    return agree ? 0 : k;
}

plan_pick plan_next(plan_rec *r, int mode)
{
    plan_pick pk = {0, 0, 0};
    if (mode == PLAN_ESTIMATE) {
        pk.index = r->winner >= 0 && r->wisdom ? r->winner : 0;
    } else if (r->winner >= 0) {
        pk.index = r->winner;
        /* measured again after PLAN_RECHECK calls (never wisdom's) */
        if (!r->wisdom && r->n > 1 && ++r->calls >= PLAN_RECHECK) {
            restart(r);
            pk.index = trial_at(r, r->calls++, &pk.agree);
            pk.trial = 1;
        }
    } else {
        pk.index = trial_at(r, r->calls++, &pk.agree);
        pk.trial = !pk.agree;
    }
    return pk;
}

int plan_times(const plan_rec *r, double *v)
{
    for (int i = 0; i < r->n; i++)
        v[i] = r->best[i];
    return r->n;
}

void plan_decide(plan_rec *r, const double *v, plan_pick *pk)
{
    /* the fastest agreed time; ties and candidates never observed on some
       rank (PLAN_SLOW) go to the better estimate. The estimate's first
       keeps its place unless another was faster by PLAN_MARGIN: three
       samples of a call of a few microseconds differ by more than that
       from run to run, and a switch on noise alone lost to the estimate
       by 10-25% in such calls (index and irregular, P = 2, cold) */
    int w = 0;
    for (int i = 1; i < r->n; i++)
        if (w == 0 ? v[i] < v[0] * (1 - PLAN_MARGIN) : v[i] < v[w])
            w = i;
    for (int i = 0; i < r->n; i++)
        r->agreed[i] = v[i];
    r->winner = w;
    r->calls = 0;
    pk->index = w;
    pk->agree = 0;
}

void plan_observe(plan_rec *r, int idx, double seconds)
{
    if (idx < 0 || idx >= r->n || !(seconds >= 0))
        return;
    if (seconds < r->best[idx])
        r->best[idx] = seconds;
}

int plan_wisdom_put(plan_table *t, const plan_sig *sig, const plan_cand *win,
                    double seconds)
{
    plan_rec *r = plan_add(t, sig, win, 1);
    if (!r)
        return PASSION_ENOMEM;
    r->wisdom = 1;
    r->winner = 0;
    r->agreed[0] = seconds;
    return PASSION_OK;
}

/* ------------------------------------------------------------ the text */

/*
 * One line a decided record:
 *   OP K0 .. K7 METHOD PARAM SECONDS
 * (OP a name of plan_op_name, the keys and METHOD/PARAM decimal integers,
 * SECONDS the agreed time of the winner, or -1 when it was never
 * measured); '#' starts a comment line. The first line is
 *   # passion wisdom 1
 * One line the exchange's measured costs of a placement, before the
 * records:
 *   xchg-costs 1 P NODES ROUND MSG BYTE COPY
 * (1 the version of this kind of line, P and NODES decimal integers, the
 * costs in seconds as %.17g writes them, so that they read back to the
 * same doubles and a run that loads them chooses as the run that
 * measured them). A line the file's measured costs, after those
 * (plan_fcosts.c):
 *   file-costs 1 DRIVER FSTYPE DEV P NODES LAT BW BW_RANK BW_LEN
 *                STREAM_BW STREAM_LEN
 */
#define WISDOM_HEAD "# passion wisdom 1\n"
#define COSTS_WORD "xchg-costs"
#define COSTS_VERSION 1

char *plan_wisdom_format(const plan_table *t, size_t *len)
{
    size_t cap = sizeof WISDOM_HEAD + (size_t)t->n * 256 +
                 (size_t)t->ncosts * 160 +
                 (size_t)t->nfcosts * PLAN_FCOSTS_LINE,
           n = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    n += (size_t)snprintf(s, cap, "%s", WISDOM_HEAD);
    for (int i = 0; i < t->ncosts; i++) {
        const plan_msg_costs *c = &t->costs[i];
        n += (size_t)snprintf(s + n, cap - n,
                              "%s %d %" PRId64 " %" PRId64
                              " %.17g %.17g %.17g %.17g\n",
                              COSTS_WORD, COSTS_VERSION, c->procs, c->nodes,
                              c->round, c->msg, c->byte, c->copy);
    }
    n += plan_file_costs_format(t, s + n, cap - n);
    for (int i = 0; i < t->n; i++) {
        const plan_rec *r = &t->rec[i];
        if (r->winner < 0)
            continue;
        double sec = r->agreed[r->winner];
        n += (size_t)snprintf(s + n, cap - n, "%s", plan_op_name(r->sig.op));
        for (int k = 0; k < PLAN_KEYS; k++)
            n += (size_t)snprintf(s + n, cap - n, " %" PRId64, r->sig.key[k]);
        n += (size_t)snprintf(s + n, cap - n, " %d %d %.6g\n",
                              r->cand[r->winner].method,
                              r->cand[r->winner].param,
                              sec < PLAN_SLOW ? sec : -1.0);
    }
    *len = n;
    return s;
}

static int bad(char *detail, size_t dlen, int line, const char *why)
{
    if (detail && dlen)
        snprintf(detail, dlen, "wisdom line %d: %s", line, why);
    return PASSION_EINVAL;
}

/* the rest of an xchg-costs line (after its first word) */
static int parse_costs(plan_table *t, char **save, int line, char *detail,
                       size_t dlen)
{
    char *w = strtok_r(NULL, " \t", save), *end = NULL;
    long long ver = w ? strtoll(w, &end, 10) : -1;
    if (!w || *end || ver != COSTS_VERSION) {
        char why[96];
        snprintf(why, sizeof why, "%s line of version %.20s: this passion "
                 "reads version %d", COSTS_WORD, w ? w : "(none)",
                 COSTS_VERSION);
        return bad(detail, dlen, line, why);
    }
    plan_msg_costs c;
    int64_t k[2];
    for (int i = 0; i < 2; i++) {
        w = strtok_r(NULL, " \t", save);
        errno = 0;
        long long x = w ? strtoll(w, &end, 10) : 0;
        if (!w || errno || end == w || *end || x < 1 || x > INT32_MAX)
            return bad(detail, dlen, line, "expected the ranks and the "
                       "nodes, integers >= 1, after the version");
        k[i] = x;
    }
    double v[4];
    for (int i = 0; i < 4; i++) {
        w = strtok_r(NULL, " \t", save);
        v[i] = w ? strtod(w, &end) : -1;
        if (!w || *end || !isfinite(v[i]) || v[i] < 0)
            return bad(detail, dlen, line, "expected four costs in "
                       "seconds, finite and >= 0");
    }
    if (strtok_r(NULL, " \t", save))
        return bad(detail, dlen, line, "expected the end of the line "
                   "after the four costs");
    c.procs = k[0];
    c.nodes = k[1];
    c.round = v[0];
    c.msg = v[1];
    c.byte = v[2];
    c.copy = v[3];
    plan_msg_costs_put(t, &c);
    return PASSION_OK;
}

static int parse_line(plan_table *t, char *p, int line, char *detail,
                      size_t dlen)
{
    char *save = NULL, *w = strtok_r(p, " \t", &save);
    if (w && !strcmp(w, COSTS_WORD))
        return parse_costs(t, &save, line, detail, dlen);
    if (w && !strcmp(w, PLAN_FCOSTS_WORD)) {
        char why[160];
        return plan_file_costs_parse(t, &save, why, sizeof why)
                   ? bad(detail, dlen, line, why)
                   : PASSION_OK;
    }
    plan_sig sig;
    memset(&sig, 0, sizeof sig);
    sig.op = -1;
    for (int op = 0; op < PLAN_OP_N && w; op++)
        if (!strcmp(w, op_names[op]))
            sig.op = op;
    if (sig.op < 0)
        return bad(detail, dlen, line, "not an operation of this passion");
    int64_t v[PLAN_KEYS + 2];
    for (int k = 0; k < PLAN_KEYS + 2; k++) {
        w = strtok_r(NULL, " \t", &save);
        char *end;
        errno = 0;
        long long x = w ? strtoll(w, &end, 10) : 0;
        if (!w || errno || end == w || *end)
            return bad(detail, dlen, line, "expected 10 integers after "
                       "the operation");
        v[k] = x;
    }
    w = strtok_r(NULL, " \t", &save);
    char *end = NULL;
    double sec = w ? strtod(w, &end) : 0;
    if (!w || *end || !isfinite(sec) || strtok_r(NULL, " \t", &save))
        return bad(detail, dlen, line, "expected the seconds, then the end "
                   "of the line");
    if (v[PLAN_KEYS] < 0 || v[PLAN_KEYS] > INT32_MAX ||
        v[PLAN_KEYS + 1] < 0 || v[PLAN_KEYS + 1] > INT32_MAX)
        return bad(detail, dlen, line, "method or parameter out of range");
    memcpy(sig.key, v, sizeof sig.key);
    plan_cand c = {(int)v[PLAN_KEYS], (int)v[PLAN_KEYS + 1], 0};
    return plan_wisdom_put(t, &sig, &c, sec < 0 ? PLAN_SLOW : sec);
}

int plan_wisdom_parse(plan_table *t, const char *text, size_t len,
                      char *detail, size_t dlen)
{
    if (len < sizeof WISDOM_HEAD - 1 ||
        memcmp(text, WISDOM_HEAD, sizeof WISDOM_HEAD - 1))
        return bad(detail, dlen, 1, "not '# passion wisdom 1'");
    char *copy = malloc(len + 1);
    if (!copy)
        return PASSION_ENOMEM;
    memcpy(copy, text, len);
    copy[len] = '\0';
    int rc = PASSION_OK, line = 0;
    char *p = copy;
    while (p && *p && !rc) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        line++;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p && *p != '#')
            rc = parse_line(t, p, line, detail, dlen);
        p = nl ? nl + 1 : NULL;
    }
    free(copy);
    return rc;
}
