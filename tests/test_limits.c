/*
 * test_limits.c - the limits passion(3) states (section LIMITS), each at
 * its boundary (accepted) and one past it (the error named there):
 * dimensions, element size, elements and bytes of a global file (header
 * included), of a local file (ghosts included), ghost widths, ranks of
 * the processor grid, section indices and counts, the memory budget.
 * Nothing here creates a file: the sizes are descriptor limits, checked
 * before any I/O (the file system's own maximum file size comes on top:
 * creating a file beyond it is PASSION_ENOSPC, from EFBIG).
 */
#include "harness.h"

#include "passion.h"

#include <stdint.h>

static passion_ctx *ctx;

static int create(int nd, const int64_t *shape, int64_t esize,
                  int64_t header, const int64_t *ghost, int placement)
{
    passion_array_spec s;
    int rc = passion_array_spec_init(&s, nd, shape, esize);
    if (rc)
        return rc;
    s.placement = placement;
    s.header_bytes = header;
    for (int d = 0; d < nd; d++)
        s.ghost[d] = ghost ? ghost[d] : 0;
    if (placement == PASSION_PLACE_LOCAL) {
        /* all ranks along the last dimension */
        s.grid[nd - 1] = th_size;
    }
    passion_array *a = NULL;
    rc = passion_array_create(ctx, &s, &a);
    passion_array_free(a);
    return rc;
}

static void test_dims_and_element(void)
{
    int64_t shape[PASSION_MAX_DIMS + 1];
    for (int d = 0; d <= PASSION_MAX_DIMS; d++)
        shape[d] = 2;
    int rc = create(PASSION_MAX_DIMS, shape, 8, 0, NULL,
                    PASSION_PLACE_GLOBAL);
    TH_CHECK(rc == 0, "%d dimensions: %d", PASSION_MAX_DIMS, rc);
    passion_array_spec s;
    rc = passion_array_spec_init(&s, PASSION_MAX_DIMS + 1, shape, 8);
    TH_CHECK(rc == PASSION_EINVAL, "spec_init with %d dimensions: %d",
             PASSION_MAX_DIMS + 1, rc);
    rc = create(0, shape, 8, 0, NULL, PASSION_PLACE_GLOBAL);
    TH_CHECK(rc == PASSION_EINVAL, "0 dimensions: %d", rc);
    rc = create(1, shape, 64, 0, NULL, PASSION_PLACE_GLOBAL);
    TH_CHECK(rc == 0, "element of 64 bytes: %d", rc);
    rc = create(1, shape, 65, 0, NULL, PASSION_PLACE_GLOBAL);
    TH_CHECK(rc == PASSION_EINVAL, "element of 65 bytes: %d", rc);
    rc = create(1, shape, 0, 0, NULL, PASSION_PLACE_GLOBAL);
    TH_CHECK(rc == PASSION_EINVAL, "element of 0 bytes: %d", rc);
    shape[0] = 0;
    rc = create(1, shape, 8, 0, NULL, PASSION_PLACE_GLOBAL);
    TH_CHECK(rc == PASSION_EINVAL, "shape 0: %d", rc);
}

/* A global file holds at most INT64_MAX bytes, header included. */
static void test_global_bytes(void)
{
    int64_t shape[2] = {INT64_MAX, 1};
    int rc = create(1, shape, 1, 0, NULL, PASSION_PLACE_GLOBAL);
    TH_CHECK(rc == 0, "INT64_MAX elements of 1 byte: %d", rc);
    rc = create(1, shape, 1, 1, NULL, PASSION_PLACE_GLOBAL);
    TH_CHECK(rc == PASSION_EOVERFLOW, "... and a 1-byte header: %d", rc);
    shape[0] = INT64_MAX / 8; /* INT64_MAX - 7 bytes */
    rc = create(1, shape, 8, 7, NULL, PASSION_PLACE_GLOBAL);
    TH_CHECK(rc == 0, "INT64_MAX bytes with the header: %d", rc);
    rc = create(1, shape, 8, 8, NULL, PASSION_PLACE_GLOBAL);
    TH_CHECK(rc == PASSION_EOVERFLOW, "one byte more: %d", rc);
    shape[0] = INT64_MAX / 8 + 1;
    rc = create(1, shape, 8, 0, NULL, PASSION_PLACE_GLOBAL);
    TH_CHECK(rc == PASSION_EOVERFLOW, "one element more: %d", rc);
    /* the product over dimensions: 2^31 x (2^32 - 1) one-byte elements
       fit, 2^31 x 2^32 do not */
    int64_t s2[2] = {(int64_t)1 << 31, ((int64_t)1 << 32) - 1};
    rc = create(2, s2, 1, 0, NULL, PASSION_PLACE_GLOBAL);
    TH_CHECK(rc == 0, "2^63 - 2^31 bytes: %d", rc);
    s2[1]++;
    rc = create(2, s2, 1, 0, NULL, PASSION_PLACE_GLOBAL);
    TH_CHECK(rc == PASSION_EOVERFLOW, "2^63 bytes: %d", rc);
}

/* A local file holds the largest local array with its ghosts: at most
   INT64_MAX bytes; a ghost is at most the dimension's size. */
static void test_local_bytes(void)
{
    /* dimension 0 is not distributed: the local extent is the shape plus
       both ghosts; dimension 1 (one index, on rank 0) carries the grid.
       The global array must fit as well (at most INT64_MAX bytes). */
    int64_t shape[2] = {INT64_MAX / 8 - 2, 1};
    int64_t ghost[2] = {1, 0};
    int rc = create(2, shape, 8, 0, ghost, PASSION_PLACE_LOCAL);
    TH_CHECK(rc == 0, "local file of INT64_MAX - 7 bytes: %d", rc);
    shape[0]++;
    rc = create(2, shape, 8, 0, ghost, PASSION_PLACE_LOCAL);
    TH_CHECK(rc == PASSION_EOVERFLOW, "one element more: %d", rc);
    /* ghost width: up to the dimension's size */
    int64_t s1[2] = {10, th_size};
    int64_t g1[2] = {10, 0};
    rc = create(2, s1, 8, 0, g1, PASSION_PLACE_LOCAL);
    TH_CHECK(rc == 0, "ghost = shape: %d", rc);
    g1[0] = 11;
    rc = create(2, s1, 8, 0, g1, PASSION_PLACE_LOCAL);
    TH_CHECK(rc == PASSION_EINVAL, "ghost = shape + 1: %d", rc);
    /* the largest ghost on the largest dimension: n + 2g overflows
       although each fits (was accepted: 2 * ghost wrapped around) */
    int64_t s3[2] = {INT64_MAX, th_size};
    int64_t g3[2] = {INT64_MAX, 0};
    rc = create(2, s3, 1, 0, g3, PASSION_PLACE_LOCAL);
    TH_CHECK(rc == PASSION_EOVERFLOW, "ghost INT64_MAX: %d", rc);
}

/* The file system's limit on a file's size comes on top: a global file
   of INT64_MAX - 7 bytes is beyond ext4's 16 TiB (EFBIG ->
   PASSION_ENOSPC, on every rank, nothing left behind); a file system
   that holds such a sparse file may create it. */
static void test_file_size(void)
{
    int64_t shape[1] = {INT64_MAX / 8};
    passion_array_spec s;
    passion_array_spec_init(&s, 1, shape, 8);
    s.placement = PASSION_PLACE_GLOBAL;
    passion_array *a = NULL;
    int rc = passion_array_create(ctx, &s, &a);
    TH_CHECK(rc == 0, "array: %d", rc);
    char path[512];
    snprintf(path, sizeof path, "%s/huge.raw", th_dir());
    passion_file *f = NULL;
    rc = passion_file_open(a, path, PASSION_MODE_CREATE, &f);
    TH_CHECK(rc == PASSION_ENOSPC || rc == 0, "create %s: %d (%s)", path,
             rc, passion_ctx_errdetail(ctx));
    if (getenv("TEST_VERBOSE") && th_rank == 0)
        printf("\n  huge create: %s\n", passion_strerror(rc));
    passion_file_close(f);
    passion_array_free(a);
    MPI_Barrier(MPI_COMM_WORLD);
    if (th_rank == 0)
        remove(path);
}

/* The processor grid has exactly as many ranks as the communicator. */
static void test_ranks(void)
{
    int64_t shape[2] = {4, 4 * th_size};
    passion_array_spec s;
    passion_array_spec_init(&s, 2, shape, 4);
    s.placement = PASSION_PLACE_LOCAL;
    s.grid[1] = th_size;
    passion_array *a = NULL;
    int rc = passion_array_create(ctx, &s, &a);
    TH_CHECK(rc == 0, "grid of P ranks: %d", rc);
    passion_array_free(a);
    a = NULL;
    s.grid[1] = th_size + 1;
    rc = passion_array_create(ctx, &s, &a);
    TH_CHECK(rc == PASSION_EINVAL, "grid of P + 1 ranks: %d", rc);
    passion_array_free(a);
}

/* Section indices: the last valid index is accepted, one past is
   PASSION_ERANGE; start + (count - 1) x stride overflowing 64 bits is
   PASSION_EOVERFLOW; a count of 0 anywhere is an empty section. */
static void test_sections(void)
{
    int64_t shape[1] = {1000};
    passion_array_spec s;
    passion_array_spec_init(&s, 1, shape, 4);
    s.placement = PASSION_PLACE_GLOBAL;
    passion_array *a = NULL;
    int rc = passion_array_create(ctx, &s, &a);
    TH_CHECK(rc == 0, "array: %d", rc);
    char path[512];
    snprintf(path, sizeof path, "%s/lim.raw", th_dir());
    passion_file *f = NULL;
    rc = passion_file_open(a, path, PASSION_MODE_CREATE, &f);
    TH_CHECK(rc == 0, "open: %d", rc);
    if (!rc) {
        float buf[4];
        passion_section sec;
        int64_t st = 999, ct = 1, sd = 1;
        passion_section_set(&sec, 1, &st, &ct, &sd);
        rc = passion_file_read(f, &sec, buf, NULL, PASSION_METHOD_AUTO);
        TH_CHECK(rc == 0, "last element: %d", rc);
        st = 1000;
        passion_section_set(&sec, 1, &st, &ct, &sd);
        rc = passion_file_read(f, &sec, buf, NULL, PASSION_METHOD_AUTO);
        TH_CHECK(rc == PASSION_ERANGE, "one past: %d", rc);
        st = 0;
        ct = 2;
        sd = 999;
        passion_section_set(&sec, 1, &st, &ct, &sd);
        rc = passion_file_read(f, &sec, buf, NULL, PASSION_METHOD_AUTO);
        TH_CHECK(rc == 0, "stride to the last element: %d", rc);
        sd = 1000;
        passion_section_set(&sec, 1, &st, &ct, &sd);
        rc = passion_file_read(f, &sec, buf, NULL, PASSION_METHOD_AUTO);
        TH_CHECK(rc == PASSION_ERANGE, "stride one past: %d", rc);
        sd = INT64_MAX;
        passion_section_set(&sec, 1, &st, &ct, &sd);
        st = 1;
        sec.start[0] = 1;
        rc = passion_file_read(f, &sec, buf, NULL, PASSION_METHOD_AUTO);
        TH_CHECK(rc == PASSION_EOVERFLOW, "1 + INT64_MAX: %d", rc);
        ct = 0;
        passion_section_set(&sec, 1, &st, &ct, NULL);
        sec.start[0] = INT64_MAX;
        rc = passion_file_read(f, &sec, buf, NULL, PASSION_METHOD_AUTO);
        TH_CHECK(rc == 0, "count 0 anywhere: %d", rc);
        passion_file_close(f);
    }
    passion_array_free(a);
    if (th_rank == 0)
        remove(path);
}

/* The memory budget: at least 1 byte. */
static void test_budget(void)
{
    passion_options *o = NULL;
    passion_options_create(&o);
    int rc = passion_options_set_int(o, "memory_budget", 1);
    TH_CHECK(rc == 0, "budget 1: %d", rc);
    rc = passion_options_set_int(o, "memory_budget", 0);
    TH_CHECK(rc == PASSION_EINVAL, "budget 0: %d", rc);
    passion_options_free(o);
}

static int suite_init(void)
{
    return th_init(&ctx, "%s", "") ? 1 : 0;
}

static int suite_clean(void)
{
    passion_finalize(ctx);
    ctx = NULL;
    return 0;
}

/* Ghost widths on a distributed dimension: 0 <= ghost[d] <= shape[d]
   (documented) */
static void test_ghost_limit(void)
{
    const int64_t shape[1] = {3 * (int64_t)th_size};
    for (int k = 0; k < 2; k++) {
        passion_array_spec sp;
        passion_array_spec_init(&sp, 1, shape, 4);
        sp.grid[0] = th_size;
        sp.ghost[0] = shape[0] + k;
        passion_array *a = NULL;
        int rc = passion_array_create(ctx, &sp, &a);
        TH_CHECK(k ? rc == PASSION_EINVAL : rc == 0, "ghost %lld: rc %d",
                 (long long)sp.ghost[0], rc);
        passion_array_free(a);
    }
}

int main(int argc, char **argv)
{
    static CU_TestInfo tests[] = {
        {"dimensions and element size", test_dims_and_element},
        {"global file bytes", test_global_bytes},
        {"local file bytes and ghosts", test_local_bytes},
        {"ghost <= shape on a distributed dimension", test_ghost_limit},
        {"ranks of the grid", test_ranks},
        {"file size beyond the file system", test_file_size},
        {"section indices and counts", test_sections},
        {"memory budget", test_budget},
        CU_TEST_INFO_NULL};
    static CU_SuiteInfo suites[] = {
        {"limits", suite_init, suite_clean, NULL, NULL, tests},
        CU_SUITE_INFO_NULL};
    return th_main(argc, argv, suites);
}
