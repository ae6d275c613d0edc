/*
 * core_base.h - the small helpers every file of passion/ uses (prefix
 * core_): the visibility macro of internal symbols, 64-bit arithmetic with
 * overflow check, the clock, and the median of learned costs.
 *
 * Invariants: CORE_HIDDEN marks every internal symbol (none is exported);
 * core_mul and core_add never overflow silently (false on overflow, *r then
 * unspecified); core_now is monotonic seconds; core_median and core_learned
 * leave their samples as they are.
 */
#ifndef PASSION_CORE_BASE_H
#define PASSION_CORE_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CORE_HIDDEN __attribute__((visibility("hidden")))

/* ---- 64-bit arithmetic with overflow check ---- */

static inline bool core_mul(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}
static inline bool core_add(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_add_overflow(a, b, r);
}

/* 1 if the n bytes at p are all zero (reserved fields of public structs). */
static inline bool core_zero(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return false;
    return true;
}

/* ---- time ---- */
CORE_HIDDEN double core_now(void);

/* The median (the upper middle value) of v[0..n), 1 <= n <= 64, for the
 * costs learned from recent calls; v is left as it is. */
CORE_HIDDEN double core_median(const double *v, int n);
/* A cost learned from the n (1 <= n <= 64) most recent samples v of a
 * call's own measured time: their median once there are CORE_LEARN_TRUST
 * of them, the smallest before. A sample can only be too slow (a load
 * spike, a page fault, a one-time start: io_uring's ring, a first
 * allocation), never much too fast, so while a median would still be one
 * of the few first samples, the fastest is the safer figure. */
#define CORE_LEARN_TRUST 3
CORE_HIDDEN double core_learned(const double *v, int n);

#endif
