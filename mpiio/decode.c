/*
 * Datatype decoding with MPI_Type_get_envelope / MPI_Type_get_contents: a
 * filetype becomes one box of an array (sizes, subsizes, starts, order,
 * element bytes) when it is exactly such a box, and a memory type is
 * accepted when it is contiguous.
 *
 * Served filetypes (element: a named type, or a contiguous of one):
 *   contiguous(n, elem)           1-D [n], the whole of it
 *   vector(c, b, s, elem), s >= b  C order [c][s], box [c][b] at 0
 *   hvector, stride a multiple of the element size, likewise
 *   subarray (C or Fortran order)
 *   resized(0, whole array's extent) and dup of any of these
 * Invariant: a box is returned only when the filetype's typemap is, byte
 * for byte and in order, the box's elements in the array's storage order;
 * anything else fails with the reason in why. Handles that
 * MPI_Type_get_contents returns are freed unless named.
 */
#include <stdio.h>

#include "mpiio.h"

#define MPIIO_MAX_ARGS (3 * MPIIO_MAX_DIMS + 2)

typedef struct mpiio_contents {
    int combiner;
    int ni, na, nd;
    int ints[MPIIO_MAX_ARGS];
    MPI_Aint addrs[2];
    MPI_Datatype types[1];
} mpiio_contents;

/* 0 and the contents, or -1 (too many arguments for the kinds served). */
static int contents_get(MPI_Datatype t, mpiio_contents *c)
{
    if (MPI_Type_get_envelope(t, &c->ni, &c->na, &c->nd, &c->combiner) !=
        MPI_SUCCESS)
        return -1;
    if (c->combiner == MPI_COMBINER_NAMED)
        return 0;
    if (c->ni > MPIIO_MAX_ARGS || c->na > 2 || c->nd > 1)
        return -1;
    if (MPI_Type_get_contents(t, c->ni, c->na, c->nd, c->ints, c->addrs,
                              c->types) != MPI_SUCCESS)
        return -1;
    return 0;
}

static void contents_free(mpiio_contents *c)
{
    int ni, na, nd, comb;
    if (c->combiner == MPI_COMBINER_NAMED || c->nd != 1)
        return;
    if (MPI_Type_get_envelope(c->types[0], &ni, &na, &nd, &comb) ==
            MPI_SUCCESS && comb != MPI_COMBINER_NAMED)
        MPI_Type_free(&c->types[0]);
}

/* Bytes of an element type: a named type without gaps, or a contiguous
 * or dup of one; 0 else. */
static int64_t elem_bytes(MPI_Datatype t)
{
    mpiio_contents c;
    int size = 0;
    int64_t n = 0;
    if (contents_get(t, &c))
        return 0;
    if (c.combiner == MPI_COMBINER_NAMED) {
        MPI_Aint lb = 0, extent = 0;
        MPI_Type_size(t, &size);
        MPI_Type_get_extent(t, &lb, &extent);
        /* pair types (MPI_DOUBLE_INT...) have gaps: not contiguous */
        return lb == 0 && extent == size ? size : 0;
    }
    if (c.combiner == MPI_COMBINER_CONTIGUOUS && c.ni == 1 && c.nd == 1) {
        int64_t inner = elem_bytes(c.types[0]);
        n = inner * (int64_t)c.ints[0];
    } else if (c.combiner == MPI_COMBINER_DUP && c.nd == 1) {
        n = elem_bytes(c.types[0]);
    }
    contents_free(&c);
    return n;
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

static void box_line(mpiio_box *b, int64_t n, int64_t elem)
{
    b->ndims = 1;
    b->order = MPI_ORDER_C;
    b->elem = elem;
    b->sizes[0] = b->subsizes[0] = n;
    b->starts[0] = 0;
}

static int box_from(const mpiio_contents *c, mpiio_box *b, char *why,
                    size_t len)
{
    int64_t elem = c->nd == 1 ? elem_bytes(c->types[0]) : 0;
    switch (c->combiner) {
    case MPI_COMBINER_DUP:
        return mpiio_decode_filetype(c->types[0], b, why, len);
    case MPI_COMBINER_CONTIGUOUS:
        if (!elem || c->ints[0] < 1)
            break;
        box_line(b, c->ints[0], elem);
        return 0;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        int64_t cnt = c->ints[0], bl = c->ints[1], stride;
        if (!elem || cnt < 1 || bl < 1)
            break;
        if (c->combiner == MPI_COMBINER_VECTOR)
            stride = c->ints[2];
        else if (c->addrs[0] % elem == 0)
            stride = c->addrs[0] / elem;
        else
            break;
        if (stride < bl)
            break;
        b->ndims = 2;
        b->order = MPI_ORDER_C;
        b->elem = elem;
        b->sizes[0] = b->subsizes[0] = cnt;
        b->sizes[1] = stride;
        b->subsizes[1] = bl;
        b->starts[0] = b->starts[1] = 0;
        return 0;
    }
    case MPI_COMBINER_SUBARRAY: {
        int nd = c->ints[0];
        if (!elem || nd < 1 || nd > MPIIO_MAX_DIMS)
            break;
        b->ndims = nd;
        b->elem = elem;
        b->order = c->ints[3 * nd + 1];
        for (int d = 0; d < nd; d++) {
            b->sizes[d] = c->ints[1 + d];
            b->subsizes[d] = c->ints[1 + nd + d];
            b->starts[d] = c->ints[1 + 2 * nd + d];
        }
        return 0;
    }
    case MPI_COMBINER_RESIZED: {
        int64_t whole;
        if (mpiio_decode_filetype(c->types[0], b, why, len))
            return -1;
        whole = b->elem;
        for (int d = 0; d < b->ndims; d++)
            whole *= b->sizes[d];
        if (c->addrs[0] == 0 && c->addrs[1] == whole)
            return 0;
        snprintf(why, len, "resized filetype whose extent is not the "
                 "whole array");
        return -1;
    }
    default:
        break;
    }
    snprintf(why, len, "%s filetype is not one strided box",
             combiner_name(c->combiner));
    return -1;
}

int mpiio_decode_filetype(MPI_Datatype t, mpiio_box *box, char *why,
                          size_t len)
{
    mpiio_contents c;
    int rc;
    if (contents_get(t, &c)) {
        snprintf(why, len, "filetype not decodable");
        return -1;
    }
    if (c.combiner == MPI_COMBINER_NAMED) {
        snprintf(why, len, "filetype is a basic type (contiguous view)");
        return -1;
    }
    rc = box_from(&c, box, why, len);
    contents_free(&c);
    return rc;
}

/* Bytes of one element of a contiguous memory type (named, or contiguous
 * or dup of one); -1 for any other type. */
int mpiio_memtype_size(MPI_Datatype t, int64_t *size)
{
    int64_t n = elem_bytes(t);
    *size = n;
    return n > 0 ? 0 : -1;
}
