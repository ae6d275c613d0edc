/*
 * xchg_case.h - one all-to-all(v) test case for the exchange tests
 * (test_exchange.c, test_twolevel.c): a matrix of bytes from rank i to
 * rank j (the same on every rank, from a seed), this rank's counts and
 * displacements (optionally with random gaps between blocks, which must
 * stay untouched), a send buffer filled with a pattern that names source,
 * destination and position, and the reference: what MPI_Alltoallv puts in
 * a receive buffer of the same layout.
 */
#ifndef PASSION_TEST_XCHG_CASE_H
#define PASSION_TEST_XCHG_CASE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* byte k of the message from src to dst */
unsigned char th_xchg_pattern(int src, int dst, int64_t k, uint64_t seed);

/* bytes from i to j on P ranks (malloc'd, P*P entries, row i = sender):
   zero with probability zero_pct %, else 0..maxb */
int64_t *th_xchg_matrix(int P, uint64_t seed, int64_t maxb, int zero_pct);

typedef struct th_xcase {
    int esize;                   /* bytes of an element of the type */
    int64_t *sc, *sd, *rc, *rd;  /* counts, displacements (elements) */
    int *isc, *isd, *irc, *ird;  /* the same for MPI_Alltoallv */
    unsigned char *sb, *rb, *ref; /* send, receive, MPI's receive */
    size_t sbytes, rbytes;
} th_xcase;

/* This rank's case of matrix m (bytes: multiples of type's size) on
   MPI_COMM_WORLD; gaps: 0..2 elements before each block (the gaps' seed
   is seed ^ rank * 977). rb and ref are filled with 0xab, the gaps of sb
   with 0x5a; ref holds MPI_Alltoallv's result. */
void th_xcase_make(th_xcase *x, const int64_t *m, MPI_Datatype type,
                   uint64_t seed, int gaps);
/* 1 when the receive buffer equals MPI's, gaps included */
int th_xcase_equal(const th_xcase *x);
void th_xcase_free(th_xcase *x);

#endif
