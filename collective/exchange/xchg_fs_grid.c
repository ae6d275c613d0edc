/*
 * xchg_fs_grid.c - the stage schedule of the four-stage exchange (Liu,
 * Wang and Prasanna, "Portable and scalable algorithm for irregular
 * all-to-all communication", JPDC 2002, section 3.2.2): the node array
 * and the schedule of the row stages (I and III).
 *
 * Ranks form a row-major array of C columns and R rows; the first r
 * columns are complete (R nodes), the others have R - 1 (when
 * r > R - 1, C becomes floor(sqrt P)). The missing nodes of the last
 * row are pseudo-nodes: a message from node (R-1, i) to the pseudo-node
 * of column c goes to node (i, c) (3.2.2 (A)).
 *
 * Invariants: the grid is a function of P alone, the same on every
 * rank; the row schedule is the Revised R-Schedule, with the messages
 * of the incomplete row first and the stalls of the priority schedule
 * (3.2.2 (B)) found by simulation, so that in every step each node
 * receives at most one message (contention-free).
 */
#include "xchg.h"

#include <string.h>

static int exists(const coll_grid *g, int x, int c)
{
    return x < g->R - 1 || (x == g->R - 1 && (g->r == 0 || c < g->r));
}

/* the node that takes row x's message for column c (3.2.2 (A)) */
static int row_target(const coll_grid *g, int x, int y, int c)
{
    return exists(g, x, c) ? x * g->C + c : y * g->C + c;
}

int coll_row_schedule(const coll_grid *g, int node, coll_step *st, int *work)
{
    int C = g->C, r = g->r, x = node / C, y = node % C;
    for (int t = 0; t < 2 * C; t++)
        st[t].to = st[t].from = -1;
    if (C <= 1)
        return 0;
    if (r == 0 || x >= r) {
        /* R-Schedule over the C positions of the row */
        for (int t = 1; t < C; t++) {
            int pc = (y + t) % C, qc = (y - t + C) % C;
            st[t - 1].to = row_target(g, x, y, pc);
            st[t - 1].from = exists(g, x, qc) ? x * C + qc : -1;
        }
        return C - 1;
    }
    /* row x < r also receives from e = (R-1, x), which follows its own
       row's R-Schedule and so sends into row x at fixed steps; the row's
       nodes send in priority order x, x-1, ..., x+1 and stall when their
       receiver is taken (Fig. 10) */
    int e = (g->R - 1) * C + x, T = 0;
    int *next = work, *claimed = work + C;
    for (int c = 0; c < C; c++)
        next[c] = 1;
    for (int t = 1; t < 2 * C; t++) {
        int busy = t < C;
        memset(claimed, 0, (size_t)C * sizeof *claimed);
        if (t < C) {
            int pc = (x + t) % C;
            if (pc >= r) {
                claimed[pc] = 1;
                if (pc == y)
                    st[t - 1].from = e;
                T = t;
            }
        }
        for (int k = 0; k < C; k++) {
            int s = (x - k + C) % C;
            if (next[s] >= C)
                continue;
            busy = 1;
            int tc = (s + next[s]) % C;
            if (claimed[tc])
                continue; /* stall */
            claimed[tc] = 1;
            if (s == y)
                st[t - 1].to = x * C + tc;
            if (tc == y)
                st[t - 1].from = x * C + s;
            next[s]++;
            T = t;
        }
        if (!busy)
            break;
    }
    return T;
}
