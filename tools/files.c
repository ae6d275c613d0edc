/*
 * files.c - what the file tools share: common options, contexts, messages,
 * opening files by name, creating them under a temporary name and
 * publishing them, progress.
 *
 * Invariants: every message about a failure is one line on rank 0's
 * stderr; a file this module creates is invisible under its final name
 * until cli_publish (a temporary ".passion-tmp-NAME" in the same directory,
 * renamed in one step by passion_file_rename).
 */
#include "files.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_rank(void)
{
    int r = 0, init = 0;
    MPI_Initialized(&init);
    if (init)
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

const char cli_common_help[] =
    "common options:\n"
    "  --budget SIZE       memory budget (memory_budget; K, M, G suffixes):\n"
    "                      the command's buffers hold at most this much per\n"
    "                      rank, the library's staging as much again\n"
    "  --options K=V,...   any passion option (as PASSION_OPTIONS)\n"
    "  --progress          show progress on rank 0's stderr (a live line on\n"
    "                      a terminal, else a line every 5 s)\n"
    "  --no-progress       never (default: shown when it runs over 2 s)\n"
    "  --shape N,N,...     a raw file's shape (raw files have no header)\n"
    "  --type T            a raw file's element type: numpy code (f8, <i4,\n"
    "                      >c16, u1, b1) or name (float64, uint8)\n"
    "  --header BYTES      bytes before a raw file's data (default 0)\n"
    "  --order C|F         a raw file's storage order (default C)\n"
    "  --help              this text\n";

/* "--key value" or "--key=value": the value, advancing *i. */
static const char *value_of(const char *key, int argc, char **argv, int *i)
{
    size_t kl = strlen(key);
    const char *a = argv[*i];
    if (strncmp(a, key, kl))
        return NULL;
    if (a[kl] == '=')
        return a + kl + 1;
    if (a[kl] || *i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

int cli_common_arg(cli_common *c, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v;
    if (!strcmp(a, "--progress")) {
        c->progress = 1;
        return 1;
    }
    if (!strcmp(a, "--no-progress")) {
        c->progress = 0;
        return 1;
    }
    static const char *const keys[] = {"--budget", "--options", "--shape",
                                       "--type", "--header", "--order"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        size_t kl = strlen(keys[k]);
        if (strncmp(a, keys[k], kl) || (a[kl] && a[kl] != '='))
            continue;
        if (!(v = value_of(keys[k], argc, argv, i))) {
            if (cli_rank() == 0)
                fprintf(stderr, "passion: %s needs a value\n", keys[k]);
            return -1;
        }
        switch (k) {
        case 0: c->budget = v; break;
        case 1: c->options = v; break;
        case 2: c->shape = v; break;
        case 3: c->type = v; break;
        case 4: {
            char *end;
            c->header = strtoll(v, &end, 10);
            if (*end || c->header < 0) {
                if (cli_rank() == 0)
                    fprintf(stderr, "passion: --header %s: want bytes >= "
                            "0\n", v);
                return -1;
            }
            break;
        }
        default:
            if (strcmp(v, "C") && strcmp(v, "F")) {
                if (cli_rank() == 0)
                    fprintf(stderr, "passion: --order %s: want C or F\n", v);
                return -1;
            }
            c->col_major = !strcmp(v, "F");
        }
        return 1;
    }
    return 0;
}

int cli_fail(const char *cmd, const char *fmt, ...)
{
    if (cli_rank() == 0) {
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        for (char *c = msg; *c; c++) /* one line */
            if (*c == '\n')
                *c = ' ';
        fprintf(stderr, "passion %s: %s\n", cmd, msg);
    }
    return 1;
}

int cli_fail_rc(const char *cmd, passion_ctx *ctx, int rc, const char *what)
{
    const char *d = ctx ? passion_ctx_errdetail(ctx) : "";
    return cli_fail(cmd, "%s: %s%s%s%s", what, passion_strerror(rc),
                    *d ? " (" : "", d, *d ? ")" : "");
}

static int make_ctx(MPI_Comm comm, const cli_common *c, passion_ctx **ctx)
{
    *ctx = NULL;
    passion_options *o = NULL;
    int rc = passion_options_create(&o);
    const char *bad = NULL;
    if (!rc && c->options && (rc = passion_options_parse(o, c->options)))
        bad = "--options";
    if (!rc && c->budget &&
        (rc = passion_options_set(o, "memory_budget", c->budget)))
        bad = "--budget";
    if (rc) {
        if (comm == MPI_COMM_WORLD)
            cli_fail("options", "%s: %s", bad ? bad : "options",
                     o ? passion_options_errdetail(o) : "no memory");
        passion_options_free(o);
        return rc;
    }
    rc = passion_init(comm, o, ctx);
    passion_options_free(o);
    if (rc && comm == MPI_COMM_WORLD) {
        const char *d = passion_ctx_errdetail(NULL); /* init's, no ctx */
        cli_fail("init", "%s%s%s", passion_strerror(rc), *d ? ": " : "", d);
    }
    return rc;
}

int cli_ctx(const cli_common *c, passion_ctx **ctx)
{
    return make_ctx(MPI_COMM_WORLD, c, ctx);
}

int cli_ctx_self(const cli_common *c, passion_ctx **ctx)
{
    return make_ctx(MPI_COMM_SELF, c, ctx);
}

/* ------------------------------------------------------------ names */

static int ends(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && !strncmp(s + n - k, suffix, k);
}

/* Length of the file part of name (before ":NAME" for HDF5/netCDF). */
static size_t file_len(const char *name)
{
    const char *c = strrchr(name, ':');
    size_t n = strlen(name);
    if (c) {
        size_t k = (size_t)(c - name);
        if (ends(name, k, ".h5") || ends(name, k, ".hdf5") ||
            ends(name, k, ".nc"))
            return k;
    }
    return n;
}

size_t cli_file_len(const char *name)
{
    return file_len(name);
}

char cli_name_kind(const char *name)
{
    size_t n = file_len(name);
    for (size_t i = 0; i + 1 < n; i++) {
        if (name[i] == '%' && (name[i + 1] == 'd' || name[i + 1] == 'r'))
            return 'l';
        if (name[i] == '%' && name[i + 1] == '%')
            i++;
    }
    if (ends(name, n, ".passion"))
        return 'l';
    if (ends(name, n, ".npy"))
        return 'n';
    if (ends(name, n, ".h5") || ends(name, n, ".hdf5"))
        return 'h';
    if (ends(name, n, ".nc"))
        return 'c';
    return 'r';
}

int cli_row_major_only(const char *name)
{
    char k = cli_name_kind(name);
    return k == 'h' || k == 'c';
}

const char *cli_kind_name(char k)
{
    switch (k) {
    case 'l': return "passion local set";
    case 'n': return "npy";
    case 'h': return "HDF5";
    case 'c': return "netCDF";
    default: return "raw";
    }
}

int64_t cli_local_count(const passion_array_spec *s, int d, int p)
{
    int64_t n = s->shape[d], m = s->block[d], P = s->grid[d];
    switch (s->dist[d]) {
    case PASSION_DIST_BLOCK: {
        if (p * m >= n)
            return 0;
        return n - p * m < m ? n - p * m : m;
    }
    case PASSION_DIST_CYCLIC: {
        int64_t nb = n / m + (n % m != 0);
        if (nb <= p)
            return 0;
        int64_t k = (nb - 1 - p) / P + 1, c = k * m;
        if ((nb - 1) % P == p && n % m)
            c -= m - n % m;
        return c;
    }
    default:
        return n;
    }
}

/* ------------------------------------------------------ open / create */

static int raw_spec(const cli_common *c, const char *cmd, const char *name,
                    passion_array_spec *s)
{
    char why[256];
    struct stat st;
    if (!stat(name, &st) && S_ISDIR(st.st_mode))
        return cli_fail(cmd, "%s is a directory, not an array file", name);
    if (!c->shape || !c->type)
        return cli_fail(cmd, "%s: a raw file (no .npy/.h5/.nc extension, no "
                        "%%d) needs --shape and --type", name);
    int64_t shape[CLI_MAX_DIMS];
    int nd = 1;
    for (const char *p = c->shape; *p; p++)
        nd += *p == ',';
    if (nd > CLI_MAX_DIMS)
        return cli_fail(cmd, "--shape %s: at most 7 dimensions", c->shape);
    if (cli_list_parse(c->shape, nd, 1, shape, why, sizeof why))
        return cli_fail(cmd, "--shape %s", why);
    passion_array_spec_init(s, nd, shape, 1);
    if (cli_type_parse(c->type, s, why, sizeof why))
        return cli_fail(cmd, "--type: %s", why);
    s->placement = PASSION_PLACE_GLOBAL;
    s->header_bytes = c->header;
    s->storage = c->col_major ? PASSION_COL_MAJOR : PASSION_ROW_MAJOR;
    return 0;
}

int cli_open(passion_ctx *ctx, const cli_common *c, const char *cmd,
             const char *name, passion_mode mode, cli_obj *o)
{
    memset(o, 0, sizeof *o);
    o->q = -1;
    snprintf(o->name, sizeof o->name, "%s", name);
    char k = cli_name_kind(name);
    int rc;
    if (k == 'l') {
        o->local = 1;
        rc = passion_array_spec_read(ctx, name, &o->spec, &o->nfiles,
                                     o->pattern, sizeof o->pattern);
        if (rc)
            return cli_fail_rc(cmd, ctx, rc, name);
        return 0;
    }
    if (k == 'r') {
        passion_array_spec s;
        int bad = raw_spec(c, cmd, name, &s);
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX,
                      MPI_COMM_WORLD);
        if (bad)
            return 1;
        if ((rc = passion_array_create(ctx, &s, &o->a)))
            return cli_fail_rc(cmd, ctx, rc, name);
        if ((rc = passion_file_open(o->a, name, mode,
                                    &o->f))) {
            cli_fail_rc(cmd, ctx, rc, name);
            passion_array_free(o->a);
            o->a = NULL;
            return 1;
        }
    } else {
        /* the file's own header says shape, type and storage order */
        rc = passion_open(ctx, name, mode, NULL, &o->a, &o->f);
        if (rc)
            return cli_fail_rc(cmd, ctx, rc, name);
    }
    o->spec = *passion_array_get_spec(o->a);
    o->nfiles = 1;
    return 0;
}

/* "dir/.passion-tmp-base" for "dir/base", and "dir/.passion-tmp-f.h5:/x/y"
   for "dir/f.h5:/x/y" (the directory is the file part's: an object path
   has slashes too; the format's extension stays last, so the temporary is
   created in the same format). */
void cli_temp_name(const char *name, char *out, size_t n)
{
    size_t fl = file_len(name);
    int dl = 0;
    for (size_t i = 0; i < fl; i++)
        if (name[i] == '/')
            dl = (int)i + 1;
    snprintf(out, n, "%.*s.passion-tmp-%s", dl, name, name + dl);
}

int cli_pattern_path(const char *pattern, int q, char *out, size_t n)
{
    size_t w = 0;
    int conv = 0;
    for (const char *p = pattern; *p; p++) {
        if (w + 16 >= n)
            return -1;
        if (p[0] == '%' && (p[1] == 'd' || p[1] == 'r')) {
            w += (size_t)snprintf(out + w, n - w, "%d", q);
            conv = 1;
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            out[w++] = '%';
            p++;
        } else {
            out[w++] = *p;
        }
    }
    out[w] = '\0';
    if (!conv && (size_t)snprintf(out + w, n - w, ".%d", q) >= n - w)
        return -1;
    return 0;
}

/* The library's naming rule (README "Local array sets"): every %d / %r
   of the file name goes, with one '.', '_' or '-' right before it; %%
   becomes %; ".passion" is appended. */
int cli_lset_desc(const char *name, char *out, size_t n)
{
    size_t len = strlen(name), sl = strlen(".passion");
    if (len > sl && !strcmp(name + len - sl, ".passion"))
        return (size_t)snprintf(out, n, "%s", name) < n ? 0 : -1;
    const char *slash = strrchr(name, '/');
    size_t dl = slash ? (size_t)(slash - name) + 1 : 0;
    for (size_t i = 0; i < dl; i++) {
        if (name[i] == '%' && (name[i + 1] == 'd' || name[i + 1] == 'r'))
            return -1;
        if (name[i] == '%' && name[i + 1] == '%')
            i++;
    }
    if (len + sl + 1 > n)
        return -1;
    memcpy(out, name, dl);
    size_t w = dl;
    for (size_t i = dl; i < len; i++) {
        if (name[i] == '%' && (name[i + 1] == 'd' || name[i + 1] == 'r')) {
            if (w > dl && (out[w - 1] == '.' || out[w - 1] == '_' ||
                           out[w - 1] == '-'))
                w--;
            i++;
        } else if (name[i] == '%' && name[i + 1] == '%') {
            out[w++] = '%';
            i++;
        } else {
            out[w++] = name[i];
        }
    }
    memcpy(out + w, ".passion", sl + 1);
    return 0;
}

int cli_create(passion_ctx *ctx, const char *cmd, const char *name,
               const passion_array_spec *spec, cli_obj *o)
{
    memset(o, 0, sizeof *o);
    o->q = -1;
    snprintf(o->name, sizeof o->name, "%s", name);
    o->local = cli_name_kind(name) == 'l';
    if (o->local && cli_name_kind(name) == 'l' &&
        strlen(name) > 8 && !strcmp(name + strlen(name) - 8, ".passion"))
        return cli_fail(cmd, "%s: name a new local set by its pattern "
                        "(data.%%d.laf), not by its description", name);
    size_t fl = file_len(name);
    char file[PATH_MAX], tmp[PATH_MAX + 64];
    snprintf(file, sizeof file, "%.*s", (int)fl, name);
    cli_temp_name(name, tmp, sizeof tmp);
    snprintf(o->final, sizeof o->final, "%s", file);
    /* netCDF classic data are big-endian whatever the source's order:
       NATIVE lets the library convert (memory is always native) */
    passion_array_spec sp = *spec;
    if (cli_name_kind(name) == 'c')
        sp.endian = PASSION_ENDIAN_NATIVE;
    int rc = passion_array_create(ctx, &sp, &o->a);
    if (rc)
        return cli_fail_rc(cmd, ctx, rc, name);
    rc = passion_file_open(o->a, tmp, PASSION_MODE_CREATE, &o->f);
    if (rc) {
        cli_fail_rc(cmd, ctx, rc, name);
        passion_array_free(o->a);
        o->a = NULL;
        return 1;
    }
    o->spec = *passion_array_get_spec(o->a);
    o->nfiles = 1;
    if (o->local) {
        int size;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        o->nfiles = size;
        snprintf(o->pattern, sizeof o->pattern, "%s", name);
    }
    return 0;
}

int cli_publish(passion_ctx *ctx, const char *cmd, cli_obj *o)
{
    int rc = passion_file_rename(o->f, o->final);
    if (rc)
        return cli_fail_rc(cmd, ctx, rc, o->final);
    return 0;
}

void cli_close(cli_obj *o)
{
    if (o->qf)
        passion_file_close(o->qf);
    passion_array_free(o->qa);
    passion_finalize(o->self);
    o->qf = NULL;
    o->qa = NULL;
    o->self = NULL;
    passion_file_close(o->f);
    passion_array_free(o->a);
    o->f = NULL;
    o->a = NULL;
}

/* ------------------------------------------------------------ progress */

void cli_prog_start(cli_prog *p, const char *what, int mode)
{
    memset(p, 0, sizeof *p);
    p->what = what;
    p->mode = cli_rank() == 0 ? mode : 0;
    p->tty = isatty(2);
    /* seconds between lines when stderr is no terminal */
    const char *iv = getenv("PASSION_PROGRESS_INTERVAL");
    char *end = NULL;
    p->interval = iv && *iv ? strtod(iv, &end) : 5;
    if (!end || *end || !(p->interval >= 0))
        p->interval = 5;
    p->t0 = p->last = MPI_Wtime();
    if (p->mode == 1)
        cli_prog_update(p, 0, 0);
}

static void human(uint64_t b, char *buf, size_t n)
{
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int i = 0;
    while (v >= 1024 && i < 4)
        v /= 1024, i++;
    snprintf(buf, n, i ? "%.1f %s" : "%.0f %s", v, u[i]);
}

void cli_prog_update(cli_prog *p, double fraction, uint64_t bytes)
{
    if (!p || !p->mode)
        return;
    double now = MPI_Wtime(), el = now - p->t0;
    if (p->mode < 0 && el < 2)
        return; /* auto: only commands that run a while */
    if (!p->tty && p->shown && now - p->last < p->interval)
        return;
    if (p->tty && p->shown && now - p->last < 0.2)
        return;
    p->last = now;
    p->shown = 1;
    char hb[32], rb[32];
    human(bytes, hb, sizeof hb);
    human((uint64_t)(el > 0 ? (double)bytes / el : 0), rb, sizeof rb);
    int pct = (int)floor(fraction * 100);
    if (p->tty)
        fprintf(stderr, "\r\033[Kpassion %s: %3d%%  %s  %s/s  %.0f s",
                p->what, pct, hb, rb, el);
    else
        fprintf(stderr, "passion %s: %3d%%  %s  %s/s  %.0f s\n", p->what,
                pct, hb, rb, el);
    fflush(stderr);
}

void cli_prog_end(cli_prog *p, uint64_t bytes)
{
    if (!p || !p->mode || (!p->shown && p->mode < 0))
        return;
    p->last = 0;
    p->shown = 1;
    int tty = p->tty;
    double t = p->t0;
    p->t0 = t;
    if (tty) {
        cli_prog_update(p, 1, bytes);
        fputc('\n', stderr);
    } else {
        p->shown = 0; /* force the final line */
        cli_prog_update(p, 1, bytes);
    }
}
