/*
 * Internals of libpassion_mpiio, the MPI-IO interposition layer: the
 * per-file state, the decoded file view, the control settings and the
 * report counters. The layer sees passion only through include/passion.h.
 *
 * Invariants:
 * - The real file stays open through PMPI with the user's view set, and
 *   MPI's individual file pointer is the only pointer: a served call
 *   leaves the handle exactly as the same call through PMPI would.
 * - A file's served state (view agreed, passion file open) changes only
 *   in collective calls, from values every rank holds alike, so every
 *   rank of the file sees the same state before a collective call.
 * - While passion runs a call for the layer (mpiio_depth > 0 on that
 *   thread) every MPI_File_* call goes straight to PMPI.
 */
#ifndef MPIIO_H
#define MPIIO_H

#include <stdint.h>

#include <mpi.h>

#include "passion.h"

#define MPIIO_EXPORT __attribute__((visibility("default")))
#define MPIIO_MAX_DIMS PASSION_MAX_DIMS
#define MPIIO_REASON 120

/* Kinds of data access, for the report. */
typedef enum mpiio_kind {
    MPIIO_READ, MPIIO_WRITE, MPIIO_READ_AT, MPIIO_WRITE_AT,
    MPIIO_READ_ALL, MPIIO_WRITE_ALL, MPIIO_READ_AT_ALL, MPIIO_WRITE_AT_ALL,
    MPIIO_SET_VIEW, MPIIO_INFO, MPIIO_KINDS
} mpiio_kind;

/* A datatype's typemap as a regular strided pattern: blocks of elem
 * bytes at off + sum_i k_i * stride[i] (0 <= k_i < count[i]), dimension
 * 0 outermost, in the typemap's order; lb and extent are MPI's. At most
 * MPIIO_MAX_DIMS - 1 dimensions (one is kept for the tiling of
 * filetypes). Any count 0: the type holds no data. */
typedef struct mpiio_strided {
    int ndims;
    int64_t elem;
    int64_t off;
    int64_t count[MPIIO_MAX_DIMS];
    int64_t stride[MPIIO_MAX_DIMS]; /* bytes, >= 1 */
    int64_t lb, extent;
} mpiio_strided;

/* A rank's data as a section of a row-major array: dimension d's index
 * steps unit[d] elements; shape[0] is set once the ranks agree. With
 * tiled, dimension 0 counts filetypes (tiles of the view). */
typedef struct mpiio_layout {
    int ndims;
    int tiled;
    int64_t elem;
    int64_t unit[MPIIO_MAX_DIMS];
    int64_t shape[MPIIO_MAX_DIMS];
    int64_t start[MPIIO_MAX_DIMS];
    int64_t count[MPIIO_MAX_DIMS];
    int64_t stride[MPIIO_MAX_DIMS];
} mpiio_layout;

/* The layer's state for one MPI_File. */
typedef struct mpiio_file {
    MPI_File fh;          /* MPI_FILE_NULL: entry closed (report only) */
    int in_use;           /* entry taken (open, or closed with counts) */
    MPI_Comm comm;        /* a duplicate of the opening communicator */
    char name[256];
    int amode;
    int enabled;          /* layer on for this file (env and info) */
    int64_t budget;       /* info passion_memory_budget; 0: passion's */
    int64_t ctx_budget;   /* the budget ctx was made with */
    passion_method method; /* info passion_method, collective calls */
    int user_view;        /* MPI_File_set_view called */
    /* the view, when every rank agreed it is one array's section */
    int view_ok;
    passion_array_spec spec;
    mpiio_layout lay;     /* this rank's section, one filetype */
    int64_t header;       /* file bytes before the array */
    int64_t tile_bytes;   /* data bytes of one filetype */
    int64_t need_bytes;   /* file size the array needs (header + data) */
    int64_t etype_size;
    passion_ctx *ctx;
    passion_array *arr;
    passion_file *pf;     /* NULL: file shorter than the array, or no view */
    /* report */
    long long served, passed;
    char reason[MPIIO_KINDS][MPIIO_REASON];
} mpiio_file;

/* control.c: settings, the re-entrance depth, the table and report */
int mpiio_mode_on(void);
int mpiio_info_enabled(MPI_Info info, int dflt);
void mpiio_info_apply(mpiio_file *st, MPI_Info info);
void mpiio_info_add(const mpiio_file *st, MPI_Info info);
int mpiio_inside(void);
void mpiio_enter(void);
void mpiio_leave(void);
mpiio_file *mpiio_lookup(MPI_File fh);
mpiio_file *mpiio_add(MPI_File fh);
void mpiio_pass(mpiio_file *st, mpiio_kind kind, const char *why);
void mpiio_report(void);
const char *mpiio_kind_name(mpiio_kind kind);

/* decode.c: datatypes */
int mpiio_decode(MPI_Datatype t, mpiio_strided *g /* out */, char *why,
                 size_t len);

/* layout.c: a decoded type as a section of an array */
int mpiio_layout_make(const mpiio_strided *g, int tiled, int64_t pos,
                      unsigned live, mpiio_layout *lay /* out */);
int mpiio_layout_mem(const mpiio_layout *lay, MPI_Datatype type, int count,
                     passion_memspec *mem /* out */, int *packed /* out */,
                     int64_t *off /* out */, char *why, size_t len);

/* serve.c: views and accesses through passion */
void mpiio_view_set(mpiio_file *st, MPI_Offset disp, MPI_Datatype etype,
                    MPI_Datatype filetype, const char *datarep,
                    MPI_Info info);
void mpiio_view_drop(mpiio_file *st);
int mpiio_access(mpiio_file *st, mpiio_kind kind, int coll, int at,
                 MPI_Offset offset, const void *wbuf, void *rbuf, int count,
                 MPI_Datatype type, MPI_Status *status, int *served);
void mpiio_release(mpiio_file *st);
void mpiio_view_redo(mpiio_file *st);

#endif
