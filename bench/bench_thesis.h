/*
 * bench_thesis.h - the thesis's access patterns (tables 6.1-6.6: 4096 x
 * 4096 4-byte elements; table 6.8: 16384 x 16384), shared by the suites
 * etp, etp-large and nodes: each case a name, "read" or "write", and a
 * section in the thesis's 1-based l:u:s notation per dimension with terms
 * in the rank p and nprocs (e.g. "1+100p:100+100p:1,1:100:1").
 */
#ifndef PASSION_BENCH_THESIS_H
#define PASSION_BENCH_THESIS_H

#include "passion.h"
#include <stdint.h>

typedef struct bench_tcase {
    const char *name, *op, *sec;
} bench_tcase;

extern const bench_tcase bench_thesis_cases[]; /* tables 6.1-6.6 */
extern const int bench_thesis_ncases;
extern const bench_tcase bench_thesis_large[]; /* table 6.8 */
extern const int bench_thesis_nlarge;

/* The 0-based passion section (dimension 0 = rows) of case section `sec`
   at rank p of P on an N x N array (counts cut at the array's end). */
void bench_thesis_section(const char *sec, int p, int P, int64_t N,
                          passion_section *s);

/* The suites' N x N matrix of 4-byte elements, column-major: element
   (row, col) as the file holds it at the start, and as a write with
   `salt` leaves it. */
uint32_t bench_thesis_orig(int64_t N, int64_t row, int64_t col);
uint32_t bench_thesis_wval(int64_t N, int64_t row, int64_t col,
                           uint32_t salt);

/* Write that matrix (bench_thesis_orig) into the N x N file f: rank
   `rank` of P its block of columns, 64 columns a call, direct. 0 or the
   first error (the rest unwritten). Independent. */
int bench_thesis_fill(passion_file *f, int64_t N, int rank, int P);

#endif
