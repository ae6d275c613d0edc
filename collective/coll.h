/*
 * coll.h - internals of the collective/ folder (prefix coll_): collective
 * section access to one global array file by the extended two-phase method
 * (thesis chapter 6) and the exchange it needs.
 *
 * Invariants: every rank holds the same File Access Descriptor (FAD) and
 * derives the same file domains and the same round schedule from it, by
 * arithmetic on section descriptions alone (never lists of offsets), so no
 * counts are ever exchanged; memory beyond the caller's buffers (the
 * O(ranks x dimensions) descriptors, the round buffers and the exchange's
 * staging) is counted by core_stage_alloc and stays within the memory
 * budget for the whole call.
 */
#ifndef PASSION_COLL_H
#define PASSION_COLL_H

#include "../ocad/ocad.h"
#include "exchange/exchange.h" /* the exchange subsystem, one layer down */
#include "planner/planner.h"   /* the planner, below it */

/* ---- section cursors (etp_walk.c) ---- */

/*
 * A position in a transfer plan, restricted to the elements whose first
 * byte lies in [lo, hi) of the file; visits them in increasing file offset
 * as vectors of equal pieces.
 */
typedef struct coll_cur {
    const ocad_xfer *x;
    int64_t esize;
    int64_t idx[PASSION_MAX_DIMS]; /* loop indices, [nv-1] innermost */
    int64_t foff, moff;            /* start of the current block */
    int64_t sub;                   /* bytes of the block already passed */
    int64_t hi;                    /* element starts must be < hi */
    int done;
} coll_cur;

/* One step of a cursor: n pieces of len bytes, steps fstep / mstep. */
typedef struct coll_vec {
    int64_t foff, moff, n, len, fstep, mstep;
} coll_vec;

CORE_HIDDEN void coll_cur_seek(coll_cur *c, const ocad_xfer *x, int64_t esize,
                               int64_t lo, int64_t hi);
/* Next vector, at most maxn pieces (maxn >= 1); 0 when finished. */
CORE_HIDDEN int coll_cur_next(coll_cur *c, coll_vec *v, int64_t maxn);
/* Elements of the plan whose first byte is before file offset off. */
CORE_HIDDEN int64_t coll_count_lt(const ocad_xfer *x, int64_t esize,
                                  int64_t off);
/* File offset of the first element starting at or after off (INT64_MAX
   if none). */
CORE_HIDDEN int64_t coll_first_at(const ocad_xfer *x, int64_t esize,
                                  int64_t off);
/* File offset of element k (0-based, in file order) of the plan. */
CORE_HIDDEN int64_t coll_elem_off(const ocad_xfer *x, int64_t esize,
                                  int64_t k);

enum coll_copy_dir {
    COLL_FILE_TO_PACKED, /* stage (file image) -> packed buffer */
    COLL_PACKED_TO_FILE, /* packed buffer -> stage */
    COLL_FILE_TO_MEM,    /* stage -> caller's memory (plan's moff) */
    COLL_MEM_TO_FILE,    /* caller's memory -> stage */
    COLL_MEM_TO_PACKED,  /* caller's memory -> packed buffer */
    COLL_PACKED_TO_MEM   /* packed buffer -> caller's memory */
};

/*
 * Copy the plan's elements starting in [lo, hi): the file side is the
 * stage, holding file byte f at stage[f - sbase]; the packed side is
 * consumed or filled sequentially from *packed (advanced). Returns bytes
 * copied.
 */
CORE_HIDDEN int64_t coll_copy(const ocad_xfer *x, int64_t esize, int64_t lo,
                              int64_t hi, int dir, char *stage, int64_t sbase,
                              char *mem, char **packed);

/* ---- the File Access Descriptor and the plan (etp_plan.c) ---- */

/* Staging bytes of the rounds' descriptors (etp.c's cursors and vectors)
   on P ranks: the plan reserves them. */
CORE_HIDDEN int64_t coll_etp_desc_bytes(int P);

/* The file's costs when the data is in the page cache (a request is a
   system call and a copy from memory). */
#define COLL_WARM_LATENCY 2e-6
#define COLL_WARM_BANDWIDTH 4e9
/* bytes per second of a copy in memory (the cost model's) */
#define COLL_COPY_BW 4e9

/* Words per rank in the FAD allgather, before the section. FILE is a hash
   of the file's path (the name every rank agreed on at open), LAYOUT a hash
   of the array as the file holds it (dimensions, shape, element size,
   storage order, data offset), both computed at open (f->ident): ranks
   that pass different files or arrays to one call are told so
   (PASSION_EMISMATCH) at no extra round. */
enum { COLL_FAD_RC, COLL_FAD_METHOD, COLL_FAD_OP, COLL_FAD_BUDGET,
       COLL_FAD_XCHG, COLL_FAD_LAT, COLL_FAD_BW, COLL_FAD_ALPHA,
       COLL_FAD_BETA, COLL_FAD_FILE, COLL_FAD_LAYOUT, COLL_FAD_CACHED,
       COLL_FAD_STRIPE, COLL_FAD_SYNC, COLL_FAD_REQ, COLL_FAD_FIXED,
       COLL_FAD_STREAM, COLL_FAD_HEAD };
/* the words from METHOD up to (not including) this one must agree */
#define COLL_FAD_AGREE_END COLL_FAD_CACHED

/*
 * What a rank did before the FAD (coll_read_early), carried in its
 * COLL_FAD_CACHED word: the page-cache probe (per mille, -1 = none), a
 * flag "this rank's part of an independent read is done" (its outcome is
 * the word COLL_FAD_RC) and the seconds it predicted for that read
 * (float). Independent reads change nothing but the caller's buffer, so
 * a rank may read before it knows the others' sections: when every rank
 * has, the call is complete at the FAD, one collective round in all.
 */
typedef struct coll_early {
    int cached;    /* per mille of this rank's extent cached, -1: none */
    int done;      /* this rank's independent read is done (or empty) */
    double pred;   /* its predicted seconds (0 when not predicted) */
} coll_early;

/* Extents up to this many bytes are not probed (coll_io_early): one
   request reads them whatever the cache holds. */
#define COLL_PROBE_MIN 4096

/*
 * Before the FAD: probe the cache (extents over COLL_PROBE_MIN bytes) and,
 * for a read with an independent method (direct or sieve) or with auto
 * when this rank's predicted time of it is at most twice the cost of the
 * collective round it saves (coll_sync_cost: it is what independent
 * access would do anyway), read this rank's section now. A write is never
 * done here: no rank may write before the FAD tells every rank that the
 * call can proceed (another rank's arguments, the budget and the
 * descriptors are checked there), so that a refused write writes
 * nothing. rc is the rank's outcome so far (a failing rank moves
 * nothing); returns it, or the read's code.
 */
/* The access a section call makes (file, operation, section, whether a
   memory layout is given), hashed; never 0. coll_early_remember keeps it
   and the method chosen when the ranks of an auto call chose an
   independent method (method: PASSION_METHOD_AUTO, each rank sieve.c's
   own choice, or PASSION_METHOD_DIRECT on every rank), or forgets it
   (method < 0): the same read again is done early with that method
   (coll_io_early). */
/* calls of a remembered read done early before auto chooses again (the
   ranks may since do better with the two-phase method) */
#define COLL_EARLY_AGAIN 15
CORE_HIDDEN uint64_t coll_early_sig(const passion_file *f,
                                    const passion_section *s,
                                    const passion_memspec *m, int op_write);
CORE_HIDDEN void coll_early_remember(passion_ctx *ctx, uint64_t sig,
                                     int method);
CORE_HIDDEN int coll_io_early(passion_file *f, const passion_section *s,
                              const passion_memspec *m, void *buf,
                              int method, int op_write, int64_t elems,
                              int rc, coll_early *out);
/*
 * The seconds one collective round adds to a call, learned from the
 * FAD's allgather of every collective call (COLL_FAD_SYNC: each rank's
 * arrival and wait at the previous one; with the ranks' clocks, the time
 * from the last arrival to the last completion, kept within the ranks'
 * shortest and longest waits): the median of the last COLL_SYNC_KEEP
 * samples, identical on every rank (computed from the FAD); before any,
 * the message calibration's alpha if known, else its default.
 */
#define COLL_SYNC_KEEP 16
CORE_HIDDEN double coll_sync_cost(passion_ctx *ctx);
/* The learned round samples (at most COLL_SYNC_KEEP, ring order) into v;
   returns how many (tests: coll_sync_cost is their median). */
#ifdef PASSION_TEST_HOOKS /* tests only: test builds */
CORE_HIDDEN int coll_sync_samples(passion_ctx *ctx, double *v);
#endif
/* the samples coll_sync_cost holds (0 to COLL_SYNC_KEEP) */
CORE_HIDDEN int coll_sync_learned(passion_ctx *ctx);
/*
 * The seconds of a round inside a call (the two-phase method's exchange
 * rounds, the two-level exchange's outcome agreement): the least of the
 * same samples, where coll_sync_cost is their median. The FAD opens the
 * call and its samples come in two kinds: rounds the ranks enter while
 * the others still run the caller's code (on an oversubscribed node the
 * ranks that left the caller's blocking MPI call spin in it and the rest
 * wait for the CPU: scheduler ticks) and rounds they enter together.
 * The rounds inside a call are of the second kind (the FAD's samples of
 * the first kind are several times dearer, and priced at their median
 * the two-phase method's rounds were overpriced).
 * Identical on every rank (from the FAD).
 */
CORE_HIDDEN double coll_round_inner(passion_ctx *ctx);
/* The pages a direct write of bytes in requests touches over an extent
   of ext bytes (an estimate: each request its own pages, at most the
   extent's): the kernel's first-dirty cost is per page. */
CORE_HIDDEN int64_t coll_write_pages(int64_t requests, int64_t bytes,
                                     int64_t ext);
/* seconds of first dirtying a cached page (page locking and dirty
   accounting; a rewrite of a dirty page costs about a request) */
#define COLL_PAGE_DIRTY 20e-6

/*
 * The fixed cost of a collective call's method, learned from the calls'
 * own measured times as the request cost is (ocad_req_cost): what the
 * linear model leaves out of a small call (the agreement round after the
 * access, the two-phase method's domains, schedule and buffers, the
 * independent engine's plan and staging). After every auto call that
 * chose (not one done before the FAD) and succeeded, with a raw
 * prediction under COLL_FIXED_LEARN_MAX, each rank records the seconds
 * from the choice to the outcome's agreement (not included: its round,
 * the same for both classes, holds the other ranks' scheduling delays
 * under load) minus the raw prediction,
 * clamped to [0, COLL_FIXED_CAP], for the class chosen: independent or
 * two-phase. The FAD carries each rank's learned figure (the lower
 * quartile of its last COLL_FIXED_KEEP samples, and their number: a load
 * spike lasts several calls on a shared machine, each far dearer than
 * the same calls before and after it, and made a median the spike's; a
 * fixed cost compares methods, which a load slows alike) and
 * the call takes the largest figure and the fewest samples, so every rank
 * prices alike. The model adds one learned round (the outcome's
 * agreement) to it.
 * The prior, before any sample: one learned round (coll_sync_cost) for
 * independent access (its agreement), two for the two-phase method (its
 * agreement and its setup). With fewer than CORE_LEARN_TRUST samples the
 * learned figure may lower the prior, not raise it: a first call of a
 * method pays one-time costs (a first two-phase call is several times
 * dearer than the next ones), and one such sample must not
 * keep the method from ever being chosen, and so measured, again.
 */
enum { COLL_FIX_IND, COLL_FIX_ETP, COLL_FIX_N };
#define COLL_FIXED_KEEP 8
/* the file's costs: measured on up to this many uncached calls, the
   model on the best reading (file_calibrate in etp_filecost.c) */
#define COLL_FILE_SAMPLES 3
#define COLL_FIXED_LEARN_MAX 1e-3
#define COLL_FIXED_CAP 1e-3
CORE_HIDDEN void coll_fixed_learn(passion_ctx *ctx, int cls, double seconds);
/* this rank's learned fixed cost of class cls (-1: none yet) */
CORE_HIDDEN double coll_fixed_mine(passion_ctx *ctx, int cls);
/* the file costs the model runs on uncached data (file_calibrate in
   etp_filecost.c: the best of up to COLL_FILE_SAMPLES readings; 0 = not
   measured) and the latency readings taken; for tests and diagnostics */
#ifdef PASSION_TEST_HOOKS /* tests only: test builds */
CORE_HIDDEN void coll_file_costs(passion_ctx *ctx, double *lat, double *bw,
                                 int *nlat);
#endif
/*
 * The file's streaming bandwidth learned from the calls' own long reads
 * (ctx->stream_bytes / stream_t: reads longer than CORE_STREAM_MIN): at
 * the end of a collective call on uncached data (the FAD's probe: at most
 * COLL_STREAM_CACHED_PM per mille cached; the same on every rank) each
 * rank keeps the bytes and seconds of its long reads in that call
 * (coll_stream_note), and the next call's FAD carries them
 * (COLL_FAD_STREAM): the ranks read at once, so the file gave all of them
 * together their bytes' sum in the longest rank's seconds. From at least
 * COLL_STREAM_LEARN_MIN bytes, the best such figure is kept (verbosity 2
 * prints it; coll_stream_bw), with the length of the ranks' streams
 * (bytes per streaming rank). As the file's one bandwidth it would price
 * the aggregators' long streams right but every sieve's shorter stream
 * (still in the readahead's ramp, slower) too cheaply. So the model's
 * rate depends on
 * the stream's length (coll_stream_rate): the calibration's rate up to
 * the calibration's streams' length, the learned rate from the learned
 * streams' length. 0: none learned.
 */
#define COLL_STREAM_CACHED_PM 100
#define COLL_STREAM_LEARN_MIN (16LL << 20)
CORE_HIDDEN void coll_stream_note(passion_ctx *ctx, uint64_t bytes,
                                  double seconds);
#ifdef PASSION_TEST_HOOKS /* tests only: test builds */
CORE_HIDDEN double coll_stream_bw(passion_ctx *ctx);
#endif
/* The readahead's ramp the model uses on uncached data (coll_plan's
   ramp_short, ramp_long, bw_long): where the calibration's best reading
   streamed *len_short bytes a rank and the calls' own long reads, faster,
   *len_long bytes a rank (longer) at *bw_long B/s, all ranks together.
   Returns 1 then, else 0 (zeros: one rate; also under the io_bandwidth
   option). The same on every rank. */
CORE_HIDDEN int coll_stream_ramp(passion_ctx *ctx, int64_t *len_short,
                                 int64_t *len_long, double *bw_long);
/* the bytes the calibration's best-read stream(s) timed, all ranks
   together (0: none); for tests */
#ifdef PASSION_TEST_HOOKS /* tests only: test builds */
CORE_HIDDEN int64_t coll_file_streamed(passion_ctx *ctx);
#endif

typedef struct coll_plan {
    passion_ctx *ctx;
    passion_file *f;
    int P, me, op_write, method;
    int nd;
    int64_t esize;
    int64_t *fad;       /* P x (COLL_FAD_HEAD + 3 nd) words */
    ocad_xfer *x;       /* P plans, packed memory side */
    int64_t *elems;     /* P element counts */
    ocad_xfer xme;      /* this rank's plan with its memory side */
    int64_t *dlo, *dhi; /* P file domains: element starts in [dlo, dhi) */
    int64_t lo, hi;     /* bytes of the union: first start, last end */
    int64_t align;      /* file domains' alignment (rank 0's stripe size
                           in the FAD: option stripe_size, else the file
                           system's) */
    int64_t *scratch;   /* P words for the schedule */
    int64_t *byext;     /* the ranks with elements, by their extents'
                           starts (nbyext of them: coll_ranks_in) */
    int nbyext;
    int overlap;        /* some two sections share an element */
    int ext_overlap;    /* some two sections' file extents interleave */
    /* per-round limits (bytes) */
    int64_t cap_stage, cap_xchg;
    int64_t hole;       /* sieving hole limit inside a chunk */
    double io_lat, io_bw; /* file cost model of this call (options, or
                             by the page-cache probe: memory or disk) */
    /* the readahead's ramp on uncached data (coll_stream_rate): a rank's
       stream of at most ramp_short bytes runs at io_bw (the calibration's
       streams were that long), one of at least ramp_long bytes at
       bw_long (the calls' own long reads); 0: none (one rate) */
    int64_t ramp_short, ramp_long;
    double bw_long;
    ocad_env env;       /* the same for the independent engine, with the
                           staging it may hold: passed to it, never set
                           in the context */
    int warm;           /* the requested data is in the page cache */
    int cached_pm;      /* per mille of the probed extents cached (the
                           ranks' mean; 1000 when none was probed) */
    double fixed[COLL_FIX_N]; /* the learned fixed costs, largest over
                                 ranks (-1: none; coll_fixed_learn) */
    int fixed_n[COLL_FIX_N];  /* their samples, fewest over ranks */
    int xalg;           /* the exchange the rounds run: the option
                           (PASSION_XCHG_DEFAULT), or under its auto on
                           several nodes the candidate priced cheapest on
                           its own rounds (coll_xchg_pick) */
    int aggr;           /* the default aggregator set (no cb_* option
                           set): COLL_AGGR_RULE (one node: every rank,
                           several: one per node), or under method auto
                           on several nodes the set priced cheaper
                           (coll_method_choose: COLL_AGGR_NODE or
                           COLL_AGGR_ALL) */
    double pred_raw;    /* coll_method_choose: the chosen method's
                           prediction without its fixed cost */
    int64_t bytes_desc; /* staging bytes of this plan's descriptors */
    int desc_uncounted; /* they did not fit the budget (the call fails) */
    char *reserve;      /* address space for the round buffers, reserved
                           before the FAD (never touched unless an
                           allocation fails later); the context's, kept
                           across calls */
} coll_plan;

/* The file's bandwidth, all ranks together, for reads in which each
   streaming rank reads one sequential stream of len bytes (a sieve's
   extent, an aggregator's span): io_bw up to ramp_short, bw_long from
   ramp_long, linear in the length between (etp_stream.c) */
CORE_HIDDEN double coll_stream_rate(const coll_plan *p, int64_t len);

/*
 * Exchange the FAD (one MPI_Allgather), check that the ranks agree on the
 * method, operation and cost options, build every rank's plan. rc is this
 * rank's outcome of argument checking so far (a failing rank takes part
 * with an empty section); returns the agreed code.
 */
CORE_HIDDEN int coll_plan_init(coll_plan *p, passion_file *f,
                               const passion_section *s,
                               const passion_memspec *m, int method,
                               int op_write, int rc,
                               const coll_early *early);
/* Is rank r's part done before the FAD, and what did it predict? */
CORE_HIDDEN int coll_early_done(const coll_plan *p, int r);
CORE_HIDDEN double coll_early_pred(const coll_plan *p, int r);
CORE_HIDDEN void coll_plan_free(coll_plan *p);
/* Staging bytes of the descriptors of a collective call on P ranks and
   nd dimensions (the FAD, the plans, the rounds' tables): part of the
   memory budget, which must hold them and one element per rank in a
   round. */
CORE_HIDDEN int64_t coll_plan_desc_bytes(int P, int nd);
/*
 * Must independent writes with this method (direct, sieve or auto) go one
 * rank after another? Yes where two sections share an element, or where a
 * rank would sieve (read-modify-write a window) over a range another
 * rank's extent reaches into. Same answer on every rank.
 */
CORE_HIDDEN int coll_write_ordered(coll_plan *p, int method);
/* Does rank r's file extent interleave another rank's (both with
   elements)? 0 at once where no two extents do (p->ext_overlap). */
CORE_HIDDEN int coll_extent_meets(const coll_plan *p, int r);
/* Seconds the ordering token of independent writes takes to pass through
   the P ranks, S the learned round (etp_model.c) */
CORE_HIDDEN double coll_token_cost(const coll_plan *p, double S);
/*
 * Shared elements of direct writes without the ordering token: when every
 * rank's section either lies inside a higher rank's section or shares no
 * element with any higher rank's, each element has one writer, its
 * highest rank (a rank of the second kind), and the writers may go at
 * once. Returns 1 then, with *writes (this rank is such a writer); 0 when
 * the token is needed. Same answer on every rank (from the FAD).
 */
CORE_HIDDEN int coll_shared_writers(const coll_plan *p, int *writes);

/* ---- the per-context state (etp_state.c) ---- */

/*
 * The collective layer's per-context state (ctx->ext[CORE_EXT_COLL],
 * freed at passion_finalize):
 *  - the round buffers' fallback reservation, kept from one collective
 *    call to the next: mapping and unmapping it on every call cost
 *    several microseconds, a large share of a small section's time. Only
 *    address space: the rounds carve from it only when malloc fails, so
 *    it stays non-resident;
 *  - the file cost model, measured on the first uncached extents met
 *    (file_calibrate): tries made, the latency / bandwidth samples agreed
 *    over ranks (one per try that measured) and the best of them (0 = not
 *    measured). The message costs are the exchange subsystem's
 *    (coll_xchg_costs_get).
 */
typedef struct coll_ext {
    void *reserve;
    int64_t bytes;
    /* the FAD's round: this rank's last arrival (ns, mod 2^32) and wait
       (ns; 0 = none yet), and the samples learned (coll_sync_cost) */
    uint32_t sync_at, sync_wait;
    double sync[COLL_SYNC_KEEP];
    int sync_n, sync_i;
    double sync_med; /* their median (coll_sync_cost), kept as learned */
    double sync_sorted[COLL_SYNC_KEEP]; /* the samples in order (sync_n):
                                           the median without a sort */
    /* plan_caps of the last call: budget, ranks and exchange option it
       was computed for (caps_P 0 = none yet) */
    int64_t caps_M, caps_xchg;
    int caps_P, caps_alg;
    /* the fixed costs' samples per class (coll_fixed_learn) */
    double fixed[COLL_FIX_N][COLL_FIXED_KEEP];
    int fixed_n[COLL_FIX_N], fixed_i[COLL_FIX_N];
    int file_tries, file_nlat, file_nbw;
    double file_lat, file_bw;
    /* the bytes the best bandwidth reading streamed, and the tries made
       for a longer stream than that (stream_pending) */
    int64_t file_bw_len;
    int file_long_tries;
    /* this rank's long reads in the last collective call on uncached
       data (pages of 4 KiB, microseconds: the COLL_FAD_STREAM word), and
       the best bandwidth learned from them (coll_stream_note) */
    uint32_t stream_pages, stream_us;
    double stream_bw;
    int64_t stream_len; /* stream_bw's bytes per streaming rank */
    int64_t file_bw_rank; /* file_bw's stream bytes per streaming rank */
    /* the file costs' wisdom (etp_filewis.c): 0 not looked up, 1 looked
       up and not found (this context measures and keeps them under
       file_key), 2 taken from it; file_probes: this rank's calibration
       reads (core_io_measure calls) */
    int file_wis;
    plan_file_costs file_key;
    int64_t file_probes;
    /* the last auto read whose ranks chose an independent method: its
       access (coll_early_sig; 0 = none). The same access again is read
       early whatever its cost (coll_io_early) */
    uint64_t indep_sig;
    int indep_left; /* early reads left on it before auto chooses again */
    int indep_method; /* the method chosen: auto (sieve.c's) or direct */
} coll_ext;

/* The context's state, made on first use (NULL: no memory). */
CORE_HIDDEN coll_ext *coll_ext_get(passion_ctx *ctx);
/* The round buffers' fallback reservation of at least bytes (address
   space, kept from one call to the next); NULL: none. */
CORE_HIDDEN void *coll_reserve_get(passion_ctx *ctx, int64_t bytes);

/* ---- the FAD's words and what is learned from them ---- */

/* This rank's COLL_FAD_SYNC word (its arrival and wait at the previous
   round; 0: none; makes the state) and, after the FAD, the round's
   sample learned from every rank's word, then this round's arrival t0
   and wait t1 - t0 kept for the next (etp_sync.c). */
CORE_HIDDEN int64_t coll_sync_word(passion_ctx *ctx);
CORE_HIDDEN void coll_sync_learn(passion_ctx *ctx, const int64_t *fad,
                                 int W, double t0, double t1);
/* This rank's COLL_FAD_FIXED word: per class 32 bits, the samples held
   (bits 24-31) and the learned cost in ns (bits 0-23) (etp_fixed.c). */
CORE_HIDDEN int64_t coll_fixed_word(passion_ctx *ctx);
/* This rank's COLL_FAD_STREAM word (its long reads of the last uncached
   call: pages and microseconds) and, after the FAD, the bandwidth learned
   from every rank's (etp_stream.c). */
CORE_HIDDEN int64_t coll_stream_word(passion_ctx *ctx);
CORE_HIDDEN void coll_stream_learn(passion_ctx *ctx, const int64_t *fad,
                                   int W);
/* This rank's COLL_FAD_CACHED word (etp_early.c) and rank r's probe from
   the FAD (per mille, -1: none). */
CORE_HIDDEN int64_t coll_early_word(const coll_early *e);
CORE_HIDDEN int coll_early_cached(const coll_plan *p, int r);
/* The file's calibration still takes readings (fewer than
   COLL_FILE_SAMPLES latency samples and tries left; also with no state):
   the early path waits for it (etp_filecost.c). */
CORE_HIDDEN int coll_file_pending(const coll_ext *e);
/* After the probe: calibrate the file's costs where due (uncached data,
   probed > 0 ranks probed; readings pending, or a longer stream than the
   best reading's), on every rank alike (etp_filecost.c). */
CORE_HIDDEN void coll_file_measure(coll_plan *p, int64_t probed);
/* The file costs through wisdom (etp_filewis.c): before the first
   calibration, collective (every rank of the call), with the option
   wisdom only: the costs of this file's driver, file system and placement
   when the wisdom holds them (nothing is then pending); and, after a
   reading of a context that measured, its costs into the table that is
   saved when the context goes. */
CORE_HIDDEN void coll_file_wisdom(coll_plan *p, coll_ext *e);
CORE_HIDDEN void coll_file_keep(passion_ctx *ctx, const coll_ext *e);
#ifdef PASSION_TEST_HOOKS /* tests only */
/* this rank's calibration reads in ctx so far */
CORE_HIDDEN int64_t coll_file_probes(passion_ctx *ctx);
#endif
/* The file costs of a call: options, else measured, else the defaults;
   memory-like when the data is cached (warm): a request costs req, the
   learned cost of a cached read request (0: COLL_WARM_LATENCY), a write
   request at least COLL_WARM_LATENCY (etp_filecost.c). */
CORE_HIDDEN ocad_env coll_call_env(passion_ctx *ctx, int warm, double req,
                                   int op_write);
/* p->byext sorted, p->ext_overlap and (writes) p->overlap from the FAD
   (etp_overlap.c). */
CORE_HIDDEN void coll_plan_overlap(coll_plan *p);

/* ---- file domains and the round schedule (etp_domain.c) ---- */

/* Static (whole array) or dynamic (bounding extent), boundaries aligned
   to p->align; only the aggregators (coll_aggregators) get a domain, the
   others an empty one. */
CORE_HIDDEN void coll_domains(coll_plan *p, int dynamic);
/*
 * The ranks that do the file I/O of the extended two-phase method, from
 * the options (cb_ranks, else cb_per_node, else cb_nodes: the first set
 * wins) and the context's nodes; by default every rank when the context
 * is one node, else one per node (ROMIO's default on Lustre, cb_nodes =
 * the number of nodes), or under method auto the set it priced cheaper
 * (coll_aggregators_set, coll_plan.aggr). agg[r] = 1 for an aggregator, 0 otherwise
 * (ctx->size entries; tmp: ctx->size entries of scratch); returns how
 * many, >= 1. The same on every rank (the options are agreed at
 * passion_init, the nodes are the context's).
 */
#ifdef PASSION_TEST_HOOKS /* tests only: test builds */
CORE_HIDDEN int coll_aggregators(const passion_ctx *ctx, int64_t *agg,
                                 int64_t *tmp);
#endif
/* The default sets (coll_plan.aggr): the rule above, one per node, every
   rank. */
enum { COLL_AGGR_RULE = 0, COLL_AGGR_NODE = 1, COLL_AGGR_ALL = 2 };
/* The same with the default set `set` where no cb_* option is set (an
   option always wins). */
CORE_HIDDEN int coll_aggregators_set(const passion_ctx *ctx, int set,
                                     int64_t *agg, int64_t *tmp);
/* Is any aggregator option (cb_ranks, cb_per_node, cb_nodes) set? */
CORE_HIDDEN int coll_aggr_option(const passion_ctx *ctx);

/*
 * The smallest memory budget with which the extended two-phase method can
 * run every round within the budget: 5 x max(P-1, 1) x element size. A
 * round's exchange buffers hold at most budget/5 bytes and one element of
 * each of the P-1 other ranks (a fair share, budget/5/(P-1) bytes, must
 * hold one element); the stage, 2/5 of the budget, then holds two
 * elements at least. Same on every rank (the budget is agreed in the FAD).
 */
CORE_HIDDEN int64_t coll_etp_min_budget(const coll_plan *p);
/* Fails with PASSION_ENOMEM, stating that minimum, when the budget is
   below it and some rank has data. */
CORE_HIDDEN int coll_etp_budget_check(coll_plan *p);

/*
 * The ranks whose elements may start in file bytes [a, b), as a range of
 * p->byext: [*k0, *k1). Every rank with elements whose extent meets
 * [a, b) is in it; where no two extents interleave (no p->ext_overlap)
 * only those, else also ranks whose extent ends before a (coll_cnt_in
 * counts none of theirs). Two bisections: the loops over ranks and
 * domains of the model and the rounds (every rank computes every
 * aggregator's chunks) then cost O(P log P) where the sections lie apart
 * (block distributions), not O(P^2).
 */
CORE_HIDDEN void coll_ranks_in(const coll_plan *p, int64_t a, int64_t b,
                               int *k0, int *k1);

/* Rank r's elements that start in file bytes [a, b) (none at once where
   its extent does not meet them). */
static inline int64_t coll_cnt_in(const coll_plan *p, int r, int64_t a,
                                  int64_t b)
{
    const ocad_xfer *x = &p->x[r];
    if (!p->elems[r] || a >= b || b <= x->foff0 || a >= x->fend)
        return 0;
    return coll_count_lt(x, p->esize, b) - coll_count_lt(x, p->esize, a);
}

/* Chunk of aggregator i starting at or after *pos: [*a, *b), advancing
   *pos; 0 if the domain is exhausted; negative code if the budget cannot
   hold one element per rank. */
CORE_HIDDEN int coll_chunk_next(coll_plan *p, int i, int64_t *pos, int64_t *a,
                                int64_t *b);

/* ---- the rounds (etp.c) ---- */

CORE_HIDDEN int coll_etp_run(coll_plan *p, char *buf);

/* ---- windows of a chunk (etp_window.c) ---- */

/*
 * Walk the union of all ranks' elements starting in [a, b) as windows:
 * file ranges [w0, w1) whose inner gaps are at most p->hole bytes;
 * `holes` tells whether a window holds bytes of no section (a write must
 * read it first). Calls fn for each; stops at its first nonzero return.
 */
typedef int (*coll_window_fn)(void *arg, int64_t w0, int64_t w1, int holes);
CORE_HIDDEN int coll_windows(coll_plan *p, coll_cur *curs, int64_t a,
                             int64_t b, coll_window_fn fn, void *arg);

/* ---- exchange (etp_exchange.c) ---- */

/*
 * Irregular all-to-all in bytes (64-bit counts and displacements): rank r's
 * sendbuf[sdispls[j] ..+ sendcounts[j]) lands in rank j's
 * recvbuf[rdispls[r] ..). Collective. Counts messages, bytes and rounds.
 * budget: the staging bytes the exchange may hold (what the rounds left
 * of the memory budget). shape (optional): the exchange's shape, the same
 * on every rank (coll_xchg_args.shape).
 */
CORE_HIDDEN int coll_etp_exchange(passion_ctx *ctx, const void *sendbuf,
                                  const int64_t *sendcounts,
                                  const int64_t *sdispls, void *recvbuf,
                                  const int64_t *recvcounts,
                                  const int64_t *rdispls, int64_t budget,
                                  const coll_xchg_shape *shape, int alg);

/* ---- cost model (etp_model.c) ---- */

/* What the two-phase method's prediction needs of the sections on p's
   domains, whatever the exchange (counted once, shared by the exchange
   candidates). */
typedef struct coll_etp_shape {
    int64_t span_sum, max_span, naggs, useful_all; /* the domains' spans */
    int64_t max_x, max_useful; /* the busiest rank's exchanged, own bytes */
    int nodes;    /* the pairs below were counted (2..COLL_A2A_MAX nodes) */
    int node_max; /* ranks on the fullest node */
    /* between nodes, the busiest node's: flat, its ranks' messages and
       bytes together; twolevel, its leader's (a message per node) */
    int64_t msgs_max, bytes_max, nmsgs_max;
} coll_etp_shape;
CORE_HIDDEN void coll_etp_shape_of(const coll_plan *p,
                                   coll_etp_shape *sh);
/* Predicted seconds of the extended two-phase method on p's domains with
   exchange alg; S: a round inside the call (coll_round_inner). */
CORE_HIDDEN double coll_etp_time(coll_plan *p, const coll_etp_shape *sh,
                                 const int64_t *ind_bytes,
                                 int64_t ind_req_sum, int64_t ind_req_max,
                                 const coll_xchg_costs *mc, double S,
                                 int alg);

/* independent access's requests (busiest rank, all) and file bytes */
typedef struct coll_ind_counts {
    int64_t req_max, req_sum, bytes_sum;
} coll_ind_counts;
/* Predicted seconds of independent access with method on every rank
   (auto: each rank sieve.c's choice); ind_bytes (P entries, or NULL):
   each rank's file bytes. */
CORE_HIDDEN double coll_ind_time(coll_plan *p, int method, double S,
                                 int64_t *ind_bytes, coll_ind_counts *c);
/* A class's fixed cost (COLL_FIX_*): the learned figure plus the
   outcome's round S, else prior. */
CORE_HIDDEN double coll_fixed_cost(const coll_plan *p, int cls,
                                   double prior, double S);

/* ---- method auto's choice (etp_choose.c) ---- */

/* Resolve AUTO to independent access (AUTO: each rank sieve.c's choice,
   or DIRECT where that avoids ordering the writes) or an ETP method;
   every rank gets the same answer. Fills predicted seconds of the
   choice. */
CORE_HIDDEN int coll_method_choose(coll_plan *p, double *seconds,
                                   double *est);

/* ---- method auto through the planner (etp_auto.c) ---- */

typedef struct coll_auto {
    int applies;        /* the planner decides this call */
    int decided;        /* its record has a winner */
    int overridden;     /* it runs another method than the model's, or
                           the model was not asked (no_model) */
    int no_model;       /* the record decides without the model */
    int idx;            /* the candidate that runs */
    plan_state *plan;
    plan_sig sig;
    /* the plan's settings as coll_plan_init left them (a method given
       fixed runs on them) */
    int xalg, aggr;
    int64_t cap_xchg, cap_stage;
} coll_auto;
/* After the FAD, before coll_method_choose: saves the plan's settings;
   1 when the planner decides and has no record of the call (then pass
   coll_method_choose an array for its prices); a->no_model set when
   coll_method_choose is not to be called at all. */
CORE_HIDDEN int coll_auto_begin(coll_plan *p, coll_auto *a);
/* The planner's answer (collective when it applies): *chosen and
   *predicted replaced where it runs another method than the model's
   choice; est: the model's prices by method (NULL when the record
   exists). An error is agreed. */
CORE_HIDDEN int coll_auto_pick(coll_plan *p, int *chosen, double *predicted,
                               const double *est, coll_auto *a);
/* The call's time on this rank, after its outcome was agreed. */
CORE_HIDDEN void coll_auto_observe(passion_ctx *ctx, const coll_auto *a,
                                   double seconds);
/* For a two-phase method given fixed, on p's domains: under the exchange's
   auto on several nodes, when its costs are known without a collective
   call (coll_xchg_costs_ready), the exchange priced cheapest on its own
   rounds and those rounds (p->xalg, p->cap_xchg, p->cap_stage), as
   coll_method_choose sets them for its choice; else nothing changes. The
   same on every rank. */
CORE_HIDDEN void coll_xchg_pick(coll_plan *p);
/* The per-round limits (cap_xchg, cap_stage) within budget M for the
   exchange alg's staging, as that algorithm fixed has them (etp_plan.c) */
CORE_HIDDEN void coll_plan_caps_alg(coll_plan *p, int64_t M, int alg);

/*
 * A collective read of a chunked HDF5 dataset (chunked.c): each chunk the
 * ranks' sections need read and decoded once, by one rank, its pieces
 * exchanged. rc: this rank's argument check (a failed rank takes part
 * with an empty section). Returns the agreed code.
 */
CORE_HIDDEN int coll_chunked_read_all(passion_file *f,
                                      const passion_section *s, void *buf,
                                      const passion_memspec *m, int rc);

#endif
