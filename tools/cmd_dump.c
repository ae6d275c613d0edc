/*
 * cmd_dump.c - `passion dump`: a section's values as text, in index order,
 * in bounded memory for any size (chunks of at most the budget).
 *
 * Invariants: every rank parses the arguments alike and takes the same
 * collective calls; only rank 0 prints; exit 0 on success, 1 with one
 * line on stderr on failure, 2 for a usage error.
 */
#include "files.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
            return cli_help(dump_usage);
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
                return cli_usage_err("dump", dump_usage, "%s needs a value",
                                     a);
            if (slot)
                *slot = argv[++i];
            else
                fileq = atoi(argv[++i]);
            continue;
        }
        if (a[0] == '-' && a[1] && !(a[1] >= '0' && a[1] <= '9') &&
            a[1] != ':')
            return cli_usage_err("dump", dump_usage, "unknown option %s", a);
        if (!file)
            file = a;
        else if (!sect)
            sect = a;
        else
            return cli_usage_err("dump", dump_usage, "extra argument %s", a);
    }
    if (!file)
        return cli_usage_err("dump", dump_usage, "%sno FILE given", "");
    if (sect && (start || count || stride))
        return cli_usage_err("dump", dump_usage,
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
        int64_t es = s->elem_size, max = cli_chunk_of(ctx) / es;
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
