/*
 * xchg_mpi.c - the baseline: MPI's own MPI_Alltoall / MPI_Alltoallv on
 * bytes (the large-count variants when a count or displacement does not
 * fit in an int).
 *
 * Model: MPICH's selection for MPI_Alltoall (blocks of at most 256 bytes
 * on 8 or more ranks: Bruck's index algorithm with radix 2; up to 32 KiB:
 * every message posted at once; larger: pairwise steps) and one round of
 * posted messages for MPI_Alltoallv. Counters: one round, one message per
 * non-empty destination.
 *
 * Invariant: no staging of its own (int or MPI_Count copies of the
 * arrays are bookkeeping); the bytes go to MPI unchanged.
 */
#include "xchg.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>

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
        return coll_xchg_index.model(c, s, &r);
    r = 0;
    if (s->block > 32768)
        return coll_xchg_pairwise.model(c, s, &r);
    return coll_xchg_a1.model(c, s, &r);
}

/* MPI_Count arrays are our int64 arrays when the types coincide. */
#define COUNT_IS_I64 _Generic((MPI_Count *)0, int64_t *: 1, default: 0)
#define AINT_IS_I64 _Generic((MPI_Aint *)0, int64_t *: 1, default: 0)

static int fits_int(const coll_xchg_plan *pl)
{
    for (int j = 0; j < pl->P; j++)
        if (coll_sc(pl, j) > INT_MAX || coll_sd(pl, j) > INT_MAX ||
            coll_rc(pl, j) > INT_MAX || coll_rd(pl, j) > INT_MAX)
            return 0;
    return 1;
}

static int64_t mpi_scratch(const coll_xchg_plan *pl)
{
    /* int arrays for MPI_Alltoallv, or MPI_Count/MPI_Aint copies where
       those types are not int64_t */
    if (pl->block >= 0)
        return 0;
    if (fits_int(pl))
        return 4 * (int64_t)pl->P * (int64_t)sizeof(int);
    if (COUNT_IS_I64 && AINT_IS_I64)
        return 0;
    return 4 * (int64_t)pl->P * 8;
}

static int mpi_run(coll_xchg_plan *pl)
{
    int P = pl->P, rc = MPI_SUCCESS;
    void *sbuf = (void *)pl->sbuf;
    if (pl->block >= 0) {
        if (pl->block <= INT_MAX)
            rc = MPI_Alltoall(sbuf, (int)pl->block, MPI_BYTE, pl->rbuf,
                              (int)pl->block, MPI_BYTE, pl->comm);
        else
            rc = MPI_Alltoall_c(sbuf, pl->block, MPI_BYTE, pl->rbuf,
                                pl->block, MPI_BYTE, pl->comm);
    } else if (pl->scratch && fits_int(pl)) {
        int *a = pl->scratch, *sc = a, *sd = a + P, *rc_ = a + 2 * P,
            *rd = a + 3 * P;
        for (int j = 0; j < P; j++) {
            sc[j] = (int)pl->sc[j];
            sd[j] = (int)pl->sd[j];
            rc_[j] = (int)pl->rc[j];
            rd[j] = (int)pl->rd[j];
        }
        rc = MPI_Alltoallv(sbuf, sc, sd, MPI_BYTE, pl->rbuf, rc_, rd,
                           MPI_BYTE, pl->comm);
    } else if (pl->scratch) {
        MPI_Count *sc = pl->scratch, *rc_ = sc + 2 * P;
        MPI_Aint *sd = (MPI_Aint *)(sc + P), *rd = (MPI_Aint *)(sc + 3 * P);
        for (int j = 0; j < P; j++) {
            sc[j] = pl->sc[j];
            sd[j] = pl->sd[j];
            rc_[j] = pl->rc[j];
            rd[j] = pl->rd[j];
        }
        rc = MPI_Alltoallv_c(sbuf, sc, sd, MPI_BYTE, pl->rbuf, rc_, rd,
                             MPI_BYTE, pl->comm);
    } else {
        rc = MPI_Alltoallv_c(sbuf, (const MPI_Count *)pl->sc,
                             (const MPI_Aint *)pl->sd, MPI_BYTE, pl->rbuf,
                             (const MPI_Count *)pl->rc,
                             (const MPI_Aint *)pl->rd, MPI_BYTE, pl->comm);
    }
    if (rc != MPI_SUCCESS)
        return core_err(pl->ctx, PASSION_EMPI, "MPI_Alltoall(v) failed");
    for (int j = 0; j < P; j++)
        if (j != pl->me && coll_sc(pl, j) > 0) {
            pl->st.messages++;
            pl->st.bytes_sent += coll_sc(pl, j);
        }
    if (P > 1)
        pl->st.rounds++;
    return PASSION_OK;
}

const coll_xchg_ops coll_xchg_mpi = {
    .name = "mpi",
    .id = PASSION_XCHG_MPI,
    .regular_only = 0,
    .agree_after = 0,
    .model = mpi_model,
    .scratch = mpi_scratch,
    .run = mpi_run,
};
