/*
 * plan_fcosts.c - the file's measured costs kept with the planner's
 * records (plan_file_costs, planner.h) and their line in wisdom:
 *   file-costs 1 DRIVER FSTYPE DEV P NODES LAT BW BW_RANK BW_LEN
 *                STREAM_BW STREAM_LEN
 * (1 the version of this kind of line; DRIVER the driver's name; FSTYPE
 * the file system's type (statfs f_type, hexadecimal) and DEV its device
 * (st_dev) of the file calibrated on; P ranks on NODES nodes; LAT
 * seconds, BW and STREAM_BW bytes per second written %.17g so that they
 * read back to the same doubles; BW_RANK, BW_LEN and STREAM_LEN bytes).
 *
 * Invariants: a key (driver, fstype, dev, procs, nodes) has at most one
 * entry; a line is taken whole or refused with its number and reason.
 * No MPI, no I/O.
 */
#include "planner.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int same_key(const plan_file_costs *a, const plan_file_costs *b)
{
    return a->driver == b->driver && a->fstype == b->fstype &&
           a->dev == b->dev && a->procs == b->procs && a->nodes == b->nodes;
}

const plan_file_costs *plan_file_costs_find(const plan_table *t,
                                            const plan_file_costs *k)
{
    for (int i = 0; i < t->nfcosts; i++)
        if (same_key(&t->fcosts[i], k))
            return &t->fcosts[i];
    return NULL;
}

void plan_file_costs_put(plan_table *t, const plan_file_costs *c)
{
    plan_file_costs *old = (plan_file_costs *)plan_file_costs_find(t, c);
    if (old) {
        *old = *c;
        return;
    }
    if (t->nfcosts == PLAN_COSTS_MAX) {
        memmove(t->fcosts, t->fcosts + 1,
                (PLAN_COSTS_MAX - 1) * sizeof t->fcosts[0]);
        t->nfcosts--;
    }
    t->fcosts[t->nfcosts++] = *c;
}

size_t plan_file_costs_format(const plan_table *t, char *s, size_t cap)
{
    size_t n = 0;
    for (int i = 0; i < t->nfcosts && n < cap; i++) {
        const plan_file_costs *c = &t->fcosts[i];
        const char *drv = passion_driver_name((passion_driver)c->driver);
        n += (size_t)snprintf(
            s + n, cap - n,
            "%s %d %s 0x%" PRIx64 " %" PRId64 " %" PRId64 " %" PRId64
            " %.17g %.17g %" PRId64 " %" PRId64 " %.17g %" PRId64 "\n",
            PLAN_FCOSTS_WORD, PLAN_FCOSTS_VERSION, drv ? drv : "?",
            (uint64_t)c->fstype, c->dev, c->procs, c->nodes, c->lat, c->bw,
            c->bw_rank, c->bw_len, c->stream_bw, c->stream_len);
    }
    return n;
}

/* the driver whose name is w, -1 none */
static int64_t driver_id(const char *w)
{
    for (int d = 0; d < 64; d++) {
        const char *name = passion_driver_name((passion_driver)d);
        if (name && !strcmp(name, w))
            return d;
    }
    return -1;
}

/* the next word as an integer (base 0: 0x for hexadecimal) in [lo, hi] */
static int word_int(char **save, int64_t lo, int64_t hi, int64_t *out)
{
    char *w = strtok_r(NULL, " \t", save), *end = NULL;
    errno = 0;
    long long x = w ? strtoll(w, &end, 0) : 0;
    if (!w || errno || end == w || *end || x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

/* the next word as a finite number >= 0 */
static int word_num(char **save, double *out)
{
    char *w = strtok_r(NULL, " \t", save), *end = NULL;
    double v = w ? strtod(w, &end) : -1;
    if (!w || end == w || *end || !isfinite(v) || v < 0)
        return -1;
    *out = v;
    return 0;
}

int plan_file_costs_parse(plan_table *t, char **save, char *why, size_t wlen)
{
    int64_t ver = -1;
    if (word_int(save, 0, INT32_MAX, &ver) || ver != PLAN_FCOSTS_VERSION) {
        snprintf(why, wlen, "%s line of another version: this passion "
                 "reads version %d", PLAN_FCOSTS_WORD, PLAN_FCOSTS_VERSION);
        return -1;
    }
    plan_file_costs c;
    memset(&c, 0, sizeof c);
    char *w = strtok_r(NULL, " \t", save);
    c.driver = w ? driver_id(w) : -1;
    if (c.driver < 0) {
        snprintf(why, wlen, "unknown driver '%.20s'", w ? w : "");
        return -1;
    }
    if (word_int(save, INT64_MIN, INT64_MAX, &c.fstype) ||
        word_int(save, INT64_MIN, INT64_MAX, &c.dev) ||
        word_int(save, 1, INT32_MAX, &c.procs) ||
        word_int(save, 1, INT32_MAX, &c.nodes)) {
        snprintf(why, wlen, "expected the file system's type and device, "
                 "then the ranks and the nodes (>= 1), after the driver");
        return -1;
    }
    if (word_num(save, &c.lat) || word_num(save, &c.bw) ||
        word_int(save, 0, INT64_MAX, &c.bw_rank) ||
        word_int(save, 0, INT64_MAX, &c.bw_len) ||
        word_num(save, &c.stream_bw) ||
        word_int(save, 0, INT64_MAX, &c.stream_len)) {
        snprintf(why, wlen, "expected latency, bandwidth, bytes a rank, "
                 "bytes, stream bandwidth, stream bytes: finite, >= 0");
        return -1;
    }
    if (strtok_r(NULL, " \t", save)) {
        snprintf(why, wlen, "expected the end of the line after the costs");
        return -1;
    }
    plan_file_costs_put(t, &c);
    return 0;
}
