/*
 * test_lset.c - local array sets describe themselves.
 *
 * Random local arrays (1-4 dimensions, every distribution with and without
 * m, ghosts, every storage order, 1-16 byte elements, grids over P ranks):
 * creating one writes its description (NAME.passion, README "Local array
 * sets"), which rank 0 parses back to exactly the normalised spec;
 * opening the set with passion_open by its pattern, and by the
 * description's name, gives an
 * array with the same spec and the data written before; on another number
 * of ranks (a sub-communicator) the open fails on every rank with
 * PASSION_EMISMATCH and a message that names `passion convert`; a missing
 * description is PASSION_ENOENT, a corrupt one PASSION_EFORMAT;
 * passion_file_rename moves the files and rewrites the description for the
 * new pattern (the old one gone); passion_array_spec_read reads any set
 * at any rank count.
 */
#include "harness.h"

#include "../ocad/ocad.h"

#include <unistd.h>

/* The fields the description carries are equal. */
static int same_layout(const passion_array_spec *a,
                       const passion_array_spec *b)
{
    if (a->ndims != b->ndims || a->elem_size != b->elem_size ||
        a->storage != b->storage || a->placement != b->placement)
        return 0;
    for (int d = 0; d < a->ndims; d++)
        if (a->shape[d] != b->shape[d] || a->order[d] != b->order[d] ||
            a->grid[d] != b->grid[d] || a->dist[d] != b->dist[d] ||
            a->block[d] != b->block[d] || a->ghost[d] != b->ghost[d])
            return 0;
    return 1;
}

static void test_describe_open(void)
{
    for (int t = 0; t < 12; t++) {
        uint64_t s = th_seed * 100 + (uint64_t)t;
        th_case_seed = s;
        passion_array_spec sp;
        static const int64_t esizes[] = {1, 2, 4, 8, 16};
        th_random_spec(&s, th_size, esizes, 5, &sp);
        passion_ctx *ctx = NULL;
        TH_CHECK(th_init(&ctx, NULL) == 0, "init");
        passion_array *a = NULL;
        passion_file *f = NULL;
        char pat[512];
        snprintf(pat, sizeof pat, "%s/set%d.%%d.laf", th_dir(), t);
        int rc = passion_array_create(ctx, &sp, &a);
        TH_CHECK(rc == 0, "create: %s", passion_ctx_errdetail(ctx));
        rc = passion_file_open(a, pat, PASSION_MODE_CREATE, &f);
        TH_CHECK(rc == 0, "open: %s", passion_ctx_errdetail(ctx));
        int64_t bytes = 0;
        passion_array_local_bytes(a, th_rank, &bytes);
        unsigned char *buf = malloc((size_t)bytes + 1), *back =
            malloc((size_t)bytes + 1);
        for (int64_t i = 0; i < bytes; i++)
            buf[i] = (unsigned char)(th_next(&s) ^ (uint64_t)th_rank);
        TH_CHECK(passion_file_write_local(f, buf) == 0, "write");
        passion_array_spec norm = *passion_array_get_spec(a);
        TH_CHECK(passion_file_close(f) == 0, "close");
        /* the description, parsed on its own */
        if (th_rank == 0) {
            char dn[600], text[4096];
            snprintf(dn, sizeof dn, "%s/set%d.laf.passion", th_dir(), t);
            FILE *fp = fopen(dn, "rb");
            TH_CHECK(fp != NULL, "no description %s", dn);
            size_t n = fp ? fread(text, 1, sizeof text, fp) : 0;
            if (fp)
                fclose(fp);
            ocad_lset d;
            const char *why = "";
            TH_CHECK(ocad_lset_parse(text, (int64_t)n, &d, &why) == 0,
                     "parse: %s", why);
            passion_array_spec back_spec;
            ocad_lset_spec(&d, &back_spec);
            TH_CHECK(d.nranks == th_size && same_layout(&norm, &back_spec),
                     "description differs from the spec:\n%.*s", (int)n,
                     text);
        }
        /* open by pattern and by the description's name */
        for (int by = 0; by < 2; by++) {
            char name[600];
            if (by)
                snprintf(name, sizeof name, "%s/set%d.laf.passion",
                         th_dir(), t);
            else
                snprintf(name, sizeof name, "%s", pat);
            passion_array *b = NULL;
            passion_file *g = NULL;
            rc = passion_open(ctx, name, PASSION_MODE_RDONLY, NULL, &b, &g);
            TH_CHECK(rc == 0, "open %s: %s", name,
                     passion_ctx_errdetail(ctx));
            if (!rc) {
                TH_CHECK(same_layout(&norm, passion_array_get_spec(b)),
                         "opened spec differs");
                memset(back, 0, (size_t)bytes);
                TH_CHECK(passion_file_read_local(g, back) == 0 &&
                             !memcmp(back, buf, (size_t)bytes),
                         "data differs");
                passion_file_close(g);
                passion_array_free(b);
            }
            /* a local set's layout is its description's */
            passion_array_spec lay;
            passion_array_spec_init(&lay, 0, NULL, 0);
            rc = passion_open(ctx, name, PASSION_MODE_RDONLY, &lay, &b, &g);
            TH_CHECK(rc == PASSION_EINVAL && !b && !g,
                     "open %s with a layout: %d", name, rc);
        }
        /* any rank count reads the description */
        passion_array_spec rs;
        int nfiles = 0;
        char rpat[600];
        rc = passion_array_spec_read(ctx, pat, &rs, &nfiles, rpat,
                                     sizeof rpat);
        TH_CHECK(rc == 0 && nfiles == th_size && same_layout(&norm, &rs) &&
                     !strcmp(rpat, pat),
                 "spec_read: %d %s (%s)", rc, rpat,
                 passion_ctx_errdetail(ctx));
        /* rename: files and description follow */
        TH_CHECK(passion_array_free(a) == 0, "free");
        a = NULL;
        passion_array_create(ctx, &sp, &a);
        rc = passion_file_open(a, pat, PASSION_MODE_RDWR, &f);
        TH_CHECK(rc == 0, "reopen: %s", passion_ctx_errdetail(ctx));
        char npat[512];
        snprintf(npat, sizeof npat, "%s/moved%d_%%d", th_dir(), t);
        rc = passion_file_rename(f, npat);
        TH_CHECK(rc == 0, "rename: %s", passion_ctx_errdetail(ctx));
        passion_file_close(f);
        passion_array_free(a);
        if (th_rank == 0) {
            char on[600], nn[600];
            snprintf(on, sizeof on, "%s/set%d.laf.passion", th_dir(), t);
            snprintf(nn, sizeof nn, "%s/moved%d.passion", th_dir(), t);
            TH_CHECK(access(on, F_OK) != 0 && access(nn, F_OK) == 0,
                     "after rename: old description %s, new %s",
                     access(on, F_OK) ? "gone" : "left",
                     access(nn, F_OK) ? "missing" : "there");
        }
        passion_array *b = NULL;
        passion_file *g = NULL;
        rc = passion_open(ctx, npat, PASSION_MODE_RDONLY, NULL, &b, &g);
        TH_CHECK(rc == 0, "open after rename: %s",
                 passion_ctx_errdetail(ctx));
        if (!rc) {
            TH_CHECK(passion_file_read_local(g, back) == 0 &&
                         !memcmp(back, buf, (size_t)bytes),
                     "data after rename differs");
            passion_file_close(g);
            passion_array_free(b);
        }
        /* another number of ranks: a clear error on every rank */
        if (th_size > 1) {
            MPI_Comm sub;
            MPI_Comm_split(MPI_COMM_WORLD, th_rank == 0, th_rank, &sub);
            passion_ctx *c2 = NULL;
            TH_CHECK(passion_init(sub, NULL, &c2) == 0, "sub init");
            int sz;
            MPI_Comm_size(sub, &sz);
            rc = passion_open(c2, npat, PASSION_MODE_RDONLY, NULL, &b, &g);
            TH_CHECK(rc == PASSION_EMISMATCH && b == NULL && g == NULL &&
                         strstr(passion_ctx_errdetail(c2),
                                "passion convert"),
                     "open at %d of %d ranks: %d (%s)", sz, th_size, rc,
                     passion_ctx_errdetail(c2));
            /* but its description reads at any count */
            rc = passion_array_spec_read(c2, npat, &rs, &nfiles, NULL, 0);
            TH_CHECK(rc == 0 && nfiles == th_size, "spec_read at %d: %d",
                     sz, rc);
            passion_finalize(c2);
            MPI_Comm_free(&sub);
        }
        free(buf);
        free(back);
        TH_CHECK(passion_finalize(ctx) == 0, "finalize");
    }
}

static void test_errors(void)
{
    passion_ctx *ctx = NULL;
    TH_CHECK(th_init(&ctx, NULL) == 0, "init");
    passion_array *a = NULL;
    passion_file *f = NULL;
    char pat[512], dn[600];
    snprintf(pat, sizeof pat, "%s/none.%%d.laf", th_dir());
    int rc = passion_open(ctx, pat, PASSION_MODE_RDONLY, NULL, &a, &f);
    TH_CHECK(rc == PASSION_ENOENT && !a && !f, "missing: %d", rc);
    /* corrupt descriptions: each a PASSION_EFORMAT with a reason */
    static const char *const bad[] = {
        "",
        "passion-local-set 2\n",
        "passion-local-set 1\nlibrary x\nfiles a.%d\nranks 1\nndims 1\n"
        "shape 0\n",
        "passion-local-set 1\nlibrary x\nfiles a.%d\nranks 1\nndims 1\n"
        "shape 10\nkind float\nelem_size 8\nendian little\nstorage "
        "row-major\norder 0\ngrid 1\ndist BLOCK(3)\nghost 0\n",
        "passion-local-set 1\nlibrary x\nfiles a.%d\nranks 2\nndims 1\n"
        "shape 10\nkind float\nelem_size 8\nendian little\nstorage "
        "row-major\norder 0\ngrid 1\ndist *\nghost 0\n",
        "passion-local-set 1\nlibrary x\nfiles a.%d\nranks 1\nndims 2\n"
        "shape 4294967296 4294967296\nkind float\nelem_size 8\n",
        "passion-local-set 1\nlibrary x\nfiles a.%d\nranks 1\nndims 1\n"
        "shape 10\nkind object\n",
    };
    snprintf(pat, sizeof pat, "%s/bad.%%d.laf", th_dir());
    snprintf(dn, sizeof dn, "%s/bad.laf.passion", th_dir());
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (th_rank == 0) {
            FILE *fp = fopen(dn, "wb");
            fputs(bad[i], fp);
            fclose(fp);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        rc = passion_open(ctx, pat, PASSION_MODE_RDONLY, NULL, &a, &f);
        TH_CHECK(rc == PASSION_EFORMAT && !a &&
                     strstr(passion_ctx_errdetail(ctx), "bad.laf.passion"),
                 "bad description %zu: %d (%s)", i, rc,
                 passion_ctx_errdetail(ctx));
    }
    TH_CHECK(passion_finalize(ctx) == 0, "finalize");
}

/* Local path patterns.
 * Before the fix: "%%" was not an escape and only the first %d was
 * replaced. */

static void test_path_pattern(void)
{
    passion_ctx *ctx = th_ctx_budget(0);
    const int64_t shape[1] = {4 * (int64_t)th_size};
    passion_array_spec sp;
    passion_array_spec_init(&sp, 1, shape, 8);
    sp.grid[0] = th_size;
    passion_array *a = NULL;
    int rc = passion_array_create(ctx, &sp, &a);
    TH_CHECK(rc == 0, "local array: %d", rc);
    static const char *pats[3] = {"p%%d_%d_x%d.laf", "q%%%d.laf", "r%d%%"};
    char want[3][64];
    snprintf(want[0], 64, "p%%d_%d_x%d.laf", th_rank, th_rank);
    snprintf(want[1], 64, "q%%%d.laf", th_rank);
    snprintf(want[2], 64, "r%d%%", th_rank);
    for (int k = 0; k < 3; k++) {
        char pat[512], full[512];
        snprintf(pat, sizeof pat, "%s/%s", th_dir(), pats[k]);
        snprintf(full, sizeof full, "%s/%s", th_dir(), want[k]);
        passion_file *f = NULL;
        rc = passion_file_open(a, pat, PASSION_MODE_CREATE, &f);
        TH_CHECK(rc == 0, "open %s: %d", pat, rc);
        const char *got = passion_file_path(f);
        TH_CHECK(got && !strcmp(got, full), "pattern %s: file %s, want %s",
                 pat, got ? got : "(null)", full);
        TH_CHECK(access(full, F_OK) == 0, "no file %s", full);
        passion_file_close(f);
        unlink(full);
    }
    passion_array_free(a);
    passion_finalize(ctx);
}

static CU_TestInfo tests[] = {
    {"describe, parse, open by name, rename, other P", test_describe_open},
    {"missing and corrupt descriptions", test_errors},
    {"%% and every %d in local patterns", test_path_pattern},
    CU_TEST_INFO_NULL};

static CU_SuiteInfo suites[] = {
    {"lset", NULL, NULL, NULL, NULL, tests}, CU_SUITE_INFO_NULL};

int main(int argc, char **argv)
{
    return th_main(argc, argv, suites);
}
