/*
 * etp_window.c - the file requests of one chunk: data sieving over the
 * union of every rank's elements in the chunk (thesis 6.3.1: "the smallest
 * section containing all the data needed from the file domain", read with
 * data sieving; 5.5.1), refined by the cost-aware hole limit of sieve.c: a
 * gap larger than hole = latency x bandwidth is skipped rather than read.
 *
 * The union is a merge of one cursor per rank, vector by vector (a vector
 * whose pieces are further apart than the hole limit is taken piece by
 * piece), so the work is O(vectors x ranks) and the memory O(ranks).
 *
 * Holes are judged over the union of all ranks' elements in the chunk,
 * which the aggregator lays into its stage (thesis 6.3.2: read first only
 * the parts of the domain no rank writes). A strided vector taken whole
 * has gaps of its own that other ranks' vectors may fill (column blocks of
 * a C-order array: every rank's rows have gaps, the ranks together none),
 * so its gaps alone prove nothing; the window counts the bytes of the
 * elements it takes instead. Where no two sections share an element
 * (p->overlap, exact for writes) those elements are disjoint and inside
 * the window, so the window has holes exactly when they sum to less than
 * its length. Where sections share elements the count overstates the
 * union and the vectors' own gaps decide, as before: a covered window may
 * be read, a window with holes never goes unread.
 *
 * Invariants: windows are disjoint and increasing; every element starting
 * in [a, b) lies inside one window; a window flagged without holes is
 * covered entirely by elements (so a write needs no read first); the same
 * chunk always yields the same windows and flags.
 */
#include "coll.h"

#include <stdint.h>

/* Does window [w0, w1) hold bytes of no element? gapped: some vector in
   it had gaps or some piece started past the window's end so far; cov:
   the bytes of the elements taken into it (see above). */
static int window_holes(const coll_plan *p, int64_t w0, int64_t w1,
                        int gapped, int64_t cov)
{
    return p->overlap ? gapped : cov < w1 - w0;
}

int coll_windows(coll_plan *p, coll_cur *curs, int64_t a, int64_t b,
                 coll_window_fn fn, void *arg)
{
    const int P = p->P;
    const int64_t hole = p->hole;
    /* heads: the pending vector of each rank; n == 0 means finished */
    coll_vec *head = (coll_vec *)(curs + P);
    for (int r = 0; r < P; r++) {
        head[r].n = 0;
        if (!p->elems[r])
            continue;
        coll_cur_seek(&curs[r], &p->x[r], p->esize, a, b);
        if (!coll_cur_next(&curs[r], &head[r], INT64_MAX))
            head[r].n = 0;
    }
    int64_t w0 = -1, w1 = -1, cov = 0;
    int holes = 0;
    for (;;) {
        int best = -1;
        for (int r = 0; r < P; r++)
            if (head[r].n > 0 && (best < 0 || head[r].foff < head[best].foff))
                best = r;
        if (best < 0)
            break;
        coll_vec *h = &head[best];
        int64_t s = h->foff, e, bytes;
        int dense;
        if (h->n > 1 && h->fstep - h->len > hole) {
            e = s + h->len; /* one piece; the gap after it is skipped */
            bytes = h->len;
            dense = 1;
            h->foff += h->fstep;
            h->n--;
        } else {
            e = s + (h->n - 1) * h->fstep + h->len;
            bytes = h->n * h->len;
            dense = h->n == 1 || h->fstep == h->len;
            if (!coll_cur_next(&curs[best], h, INT64_MAX))
                h->n = 0;
        }
        if (w0 < 0) {
            w0 = s;
            w1 = e;
            holes = !dense;
            cov = bytes;
        } else if (s - w1 > hole) {
            int rc = fn(arg, w0, w1, window_holes(p, w0, w1, holes, cov));
            if (rc)
                return rc;
            w0 = s;
            w1 = e;
            holes = !dense;
            cov = bytes;
        } else {
            holes |= !dense || s > w1;
            cov += bytes;
            if (e > w1)
                w1 = e;
        }
    }
    return w0 >= 0 ? fn(arg, w0, w1, window_holes(p, w0, w1, holes, cov))
                   : PASSION_OK;
}
