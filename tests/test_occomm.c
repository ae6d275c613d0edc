/*
 * test_occomm.c - out-of-core shift and multicast between local array
 * files, checked cell by cell against the global index each cell stands
 * for; argument errors agreed on every rank.
 */
#include "harness.h"
#include "passion.h"
#include "../passion/core.h" /* core_fault_arm */

#define SENTINEL 0xDEADBEEFu

static uint32_t gval(const int64_t *g)
{
    return (uint32_t)(g[0] * 100003 + g[1] * 7 + 1);
}

static passion_ctx *mkctx(int64_t budget)
{
    passion_ctx *ctx = NULL;
    th_init(&ctx, "memory_budget=%lld", (long long)budget);
    return ctx;
}

/* 2-D array on grid g0 x g1, ghosts, interior = gval, ghosts sentinel. */
static passion_file *setup(passion_ctx *ctx, int storage, int g0, int g1,
                           const int64_t *shape, int64_t ghost,
                           passion_array **pa, const char *tag)
{
    passion_array_spec sp;
    passion_array_spec_init(&sp, 2, shape, 4);
    sp.storage = storage;
    sp.grid[0] = g0;
    sp.grid[1] = g1;
    sp.ghost[0] = g0 > 1 || ghost > 1 ? ghost : 0;
    sp.ghost[1] = ghost;
    passion_array *a = NULL;
    int rc = passion_array_create(ctx, &sp, &a);
    TH_CHECK(rc == 0, "array: %s", passion_ctx_errdetail(ctx));
    char pat[512];
    snprintf(pat, sizeof pat, "%s/%s.%%d", th_dir(), tag);
    passion_file *f = NULL;
    rc = passion_file_open(a, pat, PASSION_MODE_CREATE, &f);
    TH_CHECK(rc == 0, "open");
    int64_t nl[2], lo[2], hi[2], fb;
    passion_array_local_shape(a, th_rank, nl);
    passion_array_local_bounds(a, th_rank, 0, lo, hi);
    passion_array_local_bytes(a, th_rank, &fb);
    const passion_array_spec *ns = passion_array_get_spec(a);
    int64_t e0 = nl[0] + 2 * ns->ghost[0], e1 = nl[1] + 2 * ns->ghost[1];
    uint32_t *b = malloc(fb);
    for (int64_t i = 0; i < e0; i++)
        for (int64_t j = 0; j < e1; j++) {
            int64_t li = i - ns->ghost[0], lj = j - ns->ghost[1];
            int in = li >= 0 && li < nl[0] && lj >= 0 && lj < nl[1];
            int64_t g[2] = {lo[0] + li, lo[1] + lj};
            int64_t pos = storage == PASSION_ROW_MAJOR ? i * e1 + j
                                                       : j * e0 + i;
            b[pos] = in ? gval(g) : SENTINEL;
        }
    passion_file_write_local(f, b);
    free(b);
    *pa = a;
    return f;
}

/* Every cell: interior gval; ghosts gval of the (wrapped) global index
   when inside the array and exchanged, else the sentinel. */
static long check(passion_array *a, passion_file *f, int storage,
                  const int *periodic, const int *done)
{
    int64_t nl[2], lo[2], hi[2], fb;
    passion_array_local_shape(a, th_rank, nl);
    passion_array_local_bounds(a, th_rank, 0, lo, hi);
    passion_array_local_bytes(a, th_rank, &fb);
    const passion_array_spec *ns = passion_array_get_spec(a);
    int64_t e0 = nl[0] + 2 * ns->ghost[0], e1 = nl[1] + 2 * ns->ghost[1];
    uint32_t *b = malloc(fb);
    passion_file_read_local(f, b);
    long bad = 0;
    for (int64_t i = 0; i < e0; i++)
        for (int64_t j = 0; j < e1; j++) {
            int64_t l[2] = {i - ns->ghost[0], j - ns->ghost[1]};
            int64_t g[2];
            int ok = 1;
            for (int d = 0; d < 2; d++) {
                g[d] = lo[d] + l[d];
                int out = l[d] < 0 || l[d] >= nl[d];
                if (out && !done[d])
                    ok = 0;
                if (g[d] < 0 || g[d] >= ns->shape[d]) {
                    if (periodic[d] && ns->grid[d] > 1)
                        g[d] = (g[d] + ns->shape[d]) % ns->shape[d];
                    else if (periodic[d] && ns->grid[d] == 1)
                        g[d] = (g[d] + ns->shape[d]) % ns->shape[d];
                    else
                        ok = 0;
                }
            }
            int64_t pos = storage == PASSION_ROW_MAJOR ? i * e1 + j
                                                       : j * e0 + i;
            uint32_t want = ok ? gval(g) : SENTINEL;
            if (b[pos] != want && bad++ < 3)
                fprintf(stderr, "[rank %d] cell (%lld,%lld): %x want %x\n",
                        th_rank, (long long)l[0], (long long)l[1], b[pos],
                        want);
        }
    free(b);
    return bad;
}

static void test_shift_columns(void)
{
    for (int st = 0; st < 2; st++)
        for (int per = 0; per < 2; per++) {
            passion_ctx *ctx = mkctx(st ? 40 : 1 << 20); /* tiny: pieces */
            int64_t shape[2] = {9, 4 * th_size - 1};
            passion_array *a;
            char tag[32];
            snprintf(tag, sizeof tag, "col%d%d", st, per);
            int storage = st ? PASSION_COL_MAJOR : PASSION_ROW_MAJOR;
            passion_file *f = setup(ctx, storage, 1, th_size, shape, 2, &a,
                                    tag);
            int rc = passion_file_shift_all(f, 1, 0, per, 0);
            TH_CHECK(rc == 0, "shift: %s", passion_ctx_errdetail(ctx));
            int pp[2] = {0, per}, done[2] = {0, 1};
            long bad = check(a, f, storage, pp, done);
            TH_CHECK(bad == 0, "%ld cells wrong (storage %d periodic %d)",
                     bad, st, per);
            passion_counters c;
            passion_counters_get(ctx, &c);
            TH_CHECK(th_size == 1 && !per ? c.messages_sent == 0
                                          : c.messages_sent > 0, "messages");
            passion_file_close(f);
            passion_array_free(a);
            passion_finalize(ctx);
        }
}

/* (block, block): shift rows then columns; corners come along. */
static void test_shift_blockblock(void)
{
    int dims[2] = {0, 0};
    MPI_Dims_create(th_size, 2, dims);
    for (int st = 0; st < 2; st++) {
        passion_ctx *ctx = mkctx(st ? 1 << 20 : 100);
        int64_t shape[2] = {3 * dims[0] + 2, 3 * dims[1] + 1};
        passion_array *a;
        int storage = st ? PASSION_COL_MAJOR : PASSION_ROW_MAJOR;
        passion_file *f = setup(ctx, storage, dims[0], dims[1], shape, 1, &a,
                                st ? "bbc" : "bbr");
        int rc = passion_file_shift_all(f, 0, 0, 0, 0);
        rc = rc ? rc : passion_file_shift_all(f, 1, 0, 0, 0);
        TH_CHECK(rc == 0, "shift: %s", passion_ctx_errdetail(ctx));
        int pp[2] = {0, 0}, done[2] = {1, 1};
        long bad = check(a, f, storage, pp, done);
        TH_CHECK(bad == 0, "(block,block) %dx%d storage %d: %ld wrong",
                 dims[0], dims[1], st, bad);
        /* one direction only: +1 fills the low ghosts only */
        passion_file_close(f);
        passion_array_free(a);
        passion_finalize(ctx);
    }
}

static void test_shift_errors(void)
{
    passion_ctx *ctx = mkctx(1 << 20);
    int64_t shape[2] = {4, 4 * th_size};
    passion_array *a;
    passion_file *f = setup(ctx, PASSION_COL_MAJOR, 1, th_size, shape, 1, &a,
                            "err");
    int rc = passion_file_shift_all(f, 1, 0, 0, 2);
    TH_CHECK(rc == PASSION_EINVAL, "width > ghost: %d", rc);
    rc = passion_file_shift_all(f, 1, th_rank == 0 ? 1 : -1, 0, 0);
    TH_CHECK(th_size == 1 ? rc == 0 : rc == PASSION_EMISMATCH,
             "ranks disagree: %d", rc);
    rc = passion_file_shift_all(f, 5, 0, 0, 0);
    TH_CHECK(rc == PASSION_EINVAL, "bad dim: %d", rc);
    /* the detail names the public call, not a pre-1.0 name */
    TH_CHECK(strstr(passion_ctx_errdetail(ctx), "passion_file_shift_all: "
                                                "dimension 5"),
             "bad dim detail: %s", passion_ctx_errdetail(ctx));
    rc = passion_file_multicast_all(f, th_size, NULL, NULL, 0, NULL, NULL,
                                    NULL);
    TH_CHECK(rc == PASSION_EINVAL, "bad multicast root: %d", rc);
    TH_CHECK(strstr(passion_ctx_errdetail(ctx),
                    "passion_file_multicast_all: root"),
             "bad root detail: %s", passion_ctx_errdetail(ctx));
    TH_CHECK(th_all(1), "all ranks reached the end");
    passion_file_close(f);
    passion_array_free(a);
    passion_finalize(ctx);
}

/* A shift whose buffers one rank cannot allocate (each rank in turn, its
   first allocation of the call failing; every direction, periodic or
   not) is refused on every rank before any rank writes: every ghost
   keeps its sentinel. Before, the ranks whose partners had their buffers
   exchanged and wrote their ghosts. */
static void test_shift_refused(void)
{
    th_case_seed = th_seed;
    passion_ctx *ctx = mkctx(1 << 20);
    int64_t shape[2] = {9, 4 * th_size - 1};
    for (int victim = 0; victim < th_size; victim++)
        for (int dir = -1; dir <= 1; dir++)
            for (int per = 0; per < 2; per++) {
                passion_array *a;
                passion_file *f = setup(ctx, PASSION_ROW_MAJOR, 1, th_size,
                                        shape, 2, &a, "refused");
                core_fault_arm(ctx, 1, 0, victim);
                int rc = passion_file_shift_all(f, 1, dir, per, 0);
                core_fault_arm(ctx, 0, 0, -1);
                char d[512], d0[512];
                snprintf(d, sizeof d, "%s", passion_ctx_errdetail(ctx));
                memcpy(d0, d, sizeof d0);
                MPI_Bcast(d0, sizeof d0, MPI_CHAR, 0, MPI_COMM_WORLD);
                TH_CHECK(th_all(rc == PASSION_ENOMEM && !strcmp(d, d0)),
                         "shift (direction %d, periodic %d), rank %d "
                         "without buffers: rc %d, detail '%s' (want ENOMEM "
                         "everywhere, one detail)", dir, per, victim, rc, d);
                int pp[2] = {0, per}, none[2] = {0, 0};
                long bad = check(a, f, PASSION_ROW_MAJOR, pp, none);
                TH_CHECK(th_all(bad == 0),
                         "refused shift (direction %d, periodic %d, rank %d "
                         "without buffers): %ld ghost cells written", dir,
                         per, victim, bad);
                /* the next shift works */
                rc = passion_file_shift_all(f, 1, 0, per, 0);
                int done[2] = {0, 1};
                TH_CHECK(rc == 0 &&
                             check(a, f, PASSION_ROW_MAJOR, pp, done) == 0,
                         "shift after the refused one: %d", rc);
                passion_file_close(f);
                passion_array_free(a);
            }
    passion_finalize(ctx);
}

static void test_multicast(void)
{
    for (int v = 0; v < 2; v++) {
        passion_ctx *ctx = mkctx(v ? 64 : 1 << 20);
        int64_t shape[2] = {10, 6 * th_size};
        passion_array *a;
        passion_file *f = setup(ctx, PASSION_COL_MAJOR, 1, th_size, shape, 1,
                                &a, v ? "mc1" : "mc0");
        int root = th_size - 1;
        int group[8], ng = 0;
        for (int r = 0; r < th_size; r += 2)
            group[ng++] = r;
        passion_section src, dst;
        int64_t s0[2] = {1, 0}, c0[2] = {4, 3}, st0[2] = {2, 2};
        int64_t s1[2] = {0, 1};
        passion_section_set(&src, 2, s0, c0, st0);
        passion_section_set(&dst, 2, s1, c0, NULL);
        int64_t lo[2], hi[2];
        passion_array_local_bounds(a, root, 0, lo, hi);
        int member = th_rank % 2 == 0;
        long bad = 0;
        if (v == 0) {
            int rc = passion_file_multicast_all(f, root, &src, group, ng, &dst,
                                              NULL, NULL);
            TH_CHECK(rc == 0, "multicast: %s", passion_ctx_errdetail(ctx));
            uint32_t got[12];
            rc = passion_file_read(f, &dst, got, NULL, 0);
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 3; j++) {
                    int64_t g[2] = {lo[0] + 1 + 2 * i, lo[1] + 2 * j};
                    int64_t mine[2], l0[2], h0[2];
                    passion_array_local_bounds(a, th_rank, 0, l0, h0);
                    mine[0] = l0[0] + i;
                    mine[1] = l0[1] + 1 + j;
                    uint32_t want = member ? gval(g) : gval(mine);
                    bad += got[j * 4 + i] != want;
                }
        } else {
            /* into memory, placed inside a larger array */
            passion_memspec m;
            memset(&m, 0, sizeof m);
            m.shape[0] = 6;
            m.shape[1] = 5;
            m.offset[0] = 1;
            m.offset[1] = 2;
            uint32_t buf[30];
            for (int i = 0; i < 30; i++)
                buf[i] = 7;
            int rc = passion_file_multicast_all(f, root, &src, NULL, 0, NULL,
                                              buf, &m);
            TH_CHECK(rc == 0, "multicast: %s", passion_ctx_errdetail(ctx));
            for (int i = 0; i < 6; i++)
                for (int j = 0; j < 5; j++) {
                    int in = i >= 1 && i < 5 && j >= 2;
                    int64_t g[2] = {lo[0] + 1 + 2 * (i - 1),
                                    lo[1] + 2 * (j - 2)};
                    uint32_t want = in ? gval(g) : 7;
                    bad += buf[j * 6 + i] != want; /* column-major */
                }
        }
        TH_CHECK(bad == 0, "multicast variant %d: %ld wrong", v, bad);
        passion_file_close(f);
        passion_array_free(a);
        passion_finalize(ctx);
    }
}

static CU_TestInfo tests[] = {
    {"shift along columns, periodic or not", test_shift_columns},
    {"shift on (block, block), corners", test_shift_blockblock},
    {"shift argument errors agreed", test_shift_errors},
    {"a shift refused for its buffers writes nothing", test_shift_refused},
    {"multicast to a group, file and memory", test_multicast},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"occomm", NULL, NULL, NULL, NULL, tests},
    CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, suites);
}
