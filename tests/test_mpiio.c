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

/* ------------------------------------------------------------- errors */

static int handler_calls;

static void count_error(MPI_File *fh, int *code, ...)
{
    (void)fh;
    (void)code;
    handler_calls++;
}

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
