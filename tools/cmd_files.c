/*
 * cmd_files.c - the file tools `passion get`, `put` and `convert` (README
 * "The passion command"), and what every file tool's command shares: the
 * usage error, the help, the buffer size (`ls` is in cmd_ls.c, `dump` in
 * cmd_dump.c). Each tool parses its arguments on every rank alike (so
 * every rank takes the same path through the collective calls), prints on
 * rank 0, exits 0 on success and 1 with one line on stderr on failure (2
 * for a usage error).
 */
#include "files.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------ helpers */

/* Usage error: message and exit code 2. */
int cli_usage_err(const char *cmd, const char *usage, const char *fmt,
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

int cli_help(const char *usage)
{
    if (cli_rank() == 0) {
        cli_usage(stdout, usage);
        cli_usage(stdout, cli_common_help);
    }
    return 0;
}

/* The budget of ctx, at least 4 KiB: the command's buffers. */
int64_t cli_chunk_of(passion_ctx *ctx)
{
    int64_t b = cli_budget(ctx);
    return b < 4096 ? 4096 : b;
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
            return cli_help(usage);
        int k = cli_common_arg(&c, argc, argv, &i);
        if (k < 0)
            return 2;
        if (k)
            continue;
        if (!put && (!strcmp(a, "-o") || !strcmp(a, "--output"))) {
            if (i + 1 >= argc)
                return cli_usage_err(cmd, usage, "%s needs a file", a);
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
                return cli_usage_err(cmd, usage, "--casting %s: want safe or "
                                     "unsafe", v ? v : "needs a value");
            unsafe = !strcmp(v, "unsafe");
            continue;
        }
        if (a[0] == '-' && a[1] && !(a[1] >= '0' && a[1] <= '9') &&
            a[1] != ':' && a[1] != ',')
            return cli_usage_err(cmd, usage, "unknown option %s", a);
        if (npos == (put ? 3 : 2))
            return cli_usage_err(cmd, usage, "extra argument %s", a);
        pos[npos++] = a;
    }
    if (npos < (put ? 2 : 1) || (!put && !out))
        return cli_usage_err(cmd, usage, "%s",
                             put ? "want SRC DST SECTION"
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
                          cli_chunk_of(ctx), &p);
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
            return cli_help(convert_usage);
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
                    return cli_usage_err("convert", convert_usage,
                                         "%s needs a value", a);
            }
        }
        if (slot)
            continue;
        if (a[0] == '-' && a[1])
            return cli_usage_err("convert", convert_usage,
                                 "unknown option %s", a);
        if (npos == 2)
            return cli_usage_err("convert", convert_usage,
                                 "extra argument %s", a);
        pos[npos++] = a;
    }
    if (npos < 2)
        return cli_usage_err("convert", convert_usage, "%swant SRC DST", "");
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
                          cli_chunk_of(ctx), &p);
    }
    if (!status)
        status = cli_publish(ctx, "convert", &dst);
    cli_close(&dst);
    cli_close(&src);
    passion_finalize(ctx);
    return status;
}
