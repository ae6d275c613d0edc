/*
 * wisdom.c - `passion wisdom show|merge|clear`: the planner's wisdom
 * files (the options planner and wisdom), through passion_wisdom_describe
 * and passion_wisdom_merge.
 *
 * Invariants: rank 0 alone reads and writes (the calls are independent)
 * and broadcasts its status, so every rank exits alike; the refusals are
 * guard.c's rule for outputs: an existing output is replaced only with
 * --force, except that merge's OUT named among its INs (the same file by
 * st_dev and st_ino, any spelling) is an input the user asked to keep,
 * read before it is replaced; clear without --force replaces only a
 * wisdom file. The library reads every input whole before it writes, and
 * writes whole: a refusal or a failure changes no file.
 */
#include "files.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage[] =
    "usage: passion wisdom show FILE\n"
    "       passion wisdom merge [--force] OUT IN...\n"
    "       passion wisdom clear [--force] FILE\n"
    "  The planner's wisdom files (options planner=estimate|measure and\n"
    "  wisdom=PATH): what it learned, one line per call signature.\n"
    "  show   each record readably (the signature, the method that won and\n"
    "         its measured time), then their count\n"
    "  merge  OUT gets the records of the INs, a later IN winning for the\n"
    "         same signature; OUT is replaced whole. An existing OUT keeps\n"
    "         its records only when it is named among the INs; otherwise\n"
    "         it is replaced only with --force\n"
    "  clear  FILE becomes wisdom with no records; a file that is not\n"
    "         wisdom is replaced only with --force\n"
    "  A malformed file is refused, naming it and the line; a refusal\n"
    "  changes no file.\n"
    "examples:\n"
    "  passion wisdom show run.wisdom\n"
    "  passion wisdom merge all.wisdom all.wisdom node7.wisdom\n";

/* The text of show, malloc'd (NULL: failed, message printed). */
static char *describe(passion_ctx *ctx, const char *file)
{
    size_t need = 0;
    int rc = passion_wisdom_describe(ctx, file, NULL, 0, &need);
    /* the file may grow between the two calls: a few tries */
    for (int tries = 0; rc == PASSION_ERANGE && tries < 4; tries++) {
        char *buf = malloc(need);
        if (!buf) {
            cli_fail("wisdom", "show: no memory for %zu bytes", need);
            return NULL;
        }
        rc = passion_wisdom_describe(ctx, file, buf, need, &need);
        if (!rc)
            return buf;
        free(buf);
    }
    cli_fail_rc("wisdom", ctx, rc, "show");
    return NULL;
}

static int show(passion_ctx *ctx, char **names, int n)
{
    if (n != 1)
        return -1;
    char *text = describe(ctx, names[0]);
    if (!text)
        return 1;
    fputs(text, stdout);
    free(text);
    return 0;
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static int merge(passion_ctx *ctx, char **names, int n, int force)
{
    if (n < 2)
        return -1;
    const char *out = names[0];
    const char *const *in = (const char *const *)names + 1;
    struct stat so, si;
    int kept = 0; /* OUT is one of the INs */
    if (!stat(out, &so))
        for (int i = 0; i < n - 1 && !kept; i++)
            kept = !stat(in[i], &si) && same_file(&so, &si);
    /* an existing OUT (a dangling symlink too), not an input */
    if (!kept && !force && !lstat(out, &so))
        return cli_fail("wisdom", "merge: %s exists: --force replaces it "
                        "(or name it among the inputs to keep its "
                        "records)", out);
    int rc = passion_wisdom_merge(ctx, out, in, n - 1);
    return rc ? cli_fail_rc("wisdom", ctx, rc, "merge") : 0;
}

static int clear(passion_ctx *ctx, char **names, int n, int force)
{
    if (n != 1)
        return -1;
    const char *file = names[0];
    if (!force) {
        /* wisdom (even with a malformed line or too many records:
           clearing mends it) or no file at all; anything else is
           refused */
        int rc = passion_wisdom_describe(ctx, file, NULL, 0, NULL);
        if (rc == PASSION_EFORMAT)
            return cli_fail("wisdom", "clear: %s (%s): --force replaces it",
                            passion_strerror(rc),
                            passion_ctx_errdetail(ctx));
        if (rc && rc != PASSION_ERANGE && rc != PASSION_EINVAL &&
            rc != PASSION_ENOTSUP && rc != PASSION_ENOENT)
            return cli_fail_rc("wisdom", ctx, rc, "clear");
    }
    int rc = passion_wisdom_merge(ctx, file, NULL, 0);
    return rc ? cli_fail_rc("wisdom", ctx, rc, "clear") : 0;
}

int cli_wisdom(int argc, char **argv)
{
    int force = 0, n = 0, status = 0;
    char **names = calloc((size_t)argc + 1, sizeof *names);
    const char *action = NULL;
    for (int i = 0; i < argc && names; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            if (cli_rank() == 0)
                cli_usage(stdout, usage);
            free(names);
            return 0;
        }
        if (!strcmp(argv[i], "--force"))
            force = 1;
        else if (!strcmp(argv[i], "--"))
            for (i++; i < argc; i++)
                names[n++] = argv[i];
        else if (argv[i][0] == '-' && argv[i][1])
            status = -cli_fail("wisdom", "unknown option %s (passion wisdom "
                               "--help)", argv[i]);
        else if (!action)
            action = argv[i];
        else
            names[n++] = argv[i];
    }
    if (!names)
        return cli_fail("wisdom", "no memory for %d arguments", argc);
    int known = action && (!strcmp(action, "show") ||
                           !strcmp(action, "merge") ||
                           !strcmp(action, "clear"));
    if (!status && !known) {
        if (cli_rank() == 0 && action)
            fprintf(stderr, "passion wisdom: unknown action %s (show, "
                    "merge or clear: passion wisdom --help)\n", action);
        else if (cli_rank() == 0)
            cli_usage(stderr, usage);
        status = -1;
    }
    if (!status) {
        /* rank 0 does it on a context of its own */
        if (cli_rank() == 0) {
            cli_common c = {.progress = 0};
            passion_ctx *ctx = NULL;
            int rc = cli_ctx_self(&c, &ctx);
            if (rc) {
                const char *d = passion_ctx_errdetail(NULL);
                status = cli_fail("init", "%s%s%s", passion_strerror(rc),
                                  *d ? ": " : "", d);
            }
            if (!status && !strcmp(action, "show"))
                status = show(ctx, names, n);
            else if (!status && !strcmp(action, "merge"))
                status = merge(ctx, names, n, force);
            else if (!status)
                status = clear(ctx, names, n, force);
            if (status < 0)
                fprintf(stderr, "passion wisdom: %s takes %s (passion "
                        "wisdom --help)\n", action,
                        !strcmp(action, "merge") ? "OUT and one IN or more"
                                                 : "one FILE");
            passion_finalize(ctx);
        }
        MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    free(names);
    return status < 0 ? 2 : status;
}
