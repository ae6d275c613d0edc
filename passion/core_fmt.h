/*
 * core_fmt.h - what a file format's header says (core_fmt_meta); the
 * formats' readers and writers are ocad/'s.
 *
 * Invariants: core_fmt_meta is plain bytes, no pointers, so it can be
 * broadcast; data_bytes is product(shape) * elem_size; rec_step > 0 only
 * for a row-major array whose dimension 0 is a netCDF record dimension.
 */
#ifndef PASSION_CORE_FMT_H
#define PASSION_CORE_FMT_H

#include "passion.h"
#include "core_base.h"

/* ---- file formats: what a header says (ocad/format.c runs the readers on
   rank 0 and broadcasts this struct; plain bytes, no pointers) ---- */

typedef struct core_fmt_meta {
    int ndims;
    int64_t shape[PASSION_MAX_DIMS];
    passion_kind kind;
    int64_t elem_size;
    passion_endian endian;    /* LITTLE or BIG (a reader resolves NATIVE) */
    passion_storage storage;  /* ROW_MAJOR or COL_MAJOR */
    int64_t data_offset;      /* byte offset of element 0 */
    int64_t data_bytes;       /* product(shape) * elem_size */
    int chunked;              /* 1: an HDF5 chunked dataset (its elements
                                 are in chunks, found through its chunk
                                 index; data_offset is 0) */
    int64_t rec_step;         /* > 0: a record variable, its record r at
                                 data_offset + r * rec_step (netCDF's
                                 recsize; its records interleave with the
                                 other record variables'); 0: contiguous */
} core_fmt_meta;

#endif
