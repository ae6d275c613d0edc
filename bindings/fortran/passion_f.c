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
    fs->kind = 0;
    fs->endian = 0;
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

/* PASSION_EINVAL for an ndims or an enumeration value out of range (the
   narrowing to int must not wrap into a valid value) */
static int spec_from_f(const passion_f_spec *fs, passion_array_spec *s)
{
    if (fs->ndims < 1 || fs->ndims > PASSION_MAX_DIMS)
        return PASSION_EINVAL;
    int64_t shape[PASSION_MAX_DIMS];
    for (int d = 0; d < PASSION_MAX_DIMS; d++)
        shape[d] = fs->shape[d];
    int rc = passion_array_spec_init(s, (int)fs->ndims, shape, fs->elem_size);
    if (rc)
        return rc;
    if (fs->storage < 0 || fs->storage > PASSION_ORDER_CUSTOM ||
        fs->placement < 0 || fs->placement > PASSION_PLACE_PARTITIONED)
        return PASSION_EINVAL;
    s->storage = (passion_storage)fs->storage;
    s->placement = (passion_placement)fs->placement;
    s->header_bytes = fs->header_bytes;
    for (int d = 0; d < PASSION_MAX_DIMS; d++) {
        if (fs->grid[d] < 0 || fs->grid[d] > 1 << 30 ||
            fs->order[d] < -1 || fs->order[d] > PASSION_MAX_DIMS ||
            fs->dist[d] < 0 || fs->dist[d] > PASSION_DIST_COLLAPSED)
            return PASSION_EINVAL;
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
    int rc = spec_from_f(fs, &s);
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

size_t passion_f_strlen(const char *s)
{
    return s ? strlen(s) : 0;
}

/* the Fortran mirror type(passion_counters) checks its size against this */
size_t passion_f_counters_size(void)
{
    return sizeof(passion_counters);
}
