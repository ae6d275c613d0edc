/* xchg_case.c - see xchg_case.h. */
#include "xchg_case.h"

#include <stdlib.h>
#include <string.h>

#include "harness.h"

unsigned char th_xchg_pattern(int src, int dst, int64_t k, uint64_t seed)
{
    return (unsigned char)(src * 131 + dst * 31 + k * 7 + (int64_t)seed);
}

int64_t *th_xchg_matrix(int P, uint64_t seed, int64_t maxb, int zero_pct)
{
    int64_t *m = malloc((size_t)P * (size_t)P * sizeof *m);
    uint64_t s = seed;
    for (int i = 0; i < P * P; i++)
        m[i] = th_range(&s, 0, 99) < zero_pct ? 0 : th_range(&s, 0, maxb);
    return m;
}

void th_xcase_make(th_xcase *x, const int64_t *m, MPI_Datatype type,
                   uint64_t seed, int gaps)
{
    int P = th_size, me = th_rank, esize;
    MPI_Type_size(type, &esize);
    memset(x, 0, sizeof *x);
    x->esize = esize;
    x->sc = calloc(4 * (size_t)P, sizeof *x->sc);
    x->sd = x->sc + P;
    x->rc = x->sd + P;
    x->rd = x->rc + P;
    x->isc = calloc(4 * (size_t)P, sizeof *x->isc);
    x->isd = x->isc + P;
    x->irc = x->isd + P;
    x->ird = x->irc + P;
    int64_t spos = 0, rpos = 0;
    uint64_t s = seed ^ (uint64_t)me * 977;
    for (int j = 0; j < P; j++) {
        x->sc[j] = m[me * P + j] / esize;
        x->rc[j] = m[j * P + me] / esize;
        x->sd[j] = spos + (gaps ? th_range(&s, 0, 2) : 0);
        x->rd[j] = rpos + (gaps ? th_range(&s, 0, 2) : 0);
        spos = x->sd[j] + x->sc[j];
        rpos = x->rd[j] + x->rc[j];
        x->isc[j] = (int)x->sc[j];
        x->isd[j] = (int)x->sd[j];
        x->irc[j] = (int)x->rc[j];
        x->ird[j] = (int)x->rd[j];
    }
    x->sbytes = (size_t)(spos * esize) + 1;
    x->rbytes = (size_t)(rpos * esize) + 1;
    x->sb = malloc(x->sbytes);
    x->rb = malloc(x->rbytes);
    x->ref = malloc(x->rbytes);
    memset(x->sb, 0x5a, x->sbytes);
    for (int j = 0; j < P; j++)
        for (int64_t k = 0; k < x->sc[j] * esize; k++)
            x->sb[x->sd[j] * esize + k] = th_xchg_pattern(me, j, k, seed);
    memset(x->rb, 0xab, x->rbytes);
    memset(x->ref, 0xab, x->rbytes);
    MPI_Alltoallv(x->sb, x->isc, x->isd, type, x->ref, x->irc, x->ird, type,
                  MPI_COMM_WORLD);
}

int th_xcase_equal(const th_xcase *x)
{
    return memcmp(x->rb, x->ref, x->rbytes) == 0;
}

void th_xcase_free(th_xcase *x)
{
    free(x->sb);
    free(x->rb);
    free(x->ref);
    free(x->sc);
    free(x->isc);
    memset(x, 0, sizeof *x);
}
