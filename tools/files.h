/*
 * files.h - what the file tools (ls, dump, get, put, convert) share
 * (files.c, copy.c): the common options, element types as text, opening
 * any file passion reads by its name, progress, and the bounded-memory copy
 * engine.
 */
#ifndef PASSION_CLI_FILES_H
#define PASSION_CLI_FILES_H

#include "cli.h"
#include "section.h"

#include <limits.h>
#include <stdio.h>

/* Options every file tool takes (files.c parses them). */
typedef struct cli_common {
    const char *options;   /* --options k=v,... (PASSION_OPTIONS syntax) */
    const char *budget;    /* --budget SIZE: memory_budget */
    int progress;          /* -1 auto, 0 --no-progress, 1 --progress */
    /* a raw file's layout (raw has no header) */
    const char *shape;     /* --shape N,N */
    const char *type;      /* --type f8 (numpy codes) */
    int64_t header;        /* --header BYTES */
    int col_major;         /* --order F */
} cli_common;

/*
 * One file (or local set) named on the command line, open for reading
 * or created for writing.
 */
typedef struct cli_obj {
    char name[PATH_MAX];     /* as given (with :NAME) */
    int local;               /* a local array set */
    passion_array_spec spec; /* normalised layout */
    int nfiles;              /* local set: its files */
    char pattern[PATH_MAX];  /* local set: the files' pattern */
    passion_array *a;        /* global file, or this rank's local file */
    passion_file *f;
    char final[PATH_MAX];    /* created: the name it gets when published */
    /* a local source read file by file (any number of ranks) */
    passion_ctx *self;
    passion_array *qa;
    passion_file *qf;
    int q;
} cli_obj;

/* Parse one common option at argv[*i] (advancing *i past its value);
   1 = taken, 0 = not a common option, -1 = bad (message printed). */
int cli_common_arg(cli_common *c, int argc, char **argv, int *i);
/* The common options' help text. */
extern const char cli_common_help[];
/* A context on MPI_COMM_WORLD with the common options; 0 or a code
   (message printed). */
int cli_ctx(const cli_common *c, passion_ctx **ctx);
/* A context on MPI_COMM_SELF with the same options. */
int cli_ctx_self(const cli_common *c, passion_ctx **ctx);

/* "passion CMD: " + message on rank 0's stderr; returns 1. */
int cli_fail(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The same with a library code and the context's detail. */
int cli_fail_rc(const char *cmd, passion_ctx *ctx, int rc, const char *what);
/* The file tools' commands (cmd_files.c): a usage error, "passion CMD:
   " + fmt with arg on rank 0's stderr, returns 2; the help (usage and the
   common options) on rank 0's stdout, returns 0; the buffer size of a
   copy, ctx's budget but at least 4 KiB. */
int cli_usage_err(const char *cmd, const char *usage, const char *fmt,
                  const char *arg);
int cli_help(const char *usage);
int64_t cli_chunk_of(passion_ctx *ctx);

/* Element types: numpy-like name ("float64") and code ("<f8"). */
void cli_type_name(const passion_array_spec *s, char *buf, size_t n);
void cli_type_code(const passion_array_spec *s, char *buf, size_t n);
/* numpy kind letter of a spec: b i u f c V. */
char cli_type_kind(const passion_array_spec *s);
int cli_type_big(const passion_array_spec *s);
/* Set the spec's type from a numpy-like code ("f8", "<i4", ">c16",
   "uint8", "float32"); 0 or -1 with why. */
int cli_type_parse(const char *t, passion_array_spec *s, char *why,
                   size_t wl);
/* Copy src's element type (kind, size, file byte order) into dst. */
void cli_type_copy(passion_array_spec *dst, const passion_array_spec *src);
/* Make dst's files native-endian (a created local set, raw file). */
void cli_type_native(passion_array_spec *dst);

/* What a name names: 'l' local set, 'n' .npy, 'h' HDF5, 'c' netCDF,
   'r' raw. */
char cli_name_kind(const char *name);
/* Bytes of name's file part: "r.h5:/x" -> 4 (an object is split off
   after .h5, .hdf5 and .nc only). */
size_t cli_file_len(const char *name);
/* 1 if name is a format that stores row-major only (HDF5, netCDF: a
   column-major array would be stored transposed). */
int cli_row_major_only(const char *name);
/* A human name of the format ("npy", "HDF5"...). */
const char *cli_kind_name(char k);

/* Open name for reading (collective). Local sets are read file by file
   (any number of ranks), the rest through passion_open, raw files with
   the common options' --shape/--type. 0 or a code (message printed). */
int cli_open(passion_ctx *ctx, const cli_common *c, const char *cmd,
             const char *name, passion_mode mode, cli_obj *o);
/* Open file q of the local set o as a plain array (its local array with
   ghosts) on a one-rank context (o->qa, o->qf); 0 or 1 (message printed). */
int cli_view_open(const cli_common *c, const char *cmd, cli_obj *o, int q);
/* Create name with spec (global or, for a local set's pattern, this
   run's ranks) under a temporary name; cli_publish renames it into
   place. Collective. */
int cli_create(passion_ctx *ctx, const char *cmd, const char *name,
               const passion_array_spec *spec, cli_obj *o);
int cli_publish(passion_ctx *ctx, const char *cmd, cli_obj *o);
/* Close and free (collective); a created file never published stays
   under its temporary name. */
void cli_close(cli_obj *o);

/* Local sets: local count of grid coordinate p in dimension d. */
int64_t cli_local_count(const passion_array_spec *s, int d, int p);

/* The file of rank q of a local set's pattern (every %d / %r -> q, %% ->
   %; a pattern without them gets ".q"); -1 when it does not fit. */
int cli_pattern_path(const char *pattern, int q, char *out, size_t n);
/* The description's name of a local set named by its pattern
   ("dir/data.%d.laf" -> "dir/data.laf.passion") or by the description
   itself; -1 when the pattern has %d in its directory (no description)
   or it does not fit. */
int cli_lset_desc(const char *name, char *out, size_t n);
/* The temporary name cli_create writes name under (".passion-tmp-" before
   the file name; an object path stays last). */
void cli_temp_name(const char *name, char *out, size_t n);

/* ---- refusing to write onto an input (guard.c) ---- */

/* The files one command reads and writes, by name (expanded on rank 0
   only, when checked). */
#define CLI_GUARD_MAX 8
typedef struct cli_guard {
    int n, overflow;
    struct cli_guard_item {
        char path[PATH_MAX]; /* a file, or a local set's pattern */
        int nfiles;          /* pattern: its files 0..nfiles-1; else 0 */
        char role;           /* 'i' input, 'o' new output, 't' its
                                temporary, 'w' written in place */
        int may_miss;        /* an input that may be absent */
        const char *name;    /* as the user named it (for messages) */
    } item[CLI_GUARD_MAX];
} cli_guard;
/* The files of an opened input (a global file, or a local set's files
   and description). */
void cli_guard_input(cli_guard *g, const cli_obj *o);
/* The files an output named `name` gets from cli_create at `nranks` ranks
   (a local set: its files and description), and their temporaries. */
void cli_guard_output(cli_guard *g, const char *name, int nranks);
/* An existing file written in place (put's DST, opened for reading). */
void cli_guard_inplace(cli_guard *g, const cli_obj *o);
/*
 * Refuse (1, one message line on rank 0) when an output or temporary is
 * the same file as an input (same st_dev and st_ino: hard links,
 * symlinks and other spellings of a path included), or, unless force, an
 * output exists. Decided on rank 0 and broadcast: every rank returns the
 * same. Collective over MPI_COMM_WORLD; touches no file.
 */
int cli_guard_check(const cli_guard *g, const char *cmd, int force);

/* ---- element types between SRC and DST (cast.c) ---- */

/* 1 if s and d are one type in memory (kind and size: memory is always
   in the machine's byte order). */
int cli_cast_same(const passion_array_spec *s, const passion_array_spec *d);
/* 0 if values of s may go into d (the same type, a safe cast, or any
   value cast when unsafe), else -1 with why (naming sname and dname). */
int cli_cast_check(const passion_array_spec *s, const passion_array_spec *d,
                   int unsafe, const char *sname, const char *dname,
                   char *why, size_t wl);
/* Convert n packed values of s into values of d, in place: buf holds n
   elements of the larger of the two sizes. */
void cli_cast_run(void *buf, const passion_array_spec *s,
                  const passion_array_spec *d, int64_t n);

/* ---- progress (rank 0, stderr) ---- */
typedef struct cli_prog {
    const char *what;
    int mode;          /* -1 auto, 0 off, 1 on */
    int tty;
    double t0, last;
    double interval; /* s between lines off a terminal: 5, or the
                        environment's PASSION_PROGRESS_INTERVAL */
    int shown;
} cli_prog;
void cli_prog_start(cli_prog *p, const char *what, int mode);
void cli_prog_update(cli_prog *p, double fraction, uint64_t bytes);
void cli_prog_end(cli_prog *p, uint64_t bytes);

/* ---- the copy engine (copy.c) ---- */

/* Copy: src section -> dst section of the same counts, or a whole local
   set / into a local set, in rounds of at most `chunk` bytes per rank.
   Collective. 0 or a code (message printed). */
int cli_copy(passion_ctx *ctx, const cli_common *c, const char *cmd,
             cli_obj *src, const cli_sect *ss, cli_obj *dst,
             const cli_sect *ds, int64_t chunk, cli_prog *prog);

/* The chunker: split a count box into sub-boxes of at most max_elems
   elements, cutting the slowest dimensions of `order` first. */
typedef struct cli_chunks {
    int nd;
    int64_t count[CLI_MAX_DIMS];
    int64_t step[CLI_MAX_DIMS];   /* chunk extent per dimension */
    int64_t nper[CLI_MAX_DIMS];   /* chunks per dimension */
    int64_t total;
} cli_chunks;
void cli_chunks_init(cli_chunks *k, int nd, const int64_t *count,
                     const int *order, int64_t max_elems);
/* Chunk i: its offset in the box and its counts. */
void cli_chunks_get(const cli_chunks *k, int64_t i, int64_t *off,
                    int64_t *cnt);
/* Permute a packed box between two storage orders (esize bytes each). */
void cli_permute(char *dst, const int *dorder, const char *src,
                 const int *sorder, int nd, const int64_t *cnt,
                 int64_t esize);

#endif
