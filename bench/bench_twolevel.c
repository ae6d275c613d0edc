/*
 * bench_twolevel.c - flat against two-level exchange: `run` rows measure alltoall exchanges on virtual nodes with the
 * simulated network (passion/net.c: a SIMULATION, every message between
 * virtual nodes costs its sender the latency and per-byte time before it
 * is sent) at a fast and a slow setting; `model` rows project the cost
 * model to 64..16,384 ranks on 8..1,024 nodes.
 *
 * Projection fabric: 100 Gb/s InfiniBand HDR100 (NVIDIA ConnectX-6 class):
 * about 1 us MPI latency and 12.5 GB/s, i.e. net_msg = 1e-6 s and
 * net_byte = 0.08e-9 s/byte on top of the on-node costs calibrated on
 * this machine (coll_xchg_costs_get). The model is the exchange's own
 * (plan_xchg_model.c and each algorithm's price, plan_xchg_alg's
 * model / net): a statement
 * of the algorithms' start-up and byte counts, not a network simulator.
 * The `predicted` of the run rows comes from the contexts that ran them,
 * with the simulated network on: its latency and per-byte time, and the
 * fixed on-node figures the model then uses (plan_xchg_calib.c), not this
 * machine's calibration.
 *
 * usage: mpiexec -n P bench-twolevel [--reps N] [--model-only]
 *                                    [--slow LATENCY_US,BYTE_NS]
 * Rows (CSV on stdout):
 *   run,P,nodes,net,block,alg,seconds,predicted,inter_msgs,inter_bytes,ran
 *     seconds: median over reps of the slowest rank's time (noisy on a
 *     loaded machine); inter_*: all ranks' messages/bytes between nodes
 *     (context counters) of one call; predicted: the model for what ran
 *   model,costs,P,nodes,block,alg,seconds,net_msgs_per_rank,auto
 *     costs: here (calibrated on this machine) or quiet (an assumed quiet
 *     node's shared memory: round 0.5 us, msg 0.3 us, 10 GB/s, copy
 *     20 GB/s)
 */
#include "../collective/exchange/exchange.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const int algs[] = {PASSION_XCHG_A1, PASSION_XCHG_FOURSTAGE_NB,
                           PASSION_XCHG_TWOLEVEL, PASSION_XCHG_AUTO};
#define NALG 4

/* the simulated network's settings (--slow US,NS changes the slow one) */
static struct {
    const char *name;
    double lat_us, byte_ns;
} nets[] = {{"fast", 1.0, 0.08}, {"slow", 50.0, 1.0}};

static void run_rows(int P, int me, int reps)
{
    int64_t blocks[] = {64, 4096};
    for (int k = P / 2; k >= 1 && k >= P / 8; k /= 2) {
        if (P % k || P / k < 2)
            continue;
        for (int ni = 0; ni < 2; ni++) {
            passion_ctx *ctx = NULL;
            passion_options *o = NULL;
            char opt[160];
            snprintf(opt, sizeof opt,
                     "virtual_node_ranks=%d,sim_net_latency_us=%g,"
                     "sim_net_byte_ns=%g",
                     k, nets[ni].lat_us, nets[ni].byte_ns);
            passion_options_create(&o);
            passion_options_parse(o, opt);
            if (passion_init(MPI_COMM_WORLD, o, &ctx)) {
                if (me == 0)
                    fprintf(stderr, "init %s failed\n", opt);
                passion_options_free(o);
                continue;
            }
            passion_options_free(o);
            for (int bi = 0; bi < 2; bi++) {
                int64_t b = blocks[bi];
                char *sb = malloc((size_t)(b * P)), *rb = malloc((size_t)(b * P));
                memset(sb, me, (size_t)(b * P));
                double t[NALG][64];
                int64_t im[NALG][2], ran[NALG];
                double pred[NALG];
                /* interleaved: every algorithm once per repetition */
                for (int r = 0; r < reps + 1; r++)
                    for (int ai = 0; ai < NALG; ai++) {
                        passion_counters_reset(ctx);
                        MPI_Barrier(MPI_COMM_WORLD);
                        double t0 = MPI_Wtime();
                        passion_alltoall(ctx, sb, rb, b, MPI_BYTE, algs[ai],
                                         0);
                        double dt = MPI_Wtime() - t0, mx;
                        MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX,
                                      MPI_COMM_WORLD);
                        if (r > 0) /* the first is a warm-up (calibration) */
                            t[ai][r - 1] = mx;
                        passion_counters c;
                        passion_counters_get(ctx, &c);
                        int64_t v[2] = {(int64_t)c.messages_inter_node,
                                        (int64_t)c.bytes_inter_node};
                        MPI_Allreduce(v, im[ai], 2, MPI_INT64_T, MPI_SUM,
                                      MPI_COMM_WORLD);
                        coll_xchg_stats st;
                        coll_xchg_last(ctx, &st);
                        ran[ai] = st.alg;
                        pred[ai] = st.predicted;
                    }
                for (int ai = 0; ai < NALG && me == 0; ai++) {
                    qsort(t[ai], (size_t)reps, sizeof(double), cmp_d);
                    printf("run,%d,%d,%s,%lld,%s,%.6g,%.6g,%lld,%lld,%s\n", P,
                           P / k, nets[ni].name, (long long)b,
                           coll_xchg_name(algs[ai]), t[ai][reps / 2],
                           pred[ai], (long long)im[ai][0],
                           (long long)im[ai][1],
                           coll_xchg_name((int)ran[ai]));
                }
                fflush(stdout);
                free(sb);
                free(rb);
            }
            passion_finalize(ctx);
        }
    }
}

static void model_rows(coll_xchg_costs base, const char *label)
{
    coll_xchg_costs c = base;
    c.net_msg = 1e-6;      /* HDR100: ~1 us */
    c.net_byte = 0.08e-9;  /* 12.5 GB/s */
    const int cand[] = {PASSION_XCHG_A1, PASSION_XCHG_PAIRWISE,
                        PASSION_XCHG_INDEX, PASSION_XCHG_FOURSTAGE_NB,
                        PASSION_XCHG_TWOLEVEL};
    int64_t blocks[] = {64, 4096, 65536};
    for (int P = 64; P <= 16384; P *= 4)
        for (int N = 8; N <= 1024; N *= 2) {
            if (N > P || P / N > 128 || P % N)
                continue;
            for (int bi = 0; bi < 3; bi++) {
                coll_xchg_shape s = coll_shape_regular(P, blocks[bi]);
                s.nodes = N;
                s.node_max = P / N;
                coll_xchg_choice ch = coll_xchg_choose(&c, &s, 1);
                for (int ai = 0; ai < 5; ai++) {
                    int r = 0;
                    double t = coll_xchg_model(&c, cand[ai], 0, &s, &r);
                    const plan_xchg_alg *ops = plan_xchg_alg_get(cand[ai]);
                    double m = 0, b = 0;
                    if (ops->net) {
                        ops->net(&s, r, &m, &b);
                    } else {
                        double share = (double)(P - P / N) / (P - 1);
                        m = (P - 1) * share;
                    }
                    printf("model,%s,%d,%d,%lld,%s,%.6g,%.0f,%s\n", label,
                           P, N, (long long)blocks[bi],
                           coll_xchg_name(ops->id), t, m,
                           coll_xchg_name(ch.alg));
                }
            }
        }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int P, me, reps = 5, model_only = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--model-only"))
            model_only = 1;
        else if (!strcmp(argv[i], "--slow") && i + 1 < argc &&
                 sscanf(argv[++i], "%lf,%lf", &nets[1].lat_us,
                        &nets[1].byte_ns) != 2) {
            if (me == 0)
                fprintf(stderr, "--slow LATENCY_US,BYTE_NS\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (reps < 1)
        reps = 1;
    if (reps > 64)
        reps = 64;
    if (me == 0) {
        printf("# run,P,nodes,net,block,alg,seconds,predicted,inter_msgs,"
               "inter_bytes,ran  (simulated network: fast = %g us + %g "
               "ns/B, slow = %g us + %g ns/B)\n", nets[0].lat_us,
               nets[0].byte_ns, nets[1].lat_us, nets[1].byte_ns);
        printf("# model,costs,P,nodes,block,alg,seconds,net_msgs_per_rank,"
               "auto  (fabric: 100 Gb/s InfiniBand HDR100, 1 us, 12.5 GB/s; "
               "on-node costs: here = calibrated on this machine, quiet = "
               "assumed quiet node: round 0.5 us, msg 0.3 us, 10 GB/s, "
               "copy 20 GB/s)\n");
    }
    if (!model_only && P >= 2)
        run_rows(P, me, reps);
    /* the on-node costs calibrated on this machine */
    passion_ctx *ctx = NULL;
    coll_xchg_costs c = coll_xchg_costs_default();
    if (passion_init(MPI_COMM_WORLD, NULL, &ctx) == 0) {
        coll_xchg_costs_get(ctx, &c);
        passion_finalize(ctx);
    }
    if (me == 0) {
        printf("# costs: round %.3g msg %.3g byte %.3g copy %.3g (%s)\n",
               c.round, c.msg, c.byte, c.copy,
               c.source == COLL_COSTS_MEASURED ? "measured" : "default");
        model_rows(c, "here");
        coll_xchg_costs q = {0.5e-6, 0.3e-6, 0.1e-9, 0.05e-9,
                             COLL_COSTS_OPTIONS, 0, 0};
        model_rows(q, "quiet");
    }
    MPI_Finalize();
    return 0;
}
