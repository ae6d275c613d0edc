/*
 * errors.c - error codes and their messages, the errno mapping, the
 * detail string of a context (core_err) and the clock. Below the context
 * and the agreement, which both use it.
 */
#include "core.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
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
    case EINVAL:
    case ENAMETOOLONG: return PASSION_EINVAL;
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

double core_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
