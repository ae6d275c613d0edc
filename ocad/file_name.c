/*
 * file_name.c - an open file's name and durability: renaming it (a local
 * set's files and description with it), syncing it to the device,
 * dropping its pages from the cache, and its path.
 *
 * Invariants: a rename is collective and agreed at every step: every
 * rank's writes are on the device before any name moves, the ranks agree
 * on the new path, and a local set's description is removed first and
 * written back last, so it never names files of two generations; after a
 * rename the file's identity (ocad_file_ident) follows the new path.
 */
#include "ocad.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Rank 0 writes the set's description for its new pattern to
   (ocad_file_lset_write) and removes the one of the old pattern from. */
static int lset_move(passion_file *f, const char *from, const char *to)
{
    passion_ctx *ctx = f->ctx;
    char *a = NULL;
    int rc = ocad_file_lset_write(f, to);
    if (!rc && !ocad_lset_name(from, &a)) {
        char *b = NULL;
        if (ocad_lset_name(to, &b) || strcmp(a, b))
            core_io_discard(ctx, a); /* best effort: the old name */
        free(b);
    }
    free(a);
    return rc;
}

static int file_rename_body(passion_file *f, const char *path)
{
    if (!f)
        return PASSION_EINVAL;
    passion_ctx *ctx = f->ctx;
    core_enter(ctx);
    int local = f->a->spec.placement == PASSION_PLACE_LOCAL;
    int rc = PASSION_OK;
    char *name = NULL;
    if (!path || !*path)
        rc = core_err(ctx, PASSION_EINVAL, "empty path");
    else if (!f->writable)
        rc = core_err(ctx, PASSION_EACCES, "%s is open read-only",
                      f->fh->path);
    uint64_t key = 1469598103934665603ULL;
    for (const char *c = path ? path : ""; *c; c++)
        key = (key ^ (unsigned char)*c) * 1099511628211ULL;
    rc = core_same(ctx, rc, &key, sizeof key, "paths");
    if (rc)
        return rc;
    rc = local ? ocad_file_local_name(ctx, path, &name)
               : ((name = core_strdup(ctx, path)) ? PASSION_OK
                                        : core_err(ctx, PASSION_ENOMEM,
                                                   "file name"));
    if (!rc && strlen(name) >= PATH_MAX)
        rc = core_err(ctx, PASSION_EINVAL,
                      "path of %zu bytes: longer than PATH_MAX (%d)",
                      strlen(name), PATH_MAX);
    /* every rank's writes are on the device before any name moves */
    if (!rc)
        rc = core_io_sync(f->fh);
    /* a local set's description goes first and comes back last: a set
       whose files are being replaced one by one has none, so it never
       names files of two generations */
    if (!rc && local && ctx->rank == 0) {
        char *d = NULL;
        if (!ocad_lset_name(path, &d))
            core_io_discard(ctx, d);
        free(d);
    }
    rc = core_agree(ctx, rc);
    if (!rc && (local || ctx->rank == 0))
        rc = core_io_publish(f->fh, name, 0);
    rc = core_agree(ctx, rc);
    if (!rc && local && ctx->rank == 0)
        rc = lset_move(f, f->pattern, path);
    if (!rc && !local && ctx->rank != 0) {
        /* the other ranks' handles follow the name */
        char *np = core_strdup(ctx, name);
        if (!np)
            rc = core_err(ctx, PASSION_ENOMEM, "file name");
        else {
            core_free(ctx, f->fh->path);
            f->fh->path = np;
        }
    }
    if (!rc && local) {
        char *np = core_strdup(ctx, path);
        if (!np)
            rc = core_err(ctx, PASSION_ENOMEM, "file name");
        else {
            core_free(ctx, f->pattern);
            f->pattern = np;
        }
    }
    core_free(ctx, name);
    rc = core_agree(ctx, rc);
    if (!rc)
        ocad_file_ident(f);
    return rc;
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_file_rename(passion_file *f, const char *path)
{
    passion_ctx *gctx = f ? f->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = file_rename_body(f, path);
    core_call_end(gctx);
    return rc;
}

static int file_sync_body(passion_file *f)
{
    if (!f)
        return PASSION_EINVAL;
    core_enter(f->ctx);
    return core_io_sync(f->fh);
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_file_sync(passion_file *f)
{
    passion_ctx *gctx = f ? f->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = file_sync_body(f);
    core_call_end(gctx);
    return rc;
}

static int file_drop_cache_body(passion_file *f)
{
    if (!f)
        return PASSION_EINVAL;
    core_enter(f->ctx);
    return core_io_drop_cache(f->fh);
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_file_drop_cache(passion_file *f)
{
    passion_ctx *gctx = f ? f->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = file_drop_cache_body(f);
    core_call_end(gctx);
    return rc;
}

const char *passion_file_path(const passion_file *f)
{
    return f && f->fh ? f->fh->path : NULL;
}
