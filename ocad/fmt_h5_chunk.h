/*
 * fmt_h5_chunk.h - a chunked HDF5 dataset opened for reading (defined in
 * fmt_h5_chunk.c, prefix ocad_h5c_): its geometry, its filter pipeline,
 * its fill value, and where each chunk's stored bytes lie. Used by
 * fmt_h5_chunkread.c (the section read) and, through ocad.h's calls, by
 * the file layer.
 *
 * Invariants: the geometry is fixed at open; a chunk lookup is rank-local
 * and runs on the calling thread (libhdf5 is not called from workers).
 */
#ifndef PASSION_OCAD_FMT_H5_CHUNK_H
#define PASSION_OCAD_FMT_H5_CHUNK_H

#include "fmt_h5_filter.h"

typedef struct ocad_h5c_geom {
    int nd;
    int64_t shape[PASSION_MAX_DIMS];
    int64_t chunk[PASSION_MAX_DIMS];  /* chunk extent per dimension */
    int64_t nchunks[PASSION_MAX_DIMS]; /* chunks per dimension */
    int64_t esize;
    int64_t chunk_bytes;              /* product(chunk) * esize */
    ocad_h5f_pipe pipe;
    unsigned char fill[64];           /* the fill value, file byte order */
} ocad_h5c_geom;

/* Where chunk number idx (per dimension) is stored: addr < 0 when it has
   no storage (never written: it reads as the fill value). */
typedef struct ocad_h5c_loc {
    int64_t addr;
    int64_t size;
    unsigned mask;
} ocad_h5c_loc;

CORE_HIDDEN const ocad_h5c_geom *ocad_h5c_geom_of(const ocad_h5c *c);
/* "path:/dataset", for messages. */
CORE_HIDDEN const char *ocad_h5c_where(const ocad_h5c *c);
/* 0, or a code with the detail written (ctx). */
CORE_HIDDEN int ocad_h5c_locate(passion_ctx *ctx, ocad_h5c *c,
                                const int64_t *idx, ocad_h5c_loc *loc);

#endif
