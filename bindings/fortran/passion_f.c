/*
 * passion_f.c - the C side of the Fortran module `passion` (passion.f90):
 * what ISO_C_BINDING alone cannot do portably.
 *  - Communicators: a Fortran handle (an INTEGER from `use mpi`, the
 *    MPI_VAL of a type(MPI_Comm) from `use mpi_f08`) becomes the C MPI_Comm
 *    with MPI_Comm_f2c, whatever MPI_Comm is in C (an int in MPICH, a
 *    pointer in Open MPI), and back with MPI_Comm_c2f.
 *  - The array spec, the slab options and the slab item are passed through
 *    flat structs of 64-bit integers defined here and mirrored in
 *    passion.f90 (passion_f_spec, passion_f_slab), so the Fortran side does
 *    not depend on the layout of passion.h's structs (enum sizes, padding,
 *    reserved space); fields are copied by name.
 * Public API only (include/passion.h); no state.
 */
#include <passion.h>
#include <string.h>

/* mirrored by type(passion_f_spec), bind(C), in passion.f90 */
typedef struct passion_f_spec {
    int64_t ndims;
    int64_t shape[PASSION_MAX_DIMS];
    int64_t elem_size;
    int64_t kind;
    int64_t endian;
    int64_t storage;
    int64_t order[PASSION_MAX_DIMS];
    int64_t grid[PASSION_MAX_DIMS];
    int64_t dist[PASSION_MAX_DIMS];
    int64_t block[PASSION_MAX_DIMS];
    int64_t ghost[PASSION_MAX_DIMS];
    int64_t placement;
    int64_t header_bytes;
} passion_f_spec;

/* mirrored by type(passion_f_slab), bind(C) */
typedef struct passion_f_slab {
    int64_t index, nslabs, start, count, dim, halo;
    int64_t shape[PASSION_MAX_DIMS];
    int64_t offset[PASSION_MAX_DIMS];
    void *in;
    void *out;
} passion_f_slab;

/* mirrored by type(c_fpart), bind(C) */
typedef struct passion_f_part {
    int64_t index, nparts;
    int64_t lo[PASSION_MAX_DIMS];
    int64_t count[PASSION_MAX_DIMS];
    int64_t shape[PASSION_MAX_DIMS];
    int64_t offset[PASSION_MAX_DIMS];
    void *in;
    void *out;
} passion_f_part;

/* the exported entry points (the library is built with hidden visibility
   only for libpassion itself; these are plain globals) */
int passion_f_init(MPI_Fint comm, const passion_options *opt,
                   passion_ctx **ctx);
MPI_Fint passion_f_ctx_comm(const passion_ctx *ctx);
int passion_f_spec_init(passion_f_spec *fs, int64_t ndims,
                        const int64_t *shape, int64_t elem_size);
int passion_f_array_create(passion_ctx *ctx, const passion_f_spec *fs,
                           passion_array **a);
int passion_f_array_get_spec(const passion_array *a, passion_f_spec *fs);
int passion_f_slab_open(passion_file *f, int64_t dim, int64_t width,
                        int64_t budget, int64_t halo, int64_t prefetch,
                        int64_t reuse, int64_t writeback, passion_file *out,
                        int64_t method, passion_slab_iter **it);
int passion_f_slab_next(passion_slab_iter *it, passion_f_slab *fs);
int passion_f_open(passion_ctx *ctx, const char *name, int64_t mode,
                   const passion_f_spec *layout, passion_array **a,
                   passion_file **f);
int passion_f_array_spec_read(passion_ctx *ctx, const char *name,
                              passion_f_spec *fs, int64_t *nfiles,
                              char *pattern, size_t len);
int passion_f_section_plan(passion_file *f, const passion_section *s,
                           int64_t op_write, int64_t method, int64_t *out,
                           double *seconds);
int passion_f_engine_get(passion_ctx *ctx, int64_t *engine);
const char *passion_f_engine_name(int64_t engine);
int passion_f_part_open(passion_file *f, int64_t dim, int64_t width,
                        int64_t budget, int64_t halo, int64_t prefetch,
                        passion_file *out, int64_t method,
                        passion_part_iter **it);
int passion_f_part_next_all(passion_part_iter *it, passion_f_part *fp);
int passion_f_alltoall(passion_ctx *ctx, const void *sendbuf, void *recvbuf,
                       int64_t count, MPI_Fint type, int64_t alg,
                       int64_t radix);
int passion_f_alltoallv(passion_ctx *ctx, const void *sendbuf,
                        const int64_t *sendcounts, const int64_t *sdispls,
                        void *recvbuf, const int64_t *recvcounts,
                        const int64_t *rdispls, MPI_Fint type, int64_t alg,
                        int64_t radix);
int passion_f_section_filetype(const passion_file *f,
                               const passion_section *s, MPI_Fint *type,
                               int64_t *disp);
int passion_f_ctx_last_method(const passion_ctx *ctx, int64_t *method,
                              double *predicted);
size_t passion_f_strlen(const char *s);
size_t passion_f_counters_size(void);

int passion_f_init(MPI_Fint comm, const passion_options *opt,
                   passion_ctx **ctx)
{
    return passion_init(MPI_Comm_f2c(comm), opt, ctx);
}

MPI_Fint passion_f_ctx_comm(const passion_ctx *ctx)
{
    return MPI_Comm_c2f(passion_ctx_comm(ctx));
}

static void spec_to_f(const passion_array_spec *s, passion_f_spec *fs)
{
    memset(fs, 0, sizeof *fs);
    fs->ndims = s->ndims;
    fs->elem_size = s->elem_size;
    fs->kind = s->kind;
    fs->endian = s->endian;
    fs->storage = s->storage;
    fs->placement = s->placement;
    fs->header_bytes = s->header_bytes;
    for (int d = 0; d < PASSION_MAX_DIMS; d++) {
        fs->shape[d] = s->shape[d];
        fs->order[d] = s->order[d];
        fs->grid[d] = s->grid[d];
        fs->dist[d] = s->dist[d];
        fs->block[d] = s->block[d];
        fs->ghost[d] = s->ghost[d];
    }
}

/* The C spec of fs, field by field (passion_array_create and passion_open
   validate the values). PASSION_EINVAL for an ndims (below min_dims) or
   an enumeration value out of range: the narrowing to int or to an enum
   must not wrap into a valid value. */
static int spec_from_f(const passion_f_spec *fs, passion_array_spec *s,
                       int min_dims)
{
    memset(s, 0, sizeof *s);
    if (fs->ndims < min_dims || fs->ndims > PASSION_MAX_DIMS ||
        fs->kind < PASSION_KIND_BYTES || fs->kind > PASSION_KIND_BOOL ||
        fs->endian < PASSION_ENDIAN_NATIVE ||
        fs->endian > PASSION_ENDIAN_BIG || fs->storage < 0 ||
        fs->storage > PASSION_ORDER_CUSTOM || fs->placement < 0 ||
        fs->placement > PASSION_PLACE_PARTITIONED)
        return PASSION_EINVAL;
    s->ndims = (int)fs->ndims;
    s->elem_size = fs->elem_size;
    s->kind = (passion_kind)fs->kind;
    s->endian = (passion_endian)fs->endian;
    s->storage = (passion_storage)fs->storage;
    s->placement = (passion_placement)fs->placement;
    s->header_bytes = fs->header_bytes;
    for (int d = 0; d < PASSION_MAX_DIMS; d++) {
        if (fs->grid[d] < 0 || fs->grid[d] > 1 << 30 ||
            fs->order[d] < -1 || fs->order[d] > PASSION_MAX_DIMS ||
            fs->dist[d] < 0 || fs->dist[d] > PASSION_DIST_COLLAPSED)
            return PASSION_EINVAL;
        s->shape[d] = fs->shape[d];
        s->order[d] = (int)fs->order[d];
        s->grid[d] = (int)fs->grid[d];
        s->dist[d] = (passion_dist)fs->dist[d];
        s->block[d] = fs->block[d];
        s->ghost[d] = fs->ghost[d];
    }
    return 0;
}

int passion_f_spec_init(passion_f_spec *fs, int64_t ndims,
                        const int64_t *shape, int64_t elem_size)
{
    passion_array_spec s;
    if (ndims < 1 || ndims > PASSION_MAX_DIMS)
        return PASSION_EINVAL;
    int rc = passion_array_spec_init(&s, (int)ndims, shape, elem_size);
    if (rc)
        return rc;
    spec_to_f(&s, fs);
    return 0;
}

int passion_f_array_create(passion_ctx *ctx, const passion_f_spec *fs,
                           passion_array **a)
{
    passion_array_spec s;
    int rc = spec_from_f(fs, &s, 1);
    if (rc) {
        /* still collective: every rank goes through the create, which
           fails on all ranks with a detail if this one is bad */
        passion_array_spec_init(&s, 0, NULL, 0);
    }
    int rc2 = passion_array_create(ctx, &s, a);
    return rc2 ? rc2 : rc;
}

int passion_f_array_get_spec(const passion_array *a, passion_f_spec *fs)
{
    const passion_array_spec *s = a ? passion_array_get_spec(a) : NULL;
    if (!s)
        return PASSION_EINVAL;
    spec_to_f(s, fs);
    return 0;
}

int passion_f_slab_open(passion_file *f, int64_t dim, int64_t width,
                        int64_t budget, int64_t halo, int64_t prefetch,
                        int64_t reuse, int64_t writeback, passion_file *out,
                        int64_t method, passion_slab_iter **it)
{
    passion_slab_opts o;
    int rc = passion_slab_opts_init(&o);
    if (rc)
        return rc;
    if (dim < -1 || dim >= PASSION_MAX_DIMS || method < 0 ||
        method > PASSION_METHOD_ETP_DYNAMIC) {
        *it = NULL;
        return PASSION_EINVAL;
    }
    o.dim = (int)dim;
    o.width = width;
    o.budget = budget;
    o.halo = halo;
    o.prefetch = prefetch != 0;
    o.reuse = reuse != 0;
    o.writeback = writeback != 0;
    o.out = out;
    o.method = (passion_method)method;
    return passion_slab_open(f, &o, it);
}

int passion_f_slab_next(passion_slab_iter *it, passion_f_slab *fs)
{
    passion_slab s;
    int rc = passion_slab_next(it, &s);
    memset(fs, 0, sizeof *fs);
    if (rc != 1)
        return rc;
    fs->index = s.index;
    fs->nslabs = s.nslabs;
    fs->start = s.start;
    fs->count = s.count;
    fs->dim = s.dim;
    fs->halo = s.halo;
    for (int d = 0; d < PASSION_MAX_DIMS; d++) {
        fs->shape[d] = s.mem.shape[d];
        fs->offset[d] = s.mem.offset[d];
    }
    fs->in = s.in;
    fs->out = s.out;
    return rc;
}

/* layout NULL or a Fortran spec in C order (ndims and elem_size may be 0:
   the file's); a bad one still takes the collective path, with a layout
   passion_open rejects on every rank */
int passion_f_open(passion_ctx *ctx, const char *name, int64_t mode,
                   const passion_f_spec *layout, passion_array **a,
                   passion_file **f)
{
    passion_array_spec lay;
    int rc = 0;
    if (layout && (rc = spec_from_f(layout, &lay, 0))) {
        memset(&lay, 0, sizeof lay);
        lay.ndims = -1;
    }
    if (mode < PASSION_MODE_RDONLY || mode > PASSION_MODE_CREATE_EXCL)
        mode = -1; /* passion_open says EINVAL, on every rank */
    int rc2 = passion_open(ctx, name, (passion_mode)mode,
                           layout ? &lay : NULL, a, f);
    return rc2 ? rc2 : rc;
}

int passion_f_array_spec_read(passion_ctx *ctx, const char *name,
                              passion_f_spec *fs, int64_t *nfiles,
                              char *pattern, size_t len)
{
    passion_array_spec s;
    int n = 0;
    memset(&s, 0, sizeof s);
    int rc = passion_array_spec_read(ctx, name, &s, &n, pattern, len);
    spec_to_f(&s, fs);
    *nfiles = n;
    return rc;
}

/* out: method, requests, bytes_file, runs */
int passion_f_section_plan(passion_file *f, const passion_section *s,
                           int64_t op_write, int64_t method, int64_t *out,
                           double *seconds)
{
    passion_plan_info info;
    memset(&info, 0, sizeof info);
    memset(out, 0, 4 * sizeof *out);
    *seconds = 0;
    if (method < PASSION_METHOD_AUTO || method > PASSION_METHOD_ETP_DYNAMIC)
        return PASSION_EINVAL;
    int rc = passion_section_plan(f, s, op_write != 0,
                                  (passion_method)method, &info);
    out[0] = info.method;
    out[1] = info.requests;
    out[2] = info.bytes_file;
    out[3] = info.runs;
    *seconds = info.seconds;
    return rc;
}

int passion_f_engine_get(passion_ctx *ctx, int64_t *engine)
{
    passion_engine e = PASSION_ENGINE_AUTO;
    int rc = passion_engine_get(ctx, &e);
    *engine = e;
    return rc;
}

const char *passion_f_engine_name(int64_t engine)
{
    if (engine < PASSION_ENGINE_AUTO || engine > PASSION_ENGINE_THREAD)
        return "unknown";
    return passion_engine_name((passion_engine)engine);
}

/* dim -1 = the slowest in storage; a bad dim or method still takes the
   collective path with options passion_part_open rejects on every rank */
int passion_f_part_open(passion_file *f, int64_t dim, int64_t width,
                        int64_t budget, int64_t halo, int64_t prefetch,
                        passion_file *out, int64_t method,
                        passion_part_iter **it)
{
    passion_part_opts o;
    int rc = passion_part_opts_init(&o);
    if (rc)
        return rc;
    int bad = dim < -1 || dim >= PASSION_MAX_DIMS ||
              method < PASSION_METHOD_AUTO ||
              method > PASSION_METHOD_ETP_DYNAMIC;
    o.dim = bad ? PASSION_MAX_DIMS : (int)dim;
    o.width = width;
    o.budget = budget;
    o.halo = halo;
    o.prefetch = prefetch != 0;
    o.out = out;
    o.method = bad ? PASSION_METHOD_ETP_DYNAMIC : (passion_method)method;
    rc = passion_part_open(f, &o, it);
    return rc ? rc : bad ? PASSION_EINVAL : 0;
}

int passion_f_part_next_all(passion_part_iter *it, passion_f_part *fp)
{
    passion_part p;
    int rc = passion_part_next_all(it, &p);
    memset(fp, 0, sizeof *fp);
    if (rc != 1)
        return rc;
    fp->index = p.index;
    fp->nparts = p.nparts;
    for (int d = 0; d < PASSION_MAX_DIMS; d++) {
        fp->lo[d] = p.lo[d];
        fp->count[d] = p.count[d];
        fp->shape[d] = p.mem.shape[d];
        fp->offset[d] = p.mem.offset[d];
    }
    fp->in = p.in;
    fp->out = p.out;
    return rc;
}

/* an algorithm or radix outside int becomes one the library rejects (on
   every rank: it compares them in its agreement) */
static passion_xchg xchg_of(int64_t alg)
{
    return alg == PASSION_XCHG_DEFAULT ||
                   (alg >= 0 && alg < 1000 &&
                    passion_xchg_name((passion_xchg)alg))
               ? (passion_xchg)alg : (passion_xchg)1000;
}

static int radix_of(int64_t radix)
{
    return radix < 0 || radix > (1 << 30) ? -1 : (int)radix;
}

int passion_f_alltoall(passion_ctx *ctx, const void *sendbuf, void *recvbuf,
                       int64_t count, MPI_Fint type, int64_t alg,
                       int64_t radix)
{
    return passion_alltoall(ctx, sendbuf, recvbuf, count, MPI_Type_f2c(type),
                            xchg_of(alg), radix_of(radix));
}

int passion_f_alltoallv(passion_ctx *ctx, const void *sendbuf,
                        const int64_t *sendcounts, const int64_t *sdispls,
                        void *recvbuf, const int64_t *recvcounts,
                        const int64_t *rdispls, MPI_Fint type, int64_t alg,
                        int64_t radix)
{
    return passion_alltoallv(ctx, sendbuf, sendcounts, sdispls, recvbuf,
                             recvcounts, rdispls, MPI_Type_f2c(type),
                             xchg_of(alg), radix_of(radix));
}

/* *type: the Fortran handle (MPI_DATATYPE_NULL's on failure) */
int passion_f_section_filetype(const passion_file *f,
                               const passion_section *s, MPI_Fint *type,
                               int64_t *disp)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Offset d = 0;
    int rc = passion_section_filetype(f, s, &t, &d);
    *type = MPI_Type_c2f(rc ? MPI_DATATYPE_NULL : t);
    *disp = rc ? 0 : (int64_t)d;
    return rc;
}

int passion_f_ctx_last_method(const passion_ctx *ctx, int64_t *method,
                              double *predicted)
{
    passion_method m = PASSION_METHOD_AUTO;
    double p = 0;
    int rc = passion_ctx_last_method(ctx, &m, &p);
    *method = m;
    *predicted = p;
    return rc;
}

size_t passion_f_strlen(const char *s)
{
    return s ? strlen(s) : 0;
}

/* the Fortran mirror type(passion_counters) checks its size against this */
size_t passion_f_counters_size(void)
{
    return sizeof(passion_counters);
}
