/*
 * xchg_fs_msg.c - the messages of the four-stage exchange (Liu, Wang
 * and Prasanna, "Portable and scalable algorithm for irregular
 * all-to-all communication", JPDC 2002, section 3.2): a message carries
 * its pieces of data with a descriptor each (source, destination,
 * offset, length), so that any node can split them and the destination
 * can place them.
 *
 * Invariants:
 *  - a message is [total, count][descriptors][data], sent without
 *    copying (an MPI hindexed type over the header and the pieces) and
 *    split at the chunk limit, and then its first MPI message is the
 *    16-byte header alone, so that the receiver learns the total before
 *    it receives the rest;
 *  - messages are always sent, empty or not, so every node knows how
 *    many it receives; a node that failed sends well-formed empty ones
 *    and drains what comes, whole;
 *  - a message is received from the source and tag that were probed, so
 *    the message received is the one probed;
 *  - a received message is parsed only when its descriptors cover its
 *    data exactly; else the run fails (malformed message).
 */
#include "xchg_fourstage.h"

#include <string.h>

static const coll_fs_hdr fs_empty = {(int64_t)sizeof(coll_fs_hdr), 0};

int coll_fs_failed(coll_fs_run *run, int rc, const char *what)
{
    if (!run->fail) {
        run->fail = 1;
        run->rc = core_err(run->pl->ctx, rc, "four-stage exchange: %s", what);
    }
    return run->rc;
}

int coll_fs_bufs_push(coll_fs_run *run, coll_fs_bufs *b, char *p,
                      int64_t bytes, int64_t payload)
{
    if (b->n == b->cap) {
        int cap = b->cap ? 2 * b->cap : 16;
        coll_fs_buf *v =
            core_realloc(run->pl->ctx, b->v, (size_t)cap * sizeof *v);
        if (!v) {
            coll_stage_free(run->pl, p, bytes, payload);
            return coll_fs_failed(run, PASSION_ENOMEM, "buffer list");
        }
        b->v = v;
        b->cap = cap;
    }
    b->v[b->n].p = p;
    b->v[b->n].bytes = bytes;
    b->v[b->n].payload = payload;
    b->n++;
    return PASSION_OK;
}

void coll_fs_bufs_free(coll_fs_run *run, coll_fs_bufs *b)
{
    for (int i = 0; i < b->n; i++)
        coll_stage_free(run->pl, b->v[i].p, b->v[i].bytes, b->v[i].payload);
    b->n = 0;
}

/* Post message m of pieces out[m->first .. +count) to m->peer. */
void coll_fs_post(coll_fs_run *run, coll_fs_msg *m, const coll_fs_piece *out,
                  int tag)
{
    coll_xchg_plan *pl = run->pl;
    int64_t chunk = coll_xchg_chunk();
    m->hdr = NULL;
    m->req = &m->one;
    m->nreq = 0;
    int64_t k = run->fail ? 0 : m->count;
    int64_t hb =
        (int64_t)sizeof(coll_fs_hdr) + k * (int64_t)sizeof(coll_fs_desc);
    int64_t total = hb;
    for (int64_t i = 0; i < k; i++)
        total += out[m->first + i].len;
    int64_t parts = total <= chunk ? 1 : 1 + coll_nparts(total - 16);
    int *lens = NULL;
    MPI_Aint *disp = NULL;
    if (!run->fail) {
        m->hdr = coll_stage_alloc(pl, hb, 0);
        lens = core_malloc(pl->ctx, (size_t)(k + 2) * sizeof *lens);
        disp = core_malloc(pl->ctx, (size_t)(k + 2) * sizeof *disp);
        if (parts > 1)
            m->req = core_malloc(pl->ctx, (size_t)parts * sizeof *m->req);
        if (!m->hdr || !lens || !disp || !m->req) {
            coll_fs_failed(run, PASSION_ENOMEM, "message header");
            coll_stage_free(pl, m->hdr, hb, 0);
            m->hdr = NULL;
            if (m->req != &m->one)
                core_free(pl->ctx, m->req);
            m->req = &m->one;
        } else {
            m->hdr_bytes = hb;
        }
    }
    if (run->fail) {
        /* a well-formed empty message */
        core_free(pl->ctx, lens);
        core_free(pl->ctx, disp);
        if (coll_net_isend(pl, &fs_empty, (int)sizeof fs_empty, MPI_BYTE,
                           m->peer, tag, CORE_NET_COUNTED, m->req)) {
            /* MPI is gone: nothing else can be done */
            run->rc = PASSION_EMPI;
            return;
        }
        m->nreq = 1;
        pl->st.messages++;
        pl->st.bytes_sent += (int64_t)sizeof fs_empty;
        return;
    }
    coll_fs_hdr *h = (coll_fs_hdr *)(void *)m->hdr;
    h->total = total;
    h->nseg = k;
    coll_fs_desc *d = (coll_fs_desc *)(void *)(m->hdr + sizeof(coll_fs_hdr));
    for (int64_t i = 0; i < k; i++) {
        const coll_fs_piece *p = &out[m->first + i];
        d[i].src = p->src;
        d[i].dst = p->dst;
        d[i].off = p->off;
        d[i].len = p->len;
    }
    /* the logical stream is the header buffer then the pieces; part p
       covers [lo, hi) of it */
    int64_t lo = 0, hi = parts == 1 ? total : 16;
    for (int64_t part = 0; part < parts; part++) {
        int n = 0;
        int64_t pos = 0;
        for (int64_t i = -1; i < k && pos < hi; i++) {
            const char *ptr = i < 0 ? m->hdr : out[m->first + i].ptr;
            int64_t len = i < 0 ? hb : out[m->first + i].len;
            int64_t a = pos > lo ? pos : lo,
                    b = pos + len < hi ? pos + len : hi;
            if (b > a) {
                MPI_Get_address(ptr + (a - pos), &disp[n]);
                lens[n++] = (int)(b - a);
            }
            pos += len;
        }
        MPI_Datatype t;
        if (MPI_Type_create_hindexed(n, lens, disp, MPI_BYTE, &t) !=
                MPI_SUCCESS ||
            MPI_Type_commit(&t) != MPI_SUCCESS ||
            coll_net_isend(pl, MPI_BOTTOM, 1, t, m->peer, tag,
                           CORE_NET_COUNTED, &m->req[part])) {
            run->rc = PASSION_EMPI;
            break;
        }
        MPI_Type_free(&t);
        m->nreq++;
        lo = hi;
        hi = hi + chunk < total ? hi + chunk : total;
    }
    core_free(pl->ctx, lens);
    core_free(pl->ctx, disp);
    pl->st.messages++;
    pl->st.bytes_sent += total;
}

void coll_fs_msg_done(coll_fs_run *run, coll_fs_msg *m)
{
    coll_stage_free(run->pl, m->hdr, m->hdr_bytes, 0);
    m->hdr = NULL;
    if (m->req != &m->one)
        core_free(run->pl->ctx, m->req);
    m->req = &m->one;
    m->nreq = 0;
}

/* Receive the next message from src into buf (n bytes), waiting with
   the yielding policy. */
static int fs_recv_bytes(coll_fs_run *run, void *buf, int64_t n, int src,
                         int tag)
{
    MPI_Request q;
    if (MPI_Irecv(buf, (int)n, MPI_BYTE, src, tag, run->pl->comm, &q) !=
        MPI_SUCCESS)
        return PASSION_EMPI;
    return coll_waitall(1, &q);
}

/* Drain the probed message (and its other parts) without a place for
   them: a failed node. Received whole (coll_drain), errors returned
   instead of raised for the time of it. */
static void fs_drain(coll_fs_run *run, int64_t c0, int src, int tag)
{
    coll_xchg_plan *pl = run->pl;
    char scratch[64];
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(pl->comm, &eh);
    MPI_Comm_set_errhandler(pl->comm, MPI_ERRORS_RETURN);
    int64_t more = 0;
    if (c0 <= (int64_t)sizeof scratch) {
        MPI_Recv(scratch, (int)c0, MPI_BYTE, src, tag, pl->comm,
                 MPI_STATUS_IGNORE);
        coll_fs_hdr h;
        memcpy(&h, scratch, sizeof h);
        if (c0 == 16 && h.total > 16)
            more = coll_nparts(h.total - 16);
    } else {
        coll_drain(pl->comm, src, tag);
    }
    for (int64_t i = 0; i < more; i++)
        coll_drain(pl->comm, src, tag);
    MPI_Comm_set_errhandler(pl->comm, eh);
    MPI_Errhandler_free(&eh);
}

/* Receive the probed message whole into a staging buffer of *total
   bytes; NULL when there is nothing to parse (an empty message, one
   drained, a failure). */
static char *fs_receive(coll_fs_run *run, MPI_Status *st, int src, int tag,
                        int64_t *total)
{
    coll_xchg_plan *pl = run->pl;
    MPI_Count c0 = 0;
    MPI_Get_elements_x(st, MPI_BYTE, &c0);
    if (run->fail) {
        fs_drain(run, c0, src, tag);
        return NULL;
    }
    if (c0 < 16) {
        coll_fs_failed(run, PASSION_EMPI, "malformed message");
        fs_drain(run, c0, src, tag);
        return NULL;
    }
    char head[16];
    *total = c0;
    char *buf = NULL;
    if (c0 == 16) {
        if (fs_recv_bytes(run, head, 16, src, tag)) {
            run->rc = PASSION_EMPI;
            return NULL;
        }
        memcpy(total, head, sizeof *total);
        if (*total < 16) {
            coll_fs_failed(run, PASSION_EMPI, "malformed message");
            return NULL;
        }
        if (*total > 16) {
            /* the rest follows in chunks */
            int64_t parts = coll_nparts(*total - 16);
            buf = coll_stage_alloc(pl, *total, 0);
            if (!buf) {
                coll_fs_failed(run, PASSION_ENOMEM, "receive buffer");
                MPI_Errhandler eh;
                MPI_Comm_get_errhandler(pl->comm, &eh);
                MPI_Comm_set_errhandler(pl->comm, MPI_ERRORS_RETURN);
                for (int64_t i = 0; i < parts; i++)
                    coll_drain(pl->comm, src, tag);
                MPI_Comm_set_errhandler(pl->comm, eh);
                MPI_Errhandler_free(&eh);
                return NULL;
            }
            memcpy(buf, head, 16);
            int64_t chunk = coll_xchg_chunk(), pos = 16;
            for (int64_t i = 0; i < parts; i++) {
                int64_t n = *total - pos < chunk ? *total - pos : chunk;
                if (fs_recv_bytes(run, buf + pos, n, src, tag)) {
                    run->rc = PASSION_EMPI;
                    break;
                }
                pos += n;
            }
        } else {
            coll_fs_hdr h;
            memcpy(&h, head, sizeof h);
            if (h.nseg != 0)
                coll_fs_failed(run, PASSION_EMPI, "malformed message");
            return NULL; /* an empty message */
        }
    } else {
        buf = coll_stage_alloc(pl, c0, 0);
        if (!buf) {
            coll_fs_failed(run, PASSION_ENOMEM, "receive buffer");
            fs_drain(run, c0, src, tag);
            return NULL;
        }
        if (fs_recv_bytes(run, buf, c0, src, tag))
            run->rc = PASSION_EMPI;
    }
    return buf;
}

/* Parse the received message buf (total bytes): it joins run->next and
   its pieces are appended to *in (grown as needed); the data bytes
   become payload. A malformed message fails the run. */
static void fs_parse(coll_fs_run *run, char *buf, int64_t total,
                     coll_fs_piece **in, int64_t *nin, int64_t *capin)
{
    coll_xchg_plan *pl = run->pl;
    coll_fs_hdr h;
    memcpy(&h, buf, sizeof h);
    int64_t hb = 16 + h.nseg * (int64_t)sizeof(coll_fs_desc);
    int ok = h.total == total && h.nseg >= 0 &&
             h.nseg <= (total - 16) / (int64_t)sizeof(coll_fs_desc);
    if (ok && *nin + h.nseg > *capin) {
        int64_t cap = (*capin ? 2 * *capin : 64);
        while (cap < *nin + h.nseg)
            cap *= 2;
        coll_fs_piece *v = core_realloc(pl->ctx, *in, (size_t)cap * sizeof *v);
        if (!v) {
            coll_stage_free(pl, buf, total, 0);
            coll_fs_failed(run, PASSION_ENOMEM, "piece list");
            return;
        }
        *in = v;
        *capin = cap;
    }
    int64_t pos = hb, n0 = *nin;
    const coll_fs_desc *d = (const coll_fs_desc *)(const void *)(buf + 16);
    for (int64_t i = 0; ok && i < h.nseg; i++) {
        coll_fs_desc e = d[i];
        if (e.src < 0 || e.src >= pl->P || e.dst < 0 || e.dst >= pl->P ||
            e.off < 0 || e.len < 0 || e.len > total - pos) {
            ok = 0;
            break;
        }
        coll_fs_piece *p = &(*in)[(*nin)++];
        p->src = e.src;
        p->dst = e.dst;
        p->off = e.off;
        p->len = e.len;
        p->ptr = buf + pos;
        p->key = 0;
        p->user = 0;
        pos += e.len;
    }
    if (!ok || pos != total) {
        *nin = n0;
        coll_stage_free(pl, buf, total, 0);
        coll_fs_failed(run, PASSION_EMPI, "malformed message");
        return;
    }
    /* account the data bytes as payload */
    pl->payload_now += total - hb;
    if (pl->payload_now > pl->st.peak_payload)
        pl->st.peak_payload = pl->payload_now;
    coll_fs_bufs_push(run, &run->next, buf, total, total - hb);
}

/* Receive the probed message: its buffer joins run->next and its pieces
   are appended to *in (grown as needed). */
static void fs_take(coll_fs_run *run, MPI_Status *st, int src, int tag,
                    coll_fs_piece **in, int64_t *nin, int64_t *capin)
{
    int64_t total = 0;
    char *buf = fs_receive(run, st, src, tag, &total);
    if (buf)
        fs_parse(run, buf, total, in, nin, capin);
}

/* Wait for one message from src (blocking) or any of srcs (arrival
   order, NB), and take it. Returns the index in srcs that was served. */
int coll_fs_recv_one(coll_fs_run *run, const int *srcs, int nsrc,
                     const char *done, int tag, coll_fs_piece **in,
                     int64_t *nin, int64_t *capin)
{
    coll_xchg_plan *pl = run->pl;
    double t0 = core_now();
    for (;;) {
        for (int i = 0; i < nsrc; i++) {
            if (done && done[i])
                continue;
            int flag = 0;
            MPI_Status st;
            /* a probe, then a receive from the same source and tag: the
               message received is the one probed (no overtaking, and
               nothing else receives on this tag meanwhile) */
            if (MPI_Iprobe(srcs[i], tag, pl->comm, &flag, &st) !=
                MPI_SUCCESS) {
                run->rc = PASSION_EMPI;
                return i;
            }
            if (flag) {
                fs_take(run, &st, srcs[i], tag, in, nin, capin);
                return i;
            }
        }
        coll_idle(t0);
    }
}
