/*
 * core.h - internals of the passion/ folder (prefix core_): the context,
 * errors, counters, staging-memory accounting and the I/O driver ops table.
 *
 * Invariants: every function returns 0 or a negative PASSION_E* code and,
 * on failure, has written the context's detail string through core_err();
 * counters only ever grow between resets; staging bytes in use never go
 * negative and peak_staging is their maximum.
 */
#ifndef PASSION_CORE_H
#define PASSION_CORE_H

#include "passion.h"
#include <stdarg.h>
#include <sys/uio.h>
#include <stdbool.h>
#include <stdio.h>

#include "chaos.h"

#define CORE_HIDDEN __attribute__((visibility("hidden")))
#define CORE_CB_RANKS_MAX 256 /* bytes of the option cb_ranks, NUL included */
#define CORE_PATH_MAX 1024    /* bytes of a file name option, NUL included */
#define CORE_DETAIL_MAX 512

/* Opaque slots for state hung on a context: the driver's own state (the
   fault driver's call counter), the collective layer's, the asynchronous
   engine's, the exchange subsystem's (no upward calls: passion_finalize
   only runs the destructor the owner registered, highest slot first, so
   the engine is drained before any driver state goes). */
enum { CORE_EXT_DRV = 0, CORE_EXT_COLL = 1, CORE_EXT_ENGINE = 2,
       CORE_EXT_XCHG = 3, CORE_EXT_PLAN = 4,
       CORE_EXT_MAX = 5 };

/*
 * The options of a context (passion/options.c holds the key table that
 * maps each public key to a field; public keys are the field names).
 * New options: a field here and a row in that table.
 */
typedef struct core_options {
    int64_t memory_budget;  /* bytes for any staging buffer; default 64 MiB */
    passion_driver driver;  /* default posix */
    int direct_io;          /* 1: O_DIRECT with the posix driver */
    int verbosity;          /* 0 quiet, 1 progress, 2 debug on stderr */
    passion_xchg exchange;  /* default auto */
    int radix;              /* index radix; 0 = chosen by the model */
    passion_engine engine;  /* prefetch engine; default auto */
    /* cost model (0 = calibrate or use the built-in value) */
    double io_latency;      /* seconds per file request */
    double io_bandwidth;    /* bytes per second of the file */
    int io_concurrency;     /* reads kept in flight at once by batched
                               independent reads (io_uring); 0 = default 8,
                               1 = one request at a time */
    double msg_alpha;       /* seconds per message start-up */
    double msg_beta;        /* seconds per message byte */
    double wait_spin;       /* seconds a wait polls before it yields the
                               CPU between polls; 0 = chosen at
                               passion_init (core_wait_policy) */
    int netcdf_format;      /* netCDF classic files passion creates:
                               0 CDF-5 (default), 1 CDF-2, 2 CDF-1 */
    int planner;            /* 0 estimate, 1 measure (default):
                               collective/planner/planner.h */
    char wisdom[CORE_PATH_MAX]; /* the planner's wisdom file ("" none) */
    /* nodes (passion/net.c) */
    int virtual_node_ranks; /* > 0: virtual nodes of this many consecutive
                               ranks instead of the shared-memory split
                               (env PASSION_VIRTUAL_NODE_RANKS wins) */
    double sim_net_latency_us; /* simulated network (tests, benchmarks):
                                  microseconds a message between nodes
                                  costs its sender; 0 none */
    double sim_net_byte_ns;    /* and nanoseconds per byte of it */
    /* aggregators of the extended two-phase method (collective/
       etp_domain.c: coll_aggregators); the first set of cb_ranks,
       cb_per_node, cb_nodes wins; none: all ranks on one node, one per
       node otherwise */
    int cb_nodes;           /* > 0: this many aggregators, spread over the
                               nodes (node rank 0 of each node first) */
    int cb_per_node;        /* > 0: the first this many ranks of each node */
    char cb_ranks[CORE_CB_RANKS_MAX]; /* "r:r:...": these ranks ("" none) */
    int64_t stripe_size;    /* file domains aligned to it (bytes); 0 = the
                               file system's (Lustre stripe size, else
                               st_blksize) */
    /* fault driver (tests only) */
    int64_t fault_fail_at;  /* fail the Nth I/O call (1-based), 0 never */
    int fault_errno;        /* errno of the failure; default EIO */
    int fault_short;        /* 1: every call transfers at most half */
    int fault_ranks;        /* -1 every rank, else only this rank */
    int64_t fault_alloc_at; /* fail the Nth allocation (alloc.c), once */
} core_options;

/* The public handle: the options and the last setter's error. */
struct passion_options {
    core_options o;
    char detail[256];
};

/* Fill o with the defaults. */
CORE_HIDDEN void core_options_default(core_options *o);
/* Apply a "k=v,k=v" list to o, all or nothing; the reason in detail. */
CORE_HIDDEN int core_options_parse(core_options *o, const char *list,
                                   char *detail, size_t dlen);
/* Key's value as text into buf (PASSION_ERANGE if it does not fit). */
CORE_HIDDEN int core_options_get(const core_options *o, const char *key,
                                 char *buf, size_t len, char *detail,
                                 size_t dlen);

/* the host of a rank: see core_host_kept (nodes, below) */
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
       streaming bandwidth from them (collective/etp_plan.c) */
    uint64_t stream_bytes;
    double stream_t;
    /* messages between nodes charged by the simulated network but not in
       cnt (agreements: the exchange's headers); for the tests */
    uint64_t net_uncounted_inter;
    int64_t staging_now;
    struct core_stage_pool *stage; /* staging blocks kept between calls */
    struct core_tmp_pool *tmp;     /* small temporary arrays kept too */
    char detail[CORE_DETAIL_MAX];
    int64_t fault_allocs; /* allocations counted since the fault was armed */
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
    /* the simulated network's interface of this node (net.c): the time
       (CLOCK_MONOTONIC ns) until which it is busy, in memory the node's
       ranks share (a window on node_comm), NULL when the network is off
       or the node's ranks share no memory (then each rank is charged as
       if it had an interface of its own) */
    int64_t *net_busy;
    MPI_Win net_win;
    int *node_first;       /* nnodes + 1 entries when the nodes are runs of
                              consecutive ranks (always for virtual
                              nodes): node n holds ranks node_first[n] ..
                              node_first[n+1]-1; NULL otherwise */
    /* the last section access (passion_ctx_last_method): the method used,
       auto resolved (0 = none), and the collective model's prediction */
    int last_method;
    double last_predicted;
    /* the learned cost of a read request on cached data (ocad/sieve.c,
       ocad_req_learn): the last samples, a ring */
    double req_warm[8];
    int req_warm_n, req_warm_i;
    double req_warm_med; /* their median, kept as they are learned */
};

/* ---- errors ---- */

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
/*
 * The agreement (agree.c), used by every collective call: every rank
 * passes its local code; all get the code of the lowest-numbered failing
 * rank, and that rank's detail string; no rank is left waiting. If the
 * agreement's own MPI calls fail, PASSION_EMPI. Collective; returns the
 * common code.
 */
CORE_HIDDEN int core_agree(passion_ctx *ctx, int rc);
/* Check that every rank passed the same bytes (hash compare) and agree on
   rc as core_agree does, in one reduction; PASSION_EMISMATCH if the bytes
   differ. Collective. */
CORE_HIDDEN int core_same(passion_ctx *ctx, int rc, const void *p, size_t n,
                          const char *what);
/* core_same, and in the same reduction *all (0 or 1 on entry) becomes 1
   iff it was 1 on every rank (only on success). Collective. */
CORE_HIDDEN int core_same_all(passion_ctx *ctx, int rc, const void *p,
                              size_t n, const char *what, int *all);
/*
 * The outcome of a call that writes, as core_agree; wrote: this rank
 * wrote bytes to a file in the call. Where some rank failed after some
 * rank wrote (a file is then partly written), the detail names them:
 * "ranks 0,2 wrote their data; rank 1 failed: <rank 1's detail>" (more
 * failing ranks: "ranks 1,3 failed, rank 1: ..."); else it is the
 * failing rank's own. Collective.
 */
CORE_HIDDEN int core_agree_wrote(passion_ctx *ctx, int rc, int wrote);
/* Agree on rc as core_agree does and, in the same reduction, replace the n
   (<= 8) values of v by their maxima over the ranks (only on success).
   Collective. */
CORE_HIDDEN int core_agree_max(passion_ctx *ctx, int rc, double *v, int n);
/*
 * The waits of the library (core_wait, core_waitall, core_idle): poll MPI
 * for the spin time, then yield the CPU between polls. The spin time is
 * process-wide (MPI's waits know no context), set by every passion_init
 * (core_wait_policy): the option wait_spin, else, when the context's
 * ranks on this node do not outnumber the processors their affinity masks
 * cover together (ctx->cpu_share, core_host_count), CORE_SPIN_LONG (a
 * yield on a loaded machine gives the core away for a scheduler tick or
 * more: milliseconds, where the peer's answer takes microseconds), else
 * CORE_SPIN_SHORT (an oversubscribed node: the spinning rank would hold
 * the core its peer needs). Past the spin time a wait yields
 * (sched_yield) between polls, except on an oversubscribed node, where
 * it sleeps CORE_WAIT_PAUSE (core_wait_pause): a rank that
 * yields stays runnable, and the kernel's scheduler (CFS) lets the rank
 * running on its core, often one spinning in MPI's own busy-polling
 * waits, keep it until the next scheduler tick (4 ms here), even after
 * the data the yielding rank waits for has come; a rank that sleeps is
 * woken by its timer, and a waking rank preempts one that has run longer.
 * Measured (P = 4 on the 2 cores, 2 virtual nodes of the slow simulated
 * network, bench nodes --quick, 32-48 repetitions, means): thesis case
 * 6.5-II's collective read (one round: the ranks read before the FAD)
 * took 5.7-6.4 ms yielding (2 runs), 0.8-1.4 ms sleeping 50 us (3
 * runs), 1.5 ms sleeping 10 us, 1.3 ms 200 us; 6.1-III's direct reads
 * 6.0-6.5 ms against 1.6-2.6 ms (50 us); a two-phase read of 6.5-II
 * over A1, all ranks aggregating, 4.4-4.6 ms against 3.4-3.8 ms.
 */
#define CORE_SPIN_LONG 2e-3
#define CORE_SPIN_SHORT 20e-6
#define CORE_WAIT_PAUSE 50e-6
/* core_waitall reads the clock once every this many polls while it
   spins, never once it yields */
#define CORE_POLLS_PER_CLOCK 16
/* Polls (MPI_Testall calls) and clock reads of core_waitall so far in
   this process (tests). */
CORE_HIDDEN void core_wait_counts(long long *polls, long long *reads);
/* Local (passion_init): choose and set the spin time and the pause from
   ctx->cpu_share (core_host_count, called before); the spin's seconds. */
CORE_HIDDEN double core_wait_policy(passion_ctx *ctx);
/* The process's spin time now (seconds). */
CORE_HIDDEN double core_wait_spin(void);
/* the sleep between polls after the spin time (0: a yield) */
CORE_HIDDEN double core_wait_pause(void);
/* Wait for one request / all n requests. PASSION_EMPI if MPI reports an
   error. */
CORE_HIDDEN int core_wait(MPI_Request *req);
CORE_HIDDEN int core_waitall(int n, MPI_Request *req);
/* Between two unsuccessful polls of a wait that started at time t0: yield
   once the spin time is over. */
CORE_HIDDEN void core_idle(double t0);

/* ---- nodes and the simulated network (net.c) ----
 *
 * Every point-to-point message of the exchange subsystem (and so of the
 * extended two-phase method, whose data goes through it) is sent through
 * core_net_isend, or charged with core_net_charge just before MPI sends
 * it in a collective (the `mpi` algorithm), as is the token that orders
 * independent writes (uncounted): it is counted within / between
 * nodes (CORE_NET_COUNTED) and, when its receiver is on another node and
 * the simulated network is on (options sim_net_latency_us,
 * sim_net_byte_ns), the sender waits latency + bytes * byte_ns first,
 * after the messages its node's other ranks sent before it: one network
 * interface per node, shared by its ranks (net.c). A simulation for
 * tests and benchmarks: MPI's own collectives (the error agreement's
 * allreduce, the FAD's allgather) are not charged.
 */
enum { CORE_NET_COUNTED = 1 };
/*
 * What the split by shared memory (the host) tells a rank of a user's
 * communicator: its host leader, the lowest rank of comm on its host.
 * passion_init finds it with MPI_Comm_split_type, the dearest call it
 * makes (MPICH 4.0, 3 ranks on 2 cores: 90 ms, against 30 for an
 * MPI_Comm_split and 12 for an allreduce), and keeps it as an attribute
 * of the user's communicator (net.c), so that later contexts on the same
 * communicator split by the leader instead, when every rank has it
 * (agreed in the first reduction of passion_init: no rank calls another
 * collective than the others). The hosts do not change while the job
 * runs; what may, the ranks' affinity masks, is asked again by every
 * passion_init (core_host_count).
 */
/* This rank's kept host of comm: 1 and *h if kept, else 0. Local. */
CORE_HIDDEN int core_host_kept(MPI_Comm comm, core_host *h);
/* Keep *h on comm (replacing any; a failure keeps nothing). Local. */
CORE_HIDDEN void core_host_keep(MPI_Comm comm, const core_host *h);
/* The attribute key (tests: to forget the host on one rank). */
CORE_HIDDEN int core_host_keyval(void);
/* The lowest rank of comm among the ranks of node (a subset of comm); -1
   if the MPI group calls fail. Local. */
CORE_HIDDEN int core_host_leader(MPI_Comm node, MPI_Comm comm);
/* Collective over ctx->comm (passion_init): the context's ranks on this
   host (the split by shared memory: the nodes without virtual nodes, else
   one made here, by the kept leader when known), and ctx->cpu_share from
   the processors their affinity masks cover together. */
CORE_HIDDEN int core_host_count(passion_ctx *ctx, const core_host *known);
/* Collective over ctx->comm (passion_init): the node fields of ctx from
   the options (virtual_node_ranks, PASSION_VIRTUAL_NODE_RANKS); local
   code (the caller agrees; on failure the fields are cleared and freed
   by core_nodes_free). */
CORE_HIDDEN int core_nodes_init(passion_ctx *ctx, const core_host *known);
CORE_HIDDEN void core_nodes_free(passion_ctx *ctx);
/* The virtual node size asked for: the environment variable
   PASSION_VIRTUAL_NODE_RANKS if set (else the option); -1 and the reason
   in detail (dlen bytes) if the variable is not an integer >= 0. */
CORE_HIDDEN int core_nodes_wanted(const core_options *o, char *detail,
                                  size_t dlen);
/* Node of rank r of ctx->comm (ranks of the layers' duplicates are the
   same). */
static inline int core_node_of(const passion_ctx *ctx, int r)
{
    return ctx->node_of ? ctx->node_of[r] : 0;
}
/* One message of `bytes` to rank peer: count it (flags CORE_NET_COUNTED:
   messages/bytes_intra_node or _inter_node) and wait the simulated cost
   when peer is on another node. Sender side, before the send. */
CORE_HIDDEN void core_net_charge(passion_ctx *ctx, int peer, int64_t bytes,
                                 int flags);
/* MPI_Isend of count items of type to rank peer of comm (a duplicate of
   ctx->comm), after core_net_charge of its bytes. 0 or PASSION_EMPI. */
CORE_HIDDEN int core_net_isend(passion_ctx *ctx, const void *buf, int count,
                               MPI_Datatype type, int peer, int tag,
                               MPI_Comm comm, int flags, MPI_Request *req);
/* Seconds the simulated network charges for `bytes` between nodes (0
   when it is off). */
CORE_HIDDEN double core_net_cost(const passion_ctx *ctx, int64_t bytes);

/* ---- memory: every allocation of the library goes through these ----
 *
 * They are malloc/calloc/realloc/free, except that the fault option
 * fault_alloc_at = N makes the Nth allocation counted since the fault was
 * armed (at passion_init, where the context's own allocation is the first,
 * or by core_fault_arm) fail once, on the ranks fault_ranks selects. ctx
 * may be NULL (no injection). core_alloc_fault() is the same check for
 * allocations made some other way (posix_memalign, mmap): 1 = fail now.
 */
CORE_HIDDEN void *core_malloc(passion_ctx *ctx, size_t n);
CORE_HIDDEN void *core_calloc(passion_ctx *ctx, size_t n, size_t size);
CORE_HIDDEN void *core_realloc(passion_ctx *ctx, void *p, size_t n);
CORE_HIDDEN void core_free(passion_ctx *ctx, void *p);
CORE_HIDDEN char *core_strdup(passion_ctx *ctx, const char *s);
CORE_HIDDEN int core_alloc_fault(passion_ctx *ctx);
/* A call's small temporary array (request lists, batch tables: not
   staging), from a per-context cache of freed ones (alloc.c); counted = 1
   makes it an allocation fault_alloc_at counts (as core_malloc). Freed
   with core_tmp_free on the same context (any thread); the cache goes at
   finalize (core_tmp_release). ctx may be NULL (plain malloc/free). */
CORE_HIDDEN void *core_tmp_alloc(passion_ctx *ctx, size_t n, int counted);
CORE_HIDDEN void core_tmp_free(passion_ctx *ctx, void *p);
CORE_HIDDEN void core_tmp_release(passion_ctx *ctx);
/* Tests: arm the fault options now (counters restart at 0): fail the
   alloc_at-th allocation and the io_at-th I/O request (0 = never) on the
   ranks `ranks` selects (-1 all). */
CORE_HIDDEN void core_fault_arm(passion_ctx *ctx, int64_t alloc_at,
                                int64_t io_at, int ranks);
/* Whether this rank is one fault_ranks selects. */
CORE_HIDDEN int core_fault_rank(const passion_ctx *ctx);

/* ---- 64-bit arithmetic with overflow check ---- */

static inline bool core_mul(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}
static inline bool core_add(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_add_overflow(a, b, r);
}

/* 1 if the n bytes at p are all zero (reserved fields of public structs). */
static inline bool core_zero(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return false;
    return true;
}

/* ---- staging memory (counted against the budget) ---- */

CORE_HIDDEN void *core_stage_alloc(passion_ctx *ctx, int64_t bytes);
CORE_HIDDEN void core_stage_free(passion_ctx *ctx, void *p, int64_t bytes);
/* Free the blocks the context keeps for reuse (at finalize). */
CORE_HIDDEN void core_stage_release(passion_ctx *ctx);
/* Edge pages of shifted O_DIRECT reads (core_shift): n contiguous aligned
   pages of the context's small fixed pool (CORE_EDGE_PAGES, made on first
   use, beside the budget like the io_uring ring's own memory), or NULL
   when the pool has no n free in a row. Any thread. */
#define CORE_EDGE_PAGES 16
CORE_HIDDEN char *core_stage_edge_get(passion_ctx *ctx, int n);
CORE_HIDDEN void core_stage_edge_put(passion_ctx *ctx, char *p, int n);

/* ---- time ---- */
CORE_HIDDEN double core_now(void);

/* ---- I/O drivers ---- */

typedef struct core_fh core_fh;

/* One read of a batch: len bytes at off into buf; res is what the driver
   moved (maybe short) or -errno. */
typedef struct core_iov {
    void *buf;
    int64_t len;
    int64_t off;
    int64_t res;
} core_iov;

/* CORE_O_EXCL, with CORE_O_CREATE: fail (EEXIST) if the file exists */
enum { CORE_O_RDONLY = 0, CORE_O_RDWR = 1, CORE_O_CREATE = 2,
       CORE_O_TRUNC = 4, CORE_O_EXCL = 8 };

/* Advice about a file range (a hint: the driver may ignore it). */
enum { CORE_ADV_WILLNEED = 1, CORE_ADV_DONTNEED = 2, CORE_ADV_RANDOM = 3 };

/* O_DIRECT alignment of buffer, offset, length */
#define CORE_ALIGN 4096
#define CORE_BOUNCE (4 << 20)   /* bytes per bounced O_DIRECT request */
#define CORE_BOUNCE_MIN (256 << 10) /* smaller bounces are not worth it */
#define CORE_MAXREQ (1LL << 30) /* bytes per driver request */
/* A buffered read longer than CORE_STREAM_MIN is a stream: the posix
   driver reads it as consecutive CORE_STREAM_PIECE reads, one after
   another (drv_posix.c), and io_batch keeps it out of the ring. */
#define CORE_STREAM_PIECE (1 << 20)
#define CORE_STREAM_MIN (2 << 20)
/* The calibration's bandwidth stream (drv_posix.c measure_fd): at most
   this many bytes, three quarters of the extent measured. One rank streaming 8 MiB
   read 2.1 GB/s after its first piece on this VM, 32 MiB 2.5-2.9 GB/s
   (the readahead's ramp), two ranks' 32 MiB together 2.8-3.3 GB/s. */
#define CORE_MEASURE_STREAM (32 << 20)
#define CORE_QDEPTH 64          /* ops in flight in the io_uring ring */

/*
 * The ops table of a driver. Every descriptor, system call and io_uring
 * submission stays behind it (ROMIO's ADIO rule): layers above see a
 * core_fh and call the core_io_* functions below.
 */
typedef struct core_driver_ops {
    const char *name;
    int (*open)(passion_ctx *ctx, const char *path, int flags, int direct,
                core_fh **fh);
    /* One request; returns bytes moved (maybe short, 0 = EOF) or -errno.
       On a handle with align > 1, reads come aligned (core_io_once
       bounces them) unless the memory budget left no room for a bounce;
       writes may come unaligned. */
    int64_t (*pread)(core_fh *fh, void *buf, int64_t len, int64_t off);
    int64_t (*pwrite)(core_fh *fh, const void *buf, int64_t len,
                      int64_t off);
    /* Optional: one read of n segments, all aligned on an aligned handle
       (a shifted O_DIRECT read, core_io_shift_read); bytes or -errno.
       NULL: the segments are read one pread each. */
    int64_t (*preadv)(core_fh *fh, const struct iovec *iov, int n,
                      int64_t off);
    int (*size)(core_fh *fh, int64_t *bytes);     /* -errno on failure */
    int (*resize)(core_fh *fh, int64_t bytes);    /* ftruncate */
    int (*sync)(core_fh *fh);
    int (*drop_cache)(core_fh *fh);
    int (*close)(core_fh *fh);
    /*
     * Optional, for the engine's io_uring only (passion/eng_uring.c): the
     * descriptor on which the kernel may run this (already aligned)
     * request, and whether it goes through the page cache; -1 when the
     * request must go through pread/pwrite (then it runs on the worker
     * thread). NULL: every asynchronous request runs on the worker.
     */
    int (*ring_fd)(core_fh *fh, int write, const void *buf, int64_t len,
                   int64_t off, int *buffered);
    /* Optional: per mille of [lo, hi) in the page cache, or -1 unknown. */
    int (*cached)(core_fh *fh, int64_t lo, int64_t hi);
    /* Optional: pass a hint on; 1 given, 0 not (never an error). */
    int (*advise)(core_fh *fh, int64_t off, int64_t len, int advice);
    /* Optional: bytes the kernel reads ahead of a sequential buffered
       reader of this file (its device's read_ahead_kb), 0 unknown. */
    int64_t (*readahead)(core_fh *fh);
    /* Optional: time uncached reads of [lo, hi) (calibration, outside the
       counters) with buf of big bytes; leaves *lat / *bw untouched when it
       cannot measure; bw NULL: no stream, the latency alone; *bw_len: in,
       the most bytes to stream (0: the driver's rule), out, the bytes the
       bandwidth reading timed (0: none). */
    void (*measure)(core_fh *fh, int64_t lo, int64_t hi, char *buf,
                    int64_t big, double *lat, double *bw, int64_t *bw_len);
    /* Optional: the file system's stripe (or block) size of the file in
       bytes, > 0, or 0 unknown (then core_io_stripe stats the path). */
    int64_t (*stripe)(core_fh *fh);
    /* The driver calls MPI: running it on the worker thread needs
       MPI_THREAD_MULTIPLE. */
    int needs_mpi_thread;
    /* Path operations, for publishing a created file atomically (a
       temporary renamed into place): rename from -> to in one step
       (noreplace: fail with -EEXIST if to exists); remove a file; make
       the directory entry of path durable (fsync of its directory).
       -errno on failure; -ENOTSUP where the driver cannot. */
    int (*rename)(passion_ctx *ctx, const char *from, const char *to,
                  int noreplace);
    int (*unlink)(passion_ctx *ctx, const char *path);
    int (*sync_dir)(passion_ctx *ctx, const char *path);
} core_driver_ops;

/* The part every driver's handle starts with. */
struct core_fh {
    const core_driver_ops *ops;
    passion_ctx *ctx;
    char *path;
    int align; /* > 1: O_DIRECT, reads must be aligned to it */
    int64_t stripe; /* core_io_stripe's answer, asked once (0: not yet):
                       a file's layout does not change while it is open,
                       and the stat cost a system call per collective
                       call */
};

CORE_HIDDEN const core_driver_ops *core_driver_get(int id);
/* The posix path operations (drv_posix.c), shared by drivers whose files
   live on a posix file system (mpiio, fault). */
CORE_HIDDEN int core_posix_rename(passion_ctx *ctx, const char *from,
                                  const char *to, int noreplace);
CORE_HIDDEN int core_posix_unlink(passion_ctx *ctx, const char *path);
CORE_HIDDEN int core_posix_sync_dir(passion_ctx *ctx, const char *path);
/* Small whole files (the planner's wisdom): read one (-ENOENT: none,
   -EFBIG: over max bytes), replace one atomically. */
CORE_HIDDEN int core_posix_slurp(const char *path, size_t max, char **buf,
                                 size_t *len);
CORE_HIDDEN int core_posix_replace(const char *path, const char *buf,
                                   size_t len);
extern CORE_HIDDEN const core_driver_ops core_drv_posix;
extern CORE_HIDDEN const core_driver_ops core_drv_mpiio;
extern CORE_HIDDEN const core_driver_ops core_drv_fault;

/* Posix helpers shared by the drivers (drv_posix.c). */
/* The page-cache probe: per mille of [lo, hi)'s pages cached; every page
   counted up to CORE_PROBE_EXACT pages (64 MiB), windows spread over
   larger extents. */
#define CORE_PROBE_EXACT 16384
CORE_HIDDEN int core_posix_cached(int fd, int64_t lo, int64_t hi);
CORE_HIDDEN int core_posix_advise(int fd, int64_t off, int64_t len,
                                  int advice);
/* Fault driver (tests): count requests from 0 again. */
CORE_HIDDEN void core_fault_rearm(passion_ctx *ctx);
/* Requests the fault driver has counted since it was (re)armed (tests). */
CORE_HIDDEN int64_t core_fault_calls(passion_ctx *ctx);

/* Open with the context's driver; errors recorded with the path. */
CORE_HIDDEN int core_io_open(passion_ctx *ctx, const char *path, int flags,
                             core_fh **fh);
CORE_HIDDEN int core_io_close(core_fh *fh);
/*
 * Read/write exactly len bytes at off, looping on short counts and EINTR;
 * counts one io_call per driver request. A read that meets end of file
 * returns PASSION_ESHORT. Errors carry the path and offset. Safe on a
 * helper thread as long as the calling thread does no I/O on the context
 * meanwhile (counters are plain fields).
 */
CORE_HIDDEN int core_io_read(core_fh *fh, void *buf, int64_t len, int64_t off);
CORE_HIDDEN int core_io_write(core_fh *fh, const void *buf, int64_t len,
                              int64_t off);
/*
 * One driver request with the O_DIRECT alignment applied (the one place
 * that does it): an unaligned read on an aligned handle goes through an
 * aligned bounce buffer covering it (at most CORE_BOUNCE bytes: a short
 * count), taken from the staging memory within the budget (so reused, not
 * faulted per call); when the budget has not one aligned unit left, the
 * read goes to the driver unaligned (posix: its buffered descriptor).
 * Unaligned writes are the driver's (posix: its buffered descriptor).
 * Bytes moved or -errno; touches no counter but staging. Calling thread
 * only (core_io_once_via is the one for the worker).
 */
/* (io_req.c) A failed request as a code and a detail: e a positive errno
   or CORE_EOF; how prefixes the verb ("asynchronous "). */
CORE_HIDDEN int core_io_fail(core_fh *fh, const char *how, int write,
                             int64_t off, int64_t len, int e);
CORE_HIDDEN int64_t core_io_once(core_fh *fh, int write, void *buf,
                                 int64_t len, int64_t off);
/* The same through a given bounce (bsize bytes, aligned; NULL: none, the
   read goes unaligned to the driver); touches no counter, so the worker
   thread may call it. */
CORE_HIDDEN int64_t core_io_once_via(core_fh *fh, int write, void *buf,
                                     int64_t len, int64_t off, char *bounce,
                                     int64_t bsize);
/* A bounce buffer of want bytes (a multiple of the alignment), or fewer:
   what the memory budget leaves, rounded down to the alignment (*got);
   NULL when that is less than one aligned unit. Staging memory: counted,
   kept in the context's cache after core_stage_free(ctx, b, *got).
   Calling thread only. */
CORE_HIDDEN char *core_io_bounce_get(core_fh *fh, int64_t want,
                                     int64_t *got);
/*
 * A shifted read: an unaligned O_DIRECT read whose aligned span has no
 * bounce in the budget is read anyway with O_DIRECT, in one request of
 * aligned segments (readv): the span's middle pages into the caller's own
 * buffer at its first aligned address (land, mid bytes), its first ehead
 * bytes and its tail into `edge`, a page or three (of the context's edge
 * pool, else of staging); then moved
 * into place (a memmove of the middle, the edges copied). Without it such
 * a read went through the buffered descriptor, on a kernel worker for the
 * ring (a prefetching sweep of memory-limited slabs hid only a
 * quarter of its I/O).
 */
typedef struct core_shift {
    int64_t a0, alen;    /* the aligned span */
    char *land;          /* aligned, inside the caller's buffer */
    int64_t mid;         /* span bytes [a0 + ehead, + mid) land there */
    char *edge;          /* span bytes [a0, a0 + ehead) and the rest */
    int64_t elen, ehead; /* after the middle; elen bytes in all */
    int pooled;          /* edge from the pool, else staging */
} core_shift;
/* Plan a shifted read of (buf, len, off) on fh, taking its edge pages from
   the context's pool (core_stage_edge_get) or else from what the budget
   leaves: 1 planned, 0 not possible (aligned request, no aligned page
   inside buf, or no room for the edge). Calling thread only. */
CORE_HIDDEN int core_io_shift_plan(core_fh *fh, char *buf, int64_t len,
                                   int64_t off, core_shift *s);
/* The segments of the span from byte `done` of it on (at most 3). */
CORE_HIDDEN int core_io_shift_iov(const core_shift *s, int64_t done,
                                  struct iovec *iov);
/* Read the span (got bytes of it already) to its end or the end of the
   file; the span bytes read in all, or -errno on a failed request.
   *calls counts the driver requests. Any thread. */
CORE_HIDDEN int64_t core_io_shift_read(core_fh *fh, const core_shift *s,
                                       int64_t got, int64_t *calls);
/* got bytes of the span are in: move the wanted ones into buf; returns
   how many of the len wanted bytes, from the first, are in place. Any
   thread. */
CORE_HIDDEN int64_t core_io_shift_done(const core_shift *s, char *buf,
                                       int64_t len, int64_t off,
                                       int64_t got);
/* Return the edge pages (calling thread). */
CORE_HIDDEN void core_io_shift_free(core_fh *fh, core_shift *s);
/* Does a read of (buf, len, off) on fh need the bounce? If so, the
   aligned span to read instead is [*a0, *a0 + *alen), alen <= limit. */
CORE_HIDDEN int core_io_bounce_span(const core_fh *fh, const void *buf,
                                    int64_t len, int64_t off, int64_t limit,
                                    int64_t *a0, int64_t *alen);
/*
 * Read n pieces, kept in flight together where the engine can (io_uring),
 * else one after the other; every piece is read exactly, as core_io_read.
 * Counts one io_call per piece (plus any call finishing a short piece).
 * Calling thread only (it drives the context's engine).
 */
CORE_HIDDEN int core_io_read_batch(core_fh *fh, core_iov *v, int n);
/*
 * The same for writes of n disjoint pieces (in flight together, so in no
 * particular order: the caller's pieces must not overlap), as
 * core_io_write each. On this VM (ext4, kernel 6.18) 100 cached writes of
 * 400 bytes took 130 us one pwrite at a time and 41 us in one io_uring
 * submit, once the ring had run a batch.
 */
CORE_HIDDEN int core_io_write_batch(core_fh *fh, core_iov *v, int n);
/* Reads the context's driver and engine keep in flight at once (1: no
   batching: a driver without io_uring, or the engine forced to thread). */
CORE_HIDDEN int core_io_concurrency(const passion_ctx *ctx);
CORE_HIDDEN int core_io_size(core_fh *fh, int64_t *bytes);
/* The size to align a file's domains to: Lustre's stripe size
   (LL_IOC_LOV_GETSTRIPE, when built with Lustre's header), else
   st_blksize, else 4096; never fails, 1..2^30. Asked of the driver once
   per open file (fh->stripe). */
CORE_HIDDEN int64_t core_io_stripe(core_fh *fh);
/* The same on a descriptor (drivers with one). */
CORE_HIDDEN int64_t core_posix_stripe(int fd);
CORE_HIDDEN int core_io_resize(core_fh *fh, int64_t bytes);
CORE_HIDDEN int core_io_sync(core_fh *fh);
CORE_HIDDEN int core_io_drop_cache(core_fh *fh);
/* Per mille of the file range [lo, hi) in the page cache, -1 unknown. */
CORE_HIDDEN int core_io_cached(core_fh *fh, int64_t lo, int64_t hi);

/* The median (the upper middle value) of v[0..n), 1 <= n <= 64, for the
 * costs learned from recent calls; v is left as it is. */
CORE_HIDDEN double core_median(const double *v, int n);
/* A cost learned from the n (1 <= n <= 64) most recent samples v of a
 * call's own measured time: their median once there are CORE_LEARN_TRUST
 * of them, the smallest before. A sample can only be too slow (a load
 * spike, a page fault, a one-time start: io_uring's ring, a first
 * allocation), never much too fast, so while a median would still be one
 * of the few first samples, the fastest is the safer figure. */
#define CORE_LEARN_TRUST 3
CORE_HIDDEN double core_learned(const double *v, int n);
/* Give the driver a hint about a range: 1 passed on, 0 not (O_DIRECT, a
   driver without hints); never an error. */
/* The driver's readahead (bytes ahead of a sequential buffered reader),
   0 when it does not know. */
CORE_HIDDEN int64_t core_io_readahead(core_fh *fh);
CORE_HIDDEN int core_io_advise(core_fh *fh, int64_t off, int64_t len,
                               int advice);
/*
 * Calibration reads: time, on uncached pages of [lo, hi), a stream (a
 * buffered file: up to 8 MiB read in pieces of up to 1 MiB, at most the
 * budget, with the kernel's readahead; O_DIRECT: one read of up to 1 MiB)
 * and up to 8 single-page reads; *lat = the least of these
 * (core_posix_latency), *bw = the stream's rate (drv_posix.c). bw NULL:
 * the latency alone (no stream).
 * Outside the counters; values left 0 when the driver cannot measure or
 * too little of the range is uncached.
 */
/* The latency of n (>= 3, else 0 is returned) single-page read times t
   (sorted here): the least. A read's time is the device's latency plus
   whatever the host added (a descheduled rank, another process's I/O):
   only the least is the device's. Their median gave 0.1-4 ms between runs
   of one case on this shared VM, and the model's choices
   followed it: in one memory-limited run of `bench/run patterns` (P=2,
   seed 20261123) auto read the block-cyclic tiles of c007 and c030 with a
   hole-limited sieve (c007: 1,696 requests, 15.8 MB, 0.076 s) where
   direct reads (5,088 requests, 64 in flight) took 0.047 s; with the
   least (0.25 and 0.28 ms in two runs) auto chose direct on c007, c019,
   c030 and c034 in both. */
CORE_HIDDEN double core_posix_latency(double *t, int n);
/* bw_len: in, the most bytes to stream (0: the driver's rule); out, the
   bytes the bandwidth reading timed (0: none); may be NULL */
CORE_HIDDEN void core_io_measure(core_fh *fh, int64_t lo, int64_t hi,
                                 double *lat, double *bw, int64_t *bw_len);

/*
 * Atomic creation (ocad/file.c): a file is created under the temporary
 * name core_io_temp_name(path) in the same directory, sized, written and
 * synced there, and core_io_publish renames it onto path (replacing any
 * old file in one step), syncs the directory and makes fh carry the new
 * path (errors recorded with the paths). core_io_discard removes an
 * unpublished temporary after a failure, best effort: it returns 0 or
 * -errno and leaves the context's detail alone.
 */
#define CORE_TEMP_SUFFIX ".passion-tmp"
/* "dir/.base.passion-tmp" for "dir/base" (malloc'ed, NULL if no memory). */
CORE_HIDDEN char *core_io_temp_name(const char *path);
CORE_HIDDEN int core_io_publish(core_fh *fh, const char *path, int noreplace);
CORE_HIDDEN int core_io_discard(passion_ctx *ctx, const char *temp);

/* ---- file formats: what a header says (ocad/format.c runs the readers on
   rank 0 and broadcasts this struct; plain bytes, no pointers) ---- */

typedef struct core_fmt_meta {
    int ndims;
    int64_t shape[PASSION_MAX_DIMS];
    passion_kind kind;
    int64_t elem_size;
    passion_endian endian;    /* LITTLE or BIG (a reader resolves NATIVE) */
    passion_storage storage;  /* ROW_MAJOR or COL_MAJOR */
    int64_t data_offset;      /* byte offset of element 0 */
    int64_t data_bytes;       /* product(shape) * elem_size */
} core_fmt_meta;

/*
 * HDF5 glue (fmt_hdf5.c, the only code that calls libhdf5; built with the
 * HDF5 option). Rank-local: the caller runs them on rank 0 and broadcasts.
 * core_h5_meta: the metadata of dataset dset of an existing file (a
 * contiguous dataset; anything else is refused with a message naming the
 * layout). core_h5_create: a new file at path holding dataset dset of m's
 * shape and type, contiguous, allocated; *data_offset where its data
 * starts. PASSION_ENOTSUP (with a message) when built without HDF5.
 */
CORE_HIDDEN int core_h5_meta(passion_ctx *ctx, const char *path,
                             const char *dset, core_fmt_meta *m);
CORE_HIDDEN int core_h5_create(passion_ctx *ctx, const char *path,
                               const char *dset, const core_fmt_meta *m,
                               int64_t *data_offset);
/* core_h5_list: the datasets of path (passion_array_list's rules; obj ""
   or "/" the whole file, a group the datasets below it, a dataset only
   itself): entries[0 .. min(max, *count) - 1], *count how many. */
CORE_HIDDEN int core_h5_list(passion_ctx *ctx, const char *path,
                             const char *obj, passion_array_entry *e,
                             int max, int *count);
/* 1 if built with HDF5. */
CORE_HIDDEN int core_h5_available(void);

/* ---- the asynchronous engine (engine.c, eng_uring.c, eng_thread.c) ---- */

typedef struct core_op core_op;
/* (io_req.c) The engine hands a completed op here, on the calling thread:
   counted, and its outcome made a code (op->rc). */
CORE_HIDDEN void core_io_op_done(core_op *op);

#define CORE_EOF (-1) /* op->err: end of file before len bytes */

/*
 * One asynchronous read or write of len bytes at off on a handle. The
 * caller fills write, buf, len, off, fn, arg (and may set noasync: keep a
 * buffered request inline in the submitting call instead of on a kernel
 * worker); the engine runs it to the end (short counts resubmitted), then,
 * on the calling thread inside core_aio_progress, the core counts it
 * (io_calls, bytes) and sets rc (0 or a PASSION_E* code with the detail
 * written), and calls fn. The op belongs to the engine from submit to fn.
 */
struct core_op {
    int write;
    int noasync;
    char *buf;
    int64_t len, off;
    void (*fn)(core_op *op);
    void *arg;
    /* results, valid in fn */
    int64_t done;   /* bytes moved */
    int rc;
    /* the engine's */
    core_fh *fh;
    int64_t calls;  /* driver requests / SQEs issued */
    int err;        /* 0, a positive errno, or CORE_EOF */
    int fd, buffered;   /* io_uring: descriptor, page cache */
    char *bounce;       /* unaligned O_DIRECT read: aligned staging
                           (io_uring: the whole span at b0; worker: a
                           piece at a time), counted in the budget */
    int64_t b0, blen;   /* its file offset (io_uring) and length */
    int shifted;        /* no bounce: a shifted read (core_shift), whose
                           span is b0, blen; done counts span bytes
                           while it is in flight */
    core_shift sh;
    struct iovec iov[3]; /* io_uring: its segments, kept until done */
    int where;          /* engine queue it went to */
    core_op *next;
};

/* The engine of the context, started on first use: PASSION_ENGINE_URING
   or _THREAD in *kind. */
CORE_HIDDEN int core_engine_kind(passion_ctx *ctx, int *kind);
/* The engine asked for by the option engine and PASSION_ENGINE (which
   wins); PASSION_EINVAL for a bad variable. Starts nothing. */
CORE_HIDDEN int core_engine_wanted(passion_ctx *ctx, int *kind);
/* Hand an op to the context's engine; 0, or a code (op not taken). */
CORE_HIDDEN int core_aio_submit(core_fh *fh, core_op *op);
/* Between plug and unplug, submitted ops are queued and go to the kernel
   together at unplug (one system call for a batch); calls nest. */
CORE_HIDDEN void core_aio_plug(passion_ctx *ctx);
CORE_HIDDEN void core_aio_unplug(passion_ctx *ctx);
/* Complete ops (count them, run their fn); block = wait for one when none
   is ready and some are in flight. Ops completed, or < 0. */
CORE_HIDDEN int core_aio_progress(passion_ctx *ctx, int block);
/* Ops in flight on the context. */
CORE_HIDDEN int64_t core_aio_inflight(passion_ctx *ctx);
/* Ops run synchronously at submit because their driver calls MPI and MPI
   does not provide MPI_THREAD_MULTIPLE (the fallback of engine.c). */
CORE_HIDDEN int64_t core_aio_ran_inline(const passion_ctx *ctx);
/* System calls the io_uring engine made to hand ops to the kernel
   (io_uring_enter for submission; 0 for the thread engine). */
CORE_HIDDEN int64_t core_aio_enters(const passion_ctx *ctx);
/*
 * Registered buffers (io_uring only): [base, base + len) is pinned once and
 * entered in the ring's buffer table, so that the engine's reads and writes
 * that lie inside it go to the kernel as READ_FIXED / WRITE_FIXED and the
 * kernel does not pin the caller's pages for every request (O_DIRECT: the
 * page pinning was half of the submitting system call's time).
 * Returns the slot (>= 0), or -1 when the buffer stays unregistered (thread
 * engine, table full, over 1 GiB, RLIMIT_MEMLOCK, an old kernel): nothing
 * changes for its requests then, so callers need not check. Unregister
 * only when none of its requests is in flight, before freeing it.
 */
CORE_HIDDEN int core_aio_register(passion_ctx *ctx, char *base, int64_t len);
CORE_HIDDEN void core_aio_unregister(passion_ctx *ctx, int slot);
/* Ops the engine issued on registered buffers (requests, resubmissions
   included); 0 for the thread engine. */
CORE_HIDDEN int64_t core_aio_fixed(const passion_ctx *ctx);
/* Tests: make io_uring setup fail with errno e (0 = normal). */
CORE_HIDDEN void core_test_uring_fail(int e);
CORE_HIDDEN int core_test_uring_errno(void);

/* Engine internals (passion/ only). */
typedef struct core_engine core_engine;
typedef struct core_engine_ops {
    const char *name;
    int (*start)(core_engine *e);  /* 0 or -errno, nothing left allocated */
    void (*submit)(core_engine *e, core_op *op); /* never fails */
    core_op *(*reap)(core_engine *e, int block); /* one done op or NULL */
    void (*stop)(core_engine *e);  /* every op reaped before */
    void (*flush)(core_engine *e); /* optional: issue what plugged held */
    /* optional (core_aio_register): slot >= 0 or -1; and its undoing */
    int (*reg)(core_engine *e, char *base, int64_t len);
    void (*unreg)(core_engine *e, int slot);
} core_engine_ops;
struct core_engine {
    const core_engine_ops *ops;
    void *impl;
    int64_t inflight;
    int plugged; /* > 0: submit queues, flush issues (one system call) */
    int64_t enters; /* system calls that handed ops to the kernel */
    int64_t fixed;  /* requests issued on registered buffers */
};
extern CORE_HIDDEN const core_engine_ops core_engine_uring;
extern CORE_HIDDEN const core_engine_ops core_engine_thread;
/* Run an op to the end with core_io_once (worker thread, or the calling
   thread when the driver may not run on the worker). */
CORE_HIDDEN void core_op_run(core_op *op);

#endif
