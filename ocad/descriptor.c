/*
 * descriptor.c - the Out-of-Core Array Descriptor (thesis section 5.4.1,
 * figure 5.5): global shape, element size, storage order (row 8), processor
 * grid (row 7), distribution and block size (rows 9-10), ghost widths, and
 * the placement model; the index arithmetic of HPF's BLOCK(m) and
 * CYCLIC(m) that answers rows 1-6 for any rank.
 *
 * Invariants after ocad_spec_check: 1 <= nd <= 7; shape > 0; block[d] is
 * the effective m (BLOCK: ceil(n/P) by default, BLOCK(m) covers n; CYCLIC:
 * m >= 1); collapsed dimensions have grid 1; all byte counts fit int64.
 */
#include "ocad.h"

#include <stdlib.h>
#include <string.h>

int passion_array_spec_init(passion_array_spec *s, int ndims,
                            const int64_t *shape, int64_t elem_size)
{
    if (!s)
        return PASSION_EINVAL;
    memset(s, 0, sizeof *s);
    if (ndims < 1 || ndims > PASSION_MAX_DIMS || !shape)
        return PASSION_EINVAL;
    s->ndims = ndims;
    s->elem_size = elem_size;
    s->kind = ocad_kind_default(elem_size);
    for (int d = 0; d < ndims; d++) {
        s->shape[d] = shape[d];
        s->grid[d] = 1;
        s->order[d] = d;
    }
    return PASSION_OK;
}

/* The element type (kind, size) and byte order of in, into out. */
static int spec_type(passion_ctx *ctx, const passion_array_spec *in,
                     passion_array_spec *out)
{
    if (!ocad_type_valid(in->kind, in->elem_size)) {
        if ((int)in->kind < PASSION_KIND_BYTES ||
            (int)in->kind > PASSION_KIND_BOOL)
            return core_err(ctx, PASSION_EINVAL, "unknown kind %d",
                            (int)in->kind);
        return core_err(ctx, PASSION_EINVAL,
                        "kind %s has no %lld-byte elements (int/uint: 1 2 4 "
                        "8, float: 2 4 8 16, complex: 8 16 32, bool: 1, "
                        "bytes: 1..64)", ocad_kind_name(in->kind),
                        (long long)in->elem_size);
    }
    if ((int)in->endian < PASSION_ENDIAN_NATIVE ||
        (int)in->endian > PASSION_ENDIAN_BIG)
        return core_err(ctx, PASSION_EINVAL, "unknown endian %d",
                        (int)in->endian);
    out->kind = in->kind;
    out->endian = in->endian;
    return PASSION_OK;
}

/* The storage order of in's nd dimensions as a permutation, out->order. */
static int spec_order(passion_ctx *ctx, const passion_array_spec *in, int nd,
                      passion_array_spec *out)
{
    int seen[PASSION_MAX_DIMS] = {0};
    for (int k = 0; k < nd; k++) {
        int d;
        switch (in->storage) {
        case PASSION_ROW_MAJOR: d = k; break;
        case PASSION_COL_MAJOR: d = nd - 1 - k; break;
        case PASSION_ORDER_CUSTOM: d = in->order[k]; break;
        default:
            return core_err(ctx, PASSION_EINVAL, "unknown storage %d",
                            in->storage);
        }
        if (d < 0 || d >= nd || seen[d]++)
            return core_err(ctx, PASSION_EINVAL,
                            "order[] is not a permutation of 0..%d", nd - 1);
        out->order[k] = d;
    }
    return PASSION_OK;
}

/* The block of dimension d (n indices over g grid ranks) by its
   distribution: *block, never above n; 0 in in->block asks for the
   default (BLOCK: ceil(n / g), CYCLIC: 1). */
static int spec_block(passion_ctx *ctx, const passion_array_spec *in, int d,
                      int64_t n, int g, int64_t *block)
{
    int64_t m = in->block[d];
    if (m < 0)
        return core_err(ctx, PASSION_EINVAL, "block[%d] negative", d);
    switch (in->dist[d]) {
    case PASSION_DIST_BLOCK:
        if (m == 0)
            m = n / g + (n % g != 0); /* ceil; n + g - 1 may overflow */
        else {
            int64_t cover;
            if (core_mul(m, g, &cover) && cover < n)
                return core_err(ctx, PASSION_EINVAL,
                                "BLOCK(%lld) on %d ranks does not cover "
                                "dimension %d of size %lld",
                                (long long)m, g, d, (long long)n);
        }
        if (m > n)
            m = n;
        break;
    case PASSION_DIST_CYCLIC:
        if (m == 0)
            m = 1;
        if (m > n)
            m = n;
        break;
    case PASSION_DIST_COLLAPSED:
        if (g != 1)
            return core_err(ctx, PASSION_EINVAL,
                            "collapsed dimension %d needs grid 1, got %d", d,
                            g);
        m = n;
        break;
    default:
        return core_err(ctx, PASSION_EINVAL, "unknown distribution %d",
                        in->dist[d]);
    }
    *block = m;
    return PASSION_OK;
}

int ocad_spec_check(passion_ctx *ctx, const passion_array_spec *in,
                    passion_array_spec *out)
{
    memset(out, 0, sizeof *out); /* zero padding: the spec is hashed */
    int nd = in->ndims;
    if (nd < 1 || nd > PASSION_MAX_DIMS)
        return core_err(ctx, PASSION_EINVAL, "ndims %d not in 1..%d", nd,
                        PASSION_MAX_DIMS);
    if (in->elem_size < 1 || in->elem_size > 64)
        return core_err(ctx, PASSION_EINVAL,
                        "element size %lld not in 1..64 bytes",
                        (long long)in->elem_size);
    if ((int)in->placement < PASSION_PLACE_LOCAL ||
        (int)in->placement > PASSION_PLACE_PARTITIONED)
        return core_err(ctx, PASSION_EINVAL, "unknown placement %d",
                        (int)in->placement);
    if (!core_zero(in->reserved, sizeof in->reserved))
        return core_err(ctx, PASSION_EINVAL, "passion_array_spec: reserved "
                        "fields not zero (fill it with "
                        "passion_array_spec_init)");
    if (in->header_bytes < 0)
        return core_err(ctx, PASSION_EINVAL, "negative header_bytes");
    out->ndims = nd;
    out->elem_size = in->elem_size;
    out->placement = in->placement;
    out->header_bytes = in->header_bytes;
    out->storage = in->storage;
    int rc = spec_type(ctx, in, out);
    if (rc || (rc = spec_order(ctx, in, nd, out)))
        return rc;

    int64_t procs = 1, bytes = in->elem_size;
    for (int d = 0; d < nd; d++) {
        int64_t n = in->shape[d];
        if (n <= 0)
            return core_err(ctx, PASSION_EINVAL,
                            "shape[%d] = %lld: sizes must be positive", d,
                            (long long)n);
        out->shape[d] = n;
        if (!core_mul(bytes, n, &bytes))
            return core_err(ctx, PASSION_EOVERFLOW,
                            "global array bytes overflow 64 bits");
        int g = in->grid[d] ? in->grid[d] : 1;
        if (g < 1)
            return core_err(ctx, PASSION_EINVAL, "grid[%d] = %d", d, g);
        out->grid[d] = g;
        procs *= g;
        if (procs > (1LL << 31))
            return core_err(ctx, PASSION_EINVAL, "grid too large");
        if (in->ghost[d] < 0 || in->ghost[d] > n)
            return core_err(ctx, PASSION_EINVAL,
                            "ghost[%d] = %lld not in 0..shape", d,
                            (long long)in->ghost[d]);
        out->ghost[d] = in->ghost[d];
        out->dist[d] = in->dist[d];
        if ((rc = spec_block(ctx, in, d, n, g, &out->block[d])))
            return rc;
    }
    if (!core_add(bytes, in->header_bytes, &bytes))
        return core_err(ctx, PASSION_EOVERFLOW, "file bytes overflow 64 bits");
    if (!(procs == ctx->size ||
          (procs == 1 && in->placement == PASSION_PLACE_GLOBAL)))
        return core_err(ctx, PASSION_EINVAL,
                        "processor grid has %lld ranks, communicator %d: "
                        "set spec.grid[] so that its product is %d",
                        (long long)procs, ctx->size, ctx->size);
    return PASSION_OK;
}

void ocad_coords(const passion_array *a, int r, int *coords)
{
    for (int d = a->nd - 1; d >= 0; d--) {
        coords[d] = r % a->spec.grid[d];
        r /= a->spec.grid[d];
    }
}

int64_t ocad_local_count(const passion_array *a, int d, int p)
{
    int64_t n = a->spec.shape[d], m = a->spec.block[d];
    int64_t P = a->spec.grid[d];
    switch (a->spec.dist[d]) {
    case PASSION_DIST_BLOCK: {
        int64_t lo;
        if (!core_mul(p, m, &lo) || lo >= n)
            return 0;
        return n - lo < m ? n - lo : m;
    }
    case PASSION_DIST_CYCLIC: {
        int64_t nb = n / m + (n % m != 0); /* blocks; no overflow */
        if (nb <= p)
            return 0;
        int64_t k = (nb - 1 - p) / P + 1;
        int64_t c = k * m;
        if ((nb - 1) % P == p && n % m)
            c -= m - n % m;
        return c;
    }
    default:
        return n;
    }
}

int64_t ocad_l2g(const passion_array *a, int d, int p, int64_t l)
{
    int64_t m = a->spec.block[d], P = a->spec.grid[d];
    switch (a->spec.dist[d]) {
    case PASSION_DIST_BLOCK: return (int64_t)p * m + l;
    case PASSION_DIST_CYCLIC: return (l / m * P + p) * m + l % m;
    default: return l;
    }
}

void ocad_g2l(const passion_array *a, int d, int64_t g, int *p, int64_t *l)
{
    int64_t m = a->spec.block[d], P = a->spec.grid[d];
    switch (a->spec.dist[d]) {
    case PASSION_DIST_BLOCK:
        *p = (int)(g / m);
        *l = g % m;
        break;
    case PASSION_DIST_CYCLIC: {
        int64_t b = g / m;
        *p = (int)(b % P);
        *l = b / P * m + g % m;
        break;
    }
    default:
        *p = 0;
        *l = g;
    }
}

static int array_create_body(passion_ctx *ctx, const passion_array_spec *spec,
                             passion_array **out)
{
    if (!ctx || !out)
        return PASSION_EINVAL;
    core_enter(ctx);
    *out = NULL;
    passion_array *a = core_calloc(ctx, 1, sizeof *a);
    passion_array_spec norm;
    memset(&norm, 0, sizeof norm);
    int rc;
    if (!a)
        rc = core_err(ctx, PASSION_ENOMEM, "array descriptor");
    else if (!spec)
        rc = core_err(ctx, PASSION_EINVAL, "NULL spec");
    else
        rc = ocad_spec_check(ctx, spec, &norm);
    if (!rc) {
        a->ctx = ctx;
        a->spec = norm;
        a->nd = norm.ndims;
        a->esize = norm.elem_size;
        a->global_bytes = norm.elem_size;
        for (int d = 0; d < a->nd; d++)
            a->global_bytes *= norm.shape[d];
        /* the largest local file (largest count in every dimension) must
           fit too */
        int64_t b = a->esize;
        for (int d = 0; d < a->nd && !rc; d++) {
            int64_t mx = 0, n;
            for (int p = 0; p < norm.grid[d]; p++) {
                int64_t c = ocad_local_count(a, d, p);
                mx = c > mx ? c : mx;
            }
            int64_t g2; /* both ghosts: 2 * ghost may itself overflow */
            if (!core_mul(2, norm.ghost[d], &g2) || !core_add(mx, g2, &n) ||
                !core_mul(b, n, &b))
                rc = core_err(ctx, PASSION_EOVERFLOW,
                                  "local array bytes overflow 64 bits");
        }
    }
    rc = core_same(ctx, rc, &norm, sizeof norm, "array specs");
    if (rc) {
        core_free(ctx, a);
        return rc;
    }
    ctx->live_arrays++;
    *out = a;
    return PASSION_OK;
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_array_create(passion_ctx *ctx, const passion_array_spec *spec,
                         passion_array **out)
{
    passion_ctx *gctx = ctx;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = array_create_body(ctx, spec, out);
    core_call_end(gctx);
    return rc;
}

static int array_free_body(passion_array *a)
{
    if (!a)
        return PASSION_OK;
    core_enter(a->ctx);
    if (a->open_files > 0)
        return core_err(a->ctx, PASSION_ESTATE,
                            "passion_array_free: %lld file(s) of the array are "
                            "still open; close them first",
                            (long long)a->open_files);
    a->ctx->live_arrays--;
    core_free(a->ctx, a);
    return PASSION_OK;
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_array_free(passion_array *a)
{
    passion_ctx *gctx = a ? a->ctx : NULL;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = array_free_body(a);
    core_call_end(gctx);
    return rc;
}

const passion_array_spec *passion_array_get_spec(const passion_array *a)
{
    return a ? &a->spec : NULL;
}

static int check_rank(const passion_array *a, int r)
{
    if (!a)
        return PASSION_EINVAL;
    core_enter(a->ctx); /* the entry of every query that checks a rank */
    if (r < 0 || r >= a->ctx->size)
        return core_err(a->ctx, PASSION_ERANGE, "rank %d not in 0..%d", r,
                        a->ctx->size - 1);
    return PASSION_OK;
}

int passion_array_local_shape(const passion_array *a, int r, int64_t *shape)
{
    int rc = check_rank(a, r);
    if (rc || !shape)
        return rc ? rc : PASSION_EINVAL;
    int c[PASSION_MAX_DIMS];
    ocad_coords(a, r, c);
    for (int d = 0; d < a->nd; d++)
        shape[d] = ocad_local_count(a, d, c[d]);
    return PASSION_OK;
}

int passion_array_local_bounds(const passion_array *a, int r, int with_ghosts,
                               int64_t *lo, int64_t *hi)
{
    int rc = check_rank(a, r);
    if (rc || !lo || !hi)
        return rc ? rc : PASSION_EINVAL;
    int c[PASSION_MAX_DIMS];
    ocad_coords(a, r, c);
    for (int d = 0; d < a->nd; d++) {
        int64_t n = ocad_local_count(a, d, c[d]);
        if (n == 0) {
            lo[d] = 0;
            hi[d] = -1;
            continue;
        }
        int64_t g = with_ghosts ? a->spec.ghost[d] : 0;
        lo[d] = ocad_l2g(a, d, c[d], 0) - g;
        hi[d] = ocad_l2g(a, d, c[d], n - 1) + g;
    }
    return PASSION_OK;
}

int passion_array_local_bytes(const passion_array *a, int r, int64_t *bytes)
{
    int rc = check_rank(a, r);
    if (rc || !bytes)
        return rc ? rc : PASSION_EINVAL;
    int c[PASSION_MAX_DIMS];
    ocad_coords(a, r, c);
    int64_t b = a->esize;
    for (int d = 0; d < a->nd; d++) {
        int64_t n;
        if (!core_add(ocad_local_count(a, d, c[d]), 2 * a->spec.ghost[d], &n) ||
            !core_mul(b, n, &b))
            return PASSION_EOVERFLOW;
    }
    *bytes = b;
    return PASSION_OK;
}

int passion_array_owner(const passion_array *a, const int64_t *gidx,
                        int *rank, int64_t *lidx)
{
    if (!a || !gidx || !rank || !lidx)
        return PASSION_EINVAL;
    core_enter(a->ctx);
    int r = 0;
    for (int d = 0; d < a->nd; d++) {
        if (gidx[d] < 0 || gidx[d] >= a->spec.shape[d])
            return core_err(a->ctx, PASSION_ERANGE,
                            "global index %lld outside dimension %d (0..%lld)",
                            (long long)gidx[d], d,
                            (long long)a->spec.shape[d] - 1);
        int p;
        ocad_g2l(a, d, gidx[d], &p, &lidx[d]);
        r = r * a->spec.grid[d] + p;
    }
    *rank = r;
    return PASSION_OK;
}

int passion_array_global_index(const passion_array *a, int r,
                               const int64_t *lidx, int64_t *gidx)
{
    int rc = check_rank(a, r);
    if (rc || !lidx || !gidx)
        return rc ? rc : PASSION_EINVAL;
    int c[PASSION_MAX_DIMS];
    ocad_coords(a, r, c);
    for (int d = 0; d < a->nd; d++) {
        int64_t n = ocad_local_count(a, d, c[d]);
        if (lidx[d] < 0 || lidx[d] >= n)
            return core_err(a->ctx, PASSION_ERANGE,
                            "local index %lld outside dimension %d of rank %d "
                            "(0..%lld)", (long long)lidx[d], d, r,
                            (long long)n - 1);
        gidx[d] = ocad_l2g(a, d, c[d], lidx[d]);
    }
    return PASSION_OK;
}
