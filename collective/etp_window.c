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
 * Invariants: windows are disjoint and increasing; every element starting
 * in [a, b) lies inside one window; a window flagged without holes is
 * covered entirely by elements (so a write needs no read first); the same
 * chunk always yields the same windows.
 */
#include "coll.h"

#include <stdint.h>

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
    int64_t w0 = -1, w1 = -1;
    int holes = 0;
    for (;;) {
        int best = -1;
        for (int r = 0; r < P; r++)
            if (head[r].n > 0 && (best < 0 || head[r].foff < head[best].foff))
                best = r;
        if (best < 0)
            break;
        coll_vec *h = &head[best];
        int64_t s = h->foff, e;
        int dense;
        if (h->n > 1 && h->fstep - h->len > hole) {
            e = s + h->len; /* one piece; the gap after it is skipped */
            dense = 1;
            h->foff += h->fstep;
            h->n--;
        } else {
            e = s + (h->n - 1) * h->fstep + h->len;
            dense = h->n == 1 || h->fstep == h->len;
            if (!coll_cur_next(&curs[best], h, INT64_MAX))
                h->n = 0;
        }
        if (w0 < 0) {
            w0 = s;
            w1 = e;
            holes = !dense;
        } else if (s - w1 > hole) {
            int rc = fn(arg, w0, w1, holes);
            if (rc)
                return rc;
            w0 = s;
            w1 = e;
            holes = !dense;
        } else {
            holes |= !dense || s > w1;
            if (e > w1)
                w1 = e;
        }
    }
    return w0 >= 0 ? fn(arg, w0, w1, holes) : PASSION_OK;
}
