/*
 * plan_xchg_price.c - the table of the exchange algorithms' prices (what
 * each costs under the linear model, the staging it holds, its share of
 * the network), in the exchange's table order, and the prices of the
 * one-stage algorithms:
 *   a1: Liu, Wang and Prasanna ("Portable and scalable algorithm for
 *     irregular all-to-all communication", JPDC 2002, section 3.1.1, non-
 *     blocking as in section 4): one round of P - 1 messages, no staging;
 *   pairwise: Bokhari ("Complete exchange on the iPSC-860", ICASE report
 *     91-4, 1991): P - 1 one-port steps, each waiting for its largest
 *     message;
 *   mpi: MPI's own MPI_Alltoall(v), priced as MPICH selects for
 *     MPI_Alltoall (blocks of at most 256 bytes on 8 or more ranks:
 *     Bruck's index algorithm with radix 2; up to 32 KiB: every message
 *     posted at once; larger: pairwise steps) and as one round of posted
 *     messages for MPI_Alltoallv.
 * The index algorithm's price is in plan_xchg_price_index.c, the
 * four-stage's in plan_xchg_price_fs.c, the two-level's in
 * plan_xchg_price_tl.c.
 *
 * Invariant: every entry is a pure function of its arguments; the ids
 * are those of the exchange's ops table, in its order
 * (tests/check_tables.py), so that the choice and the executors speak
 * of the same algorithms and break ties alike.
 */
#include "plan_xchg.h"

static double a1_model(const coll_xchg_costs *c, const coll_xchg_shape *s,
                       int *radix)
{
    *radix = 0;
    double self = (double)(s->lmax - s->lmax_x);
    if (s->procs <= 1)
        return c->copy * (double)s->lmax;
    return c->round + (double)(s->procs - 1) * c->msg +
           c->byte * (double)s->lmax_x + c->copy * self;
}

static double pw_model(const coll_xchg_costs *c, const coll_xchg_shape *s,
                       int *radix)
{
    *radix = 0;
    int P = s->procs;
    if (P <= 1)
        return c->copy * (double)s->lmax;
    /* every step waits for its largest message */
    int64_t step = s->block >= 0 ? s->block : s->mmax;
    double bytes = (double)step * (P - 1);
    if (s->block < 0 && bytes > (double)s->total)
        bytes = (double)s->total;
    if (bytes < (double)s->lmax_x)
        bytes = (double)s->lmax_x;
    return (double)(P - 1) * (c->round + c->msg) + c->byte * bytes +
           c->copy * (double)(s->lmax - s->lmax_x);
}

static double mpi_model(const coll_xchg_costs *c, const coll_xchg_shape *s,
                        int *radix)
{
    int P = s->procs;
    *radix = 0;
    if (P <= 1)
        return c->copy * (double)s->lmax;
    /* MPICH's own algorithms, without our agreement (added by the
       caller once) */
    int r = 2;
    if (s->block >= 0 && s->block <= 256 && P >= 8)
        return plan_xchg_index.model(c, s, &r);
    r = 0;
    if (s->block > 32768)
        return plan_xchg_pairwise.model(c, s, &r);
    return plan_xchg_a1.model(c, s, &r);
}

const plan_xchg_alg plan_xchg_a1 = {
    .id = PASSION_XCHG_A1,
    .model = a1_model,
    .hdr_step = 1, /* its one step rides on the headers */
};

const plan_xchg_alg plan_xchg_pairwise = {
    .id = PASSION_XCHG_PAIRWISE,
    .model = pw_model,
};

const plan_xchg_alg plan_xchg_mpi = {
    .id = PASSION_XCHG_MPI,
    .model = mpi_model,
};

static const plan_xchg_alg *const price_table[] = {
    &plan_xchg_a1,        &plan_xchg_pairwise,     &plan_xchg_index,
    &plan_xchg_fourstage, &plan_xchg_fourstage_nb, &plan_xchg_twolevel,
    &plan_xchg_mpi,
};

int plan_xchg_alg_count(void)
{
    return (int)(sizeof price_table / sizeof price_table[0]);
}

const plan_xchg_alg *plan_xchg_alg_at(int i)
{
    return i >= 0 && i < plan_xchg_alg_count() ? price_table[i] : NULL;
}

const plan_xchg_alg *plan_xchg_alg_get(int id)
{
    for (int i = 0; i < plan_xchg_alg_count(); i++)
        if (price_table[i]->id == id)
            return price_table[i];
    return NULL;
}
