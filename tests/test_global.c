/*
 * test_global.c - global placement: .npy and raw global files, and the
 * collective section access passion_file_read_all /
 * passion_file_write_all with every method (direct, sieve, etp-static,
 * etp-dynamic, auto), under any number of ranks.
 *
 * Every rank draws every rank's section from the same seed, so each can
 * model the whole file: reads are compared element by element (and the
 * memory around a section inside a larger array must stay untouched);
 * writes are applied to the model in increasing rank order (the highest
 * rank wins where sections overlap) and the whole file is compared with it,
 * so a byte changed outside the sections is caught too.
 *
 * Debugging: TEST_VERBOSE=1 prints each random case; TEST_ONLY_SEED=S
 * runs only the random case with seed S (the seed printed on failure).
 */
#include "harness.h"

#include "passion.h"
#include "../collective/coll.h" /* coll_plan_desc_bytes */

#include <stdint.h>
#include <unistd.h>

#define NMETHODS 5
static const int methods[NMETHODS] = {
    PASSION_METHOD_AUTO, PASSION_METHOD_DIRECT, PASSION_METHOD_SIEVE,
    PASSION_METHOD_ETP_STATIC, PASSION_METHOD_ETP_DYNAMIC};
static const char *method_names[NMETHODS] = {"auto", "direct", "sieve",
                                             "etp-static", "etp-dynamic"};

/* ---- a file and its model ---- */

typedef struct world {
    passion_ctx *ctx;
    passion_array *a;
    passion_file *f;
    passion_array_spec spec;
    int nd;
    int64_t esize, nelem;
    int order[PASSION_MAX_DIMS];  /* order[0] slowest */
    int64_t fstride[PASSION_MAX_DIMS]; /* elements, per dimension */
    unsigned char *model;         /* the file's data as it should be */
    char path[512];
} world;

static unsigned char byte_of(int64_t idx, int64_t k, uint64_t salt)
{
    uint64_t s = (uint64_t)idx * 0x9E3779B97F4A7C15ULL + (uint64_t)k * 131 +
                 salt * 0xBF58476D1CE4E5B9ULL;
    return (unsigned char)(th_next(&s) >> 56);
}

/* opt: "key=value,..." options of the context (NULL: defaults) */
static int world_open(world *w, const char *opt, int nd,
                      const int64_t *shape, int64_t esize, int storage,
                      int64_t header, int npy, const char *tag)
{
    memset(w, 0, sizeof *w);
    w->nd = nd;
    w->esize = esize;
    int rc = th_init(&w->ctx, "%s", opt ? opt : "");
    if (rc)
        return rc;
    passion_array_spec_init(&w->spec, nd, shape, esize);
    w->spec.storage = storage;
    w->spec.placement = PASSION_PLACE_GLOBAL;
    w->spec.header_bytes = npy ? 0 : header;
    if ((rc = passion_array_create(w->ctx, &w->spec, &w->a)))
        return rc;
    const passion_array_spec *n = passion_array_get_spec(w->a);
    memcpy(w->order, n->order, sizeof w->order);
    int64_t st = 1;
    for (int k = nd - 1; k >= 0; k--) {
        w->fstride[w->order[k]] = st;
        st *= shape[w->order[k]];
    }
    w->nelem = st;
    snprintf(w->path, sizeof w->path, "%s/%s.%s", th_dir(), tag,
             npy ? "npy" : "raw");
    if ((rc = passion_file_open(w->a, w->path, PASSION_MODE_CREATE, &w->f)))
        return rc;
    w->model = malloc((size_t)(w->nelem * esize));
    for (int64_t i = 0; i < w->nelem * esize; i++)
        w->model[i] = byte_of(i / esize, i % esize, 1);
    /* rank 0 fills the file with the model's contents */
    passion_section all;
    passion_section_set(&all, nd, NULL, shape, NULL);
    if (th_rank == 0)
        rc = passion_file_write(w->f, &all, w->model, NULL,
                                   PASSION_METHOD_DIRECT);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    return rc;
}

static void world_close(world *w)
{
    passion_file_close(w->f);
    passion_array_free(w->a);
    passion_finalize(w->ctx);
    free(w->model);
    if (th_rank == 0)
        unlink(w->path);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* File element index of section element i (i in count-box, C order over
   dimensions 0..nd-1) and its memory position. */
typedef struct walk {
    int64_t i[PASSION_MAX_DIMS];
} walk;

static int64_t file_index(const world *w, const passion_section *s,
                          const int64_t *i)
{
    int64_t e = 0;
    for (int d = 0; d < w->nd; d++)
        e += (s->start[d] + i[d] * s->stride[d]) * w->fstride[d];
    return e;
}

static int64_t mem_index(const world *w, const passion_section *s,
                         const passion_memspec *m, const int64_t *i)
{
    int64_t e = 0, st = 1;
    for (int k = w->nd - 1; k >= 0; k--) {
        int d = w->order[k];
        e += ((m ? m->offset[d] : 0) + i[d]) * st;
        st *= m ? m->shape[d] : s->count[d];
    }
    return e;
}

static int next_index(int nd, const passion_section *s, int64_t *i)
{
    for (int d = nd - 1; d >= 0; d--) {
        if (++i[d] < s->count[d])
            return 1;
        i[d] = 0;
    }
    return 0;
}

static int64_t mem_elems(const world *w, const passion_section *s,
                         const passion_memspec *m)
{
    int64_t n = 1;
    for (int d = 0; d < w->nd; d++)
        n *= m ? m->shape[d] : s->count[d];
    return n;
}

/* ---- random sections ---- */

typedef enum { SEC_RANDOM, SEC_IDENTICAL, SEC_EMPTY_SOME } sec_kind;

static void random_section(uint64_t *rng, const world *w,
                           const int64_t *shape, passion_section *s)
{
    memset(s, 0, sizeof *s);
    for (int d = 0; d < w->nd; d++) {
        int64_t st = th_range(rng, 1, 4) == 1 ? th_range(rng, 2, 4) : 1;
        int64_t start = th_range(rng, 0, shape[d] - 1);
        int64_t maxc = (shape[d] - 1 - start) / st + 1;
        s->start[d] = start;
        s->stride[d] = st;
        s->count[d] = th_range(rng, 1, maxc);
    }
}

/* Sections of every rank, drawn alike on every rank. */
static void draw_sections(uint64_t seed, const world *w, const int64_t *shape,
                          passion_section *secs)
{
    uint64_t rng = seed;
    int kind = (int)th_range(&rng, 0, 2);
    for (int r = 0; r < th_size; r++) {
        if (kind == SEC_IDENTICAL && r > 0)
            secs[r] = secs[0];
        else
            random_section(&rng, w, shape, &secs[r]);
        if (kind == SEC_EMPTY_SOME && th_range(&rng, 0, 2) == 0)
            secs[r].count[th_range(&rng, 0, w->nd - 1)] = 0;
    }
}

static void random_memspec(uint64_t *rng, const world *w,
                           const passion_section *s, passion_memspec *m)
{
    for (int d = 0; d < w->nd; d++) {
        int64_t pad = th_range(rng, 0, 2);
        m->shape[d] = s->count[d] + pad;
        m->offset[d] = th_range(rng, 0, pad);
    }
}

static int64_t sec_elems(const world *w, const passion_section *s)
{
    return passion_section_elems(s, w->nd);
}

/* ---- one read and one write of random sections, checked ---- */

static int check_read(world *w, const passion_section *s,
                      const passion_memspec *m, int method)
{
    int64_t n = mem_elems(w, s, m);
    unsigned char *buf = malloc((size_t)(n * w->esize + 1));
    memset(buf, 0xEE, (size_t)(n * w->esize + 1));
    int rc = passion_file_read_all(w->f, s, buf, m, method);
    int bad = rc != 0;
    TH_CHECK(rc == 0, "file_read_all (%d): %s: %s", method,
             passion_strerror(rc), passion_ctx_errdetail(w->ctx));
    unsigned char *seen = calloc((size_t)n + 1, 1);
    if (!rc && sec_elems(w, s) > 0) {
        int64_t i[PASSION_MAX_DIMS] = {0};
        do {
            int64_t fe = file_index(w, s, i), me = mem_index(w, s, m, i);
            seen[me] = 1;
            if (memcmp(buf + me * w->esize, w->model + fe * w->esize,
                       (size_t)w->esize))
                bad = 1;
        } while (next_index(w->nd, s, i));
    }
    for (int64_t k = 0; k < n * w->esize && !rc; k++)
        if (!seen[k / w->esize] && buf[k] != 0xEE)
            bad = 1;
    TH_CHECK(!bad, "read with %s: wrong data", method_names[method]);
    free(seen);
    free(buf);
    return bad;
}

static int check_file(world *w, const char *what)
{
    int64_t bytes = w->nelem * w->esize;
    unsigned char *all = malloc((size_t)bytes);
    passion_section whole;
    passion_section_set(&whole, w->nd, NULL, w->spec.shape, NULL);
    int rc = passion_file_read(w->f, &whole, all, NULL,
                                  PASSION_METHOD_DIRECT);
    int64_t first = -1;
    for (int64_t k = 0; k < bytes && first < 0; k++)
        if (all[k] != w->model[k])
            first = k;
    TH_CHECK(rc == 0 && first < 0,
             "%s: file differs from the model at byte %lld (rc %d)", what,
             (long long)first, rc);
    free(all);
    return rc || first >= 0;
}

/* Every rank writes its section of secs (values salted by salt and the
   rank), and the model takes every rank's write in increasing rank order;
   *bytes_read (optional): the file bytes the call read, over all ranks.
   Returns the write's code. */
static int write_secs(world *w, const passion_section *secs,
                      const passion_memspec *m, int method, uint64_t salt,
                      uint64_t *bytes_read)
{
    const passion_section *s = &secs[th_rank];
    int64_t n = mem_elems(w, s, m);
    unsigned char *buf = malloc((size_t)(n * w->esize + 1));
    memset(buf, 0xAB, (size_t)(n * w->esize + 1));
    /* my values, at my memory positions */
    if (sec_elems(w, s) > 0) {
        int64_t i[PASSION_MAX_DIMS] = {0};
        do {
            int64_t fe = file_index(w, s, i), me = mem_index(w, s, m, i);
            for (int64_t k = 0; k < w->esize; k++)
                buf[me * w->esize + k] =
                    byte_of(fe, k, salt * 64 + (uint64_t)th_rank);
        } while (next_index(w->nd, s, i));
    }
    passion_counters c0, c1;
    passion_counters_get(w->ctx, &c0);
    int rc = passion_file_write_all(w->f, s, buf, m, method);
    passion_counters_get(w->ctx, &c1);
    TH_CHECK(rc == 0, "file_write_all (%s): %s: %s", method_names[method],
             passion_strerror(rc), passion_ctx_errdetail(w->ctx));
    if (bytes_read) {
        *bytes_read = c1.bytes_read - c0.bytes_read;
        MPI_Allreduce(MPI_IN_PLACE, bytes_read, 1, MPI_UINT64_T, MPI_SUM,
                      MPI_COMM_WORLD);
    }
    /* the model: every rank's write, in increasing rank order */
    for (int r = 0; r < th_size; r++) {
        if (sec_elems(w, &secs[r]) == 0)
            continue;
        int64_t i[PASSION_MAX_DIMS] = {0};
        do {
            int64_t fe = file_index(w, &secs[r], i);
            for (int64_t k = 0; k < w->esize; k++)
                w->model[fe * w->esize + k] =
                    byte_of(fe, k, salt * 64 + (uint64_t)r);
        } while (next_index(w->nd, &secs[r], i));
    }
    free(buf);
    return rc;
}

static int check_write(world *w, const passion_section *secs,
                       const passion_memspec *m, int method, uint64_t salt)
{
    int rc = write_secs(w, secs, m, method, salt, NULL);
    return check_file(w, method_names[method]) || rc;
}

/* ---- the random matrix ---- */

static void random_round(uint64_t seed, int driver, int npy)
{
    uint64_t rng = seed;
    th_case_seed = seed;
    const char *only = getenv("TEST_ONLY_SEED");
    if (only && strtoull(only, NULL, 10) != seed)
        return;
    int nd = (int)th_range(&rng, 2, 4);
    int64_t shape[PASSION_MAX_DIMS];
    int64_t total = 1;
    for (int d = 0; d < nd; d++) {
        shape[d] = th_range(&rng, 1, nd == 2 ? 40 : nd == 3 ? 14 : 7);
        total *= shape[d];
    }
    static const int64_t esizes[] = {1, 4, 8, 12};
    int64_t esize = esizes[th_range(&rng, 0, 3)];
    int storage = (int)th_range(&rng, 0, 1);
    int64_t header = th_range(&rng, 0, 1) ? th_range(&rng, 1, 5000) : 0;
    static const char *const drivers[] = {"posix", "mpiio", "fault"};
    /* O_DIRECT on some posix rounds (unaligned requests go through the
       driver's bounce buffer) */
    int direct_io = driver == PASSION_DRIVER_POSIX &&
                    th_range(&rng, 0, 3) == 0;
    /* tiny budgets make many rounds; the floor holds one element per rank
       per round */
    int64_t floor = 5 * 64 * (th_size > 1 ? th_size : 2) +
                    coll_plan_desc_bytes(th_size, nd);
    int64_t budget = th_range(&rng, 0, 2) ? th_range(&rng, floor,
                                                     floor + 4096)
                                          : (int64_t)64 << 20;
    char opt[128];
    snprintf(opt, sizeof opt, "driver=%s,direct_io=%d,memory_budget=%lld",
             drivers[driver], direct_io, (long long)budget);
    char tag[64];
    snprintf(tag, sizeof tag, "rand-%llu", (unsigned long long)seed % 100000);
    if (getenv("TEST_VERBOSE") && th_rank == 0)
        printf("\nseed %llu: nd %d shape %lld %lld %lld %lld esize %lld "
               "storage %d header %lld budget %lld driver %d npy %d "
               "direct_io %d\n",
               (unsigned long long)seed, nd, (long long)shape[0],
               (long long)shape[1], (long long)(nd > 2 ? shape[2] : 0),
               (long long)(nd > 3 ? shape[3] : 0), (long long)esize, storage,
               (long long)header, (long long)budget, driver, npy,
               direct_io);
    world w;
    int rc = world_open(&w, opt, nd, shape, esize, storage, header, npy,
                        tag);
    TH_CHECK(rc == 0, "setup: %s", passion_strerror(rc));
    if (rc) {
        world_close(&w);
        return;
    }
    passion_section secs[64];
    for (int t = 0; t < 3; t++) {
        uint64_t sseed = th_next(&rng);
        draw_sections(sseed, &w, shape, secs);
        uint64_t mrng = sseed ^ (uint64_t)th_rank;
        passion_memspec mem, *m = NULL;
        if (th_range(&mrng, 0, 1)) {
            random_memspec(&mrng, &w, &secs[th_rank], &mem);
            m = &mem;
        }
        int method = (int)th_range(&rng, 0, NMETHODS - 1);
        if (getenv("TEST_VERBOSE"))
            for (int r = 0; r < th_size && th_rank == 0; r++) {
                printf("  rank %d:", r);
                for (int d = 0; d < nd; d++)
                    printf(" %lld+%lld*%lld", (long long)secs[r].start[d],
                           (long long)secs[r].count[d],
                           (long long)secs[r].stride[d]);
                printf(" mem %d\n", m != NULL);
            }
        check_read(&w, &secs[th_rank], m, methods[method]);
        method = (int)th_range(&rng, 0, NMETHODS - 1);
        if (getenv("TEST_VERBOSE") && th_rank == 0)
            printf("  write with %s\n", method_names[method]);
        check_write(&w, secs, m, methods[method], sseed % 1000 + 2);
        passion_counters c;
        passion_counters_get(w.ctx, &c);
        /* the budget bounds the whole call, descriptors included */
        TH_CHECK(c.peak_staging <= (uint64_t)budget,
                 "peak staging %llu over budget %lld",
                 (unsigned long long)c.peak_staging, (long long)budget);
    }
    (void)total;
    world_close(&w);
}

/* Fewer random rounds where every collective costs a time slice (more
   ranks than cores): the suite stays within its time at P = 7. */
static int rounds_for(int n)
{
    return th_size <= 4 ? n : (n + 1) / 2;
}

static void test_random_posix(void)
{
    for (int k = 0; k < rounds_for(14); k++)
        random_round(th_seed * 1000 + (uint64_t)k, PASSION_DRIVER_POSIX,
                     k % 3 == 0);
}

static void test_random_mpiio(void)
{
    for (int k = 0; k < rounds_for(6); k++)
        random_round(th_seed * 1000 + 500 + (uint64_t)k, PASSION_DRIVER_MPIIO,
                     k % 2 == 0);
}

/* Every method on the same sections: all must give the same file. */
static void test_every_method(void)
{
    th_case_seed = th_seed + 7;
    int64_t shape[2] = {37, 23};
    char opt[64];
    snprintf(opt, sizeof opt, "memory_budget=%lld",
             (long long)(5 * 64 * (th_size > 1 ? th_size : 2) + 300 +
                         coll_plan_desc_bytes(th_size, 2)));
    world w;
    int rc = world_open(&w, opt, 2, shape, 4, PASSION_COL_MAJOR, 0, 0,
                        "every");
    TH_CHECK(rc == 0, "setup");
    if (!rc) {
        passion_section secs[64];
        for (int r = 0; r < th_size; r++) {
            /* thesis-like: row blocks, stride 2 in rows, overlapping */
            int64_t st[2] = {r % 5, 0}, ct[2] = {(37 - r % 5 + 1) / 2, 23},
                    sd[2] = {2, 1};
            passion_section_set(&secs[r], 2, st, ct, sd);
        }
        for (int mi = 0; mi < NMETHODS; mi++) {
            check_read(&w, &secs[th_rank], NULL, methods[mi]);
            check_write(&w, secs, NULL, methods[mi], 50 + (uint64_t)mi);
        }
    }
    world_close(&w);
}

/* Rank 0 overwrites the whole file with a fresh pattern (salt), and the
   model takes it, once every rank has done with the file (check_file
   reads it independently). Collective. */
static int world_refill(world *w, uint64_t salt)
{
    MPI_Barrier(MPI_COMM_WORLD);
    for (int64_t i = 0; i < w->nelem * w->esize; i++)
        w->model[i] = byte_of(i / w->esize, i % w->esize, salt);
    passion_section all;
    passion_section_set(&all, w->nd, NULL, w->spec.shape, NULL);
    int rc = 0;
    if (th_rank == 0)
        rc = passion_file_write(w->f, &all, w->model, NULL,
                                PASSION_METHOD_DIRECT);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    return rc;
}

/*
 * Column blocks of a 2-D C-order array, written with the two-phase
 * method: rank r writes columns [cut_r, cut_r+1) of every row (random
 * cuts, some blocks empty), so each rank's section has a gap in every
 * row while the ranks together cover every byte of the file. An
 * aggregator receives every rank's pieces of its domain, so it must not
 * read the file before writing (thesis 6.3.2: a chunk is read first only
 * where no rank writes). The hole limit (io_latency x io_bandwidth) is
 * mostly 1 MB, above a row: each rank's rows then join into one window
 * with gaps, which only the union fills; sometimes 1 byte. Then a real
 * hole: the file refilled with a fresh pattern, some ranks leave their
 * block's last column unwritten (one always does); those bytes must keep
 * the pattern, which takes a read where a window spans them. Every write
 * is checked against the model, file-wide.
 */
static void test_column_blocks(void)
{
    const int P = th_size;
    for (int k = 0; k < 6; k++) {
        uint64_t rng = th_seed * 1000 + 900 + (uint64_t)k;
        th_case_seed = rng;
        const char *only = getenv("TEST_ONLY_SEED");
        if (only && strtoull(only, NULL, 10) != rng)
            continue;
        int64_t shape[2] = {th_range(&rng, 4, 48),
                            th_range(&rng, P + 1, P + 40)};
        static const int64_t esizes[] = {1, 4, 8, 12};
        int64_t es = esizes[th_range(&rng, 0, 3)];
        int big_hole = th_range(&rng, 0, 3) != 0;
        int64_t floor = 5 * es * (P > 1 ? P : 2) +
                        coll_plan_desc_bytes(P, 2);
        int big_budget = th_range(&rng, 0, 1);
        int64_t budget = big_budget ? (int64_t)64 << 20
                                    : th_range(&rng, floor, floor + 4096);
        int method = k % 2 ? PASSION_METHOD_ETP_DYNAMIC
                           : PASSION_METHOD_ETP_STATIC;
        const char *driver = th_range(&rng, 0, 1) ? "posix" : "mpiio";
        char opt[160];
        snprintf(opt, sizeof opt,
                 "driver=%s,io_latency=%s,io_bandwidth=1e9,"
                 "memory_budget=%lld",
                 driver, big_hole ? "1e-3" : "1e-9", (long long)budget);
        int64_t cut[65];
        cut[0] = 0;
        cut[P] = shape[1];
        for (int r = 1; r < P; r++)
            cut[r] = th_range(&rng, 0, shape[1]);
        for (int r = 1; r < P; r++) /* sort the inner cuts */
            for (int q = r; q > 1 && cut[q - 1] > cut[q]; q--) {
                int64_t t = cut[q];
                cut[q] = cut[q - 1];
                cut[q - 1] = t;
            }
        if (getenv("TEST_VERBOSE") && th_rank == 0)
            printf("\nseed %llu: %lld x %lld, esize %lld, %s, %s, hole "
                   "limit %s, budget %lld\n",
                   (unsigned long long)th_case_seed, (long long)shape[0],
                   (long long)shape[1], (long long)es, method_names[method],
                   driver, big_hole ? "1 MB" : "1 B", (long long)budget);
        world w;
        int rc = world_open(&w, opt, 2, shape, es, PASSION_ROW_MAJOR, 0, 0,
                            "columns");
        TH_CHECK(rc == 0, "setup: %s", passion_strerror(rc));
        if (rc) {
            world_close(&w);
            continue;
        }
        passion_section secs[64];
        for (int r = 0; r < P; r++) {
            int64_t st[2] = {0, cut[r]},
                    ct[2] = {shape[0], cut[r + 1] - cut[r]};
            passion_section_set(&secs[r], 2, st, ct, NULL);
        }
        /* every byte covered: nothing read */
        uint64_t nread = 0;
        rc = write_secs(&w, secs, NULL, method, 3 + (uint64_t)k, &nread);
        check_file(&w, "column blocks");
        TH_CHECK(rc == 0 && nread == 0,
                 "column blocks covering the file, %s: %llu bytes read "
                 "(want none)",
                 method_names[method], (unsigned long long)nread);
        /* a hole: the last column of some blocks (one always) unwritten;
           the victim's block is at least 2 columns wide (M > P), so the
           hole has the victim's data before it in its row */
        rc = world_refill(&w, 1000 + (uint64_t)k);
        TH_CHECK(rc == 0, "refill: %s", passion_strerror(rc));
        int victim = -1;
        for (int r = 0; r < P; r++)
            if (cut[r + 1] - cut[r] >= 2 &&
                (victim < 0 || th_range(&rng, 0, 1)))
                victim = r;
        for (int r = 0; r < P; r++)
            if (secs[r].count[1] > 0 &&
                (r == victim || th_range(&rng, 0, 2) == 0))
                secs[r].count[1]--;
        rc = write_secs(&w, secs, NULL, method, 5 + (uint64_t)k, &nread);
        check_file(&w, "column blocks with a hole");
        TH_CHECK(rc == 0, "column blocks with a hole, %s: %s",
                 method_names[method], passion_strerror(rc));
        /* with the large hole limit and one chunk per domain, the hole
           lies inside a window in some middle row (rows >= 4; domain
           boundaries are 4 KiB apart, rows shorter): it must be read */
        TH_CHECK(!(big_hole && big_budget) || nread > 0,
                 "column blocks with a hole, %s: nothing read",
                 method_names[method]);
        world_close(&w);
    }
}

/*
 * auto on an uncached file: the first call measures the file's costs
 * (every rank takes part, each on its own extent, then they agree), and
 * the results stay right before and after, reads and writes, including a
 * rank with nothing to read.
 */
static void test_cold_auto(void)
{
    th_case_seed = th_seed + 11;
    int64_t shape[2] = {640, 512};
    world w;
    int rc = world_open(&w, NULL, 2, shape, 4, PASSION_COL_MAJOR, 0, 0,
                        "cold");
    TH_CHECK(rc == 0, "setup");
    if (!rc) {
        passion_section secs[64];
        for (int r = 0; r < th_size; r++) {
            int64_t st[2] = {r % 3, (r * 37) % 200}, sd[2] = {1 + r % 3, 2};
            int64_t ct[2] = {(640 - st[0] + sd[0] - 1) / sd[0],
                             (512 - st[1] + 1) / 2};
            if (r == 1)
                ct[0] = 0; /* nothing to read on rank 1 */
            passion_section_set(&secs[r], 2, st, ct, sd);
        }
        for (int k = 0; k < 3; k++) {
            passion_file_sync(w.f);
            MPI_Barrier(MPI_COMM_WORLD);
            passion_file_drop_cache(w.f);
            MPI_Barrier(MPI_COMM_WORLD);
            check_read(&w, &secs[th_rank], NULL, PASSION_METHOD_AUTO);
            passion_file_drop_cache(w.f);
            MPI_Barrier(MPI_COMM_WORLD);
            check_write(&w, secs, NULL, PASSION_METHOD_AUTO,
                        90 + (uint64_t)k);
        }
    }
    world_close(&w);
}

/* A bad section on one rank: the same error everywhere, and no hang. */
static void test_errors(void)
{
    th_case_seed = th_seed + 11;
    int64_t shape[3] = {6, 5, 4};
    world w;
    int rc = world_open(&w, NULL, 3, shape, 8, PASSION_ROW_MAJOR, 64, 0,
                        "errors");
    TH_CHECK(rc == 0, "setup");
    if (rc) {
        world_close(&w);
        return;
    }
    double buf[200];
    int bad = th_size - 1;
    for (int mi = 0; mi < NMETHODS; mi++) {
        passion_section s;
        int64_t st[3] = {0, 0, 0}, ct[3] = {2, 2, 2};
        if (th_rank == bad)
            st[1] = 4; /* 4 + 1 = 5: out of bounds */
        passion_section_set(&s, 3, st, ct, NULL);
        rc = passion_file_read_all(w.f, &s, buf, NULL, methods[mi]);
        TH_CHECK(rc == PASSION_ERANGE, "out of bounds read on rank %d: %d",
                 bad, rc);
        char want[32];
        snprintf(want, sizeof want, "rank %d", bad);
        TH_CHECK(strstr(passion_ctx_errdetail(w.ctx), want) != NULL,
                 "detail names the failing rank: %s",
                 passion_ctx_errdetail(w.ctx));
        rc = passion_file_write_all(w.f, &s, buf, NULL, methods[mi]);
        TH_CHECK(rc == PASSION_ERANGE, "out of bounds write: %d", rc);
    }
    check_file(&w, "after failed writes");
    /* zero stride on rank 0 */
    passion_section s;
    int64_t ct[3] = {1, 1, 1}, sd[3] = {1, th_rank == 0 ? 0 : 1, 1};
    passion_section_set(&s, 3, NULL, ct, sd);
    rc = passion_file_read_all(w.f, &s, buf, NULL, PASSION_METHOD_AUTO);
    TH_CHECK(rc == PASSION_EINVAL, "zero stride: %d", rc);
    /* ranks passing different methods */
    if (th_size > 1) {
        passion_section_set(&s, 3, NULL, ct, NULL);
        rc = passion_file_read_all(w.f, &s, buf, NULL,
                                      th_rank ? PASSION_METHOD_ETP_STATIC
                                              : PASSION_METHOD_AUTO);
        TH_CHECK(rc == PASSION_EMISMATCH, "different methods: %d", rc);
    }
    /* NULL buffer with a non-empty section on the last rank */
    passion_section_set(&s, 3, NULL, ct, NULL);
    rc = passion_file_read_all(w.f, &s, th_rank == bad ? NULL : buf, NULL,
                                  PASSION_METHOD_ETP_DYNAMIC);
    TH_CHECK(rc == PASSION_EINVAL, "NULL buffer: %d", rc);
    world_close(&w);
}

/* I/O failure on one rank inside the rounds: agreed, no hang. */
static void test_fault(void)
{
    th_case_seed = th_seed + 13;
    /* rank 0: the setup write is request 1 */
    char opt[128];
    snprintf(opt, sizeof opt, "driver=fault,fault_ranks=0,fault_fail_at=2,"
             "memory_budget=%lld",
             (long long)(5 * 64 * (th_size > 1 ? th_size : 2) +
                         coll_plan_desc_bytes(th_size, 2)));
    int64_t shape[2] = {64, 64};
    world w;
    int rc = world_open(&w, opt, 2, shape, 4, PASSION_COL_MAJOR, 0, 0,
                        "fault");
    TH_CHECK(rc == 0, "setup (fault): %s", passion_strerror(rc));
    if (!rc) {
        float *fb = malloc(64 * 64 * 4);
        passion_section all;
        passion_section_set(&all, 2, NULL, shape, NULL);
        /* rank 0 aggregates the first domain: its first request fails */
        rc = passion_file_read_all(w.f, &all, fb, NULL,
                                      PASSION_METHOD_ETP_DYNAMIC);
        TH_CHECK(rc == PASSION_EIO, "read with a failing request: %d", rc);
        TH_CHECK(strstr(passion_ctx_errdetail(w.ctx), "rank 0") != NULL,
                 "detail from rank 0: %s", passion_ctx_errdetail(w.ctx));
        /* the fault happens once; then everything works again */
        for (int mi = 0; mi < NMETHODS; mi++)
            check_read(&w, &all, NULL, methods[mi]);
        free(fb);
    }
    world_close(&w);
    /* the same for a write, with one rank short of requests */
    rc = world_open(&w, opt, 2, shape, 4, PASSION_ROW_MAJOR, 0, 0,
                    "fault2");
    TH_CHECK(rc == 0, "setup (fault 2): %s", passion_strerror(rc));
    if (!rc) {
        float *fb = calloc(64 * 64, 4);
        passion_section s;
        int64_t st[2] = {th_rank % 64, 0}, ct[2] = {1, 64};
        passion_section_set(&s, 2, st, ct, NULL);
        rc = passion_file_write_all(w.f, &s, fb, NULL,
                                       PASSION_METHOD_ETP_STATIC);
        TH_CHECK(rc == PASSION_EIO, "write with a failing request: %d", rc);
        free(fb);
    }
    world_close(&w);
}

/* ---- refused and partly failed writes ---- */

/* the whole file's bytes, read by rank 0 with stdio (NULL elsewhere) */
static unsigned char *file_copy(const char *path, long *n)
{
    *n = -1;
    if (th_rank != 0)
        return NULL;
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    unsigned char *b = NULL;
    if (fseek(fp, 0, SEEK_END) == 0 && (*n = ftell(fp)) >= 0 &&
        fseek(fp, 0, SEEK_SET) == 0 && (b = malloc((size_t)*n + 1)) &&
        fread(b, 1, (size_t)*n, fp) != (size_t)*n) {
        free(b);
        b = NULL;
    }
    fclose(fp);
    return b;
}

/* 1 on every rank if the file holds exactly copy's n bytes (rank 0's) */
static int file_unchanged(const char *path, const unsigned char *copy,
                          long n)
{
    int same = 1;
    if (th_rank == 0) {
        long m;
        unsigned char *now = file_copy(path, &m);
        same = copy && now && m == n && !memcmp(now, copy, (size_t)n);
        free(now);
    }
    MPI_Bcast(&same, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return same;
}

/* this rank's buffer for section s: values of salt, none in the file */
static unsigned char *salted(const world *w, const passion_section *s,
                             uint64_t salt)
{
    int64_t n = sec_elems(w, s);
    unsigned char *buf = malloc((size_t)(n * w->esize + 1));
    int64_t i[PASSION_MAX_DIMS] = {0}, k = 0;
    if (n > 0)
        do {
            int64_t fe = file_index(w, s, i);
            for (int64_t b = 0; b < w->esize; b++)
                buf[k++] = (unsigned char)~w->model[fe * w->esize + b] ^
                           (unsigned char)(salt & 0x7f);
        } while (next_index(w->nd, s, i));
    return buf;
}

/* 1 if every rank has the same rc (equal to want) and rank 0's detail */
static int agreed(const world *w, int rc, int want)
{
    char d[512];
    snprintf(d, sizeof d, "%s", passion_ctx_errdetail(w->ctx));
    char d0[512];
    memcpy(d0, d, sizeof d0);
    MPI_Bcast(d0, sizeof d0, MPI_CHAR, 0, MPI_COMM_WORLD);
    return th_all(rc == want && !strcmp(d, d0));
}

/*
 * Refused before any rank writes: a budget below the access descriptors
 * (random, from 1 byte up) with every method; a budget that holds them but
 * not the two-phase method's minimum, with the two-phase methods; a
 * section out of bounds on the last rank; ranks passing different
 * methods. Every rank writes a random section of values not in the file:
 * every rank returns the same code and detail, and the file is byte for
 * byte what it was (a copy taken before). Before, a direct or auto write
 * was done before the descriptors' exchange (one round): the ranks had
 * written their sections when the budget, another rank's section or the
 * methods were refused.
 */
static void test_refused_write(void)
{
    uint64_t rng = th_seed + 29;
    th_case_seed = rng;
    const int P = th_size;
    int64_t shape[2] = {th_range(&rng, 8, 40), th_range(&rng, 4, 30)};
    int storage = (int)th_range(&rng, 0, 1);
    int64_t header = th_range(&rng, 0, 1) ? th_range(&rng, 1, 300) : 0;
    world w;
    int rc = world_open(&w, NULL, 2, shape, 8, storage, header, 0,
                        "refused");
    TH_CHECK(rc == 0, "setup: %s", passion_strerror(rc));
    if (rc) {
        world_close(&w);
        return;
    }
    const int64_t fad = coll_plan_desc_bytes(P, 2) - coll_etp_desc_bytes(P);
    for (int mi = 0; mi < NMETHODS; mi++) {
        for (int kind = 0; kind < 4; kind++) {
            const int etp = methods[mi] == PASSION_METHOD_ETP_STATIC ||
                            methods[mi] == PASSION_METHOD_ETP_DYNAMIC;
            if ((kind == 1 && !etp) || (kind == 3 && P == 1))
                continue;
            /* the budget: below the FAD's descriptors, or between them
               and the two-phase method's minimum */
            int64_t budget = kind == 0   ? th_range(&rng, 1, fad - 1)
                             : kind == 1 ? th_range(&rng, fad,
                                                    coll_plan_desc_bytes(P,
                                                                         2))
                                         : 64 << 20;
            passion_section secs[64];
            for (int r = 0; r < P && r < 64; r++)
                random_section(&rng, &w, shape, &secs[r]);
            passion_section s = secs[th_rank < 64 ? th_rank : 0];
            unsigned char *buf = salted(&w, &s, rng);
            int want = kind <= 1 ? PASSION_ENOMEM
                       : kind == 2 ? PASSION_ERANGE
                                   : PASSION_EMISMATCH;
            int method = methods[mi];
            if (kind == 2 && th_rank == P - 1)
                s.start[0] = shape[0]; /* out of bounds */
            if (kind == 3 && th_rank == 0)
                method = methods[(mi + 1) % NMETHODS];
            world c = w;
            passion_array *a2 = NULL;
            passion_file *f2 = NULL;
            rc = 0;
            if (kind <= 1) { /* a context of that budget on the file */
                rc = th_init(&c.ctx, "memory_budget=%lld", (long long)budget);
                if (!rc)
                    rc = passion_array_create(c.ctx, &w.spec, &a2);
                if (!rc)
                    rc = passion_file_open(a2, w.path, PASSION_MODE_RDWR,
                                           &f2);
                c.f = f2;
                TH_CHECK(rc == 0, "budget %lld: setup: %s",
                         (long long)budget, passion_strerror(rc));
            }
            if (!rc) {
                /* each case against the file as it was just before */
                long n = 0;
                unsigned char *copy = file_copy(w.path, &n);
                rc = passion_file_write_all(c.f, &s, buf, NULL, method);
                TH_CHECK(agreed(&c, rc, want),
                         "%s write, %s: rc %d (want %d on every rank), "
                         "detail '%s'", method_names[mi],
                         kind == 0   ? "budget below the descriptors"
                         : kind == 1 ? "budget below the two-phase minimum"
                         : kind == 2 ? "a section out of bounds"
                                     : "different methods",
                         rc, want, passion_ctx_errdetail(c.ctx));
                MPI_Barrier(MPI_COMM_WORLD);
                TH_CHECK(file_unchanged(w.path, copy, n),
                         "%s write refused (%s, budget %lld, P = %d): the "
                         "file changed", method_names[mi],
                         passion_strerror(want), (long long)budget, P);
                free(copy);
            }
            if (kind <= 1) {
                passion_file_close(f2);
                passion_array_free(a2);
                passion_finalize(c.ctx);
            }
            free(buf);
        }
    }
    world_close(&w);
}

/* the ranks a detail names as writers ("ranks 0,2-4 wrote ..." or "rank
   3 wrote ..." at its start) as flags; 0 if it names none */
static int writers_named(const char *d, int *flags, int P)
{
    memset(flags, 0, (size_t)P * sizeof *flags);
    const char *end = strstr(d, " wrote");
    const char *p = !strncmp(d, "ranks ", 6)  ? d + 6
                    : !strncmp(d, "rank ", 5) ? d + 5
                                              : NULL;
    if (!end || !p || p > end)
        return 0;
    while (p < end) {
        char *e;
        long a = strtol(p, &e, 10), b = a;
        if (e == p)
            return 0;
        if (*e == '-')
            b = strtol(e + 1, &e, 10);
        for (long r = a; r <= b && r < P; r++)
            if (r >= 0)
                flags[r] = 1;
        p = *e == ',' ? e + 1 : e;
    }
    return 1;
}

/*
 * An I/O failure on one rank (the fault driver: its first request of the
 * call, a random rank) while the others write, every method: every rank
 * returns PASSION_EIO with the same detail, which names the ranks that
 * wrote (exactly those whose bytes_written grew in the call) and the rank
 * that failed: "ranks 0,2 wrote their data; rank 1 failed: ...". Where
 * none wrote, it is the failure's own detail. Before, the detail was the
 * failing rank's alone.
 */
static void test_partial_write(void)
{
    uint64_t rng = th_seed + 31;
    th_case_seed = rng;
    const int P = th_size;
    /* columns of 2-4 KiB: every rank's file domain holds data */
    int64_t shape[2] = {th_range(&rng, 256, 512), 3 * (int64_t)P};
    world w;
    int rc = world_open(&w, "driver=fault", 2, shape, 8, PASSION_COL_MAJOR,
                        0, 0, "partial");
    TH_CHECK(rc == 0, "setup: %s", passion_strerror(rc));
    if (rc) {
        world_close(&w);
        return;
    }
    int *flags = calloc((size_t)P, sizeof *flags);
    int *named = calloc((size_t)P, sizeof *named);
    for (int mi = 0; mi < NMETHODS; mi++) {
        const int victim = (int)th_range(&rng, 0, P - 1);
        /* every P-th column from mine: disjoint, interleaved */
        int64_t st[2] = {0, th_rank}, ct[2] = {shape[0], 3}, sd[2] = {1, P};
        passion_section s;
        passion_section_set(&s, 2, st, ct, sd);
        unsigned char *buf = salted(&w, &s, rng);
        passion_counters c0, c1;
        passion_counters_get(w.ctx, &c0);
        core_fault_arm(w.ctx, 0, 1, victim);
        rc = passion_file_write_all(w.f, &s, buf, NULL, methods[mi]);
        /* did the victim make a request (a two-phase method's rank
           without a file domain makes none)? */
        int hit = th_rank == victim && core_fault_calls(w.ctx) > 0;
        MPI_Allreduce(MPI_IN_PLACE, &hit, 1, MPI_INT, MPI_MAX,
                      MPI_COMM_WORLD);
        core_fault_arm(w.ctx, 0, 0, -1);
        passion_counters_get(w.ctx, &c1);
        int wrote = c1.bytes_written > c0.bytes_written;
        MPI_Allgather(&wrote, 1, MPI_INT, flags, 1, MPI_INT, MPI_COMM_WORLD);
        const char *d = passion_ctx_errdetail(w.ctx);
        int any = 0, same = 1;
        for (int r = 0; r < P; r++)
            any |= flags[r];
        int listed = writers_named(d, named, P);
        for (int r = 0; r < P; r++)
            same &= named[r] == flags[r];
        char failed[64];
        snprintf(failed, sizeof failed, any ? "rank %d failed: " : "rank %d: ",
                 victim);
        if (getenv("TEST_VERBOSE") && th_rank == 0)
            printf("%s write, rank %d failing: rc %d, '%s'\n",
                   method_names[mi], victim, rc, d);
        TH_CHECK(hit ? agreed(&w, rc, PASSION_EIO) && listed == any &&
                           same && strstr(d, failed) != NULL
                     : agreed(&w, rc, 0),
                 "%s write, rank %d's first request failing: rc %d, "
                 "detail '%s' (want EIO everywhere, the ranks whose "
                 "bytes_written grew named as writers, and '%s')",
                 method_names[mi], victim, rc, d, failed);
        free(buf);
        /* the context works again */
        buf = salted(&w, &s, rng + 1);
        rc = passion_file_write_all(w.f, &s, buf, NULL, methods[mi]);
        TH_CHECK(rc == 0, "%s write after the fault: %d (%s)",
                 method_names[mi], rc, passion_ctx_errdetail(w.ctx));
        free(buf);
    }
    free(flags);
    free(named);
    world_close(&w);
}

/* ---- .npy ---- */

static void test_npy_header(void)
{
    th_case_seed = th_seed + 17;
    int64_t shape[3] = {3, 1000, 7};
    for (int order = 0; order < 2; order++) {
        world w;
        int rc = world_open(&w, NULL, 3, shape, 8, order, 0, 1, "hdr");
        TH_CHECK(rc == 0, "npy create: %s", passion_strerror(rc));
        if (rc) {
            world_close(&w);
            continue;
        }
        /* the header as numpy writes it */
        unsigned char h[128];
        FILE *fp = fopen(w.path, "rb");
        size_t got = fp ? fread(h, 1, sizeof h, fp) : 0;
        if (fp)
            fclose(fp);
        TH_CHECK(got == sizeof h && !memcmp(h, "\x93NUMPY\x01\x00", 8),
                 "magic and version 1.0");
        int hl = h[8] | h[9] << 8;
        TH_CHECK((10 + hl) % 64 == 0 && h[10 + hl - 1] == '\n',
                 "header padded to 64 bytes and ends in a newline");
        char want[128];
        snprintf(want, sizeof want,
                 "{'descr': '<f8', 'fortran_order': %s, 'shape': (3, 1000, "
                 "7), }",
                 order ? "True" : "False");
        TH_CHECK(!memcmp(h + 10, want, strlen(want)), "header dict: %.*s",
                 (int)strlen(want), h + 10);
        /* data after the header: a section round trip */
        check_read(&w, &(passion_section){{1, 10, 2}, {2, 5, 3}, {1, 100, 2}},
                   NULL, PASSION_METHOD_AUTO);
        passion_file_close(w.f);
        w.f = NULL;

        /* reopen: right spec, then every kind of mismatch */
        passion_file *f = NULL;
        rc = passion_file_open(w.a, w.path, PASSION_MODE_RDONLY, &f);
        TH_CHECK(rc == 0, "reopen: %s", passion_ctx_errdetail(w.ctx));
        passion_file_close(f);
        struct {
            int64_t shape1, esize;
            int storage;
            passion_kind kind;
            passion_endian endian;
            int want;
        } bad[] = {
            {999, 8, order, PASSION_KIND_FLOAT, 0, PASSION_EFORMAT},
            {1000, 4, order, PASSION_KIND_FLOAT, 0, PASSION_EFORMAT},
            {1000, 8, !order, PASSION_KIND_FLOAT, 0, PASSION_EFORMAT},
            {1000, 8, order, PASSION_KIND_INT, 0, PASSION_EFORMAT},
            {1000, 8, order, PASSION_KIND_FLOAT, PASSION_ENDIAN_BIG,
             PASSION_EFORMAT},
            {1000, 8, order, PASSION_KIND_FLOAT, PASSION_ENDIAN_LITTLE, 0},
            {1000, 8, order, PASSION_KIND_FLOAT, 0, 0},
        };
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            passion_array_spec sp = w.spec;
            sp.shape[1] = bad[k].shape1;
            sp.elem_size = bad[k].esize;
            sp.storage = bad[k].storage;
            sp.kind = bad[k].kind;
            sp.endian = bad[k].endian;
            passion_array *a2;
            rc = passion_array_create(w.ctx, &sp, &a2);
            TH_CHECK(rc == 0, "array");
            f = NULL;
            rc = passion_file_open(a2, w.path, PASSION_MODE_RDONLY, &f);
            TH_CHECK(rc == bad[k].want, "mismatch %zu: %d (%s)", k, rc,
                     passion_ctx_errdetail(w.ctx));
            passion_file_close(f);
            passion_array_free(a2);
        }
        world_close(&w);
    }
    /* format versions 2.0 and 3.0 (4-byte header length), written by
       hand: the data offset comes from the header */
    for (int ver = 2; ver <= 3; ver++) {
        int64_t sh[2] = {5, 9};
        char p2[512];
        snprintf(p2, sizeof p2, "%s/v%d.npy", th_dir(), ver);
        const char *dict = "{'shape': (5, 9), 'fortran_order': False, "
                           "\"descr\": '<i4', }";
        int64_t hl = 128 - 12;
        if (th_rank == 0) {
            FILE *fp = fopen(p2, "wb");
            unsigned char pre[12] = {0x93, 'N', 'U', 'M', 'P', 'Y',
                                     (unsigned char)ver, 0,
                                     (unsigned char)hl, 0, 0, 0};
            fwrite(pre, 1, 12, fp);
            fprintf(fp, "%-*s\n", (int)hl - 1, dict);
            for (int32_t v = 0; v < 45; v++)
                fwrite(&v, 4, 1, fp);
            fclose(fp);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        passion_ctx *c2;
        passion_init(MPI_COMM_WORLD, NULL, &c2);
        passion_array_spec sp2;
        passion_array_spec_init(&sp2, 2, sh, 4);
        sp2.placement = PASSION_PLACE_GLOBAL;
        sp2.kind = PASSION_KIND_INT;
        passion_array *a2;
        passion_array_create(c2, &sp2, &a2);
        passion_file *f2 = NULL;
        int rc2 = passion_file_open(a2, p2, PASSION_MODE_RDONLY, &f2);
        TH_CHECK(rc2 == 0, "open version %d: %s", ver, passion_ctx_errdetail(c2));
        if (!rc2) {
            int32_t got[3] = {0, 0, 0};
            int64_t st[2] = {th_rank % 5, 2}, ct[2] = {1, 3}, sd[2] = {1, 3};
            passion_section s2;
            passion_section_set(&s2, 2, st, ct, sd);
            rc2 = passion_file_read_all(f2, &s2, got, NULL,
                                           PASSION_METHOD_AUTO);
            int32_t r0 = (int32_t)(th_rank % 5) * 9;
            TH_CHECK(rc2 == 0 && got[0] == r0 + 2 && got[1] == r0 + 5 &&
                         got[2] == r0 + 8,
                     "version %d data: %d %d %d", ver, got[0], got[1],
                     got[2]);
            passion_file_close(f2);
        }
        passion_array_free(a2);
        passion_finalize(c2);
    }
    /* custom order cannot be a .npy file */
    passion_ctx *ctx;
    passion_init(MPI_COMM_WORLD, NULL, &ctx);
    passion_array_spec sp;
    passion_array_spec_init(&sp, 3, shape, 4);
    sp.storage = PASSION_ORDER_CUSTOM;
    sp.order[0] = 1;
    sp.order[1] = 0;
    sp.order[2] = 2;
    sp.placement = PASSION_PLACE_GLOBAL;
    passion_array *a;
    passion_array_create(ctx, &sp, &a);
    char p[512];
    snprintf(p, sizeof p, "%s/custom.npy", th_dir());
    passion_file *f = NULL;
    int rc = passion_file_open(a, p, PASSION_MODE_CREATE, &f);
    TH_CHECK(rc == PASSION_ENOTSUP, "custom order .npy: %d", rc);
    passion_file_close(f);
    /* not a .npy file at all */
    snprintf(p, sizeof p, "%s/junk.npy", th_dir());
    if (th_rank == 0) {
        FILE *fp = fopen(p, "wb");
        for (int i = 0; i < 1000; i++)
            fputc('x', fp);
        fclose(fp);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    sp.storage = PASSION_ROW_MAJOR;
    passion_array_free(a);
    passion_array_create(ctx, &sp, &a);
    rc = passion_file_open(a, p, PASSION_MODE_RDONLY, &f);
    TH_CHECK(rc == PASSION_EFORMAT, "junk .npy: %d", rc);
    passion_array_free(a);
    passion_finalize(ctx);
}

/* numpy loads what passion wrote, and passion reads what numpy wrote. */
static void test_npy_numpy(void)
{
    /* the first python3 that has numpy: the one on PATH, or the system's
       (a pyenv shim on PATH may not see Debian's python3-numpy) */
    static const char *const pys[] = {"python3", "/usr/bin/python3"};
    int have = 0;
    const char *py = NULL;
    for (int k = 0; k < 2 && !have && th_rank == 0; k++) {
        char probe[128];
        snprintf(probe, sizeof probe,
                 "%s -c 'import numpy' >/dev/null 2>&1", pys[k]);
        if (system(probe) == 0) {
            have = 1;
            py = pys[k];
        }
    }
    MPI_Bcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!have) {
        if (th_rank == 0)
            printf("\n  (numpy not available: numpy check skipped)\n");
        return;
    }
    th_case_seed = th_seed + 19;
    int64_t shape[2] = {31, 17};
    for (int order = 0; order < 2; order++) {
        world w;
        int rc = world_open(&w, NULL, 2, shape, 4, order, 0, 1, "numpy");
        TH_CHECK(rc == 0, "setup");
        /* every rank writes rows r, r+P, ... with value 1000 i + j */
        passion_section s;
        int64_t st[2] = {th_rank, 0}, ct[2] = {(31 - th_rank + th_size - 1) /
                                                   th_size, 17},
                sd[2] = {th_size, 1};
        if (th_rank >= 31)
            ct[0] = 0;
        passion_section_set(&s, 2, st, ct, sd);
        float *buf = malloc(31 * 17 * 4);
        int64_t k = 0;
        int64_t i2[2];
        for (int64_t a = 0; a < ct[0]; a++)
            for (int64_t b = 0; b < 17; b++) {
                i2[0] = a;
                i2[1] = b;
                k = order ? a + b * ct[0] : a * 17 + b;
                buf[k] = (float)(1000 * (th_rank + a * th_size) + b);
            }
        rc = passion_file_write_all(w.f, &s, buf, NULL,
                                       PASSION_METHOD_AUTO);
        TH_CHECK(rc == 0, "write: %s", passion_ctx_errdetail(w.ctx));
        if (th_rank == 0) {
            char cmd[2048];
            snprintf(cmd, sizeof cmd,
                     "%s -c \"import numpy as np, sys\n"
                     "a = np.load('%s', mmap_mode='r')\n"
                     "i, j = np.indices((31, 17))\n"
                     "ok = a.shape == (31, 17) and a.dtype == np.float32 and "
                     "bool(np.isfortran(a)) == %s and (a == 1000 * i + j).all()\n"
                     "np.save('%s.np.npy', np.asfortranarray(a * 2) if %s "
                     "else a * 2)\n"
                     "sys.exit(0 if ok else 1)\"",
                     py, w.path, order ? "True" : "False", w.path,
                     order ? "True" : "False");
            rc = system(cmd);
        }
        MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
        TH_CHECK(rc == 0, "numpy could not load the file or saw wrong data");
        /* passion reads numpy's file */
        char np_path[600];
        snprintf(np_path, sizeof np_path, "%s.np.npy", w.path);
        passion_file *f;
        rc = passion_file_open(w.a, np_path, PASSION_MODE_RDONLY, &f);
        TH_CHECK(rc == 0, "open numpy's file: %s", passion_ctx_errdetail(w.ctx));
        if (!rc) {
            memset(buf, 0, 31 * 17 * 4);
            rc = passion_file_read_all(f, &s, buf, NULL,
                                          PASSION_METHOD_ETP_DYNAMIC);
            int bad = rc != 0;
            for (int64_t a = 0; a < ct[0] && !bad; a++)
                for (int64_t b = 0; b < 17; b++) {
                    k = order ? a + b * ct[0] : a * 17 + b;
                    bad |= buf[k] !=
                           2.0f * (float)(1000 * (th_rank + a * th_size) + b);
                }
            TH_CHECK(!bad, "values read from numpy's file");
            passion_file_close(f);
        }
        (void)i2;
        free(buf);
        if (th_rank == 0)
            unlink(np_path);
        world_close(&w);
    }
}

/* Bytes_useful.
 * Before the fix: 65,536 for a 32,768-byte request that ran independently
 * (direct, sieve, or auto choosing them). */

static void test_bytes_useful(void)
{
    const int64_t shape[2] = {64, 64};
    passion_ctx *ctx = th_ctx_budget(0);
    passion_array *a = th_array(ctx, 2, shape, 8, PASSION_ROW_MAJOR,
                               PASSION_PLACE_GLOBAL, 0);
    passion_file *f = th_ramp_create(ctx, a, "useful.raw", 0.0);
    double *buf = calloc(1, 32768);
    passion_section all, half;
    passion_section_set(&all, 2, NULL, shape, NULL);
    /* every other column of a rank's rows: 32 x 32 elements = 8 KiB */
    passion_section_set(&half, 2, (const int64_t[]){th_rank % 32, 0},
                        (const int64_t[]){32, 32}, (const int64_t[]){1, 2});
    for (int m = 0; m < TH_NMETH; m++)
        for (int w = 0; w < 2; w++)
            for (int k = 0; k < 2; k++) {
                passion_section *s = k ? &half : &all;
                uint64_t want = k ? 8192 : 32768;
                passion_counters c0, c1;
                passion_counters_get(ctx, &c0);
                int rc = w ? passion_file_write_all(f, s, buf, NULL,
                                                       th_meths[m])
                           : passion_file_read_all(f, s, buf, NULL,
                                                      th_meths[m]);
                passion_counters_get(ctx, &c1);
                TH_CHECK(rc == 0, "%s: %d", th_mnames[m], rc);
                TH_CHECK(c1.bytes_useful - c0.bytes_useful == want,
                         "%s %s: asked %llu bytes, bytes_useful grew by %llu",
                         th_mnames[m], w ? "write" : "read",
                         (unsigned long long)want,
                         (unsigned long long)(c1.bytes_useful -
                                              c0.bytes_useful));
            }
    /* independent calls count once as well */
    passion_counters c0, c1;
    passion_counters_get(ctx, &c0);
    int rc = passion_file_read(f, &all, buf, NULL, PASSION_METHOD_AUTO);
    passion_counters_get(ctx, &c1);
    TH_CHECK(rc == 0 && c1.bytes_useful - c0.bytes_useful == 32768,
             "independent read: %llu",
             (unsigned long long)(c1.bytes_useful - c0.bytes_useful));
    free(buf);
    passion_file_close(f);
    passion_array_free(a);
    passion_finalize(ctx);
}

/* The ETP methods' minimum budget, stated exactly.
 * Before the fix: "cannot hold one element for each of P ranks", while
 * the real minimum is 5 (P-1) x element size. */

static void test_etp_min_budget(void)
{
    if (th_size < 2)
        return; /* one rank exchanges nothing: any budget works */
    const int64_t shape[2] = {16, 16}, es = 8;
    /* the budget bounds the whole call, so the minimum also
       holds the call's descriptors (exchange auto stages nothing more) */
    const int64_t min = coll_plan_desc_bytes(th_size, 2) +
                        5 * (int64_t)(th_size - 1) * es;
    char path[512];
    snprintf(path, sizeof path, "%s/minb.raw", th_dir());
    {
        passion_ctx *c0 = th_ctx_budget(0);
        passion_array *a0 = th_array(c0, 2, shape, es, PASSION_ROW_MAJOR,
                                    PASSION_PLACE_GLOBAL, 0);
        passion_file *f0 = th_ramp_create(c0, a0, "minb.raw", 0.0);
        passion_file_close(f0);
        passion_array_free(a0);
        passion_finalize(c0);
    }
    double buf[256];
    passion_section all;
    passion_section_set(&all, 2, NULL, shape, NULL);
    for (int k = 0; k < 2; k++) {
        int64_t budget = k ? min : min - 1;
        passion_ctx *ctx = th_ctx_budget(budget);
        passion_array *a = th_array(ctx, 2, shape, es, PASSION_ROW_MAJOR,
                                   PASSION_PLACE_GLOBAL, 0);
        passion_file *f = NULL;
        passion_file_open(a, path, PASSION_MODE_RDWR, &f);
        for (int m = 2; m < 4; m++)
            for (int w = 0; w < 2; w++) {
                memset(buf, 0, sizeof buf);
                if (w)
                    for (int i = 0; i < 256; i++)
                        buf[i] = (double)i;
                int rc = w ? passion_file_write_all(f, &all, buf, NULL,
                                                       th_meths[m])
                           : passion_file_read_all(f, &all, buf, NULL,
                                                      th_meths[m]);
                if (k) {
                    TH_CHECK(rc == 0 && th_ramp_bad(buf, 256, 0.0) == 0,
                             "%s at the minimum %lld: rc %d %s", th_mnames[m],
                             (long long)min, rc, passion_ctx_errdetail(ctx));
                } else {
                    char want[64];
                    snprintf(want, sizeof want, "at least %lld bytes",
                             (long long)min);
                    TH_CHECK(rc == PASSION_ENOMEM &&
                                 strstr(passion_ctx_errdetail(ctx), want),
                             "%s below the minimum %lld: rc %d '%s'",
                             th_mnames[m], (long long)min, rc,
                             passion_ctx_errdetail(ctx));
                }
            }
        passion_file_close(f);
        passion_array_free(a);
        passion_finalize(ctx);
    }
}

/* An auto write's order with a memory layout.
 * Before the fix (found by the soak, MPICH sanitizer build, 3 in about
 * 55 runs): a collective auto write that chose independent access
 * decided whether the ranks must write in rank order from every rank's
 * plan with a packed buffer, while each rank then chose direct or
 * sieving on its own plan, with its memory layout. Rank 1's section
 * (planes 0, 2, 4, 6 of the file) is four runs of the file but, in a
 * memory array whose rows are longer than the section's, 16 runs of
 * memory: packed it writes direct (4 requests against sieving's 2 and
 * seven planes read and written), so no order was needed; with its
 * layout it sieved (2 requests against 16), read planes 0-6 and wrote
 * them back, after rank 0 had written half of plane 1 between them:
 * rank 0's elements went back to their old values (in 4 of 5 runs of
 * 200 calls; each request moves half of what is left, fault_short, so
 * that the sieve takes long enough to meet rank 0's write). The model's
 * file costs are options (10 ms a request, a plane's transfer a little
 * less), so that no rank writes before the agreement and auto takes
 * independent access: the test checks that it did, then the file. Two
 * ranks (a communicator of ranks 0 and 1: with more, the model prices
 * the two-phase method differently). */

static void test_auto_order_memspec(void)
{
    MPI_Comm two;
    MPI_Comm_split(MPI_COMM_WORLD, th_rank < 2 ? 0 : MPI_UNDEFINED, th_rank,
                   &two);
    if (th_size < 2 || two == MPI_COMM_NULL) {
        if (two != MPI_COMM_NULL)
            MPI_Comm_free(&two);
        return;
    }
    const int64_t shape[3] = {7, 4, 8};
    /* the model's choice (independent access, ordered): the planner
       estimates, as the case was built for it */
    passion_options *o = th_options("%s", "planner=estimate,"
                                    "io_latency=1e-2,"
                                    "io_bandwidth=26947,driver=fault,"
                                    "fault_short=1");
    passion_ctx *ctx = NULL;
    int rc = passion_init(two, o, &ctx);
    passion_options_free(o);
    TH_CHECK(rc == 0 && ctx, "passion_init: %d", rc);
    passion_array *a = th_array(ctx, 3, shape, 8, PASSION_ROW_MAJOR,
                               PASSION_PLACE_GLOBAL, 0);
    char path[512];
    snprintf(path, sizeof path, "%s/order.raw", th_dir());
    passion_file *f = NULL;
    rc = passion_file_open(a, path, PASSION_MODE_CREATE, &f);
    TH_CHECK(rc == 0, "create %s: %d", path, rc);
    passion_section s, all;
    passion_section_set(&all, 3, NULL, shape, NULL);
    double buf[144], back[224];
    for (int i = 0; i < 224; i++)
        back[i] = -1.0;
    if (th_rank == 0) {
        rc = passion_file_write(f, &all, back, NULL, PASSION_METHOD_DIRECT);
        TH_CHECK(rc == 0, "fill: %d", rc);
    }
    MPI_Barrier(two);
    passion_memspec m = {{4, 4, 9}, {0, 0, 0}};
    int lost = 0, indep = 0, calls = 200;
    for (int it = 0; it < calls; it++) {
        const passion_memspec *mp = NULL;
        int64_t n = 0;
        if (th_rank == 0) { /* the first half of plane 1 */
            passion_section_set(&s, 3, (const int64_t[]){1, 0, 0},
                                (const int64_t[]){1, 2, 8}, NULL);
            n = 16;
        } else { /* planes 0, 2, 4, 6 from rows of 9 */
            passion_section_set(&s, 3, (const int64_t[]){0, 0, 0},
                                (const int64_t[]){4, 4, 8},
                                (const int64_t[]){2, 1, 1});
            mp = &m;
            n = 144;
        }
        for (int64_t i = 0; i < n; i++)
            buf[i] = 1000.0 * (it + 1) + 200.0 * th_rank + (double)i;
        rc = passion_file_write_all(f, &s, buf, mp, PASSION_METHOD_AUTO);
        TH_CHECK(rc == 0, "call %d: write_all %d %s", it, rc,
                 passion_ctx_errdetail(ctx));
        passion_method lm = PASSION_METHOD_AUTO;
        passion_ctx_last_method(ctx, &lm, NULL);
        indep += th_rank == 1 && (lm == PASSION_METHOD_DIRECT ||
                                  lm == PASSION_METHOD_SIEVE);
        rc = passion_file_read_all(f, &all, back, NULL,
                                   PASSION_METHOD_DIRECT);
        TH_CHECK(rc == 0, "call %d: read back %d", it, rc);
        for (int64_t i = 0; i < 16; i++) /* rank 0's elements */
            lost += back[32 + i] != 1000.0 * (it + 1) + (double)i;
    }
    MPI_Bcast(&indep, 1, MPI_INT, 1, two);
    TH_CHECK(indep == calls, "auto took independent access in %d of %d "
             "calls: the case does not test the order", indep, calls);
    TH_CHECK(lost == 0, "rank 0's elements went back to old values %d "
             "times in %d calls", lost, calls);
    passion_file_close(f);
    passion_array_free(a);
    passion_finalize(ctx);
    MPI_Comm_free(&two);
}

/* .npy header faults, each its own message.
 * Before the fix: all "descr must be a simple type string". */

static void write_npy(const char *path, const char *dict)
{
    char hdr[256];
    int n = snprintf(hdr, sizeof hdr, "%s", dict);
    int total = 10 + n + 1;
    int pad = (64 - total % 64) % 64;
    memset(hdr + n, ' ', (size_t)pad);
    hdr[n + pad] = '\n';
    int hl = n + pad + 1;
    FILE *fp = fopen(path, "wb");
    fwrite("\x93NUMPY\x01\x00", 1, 8, fp);
    unsigned char l[2] = {(unsigned char)(hl & 255), (unsigned char)(hl >> 8)};
    fwrite(l, 1, 2, fp);
    fwrite(hdr, 1, (size_t)hl, fp);
    static const double zero[16];
    fwrite(zero, sizeof zero[0], 16, fp);
    fclose(fp);
}

static void test_npy_messages(void)
{
    passion_ctx *ctx = th_ctx_budget(0);
    const int64_t shape[2] = {4, 4};
    passion_array *a = th_array(ctx, 2, shape, 8, PASSION_ROW_MAJOR,
                               PASSION_PLACE_GLOBAL, 0);
    static const struct {
        const char *dict, *word;
    } cases[] = {
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (-4, 4), }",
         "negative"},
        {"{'descr': '<f8', 'fortran_order': Maybe, 'shape': (4, 4), }",
         "fortran_order"},
        {"{'descr': '<f8', 'shape': (4, 4), }", "fortran_order"},
        {"{'descr': '<f8', 'fortran_order': False, }", "shape"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': [4, 4], }",
         "tuple"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (4, x), }",
         "shape"},
        {"{'fortran_order': False, 'shape': (4, 4), }", "descr"},
        {"{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (4, "
         "4), }", "descr"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 1, 1, "
         "1, 1, 1, 1, 4, 4), }", "dimensions"},
    };
    enum { NC = sizeof cases / sizeof cases[0] };
    char msgs[NC][512];
    for (int k = 0; k < NC; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/bad%d.npy", th_dir(), k);
        if (th_rank == 0)
            write_npy(path, cases[k].dict);
        MPI_Barrier(MPI_COMM_WORLD);
        passion_file *f = NULL;
        int rc = passion_file_open(a, path, PASSION_MODE_RDONLY, &f);
        const char *d = passion_ctx_errdetail(ctx);
        snprintf(msgs[k], sizeof msgs[k], "%s", strstr(d, ": ") ? d : "");
        TH_CHECK(rc == PASSION_EFORMAT && strstr(d, cases[k].word),
                 "npy case %d (%s): rc %d '%s'", k, cases[k].dict, rc, d);
        if (f)
            passion_file_close(f);
    }
    /* distinct faults, distinct messages (the path differs: compare what
       follows it) */
    static const int pairs[][2] = {{0, 1}, {0, 3}, {1, 3}, {0, 6}, {1, 6},
                                   {3, 6}, {2, 1}};
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        const char *x = strstr(msgs[pairs[k][0]], ".npy");
        const char *y = strstr(msgs[pairs[k][1]], ".npy");
        TH_CHECK(x && y && strcmp(x, y), "cases %d and %d: same message '%s'",
                 pairs[k][0], pairs[k][1], x ? x : "");
    }
    passion_array_free(a);
    passion_finalize(ctx);
}

int main(int argc, char **argv)
{
    static CU_TestInfo rand_tests[] = {
        {"random sections, posix driver", test_random_posix},
        {"random sections, mpiio driver", test_random_mpiio},
        {"every method, same sections", test_every_method},
        {"auto on an uncached file", test_cold_auto},
        {"column blocks: covered, no read; a hole, kept",
         test_column_blocks},
        {"bytes_useful counted once", test_bytes_useful},
        {"ETP minimum budget", test_etp_min_budget},
        {"auto write order with a memory layout", test_auto_order_memspec},
        CU_TEST_INFO_NULL};
    static CU_TestInfo err_tests[] = {
        {"bad section on one rank", test_errors},
        {"I/O failure on one rank", test_fault},
        {"a refused write writes nothing", test_refused_write},
        {"a write failing on one rank names who wrote", test_partial_write},
        CU_TEST_INFO_NULL};
    static CU_TestInfo npy_tests[] = {
        {".npy header, open checks", test_npy_header},
        {".npy with numpy", test_npy_numpy},
        {".npy header faults, each its own message", test_npy_messages},
        CU_TEST_INFO_NULL};
    static CU_SuiteInfo suites[] = {
        {"collective sections", NULL, NULL, NULL, NULL, rand_tests},
        {"errors", NULL, NULL, NULL, NULL, err_tests},
        {"npy", NULL, NULL, NULL, NULL, npy_tests},
        CU_SUITE_INFO_NULL};
    return th_main(argc, argv, suites);
}
