/*
 * lset.c - the description of a local array set (README "Local array
 * sets"): a small text file written next to the local array files when
 * they are created, from which the set can be opened by its name alone.
 *
 * Naming: for the pattern "dir/data.%d.laf" the description is
 * "dir/data.laf.passion": every "%d"/"%r" of the pattern's file name is
 * removed together with one '.', '_' or '-' right before it, "%%" becomes
 * '%', and ".passion" is appended ("x" -> "x.passion"). Its "files" line
 * holds the pattern's file name, resolved against the description's
 * directory. A pattern with a conversion in its directory part gets no
 * description (ocad_lset_name returns -EINVAL).
 *
 * Format (text, one "key value..." per line, '#' starts a comment, keys in
 * this order, every one required):
 *   passion-local-set 1           format version
 *   library 1.0.0                 the writer's passion version (ignored)
 *   files data.%d.laf             the pattern's file name
 *   ranks 4                       files in the set (the writers' ranks)
 *   ndims 2
 *   shape 1000 2000               global shape
 *   kind float                    bytes int uint float complex bool
 *   elem_size 8
 *   endian little                 the files' byte order: little | big
 *   storage row-major             row-major | col-major | custom
 *   order 0 1                     slowest to fastest dimension in the file
 *   grid 2 2                      ranks per dimension
 *   dist BLOCK(500) CYCLIC(4)     BLOCK(m), CYCLIC(m) or * per dimension
 *   ghost 1 0                     ghost width per dimension
 *
 * Invariants of a parsed description (ocad_lset_parse checks them all, so
 * the input may be anything): version 1; 1 <= ndims <= PASSION_MAX_DIMS;
 * shape > 0 and their byte count fits int64; elem_size 1..64; order a
 * permutation matching storage; grid >= 1 with product == ranks <= 2^31;
 * BLOCK(m) covers its dimension, CYCLIC m >= 1, m <= shape (as
 * ocad_spec_check normalises it), collapsed dimensions have grid 1 and
 * m == shape; 0 <= ghost <= shape; files is a non-empty name without '/',
 * shorter than OCAD_LSET_FILES.
 * The parser needs no context and no MPI (tests/fuzz/fuzz_lset.c drives
 * it).
 */
#include "ocad.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {"bytes", "int",     "uint",
                                         "float", "complex", "bool"};
static const char *const storage_names[] = {"row-major", "col-major",
                                            "custom"};

int ocad_lset_name(const char *pat, char **out)
{
    *out = NULL;
    const char *slash = strrchr(pat, '/');
    size_t dl = slash ? (size_t)(slash - pat) + 1 : 0;
    for (size_t i = 0; i < dl; i++) {
        if (pat[i] == '%' && (pat[i + 1] == 'd' || pat[i + 1] == 'r'))
            return -EINVAL;
        if (pat[i] == '%' && pat[i + 1] == '%')
            i++;
    }
    size_t n = strlen(pat);
    char *o = malloc(n + sizeof ".passion");
    if (!o)
        return -ENOMEM;
    memcpy(o, pat, dl);
    size_t w = dl;
    for (size_t i = dl; i < n; i++) {
        if (pat[i] == '%' && (pat[i + 1] == 'd' || pat[i + 1] == 'r')) {
            if (w > dl && (o[w - 1] == '.' || o[w - 1] == '_' ||
                           o[w - 1] == '-'))
                w--;
            i++;
        } else if (pat[i] == '%' && pat[i + 1] == '%') {
            o[w++] = '%';
            i++;
        } else {
            o[w++] = pat[i];
        }
    }
    memcpy(o + w, ".passion", sizeof ".passion");
    *out = o;
    return 0;
}

/* Append to a growing string; -1 when out of memory. */
typedef struct sbuf {
    char *p;
    size_t n, cap;
    int bad;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    if (b->bad)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL,
                          b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->bad = 1;
            return;
        }
        if (b->p && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = (b->cap ? b->cap * 2 : 512) + (size_t)k;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->bad = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
}

int ocad_lset_format(const ocad_lset *d, char **text, int64_t *len)
{
    *text = NULL;
    *len = 0;
    if (d->kind < 0 || d->kind > 5 || d->storage < 0 || d->storage > 2 ||
        d->ndims < 1 || d->ndims > PASSION_MAX_DIMS)
        return -EINVAL;
    sbuf b = {0};
    int nd = d->ndims;
    sb_printf(&b, "# passion local array set (README: Local array sets)\n");
    sb_printf(&b, "passion-local-set %d\n", OCAD_LSET_VERSION);
    sb_printf(&b, "library %s\n", PASSION_VERSION_STRING);
    sb_printf(&b, "files %s\n", d->files);
    sb_printf(&b, "ranks %d\n", d->nranks);
    sb_printf(&b, "ndims %d\n", nd);
    sb_printf(&b, "shape");
    for (int i = 0; i < nd; i++)
        sb_printf(&b, " %" PRId64, d->shape[i]);
    sb_printf(&b, "\nkind %s\n", kind_names[d->kind]);
    sb_printf(&b, "elem_size %" PRId64 "\n", d->elem_size);
    sb_printf(&b, "endian %s\n", d->big_endian ? "big" : "little");
    sb_printf(&b, "storage %s\n", storage_names[d->storage]);
    sb_printf(&b, "order");
    for (int i = 0; i < nd; i++)
        sb_printf(&b, " %d", d->order[i]);
    sb_printf(&b, "\ngrid");
    for (int i = 0; i < nd; i++)
        sb_printf(&b, " %d", d->grid[i]);
    sb_printf(&b, "\ndist");
    for (int i = 0; i < nd; i++) {
        if (d->dist[i] == PASSION_DIST_COLLAPSED)
            sb_printf(&b, " *");
        else
            sb_printf(&b, " %s(%" PRId64 ")",
                      d->dist[i] == PASSION_DIST_BLOCK ? "BLOCK" : "CYCLIC",
                      d->block[i]);
    }
    sb_printf(&b, "\nghost");
    for (int i = 0; i < nd; i++)
        sb_printf(&b, " %" PRId64, d->ghost[i]);
    sb_printf(&b, "\n");
    if (b.bad) {
        free(b.p);
        return -ENOMEM;
    }
    *text = b.p;
    *len = (int64_t)b.n;
    return 0;
}

/* ---- parser: a cursor over (buf, n) that never reads past the end ---- */

typedef struct cur {
    const char *p, *end;
} cur;

/* Skip blank lines and comment lines; 1 if a line with content remains. */
static int next_line(cur *c)
{
    for (;;) {
        while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' ||
                                 *c->p == '\r' || *c->p == '\n'))
            c->p++;
        if (c->p >= c->end)
            return 0;
        if (*c->p != '#')
            return 1;
        while (c->p < c->end && *c->p != '\n')
            c->p++;
    }
}

/* The next word of the current line into w (NUL-terminated, at most
   wl - 1 bytes); 0 if the line has no more words or a word is too long. */
static int word(cur *c, char *w, size_t wl)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
        c->p++;
    size_t k = 0;
    while (c->p < c->end && *c->p != ' ' && *c->p != '\t' &&
           *c->p != '\n' && *c->p != '\r') {
        if (k + 1 >= wl || *c->p == '\0')
            return 0;
        w[k++] = *c->p++;
    }
    w[k] = '\0';
    return k > 0;
}

/* The rest of the line must be empty. */
static int line_end(cur *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r'))
        c->p++;
    return c->p >= c->end || *c->p == '\n';
}

/* A decimal int64 in [lo, hi], the whole word. */
static int num(const char *w, int64_t lo, int64_t hi, int64_t *v)
{
    const char *s = w;
    int neg = 0;
    if (*s == '-')
        neg = 1, s++;
    if (!*s)
        return 0;
    int64_t x = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        if (!core_mul(x, 10, &x) || !core_add(x, *s - '0', &x))
            return 0;
    }
    if (neg)
        x = -x;
    if (x < lo || x > hi)
        return 0;
    *v = x;
    return 1;
}

/* "key" then exactly n numbers in [lo, hi] on one line. */
static int key_nums(cur *c, const char *key, int n, int64_t lo, int64_t hi,
                    int64_t *v, const char **why, const char *msg)
{
    char w[64];
    if (!next_line(c) || !word(c, w, sizeof w) || strcmp(w, key)) {
        *why = msg;
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (!word(c, w, sizeof w) || !num(w, lo, hi, &v[i])) {
            *why = msg;
            return -1;
        }
    if (!line_end(c)) {
        *why = msg;
        return -1;
    }
    return 0;
}

static int key_word(cur *c, const char *key, char *w, size_t wl,
                    const char **why, const char *msg)
{
    char k[64];
    if (!next_line(c) || !word(c, k, sizeof k) || strcmp(k, key) ||
        !word(c, w, wl) || !line_end(c)) {
        *why = msg;
        return -1;
    }
    return 0;
}

static int pick(const char *w, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(w, names[i]))
            return i;
    return -1;
}

/* the parse's failure: why it failed, -1 */
static int fail(const char **why, const char *msg)
{
    *why = msg;
    return -1;
}

/* The "dist" line: ndims entries BLOCK(m), CYCLIC(m) or * (collapsed,
   grid 1), each block size in 1..shape, a BLOCK covering its dimension
   with the grid; d->dist and d->block set. 0, or -1 with *why. */
static int parse_dist(cur *c, ocad_lset *d, const char **why)
{
    const int nd = d->ndims;
    char w[OCAD_LSET_FILES];
    char k[16];
    if (!next_line(c) || !word(c, k, sizeof k) || strcmp(k, "dist"))
        return fail(why, "bad or missing \"dist\"");
    for (int i = 0; i < nd; i++) {
        if (!word(c, w, 64))
            return fail(why, "\"dist\" needs ndims entries");
        int64_t n = d->shape[i], m;
        if (!strcmp(w, "*")) {
            d->dist[i] = PASSION_DIST_COLLAPSED;
            if (d->grid[i] != 1)
                return fail(why, "a collapsed (*) dimension needs grid 1");
            d->block[i] = n;
            continue;
        }
        const char *open = strchr(w, '(');
        size_t wl = strlen(w);
        if (!open || wl < 3 || w[wl - 1] != ')')
            return fail(why, "\"dist\" entries are BLOCK(m), CYCLIC(m) "
                             "or *");
        w[wl - 1] = '\0';
        size_t nl = (size_t)(open - w);
        if (nl == 5 && !strncmp(w, "BLOCK", 5))
            d->dist[i] = PASSION_DIST_BLOCK;
        else if (nl == 6 && !strncmp(w, "CYCLIC", 6))
            d->dist[i] = PASSION_DIST_CYCLIC;
        else
            return fail(why, "\"dist\" entries are BLOCK(m), CYCLIC(m) "
                             "or *");
        if (!num(open + 1, 1, n, &m))
            return fail(why, "a block size m must be in 1..shape");
        if (d->dist[i] == PASSION_DIST_BLOCK) {
            int64_t cover;
            if (core_mul(m, d->grid[i], &cover) && cover < n)
                return fail(why, "BLOCK(m) times grid does not cover "
                                 "the dimension");
        }
        d->block[i] = m;
    }
    if (!line_end(c))
        return fail(why, "\"dist\" has more than ndims entries");
    return 0;
}

int ocad_lset_parse(const void *buf, int64_t n, ocad_lset *d,
                    const char **why)
{
    memset(d, 0, sizeof *d);
    cur c = {buf, (const char *)buf + (n > 0 ? n : 0)};
    int64_t v[PASSION_MAX_DIMS];
    char w[OCAD_LSET_FILES];
    if (key_nums(&c, "passion-local-set", 1, 0, INT32_MAX, v, why,
                 "not a passion local set description (first line must be "
                 "\"passion-local-set 1\")"))
        return -1;
    if (v[0] != OCAD_LSET_VERSION)
        return fail(why, "unknown description version (this passion reads 1)");
    d->version = (int)v[0];
    if (key_word(&c, "library", w, 64, why, "bad or missing \"library\""))
        return -1;
    if (key_word(&c, "files", d->files, sizeof d->files, why,
                 "bad or missing \"files\" (one name, shorter than 1024)"))
        return -1;
    if (strchr(d->files, '/'))
        return fail(why, "\"files\" must be a file name without '/'");
    if (key_nums(&c, "ranks", 1, 1, (int64_t)1 << 31, v, why,
                 "bad or missing \"ranks\" (1..2^31)"))
        return -1;
    d->nranks = (int)v[0];
    if (key_nums(&c, "ndims", 1, 1, PASSION_MAX_DIMS, v, why,
                 "bad or missing \"ndims\" (1..7)"))
        return -1;
    int nd = d->ndims = (int)v[0];
    if (key_nums(&c, "shape", nd, 1, INT64_MAX, d->shape, why,
                 "bad or missing \"shape\" (ndims sizes > 0)"))
        return -1;
    if (key_word(&c, "kind", w, 64, why, "bad or missing \"kind\"") ||
        (d->kind = pick(w, kind_names, 6)) < 0)
        return fail(why, "unknown \"kind\" (bytes int uint float complex "
                         "bool)");
    if (key_nums(&c, "elem_size", 1, 1, 64, v, why,
                 "bad or missing \"elem_size\" (1..64)"))
        return -1;
    d->elem_size = v[0];
    static const char *const endians[] = {"little", "big"};
    if (key_word(&c, "endian", w, 64, why, "bad or missing \"endian\"") ||
        (d->big_endian = pick(w, endians, 2)) < 0)
        return fail(why, "unknown \"endian\" (little or big)");
    if (key_word(&c, "storage", w, 64, why, "bad or missing \"storage\"") ||
        (d->storage = pick(w, storage_names, 3)) < 0)
        return fail(why, "unknown \"storage\" (row-major col-major custom)");
    if (key_nums(&c, "order", nd, 0, nd - 1, v, why,
                 "bad or missing \"order\" (ndims dimension numbers)"))
        return -1;
    int seen[PASSION_MAX_DIMS] = {0};
    for (int i = 0; i < nd; i++) {
        d->order[i] = (int)v[i];
        if (seen[v[i]]++)
            return fail(why, "\"order\" is not a permutation");
        if ((d->storage == PASSION_ROW_MAJOR && v[i] != i) ||
            (d->storage == PASSION_COL_MAJOR && v[i] != nd - 1 - i))
            return fail(why, "\"order\" does not match \"storage\"");
    }
    if (key_nums(&c, "grid", nd, 1, (int64_t)1 << 31, v, why,
                 "bad or missing \"grid\" (ndims counts >= 1)"))
        return -1;
    int64_t procs = 1, bytes = d->elem_size;
    for (int i = 0; i < nd; i++) {
        d->grid[i] = (int)v[i];
        if (!core_mul(procs, v[i], &procs) || procs > ((int64_t)1 << 31))
            return fail(why, "\"grid\" has more than 2^31 ranks");
        if (!core_mul(bytes, d->shape[i], &bytes))
            return fail(why, "\"shape\" holds more than 2^63 bytes");
    }
    if (procs != d->nranks)
        return fail(why, "the product of \"grid\" is not \"ranks\"");
    if (parse_dist(&c, d, why))
        return -1;
    if (key_nums(&c, "ghost", nd, 0, INT64_MAX, d->ghost, why,
                 "bad or missing \"ghost\" (ndims widths >= 0)"))
        return -1;
    for (int i = 0; i < nd; i++)
        if (d->ghost[i] > d->shape[i])
            return fail(why, "a ghost width exceeds its dimension");
    if (next_line(&c))
        return fail(why, "unexpected text after \"ghost\"");
    return 0;
}

/* The element kind of a spec, as the description names it (index into
   kind_names: bytes int uint float complex bool). */
int ocad_lset_kind(const passion_array_spec *s)
{
    return (int)s->kind; /* same order: bytes int uint float complex bool */
}

/* 1 if the spec's files are big-endian. */
int ocad_lset_big_endian(const passion_array_spec *s)
{
    return ocad_endian_resolve(s->endian) == PASSION_ENDIAN_BIG;
}

/* Largest description read (they are a few hundred bytes). */
#define LSET_MAX_BYTES 65536

/* The description's path for a name: a description itself (".passion")
   or a pattern. */
static int desc_path(passion_ctx *ctx, const char *name, char **desc)
{
    size_t n = strlen(name), sl = strlen(".passion");
    if (n > sl && !strcmp(name + n - sl, ".passion")) {
        if (!(*desc = strdup(name)))
            return core_err(ctx, PASSION_ENOMEM, "file name");
        return PASSION_OK;
    }
    int e = ocad_lset_name(name, desc);
    if (e == -EINVAL)
        return core_err(ctx, PASSION_EINVAL,
                        "%s: a local set's pattern may hold %%d only in its "
                        "file name", name);
    if (e)
        return core_err(ctx, PASSION_ENOMEM, "file name");
    return PASSION_OK;
}

/* Rank 0's part: read and parse the description. */
static int lset_read0(passion_ctx *ctx, const char *name, const char *desc,
                      ocad_lset *d)
{
    core_fh *fh = NULL;
    int rc = core_io_open(ctx, desc, CORE_O_RDONLY, &fh);
    if (rc == PASSION_ENOENT)
        return core_err(ctx, PASSION_ENOENT,
                        "%s: no local set description %s (a set gets one "
                        "when passion creates it)", name, desc);
    if (rc)
        return rc;
    int64_t size = 0;
    char *buf = NULL;
    rc = core_io_size(fh, &size);
    if (!rc && size > LSET_MAX_BYTES)
        rc = core_err(ctx, PASSION_EFORMAT,
                      "%s: %lld bytes, not a local set description", desc,
                      (long long)size);
    if (!rc && !(buf = core_malloc(ctx, (size_t)size + 1)))
        rc = core_err(ctx, PASSION_ENOMEM, "description buffer");
    if (!rc)
        rc = core_io_read(fh, buf, size, 0);
    const char *why = NULL;
    if (!rc && ocad_lset_parse(buf, size, d, &why))
        rc = core_err(ctx, PASSION_EFORMAT, "%s: %s", desc, why);
    core_free(ctx, buf);
    core_io_close(fh);
    return rc;
}

int ocad_lset_read(passion_ctx *ctx, const char *name, ocad_lset *d,
                   char **pattern)
{
    *pattern = NULL;
    memset(d, 0, sizeof *d);
    char *desc = NULL;
    int rc = desc_path(ctx, name, &desc);
    if (!rc && ctx->rank == 0)
        rc = lset_read0(ctx, name, desc, d);
    rc = core_agree(ctx, rc);
    if (!rc && MPI_Bcast(d, (int)sizeof *d, MPI_BYTE, 0, ctx->comm) !=
                   MPI_SUCCESS)
        rc = core_err(ctx, PASSION_EMPI, "broadcast of the description");
    if (!rc) {
        /* the files' pattern: the description's directory + files */
        const char *slash = strrchr(desc, '/');
        int dl = slash ? (int)(slash - desc) + 1 : 0;
        if (asprintf(pattern, "%.*s%s", dl, desc, d->files) < 0) {
            *pattern = NULL;
            rc = core_err(ctx, PASSION_ENOMEM, "file name");
        }
    }
    free(desc);
    return core_agree(ctx, rc);
}

int ocad_lset_spec(const ocad_lset *d, passion_array_spec *s)
{
    int rc = passion_array_spec_init(s, d->ndims, d->shape, d->elem_size);
    if (rc)
        return rc;
    s->storage = d->storage;
    s->placement = PASSION_PLACE_LOCAL;
    for (int i = 0; i < d->ndims; i++) {
        s->order[i] = d->order[i];
        s->grid[i] = d->grid[i];
        s->dist[i] = d->dist[i];
        s->block[i] = d->block[i];
        s->ghost[i] = d->ghost[i];
    }
    ocad_lset_set_type(d, s);
    return PASSION_OK;
}

void ocad_lset_set_type(const ocad_lset *d, passion_array_spec *s)
{
    s->kind = (passion_kind)d->kind;
    s->endian = d->elem_size == 1 || d->kind == 0
                    ? PASSION_ENDIAN_NATIVE
                    : d->big_endian ? PASSION_ENDIAN_BIG
                                    : PASSION_ENDIAN_LITTLE;
}

static int array_spec_read_body(passion_ctx *ctx, const char *name,
                                passion_array_spec *spec, int *nfiles,
                                char *pattern, size_t len)
{
    if (!ctx)
        return PASSION_EINVAL;
    core_enter(ctx);
    int rc = PASSION_OK;
    if (!name || !spec)
        rc = core_err(ctx, PASSION_EINVAL, "NULL name or spec");
    rc = core_agree(ctx, rc);
    if (rc)
        return rc;
    ocad_lset d;
    char *pat = NULL;
    rc = ocad_lset_read(ctx, name, &d, &pat);
    if (!rc)
        rc = ocad_lset_spec(&d, spec);
    if (!rc && nfiles)
        *nfiles = d.nranks;
    if (!rc && pattern && snprintf(pattern, len, "%s", pat) >= (int)len)
        rc = core_err(ctx, PASSION_ERANGE,
                      "pattern %s does not fit %zu bytes", pat, len);
    free(pat);
    return core_agree(ctx, rc);
}

/* the thread contract's guard (core_call_begin) around the call */
int passion_array_spec_read(passion_ctx *ctx, const char *name,
                            passion_array_spec *spec, int *nfiles,
                            char *pattern, size_t len)
{
    passion_ctx *gctx = ctx;
    int rc = core_call_begin(gctx);
    if (rc)
        return rc;
    rc = array_spec_read_body(ctx, name, spec, nfiles, pattern, len);
    core_call_end(gctx);
    return rc;
}

int ocad_lset_probe(passion_ctx *ctx, const char *name)
{
    (void)ctx;
    size_t n = strlen(name), sl = strlen(".passion");
    if (n > sl && !strcmp(name + n - sl, ".passion"))
        return 1;
    /* a rank conversion in the file name: a pattern */
    const char *slash = strrchr(name, '/');
    for (const char *c = slash ? slash + 1 : name; *c; c++) {
        if (c[0] == '%' && (c[1] == 'd' || c[1] == 'r'))
            return 1;
        if (c[0] == '%' && c[1] == '%')
            c++;
    }
    return 0;
}

int ocad_lset_spec0(passion_ctx *ctx, const char *name,
                    passion_array_spec *spec)
{
    char *desc = NULL;
    ocad_lset d;
    int rc = desc_path(ctx, name, &desc);
    if (!rc)
        rc = lset_read0(ctx, name, desc, &d);
    free(desc);
    if (!rc && ocad_lset_spec(&d, spec))
        rc = core_err(ctx, PASSION_EFORMAT, "%s: a description passion "
                      "cannot make a spec of", name);
    return rc;
}
