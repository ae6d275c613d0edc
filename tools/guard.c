/*
 * guard.c - the file tools refuse rather than corrupt: before a command
 * creates, opens for writing or truncates any file, it lists the files it
 * reads and the files it will write (outputs, their temporaries, a file
 * written in place) and refuses when one it writes is one it reads, or
 * when an output exists and --force was not given.
 *
 * Invariants: "the same file" is the same (st_dev, st_ino), so hard
 * links, symlinks and any spelling of a path ("./x", "d/../x") are
 * caught; rank 0 alone looks at the files and broadcasts its decision,
 * so every rank returns the same; nothing here opens a file.
 */
#include "files.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------- lists */

static struct cli_guard_item *add(cli_guard *g, char role, const char *name)
{
    if (g->n >= CLI_GUARD_MAX) {
        g->overflow = 1;
        return NULL;
    }
    struct cli_guard_item *it = &g->item[g->n++];
    memset(it, 0, sizeof *it);
    it->role = role;
    it->name = name;
    return it;
}

static struct cli_guard_item *add_path(cli_guard *g, char role,
                                       const char *name, const char *path,
                                       size_t len, int nfiles)
{
    struct cli_guard_item *it = add(g, role, name);
    if (it) {
        snprintf(it->path, sizeof it->path, "%.*s", (int)len, path);
        it->nfiles = nfiles;
    }
    return it;
}

/* A local set: its files and, when it has one, its description (an
   input's may be absent: a description may name another pattern). */
static void add_set(cli_guard *g, char role, const char *name,
                    const char *pattern, int nfiles)
{
    add_path(g, role, name, pattern, strlen(pattern), nfiles);
    char desc[PATH_MAX];
    struct cli_guard_item *it = NULL;
    if (!cli_lset_desc(pattern, desc, sizeof desc))
        it = add_path(g, role, name, desc, strlen(desc), 0);
    if (it)
        it->may_miss = 1;
}

void cli_guard_input(cli_guard *g, const cli_obj *o)
{
    if (o->local) {
        add_set(g, 'i', o->name, o->pattern, o->nfiles);
        char desc[PATH_MAX]; /* the description named, if not the
                                pattern's (it is read too) */
        struct cli_guard_item *it = NULL;
        if (!cli_lset_desc(o->name, desc, sizeof desc))
            it = add_path(g, 'i', o->name, desc, strlen(desc), 0);
        if (it)
            it->may_miss = 1;
        return;
    }
    const char *p = o->f ? passion_file_path(o->f) : NULL;
    if (!p)
        p = o->name;
    add_path(g, 'i', o->name, p, p == o->name ? cli_file_len(p)
                                              : strlen(p), 0);
}

void cli_guard_inplace(cli_guard *g, const cli_obj *o)
{
    const char *p = o->f ? passion_file_path(o->f) : NULL;
    if (!p)
        p = o->name;
    add_path(g, 'w', o->name, p, p == o->name ? cli_file_len(p)
                                              : strlen(p), 0);
}

void cli_guard_output(cli_guard *g, const char *name, int nranks)
{
    char tmp[PATH_MAX + 64];
    cli_temp_name(name, tmp, sizeof tmp);
    if (cli_name_kind(name) == 'l') {
        add_set(g, 'o', name, name, nranks);
        add_set(g, 't', name, tmp, nranks);
    } else {
        add_path(g, 'o', name, name, cli_file_len(name), 0);
        add_path(g, 't', name, tmp, cli_file_len(tmp), 0);
    }
}

/* ---------------------------------------------------------- checking */

typedef struct ident {
    dev_t dev;
    ino_t ino;
    int item, q;
} ident;

static int ident_cmp(const void *a, const void *b)
{
    const ident *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino)
        return x->ino < y->ino ? -1 : 1;
    return 0;
}

/* Path j of item it (its file q of a pattern); -1 when too long. */
static int item_path(const struct cli_guard_item *it, int q, char *out,
                     size_t n)
{
    if (!it->nfiles)
        return (size_t)snprintf(out, n, "%s", it->path) < n ? 0 : -1;
    return cli_pattern_path(it->path, q, out, n);
}

static int item_count(const struct cli_guard_item *it)
{
    return it->nfiles ? it->nfiles : 1;
}

/* Rank 0's decision: 0, or 1 with the message printed. */
static int check0(const cli_guard *g, const char *cmd, int force)
{
    char path[PATH_MAX], other[PATH_MAX];
    int nin = 0;
    for (int k = 0; k < g->n; k++)
        if (g->item[k].role == 'i')
            nin += item_count(&g->item[k]);
    ident *in = malloc(sizeof *in * (size_t)(nin ? nin : 1));
    if (!in)
        return cli_fail(cmd, "no memory to compare %d input files with the "
                        "outputs", nin);
    int m = 0, status = 0;
    struct stat st;
    /* every input that was opened is there: one that cannot be looked
       at could be an output under another name, so it refuses */
    for (int k = 0; k < g->n && !status; k++) {
        const struct cli_guard_item *it = &g->item[k];
        for (int q = 0; it->role == 'i' && q < item_count(it); q++) {
            if (item_path(it, q, path, sizeof path)) {
                status = cli_fail(cmd, "%s: a file name is too long",
                                  it->name);
                break;
            }
            if (!stat(path, &st)) {
                in[m++] = (ident){st.st_dev, st.st_ino, k, q};
            } else if (!it->may_miss || errno != ENOENT) {
                status = cli_fail(cmd, "%s: %s (cannot tell whether an "
                                  "output is this input)", path,
                                  strerror(errno));
                break;
            }
        }
    }
    qsort(in, (size_t)m, sizeof *in, ident_cmp);
    /* first: anything written that is an input (even with --force) */
    for (int k = 0; k < g->n && !status; k++) {
        const struct cli_guard_item *it = &g->item[k];
        if (it->role == 'i')
            continue;
        for (int q = 0; q < item_count(it) && !status; q++) {
            if (item_path(it, q, path, sizeof path)) {
                status = cli_fail(cmd, "%s: a file name is too long",
                                  it->name);
                break;
            }
            if (stat(path, &st)) {
                if (errno == ENOENT || errno == ENOTDIR)
                    continue;
                status = cli_fail(cmd, "%s: %s (cannot tell whether it is "
                                  "an input)", path, strerror(errno));
                break;
            }
            ident key = {st.st_dev, st.st_ino, 0, 0}, *hit;
            hit = bsearch(&key, in, (size_t)m, sizeof *in, ident_cmp);
            if (!hit)
                continue;
            const struct cli_guard_item *src = &g->item[hit->item];
            item_path(src, hit->q, other, sizeof other);
            status = cli_fail(cmd, "%s%s%s is the same file as the input "
                              "%s%s%s%s: refusing to %s an input",
                              it->name, strcmp(it->name, path) ? ": " : "",
                              strcmp(it->name, path) ? path : "", src->name,
                              strcmp(src->name, other) ? " (" : "",
                              strcmp(src->name, other) ? other : "",
                              strcmp(src->name, other) ? ")" : "",
                              it->role == 'w' ? "write into" : "replace");
        }
    }
    /* then: an output that exists (a dangling symlink too) */
    for (int k = 0; k < g->n && !status && !force; k++) {
        const struct cli_guard_item *it = &g->item[k];
        for (int q = 0; it->role == 'o' && q < item_count(it); q++) {
            if (item_path(it, q, path, sizeof path) || lstat(path, &st))
                continue;
            char kind = cli_name_kind(it->name);
            status = cli_fail(cmd, "%s%s%s exists: --force replaces %s",
                              it->name, strcmp(it->name, path) ? ": " : "",
                              strcmp(it->name, path) ? path : "",
                              kind == 'l' ? "the set"
                              : kind == 'h' || kind == 'c' ? "the whole file"
                                                           : "it");
            break;
        }
    }
    free(in);
    return status;
}

int cli_guard_check(const cli_guard *g, const char *cmd, int force)
{
    int status = 0;
    if (cli_rank() == 0)
        status = g->overflow ? cli_fail(cmd, "too many files to compare")
                             : check0(g, cmd, force);
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return status;
}
