/*
 * xchg_table.c - the table of exchange algorithms' ops. Order matters
 * only for ties of the model: our own algorithms first, MPI's call last.
 * An entry names its algorithm by its id alone; the name is
 * passion/names.h's (passion_xchg_name), the one list of them
 * (tests/check_tables.py checks that the ids here and the names there
 * are the same set).
 *
 * Invariant: every entry has a distinct id (enum passion_xchg), a model
 * and a run; every value of the enumeration but auto has an entry.
 */
#include "xchg.h"

static const coll_xchg_ops *const xchg_table[] = {
    &coll_xchg_a1,        &coll_xchg_pairwise,     &coll_xchg_index,
    &coll_xchg_fourstage, &coll_xchg_fourstage_nb, &coll_xchg_twolevel,
    &coll_xchg_mpi,
};

int coll_xchg_ops_count(void)
{
    return (int)(sizeof xchg_table / sizeof xchg_table[0]);
}

const coll_xchg_ops *coll_xchg_ops_at(int i)
{
    return i >= 0 && i < coll_xchg_ops_count() ? xchg_table[i] : NULL;
}

const coll_xchg_ops *coll_xchg_ops_get(int alg)
{
    for (int i = 0; i < coll_xchg_ops_count(); i++)
        if (xchg_table[i]->id == alg)
            return xchg_table[i];
    return NULL;
}

const char *coll_xchg_name(int alg)
{
    return passion_xchg_name((passion_xchg)alg);
}
