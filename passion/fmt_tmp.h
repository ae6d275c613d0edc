/*
 * fmt_tmp.h - PROVISIONAL: the element-type enums and core_fmt_meta of the
 * shared contract, until helper "types" lands them in passion.h and
 * core.h (then this file goes).
 */
#ifndef PASSION_FMT_TMP_H
#define PASSION_FMT_TMP_H

#include "core.h"

#ifndef PASSION_KIND_BYTES
typedef enum passion_kind {
    PASSION_KIND_BYTES = 0, PASSION_KIND_INT, PASSION_KIND_UINT,
    PASSION_KIND_FLOAT, PASSION_KIND_COMPLEX, PASSION_KIND_BOOL
} passion_kind;
typedef enum passion_endian {
    PASSION_ENDIAN_NATIVE = 0, PASSION_ENDIAN_LITTLE, PASSION_ENDIAN_BIG
} passion_endian;
#endif

typedef struct core_fmt_meta {
    int ndims; int64_t shape[PASSION_MAX_DIMS];
    passion_kind kind; int64_t elem_size; passion_endian endian;
    passion_storage storage;
    int64_t data_offset;
    int64_t data_bytes;
} core_fmt_meta;

/* HDF5 glue (fmt_hdf5.c): rank-local; PASSION_ENOTSUP without HDF5. */
CORE_HIDDEN int core_h5_meta(passion_ctx *ctx, const char *path,
                             const char *dset, core_fmt_meta *m);
CORE_HIDDEN int core_h5_create(passion_ctx *ctx, const char *path,
                               const char *dset, const core_fmt_meta *m,
                               int64_t *data_offset);
/* 1 if built with HDF5. */
CORE_HIDDEN int core_h5_available(void);

#endif
