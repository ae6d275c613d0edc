/*
 * ocad.h - internals of the ocad/ folder (prefix ocad_): the Out-of-Core
 * Array Descriptor, sections, transfer plans between a file and memory,
 * direct and sieved access, and the placement models' files.
 *
 * Invariants: an array's spec is validated and normalised once (order[]
 * always filled, grid product equal to the communicator size, every byte
 * count of the global array and of every local array fits in int64); a
 * transfer plan visits file bytes in increasing offset order.
 */
#ifndef PASSION_OCAD_H
#define PASSION_OCAD_H

#include "../passion/core.h"

struct passion_array {
    passion_ctx *ctx;
    passion_array_spec spec; /* normalised copy */
    int nd;
    int64_t esize;
    int64_t global_bytes;   /* product of shape * esize */
    int64_t open_files;     /* files of this array open (free refuses) */
};

/* ---- descriptor (descriptor.c) ---- */

/* Validate and normalise a spec (no communication). */
CORE_HIDDEN int ocad_spec_check(passion_ctx *ctx, const passion_array_spec *in,
                                passion_array_spec *out);
/* Grid coordinates of rank r (row-major over the grid). */
CORE_HIDDEN void ocad_coords(const passion_array *a, int r, int *coords);
/* Number of indices of dimension d that grid coordinate p owns. */
CORE_HIDDEN int64_t ocad_local_count(const passion_array *a, int d, int p);
/* Global index of local index l of grid coordinate p in dimension d. */
CORE_HIDDEN int64_t ocad_l2g(const passion_array *a, int d, int p, int64_t l);
/* Owner coordinate and local index of global index g in dimension d. */
CORE_HIDDEN void ocad_g2l(const passion_array *a, int d, int64_t g, int *p,
                          int64_t *l);

/* ---- sections (section.c) ---- */

/*
 * Check s against the index range [lo[d], hi[d]) per dimension and compute
 * its element count (0 if empty) with overflow checks. Zero or negative
 * stride, negative count, or a section outside the range is an error.
 */
CORE_HIDDEN int ocad_section_check(passion_ctx *ctx, int nd,
                                   const passion_section *s,
                                   const int64_t *lo, const int64_t *hi,
                                   int64_t *elems);
/* Check a memory side for a section's count box. */
CORE_HIDDEN int ocad_memspec_check(passion_ctx *ctx, int nd, int64_t esize,
                                   const passion_section *s,
                                   const passion_memspec *m);

/* ---- transfer plans (xfer.c) ---- */

/*
 * A transfer plan: the section as blocks of `blen` bytes, contiguous both
 * in the file and in memory, arranged as nv nested loops (storage order,
 * [0] slowest) with byte steps in file and memory. Loops that are
 * contiguous on both sides are merged into the block, so a section that is
 * one contiguous range is one block.
 */
typedef struct ocad_xfer {
    int nv;
    int64_t cnt[PASSION_MAX_DIMS];
    int64_t fstep[PASSION_MAX_DIMS];
    int64_t mstep[PASSION_MAX_DIMS];
    int64_t blen;
    int64_t foff0;   /* file byte offset of the first block */
    int64_t moff0;   /* memory byte offset of the first block */
    int64_t nblocks; /* blocks in all (0 = empty section) */
    int64_t fend;    /* one past the last file byte of the last block */
    int swap;        /* byte-swap unit of the file's data (the view's), 0
                        none: whoever moves bytes between memory and a
                        file-order buffer swaps them (ocad_swap_blocks) */
    int64_t esize;   /* element size (swapped chunks are whole elements) */
} ocad_xfer;

/* File side of a plan: the array as it lies in a file. */
typedef struct ocad_fview {
    int nd;
    int64_t esize;
    int order[PASSION_MAX_DIMS];   /* order[0] slowest */
    int64_t extent[PASSION_MAX_DIMS]; /* file extent per dimension */
    int64_t shift[PASSION_MAX_DIMS];  /* file index = section index+shift */
    int64_t base;                     /* byte offset of element 0 */
    int64_t step0;                    /* > 0: the byte step of dimension
                                         order[0] (a netCDF record
                                         variable's records), else the
                                         product of the inner extents */
    int swap;                         /* byte-swap unit of the file's data
                                         (ocad_swap_unit), 0 = none */
} ocad_fview;

/*
 * Build the plan of section s (already validated) between the file view
 * and memory (m NULL = packed count box). Pure arithmetic.
 */
CORE_HIDDEN void ocad_xfer_build(const ocad_fview *fv, const passion_section *s,
                                 const passion_memspec *m, ocad_xfer *x);

/* Iterator over a plan's blocks, one vector (innermost loop) at a time. */
typedef struct ocad_iter {
    const ocad_xfer *x;
    int64_t idx[PASSION_MAX_DIMS]; /* outer loop indices */
    int64_t j;                     /* index within the innermost loop */
    int64_t foff, moff;            /* of block j */
    int64_t left;                  /* blocks not yet visited */
} ocad_iter;

CORE_HIDDEN void ocad_iter_begin(ocad_iter *it, const ocad_xfer *x);
/* Blocks left in the current vector (>= 1 unless finished). */
CORE_HIDDEN int64_t ocad_iter_vec_left(const ocad_iter *it);
/* Advance by n blocks inside the current vector (n <= vec_left). */
CORE_HIDDEN void ocad_iter_skip(ocad_iter *it, int64_t n);
/* File step between blocks of the current vector (0 if one block). */
CORE_HIDDEN int64_t ocad_iter_fstep(const ocad_iter *it);
CORE_HIDDEN int64_t ocad_iter_mstep(const ocad_iter *it);

/* Copy n blocks of blen bytes with the given steps (src -> dst). */
CORE_HIDDEN void ocad_copy_blocks(char *dst, int64_t dstep, const char *src,
                                  int64_t sstep, int64_t n, int64_t blen);

/* ---- independent access (sieve.c) ---- */

/*
 * What one independent transfer may spend and what the file costs, passed
 * by the caller (an upper layer that knows better, e.g. from a page-cache
 * probe or a measurement, says so here; nothing is steered through the
 * context). NULL everywhere below means ocad_env_ctx(ctx).
 */
typedef struct ocad_env {
    double lat;     /* seconds per file request */
    double bw;      /* bytes per second of the file */
    int64_t budget; /* staging bytes the transfer may hold (>= 1) */
    int conc;       /* read requests that overlap in time: 0 = the
                       engine's (core_io_concurrency); 1 for data in the
                       page cache, whose reads are copies by the CPU */
    int warm;       /* the data is in the page cache: the reads' measured
                       time per request is learned (ocad_req_learn) */
} ocad_env;
/* From the options (io_latency, io_bandwidth, memory_budget), else the
   disk-like defaults; conc 0, warm 0. */
CORE_HIDDEN ocad_env ocad_env_ctx(const passion_ctx *ctx);
/* The read requests env's model counts as overlapping (>= 1). */
CORE_HIDDEN int ocad_env_conc(const passion_ctx *ctx, const ocad_env *env);

/*
 * The learned cost of one read request on data in the page cache: every
 * independent read on a warm env of at least OCAD_LEARN_MIN requests
 * records (its time - bytes / bw - copied bytes / OCAD_COPY_BW) /
 * requests, clamped to [1e-7, 1e-3] s; ocad_req_cost is the median of the
 * last OCAD_LEARN_KEEP samples of this rank, the smallest while there are
 * fewer than CORE_LEARN_TRUST (core_learned: one sample, taken by a
 * context's first warm read under load, would otherwise price every
 * cached request until the next; 0: none yet). A system call and a copy
 * from the page cache cost an order of magnitude more on some machines
 * than on others (a paravirtualised guest pays the most), so a constant
 * misprices many small direct reads against a few large ones. ocad_req_learn records one
 * sample (the tests feed it known values).
 */
#define OCAD_LEARN_KEEP 8
#define OCAD_LEARN_MIN 8
#define OCAD_COPY_BW 4e9
CORE_HIDDEN void ocad_req_learn(passion_ctx *ctx, double seconds);
CORE_HIDDEN double ocad_req_cost(const passion_ctx *ctx);
/* ocad's per-context state (ctx->ext[CORE_EXT_OCAD], made by the first
   sample or the first section access, freed at passion_finalize): the
   samples, a ring, and their median kept as they are learned; the last
   section access (passion_ctx_last_method): the method used, auto
   resolved (0 = none), and the collective model's prediction, set by
   ocad's and collective/'s section accesses. A rank without it (no
   memory) has learned nothing and reports no last method. */
typedef struct ocad_ext {
    double req_warm[OCAD_LEARN_KEEP];
    int req_warm_n, req_warm_i;
    double req_warm_med;
    int last_method;
    double last_predicted;
} ocad_ext;
/* what passion_ctx_last_method reports: the method of the last section
   access, and the prediction (left as it is by ocad_last_method) */
CORE_HIDDEN void ocad_last_method(passion_ctx *ctx, int method);
CORE_HIDDEN void ocad_last_predicted(passion_ctx *ctx, double predicted);
/* The state, or NULL while nothing was learned (tests). */
CORE_HIDDEN const ocad_ext *ocad_ext_of(const passion_ctx *ctx);
/*
 * Measure the cost of a cached read request before any was learned: one
 * batch to warm up (the engine's first use), then OCAD_CALIB_TRIES batches of OCAD_CALIB_READS requests of
 * min(blen, OCAD_CALIB_MAX) bytes spread over [lo, hi) (which the caller
 * found in the page cache), read as the independent methods read
 * (core_io_read_batch: one system call per batch on io_uring), the median
 * batch's time per request recorded as one sample (ocad_req_learn);
 * outside the counters. Without it the first calls on cached data are
 * priced with the constant COLL_WARM_LATENCY, which can be several times
 * a batched request's cost, and a choice that avoids independent reads
 * then never learns otherwise. Nothing
 * when a sample exists, for an O_DIRECT handle or a driver without
 * calibration reads (core_driver_ops.measure); a failed read leaves
 * nothing learned and no error.
 */
#define OCAD_CALIB_READS 16
#define OCAD_CALIB_TRIES 3
#define OCAD_CALIB_MAX 256
CORE_HIDDEN void ocad_req_calibrate(passion_ctx *ctx, core_fh *fh,
                                    int64_t lo, int64_t hi, int64_t blen);

/* Count the requests and bytes a method would use (no I/O); info->runs
   is left 0 (ocad_count_runs: one more scan, which auto's model does not
   need). */
CORE_HIDDEN void ocad_plan_count(passion_ctx *ctx, const ocad_xfer *x,
                                 int method, int op_write,
                                 passion_plan_info *info,
                                 const ocad_env *env);
/* The runs of x: blocks not adjacent to the previous one in the file. */
CORE_HIDDEN int64_t ocad_count_runs(const ocad_xfer *x);
/* Resolve AUTO to DIRECT or SIEVE for this plan. */
CORE_HIDDEN int ocad_method_choose(passion_ctx *ctx, const ocad_xfer *x,
                                   int op_write, int method,
                                   const ocad_env *env);
/* Move the plan's bytes between the file and memory. */
CORE_HIDDEN int ocad_xfer_read(passion_ctx *ctx, core_fh *fh,
                               const ocad_xfer *x, char *mem, int method,
                               const ocad_env *env);
CORE_HIDDEN int ocad_xfer_write(passion_ctx *ctx, core_fh *fh,
                                const ocad_xfer *x, const char *mem,
                                int method, const ocad_env *env);

/*
 * Write len bytes of src at file offset off converting the byte order
 * (unit as ocad_swap; 0 = a plain write) through a staging buffer of at
 * most the budget (whole elements of esize bytes); src is not modified.
 */
CORE_HIDDEN int ocad_write_conv(passion_ctx *ctx, core_fh *fh,
                                const char *src, int64_t len, int64_t off,
                                int unit, int64_t esize);

/*
 * The sieve engine's windows, for callers that issue the requests
 * themselves (prefetch/: asynchronous reads, sieving at completion).
 * ocad_hole_choose resolves the method to a hole limit (-1 = direct, one
 * block per request); ocad_window_next takes the next window from `it`
 * (within `budget` bytes, no hole above hmax); ocad_window_copy moves the
 * window's blocks (from `it`, the iterator as it was before the window was
 * taken) between a stage holding file bytes from offset `base` and memory.
 */
typedef struct ocad_window {
    int64_t w0, wend; /* file byte range */
    int64_t nblk;     /* blocks inside */
} ocad_window;
CORE_HIDDEN int64_t ocad_hole_choose(passion_ctx *ctx, const ocad_xfer *x,
                                     int op_write, int method, int *chosen);
CORE_HIDDEN ocad_window ocad_window_next(ocad_iter *it, int64_t budget,
                                         int64_t hmax);
CORE_HIDDEN void ocad_window_copy(ocad_iter *it, const ocad_window *w,
                                  int64_t base, char *stage, char *mem,
                                  int to_mem);

/* ---- files of the placement models (file.c, file_name.c,
   file_access.c) ---- */

typedef struct ocad_h5c ocad_h5c; /* fmt_h5_chunk.c */

struct passion_file {
    passion_array *a;
    passion_ctx *ctx;
    core_fh *fh;
    int writable;
    ocad_fview fv;
    int64_t lo[PASSION_MAX_DIMS]; /* valid section index range [lo, hi) */
    int64_t hi[PASSION_MAX_DIMS];
    int64_t data_bytes;           /* bytes of array data in the file */
    int64_t ident[2];             /* hashes, fixed at open: the path, and
                                     the array's layout in the file
                                     (dimensions, shape, element size,
                                     storage order, data offset); the
                                     collective calls compare them */
    int64_t busy;                 /* requests in flight and iterators
                                     using the file (close refuses) */
    ocad_h5c *h5c;                /* a chunked HDF5 dataset's reader
                                     (fmt_h5_chunk.c), else NULL */
    char *pattern;                /* local placement: the path pattern
                                     (passion_file_rename moves the set's
                                     description too) */
};

/* Lifetimes: an object that uses f (a request, an iterator) holds it from
   creation to its end; passion_file_close refuses while any is held. */
static inline void ocad_file_hold(passion_file *f)
{
    if (f)
        f->busy++;
}
static inline void ocad_file_release(passion_file *f)
{
    if (f)
        f->busy--;
}

/*
 * Validate an independent section request on f (bounds, memory side,
 * method auto/direct/sieve, writable, buffer) and build its plan.
 */
CORE_HIDDEN int ocad_section_prepare(passion_file *f, const passion_section *s,
                                     const void *buf, const passion_memspec *m,
                                     int method, int op_write, ocad_xfer *x);

/*
 * The name of rank's local array file from a path pattern (file.c): every
 * "%d" (or "%r") becomes the rank, "%%" a single '%', any other character
 * stays; a pattern without "%d"/"%r" gets ".rank" appended. Distinct ranks
 * give distinct names. *out is malloc'ed; 0 or -ENOMEM. No context needed.
 */
CORE_HIDDEN int ocad_local_path(const char *pat, int rank, char **out);
/* ocad_local_path for this rank of ctx, failures recorded (ENOMEM). */
CORE_HIDDEN int ocad_file_local_name(passion_ctx *ctx, const char *pat,
                                     char **out);
/* Set f->ident: hashes of the file's path and of the array's layout in it
   (a collective call sends both in its FAD); after open and rename. */
CORE_HIDDEN void ocad_file_ident(passion_file *f);
/* Rank 0 writes the description of the local set just created under pat
   (lset.c), complete, synced and renamed into place; a pattern that cannot
   have one gets none (0: the set is still usable by its spec). */
CORE_HIDDEN int ocad_file_lset_write(passion_file *f, const char *pat);

/* ---- .npy files (npy.c) ---- */

/*
 * A .npy header as numbers: the parser below needs no context and no MPI
 * (it is what the fuzz target tests/fuzz/fuzz_npy.c drives).
 */
typedef struct ocad_npy_info {
    char descr[32];  /* a simple type string: [<>|=]kind[digits][[unit]] */
    int fortran;     /* fortran_order */
    int nd;          /* 0..PASSION_MAX_DIMS */
    int64_t shape[PASSION_MAX_DIMS];
    int version;     /* major version of the preamble, 1..3 */
    int64_t data_off; /* preamble + header length: where the data starts */
} ocad_npy_info;
/* Bytes of the preamble (magic, version, length field) for version v. */
#define OCAD_NPY_PREAMBLE(v) ((v) == 1 ? 10 : 12)
/*
 * Parse the preamble at the start of buf (n bytes, at least 12 or the whole
 * file): fills in->version and in->data_off. 0, or -1 with *why set.
 */
CORE_HIDDEN int ocad_npy_parse_preamble(const unsigned char *buf, int64_t n,
                                        ocad_npy_info *in, const char **why);
/*
 * Parse a whole header (preamble and dict, buf holding at least data_off
 * bytes, more is ignored). 0, or -1 with *why a static message naming the
 * fault. Needs no NUL terminator: it never reads past buf + n.
 */
CORE_HIDDEN int ocad_npy_parse(const void *buf, int64_t n, ocad_npy_info *in,
                               const char **why);
/* The header numpy would write for in (malloc'ed, *len a multiple of 64);
   0, -ENOMEM, or -EINVAL if in is not one the parser accepts. */
CORE_HIDDEN int ocad_npy_format(const ocad_npy_info *in, char **hdr,
                                int64_t *len);
/* Item size in bytes of a simple descr ("<f4", "|u1", "<U3"), 0 if unknown. */
CORE_HIDDEN int64_t ocad_npy_itemsize(const char *descr);
/* The element type a descr names (kind, size, byte order with '|' and '='
   resolved to the machine's); 0, or -1 with *why naming the fault. */
CORE_HIDDEN int ocad_npy_descr_type(const char *descr, passion_kind *kind,
                                    int64_t *size, passion_endian *endian,
                                    const char **why);
/* The descr numpy writes for a type ("<f8", "|b1", ">c16", "|V12"); 0, or
   -1 for an invalid kind/size pair. */
CORE_HIDDEN int ocad_npy_descr_make(passion_kind kind, int64_t size,
                                    passion_endian endian, char *out,
                                    size_t n);
/* Format hooks (format.c; rank-local): an existing file's metadata, and
   a new complete file at path (header, zero data) for m. */
CORE_HIDDEN int ocad_npy_meta(passion_ctx *ctx, const char *path,
                              const char *obj, core_fmt_meta *m);
CORE_HIDDEN int ocad_npy_create(passion_ctx *ctx, const char *path,
                                const char *obj, const core_fmt_meta *m,
                                int64_t *data_offset);

/* ---- HDF5 datasets (fmt_hdf5.c, fmt_hdf5_dset.c, fmt_hdf5_create.c) ---- */

/*
 * The only code that calls libhdf5 (built with the HDF5 option).
 * Rank-local: the caller runs them on rank 0 and broadcasts.
 * ocad_h5_meta: the metadata of dataset dset of an existing file (a
 * contiguous dataset; anything else is refused with a message naming the
 * layout). ocad_h5_create: a new file at path holding dataset dset of m's
 * shape and type, contiguous, allocated; *data_offset where its data
 * starts. PASSION_ENOTSUP (with a message) when built without HDF5.
 */
CORE_HIDDEN int ocad_h5_meta(passion_ctx *ctx, const char *path,
                             const char *dset, core_fmt_meta *m);
CORE_HIDDEN int ocad_h5_create(passion_ctx *ctx, const char *path,
                               const char *dset, const core_fmt_meta *m,
                               int64_t *data_offset);
/* ocad_h5_list: the datasets of path (passion_array_list's rules; obj ""
   or "/" the whole file, a group the datasets below it, a dataset only
   itself): entries[0 .. min(max, *count) - 1], *count how many. */
CORE_HIDDEN int ocad_h5_list(passion_ctx *ctx, const char *path,
                             const char *obj, passion_array_entry *e,
                             int max, int *count);

/*
 * Chunked HDF5 datasets (fmt_h5_chunk.c, fmt_h5_chunkread.c): every rank
 * opens the dataset with libhdf5 for its chunk index (ocad_h5c_open at
 * passion_open, ocad_h5c_close at passion_file_close); passion reads the
 * chunks' stored bytes through its driver and decodes them itself.
 * ocad_h5c_read: rank-local read of section s (validated) into buf (m the
 * memory side, NULL packed), every chunk it touches read and decoded on
 * this rank; 0 or a code with the detail written. Without HDF5 open is
 * ENOTSUP and a file never has the state.
 */
CORE_HIDDEN int ocad_h5c_open(passion_ctx *ctx, const char *path,
                              const char *dset, ocad_h5c **out);
CORE_HIDDEN void ocad_h5c_close(ocad_h5c *c);
CORE_HIDDEN int ocad_h5c_read(passion_file *f, const passion_section *s,
                              void *buf, const passion_memspec *m);
/*
 * The pieces the collective layer needs to read each chunk once
 * (fmt_h5_chunkgeom.c, fmt_h5_chunkread.c; f a chunked dataset):
 * ocad_h5c_shape_of: its chunk geometry. ocad_h5c_touched: how many
 * chunks section s touches along dimension d (their indices, ascending,
 * into list unless NULL). ocad_h5c_box: 1 if s has elements in chunk idx,
 * their section indices [k0, k1) per dimension. ocad_h5c_put: those
 * elements, from the decoded chunk data (this machine's order; NULL: the
 * fill value), into dst at element (doff[d] + k[d]) * dstride[d] summed
 * (k the section index), in the section's index order: a packed piece is
 * dstride of the box and doff = -k0. ocad_h5c_each: chunks idx[0 .. n)
 * (nd indices each) read and decoded within budget bytes of staging,
 * each handed once to use (on a worker thread: it may write only that
 * chunk's own bytes) with its position in the list; 0 or a code with the
 * detail written (rank-local).
 */
typedef struct ocad_h5c_shape {
    int nd;
    int64_t chunk[PASSION_MAX_DIMS];
    int64_t nchunks[PASSION_MAX_DIMS];
    int64_t esize, chunk_bytes;
} ocad_h5c_shape;
typedef void (*ocad_h5c_use)(void *arg, int64_t pos, const int64_t *idx,
                             const unsigned char *data);
CORE_HIDDEN void ocad_h5c_shape_of(const passion_file *f,
                                   ocad_h5c_shape *out);
CORE_HIDDEN int64_t ocad_h5c_touched(const passion_file *f,
                                     const passion_section *s, int d,
                                     int64_t *list);
CORE_HIDDEN int ocad_h5c_box(const passion_file *f, const passion_section *s,
                             const int64_t *idx, int64_t *k0, int64_t *k1);
CORE_HIDDEN void ocad_h5c_put(const passion_file *f, const passion_section *s,
                              const int64_t *idx, const unsigned char *data,
                              char *dst, const int64_t *dstride,
                              const int64_t *doff);
CORE_HIDDEN int ocad_h5c_each(passion_file *f, int64_t n, const int64_t *idx,
                              int64_t budget, ocad_h5c_use use, void *arg);
/* ENOTSUP with the detail naming what (an access path other than a
   section read) if f is a chunked dataset, else 0. */
CORE_HIDDEN int ocad_file_chunked_refuse(const passion_file *f,
                                         const char *what);

/* ---- element types and byte order (convert.c) ---- */

/* 1 if (kind, size) is a valid element type (see passion_kind). */
CORE_HIDDEN int ocad_type_valid(passion_kind k, int64_t size);
/* The natural kind of a size (passion_array_spec_init). */
CORE_HIDDEN passion_kind ocad_kind_default(int64_t size);
/* This machine's byte order, LITTLE or BIG. */
CORE_HIDDEN passion_endian ocad_native(void);
/* NATIVE -> the machine's order; LITTLE and BIG stay. */
CORE_HIDDEN passion_endian ocad_endian_resolve(passion_endian e);
/* Bytes per swapped unit for data of (kind, size) stored in order e: 0
   when it needs no conversion on this machine, else 2, 4, 8 or 16. */
CORE_HIDDEN int ocad_swap_unit(passion_kind k, int64_t size, passion_endian e);
/* Reverse the bytes of every unit-byte unit of p[0, bytes) in place
   (bytes a multiple of unit; unit 0 or 1: nothing). The one conversion
   routine: every access path calls it on the data it moves. */
CORE_HIDDEN void ocad_swap(void *p, int64_t bytes, int unit);
/* The same on n blocks of len bytes, step bytes apart. */
CORE_HIDDEN void ocad_swap_blocks(char *p, int64_t step, int64_t n,
                                  int64_t len, int unit);
/* numpy-style name of a type for messages: "<f8", ">i4", "|b1", "|V12",
   "=f8" (NATIVE). */
CORE_HIDDEN void ocad_type_str(passion_kind k, int64_t size, passion_endian e,
                               char *buf, size_t n);
CORE_HIDDEN const char *ocad_kind_name(passion_kind k);

/* ---- the format registry (format.c) ---- */

/*
 * One file format passion can describe by itself. Hooks are rank-local
 * (format.c runs them on rank 0 and broadcasts the outcome); NULL hooks
 * mean "not in this build" (PASSION_ENOTSUP naming the format).
 */
typedef struct ocad_format {
    const char *name;  /* "raw", "npy", "hdf5", "netcdf", "local" */
    const char *exts;  /* extensions, space separated (".h5 .hdf5"), or "" */
    int objects;       /* 1: a file holds named objects, "PATH:OBJECT" */
    passion_endian endian; /* the one byte order of the format's data
                              (netCDF classic: BIG), NATIVE = any */
    /* 1 if the first n bytes of a file (n <= OCAD_FMT_HEAD) are this
       format's magic */
    int (*magic)(const unsigned char *head, int64_t n);
    /* metadata of object obj ("" = the file's one array) of path */
    int (*read_meta)(passion_ctx *ctx, const char *path, const char *obj,
                     core_fmt_meta *m);
    /* a new complete file at path (a temporary, renamed into place by the
       caller) holding obj of m's shape and type, data zero; where its data
       starts */
    int (*create)(passion_ctx *ctx, const char *path, const char *obj,
                  const core_fmt_meta *m, int64_t *data_offset);
    /* the arrays of path (obj "": all; passion_array_list's rules);
       NULL: the file's one array, from read_meta */
    int (*list)(passion_ctx *ctx, const char *path, const char *obj,
                passion_array_entry *e, int max, int *count);
    /* the record dimension of path grown from `from` to `to` records for
       obj (a record variable): the new records of every record variable
       written with their fill values, then the header's record count;
       NULL: the format has no records */
    int (*grow)(passion_ctx *ctx, const char *path, const char *obj,
                int64_t from, int64_t to);
    /* local sets only (helper hooks): 1 if name (a pattern) names a set
       that describes itself; the set's whole spec; write the description
       of a set just created (rank 0, after every rank's file exists) */
    int (*local_probe)(passion_ctx *ctx, const char *name);
    int (*local_spec)(passion_ctx *ctx, const char *name,
                      passion_array_spec *spec);
    int (*local_describe)(passion_ctx *ctx, const char *name,
                          const passion_array_spec *spec);
} ocad_format;

enum { OCAD_FMT_RAW = 0, OCAD_FMT_NPY, OCAD_FMT_HDF5, OCAD_FMT_NETCDF,
       OCAD_FMT_LOCAL, OCAD_FMT_COUNT };
#define OCAD_FMT_HEAD 16 /* bytes read to tell formats by their magic */

CORE_HIDDEN const ocad_format *ocad_format_get(int id);
/* The format a path's extension names (OCAD_FMT_RAW if none). */
CORE_HIDDEN int ocad_format_by_ext(const char *path);

/* A name resolved (on rank 0, then broadcast): plain bytes. */
typedef struct ocad_fmt_info {
    int fmt;          /* OCAD_FMT_* */
    int split;        /* index of the ':' splitting PATH:OBJECT, -1 none */
    int have_meta;    /* m holds the file's metadata */
    core_fmt_meta m;
    passion_array_spec spec; /* local sets: the set's whole spec */
} ocad_fmt_info;

/*
 * Resolve name on rank 0 and broadcast: split it (the rule of passion_open
 * in passion.h; on create, PATH:OBJECT when PATH ends in an extension of a
 * format with objects), choose the format (by_magic: from the file's first
 * bytes, else from the extension) and, unless create, read the metadata of
 * a format that has a header. Collective; the same code on every rank.
 */
CORE_HIDDEN int ocad_fmt_resolve(passion_ctx *ctx, const char *name,
                                 int create, int by_magic,
                                 ocad_fmt_info *info);
/* passion_array_list's work: rank 0 lists, the entries are broadcast
   (max equal on every rank, checked by the caller). Collective. */
CORE_HIDDEN int ocad_fmt_list(passion_ctx *ctx, const char *name,
                              passion_array_entry *e, int max, int *count);
/* The name's PATH and OBJECT parts as info splits them (malloc'ed via the
   context; *obj "" when none). */
CORE_HIDDEN int ocad_fmt_split(passion_ctx *ctx, const char *name,
                               const ocad_fmt_info *info, char **path,
                               char **obj);
/*
 * Compare a file's metadata with an array spec: shape, storage order,
 * kind and size, byte order unless the spec's is NATIVE; PASSION_EFORMAT
 * naming both ("x.npy: file has >i8 [3, 4] C order, spec says <f8 [3, 4]
 * C order") or 0.
 */
CORE_HIDDEN int ocad_fmt_check(passion_ctx *ctx, const char *path,
                               const core_fmt_meta *m,
                               const passion_array_spec *spec);
/*
 * The metadata an open sees: *out = *m, except for a record variable
 * (m->rec_step > 0) opened writable with more records than the file has
 * (shape[0] > m->shape[0], the other dimensions the file's): then
 * out->shape[0] is shape[0], the records to append (returns 1; 0 when
 * unchanged, also when the grown data would overflow 64-bit offsets).
 */
CORE_HIDDEN int ocad_fmt_records(const core_fmt_meta *m, int ndims,
                                 const int64_t *shape, int writable,
                                 core_fmt_meta *out);
/* Bytes from m->data_offset to the end of its last element (a record
   variable: its last record's end). */
CORE_HIDDEN int64_t ocad_fmt_span(const core_fmt_meta *m);
/* Open a's file(s) for a name ocad_fmt_resolve resolved (info: RAW with
   split -1 for a raw or local name). Collective. */
CORE_HIDDEN int ocad_file_open_resolved(passion_array *a, const char *name,
                                        passion_mode mode,
                                        const ocad_fmt_info *info,
                                        passion_file **out);

/* ---- netCDF classic headers (fmt_netcdf_parse.c, fmt_netcdf_write.c)
   and files (fmt_netcdf.c) ---- */

#define OCAD_NC_NAME_MAX 256 /* NC_MAX_NAME */
/* the list tags of the header */
#define OCAD_NC_TAG_DIM 0x0A
#define OCAD_NC_TAG_VAR 0x0B
#define OCAD_NC_TAG_ATT 0x0C
/* One variable of a netCDF classic file, as the header describes it. */
typedef struct ocad_nc_var {
    int version;        /* 1, 2 or 5 (CDF-1, CDF-2, CDF-5) */
    int64_t header_len; /* bytes of the header */
    int64_t numrecs;    /* -1: STREAMING */
    int64_t nvars;      /* variables in the file */
    int64_t index;      /* of this one */
    char name[OCAD_NC_NAME_MAX + 1];
    int nc_type;        /* 1 byte .. 11 uint64 */
    int record;         /* 1: a record variable (first dimension the
                           unlimited one) */
    int64_t nrecvars;   /* record variables in the file */
    int64_t rec_size;   /* bytes of one record of the file (recsize) */
    int64_t begin;      /* the header's begin */
    int64_t vsize;      /* bytes of one record of this variable in the
                           file (padded to 4 unless it is the only record
                           variable); a fixed-size one's bytes, padded */
    int fill_found;     /* a _FillValue attribute */
    int fill_ok;        /* ... of the variable's type and one value */
    unsigned char fill[8]; /* its value as the file has it (big-endian) */
    core_fmt_meta m;    /* shape, type (endian BIG), data offset, bytes,
                           rec_step = rec_size for a record variable */
} ocad_nc_var;
/*
 * Parse the header at the start of buf (n bytes of a file of file_size
 * bytes) and describe the variable named var (or, var NULL, the one of
 * that index). 0; PASSION_ESHORT when n < file_size and the header goes
 * on past n (read more and call again); PASSION_EFORMAT for a bad header;
 * PASSION_ENOTSUP for a variable passion cannot access (more than 7
 * dimensions, a record variable while numrecs is STREAMING); PASSION_EINVAL
 * when there is no such variable. The reason in why. Never reads past
 * buf + n.
 */
CORE_HIDDEN int ocad_nc_parse(const void *buf, int64_t n, int64_t file_size,
                              const char *var, int64_t index,
                              ocad_nc_var *out, char *why, size_t wlen);
/*
 * The header of a new file of CDF-`version` (1, 2, 5) holding the one
 * fixed-size variable var of m's shape and type (dimensions var_dim0...;
 * a column-major m is stored transposed: dimensions reversed), zero-padded
 * so that the data begins at a multiple of align bytes: *hdr (malloc'ed)
 * of *len bytes, the data offset. 0, or a PASSION_E* code with the reason
 * in why (EINVAL bad name, ENOTSUP a type or size the version lacks).
 */
CORE_HIDDEN int ocad_nc_format(int version, const char *var,
                               const core_fmt_meta *m, int64_t align,
                               unsigned char **hdr, int64_t *len, char *why,
                               size_t wlen);
/* nc_type for a passion kind and size in CDF-version, 0 if none. */
CORE_HIDDEN int ocad_nc_type_of(int version, passion_kind kind,
                                int64_t size);
/* 1 if s is a name ocad_nc_format accepts. */
CORE_HIDDEN int ocad_nc_name_ok(const char *s);
/* Read the header of the open file fh (fsize bytes) into *buf (*n bytes,
   core_malloc'ed, the caller frees it) until it parses, describing var (or
   variable index when var is NULL) into v; *parsed 1 when the parser ran
   (its code returned, the reason in why), else a code with the detail
   written (a read error, ENOMEM, a header too long). */
CORE_HIDDEN int ocad_nc_load(passion_ctx *ctx, core_fh *fh, const char *path,
                             int64_t fsize, const char *var, int64_t index,
                             unsigned char **buf, int64_t *n, ocad_nc_var *v,
                             char *why, size_t wlen, int *parsed);
/* Read the header of path (rank-local) and describe variable obj ("" =
   the file's only variable); errors recorded with the path. */
CORE_HIDDEN int ocad_nc_describe(passion_ctx *ctx, const char *path,
                                 const char *obj, ocad_nc_var *v);
/* The variables of path (passion_array_list's rules; obj "" all of them,
   a name only that one); rank-local. */
CORE_HIDDEN int ocad_nc_list(passion_ctx *ctx, const char *path,
                             const char *obj, passion_array_entry *e,
                             int max, int *count);
/* Format hooks (format.c; rank-local): a variable's metadata, and a new
   complete file at path holding variable obj of m (CDF version from the
   option netcdf_format; data zero, big-endian). */
CORE_HIDDEN int ocad_nc_meta(passion_ctx *ctx, const char *path,
                             const char *obj, core_fmt_meta *m);
CORE_HIDDEN int ocad_nc_create(passion_ctx *ctx, const char *path,
                               const char *obj, const core_fmt_meta *m,
                               int64_t *data_offset);
/* The format's grow hook (fmt_netcdf_rec.c; rank-local): records [from,
   to) of every record variable of path written with its _FillValue (or
   netCDF's default fill), synced, then numrecs = to in the header; a
   file whose numrecs is no longer `from` is refused (PASSION_EMISMATCH),
   as are fill values of another type and record variables that do not
   tile the record. */
CORE_HIDDEN int ocad_nc_grow(passion_ctx *ctx, const char *path,
                             const char *obj, int64_t from, int64_t to);
/* ---- local array set descriptions (lset.c) ---- */

#define OCAD_LSET_VERSION 1
#define OCAD_LSET_FILES 1024 /* bytes for the pattern's file name */
/* A local set's description as numbers (lset.c states the format). */
typedef struct ocad_lset {
    int version;
    int nranks;
    int ndims;
    int64_t shape[PASSION_MAX_DIMS];
    int kind;       /* passion_kind */
    int64_t elem_size;
    int big_endian; /* the files' byte order */
    int storage;    /* passion_storage */
    int order[PASSION_MAX_DIMS];
    int grid[PASSION_MAX_DIMS];
    int dist[PASSION_MAX_DIMS];      /* passion_dist */
    int64_t block[PASSION_MAX_DIMS]; /* effective m (shape if collapsed) */
    int64_t ghost[PASSION_MAX_DIMS];
    char files[OCAD_LSET_FILES];     /* the pattern's file name */
} ocad_lset;
/* The description's name for a pattern (malloc'ed); -EINVAL if the
   pattern's directory part holds a conversion, -ENOMEM. */
CORE_HIDDEN int ocad_lset_name(const char *pat, char **out);
/* The text of d (malloc'ed, *len bytes); 0, -EINVAL, -ENOMEM. */
CORE_HIDDEN int ocad_lset_format(const ocad_lset *d, char **text,
                                 int64_t *len);
/* Parse n bytes (no terminator needed, never read past buf + n): 0, or -1
   with *why a static message naming the fault. */
CORE_HIDDEN int ocad_lset_parse(const void *buf, int64_t n, ocad_lset *d,
                                const char **why);
/* The spec's element kind as the description's index (bytes int uint
   float complex bool) and whether its files are big-endian. */
CORE_HIDDEN int ocad_lset_kind(const passion_array_spec *s);
CORE_HIDDEN int ocad_lset_big_endian(const passion_array_spec *s);
/* Collective: rank 0 reads and parses the description of the set name
   (its pattern or its description file), every rank gets it and the
   files' pattern (malloc'ed). */
CORE_HIDDEN int ocad_lset_read(passion_ctx *ctx, const char *name,
                               ocad_lset *d, char **pattern);
/* The spec a description gives (local placement); 0 or PASSION_EINVAL. */
CORE_HIDDEN int ocad_lset_spec(const ocad_lset *d, passion_array_spec *s);
CORE_HIDDEN void ocad_lset_set_type(const ocad_lset *d,
                                    passion_array_spec *s);
/* The registry's hooks for local sets (rank-local, format.c calls them on
   rank 0): 1 if name is a set's pattern (a %d or %r in its file name) or
   its description (".passion"), else 0; the spec its description gives
   (PASSION_ENOENT naming the description when there is none). */
CORE_HIDDEN int ocad_lset_probe(passion_ctx *ctx, const char *name);
CORE_HIDDEN int ocad_lset_spec0(passion_ctx *ctx, const char *name,
                                passion_array_spec *spec);
/* Open a local set by its name (collective): PASSION_EMISMATCH, pointing
   to `passion convert`, when it was written by another number of ranks. */
CORE_HIDDEN int ocad_lset_open(passion_ctx *ctx, const char *name,
                               passion_mode mode, passion_array **a,
                               passion_file **f);

#endif
