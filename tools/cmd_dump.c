/*
 * cmd_dump.c - `passion dump`: a section's values as text, in index order,
 * in bounded memory for any size (chunks of at most the budget).
 *
 * Invariants: every rank parses the arguments alike and takes the same
 * collective calls; only rank 0 prints; exit 0 on success, 1 with one
 * line on stderr on failure, 2 for a usage error.
 */
#include "dump_text.h"
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
    "  global index of its first value: \"[i,j] v v v\". Floats print\n"
    "  as the shortest text that reads back to the same value of their\n"
    "  type (0.1, not 0.10000000000000001), float16 too; a netCDF char\n"
    "  variable prints each row of its last dimension as one quoted\n"
    "  text, as ncdump does (\"[i,0] \"abc\"\"), HDF5 fixed-length\n"
    "  strings each quoted (trailing NULs dropped); other types without\n"
    "  a number (opaque bytes) as 0x and their bytes.\n"
    "  SECTION is numpy-like, one entry per dimension: \"0:100:2,5:50\"\n"
    "  (start:stop:step, negative indices from the end, missing\n"
    "  dimensions whole); or give it as\n"
    "  --start I,J,..  --count N,M,..  --stride S,T,..  (like h5dump -s -c\n"
    "                  -S; missing: start 0, stride 1, count to the end)\n"
    "  --file Q        a local set: dump file Q's local array (ghosts\n"
    "                  included, as stored), indices local\n"
    "  --progress      a progress line on stderr (every 5 s off a\n"
    "                  terminal; PASSION_PROGRESS_INTERVAL=SECONDS)\n";

/* What rank 0 prints: a section of an open file. */
typedef struct dump_job {
    passion_ctx *ctx, *fctx; /* the budget's; the file's (its errors) */
    passion_file *f;
    const passion_array_spec *s;
    const cli_sect *sec;
    const char *file;
    int progress;  /* --progress */
    char text;     /* 'r': text rows of the last dimension (netCDF char),
                      'e': each element a text (HDF5 strings), 0: none */
    cli_out out;
    cli_prog prog;
    int64_t done, total; /* values printed, and in all */
} dump_job;

/* "[i,j,..]": the global index of a line's first value. */
static void put_index(dump_job *j, const passion_section *ps,
                      const int64_t *idx)
{
    cli_out_printf(&j->out, "[");
    for (int d = 0; d < j->s->ndims; d++)
        cli_out_printf(&j->out, "%s%" PRId64, d ? "," : "",
                       ps->start[d] + idx[d] * ps->stride[d]);
    cli_out_printf(&j->out, "]");
}

/* Progress every 4096 values (the cli_prog's interval decides what
   shows). */
static void dump_step(dump_job *j, int64_t n)
{
    int64_t before = j->done;
    j->done += n;
    if (before / 4096 != j->done / 4096)
        cli_prog_update(&j->prog, (double)j->done / (double)j->total,
                        (uint64_t)(j->done * j->s->elem_size));
}

/* One chunk's n values, read into buf in the file's storage order
   (element strides st), printed in index order. */
static void dump_chunk(dump_job *j, const passion_section *ps,
                       const int64_t *off, const int64_t *cnt,
                       const int64_t *st, const unsigned char *buf,
                       int64_t n)
{
    int nd = j->s->ndims;
    int64_t es = j->s->elem_size, last = cnt[nd - 1];
    char kind = cli_type_kind(j->s);
    int64_t idx[CLI_MAX_DIMS] = {0};
    unsigned char row[CLI_OUT_ITEM];
    for (int64_t e = 0; e < n;) {
        int64_t bo = 0;
        for (int d = 0; d < nd; d++)
            bo += idx[d] * st[d];
        if (j->text == 'r') {
            /* a row of the last dimension: one quoted text per line, as
               ncdump prints char (in pieces where a row is long) */
            int64_t k = last - idx[nd - 1];
            k = k < (int64_t)sizeof row ? k : (int64_t)sizeof row;
            for (int64_t i = 0; i < k; i++)
                row[i] = buf[bo + i * st[nd - 1]];
            put_index(j, ps, idx);
            cli_out_printf(&j->out, " ");
            cli_out_text(&j->out, row, k);
            cli_out_printf(&j->out, "\n");
            idx[nd - 1] += k - 1;
            e += k;
            dump_step(j, k);
        } else {
            /* a line per 8 values of the last dimension (and at each
               chunk's start), headed by its first value's index */
            int64_t pos = off[nd - 1] + idx[nd - 1];
            if (e == 0 || pos % 8 == 0) {
                if (e)
                    cli_out_printf(&j->out, "\n");
                put_index(j, ps, idx);
            }
            cli_out_printf(&j->out, " ");
            if (j->text)
                cli_out_text(&j->out, buf + bo * es, es);
            else
                cli_out_value(&j->out, buf + bo * es, kind, es);
            e++;
            dump_step(j, 1);
        }
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < cnt[d])
                break;
            idx[d] = 0;
        }
    }
    if (n && j->text != 'r')
        cli_out_printf(&j->out, "\n");
}

/* Rank 0: read the section chunk by chunk (index order: the chunker
   with the identity order, each chunk at most the budget) and print it;
   0 or 1 (message printed). */
static int dump_print(dump_job *j)
{
    const passion_array_spec *s = j->s;
    int nd = s->ndims, status = 0;
    int64_t es = s->elem_size, max = cli_chunk_of(j->ctx) / es;
    int ident[CLI_MAX_DIMS];
    for (int d = 0; d < nd; d++)
        ident[d] = d;
    cli_chunks k;
    cli_chunks_init(&k, nd, j->sec->count, ident, max);
    j->total = 1;
    for (int d = 0; d < nd; d++)
        j->total *= j->sec->count[d];
    unsigned char *buf = malloc((size_t)(max * es));
    if (!buf || cli_out_init(&j->out, stdout, 1 << 20)) {
        free(buf);
        return cli_fail("dump", "no memory for %" PRId64 " bytes",
                        max * es + (1 << 20));
    }
    cli_prog_start(&j->prog, "dump", j->progress);
    for (int64_t i = 0; i < k.total && !status; i++) {
        int64_t off[CLI_MAX_DIMS], cnt[CLI_MAX_DIMS], st[CLI_MAX_DIMS];
        cli_chunks_get(&k, i, off, cnt);
        passion_section ps;
        memset(&ps, 0, sizeof ps);
        int64_t n = 1;
        for (int d = 0; d < nd; d++) {
            ps.start[d] = j->sec->start[d] + off[d] * j->sec->stride[d];
            ps.count[d] = cnt[d];
            ps.stride[d] = j->sec->stride[d];
            n *= cnt[d];
        }
        int rc = passion_file_read(j->f, &ps, buf, NULL,
                                   PASSION_METHOD_AUTO);
        if (rc) {
            cli_out_flush(&j->out); /* what was read before, then why */
            status = cli_fail_rc("dump", j->fctx, rc, j->file);
            break;
        }
        /* the buffer is in the file's storage order */
        int64_t sst = 1;
        for (int d = nd - 1; d >= 0; d--) {
            st[s->order[d]] = sst;
            sst *= cnt[s->order[d]];
        }
        dump_chunk(j, &ps, off, cnt, st, buf, n);
    }
    if (cli_out_flush(&j->out) && !status)
        status = cli_fail("dump", "writing the values failed");
    if (!status)
        cli_prog_end(&j->prog, (uint64_t)(j->done * es));
    cli_out_free(&j->out);
    free(buf);
    return status;
}

/* How an HDF5 dataset or netCDF variable of bytes prints, as
   passion_array_list tells text from opaque bytes: 'r' a netCDF char
   variable (rows of its last dimension, as ncdump), 'e' HDF5 fixed-length
   strings (each quoted, as h5dump), 0 numbers or bytes. Collective. */
static char text_mode(passion_ctx *ctx, const char *file,
                      const passion_array_spec *s)
{
    char k = cli_name_kind(file);
    if ((k != 'h' && k != 'c') || s->kind != PASSION_KIND_BYTES)
        return 0;
    passion_array_entry e;
    int n = 0;
    if (passion_array_list(ctx, file, &e, 1, &n) || n != 1 || !e.text)
        return 0;
    return k == 'c' && s->elem_size == 1 ? 'r' : 'e';
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
    char text = o.local ? 0 : text_mode(ctx, file, s);
    if (cli_rank() == 0) {
        dump_job j = {.ctx = ctx, .fctx = fctx, .f = f, .s = s, .sec = &sec,
                      .file = file, .progress = c.progress, .text = text};
        status = dump_print(&j);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    cli_close(&o);
    passion_finalize(ctx);
    return status;
}
