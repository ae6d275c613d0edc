/*
 * A decoded type (mpiio_strided) as a section of a row-major array, the
 * form passion's section access takes: dimension i of the pattern steps
 * E_i elements; the array's index of dimension i then steps unit[i]
 * elements, unit[i] = gcd(E_0, ..., E_i) (unit of the last dimension 1;
 * dimensions of one index on every rank, `live` clear, are left out but
 * for the innermost),
 * so that E_i = stride[i] * unit[i] and shape[i] = unit[i-1] / unit[i].
 * The units come from the strides alone, so ranks whose types share the
 * strides (boxes of one array, one darray) share the array. A rank's
 * first element, pos bytes after the array's origin, gives the starts in
 * mixed radix; the section is returned only when each dimension's span
 * fits in its shape, so that the row-major position of every index is
 * the pattern's element, in the pattern's order. With tiled, dimension 0
 * steps the type's extent: filetypes tiling the view one after another.
 *
 * The memory side: a type whose data are one packed run (with its
 * count), or a strided pattern whose dimensions of more than one element
 * are the section's, innermost contiguous, as a passion_memspec.
 */
#include <stdio.h>

#include "mpiio.h"

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int mpiio_layout_make(const mpiio_strided *g, int tiled, int64_t pos,
                      unsigned live, mpiio_layout *L)
{
    int64_t e[MPIIO_MAX_DIMS], o;
    int nd = tiled ? 1 : 0, empty = 0;
    if (g->elem < 1 || pos < 0 || pos % g->elem)
        return -1;
    if (tiled && (g->extent < g->elem || g->extent % g->elem))
        return -1;
    if (tiled) {
        e[0] = g->extent / g->elem;
        L->count[0] = 1;
    }
    for (int k = 0; k < g->ndims; k++) {
        empty |= g->count[k] == 0;
        if (!(live & (1u << k))) {
            /* one index on every rank: no dimension, but the innermost
             * stays (unit 1), so that the memory side may stride the
             * dimension outside it */
            if (k == g->ndims - 1) {
                e[nd] = 1;
                L->count[nd++] = g->count[k];
            }
            continue;
        }
        if (g->stride[k] % g->elem)
            return -1;
        e[nd] = g->stride[k] / g->elem;
        L->count[nd++] = g->count[k];
    }
    if (nd == 0) { /* one element */
        e[0] = 1;
        L->count[nd++] = 1;
    }
    if (empty)
        L->count[nd - 1] = 0;
    L->ndims = nd;
    L->tiled = tiled;
    L->elem = g->elem;
    L->unit[nd - 1] = 1;
    for (int i = 0; i < nd - 1; i++)
        L->unit[i] = i ? gcd64(L->unit[i - 1], e[i]) : e[0];
    o = pos / g->elem;
    L->shape[0] = 0;
    for (int i = 0; i < nd; i++) {
        if (i)
            L->shape[i] = L->unit[i - 1] / L->unit[i];
        L->stride[i] = e[i] / L->unit[i];
        L->start[i] = o / L->unit[i];
        o %= L->unit[i];
        if (L->count[i] <= 1 && !(tiled && i == 0)) /* tiles step stride */
            L->stride[i] = 1;
        if (empty)
            L->start[i] = 0;
        else if (i && L->start[i] + (L->count[i] - 1) * L->stride[i] >=
                          L->shape[i])
            return -1;
    }
    return 0;
}

/* Memory: one packed run of count elements of type (MPI's size, true
 * extent and extent agree), starting *off bytes from the buffer. */
static int mem_packed(MPI_Datatype type, int count, int64_t *off)
{
    MPI_Count size = 0;
    MPI_Aint lb, ext, tlb, text;
    if (MPI_Type_size_x(type, &size) != MPI_SUCCESS ||
        MPI_Type_get_extent(type, &lb, &ext) != MPI_SUCCESS ||
        MPI_Type_get_true_extent(type, &tlb, &text) != MPI_SUCCESS)
        return -1;
    if (size < 1 || (MPI_Aint)size != text || (count > 1 && ext != text))
        return -1;
    *off = tlb;
    return 0;
}

/* Memory as the section's dimensions (those of more than one element,
 * in order, with the same counts): strides that a memspec of the
 * array's rank can hold, the innermost one element. */
static int mem_strided(const mpiio_layout *L, const mpiio_strided *m,
                       passion_memspec *mem)
{
    int ld[MPIIO_MAX_DIMS], md[MPIIO_MAX_DIMS], nl = 0, nm = 0;
    int64_t below = 1; /* elements per index just inside, in memory */
    for (int d = 0; d < L->ndims; d++) {
        mem->shape[d] = 1;
        mem->offset[d] = 0;
        if (L->count[d] > 1)
            ld[nl++] = d;
    }
    for (int i = 0; i < m->ndims; i++)
        if (m->count[i] > 1)
            md[nm++] = i;
    if (nl != nm || m->elem != L->elem || nl == 0)
        return -1;
    for (int j = nl - 1; j >= 0; j--) {
        int64_t es = m->stride[md[j]];
        if (m->count[md[j]] != L->count[ld[j]] || es % m->elem)
            return -1;
        es /= m->elem; /* memory elements per index of dimension ld[j] */
        if (j == nl - 1) { /* dimensions inside it hold one element */
            if (ld[j] == L->ndims - 1 && es != 1)
                return -1;
            if (ld[j] != L->ndims - 1)
                mem->shape[L->ndims - 1] = es;
        } else {
            int inner = ld[j + 1];
            if (es % below || es / below < L->count[inner])
                return -1;
            mem->shape[inner] = es / below;
        }
        below = es;
    }
    mem->shape[ld[0]] = L->count[ld[0]];
    return 0;
}

int mpiio_layout_mem(const mpiio_layout *L, MPI_Datatype type, int count,
                     passion_memspec *mem, int *packed, int64_t *off,
                     char *why, size_t len)
{
    mpiio_strided m;
    *packed = 1;
    *off = 0;
    if (count == 0 || mem_packed(type, count, off) == 0)
        return 0;
    *packed = 0;
    if (mpiio_decode(type, &m, why, len))
        return -1;
    if (count > 1) { /* count copies, spaced by the extent */
        if (m.ndims + 1 > MPIIO_MAX_DIMS)
            return snprintf(why, len, "memory type too deep"), -1;
        for (int i = m.ndims; i > 0; i--) {
            m.count[i] = m.count[i - 1];
            m.stride[i] = m.stride[i - 1];
        }
        m.count[0] = count;
        m.stride[0] = m.extent;
        m.ndims++;
    }
    *off = m.off;
    if (mem_strided(L, &m, mem)) {
        snprintf(why, len, "memory type's strides are not the view's "
                 "section's");
        return -1;
    }
    return 0;
}
