/*
 * bench-mpiio: one case of `bench/run mpiio`, written the way existing
 * programs are (MPI-IO, parallel HDF5 or PnetCDF; nothing of passion).
 * bench/mpiio.py runs it on plain MPI-IO (ROMIO under MPICH, OMPIO under
 * Open MPI) and with libpassion_mpiio preloaded, alternately, with the
 * same arguments, and compares the times.
 *
 * Usage: bench-mpiio --api mpiio|hdf5|pnetcdf --file PATH --shape R,C[,Z]
 *                    --dist rows|cols|blocks|cyclic|strided:S
 *                    --op read|write --reps N [--prepare]
 * A float64 array of the shape, row-major (in a raw file for mpiio, a
 * contiguous dataset "A" for hdf5, a CDF-5 variable "A" for pnetcdf).
 * Each rank's section of the array by --dist: a block of rows, a block of
 * columns, a block of a near-square grid of ranks (first two dimensions),
 * rows dealt cyclically one by one, or a block of rows with every S-th
 * column. --prepare creates the file and writes every element with
 * its value (element i holds i + 0.5), untimed. Otherwise the section is
 * read (or written, with value i + 0.5 + rep) N times, each call
 * collective and timed between barriers (the slowest rank's time), and
 * verified: a read against the formula, a write by reading the file back
 * (rank 0 reads every element with POSIX pread at the array's offset in
 * the file, netCDF's big-endian bytes swapped) after the timed calls. Prints one line:
 *   api,dist,op,procs,first_s,steady_s,steady_min_s,verified
 * steady_s: the median of calls 2..N. Exit 1 when verification fails.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>
#ifdef BENCH_HAVE_HDF5
#include <hdf5.h>
#endif
#ifdef BENCH_HAVE_PNETCDF
#include <pnetcdf.h>
#endif

static int P, me;

typedef struct sect {
    int nd;
    int64_t shape[3];
    int64_t start[3], count[3], stride[3];
} sect;

typedef struct opts {
    const char *api, *file, *dist, *op;
    int reps, prepare;
    sect s;
} opts;

static void die(const char *msg)
{
    if (me == 0)
        fprintf(stderr, "bench-mpiio: %s\n", msg);
    MPI_Finalize();
    exit(2);
}

/* Splits n into P near-equal blocks: block r's start and length. */
static void block_of(int64_t n, int parts, int r, int64_t *s, int64_t *c)
{
    *s = n * r / parts;
    *c = n * (r + 1) / parts - *s;
}

static void section_of(opts *o)
{
    sect *s = &o->s;
    for (int d = 0; d < s->nd; d++) {
        s->start[d] = 0;
        s->count[d] = s->shape[d];
        s->stride[d] = 1;
    }
    const char *dist = o->dist;
    if (!strcmp(dist, "rows")) {
        block_of(s->shape[0], P, me, &s->start[0], &s->count[0]);
    } else if (!strcmp(dist, "cols")) {
        block_of(s->shape[1], P, me, &s->start[1], &s->count[1]);
    } else if (!strcmp(dist, "blocks")) {
        int pr = 1;
        while ((pr + 1) * (pr + 1) <= P)
            pr++;
        while (P % pr)
            pr--;
        int pc = P / pr;
        block_of(s->shape[0], pr, me / pc, &s->start[0], &s->count[0]);
        block_of(s->shape[1], pc, me % pc, &s->start[1], &s->count[1]);
    } else if (!strcmp(dist, "cyclic")) {
        /* rows dealt one by one: rows me, me + P, ... (a strided section) */
        s->start[0] = me;
        s->stride[0] = P;
        s->count[0] = me < s->shape[0] ? (s->shape[0] - 1 - me) / P + 1 : 0;
    } else if (!strncmp(dist, "strided:", 8)) {
        int64_t k = atoll(dist + 8);
        block_of(s->shape[0], P, me, &s->start[0], &s->count[0]);
        s->stride[1] = k > 0 ? k : 1;
        s->count[1] = (s->shape[1] - 1) / s->stride[1] + 1;
    } else {
        die("unknown --dist");
    }
}

static int64_t sect_elems(const sect *s)
{
    int64_t n = 1;
    for (int d = 0; d < s->nd; d++)
        n *= s->count[d];
    return n;
}

/* The row-major index of the section's k-th element. */
static int64_t sect_index(const sect *s, int64_t k)
{
    int64_t lin = 0, rem = k, mul = 1, idx[3];
    for (int d = s->nd - 1; d >= 0; d--) {
        idx[d] = s->start[d] + (rem % s->count[d]) * s->stride[d];
        rem /= s->count[d];
    }
    for (int d = s->nd - 1; d >= 0; d--) {
        lin += idx[d] * mul;
        mul *= s->shape[d];
    }
    return lin;
}

/* ---------------------------------------------------------------- MPI-IO */

/* The section as a filetype: nested hvectors from the innermost dimension
   (the view's displacement is the section's first element). */
static MPI_Datatype mpiio_filetype(const sect *s, MPI_Offset *disp)
{
    MPI_Datatype t = MPI_DOUBLE, n;
    int64_t rowbytes = 8, first = 0, mul = 1;
    for (int d = s->nd - 1; d >= 0; d--) {
        MPI_Type_create_hvector((int)s->count[d], 1,
                                (MPI_Aint)(s->stride[d] * rowbytes), t, &n);
        if (t != MPI_DOUBLE)
            MPI_Type_free(&t);
        t = n;
        first += s->start[d] * mul;
        mul *= s->shape[d];
        rowbytes *= s->shape[d];
    }
    MPI_Type_commit(&t);
    *disp = first;
    return t;
}

static double mpiio_call(const opts *o, double *buf, int64_t n, int write,
                         MPI_File fh)
{
    MPI_Status st;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int rc = write ? MPI_File_write_at_all(fh, 0, buf, (int)n, MPI_DOUBLE, &st)
                   : MPI_File_read_at_all(fh, 0, buf, (int)n, MPI_DOUBLE, &st);
    if (rc != MPI_SUCCESS)
        die("MPI-IO call failed");
    (void)o;
    return MPI_Wtime() - t0;
}

static MPI_File mpiio_open(const opts *o, int create)
{
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, o->file,
                      create ? MPI_MODE_CREATE | MPI_MODE_RDWR
                             : MPI_MODE_RDWR,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        die("cannot open the file");
    return fh;
}

static int64_t mpiio_offset(const opts *o)
{
    (void)o;
    return 0;
}

/* ------------------------------------------------------------------ HDF5 */
#ifdef BENCH_HAVE_HDF5
typedef struct h5 {
    hid_t file, dset, fspace, mspace, dxpl;
} h5;

static h5 h5_open(const opts *o, int create)
{
    h5 h;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hsize_t dims[3];
    for (int d = 0; d < o->s.nd; d++)
        dims[d] = (hsize_t)o->s.shape[d];
    if (create) {
        h.file = H5Fcreate(o->file, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
        hid_t sp = H5Screate_simple(o->s.nd, dims, NULL);
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
        h.dset = H5Dcreate2(h.file, "A", H5T_IEEE_F64LE, sp, H5P_DEFAULT,
                            dcpl, H5P_DEFAULT);
        H5Pclose(dcpl);
        H5Sclose(sp);
    } else {
        h.file = H5Fopen(o->file, H5F_ACC_RDWR, fapl);
        h.dset = H5Dopen2(h.file, "A", H5P_DEFAULT);
    }
    H5Pclose(fapl);
    if (h.file < 0 || h.dset < 0)
        die("HDF5 cannot open the file");
    h.fspace = H5Dget_space(h.dset);
    hsize_t st[3], ct[3], sd[3];
    for (int d = 0; d < o->s.nd; d++) {
        st[d] = (hsize_t)o->s.start[d];
        ct[d] = (hsize_t)o->s.count[d];
        sd[d] = (hsize_t)o->s.stride[d];
    }
    hsize_t n = (hsize_t)sect_elems(&o->s);
    if (n)
        H5Sselect_hyperslab(h.fspace, H5S_SELECT_SET, st, sd, ct, NULL);
    else
        H5Sselect_none(h.fspace);
    hsize_t mn = n ? n : 1;
    h.mspace = H5Screate_simple(1, &mn, NULL);
    if (!n)
        H5Sselect_none(h.mspace);
    h.dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(h.dxpl, H5FD_MPIO_COLLECTIVE);
    return h;
}

static void h5_close(h5 *h)
{
    H5Pclose(h->dxpl);
    H5Sclose(h->mspace);
    H5Sclose(h->fspace);
    H5Dclose(h->dset);
    H5Fclose(h->file);
}

static double h5_call(h5 *h, double *buf, int write)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    herr_t rc = write ? H5Dwrite(h->dset, H5T_NATIVE_DOUBLE, h->mspace,
                                 h->fspace, h->dxpl, buf)
                      : H5Dread(h->dset, H5T_NATIVE_DOUBLE, h->mspace,
                                h->fspace, h->dxpl, buf);
    if (rc < 0)
        die("HDF5 call failed");
    return MPI_Wtime() - t0;
}
#endif

/* --------------------------------------------------------------- PnetCDF */
#ifdef BENCH_HAVE_PNETCDF
static int nc_open(const opts *o, int create, int *var)
{
    int id, dims[3];
    if (create) {
        if (ncmpi_create(MPI_COMM_WORLD, o->file, NC_CLOBBER | NC_64BIT_DATA,
                         MPI_INFO_NULL, &id) != NC_NOERR)
            die("PnetCDF cannot create the file");
        static const char *names[3] = {"z", "y", "x"};
        for (int d = 0; d < o->s.nd; d++)
            ncmpi_def_dim(id, names[3 - o->s.nd + d], o->s.shape[d],
                          &dims[d]);
        ncmpi_def_var(id, "A", NC_DOUBLE, o->s.nd, dims, var);
        ncmpi_enddef(id);
    } else {
        if (ncmpi_open(MPI_COMM_WORLD, o->file, NC_WRITE, MPI_INFO_NULL,
                       &id) != NC_NOERR)
            die("PnetCDF cannot open the file");
        ncmpi_inq_varid(id, "A", var);
    }
    return id;
}

static double nc_call(const opts *o, int id, int var, double *buf, int write)
{
    MPI_Offset st[3], ct[3], sd[3];
    for (int d = 0; d < o->s.nd; d++) {
        st[d] = o->s.count[d] ? o->s.start[d] : 0;
        ct[d] = o->s.count[d];
        sd[d] = o->s.stride[d];
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int rc = write ? ncmpi_put_vars_double_all(id, var, st, ct, sd, buf)
                   : ncmpi_get_vars_double_all(id, var, st, ct, sd, buf);
    if (rc != NC_NOERR)
        die(ncmpi_strerror(rc));
    return MPI_Wtime() - t0;
}
#endif

/* ----------------------------------------------------------- the driver */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void parse(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    o->reps = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--prepare")) {
            o->prepare = 1;
            continue;
        }
        if (!v)
            die("an option lacks its value");
        i++;
        if (!strcmp(a, "--api"))
            o->api = v;
        else if (!strcmp(a, "--file"))
            o->file = v;
        else if (!strcmp(a, "--dist"))
            o->dist = v;
        else if (!strcmp(a, "--op"))
            o->op = v;
        else if (!strcmp(a, "--reps"))
            o->reps = atoi(v);
        else if (!strcmp(a, "--shape")) {
            char *e = (char *)v;
            o->s.nd = 0;
            while (*e && o->s.nd < 3) {
                o->s.shape[o->s.nd++] = strtoll(e, &e, 10);
                if (*e == ',')
                    e++;
            }
        } else
            die("unknown option");
    }
    if (!o->api || !o->file || !o->s.nd || (!o->prepare && (!o->dist || !o->op)))
        die("usage: bench-mpiio --api A --file F --shape R,C[,Z] --dist D "
            "--op read|write --reps N [--prepare]");
    if (o->reps < 2)
        o->reps = 2;
}

/* One API's timed calls: fills t[0..reps-1]; buf holds the section. */
static void timed(const opts *o, double *buf, int64_t n, int write,
                  double *t, int64_t *data_off)
{
    int r;
    if (!strcmp(o->api, "mpiio")) {
        MPI_File fh = mpiio_open(o, o->prepare);
        MPI_Offset disp;
        MPI_Datatype ft = mpiio_filetype(&o->s, &disp);
        MPI_File_set_view(fh, disp * 8, MPI_DOUBLE, ft, "native",
                          MPI_INFO_NULL);
        for (r = 0; r < o->reps; r++) {
            if (write)
                for (int64_t k = 0; k < n; k++)
                    buf[k] = (double)sect_index(&o->s, k) + 0.5 + r;
            t[r] = mpiio_call(o, buf, n, write, fh);
        }
        MPI_File_close(&fh);
        MPI_Type_free(&ft);
        *data_off = mpiio_offset(o);
        return;
    }
#ifdef BENCH_HAVE_HDF5
    if (!strcmp(o->api, "hdf5")) {
        h5 h = h5_open(o, o->prepare);
        for (r = 0; r < o->reps; r++) {
            if (write)
                for (int64_t k = 0; k < n; k++)
                    buf[k] = (double)sect_index(&o->s, k) + 0.5 + r;
            t[r] = h5_call(&h, buf, write);
        }
        *data_off = (int64_t)H5Dget_offset(h.dset);
        h5_close(&h);
        return;
    }
#endif
#ifdef BENCH_HAVE_PNETCDF
    if (!strcmp(o->api, "pnetcdf")) {
        int var, id = nc_open(o, o->prepare, &var);
        for (r = 0; r < o->reps; r++) {
            if (write)
                for (int64_t k = 0; k < n; k++)
                    buf[k] = (double)sect_index(&o->s, k) + 0.5 + r;
            t[r] = nc_call(o, id, var, buf, write);
        }
        MPI_Offset off;
        ncmpi_inq_varoffset(id, var, &off);
        *data_off = (int64_t)off;
        ncmpi_close(id);
        return;
    }
#endif
    die("this build has no such --api (hdf5: parallel HDF5 of this MPI; "
        "pnetcdf: PnetCDF of this MPI)");
}

/* After a write: rank 0 reads the whole array with pread and checks every
   element the ranks wrote in the last call (value i + 0.5 + reps - 1)
   and every other (i + 0.5 from --prepare). Returns 1 when right. */
static int verify_file(const opts *o, int64_t data_off, int write)
{
    int ok = 1;
    int big = !strcmp(o->api, "pnetcdf"); /* netCDF stores big-endian */
    int64_t total = 1;
    for (int d = 0; d < o->s.nd; d++)
        total *= o->s.shape[d];
    /* which elements were written: every rank's section, marked */
    unsigned char *mark = calloc((size_t)total, 1);
    if (write) {
        int64_t n = sect_elems(&o->s);
        int64_t *mine = malloc(sizeof *mine * (size_t)(n ? n : 1));
        for (int64_t k = 0; k < n; k++)
            mine[k] = sect_index(&o->s, k);
        for (int r = 0; r < P; r++) {
            int64_t m = n;
            MPI_Bcast(&m, 1, MPI_INT64_T, r, MPI_COMM_WORLD);
            int64_t *theirs = r == me ? mine : malloc(sizeof *theirs *
                                                      (size_t)(m ? m : 1));
            MPI_Bcast(theirs, (int)m, MPI_INT64_T, r, MPI_COMM_WORLD);
            for (int64_t k = 0; k < m; k++)
                mark[theirs[k]] = 1;
            if (theirs != mine)
                free(theirs);
        }
        free(mine);
    }
    if (me == 0) {
        int fd = open(o->file, O_RDONLY);
        double v[4096];
        for (int64_t i = 0; fd >= 0 && ok && i < total; i += 4096) {
            int64_t m = total - i < 4096 ? total - i : 4096;
            if (pread(fd, v, (size_t)m * 8, (off_t)(data_off + i * 8)) !=
                (ssize_t)(m * 8)) {
                ok = 0;
                break;
            }
            for (int64_t j = 0; big && j < m; j++) {
                uint64_t u;
                memcpy(&u, &v[j], 8);
                u = __builtin_bswap64(u);
                memcpy(&v[j], &u, 8);
            }
            for (int64_t j = 0; j < m; j++) {
                double want = (double)(i + j) + 0.5 +
                              (mark[i + j] ? o->reps - 1 : 0);
                if (v[j] != want) {
                    fprintf(stderr, "bench-mpiio: element %lld holds %g, "
                            "expected %g\n", (long long)(i + j), v[j], want);
                    ok = 0;
                    break;
                }
            }
        }
        if (fd < 0)
            ok = 0;
        else
            close(fd);
    }
    free(mark);
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    opts o;
    parse(argc, argv, &o);
    if (o.prepare) {
        /* every element i holds i + 0.5: each rank writes its rows */
        o.dist = "rows";
        o.op = "write";
        o.reps = 1;
    }
    section_of(&o);
    int write = !strcmp(o.op, "write");
    int64_t n = sect_elems(&o.s);
    double *buf = malloc(sizeof *buf * (size_t)(n ? n : 1));
    double *t = malloc(sizeof *t * (size_t)o.reps), *tmax =
        malloc(sizeof *t * (size_t)o.reps);
    int64_t data_off = 0;
    if (o.prepare) {
        for (int64_t k = 0; k < n; k++)
            buf[k] = (double)sect_index(&o.s, k) + 0.5;
        o.reps = 1;
        timed(&o, buf, n, 1, t, &data_off);
        MPI_Finalize();
        return 0;
    }
    timed(&o, buf, n, write, t, &data_off);
    MPI_Allreduce(t, tmax, o.reps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int ok = 1;
    if (!write) {
        for (int64_t k = 0; k < n && ok; k++)
            ok = buf[k] == (double)sect_index(&o.s, k) + 0.5;
        int all;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        ok = all;
    } else {
        ok = verify_file(&o, data_off, 1);
    }
    double first = tmax[0];
    qsort(tmax + 1, (size_t)(o.reps - 1), sizeof *tmax, cmp_double);
    double med = tmax[1 + (o.reps - 1) / 2], mn = tmax[1];
    if (me == 0)
        printf("%s,%s,%s,%d,%.6g,%.6g,%.6g,%s\n", o.api, o.dist, o.op, P,
               first, med, mn, ok ? "yes" : "NO");
    free(buf);
    free(t);
    free(tmax);
    MPI_Finalize();
    return ok ? 0 : 1;
}
