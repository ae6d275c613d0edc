/*
 * filetype.c - a section of a file as an MPI file view (nested hvectors
 * over the file's storage order), so that callers can give MPI-IO exactly
 * the request passion serves, e.g. to measure ROMIO against passion.
 *
 * Invariant: the view addresses the same bytes as the section's transfer
 * plan (same file view: extents, shift of the ghosts, header base, the
 * outermost dimension's step of a netCDF record variable).
 */
#include "ocad.h"

int passion_section_filetype(const passion_file *f, const passion_section *s,
                             MPI_Datatype *type, MPI_Offset *disp)
{
    if (!f || !s || !type || !disp)
        return PASSION_EINVAL;
    passion_ctx *ctx = f->ctx;
    core_enter(ctx);
    const ocad_fview *fv = &f->fv;
    int64_t elems;
    int rc = ocad_file_chunked_refuse(f, "a file view (MPI datatype)");
    if (!rc)
        rc = ocad_section_check(ctx, fv->nd, s, f->lo, f->hi, &elems);
    if (rc)
        return rc;
    int64_t fs[PASSION_MAX_DIMS];
    fs[fv->nd - 1] = fv->esize;
    for (int k = fv->nd - 2; k >= 0; k--)
        fs[k] = fs[k + 1] * fv->extent[fv->order[k + 1]];
    if (fv->step0 > 0)
        fs[0] = fv->step0; /* a netCDF record variable's records */
    MPI_Datatype t;
    if (elems == 0) {
        MPI_Type_contiguous(0, MPI_BYTE, &t);
        *disp = fv->base;
    } else {
        *disp = fv->base;
        MPI_Type_contiguous((int)fv->esize, MPI_BYTE, &t);
        for (int k = fv->nd - 1; k >= 0; k--) {
            int d = fv->order[k];
            if (s->count[d] > INT32_MAX) {
                MPI_Type_free(&t);
                return core_err(ctx, PASSION_ENOTSUP,
                                "count %lld does not fit an MPI datatype",
                                (long long)s->count[d]);
            }
            *disp += (s->start[d] + fv->shift[d]) * fs[k];
            MPI_Datatype v;
            MPI_Type_create_hvector((int)s->count[d], 1,
                                    (MPI_Aint)(s->stride[d] * fs[k]), t, &v);
            MPI_Type_free(&t);
            t = v;
        }
    }
    if (MPI_Type_commit(&t) != MPI_SUCCESS)
        return core_err(ctx, PASSION_EMPI, "MPI_Type_commit");
    *type = t;
    return PASSION_OK;
}
