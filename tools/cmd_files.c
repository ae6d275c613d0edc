/*
 * cmd_files.c - the file tools: `passion ls`, `dump`, `get`, `put`,
 * `convert` (README "The passion command"). Each parses its arguments on
 * every rank alike (so every rank takes the same path through the
 * collective calls), prints on rank 0, exits 0 on success and 1 with one
 * line on stderr on failure (2 for a usage error).
 */
#include "files.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------ helpers */

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

/* Usage error: message and exit code 2. */
static int usage_err(const char *cmd, const char *usage, const char *fmt,
                     const char *arg)
{
    if (cli_rank() == 0) {
        fprintf(stderr, "passion %s: ", cmd);
        fprintf(stderr, fmt, arg);
        fprintf(stderr, " (passion %s --help)\n", cmd);
    }
    (void)usage;
    return 2;
}

static int help(const char *usage)
{
    if (cli_rank() == 0) {
        cli_usage(stdout, usage);
        cli_usage(stdout, cli_common_help);
    }
    return 0;
}

/* The budget of ctx, at least 4 KiB: the command's buffers. */
static int64_t chunk_of(passion_ctx *ctx)
{
    int64_t b = cli_budget(ctx);
    return b < 4096 ? 4096 : b;
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
   printed), -1 not a listing (one array: ls_one's way). Collective. */
static int ls_list(passion_ctx *ctx, const char *name)
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
            return help(ls_usage);
        int k = cli_common_arg(&c, argc, argv, &i);
        if (k < 0)
            return 2;
        if (k)
            continue;
        if (argv[i][0] == '-' && argv[i][1])
            return usage_err("ls", ls_usage, "unknown option %s", argv[i]);
        nfiles++;
    }
    if (!nfiles)
        return usage_err("ls", ls_usage, "%sno FILE given", "");
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
        int listed = ls_list(ctx, argv[i]);
        if (listed >= 0) {
            status |= listed;
            continue;
        }
        cli_obj o;
        if (cli_open(ctx, &c, "ls", argv[i], PASSION_MODE_RDONLY, &o)) {
            status = 1;
            continue;
        }
        int bad = cli_rank() == 0 ? ls_one(&o, "contiguous", NULL) : 0;
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

/* --------------------------------------------------------------- dump */

static const char dump_usage[] =
    "usage: passion dump [OPTIONS] FILE[:NAME] [SECTION]\n"
    "  Print the values of a section as text, in index order (the last\n"
    "  dimension fastest), in bounded memory for any size: one line per at\n"
    "  most 8 consecutive values of the last dimension, starting with the\n"
    "  global index of its first value: \"[i,j] v v v\".\n"
    "  SECTION is numpy-like, one entry per dimension: \"0:100:2,5:50\"\n"
    "  (start:stop:step, negative indices from the end, missing\n"
    "  dimensions whole); or give it as\n"
    "  --start I,J,..  --count N,M,..  --stride S,T,..  (like h5dump -s -c\n"
    "                  -S; missing: start 0, stride 1, count to the end)\n"
    "  --file Q        a local set: dump file Q's local array (ghosts\n"
    "                  included, as stored), indices local\n";

/* One value as text (numpy-like: floats with 17 significant digits). */
static void put_value(FILE *o, const unsigned char *p, char kind,
                      int64_t es)
{
    switch (kind) {
    case 'b':
        fputs(*p ? "True" : "False", o);
        return;
    case 'i':
    case 'u': {
        uint64_t u = 0;
        memcpy(&u, p, (size_t)es); /* little-endian machine */
        if (kind == 'i' && es < 8 && (u >> (es * 8 - 1)) & 1)
            u |= ~(uint64_t)0 << (es * 8);
        if (kind == 'i')
            fprintf(o, "%" PRId64, (int64_t)u);
        else
            fprintf(o, "%" PRIu64, u);
        return;
    }
    case 'f':
        if (es == 4) {
            float f;
            memcpy(&f, p, 4);
            fprintf(o, "%.9g", (double)f);
            return;
        }
        if (es == 8) {
            double f;
            memcpy(&f, p, 8);
            fprintf(o, "%.17g", f);
            return;
        }
        break;
    case 'c':
        if (es == 8) {
            float f[2];
            memcpy(f, p, 8);
            fprintf(o, "(%.9g%+.9gj)", (double)f[0], (double)f[1]);
            return;
        }
        if (es == 16) {
            double f[2];
            memcpy(f, p, 16);
            fprintf(o, "(%.17g%+.17gj)", f[0], f[1]);
            return;
        }
        break;
    default:
        break;
    }
    fputs("0x", o); /* anything else: its bytes in hex, as stored */
    for (int64_t i = 0; i < es; i++)
        fprintf(o, "%02x", p[i]);
}

static int parse_dims_opt(const char *cmd, const char *what, const char *v,
                          int nd, int64_t lo, int64_t *out)
{
    char why[256];
    if (v && cli_list_parse(v, nd, lo, out, why, sizeof why))
        return cli_fail(cmd, "%s %s", what, why);
    return 0;
}

int cli_dump(int argc, char **argv)
{
    cli_common c = {.progress = 0};
    const char *file = NULL, *sect = NULL, *start = NULL, *count = NULL,
               *stride = NULL;
    int fileq = -1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return help(dump_usage);
        int k = cli_common_arg(&c, argc, argv, &i);
        if (k < 0)
            return 2;
        if (k)
            continue;
        const char **slot = !strcmp(a, "--start")    ? &start
                            : !strcmp(a, "--count")  ? &count
                            : !strcmp(a, "--stride") ? &stride
                                                     : NULL;
        if (slot || !strcmp(a, "--file")) {
            if (i + 1 >= argc)
                return usage_err("dump", dump_usage, "%s needs a value", a);
            if (slot)
                *slot = argv[++i];
            else
                fileq = atoi(argv[++i]);
            continue;
        }
        if (a[0] == '-' && a[1] && !(a[1] >= '0' && a[1] <= '9') &&
            a[1] != ':')
            return usage_err("dump", dump_usage, "unknown option %s", a);
        if (!file)
            file = a;
        else if (!sect)
            sect = a;
        else
            return usage_err("dump", dump_usage, "extra argument %s", a);
    }
    if (!file)
        return usage_err("dump", dump_usage, "%sno FILE given", "");
    if (sect && (start || count || stride))
        return usage_err("dump", dump_usage,
                         "%sgive a SECTION or --start/--count/--stride",
                         "");
    passion_ctx *ctx;
    if (cli_ctx(&c, &ctx))
        return 1;
    cli_obj o;
    int status = 0;
    if (cli_open(ctx, &c, "dump", file, PASSION_MODE_RDONLY, &o)) {
        passion_finalize(ctx);
        return 1;
    }
    /* what to read: the file, or a local set's file Q as a plain array */
    passion_file *f = o.f;
    passion_ctx *fctx = ctx;
    int bad = 0;
    if (o.local) {
        if (fileq < 0 || fileq >= o.nfiles)
            bad = cli_fail("dump", "%s is a local set of %d files: choose "
                           "one with --file Q (0..%d), or convert the set "
                           "to a global file", file, o.nfiles,
                           o.nfiles - 1);
        else if (cli_rank() == 0)
            bad = cli_view_open(&c, "dump", &o, fileq);
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX,
                      MPI_COMM_WORLD);
        f = o.qf;
        fctx = o.self;
    }
    const passion_array_spec *s =
        bad ? NULL
            : o.local ? (cli_rank() == 0 ? passion_array_get_spec(o.qa)
                                          : &o.spec)
                      : &o.spec;
    int nd = s ? s->ndims : 0;
    cli_sect sec;
    char why[256];
    if (!bad && sect &&
        cli_section_parse(sect, nd, s->shape, &sec, why, sizeof why))
        bad = cli_fail("dump", "%s", why);
    if (!bad && !sect) {
        int64_t st[CLI_MAX_DIMS], cn[CLI_MAX_DIMS], sd[CLI_MAX_DIMS];
        for (int d = 0; d < nd; d++)
            st[d] = 0, sd[d] = 1, cn[d] = -1;
        bad = parse_dims_opt("dump", "--start", start, nd, 0, st) ||
              parse_dims_opt("dump", "--stride", stride, nd, 1, sd) ||
              parse_dims_opt("dump", "--count", count, nd, 0, cn);
        for (int d = 0; d < nd && !bad; d++) {
            int64_t left = st[d] < s->shape[d]
                               ? (s->shape[d] - st[d] - 1) / sd[d] + 1
                               : 0;
            if (cn[d] < 0)
                cn[d] = left;
            if (cn[d] > left || (st[d] >= s->shape[d] && cn[d] > 0))
                bad = cli_fail("dump", "dimension %d: start %" PRId64
                               " count %" PRId64 " stride %" PRId64
                               " leaves the size %" PRId64, d, st[d], cn[d],
                               sd[d], s->shape[d]);
            sec.start[d] = st[d];
            sec.count[d] = cn[d];
            sec.stride[d] = sd[d];
        }
    }
    if (o.local && !bad) {
        /* only rank 0 knows the view: its verdict counts */
        MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    if (bad) {
        cli_close(&o);
        passion_finalize(ctx);
        return 1;
    }
    /* rank 0 reads chunk by chunk (index order: the chunker with the
       identity order) and prints */
    if (cli_rank() == 0) {
        int64_t es = s->elem_size, max = chunk_of(ctx) / es;
        char kind = cli_type_kind(s);
        int ident[CLI_MAX_DIMS];
        for (int d = 0; d < nd; d++)
            ident[d] = d;
        cli_chunks k;
        cli_chunks_init(&k, nd, sec.count, ident, max);
        unsigned char *buf = malloc((size_t)(max * es));
        if (!buf)
            status = cli_fail("dump", "no memory for %" PRId64 " bytes",
                              max * es);
        for (int64_t i = 0; i < k.total && !status; i++) {
            int64_t off[CLI_MAX_DIMS], cnt[CLI_MAX_DIMS], st[CLI_MAX_DIMS];
            cli_chunks_get(&k, i, off, cnt);
            passion_section ps;
            memset(&ps, 0, sizeof ps);
            int64_t n = 1;
            for (int d = 0; d < nd; d++) {
                ps.start[d] = sec.start[d] + off[d] * sec.stride[d];
                ps.count[d] = cnt[d];
                ps.stride[d] = sec.stride[d];
                n *= cnt[d];
            }
            int rc = passion_file_read(f, &ps, buf, NULL,
                                       PASSION_METHOD_AUTO);
            if (rc) {
                status = cli_fail_rc("dump", fctx, rc, file);
                break;
            }
            /* the buffer is in the file's storage order */
            int64_t sst = 1;
            for (int j = nd - 1; j >= 0; j--) {
                st[s->order[j]] = sst;
                sst *= cnt[s->order[j]];
            }
            int64_t idx[CLI_MAX_DIMS] = {0};
            for (int64_t e = 0; e < n; e++) {
                /* a line per 8 values of the last dimension (and at each
                   chunk's start), headed by its first value's index */
                int64_t pos = off[nd - 1] + idx[nd - 1];
                if (e == 0 || pos % 8 == 0) {
                    if (e)
                        putchar('\n');
                    putchar('[');
                    for (int d = 0; d < nd; d++)
                        printf("%s%" PRId64, d ? "," : "",
                               ps.start[d] + idx[d] * ps.stride[d]);
                    putchar(']');
                }
                int64_t bo = 0;
                for (int d = 0; d < nd; d++)
                    bo += idx[d] * st[d];
                putchar(' ');
                put_value(stdout, buf + bo * es, kind, es);
                for (int d = nd - 1; d >= 0; d--) {
                    if (++idx[d] < cnt[d])
                        break;
                    idx[d] = 0;
                }
            }
            if (n)
                putchar('\n');
        }
        free(buf);
        fflush(stdout);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    cli_close(&o);
    passion_finalize(ctx);
    return status;
}

/* ------------------------------------------------------------ get/put */

static const char get_usage[] =
    "usage: passion get [OPTIONS] SRC[:NAME] SECTION -o OUT\n"
    "  Copy a section of SRC into a new file OUT (.npy, .h5:/NAME, .nc:VAR\n"
    "  or raw) of the section's shape and SRC's element type (and storage\n"
    "  order; HDF5 and netCDF OUT row-major). OUT appears\n"
    "  only complete: it is written under a temporary name in its directory\n"
    "  and renamed into place at the end. Any number of ranks share the\n"
    "  work; bounded memory.\n"
    "  An existing OUT is refused unless --force; OUT is never SRC's file\n"
    "  (compared as files: hard links, symlinks and other spellings of the\n"
    "  path too), --force or not. Nothing is written when it refuses.\n"
    "  SECTION: numpy-like \"0:100:2,5:50\" (see passion dump --help).\n"
    "  -o, --output OUT  the new file\n"
    "  --force           replace an existing OUT (HDF5, netCDF: the whole\n"
    "                    file, with every other object in it)\n";

static const char put_usage[] =
    "usage: passion put [OPTIONS] SRC DST[:NAME] SECTION\n"
    "  Write the whole array of SRC (.npy, ...) into SECTION of the existing\n"
    "  file DST, in place (the section's counts must equal SRC's shape;\n"
    "  nothing outside the section changes). Any number of ranks.\n"
    "  SRC's values are converted to DST's element type when numpy's safe\n"
    "  casting allows it (bool to any number, integers to wider integers,\n"
    "  unsigned to a wider signed, integers to floats that hold every\n"
    "  value: 8-bit to float16, 16-bit to float32, 32-bit to float64;\n"
    "  floats to wider floats, reals to complex; byte order always);\n"
    "  anything else (int64 to float64 too: it rounds above 2^53) is\n"
    "  refused, naming both types, before DST is opened for writing. DST\n"
    "  may not be SRC's file.\n"
    "  SECTION: numpy-like \"0:100:2,5:50\" (see passion dump --help).\n"
    "  --casting=unsafe  convert any number to any number, by value, like\n"
    "                    numpy's astype: integers wrap, floats round to\n"
    "                    nearest, complex keeps its real part, bool is != 0;\n"
    "                    a float outside an integer type's range saturates,\n"
    "                    NaN becomes 0 (opaque bytes never convert)\n"
    "  --casting=safe    the default\n";

/* put's checks of SRC against DST (opened for reading): 0, or 1 with the
   message printed. The same on every rank (both specs are). */
static int put_check(const cli_obj *src, const cli_obj *dst,
                     const char *sect, int unsafe, cli_sect *ds)
{
    char why[256];
    const char *sn = src->name, *dn = dst->name;
    if (dst->local)
        return cli_fail("put", "%s is a local set: put writes global files",
                        dn);
    if (cli_section_parse(sect ? sect : "", dst->spec.ndims, dst->spec.shape,
                          ds, why, sizeof why))
        return cli_fail("put", "%s", why);
    if (dst->spec.ndims != src->spec.ndims)
        return cli_fail("put", "%s has %d dimensions, %s %d", sn,
                        src->spec.ndims, dn, dst->spec.ndims);
    for (int d = 0; d < src->spec.ndims; d++)
        if (ds->count[d] != src->spec.shape[d])
            return cli_fail("put", "section %s selects %lld in dimension "
                            "%d, %s has %lld", sect ? sect : "",
                            (long long)ds->count[d], d, sn,
                            (long long)src->spec.shape[d]);
    if (cli_cast_check(&src->spec, &dst->spec, unsafe, sn, dn, why,
                       sizeof why))
        return cli_fail("put", "%s", why);
    return 0;
}

static int get_put(int argc, char **argv, int put)
{
    const char *cmd = put ? "put" : "get", *usage = put ? put_usage
                                                        : get_usage;
    cli_common c = {.progress = -1};
    const char *pos[3] = {0}, *out = NULL;
    int npos = 0, force = 0, unsafe = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return help(usage);
        int k = cli_common_arg(&c, argc, argv, &i);
        if (k < 0)
            return 2;
        if (k)
            continue;
        if (!put && (!strcmp(a, "-o") || !strcmp(a, "--output"))) {
            if (i + 1 >= argc)
                return usage_err(cmd, usage, "%s needs a file", a);
            out = argv[++i];
            continue;
        }
        if (!put && !strncmp(a, "--output=", 9)) {
            out = a + 9;
            continue;
        }
        if (!put && !strcmp(a, "--force")) {
            force = 1;
            continue;
        }
        if (put && (!strcmp(a, "--casting") ||
                    !strncmp(a, "--casting=", 10))) {
            const char *v = a[9] == '=' ? a + 10 : i + 1 < argc ? argv[++i]
                                                                : NULL;
            if (!v || (strcmp(v, "safe") && strcmp(v, "unsafe")))
                return usage_err(cmd, usage, "--casting %s: want safe or "
                                 "unsafe", v ? v : "needs a value");
            unsafe = !strcmp(v, "unsafe");
            continue;
        }
        if (a[0] == '-' && a[1] && !(a[1] >= '0' && a[1] <= '9') &&
            a[1] != ':' && a[1] != ',')
            return usage_err(cmd, usage, "unknown option %s", a);
        if (npos == (put ? 3 : 2))
            return usage_err(cmd, usage, "extra argument %s", a);
        pos[npos++] = a;
    }
    if (npos < (put ? 2 : 1) || (!put && !out))
        return usage_err(cmd, usage, "%s", put ? "want SRC DST SECTION"
                                               : "want SRC SECTION -o OUT");
    const char *src_name = pos[0], *dst_name = put ? pos[1] : out,
               *sect = put ? pos[2] : pos[1];
    passion_ctx *ctx;
    if (cli_ctx(&c, &ctx))
        return 1;
    cli_obj src, dst;
    int status = 0;
    memset(&dst, 0, sizeof dst);
    if (cli_open(ctx, &c, cmd, src_name, PASSION_MODE_RDONLY, &src)) {
        passion_finalize(ctx);
        return 1;
    }
    if (src.local) {
        cli_close(&src);
        passion_finalize(ctx);
        return cli_fail(cmd, "%s is a local set: %s works on global files "
                        "(convert the set to one first)", src_name, cmd);
    }
    char why[256];
    cli_sect ss, ds;
    cli_guard g = {0};
    cli_guard_input(&g, &src);
    if (!put) {
        if (cli_section_parse(sect, src.spec.ndims, src.spec.shape, &ss,
                              why, sizeof why))
            status = cli_fail(cmd, "%s", why);
        passion_array_spec sp;
        if (!status) {
            passion_array_spec_init(&sp, src.spec.ndims, ss.count,
                                    src.spec.elem_size);
            cli_type_copy(&sp, &src.spec);
            sp.placement = PASSION_PLACE_GLOBAL;
            sp.storage = src.spec.storage == PASSION_COL_MAJOR &&
                                 !cli_row_major_only(dst_name)
                             ? PASSION_COL_MAJOR
                             : PASSION_ROW_MAJOR;
            for (int d = 0; d < sp.ndims; d++)
                if (sp.shape[d] == 0)
                    status = cli_fail(cmd, "section %s is empty in "
                                      "dimension %d: nothing to write", sect,
                                      d);
        }
        if (!status && cli_name_kind(dst_name) == 'l')
            status = cli_fail(cmd, "OUT %s: get writes a global file (use "
                              "convert for a local set)", dst_name);
        /* before anything is created: never onto SRC, never over an
           existing OUT unless --force */
        cli_guard_output(&g, dst_name, 1);
        if (!status && cli_guard_check(&g, cmd, force))
            status = 1;
        if (!status && cli_create(ctx, cmd, dst_name, &sp, &dst))
            status = 1;
        for (int d = 0; d < src.spec.ndims; d++) {
            ds.start[d] = 0;
            ds.count[d] = ss.count[d];
            ds.stride[d] = 1;
        }
    } else {
        /* DST is read first (its header: type, shape) and checked, and
           opened for writing only once nothing refuses */
        if (cli_open(ctx, &c, cmd, dst_name, PASSION_MODE_RDONLY, &dst))
            status = 1;
        if (!status) {
            cli_guard_inplace(&g, &dst);
            status = cli_guard_check(&g, cmd, 1);
        }
        if (!status)
            status = put_check(&src, &dst, sect, unsafe, &ds);
        cli_close(&dst);
        if (!status &&
            cli_open(ctx, &c, cmd, dst_name, PASSION_MODE_RDWR, &dst))
            status = 1;
        /* the file may have changed in between: its type and shape are
           checked again, now that it is open for writing */
        if (!status)
            status = put_check(&src, &dst, sect, unsafe, &ds);
        for (int d = 0; d < src.spec.ndims; d++) {
            ss.start[d] = 0;
            ss.count[d] = src.spec.shape[d];
            ss.stride[d] = 1;
        }
    }
    if (!status) {
        cli_prog p;
        cli_prog_start(&p, cmd, c.progress);
        status = cli_copy(ctx, &c, cmd, &src, &ss, &dst, &ds,
                          chunk_of(ctx), &p);
    }
    if (!status && !put)
        status = cli_publish(ctx, cmd, &dst);
    cli_close(&dst);
    cli_close(&src);
    passion_finalize(ctx);
    return status;
}

int cli_get(int argc, char **argv)
{
    return get_put(argc, argv, 0);
}

int cli_put(int argc, char **argv)
{
    return get_put(argc, argv, 1);
}

/* ------------------------------------------------------------ convert */

static const char convert_usage[] =
    "usage: mpiexec -n P passion convert [OPTIONS] SRC DST\n"
    "  Copy the whole array of SRC into a new DST, each in its own format:\n"
    "  name.npy, name.h5:/dataset, name.nc:var, raw (any other name), or a\n"
    "  local array set by its pattern (data.%d.laf: one file per rank of\n"
    "  this run, with its description data.laf.passion). A local set SRC\n"
    "  may come from any number of ranks; a local set DST gets this run's\n"
    "  P ranks. DST appears only complete (written under a temporary name,\n"
    "  renamed at the end). An existing DST (for a local set: any of its P\n"
    "  files or its description) is refused unless --force; DST is never\n"
    "  one of SRC's files (compared as files: hard links, symlinks and\n"
    "  other spellings of the path too), --force or not. Nothing is\n"
    "  written when it refuses.\n"
    "  Collective at any P, bounded memory (--budget), progress on rank 0.\n"
    "  Ghost cells of a new local set are zero.\n"
    "  --grid G,G,..    ranks per dimension of a local DST (product P;\n"
    "                   default: all P on the slowest dimension)\n"
    "  --dist D,D,..    per dimension BLOCK, BLOCK(m), CYCLIC, CYCLIC(m)\n"
    "                   or * (default BLOCK where the grid splits, else *)\n"
    "  --block M,M,..   block sizes m (0 = default), instead of (m) above\n"
    "  --ghost W,W,..   ghost widths of a local DST (default 0)\n"
    "  --order C|F      DST's storage order (default: SRC's; C for HDF5\n"
    "                   and netCDF DSTs, which are row-major: F stores the\n"
    "                   transpose, dimensions reversed, as Fortran does)\\n"
    "  --force          replace an existing DST (HDF5, netCDF: the whole\n"
    "                   file, with every other object in it)\n";

static int parse_dist(const char *v, int nd, passion_array_spec *s,
                      char *why, size_t wl)
{
    const char *p = v;
    for (int d = 0; d < nd; d++) {
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        char w[64];
        snprintf(w, sizeof w, "%.*s", (int)(end - p), p);
        for (char *c = w; *c; c++)
            if (*c >= 'a' && *c <= 'z')
                *c = (char)(*c - 'a' + 'A');
        long long m = 0;
        char tail = 0;
        if (!strcmp(w, "*")) {
            s->dist[d] = PASSION_DIST_COLLAPSED;
        } else if (!strcmp(w, "BLOCK") || !strcmp(w, "CYCLIC")) {
            s->dist[d] = w[0] == 'B' ? PASSION_DIST_BLOCK
                                     : PASSION_DIST_CYCLIC;
        } else if ((sscanf(w, "BLOCK(%lld%c", &m, &tail) == 2 ||
                    sscanf(w, "CYCLIC(%lld%c", &m, &tail) == 2) &&
                   tail == ')' && m >= 1 && w[strlen(w) - 1] == ')') {
            s->dist[d] = w[0] == 'B' ? PASSION_DIST_BLOCK
                                     : PASSION_DIST_CYCLIC;
            s->block[d] = m;
        } else {
            snprintf(why, wl, "--dist %s: entry '%s' is not BLOCK, "
                     "BLOCK(m), CYCLIC, CYCLIC(m) or *", v, w);
            return -1;
        }
        if (!*end && d + 1 < nd) {
            snprintf(why, wl, "--dist %s: want %d entries", v, nd);
            return -1;
        }
        if (*end && d + 1 == nd) {
            snprintf(why, wl, "--dist %s: want %d entries", v, nd);
            return -1;
        }
        p = end + 1;
    }
    return 0;
}

int cli_convert(int argc, char **argv)
{
    cli_common c = {.progress = -1};
    const char *pos[2] = {0}, *grid = NULL, *dist = NULL, *block = NULL,
               *ghost = NULL;
    int npos = 0, force = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return help(convert_usage);
        if (!strcmp(a, "--force")) {
            force = 1;
            continue;
        }
        int k = cli_common_arg(&c, argc, argv, &i);
        if (k < 0)
            return 2;
        if (k)
            continue;
        const char **slot = NULL;
        static const char *const keys[] = {"--grid", "--dist", "--block",
                                           "--ghost"};
        const char **slots[] = {&grid, &dist, &block, &ghost};
        for (int j = 0; j < 4; j++) {
            size_t kl = strlen(keys[j]);
            if (!strncmp(a, keys[j], kl) && (!a[kl] || a[kl] == '=')) {
                slot = slots[j];
                if (a[kl] == '=')
                    *slot = a + kl + 1;
                else if (i + 1 < argc)
                    *slot = argv[++i];
                else
                    return usage_err("convert", convert_usage,
                                     "%s needs a value", a);
            }
        }
        if (slot)
            continue;
        if (a[0] == '-' && a[1])
            return usage_err("convert", convert_usage, "unknown option %s",
                             a);
        if (npos == 2)
            return usage_err("convert", convert_usage, "extra argument %s",
                             a);
        pos[npos++] = a;
    }
    if (npos < 2)
        return usage_err("convert", convert_usage, "%swant SRC DST", "");
    passion_ctx *ctx;
    if (cli_ctx(&c, &ctx))
        return 1;
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cli_obj src, dst;
    memset(&dst, 0, sizeof dst);
    int status = 0;
    /* a raw SRC takes --order for itself; DST follows SRC's order unless
       --order is given for a non-raw SRC */
    int dst_order = -1;
    if (cli_name_kind(pos[0]) != 'r' && c.col_major)
        dst_order = PASSION_COL_MAJOR;
    if (cli_open(ctx, &c, "convert", pos[0], PASSION_MODE_RDONLY, &src)) {
        passion_finalize(ctx);
        return 1;
    }
    const passion_array_spec *s = &src.spec;
    int nd = s->ndims, local = cli_name_kind(pos[1]) == 'l';
    passion_array_spec sp;
    passion_array_spec_init(&sp, nd, s->shape, s->elem_size);
    cli_type_copy(&sp, s);
    sp.storage = s->storage;
    memcpy(sp.order, s->order, sizeof sp.order);
    if (dst_order >= 0)
        sp.storage = (passion_storage)dst_order;
    else if (cli_row_major_only(pos[1]) && sp.storage != PASSION_ROW_MAJOR)
        sp.storage = PASSION_ROW_MAJOR; /* same shape, same values at the
                                           same indices (--order F: the
                                           transpose, as Fortran writes) */
    if (sp.storage != PASSION_ORDER_CUSTOM)
        for (int k = 0; k < nd; k++)
            sp.order[k] = sp.storage == PASSION_ROW_MAJOR ? k : nd - 1 - k;
    char why[256];
    if (!local && (grid || dist || block || ghost))
        status = cli_fail("convert", "--grid, --dist, --block and --ghost "
                          "describe a local set DST (a pattern with %%d)");
    sp.placement = local ? PASSION_PLACE_LOCAL : PASSION_PLACE_GLOBAL;
    int64_t v[CLI_MAX_DIMS];
    if (!status && local) {
        if (grid) {
            if (cli_list_parse(grid, nd, 1, v, why, sizeof why))
                status = cli_fail("convert", "--grid %s", why);
            for (int d = 0; d < nd && !status; d++)
                sp.grid[d] = (int)v[d];
        }
        if (!status && dist && parse_dist(dist, nd, &sp, why, sizeof why))
            status = cli_fail("convert", "%s", why);
        if (!status && block) {
            if (cli_list_parse(block, nd, 0, v, why, sizeof why))
                status = cli_fail("convert", "--block %s", why);
            for (int d = 0; d < nd && !status; d++)
                if (v[d])
                    sp.block[d] = v[d];
        }
        if (!status && ghost) {
            if (cli_list_parse(ghost, nd, 0, v, why, sizeof why))
                status = cli_fail("convert", "--ghost %s", why);
            for (int d = 0; d < nd && !status; d++)
                sp.ghost[d] = v[d];
        }
        if (!status && !grid) {
            /* all P ranks on the slowest storage dimension that is not
               collapsed */
            int slow = -1;
            for (int j = 0; j < nd && slow < 0; j++)
                if (!dist || sp.dist[sp.order[j]] != PASSION_DIST_COLLAPSED)
                    slow = sp.order[j];
            for (int d = 0; d < nd; d++) {
                sp.grid[d] = d == slow ? size : 1;
                if (!dist && d != slow)
                    sp.dist[d] = PASSION_DIST_COLLAPSED;
            }
            if (slow < 0 && size > 1)
                status = cli_fail("convert", "--dist collapses every "
                                  "dimension: give --grid");
        } else if (!status && !dist) {
            for (int d = 0; d < nd; d++)
                sp.dist[d] = sp.grid[d] > 1 ? PASSION_DIST_BLOCK
                                            : PASSION_DIST_COLLAPSED;
        }
        /* the new set's files are in this machine's byte order */
        cli_type_native(&sp);
    }
    /* before anything is created: not set to set, never onto one of
       SRC's files, never over an existing DST unless --force */
    if (!status && src.local && local)
        status = cli_fail("convert", "local set to local set: convert to a "
                          "global file first (e.g. raw or .npy), then to the "
                          "new set");
    cli_guard g = {0};
    cli_guard_input(&g, &src);
    cli_guard_output(&g, pos[1], size);
    if (!status && cli_guard_check(&g, "convert", force))
        status = 1;
    if (!status && cli_create(ctx, "convert", pos[1], &sp, &dst))
        status = 1;
    if (!status) {
        cli_sect full;
        for (int d = 0; d < nd; d++) {
            full.start[d] = 0;
            full.count[d] = s->shape[d];
            full.stride[d] = 1;
        }
        cli_prog p;
        cli_prog_start(&p, "convert", c.progress);
        status = cli_copy(ctx, &c, "convert", &src, &full, &dst, &full,
                          chunk_of(ctx), &p);
    }
    if (!status)
        status = cli_publish(ctx, "convert", &dst);
    cli_close(&dst);
    cli_close(&src);
    passion_finalize(ctx);
    return status;
}
