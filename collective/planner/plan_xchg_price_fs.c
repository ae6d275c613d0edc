/*
 * plan_xchg_price_fs.c - the price of the four-stage irregular all-to-all
 * of Liu, Wang and Prasanna ("Portable and scalable algorithm for
 * irregular all-to-all communication", JPDC 2002, section 3.2), blocking
 * (3.2.3) and non-blocking with dual buffers (3.4)
 * (collective/exchange/xchg_fourstage.c runs it): its node array
 * (section 3.2.2: C columns, R rows, the first r columns complete; when
 * r > R - 1, C becomes floor(sqrt P)), which its schedule stands on too;
 * Theorem 2's start-ups and bytes; Theorem 1's staging bound; its share
 * of the network.
 *
 * Invariant: pure functions of their arguments; the grid is a function
 * of P alone, the same on every rank.
 */
#include "plan_xchg.h"

#include <math.h>

static int isqrt_floor(int P)
{
    int s = (int)sqrt((double)P);
    while (s > 0 && s * s > P)
        s--;
    while ((s + 1) * (s + 1) <= P)
        s++;
    return s;
}

static int isqrt_ceil(int P)
{
    int s = isqrt_floor(P);
    return s * s == P ? s : s + 1;
}

coll_grid coll_grid_make(int P)
{
    coll_grid g = {P, 1, P > 0 ? 1 : 0, 0};
    if (P <= 1)
        return g;
    int C = isqrt_ceil(P);
    for (;;) {
        int R = (P + C - 1) / C, r = P % C;
        if (r == 0 || r <= R - 1 || C == 1) {
            g.C = C;
            g.R = R;
            g.r = r;
            return g;
        }
        C = C == isqrt_ceil(P) ? isqrt_floor(P) : C - 1;
    }
}

/* messages this node sends over the four stages (max over nodes) */
static int64_t fs_sends(const coll_grid *g)
{
    if (g->P <= 1)
        return 0;
    return 2 * (int64_t)(g->C - 1) + 2 * (int64_t)(g->R - 1);
}

static int64_t fs_steps(const coll_grid *g)
{
    if (g->P <= 1)
        return 0;
    return 2 * (int64_t)(g->C - 1 + (g->r > 0)) + 2 * (int64_t)(g->R - 1);
}

/* Theorem 2: start-ups times alpha plus 4 (C+1) C Lmax / P bytes (the
   longest message of a step times the steps), with the grid's exact
   number of steps; plus the copies (self parts, unpacking) and the
   agreement on the outcome (coll_agree_cost) */
static double fs_model_common(const coll_xchg_costs *c,
                              const coll_xchg_shape *s, int nb)
{
    int P = s->procs;
    if (P <= 1)
        return c->copy * (double)s->lmax;
    coll_grid g = coll_grid_make(P);
    double C = ceil(sqrt((double)P));
    double bytes = 4.0 * (C + 1) * C * (double)s->lmax / P;
    double copies = 2.0 * (double)s->lmax;
    double agree = coll_agree_cost(c, P);
    double start;
    if (nb) {
        int stages = 2 + 2 * (g.R > 1);
        start = stages * c->round + (double)fs_sends(&g) * c->msg;
    } else {
        start = (double)fs_steps(&g) * (c->round + c->msg);
    }
    return start + c->byte * bytes + c->copy * copies + agree;
}

/* every message of the four stages may leave the node; each stage moves
   the part of a rank's data that leaves its row or column */
static void fs_net(const coll_xchg_shape *s, int radix, double *msgs,
                   double *bytes)
{
    (void)radix;
    coll_grid g = coll_grid_make(s->procs);
    double lx = (double)s->lmax_x;
    *msgs = (double)fs_sends(&g);
    *bytes = s->procs > 1
                 ? lx * (2.0 * (g.C - 1) / g.C + 2.0 * (g.R - 1) / g.R)
                 : 0;
}

static double fs_model(const coll_xchg_costs *c, const coll_xchg_shape *s,
                       int *radix)
{
    *radix = 0;
    return fs_model_common(c, s, 0);
}

static double fs_model_nb(const coll_xchg_costs *c, const coll_xchg_shape *s,
                          int *radix)
{
    *radix = 0;
    return fs_model_common(c, s, 1);
}

/*
 * Staging bound: Theorem 1's two generations of 2 C^2 Lmax / P data
 * bytes, plus a byte per piece where sizes do not divide evenly, plus the
 * descriptors: a message carries a 16-byte header and 24 bytes per piece,
 * a node holds at most 2 P C + 4 C pieces of a generation, and the
 * headers of the messages it sends in a stage (all of them at once in the
 * non-blocking variant).
 */
static int64_t fs_staging(const coll_xchg_shape *s, int radix)
{
    (void)radix;
    int64_t P = s->procs;
    if (P <= 1)
        return 0;
    int64_t C = (int64_t)ceil(sqrt((double)P));
    int64_t per = (s->lmax + P - 1) / P;
    int64_t pieces = 2 * P * C + 4 * C;
    int64_t desc = 3 * (32 * C + 24 * pieces);
    return 2 * C * C * per + 2 * pieces + desc;
}

const plan_xchg_alg plan_xchg_fourstage = {
    .id = PASSION_XCHG_FOURSTAGE,
    .model = fs_model,
    .staging = fs_staging,
    .net = fs_net,
};

const plan_xchg_alg plan_xchg_fourstage_nb = {
    .id = PASSION_XCHG_FOURSTAGE_NB,
    .model = fs_model_nb,
    .staging = fs_staging,
    .net = fs_net,
};
