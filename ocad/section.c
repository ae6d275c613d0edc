/*
 * section.c - regular sections (start, count, stride per dimension) and
 * memory sides: validation with 64-bit overflow checks.
 *
 * Invariant: a section that passes ocad_section_check lies inside its index
 * range, so every element's file offset is computable without overflow.
 */
#include "ocad.h"

#include <string.h>

int passion_section_set(passion_section *s, int ndims, const int64_t *start,
                        const int64_t *count, const int64_t *stride)
{
    if (!s || ndims < 1 || ndims > PASSION_MAX_DIMS || !count)
        return PASSION_EINVAL;
    memset(s, 0, sizeof *s);
    for (int d = 0; d < ndims; d++) {
        s->start[d] = start ? start[d] : 0;
        s->count[d] = count[d];
        s->stride[d] = stride ? stride[d] : 1;
    }
    return PASSION_OK;
}

int64_t passion_section_elems(const passion_section *s, int ndims)
{
    if (!s || ndims < 1 || ndims > PASSION_MAX_DIMS)
        return 0;
    int64_t n = 1;
    for (int d = 0; d < ndims; d++)
        if (s->count[d] <= 0 || !core_mul(n, s->count[d], &n))
            return 0;
    return n;
}

int ocad_section_check(passion_ctx *ctx, int nd, const passion_section *s,
                       const int64_t *lo, const int64_t *hi, int64_t *elems)
{
    if (!s)
        return core_err(ctx, PASSION_EINVAL, "NULL section");
    int64_t n = 1;
    int empty = 0;
    for (int d = 0; d < nd; d++) {
        if (s->stride[d] < 1)
            return core_err(ctx, PASSION_EINVAL,
                            "section stride[%d] = %lld: must be >= 1", d,
                            (long long)s->stride[d]);
        if (s->count[d] < 0)
            return core_err(ctx, PASSION_EINVAL,
                            "section count[%d] = %lld is negative", d,
                            (long long)s->count[d]);
        empty |= s->count[d] == 0;
    }
    if (empty) { /* the empty section: nothing to bound or overflow */
        *elems = 0;
        return PASSION_OK;
    }
    for (int d = 0; d < nd; d++) {
        int64_t span, last;
        if (!core_mul(s->count[d] - 1, s->stride[d], &span) ||
            !core_add(s->start[d], span, &last))
            return core_err(ctx, PASSION_EOVERFLOW,
                            "section dimension %d: start + (count-1)*stride "
                            "overflows", d);
        if (s->start[d] < lo[d] || last >= hi[d])
            return core_err(ctx, PASSION_ERANGE,
                            "section dimension %d covers %lld..%lld, valid "
                            "%lld..%lld", d, (long long)s->start[d],
                            (long long)last, (long long)lo[d],
                            (long long)hi[d] - 1);
        if (!core_mul(n, s->count[d], &n))
            return core_err(ctx, PASSION_EOVERFLOW,
                            "section element count overflows");
    }
    *elems = n;
    return PASSION_OK;
}

int ocad_memspec_check(passion_ctx *ctx, int nd, int64_t esize,
                       const passion_section *s, const passion_memspec *m)
{
    int64_t b = esize;
    int empty = 0;
    for (int d = 0; d < nd; d++)
        empty |= s->count[d] == 0;
    for (int d = 0; d < nd; d++) {
        int64_t shape = m ? m->shape[d] : s->count[d];
        int64_t off = m ? m->offset[d] : 0, end;
        if (shape < 0 || off < 0)
            return core_err(ctx, PASSION_EINVAL,
                            "memory side dimension %d: negative shape or "
                            "offset", d);
        if (empty)
            continue; /* nothing lands in memory */
        if (!core_add(off, s->count[d], &end) || end > shape)
            return core_err(ctx, PASSION_ERANGE,
                            "memory side dimension %d: offset %lld + count "
                            "%lld exceeds shape %lld", d, (long long)off,
                            (long long)s->count[d], (long long)shape);
        if (!core_mul(b, shape, &b))
            return core_err(ctx, PASSION_EOVERFLOW,
                            "memory side bytes overflow 64 bits");
    }
    return PASSION_OK;
}
