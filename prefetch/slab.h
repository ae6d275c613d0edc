/*
 * slab.h - the slab iterator's state (struct passion_slab_iter) and its
 * plan, shared by prefetch/slab.c (the iteration) and prefetch/slab_plan.c
 * (the plan); prefix pf_slab_.
 *
 * Invariants: slab k's range along dim (pf_slab_range) is computed, not
 * stored; the slabs cover 0..n-1 in order without overlap, each at most
 * width indices; every buffer is pad + bbytes bytes of staging memory, its
 * index 0 pad bytes past the start; a slot's request pointers are NULL
 * when nothing is in flight on it.
 */
#ifndef PASSION_PF_SLAB_H
#define PASSION_PF_SLAB_H

#include "pf.h"

#define SLAB_NIN 3
#define SLAB_NOUT 2

struct passion_slab_iter {
    passion_ctx *ctx;
    passion_file *f, *out;
    passion_slab_opts o;
    int nd, dim, pos;          /* pos: dim's place in storage order */
    int64_t esize;
    int64_t n, halo, width, nslabs;
    int64_t pw;                /* planned width: width, less 2 (au - 1)
                                  when the boundaries are aligned */
    int64_t au, ab0;           /* aligned boundaries: ab0 + j au (au > 1),
                                  ab0 in [1, au]; au = 1: as planned */
    int64_t pad;               /* bytes before each buffer's index 0 */
    int64_t nmid;              /* ramped: full-width slabs between the ramps;
                                  -1 = no ramp */
    int64_t nloc[PASSION_MAX_DIMS], gh[PASSION_MAX_DIMS];
    int64_t bshape[PASSION_MAX_DIMS];
    int64_t outer, inner;      /* buffer = outer x bshape[dim] x inner */
    int64_t bbytes;
    int nin, nout;
    char *inb[SLAB_NIN], *outb[SLAB_NOUT];
    int inreg[SLAB_NIN], outreg[SLAB_NOUT]; /* registered slots, -1 none */
    passion_request *inreq[SLAB_NIN], *wbreq[SLAB_NIN], *outreq[SLAB_NOUT];
    int hinted[SLAB_NIN];      /* slot's slab advised, read at hand-out */
    int64_t hlo[SLAB_NIN], hhi[SLAB_NIN]; /* its advised file range */
    int64_t k;                 /* current slab, -1 before the first */
    int cur;                   /* its in slot */
    int dirty;
    int rc;
};

/* Validate the options on f and plan the sweep: geometry, width, ramp,
   alignment, buffers (staging). Local; the reason in the detail. */
CORE_HIDDEN int pf_slab_setup(passion_slab_iter *it, passion_file *f,
                              const passion_slab_opts *o);
/* Register the buffers with the engine when it pays (io_uring, O_DIRECT,
   a sweep of at least twice their bytes); never fails. */
CORE_HIDDEN void pf_slab_register(passion_slab_iter *it);
/* Unregister and free the buffers and the iterator. */
CORE_HIDDEN void pf_slab_release(passion_slab_iter *it);
/* Slab k's indices along dim: the plan, its inner boundaries moved down
   to aligned ones when au > 1. */
CORE_HIDDEN void pf_slab_range(const passion_slab_iter *it, int64_t k,
                               int64_t *start, int64_t *count);
/* Section of slab k from `skip` indices into its halo'd extent along dim,
   into its buffer. */
CORE_HIDDEN void pf_slab_read_section(const passion_slab_iter *it, int64_t k,
                                      int skip, passion_section *s,
                                      passion_memspec *m);
/* The interior of slab k (what is written back). */
CORE_HIDDEN void pf_slab_write_section(const passion_slab_iter *it, int64_t k,
                                       passion_section *s,
                                       passion_memspec *m);
/* Copy 2*halo indices along dim: src positions [from, ..) to dst [0, ..);
   counted as reuse. */
CORE_HIDDEN void pf_slab_reuse_copy(passion_slab_iter *it, char *dst,
                                    const char *src, int64_t from);

#endif
