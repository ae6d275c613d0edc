/*
 * bench_nodes.c - suite `nodes`: the thesis's
 * patterns (tables 6.1-6.6, bench_thesis.c) through the extended two-phase
 * method on virtual nodes with the simulated network, flat against
 * two-level exchange and all ranks against one aggregator per node, beside
 * passion's own choice and ROMIO collective with the matching hints; and
 * `model` rows projecting aggregator counts to 64..16,384 ranks.
 *
 * THE NETWORK IS SIMULATED (passion/net.c): the ranks share one machine;
 * every message passion sends between two virtual nodes costs its sender
 * a latency and a per-byte time (a sleep) before it is sent, on its
 * node's one interface (shared by the node's ranks). Two settings,
 * those of bench-twolevel: fast = 1 us + 0.08 ns/byte (a 100 Gb/s
 * InfiniBand HDR100 link), slow = 50 us + 1 ns/byte (about a 10 Gb/s
 * Ethernet with a kernel TCP stack; --slow US,NS sets another: bench/run
 * nodes uses 1000 us + 1 ns/byte, a latency above what an oversubscribed
 * 2-core machine's own messages cost, so that it dominates as a
 * cluster's network does). ROMIO's messages do not go through
 * passion, so the simulated network does NOT charge them (an MPI profiling
 * wrapper cannot see them either: MPICH binds ROMIO's MPI calls inside
 * libmpich): its rows are on the real (shared-memory) transport and are
 * not comparable in time with passion's on the slow network; its hints
 * give the same number of aggregators (cb_nodes = nodes, cb_config_list
 * *:*) but ROMIO sees one host and places them on ranks 0..nodes-1.
 *
 * Modes (rows `run`; method etp-dynamic for the fixed settings):
 *   auto            passion's defaults: method auto, exchange auto, the
 *                   default aggregators (on several nodes the cheaper of
 *                   one per node and all ranks by the model), the planner
 *                   measuring (planner=measure)
 *   auto-estimate   the same with planner=estimate (the cost model alone)
 *   direct          independent requests, no exchange (skipped where a
 *                   rank has more than 2^16 contiguous runs: 6.5-I, 6.6-I)
 *   a1/all, a1/node         flat exchange (A1), all ranks / one per node
 *   twolevel/all, twolevel/node   the two-level exchange, the same
 *                   (x/node skipped on nodes of one rank: it is x/all)
 *   romio-nodes     ROMIO collective, cb_nodes = nodes (see above)
 * Every mode has a context of its own (direct too: the read-back check
 * and the restore of a write case run there, so no untimed call reaches
 * an auto mode's planner). The auto modes run at least BENCH_AUTO_REPS
 * repetitions (the planner measures on the first calls of a signature;
 * beyond the others' repetitions they run alone, in turn); first_s is
 * the first call's time, steady_s the median of the last half
 * (steady_min_s, steady_p90_s its spread), planner the auto modes'
 * planner, load the 1-minute load average at the row.
 * Repetitions are interleaved over the modes (their order a fresh seeded
 * permutation every repetition: mode_order); seconds is the median of
 * the slowest rank's time, min_seconds the fastest repetition,
 * mean_seconds the mean (up to REPS_MAX repetitions), rep_seconds every
 * repetition's time in order (';' between them: bench/table.py pairs the
 * modes of one repetition). Oversubscribed (P above the 2 cores), a
 * call's time comes in steps of the scheduler's 4 ms tick (a rank that
 * waits for a descheduled one waits for the tick: P = 4, --quick, times
 * of 4.0, 8.0, 12.0 ms), so the median of a few repetitions takes one of
 * those values; the mean over many repetitions is what the ratios use.
 * Counters are summed over ranks for one call (the last repetition's:
 * auto's after its planner decided):
 * inter_msgs/inter_bytes (between virtual nodes), intra_msgs, io_clients
 * (ranks that made file requests), io_calls, rounds (communication
 * rounds: passion_counters.rounds). chosen: what auto ran (method and
 * exchange); predicted: auto's model seconds for its choice.
 *
 * Model rows (--model): the two-phase read of an interleaved pattern
 * (every rank B bytes spread over the whole file, like 6.5-I: every rank
 * sends to every aggregator) at P ranks on N nodes for A aggregators
 * (all, per node x1, x2, x4) and flat (A1) or two-level exchange: the
 * exchange's own model (coll_xchg_model) on the irregular shape plus an
 * I/O term. Figures (stated, not measured): fabric 100 Gb/s InfiniBand
 * HDR100, 1 us MPI latency and 12.5 GB/s per link (NVIDIA ConnectX-6
 * product brief; the same as bench-twolevel's projection); file system: a
 * client reads at most its link's 12.5 GB/s, the servers together at most
 * 100 GB/s (ASSUMED: a mid-size Lustre of ~20 object servers at ~5 GB/s),
 * one request 0.5 ms (ASSUMED Lustre RPC round trip under load) per 4 MiB
 * stripe; on-node exchange costs calibrated on this machine (regime
 * `here`) or an assumed quiet node's (`quiet`: round 0.5 us, message
 * 0.3 us, 10 GB/s, copy 20 GB/s, as in bench-twolevel); 64 KiB and
 * 16 MiB per rank.
 *
 * usage: mpiexec -n P bench-nodes --csv F --scratch D [--reps N] [--quick]
 *                                 [--all] [--model] [--slow US,NS]
 *                                 [--net fast|slow] [--case C[,C...]]
 *                                 [--nodes N]
 * (--net, --case, --nodes: only that network, those cases, that split)
 */
#include "../collective/exchange/exchange.h"
#include "bench_thesis.h"
#include "bench_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int64_t N; /* rows = columns, 4-byte elements, column-major */
#define REPS_MAX 128 /* --reps at most */

/* the default cases: one or two per table (--all: every case) */
static const char *only_cases; /* --case C,C,... */
static const char *const some[] = {"6.1-III", "6.2-VIII", "6.3-V", "6.4-V",
                                   "6.5-I", "6.5-II", "6.5-IV", "6.6-I",
                                   "6.6-II"};

static struct net {
    const char *name;
    double lat_us, byte_ns;
} nets[] = {{"fast", 1.0, 0.08}, {"slow", 50.0, 1.0}}; /* --slow US,NS */

enum { M_AUTO, M_AUTO_EST, M_DIRECT, M_A1_ALL, M_A1_NODE, M_TL_ALL,
       M_TL_NODE, M_ROMIO, NMODE };
static const char *mnames[NMODE] = {
    "auto", "auto-estimate", "direct", "a1/all", "a1/node", "twolevel/all",
    "twolevel/node", "romio-nodes"};

static int elem_rc(const passion_section *s, int64_t i, int64_t *r,
                   int64_t *c)
{
    *r = s->start[0] + (i % s->count[0]) * s->stride[0];
    *c = s->start[1] + (i / s->count[0]) * s->stride[1];
    return 0;
}

static int romio_access(MPI_File fh, const passion_section *s, void *buf,
                        int op_write)
{
    const int64_t extent[2] = {N, N};
    const int order[2] = {1, 0}; /* column-major: columns slowest */
    MPI_Datatype ft;
    MPI_Offset disp;
    bench_section_filetype(2, extent, order, 4, 0, s, &ft, &disp);
    int rc = MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native",
                               MPI_INFO_NULL);
    int n = (int)(passion_section_elems(s, 2) * 4);
    if (rc == MPI_SUCCESS)
        rc = op_write ? MPI_File_write_all(fh, buf, n, MPI_BYTE,
                                           MPI_STATUS_IGNORE)
                      : MPI_File_read_all(fh, buf, n, MPI_BYTE,
                                          MPI_STATUS_IGNORE);
    MPI_Type_free(&ft);
    return rc == MPI_SUCCESS ? 0 : -1;
}

typedef struct mode_ctx {
    passion_ctx *ctx;
    passion_array *arr;
    passion_file *f;
} mode_ctx;

static int open_mode(mode_ctx *m, const char *path, const char *opts)
{
    memset(m, 0, sizeof *m);
    int rc = bench_init(&m->ctx, "%s", opts);
    int64_t shape[2] = {N, N};
    passion_array_spec spec;
    passion_array_spec_init(&spec, 2, shape, 4);
    spec.storage = PASSION_COL_MAJOR;
    spec.placement = PASSION_PLACE_GLOBAL;
    if (!rc)
        rc = passion_array_create(m->ctx, &spec, &m->arr);
    if (!rc)
        rc = passion_file_open(m->arr, path, PASSION_MODE_RDWR, &m->f);
    if (!rc) { /* first use: the exchange's calibration, untimed */
        passion_section s;
        int64_t ct[2] = {1, 1};
        passion_section_set(&s, 2, NULL, ct, NULL);
        uint32_t v;
        rc = passion_file_read_all(m->f, &s, &v, NULL,
                                   PASSION_METHOD_ETP_DYNAMIC);
    }
    return rc;
}

static void close_mode(mode_ctx *m)
{
    if (m->f)
        passion_file_close(m->f);
    if (m->arr)
        passion_array_free(m->arr);
    if (m->ctx)
        passion_finalize(m->ctx);
    memset(m, 0, sizeof *m);
}

static const char *method_name(passion_method m)
{
    switch (m) {
    case PASSION_METHOD_DIRECT: return "direct";
    case PASSION_METHOD_SIEVE: return "sieve";
    case PASSION_METHOD_ETP_STATIC: return "etp-static";
    case PASSION_METHOD_ETP_DYNAMIC: return "etp-dynamic";
    default: return "none";
    }
}

/*
 * The modes' order in repetition r of case ci: a permutation drawn from a
 * fixed seed (bench_rand, Fisher-Yates), the same on every rank. The order
 * matters on an oversubscribed machine: the call before a mode's decides
 * which ranks the scheduler has just run, and so how far apart the ranks
 * leave the barrier. With the order only turning by one each repetition,
 * every mode always followed the same other mode (auto after ROMIO's
 * 50 ms call, a1/all after direct's 20 ms one): P = 4 on 2 virtual nodes,
 * 6.5-II, 64 repetitions, the ranks' start times after the barrier lay
 * 3.0 (auto) and 3.6 ms (a1/all) apart on average against 2.3 ms for
 * twolevel/all, which followed a1/node's 7 ms call.
 */
static void mode_order(int *ord, int ci, int r)
{
    uint64_t x = ((uint64_t)ci << 32) + (uint64_t)r;
    for (int m = 0; m < NMODE; m++)
        ord[m] = m;
    for (int m = NMODE - 1; m > 0; m--) {
        int k = (int)(bench_rand(&x) % (uint64_t)(m + 1));
        int t = ord[m];
        ord[m] = ord[k];
        ord[k] = t;
    }
}

/* One split (k ranks per virtual node) and network: every case, every
   mode, interleaved repetitions; rows to csv (rank 0). */
static void run_split(const bench_args *a, FILE *csv, const char *path,
                      int k, const struct net *nt, int all_cases)
{
    const int P = a->size, me = a->rank, nodes = (P + k - 1) / k;
    char regime[32];
    snprintf(regime, sizeof regime, "%dn-%s", nodes, nt->name);
    mode_ctx mc[NMODE];
    memset(mc, 0, sizeof mc);
    char base[160];
    snprintf(base, sizeof base,
             "virtual_node_ranks=%d,sim_net_latency_us=%g,"
             "sim_net_byte_ns=%g", k, nt->lat_us, nt->byte_ns);
    const char *extra[NMODE] = {"planner=measure", "planner=estimate", "",
                                "exchange=a1,cb_per_node=%d",
                                "exchange=a1,cb_per_node=1",
                                "exchange=twolevel,cb_per_node=%d",
                                "exchange=twolevel,cb_per_node=1", NULL};
    /* nodes of one rank: x/node is x/all, the same options; run once
       (two runs of one setting made the best fixed setting the faster of
       two samples of the same time: P = 4 on 4 nodes, fast, 6.6-I, a1/all
       6.49 ms and a1/node 6.10 ms, auto 6.92) */
    const int same_node = k == 1;
    if (same_node)
        extra[M_A1_NODE] = extra[M_TL_NODE] = NULL;
    int bad_init = 0;
    for (int m = 0; m < NMODE; m++) {
        if (!extra[m])
            continue;
        char opts[320], e[96];
        snprintf(e, sizeof e, extra[m], k);
        snprintf(opts, sizeof opts, "%s%s%s", base, *e ? "," : "", e);
        int rc = open_mode(&mc[m], path, opts);
        if (rc) {
            if (me == 0)
                fprintf(stderr, "bench-nodes: %s: %s\n", opts,
                        passion_strerror(rc));
            bad_init = 1;
        }
    }
    if (bad_init) {
        for (int m = 0; m < NMODE; m++)
            close_mode(&mc[m]);
        return;
    }
    MPI_File fh = bench_romio_open(path, BENCH_ROMIO_TUNED, nodes);
    passion_section *all = malloc(sizeof *all * (size_t)P);
    for (int ci = 0; ci < bench_thesis_ncases; ci++) {
        const bench_tcase *c = &bench_thesis_cases[ci];
        int pick = all_cases;
        for (size_t i = 0; i < sizeof some / sizeof some[0]; i++)
            pick |= !strcmp(some[i], c->name);
        if (only_cases) {
            size_t n = strlen(c->name);
            const char *q = only_cases;
            pick = 0;
            while (!pick && (q = strstr(q, c->name)) != NULL) {
                pick = (q == only_cases || q[-1] == ',') &&
                       (q[n] == ',' || q[n] == 0);
                q += n;
            }
        }
        if (!pick)
            continue;
        int op_write = !strcmp(c->op, "write");
        for (int q = 0; q < P; q++)
            bench_thesis_section(c->sec, q, P, N, &all[q]);
        passion_section *s = &all[me];
        int64_t ne = passion_section_elems(s, 2), runs = 0;
        for (int q = 0; q < P; q++) {
            int64_t e = passion_section_elems(&all[q], 2);
            int64_t r = all[q].stride[0] == 1 && e ? all[q].count[1] : e;
            runs = r > runs ? r : runs;
        }
        const int skip_direct = runs > (1 << 16);
        uint32_t *buf = malloc((size_t)(ne > 0 ? ne : 1) * 4);
        int reps = a->reps ? a->reps : a->quick ? 2 : 3;
        if (reps > REPS_MAX)
            reps = REPS_MAX;
        /* the auto modes: enough calls for the planner to decide before
           the steady window (the last half) */
        int nrep[NMODE], most = 0;
        for (int m = 0; m < NMODE; m++) {
            nrep[m] = m == M_AUTO || m == M_AUTO_EST ? bench_auto_reps(reps)
                                                     : reps;
            if (nrep[m] > REPS_MAX)
                nrep[m] = REPS_MAX;
            most = nrep[m] > most ? nrep[m] : most;
        }
        double t[NMODE][REPS_MAX];
        uint64_t sum[NMODE][6];
        char chosen[NMODE][48];
        double pred[NMODE];
        int bad[NMODE];
        memset(sum, 0, sizeof sum);
        memset(bad, 0, sizeof bad);
        memset(pred, 0, sizeof pred);
        for (int m = 0; m < NMODE; m++)
            strcpy(chosen[m], "");
        bench_progress(a, "nodes P=%d %s %s", P, regime, c->name);
        /* the modes' order: a fresh permutation every repetition, from a
           fixed seed (the same on every rank), so that no mode always
           follows the same other mode (see mode_order) */
        int ord[NMODE];
        for (int r = 0; r < most; r++)
            for (int j = 0; j < NMODE; j++) {
                if (j == 0)
                    mode_order(ord, ci, r);
                const int m = ord[j];
                if ((m == M_DIRECT && skip_direct) || r >= nrep[m] ||
                    (same_node && (m == M_A1_NODE || m == M_TL_NODE)))
                    continue;
                const int is_auto = m == M_AUTO || m == M_AUTO_EST;
                mode_ctx *x = &mc[m];
                uint32_t salt = (uint32_t)(ci * 16 + m + 1);
                if (op_write)
                    for (int64_t i = 0; i < ne; i++) {
                        int64_t rr, cc;
                        elem_rc(s, i, &rr, &cc);
                        buf[i] = bench_thesis_wval(N, rr, cc, salt);
                    }
                else
                    memset(buf, 0, (size_t)(ne > 0 ? ne : 1) * 4);
                int method = is_auto         ? PASSION_METHOD_AUTO
                             : m == M_DIRECT ? PASSION_METHOD_DIRECT
                                             : PASSION_METHOD_ETP_DYNAMIC;
                if (m != M_ROMIO)
                    passion_counters_reset(x->ctx);
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                int e;
                if (m == M_ROMIO)
                    e = romio_access(fh, s, buf, op_write);
                else if (op_write)
                    e = passion_file_write_all(x->f, s, buf, NULL, method);
                else
                    e = passion_file_read_all(x->f, s, buf, NULL, method);
                t[m][r] = bench_max_time(MPI_Wtime() - t0);
                bad[m] |= e != 0;
                if (r == nrep[m] - 1 && m != M_ROMIO) {
                    passion_counters cn;
                    passion_counters_get(x->ctx, &cn);
                    uint64_t v[6] = {cn.messages_inter_node,
                                     cn.bytes_inter_node,
                                     cn.messages_intra_node,
                                     cn.io_calls > 0, cn.io_calls,
                                     cn.rounds};
                    MPI_Allreduce(v, sum[m], 6, MPI_UINT64_T, MPI_SUM,
                                  MPI_COMM_WORLD);
                    if (is_auto) {
                        passion_method pm = PASSION_METHOD_AUTO;
                        passion_ctx_last_method(x->ctx, &pm, &pred[m]);
                        /* a rank may have moved nothing: the method of
                           the rank that did (the same on all that did) */
                        int id = pm, mx;
                        MPI_Allreduce(&id, &mx, 1, MPI_INT, MPI_MAX,
                                      MPI_COMM_WORLD);
                        double pmx;
                        MPI_Allreduce(&pred[m], &pmx, 1, MPI_DOUBLE,
                                      MPI_MAX, MPI_COMM_WORLD);
                        pred[m] = pmx;
                        coll_xchg_stats st;
                        memset(&st, 0, sizeof st);
                        int xs = coll_xchg_last(x->ctx, &st) == 0 &&
                                 mx != PASSION_METHOD_DIRECT &&
                                 mx != PASSION_METHOD_SIEVE;
                        snprintf(chosen[m], sizeof chosen[m], "%s%s%s",
                                 method_name((passion_method)mx),
                                 xs ? "+" : "",
                                 xs ? coll_xchg_name(st.alg) : "");
                    }
                }
                /* check this call (outside the time) */
                if (!op_write) {
                    for (int64_t i = 0; i < ne && !bad[m]; i++) {
                        int64_t rr, cc;
                        elem_rc(s, i, &rr, &cc);
                        bad[m] |= buf[i] != bench_thesis_orig(N, rr, cc);
                    }
                } else if (r == 0) {
                    /* read back this rank's section independently (the
                       sections of a write case are disjoint) */
                    uint32_t *back = malloc((size_t)(ne > 0 ? ne : 1) * 4);
                    int e2 = passion_file_read(mc[M_DIRECT].f, s, back,
                                               NULL, PASSION_METHOD_DIRECT);
                    bad[m] |= e2 != 0 ||
                              memcmp(back, buf, (size_t)ne * 4) != 0;
                    free(back);
                }
            }
        if (op_write) { /* restore */
            for (int64_t i = 0; i < ne; i++) {
                int64_t rr, cc;
                elem_rc(s, i, &rr, &cc);
                buf[i] = bench_thesis_orig(N, rr, cc);
            }
            passion_file_write_all(mc[M_DIRECT].f, s, buf, NULL,
                                   PASSION_METHOD_AUTO);
        }
        int allbad[NMODE];
        MPI_Allreduce(bad, allbad, NMODE, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        double load = bench_load();
        for (int m = 0; m < NMODE && csv; m++) {
            const int is_auto = m == M_AUTO || m == M_AUTO_EST;
            if (m == M_DIRECT && skip_direct) {
                fprintf(csv, "run,%s,%s,%d,%s,%d,%d,%s,%s,%s,,,,,,,,,,0,"
                        "skipped (%lld runs),,,,,,,,,\n", c->name, c->op, P,
                        a->ranks_note, nodes, k, nt->name, regime,
                        mnames[m], (long long)runs);
                continue;
            }
            if (same_node && (m == M_A1_NODE || m == M_TL_NODE)) {
                fprintf(csv, "run,%s,%s,%d,%s,%d,%d,%s,%s,%s,,,,,,,,,,0,"
                        "skipped (the same setting as %s on nodes of one "
                        "rank),,,,,,,,,\n", c->name, c->op, P, a->ranks_note,
                        nodes, k, nt->name, regime, mnames[m],
                        mnames[m == M_A1_NODE ? M_A1_ALL : M_TL_ALL]);
                continue;
            }
            const int n = nrep[m];
            double tmin = t[m][0], tsum = 0, ts[REPS_MAX];
            bench_steady sy;
            bench_steady_of(t[m], n, &sy);
            for (int r = 0; r < n; r++) {
                tmin = t[m][r] < tmin ? t[m][r] : tmin;
                tsum += t[m][r];
                ts[r] = t[m][r];
            }
            fprintf(csv, "run,%s,%s,%d,%s,%d,%d,%s,%s,%s,%.6g,%.6g,", c->name,
                    c->op, P, a->ranks_note, nodes, k, nt->name, regime,
                    mnames[m], bench_median(ts, n), tmin);
            if (m == M_ROMIO)
                fprintf(csv, ",,,,,%s,,", "not charged");
            else
                fprintf(csv, "%llu,%llu,%llu,%llu,%llu,%s,%.6g,",
                        (unsigned long long)sum[m][0],
                        (unsigned long long)sum[m][1],
                        (unsigned long long)sum[m][2],
                        (unsigned long long)sum[m][3],
                        (unsigned long long)sum[m][4], chosen[m], pred[m]);
            fprintf(csv, "%d,%s,%.6g,", n, allbad[m] ? "FAIL" : "ok",
                    tsum / n);
            if (m != M_ROMIO)
                fprintf(csv, "%llu", (unsigned long long)sum[m][5]);
            fputc(',', csv);
            /* every repetition's time in repetition order: the modes of
               one repetition ran back to back, so the table pairs them */
            for (int r = 0; r < n; r++)
                fprintf(csv, "%s%.4g", r ? ";" : "", t[m][r]);
            fputc(',', csv);
            bench_steady_csv(csv, &sy, !is_auto || n >= BENCH_AUTO_REPS);
            fprintf(csv, ",%s,%.2f\n",
                    is_auto ? bench_planner(mc[m].ctx) : "", load);
        }
        if (csv)
            fflush(csv);
        free(buf);
    }
    free(all);
    MPI_File_close(&fh);
    for (int m = 0; m < NMODE; m++)
        close_mode(&mc[m]);
}

/* ---- projection ---- */

/* Two-phase read of B bytes per rank interleaved over the whole file at
   P ranks on nn nodes with A aggregators: exchange (alg) + file I/O. */
static double model_etp(const coll_xchg_costs *c, int alg, int P, int nn,
                        int A, int64_t B, double *net_msgs)
{
    /* every aggregator's domain holds B/A of every rank's data: it sends
       B/A bytes to each rank (a read: aggregators send) */
    int64_t piece = B / A > 0 ? B / A : 1;
    coll_xchg_shape s;
    memset(&s, 0, sizeof s);
    s.procs = P;
    s.block = -1;
    s.lmax = piece * P > B ? piece * P : B; /* an aggregator sends P pieces */
    s.lmax_x = s.lmax - piece;
    s.mmax = piece;
    s.total = piece * (int64_t)A * (P - 1);
    s.nodes = nn;
    s.node_max = P / nn;
    int radix = 0;
    double tx = coll_xchg_model(c, alg, 0, &s, &radix);
    const plan_xchg_alg *ops = plan_xchg_alg_get(alg);
    double m = 0, b = 0;
    if (ops && ops->net)
        ops->net(&s, radix, &m, &b);
    else /* direct: an aggregator's messages to the other nodes' ranks */
        m = (double)(P - P / nn);
    *net_msgs = m;
    /* file: each aggregator reads P*B/A bytes in 4 MiB stripes; a client
       at most 12.5 GB/s, all together at most 100 GB/s */
    const double client_bw = 12.5e9, fs_bw = 100e9, rpc = 0.5e-3;
    double dom = (double)B * P / A;
    double bw = fs_bw / A < client_bw ? fs_bw / A : client_bw;
    double tio = dom / bw + rpc * (dom / (4 << 20) + 1);
    return tx + tio;
}

static void model_rows(FILE *csv, coll_xchg_costs c, const char *label)
{
    c.net_msg = 1e-6;     /* HDR100: ~1 us */
    c.net_byte = 0.08e-9; /* 12.5 GB/s */
    const int algs[2] = {PASSION_XCHG_A1, PASSION_XCHG_TWOLEVEL};
    /* 64 KiB per rank (start-ups count) and 16 MiB (bytes count) */
    for (int bi = 0; bi < 2; bi++)
    for (int P = 64; P <= 16384; P *= 4)
        for (int nn = 8; nn <= 1024; nn *= 2) {
            if (nn > P || P / nn > 128 || P % nn)
                continue;
            int per = P / nn;
            int counts[5] = {P, nn, 2 * nn, 4 * nn, 0};
            const char *cname[5] = {"all", "node", "2/node", "4/node", ""};
            for (int ai = 0; ai < 4; ai++) {
                if (ai > 1 && counts[ai] > P)
                    continue;
                if (ai > 1 && counts[ai] / nn > per)
                    continue;
                for (int x = 0; x < 2; x++) {
                    double msgs = 0;
                    const int64_t B = bi ? 16 << 20 : 64 << 10;
                    double tm = model_etp(&c, algs[x], P, nn, counts[ai], B,
                                          &msgs);
                    fprintf(csv, "model,interleaved-%s,read,%d,model,%d,"
                                 "%d,hdr100,%s,%s/%s,%.6g,,%.0f,,,%d,,"
                                 "%s,,,model\n",
                            bi ? "16MiB" : "64KiB", P, nn, per, label,
                            coll_xchg_name(algs[x]), cname[ai], tm, msgs,
                            counts[ai], "fs 100GB/s assumed");
                }
            }
        }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_args a;
    if (bench_args_parse(&a, argc, argv)) {
        if (a.rank == 0)
            fprintf(stderr, "usage: bench-nodes --csv F --scratch D\n");
        MPI_Finalize();
        return 2;
    }
    bench_peer_labels(&a, mnames, NMODE);
    int all_cases = 0, model = 0, only_net = -1, only_nodes = 0;
    for (int i = 1; i < argc; i++) {
        all_cases |= !strcmp(argv[i], "--all");
        model |= !strcmp(argv[i], "--model");
        if (!strcmp(argv[i], "--net") && i + 1 < argc)
            only_net = !strcmp(argv[i + 1], "slow");
        if (!strcmp(argv[i], "--case") && i + 1 < argc)
            only_cases = argv[i + 1];
        if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
            only_nodes = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--slow") && i + 1 < argc &&
            sscanf(argv[i + 1], "%lf,%lf", &nets[1].lat_us,
                   &nets[1].byte_ns) != 2) {
            if (a.rank == 0)
                fprintf(stderr, "--slow LATENCY_US,BYTE_NS\n");
            MPI_Finalize();
            return 2;
        }
    }
    N = a.quick ? 1024 : 4096;
    const int P = a.size;
    FILE *csv = bench_csv_open(&a,
        "kind,case,op,procs,ranks,nodes,ranks_per_node,net,regime,method,"
        "seconds,min_seconds,inter_msgs,inter_bytes,intra_msgs,io_clients,"
        "io_calls,chosen,predicted,reps,check,mean_seconds,rounds,"
        "rep_seconds,first_s,steady_s,steady_min_s,steady_p90_s,planner,"
        "load");
    passion_ctx *ctx = NULL;
    if (bench_init(&ctx, "%s", "")) {
        MPI_Finalize();
        return 1;
    }
    char path[600];
    snprintf(path, sizeof path, "%s/nodes-%d.raw", a.scratch, P);
    int64_t shape[2] = {N, N};
    passion_array_spec spec;
    passion_array_spec_init(&spec, 2, shape, 4);
    spec.storage = PASSION_COL_MAJOR;
    spec.placement = PASSION_PLACE_GLOBAL;
    passion_array *arr = NULL;
    passion_file *f = NULL;
    int rc = passion_array_create(ctx, &spec, &arr);
    if (!rc)
        rc = passion_file_open(arr, path, PASSION_MODE_CREATE, &f);
    if (!rc) { /* fill: each rank a block of columns */
        rc = bench_thesis_fill(f, N, a.rank, P);
        passion_file_close(f);
    }
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rc) {
        if (a.rank == 0)
            fprintf(stderr, "bench-nodes: setup: %s\n", passion_strerror(rc));
        MPI_Finalize();
        return 1;
    }
    if (a.rank == 0)
        fprintf(stderr, "bench-nodes: P=%d (%s: %s), N=%lld; the network "
                "between virtual nodes is SIMULATED (passion's sends "
                "only; ROMIO's are not charged)\n", P, a.ranks_note,
                a.ranks_note[0] == 'o' ? "more ranks than cores, every "
                "message has the latency of a descheduled receiver" : "",
                (long long)N);
    /* splits: 2, 4, 8 nodes of P / nodes ranks (at least 1) */
    for (int nodes = 2; nodes <= 8 && nodes <= P; nodes *= 2) {
        if (P % nodes || (only_nodes && nodes != only_nodes))
            continue;
        for (int ni = 0; ni < 2; ni++)
            if (only_net < 0 || ni == only_net)
                run_split(&a, csv, path, P / nodes, &nets[ni], all_cases);
    }
    if (model) {
        /* the on-node costs calibrated here (collective) */
        coll_xchg_costs c = coll_xchg_costs_default();
        coll_xchg_costs_get(ctx, &c);
        if (a.rank == 0 && csv) {
            model_rows(csv, c, "here");
            /* an assumed quiet node's shared memory (bench-twolevel's) */
            coll_xchg_costs q = {0.5e-6, 0.3e-6, 0.1e-9, 0.05e-9,
                                 COLL_COSTS_OPTIONS, 0, 0};
            model_rows(csv, q, "quiet");
        }
    }
    bench_progress(&a, "nodes P=%d done\n", P);
    if (csv && csv != stdout)
        fclose(csv);
    passion_array_free(arr);
    passion_finalize(ctx);
    if (a.rank == 0)
        unlink(path);
    MPI_Finalize();
    return 0;
}
