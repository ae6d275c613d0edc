/*
 * test_threads.c - the thread contract of include/passion.h, enforced:
 * a call entered on a context while another thread's
 * call runs on the same context returns PASSION_ESTATE at once and changes
 * nothing; the running call completes with the right data; the context
 * works afterwards; calls on two different contexts from two threads run
 * at once (MPI_THREAD_MULTIPLE) and both succeed.
 *
 * Needs MPI_THREAD_MULTIPLE (run with TH_MPI_THREAD=multiple) and P >= 2:
 * the running call is held open by making rank 1 join it only after rank
 * 0's second thread has tried its calls. Data are checked against a naive
 * reference (every value names its sender, receiver and position).
 */
#include "harness.h"

#include "../passion/core.h" /* ctx->busy_owner: is the call running */
#include "passion.h"

#include <pthread.h>
#include <sched.h>

#define N 64 /* int64 per rank pair */

typedef struct a2a {
    passion_ctx *ctx;
    int64_t *sb, *rb;
    int rc;
} a2a;

static int64_t val(int from, int to, int k)
{
    return (int64_t)from * 1000000 + to * 1000 + k;
}

static void a2a_fill(a2a *x, passion_ctx *ctx)
{
    int P = th_size;
    x->ctx = ctx;
    x->sb = malloc((size_t)P * N * sizeof *x->sb);
    x->rb = calloc((size_t)P * N, sizeof *x->rb);
    for (int j = 0; j < P; j++)
        for (int k = 0; k < N; k++)
            x->sb[j * N + k] = val(th_rank, j, k);
    x->rc = -1000;
}

static int a2a_ok(const a2a *x)
{
    for (int i = 0; i < th_size; i++)
        for (int k = 0; k < N; k++)
            if (x->rb[i * N + k] != val(i, th_rank, k))
                return 0;
    return 1;
}

static void a2a_free(a2a *x)
{
    free(x->sb);
    free(x->rb);
}

static void *a2a_run(void *p)
{
    a2a *x = p;
    x->rc = passion_alltoall(x->ctx, x->sb, x->rb, N, MPI_INT64_T,
                             PASSION_XCHG_AUTO, 0);
    return NULL;
}

static int multiple(void)
{
    int lvl = 0;
    MPI_Query_thread(&lvl);
    return lvl == MPI_THREAD_MULTIPLE;
}

static void test_busy(void)
{
    TH_CHECK(multiple(), "needs MPI_THREAD_MULTIPLE (TH_MPI_THREAD=multiple)");
    if (!multiple() || th_size < 2)
        return;
    passion_ctx *ctx = NULL;
    TH_CHECK(th_init(&ctx, "%s", "") == 0, "passion_init");
    MPI_Comm side;
    MPI_Comm_dup(MPI_COMM_WORLD, &side);
    a2a x;
    a2a_fill(&x, ctx);
    if (th_rank == 0) {
        pthread_t t;
        pthread_create(&t, NULL, a2a_run, &x);
        /* until the other thread's call is inside (it then waits for
           rank 1, which joins only after the tries below) */
        while (!__atomic_load_n(&ctx->busy_owner, __ATOMIC_ACQUIRE))
            sched_yield();
        a2a y;
        a2a_fill(&y, ctx);
        int r1 = passion_alltoall(ctx, y.sb, y.rb, N, MPI_INT64_T,
                                  PASSION_XCHG_AUTO, 0);
        int64_t shape[2] = {8, 8};
        passion_array_spec s;
        passion_array_spec_init(&s, 2, shape, 8);
        passion_array *arr = NULL;
        int r2 = passion_array_create(ctx, &s, &arr);
        int r3 = passion_finalize(ctx);
        TH_CHECK(r1 == PASSION_ESTATE, "alltoall during another: %d", r1);
        TH_CHECK(r2 == PASSION_ESTATE && arr == NULL,
                 "array_create during another: %d", r2);
        TH_CHECK(r3 == PASSION_ESTATE, "finalize during another: %d", r3);
        TH_CHECK(__atomic_load_n(&ctx->busy_owner, __ATOMIC_ACQUIRE),
                 "the running call ended before the tries (the test "
                 "proves nothing)");
        int64_t zero = 0;
        for (int i = 0; i < th_size * N; i++)
            zero |= y.rb[i];
        TH_CHECK(zero == 0, "a refused call wrote its receive buffer");
        a2a_free(&y);
        MPI_Barrier(side); /* rank 1 may join the running call now */
        pthread_join(t, NULL);
    } else {
        MPI_Barrier(side);
        a2a_run(&x);
    }
    TH_CHECK(th_all(x.rc == 0 && a2a_ok(&x)), "the running call: rc %d (%s)",
             x.rc, passion_ctx_errdetail(ctx));
    /* the context works afterwards, from this thread */
    a2a z;
    a2a_fill(&z, ctx);
    a2a_run(&z);
    TH_CHECK(th_all(z.rc == 0 && a2a_ok(&z)), "the next call: rc %d (%s)",
             z.rc, passion_ctx_errdetail(ctx));
    a2a_free(&z);
    a2a_free(&x);
    MPI_Comm_free(&side);
    TH_CHECK(th_all(passion_finalize(ctx) == 0), "finalize");
}

static void test_two_contexts(void)
{
    if (!multiple())
        return;
    /* two contexts, one call on each from its own thread at once: the
       guard is per context, and both calls are right */
    passion_ctx *c1 = NULL, *c2 = NULL;
    TH_CHECK(th_init(&c1, "%s", "") == 0 && th_init(&c2, "%s", "") == 0,
             "passion_init");
    for (int rep = 0; rep < 5; rep++) {
        a2a x, y;
        a2a_fill(&x, c1);
        a2a_fill(&y, c2);
        pthread_t t;
        pthread_create(&t, NULL, a2a_run, &x);
        a2a_run(&y);
        pthread_join(t, NULL);
        TH_CHECK(th_all(x.rc == 0 && a2a_ok(&x) && y.rc == 0 && a2a_ok(&y)),
                 "rep %d: rc %d %d", rep, x.rc, y.rc);
        a2a_free(&x);
        a2a_free(&y);
    }
    TH_CHECK(th_all(passion_finalize(c1) == 0 && passion_finalize(c2) == 0),
             "finalize");
}

static void test_sequential(void)
{
    /* one call after another, from different threads (the caller's
       synchronisation orders them): none is refused */
    passion_ctx *ctx = NULL;
    TH_CHECK(th_init(&ctx, "%s", "") == 0, "passion_init");
    for (int rep = 0; rep < 3; rep++) {
        a2a x;
        a2a_fill(&x, ctx);
        if (rep == 1 && multiple()) {
            pthread_t t;
            pthread_create(&t, NULL, a2a_run, &x);
            pthread_join(t, NULL);
        } else {
            a2a_run(&x);
        }
        TH_CHECK(th_all(x.rc == 0 && a2a_ok(&x)), "rep %d: rc %d", rep,
                 x.rc);
        a2a_free(&x);
    }
    TH_CHECK(th_all(passion_finalize(ctx) == 0), "finalize");
}

static CU_TestInfo tests[] = {
    {"a call while another runs on the context: ESTATE", test_busy},
    {"two contexts, two threads at once", test_two_contexts},
    {"sequential calls from different threads", test_sequential},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"threads", NULL, NULL, NULL, NULL, tests},
    CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, suites);
}
