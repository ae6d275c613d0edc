/*
 * test_formats.c - HDF5 datasets and netCDF classic variables: files written by the HDF5 library (this program's
 * generator, libhdf5 directly) and by ncgen/nccopy (CDF-1, CDF-2, CDF-5)
 * are opened with passion_open and read with every method (independent
 * auto/direct/sieve, collective auto/etp-static/etp-dynamic, asynchronous,
 * partition iteration with prefetch) in random strided sections compared
 * element by element with the values the generator wrote (a formula of the
 * element's index); files passion creates ("x.h5:/g/u", "x.nc:u") are
 * written with every method and read back by h5dump and ncdump (their text
 * parsed) and by passion; layouts passion cannot access at offsets give
 * their clear error; passion_array_list names every dataset and variable
 * of those files as `h5ls -r` and `ncdump -h` do (name, shape; types as
 * the generators wrote them), refused ones with their reason; record
 * variables (a lone one, two interleaved) read like fixed-size ones. Seeds
 * are printed with every failure.
 */
#include "harness.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef TH_HAVE_HDF5
#include <hdf5.h>
#endif

/* ---- element types and the values the generators write ---- */

typedef struct ttype {
    const char *tag;
    passion_kind kind;
    int size;
    const char *cdl; /* netCDF type name, NULL: none */
    int cdf5;        /* 1: only in CDF-5 */
} ttype;

static const ttype T[] = {
    {"i1", PASSION_KIND_INT, 1, "byte", 0},
    {"i2", PASSION_KIND_INT, 2, "short", 0},
    {"i4", PASSION_KIND_INT, 4, "int", 0},
    {"i8", PASSION_KIND_INT, 8, "int64", 1},
    {"u1", PASSION_KIND_UINT, 1, "ubyte", 1},
    {"u2", PASSION_KIND_UINT, 2, "ushort", 1},
    {"u4", PASSION_KIND_UINT, 4, "uint", 1},
    {"u8", PASSION_KIND_UINT, 8, "uint64", 1},
    {"f4", PASSION_KIND_FLOAT, 4, "float", 0},
    {"f8", PASSION_KIND_FLOAT, 8, "double", 0},
    {"c8", PASSION_KIND_COMPLEX, 8, NULL, 0},
    {"c16", PASSION_KIND_COMPLEX, 16, NULL, 0},
    {"b1", PASSION_KIND_BOOL, 1, NULL, 0},
};
#define NT ((int)(sizeof T / sizeof T[0]))

static const ttype *tfind(const char *tag)
{
    for (int i = 0; i < NT; i++)
        if (!strcmp(T[i].tag, tag))
            return &T[i];
    return NULL;
}

static float ref_f4(int64_t i)
{
    return (float)((i % 8191) - 4000) * 0.25f;
}

static double ref_f8(int64_t i)
{
    return ((double)(i % 1000003) - 500000.0) * 0.0625;
}

/* Element i's value (native bytes) in type t. */
static void ref(const ttype *t, int64_t i, void *out)
{
    uint64_t u = (uint64_t)i * 0x9E3779B97F4A7C15ULL + 0x1234567ULL;
    switch (t->kind) {
    case PASSION_KIND_INT:
    case PASSION_KIND_UINT:
        if (t->size == 1) {
            uint8_t v = (uint8_t)u;
            memcpy(out, &v, 1);
        } else if (t->size == 2) {
            uint16_t v = (uint16_t)u;
            memcpy(out, &v, 2);
        } else if (t->size == 4) {
            uint32_t v = (uint32_t)u;
            memcpy(out, &v, 4);
        } else {
            memcpy(out, &u, 8);
        }
        break;
    case PASSION_KIND_FLOAT:
        if (t->size == 4) {
            float f = ref_f4(i);
            memcpy(out, &f, 4);
        } else {
            double d = ref_f8(i);
            memcpy(out, &d, 8);
        }
        break;
    case PASSION_KIND_COMPLEX:
        if (t->size == 8) {
            float f[2] = {ref_f4(2 * i), ref_f4(2 * i + 1)};
            memcpy(out, f, 8);
        } else {
            double d[2] = {ref_f8(2 * i), ref_f8(2 * i + 1)};
            memcpy(out, d, 16);
        }
        break;
    case PASSION_KIND_BOOL: {
        uint8_t b = (uint8_t)(i % 3 == 0);
        memcpy(out, &b, 1);
        break;
    }
    default:
        memset(out, 0, (size_t)t->size);
    }
}

/* Element i as CDL / dump text. */
static void ref_text(const ttype *t, int64_t i, char *buf, size_t n)
{
    unsigned char v[16];
    ref(t, i, v);
    if (t->kind == PASSION_KIND_INT) {
        long long x = t->size == 1   ? *(int8_t *)v
                      : t->size == 2 ? *(int16_t *)v
                      : t->size == 4 ? *(int32_t *)v
                                     : *(int64_t *)v;
        snprintf(buf, n, "%lld", x);
    } else if (t->kind == PASSION_KIND_UINT) {
        unsigned long long x = t->size == 1   ? *(uint8_t *)v
                               : t->size == 2 ? *(uint16_t *)v
                               : t->size == 4 ? *(uint32_t *)v
                                              : *(uint64_t *)v;
        snprintf(buf, n, "%llu", x);
    } else if (t->size == 4) {
        snprintf(buf, n, "%.9g", (double)*(float *)v);
    } else {
        snprintf(buf, n, "%.17g", *(double *)v);
    }
}

/* A number of dump text into native bytes of type t; 0 or -1. */
static int parse_num(const ttype *t, const char *s, char **end, void *out)
{
    errno = 0;
    if (t->kind == PASSION_KIND_INT) {
        long long x = strtoll(s, end, 10);
        if (*end == s)
            return -1;
        int8_t a = (int8_t)x;
        int16_t b = (int16_t)x;
        int32_t c = (int32_t)x;
        int64_t d = x;
        memcpy(out, t->size == 1 ? (void *)&a : t->size == 2 ? (void *)&b
                    : t->size == 4 ? (void *)&c : (void *)&d,
               (size_t)t->size);
    } else if (t->kind == PASSION_KIND_UINT) {
        unsigned long long x = strtoull(s, end, 10);
        if (*end == s)
            return -1;
        uint8_t a = (uint8_t)x;
        uint16_t b = (uint16_t)x;
        uint32_t c = (uint32_t)x;
        uint64_t d = x;
        memcpy(out, t->size == 1 ? (void *)&a : t->size == 2 ? (void *)&b
                    : t->size == 4 ? (void *)&c : (void *)&d,
               (size_t)t->size);
    } else {
        double x = strtod(s, end);
        if (*end == s)
            return -1;
        float f = (float)x;
        memcpy(out, t->size == 4 ? (void *)&f : (void *)&x,
               (size_t)t->size);
    }
    return 0;
}

/* ---- files and paths ---- */

static char path_buf[8][512];

static const char *tpath(int slot, const char *name)
{
    snprintf(path_buf[slot], sizeof path_buf[slot], "%s/%s", th_dir(),
             name);
    return path_buf[slot];
}

static int have_prog(const char *p)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", p);
    return system(cmd) == 0;
}

static const int64_t SHAPE3[3] = {7, 11, 13};

/* ---- random sections and their check ---- */

static int64_t rnd(uint64_t *s, int64_t lo, int64_t hi)
{
    return th_range(s, lo, hi);
}

/* A random strided section of shape (all ranks draw their own). */
static void rand_section(uint64_t *s, int nd, const int64_t *shape,
                         passion_section *sec)
{
    memset(sec, 0, sizeof *sec);
    for (int d = 0; d < nd; d++) {
        sec->start[d] = rnd(s, 0, shape[d] - 1);
        sec->stride[d] = rnd(s, 1, 3);
        int64_t most = (shape[d] - 1 - sec->start[d]) / sec->stride[d] + 1;
        sec->count[d] = rnd(s, 1, most);
    }
    if (rnd(s, 0, 9) == 0)
        sec->count[0] = 0; /* sometimes a rank takes part with nothing */
}

static int64_t row_major(int nd, const int64_t *shape, const int64_t *idx)
{
    int64_t k = 0;
    for (int d = 0; d < nd; d++)
        k = k * shape[d] + idx[d];
    return k;
}

/* Check buf (the packed section of a row-major array of shape whose
   element at flat index k is ref(t, k)); mismatches counted. */
static int64_t check_section(const ttype *t, int nd, const int64_t *shape,
                             const passion_section *sec, const char *buf)
{
    int64_t n = passion_section_elems(sec, nd), bad = 0;
    int64_t idx[PASSION_MAX_DIMS], g[PASSION_MAX_DIMS];
    unsigned char want[16];
    memset(idx, 0, sizeof idx);
    for (int64_t e = 0; e < n; e++) {
        for (int d = 0; d < nd; d++)
            g[d] = sec->start[d] + idx[d] * sec->stride[d];
        ref(t, row_major(nd, shape, g), want);
        if (memcmp(want, buf + e * t->size, (size_t)t->size)) {
            if (bad < 3) {
                char w[64];
                ref_text(t, row_major(nd, shape, g), w, sizeof w);
                fprintf(stderr,
                        "[rank %d] element %lld of the section (flat %lld) "
                        "differs, expected %s\n",
                        th_rank, (long long)e,
                        (long long)row_major(nd, shape, g), w);
            }
            bad++;
        }
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < sec->count[d])
                break;
            idx[d] = 0;
        }
    }
    return bad;
}

static void *section_buf(const ttype *t, int nd, const passion_section *s)
{
    int64_t n = passion_section_elems(s, nd);
    return malloc((size_t)(n > 0 ? n : 1) * (size_t)t->size);
}

static const passion_method COLL[] = {
    PASSION_METHOD_AUTO, PASSION_METHOD_ETP_STATIC,
    PASSION_METHOD_ETP_DYNAMIC, PASSION_METHOD_DIRECT,
    PASSION_METHOD_SIEVE};
static const passion_method INDEP[] = {
    PASSION_METHOD_AUTO, PASSION_METHOD_DIRECT, PASSION_METHOD_SIEVE};

/*
 * Open name with passion_open and check what it says (shape, kind, size,
 * byte order), then read random sections with every method and compare.
 */
static void read_checks(passion_ctx *ctx, const char *name, const ttype *t,
                        int nd, const int64_t *shape, passion_endian endian,
                        int nsec)
{
    passion_array *a = NULL;
    passion_file *f = NULL;
    int rc = passion_open(ctx, name, PASSION_MODE_RDONLY, NULL, &a, &f);
    TH_CHECK(rc == 0, "passion_open %s: %s (%s)", name, passion_strerror(rc),
             passion_ctx_errdetail(ctx));
    if (rc)
        return;
    const passion_array_spec *sp = passion_array_get_spec(a);
    int same = sp->ndims == nd && sp->kind == t->kind &&
               sp->elem_size == t->size && sp->storage == PASSION_ROW_MAJOR &&
               (t->size == 1 || sp->endian == endian);
    for (int d = 0; same && d < nd; d++)
        same = sp->shape[d] == shape[d];
    TH_CHECK(same,
             "%s: spec says %d dims, kind %d size %lld endian %d; the file "
             "holds %s %d dims endian %d",
             name, sp->ndims, (int)sp->kind, (long long)sp->elem_size,
             (int)sp->endian, t->tag, nd, (int)endian);
    uint64_t s = th_case_seed * 7919 + (uint64_t)th_rank * 104729 +
                 (uint64_t)strlen(name);
    for (int k = 0; same && k < nsec; k++) {
        passion_section sec;
        rand_section(&s, nd, shape, &sec);
        char *buf = section_buf(t, nd, &sec);
        /* collective, every method in turn */
        passion_method m = COLL[k % 5];
        rc = passion_file_read_all(f, &sec, buf, NULL, m);
        TH_CHECK(rc == 0, "%s read_all method %d: %s (%s)", name, (int)m,
                 passion_strerror(rc), passion_ctx_errdetail(ctx));
        if (!rc)
            TH_CHECK(check_section(t, nd, shape, &sec, buf) == 0,
                     "%s: read_all method %d section %d: wrong values",
                     name, (int)m, k);
        /* independent */
        memset(buf, 0xA5, (size_t)(passion_section_elems(&sec, nd) *
                                    t->size));
        m = INDEP[k % 3];
        rc = passion_file_read(f, &sec, buf, NULL, m);
        TH_CHECK(rc == 0, "%s read method %d: %s (%s)", name, (int)m,
                 passion_strerror(rc), passion_ctx_errdetail(ctx));
        if (!rc)
            TH_CHECK(check_section(t, nd, shape, &sec, buf) == 0,
                     "%s: read method %d section %d: wrong values", name,
                     (int)m, k);
        /* asynchronous */
        memset(buf, 0x5A, (size_t)(passion_section_elems(&sec, nd) *
                                    t->size));
        passion_request *req = NULL;
        rc = passion_file_read_begin(f, &sec, buf, NULL, m, &req);
        if (!rc)
            rc = passion_request_wait(req);
        TH_CHECK(rc == 0, "%s read_begin: %s (%s)", name,
                 passion_strerror(rc), passion_ctx_errdetail(ctx));
        if (!rc)
            TH_CHECK(check_section(t, nd, shape, &sec, buf) == 0,
                     "%s: asynchronous read section %d: wrong values", name,
                     k);
        free(buf);
    }
    TH_CHECK(passion_file_close(f) == 0, "close %s", name);
    TH_CHECK(passion_array_free(a) == 0, "free %s", name);
}

/* Partition iteration (PIM, with prefetch) over name on a P x 1 grid. */
static void part_checks(passion_ctx *ctx, const char *name, const ttype *t,
                        int nd, const int64_t *shape)
{
    passion_array_spec lay;
    memset(&lay, 0, sizeof lay);
    lay.placement = PASSION_PLACE_PARTITIONED;
    lay.grid[0] = th_size;
    passion_array *a = NULL;
    passion_file *f = NULL;
    int rc = passion_open(ctx, name, PASSION_MODE_RDONLY, &lay, &a, &f);
    TH_CHECK(rc == 0, "passion_open %s (partitioned): %s (%s)", name,
             passion_strerror(rc), passion_ctx_errdetail(ctx));
    if (rc)
        return;
    passion_part_opts o;
    passion_part_opts_init(&o);
    o.width = 2;
    o.halo = 1;
    passion_part_iter *it = NULL;
    rc = passion_part_open(f, &o, &it);
    TH_CHECK(rc == 0, "part_open %s: %s (%s)", name, passion_strerror(rc),
             passion_ctx_errdetail(ctx));
    int64_t parts = 0, bad = 0;
    passion_part p;
    while (!rc && (rc = passion_part_next_all(it, &p)) == 1) {
        parts++;
        int64_t idx[PASSION_MAX_DIMS] = {0}, g[PASSION_MAX_DIMS],
                mi[PASSION_MAX_DIMS], n = 1;
        for (int d = 0; d < nd; d++)
            n *= p.count[d];
        unsigned char want[16];
        for (int64_t e = 0; e < n; e++) {
            for (int d = 0; d < nd; d++) {
                g[d] = p.lo[d] + idx[d];
                mi[d] = p.mem.offset[d] + idx[d];
            }
            ref(t, row_major(nd, shape, g), want);
            const char *got = (const char *)p.in +
                              row_major(nd, p.mem.shape, mi) * t->size;
            bad += memcmp(want, got, (size_t)t->size) != 0;
            for (int d = nd - 1; d >= 0; d--) {
                if (++idx[d] < p.count[d])
                    break;
                idx[d] = 0;
            }
        }
        rc = 0;
    }
    TH_CHECK(rc == 0, "part_next_all %s: %s (%s)", name, passion_strerror(rc),
             passion_ctx_errdetail(ctx));
    TH_CHECK(parts > 0 && bad == 0, "%s: %lld partitions, %lld wrong", name,
             (long long)parts, (long long)bad);
    TH_CHECK(passion_part_close_all(it) == 0, "part_close %s", name);
    passion_file_close(f);
    passion_array_free(a);
}

/* ---- HDF5 files made by the HDF5 library ---- */

#ifdef TH_HAVE_HDF5
/* A complex of two f (r, i) in size bytes. */
static hid_t h5_complex(hid_t f, int64_t size)
{
    hid_t c = H5Tcreate(H5T_COMPOUND, (size_t)size);
    H5Tinsert(c, "r", 0, f);
    H5Tinsert(c, "i", (size_t)size / 2, f);
    return c;
}

/* h5py's boolean: an enum of base, FALSE = 0 and TRUE = 1. */
static hid_t h5_bool(hid_t base)
{
    hid_t e = H5Tenum_create(base);
    signed char v0 = 0, v1 = 1;
    H5Tenum_insert(e, "FALSE", &v0);
    H5Tenum_insert(e, "TRUE", &v1);
    return e;
}

static hid_t h5_file_type(const ttype *t, int be)
{
    hid_t base = -1;
    switch (t->kind) {
    case PASSION_KIND_INT:
        base = t->size == 1 ? (be ? H5T_STD_I8BE : H5T_STD_I8LE)
               : t->size == 2 ? (be ? H5T_STD_I16BE : H5T_STD_I16LE)
               : t->size == 4 ? (be ? H5T_STD_I32BE : H5T_STD_I32LE)
                              : (be ? H5T_STD_I64BE : H5T_STD_I64LE);
        return H5Tcopy(base);
    case PASSION_KIND_UINT:
        base = t->size == 1 ? (be ? H5T_STD_U8BE : H5T_STD_U8LE)
               : t->size == 2 ? (be ? H5T_STD_U16BE : H5T_STD_U16LE)
               : t->size == 4 ? (be ? H5T_STD_U32BE : H5T_STD_U32LE)
                              : (be ? H5T_STD_U64BE : H5T_STD_U64LE);
        return H5Tcopy(base);
    case PASSION_KIND_FLOAT:
        return H5Tcopy(t->size == 4 ? (be ? H5T_IEEE_F32BE : H5T_IEEE_F32LE)
                                    : (be ? H5T_IEEE_F64BE
                                          : H5T_IEEE_F64LE));
    case PASSION_KIND_COMPLEX:
        return h5_complex(t->size == 8
                              ? (be ? H5T_IEEE_F32BE : H5T_IEEE_F32LE)
                              : (be ? H5T_IEEE_F64BE : H5T_IEEE_F64LE),
                          t->size);
    case PASSION_KIND_BOOL:
        return h5_bool(H5T_STD_I8LE);
    default:
        return -1;
    }
}

/* The memory type of ref()'s values. */
static hid_t h5_mem_type(const ttype *t)
{
    switch (t->kind) {
    case PASSION_KIND_INT:
        return H5Tcopy(t->size == 1   ? H5T_NATIVE_INT8
                       : t->size == 2 ? H5T_NATIVE_INT16
                       : t->size == 4 ? H5T_NATIVE_INT32
                                      : H5T_NATIVE_INT64);
    case PASSION_KIND_UINT:
        return H5Tcopy(t->size == 1   ? H5T_NATIVE_UINT8
                       : t->size == 2 ? H5T_NATIVE_UINT16
                       : t->size == 4 ? H5T_NATIVE_UINT32
                                      : H5T_NATIVE_UINT64);
    case PASSION_KIND_FLOAT:
        return H5Tcopy(t->size == 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE);
    case PASSION_KIND_COMPLEX:
        return h5_complex(t->size == 8 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE,
                          t->size);
    case PASSION_KIND_BOOL:
        return h5_bool(H5T_NATIVE_SCHAR);
    default:
        return -1;
    }
}

/* One dataset of ref() values; layout: 0 contiguous, 1 chunked, 2
   chunked + deflate, 3 compact, 4 contiguous allocated late, unwritten. */
static int h5_put(hid_t file, const char *dset, const ttype *t, int be,
                  int nd, const int64_t *shape, int layout)
{
    hsize_t dims[PASSION_MAX_DIMS], chunk[PASSION_MAX_DIMS];
    int64_t n = 1;
    for (int d = 0; d < nd; d++) {
        dims[d] = (hsize_t)shape[d];
        chunk[d] = (hsize_t)(shape[d] > 2 ? 2 : shape[d]);
        n *= shape[d];
    }
    char *buf = malloc((size_t)(n * t->size));
    for (int64_t i = 0; i < n; i++)
        ref(t, i, buf + i * t->size);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (layout == 1 || layout == 2)
        H5Pset_chunk(dcpl, nd, chunk);
    if (layout == 2)
        H5Pset_deflate(dcpl, 4);
    if (layout == 3)
        H5Pset_layout(dcpl, H5D_COMPACT);
    if (layout == 4)
        H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_LATE);
    hid_t space = H5Screate_simple(nd, dims, NULL);
    hid_t ft = h5_file_type(t, be), mt = h5_mem_type(t);
    hid_t ds = H5Dcreate2(file, dset, ft, space, lcpl, dcpl, H5P_DEFAULT);
    int ok = ds >= 0 && (layout == 4 || H5Dwrite(ds, mt, H5S_ALL, H5S_ALL,
                                                 H5P_DEFAULT, buf) >= 0);
    if (ds >= 0)
        H5Dclose(ds);
    H5Tclose(ft);
    H5Tclose(mt);
    H5Sclose(space);
    H5Pclose(dcpl);
    H5Pclose(lcpl);
    free(buf);
    return ok ? 0 : -1;
}

static const int64_t SHAPE_U[2] = {40, 33};

/* The generator: every type in both byte orders, and the bad layouts. */
static int h5_generate(const char *path)
{
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (file < 0)
        return -1;
    int bad = 0;
    char ds[64];
    for (int i = 0; i < NT; i++)
        for (int be = 0; be < 2; be++) {
            if (T[i].kind == PASSION_KIND_BOOL && be)
                continue;
            snprintf(ds, sizeof ds, "/t/%s_%s", T[i].tag, be ? "be" : "le");
            bad |= h5_put(file, ds, &T[i], be, 3, SHAPE3, 0);
        }
    bad |= h5_put(file, "/fields/u", tfind("f8"), 0, 2, SHAPE_U, 0);
    bad |= h5_put(file, "/bad/chunked", tfind("f4"), 0, 2, SHAPE_U, 1);
    bad |= h5_put(file, "/bad/deflate", tfind("i4"), 0, 2, SHAPE_U, 2);
    bad |= h5_put(file, "/bad/compact", tfind("i2"), 0, 1, SHAPE3, 3);
    bad |= h5_put(file, "/bad/late", tfind("f8"), 0, 2, SHAPE_U, 4);
    H5Fclose(file);
    return bad;
}
#endif

/* ---- netCDF files made by ncgen ---- */

/* A CDL text with a variable v_TAG(d0, d1, d2) of every type in tags. */
static int cdl_write(const char *path, const char *tags[], int n,
                     int record)
{
    FILE *fp = fopen(path, "w");
    if (!fp)
        return -1;
    fprintf(fp, "netcdf t {\ndimensions:\n");
    if (record)
        fprintf(fp, "  d0 = UNLIMITED ;\n");
    else
        fprintf(fp, "  d0 = %lld ;\n", (long long)SHAPE3[0]);
    fprintf(fp, "  d1 = %lld ;\n  d2 = %lld ;\nvariables:\n",
            (long long)SHAPE3[1], (long long)SHAPE3[2]);
    for (int k = 0; k < n; k++) {
        const ttype *t = tfind(tags[k]);
        fprintf(fp, "  %s v_%s(d0, d1, d2) ;\n", t->cdl, t->tag);
        fprintf(fp, "    v_%s:note = \"written by test_formats\" ;\n",
                t->tag);
    }
    fprintf(fp, "  double other(d1) ;\n");
    fprintf(fp, "\n// global attributes:\n  :title = \"passion test\" ;\n");
    fprintf(fp, "data:\n");
    int64_t total = SHAPE3[0] * SHAPE3[1] * SHAPE3[2];
    char num[64];
    for (int k = 0; k < n; k++) {
        const ttype *t = tfind(tags[k]);
        fprintf(fp, " v_%s = ", t->tag);
        for (int64_t i = 0; i < total; i++) {
            ref_text(t, i, num, sizeof num);
            fprintf(fp, "%s%s", num, i + 1 < total ? (i % 8 == 7 ? ",\n" : ", ")
                                                   : " ;\n");
        }
    }
    fprintf(fp, " other = ");
    for (int64_t i = 0; i < SHAPE3[1]; i++)
        fprintf(fp, "%lld%s", (long long)i, i + 1 < SHAPE3[1] ? ", " : " ;\n");
    fprintf(fp, "}\n");
    return fclose(fp) ? -1 : 0;
}

static const char *NC_TAGS_12[] = {"i1", "i2", "i4", "f4", "f8"};
static const char *NC_TAGS_5[] = {"i1", "i2", "i4", "u1", "u2",
                                  "u4", "u8", "f4", "f8"};

/* ncgen files: t1.nc t2.nc t5.nc (every type of the version), t5_i8.nc
   (int64: ncgen 4.9 writes int64 as int in CDF-5, so via netCDF-4 and
   nccopy), rec.nc (a lone record variable), rec2.nc (two). */
static int nc_generate(void)
{
    char cmd[2048];
    const char *cdl = tpath(0, "t.cdl");
    int bad = 0;
    bad |= cdl_write(cdl, NC_TAGS_12, 5, 0);
    for (int v = 1; v <= 2; v++) {
        snprintf(cmd, sizeof cmd, "ncgen -k %d -o %s/t%d.nc %s", v,
                 th_dir(), v, cdl);
        bad |= system(cmd) != 0;
    }
    bad |= cdl_write(cdl, NC_TAGS_5, 9, 0);
    snprintf(cmd, sizeof cmd, "ncgen -k 5 -o %s/t5.nc %s", th_dir(), cdl);
    bad |= system(cmd) != 0;
    const char *i8[] = {"i8"};
    bad |= cdl_write(cdl, i8, 1, 0);
    snprintf(cmd, sizeof cmd,
             "ncgen -k nc4 -o %s/t4.nc %s && nccopy -k cdf5 %s/t4.nc "
             "%s/t5_i8.nc",
             th_dir(), cdl, th_dir(), th_dir());
    bad |= system(cmd) != 0;
    const char *one[] = {"f4"};
    bad |= cdl_write(cdl, one, 1, 1);
    snprintf(cmd, sizeof cmd, "ncgen -k 2 -o %s/rec.nc %s", th_dir(), cdl);
    bad |= system(cmd) != 0;
    const char *two[] = {"f4", "i2"};
    bad |= cdl_write(cdl, two, 2, 1);
    snprintf(cmd, sizeof cmd, "ncgen -k 5 -o %s/rec2.nc %s", th_dir(), cdl);
    bad |= system(cmd) != 0;
    return bad;
}

/* ---- the tests ---- */

/* ok: rank 0's files were made; if so (checked) a context for reading
   them in *ctx */
static int generated(int ok, const char *what, passion_ctx **ctx)
{
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    TH_CHECK(ok, "%s", what);
    if (!ok)
        return 0;
    TH_CHECK(th_init(ctx, "memory_budget=16384") == 0, "init");
    return 1;
}

static void test_read_hdf5(void)
{
    th_case_seed = th_seed + 1;
#ifndef TH_HAVE_HDF5
    passion_ctx *ctx;
    th_init(&ctx, NULL);
    passion_array *a;
    passion_file *f;
    int rc = passion_open(ctx, tpath(1, "none.h5:/u"), PASSION_MODE_RDONLY,
                          NULL, &a, &f);
    TH_CHECK(rc != 0, "passion_open of an HDF5 name without HDF5");
    passion_finalize(ctx);
#else
    const char *h5 = tpath(1, "in.h5");
    passion_ctx *ctx;
    if (!generated(th_rank != 0 || h5_generate(h5) == 0, "HDF5 generator",
                   &ctx))
        return;
    char name[600];
    for (int i = 0; i < NT; i++)
        for (int be = 0; be < 2; be++) {
            if (T[i].kind == PASSION_KIND_BOOL && be)
                continue;
            snprintf(name, sizeof name, "%s:/t/%s_%s", h5, T[i].tag,
                     be ? "be" : "le");
            read_checks(ctx, name, &T[i], 3, SHAPE3,
                        be ? PASSION_ENDIAN_BIG : PASSION_ENDIAN_LITTLE, 5);
        }
    snprintf(name, sizeof name, "%s:/fields/u", h5);
    read_checks(ctx, name, tfind("f8"), 2, SHAPE_U, PASSION_ENDIAN_LITTLE,
                10);
    part_checks(ctx, name, tfind("f8"), 2, SHAPE_U);
    snprintf(name, sizeof name, "%s:/t/i4_be", h5);
    part_checks(ctx, name, tfind("i4"), 3, SHAPE3);
    passion_finalize(ctx);
#endif
}

/*
 * passion_section_filetype on name (type t of nd dimensions): random
 * sections' views read with plain MPI-IO (MPI_COMM_SELF, the file's
 * big-endian bytes) equal passion_file_read of the same sections (native
 * values, swapped back).
 */
static void filetype_checks(passion_ctx *ctx, const char *name,
                            const char *path, const ttype *t, int nd,
                            const int64_t *shape)
{
    passion_array *a = NULL;
    passion_file *f = NULL;
    int rc = passion_open(ctx, name, PASSION_MODE_RDONLY, NULL, &a, &f);
    TH_CHECK(rc == 0, "open %s: %s", name, passion_ctx_errdetail(ctx));
    if (rc)
        return;
    MPI_File fh;
    TH_CHECK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY,
                           MPI_INFO_NULL, &fh) == MPI_SUCCESS,
             "MPI_File_open %s", path);
    uint64_t seed = th_case_seed * 7 + (uint64_t)th_rank;
    for (int k = 0; k < 4; k++) {
        passion_section s;
        rand_section(&seed, nd, shape, &s);
        int64_t n = passion_section_elems(&s, nd);
        unsigned char *want = section_buf(t, nd, &s),
                      *got = section_buf(t, nd, &s);
        MPI_Datatype ft;
        MPI_Offset disp;
        rc = passion_file_read(f, &s, want, NULL, PASSION_METHOD_AUTO);
        if (!rc)
            rc = passion_section_filetype(f, &s, &ft, &disp);
        TH_CHECK(rc == 0, "%s: read / filetype: %s", name,
                 passion_ctx_errdetail(ctx));
        if (!rc) {
            MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native",
                              MPI_INFO_NULL);
            MPI_File_read(fh, got, (int)(n * t->size), MPI_BYTE,
                          MPI_STATUS_IGNORE);
            MPI_Type_free(&ft);
            int64_t bad = 0;
            for (int64_t e = 0; e < n; e++)
                for (int b = 0; b < t->size; b++)
                    bad += got[e * t->size + b] !=
                           want[e * t->size + t->size - 1 - b];
            TH_CHECK(bad == 0, "%s: the MPI-IO view of section %d reads "
                     "%lld bytes unlike passion (seed %llu)", name, k,
                     (long long)bad, (unsigned long long)th_case_seed);
        }
        free(want);
        free(got);
    }
    MPI_File_close(&fh);
    passion_file_close(f);
    passion_array_free(a);
}

static void test_read_netcdf(void)
{
    th_case_seed = th_seed + 2;
    if (!th_all(have_prog("ncgen") && have_prog("nccopy"))) {
        if (th_rank == 0)
            printf("ncgen/nccopy not found (Debian netcdf-bin): skipped\n");
        return;
    }
    passion_ctx *ctx;
    if (!generated(th_rank != 0 || nc_generate() == 0, "ncgen files", &ctx))
        return;
    char name[600];
    for (int v = 1; v <= 2; v++)
        for (int k = 0; k < 5; k++) {
            snprintf(name, sizeof name, "%s/t%d.nc:v_%s", th_dir(), v,
                     NC_TAGS_12[k]);
            read_checks(ctx, name, tfind(NC_TAGS_12[k]), 3, SHAPE3,
                        PASSION_ENDIAN_BIG, 4);
        }
    for (int k = 0; k < 9; k++) {
        snprintf(name, sizeof name, "%s/t5.nc:v_%s", th_dir(), NC_TAGS_5[k]);
        read_checks(ctx, name, tfind(NC_TAGS_5[k]), 3, SHAPE3,
                    PASSION_ENDIAN_BIG, 4);
    }
    snprintf(name, sizeof name, "%s/t5_i8.nc:v_i8", th_dir());
    read_checks(ctx, name, tfind("i8"), 3, SHAPE3, PASSION_ENDIAN_BIG, 6);
    /* a lone record variable: its records are contiguous */
    snprintf(name, sizeof name, "%s/rec.nc:v_f4", th_dir());
    read_checks(ctx, name, tfind("f4"), 3, SHAPE3, PASSION_ENDIAN_BIG, 6);
    /* two record variables: their records interleave */
    const char *two[] = {"f4", "i2"};
    for (int k = 0; k < 2; k++) {
        snprintf(name, sizeof name, "%s/rec2.nc:v_%s", th_dir(), two[k]);
        read_checks(ctx, name, tfind(two[k]), 3, SHAPE3, PASSION_ENDIAN_BIG,
                    6);
        part_checks(ctx, name, tfind(two[k]), 3, SHAPE3);
        char path[600];
        snprintf(path, sizeof path, "%s/rec2.nc", th_dir());
        filetype_checks(ctx, name, path, tfind(two[k]), 3, SHAPE3);
    }
    snprintf(name, sizeof name, "%s/t5.nc:v_i2", th_dir());
    part_checks(ctx, name, tfind("i2"), 3, SHAPE3);
    passion_finalize(ctx);
}

/* Parse the values of a dump (after the marker, up to the terminator)
   and compare them with expected(k) for the file's row-major order. */
static int64_t dump_compare(const char *txt, const char *marker, char term,
                            const ttype *t, int nd, const int64_t *shape,
                            int colmajor)
{
    const char *p = strstr(txt, marker);
    if (!p) {
        fprintf(stderr, "[rank 0] no '%s' in the dump\n", marker);
        return -1;
    }
    p += strlen(marker);
    int64_t n = 1, bad = 0, k = 0;
    for (int d = 0; d < nd; d++)
        n *= shape[d];
    /* the file's shape: reversed for a column-major array */
    int64_t fshape[PASSION_MAX_DIMS], fi[PASSION_MAX_DIMS] = {0},
            pi[PASSION_MAX_DIMS];
    for (int d = 0; d < nd; d++)
        fshape[d] = colmajor ? shape[nd - 1 - d] : shape[d];
    unsigned char got[16], want[16];
    while (k < n) {
        while (*p && *p != term && !(*p == '-' || (*p >= '0' && *p <= '9')))
            p++;
        if (!*p || *p == term)
            break;
        char *end;
        if (parse_num(t, p, &end, got))
            break;
        p = end;
        for (int d = 0; d < nd; d++)
            pi[d] = colmajor ? fi[nd - 1 - d] : fi[d];
        ref(t, row_major(nd, shape, pi), want);
        if (memcmp(got, want, (size_t)t->size)) {
            if (bad < 3)
                fprintf(stderr, "[rank 0] dump value %lld differs\n",
                        (long long)k);
            bad++;
        }
        k++;
        for (int d = nd - 1; d >= 0; d--) {
            if (++fi[d] < fshape[d])
                break;
            fi[d] = 0;
        }
    }
    if (k != n) {
        fprintf(stderr, "[rank 0] %lld values in the dump, expected %lld\n",
                (long long)k, (long long)n);
        return bad + 1;
    }
    return bad;
}

static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, fp);
    s[got] = '\0';
    fclose(fp);
    return s;
}

/*
 * Create name for an array of type t (row- or column-major, file byte
 * order endian), write it with every method, then check it with the dump
 * tool (rank 0) and with passion_open.
 */
static void create_check(passion_ctx *ctx, const char *file,
                         const char *obj, const ttype *t,
                         passion_endian endian, int colmajor,
                         const char *dumpcmd, const char *marker, char term,
                         passion_endian reopen)
{
    static const int64_t shape[3] = {9, 10, 7};
    int nd = 3;
    char name[700];
    snprintf(name, sizeof name, "%s:%s", file, obj);
    passion_array_spec sp;
    passion_array_spec_init(&sp, nd, shape, t->size);
    sp.kind = t->kind;
    sp.endian = endian;
    sp.placement = PASSION_PLACE_GLOBAL;
    sp.storage = colmajor ? PASSION_COL_MAJOR : PASSION_ROW_MAJOR;
    passion_array *a = NULL;
    passion_file *f = NULL;
    int rc = passion_array_create(ctx, &sp, &a);
    TH_CHECK(rc == 0, "array_create: %s", passion_ctx_errdetail(ctx));
    if (rc)
        return;
    rc = passion_file_open(a, name, PASSION_MODE_CREATE, &f);
    TH_CHECK(rc == 0, "create %s: %s (%s)", name, passion_strerror(rc),
             passion_ctx_errdetail(ctx));
    if (rc) {
        passion_array_free(a);
        return;
    }
    /* rows of dimension 0 in blocks, one collective write per method */
    int64_t total = shape[0] * shape[1] * shape[2];
    char *all = malloc((size_t)(total * t->size));
    for (int64_t i = 0; i < total; i++)
        ref(t, i, all + i * t->size);
    /* (the buffer holds the array in passion's storage order) */
    char *mem = malloc((size_t)(total * t->size));
    int64_t idx[3];
    for (idx[0] = 0; idx[0] < shape[0]; idx[0]++)
        for (idx[1] = 0; idx[1] < shape[1]; idx[1]++)
            for (idx[2] = 0; idx[2] < shape[2]; idx[2]++) {
                int64_t r = row_major(3, shape, idx);
                int64_t c = colmajor ? idx[0] + shape[0] * (idx[1] +
                                                            shape[1] * idx[2])
                                     : r;
                memcpy(mem + c * t->size, all + r * t->size, (size_t)t->size);
            }
    passion_memspec ms;
    memset(&ms, 0, sizeof ms);
    memcpy(ms.shape, shape, sizeof shape);
    for (int m = 0; m < 5 && !rc; m++) {
        /* method m writes rows [lo, hi) split over the ranks */
        int64_t lo = shape[0] * m / 5, hi = shape[0] * (m + 1) / 5;
        int64_t rows = hi - lo, mine0 = lo + rows * th_rank / th_size,
                mine1 = lo + rows * (th_rank + 1) / th_size;
        passion_section s;
        int64_t st[3] = {mine0, 0, 0}, ct[3] = {mine1 - mine0, shape[1],
                                                shape[2]};
        passion_section_set(&s, 3, st, ct, NULL);
        memcpy(ms.offset, st, sizeof st);
        rc = passion_file_write_all(f, &s, mem, &ms, COLL[m]);
        TH_CHECK(rc == 0, "%s write_all method %d: %s (%s)", name,
                 (int)COLL[m], passion_strerror(rc),
                 passion_ctx_errdetail(ctx));
    }
    /* random strided sections again, independently and asynchronously
       (the same values: the file's content does not change) */
    uint64_t s = th_case_seed * 31 + (uint64_t)th_rank;
    for (int k = 0; k < 4 && !rc; k++) {
        passion_section sec;
        rand_section(&s, nd, shape, &sec);
        memset(&ms.offset, 0, sizeof ms.offset);
        for (int d = 0; d < nd; d++)
            ms.offset[d] = sec.start[d];
        if (k % 2 == 0) {
            /* a strided section of the memory array: stride 1 there, so
               take unit strides */
            for (int d = 0; d < nd; d++) {
                sec.stride[d] = 1;
                if (sec.count[d] > shape[d] - sec.start[d])
                    sec.count[d] = shape[d] - sec.start[d];
            }
            rc = passion_file_write(f, &sec, mem, &ms, INDEP[k % 3]);
        } else {
            char *buf = section_buf(t, nd, &sec);
            int64_t n = passion_section_elems(&sec, nd);
            int64_t ii[3] = {0, 0, 0}, g[3];
            for (int64_t e = 0; e < n; e++) {
                for (int d = 0; d < nd; d++)
                    g[d] = sec.start[d] + ii[d] * sec.stride[d];
                ref(t, row_major(nd, shape, g), buf + e * t->size);
                for (int d = nd - 1; d >= 0; d--) {
                    if (++ii[d] < sec.count[d])
                        break;
                    ii[d] = 0;
                }
            }
            /* column-major: the packed buffer is in storage order */
            if (colmajor) {
                char *cb = section_buf(t, nd, &sec);
                memset(ii, 0, sizeof ii);
                for (int64_t e = 0; e < n; e++) {
                    int64_t c = ii[0] + sec.count[0] *
                                            (ii[1] + sec.count[1] * ii[2]);
                    memcpy(cb + c * t->size, buf + e * t->size,
                           (size_t)t->size);
                    for (int d = nd - 1; d >= 0; d--) {
                        if (++ii[d] < sec.count[d])
                            break;
                        ii[d] = 0;
                    }
                }
                free(buf);
                buf = cb;
            }
            passion_request *req = NULL;
            rc = passion_file_write_begin(f, &sec, buf, NULL,
                                          INDEP[k % 3], &req);
            if (!rc)
                rc = passion_request_wait(req);
            free(buf);
        }
        TH_CHECK(rc == 0, "%s independent write %d: %s (%s)", name, k,
                 passion_strerror(rc), passion_ctx_errdetail(ctx));
    }
    TH_CHECK(passion_file_close(f) == 0, "close %s", name);
    passion_array_free(a);
    free(mem);
    free(all);
    MPI_Barrier(MPI_COMM_WORLD);

    /* the format's own tool reads what passion wrote */
    int64_t bad = 0;
    if (th_rank == 0 && dumpcmd) {
        const char *out = tpath(2, "dump.txt");
        char cmd[1600];
        snprintf(cmd, sizeof cmd, dumpcmd, obj, file, out);
        int src = system(cmd);
        char *txt = src == 0 ? slurp(out) : NULL;
        bad = txt ? dump_compare(txt, marker, term, t, nd, shape, colmajor)
                  : -1;
        if (!txt)
            fprintf(stderr, "[rank 0] %s failed (%d)\n", cmd, src);
        free(txt);
    }
    MPI_Bcast(&bad, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    TH_CHECK(bad == 0, "%s: the dump tool sees %lld wrong values (seed "
             "%llu)", name, (long long)bad,
             (unsigned long long)th_case_seed);

    /* and passion_open reads it back as the file's own array (row-major,
       the file's shape) */
    if (!colmajor)
        read_checks(ctx, name, t, nd, shape, reopen, 3);
}

static void test_create_hdf5(void)
{
    th_case_seed = th_seed + 3;
#ifdef TH_HAVE_HDF5
    int dump = th_all(have_prog("h5dump"));
    passion_ctx *ctx;
    TH_CHECK(th_init(&ctx, "memory_budget=8192") == 0, "init");
    const char *h5 = tpath(3, "out.h5");
    /* h5dump: -y no indices, -w 0 one line, -m full float precision */
    const char *cmd = dump ? "h5dump -y -w 0 -m %%.17g -d '%s' %s > %s"
                           : NULL;
    const char *tags[] = {"i2", "u4", "i8", "f4", "f8", "u1"};
    for (int k = 0; k < 6; k++)
        create_check(ctx, h5, "/g/u", tfind(tags[k]),
                     k % 2 ? PASSION_ENDIAN_BIG : PASSION_ENDIAN_NATIVE, 0,
                     cmd, "DATA {", '}',
                     k % 2 ? PASSION_ENDIAN_BIG : PASSION_ENDIAN_LITTLE);
    /* column-major: stored transposed (dimensions reversed) */
    create_check(ctx, h5, "/cm", tfind("f8"), PASSION_ENDIAN_NATIVE, 1, cmd,
                 "DATA {", '}', PASSION_ENDIAN_LITTLE);
    passion_finalize(ctx);
#endif
}

static void test_create_netcdf(void)
{
    th_case_seed = th_seed + 4;
    int dump = th_all(have_prog("ncdump"));
    const char *cmd = dump ? "ncdump -p 9,17 -v '%s' %s > %s" : NULL;
    const char *nc = tpath(3, "out.nc");
    /* CDF-5 (the default) */
    passion_ctx *ctx;
    TH_CHECK(th_init(&ctx, "memory_budget=8192") == 0, "init");
    const char *tags5[] = {"i1", "i2", "u2", "i4", "u4", "i8", "u8", "f4",
                           "f8", "u1"};
    for (int k = 0; k < 10; k++)
        create_check(ctx, nc, "u", tfind(tags5[k]), PASSION_ENDIAN_NATIVE, 0,
                     cmd, " u =", ';', PASSION_ENDIAN_BIG);
    create_check(ctx, nc, "cm", tfind("f4"), PASSION_ENDIAN_NATIVE, 1, cmd,
                 " cm =", ';', PASSION_ENDIAN_BIG);
    passion_finalize(ctx);
    /* CDF-2 and CDF-1 by the option netcdf_format */
    for (int v = 1; v <= 2; v++) {
        TH_CHECK(th_init(&ctx, "memory_budget=8192,netcdf_format=cdf%d", v)
                     == 0, "init cdf%d", v);
        const char *tags2[] = {"i2", "f8", "i1"};
        for (int k = 0; k < 3; k++)
            create_check(ctx, nc, "w", tfind(tags2[k]), PASSION_ENDIAN_NATIVE,
                         0, cmd, " w =", ';', PASSION_ENDIAN_BIG);
        if (th_rank == 0 && dump) {
            char c[700];
            snprintf(c, sizeof c,
                     "ncdump -k %s | grep -q '%s'", nc,
                     v == 2 ? "64-bit offset" : "classic");
            TH_CHECK(system(c) == 0, "ncdump -k says the file is CDF-%d", v);
        }
        /* a type CDF-1/2 lacks */
        passion_array_spec sp;
        int64_t shape[1] = {5};
        passion_array_spec_init(&sp, 1, shape, 4);
        sp.kind = PASSION_KIND_UINT;
        sp.placement = PASSION_PLACE_GLOBAL;
        passion_array *a;
        passion_file *f = NULL;
        passion_array_create(ctx, &sp, &a);
        char name[600];
        snprintf(name, sizeof name, "%s:w", nc);
        int rc = passion_file_open(a, name, PASSION_MODE_CREATE, &f);
        TH_CHECK(rc == PASSION_ENOTSUP, "uint32 in CDF-%d: %d (%s)", v, rc,
                 passion_ctx_errdetail(ctx));
        if (!rc)
            passion_file_close(f);
        passion_array_free(a);
        passion_finalize(ctx);
    }
}

/* How many of the values ncdump prints for variable var of file are "_"
   (netCDF's fill value) into *nfill; -1 if ncdump fails. Rank 0. */
static int64_t dump_fill_count(const char *file, const char *var,
                               int64_t *nfill)
{
    char cmd[1400], marker[64];
    const char *out = tpath(2, "dumpf.txt");
    snprintf(cmd, sizeof cmd, "ncdump -v %s %s > %s", var, file, out);
    *nfill = 0;
    char *txt = system(cmd) == 0 ? slurp(out) : NULL;
    snprintf(marker, sizeof marker, " %s =", var);
    const char *p = txt ? strstr(txt, marker) : NULL;
    if (!p) {
        free(txt);
        return -1;
    }
    int64_t n = 0;
    for (p += strlen(marker); *p && *p != ';'; p++)
        if (*p == '_')
            n++;
    *nfill = n;
    free(txt);
    return 0;
}

/*
 * Records appended by passion_array_create + passion_file_open with more
 * records than the file has: a copy of rec2.nc (v_f4 and v_i2 record
 * variables, SHAPE3[0] records) grown by 3 through v_f4, the new records
 * of v_f4 written collectively with ref() values continuing the file's
 * (row-major index); ncdump then shows numrecs + 3 records of v_f4 equal
 * to ref() and v_i2's new records as fill ("_"), and passion reads v_i2's
 * new elements as NC_FILL_SHORT.
 */
static void test_append_netcdf(void)
{
    th_case_seed = th_seed + 6;
    if (!th_all(have_prog("ncdump") && have_prog("ncgen")))
        return;
    const char *nc = tpath(3, "app.nc");
    if (th_rank == 0) {
        char c[1400];
        snprintf(c, sizeof c, "cp %s/rec2.nc %s", th_dir(), nc);
        TH_CHECK(system(c) == 0, "cp rec2.nc");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    passion_ctx *ctx;
    TH_CHECK(th_init(&ctx, "memory_budget=8192") == 0, "init");
    const ttype *t = tfind("f4");
    int64_t shape[3] = {SHAPE3[0] + 3, SHAPE3[1], SHAPE3[2]};
    passion_array_spec sp;
    passion_array_spec_init(&sp, 3, shape, 4);
    sp.kind = PASSION_KIND_FLOAT;
    sp.placement = PASSION_PLACE_GLOBAL;
    passion_array *a = NULL;
    passion_file *f = NULL;
    char name[700];
    snprintf(name, sizeof name, "%s:v_f4", nc);
    int rc = passion_array_create(ctx, &sp, &a);
    if (!rc)
        rc = passion_file_open(a, name, PASSION_MODE_RDWR, &f);
    TH_CHECK(rc == 0, "open %s with 3 more records: %s (%s)", name,
             passion_strerror(rc), passion_ctx_errdetail(ctx));
    /* the new records, split over the ranks by rows of dimension 1 */
    int64_t r0 = SHAPE3[1] * th_rank / th_size,
            r1 = SHAPE3[1] * (th_rank + 1) / th_size;
    int64_t st[3] = {SHAPE3[0], r0, 0}, ct[3] = {3, r1 - r0, SHAPE3[2]},
            g[3];
    passion_section s;
    passion_section_set(&s, 3, st, ct, NULL);
    float *buf = section_buf(t, 3, &s);
    int64_t e = 0;
    for (g[0] = st[0]; g[0] < st[0] + ct[0]; g[0]++)
        for (g[1] = r0; g[1] < r1; g[1]++)
            for (g[2] = 0; g[2] < SHAPE3[2]; g[2]++)
                ref(t, row_major(3, shape, g), &buf[e++]);
    if (!rc)
        rc = passion_file_write_all(f, &s, buf, NULL, PASSION_METHOD_AUTO);
    TH_CHECK(rc == 0, "write_all the new records: %s (%s)",
             passion_strerror(rc), passion_ctx_errdetail(ctx));
    free(buf);
    if (f)
        TH_CHECK(passion_file_close(f) == 0, "close");
    passion_array_free(a);
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t bad = 0, nfill = 0;
    if (th_rank == 0) {
        const char *out = tpath(2, "dumpa.txt");
        char cmd[1400];
        snprintf(cmd, sizeof cmd, "ncdump -p 9,17 -v v_f4 %s > %s", nc, out);
        char *txt = system(cmd) == 0 ? slurp(out) : NULL;
        bad = txt ? dump_compare(txt, " v_f4 =", ';', t, 3, shape, 0) : -1;
        free(txt);
        if (dump_fill_count(nc, "v_i2", &nfill))
            bad = -1;
    }
    MPI_Bcast(&bad, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    MPI_Bcast(&nfill, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    TH_CHECK(bad == 0, "ncdump of %s: %lld wrong values of v_f4", nc,
             (long long)bad);
    TH_CHECK(nfill == 3 * SHAPE3[1] * SHAPE3[2],
             "ncdump of %s: %lld fill values in v_i2, expected %lld", nc,
             (long long)nfill, (long long)(3 * SHAPE3[1] * SHAPE3[2]));
    /* v_i2 as passion reads it: its new records hold NC_FILL_SHORT */
    snprintf(name, sizeof name, "%s:v_i2", nc);
    rc = passion_open(ctx, name, PASSION_MODE_RDONLY, NULL, &a, &f);
    TH_CHECK(rc == 0, "open %s: %s", name, passion_ctx_errdetail(ctx));
    if (!rc) {
        int64_t st2[3] = {SHAPE3[0] + 2, SHAPE3[1] - 1, SHAPE3[2] - 1},
                one[3] = {1, 1, 1};
        int16_t v = 0;
        passion_section_set(&s, 3, st2, one, NULL);
        rc = passion_file_read_all(f, &s, &v, NULL, PASSION_METHOD_AUTO);
        TH_CHECK(rc == 0 && v == -32767, "%s: the last element %d (%s)",
                 name, (int)v, passion_ctx_errdetail(ctx));
        passion_file_close(f);
        passion_array_free(a);
    }
    passion_finalize(ctx);
}

/* ---- passion_array_list against h5ls -r and ncdump -h ---- */

/* A reference entry: a name and its shape as the format's own tool says. */
typedef struct ref_entry {
    char name[256];
    char type[32]; /* ncdump's type name (netCDF only) */
    int nd;
    int64_t shape[PASSION_MAX_DIMS];
} ref_entry;

/* `tool FILE`'s output to read (pclose it), NULL if it cannot run. */
static FILE *run_on(const char *tool, const char *file)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "%s %s", tool, file);
    return popen(cmd, "r");
}

/* The datasets `h5ls -r FILE` prints ("/a/b  Dataset {3, 4}"), in its
   order (name order, depth first); -1 if h5ls failed. */
static int h5ls_datasets(const char *file, ref_entry *r, int max)
{
    char line[1024];
    FILE *p = run_on("h5ls -r", file);
    if (!p)
        return -1;
    int n = 0;
    while (fgets(line, sizeof line, p)) {
        char *ds = strstr(line, " Dataset {");
        if (!ds || n >= max)
            continue;
        ref_entry *e = &r[n++];
        memset(e, 0, sizeof *e);
        sscanf(line, "%255s", e->name);
        char *c = ds + strlen(" Dataset {");
        while (*c && *c != '}') {
            e->shape[e->nd++] = strtoll(c, &c, 10);
            if (*c == '/') /* current/max */
                while (*c && *c != ',' && *c != '}')
                    c++;
            while (*c == ',' || *c == ' ')
                c++;
        }
    }
    return pclose(p) == 0 ? n : -1;
}

/* The variables `ncdump -h FILE` declares ("  short v(d0, d1) ;"), in
   header order, shapes from its dimensions (UNLIMITED: "(N currently)"). */
static int ncdump_vars(const char *file, ref_entry *r, int max)
{
    char line[1024];
    FILE *p = run_on("ncdump -h", file);
    if (!p)
        return -1;
    char dname[32][80];
    int64_t dlen[32];
    int nd = 0, n = 0, part = 0;
    while (fgets(line, sizeof line, p)) {
        if (strstr(line, "dimensions:") == line) {
            part = 1;
            continue;
        }
        if (strstr(line, "variables:") == line) {
            part = 2;
            continue;
        }
        if (line[0] != '\t' && line[0] != ' ')
            part = 0;
        char a[64], b[256];
        if (part == 1 && nd < 32 &&
            sscanf(line, " %63s = %255[^;]", a, b) == 2) {
            snprintf(dname[nd], sizeof dname[nd], "%s", a);
            char *cur = strstr(line, "// (");
            dlen[nd++] = !strncmp(b, "UNLIMITED", 9)
                             ? (cur ? strtoll(cur + 4, NULL, 10) : 0)
                             : strtoll(b, NULL, 10);
        }
        if (part == 2 && n < max && !strchr(line, ':') &&
            sscanf(line, " %63s %255[^;]", a, b) == 2) {
            ref_entry *e = &r[n++];
            memset(e, 0, sizeof *e);
            snprintf(e->type, sizeof e->type, "%.31s", a);
            char *par = strchr(b, '(');
            if (par)
                *par = '\0';
            snprintf(e->name, sizeof e->name, "%s", b);
            for (char *c = par ? par + 1 : NULL; c && *c && *c != ')';) {
                while (*c == ' ' || *c == ',')
                    c++;
                size_t k = strcspn(c, ", )");
                for (int d = 0; d < nd; d++)
                    if (strlen(dname[d]) == k && !strncmp(dname[d], c, k))
                        e->shape[e->nd] = dlen[d];
                e->nd++;
                c += k;
            }
            if (e->nd == 0) { /* a scalar: one element */
                e->nd = 1;
                e->shape[0] = 1;
            }
        }
    }
    return pclose(p) == 0 ? n : -1;
}

/* A checksum of a list (every rank must hold the same). */
static uint64_t list_sum(const passion_array_entry *e, int n)
{
    uint64_t h = 1469598103934665603ULL;
    const unsigned char *b = (const unsigned char *)e;
    for (size_t i = 0; i < (size_t)n * sizeof *e; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

/* passion_array_list(name) in two calls (count, then entries), checked
   against the reference list by name, shape (and the same on all ranks);
   returns the entries (malloc'ed) and *n. */
static passion_array_entry *list_check(passion_ctx *ctx, const char *name,
                                       const ref_entry *ref, int nref,
                                       int *n)
{
    *n = 0;
    int cnt = -1;
    int rc = passion_array_list(ctx, name, NULL, 0, &cnt);
    TH_CHECK(rc == 0 && cnt == nref, "list %s: %d, %d arrays, the tool "
             "says %d (%s)", name, rc, cnt, nref,
             passion_ctx_errdetail(ctx));
    if (rc || cnt < 0)
        return NULL;
    passion_array_entry *e = calloc((size_t)cnt + 1, sizeof *e);
    int got = -1;
    rc = passion_array_list(ctx, name, e, cnt + 1, &got);
    TH_CHECK(rc == 0 && got == cnt, "list %s again: %d, %d", name, rc, got);
    for (int i = 0; i < got && i < nref; i++) {
        const passion_array_entry *x = &e[i];
        int same = !strcmp(x->name, ref[i].name) &&
                   x->spec.ndims == ref[i].nd;
        for (int d = 0; same && d < ref[i].nd; d++)
            same = x->spec.shape[d] == ref[i].shape[d];
        TH_CHECK(same, "list %s: entry %d is %s (%d dims, %lld x ...), the "
                 "tool says %s (%d dims, %lld x ...)", name, i, x->name,
                 x->spec.ndims, (long long)x->spec.shape[0], ref[i].name,
                 ref[i].nd, (long long)ref[i].shape[0]);
    }
    uint64_t h = list_sum(e, got), h0 = h;
    MPI_Bcast(&h0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    TH_CHECK(th_all(h == h0), "list %s: ranks hold different lists", name);
    *n = got;
    return e;
}

static void test_list(void)
{
    th_case_seed = th_seed + 6;
    passion_ctx *ctx;
    TH_CHECK(th_init(&ctx, NULL) == 0, "init");
    ref_entry ref[64];
    char name[600 + PASSION_NAME_MAX]; /* "file:object" */
    int n, nref;
    passion_array_entry *e;
#ifdef TH_HAVE_HDF5
    const char *h5 = tpath(1, "in.h5"); /* made by test_read_hdf5 */
    if (th_all(have_prog("h5ls"))) {
        nref = h5ls_datasets(h5, ref, 64);
        MPI_Bcast(&nref, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Bcast(ref, (int)sizeof ref, MPI_BYTE, 0, MPI_COMM_WORLD);
        /* 25 of /t, /fields/u, 4 of /bad */
        TH_CHECK(nref == 30, "h5ls -r lists %d datasets", nref);
        e = list_check(ctx, h5, ref, nref, &n);
        for (int i = 0; e && i < n; i++) {
            const passion_array_entry *x = &e[i];
            char tag[16], bo[4];
            if (sscanf(x->name, "/t/%15[^_]_%3s", tag, bo) == 2) {
                const ttype *t = tfind(tag);
                int be = !strcmp(bo, "be");
                TH_CHECK(t && x->status == 0 && x->spec.kind == t->kind &&
                             x->spec.elem_size == t->size &&
                             (t->size == 1 ||
                              x->spec.endian == (be ? PASSION_ENDIAN_BIG
                                                    : PASSION_ENDIAN_LITTLE))
                             && !strcmp(x->layout, "contiguous") &&
                             x->data_offset > 0 &&
                             x->data_bytes == 7 * 11 * 13 * t->size,
                         "list %s: kind %d size %lld endian %d layout %s "
                         "status %d", x->name, (int)x->spec.kind,
                         (long long)x->spec.elem_size, (int)x->spec.endian,
                         x->layout, x->status);
                continue;
            }
            static const struct {
                const char *name, *layout, *word;
                int status, kind, size;
            } want[] = {
                {"/fields/u", "contiguous", NULL, 0, PASSION_KIND_FLOAT, 8},
                {"/bad/chunked", "chunked", NULL, 0, PASSION_KIND_FLOAT,
                 4},
                {"/bad/deflate", "chunked", NULL, 0, PASSION_KIND_INT, 4},
                {"/bad/compact", "compact", "compact", PASSION_ENOTSUP,
                 PASSION_KIND_INT, 2},
                {"/bad/late", "unallocated", "no space is allocated",
                 PASSION_ENOTSUP, PASSION_KIND_FLOAT, 8},
            };
            int k = 0;
            while (k < 5 && strcmp(want[k].name, x->name))
                k++;
            TH_CHECK(k < 5, "list %s: unexpected dataset %s", h5, x->name);
            if (k == 5)
                continue;
            TH_CHECK(x->status == want[k].status &&
                         !strcmp(x->layout, want[k].layout) &&
                         (int)x->spec.kind == want[k].kind &&
                         x->spec.elem_size == want[k].size &&
                         (!want[k].word || strstr(x->why, want[k].word)) &&
                         (x->status || !strcmp(x->layout, "chunked")
                              ? x->data_offset == -1
                              : x->data_offset > 0),
                     "list %s: status %d layout %s kind %d size %lld why "
                     "'%s'", x->name, x->status, x->layout,
                     (int)x->spec.kind, (long long)x->spec.elem_size,
                     x->why);
            /* an entry that opens: passion_open agrees */
            if (!x->status) {
                passion_array *a = NULL;
                passion_file *f = NULL;
                snprintf(name, sizeof name, "%s:%s", h5, x->name);
                int rc = passion_open(ctx, name, PASSION_MODE_RDONLY,
                                      &x->spec, &a, &f);
                TH_CHECK(rc == 0, "open %s with its listed spec: %d (%s)",
                         name, rc, passion_ctx_errdetail(ctx));
                passion_file_close(f);
                passion_array_free(a);
            }
        }
        free(e);
        /* a group: the datasets below it; a dataset: itself */
        snprintf(name, sizeof name, "%s:/bad", h5);
        int k = 0;
        for (int i = 0; i < nref; i++)
            if (!strncmp(ref[i].name, "/bad/", 5))
                ref[k++] = ref[i];
        free(list_check(ctx, name, ref, k, &n));
        snprintf(name, sizeof name, "%s:/bad/compact", h5);
        for (k = 0; k < nref && strcmp(ref[k].name, "/bad/compact"); k++)
            ;
        free(list_check(ctx, name, ref + k, k < nref, &n));
        /* fewer entries than datasets: max filled, count says all */
        passion_array_entry two[3];
        memset(two, 0x5a, sizeof two);
        int cnt = 0;
        int rc = passion_array_list(ctx, h5, two, 2, &cnt);
        TH_CHECK(rc == 0 && cnt == 30 && two[2].name[0] == 0x5a &&
                     !strcmp(two[0].name, e ? "/bad/chunked" : two[0].name),
                 "list with max 2: %d, count %d", rc, cnt);
        snprintf(name, sizeof name, "%s:/no/such", h5);
        rc = passion_array_list(ctx, name, NULL, 0, &cnt);
        TH_CHECK(rc == PASSION_EINVAL && cnt == 0, "list %s: %d", name, rc);
    }
#endif
    if (th_all(have_prog("ncdump") && have_prog("ncgen"))) {
        /* made by test_read_netcdf */
        const char *files[] = {"t1.nc", "t2.nc", "t5.nc", "t5_i8.nc",
                               "rec.nc", "rec2.nc"};
        for (int fi = 0; fi < 6; fi++) {
            const char *nc = tpath(2, files[fi]);
            nref = ncdump_vars(nc, ref, 64);
            MPI_Bcast(&nref, 1, MPI_INT, 0, MPI_COMM_WORLD);
            MPI_Bcast(ref, (int)sizeof ref, MPI_BYTE, 0, MPI_COMM_WORLD);
            TH_CHECK(nref >= 2, "ncdump -h %s: %d variables", nc, nref);
            e = list_check(ctx, nc, ref, nref, &n);
            for (int i = 0; e && i < n && i < nref; i++) {
                const passion_array_entry *x = &e[i];
                const ttype *t = NULL;
                for (int k = 0; k < NT; k++)
                    if (T[k].cdl && !strcmp(T[k].cdl, ref[i].type))
                        t = &T[k];
                if (!strcmp(ref[i].type, "double"))
                    t = tfind("f8");
                int rec2 = fi == 5 && strcmp(x->name, "other");
                /* record variables, also interleaved ones, are read */
                TH_CHECK(t && x->spec.kind == t->kind &&
                             x->spec.elem_size == t->size &&
                             x->spec.endian == PASSION_ENDIAN_BIG &&
                             x->status == 0 && x->data_offset > 0 &&
                             !strcmp(x->layout, fi >= 4 && rec2
                                                    ? "record"
                                                : fi == 4 && i == 0
                                                    ? "record"
                                                    : "contiguous"),
                         "list %s: %s (ncdump: %s) kind %d size %lld "
                         "status %d layout %s", nc, x->name, ref[i].type,
                         (int)x->spec.kind, (long long)x->spec.elem_size,
                         x->status, x->layout);
            }
            free(e);
        }
        int cnt = 0;
        snprintf(name, sizeof name, "%s:other", tpath(2, "t5.nc"));
        int rc = passion_array_list(ctx, name, NULL, 0, &cnt);
        TH_CHECK(rc == 0 && cnt == 1, "list %s: %d, %d", name, rc, cnt);
        snprintf(name, sizeof name, "%s:nosuch", tpath(2, "t5.nc"));
        rc = passion_array_list(ctx, name, NULL, 0, &cnt);
        TH_CHECK(rc == PASSION_EINVAL && cnt == 0, "list %s: %d", name, rc);
    }
    /* a local set and a .npy: their one array; raw, missing, bad args */
    passion_array_spec sp;
    int64_t shape[2] = {9, 4};
    passion_array_spec_init(&sp, 2, shape, 8);
    sp.grid[0] = th_size;
    sp.dist[0] = PASSION_DIST_CYCLIC;
    sp.block[0] = 2;
    passion_array *a = NULL;
    passion_file *f = NULL;
    const char *pat = tpath(5, "ls.%d.laf");
    int rc = passion_array_create(ctx, &sp, &a);
    if (!rc)
        rc = passion_file_open(a, pat, PASSION_MODE_CREATE, &f);
    TH_CHECK(rc == 0, "local set: %d (%s)", rc, passion_ctx_errdetail(ctx));
    passion_file_close(f);
    passion_array_free(a);
    passion_array_entry one;
    int cnt = 0;
    rc = passion_array_list(ctx, pat, &one, 1, &cnt);
    TH_CHECK(rc == 0 && cnt == 1 && !strcmp(one.layout, "local") &&
                 one.spec.grid[0] == th_size && one.spec.shape[0] == 9 &&
                 one.spec.dist[0] == PASSION_DIST_CYCLIC &&
                 one.spec.block[0] == 2 && one.data_bytes == 9 * 4 * 8,
             "list a local set: %d, %d, %s (%s)", rc, cnt, one.layout,
             passion_ctx_errdetail(ctx));
    sp.grid[0] = 1;
    sp.placement = PASSION_PLACE_GLOBAL;
    sp.kind = PASSION_KIND_INT;
    sp.storage = PASSION_COL_MAJOR;
    rc = passion_array_create(ctx, &sp, &a);
    const char *npy = tpath(6, "ls.npy");
    if (!rc)
        rc = passion_file_open(a, npy, PASSION_MODE_CREATE, &f);
    passion_file_close(f);
    passion_array_free(a);
    rc = passion_array_list(ctx, npy, &one, 1, &cnt);
    TH_CHECK(rc == 0 && cnt == 1 && !one.name[0] &&
                 one.spec.kind == PASSION_KIND_INT &&
                 one.spec.storage == PASSION_COL_MAJOR &&
                 one.spec.shape[1] == 4 && one.data_offset > 0,
             "list a .npy: %d, %d (%s)", rc, cnt,
             passion_ctx_errdetail(ctx));
    snprintf(name, sizeof name, "%s:x", npy);
    rc = passion_array_list(ctx, name, &one, 1, &cnt);
    TH_CHECK(rc == PASSION_EINVAL, "list %s: %d", name, rc);
    const char *raw = tpath(7, "ls.raw");
    if (th_rank == 0) {
        FILE *fp = fopen(raw, "w");
        fputs("raw bytes, no header", fp);
        fclose(fp);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    rc = passion_array_list(ctx, raw, &one, 1, &cnt);
    TH_CHECK(rc == PASSION_EFORMAT && cnt == 0, "list a raw file: %d", rc);
    rc = passion_array_list(ctx, tpath(4, "none.h5"), &one, 1, &cnt);
    TH_CHECK(rc == PASSION_ENOENT, "list a missing file: %d", rc);
    rc = passion_array_list(ctx, npy, NULL, 1, &cnt);
    TH_CHECK(rc == PASSION_EINVAL, "list with entries NULL, max 1: %d", rc);
    rc = passion_array_list(ctx, npy, &one, -1, &cnt);
    TH_CHECK(rc == PASSION_EINVAL, "list with max -1: %d", rc);
    rc = passion_array_list(ctx, npy, &one, th_rank ? 1 : 0, &cnt);
    TH_CHECK(th_size == 1 ? rc == 0 : rc == PASSION_EMISMATCH,
             "list with max differing between ranks: %d (%s)", rc,
             passion_ctx_errdetail(ctx));
    passion_finalize(ctx);
}

/* Opening the name made from fmt fails with code on every rank and the
   detail holds `word`. */
static void open_fails(passion_ctx *ctx, int code, const char *word,
                       const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void open_fails(passion_ctx *ctx, int code, const char *word,
                       const char *fmt, ...)
{
    char name[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    passion_array *a = NULL;
    passion_file *f = NULL;
    int rc = passion_open(ctx, name, PASSION_MODE_RDONLY, NULL, &a, &f);
    const char *det = passion_ctx_errdetail(ctx);
    TH_CHECK(rc == code && !a && !f, "%s: %d, expected %d (%s)", name, rc,
             code, det);
    TH_CHECK(!word || strstr(det, word), "%s: the message '%s' lacks '%s'",
             name, det, word);
    if (!rc) {
        passion_file_close(f);
        passion_array_free(a);
    }
}

static void test_errors(void)
{
    th_case_seed = th_seed + 5;
    passion_ctx *ctx;
    TH_CHECK(th_init(&ctx, NULL) == 0, "init");
#ifdef TH_HAVE_HDF5
    const char *h5 = tpath(1, "in.h5"); /* made by test_read_hdf5 */
    /* chunked datasets are read (tests/test_h5chunk.py), not written:
       opening one read-write is refused, naming what passion does */
    for (int i = 0; i < 2; i++) {
        char nm[PATH_MAX + 32];
        snprintf(nm, sizeof nm, "%s:%s", h5,
                 i ? "/bad/deflate" : "/bad/chunked");
        passion_array *a = NULL;
        passion_file *f = NULL;
        int rc = passion_open(ctx, nm, PASSION_MODE_RDWR, NULL, &a, &f);
        const char *det = passion_ctx_errdetail(ctx);
        TH_CHECK(rc == PASSION_ENOTSUP && !a && !f &&
                     strstr(det, "read-only") && strstr(det, "chunked"),
                 "%s read-write: %d (%s)", nm, rc, det);
    }
    open_fails(ctx, PASSION_ENOTSUP, "compact", "%s:/bad/compact", h5);
    open_fails(ctx, PASSION_ENOTSUP, "no space is allocated",
               "%s:/bad/late", h5);
    open_fails(ctx, PASSION_EINVAL, "not a dataset", "%s:/bad", h5);
    open_fails(ctx, PASSION_EINVAL, "no such dataset", "%s:/no/such", h5);
    /* a spec that disagrees with the file */
    passion_array_spec lay;
    memset(&lay, 0, sizeof lay);
    int64_t wrong[2] = {40, 34};
    passion_array_spec_init(&lay, 2, wrong, 8);
    lay.placement = PASSION_PLACE_GLOBAL;
    passion_array *a = NULL;
    passion_file *f = NULL;
    char name[600];
    snprintf(name, sizeof name, "%s:/fields/u", h5);
    int rc = passion_open(ctx, name, PASSION_MODE_RDONLY, &lay, &a, &f);
    TH_CHECK(rc == PASSION_EFORMAT, "shape mismatch: %d (%s)", rc,
             passion_ctx_errdetail(ctx));
    if (!rc) {
        passion_file_close(f);
        passion_array_free(a);
    }
#endif
    if (th_all(have_prog("ncgen"))) {
        /* a record variable while numrecs is STREAMING (CDF-5: 8 bytes
           of ones at byte 4) */
        const char *str = tpath(4, "streaming.nc");
        if (th_rank == 0) {
            char c[1200];
            snprintf(c, sizeof c,
                     "cp %s/rec2.nc %s && printf '\\377\\377\\377\\377"
                     "\\377\\377\\377\\377' | dd of=%s bs=1 seek=4 "
                     "conv=notrunc status=none",
                     th_dir(), str, str);
            TH_CHECK(system(c) == 0, "streaming");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        open_fails(ctx, PASSION_ENOTSUP, "STREAMING", "%s:v_f4", str);
        open_fails(ctx, PASSION_EINVAL, "nosuch", "%s/t5.nc:nosuch",
                   th_dir());
        /* a truncated header */
        const char *cut = tpath(4, "cut.nc");
        if (th_rank == 0) {
            char c[1200];
            snprintf(c, sizeof c, "head -c 200 %s/t5.nc > %s", th_dir(),
                     cut);
            TH_CHECK(system(c) == 0, "head");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        open_fails(ctx, PASSION_EFORMAT, "netCDF: ", "%s:v_f8", cut);
        /* data past the end of the file */
        if (th_rank == 0) {
            char c[1200];
            snprintf(c, sizeof c, "cp %s/t2.nc %s && truncate -s -100 %s",
                     th_dir(), cut, cut);
            TH_CHECK(system(c) == 0, "truncate");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        open_fails(ctx, PASSION_EFORMAT, "past the end", "%s:v_f8", cut);
    }
    passion_finalize(ctx);
}

int main(int argc, char **argv)
{
    static CU_TestInfo read_tests[] = {
        {"HDF5 library's files, every type and method", test_read_hdf5},
        {"ncgen's CDF-1/2/5 files, every type and method",
         test_read_netcdf},
        CU_TEST_INFO_NULL};
    static CU_TestInfo create_tests[] = {
        {"create HDF5, read by h5dump", test_create_hdf5},
        {"create netCDF CDF-5/2/1, read by ncdump", test_create_netcdf},
        {"append netCDF records (fill, numrecs), read by ncdump",
         test_append_netcdf},
        CU_TEST_INFO_NULL};
    static CU_TestInfo err_tests[] = {
        {"layouts and headers passion refuses", test_errors},
        {"passion_array_list against h5ls -r and ncdump -h", test_list},
        CU_TEST_INFO_NULL};
    static CU_SuiteInfo suites[] = {
        {"read", NULL, NULL, NULL, NULL, read_tests},
        {"create", NULL, NULL, NULL, NULL, create_tests},
        {"errors", NULL, NULL, NULL, NULL, err_tests},
        CU_SUITE_INFO_NULL};
    return th_main(argc, argv, suites);
}
