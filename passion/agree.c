/*
 * agree.c - the one agreement of passion's collective calls: every rank
 * returns the same code and the same detail, and no rank is left waiting.
 *
 * Every collective call ends in core_agree (or core_same, which also
 * checks that the ranks passed the same arguments) on the context's
 * communicator, which every rank reaches whatever failed locally before.
 *
 * How: one all-reduce (MPI_MIN) of an unsigned 64-bit key, (rank of the
 * failure) * 2^16 + (-code) on a failing rank and P * 2^16 on a rank that
 * succeeded, so the minimum names the lowest failing rank and its code
 * and every rank derives the same outcome from it; then, only when a rank
 * failed, a broadcast of that rank's detail string from it. Both steps
 * are taken by every rank or by none, as their condition is the reduced
 * key, identical everywhere.
 *
 * The waits poll MPI for the process's spin time, then yield the CPU
 * between polls, or, on an oversubscribed node, sleep (core.h:
 * core_wait_policy); the exchange layer waits through the same
 * functions. If an MPI call of the
 * agreement itself fails (the context's communicator returns errors, see
 * passion_init), the rank returns PASSION_EMPI at once instead of waiting:
 * no rank hangs on passion's account; whether the peers' MPI calls return
 * is then up to MPI.
 *
 * A call that writes agrees through core_agree_wrote: when a rank
 * failed, every rank then also gathers which ranks wrote (one byte per
 * rank; past AGREE_LIST_MAX ranks only their counts), so that the detail
 * of a partly written file says who wrote.
 *
 * Invariant: the key's type is unsigned on every rank and in every call
 * site (a signed reduction on one rank and an unsigned one on another is
 * a hang); nothing else in the library reduces an outcome.
 */
#include "core.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define AGREE_SHIFT 65536ULL
/* ranks up to which core_agree_wrote lists the ranks that wrote (a byte
   each on the stack) */
#define AGREE_LIST_MAX 4096

/* the key of a local outcome */
static unsigned long long agree_key(const passion_ctx *ctx, int rc)
{
    return rc < 0 ? (unsigned long long)ctx->rank * AGREE_SHIFT +
                        (unsigned)(-rc)
                  : (unsigned long long)ctx->size * AGREE_SHIFT;
}

/* the spin time and the pause between polls after it in nanoseconds (0:
   a yield), process-wide: see core.h */
static _Atomic long long spin_ns = (long long)(CORE_SPIN_SHORT * 1e9);
static _Atomic long long pause_ns = 0;

#ifdef PASSION_TEST_HOOKS
double core_wait_spin(void)
{
    return (double)spin_ns * 1e-9;
}

double core_wait_pause(void)
{
    return (double)pause_ns * 1e-9;
}
#endif

/* Give the CPU away between two polls of a wait past its spin time. */
static void wait_pause(void)
{
    long long ns = pause_ns;
    if (ns <= 0) {
        sched_yield();
        return;
    }
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    nanosleep(&ts, NULL); /* a signal cuts it short: the wait polls again */
}

double core_wait_policy(passion_ctx *ctx)
{
    double s = ctx->opt.wait_spin;
    /* ctx->cpu_share (core_host_count): above 1 where the node's ranks
       outnumber the processors their affinity masks cover together. Not
       this rank's own mask: Open MPI binds each rank to one core by
       default, and ranks bound one to a core would count as
       oversubscribed (a short spin, then sleeps) although each rank has
       a core of its own */
    const int over = ctx->cpu_share > 1;
    if (s <= 0)
        s = over ? CORE_SPIN_SHORT : CORE_SPIN_LONG;
    spin_ns = (long long)(s * 1e9);
    pause_ns = over ? (long long)(CORE_WAIT_PAUSE * 1e9) : 0;
    return s;
}

#ifdef PASSION_TEST_HOOKS
/* polls and clock reads of core_waitall (tests, test builds only), added
   once a wait that took more than one poll */
static _Atomic long long wait_polls, wait_reads;

static void wait_count(long long polls, long long reads)
{
    if (polls < 2)
        return; /* done at the first poll */
    wait_polls += polls;
    wait_reads += reads;
}

void core_wait_counts(long long *polls, long long *reads)
{
    *polls = wait_polls;
    *reads = wait_reads;
}
#else
static void wait_count(long long polls, long long reads)
{
    (void)polls;
    (void)reads;
}
#endif

void core_idle(double t0)
{
    if (core_now() - t0 > (double)spin_ns * 1e-9)
        wait_pause();
}

int core_wait(MPI_Request *req)
{
    return core_waitall(1, req);
}

/* GCC (12) reads MPICH's MPI_STATUSES_IGNORE, the constant pointer 1, as
   a zero-sized status array and warns; the pointer is never written. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
int core_waitall(int n, MPI_Request *req)
{
    if (n <= 0)
        return PASSION_OK;
    CORE_CHAOS(WAIT);
    /* the clock is read once every CORE_POLLS_PER_CLOCK polls while
       spinning (on a virtual machine's clock a read costs about as much
       as a poll), and no more once the spin time is over: every poll
       then yields. The spin time counts from the first read, so a wait
       done within CORE_POLLS_PER_CLOCK polls (a small exchange's) reads
       no clock at all. */
    double t0 = 0;
    int yielding = 0;
    long long reads = 0;
    for (long i = 0;; i++) {
        int done = 0;
        if (MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
            wait_count(i + 1, reads);
            return PASSION_EMPI;
        }
        if (done) {
            wait_count(i + 1, reads);
            return PASSION_OK;
        }
        if (yielding) {
            wait_pause();
        } else if (i > 0 && i % CORE_POLLS_PER_CLOCK == 0) {
            reads++;
            double t = core_now();
            if (i == CORE_POLLS_PER_CLOCK)
                t0 = t;
            else if (t - t0 > (double)spin_ns * 1e-9) {
                yielding = 1;
                wait_pause();
            }
        }
    }
}
#pragma GCC diagnostic pop

/* Reduce n keys with MPI_MIN on the context's communicator. */
static int reduce_min(passion_ctx *ctx, unsigned long long *v,
                      unsigned long long *r, int n)
{
    MPI_Request req;
    if (MPI_Iallreduce(v, r, n, MPI_UNSIGNED_LONG_LONG, MPI_MIN, ctx->comm,
                       &req) != MPI_SUCCESS)
        return PASSION_EMPI;
    return core_wait(&req);
}

/* Given the minimum key, the common code; the failing rank's detail. */
static int agree_finish(passion_ctx *ctx, unsigned long long min)
{
    if (min >= (unsigned long long)ctx->size * AGREE_SHIFT)
        return PASSION_OK;
    int root = (int)(min / AGREE_SHIFT);
    int code = -(int)(min % AGREE_SHIFT);
    MPI_Request req;
    if (MPI_Ibcast(ctx->detail, CORE_DETAIL_MAX, MPI_CHAR, root, ctx->comm,
                   &req) != MPI_SUCCESS ||
        core_wait(&req))
        return core_err(ctx, PASSION_EMPI,
                        "MPI_Ibcast of the detail in the error agreement");
    ctx->detail[CORE_DETAIL_MAX - 1] = '\0';
    return code;
}

int core_agree(passion_ctx *ctx, int rc)
{
    if (rc > 0) /* not a code: count it as success */
        rc = PASSION_OK;
    CORE_CHAOS(AGREE);
    double t0 = core_now();
    unsigned long long key = agree_key(ctx, rc), min = key;
    int mrc = reduce_min(ctx, &key, &min, 1);
    if (!mrc)
        rc = agree_finish(ctx, min);
    else
        rc = core_err(ctx, PASSION_EMPI,
                      "MPI_Iallreduce in the error agreement");
    ctx->cnt.t_comm += core_now() - t0;
    return rc;
}

/* The ranks r with f[r] & bit as "0,2,5-9" into b (n bytes, "..." at the
   end where they do not fit); returns how many. */
static int rank_list(const unsigned char *f, int P, unsigned bit, char *b,
                     size_t n)
{
    size_t w = 0;
    int count = 0;
    b[0] = '\0';
    for (int r = 0; r < P; r++) {
        if (!(f[r] & bit))
            continue;
        int e = r; /* a run of three or more as a range */
        while (e + 1 < P && (f[e + 1] & bit))
            e++;
        if (e == r + 1)
            e = r;
        count += e - r + 1;
        char item[32];
        int k = e == r ? snprintf(item, sizeof item, "%s%d", w ? "," : "", r)
                       : snprintf(item, sizeof item, "%s%d-%d",
                                  w ? "," : "", r, e);
        if (w + (size_t)k + 4 < n) {
            memcpy(b + w, item, (size_t)k + 1);
            w += (size_t)k;
        } else if (w + 4 < n && strcmp(b + (w >= 3 ? w - 3 : 0), "...")) {
            memcpy(b + w, "...", 4);
            w += 3;
        }
        r = e;
    }
    return count;
}

/* After an agreed failure whose key was min: which ranks wrote, and which
   failed, into the detail (every rank, the same). */
static void wrote_detail(passion_ctx *ctx, unsigned long long min, int wrote,
                         int failed)
{
    const int P = ctx->size, root = (int)(min / AGREE_SHIFT);
    char wl[192] = "", fl[96] = "";
    int nw, nf;
    MPI_Request req;
    if (P <= AGREE_LIST_MAX) {
        unsigned char f[AGREE_LIST_MAX];
        unsigned char mine = (unsigned char)((wrote ? 1 : 0) |
                                             (failed ? 2 : 0));
        if (MPI_Iallgather(&mine, 1, MPI_UNSIGNED_CHAR, f, 1,
                           MPI_UNSIGNED_CHAR, ctx->comm,
                           &req) != MPI_SUCCESS ||
            core_wait(&req))
            return; /* the failure's own detail stays */
        nw = rank_list(f, P, 1, wl, sizeof wl);
        nf = rank_list(f, P, 2, fl, sizeof fl);
    } else {
        long long c[2] = {wrote ? 1 : 0, failed ? 1 : 0}, t[2];
        if (MPI_Iallreduce(c, t, 2, MPI_LONG_LONG, MPI_SUM, ctx->comm,
                           &req) != MPI_SUCCESS ||
            core_wait(&req))
            return;
        nw = (int)t[0];
        nf = (int)t[1];
    }
    if (nw == 0)
        return; /* nothing written: the file is as it was */
    /* the failing rank's detail without its "rank R: " */
    char pre[32], d[CORE_DETAIL_MAX];
    int k = snprintf(pre, sizeof pre, "rank %d: ", root);
    const char *own = ctx->detail;
    if (k > 0 && !strncmp(own, pre, (size_t)k))
        own += k;
    /* cut at the detail's size, as every detail is */
    int n = P > AGREE_LIST_MAX
                ? snprintf(d, sizeof d,
                           "%d of %d ranks wrote their data; %d failed, "
                           "rank %d: %s", nw, P, nf, root, own)
            : nf == 1
                ? snprintf(d, sizeof d,
                           "%s %s wrote %s data; rank %d failed: %s",
                           nw > 1 ? "ranks" : "rank", wl,
                           nw > 1 ? "their" : "its", root, own)
                : snprintf(d, sizeof d,
                           "%s %s wrote %s data; %s %s failed, rank %d: %s",
                           nw > 1 ? "ranks" : "rank", wl,
                           nw > 1 ? "their" : "its",
                           nf > 1 ? "ranks" : "rank", fl, root, own);
    if (n > 0)
        memcpy(ctx->detail, d, sizeof d);
}

int core_agree_wrote(passion_ctx *ctx, int rc, int wrote)
{
    if (rc > 0)
        rc = PASSION_OK;
    const int failed = rc < 0;
    CORE_CHAOS(AGREE);
    double t0 = core_now();
    unsigned long long key = agree_key(ctx, rc), min = key;
    if (reduce_min(ctx, &key, &min, 1)) {
        rc = core_err(ctx, PASSION_EMPI,
                      "MPI_Iallreduce in the error agreement");
    } else {
        rc = agree_finish(ctx, min);
        /* a rank failed: every rank that reduced is here, whatever its
           broadcast gave */
        if (min < (unsigned long long)ctx->size * AGREE_SHIFT)
            wrote_detail(ctx, min, wrote, failed);
    }
    ctx->cnt.t_comm += core_now() - t0;
    return rc;
}

int core_same(passion_ctx *ctx, int rc, const void *p, size_t n,
              const char *what)
{
    return core_same_all(ctx, rc, p, n, what, NULL);
}

int core_same_all(passion_ctx *ctx, int rc, const void *p, size_t n,
                  const char *what, int *all)
{
    if (rc > 0)
        rc = PASSION_OK;
    /* FNV-1a, 64-bit. One reduction gives the first failure and both the
       minimum and (through ~h) the maximum hash: equal iff all agree. */
    uint64_t h = 1469598103934665603ULL;
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    double t0 = core_now();
    unsigned long long v[4] = {agree_key(ctx, rc), h, ~h,
                               all && *all ? 1 : 0},
                       r[4];
    int mrc = reduce_min(ctx, v, r, all ? 4 : 3);
    if (mrc)
        rc = core_err(ctx, PASSION_EMPI,
                      "MPI_Iallreduce in the argument check (%s)", what);
    else if (r[0] < (unsigned long long)ctx->size * AGREE_SHIFT)
        rc = agree_finish(ctx, r[0]); /* a local error comes first */
    else if (r[1] != ~r[2])
        rc = core_err(ctx, PASSION_EMISMATCH,
                      "ranks passed different %s to a collective call",
                      what);
    else
        rc = PASSION_OK;
    if (all)
        *all = !rc && r[3] == 1;
    ctx->cnt.t_comm += core_now() - t0;
    return rc;
}

int core_agree_max(passion_ctx *ctx, int rc, double *v, int n)
{
    if (n > 8)
        return core_agree(ctx, core_err(ctx, PASSION_EINVAL,
                                        "core_agree_max: %d values", n));
    /* one reduction: the key as a double (exact below 2^53), negated so
       that MPI_MAX gives the minimum key, then the values */
    if (rc > 0)
        rc = PASSION_OK;
    double in[9], out[9];
    in[0] = -(double)agree_key(ctx, rc);
    for (int i = 0; i < n; i++)
        in[1 + i] = v[i];
    double t0 = core_now();
    MPI_Request req;
    int mrc = MPI_Iallreduce(in, out, n + 1, MPI_DOUBLE, MPI_MAX, ctx->comm,
                             &req) != MPI_SUCCESS ||
              core_wait(&req);
    if (mrc) {
        rc = core_err(ctx, PASSION_EMPI,
                      "MPI_Iallreduce in the error agreement");
    } else {
        rc = agree_finish(ctx, (unsigned long long)-out[0]);
        if (!rc)
            for (int i = 0; i < n; i++)
                v[i] = out[1 + i];
    }
    ctx->cnt.t_comm += core_now() - t0;
    return rc;
}
