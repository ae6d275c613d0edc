/* bench_xchg.c - see bench_xchg.h. */
#include "bench_xchg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

coll_xchg_shape xb_shape(int P, const xb_case *c)
{
    if (c->block >= 0)
        return coll_shape_regular(P, c->block);
    coll_xchg_shape s;
    memset(&s, 0, sizeof s);
    s.procs = P;
    s.block = -1;
    for (int i = 0; i < P; i++) {
        int64_t out = 0, in = 0, outx = 0, inx = 0;
        for (int j = 0; j < P; j++) {
            out += c->m[i * P + j];
            in += c->m[j * P + i];
            if (j != i) {
                outx += c->m[i * P + j];
                inx += c->m[j * P + i];
                if (c->m[i * P + j] > s.mmax)
                    s.mmax = c->m[i * P + j];
                s.total += c->m[i * P + j];
            }
        }
        s.lmax = out > s.lmax ? out : s.lmax;
        s.lmax = in > s.lmax ? in : s.lmax;
        s.lmax_x = outx > s.lmax_x ? outx : s.lmax_x;
        s.lmax_x = inx > s.lmax_x ? inx : s.lmax_x;
    }
    /* a regular matrix is a regular exchange */
    int64_t b = c->m[0];
    for (int i = 0; i < P * P && b >= 0; i++)
        if (c->m[i] != b)
            b = -1;
    s.block = b;
    return s;
}

/* the context a method runs in */
static passion_ctx *ctx_of(passion_ctx *ctx, const xb_method *m)
{
    return m->ctx ? m->ctx : ctx;
}

static double model_of(const coll_xchg_costs *costs, const xb_method *m,
                       const coll_xchg_shape *s, char *chosen, size_t n)
{
    if (m->alg == PASSION_XCHG_AUTO) {
        coll_xchg_choice ch = coll_xchg_choose(costs, s, s->block >= 0);
        if (ch.alg == PASSION_XCHG_INDEX)
            snprintf(chosen, n, "index-r%d", ch.radix);
        else
            snprintf(chosen, n, "%s", coll_xchg_name(ch.alg));
        return ch.seconds;
    }
    if (m->alg < 0) /* MPI's call alone, without passion's agreement */
        return coll_xchg_model(costs, PASSION_XCHG_MPI, 0, s, NULL) -
               coll_agree_cost(costs, s->procs);
    return coll_xchg_model(costs, m->alg, m->radix, s, NULL);
}

/* cold regime: push the exchange's buffers out of the CPU caches (an
   in-memory exchange has no page cache to drop) */
static void flush_caches(void)
{
    enum { FLUSH = 32 << 20 };
    static unsigned char *junk;
    static unsigned char v;
    if (!junk)
        junk = malloc(FLUSH);
    if (junk)
        memset(junk, ++v, FLUSH);
}

/* one barrier that yields while it waits */
static void barrier(void)
{
    MPI_Request q;
    MPI_Ibarrier(MPI_COMM_WORLD, &q);
    coll_waitall(1, &q);
}

int xb_run_case(passion_ctx *ctx, const bench_args *a, FILE *csv,
                const coll_xchg_costs *costs, const xb_case *c,
                const xb_method *m, int nm, int reps)
{
    int P = a->size, me = a->rank;
    int64_t *sc = calloc(4 * (size_t)P, sizeof *sc);
    int *isc = calloc(4 * (size_t)P, sizeof *isc);
    int64_t *sd = sc + P, *rc = sc + 2 * P, *rd = sc + 3 * P;
    int *isd = isc + P, *irc = isc + 2 * P, *ird = isc + 3 * P;
    int64_t sn = 0, rn = 0;
    for (int j = 0; j < P; j++) {
        sc[j] = c->block >= 0 ? c->block : c->m[me * P + j];
        rc[j] = c->block >= 0 ? c->block : c->m[j * P + me];
        sd[j] = sn;
        rd[j] = rn;
        sn += sc[j];
        rn += rc[j];
        isc[j] = (int)sc[j];
        isd[j] = (int)sd[j];
        irc[j] = (int)rc[j];
        ird[j] = (int)rd[j];
    }
    unsigned char *sb = malloc((size_t)sn + 1), *rb = malloc((size_t)rn + 1),
                  *ref = malloc((size_t)rn + 1);
    for (int64_t k = 0; k < sn; k++)
        sb[k] = (unsigned char)(k * 7 + me * 13 + 1);
    memset(ref, 0, (size_t)rn + 1);
    if (c->block >= 0)
        MPI_Alltoall(sb, (int)c->block, MPI_BYTE, ref, (int)c->block,
                     MPI_BYTE, MPI_COMM_WORLD);
    else
        MPI_Alltoallv(sb, isc, isd, MPI_BYTE, ref, irc, ird, MPI_BYTE,
                      MPI_COMM_WORLD);

    /* every method reps calls, auto at least BENCH_AUTO_REPS (the
       repetitions beyond reps run the auto methods alone) */
    int *nrep = malloc((size_t)nm * sizeof *nrep), R = reps;
    for (int k = 0; k < nm; k++) {
        nrep[k] = m[k].alg == PASSION_XCHG_AUTO ? bench_auto_reps(reps)
                                                 : reps;
        R = nrep[k] > R ? nrep[k] : R;
    }
    double *t = calloc((size_t)nm * (size_t)R, sizeof *t);
    int64_t *st = calloc((size_t)nm * 6, sizeof *st); /* max over ranks */
    int *bad = calloc((size_t)nm, sizeof *bad);
    int *fail = calloc((size_t)nm, sizeof *fail);
    int *order = malloc((size_t)nm * sizeof *order);
    uint64_t seed = 0x9e3779b97f4a7c15ULL ^ (uint64_t)c->bytes;
    for (int r = 0; r < R; r++) {
        /* every repetition in another order (the same on all ranks), so
           that no method always follows the same one: what the previous
           call leaves behind (ranks still leaving it, caches) is spread
           over all methods */
        for (int k = 0; k < nm; k++)
            order[k] = k;
        for (int k = nm - 1; k > 0; k--) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            int j = (int)((seed >> 33) % (uint64_t)(k + 1));
            int tmp = order[k];
            order[k] = order[j];
            order[j] = tmp;
        }
        for (int kk = 0; kk < nm; kk++) {
            int k = order[kk];
            const xb_method *x = &m[k];
            passion_ctx *xc = ctx_of(ctx, x);
            if (r >= nrep[k])
                continue;
            memset(rb, 0, (size_t)rn + 1);
            if (a->cold)
                flush_caches();
            if (x->spin)
                coll_xchg_set_wait(COLL_WAIT_SPIN);
            barrier();
            double t0 = MPI_Wtime();
            int rcode = 0;
            if (x->alg < 0) {
                if (c->block >= 0)
                    MPI_Alltoall(sb, (int)c->block, MPI_BYTE, rb,
                                 (int)c->block, MPI_BYTE, MPI_COMM_WORLD);
                else
                    MPI_Alltoallv(sb, isc, isd, MPI_BYTE, rb, irc, ird,
                                  MPI_BYTE, MPI_COMM_WORLD);
            } else if (c->block >= 0) {
                rcode = passion_alltoall(xc, sb, rb, c->block, MPI_BYTE,
                                         x->alg, x->radix);
            } else {
                rcode = passion_alltoallv(xc, sb, sc, sd, rb, rc, rd,
                                          MPI_BYTE, x->alg, x->radix);
            }
            t[(size_t)k * R + r] = MPI_Wtime() - t0;
            coll_xchg_set_wait(COLL_WAIT_HYBRID);
            if (rcode)
                fail[k] = 1;
            if (memcmp(rb, ref, (size_t)rn))
                bad[k] = 1;
            if (x->alg >= 0 && r == nrep[k] - 1) {
                coll_xchg_stats s;
                coll_xchg_last(xc, &s);
                int64_t *o = &st[k * 6];
                o[0] = s.rounds;
                o[1] = s.messages;
                o[2] = s.bytes_sent;
                o[3] = s.peak_staging;
                o[4] = s.alg;
                o[5] = s.radix;
            }
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, t, nm * R, MPI_DOUBLE, MPI_MAX,
                  MPI_COMM_WORLD);
    /* the auto methods' predictions from their contexts' own costs
       (collective: each calibrated at xb_begin, so no communication) */
    coll_xchg_costs *own = malloc((size_t)nm * sizeof *own);
    for (int k = 0; k < nm; k++) {
        own[k] = *costs;
        if (m[k].ctx)
            coll_xchg_costs_get(m[k].ctx, &own[k]);
    }
    double load = bench_load();
    MPI_Allreduce(MPI_IN_PLACE, st, nm * 6, MPI_INT64_T, MPI_MAX,
                  MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, bad, nm, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, fail, nm, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    coll_xchg_shape shape = xb_shape(P, c);
    for (int k = 0; k < nm && csv; k++) {
        const xb_method *x = &m[k];
        const int n = nrep[k];
        double *v = &t[(size_t)k * R];
        double *sorted = malloc((size_t)n * sizeof *sorted);
        memcpy(sorted, v, (size_t)n * sizeof *sorted);
        double med = bench_median(sorted, n), mn = sorted[0];
        free(sorted);
        char chosen[32] = "";
        double pred = model_of(&own[k], x, &shape, chosen, sizeof chosen);
        const int64_t *o = &st[k * 6];
        if (x->alg == PASSION_XCHG_AUTO) {
            if (o[4] == PASSION_XCHG_INDEX)
                snprintf(chosen, sizeof chosen, "index-r%lld",
                         (long long)o[5]);
            else if (coll_xchg_name((int)o[4]))
                snprintf(chosen, sizeof chosen, "%s",
                         coll_xchg_name((int)o[4]));
            /* the model of what auto ran */
            pred = coll_xchg_model(&own[k], (int)o[4], (int)o[5], &shape,
                                   NULL);
        }
        fprintf(csv, "%s,measured,%s,%d,%s,%s,%lld,%.6g,%.6g,", c->name,
                x->name, P, a->ranks_note, a->regime, (long long)c->bytes,
                med, mn);
        if (x->alg >= 0)
            fprintf(csv, "%lld,%lld,%lld,%lld,", (long long)o[0],
                    (long long)o[1], (long long)o[2], (long long)o[3]);
        else
            fprintf(csv, ",,,,");
        int radix = x->alg == PASSION_XCHG_INDEX ? x->radix
                    : x->alg == PASSION_XCHG_AUTO && o[4] == PASSION_XCHG_INDEX
                        ? (int)o[5]
                        : 0;
        if (radix)
            fprintf(csv, "%d,", radix);
        else
            fprintf(csv, ",");
        fprintf(csv, "%.6g,%s,%d,%s,", pred, chosen, n,
                fail[k] ? "ERROR" : bad[k] ? "WRONG" : "ok");
        bench_steady sy;
        bench_steady_of(v, n, &sy);
        bench_steady_csv(csv, &sy,
                         x->alg != PASSION_XCHG_AUTO || n >= BENCH_AUTO_REPS);
        fprintf(csv, ",%s,%.2f\n",
                x->alg == PASSION_XCHG_AUTO ? bench_planner(ctx_of(ctx, x))
                                            : "",
                load);
    }
    if (csv)
        fflush(csv);
    int anybad = 0;
    for (int k = 0; k < nm; k++)
        anybad |= bad[k] | fail[k];
    free(own);
    free(nrep);
    free(order);
    free(t);
    free(st);
    free(bad);
    free(fail);
    free(sb);
    free(rb);
    free(ref);
    free(sc);
    free(isc);
    return anybad;
}

void xb_project(FILE *csv, const bench_args *a, const coll_xchg_costs *costs,
                const char *casename, int64_t bytes,
                const coll_xchg_shape *s, int allow_index)
{
    if (!csv)
        return;
    int P = s->procs;
    int algs[] = {PASSION_XCHG_MPI, PASSION_XCHG_A1, PASSION_XCHG_PAIRWISE,
                  PASSION_XCHG_FOURSTAGE, PASSION_XCHG_FOURSTAGE_NB};
    char op[48];
    snprintf(op, sizeof op, "projection-from-P%d", a->size);
    for (size_t i = 0; i < sizeof algs / sizeof algs[0]; i++)
        fprintf(csv, "%s,%s,%s,%d,model,%s,%lld,,,,,,,,%.6g,,0,model,,,,,,\n",
                casename, op, coll_xchg_name(algs[i]), P, a->regime,
                (long long)bytes,
                coll_xchg_model(costs, algs[i], 0, s, NULL));
    if (allow_index && s->block >= 0) {
        int rs[] = {2, (int)ceil(sqrt((double)P)), P};
        for (int i = 0; i < 3; i++) {
            int64_t c1, c2;
            coll_index_counts(P, rs[i], &c1, &c2);
            fprintf(csv,
                    "%s,%s,index-r%d,%d,model,%s,%lld,,,%lld,%lld,%lld,,%d,"
                    "%.6g,,0,model,,,,,,\n",
                    casename, op, rs[i], P, a->regime, (long long)bytes,
                    (long long)c1, (long long)c1, (long long)(c2 * s->block),
                    rs[i],
                    coll_xchg_model(costs, PASSION_XCHG_INDEX, rs[i], s,
                                    NULL));
        }
    }
    coll_xchg_choice ch = coll_xchg_choose(costs, s, allow_index);
    char chosen[32];
    if (ch.alg == PASSION_XCHG_INDEX)
        snprintf(chosen, sizeof chosen, "index-r%d", ch.radix);
    else
        snprintf(chosen, sizeof chosen, "%s", coll_xchg_name(ch.alg));
    char rad[16] = "";
    if (ch.alg == PASSION_XCHG_INDEX)
        snprintf(rad, sizeof rad, "%d", ch.radix);
    fprintf(csv,
            "%s,%s,auto,%d,model,%s,%lld,,,,,,,%s,%.6g,%s,0,model,,,,,,\n",
            casename, op, P, a->regime, (long long)bytes, rad, ch.seconds,
            chosen);
}

void xb_calibration_row(FILE *csv, const bench_args *a,
                        const coll_xchg_costs *c, double seconds)
{
    if (!csv)
        return;
    /* the machine's load when the suite ran: other programs share the
       cores, and the tables should say so */
    double load = bench_load();
    fprintf(csv,
            "round=%.3g msg=%.3g byte=%.3g copy=%.3g loadavg=%.2f,"
            "calibration,calibrate,%d,%s,%s,,%.6g,,,,,,,,,1,ok,,,,,,%.2f\n",
            c->round, c->msg, c->byte, c->copy, load, a->size,
            a->ranks_note, a->regime, seconds, load);
}

void xb_add_autos(xb_method *m, int *nm, passion_ctx *const autos[2])
{
    m[*nm] = (xb_method){"auto", PASSION_XCHG_AUTO, 0, 0, 0, autos[0]};
    m[*nm + 1] = (xb_method){"auto-estimate", PASSION_XCHG_AUTO, 0, 0, 0,
                             autos[1]};
    *nm += 2;
}

int xb_begin(int argc, char **argv, const char *prog, bench_args *a,
             passion_ctx **ctx, passion_ctx *autos[2], FILE **csv,
             coll_xchg_costs *costs)
{
    MPI_Init(&argc, &argv);
    *ctx = NULL;
    autos[0] = autos[1] = NULL;
    *csv = NULL;
    if (bench_args_parse(a, argc, argv)) {
        if (a->rank == 0)
            fprintf(stderr, "usage: %s --csv F --regime warm|cold "
                            "[--reps N] [--quick]\n", prog);
        MPI_Finalize();
        return 2;
    }
    if (passion_init(MPI_COMM_WORLD, NULL, ctx) ||
        bench_init_planner(&autos[0], "measure", "%s", "") ||
        bench_init_planner(&autos[1], "estimate", "%s", "")) {
        MPI_Finalize();
        return 1;
    }
    *csv = bench_csv_open(a, XB_CSV_HEADER);
    double t0 = MPI_Wtime();
    coll_xchg_costs_get(*ctx, costs);
    xb_calibration_row(*csv, a, costs, bench_max_time(MPI_Wtime() - t0));
    /* the auto contexts' calibrations, untimed (each context measures
       its own message costs on its first exchange) */
    coll_xchg_costs other;
    coll_xchg_costs_get(autos[0], &other);
    coll_xchg_costs_get(autos[1], &other);
    if (a->rank == 0)
        fprintf(stderr, "%s: auto runs twice, planner=%s (auto) and "
                "planner=%s (auto-estimate), each in its own context, at "
                "least %d calls a case (the others: the suite's reps); "
                "steady = median of the last half of the calls\n", prog,
                bench_planner(autos[0]), bench_planner(autos[1]),
                BENCH_AUTO_REPS);
    return 0;
}
