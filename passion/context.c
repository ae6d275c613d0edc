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
    case EACCES:
    case EPERM:
    case EROFS: return PASSION_EACCES;
    case EINVAL: return PASSION_EINVAL;
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

/* ---------------------------------------------------------------- options */

int passion_options_init(passion_options *o)
{
    if (!o)
        return PASSION_EINVAL;
    memset(o, 0, sizeof *o);
    o->memory_budget = 64LL << 20;
    o->driver = PASSION_DRIVER_POSIX;
    o->exchange = PASSION_XCHG_AUTO;
    o->fault_errno = EIO;
    o->fault_ranks = -1;
    return PASSION_OK;
}

static int parse_i64(const char *v, int64_t *out)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v)
        return PASSION_EINVAL;
    int64_t mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1LL << 10; end++; break;
    case 'm': case 'M': mul = 1LL << 20; end++; break;
    case 'g': case 'G': mul = 1LL << 30; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'I')
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end != '\0')
        return PASSION_EINVAL;
    int64_t r;
    if (!core_mul(x, mul, &r))
        return PASSION_EOVERFLOW;
    *out = r;
    return PASSION_OK;
}

static int parse_double(const char *v, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end != '\0' || x < 0)
        return PASSION_EINVAL;
    *out = x;
    return PASSION_OK;
}

static int parse_name(const char *v, const char *const *names, int n,
                      int *out)
{
    for (int i = 0; i < n; i++)
        if (names[i] && strcasecmp(v, names[i]) == 0) {
            *out = i;
            return PASSION_OK;
        }
    return PASSION_EINVAL;
}

int passion_options_set(passion_options *o, const char *kv)
{
    if (!o || !kv)
        return PASSION_EINVAL;
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv)
        return PASSION_EINVAL;
    char key[64];
    size_t kl = (size_t)(eq - kv);
    if (kl >= sizeof key)
        return PASSION_EINVAL;
    memcpy(key, kv, kl);
    key[kl] = '\0';
    const char *v = eq + 1;
    int64_t i;
    int rc;
    static const char *const drivers[] = {"posix", "mpiio", "fault"};
    static const char *const xchg[] = {"auto", "mpi", "pairwise", "a1",
                                       "index", "fourstage", "fourstage-nb"};
    static const char *const engines[] = {"auto", "uring", "thread"};

    if (!strcmp(key, "memory_budget")) {
        if ((rc = parse_i64(v, &i)) || i < 1)
            return rc ? rc : PASSION_EINVAL;
        o->memory_budget = i;
    } else if (!strcmp(key, "driver")) {
        return parse_name(v, drivers, 3, &o->driver);
    } else if (!strcmp(key, "exchange")) {
        return parse_name(v, xchg, 7, &o->exchange);
    } else if (!strcmp(key, "engine")) {
        return parse_name(v, engines, 3, &o->engine);
    } else if (!strcmp(key, "io_latency")) {
        return parse_double(v, &o->io_latency);
    } else if (!strcmp(key, "io_bandwidth")) {
        return parse_double(v, &o->io_bandwidth);
    } else if (!strcmp(key, "msg_alpha")) {
        return parse_double(v, &o->msg_alpha);
    } else if (!strcmp(key, "msg_beta")) {
        return parse_double(v, &o->msg_beta);
    } else {
        struct { const char *k; int *p; int64_t lo, hi; } ints[] = {
            {"direct_io", &o->direct_io, 0, 1},
            {"verbosity", &o->verbosity, 0, 3},
            {"radix", &o->radix, 0, 1 << 30},
            {"io_concurrency", &o->io_concurrency, 0, 4096},
            {"fault_errno", &o->fault_errno, 1, 4095},
            {"fault_short", &o->fault_short, 0, 1},
            {"fault_ranks", &o->fault_ranks, -1, 1 << 30},
        };
        if (!strcmp(key, "fault_fail_at")) {
            if ((rc = parse_i64(v, &i)) || i < 0)
                return rc ? rc : PASSION_EINVAL;
            o->fault_fail_at = i;
            return PASSION_OK;
        }
        for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
            if (strcmp(key, ints[k].k))
                continue;
            if ((rc = parse_i64(v, &i)))
                return rc;
            if (i < ints[k].lo || i > ints[k].hi)
                return PASSION_EINVAL;
            *ints[k].p = (int)i;
            return PASSION_OK;
        }
        return PASSION_EINVAL;
    }
    return PASSION_OK;
}

static int apply_env(passion_options *o)
{
    const char *env = getenv("PASSION_OPTIONS");
    if (!env || !*env)
        return PASSION_OK;
    char *copy = strdup(env);
    if (!copy)
        return PASSION_ENOMEM;
    int rc = PASSION_OK;
    char *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t && !rc;
         t = strtok_r(NULL, ",", &save))
        rc = passion_options_set(o, t);
    free(copy);
    return rc;
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
        ctx->opt = *opt;
    else
        passion_options_init(&ctx->opt);
    int rc = apply_env(&ctx->opt);
    if (rc)
        core_err(ctx, rc, "bad PASSION_OPTIONS environment variable");
    else if (ctx->opt.memory_budget < 1 || ctx->opt.driver < 0 ||
             ctx->opt.driver > PASSION_DRIVER_FAULT ||
             ctx->opt.exchange < 0 ||
             ctx->opt.exchange > PASSION_XCHG_FOURSTAGE_NB ||
             ctx->opt.radix < 0 || ctx->opt.engine < 0 ||
             ctx->opt.engine > 2)
        rc = core_err(ctx, PASSION_EINVAL, "invalid options");
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
    int rc = core_agree(ctx, PASSION_OK);
    for (int i = CORE_EXT_MAX - 1; i >= 0; i--)
        if (ctx->ext[i] && ctx->ext_free[i])
            ctx->ext_free[i](ctx, ctx->ext[i]);
    core_stage_release(ctx);
    MPI_Comm_free(&ctx->comm);
    free(ctx);
    return rc;
}

const passion_options *passion_ctx_options(const passion_ctx *ctx)
{
    return ctx ? &ctx->opt : NULL;
}

MPI_Comm passion_ctx_comm(const passion_ctx *ctx)
{
    return ctx ? ctx->comm : MPI_COMM_NULL;
}

const char *passion_errdetail(const passion_ctx *ctx)
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
