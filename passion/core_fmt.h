/*
 * core_fmt.h - what a file format's header says (core_fmt_meta) and the
 * HDF5 glue (prefix core_h5_; passion/fmt_hdf5.c).
 *
 * Invariants: core_fmt_meta is plain bytes, no pointers, so it can be
 * broadcast; data_bytes is product(shape) * elem_size; the HDF5 calls are
 * rank-local (the caller runs them on rank 0 and broadcasts).
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
} core_fmt_meta;

/*
 * HDF5 glue (fmt_hdf5.c, the only code that calls libhdf5; built with the
 * HDF5 option). Rank-local: the caller runs them on rank 0 and broadcasts.
 * core_h5_meta: the metadata of dataset dset of an existing file (a
 * contiguous dataset; anything else is refused with a message naming the
 * layout). core_h5_create: a new file at path holding dataset dset of m's
 * shape and type, contiguous, allocated; *data_offset where its data
 * starts. PASSION_ENOTSUP (with a message) when built without HDF5.
 */
CORE_HIDDEN int core_h5_meta(passion_ctx *ctx, const char *path,
                             const char *dset, core_fmt_meta *m);
CORE_HIDDEN int core_h5_create(passion_ctx *ctx, const char *path,
                               const char *dset, const core_fmt_meta *m,
                               int64_t *data_offset);
/* core_h5_list: the datasets of path (passion_array_list's rules; obj ""
   or "/" the whole file, a group the datasets below it, a dataset only
   itself): entries[0 .. min(max, *count) - 1], *count how many. */
CORE_HIDDEN int core_h5_list(passion_ctx *ctx, const char *path,
                             const char *obj, passion_array_entry *e,
                             int max, int *count);
/* 1 if built with HDF5. */
CORE_HIDDEN int core_h5_available(void);

#endif
