/*
 * core_ctx.h - the context struct (struct passion_ctx) and its extension
 * slots (prefix core_).
 *
 * Invariants: the context's own fields belong to passion/; state an upper
 * layer keeps per context hangs on ext[] with its destructor in ext_free[],
 * and passion_finalize runs those destructors, highest slot first, never
 * calling upward otherwise; the node fields are the same on every rank of a
 * node; detail holds the last failure's message, NUL-terminated.
 */
#ifndef PASSION_CORE_CTX_H
#define PASSION_CORE_CTX_H

#include "passion.h"
#include "core_base.h"
#include "core_options.h"

#define CORE_DETAIL_MAX 512

/* Opaque slots for state hung on a context: the driver's own state (the
   fault driver's call counter), the collective layer's, the asynchronous
   engine's, the exchange subsystem's, the planner's, ocad's (the learned
   request cost) (no upward calls: passion_finalize only runs the
   destructor the owner registered, highest slot first, so the engine is
   drained before any driver state goes). */
enum { CORE_EXT_DRV = 0, CORE_EXT_COLL = 1, CORE_EXT_ENGINE = 2,
       CORE_EXT_XCHG = 3, CORE_EXT_PLAN = 4, CORE_EXT_OCAD = 5,
       CORE_EXT_MAX = 6 };

/* Slot `slot` of ctx: its state, or, the first time, `size` zeroed bytes
   (core_calloc, so counted as the context's) passed to init (may be NULL)
   and hung on the slot with the destructor fr. NULL when the allocation
   fails (nothing hung). One owner per slot: the owner's getter calls this
   with the same size, init and fr every time. */
CORE_HIDDEN void *core_ext_get(passion_ctx *ctx, int slot, size_t size,
                               void (*init)(void *state),
                               void (*fr)(passion_ctx *ctx, void *state));

/* the host of a rank: see core_host_kept (core_net.h) */
typedef struct core_host {
    int leader;
} core_host;

struct passion_ctx {
    MPI_Comm comm;
    int rank, size;
    core_options opt;
    passion_counters cnt;
    /* long reads (longer than CORE_STREAM_MIN, io_rw) since
       passion_init: their bytes and seconds, outside the counters (a
       reset does not touch them); the cost model learns the file's
       streaming bandwidth from them (collective/etp_stream.c). The
       core's own: its I/O path (io.c) measures them */
    uint64_t stream_bytes;
    double stream_t;
#ifdef PASSION_TEST_HOOKS
    /* messages between nodes charged by the simulated network but not in
       cnt (agreements: the exchange's headers); for the tests */
    uint64_t net_uncounted_inter;
#endif
    int64_t staging_now;
    struct core_stage_pool *stage; /* staging blocks kept between calls */
    struct core_tmp_pool *tmp;     /* small temporary arrays kept too */
    char detail[CORE_DETAIL_MAX];
#ifdef PASSION_TEST_HOOKS
    int64_t fault_allocs; /* allocations counted since the fault was armed */
#endif
    /* state owned by upper layers (prefetch engine...), freed by
       passion_finalize through the destructor they registered */
    void *ext[CORE_EXT_MAX];
    void (*ext_free[CORE_EXT_MAX])(passion_ctx *ctx, void *p);
    /* children alive (lifetimes: passion_finalize refuses while > 0) */
    int64_t live_arrays, live_files;
    /* the thread contract (core_call_begin): the thread running a public
       call on this context (a per-thread token; NULL when none runs),
       accessed atomically, and how deep that thread's calls are nested */
    void *busy_owner;
    int busy_depth;
    /* nodes (passion/net.c, set by passion_init, the same on every rank
       of a node): real nodes from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED),
       or virtual nodes of virtual_node_ranks consecutive ranks. Nodes are
       numbered in the order of their lowest rank; the node leader is the
       node's lowest rank (node_rank 0). */
    int node_id;           /* 0..nnodes-1, node of this rank */
    int nnodes;            /* number of (virtual) nodes */
    int node_rank;         /* rank within the node, 0 = node leader */
    int node_size;         /* ranks on this node */
    MPI_Comm node_comm;    /* ranks of this node (rank order kept) */
    MPI_Comm leader_comm;  /* node leaders only (rank = node_id), else
                              MPI_COMM_NULL */
    int *node_of;          /* size entries: node_id of every rank */
    /* this context's ranks on this host (shared memory) per processor
       their affinity masks cover together, at least 1 (core_host_count):
       above 1 the ranks take turns on the processors, and a rank's
       CPU-bound work (system calls, copies) takes that many times its
       time */
    double cpu_share;
    /* the host as passion_init found it (to keep on the user's
       communicator; leader -1: not found) */
    core_host host;
    /* the simulated network's interface of this node (net_sim.c): the time
       (CLOCK_MONOTONIC ns) until which it is busy, in memory the node's
       ranks share (a window on node_comm), NULL when the network is off
       or the node's ranks share no memory (then each rank is charged as
       if it had an interface of its own) */
#ifdef PASSION_TEST_HOOKS
    int64_t *net_busy;
    MPI_Win net_win;
#endif
    int *node_first;       /* nnodes + 1 entries when the nodes are runs of
                              consecutive ranks (always for virtual
                              nodes): node n holds ranks node_first[n] ..
                              node_first[n+1]-1; NULL otherwise */
};

#endif
