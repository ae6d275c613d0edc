/*
 * file_access.c - independent access to an open file: a rank reads or
 * writes its whole local array, or a section (direct or sieved, by the
 * transfer plan), or asks what a section's plan would cost.
 *
 * Invariants: these calls are independent (no communication); a section
 * request is validated once (ocad_section_prepare: bounds, memory side,
 * method, writable, buffer) before any byte moves; data is converted to
 * and from the file's byte order on every path; a failed transfer leaves
 * the last method (ocad_last_method) at auto.
 */
#include "ocad.h"

#include <string.h>

static int whole_local(passion_file *f, void *buf, int op_write)
{
    if (!f || !buf)
        return PASSION_EINVAL;
    passion_ctx *ctx = f->ctx;
    core_enter(ctx);
    if (f->a->spec.placement != PASSION_PLACE_LOCAL)
        return core_err(ctx, PASSION_EINVAL,
                        "whole-local-array access needs local placement");
    if (op_write && !f->writable)
        return core_err(ctx, PASSION_EACCES, "%s is open read-only",
                        f->fh->path);
    ctx->cnt.bytes_useful += (uint64_t)f->data_bytes;
    if (op_write)
        return ocad_write_conv(ctx, f->fh, buf, f->data_bytes, 0, f->fv.swap,
                               f->fv.esize);
    int rc = core_io_read(f->fh, buf, f->data_bytes, 0);
    if (!rc)
        ocad_swap(buf, f->data_bytes, f->fv.swap);
    return rc;
}

/* whole_local inside the thread contract's guard (core_call_begin) */
static int whole_local_guarded(passion_file *f, void *buf, int op_write)
{
    passion_ctx *gctx = f ? f->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = whole_local(f, buf, op_write);
    core_call_end(gctx);
    return rc;
}

int passion_file_read_local(passion_file *f, void *buf)
{
    return whole_local_guarded(f, buf, 0);
}

int passion_file_write_local(passion_file *f, const void *buf)
{
    return whole_local_guarded(f, (void *)buf, 1);
}

/* Validate an independent section request and build its plan. */
int ocad_section_prepare(passion_file *f, const passion_section *s,
                           const void *buf, const passion_memspec *m,
                         int method, int op_write, ocad_xfer *x)
{
    if (!f)
        return PASSION_EINVAL;
    passion_ctx *ctx = f->ctx;
    core_enter(ctx); /* the entry of passion_file_read/_write(_begin) */
    ocad_last_method(ctx, PASSION_METHOD_AUTO); /* set by the engine */
    ocad_last_predicted(ctx, 0);
    int64_t elems;
    int rc = ocad_file_chunked_refuse(
        f, op_write ? "writes (it is read-only to passion)"
                    : "this access (asynchronous, iterated or planned)");
    if (!rc)
        rc = ocad_section_check(ctx, f->a->nd, s, f->lo, f->hi, &elems);
    if (rc)
        return rc;
    if ((rc = ocad_memspec_check(ctx, f->a->nd, f->a->esize, s, m)))
        return rc;
    if (method < PASSION_METHOD_AUTO || method > PASSION_METHOD_SIEVE)
        return core_err(ctx, PASSION_EINVAL,
                        "method %d: independent access takes auto, direct "
                        "or sieve", method);
    if (op_write && !f->writable)
        return core_err(ctx, PASSION_EACCES, "%s is open read-only",
                        f->fh->path);
    if (elems > 0 && !buf)
        return core_err(ctx, PASSION_EINVAL, "NULL buffer");
    ocad_xfer_build(&f->fv, s, m, x);
    return PASSION_OK;
}

/* An independent read of a chunked HDF5 dataset: the same checks as
   ocad_section_prepare, then the chunk reader. */
static int chunked_read(passion_file *f, const passion_section *s, void *buf,
                        const passion_memspec *m, passion_method method)
{
    passion_ctx *ctx = f->ctx;
    core_enter(ctx);
    ocad_last_method(ctx, PASSION_METHOD_AUTO);
    ocad_last_predicted(ctx, 0);
    int64_t elems;
    int rc = ocad_section_check(ctx, f->a->nd, s, f->lo, f->hi, &elems);
    if (!rc)
        rc = ocad_memspec_check(ctx, f->a->nd, f->a->esize, s, m);
    if (!rc && (method < PASSION_METHOD_AUTO || method > PASSION_METHOD_SIEVE))
        rc = core_err(ctx, PASSION_EINVAL,
                      "method %d: independent access takes auto, direct "
                      "or sieve", method);
    if (!rc && elems > 0 && !buf)
        rc = core_err(ctx, PASSION_EINVAL, "NULL buffer");
    return rc ? rc : ocad_h5c_read(f, s, buf, m);
}

static int file_read_body(passion_file *f, const passion_section *s, void *buf,
                          const passion_memspec *m, passion_method method)
{
    if (f && f->h5c)
        return chunked_read(f, s, buf, m, method);
    ocad_xfer x;
    int rc = ocad_section_prepare(f, s, buf, m, method, 0, &x);
    if (!rc && (rc = ocad_xfer_read(f->ctx, f->fh, &x, buf, method, NULL)))
        ocad_last_method(f->ctx, PASSION_METHOD_AUTO);
    return rc;
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_file_read(passion_file *f, const passion_section *s, void *buf,
                      const passion_memspec *m, passion_method method)
{
    passion_ctx *gctx = f ? f->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = file_read_body(f, s, buf, m, method);
    core_call_end(gctx);
    return rc;
}

static int file_write_body(passion_file *f, const passion_section *s,
                           const void *buf, const passion_memspec *m,
                           passion_method method)
{
    ocad_xfer x;
    int rc = ocad_section_prepare(f, s, buf, m, method, 1, &x);
    if (!rc && (rc = ocad_xfer_write(f->ctx, f->fh, &x, buf, method, NULL)))
        ocad_last_method(f->ctx, PASSION_METHOD_AUTO);
    return rc;
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_file_write(passion_file *f, const passion_section *s,
                       const void *buf, const passion_memspec *m,
                       passion_method method)
{
    passion_ctx *gctx = f ? f->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = file_write_body(f, s, buf, m, method);
    core_call_end(gctx);
    return rc;
}

static int section_plan_body(passion_file *f, const passion_section *s,
                             int op_write, passion_method method,
                             passion_plan_info *info)
{
    if (f)
        core_enter(f->ctx);
    if (!info)
        return PASSION_EINVAL;
    ocad_xfer x;
    int rc = ocad_section_prepare(f, s, (void *)1, NULL, method, 0, &x);
    if (rc)
        return rc;
    memset(info, 0, sizeof *info); /* reserved fields too */
    ocad_plan_count(f->ctx, &x, method, op_write, info, NULL);
    info->runs = ocad_count_runs(&x);
    return PASSION_OK;
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_section_plan(passion_file *f, const passion_section *s,
                         int op_write, passion_method method,
                         passion_plan_info *info)
{
    passion_ctx *gctx = f ? f->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = section_plan_body(f, s, op_write, method, info);
    core_call_end(gctx);
    return rc;
}
