/*
 * core_err.h - errors and the thread contract of public calls (prefix
 * core_): recording a failure's detail, clearing it at a call's entry, the
 * busy mark of a context, errno to code (passion/errors.c, context.c).
 *
 * Invariants: every core function returns 0 or a negative PASSION_E* code
 * and, on failure, has written the context's detail string through
 * core_err(); at most one thread runs a public call on a context at a
 * time.
 */
#ifndef PASSION_CORE_ERR_H
#define PASSION_CORE_ERR_H

#include "passion.h"
#include "core_base.h"
#include "core_ctx.h"

/* Record "rank R: <fmt>" as the detail and return code. */
CORE_HIDDEN int core_err(passion_ctx *ctx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/*
 * Entry of a public call on ctx (or on an object made from it): forget the
 * previous call's detail, so that passion_ctx_errdetail() is empty after a call
 * that succeeded. Calls that hand back an earlier failure again (a sticky
 * iterator error) leave its detail alone.
 */
static inline void core_enter(passion_ctx *ctx)
{
    if (ctx)
        ctx->detail[0] = '\0';
}
/*
 * The thread contract (passion.h): no two calls may run at once on one
 * context (or its arrays, files, requests and iterators). Every public
 * call that works on a context is bracketed by core_call_begin /
 * core_call_end: begin returns 0 and marks ctx busy for this thread
 * (nested calls of the same thread, as the library makes internally, just
 * go deeper), or PASSION_ESTATE at once, touching nothing of ctx (not even
 * its detail, which belongs to the running call), when another thread's
 * call is running on ctx. That outcome is local: the misuse cannot be
 * agreed over ranks without using the communicator the running call
 * uses. ctx NULL: 0 (the call reports its own EINVAL). end must follow a
 * begin that returned 0, on the same thread, unless the call freed ctx.
 */
CORE_HIDDEN int core_call_begin(passion_ctx *ctx);
CORE_HIDDEN void core_call_end(passion_ctx *ctx);
/* Map an errno to a passion code. */
CORE_HIDDEN int core_errno_code(int e);

#endif
