/*
 * Datatype decoding with MPI_Type_get_envelope / MPI_Type_get_contents: a
 * type becomes a regular strided pattern (mpiio_strided: blocks of one
 * element size at an offset plus a sum of strides) when its typemap is
 * exactly such a pattern, in the pattern's order.
 *
 * Decoded, nested in any way (each constructor puts its dimensions
 * outside those of its old type, whose extent spaces the copies):
 *   named types without gaps (the element)
 *   contiguous, vector, hvector, dup
 *   indexed_block, hindexed_block, and indexed, hindexed with equal
 *   block lengths whose offsets repeat at nested strides (one stride, or
 *   runs of one stride whose starts are regular in turn: PnetCDF's lists
 *   of byte blocks for a strided section)
 *   subarray (C or Fortran order), darray (none, block, cyclic, cyclic(k)
 *   where each of the rank's blocks is whole; process grid in row-major
 *   order, as MPI defines it)
 *   resized (changes only lb and extent)
 * Dimensions of one copy are dropped as they are found (HDF5 nests
 * single-block hindexed and resized types, one per dimension, which
 * would exceed the limit); ranks are aligned on their common strides
 * when a view is agreed (serve.c).
 * Invariants: every dimension's stride covers the dimensions inside it
 * (the typemap is strictly increasing, never overlapping); a result is
 * returned only after MPI's own size, true lower bound and true extent
 * of the type agree with it; anything else fails with the reason in why.
 * Handles MPI_Type_get_contents returns are freed unless named.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mpiio.h"

#define DECODE_DEPTH 16
#define DECODE_DIMS (MPIIO_MAX_DIMS - 1)

typedef struct contents {
    int combiner;
    int ni, na, nd;
    int *ints;
    MPI_Aint *addrs;
    MPI_Datatype *types;
} contents;

static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

static void contents_free(contents *c)
{
    for (int i = 0; i < c->nd && c->types; i++) {
        int ni, na, nd, comb;
        if (MPI_Type_get_envelope(c->types[i], &ni, &na, &nd, &comb) ==
                MPI_SUCCESS && comb != MPI_COMBINER_NAMED)
            MPI_Type_free(&c->types[i]);
    }
    free(c->ints);
    free(c->addrs);
    free(c->types);
    c->ints = NULL;
    c->addrs = NULL;
    c->types = NULL;
}

/* 0 and the contents (named: no arrays), or -1. */
static int contents_get(MPI_Datatype t, contents *c)
{
    c->ints = NULL;
    c->addrs = NULL;
    c->types = NULL;
    c->nd = 0;
    if (MPI_Type_get_envelope(t, &c->ni, &c->na, &c->nd, &c->combiner) !=
        MPI_SUCCESS)
        return -1;
    if (c->combiner == MPI_COMBINER_NAMED) {
        c->nd = 0;
        return 0;
    }
    c->ints = malloc(sizeof(int) * (size_t)(c->ni + 1));
    c->addrs = malloc(sizeof(MPI_Aint) * (size_t)(c->na + 1));
    c->types = malloc(sizeof(MPI_Datatype) * (size_t)(c->nd + 1));
    if (!c->ints || !c->addrs || !c->types ||
        MPI_Type_get_contents(t, c->ni, c->na, c->nd, c->ints, c->addrs,
                              c->types) != MPI_SUCCESS) {
        int nd = c->nd;
        c->nd = 0; /* nothing returned to free */
        contents_free(c);
        c->nd = nd;
        return -1;
    }
    return 0;
}

static const char *combiner_name(int combiner)
{
    switch (combiner) {
    case MPI_COMBINER_CONTIGUOUS: return "contiguous";
    case MPI_COMBINER_VECTOR: return "vector";
    case MPI_COMBINER_HVECTOR: return "hvector";
    case MPI_COMBINER_INDEXED: return "indexed";
    case MPI_COMBINER_HINDEXED: return "hindexed";
    case MPI_COMBINER_INDEXED_BLOCK: return "indexed_block";
    case MPI_COMBINER_HINDEXED_BLOCK: return "hindexed_block";
    case MPI_COMBINER_STRUCT: return "struct";
    case MPI_COMBINER_SUBARRAY: return "subarray";
    case MPI_COMBINER_DARRAY: return "darray";
    case MPI_COMBINER_RESIZED: return "resized";
    default: return "derived";
    }
}

/* The outer dimensions a constructor adds around its old type, and the
 * byte offset of its first copy. */
typedef struct outer {
    int n;
    int64_t count[MPIIO_MAX_DIMS];
    int64_t stride[MPIIO_MAX_DIMS];
    int64_t off;
} outer;

static int outer_add(outer *o, int64_t count, int64_t stride)
{
    if (o->n >= DECODE_DIMS)
        return -1;
    o->count[o->n] = count;
    o->stride[o->n] = stride;
    o->n++;
    return 0;
}

/* The dimensions of n offsets (bytes, in order) that form a regular
 * pattern of nested strides: offsets d[i] = d[0] + sum_k idx_k stride_k,
 * row-major over the dimensions found (outermost first). A run of equal
 * steps is the innermost dimension; its groups' starts must repeat the
 * first group's shape and be regular themselves, recursively (the
 * hindexed lists of byte blocks that PnetCDF builds for a strided
 * section are such patterns). Returns the number of dimensions put in
 * count/stride (at most max), or -1. */
static int offsets_regular(int64_t n, const int64_t *d, int max,
                           int64_t *count, int64_t *stride)
{
    if (n == 1)
        return 0;
    if (max < 1)
        return -1;
    int64_t step = d[1] - d[0], run = 2;
    while (run < n && d[run] - d[run - 1] == step)
        run++;
    if (run == n) {
        count[max - 1] = n;
        stride[max - 1] = step;
        return 1;
    }
    if (n % run)
        return -1;
    int64_t groups = n / run;
    int64_t *starts = malloc(sizeof *starts * (size_t)groups);
    if (!starts)
        return -1;
    for (int64_t g = 0; g < groups; g++) {
        starts[g] = d[g * run];
        for (int64_t i = 1; i < run; i++)
            if (d[g * run + i] - starts[g] != i * step) {
                free(starts);
                return -1;
            }
    }
    count[max - 1] = run;
    stride[max - 1] = step;
    int k = offsets_regular(groups, starts, max - 1, count, stride);
    free(starts);
    return k < 0 ? -1 : k + 1;
}

/* Blocks of one length (displacements disp[i] * unit bytes, or addr[i]
 * bytes) whose offsets form a regular pattern (offsets_regular):
 * indexed_block, hindexed_block and indexed, hindexed whose lengths are
 * all equal. */
static int blocks_regular(int n, const int *len, const int *disp,
                          const MPI_Aint *addr, int64_t unit, int64_t ext,
                          outer *o)
{
    int64_t count[DECODE_DIMS], stride[DECODE_DIMS];
    if (n < 1)
        return -1;
    for (int i = 1; i < n; i++)
        if (len[i] != len[0])
            return -1;
    int64_t *d = malloc(sizeof *d * (size_t)n);
    if (!d)
        return -1;
    for (int i = 0; i < n; i++)
        d[i] = disp ? (int64_t)disp[i] * unit : (int64_t)addr[i];
    int k = offsets_regular(n, d, DECODE_DIMS, count, stride);
    o->off = d[0];
    free(d);
    if (k < 0)
        return -1;
    for (int i = DECODE_DIMS - k; i < DECODE_DIMS; i++)
        if (outer_add(o, count[i], stride[i]))
            return -1;
    return len[0] < 1 ? -1 : outer_add(o, len[0], ext);
}

/* One darray dimension d of extent unit bytes per index. */
static int darray_dim(const int *ia, int nd, int d, int coord, int64_t unit,
                      outer *o)
{
    int64_t g = ia[3 + d], dist = ia[3 + nd + d], darg = ia[3 + 2 * nd + d];
    int64_t p = ia[3 + 3 * nd + d], k, nb, first, last;
    if (g < 1 || p < 1)
        return -1;
    if (dist == MPI_DISTRIBUTE_NONE)
        return p == 1 ? outer_add(o, g, unit) : -1;
    if (dist == MPI_DISTRIBUTE_BLOCK) {
        int64_t b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
        int64_t s = coord * b, c = b < 1 ? 0 : imin(b, g - s);
        if (b < 1)
            return -1;
        if (c < 0)
            c = 0;
        o->off += c ? s * unit : 0;
        return outer_add(o, c, unit);
    }
    if (dist != MPI_DISTRIBUTE_CYCLIC)
        return -1;
    k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    if (k < 1)
        return -1;
    /* blocks coord, coord + p, ...: nb of them, all whole but the last */
    nb = coord * k < g ? (g - coord * k + p * k - 1) / (p * k) : 0;
    first = coord * k;
    last = nb ? imin(k, g - (first + (nb - 1) * p * k)) : 0;
    if (nb > 1 && last != k)
        return -1; /* a shorter last block: not one stride */
    o->off += nb ? first * unit : 0;
    if (k == 1)
        return outer_add(o, nb, p * unit);
    if (outer_add(o, nb, p * k * unit))
        return -1;
    return outer_add(o, nb ? last : k, unit);
}

/* subarray and darray: the dimensions in storage order (slowest first).
 * ext: the old type's extent. */
static int array_dims(const contents *c, int64_t ext, outer *o)
{
    const int *ia = c->ints;
    int darray = c->combiner == MPI_COMBINER_DARRAY;
    int nd = darray ? ia[2] : ia[0];
    int order = darray ? ia[3 + 4 * nd] : ia[3 * nd + 1];
    const int *sizes = darray ? ia + 3 : ia + 1;
    int64_t unit[MPIIO_MAX_DIMS], coord[MPIIO_MAX_DIMS];
    int rank = darray ? ia[1] : 0;
    if (nd < 1 || nd > DECODE_DIMS)
        return -1;
    unit[order == MPI_ORDER_C ? nd - 1 : 0] = ext; /* bytes per index */
    for (int d = nd - 2; order == MPI_ORDER_C && d >= 0; d--)
        unit[d] = unit[d + 1] * sizes[d + 1];
    for (int d = 1; order != MPI_ORDER_C && d < nd; d++)
        unit[d] = unit[d - 1] * sizes[d - 1];
    for (int d = nd - 1; darray && d >= 0; d--) { /* row-major grid */
        int p = ia[3 + 3 * nd + d];
        if (p < 1)
            return -1;
        coord[d] = rank % p;
        rank /= p;
    }
    o->off = 0;
    for (int i = 0; i < nd; i++) {
        int d = order == MPI_ORDER_C ? i : nd - 1 - i;
        if (!darray) {
            int64_t sub = ia[1 + nd + d], st = ia[1 + 2 * nd + d];
            o->off += st * unit[d];
            if (outer_add(o, sub, unit[d]))
                return -1;
        } else if (darray_dim(ia, nd, d, (int)coord[d], unit[d], o)) {
            return -1;
        }
    }
    return 0;
}

static int decode_at(MPI_Datatype t, mpiio_strided *g, int depth);

/* The pattern of a constructed type from its old type's. */
static int decode_contents(const contents *c, mpiio_strided *g, int depth)
{
    mpiio_strided in;
    outer o = {.n = 0, .off = 0};
    const int *ia = c->ints;
    int rc = -1;
    if (c->nd != 1 || decode_at(c->types[0], &in, depth + 1))
        return -1;
    switch (c->combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        rc = 0;
        break;
    case MPI_COMBINER_CONTIGUOUS:
        rc = outer_add(&o, ia[0], in.extent);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        int64_t st = c->combiner == MPI_COMBINER_VECTOR
                         ? (int64_t)ia[2] * in.extent : (int64_t)c->addrs[0];
        rc = outer_add(&o, ia[0], st);
        rc = rc ? rc : outer_add(&o, ia[1], in.extent);
        break;
    }
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {
        int *len = malloc(sizeof(int) * (size_t)(ia[0] + 1));
        for (int i = 0; len && i < ia[0]; i++)
            len[i] = ia[1];
        rc = !len ? -1 : blocks_regular(
            ia[0], len, c->combiner == MPI_COMBINER_INDEXED_BLOCK ? ia + 2
                                                                  : NULL,
            c->addrs, in.extent, in.extent, &o);
        free(len);
        break;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
        rc = blocks_regular(ia[0], ia + 1,
                            c->combiner == MPI_COMBINER_INDEXED
                                ? ia + 1 + ia[0] : NULL,
                            c->addrs, in.extent, in.extent, &o);
        break;
    case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_DARRAY:
        rc = array_dims(c, in.extent, &o);
        break;
    default:
        break;
    }
    if (rc)
        return -1;
    /* the constructor's dimensions outside the old type's, those of
       count 1 dropped (they move nothing; HDF5 nests single-block
       hindexed types whose dimensions would exceed the limit): the same
       typemap. Ranks whose patterns differ in such dimensions are
       aligned on the union of their strides when the view is agreed
       (serve.c). */
    int64_t cnt[2 * MPIIO_MAX_DIMS], str[2 * MPIIO_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < o.n + in.ndims; i++) {
        int64_t ci = i < o.n ? o.count[i] : in.count[i - o.n];
        int64_t si = i < o.n ? o.stride[i] : in.stride[i - o.n];
        if (ci == 1)
            continue;
        cnt[n] = ci;
        str[n++] = si;
    }
    if (n > DECODE_DIMS)
        return -1;
    *g = in;
    g->ndims = n;
    g->off = o.off + in.off;
    for (int i = 0; i < n; i++) {
        g->count[i] = cnt[i];
        g->stride[i] = str[i];
    }
    return 0;
}

/* The pattern must be the type's: strides that cover what they hold,
 * and MPI's size, true lower bound and true extent. */
static int decode_check(MPI_Datatype t, mpiio_strided *g)
{
    MPI_Count size = 0;
    MPI_Aint lb = 0, ext = 0, tlb = 0, text = 0;
    int64_t n = 1, span = g->elem;
    if (MPI_Type_size_x(t, &size) != MPI_SUCCESS ||
        MPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS ||
        MPI_Type_get_true_extent(t, &tlb, &text) != MPI_SUCCESS)
        return -1;
    g->lb = lb;
    g->extent = ext;
    for (int i = 0; i < g->ndims; i++)
        n *= g->count[i];
    if (size != (MPI_Count)(n * g->elem))
        return -1;
    if (n == 0)
        return 0; /* no data: offsets and strides play no part */
    for (int i = g->ndims - 1; i >= 0; i--) {
        if (g->count[i] == 1)
            continue;
        if (g->stride[i] < span)
            return -1; /* overlaps or goes backwards */
        span += (g->count[i] - 1) * g->stride[i];
    }
    return g->off == (int64_t)tlb && span == (int64_t)text ? 0 : -1;
}

static int decode_at(MPI_Datatype t, mpiio_strided *g, int depth)
{
    contents c;
    int rc;
    if (depth > DECODE_DEPTH || contents_get(t, &c))
        return -1;
    if (c.combiner == MPI_COMBINER_NAMED) {
        int size = 0;
        MPI_Aint lb = 0, ext = 0;
        MPI_Type_size(t, &size);
        MPI_Type_get_extent(t, &lb, &ext);
        /* pair types (MPI_DOUBLE_INT...) have gaps: not one element */
        if (size < 1 || lb != 0 || ext != size)
            return -1;
        g->ndims = 0;
        g->elem = size;
        g->off = 0;
        g->lb = 0;
        g->extent = size;
        return 0;
    }
    rc = decode_contents(&c, g, depth);
    contents_free(&c);
    if (!rc)
        rc = decode_check(t, g);
    /* the stride under a count of 1 plays no part: keep strides >= 1 */
    for (int i = 0; !rc && i < g->ndims; i++)
        if (g->stride[i] < 1 && g->count[i] <= 1)
            g->stride[i] = g->elem;
        else if (g->stride[i] < 1)
            rc = -1;
    return rc;
}

int mpiio_decode(MPI_Datatype t, mpiio_strided *g, char *why, size_t len)
{
    contents c;
    int comb = MPI_COMBINER_NAMED;
    if (contents_get(t, &c) == 0) {
        comb = c.combiner;
        contents_free(&c);
    }
    if (decode_at(t, g, 0) == 0)
        return 0;
    snprintf(why, len, "%s type is not one regular strided pattern",
             comb == MPI_COMBINER_NAMED ? "named" : combiner_name(comb));
    return -1;
}
