/*
 * xchg_twolevel_node.c - a node's side of the two-level exchange: the
 * tables of a run, the streams (one logical message over many pieces,
 * cut at the chunk limit), the direct pairs of a node, and, at the
 * node's leader, the layout of the node's blocks: which bytes of which
 * member go where in the outgoing blocks (one per destination node), and
 * where each member's data sits in the incoming ones.
 *
 * Invariants (xchg_twolevel_node.h states the blocks' order):
 *  - the tables are carved from the plan's scratch, which the dispatcher
 *    allocated with coll_tl_layout's size before the run, so a run
 *    allocates none of them;
 *  - a stream's parts are cut at multiples of the chunk limit of the
 *    whole logical message, on both sides alike, so every part has its
 *    receive of the same length;
 *  - the pieces of member k in block b follow those of members < k
 *    (outgoing) and, in the incoming block, the data of the sources
 *    before i and i's data for members < k.
 */
#include "xchg_twolevel_node.h"

#include <string.h>

void coll_tl_begin(coll_tl_run *r, coll_xchg_plan *pl, const coll_nodes *T)
{
    memset(r, 0, sizeof *r);
    r->pl = pl;
    r->T = T;
    if (!T)
        return;
    r->a = T->node;
    r->f0 = T->first[r->a];
    r->S = T->first[r->a + 1] - r->f0;
    r->leader = T->members[r->f0];
}

void coll_tl_count(coll_xchg_plan *pl, int64_t bytes, int net)
{
    pl->st.messages++;
    pl->st.bytes_sent += bytes;
    if (net) {
        pl->st.msgs_net++;
        pl->st.bytes_net += bytes;
    } else {
        pl->st.msgs_node++;
        pl->st.bytes_node += bytes;
    }
}

void coll_tl_leaders_plan(const coll_tl_run *r, coll_xchg_plan *sub)
{
    memset(sub, 0, sizeof *sub);
    sub->ctx = r->pl->ctx;
    sub->comm = r->T->leaders;
    sub->P = r->T->nnodes;
    sub->me = r->a;
    sub->ranks = r->T->leader_rank;
}

/* ---------------------------------------------------- tables, streams */

static int64_t tl_fs_scratch(int N)
{
    coll_xchg_plan f;
    memset(&f, 0, sizeof f);
    f.P = N;
    return N > 1 ? coll_xchg_fourstage_nb.scratch(&f) : 0;
}

int64_t coll_tl_layout(const coll_xchg_plan *pl, const coll_nodes *T,
                       coll_tl_tabs *tb, char *base)
{
    int P = pl->P, a = T->node, N = T->nnodes;
    int S = T->first[a + 1] - T->first[a], lead = T->lrank == 0;
    int64_t pos = 0;
    char *at = tb ? base : NULL; /* NULL: only the size is computed */
    int64_t *hdr = coll_xchg_carve(
        at, &pos, 2 * (int64_t)P * (lead ? S : 1) * (int64_t)sizeof(int64_t));
    coll_tl_piece *pc = coll_xchg_carve(
        at, &pos, (int64_t)(P + 1) * (int64_t)sizeof(coll_tl_piece));
    int *lens =
        coll_xchg_carve(at, &pos, (int64_t)(P + 2) * (int64_t)sizeof(int));
    MPI_Aint *disp = coll_xchg_carve(
        at, &pos, (int64_t)(P + 2) * (int64_t)sizeof(MPI_Aint));
    int64_t *sub = coll_xchg_carve(
        at, &pos, (lead ? 4 * (int64_t)N : 0) * (int64_t)sizeof(int64_t));
    char *fs = coll_xchg_carve(at, &pos, lead ? tl_fs_scratch(N) : 0);
    int64_t *ms = coll_xchg_carve(
        at, &pos, (lead ? 2 * (int64_t)S : 0) * (int64_t)sizeof(int64_t));
    if (tb) {
        tb->hdr = hdr;
        tb->pc = pc;
        tb->lens = lens;
        tb->disp = disp;
        tb->sub = sub;
        tb->fs = fs;
        tb->ms = ms;
    }
    return pos + 16;
}

/*
 * Post one logical message of n pieces (total bytes) to or from peer: the
 * stream of the pieces cut at multiples of the chunk limit, one MPI
 * message per part (an hindexed type over the pieces it covers). Uses
 * coll_nparts(total) requests from req.
 */
int coll_tl_stream(const coll_xchg_plan *pl, coll_tl_tabs *tb, int send,
                   const coll_tl_piece *v, int n, int64_t total, int peer,
                   int tag, MPI_Request *req)
{
    int64_t chunk = coll_xchg_chunk();
    int64_t lo = 0, part = 0;
    int i = 0;
    int64_t ipos = 0; /* stream position where piece i starts */
    while (lo < total) {
        int64_t hi = lo + chunk < total ? lo + chunk : total;
        int k = 0;
        /* pieces i.. overlapping [lo, hi) */
        int j = i;
        int64_t jpos = ipos;
        while (j < n && jpos < hi) {
            int64_t a = jpos > lo ? jpos : lo;
            int64_t b = jpos + v[j].n < hi ? jpos + v[j].n : hi;
            if (b > a) {
                MPI_Get_address(v[j].p + (a - jpos), &tb->disp[k]);
                tb->lens[k++] = (int)(b - a);
            }
            if (jpos + v[j].n <= hi) {
                jpos += v[j].n;
                j++;
                i = j;
                ipos = jpos;
            } else {
                break;
            }
        }
        MPI_Datatype t;
        int err = MPI_Type_create_hindexed(k, tb->lens, tb->disp, MPI_BYTE,
                                           &t) != MPI_SUCCESS ||
                  MPI_Type_commit(&t) != MPI_SUCCESS;
        if (!err)
            err = send ? coll_net_isend(pl, MPI_BOTTOM, 1, t, peer, tag,
                                        CORE_NET_COUNTED, &req[part]) != 0
                       : MPI_Irecv(MPI_BOTTOM, 1, t, peer, tag, pl->comm,
                                   &req[part]) != MPI_SUCCESS;
        if (!err)
            MPI_Type_free(&t);
        if (err)
            return PASSION_EMPI;
        part++;
        lo = hi;
    }
    return PASSION_OK;
}

/* receive the parts of a message of total bytes without a place for them
   (coll_drain) */
void coll_tl_drain(const coll_xchg_plan *pl, int64_t total, int peer, int tag)
{
    for (int64_t q = 0; q < coll_nparts(total); q++)
        coll_drain(pl->comm, peer, tag);
}

/* ------------------------------------------------------- the node */

/* step 1's direct pairs of the node, and the self message */
int coll_tl_direct(coll_tl_run *r)
{
    coll_xchg_plan *pl = r->pl;
    const coll_nodes *T = r->T;
    int rc = PASSION_OK;
    for (int k = 0; k < r->S && !rc; k++) {
        int j = T->members[r->f0 + k];
        if (j == pl->me)
            continue;
        int64_t b = coll_rc(pl, j);
        if (r->n + coll_nparts(b) > pl->nreq)
            return PASSION_ENOMEM;
        rc = coll_irecv(pl, pl->rbuf + coll_rd(pl, j), b, j, COLL_TL_TAG_NODE,
                        pl->req + r->n);
        r->n += (int)coll_nparts(b);
    }
    for (int k = 0; k < r->S && !rc; k++) {
        int j = T->members[r->f0 + k];
        if (j == pl->me)
            continue;
        int64_t b = coll_sc(pl, j);
        if (r->n + coll_nparts(b) > pl->nreq)
            return PASSION_ENOMEM;
        rc = coll_isend(pl, pl->sbuf + coll_sd(pl, j), b, j, COLL_TL_TAG_NODE,
                        pl->req + r->n);
        r->n += (int)coll_nparts(b);
        if (b > 0)
            coll_tl_count(pl, b, 0);
    }
    coll_copy_self(pl);
    return rc;
}

/* the counts of my node's ranks into r->tb.hdr (coll_tl_hs, coll_tl_hr): mine
   from the plan, each member's as it sends them (COLL_TL_TAG_HDR), on requests
   from pl->req + r->n; r->n as it was */
int coll_tl_node_counts(coll_tl_run *r)
{
    coll_xchg_plan *pl = r->pl;
    const coll_nodes *T = r->T;
    const int P = pl->P;
    int64_t *h = r->tb.hdr;
    for (int j = 0; j < P; j++) {
        h[j] = coll_sc(pl, j);
        h[P + j] = coll_rc(pl, j);
    }
    int rc = PASSION_OK, h0 = r->n;
    for (int k = 1; k < r->S && !rc; k++)
        if (MPI_Irecv(h + (int64_t)k * 2 * P, 2 * P, MPI_INT64_T,
                      T->members[r->f0 + k], COLL_TL_TAG_HDR, pl->comm,
                      pl->req + r->n++) != MPI_SUCCESS)
            rc = PASSION_EMPI;
    if (!rc)
        rc = coll_waitall(r->n - h0, pl->req + h0);
    r->n = h0;
    return rc;
}

/* the node's blocks for the leaders' exchange, from its ranks' counts
   (coll_tl_node_counts): out[b] (to node b) and in[b] (from node b), their
   counts and displacements in r->tb.sub (osc, osd, irc, ird, N each);
   *out, *in: their totals */
void coll_tl_node_blocks(coll_tl_run *r, int64_t *out, int64_t *in)
{
    const coll_nodes *T = r->T;
    const int N = T->nnodes, S = r->S, a = r->a;
    int64_t *osc = r->tb.sub, *osd = osc + N, *irc = osd + N, *ird = irc + N;
    int64_t OUT = 0, IN = 0;
    for (int b = 0; b < N; b++) {
        osc[b] = irc[b] = 0;
        if (b == a)
            continue;
        for (int q = T->first[b]; q < T->first[b + 1]; q++) {
            int j = T->members[q];
            for (int k = 0; k < S; k++) {
                osc[b] += coll_tl_hs(r, k, j);
                irc[b] += coll_tl_hr(r, k, j);
            }
        }
        osd[b] = OUT;
        ird[b] = IN;
        OUT += osc[b];
        IN += irc[b];
    }
    osd[a] = OUT;
    ird[a] = IN;
    *out = OUT;
    *in = IN;
}

/* step 2 for member k of my node: the bytes it sends me for other nodes
   (returned) and, if set, where they go, one piece per node b != a in
   r->tb.pc[0..*np) (*np 0 otherwise): the segment of (member k, node b)
   in block b (ob + osd[b]) starts after those of members < k */
int64_t coll_tl_up_pieces(coll_tl_run *r, int k, char *ob, const int64_t *osd,
                          int set, int *np)
{
    const coll_nodes *T = r->T;
    int64_t up = 0;
    *np = 0;
    for (int b = 0; b < T->nnodes; b++) {
        if (b == r->a)
            continue;
        int64_t seg = 0, len = 0;
        for (int q = T->first[b]; q < T->first[b + 1]; q++) {
            int d = T->members[q];
            for (int k2 = 0; k2 < k; k2++)
                seg += coll_tl_hs(r, k2, d);
            len += coll_tl_hs(r, k, d);
        }
        if (set) {
            r->tb.pc[*np].p = ob + osd[b] + seg;
            r->tb.pc[(*np)++].n = len;
        }
        up += len;
    }
    return up;
}

/* step 2 for member 0 (the leader): its own data for other nodes, copied
   from the send buffer into the pieces coll_tl_up_pieces(r, 0, ...) set */
void coll_tl_up_own(coll_tl_run *r)
{
    const coll_xchg_plan *pl = r->pl;
    const coll_nodes *T = r->T;
    for (int b = 0, i = 0; b < T->nnodes; b++) {
        if (b == r->a)
            continue;
        char *p = r->tb.pc[i++].p;
        for (int q = T->first[b]; q < T->first[b + 1]; q++) {
            int d = T->members[q];
            int64_t n = coll_sc(pl, d);
            if (n > 0)
                memcpy(p, pl->sbuf + coll_sd(pl, d), (size_t)n);
            p += n;
        }
    }
}

/* step 3 for member k of my node: the bytes the other nodes sent it
   (returned) and where they sit in the incoming blocks: in block b (ib +
   ird[b]) the data of (source i of b, member k) sit after i's data for
   members < k and after all the data of the sources before i. Member
   0's (the leader's own) are copied into the receive buffer; any other
   member's become one piece per source in r->tb.pc[0..*np). Neither
   with ib NULL (*np 0). */
int64_t coll_tl_down_pieces(coll_tl_run *r, int k, char *ib,
                            const int64_t *ird, int *np)
{
    const coll_xchg_plan *pl = r->pl;
    const coll_nodes *T = r->T;
    int64_t down = 0;
    *np = 0;
    for (int b = 0; b < T->nnodes; b++) {
        if (b == r->a)
            continue;
        int64_t pos = 0;
        for (int q = T->first[b]; q < T->first[b + 1]; q++) {
            int i = T->members[q];
            int64_t before = 0;
            for (int k2 = 0; k2 < k; k2++)
                before += coll_tl_hr(r, k2, i);
            int64_t len = coll_tl_hr(r, k, i);
            if (ib && k == 0) {
                if (len > 0)
                    memcpy(pl->rbuf + coll_rd(pl, i),
                           ib + ird[b] + pos + before, (size_t)len);
            } else if (ib) {
                r->tb.pc[*np].p = ib + ird[b] + pos + before;
                r->tb.pc[(*np)++].n = len;
            }
            down += len;
            for (int k2 = 0; k2 < r->S; k2++)
                pos += coll_tl_hr(r, k2, i);
        }
    }
    return down;
}
