/*
 * fmt_h5_util.h - what the HDF5 glue's files share (defined in
 * fmt_h5_util.c; used by fmt_hdf5.c, fmt_hdf5_dset.c, fmt_hdf5_create.c;
 * prefix ocad_h5_): HDF5's error printing kept quiet, the innermost
 * error message, closing ids, opening a file to read and finding its only dataset. Included only
 * by them, and only in a build with HDF5 (PASSION_HAVE_HDF5).
 *
 * Invariants: every call between ocad_h5_quiet_on and ocad_h5_quiet_off
 * prints nothing; an id passed to ocad_h5_close may be -1 (never opened);
 * the calls are rank-local and return 0 or a PASSION_E* code with the
 * context's detail written.
 */
#ifndef PASSION_OCAD_FMT_H5_UTIL_H
#define PASSION_OCAD_FMT_H5_UTIL_H

#include "ocad.h"

#include <hdf5.h>

/* HDF5's automatic error printing off for the duration of a call. */
typedef struct ocad_h5_quiet {
    H5E_auto2_t fn;
    void *data;
} ocad_h5_quiet;

CORE_HIDDEN void ocad_h5_quiet_on(ocad_h5_quiet *q);
CORE_HIDDEN void ocad_h5_quiet_off(ocad_h5_quiet *q);
/* The innermost message of HDF5's error stack (or "unknown") in buf (160
   bytes); returns buf. */
CORE_HIDDEN const char *ocad_h5_why(char *buf);
/* fn(id) unless id < 0. */
CORE_HIDDEN void ocad_h5_close(hid_t id, herr_t (*fn)(hid_t));
/* Open path read-only as HDF5 (quiet already on): the file id, or -1
   with the code in *rc and the detail written. */
CORE_HIDDEN hid_t ocad_h5_open(passion_ctx *ctx, const char *path,
                               int64_t *fsize, int *rc);
/* The number of datasets in the file (hard links, H5Lvisit), the first
   one's path into first (len bytes; "" if none): a name-less PATH opens
   the file's only dataset. */
CORE_HIDDEN int ocad_h5_only_dset(hid_t file, char *first, size_t len);
#endif
