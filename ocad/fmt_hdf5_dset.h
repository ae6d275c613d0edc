/*
 * fmt_hdf5_dset.h - the description of one HDF5 dataset for passion
 * (defined in fmt_hdf5_dset.c, used by fmt_hdf5.c). Included only in a
 * build with HDF5 (PASSION_HAVE_HDF5).
 *
 * Invariant: rank-local; returns 0 or a PASSION_E* code with the
 * context's detail written, and leaves no HDF5 object open.
 */
#ifndef PASSION_OCAD_FMT_HDF5_DSET_H
#define PASSION_OCAD_FMT_HDF5_DSET_H

#include "fmt_h5_filter.h"
#include "fmt_h5_util.h"

/* The metadata of dataset dset of the open file (path for messages, fsize
   its bytes) into m, and its layout's name into *lay_name. On an error
   the code with the detail written; m keeps what was found before it
   (shape, type), *lay_name the layout once known ("" before). */
CORE_HIDDEN int ocad_h5_dset_meta(passion_ctx *ctx, hid_t file,
                                  const char *path, const char *dset,
                                  int64_t fsize, core_fmt_meta *m,
                                  const char **lay_name);

/* The filter pipeline of a chunked dataset's creation properties into
   p: 0, or ENOTSUP naming a filter passion does not decode (where: the
   dataset's name for the message). Defined in fmt_h5_chunk.c. */
CORE_HIDDEN int ocad_h5c_pipe(passion_ctx *ctx, const char *where,
                              hid_t dcpl, ocad_h5f_pipe *p);

#endif
