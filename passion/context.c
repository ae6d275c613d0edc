/*
 * context.c - the passion context: options, communicator, counters, the
 * last-error detail and staging-memory accounting.
 *
 * Invariant: a context always holds a private duplicate of the user's
 * communicator, so passion's messages never match the user's.
 */
#include "core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

const char *passion_strerror(int code)
{
    switch (code) {
    case PASSION_OK: return "success";
    case PASSION_EINVAL: return "invalid argument";
    case PASSION_ERANGE: return "index or section outside the array bounds";
    case PASSION_EOVERFLOW: return "size or byte count overflows 64 bits";
    case PASSION_ENOMEM: return "out of memory or memory budget too small";
    case PASSION_EIO: return "I/O error";
    case PASSION_ESHORT: return "file shorter than the array";
    case PASSION_ENOSPC: return "no space left on device";
    case PASSION_EMISMATCH: return "ranks disagree on collective arguments";
    case PASSION_EMPI: return "MPI call failed";
    case PASSION_EFORMAT: return "bad file format or header";
    case PASSION_ENOTSUP: return "operation not supported";
    case PASSION_ESTATE: return "call out of order";
    case PASSION_ENOENT: return "no such file";
    case PASSION_EACCES: return "permission denied";
    case PASSION_EREMOTE: return "another rank failed";
    case PASSION_EEXIST: return "file exists";
    default: return "unknown passion error code";
    }
}

int core_errno_code(int e)
{
    switch (e) {
    case 0: return PASSION_OK;
    case ENOSPC:
    case EDQUOT:
    case EFBIG: return PASSION_ENOSPC;
    case ENOMEM: return PASSION_ENOMEM;
    case ENOENT: return PASSION_ENOENT;
    case EEXIST: return PASSION_EEXIST;
    case EACCES:
    case EPERM:
    case EROFS: return PASSION_EACCES;
    case EINVAL: return PASSION_EINVAL;
    case ENOTSUP: return PASSION_ENOTSUP;
    default: return PASSION_EIO;
    }
}

int core_err(passion_ctx *ctx, int code, const char *fmt, ...)
{
    if (!ctx)
        return code;
    int n = snprintf(ctx->detail, sizeof ctx->detail, "rank %d: ", ctx->rank);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof ctx->detail)
        vsnprintf(ctx->detail + n, sizeof ctx->detail - (size_t)n, fmt, ap);
    va_end(ap);
    if (ctx->opt.verbosity >= 2)
        fprintf(stderr, "passion: %s (%s)\n", ctx->detail,
                passion_strerror(code));
    return code;
}

/* key = (rank of the failure) * 2^16 + (-code); the minimum over ranks is
   the lowest failing rank, so the outcome is deterministic. */
static unsigned long long agree_key(const passion_ctx *ctx, int rc)
{
    return rc < 0 ? (unsigned long long)ctx->rank * 65536 + (unsigned)(-rc)
                  : (unsigned long long)ctx->size * 65536;
}

/* Given the minimum key, the common code; fetch the failing rank's detail. */
static int agree_finish(passion_ctx *ctx, unsigned long long min)
{
    if (min >= (unsigned long long)ctx->size * 65536)
        return PASSION_OK;
    int root = (int)(min / 65536);
    int code = -(int)(min % 65536);
    if (MPI_Bcast(ctx->detail, CORE_DETAIL_MAX, MPI_CHAR, root, ctx->comm) !=
        MPI_SUCCESS)
        return core_err(ctx, PASSION_EMPI, "MPI_Bcast in error agreement");
    ctx->detail[CORE_DETAIL_MAX - 1] = '\0';
    return code;
}

int core_agree(passion_ctx *ctx, int rc)
{
    unsigned long long key = agree_key(ctx, rc), min;
    if (MPI_Allreduce(&key, &min, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN,
                      ctx->comm) != MPI_SUCCESS)
        return core_err(ctx, PASSION_EMPI, "MPI_Allreduce in error agreement");
    return agree_finish(ctx, min);
}

int core_same(passion_ctx *ctx, int rc, const void *p, size_t n,
              const char *what)
{
    /* FNV-1a, 64-bit. One reduction gives the first failure and both the
       minimum and (through ~h) the maximum hash: equal iff all agree. */
    uint64_t h = 1469598103934665603ULL;
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    unsigned long long v[3] = {agree_key(ctx, rc), h, ~h}, r[3];
    if (MPI_Allreduce(v, r, 3, MPI_UNSIGNED_LONG_LONG, MPI_MIN, ctx->comm) !=
        MPI_SUCCESS)
        return core_err(ctx, PASSION_EMPI, "MPI_Allreduce (argument check)");
    if (r[0] < (unsigned long long)ctx->size * 65536)
        return agree_finish(ctx, r[0]); /* a local error comes first */
    if (r[1] != ~r[2])
        return core_err(ctx, PASSION_EMISMATCH,
                        "ranks passed different %s to a collective call",
                        what);
    return PASSION_OK;
}

double core_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---------------------------------------------------------------- context */

int passion_init(MPI_Comm comm, const passion_options *opt, passion_ctx **out)
{
    if (!out)
        return PASSION_EINVAL;
    *out = NULL;
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited || comm == MPI_COMM_NULL)
        return PASSION_ESTATE;
    /* dup first: it is collective, and every rank must reach it */
    MPI_Comm dup;
    if (MPI_Comm_dup(comm, &dup) != MPI_SUCCESS)
        return PASSION_EMPI;
    passion_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        /* take part in the agreement so that no rank hangs */
        long long key = 0, min;
        MPI_Allreduce(&key, &min, 1, MPI_LONG_LONG, MPI_MIN, dup);
        MPI_Comm_free(&dup);
        return PASSION_ENOMEM;
    }
    ctx->comm = dup;
    MPI_Comm_rank(dup, &ctx->rank);
    MPI_Comm_size(dup, &ctx->size);
    if (opt)
        ctx->opt = opt->o; /* valid: every setter checks */
    else
        core_options_default(&ctx->opt);
    int rc = PASSION_OK;
    const char *env = getenv("PASSION_OPTIONS");
    if (env && *env) {
        char why[256] = "";
        rc = core_options_parse(&ctx->opt, env, why, sizeof why);
        if (rc)
            core_err(ctx, rc, "environment variable PASSION_OPTIONS: %s",
                     why);
    }
    ctx->msg_alpha = ctx->opt.msg_alpha;
    ctx->msg_beta = ctx->opt.msg_beta;
    rc = core_agree(ctx, rc);
    if (rc) {
        MPI_Comm_free(&ctx->comm);
        free(ctx);
        return rc;
    }
    *out = ctx;
    return PASSION_OK;
}

int passion_finalize(passion_ctx *ctx)
{
    if (!ctx)
        return PASSION_OK;
    int rc = PASSION_OK;
    if (ctx->live_arrays > 0)
        rc = core_err(ctx, PASSION_ESTATE,
                      "passion_finalize: %lld array(s) and %lld open "
                      "file(s) of this context still exist; free and close "
                      "them first", (long long)ctx->live_arrays,
                      (long long)ctx->live_files);
    rc = core_agree(ctx, rc);
    if (rc == PASSION_ESTATE)
        return rc; /* the context stays valid */
    for (int i = CORE_EXT_MAX - 1; i >= 0; i--)
        if (ctx->ext[i] && ctx->ext_free[i])
            ctx->ext_free[i](ctx, ctx->ext[i]);
    core_stage_release(ctx);
    MPI_Comm_free(&ctx->comm);
    free(ctx);
    return rc;
}

int passion_ctx_option_get(const passion_ctx *ctx, const char *key,
                           char *buf, size_t len)
{
    if (!ctx)
        return PASSION_EINVAL;
    char why[256] = "";
    int rc = core_options_get(&ctx->opt, key, buf, len, why, sizeof why);
    return rc ? core_err((passion_ctx *)ctx, rc, "%s", why) : PASSION_OK;
}

const char *passion_version(int *major, int *minor, int *patch)
{
    if (major)
        *major = PASSION_VERSION_MAJOR;
    if (minor)
        *minor = PASSION_VERSION_MINOR;
    if (patch)
        *patch = PASSION_VERSION_PATCH;
    return PASSION_VERSION_STRING;
}

MPI_Comm passion_ctx_comm(const passion_ctx *ctx)
{
    return ctx ? ctx->comm : MPI_COMM_NULL;
}

const char *passion_ctx_errdetail(const passion_ctx *ctx)
{
    return ctx ? ctx->detail : "";
}

int passion_counters_get(const passion_ctx *ctx, passion_counters *c)
{
    if (!ctx || !c)
        return PASSION_EINVAL;
    *c = ctx->cnt;
    return PASSION_OK;
}

int passion_counters_reset(passion_ctx *ctx)
{
    if (!ctx)
        return PASSION_EINVAL;
    memset(&ctx->cnt, 0, sizeof ctx->cnt);
    ctx->cnt.peak_staging = (uint64_t)ctx->staging_now;
    return PASSION_OK;
}
