/*
 * xchg_mpi.c - the baseline: MPI's own MPI_Alltoall / MPI_Alltoallv on
 * bytes (the large-count variants when a count or displacement does not
 * fit in an int).
 *
 * Its price (collective/planner/plan_xchg_price.c) follows MPICH's
 * selection for MPI_Alltoall. Counters: one round, one message per
 * non-empty destination.
 *
 * Invariant: no staging of its own (int or MPI_Count copies of the
 * arrays are bookkeeping); the bytes go to MPI unchanged.
 */
#include "xchg.h"

#include <limits.h>
#include <stdlib.h>

/* the largest count or displacement given to the int interfaces; tests
   lower it (coll_xchg_mpi_set_int_limit) to run the large-count path */
static int64_t int_limit = INT_MAX;

void coll_xchg_mpi_set_int_limit(int64_t limit)
{
    int_limit = limit > 0 && limit < INT_MAX ? limit : INT_MAX;
}

static int fits_int(const coll_xchg_plan *pl)
{
    for (int j = 0; j < pl->P; j++)
        if (coll_sc(pl, j) > int_limit || coll_sd(pl, j) > int_limit ||
            coll_rc(pl, j) > int_limit || coll_rd(pl, j) > int_limit)
            return 0;
    return 1;
}

/* the int interfaces do: MPI_Alltoall (a block within the limit) or
   MPI_Alltoallv (every count and displacement within it) */
static int small_path(const coll_xchg_plan *pl)
{
    return pl->block >= 0 ? pl->block <= int_limit : fits_int(pl);
}

#if MPI_VERSION >= 4
/* MPI_Count arrays are our int64 arrays when the types coincide. */
#define COUNT_IS_I64 _Generic((MPI_Count *)0, int64_t *: 1, default: 0)
#define AINT_IS_I64 _Generic((MPI_Aint *)0, int64_t *: 1, default: 0)

static int64_t mpi_scratch(const coll_xchg_plan *pl)
{
    /* int arrays for MPI_Alltoallv, or MPI_Count/MPI_Aint copies where
       those types are not int64_t */
    if (pl->block >= 0)
        return 0;
    if (small_path(pl))
        return 4 * (int64_t)pl->P * (int64_t)sizeof(int);
    if (COUNT_IS_I64 && AINT_IS_I64)
        return 0;
    return 4 * (int64_t)pl->P * 8;
}

/* past the int limit: MPI 4's large-count calls */
static int mpi_large(coll_xchg_plan *pl)
{
    int P = pl->P;
    void *sbuf = (void *)pl->sbuf;
    if (pl->block >= 0)
        return MPI_Alltoall_c(sbuf, pl->block, MPI_BYTE, pl->rbuf, pl->block,
                              MPI_BYTE, pl->comm);
    if (pl->scratch) {
        MPI_Count *sc = pl->scratch, *rc_ = sc + 2 * P;
        MPI_Aint *sd = (MPI_Aint *)(sc + P), *rd = (MPI_Aint *)(sc + 3 * P);
        for (int j = 0; j < P; j++) {
            sc[j] = pl->sc[j];
            sd[j] = pl->sd[j];
            rc_[j] = pl->rc[j];
            rd[j] = pl->rd[j];
        }
        return MPI_Alltoallv_c(sbuf, sc, sd, MPI_BYTE, pl->rbuf, rc_, rd,
                               MPI_BYTE, pl->comm);
    }
    return MPI_Alltoallv_c(sbuf, (const MPI_Count *)pl->sc,
                           (const MPI_Aint *)pl->sd, MPI_BYTE, pl->rbuf,
                           (const MPI_Count *)pl->rc,
                           (const MPI_Aint *)pl->rd, MPI_BYTE, pl->comm);
}
#else
/*
 * MPI 3 (Open MPI 4.x): no large-count calls. MPI_Alltoallw with one
 * datatype per peer that holds the peer's bytes at their displacement (a
 * struct of 1 GiB blocks and the rest, MPI_Aint displacements), count 1
 * and displacement 0. Scratch: the int arrays of the small path, or the
 * counts, displacements and datatypes of both sides.
 */
static int64_t mpi_scratch(const coll_xchg_plan *pl)
{
    if (small_path(pl) && pl->block >= 0)
        return 0;
    if (small_path(pl))
        return 4 * (int64_t)pl->P * (int64_t)sizeof(int);
    return (int64_t)pl->P * (4 * (int64_t)sizeof(int) +
                             2 * (int64_t)sizeof(MPI_Datatype));
}

/* n bytes at byte displacement disp as one datatype */
static int byte_run_type(int64_t disp, int64_t n, MPI_Datatype *t)
{
    int64_t g = int_limit < (1 << 30) ? int_limit : (1 << 30);
    int64_t q = n / g, r = n % g;
    MPI_Datatype chunk, parts[2];
    int len[2], k = 0;
    MPI_Aint d[2];
    int rc = MPI_Type_contiguous((int)g, MPI_BYTE, &chunk);
    if (rc != MPI_SUCCESS)
        return rc;
    if (q) {
        parts[k] = chunk;
        len[k] = (int)q;
        d[k++] = (MPI_Aint)disp;
    }
    if (r) {
        parts[k] = MPI_BYTE;
        len[k] = (int)r;
        d[k++] = (MPI_Aint)(disp + q * g);
    }
    rc = MPI_Type_create_struct(k, len, d, parts, t);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(t);
    MPI_Type_free(&chunk);
    return rc;
}

static int mpi_large(coll_xchg_plan *pl)
{
    int P = pl->P, rc = MPI_SUCCESS, made = 0;
    int *sc = pl->scratch, *sd = sc + P, *rc_ = sc + 2 * P, *rd = sc + 3 * P;
    MPI_Datatype *st = (MPI_Datatype *)(sc + 4 * P), *rt = st + P;
    for (int j = 0; j < P; j++) {
        sc[j] = coll_sc(pl, j) > 0;
        rc_[j] = coll_rc(pl, j) > 0;
        sd[j] = rd[j] = 0;
        st[j] = rt[j] = MPI_BYTE;
    }
    for (; made < P && rc == MPI_SUCCESS; made++) {
        int j = made;
        if (sc[j])
            rc = byte_run_type(coll_sd(pl, j), coll_sc(pl, j), &st[j]);
        if (rc == MPI_SUCCESS && rc_[j])
            rc = byte_run_type(coll_rd(pl, j), coll_rc(pl, j), &rt[j]);
    }
    /* every rank calls the collective (a rank whose types failed sends
       and receives nothing and reports the error) */
    int bad = rc != MPI_SUCCESS;
    if (bad)
        for (int j = 0; j < P; j++)
            sc[j] = rc_[j] = 0;
    int rc2 = MPI_Alltoallw(pl->sbuf, sc, sd, st, pl->rbuf, rc_, rd, rt,
                            pl->comm);
    for (int j = 0; j < P; j++) {
        if (st[j] != MPI_BYTE)
            MPI_Type_free(&st[j]);
        if (rt[j] != MPI_BYTE)
            MPI_Type_free(&rt[j]);
    }
    return bad ? rc : rc2;
}
#endif

static int mpi_run(coll_xchg_plan *pl)
{
    int P = pl->P, rc = MPI_SUCCESS;
    void *sbuf = (void *)pl->sbuf;
    /* MPI sends them inside the collective: the core counts them within
       / between nodes and charges the simulated network here, before */
    for (int j = 0; j < P; j++)
        if (j != pl->me && coll_sc(pl, j) > 0)
            core_net_charge(pl->ctx, j, coll_sc(pl, j), CORE_NET_COUNTED);
    if (pl->block >= 0 && small_path(pl)) {
        rc = MPI_Alltoall(sbuf, (int)pl->block, MPI_BYTE, pl->rbuf,
                          (int)pl->block, MPI_BYTE, pl->comm);
    } else if (pl->block < 0 && small_path(pl)) {
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
    } else {
        rc = mpi_large(pl);
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
    .id = PASSION_XCHG_MPI,
    .agree_after = 0,
    .scratch = mpi_scratch,
    .run = mpi_run,
};
