/*
 * test_types.c - element types and byte order:
 * kinds and sizes in the spec, passion_open by a file's own header, the
 * name splitting rule, mismatches as PASSION_EFORMAT naming both, and the
 * conversion of data in the other byte order on every access path.
 *
 * Reference: numpy (tests/npy_types.py, run with /usr/bin/python3) writes
 * every numeric type it has in both byte orders, C and Fortran order, plus
 * the same values raw in the machine's order; passion reads random
 * sections of them with every method and compares element by element,
 * writes them back with every method, and numpy compares what passion
 * wrote. Random shapes and sections from the harness seed (printed on
 * failure).
 */
#include "harness.h"

#include <sys/stat.h>
#include <unistd.h>

static const char *script; /* tests/npy_types.py (argv[1]) */
#define PY "/usr/bin/python3"

static int little_host(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b;
}

/* ---- a hand-made .npy (no numpy needed) ---- */

static void write_npy(const char *path, const char *dict, const void *data,
                      size_t n, int version)
{
    FILE *fp = fopen(path, "wb");
    int pre = version == 1 ? 10 : 12;
    size_t dl = strlen(dict);
    size_t total = (pre + dl + 1 + 63) / 64 * 64;
    size_t hl = total - (size_t)pre;
    unsigned char p[12] = {0x93, 'N', 'U', 'M', 'P', 'Y',
                           (unsigned char)version, 0,
                           (unsigned char)(hl & 0xff),
                           (unsigned char)(hl >> 8), 0, 0};
    fwrite(p, 1, (size_t)pre, fp);
    fprintf(fp, "%-*s\n", (int)(hl - 1), dict);
    if (n)
        fwrite(data, 1, n, fp);
    fclose(fp);
}

static void put_be64(unsigned char *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(u >> (56 - 8 * i));
}

/* The case: a big-endian >f8 file holding 0, 1, 2 reads back 0, 1,
   2, through passion_open and through passion_file_open with a plain
   float64 spec (native byte order accepts either), with every method. */
static void test_big_f8(void)
{
    char p[600];
    snprintf(p, sizeof p, "%s/big.npy", th_dir());
    if (th_rank == 0) {
        unsigned char d[24];
        for (int i = 0; i < 3; i++)
            put_be64(d + 8 * i, i);
        write_npy(p, "{'descr': '>f8', 'fortran_order': False, "
                     "'shape': (3,), }", d, sizeof d, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    passion_ctx *ctx;
    TH_CHECK(th_init(&ctx, NULL) == 0, "init");
    passion_array *a = NULL;
    passion_file *f = NULL;
    int rc = passion_open(ctx, p, PASSION_MODE_RDONLY, NULL, &a, &f);
    TH_CHECK(rc == 0, "passion_open: %s", passion_ctx_errdetail(ctx));
    if (!rc) {
        const passion_array_spec *sp = passion_array_get_spec(a);
        TH_CHECK(sp->ndims == 1 && sp->shape[0] == 3 &&
                     sp->kind == PASSION_KIND_FLOAT && sp->elem_size == 8 &&
                     sp->endian == PASSION_ENDIAN_BIG &&
                     sp->placement == PASSION_PLACE_GLOBAL,
                 "spec from the header: nd %d kind %d size %lld endian %d",
                 sp->ndims, sp->kind, (long long)sp->elem_size, sp->endian);
        static const int methods[] = {
            PASSION_METHOD_DIRECT, PASSION_METHOD_SIEVE, PASSION_METHOD_AUTO,
            PASSION_METHOD_ETP_STATIC, PASSION_METHOD_ETP_DYNAMIC};
        for (int m = 0; m < 5; m++) {
            double v[3] = {-1, -1, -1};
            passion_section s;
            passion_section_set(&s, 1, NULL, (int64_t[]){3}, NULL);
            rc = m < 3 ? passion_file_read(f, &s, v, NULL, methods[m])
                       : passion_file_read_all(f, &s, v, NULL, methods[m]);
            TH_CHECK(rc == 0 && v[0] == 0 && v[1] == 1 && v[2] == 2,
                     "method %d: rc %d, read %g %g %g", methods[m], rc, v[0],
                     v[1], v[2]);
        }
        passion_file_close(f);
        passion_array_free(a);
    }
    /* a spec made by passion_array_spec_init(8): float64, native order */
    passion_array_spec sp;
    passion_array_spec_init(&sp, 1, (int64_t[]){3}, 8);
    sp.placement = PASSION_PLACE_GLOBAL;
    passion_array_create(ctx, &sp, &a);
    rc = passion_file_open(a, p, PASSION_MODE_RDONLY, &f);
    TH_CHECK(rc == 0, "file_open: %s", passion_ctx_errdetail(ctx));
    if (!rc) {
        double v[3] = {-1, -1, -1};
        passion_section s;
        passion_section_set(&s, 1, NULL, (int64_t[]){3}, NULL);
        rc = passion_file_read(f, &s, v, NULL, PASSION_METHOD_AUTO);
        TH_CHECK(rc == 0 && v[0] == 0 && v[1] == 1 && v[2] == 2,
                 "file_open read %g %g %g", v[0], v[1], v[2]);
        passion_file_close(f);
    }
    passion_array_free(a);
    /* stating LITTLE is a mismatch naming both types */
    sp.endian = PASSION_ENDIAN_LITTLE;
    passion_array_create(ctx, &sp, &a);
    rc = passion_file_open(a, p, PASSION_MODE_RDONLY, &f);
    const char *d = passion_ctx_errdetail(ctx);
    TH_CHECK(rc == PASSION_EFORMAT && strstr(d, "file has >f8 [3]") &&
                 strstr(d, "spec says <f8 [3]"),
             "little-endian spec: %d (%s)", rc, d);
    passion_array_free(a);
    passion_finalize(ctx);
}

/* Kinds, sizes and byte orders in the spec. */
static void test_spec_kinds(void)
{
    passion_ctx *ctx;
    TH_CHECK(th_init(&ctx, NULL) == 0, "init");
    passion_array_spec sp;
    int64_t sh[1] = {10};
    static const struct {
        int64_t size;
        passion_kind kind;
    } nat[] = {{1, PASSION_KIND_UINT},    {2, PASSION_KIND_INT},
               {4, PASSION_KIND_FLOAT},   {8, PASSION_KIND_FLOAT},
               {16, PASSION_KIND_COMPLEX}, {3, PASSION_KIND_BYTES},
               {32, PASSION_KIND_BYTES},  {64, PASSION_KIND_BYTES}};
    for (size_t i = 0; i < sizeof nat / sizeof nat[0]; i++) {
        passion_array_spec_init(&sp, 1, sh, nat[i].size);
        TH_CHECK(sp.kind == nat[i].kind && sp.endian == PASSION_ENDIAN_NATIVE,
                 "natural kind of %lld: %d", (long long)nat[i].size, sp.kind);
    }
    static const struct {
        int kind;
        int64_t size;
        int endian;
        int want;
    } t[] = {
        {PASSION_KIND_BYTES, 1, 0, 0},   {PASSION_KIND_BYTES, 64, 0, 0},
        {PASSION_KIND_BYTES, 65, 0, PASSION_EINVAL},
        {PASSION_KIND_INT, 1, 0, 0},     {PASSION_KIND_INT, 3, 0, PASSION_EINVAL},
        {PASSION_KIND_INT, 16, 0, PASSION_EINVAL},
        {PASSION_KIND_UINT, 8, 2, 0},    {PASSION_KIND_UINT, 6, 0, PASSION_EINVAL},
        {PASSION_KIND_FLOAT, 2, 1, 0},   {PASSION_KIND_FLOAT, 16, 2, 0},
        {PASSION_KIND_FLOAT, 1, 0, PASSION_EINVAL},
        {PASSION_KIND_FLOAT, 12, 0, PASSION_EINVAL},
        {PASSION_KIND_COMPLEX, 32, 0, 0},
        {PASSION_KIND_COMPLEX, 4, 0, PASSION_EINVAL},
        {PASSION_KIND_BOOL, 1, 0, 0},    {PASSION_KIND_BOOL, 2, 0, PASSION_EINVAL},
        {6, 8, 0, PASSION_EINVAL},       {-1, 8, 0, PASSION_EINVAL},
        {PASSION_KIND_FLOAT, 8, 3, PASSION_EINVAL},
        {PASSION_KIND_FLOAT, 8, -1, PASSION_EINVAL},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        passion_array_spec_init(&sp, 1, sh, t[i].size);
        sp.kind = (passion_kind)t[i].kind;
        sp.endian = (passion_endian)t[i].endian;
        sp.placement = PASSION_PLACE_GLOBAL;
        passion_array *a = NULL;
        int rc = passion_array_create(ctx, &sp, &a);
        TH_CHECK(rc == t[i].want, "kind %d size %lld endian %d: %d (%s)",
                 t[i].kind, (long long)t[i].size, t[i].endian, rc,
                 passion_ctx_errdetail(ctx));
        passion_array_free(a);
    }
    passion_finalize(ctx);
}

/* passion_open: layouts, mismatches, raw files, names. */
static void test_open(void)
{
    char p[600], q[600], r[600];
    snprintf(p, sizeof p, "%s/i8.npy", th_dir());
    snprintf(q, sizeof q, "%s/raw.dat", th_dir());
    snprintf(r, sizeof r, "%s/we:ird.npy", th_dir());
    int64_t v[12];
    for (int i = 0; i < 12; i++) {
        uint64_t u = (uint64_t)(i * 7);
        unsigned char *b = (unsigned char *)&v[i];
        for (int k = 0; k < 8; k++)
            b[k] = (unsigned char)(u >> (56 - 8 * k));
    }
    if (th_rank == 0) {
        write_npy(p, "{'descr': '>i8', 'fortran_order': False, "
                     "'shape': (3, 4), }", v, sizeof v, 1);
        write_npy(r, "{'descr': '<u2', 'fortran_order': False, "
                     "'shape': (5,), }", v, 10, 3);
        FILE *fp = fopen(q, "wb");
        fwrite(v, 1, sizeof v, fp);
        fclose(fp);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    passion_ctx *ctx;
    TH_CHECK(th_init(&ctx, NULL) == 0, "init");
    passion_array *a = NULL;
    passion_file *f = NULL;

    /* a layout: a grid over the ranks, partitioned placement; shape and
       type 0 = the file's */
    passion_array_spec L;
    memset(&L, 0, sizeof L);
    L.grid[0] = th_size;
    L.placement = PASSION_PLACE_PARTITIONED;
    int rc = passion_open(ctx, p, PASSION_MODE_RDONLY, &L, &a, &f);
    TH_CHECK(rc == 0, "layout: %s", passion_ctx_errdetail(ctx));
    if (!rc) {
        const passion_array_spec *s = passion_array_get_spec(a);
        TH_CHECK(s->grid[0] == th_size &&
                     s->placement == PASSION_PLACE_PARTITIONED &&
                     s->kind == PASSION_KIND_INT && s->elem_size == 8 &&
                     s->endian == PASSION_ENDIAN_BIG && s->shape[1] == 4,
                 "spec with layout");
        int64_t got[12];
        passion_section s2;
        passion_section_set(&s2, 2, NULL, (int64_t[]){3, 4}, NULL);
        rc = passion_file_read_all(f, &s2, got, NULL,
                                   PASSION_METHOD_ETP_STATIC);
        int bad = rc != 0;
        for (int i = 0; i < 12; i++)
            bad |= got[i] != i * 7;
        TH_CHECK(!bad, "values through the layout (rc %d)", rc);
        passion_file_close(f);
        passion_array_free(a);
    }
    /* the layout states a shape or type: must match, message names both */
    static const struct {
        int nd;
        int64_t s0, s1;
        int64_t esize;
        passion_kind kind;
        passion_endian endian;
        passion_storage storage;
        int want;
        const char *msg;
    } t[] = {
        {2, 3, 4, 0, 0, 0, PASSION_ROW_MAJOR, 0, NULL},
        {2, 3, 4, 8, PASSION_KIND_INT, 0, PASSION_ROW_MAJOR, 0, NULL},
        {2, 3, 4, 8, PASSION_KIND_INT, PASSION_ENDIAN_BIG, PASSION_ROW_MAJOR,
         0, NULL},
        {2, 3, 4, 8, PASSION_KIND_FLOAT, 0, PASSION_ROW_MAJOR,
         PASSION_EFORMAT, "file has >i8 [3, 4] C order, spec says =f8 [3, 4]"},
        {2, 3, 4, 8, PASSION_KIND_INT, PASSION_ENDIAN_LITTLE,
         PASSION_ROW_MAJOR, PASSION_EFORMAT, "spec says <i8"},
        {2, 3, 5, 0, 0, 0, PASSION_ROW_MAJOR, PASSION_EFORMAT,
         "spec says >i8 [3, 5]"},
        {1, 12, 0, 0, 0, 0, PASSION_ROW_MAJOR, PASSION_EFORMAT,
         "spec says >i8 [12]"},
        {2, 3, 4, 0, 0, 0, PASSION_COL_MAJOR, PASSION_EFORMAT,
         "Fortran order"},
        {0, 0, 0, 4, PASSION_KIND_INT, 0, 0, PASSION_EFORMAT, "=i4"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        memset(&L, 0, sizeof L);
        L.ndims = t[i].nd;
        L.shape[0] = t[i].s0;
        L.shape[1] = t[i].s1;
        L.elem_size = t[i].esize;
        L.kind = t[i].kind;
        L.endian = t[i].endian;
        L.storage = t[i].storage;
        rc = passion_open(ctx, p, PASSION_MODE_RDONLY, &L, &a, &f);
        const char *d = passion_ctx_errdetail(ctx);
        TH_CHECK(rc == t[i].want && (!t[i].msg || strstr(d, t[i].msg)),
                 "layout case %zu: %d (%s)", i, rc, d);
        TH_CHECK(!rc == (a && f), "case %zu: outputs %p %p", i, (void *)a,
                 (void *)f);
        passion_file_close(f);
        passion_array_free(a);
    }
    /* raw, missing, create mode, an object in a .npy, a ':' in a name */
    rc = passion_open(ctx, q, PASSION_MODE_RDONLY, NULL, &a, &f);
    TH_CHECK(rc == PASSION_EFORMAT && !a && !f &&
                 strstr(passion_ctx_errdetail(ctx), "passion_file_open"),
             "raw file: %d (%s)", rc, passion_ctx_errdetail(ctx));
    char m[700];
    snprintf(m, sizeof m, "%s/none.npy", th_dir());
    rc = passion_open(ctx, m, PASSION_MODE_RDONLY, NULL, &a, &f);
    TH_CHECK(rc == PASSION_ENOENT, "missing: %d", rc);
    rc = passion_open(ctx, p, PASSION_MODE_CREATE, NULL, &a, &f);
    TH_CHECK(rc == PASSION_EINVAL, "create: %d", rc);
    snprintf(m, sizeof m, "%s:x", p);
    rc = passion_open(ctx, m, PASSION_MODE_RDONLY, NULL, &a, &f);
    TH_CHECK(rc == PASSION_EINVAL &&
                 strstr(passion_ctx_errdetail(ctx), "holds one array"),
             "object in a .npy: %d (%s)", rc, passion_ctx_errdetail(ctx));
    rc = passion_open(ctx, r, PASSION_MODE_RDWR, NULL, &a, &f);
    TH_CHECK(rc == 0, "a ':' inside an existing name: %s",
             passion_ctx_errdetail(ctx));
    if (!rc) {
        const passion_array_spec *s = passion_array_get_spec(a);
        TH_CHECK(s->kind == PASSION_KIND_UINT && s->elem_size == 2 &&
                     s->shape[0] == 5 && s->endian == PASSION_ENDIAN_LITTLE,
                 "version 3 header");
        passion_file_close(f);
        passion_array_free(a);
    }
    passion_finalize(ctx);
}

/* Every bad header: PASSION_EFORMAT with its own message, no crash. */
static void test_bad_headers(void)
{
    static const struct {
        const char *dict; /* NULL: raw bytes below */
        const char *raw;
        int rawlen;
        const char *msg;
    } t[] = {
        {NULL, "\x93NUMP", 5, "no .npy magic"},
        {NULL, "\x93NUMPY\x01\x00\x10", 9, "too short"},
        {NULL, "GARBAGE!\x01\x00\x10\x00", 12, "no .npy magic"},
        {NULL, "\x93NUMPY\x01\x00\xff\x7f{", 11, "beyond the end"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': "
         "(4294967296, 4294967296), }", NULL, 0, "overflows 64 bits"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (-3,), }", NULL,
         0, "negative"},
        {"{'descr': '<q9', 'fortran_order': False, 'shape': (3,), }", NULL, 0,
         "unknown type"},
        {"{'descr': '|O', 'fortran_order': False, 'shape': (3,), }", NULL, 0,
         "object"},
        {"{'descr': '<U4', 'fortran_order': False, 'shape': (3,), }", NULL, 0,
         "not a numeric"},
        {"{'descr': '<f8', 'fortran_order': Maybe, 'shape': (3,), }", NULL, 0,
         "fortran_order must be"},
        {"{'descr': '<f8', 'fortran_order': False, }", NULL, 0, "no shape"},
        {"{'descr': '<f12', 'fortran_order': False, 'shape': (3,), }", NULL, 0,
         "no such size"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (), }", NULL, 0,
         "0-dimensional"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 0), }", NULL,
         0, "empty array"},
    };
    enum { N = sizeof t / sizeof t[0] };
    char path[N][600];
    for (int k = 0; k < N; k++) {
        snprintf(path[k], sizeof path[k], "%s/bad%d.npy", th_dir(), k);
        if (th_rank != 0)
            continue;
        if (t[k].dict) {
            write_npy(path[k], t[k].dict, "", 0, 1);
        } else {
            FILE *fp = fopen(path[k], "wb");
            fwrite(t[k].raw, 1, (size_t)t[k].rawlen, fp);
            fclose(fp);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    passion_ctx *ctx;
    TH_CHECK(th_init(&ctx, NULL) == 0, "init");
    char msgs[N][512];
    for (int k = 0; k < N; k++) {
        passion_array *a = NULL;
        passion_file *f = NULL;
        int rc = passion_open(ctx, path[k], PASSION_MODE_RDONLY, NULL, &a, &f);
        const char *d = passion_ctx_errdetail(ctx);
        snprintf(msgs[k], sizeof msgs[k], "%s", d);
        TH_CHECK(rc == PASSION_EFORMAT && strstr(d, t[k].msg) && !a && !f,
                 "bad header %d: %d (%s), want '%s'", k, rc, d, t[k].msg);
    }
    /* distinct messages (after the file name) */
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++) {
            const char *x = strstr(msgs[i], ".npy"),
                       *y = strstr(msgs[j], ".npy");
            if (x && y && strcmp(t[i].msg, t[j].msg))
                TH_CHECK(strcmp(x, y), "same message for %d and %d: %s", i,
                         j, x);
        }
    passion_finalize(ctx);
}

/* ---- every type in both orders against numpy, every method ---- */

typedef struct tcase {
    const char *descr;
    passion_kind kind;
    int64_t size;
} tcase;

static const tcase types[] = {
    {"|b1", PASSION_KIND_BOOL, 1},     {"|i1", PASSION_KIND_INT, 1},
    {"|u1", PASSION_KIND_UINT, 1},     {"|V5", PASSION_KIND_BYTES, 5},
    {"<i2", PASSION_KIND_INT, 2},      {">i2", PASSION_KIND_INT, 2},
    {"<i4", PASSION_KIND_INT, 4},      {">i4", PASSION_KIND_INT, 4},
    {"<i8", PASSION_KIND_INT, 8},      {">i8", PASSION_KIND_INT, 8},
    {"<u2", PASSION_KIND_UINT, 2},     {">u2", PASSION_KIND_UINT, 2},
    {"<u4", PASSION_KIND_UINT, 4},     {">u4", PASSION_KIND_UINT, 4},
    {"<u8", PASSION_KIND_UINT, 8},     {">u8", PASSION_KIND_UINT, 8},
    {"<f2", PASSION_KIND_FLOAT, 2},    {">f2", PASSION_KIND_FLOAT, 2},
    {"<f4", PASSION_KIND_FLOAT, 4},    {">f4", PASSION_KIND_FLOAT, 4},
    {"<f8", PASSION_KIND_FLOAT, 8},    {">f8", PASSION_KIND_FLOAT, 8},
    {"<f16", PASSION_KIND_FLOAT, 16},  {">f16", PASSION_KIND_FLOAT, 16},
    {"<c8", PASSION_KIND_COMPLEX, 8},  {">c8", PASSION_KIND_COMPLEX, 8},
    {"<c16", PASSION_KIND_COMPLEX, 16}, {">c16", PASSION_KIND_COMPLEX, 16},
    {"<c32", PASSION_KIND_COMPLEX, 32}, {">c32", PASSION_KIND_COMPLEX, 32},
};
enum { NTYPES = sizeof types / sizeof types[0] };

typedef struct ccase {
    int64_t n0, n1;
    int fortran;
    uint64_t seed;
} ccase;

/* Same element? x86 long double holds 10 bytes in 16: the rest is
   padding that conversions need not keep. */
static int same_elem(const tcase *t, const unsigned char *x,
                     const unsigned char *y)
{
    if (t->kind == PASSION_KIND_FLOAT && t->size == 16)
        return !memcmp(x, y, 10);
    if (t->kind == PASSION_KIND_COMPLEX && t->size == 32)
        return !memcmp(x, y, 10) && !memcmp(x + 16, y + 16, 10);
    return !memcmp(x, y, (size_t)t->size);
}

static void rand_section(uint64_t *rs, const ccase *c, passion_section *s)
{
    int64_t n[2] = {c->n0, c->n1};
    for (int d = 0; d < 2; d++) {
        s->stride[d] = th_range(rs, 1, 3);
        s->start[d] = th_range(rs, 0, n[d] - 1);
        int64_t mx = (n[d] - 1 - s->start[d]) / s->stride[d] + 1;
        s->count[d] = th_range(rs, 1, mx);
    }
}

/* Compare a packed section (the array's storage order) with the
   reference; returns the first bad element's index or -1. */
static int64_t check_section(const tcase *t, const ccase *c,
                             const passion_section *s, const char *buf,
                             const char *ref)
{
    int64_t es = t->size, c0 = s->count[0], c1 = s->count[1];
    for (int64_t a = 0; a < c0; a++)
        for (int64_t b = 0; b < c1; b++) {
            int64_t g = (s->start[0] + a * s->stride[0]) * c->n1 +
                        s->start[1] + b * s->stride[1];
            int64_t k = c->fortran ? a + b * c0 : a * c1 + b;
            if (!same_elem(t, (const unsigned char *)buf + k * es,
                           (const unsigned char *)ref + g * es))
                return k;
        }
    return -1;
}

/* Pack a section of the reference in the array's storage order. */
static void pack_section(const tcase *t, const ccase *c,
                         const passion_section *s, char *buf, const char *ref)
{
    int64_t es = t->size, c0 = s->count[0], c1 = s->count[1];
    for (int64_t a = 0; a < c0; a++)
        for (int64_t b = 0; b < c1; b++) {
            int64_t g = (s->start[0] + a * s->stride[0]) * c->n1 +
                        s->start[1] + b * s->stride[1];
            int64_t k = c->fortran ? a + b * c0 : a * c1 + b;
            memcpy(buf + k * es, ref + g * es, (size_t)es);
        }
}

static char *load_ref(const char *path, int64_t bytes)
{
    char *r = malloc((size_t)bytes);
    FILE *fp = fopen(path, "rb");
    if (!r || !fp || fread(r, 1, (size_t)bytes, fp) != (size_t)bytes) {
        if (fp)
            fclose(fp);
        free(r);
        return NULL;
    }
    fclose(fp);
    return r;
}

static int have_numpy(void)
{
    int have = 0;
    if (th_rank == 0)
        have = system(PY " -c 'import numpy' >/dev/null 2>&1") == 0;
    MPI_Bcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!have && th_rank == 0)
        printf("\n  (" PY " has no numpy: numpy comparisons skipped)\n");
    return have;
}

static int run_py(const char *mode, const char *manifest)
{
    int rc = 0;
    if (th_rank == 0) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd, PY " %s %s %s %s", script, mode, manifest,
                 th_dir());
        rc = system(cmd);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return rc;
}

static ccase cases[NTYPES];

/* numpy writes every case (shapes from the seed) */
static int gen_cases(const char *manifest)
{
    uint64_t rs = th_case_seed;
    for (int k = 0; k < NTYPES; k++) {
        cases[k].n0 = th_range(&rs, 1, 37);
        cases[k].n1 = th_range(&rs, 1, 29);
        cases[k].fortran = (int)th_range(&rs, 0, 1);
        cases[k].seed = th_next(&rs) % 1000000;
    }
    if (th_rank == 0) {
        FILE *fp = fopen(manifest, "w");
        for (int k = 0; k < NTYPES; k++)
            fprintf(fp, "%d %s %lld %lld %d %llu\n", k, types[k].descr,
                    (long long)cases[k].n0, (long long)cases[k].n1,
                    cases[k].fortran, (unsigned long long)cases[k].seed);
        fclose(fp);
    }
    return run_py("gen", manifest);
}

static void read_case(passion_ctx *ctx, passion_ctx *tiny, int k,
                      const char *ref)
{
    const tcase *t = &types[k];
    const ccase *c = &cases[k];
    char in[600];
    snprintf(in, sizeof in, "%s/in%d.npy", th_dir(), k);
    passion_array *a = NULL, *a2 = NULL;
    passion_file *f = NULL, *f2 = NULL;
    int rc = passion_open(ctx, in, PASSION_MODE_RDONLY, NULL, &a, &f);
    TH_CHECK(rc == 0, "%s: open: %s", t->descr, passion_ctx_errdetail(ctx));
    int rc2 = passion_open(tiny, in, PASSION_MODE_RDONLY, NULL, &a2, &f2);
    TH_CHECK(rc2 == 0, "%s: open (tiny budget): %s", t->descr,
             passion_ctx_errdetail(tiny));
    if (rc || rc2)
        goto out;
    const passion_array_spec *sp = passion_array_get_spec(a);
    passion_endian want_e =
        t->descr[0] == '>' ? PASSION_ENDIAN_BIG
        : t->descr[0] == '<' || little_host() ? PASSION_ENDIAN_LITTLE
                                              : PASSION_ENDIAN_BIG;
    TH_CHECK(sp->kind == t->kind && sp->elem_size == t->size &&
                 sp->endian == want_e && sp->shape[0] == c->n0 &&
                 sp->shape[1] == c->n1 &&
                 (c->n0 == 1 || c->n1 == 1 ||
                  sp->storage == (c->fortran ? PASSION_COL_MAJOR
                                             : PASSION_ROW_MAJOR)),
             "%s: spec kind %d size %lld endian %d storage %d", t->descr,
             sp->kind, (long long)sp->elem_size, sp->endian, sp->storage);
    uint64_t rs = th_case_seed * 31 + (uint64_t)k * 1000 + (uint64_t)th_rank;
    char *buf = malloc((size_t)(c->n0 * c->n1 * t->size));
    /* 0..2 independent, 3..5 collective, 6 asynchronous; 7..9 the same
       independent and asynchronous ones with a 64-byte budget */
    for (int m = 0; m < 10; m++) {
        static const int meth[10] = {
            PASSION_METHOD_DIRECT,     PASSION_METHOD_SIEVE,
            PASSION_METHOD_AUTO,       PASSION_METHOD_ETP_STATIC,
            PASSION_METHOD_ETP_DYNAMIC, PASSION_METHOD_AUTO,
            PASSION_METHOD_AUTO,       PASSION_METHOD_SIEVE,
            PASSION_METHOD_DIRECT,     PASSION_METHOD_AUTO};
        passion_section s;
        rand_section(&rs, c, &s);
        if (m >= 3 && m <= 5 && th_range(&rs, 0, 4) == 0)
            s.count[0] = 0; /* a rank with nothing */
        memset(buf, 0xA5, (size_t)(c->n0 * c->n1 * t->size));
        passion_file *ff = m >= 7 ? f2 : f;
        if (m <= 2 || m == 7 || m == 8) {
            rc = passion_file_read(ff, &s, buf, NULL, meth[m]);
        } else if (m <= 5) {
            rc = passion_file_read_all(ff, &s, buf, NULL, meth[m]);
        } else {
            passion_request *r = NULL;
            rc = passion_file_read_begin(ff, &s, buf, NULL, meth[m], &r);
            if (!rc)
                rc = passion_request_wait(r);
        }
        int64_t bad = rc ? 0 : s.count[0] ? check_section(t, c, &s, buf, ref)
                                          : -1;
        TH_CHECK(rc == 0 && bad < 0,
                 "%s read, way %d (method %d): rc %d (%s), element %lld of "
                 "section start %lld,%lld count %lld,%lld stride %lld,%lld",
                 t->descr, m, meth[m], rc,
                 passion_ctx_errdetail(m >= 7 ? tiny : ctx), (long long)bad,
                 (long long)s.start[0], (long long)s.start[1],
                 (long long)s.count[0], (long long)s.count[1],
                 (long long)s.stride[0], (long long)s.stride[1]);
    }
    free(buf);
out:
    passion_file_close(f);
    passion_array_free(a);
    passion_file_close(f2);
    passion_array_free(a2);
}

/* passion writes out<k>.npy of the same type with every method: row i by
   way i % 8 (ways 6 and 7 with a 64-byte budget), rows of a way split
   over the ranks, columns in `cs` strided passes. */
static void write_case(passion_ctx *ctx, passion_ctx *tiny, int k,
                       const char *ref)
{
    const tcase *t = &types[k];
    const ccase *c = &cases[k];
    char in[600], out[600];
    snprintf(in, sizeof in, "%s/in%d.npy", th_dir(), k);
    snprintf(out, sizeof out, "%s/out%d.npy", th_dir(), k);
    passion_array *a = NULL, *o = NULL, *o2 = NULL;
    passion_file *f = NULL, *w = NULL, *w2 = NULL;
    /* the spec of numpy's file, then a new file from it */
    int rc = passion_open(ctx, in, PASSION_MODE_RDONLY, NULL, &a, &f);
    passion_array_spec sp;
    if (!rc) {
        sp = *passion_array_get_spec(a);
        passion_file_close(f);
        passion_array_free(a);
        rc = passion_array_create(ctx, &sp, &o);
    }
    if (!rc)
        rc = passion_file_open(o, out, PASSION_MODE_CREATE, &w);
    if (!rc)
        rc = passion_array_create(tiny, &sp, &o2);
    if (!rc)
        rc = passion_file_open(o2, out, PASSION_MODE_RDWR, &w2);
    TH_CHECK(rc == 0, "%s: create: %s / %s", t->descr,
             passion_ctx_errdetail(ctx), passion_ctx_errdetail(tiny));
    uint64_t rs = th_case_seed * 77 + (uint64_t)k;
    char *buf = malloc((size_t)(c->n0 * c->n1 * t->size));
    for (int m = 0; m < 8 && !rc; m++) {
        static const int meth[8] = {
            PASSION_METHOD_DIRECT,     PASSION_METHOD_SIEVE,
            PASSION_METHOD_AUTO,       PASSION_METHOD_ETP_STATIC,
            PASSION_METHOD_ETP_DYNAMIC, PASSION_METHOD_AUTO,
            PASSION_METHOD_AUTO,       PASSION_METHOD_SIEVE};
        int64_t cs = th_range(&rs, 1, 3); /* same on every rank */
        for (int64_t j = 0; j < cs; j++) {
            passion_section s;
            s.start[0] = m + (int64_t)th_rank * 8;
            s.stride[0] = 8 * (int64_t)th_size;
            s.count[0] = s.start[0] < c->n0
                             ? (c->n0 - 1 - s.start[0]) / s.stride[0] + 1
                             : 0;
            s.start[1] = j < c->n1 ? j : 0;
            s.stride[1] = cs;
            s.count[1] = j < c->n1 ? (c->n1 - 1 - j) / cs + 1 : 0;
            if (s.count[1] == 0)
                s.count[0] = 0;
            if (s.count[0] == 0)
                s.start[0] = 0;
            pack_section(t, c, &s, buf, ref);
            const void *cb = buf;
            int wrc = 0;
            /* independent writes take turns: a sieved write rewrites the
               holes of its extent, which other ranks' rows fill */
            int indep = !(m == 3 || m == 4);
            for (int turn = 0; indep && turn < th_size; turn++) {
                if (turn == th_rank) {
                    if (m <= 2 || m == 7) {
                        wrc = passion_file_write(m == 7 ? w2 : w, &s, cb,
                                                 NULL, meth[m]);
                    } else {
                        passion_request *r = NULL;
                        wrc = passion_file_write_begin(m == 6 ? w2 : w, &s,
                                                       cb, NULL, meth[m], &r);
                        if (!wrc)
                            wrc = passion_request_wait(r);
                    }
                }
                MPI_Barrier(MPI_COMM_WORLD);
            }
            if (!indep)
                wrc = passion_file_write_all(w, &s, cb, NULL, meth[m]);
            /* the caller's buffer is const: still the native values */
            int64_t bad = s.count[0] ? check_section(t, c, &s, buf, ref) : -1;
            TH_CHECK(wrc == 0 && bad < 0,
                     "%s write, way %d: rc %d (%s), buffer changed at %lld",
                     t->descr, m, wrc,
                     passion_ctx_errdetail(m >= 6 ? tiny : ctx),
                     (long long)bad);
        }
    }
    free(buf);
    passion_file_close(w);
    passion_file_close(w2);
    passion_array_free(o);
    passion_array_free(o2);
}

static void test_numpy_types(void)
{
    if (!have_numpy())
        return;
    th_case_seed = th_seed + 1101;
    char manifest[600];
    snprintf(manifest, sizeof manifest, "%s/cases.txt", th_dir());
    TH_CHECK(gen_cases(manifest) == 0, "numpy could not write the cases");
    passion_ctx *ctx, *tiny;
    TH_CHECK(th_init(&ctx, NULL) == 0, "init");
    TH_CHECK(th_init(&tiny, "memory_budget=64") == 0, "init tiny");
    for (int k = 0; k < NTYPES; k++) {
        char rp[600];
        snprintf(rp, sizeof rp, "%s/ref%d.bin", th_dir(), k);
        char *ref = load_ref(rp, cases[k].n0 * cases[k].n1 * types[k].size);
        TH_CHECK(ref != NULL, "reference %s", rp);
        if (!th_all(ref != NULL)) {
            free(ref);
            continue;
        }
        read_case(ctx, tiny, k, ref);
        write_case(ctx, tiny, k, ref);
        free(ref);
    }
    passion_finalize(tiny);
    passion_finalize(ctx);
    TH_CHECK(run_py("check", manifest) == 0,
             "numpy: files passion wrote differ (lines above)");
}

/* Partitions (passion_part_*) over numpy's big-endian files. */
static void test_partitions(void)
{
    if (!have_numpy())
        return;
    th_case_seed = th_seed + 1101; /* the cases of test_numpy_types */
    char manifest[600];
    snprintf(manifest, sizeof manifest, "%s/cases.txt", th_dir());
    TH_CHECK(gen_cases(manifest) == 0, "numpy could not write the cases");
    passion_ctx *ctx;
    TH_CHECK(th_init(&ctx, "memory_budget=4K") == 0, "init");
    for (int k = 0; k < NTYPES; k++) {
        const tcase *t = &types[k];
        const ccase *c = &cases[k];
        if (t->descr[0] != '>' || c->fortran)
            continue;
        char in[600], rp[600];
        snprintf(in, sizeof in, "%s/in%d.npy", th_dir(), k);
        snprintf(rp, sizeof rp, "%s/ref%d.bin", th_dir(), k);
        char *ref = load_ref(rp, c->n0 * c->n1 * t->size);
        passion_array_spec L;
        memset(&L, 0, sizeof L);
        L.grid[0] = th_size;
        L.placement = PASSION_PLACE_PARTITIONED;
        passion_array *a = NULL;
        passion_file *f = NULL;
        int rc = passion_open(ctx, in, PASSION_MODE_RDONLY, &L, &a, &f);
        TH_CHECK(rc == 0 && ref, "%s: open: %s", t->descr,
                 passion_ctx_errdetail(ctx));
        if (rc) {
            free(ref);
            continue;
        }
        passion_part_opts po;
        passion_part_opts_init(&po);
        po.width = 1 + k % 3;
        passion_part_iter *it = NULL;
        rc = passion_part_open(f, &po, &it);
        TH_CHECK(rc == 0, "%s: part_open: %s", t->descr,
                 passion_ctx_errdetail(ctx));
        passion_part p;
        int64_t bad = 0, seen = 0;
        while (!rc && (rc = passion_part_next_all(it, &p)) == 1) {
            rc = 0;
            for (int64_t i = 0; i < p.count[0]; i++)
                for (int64_t j = 0; j < p.count[1]; j++) {
                    int64_t bi = (p.mem.offset[0] + i) * p.mem.shape[1] +
                                 p.mem.offset[1] + j;
                    int64_t g = (p.lo[0] + i) * c->n1 + p.lo[1] + j;
                    seen++;
                    bad += !same_elem(t,
                                      (unsigned char *)p.in + bi * t->size,
                                      (unsigned char *)ref + g * t->size);
                }
        }
        TH_CHECK(rc == 0 && bad == 0, "%s partitions: rc %d (%s), %lld of "
                 "%lld elements differ", t->descr, rc,
                 passion_ctx_errdetail(ctx), (long long)bad,
                 (long long)seen);
        passion_part_close_all(it);
        passion_file_close(f);
        passion_array_free(a);
        free(ref);
    }
    passion_finalize(ctx);
}

/* Local files in big-endian order: whole-array access, sections, slabs
   with prefetch, the out-of-core shift. */
static double lval(int64_t gi, int64_t gj)
{
    return (double)(gi * 1000 + gj) + 0.25;
}

static void bswap8(void *p)
{
    unsigned char *b = p;
    for (int i = 0; i < 4; i++) {
        unsigned char x = b[i];
        b[i] = b[7 - i];
        b[7 - i] = x;
    }
}

static void test_local_big(void)
{
    passion_ctx *ctx;
    TH_CHECK(th_init(&ctx, "memory_budget=256") == 0, "init");
    const int64_t N0 = 11 * th_size, N1 = 7, G = 1;
    passion_array_spec sp;
    passion_array_spec_init(&sp, 2, (int64_t[]){N0, N1}, 8);
    sp.grid[0] = th_size;
    sp.ghost[0] = G;
    sp.ghost[1] = G;
    sp.endian = little_host() ? PASSION_ENDIAN_BIG : PASSION_ENDIAN_LITTLE;
    passion_array_spec nat = sp;
    nat.endian = PASSION_ENDIAN_NATIVE;
    passion_array *a = NULL, *an = NULL;
    passion_file *f = NULL, *fn = NULL;
    char pat[600];
    snprintf(pat, sizeof pat, "%s/loc.%%d.laf", th_dir());
    int rc = passion_array_create(ctx, &sp, &a);
    if (!rc)
        rc = passion_array_create(ctx, &nat, &an);
    if (!rc)
        rc = passion_file_open(a, pat, PASSION_MODE_CREATE, &f);
    TH_CHECK(rc == 0, "setup: %s", passion_ctx_errdetail(ctx));
    if (rc) {
        passion_array_free(a);
        passion_array_free(an);
        passion_finalize(ctx);
        return;
    }
    int64_t lb;
    passion_array_local_bytes(a, th_rank, &lb);
    int64_t ln0 = 11 + 2 * G, ln1 = N1 + 2 * G, n = ln0 * ln1;
    double *v = calloc((size_t)n, 8), *back = calloc((size_t)n, 8);
    /* interior: the global values; ghosts 0 */
    for (int64_t i = 0; i < 11; i++)
        for (int64_t j = 0; j < N1; j++)
            v[(i + G) * ln1 + j + G] = lval(th_rank * 11 + i, j);
    rc = passion_file_write_local(f, v);
    TH_CHECK(rc == 0 && lb == n * 8, "write_local: %d", rc);
    /* the bytes in the file are the other order */
    rc = passion_file_open(an, pat, PASSION_MODE_RDONLY, &fn);
    if (!rc)
        rc = passion_file_read_local(fn, back);
    int bad = rc != 0;
    for (int64_t i = 0; i < n && !bad; i++) {
        double x = back[i];
        bswap8(&x);
        bad = memcmp(&x, &v[i], 8) != 0;
    }
    TH_CHECK(!bad, "file bytes are not the other order (rc %d)", rc);
    passion_file_close(fn);
    rc = passion_file_read_local(f, back);
    TH_CHECK(rc == 0 && !memcmp(back, v, (size_t)n * 8), "read_local");
    /* shift: ghosts along dimension 0 from the neighbours */
    rc = passion_file_shift_all(f, 0, 0, 0, 0);
    TH_CHECK(rc == 0, "shift: %s", passion_ctx_errdetail(ctx));
    rc = passion_file_read_local(f, back);
    bad = rc != 0;
    for (int64_t j = 0; j < N1 && !bad; j++) {
        if (th_rank > 0)
            bad |= back[0 * ln1 + j + G] != lval(th_rank * 11 - 1, j);
        if (th_rank < th_size - 1)
            bad |= back[(11 + G) * ln1 + j + G] != lval(th_rank * 11 + 11, j);
    }
    TH_CHECK(!bad, "shifted ghosts (rc %d)", rc);
    /* slabs with prefetch and halos, against the whole local array */
    passion_slab_opts so;
    passion_slab_opts_init(&so);
    so.dim = 0;
    so.width = 3;
    so.budget = 4096;
    passion_slab_iter *it = NULL;
    rc = passion_slab_open(f, &so, &it);
    TH_CHECK(rc == 0, "slab_open: %s", passion_ctx_errdetail(ctx));
    passion_slab sl;
    int64_t sbad = 0;
    while (!rc && (rc = passion_slab_next(it, &sl)) == 1) {
        rc = 0;
        const double *in = sl.in;
        for (int64_t i = -sl.halo; i < sl.count + sl.halo; i++) {
            int64_t li = sl.start + i; /* local index along dim 0 */
            if (li < -G || li >= 11 + G)
                continue;
            for (int64_t j = -G; j < N1 + G; j++) {
                int64_t bi = (sl.mem.offset[0] + i) * sl.mem.shape[1] +
                             sl.mem.offset[1] + j;
                sbad += in[bi] != back[(li + G) * ln1 + j + G];
            }
        }
    }
    TH_CHECK(rc == 0 && sbad == 0, "slabs: rc %d, %lld bad", rc,
             (long long)sbad);
    passion_slab_close(it);
    /* sections of the local file, written and read with every method and
       asynchronously, at a 256-byte budget */
    uint64_t rs = th_seed + 5 + (uint64_t)th_rank;
    for (int m = 0; m < 4; m++) {
        passion_section s;
        for (int d = 0; d < 2; d++) {
            int64_t ext = d == 0 ? 11 : N1;
            s.stride[d] = th_range(&rs, 1, 2);
            s.start[d] = th_range(&rs, -G, ext - 1);
            s.count[d] = th_range(&rs, 1, (ext + G - 1 - s.start[d]) /
                                              s.stride[d] + 1);
        }
        int64_t ne = s.count[0] * s.count[1];
        double *w = malloc((size_t)ne * 8), *r = malloc((size_t)ne * 8);
        for (int64_t e = 0; e < ne; e++)
            w[e] = (double)(m * 100000 + e) + 0.5;
        static const int meth[4] = {PASSION_METHOD_DIRECT, PASSION_METHOD_SIEVE,
                                    PASSION_METHOD_AUTO, PASSION_METHOD_AUTO};
        if (m < 3) {
            rc = passion_file_write(f, &s, w, NULL, meth[m]);
            if (!rc)
                rc = passion_file_read(f, &s, r, NULL, meth[(m + 1) % 3]);
        } else {
            passion_request *q = NULL;
            rc = passion_file_write_begin(f, &s, w, NULL, meth[m], &q);
            if (!rc)
                rc = passion_request_wait(q);
            if (!rc)
                rc = passion_file_read_begin(f, &s, r, NULL, meth[m], &q);
            if (!rc)
                rc = passion_request_wait(q);
        }
        TH_CHECK(rc == 0 && !memcmp(w, r, (size_t)ne * 8),
                 "local section way %d: rc %d (%s)", m, rc,
                 passion_ctx_errdetail(ctx));
        free(w);
        free(r);
    }
    free(v);
    free(back);
    passion_file_close(f);
    passion_array_free(a);
    passion_array_free(an);
    passion_finalize(ctx);
}

int main(int argc, char **argv)
{
    script = argc > 1 ? argv[1] : "tests/npy_types.py";
    static CU_TestInfo api_tests[] = {
        {"big-endian f8 0 1 2 reads back", test_big_f8},
        {"kinds and sizes in the spec", test_spec_kinds},
        {"passion_open: layouts, mismatches, names", test_open},
        {"every bad header", test_bad_headers},
        CU_TEST_INFO_NULL};
    static CU_TestInfo conv_tests[] = {
        {"every numpy type, both orders, every method", test_numpy_types},
        {"partitions over big-endian files", test_partitions},
        {"local files in the other order", test_local_big},
        CU_TEST_INFO_NULL};
    static CU_SuiteInfo suites[] = {
        {"types and passion_open", NULL, NULL, NULL, NULL, api_tests},
        {"byte order conversion", NULL, NULL, NULL, NULL, conv_tests},
        CU_SUITE_INFO_NULL};
    return th_main(argc, argv, suites);
}
