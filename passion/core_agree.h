/*
 * core_agree.h - the agreement of collective calls (prefix core_agree,
 * core_same; passion/agree.c).
 *
 * Invariants: every rank of the context calls these together, in the same
 * order; all ranks get the same code (the lowest failing rank's, with its
 * detail), and no rank is left waiting when another failed.
 */
#ifndef PASSION_CORE_AGREE_H
#define PASSION_CORE_AGREE_H

#include <stddef.h>
#include "passion.h"
#include "core_base.h"

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

#endif
