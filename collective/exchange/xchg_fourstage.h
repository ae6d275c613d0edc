/*
 * xchg_fourstage.h - the inside of the four-stage exchange, shared by
 * its files only: xchg_fourstage.c (the model, the stages, the run),
 * xchg_fs_grid.c (the node array and the row schedule: coll_grid_make,
 * coll_row_schedule, declared in xchg.h) and xchg_fs_msg.c (the
 * messages: their format, sending, receiving, draining).
 *
 * Invariants:
 *  - a message is [coll_fs_hdr][count descriptors][data], the data of
 *    descriptor i after that of i - 1; total counts the whole message;
 *  - a node that failed (run->fail) still sends every message of the
 *    schedule, well-formed and empty, and drains every message it
 *    receives, so that no node waits; run->rc holds the first failure.
 */
#ifndef PASSION_COLL_XCHG_FOURSTAGE_H
#define PASSION_COLL_XCHG_FOURSTAGE_H

#include "xchg.h"

typedef struct coll_fs_hdr {
    int64_t total, nseg;
} coll_fs_hdr;

typedef struct coll_fs_desc {
    int32_t src, dst;
    int64_t off, len;
} coll_fs_desc;

typedef struct coll_fs_piece {
    int32_t src, dst;
    int64_t off, len;
    const char *ptr;
    int key;  /* bucket of the stage */
    int user; /* ptr is in the caller's send buffer */
} coll_fs_piece;

typedef struct coll_fs_buf {
    char *p;
    int64_t bytes, payload;
} coll_fs_buf;

typedef struct coll_fs_bufs {
    coll_fs_buf *v;
    int n, cap;
} coll_fs_bufs;

/* one outgoing message */
typedef struct coll_fs_msg {
    int peer;
    int64_t first, count; /* range of out[] */
    char *hdr;            /* header and descriptors (staging) */
    int64_t hdr_bytes;
    MPI_Request *req;     /* nreq requests: &one, or malloc'd */
    MPI_Request one;
    int nreq;
} coll_fs_msg;

typedef struct coll_fs_run {
    coll_xchg_plan *pl;
    coll_grid g;
    int x, y;        /* my row and column */
    int nb;          /* non-blocking variant */
    int fail;        /* local failure: empty messages, drain */
    int rc;
    coll_fs_piece *held;
    int64_t nheld;
    coll_fs_bufs cur;     /* buffers behind held[] */
    coll_fs_bufs next;    /* buffers being received */
    coll_fs_bufs old;     /* buffers still read by posted sends (NB) */
    coll_fs_msg *pend;    /* sends of the previous stage (NB) */
    int npend;
    /* tables in pl->scratch: steps, two message arrays (dual, for NB),
       sources, done flags, schedule work */
    int cap;
    coll_step *st;
    coll_fs_msg *msgs[2];
    int *srcs;
    char *done;
    int *work;
} coll_fs_run;

/* The run fails locally (the first failure is kept in run->rc, with its
   detail): from here on its messages are empty and what comes is
   drained. Returns run->rc. */
CORE_HIDDEN int coll_fs_failed(coll_fs_run *run, int rc, const char *what);
/* A received buffer joins b (freed by coll_fs_bufs_free). */
CORE_HIDDEN int coll_fs_bufs_push(coll_fs_run *run, coll_fs_bufs *b, char *p,
                                  int64_t bytes, int64_t payload);
CORE_HIDDEN void coll_fs_bufs_free(coll_fs_run *run, coll_fs_bufs *b);
/* Post message m of pieces out[m->first .. +count) to m->peer (empty
   when the run failed). */
CORE_HIDDEN void coll_fs_post(coll_fs_run *run, coll_fs_msg *m,
                              const coll_fs_piece *out, int tag);
/* What a posted message held, given back (its sends complete). */
CORE_HIDDEN void coll_fs_msg_done(coll_fs_run *run, coll_fs_msg *m);
/* Wait for one message from any not done of srcs (nsrc of them) and
   take it: its buffer joins run->next, its pieces are appended to *in.
   Returns the index in srcs that was served. */
CORE_HIDDEN int coll_fs_recv_one(coll_fs_run *run, const int *srcs, int nsrc,
                                 const char *done, int tag,
                                 coll_fs_piece **in, int64_t *nin,
                                 int64_t *capin);

#endif
