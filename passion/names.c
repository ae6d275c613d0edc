/*
 * names.c - the names tables of names.h and the public calls that read
 * them. Each table is keyed by the public enumeration (designated
 * initializers): adding a driver or an algorithm is a value in
 * include/passion.h and one line here.
 *
 * Invariant: see names.h (every value named, NULL after the last).
 */
#include "names.h"

#include <stddef.h>

const char *const core_driver_names[] = {
    [PASSION_DRIVER_POSIX] = "posix",
    [PASSION_DRIVER_MPIIO] = "mpiio",
    [PASSION_DRIVER_FAULT] = "fault",
    NULL, /* the end: the entry after the last value */
};

const char *const core_xchg_names[] = {
    [PASSION_XCHG_AUTO] = "auto",
    [PASSION_XCHG_MPI] = "mpi",
    [PASSION_XCHG_PAIRWISE] = "pairwise",
    [PASSION_XCHG_A1] = "a1",
    [PASSION_XCHG_INDEX] = "index",
    [PASSION_XCHG_FOURSTAGE] = "fourstage",
    [PASSION_XCHG_FOURSTAGE_NB] = "fourstage-nb",
    [PASSION_XCHG_TWOLEVEL] = "twolevel",
    NULL, /* the end */
};

int core_names_count(const char *const *names)
{
    int n = 0;
    while (names[n])
        n++;
    return n;
}

static const char *name_at(const char *const *names, int v)
{
    return v >= 0 && v < core_names_count(names) ? names[v] : NULL;
}

const char *passion_driver_name(passion_driver driver)
{
    return name_at(core_driver_names, (int)driver);
}

const char *passion_xchg_name(passion_xchg alg)
{
    return name_at(core_xchg_names, (int)alg);
}
