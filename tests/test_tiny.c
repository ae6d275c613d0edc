/*
 * test_tiny.c - the fixed cost of a tiny collective section access (issue
 * 14, "fast on every pattern": calls of a few bytes, where the library's
 * own work per call is what a peer's independent read does not pay).
 * Deterministic counts only, no timing:
 *
 *  1. allocations: after a first call, a collective read of a few runs
 *     (auto, direct, sieve; one run and five) and a direct write of
 *     disjoint sections make at most one counted allocation each (the
 *     access descriptors' staging block, served from the context's
 *     cache; five runs: plus the io_uring engine's table of the batch);
 *     the read's batch tables of a few windows live on the stack (before:
 *     two more per call from the locked pool). Counted with the
 *     test-only option fault_alloc_at set beyond reach (ctx->fault_allocs
 *     then counts every allocation, none fails). Every value read is
 *     checked, every write read back.
 *  2. the learned round cost (coll_sync_cost, updated by every collective
 *     call at P > 1) is what core_learned gives for its samples (the
 *     smallest, then the median), after each of 3 x COLL_SYNC_KEEP calls
 *     (the samples are kept sorted as they come and go, instead of sorted
 *     at every call); the round inside a call (coll_round_inner) is the
 *     least of them.
 *
 *  3. the page-cache probe (core_posix_cached, the probe of every auto
 *     read of more than COLL_PROBE_MIN bytes): an extent of 40 pages
 *     (below 16 windows of 16 pages) is probed in one cachestat system
 *     call (before: one per window of 16 pages, 3), counted by wrapping
 *     syscall(); an extent of 1000 pages in at most 16. Its per mille
 *     is the one mincore gives (every page of the file is cached: just
 *     written; checked by mincore first). Then, the file's pages dropped
 *     but those 16 windows would look at, the probe gives mincore's per
 *     mille of the whole extent (every page counted up to
 *     CORE_PROBE_EXACT; before: 1000, the windows alone). Skipped where
 *     the kernel has no cachestat.
 *
 *  4. passion_init's communicator splits, counted by wrapping
 *     MPI_Comm_split_type and MPI_Comm_split (PMPI), on a communicator of
 *     the test's own: the first context splits by shared memory once and,
 *     on one node, never splits the node leaders off (before: one such
 *     MPI_Comm_split each); later contexts on the same communicator split
 *     by the host leader kept on it (one MPI_Comm_split, no split by
 *     shared memory; before: one each, 90 ms of a 3-rank passion_init's
 *     200 on this 2-core machine), with virtual nodes too, with the same
 *     nodes and cpu_share; the host forgotten on one rank makes every
 *     rank split by shared memory again (no hang); virtual nodes first
 *     keep the host for later real nodes.
 *
 * File values: v(i) = i (file order), doubles, written by rank 0 first.
 */
#include "harness.h"

#include "passion.h"

#include "../collective/coll.h" /* coll_sync_cost, coll_sync_samples,
                                     coll_round_inner */
#include "../passion/core.h"    /* ctx->fault_allocs, core_learned */

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/* syscall() wrapped: cachestat (451) calls counted */
static long n_cachestat;

long syscall(long nr, ...)
{
    va_list ap;
    va_start(ap, nr);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    static long (*real)(long, ...);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "syscall");
    if (nr == 451)
        n_cachestat++;
    return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* MPI_Comm_split_type wrapped (PMPI): calls counted */
static long n_split_type;

int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info,
                        MPI_Comm *out)
{
    n_split_type++;
    return PMPI_Comm_split_type(comm, type, key, info, out);
}

/* MPI_Comm_split wrapped (PMPI): calls counted */
static long n_split;

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
    n_split++;
    return PMPI_Comm_split(comm, color, key, out);
}

#define N 4096

static void test_allocs(void)
{
    th_case_seed = th_seed;
    passion_ctx *ctx;
    passion_array *a;
    passion_file *f = th_ramp_open("fault_alloc_at=1000000000000",
                                   "allocs.raw", N, &ctx, &a);
    if (!f)
        return;
    int rc;
    static double b[64];
    static const passion_method ms[3] = {
        PASSION_METHOD_AUTO, PASSION_METHOD_DIRECT, PASSION_METHOD_SIEVE};
    for (int runs = 1; runs <= 5; runs += 4)
        for (int k = 0; k < 3; k++) {
            /* rank r: `runs` elements 16 apart from 100 r, each a run
               (disjoint; within a page: cached, tiny) */
            passion_section s;
            int64_t s1[1] = {100 * (int64_t)th_rank}, c1[1] = {runs},
                    d1[1] = {16};
            passion_section_set(&s, 1, s1, c1, d1);
            /* a first call: the context's caches filled */
            rc = passion_file_read_all(f, &s, b, NULL, ms[k]);
            TH_CHECK(rc == 0 && th_ramp_ok(b, &s), "first read: %d", rc);
            int64_t before = ctx->fault_allocs;
            int bad = 0;
            for (int i = 0; i < 20; i++) {
                memset(b, 0, sizeof b);
                rc = passion_file_read_all(f, &s, b, NULL, ms[k]);
                bad |= rc != 0 || !th_ramp_ok(b, &s);
            }
            int64_t n = ctx->fault_allocs - before;
            TH_CHECK(!bad, "reads of %d runs, method %d: wrong values or "
                     "rc %d", runs, (int)ms[k], rc);
            /* five runs of cached data may go to io_uring together:
               the engine's table of the batch is one more */
            int64_t most = runs == 1 ? 20 : 40;
            TH_CHECK(n <= most, "20 reads of %d runs, method %d: %lld "
                     "counted allocations (want at most %lld)", runs,
                     (int)ms[k], (long long)n, (long long)most);
        }
    /* direct writes of disjoint sections (the file's own values back) */
    passion_section w;
    int64_t s1[1] = {200 + 100 * (int64_t)th_rank}, c1[1] = {5},
            d1[1] = {7};
    passion_section_set(&w, 1, s1, c1, d1);
    for (int k = 0; k < 5; k++)
        b[k] = (double)(s1[0] + k * d1[0]);
    rc = passion_file_write_all(f, &w, b, NULL, PASSION_METHOD_DIRECT);
    TH_CHECK(rc == 0, "first write: %d", rc);
    int64_t before = ctx->fault_allocs;
    int bad = 0;
    for (int i = 0; i < 20; i++)
        bad |= passion_file_write_all(f, &w, b, NULL,
                                      PASSION_METHOD_DIRECT) != 0;
    int64_t n = ctx->fault_allocs - before;
    TH_CHECK(!bad && n <= 20, "20 direct writes: %lld counted allocations "
             "(want at most one per call), failed %d", (long long)n, bad);
    memset(b, 0, sizeof b);
    rc = passion_file_read_all(f, &w, b, NULL, PASSION_METHOD_DIRECT);
    TH_CHECK(rc == 0 && th_ramp_ok(b, &w), "written values: %d", rc);
    th_ramp_close(f, a, ctx);
}

static void test_sync_median(void)
{
    th_case_seed = th_seed;
    passion_ctx *ctx;
    passion_array *a;
    passion_file *f = th_ramp_open("", "sync.raw", N, &ctx, &a);
    if (!f)
        return;
    int rc;
    static double b[8];
    passion_section s;
    int64_t s1[1] = {8 * (int64_t)th_rank}, c1[1] = {8};
    passion_section_set(&s, 1, s1, c1, NULL);
    int bad = 0;
    for (int i = 0; i < 3 * COLL_SYNC_KEEP && !bad; i++) {
        rc = passion_file_read_all(f, &s, b, NULL, PASSION_METHOD_AUTO);
        double v[COLL_SYNC_KEEP];
        int n = coll_sync_samples(ctx, v);
        /* at P = 1 no sample is learned: the cost is then the message
           calibration's, not checked here */
        if (n > 0 && coll_sync_cost(ctx) != core_learned(v, n)) {
            bad = 1;
            TH_CHECK(0, "call %d: learned round cost %g, core_learned of its "
                     "%d samples %g", i, coll_sync_cost(ctx), n,
                     core_learned(v, n));
        }
        /* a round inside a call: the least of the same samples */
        double least = n > 0 ? v[0] : 0;
        for (int k = 1; k < n; k++)
            least = v[k] < least ? v[k] : least;
        if (n > 0 && coll_round_inner(ctx) != least) {
            bad = 1;
            TH_CHECK(0, "call %d: round inside a call %g, the least of its "
                     "%d samples %g", i, coll_round_inner(ctx), n, least);
        }
        TH_CHECK(rc == 0 && th_ramp_ok(b, &s), "read %d: %d", i, rc);
        TH_CHECK(th_size == 1 ||
                     n == (i < COLL_SYNC_KEEP ? i : COLL_SYNC_KEEP),
                 "call %d: %d samples", i, n);
    }
    th_ramp_close(f, a, ctx);
}

static void test_probe(void)
{
    th_case_seed = th_seed;
    char path[512];
    snprintf(path, sizeof path, "%s/probe.%d.raw", th_dir(), th_rank);
    const int64_t pages = 1000, pg = 4096;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    TH_CHECK(fd >= 0, "open %s", path);
    if (fd < 0)
        return;
    static char page[4096];
    int ok = 1;
    for (int64_t i = 0; i < pages && ok; i++) {
        memset(page, (int)(i & 0xff), sizeof page);
        ok = write(fd, page, sizeof page) == (ssize_t)sizeof page;
    }
    TH_CHECK(ok, "writing %s", path);
    unsigned char *vec = malloc((size_t)pages);
    void *map = mmap(NULL, (size_t)(pages * pg), PROT_READ, MAP_SHARED, fd, 0);
    int all = map != MAP_FAILED && vec &&
              mincore(map, (size_t)(pages * pg), vec) == 0;
    for (int64_t i = 0; i < pages && all; i++)
        all = vec[i] & 1;
    if (map != MAP_FAILED)
        munmap(map, (size_t)(pages * pg));
    free(vec);
    n_cachestat = 0;
    int pm = core_posix_cached(fd, 0, 40 * pg);
    long small = n_cachestat;
    n_cachestat = 0;
    int pm2 = core_posix_cached(fd, 0, pages * pg);
    long big = n_cachestat;
    if (small == 0) { /* no cachestat: the mincore fallback */
        close(fd);
        unlink(path);
        return;
    }
    TH_CHECK(small == 1 && big >= 1 && big <= 16,
             "cachestat calls: %ld for 40 pages (want 1), %ld for %lld "
             "(want 1 to 16)", small, big, (long long)pages);
    if (all)
        TH_CHECK(pm == 1000 && pm2 == 1000,
                 "a cached file probed: %d and %d per mille (want 1000)",
                 pm, pm2);
    /* only the pages 16 windows spread over the extent would look at
       are cached (the rows a strided read just read), the rest dropped:
       the probe counts every page up to CORE_PROBE_EXACT (failed before:
       the windows saw 1000 per mille of a file mostly uncached) */
    if (fsync(fd) == 0 && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0) {
        posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM); /* no readahead */
        int64_t step = (pages - 16) / 15;
        for (int64_t k = 0; k < 16; k++)
            for (int64_t i = 0; i < 16; i++)
                ok = pread(fd, page, sizeof page,
                           (off_t)((k * step + i) * pg)) == (ssize_t)sizeof page;
        int64_t in = 0;
        vec = malloc((size_t)pages);
        map = mmap(NULL, (size_t)(pages * pg), PROT_READ, MAP_SHARED, fd, 0);
        int seen = map != MAP_FAILED && vec &&
                   mincore(map, (size_t)(pages * pg), vec) == 0;
        for (int64_t i = 0; i < pages && seen; i++)
            in += vec[i] & 1;
        if (map != MAP_FAILED)
            munmap(map, (size_t)(pages * pg));
        free(vec);
        int exact = (int)(in * 1000 / pages);
        int pm3 = core_posix_cached(fd, 0, pages * pg);
        TH_CHECK(!seen || exact > 500 || (pm3 >= exact - 5 && pm3 <= exact + 5),
                 "a file cached only where 16 windows look: probe %d per "
                 "mille, mincore %d (%lld of %lld pages)", pm3, exact,
                 (long long)in, (long long)pages);
    }
    close(fd);
    unlink(path);
}

/* passion_init on comm with options opts; its counts of splits (by shared
   memory, by colour) and its node fields; the context freed. */
typedef struct {
    long split_type, split;
    int id, nn, nr, ns;
    double share;
} init_seen;

static int init_on(MPI_Comm comm, const char *opts, init_seen *w)
{
    passion_options *o = NULL;
    passion_ctx *ctx = NULL;
    int rc = passion_options_create(&o);
    if (!rc && *opts)
        rc = passion_options_parse(o, opts);
    n_split_type = n_split = 0;
    if (!rc)
        rc = passion_init(comm, o, &ctx);
    w->split_type = n_split_type;
    w->split = n_split;
    passion_options_free(o);
    if (rc)
        return rc;
    passion_ctx_node(ctx, &w->id, &w->nn, &w->nr, &w->ns);
    w->share = ctx->cpu_share;
    return passion_finalize(ctx);
}

static void test_init_splits(void)
{
    th_case_seed = th_seed;
    /* a communicator of our own, so that no earlier context of this
       program has kept its host */
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    init_seen w0, w1, w2;
    /* the first context splits by shared memory once and, on one node
       (this machine), makes no split of the node leaders (the leader's
       communicator is its own); before: 1 and 1 */
    int rc = init_on(c, "", &w0);
    TH_CHECK(rc == 0 && w0.split_type == 1 && w0.split == 0,
             "first passion_init: %d, %ld splits by shared memory (want 1), "
             "%ld by colour (want 0)", rc, w0.split_type, w0.split);
    TH_CHECK(w0.nn == 1 && w0.ns == th_size && w0.nr == th_rank &&
             w0.share >= 1, "first passion_init: node %d of %d, rank %d of "
             "%d, cpu_share %g", w0.id, w0.nn, w0.nr, w0.ns, w0.share);
    /* later contexts on the same communicator: no split by shared memory
       (the host kept on c), the node by its leader (one MPI_Comm_split),
       the same nodes and cpu_share; before: 1 split by shared memory
       each */
    rc = init_on(c, "", &w1);
    TH_CHECK(rc == 0 && w1.split_type == 0 && w1.split == 1,
             "second passion_init: %d, %ld splits by shared memory (want "
             "0), %ld by colour (want 1)", rc, w1.split_type, w1.split);
    TH_CHECK(w1.id == w0.id && w1.nn == w0.nn && w1.nr == w0.nr &&
             w1.ns == w0.ns && w1.share == w0.share,
             "second passion_init: node %d of %d, rank %d of %d, cpu_share "
             "%g; first %d of %d, %d of %d, %g", w1.id, w1.nn, w1.nr, w1.ns,
             w1.share, w0.id, w0.nn, w0.nr, w0.ns, w0.share);
    /* virtual nodes of one rank: the nodes are a split by rank, the wait
       policy's host a split by the kept leader (before: its own split by
       shared memory) */
    rc = init_on(c, "virtual_node_ranks=1", &w2);
    TH_CHECK(rc == 0 && w2.split_type == 0 && w2.nn == th_size &&
             w2.id == th_rank && w2.share == w0.share,
             "virtual nodes: %d, %ld splits by shared memory (want 0), node "
             "%d of %d, cpu_share %g (want %g)", rc, w2.split_type, w2.id,
             w2.nn, w2.share, w0.share);
    /* the host forgotten on one rank: every rank splits by shared memory
       again (agreed in passion_init's first reduction; no rank waits in
       a collective the others do not make), and the nodes are the same */
    if (th_rank == th_size - 1)
        MPI_Comm_delete_attr(c, core_host_keyval());
    rc = init_on(c, "", &w1);
    TH_CHECK(rc == 0 && w1.split_type == 1 && w1.nn == w0.nn &&
             w1.ns == w0.ns && w1.share == w0.share,
             "host forgotten on rank %d: %d, %ld splits by shared memory "
             "(want 1), %d nodes, %d ranks, cpu_share %g", th_size - 1, rc,
             w1.split_type, w1.nn, w1.ns, w1.share);
    MPI_Comm_free(&c);
    /* virtual nodes first on a new communicator: the wait policy's split
       by shared memory finds the host, which a later context with real
       nodes takes (no split by shared memory) */
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    rc = init_on(c, "virtual_node_ranks=1", &w2);
    TH_CHECK(rc == 0 && w2.split_type == 1, "virtual nodes first: %d, %ld "
             "splits by shared memory (want 1)", rc, w2.split_type);
    rc = init_on(c, "", &w1);
    TH_CHECK(rc == 0 && w1.split_type == 0 && w1.nn == w0.nn &&
             w1.ns == w0.ns && w1.nr == w0.nr && w1.share == w0.share,
             "real nodes after virtual ones: %d, %ld splits by shared "
             "memory (want 0), node of %d ranks, cpu_share %g", rc,
             w1.split_type, w1.ns, w1.share);
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    static CU_TestInfo tests[] = {
        {"1: allocations of a tiny call", test_allocs},
        {"2: the learned round cost is its samples' median",
         test_sync_median},
        {"3: the page-cache probe's system calls", test_probe},
        {"4: passion_init's splits, the host kept on the communicator",
         test_init_splits},
        CU_TEST_INFO_NULL};
    static CU_SuiteInfo suites[] = {
        {"tiny calls", NULL, NULL, NULL, NULL, tests},
        CU_SUITE_INFO_NULL};
    return th_main(argc, argv, suites);
}
