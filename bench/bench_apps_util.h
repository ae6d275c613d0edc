/*
 * bench_apps_util.h - helpers shared by the application benchmarks
 * (prefetch, reuse): array creation slab by slab,
 * checksums of a local array by global index (so a distributed result can
 * be compared with an in-core reference or with another run).
 */
#ifndef PASSION_BENCH_APPS_UTIL_H
#define PASSION_BENCH_APPS_UTIL_H

#include "bench_util.h"

/* Value of pixel / cell (gi, gj) as `es` bytes: a hash of the index. */
void bench_cell(int64_t gi, int64_t gj, int64_t es, void *out);

/* Column-block 2-D array (grid 1 x P), column-major, ghost g in dim 1. */
int bench_colblock(passion_ctx *ctx, int64_t n0, int64_t n1, int64_t es,
                   int64_t g, passion_array **a);

/* Fill this rank's local interior with bench_cell, in budget-sized
   column chunks. Collective (agrees on the outcome). */
int bench_fill(passion_ctx *ctx, passion_array *a, passion_file *f);

/* Order-independent checksum of all ranks' interiors by global index.
   Collective. */
uint64_t bench_checksum(passion_ctx *ctx, passion_array *a, passion_file *f);

/* The same checksum of a whole row-major n0 x n1 array in memory. */
uint64_t bench_checksum_mem(const void *g, int64_t n0, int64_t n1,
                            int64_t es);

#endif
