/*
 * net_sim.c - the simulated network (a test and benchmark device, not a
 * model of any real fabric); compiled only into test builds
 * (-Dtest_hooks=true, PASSION_TEST_HOOKS), where the options
 * sim_net_latency_us and sim_net_byte_ns exist.
 *
 * Every point-to-point message that the exchange subsystem sends goes
 * through core_net_isend (or is charged with core_net_charge where MPI
 * sends it inside a collective call), and so does the token that orders
 * independent writes (collective/global.c); one whose receiver is on
 * another node makes its sender wait sim_net_latency_us microseconds plus
 * sim_net_byte_ns nanoseconds per byte before it is sent (core_net_sim_send),
 * the time a one-port network interface of that latency and bandwidth
 * would be busy with it. The interface is the node's, shared by its ranks,
 * as a cluster node's network adapter is: a message waits for the messages
 * the node's other ranks handed it before (their busy time is one clock in
 * memory the node's ranks share, an MPI shared-memory window on the node's
 * communicator, advanced by compare-and-swap), so a node whose k ranks
 * each send m messages off the node waits k m message times, the same as
 * one rank sending them all; without shared memory (ranks of a node on
 * different machines) each rank has an interface of its own. The wait
 * sleeps (clock_nanosleep to an absolute deadline, so the CPU goes to the
 * other ranks of this machine) except below NET_SPIN seconds, which it
 * spins; a sleep may overshoot by the scheduler's slack.
 *
 * Invariants: the interface's clock only moves forward; ctx->net_busy is
 * NULL or points into ctx->net_win, which core_net_sim_close frees; a
 * message is charged on its sender, before it is sent, only between nodes.
 */
#include "core.h"

#include <errno.h>
#include <stdint.h>
#include <time.h>

/* waits shorter than this spin (a sleep costs about as much) */
#define NET_SPIN 20e-6

void core_net_sim_open(passion_ctx *ctx, MPI_Comm node)
{
    ctx->net_busy = NULL;
    ctx->net_win = MPI_WIN_NULL;
    /* collective over the node; the options are the same on every rank
       (core_same) */
    if (node == MPI_COMM_NULL || (ctx->opt.sim_net_latency_us <= 0 &&
                                  ctx->opt.sim_net_byte_ns <= 0))
        return;
    void *base = NULL;
    MPI_Win w = MPI_WIN_NULL;
    if (MPI_Win_allocate_shared(ctx->node_rank == 0 ? 8 : 0, 8,
                                MPI_INFO_NULL, node, &base, &w) !=
        MPI_SUCCESS)
        return;
    MPI_Aint sz = 0;
    int du = 0;
    void *p = NULL;
    if (MPI_Win_shared_query(w, 0, &sz, &du, &p) == MPI_SUCCESS && p &&
        sz >= 8) {
        ctx->net_busy = p;
        ctx->net_win = w;
        if (ctx->node_rank == 0)
            __atomic_store_n(ctx->net_busy, 0, __ATOMIC_SEQ_CST);
    } else {
        MPI_Win_free(&w);
    }
}

void core_net_sim_close(passion_ctx *ctx)
{
    if (ctx->net_busy) {
        MPI_Win_free(&ctx->net_win);
        ctx->net_busy = NULL;
    }
}

double core_net_cost(const passion_ctx *ctx, int64_t bytes)
{
    return ctx->opt.sim_net_latency_us * 1e-6 +
           (double)bytes * ctx->opt.sim_net_byte_ns * 1e-9;
}

/* CLOCK_MONOTONIC in nanoseconds (the same clock in every process of
   the machine) */
static int64_t net_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Wait s seconds: spin below NET_SPIN, else sleep to the deadline. */
static void net_wait(double s)
{
    double t0 = core_now();
    if (s < NET_SPIN) {
        while (core_now() - t0 < s)
            ;
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double end = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec + s;
    ts.tv_sec = (time_t)end;
    ts.tv_nsec = (long)((end - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
           EINTR)
        ;
}

void core_net_sim_send(passion_ctx *ctx, int64_t bytes, int counted)
{
    if (!counted)
        ctx->net_uncounted_inter++;
    double s = core_net_cost(ctx, bytes);
    if (s <= 0)
        return;
    if (!ctx->net_busy) {
        net_wait(s);
        return;
    }
    /* the node's interface: this message starts when it is free (now or
       after the messages before it) and keeps it busy s seconds */
    int64_t now = net_now_ns(), cost = (int64_t)(s * 1e9), old, end;
    old = __atomic_load_n(ctx->net_busy, __ATOMIC_SEQ_CST);
    do {
        end = (old > now ? old : now) + cost;
    } while (!__atomic_compare_exchange_n(ctx->net_busy, &old, end, 0,
                                          __ATOMIC_SEQ_CST,
                                          __ATOMIC_SEQ_CST));
    net_wait((double)(end - now) * 1e-9);
}
