/*
 * fmt_h5_filter.h - HDF5's filter pipeline undone on a chunk's stored
 * bytes (defined in fmt_h5_filter.c, prefix ocad_h5f_; used by the
 * chunked dataset reader, fmt_h5_chunk.c and fmt_h5_chunkread.c).
 *
 * Invariants: pure functions of their arguments (no context, no HDF5
 * call, no global state), so any worker thread may decode any chunk; an
 * error is a PASSION_E* code with its reason in the caller's buffer.
 */
#ifndef PASSION_OCAD_FMT_H5_FILTER_H
#define PASSION_OCAD_FMT_H5_FILTER_H

#include "ocad.h"

#define OCAD_H5F_MAX 8   /* filters in one pipeline */
#define OCAD_H5F_CD 8    /* client values kept per filter */

/* A dataset's pipeline, in HDF5's order (the order applied on write). */
typedef struct ocad_h5f_pipe {
    int n;
    int id[OCAD_H5F_MAX];
    unsigned cd[OCAD_H5F_MAX][OCAD_H5F_CD];
    int ncd[OCAD_H5F_MAX];
} ocad_h5f_pipe;

/* 0 if passion decodes filter id (with these client values), else
   ENOTSUP with the reason in why (n bytes), naming the filter. */
CORE_HIDDEN int ocad_h5f_supported(int id, const char *name, char *why,
                                   size_t n);

/* Undo pipe on the stored bytes of one chunk (raw, rawn bytes; filters
   whose bit is set in mask were skipped when it was written): the chunk's
   out_n bytes into out. tmp holds out_n + 4 bytes of scratch. 0, or
   EFORMAT (a checksum that does not match, a stream that does not decode
   to out_n bytes) with the reason in why. raw is scratch too. */
CORE_HIDDEN int ocad_h5f_decode(const ocad_h5f_pipe *pipe, unsigned mask,
                                unsigned char *raw, size_t rawn,
                                unsigned char *out, size_t out_n,
                                unsigned char *tmp, char *why, size_t n);

#endif
