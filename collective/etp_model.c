/*
 * etp_model.c - the cost model behind method `auto` for collective section
 * access (the linear model of Bala et al., CCL, IEEE TPDS 1995, section
 * IV.A, applied to file requests as well as messages).
 *
 * Costs: a file request of s bytes takes L + s/B (the options, else the
 * page-cache probe of etp_early.c: memory-like costs when the requested
 * data is cached, otherwise the file costs etp_filecost.c measured once
 * per context, or the disk defaults of sieve.c until it could; the caller sets
 * them in the context's options while the independent engine counts and
 * runs, so that its own direct/sieve choice uses them too); the file's
 * bandwidth is shared by all ranks, its latency is paid by each rank in
 * parallel; an exchange round among P ranks in which the busiest rank sends or
 * receives n bytes takes round + (P-1) msg + n beta, the exchange
 * subsystem's linear model with its one calibration (alpha = round + msg,
 * defined in collective/exchange/exchange.h: the options msg_alpha /
 * msg_beta, else measured once per context, shared with the exchange's
 * `auto`); copying in memory runs at COPY_BW.
 *
 * Candidates and their predicted time, from the FAD alone (no I/O):
 *  - independent: each rank reads its own section with the independent
 *    engine (direct or hole-limited sieving, sieve.c's own choice), its
 *    read requests C = core_io_concurrency at a time:
 *      max_r(requests_r) L / C + sum_r bytes_r / B + max_r useful_r / COPY_BW
 *    writes cost at least WRITE_LATENCY_MIN per request, small ones
 *    (under a page) L per request plus COLL_PAGE_DIRTY per page they
 *    touch; writes into interleaved extents add up over ranks (page
 *    contention, or ordering: plus the token's P-1 hops, coll_token_cost);
 *    small writes into an uncached file count twice (the
 *    kernel reads the page first); where sieving would order the writes
 *    and direct writes would not, direct writes are a candidate too;
 *  - etp-dynamic / etp-static: aggregator i reads the span of requested
 *    data in its domain in chunks of the stage size (fewer bytes where the
 *    independent reads show that holes are skipped):
 *      max_i(requests_i) L + min(sum_i span_i, sum_r bytes_r) / B
 *      + rounds R
 *      + beta max_r(exchanged_r)
 *      + 2 max_r useful_r / COPY_BW
 *      + on several nodes, per round, the exchange's entry agreement by
 *        nodes and the network's charges (etp_net: flat or two-level, as
 *        the exchange option says; under its auto each of A1 and the
 *        two-level exchange on its own rounds, xchg_pick)
 *    where skipped holes add the union's windows (interleaved sections
 *    share them) spread over the aggregators; writes with holes read
 *    before writing (twice the requests and bytes), and so does the kernel
 *    for partly written pages of an uncached file (twice the requests);
 *    R is the least learned round (coll_round_inner: a round inside a
 *    call, where the ranks enter together) once there are
 *    CORE_LEARN_TRUST samples, before that at least round + (P-1) msg;
 *    on several nodes with no aggregator option (cb_ranks, cb_per_node,
 *    cb_nodes), each with one aggregator per node and with every rank
 *    (its own domains, and so its own file requests, messages within and
 *    between nodes and exchange choice), the cheaper running as that
 *    setting given runs (coll_plan.aggr; ties: one per node);
 *  - each candidate plus its class's fixed cost (independent or
 *    two-phase), learned from the calls on cached data that ran it
 *    (coll_fixed_learn in coll.h: the measured time up to the outcome's
 *    agreement minus the prediction, the lower quartile of recent calls,
 *    the largest over ranks) plus one learned round (that agreement);
 *    before that one learned round for independent access and two for
 *    the two-phase method (the linear model alone prices small sections
 *    far below their measured times).
 * Every candidate also pays the FAD's round (a learned round): the same
 * for all, added to the prediction only.
 * The two-phase candidates are left out when the budget is below their
 * minimum (coll_etp_min_budget), and a round holds at least one element
 * in the counts above (no division by a zero capacity at tiny budgets).
 * The smallest prediction wins; ties go to the first of independent,
 * dynamic, static. Every input is identical on every rank (the FAD, the
 * options checked equal in it, the calibration reduced with MPI_MAX, the
 * learned costs carried in the FAD), so every rank chooses the same
 * method.
 */
#include "coll.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define COPY_BW COLL_COPY_BW

/* A small write costs more than a read of the cache: page locking and
   dirty-page accounting. */
#define WRITE_LATENCY_MIN 20e-6

static double write_latency(const coll_plan *p)
{
    return p->io_lat > WRITE_LATENCY_MIN ? p->io_lat : WRITE_LATENCY_MIN;
}

/*
 * What the two-phase method's prediction needs of the sections on one
 * set of domains, whatever the exchange (its caps cut the rounds only):
 * counted in one pass over the pairs of a domain and a rank with elements
 * in it (coll_ranks_in: O(P log P) where the sections lie apart, P^2
 * where each spans the file), shared by the exchange candidates (2
 * methods x 2 aggregator sets x 2 exchanges), so that the model's CPU
 * does not grow with their number.
 */
void coll_etp_shape_of(const coll_plan *p, coll_etp_shape *sh)
{
    passion_ctx *ctx = p->ctx;
    const int P = p->P, N = ctx->nnodes;
    const int64_t es = p->esize;
    memset(sh, 0, sizeof *sh);
    sh->nodes = coll_agree_by_nodes(P, N); /* N <= COLL_A2A_MAX then */
    /* per sending node: messages, bytes, the nodes it sends to */
    int64_t fm[COLL_A2A_MAX] = {0}, fb[COLL_A2A_MAX] = {0};
    uint64_t to[COLL_A2A_MAX] = {0};
    for (int i = 0; i < P; i++) {
        int64_t first = INT64_MAX, last = -1;
        int k0, k1;
        coll_ranks_in(p, p->dlo[i], p->dhi[i], &k0, &k1);
        for (int k = k0; k < k1; k++) {
            int r = (int)p->byext[k];
            int64_t n = coll_cnt_in(p, r, p->dlo[i], p->dhi[i]);
            if (!n)
                continue;
            int64_t f = coll_first_at(&p->x[r], es, p->dlo[i]);
            int64_t c = coll_count_lt(&p->x[r], es, p->dhi[i]) - 1;
            int64_t l = coll_elem_off(&p->x[r], es, c) + es;
            first = f < first ? f : first;
            last = l > last ? l : last;
            sh->useful_all += n * es;
            int a = core_node_of(ctx, i), b = core_node_of(ctx, r);
            if (!sh->nodes || a == b)
                continue;
            /* reads: the aggregator i sends to the owner r; writes:
               the other way */
            int from = p->op_write ? b : a, dest = p->op_write ? a : b;
            fm[from]++;
            fb[from] += n * es;
            to[from] |= (uint64_t)1 << dest;
        }
        int64_t span = last > first ? last - first : 0;
        sh->span_sum += span;
        sh->naggs += span > 0;
        sh->max_span = span > sh->max_span ? span : sh->max_span;
    }
    /* a rank exchanges all its elements but those in its own domain (the
       domains tile the elements: coll_domains) */
    for (int r = 0; r < P; r++) {
        int64_t x = (p->elems[r] -
                     coll_cnt_in(p, r, p->dlo[r], p->dhi[r])) * es;
        int64_t u = p->elems[r] * es;
        sh->max_x = x > sh->max_x ? x : sh->max_x;
        sh->max_useful = u > sh->max_useful ? u : sh->max_useful;
    }
    if (!sh->nodes)
        return;
    int per[COLL_A2A_MAX] = {0};
    for (int r = 0; r < P; r++)
        per[core_node_of(ctx, r)]++;
    for (int a = 0; a < N; a++) {
        int64_t m = 0;
        for (uint64_t t = to[a]; t; t &= t - 1)
            m++;
        sh->node_max = per[a] > sh->node_max ? per[a] : sh->node_max;
        sh->msgs_max = fm[a] > sh->msgs_max ? fm[a] : sh->msgs_max;
        sh->bytes_max = fb[a] > sh->bytes_max ? fb[a] : sh->bytes_max;
        sh->nmsgs_max = m > sh->nmsgs_max ? m : sh->nmsgs_max;
    }
}

/*
 * What the nodes add to the two-phase method's rounds. Every
 * round is one exchange call; on several nodes (coll_agree_by_nodes) its
 * entry agreement is a round of its own (within the node, among the
 * leaders, within the node again: coll_agree_cost_shape, whose leaders'
 * messages the network charges), not the round A1's data rides on. Then,
 * by the exchange alg (the rounds' own: xchg_pick prices each candidate
 * on the rounds its staging cuts; auto, where it did not: the cheaper of
 * the two on these rounds):
 *  - flat (A1 and the others): the busiest node's interface carries
 *    the messages of all its ranks to other nodes (reads: an aggregator
 *    to the ranks whose data its domain holds; writes: a rank to the
 *    aggregators), counted pair by pair on the domains;
 *  - twolevel: a node's leader sends one message to each node its node
 *    has data for, in the agreement's rounds (coll_nodes_agree: the data
 *    rides on them), then the outcome's agreement over all ranks.
 * S (coll_round_inner, a round inside the call) is the least any of
 * these rounds costs. Zero on one node; with one rank per node the flat
 * header round carries the data and each of its P - 1 headers pays the
 * network.
 */
static double etp_net(const coll_plan *p, const coll_etp_shape *sh,
                      const coll_xchg_costs *mc, int64_t rounds, double S,
                      int alg)
{
    passion_ctx *ctx = p->ctx;
    const int P = p->P, N = ctx->nnodes;
    if (N <= 1 || P <= 1 || rounds <= 0)
        return 0;
    const double hdr = mc->net_msg + 208.0 * mc->net_byte;
    if (!sh->nodes) /* a rank per node: flat headers */
        return (double)rounds * (double)(P - 1) * hdr;
    coll_xchg_shape xs = {0};
    xs.procs = P;
    xs.nodes = N;
    xs.node_max = sh->node_max;
    double agree = coll_agree_cost_shape(mc, &xs);
    agree = agree > S ? agree : S;
    /* flat: messages and bytes between nodes of the busiest node's
       ranks together (they share its interface: passion/net.c);
       twolevel: of the busiest node (its leader sends them; the same
       bytes) */
    const int64_t msgs_max = sh->msgs_max, bytes_max = sh->bytes_max,
                  nmsgs_max = sh->nmsgs_max;
    double flat = (double)rounds * (agree + (double)msgs_max * mc->net_msg) +
                  (double)bytes_max * mc->net_byte;
    /* twolevel: its data rides on the agreement's rounds
       (coll_nodes_agree): the leaders' messages, and the outcome's
       agreement over all ranks (an allreduce: a collective round of its
       own, at least S like the others here: priced at the
       calibration's figures alone, the two-level exchange looked cheaper
       than A1 by the messages it saves between nodes, where each of its
       calls waits one more round for the ranks) */
    double out = coll_agree_cost(mc, P);
    out = out > S ? out : S;
    double two = (double)rounds * (agree + out +
                                   (double)nmsgs_max * mc->net_msg) +
                 (double)bytes_max * mc->net_byte;
    if (alg == PASSION_XCHG_TWOLEVEL)
        return two;
    if (alg == PASSION_XCHG_AUTO)
        return two < flat ? two : flat;
    return flat;
}

/*
 * The ordering token of independent writes (global.c): P - 1 hops one
 * after another. Each hands the token to a rank that waits for it, on a
 * loaded or oversubscribed node descheduled: a hop costs about what a
 * collective round does (the learned round S), and one between two nodes
 * also pays the network's message time (the simulated network charges
 * the token). A hop priced at S / ceil(log2 P) (one message of the FAD's
 * all-gather) priced ordered direct writes at about half their time.
 */
double coll_token_cost(const coll_plan *p, double S)
{
    const int P = p->P;
    if (P < 2)
        return 0;
    int cross = 0;
    for (int r = 0; r + 1 < P; r++)
        cross += core_node_of(p->ctx, r) != core_node_of(p->ctx, r + 1);
    return (double)(P - 1) * S +
           (double)cross * core_net_cost(p->ctx, (int64_t)sizeof(int));
}

/* Predicted seconds of the extended two-phase method on p's domains; S:
   a round inside the call (coll_round_inner). */
double coll_etp_time(coll_plan *p, const coll_etp_shape *sh,
                     const int64_t *ind_bytes, int64_t ind_req_sum,
                     int64_t ind_req_max, const coll_xchg_costs *mc,
                     double S, int alg)
{
    const int P = p->P;
    const int64_t es = p->esize;
    const double L = p->op_write ? write_latency(p) : p->io_lat;
    const double B = p->io_bw;
    /* capacities per round (at least one element: chunks always advance;
       budgets below coll_etp_min_budget never get here) */
    const int64_t cs = p->cap_stage > es ? p->cap_stage : es;
    const int64_t cx = p->cap_xchg > es ? p->cap_xchg : es;
    const int64_t span_sum = sh->span_sum, max_span = sh->max_span;
    const int64_t useful_all = sh->useful_all, naggs = sh->naggs;
    /* the busiest aggregator's requests: its span in stage-sized pieces */
    int64_t max_req = (max_span + cs - 1) / cs, ind_sum = 0;
    for (int r = 0; r < P; r++)
        ind_sum += ind_bytes[r];
    /* reading the spans: each aggregator one stream of its span, at the
       rate of streams that long (the readahead's ramp: coll_stream_rate:
       long streams run faster than the calibration's); skipping holes:
       shorter pieces, the calibration's rate */
    const double Bspan =
        p->op_write || !naggs ? B : coll_stream_rate(p, span_sum / naggs);
    double t_bytes = (double)span_sum / Bspan;
    if (ind_sum < span_sum) {
        /* holes the independent reads skip: the aggregators skip them too
           where a hole costs more than a request (etp_window.c, hole =
           L B, one request at a time), so the cheaper of reading the span
           through and skipping every hole the independent reads skip
           (their hole limit assumes requests in flight: smaller). The
           union's windows: interleaved sections share them (the
           skipping alone overpriced many small runs far apart, which
           the aggregators read through). */
        int64_t merged = p->ext_overlap ? ind_req_max : ind_req_sum;
        int64_t skip_req = max_req + (merged + P - 1) / P;
        if ((double)skip_req * L + (double)ind_sum / B <
            (double)max_req * L + (double)span_sum / Bspan) {
            max_req = skip_req;
            t_bytes = (double)ind_sum / B;
        }
    }
    if (p->op_write && useful_all < span_sum)
        t_bytes *= 2;
    if (p->op_write && (useful_all < span_sum || !p->warm))
        max_req *= 2; /* read before write: ours, or the kernel's for a
                         partly written page that is not cached */
    /* exchanged bytes of the busiest rank, and the rounds */
    const int64_t max_x = sh->max_x, max_useful = sh->max_useful;
    int64_t rounds = (max_span + cs - 1) / cs;
    int64_t xr = (max_x + cx - 1) / cx;
    rounds = xr > rounds ? xr : rounds;
    double t = (double)max_req * L + t_bytes +
               2.0 * (double)max_useful / COPY_BW;
    if (P > 1 && max_x > 0) {
        /* a round costs what the FAD's rounds were seen to, once there
           are enough of them (the calibration is one measurement, at
           the context's first choice, and varies widely on a loaded
           machine); before, at least the calibration's */
        double r = mc->round + (double)(P - 1) * mc->msg;
        double R = S;
        if (coll_sync_learned(p->ctx) < CORE_LEARN_TRUST && r > R)
            R = r;
        t += (double)rounds * R + mc->byte * (double)max_x;
        t += etp_net(p, sh, mc, rounds, S, alg);
    }
    return t;
}

/* a class's fixed cost: the outcome's agreement (a learned round S, the
   same for both classes) plus what was learned beyond the model before
   it (coll_fixed_learn), lowering the prior only until there are
   CORE_LEARN_TRUST samples */
double coll_fixed_cost(const coll_plan *p, int cls, double prior, double S)
{
    double v = p->fixed[cls];
    if (p->fixed_n[cls] <= 0 || v < 0)
        return prior;
    v += S;
    if (p->fixed_n[cls] < CORE_LEARN_TRUST && v > prior)
        return prior;
    return v;
}

/*
 * Predicted seconds of independent access with `method` on every rank
 * (auto: sieve.c's own choice per rank): ranks' requests overlap in time,
 * except writes into interleaved extents (they contend for the same
 * pages) and ordered writes; a write of less than a page into an uncached
 * file makes the kernel read the page first. ind_bytes (P entries, or
 * NULL): each rank's file bytes.
 */
double coll_ind_time(coll_plan *p, int method, double S,
                     int64_t *ind_bytes, coll_ind_counts *c)
{
    passion_ctx *ctx = p->ctx;
    const int P = p->P;
    const double L = p->io_lat, B = p->io_bw;
    int64_t req_max = 0, req_sum = 0, bytes_sum = 0, useful_max = 0;
    int64_t pages_max = 0, pages_sum = 0;
    int64_t sv_bytes = 0, sv_len = 0, sv_n = 0;
    int small_writes = 0;
    for (int r = 0; r < P; r++) {
        if (ind_bytes)
            ind_bytes[r] = 0;
        if (!p->elems[r])
            continue;
        passion_plan_info pi;
        ocad_plan_count(ctx, &p->x[r], method, p->op_write, &pi, &p->env);
        if (ind_bytes)
            ind_bytes[r] = pi.bytes_file;
        req_max = pi.requests > req_max ? pi.requests : req_max;
        req_sum += pi.requests;
        bytes_sum += pi.bytes_file;
        int64_t u = pi.method == PASSION_METHOD_SIEVE ? p->elems[r] * p->esize
                                                      : 0;
        if (pi.method == PASSION_METHOD_SIEVE && pi.requests > 0) {
            /* a sieve that reads (nearly) its whole extent is one
               stream; one that skips holes, pieces of its mean request */
            int64_t ext = p->x[r].fend - p->x[r].foff0;
            sv_bytes += pi.bytes_file;
            sv_len += pi.bytes_file >= ext / 10 * 9 ? pi.bytes_file
                                                    : pi.bytes_file /
                                                          pi.requests;
            sv_n++;
        }
        useful_max = u > useful_max ? u : useful_max;
        if (pi.requests > 0 && pi.bytes_file / pi.requests < 4096) {
            small_writes = 1;
            /* small writes: the first dirtying of each page they touch */
            int64_t pg = coll_write_pages(pi.requests, pi.bytes_file,
                                          p->x[r].fend - p->x[r].foff0);
            pages_sum += pg;
            pages_max = pg > pages_max ? pg : pages_max;
        }
    }
    c->req_max = req_max;
    c->req_sum = req_sum;
    c->bytes_sum = bytes_sum;
    double t;
    if (p->op_write) {
        int64_t req = p->ext_overlap ? req_sum : req_max;
        int64_t pages = p->ext_overlap ? pages_sum : pages_max;
        if (!p->warm && small_writes)
            req *= 2;
        /* requests, plus the first dirtying of each page small writes
           touch (not per request: rewriting a dirty page costs about a
           request) */
        t = (double)req * (small_writes ? L : write_latency(p)) +
            (double)pages * COLL_PAGE_DIRTY + (double)bytes_sum / B +
            (double)useful_max / COPY_BW;
        /* ordered writes: the token's P-1 hops, one after another */
        if (coll_write_ordered(p, method))
            t += coll_token_cost(p, S);
    } else {
        /* independent reads keep core_io_concurrency requests in flight
           (not on cached data: the CPU copies them one after another) */
        t = (double)req_max * L / ocad_env_conc(ctx, &p->env) +
            (double)(bytes_sum - sv_bytes) / B +
            (sv_n ? (double)sv_bytes / coll_stream_rate(p, sv_len / sv_n)
                  : 0) +
            (double)useful_max / COPY_BW;
    }
    return t;
}
