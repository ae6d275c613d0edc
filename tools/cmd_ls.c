/*
 * cmd_ls.c - `passion ls`: what passion sees in each file named (format,
 * shape, element type, byte order, storage order, layout, size; a local
 * set's grid, distributions, ghosts and files), and the list of an HDF5
 * or netCDF file's datasets or variables.
 *
 * Invariants: every rank parses the arguments alike and takes the same
 * collective calls; only rank 0 prints; exit 0 when every file opens
 * (and a local set's files are all there), 1 otherwise, 2 for a usage
 * error.
 */
#include "files.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void print_dims(FILE *o, const char *sep, int nd, const int64_t *v)
{
    for (int d = 0; d < nd; d++)
        fprintf(o, "%s%" PRId64, d ? sep : "", v[d]);
}

static const char *storage_name(const passion_array_spec *s)
{
    return s->storage == PASSION_ROW_MAJOR   ? "row-major (C)"
           : s->storage == PASSION_COL_MAJOR ? "column-major (Fortran)"
                                             : "custom order";
}

static void human(int64_t b, char *buf, size_t n)
{
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)b;
    int i = 0;
    while (v >= 1024 && i < 5)
        v /= 1024, i++;
    if (i)
        snprintf(buf, n, "%.1f %s (%" PRId64 " bytes)", v, u[i], b);
    else
        snprintf(buf, n, "%" PRId64 " bytes", b);
}

/* ----------------------------------------------------------------- ls */

static const char ls_usage[] =
    "usage: passion ls [OPTIONS] FILE...\n"
    "  For every FILE (name.npy, name.h5:/path/to/dataset, name.nc:var, a\n"
    "  local set by its pattern data.%d.laf or its description\n"
    "  data.laf.passion, a raw file with --shape/--type): its format, shape,\n"
    "  element type, byte order, storage order, layout and size; for a\n"
    "  local set also the grid, distributions, ghosts and files. An HDF5\n"
    "  or netCDF FILE without a NAME (or an HDF5 group, name.h5:/group)\n"
    "  lists every dataset or variable in it, recursively (like h5ls -r,\n"
    "  ncdump -h), those passion cannot open too, saying why.\n";

/* layout: the layout line of a global file ("contiguous"); why: the
   reason passion_open refuses it (NULL: it opens) */
/* Returns how many of a local set's files are missing or of another
   size than their local array (0 for other arrays). */
static int ls_one(const cli_obj *o, const char *layout, const char *why)
{
    const passion_array_spec *s = &o->spec;
    char tn[32], tc[16], hb[64];
    cli_type_name(s, tn, sizeof tn);
    cli_type_code(s, tc, sizeof tc);
    int64_t elems = 1;
    for (int d = 0; d < s->ndims; d++)
        elems *= s->shape[d];
    char k = cli_name_kind(o->name);
    printf("%s: %s\n", o->name, cli_kind_name(k));
    printf("  shape      ");
    print_dims(stdout, " x ", s->ndims, s->shape);
    printf("  (%" PRId64 " elements)\n", elems);
    if (s->elem_size > 0)
        printf("  type       %s (%s), %s-endian\n", tn, tc,
               s->elem_size == 1 ? "no byte order: 1 byte, any"
               : cli_type_big(s) ? "big"
                                 : "little");
    else
        printf("  type       not one passion takes\n");
    printf("  storage    %s", storage_name(s));
    if (s->storage == PASSION_ORDER_CUSTOM) {
        printf(", slowest to fastest: ");
        for (int d = 0; d < s->ndims; d++)
            printf("%s%d", d ? " " : "", s->order[d]);
    }
    printf("\n");
    if (!o->local) {
        human(elems * s->elem_size, hb, sizeof hb);
        printf("  layout     %s\n", layout);
        printf("  data       %s\n", hb);
        if (why)
            printf("  refused    %s\n", why);
        return 0;
    }
    printf("  files      %d (%s)\n", o->nfiles, o->pattern);
    printf("  grid       ");
    for (int d = 0; d < s->ndims; d++)
        printf("%s%d", d ? " x " : "", s->grid[d]);
    printf("\n  dist       ");
    for (int d = 0; d < s->ndims; d++) {
        if (s->dist[d] == PASSION_DIST_COLLAPSED)
            printf("%s*", d ? ", " : "");
        else
            printf("%s%s(%" PRId64 ")", d ? ", " : "",
                   s->dist[d] == PASSION_DIST_BLOCK ? "BLOCK" : "CYCLIC",
                   s->block[d]);
    }
    printf("\n  ghost      ");
    print_dims(stdout, " ", s->ndims, s->ghost);
    int64_t total = 0;
    int bad = 0;
    for (int q = 0; q < o->nfiles; q++) {
        int c[CLI_MAX_DIMS], r = q;
        for (int d = s->ndims - 1; d >= 0; d--) {
            c[d] = r % s->grid[d];
            r /= s->grid[d];
        }
        int64_t b = s->elem_size;
        for (int d = 0; d < s->ndims; d++)
            b *= cli_local_count(s, d, c[d]) + 2 * s->ghost[d];
        total += b;
        /* the file itself: there, and as long as its local array */
        char path[PATH_MAX];
        struct stat st;
        int missing = cli_pattern_path(o->pattern, q, path, sizeof path) ||
                      stat(path, &st) || !S_ISREG(st.st_mode);
        int wrong = !missing && (int64_t)st.st_size != b;
        bad += missing || wrong;
        if (q < 8 || q == o->nfiles - 1 || missing || wrong) {
            printf("\n  file %-5d local ", q);
            for (int d = 0; d < s->ndims; d++)
                printf("%s%" PRId64, d ? " x " : "",
                       cli_local_count(s, d, c[d]));
            printf(" + ghosts, %" PRId64 " bytes", b);
            if (missing)
                printf(": MISSING (%s)", path);
            else if (wrong)
                printf(": the file holds %lld bytes (%s)",
                       (long long)st.st_size, path);
        } else if (q == 8) {
            printf("\n  ...");
        }
    }
    human(total, hb, sizeof hb);
    printf("\n  data       %s in all files, ghosts included\n", hb);
    return bad;
}

/* An HDF5 or netCDF name without an object, or naming an HDF5 group:
   every array in it (passion_array_list). 0 listed, 1 failed (message
   printed), -1 not a listing (one array: ls_one's way; a dataset named
   by itself leaves its listed layout in layout). Collective. */
static int ls_list(passion_ctx *ctx, const char *name, char *layout,
                   size_t layout_len)
{
    char k = cli_name_kind(name);
    if (k != 'h' && k != 'c')
        return -1;
    size_t fl = cli_file_len(name);
    const char *obj = name[fl] ? name + fl + 1 : NULL;
    int n = 0;
    int rc = passion_array_list(ctx, name, NULL, 0, &n);
    if (rc) /* a named object: the open says what is wrong with it */
        return obj ? -1 : cli_fail_rc("ls", ctx, rc, name);
    passion_array_entry *e = n ? calloc((size_t)n, sizeof *e) : NULL;
    int bad = n && !e;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad) {
        free(e);
        return cli_fail("ls", "%s: no memory for a list of %d", name, n);
    }
    int m = 0;
    if ((rc = passion_array_list(ctx, name, e, n, &m))) {
        free(e);
        return cli_fail_rc("ls", ctx, rc, name);
    }
    if (m > n)
        m = n; /* the file grew in between: list what was asked for */
    /* a dataset or variable named by itself: ls_one's way (the open's
       own message when it is refused) */
    if (obj && m == 1) {
        const char *a = e[0].name, *b = obj;
        a += *a == '/';
        b += *b == '/';
        if (!strcmp(a, b)) {
            snprintf(layout, layout_len, "%s", e[0].layout);
            free(e);
            return -1;
        }
    }
    if (cli_rank() == 0) {
        printf("%.*s: %s, %d %s%s%s%s\n", (int)fl, name, cli_kind_name(k), m,
               k == 'h' ? "dataset" : "variable", m == 1 ? "" : "s",
               obj ? " below " : "", obj ? obj : "");
        for (int i = 0; i < m; i++) {
            cli_obj o;
            memset(&o, 0, sizeof o);
            snprintf(o.name, sizeof o.name, "%.*s:%s", (int)fl, name,
                     e[i].name);
            o.spec = e[i].spec;
            o.nfiles = 1;
            ls_one(&o, e[i].layout[0] ? e[i].layout : "unknown",
                   e[i].status ? e[i].why : NULL);
        }
    }
    fflush(stdout);
    free(e);
    return 0;
}

int cli_ls(int argc, char **argv)
{
    cli_common c = {.progress = -1};
    int nfiles = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return cli_help(ls_usage);
        int k = cli_common_arg(&c, argc, argv, &i);
        if (k < 0)
            return 2;
        if (k)
            continue;
        if (argv[i][0] == '-' && argv[i][1])
            return cli_usage_err("ls", ls_usage, "unknown option %s", argv[i]);
        nfiles++;
    }
    if (!nfiles)
        return cli_usage_err("ls", ls_usage, "%sno FILE given", "");
    passion_ctx *ctx;
    if (cli_ctx(&c, &ctx))
        return 1;
    int status = 0;
    for (int i = 0; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1]) {
            int j = i;
            if (cli_common_arg(&c, argc, argv, &j) > 0)
                i = j;
            continue;
        }
        char layout[sizeof ((passion_array_entry *)0)->layout] = "";
        int listed = ls_list(ctx, argv[i], layout, sizeof layout);
        if (listed >= 0) {
            status |= listed;
            continue;
        }
        cli_obj o;
        if (cli_open(ctx, &c, "ls", argv[i], PASSION_MODE_RDONLY, &o)) {
            status = 1;
            continue;
        }
        const char *lay = layout[0] ? layout : "contiguous";
        int bad = cli_rank() == 0 ? ls_one(&o, lay, NULL) : 0;
        fflush(stdout);
        MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (bad) {
            cli_fail("ls", "%s: %d of its %d files missing or not the size "
                     "of their local array", argv[i], bad, o.nfiles);
            status = 1;
        }
        cli_close(&o);
    }
    passion_finalize(ctx);
    return status;
}
