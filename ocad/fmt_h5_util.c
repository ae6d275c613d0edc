/*
 * fmt_h5_util.c - what the HDF5 glue's files share (fmt_h5_util.h):
 * HDF5's automatic error printing switched off and back, the innermost
 * message of its error stack, closing ids that may never have been
 * opened, and opening a file to read with the reason when it is not
 * HDF5.
 *
 * Invariants: rank-local; ocad_h5_open leaves nothing open on an error
 * and returns -1 with the code in *rc and the context's detail written.
 */
#include "ocad.h"

#ifdef PASSION_HAVE_HDF5

#include "fmt_h5_util.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

void ocad_h5_quiet_on(ocad_h5_quiet *q)
{
    H5Eget_auto2(H5E_DEFAULT, &q->fn, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void ocad_h5_quiet_off(ocad_h5_quiet *q)
{
    H5Eset_auto2(H5E_DEFAULT, q->fn, q->data);
}

/* The innermost message of HDF5's error stack (or "unknown"). */
static herr_t last_msg(unsigned n, const H5E_error2_t *e, void *p)
{
    (void)n;
    if (e->desc && *e->desc)
        snprintf(p, 160, "%s", e->desc);
    return 0;
}

const char *ocad_h5_why(char *buf)
{
    snprintf(buf, 160, "unknown");
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, last_msg, buf);
    return buf;
}

void ocad_h5_close(hid_t id, herr_t (*fn)(hid_t))
{
    if (id >= 0)
        fn(id);
}

hid_t ocad_h5_open(passion_ctx *ctx, const char *path, int64_t *fsize,
                   int *rc)
{
    struct stat st;
    char why[160];
    *rc = PASSION_OK;
    if (stat(path, &st)) {
        *rc = core_err(ctx, core_errno_code(errno), "%s: %s", path,
                       strerror(errno));
        return -1;
    }
    *fsize = (int64_t)st.st_size;
    if (H5Fis_hdf5(path) <= 0) {
        *rc = core_err(ctx, PASSION_EFORMAT, "%s: not an HDF5 file", path);
        return -1;
    }
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0)
        *rc = core_err(ctx, PASSION_EFORMAT, "%s: HDF5 cannot open it: %s",
                       path, ocad_h5_why(why));
    return file;
}

/* Datasets of a file (H5Lvisit): how many, and the first one's path. */
typedef struct h5_count {
    int n;
    char *first;
    size_t len;
} h5_count;

static herr_t count_dset(hid_t g, const char *name, const H5L_info_t *info,
                         void *p)
{
    h5_count *c = p;
    if (info->type != H5L_TYPE_HARD)
        return 0;
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    if (d >= 0) {
        if (!c->n++)
            snprintf(c->first, c->len, "/%s", name);
        H5Dclose(d);
    }
    return 0;
}

int ocad_h5_only_dset(hid_t file, char *first, size_t len)
{
    h5_count cnt = {0, first, len};
    first[0] = '\0';
    H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, count_dset, &cnt);
    return cnt.n;
}

#endif
