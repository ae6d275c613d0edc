/*
 * core_options.h - the options of a context (prefix core_options_): one
 * field per public key, the public passion_options handle, defaults, the
 * "k=v,k=v" parser and the query of one key (passion/options.c).
 *
 * Invariants: the public key of an option is its field's name; parsing a
 * list is all or nothing (o untouched on failure, the reason in detail);
 * string options hold at most their *_MAX bytes, NUL included.
 */
#ifndef PASSION_CORE_OPTIONS_H
#define PASSION_CORE_OPTIONS_H

#include "passion.h"
#include "core_base.h"

#define CORE_CB_RANKS_MAX 256 /* bytes of the option cb_ranks, NUL included */
#define CORE_PATH_MAX 1024    /* bytes of a file name option, NUL included */

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
    int file_format;        /* passion_file_open of a global file: 0 auto
                               (by the name's extension), 1 raw (the name
                               whole, a raw file whatever it holds) */
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

#endif
