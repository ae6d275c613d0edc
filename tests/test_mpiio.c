/*
 * test_mpiio: a program written only against MPI-IO, run by
 * tests/mpiio_compare.py once on plain MPI and once through
 * libpassion_mpiio; the script compares the files it writes and the
 * buffers it reads (reads.<rank>) byte for byte.
 *
 * Usage: test_mpiio DIR SEED [errors]. Every rank draws the same random shapes from
 * SEED. Cases: subarray views in C and Fortran order (on a new file, and
 * with holes on a file filled beforehand; with header displacements), interleaved vector views, each
 * written collectively, read back across ranks collectively and
 * independently, rewritten independently (individual and explicit
 * offsets) and read after write across ranks; then accesses the layer
 * passes through (an indexed irregular filetype, a partial filetype, a
 * vector memory type, a file opened with the info key
 * passion_enable=false). Each
 * rank checks what it reads; the exit status is 1 when any rank found a
 * difference. With "errors", only a collective write whose error class
 * and error handler calls are printed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static int P, me, fails;
static FILE *rec;
static uint64_t rng;
static char dir[512];
static MPI_Info open_info = MPI_INFO_NULL; /* info of the files created */

static int rnd(int n) /* 0 .. n-1, the same on every rank */
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (int)((rng >> 33) % (uint64_t)n);
}

static void record(const void *p, size_t n)
{
    if (fwrite(p, 1, n, rec) != n)
        fails++;
}

static void record_status(MPI_Status *st)
{
    int n[3] = {-1, -1, -1};
    MPI_Get_count(st, MPI_DOUBLE, &n[0]);
    MPI_Get_count(st, MPI_BYTE, &n[1]);
    MPI_Get_elements(st, MPI_DOUBLE, &n[2]);
    record(n, sizeof n);
}

static MPI_File file_create(const char *name)
{
    char path[700];
    MPI_File fh;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (me == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                      open_info, &fh) != MPI_SUCCESS) {
        fails++;
        return MPI_FILE_NULL;
    }
    return fh;
}

/* Rank 0 writes a byte pattern over the first n bytes (the file's default
 * view): the holes the cases leave then hold defined data, the same in
 * every run (MPI leaves never-written bytes undefined, and a collective
 * write may fill them with whatever its read-modify-write buffer held). */
static void prefill(MPI_File fh, int n)
{
    unsigned char *p = malloc((size_t)n);
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 7 + 3);
    if (me == 0)
        MPI_File_write_at(fh, 0, p, n, MPI_BYTE, MPI_STATUS_IGNORE);
    free(p);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
}

static void check(const double *got, const double *want, int n,
                  const char *what)
{
    for (int i = 0; i < n; i++)
        if (got[i] != want[i]) {
            fprintf(stderr, "rank %d: %s: element %d is %g, expected %g\n",
                    me, what, i, got[i], want[i]);
            fails++;
            return;
        }
}

/* Record the file's size, close it, free the case's buffers. */
static void case_end(MPI_File fh, double *w, double *want, double *got)
{
    MPI_Offset size = 0;
    MPI_File_get_size(fh, &size);
    record(&size, sizeof size);
    MPI_File_close(&fh);
    free(w);
    free(want);
    free(got);
}

static void sync_all(MPI_File fh)
{
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
}

/* ------------------------------------------------------ subarray views */

typedef struct box {
    int nd, order;
    int sizes[3], sub[3], starts[3];
} box;

/* Rank r's box: the slowest dimension split among the ranks, the others
 * whole or (holes) a random part. */
static void boxes_make(box *b, int nd, int order, int holes)
{
    int slow = order == MPI_ORDER_C ? 0 : nd - 1, extra, cut = 0;
    box base = {.nd = nd, .order = order};
    for (int d = 0; d < nd; d++)
        base.sizes[d] = d == slow ? P + rnd(5) : 1 + rnd(6);
    extra = base.sizes[slow] - P;
    for (int r = 0; r < P; r++) {
        int take = 1 + (r == P - 1 ? extra : rnd(extra + 1));
        extra -= take - 1;
        b[r] = base;
        for (int d = 0; d < nd; d++) {
            if (d == slow) {
                b[r].starts[d] = cut;
                b[r].sub[d] = take;
            } else if (holes && base.sizes[d] > 1) {
                b[r].starts[d] = rnd(base.sizes[d]);
                b[r].sub[d] = 1 + rnd(base.sizes[d] - b[r].starts[d]);
            } else {
                b[r].starts[d] = 0;
                b[r].sub[d] = base.sizes[d];
            }
        }
        cut += take;
    }
}

static int box_elems(const box *b)
{
    int n = 1;
    for (int d = 0; d < b->nd; d++)
        n *= b->sub[d];
    return n;
}

/* The box's values in storage order: tag plus the array's linear index. */
static void box_values(const box *b, double tag, double *v)
{
    int idx[3] = {0, 0, 0}, n = box_elems(b);
    for (int i = 0; i < n; i++) {
        long lin = 0;
        for (int k = 0; k < b->nd; k++) {
            int d = b->order == MPI_ORDER_C ? k : b->nd - 1 - k;
            lin = lin * b->sizes[d] + b->starts[d] + idx[d];
        }
        v[i] = tag + (double)lin;
        for (int k = b->nd - 1; k >= 0; k--) { /* next, fastest first */
            int d = b->order == MPI_ORDER_C ? k : b->nd - 1 - k;
            if (++idx[d] < b->sub[d])
                break;
            idx[d] = 0;
        }
    }
}

static MPI_Datatype box_type(const box *b)
{
    MPI_Datatype t;
    MPI_Type_create_subarray(b->nd, b->sizes, b->sub, b->starts, b->order,
                             MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
}

static void box_view(MPI_File fh, const box *b, MPI_Offset disp)
{
    MPI_Datatype t = box_type(b);
    MPI_File_set_view(fh, disp, MPI_DOUBLE, t, "native", MPI_INFO_NULL);
    MPI_Type_free(&t);
}

static void case_box(const char *name, int nd, int order, int holes,
                     MPI_Offset disp, double tag)
{
    box b[64];
    int nb = (me + 1) % P, n, m;
    double *w, *want, *got;
    MPI_Status st;
    MPI_Offset pos = -1;
    MPI_File fh = file_create(name);
    boxes_make(b, nd, order, holes);
    if (holes) /* and past the array's end */
        prefill(fh, (int)disp + 8 * b[0].sizes[0] * b[0].sizes[1] *
                        (nd > 2 ? b[0].sizes[2] : 1) + 24);
    n = box_elems(&b[me]);
    m = box_elems(&b[nb]);
    w = malloc(sizeof(double) * (size_t)n);
    want = malloc(sizeof(double) * (size_t)(n > m ? n : m));
    got = malloc(sizeof(double) * (size_t)(n > m ? n : m));
    /* collective write, collective read of the neighbour's box */
    box_values(&b[me], tag, w);
    box_view(fh, &b[me], disp);
    MPI_File_write_all(fh, w, n, MPI_DOUBLE, &st);
    record_status(&st);
    box_view(fh, &b[nb], disp);
    MPI_File_read_all(fh, got, m, MPI_DOUBLE, &st);
    record_status(&st);
    box_values(&b[nb], tag, want);
    check(got, want, m, "read_all of the neighbour's box");
    record(got, sizeof(double) * (size_t)m);
    /* own box again, independently at offset 0 and collectively */
    box_view(fh, &b[me], disp);
    MPI_File_read_at(fh, 0, got, n, MPI_DOUBLE, &st);
    record_status(&st);
    check(got, w, n, "read_at of the own box");
    MPI_File_read_at_all(fh, 0, got, n, MPI_DOUBLE, &st);
    check(got, w, n, "read_at_all of the own box");
    record(got, sizeof(double) * (size_t)n);
    /* independent rewrite through the individual pointer */
    box_values(&b[me], tag + 0.5, w);
    MPI_File_write(fh, w, n, MPI_DOUBLE, &st);
    record_status(&st);
    MPI_File_get_position(fh, &pos);
    record(&pos, sizeof pos);
    sync_all(fh);
    box_view(fh, &b[nb], disp);
    MPI_File_read(fh, got, m, MPI_DOUBLE, &st);
    box_values(&b[nb], tag + 0.5, want);
    check(got, want, m, "read after the neighbour's independent write");
    record(got, sizeof(double) * (size_t)m);
    /* collective rewrite at offset 0, read back by the neighbour */
    box_view(fh, &b[me], disp);
    box_values(&b[me], tag + 0.25, w);
    MPI_File_write_at_all(fh, 0, w, n, MPI_DOUBLE, &st);
    box_view(fh, &b[nb], disp);
    MPI_File_read_at_all(fh, 0, got, m, MPI_DOUBLE, &st);
    box_values(&b[nb], tag + 0.25, want);
    check(got, want, m, "read_at_all after write_at_all");
    case_end(fh, w, want, got);
}

/* ------------------------------------------------------- vector views */

static void vector_view(MPI_File fh, int count, int bl, int r)
{
    MPI_Datatype t;
    MPI_Type_vector(count, bl, P * bl, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    MPI_File_set_view(fh, (MPI_Offset)r * bl * (MPI_Offset)sizeof(double),
                      MPI_DOUBLE, t, "native", MPI_INFO_NULL);
    MPI_Type_free(&t);
}

static void vector_values(int count, int bl, int r, double tag, double *v)
{
    for (int i = 0; i < count; i++)
        for (int j = 0; j < bl; j++)
            v[i * bl + j] = tag + i * P * bl + r * bl + j;
}

static void case_vector(const char *name, double tag)
{
    int count = 1 + rnd(6), bl = 1 + rnd(3), n = count * bl;
    int nb = (me + 1) % P;
    double *w = malloc(sizeof(double) * (size_t)n);
    double *want = malloc(sizeof(double) * (size_t)n);
    double *got = malloc(sizeof(double) * (size_t)n);
    MPI_Status st;
    MPI_File fh = file_create(name);
    MPI_Datatype row;
    vector_values(count, bl, me, tag, w);
    vector_view(fh, count, bl, me);
    /* memory as `count` rows of a contiguous type */
    MPI_Type_contiguous(bl, MPI_DOUBLE, &row);
    MPI_Type_commit(&row);
    MPI_File_write_all(fh, w, count, row, &st);
    MPI_Type_free(&row);
    record_status(&st);
    vector_view(fh, count, bl, nb);
    MPI_File_read_all(fh, got, n, MPI_DOUBLE, &st);
    record_status(&st);
    vector_values(count, bl, nb, tag, want);
    check(got, want, n, "vector read_all of the neighbour's");
    record(got, sizeof(double) * (size_t)n);
    vector_view(fh, count, bl, me);
    vector_values(count, bl, me, tag + 0.5, w);
    MPI_File_write_at(fh, 0, w, n, MPI_DOUBLE, &st);
    record_status(&st);
    sync_all(fh);
    vector_view(fh, count, bl, nb);
    MPI_File_read_at(fh, 0, got, n, MPI_DOUBLE, &st);
    vector_values(count, bl, nb, tag + 0.5, want);
    check(got, want, n, "vector read_at after the neighbour's write_at");
    record(got, sizeof(double) * (size_t)n);
    case_end(fh, w, want, got);
}

/* ---------------------------------------------------- passed through */

/* An indexed filetype (elements 0, 2, 3 of each rank's four), then a
 * subarray view accessed for all but one element: both pass through. */
static void case_pass(const char *name, double tag)
{
    int len[2] = {1, 2}, disp[2] = {0, 2}, nb = (me + 1) % P;
    double w[3], want[3], got[3];
    MPI_Datatype t;
    MPI_Status st;
    MPI_Offset size = 0;
    MPI_File fh = file_create(name);
    box b[64];
    double *bw, *bg;
    int n;
    prefill(fh, 4096);
    for (int i = 0; i < 3; i++)
        w[i] = tag + me * 4 + (i ? i + 1 : 0);
    MPI_Type_indexed(2, len, disp, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    MPI_File_set_view(fh, (MPI_Offset)me * 4 * 8, MPI_DOUBLE, t, "native",
                      MPI_INFO_NULL);
    MPI_File_write_all(fh, w, 3, MPI_DOUBLE, &st);
    record_status(&st);
    MPI_File_set_view(fh, (MPI_Offset)nb * 4 * 8, MPI_DOUBLE, t, "native",
                      MPI_INFO_NULL);
    MPI_File_read_all(fh, got, 3, MPI_DOUBLE, &st);
    for (int i = 0; i < 3; i++)
        want[i] = tag + nb * 4 + (i ? i + 1 : 0);
    check(got, want, 3, "indexed read_all of the neighbour's");
    record(got, sizeof got);
    MPI_Type_free(&t);
    /* a subarray view, accessed for all but its last element */
    boxes_make(b, 2, MPI_ORDER_C, 0);
    n = box_elems(&b[me]);
    bw = malloc(sizeof(double) * (size_t)n);
    bg = malloc(sizeof(double) * (size_t)n);
    box_values(&b[me], tag, bw);
    box_view(fh, &b[me], 0);
    MPI_File_write_all(fh, bw, n - 1, MPI_DOUBLE, &st);
    record_status(&st);
    MPI_File_read_at_all(fh, 0, bg, n - 1, MPI_DOUBLE, &st);
    check(bg, bw, n - 1, "part of a subarray");
    record(bg, sizeof(double) * (size_t)(n - 1));
    /* the whole box from every other double of memory (a vector type) */
    {
        double *spread = calloc(2 * (size_t)n, sizeof(double));
        MPI_Datatype every2;
        for (int i = 0; i < n; i++)
            spread[2 * i] = bw[i] + 0.5;
        MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &every2);
        MPI_Type_commit(&every2);
        MPI_File_write_at_all(fh, 0, spread, 1, every2, &st);
        record_status(&st);
        MPI_File_read_at_all(fh, 0, bg, n, MPI_DOUBLE, &st);
        for (int i = 0; i < n; i++)
            bw[i] += 0.5;
        check(bg, bw, n, "a box written from a vector memory type");
        record(bg, sizeof(double) * (size_t)n);
        MPI_Type_free(&every2);
        free(spread);
    }
    MPI_File_get_size(fh, &size);
    record(&size, sizeof size);
    MPI_File_close(&fh);
    free(bw);
    free(bg);
}

/* ------------------------------------------- views built per rank */

/* A view of rank r: its committed filetype (etype MPI_DOUBLE) and
 * displacement. The cases below draw their shapes before the case, the
 * same on every rank. */
typedef MPI_Datatype (*view_fn)(int r, MPI_Offset *disp);

static int view_of(MPI_File fh, view_fn f, int r)
{
    MPI_Offset disp = 0;
    MPI_Datatype t = f(r, &disp);
    int size = 0;
    MPI_Type_size(t, &size);
    if (fh != MPI_FILE_NULL)
        MPI_File_set_view(fh, disp, MPI_DOUBLE, t, "native", MPI_INFO_NULL);
    MPI_Type_free(&t);
    return size / 8;
}

static void tagged(double *v, int n, double tag, int r)
{
    for (int i = 0; i < n; i++)
        v[i] = tag + r * 100000.0 + i;
}

/* Rank r writes tiles filetypes' worth through its view (collectively,
 * then independently, then (tiles > 1) one filetype per call through the
 * individual pointer); after each, the neighbour's data are read through
 * the neighbour's view and checked; reads and statuses recorded. */
static void case_typed(const char *name, view_fn f, int tiles, double tag,
                       int fill)
{
    int nb = (me + 1) % P, n = view_of(MPI_FILE_NULL, f, me);
    int m = view_of(MPI_FILE_NULL, f, nb), k = (n > m ? n : m) * tiles + 1;
    double *w = malloc(sizeof(double) * (size_t)k);
    double *want = malloc(sizeof(double) * (size_t)k);
    double *got = malloc(sizeof(double) * (size_t)k);
    MPI_Status st;
    MPI_Offset pos = -1;
    MPI_File fh = file_create(name);
    if (fill)
        prefill(fh, fill);
    view_of(fh, f, me);
    tagged(w, n * tiles, tag, me);
    MPI_File_write_all(fh, w, n * tiles, MPI_DOUBLE, &st);
    record_status(&st);
    sync_all(fh);
    view_of(fh, f, nb);
    MPI_File_read_all(fh, got, m * tiles, MPI_DOUBLE, &st);
    record_status(&st);
    tagged(want, m * tiles, tag, nb);
    check(got, want, m * tiles, name);
    record(got, sizeof(double) * (size_t)(m * tiles));
    view_of(fh, f, me);
    tagged(w, n * tiles, tag + 0.5, me);
    MPI_File_write_at(fh, 0, w, n * tiles, MPI_DOUBLE, &st);
    record_status(&st);
    sync_all(fh);
    view_of(fh, f, nb);
    MPI_File_read_at(fh, 0, got, m * tiles, MPI_DOUBLE, &st);
    tagged(want, m * tiles, tag + 0.5, nb);
    check(got, want, m * tiles, name);
    record(got, sizeof(double) * (size_t)(m * tiles));
    if (tiles > 1) {
        view_of(fh, f, me);
        tagged(w, n * tiles, tag + 0.25, me);
        for (int j = 0; j < tiles; j++)
            MPI_File_write(fh, w + j * n, n, MPI_DOUBLE, &st);
        MPI_File_get_position(fh, &pos);
        record(&pos, sizeof pos);
        sync_all(fh);
        view_of(fh, f, nb);
        tagged(want, m * tiles, tag + 0.25, nb);
        MPI_File_read_at_all(fh, m, got, m * (tiles - 1), MPI_DOUBLE, &st);
        check(got, want + m, m * (tiles - 1), name);
        record(got, sizeof(double) * (size_t)(m * (tiles - 1)));
        MPI_File_read_at(fh, (MPI_Offset)m * (tiles - 1), got, m,
                         MPI_DOUBLE, &st);
        check(got, want + m * (tiles - 1), m, name);
        record(got, sizeof(double) * (size_t)m);
    }
    case_end(fh, w, want, got);
}

/* Nested vectors: a box [na][nb][nc] of an array [A][B][C] as an hvector
 * of vectors, rank r's at planes a0[r].., placed by the displacement;
 * resized to the whole array, it tiles. */
static struct {
    int A, B, C, a0[64], na[64], nb, nc, b0, c0, hdr, resized;
} nest;

static MPI_Datatype nested_type(int r, MPI_Offset *disp)
{
    MPI_Datatype in, t;
    MPI_Type_vector(nest.nb, nest.nc, nest.C, MPI_DOUBLE, &in);
    MPI_Type_create_hvector(nest.na[r], 1, (MPI_Aint)nest.B * nest.C * 8, in,
                            &t);
    MPI_Type_free(&in);
    if (nest.resized) {
        in = t;
        MPI_Type_create_resized(in, 0, (MPI_Aint)nest.A * nest.B * nest.C * 8,
                                &t);
        MPI_Type_free(&in);
    }
    MPI_Type_commit(&t);
    *disp = nest.hdr +
            (((MPI_Offset)nest.a0[r] * nest.B + nest.b0) * nest.C + nest.c0) * 8;
    return t;
}

static void nested_draw(int resized)
{
    int cut = 0, extra;
    nest.A = P + rnd(4);
    nest.B = 1 + rnd(5);
    nest.C = 1 + rnd(6);
    nest.nb = 1 + rnd(nest.B);
    nest.b0 = rnd(nest.B - nest.nb + 1);
    nest.nc = 1 + rnd(nest.C);
    nest.c0 = rnd(nest.C - nest.nc + 1);
    nest.hdr = 8 * rnd(3);
    nest.resized = resized;
    extra = nest.A - P;
    for (int r = 0; r < P; r++) {
        int take = 1 + (r == P - 1 ? extra : rnd(extra + 1));
        extra -= take - 1;
        nest.a0[r] = cut;
        nest.na[r] = take;
        cut += take;
    }
}

/* darray over a 2-D process grid; kind 0 block x block, 1 cyclic x
 * block, 2 cyclic(k) x none with whole blocks, 3 cyclic(k) whose last
 * block is short (passed through), 4 block-cyclic in Fortran order. */
static struct {
    int kind, g[2], ps[2], k;
} dar;

static MPI_Datatype darray_type(int r, MPI_Offset *disp)
{
    int dist[2], darg[2] = {MPI_DISTRIBUTE_DFLT_DARG,
                            MPI_DISTRIBUTE_DFLT_DARG};
    int order = MPI_ORDER_C;
    MPI_Datatype t;
    dist[0] = dar.kind == 0 ? MPI_DISTRIBUTE_BLOCK : MPI_DISTRIBUTE_CYCLIC;
    dist[1] = dar.kind == 2 || dar.kind == 3 ? MPI_DISTRIBUTE_NONE
                                              : MPI_DISTRIBUTE_BLOCK;
    if (dar.kind >= 2)
        darg[0] = dar.k;
    if (dar.kind == 4) {
        dist[1] = MPI_DISTRIBUTE_CYCLIC;
        darg[1] = dar.k;
        dist[0] = MPI_DISTRIBUTE_BLOCK;
        darg[0] = MPI_DISTRIBUTE_DFLT_DARG;
        order = MPI_ORDER_FORTRAN;
    }
    MPI_Type_create_darray(P, r, 2, dar.g, dist, darg, dar.ps, order,
                           MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    *disp = 0;
    return t;
}

static void darray_draw(int kind)
{
    dar.kind = kind;
    dar.ps[0] = dar.ps[1] = 0;
    if (kind == 2 || kind == 3) {
        dar.ps[0] = P;
        dar.ps[1] = 1;
    } else {
        MPI_Dims_create(P, 2, dar.ps);
    }
    dar.k = 1 + rnd(3);
    for (int d = 0; d < 2; d++) { /* each rank at least one element */
        int b = 1 + rnd(3);
        dar.g[d] = dar.ps[d] * b - rnd(b < dar.ps[d] ? b : dar.ps[d]);
    }
    if (kind == 2 || kind == 3) {
        dar.g[0] = P * dar.k * (1 + rnd(3));
        if (kind == 3) { /* a second, shorter block on rank 0 */
            dar.k = 2 + rnd(2);
            dar.g[0] = P * dar.k + 1;
        }
    }
    if (kind == 4)
        dar.g[1] = dar.ps[1] * dar.k * (1 + rnd(2));
}

/* indexed_block with one stride, blocks of b interleaved among the
 * ranks (0); hindexed of equal blocks, resized so that it tiles (1);
 * indexed_block at uneven displacements (2, passed through): the last of
 * 3 or more blocks one place further, which no nesting of strides gives
 * (the decoder takes offsets that repeat at nested strides, such as
 * 0, 1, 3, 4). */
static struct {
    int kind, nblk, b;
} blk;

static MPI_Datatype blocks_type(int r, MPI_Offset *disp)
{
    int dsp[16];
    MPI_Aint adr[16];
    int len[16];
    MPI_Datatype t, u;
    for (int i = 0; i < blk.nblk; i++) {
        dsp[i] = r * blk.b +
                 (i + (blk.kind == 2 && i == blk.nblk - 1)) * P * blk.b;
        adr[i] = (MPI_Aint)dsp[i] * 8;
        len[i] = blk.b;
    }
    if (blk.kind == 1) {
        MPI_Type_create_hindexed(blk.nblk, len, adr, MPI_DOUBLE, &u);
        MPI_Type_create_resized(u, 0, (MPI_Aint)P * blk.b * blk.nblk * 8, &t);
        MPI_Type_free(&u);
    } else {
        MPI_Type_create_indexed_block(blk.nblk, blk.b, dsp, MPI_DOUBLE, &t);
    }
    MPI_Type_commit(&t);
    *disp = 0;
    return t;
}

static void blocks_draw(int kind)
{
    blk.kind = kind;
    blk.nblk = (kind == 2 ? 3 : 1) + rnd(5);
    blk.b = 1 + rnd(3);
}

/* A contiguous run of b doubles resized to P runs, at displacement r runs:
 * filetypes tiling the view round-robin among the ranks. */
static int rr_b;

static MPI_Datatype roundrobin_type(int r, MPI_Offset *disp)
{
    MPI_Datatype u, t;
    MPI_Type_contiguous(rr_b, MPI_DOUBLE, &u);
    MPI_Type_create_resized(u, 0, (MPI_Aint)P * rr_b * 8, &t);
    MPI_Type_free(&u);
    MPI_Type_commit(&t);
    *disp = (MPI_Offset)r * rr_b * 8;
    return t;
}

/* A subarray of a two-double element (Fortran order), tiling. */
static box sub2[64];

static MPI_Datatype subpair_type(int r, MPI_Offset *disp)
{
    MPI_Datatype pair, t;
    MPI_Type_contiguous(2, MPI_DOUBLE, &pair);
    MPI_Type_create_subarray(sub2[r].nd, sub2[r].sizes, sub2[r].sub,
                             sub2[r].starts, sub2[r].order, pair, &t);
    MPI_Type_free(&pair);
    MPI_Type_commit(&t);
    *disp = 8;
    return t;
}

/* ------------------------------------------------------ memory types */

/* The own box written from, and the neighbour's read into, the middle
 * of a larger memory array (a subarray memory type, then a vector one):
 * served with passion's memory layout; the margins must stay as they
 * were. */
static void case_memtypes(const char *name, double tag)
{
    box b[64];
    int nb = (me + 1) % P, msz[2][2], mst[2] = {1, 1};
    double *mem[2], *v;
    MPI_Datatype mt[2];
    MPI_Status st;
    MPI_File fh = file_create(name);
    boxes_make(b, 2, MPI_ORDER_C, 1);
    prefill(fh, 16384);
    for (int k = 0; k < 2; k++) {
        const box *o = &b[k ? nb : me];
        int n = box_elems(o);
        msz[k][0] = o->sub[0] + 2;
        msz[k][1] = o->sub[1] + 3;
        mem[k] = malloc(sizeof(double) * (size_t)(msz[k][0] * msz[k][1]));
        for (int i = 0; i < msz[k][0] * msz[k][1]; i++)
            mem[k][i] = -1.0 - i;
        v = malloc(sizeof(double) * (size_t)n);
        box_values(o, tag, v);
        for (int i = 0; i < n && k == 0; i++)
            mem[0][(1 + i / o->sub[1]) * msz[0][1] + 1 + i % o->sub[1]] = v[i];
        free(v);
        MPI_Type_create_subarray(2, msz[k], (int *)o->sub, mst, MPI_ORDER_C,
                                 MPI_DOUBLE, &mt[k]);
        MPI_Type_commit(&mt[k]);
    }
    box_view(fh, &b[me], 0);
    MPI_File_write_all(fh, mem[0], 1, mt[0], &st);
    record_status(&st);
    sync_all(fh);
    box_view(fh, &b[nb], 0);
    MPI_File_read_all(fh, mem[1], 1, mt[1], &st);
    record_status(&st);
    record(mem[1], sizeof(double) * (size_t)(msz[1][0] * msz[1][1]));
    {
        int n = box_elems(&b[nb]);
        double *want = malloc(sizeof(double) * (size_t)n), *got;
        got = malloc(sizeof(double) * (size_t)n);
        box_values(&b[nb], tag, want);
        for (int i = 0; i < n; i++)
            got[i] = mem[1][(1 + i / b[nb].sub[1]) * msz[1][1] + 1 +
                            i % b[nb].sub[1]];
        check(got, want, n, "read into a subarray memory type");
        free(want);
        free(got);
    }
    /* the same box read into rows of a vector type (stride of the row) */
    MPI_Type_free(&mt[1]);
    MPI_Type_vector(b[nb].sub[0], b[nb].sub[1], msz[1][1], MPI_DOUBLE, &mt[1]);
    MPI_Type_commit(&mt[1]);
    for (int i = 0; i < msz[1][0] * msz[1][1]; i++)
        mem[1][i] = -2.0;
    MPI_File_read_at_all(fh, 0, mem[1], 1, mt[1], &st);
    record(mem[1], sizeof(double) * (size_t)(msz[1][0] * msz[1][1]));
    for (int k = 0; k < 2; k++) {
        MPI_Type_free(&mt[k]);
        free(mem[k]);
    }
    {
        MPI_Offset size = 0;
        MPI_File_get_size(fh, &size);
        record(&size, sizeof size);
    }
    MPI_File_close(&fh);
}

/* ---------------------------------------------------- modes and info */

static int handler_calls;

static void count_error(MPI_File *fh, int *code, ...)
{
    (void)fh;
    (void)code;
    handler_calls++;
}

static void record_class(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    record(&cls, sizeof cls);
}

/* MPI_MODE_DELETE_ON_CLOSE (the file is gone after close),
 * MPI_MODE_RDONLY (writes fail through the error handler, nothing
 * written) and MPI_MODE_EXCL on an existing file: the same with and
 * without the layer. */
static void case_modes(double tag)
{
    box b[64];
    char path[700];
    int n, rc, gone = 0;
    double *w, *got;
    MPI_File fh;
    MPI_Errhandler eh;
    MPI_Status st;
    boxes_make(b, 2, MPI_ORDER_C, 0);
    n = box_elems(&b[me]);
    w = malloc(sizeof(double) * (size_t)n);
    got = malloc(sizeof(double) * (size_t)n);
    box_values(&b[me], tag, w);
    snprintf(path, sizeof path, "%s/doc.dat", dir);
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR |
                  MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh);
    box_view(fh, &b[me], 0);
    MPI_File_write_all(fh, w, n, MPI_DOUBLE, &st);
    MPI_File_read_at_all(fh, 0, got, n, MPI_DOUBLE, &st);
    check(got, w, n, "delete-on-close file");
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL,
                       &fh);
    gone = rc != MPI_SUCCESS;
    if (!gone)
        MPI_File_close(&fh);
    record(&gone, sizeof gone);
    fh = file_create("ro.dat");
    box_view(fh, &b[me], 0);
    MPI_File_write_all(fh, w, n, MPI_DOUBLE, &st);
    MPI_File_close(&fh);
    snprintf(path, sizeof path, "%s/ro.dat", dir);
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    MPI_File_create_errhandler(count_error, &eh);
    MPI_File_set_errhandler(fh, eh);
    handler_calls = 0;
    box_view(fh, &b[me], 0);
    MPI_File_read_all(fh, got, n, MPI_DOUBLE, &st);
    check(got, w, n, "read-only file");
    for (int i = 0; i < n; i++)
        got[i] = -w[i];
    record_class(MPI_File_write_all(fh, got, n, MPI_DOUBLE, &st));
    record_class(MPI_File_write_at(fh, 0, got, n, MPI_DOUBLE, &st));
    record(&handler_calls, sizeof handler_calls);
    MPI_File_read_at_all(fh, 0, got, n, MPI_DOUBLE, &st);
    check(got, w, n, "read-only file after the refused writes");
    MPI_File_close(&fh);
    MPI_Errhandler_free(&eh);
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL |
                       MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    record_class(rc);
    if (rc == MPI_SUCCESS)
        MPI_File_close(&fh);
    free(w);
    free(got);
}

/* The layer's info keys: passion_method and passion_memory_budget at
 * open, MPI_File_get_info showing them (printed, not recorded: plain MPI
 * has none), an invalid method ignored, a new budget and
 * passion_enable=false through MPI_File_set_info. */
static void case_info(double tag)
{
    box b[64];
    int nb = (me + 1) % P, n, m, flag = 0;
    double *w, *want, *got;
    char v[64] = "none";
    MPI_Info info, got_info;
    MPI_Status st;
    MPI_File fh;
    boxes_make(b, 2, MPI_ORDER_C, 1);
    n = box_elems(&b[me]);
    m = box_elems(&b[nb]);
    w = malloc(sizeof(double) * (size_t)n);
    want = malloc(sizeof(double) * (size_t)m);
    got = malloc(sizeof(double) * (size_t)m);
    MPI_Info_create(&open_info);
    MPI_Info_set(open_info, "passion_method", "etp-static");
    MPI_Info_set(open_info, "passion_memory_budget", "1M");
    fh = file_create("info.dat");
    MPI_Info_free(&open_info);
    open_info = MPI_INFO_NULL;
    prefill(fh, 16384);
    MPI_File_get_info(fh, &got_info);
    MPI_Info_get(got_info, "passion_method", 60, v, &flag);
    MPI_Info_free(&got_info);
    if (me == 0)
        printf("test_mpiio info: passion_method=%s\n", flag ? v : "none");
    for (int step = 0; step < 4; step++) {
        const char *key[4] = {NULL, "passion_method", "passion_memory_budget",
                              "passion_enable"};
        const char *val[4] = {NULL, "bogus", "64K", "false"};
        if (step) {
            MPI_Info_create(&info);
            MPI_Info_set(info, key[step], val[step]);
            MPI_File_set_info(fh, info);
            MPI_Info_free(&info);
        }
        box_view(fh, &b[me], 0);
        box_values(&b[me], tag + step, w);
        MPI_File_write_all(fh, w, n, MPI_DOUBLE, &st);
        sync_all(fh);
        box_view(fh, &b[nb], 0);
        MPI_File_read_all(fh, got, m, MPI_DOUBLE, &st);
        box_values(&b[nb], tag + step, want);
        check(got, want, m, key[step] ? key[step] : "info at open");
        record(got, sizeof(double) * (size_t)m);
    }
    case_end(fh, w, want, got);
}

static void cases_typed(void)
{
    nested_draw(1);
    case_typed("nestedtiles.dat", nested_type, 2, 11000.0, 16384);
    for (int kind = 1; kind < 5; kind += 1 + (kind == 1)) { /* 1, 3, 4 */
        char name[32];
        darray_draw(kind);
        snprintf(name, sizeof name, "darray%d.dat", kind);
        case_typed(name, darray_type, 1 + (kind & 1), 12000.0 + kind, 0);
    }
    for (int kind = 0; kind < 3; kind++) {
        char name[32];
        blocks_draw(kind);
        snprintf(name, sizeof name, "blocks%d.dat", kind);
        case_typed(name, blocks_type, kind == 1 ? 3 : 1, 13000.0 + kind,
                   16384);
    }
    rr_b = 1 + rnd(3);
    case_typed("roundrobin.dat", roundrobin_type, 2 + rnd(3), 14000.0, 0);
    boxes_make(sub2, 2, MPI_ORDER_FORTRAN, 1);
    case_typed("subpair.dat", subpair_type, 2, 15000.0, 16384);
    case_memtypes("memsub.dat", 16000.0);
    case_modes(17000.0);
    case_info(18000.0);
}

/* ------------------------------------------------------------- errors */

/* A collective write through a file error handler that counts its calls
 * and returns; prints the error class the write returned (MPI_SUCCESS on
 * plain MPI; the script injects an I/O failure under the layer). */
static void case_errors(void)
{
    box b[64];
    double *w;
    int rc, cls = -1, n;
    MPI_Errhandler eh;
    MPI_File fh = file_create("errors.dat");
    MPI_File_create_errhandler(count_error, &eh);
    MPI_File_set_errhandler(fh, eh);
    boxes_make(b, 2, MPI_ORDER_C, 0);
    n = box_elems(&b[me]);
    w = malloc(sizeof(double) * (size_t)n);
    box_values(&b[me], 1.0, w);
    box_view(fh, &b[me], 0);
    rc = MPI_File_write_all(fh, w, n, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    printf("test_mpiio errors: rank %d class %s handler calls %d\n", me,
           cls == MPI_SUCCESS ? "MPI_SUCCESS"
                              : cls == MPI_ERR_IO ? "MPI_ERR_IO" : "other",
           handler_calls);
    MPI_File_close(&fh);
    MPI_Errhandler_free(&eh);
    free(w);
}

int main(int argc, char **argv)
{
    char path[700];
    unsigned long long seed;
    int all = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (argc < 3 || P > 64) {
        if (me == 0)
            fprintf(stderr, "usage: test_mpiio DIR SEED (at most 64 ranks)\n");
        MPI_Finalize();
        return 2;
    }
    snprintf(dir, sizeof dir, "%s", argv[1]);
    seed = strtoull(argv[2], NULL, 10);
    rng = seed;
    if (me == 0)
        printf("test_mpiio: seed %llu, %d ranks\n", seed, P);
    snprintf(path, sizeof path, "%s/reads.%d", dir, me);
    rec = fopen(path, "wb");
    if (rec && argc > 3 && !strcmp(argv[3], "errors")) {
        case_errors();
        fclose(rec);
    } else if (!rec) {
        fprintf(stderr, "rank %d: cannot create %s\n", me, path);
        fails++;
    } else {
        case_box("c3.dat", 3, MPI_ORDER_C, 0, 16, 1000.0);
        case_box("f3.dat", 3, MPI_ORDER_FORTRAN, 0, 0, 2000.0);
        case_box("c2holes.dat", 2, MPI_ORDER_C, 1, 8, 3000.0);
        case_box("f3holes.dat", 3, MPI_ORDER_FORTRAN, 1, 24, 4000.0);
        case_vector("vector.dat", 5000.0);
        case_pass("pass.dat", 6000.0);
        cases_typed();
        /* the layer's own off switch, an info key MPI-IO ignores */
        MPI_Info_create(&open_info);
        MPI_Info_set(open_info, "passion_enable", "false");
        case_box("disabled.dat", 2, MPI_ORDER_C, 0, 0, 7000.0);
        MPI_Info_free(&open_info);
        fclose(rec);
    }
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("test_mpiio: %s\n", all ? "FAILED" : "ok");
    MPI_Finalize();
    return all ? 1 : 0;
}
