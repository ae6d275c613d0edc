/*
 * soak.c - a soak under faults: for a fixed time, a
 * random mix of every kind of call on small arrays, with I/O errors, short
 * transfers and allocation failures injected at random calls on random
 * ranks, every call checked against an in-memory model of every file.
 *
 * Files of an epoch: two global array files (raw after a header, and
 * .npy) and two local array files per rank (one spec: a processor grid
 * over all ranks, ghosts). Every rank models all of them byte for byte,
 * headers included: every random choice comes from one generator seeded
 * alike on every rank (sections, values, methods, faults), each call's
 * outcome on every rank is all-gathered, and after a failure the model is
 * re-synchronised from the file itself (plain pread, not the library), so
 * the models stay identical on all ranks.
 *
 * Contexts: each epoch makes three contexts over the same files: the fault
 * driver's (faults are armed on it just before a call and disarmed right
 * after, through the internal context: the counters start at the call),
 * the posix driver's (io_uring or thread engine, O_DIRECT sometimes) and
 * the mpiio driver's. An epoch ends after --epoch calls: files, arrays and
 * contexts are freed and new ones drawn (shapes, element sizes, storage
 * orders, budgets, exchange algorithms and radices).
 *
 * Calls: collective section reads and writes (every method) on both
 * global files; independent section reads and writes on global files
 * (writes in disjoint bands of the slowest dimension) and on the rank's
 * local files, whole-file local reads and writes; asynchronous requests
 * (several in flight, waited in random order); slab sweeps (prefetch,
 * reuse, in-place write-back or an output file); out-of-core shifts; and
 * all-to-all exchanges (regular and irregular, every algorithm).
 *
 * Checks after every call:
 *  - a collective call returns the same code on every rank;
 *  - a call fails only when a fault fired on a rank that matters (or when
 *    it was meant to be invalid), with the code of a fault that fired
 *    (EIO -> PASSION_EIO, ENOSPC -> PASSION_ENOSPC, allocation ->
 *    PASSION_ENOMEM);
 *  - a successful read gives the model's data and leaves the memory around
 *    the section alone; a successful write leaves the file equal to the
 *    model with the write applied;
 *  - every file is compared with its model after every call: unchanged
 *    where no write went; after a failed write each byte holds either its
 *    old value or one a writer meant to put there (so nothing outside the
 *    written sections changed); sizes stay;
 *  - after a failure, fault-free library reads of every file work on the
 *    same context and give the file's contents (the next call works);
 *  - no hang: a watchdog thread ends the run after --watchdog seconds
 *    without progress, naming the call and the seed;
 *  - resident memory: VmRSS sampled between epochs (no context alive);
 *    its slope by least squares (KiB per 1000 calls) over the second half
 *    of the run must stay under --rss-limit (judged on runs of 1000 calls
 *    and 8 epochs or more, not under sanitizers). VmRSS, RssAnon and
 *    malloc's heap sampled every --rss-every calls are reported beside it
 *    (within an epoch they follow the contexts' memory budgets).
 */
#include "passion.h"
#include "../passion/core.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define SOAK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SOAK_SANITIZED 1
#endif
#endif
#ifndef SOAK_SANITIZED
#define SOAK_SANITIZED 0
#endif

#define NCTX 3
enum { CF = 0, CP = 1, CM = 2 };
static const char *ctx_names[NCTX] = {"fault", "posix", "mpiio"};
#define NG 2
#define NL 2
#define MAXP 64
#define NSLOT 11 /* gathered ints per rank: 8 codes, io fired, alloc
                    fired, budget refusals (bit per code) */

enum { OP_CREAD, OP_CWRITE, OP_IREAD, OP_IWRITE, OP_ASYNC, OP_SLAB,
       OP_SHIFT, OP_XCHG, NOPS };
static const char *op_names[NOPS] = {"coll-read", "coll-write", "ind-read",
                                     "ind-write", "async", "slab",
                                     "shift", "exchange"};
static const int op_weight[NOPS] = {18, 18, 10, 10, 12, 10, 8, 8};

#define NMETHODS 5
static const int methods[NMETHODS] = {
    PASSION_METHOD_AUTO, PASSION_METHOD_DIRECT, PASSION_METHOD_SIEVE,
    PASSION_METHOD_ETP_STATIC, PASSION_METHOD_ETP_DYNAMIC};
static const char *method_names[NMETHODS] = {"auto", "direct", "sieve",
                                             "etp-static", "etp-dynamic"};
static const char *xchg_names[] = {"auto", "mpi", "pairwise", "a1", "index",
                                   "fourstage", "fourstage-nb"};

/* ------------------------------------------------------------ settings */

static int rank, nprocs;
static uint64_t seed = 20261123;
static double seconds = 60, fault_rate = 0.35, wd_limit = 300;
static double rss_limit = 64; /* KiB per 1000 calls */
static int rss_every = 20, epoch_len = 150, verbose, trim;
static int64_t max_calls;       /* --calls: stop after so many (0: time) */
/* --chaos SEED: the schedule fuzzer (passion/chaos.h) on, with delays up
   to --chaos-max-us at --chaos-pct percent of the library's hooks */
static int chaos_on, chaos_max_us = 2000, chaos_pct = 30;
static uint64_t chaos_seed;
static unsigned op_mask = ~0u;  /* --ops: the kinds of call to draw */
static char scratch[512];

/* ------------------------------------------------- shared random stream */

static uint64_t rng;

static uint64_t mix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static int64_t rr(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(mix64(&rng) % (uint64_t)(hi - lo + 1));
}
static int coin(int n) { return rr(0, n - 1) == 0; }

static unsigned char val(int64_t e, int64_t k, uint64_t salt)
{
    uint64_t s = (uint64_t)e * 0x9E3779B97F4A7C15ULL + (uint64_t)k * 131 +
                 salt * 0xBF58476D1CE4E5B9ULL;
    return (unsigned char)(mix64(&s) >> 56);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---------------------------------------------------------- statistics */

static struct {
    uint64_t calls, checks, violations, epochs;
    uint64_t by_op[NOPS], fail_by_op[NOPS];
    uint64_t armed_io, armed_short, armed_alloc;
    uint64_t fired_io, fired_alloc, fired_ok;
    uint64_t failures, invalid_meant, refusals;
    uint64_t codes[20];
    double t_op[NOPS], t_setup;
} st;

static char cur_desc[2048];
static passion_ctx *cur_ctx; /* of the call being judged */
static int fatal; /* setup failed: stop after this call */

static void violation(int print, const char *fmt, ...)
{
    st.violations++;
    if (!print || st.violations > 40)
        return;
    fprintf(stderr, "[rank %d] VIOLATION at call %llu (%s), seed %llu: ",
            rank, (unsigned long long)st.calls, cur_desc,
            (unsigned long long)seed);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

/* ------------------------------------------------------------ watchdog */

static pthread_mutex_t wd_mu = PTHREAD_MUTEX_INITIALIZER;
static double wd_since;
static int wd_busy;
static char wd_desc[sizeof cur_desc];
static uint64_t wd_call;

static void wd_enter(const char *what)
{
    pthread_mutex_lock(&wd_mu);
    snprintf(wd_desc, sizeof wd_desc, "%s", what);
    wd_call = st.calls;
    wd_since = now();
    wd_busy = 1;
    pthread_mutex_unlock(&wd_mu);
}

static void wd_leave(void)
{
    pthread_mutex_lock(&wd_mu);
    wd_busy = 0;
    pthread_mutex_unlock(&wd_mu);
}

static void *wd_main(void *arg)
{
    (void)arg;
    for (;;) {
        sleep(1);
        pthread_mutex_lock(&wd_mu);
        if (wd_busy && now() - wd_since > wd_limit) {
            fprintf(stderr,
                    "[rank %d] WATCHDOG: call %llu (%s) has not returned "
                    "after %.0f s (seed %llu, P=%d); ending the run\n",
                    rank, (unsigned long long)wd_call, wd_desc,
                    now() - wd_since, (unsigned long long)seed, nprocs);
            fflush(stderr);
            _exit(3);
        }
        pthread_mutex_unlock(&wd_mu);
    }
    return NULL;
}

/* --------------------------------------------------------- file models */

typedef struct mfile {
    char path[640];
    int nd, global, npy;
    int order[PASSION_MAX_DIMS];    /* order[0] slowest */
    int64_t esize;
    int64_t ext[PASSION_MAX_DIMS];  /* elements per dimension in the file */
    int64_t shift[PASSION_MAX_DIMS]; /* ghost width (local) */
    int64_t lo[PASSION_MAX_DIMS], hi[PASSION_MAX_DIMS]; /* index range */
    int64_t nl[PASSION_MAX_DIMS];   /* local: interior extent */
    int64_t fstride[PASSION_MAX_DIMS];
    int64_t data_off, fbytes, nelem;
    unsigned char *m; /* the whole file as it should be */
} mfile;

static mfile G[NG], L[NL][MAXP];
static passion_array_spec gspec[NG], lspec;
static passion_ctx *ctx[NCTX];
static passion_array *ga[NCTX][NG], *la[NCTX];
static passion_file *gf[NCTX][NG], *lf[NCTX][NL];
static char ctx_opts[NCTX][512];

static void mfile_geometry(mfile *f)
{
    int64_t s = 1;
    for (int k = f->nd - 1; k >= 0; k--) {
        f->fstride[f->order[k]] = s;
        s *= f->ext[f->order[k]];
    }
    f->nelem = s;
}

static int raw_read(const mfile *f, unsigned char *dst, int64_t *size)
{
    int fd = open(f->path, O_RDONLY);
    if (fd < 0)
        return -errno;
    struct stat sb;
    if (fstat(fd, &sb)) {
        int e = -errno;
        close(fd);
        return e;
    }
    *size = sb.st_size;
    int64_t got = 0;
    while (got < f->fbytes) {
        ssize_t n = pread(fd, dst + got, (size_t)(f->fbytes - got), got);
        if (n <= 0) {
            close(fd);
            return n < 0 ? -errno : -EIO;
        }
        got += n;
    }
    close(fd);
    return 0;
}

static unsigned char *dup_model(const mfile *f)
{
    unsigned char *p = malloc((size_t)f->fbytes);
    memcpy(p, f->m, (size_t)f->fbytes);
    return p;
}

/*
 * Compare f's file with `exact` (NULL: the model), each byte allowed to
 * hold instead its value in one of alts; then the model takes the file's
 * contents. All ranks see the same file and model: rank 0 reports.
 */
static int settle(mfile *f, const unsigned char *exact, unsigned char **alts,
                  int nalts, const char *what)
{
    st.checks++;
    if (!exact)
        exact = f->m;
    unsigned char *t = malloc((size_t)f->fbytes);
    int64_t size = 0;
    int rc = raw_read(f, t, &size);
    int bad = 0;
    if (rc || size != f->fbytes) {
        violation(rank == 0, "%s: %s: read %d, size %lld, want %lld", what,
                  f->path, rc, (long long)size, (long long)f->fbytes);
        bad = 1;
    } else {
        int64_t first = -1, nbad = 0;
        for (int64_t i = 0; i < f->fbytes; i++) {
            if (t[i] == exact[i])
                continue;
            int ok = 0;
            for (int a = 0; a < nalts && !ok; a++)
                ok = t[i] == alts[a][i];
            if (!ok) {
                if (first < 0)
                    first = i;
                nbad++;
            }
        }
        if (first >= 0) {
            int64_t e = (first - f->data_off) / f->esize;
            violation(rank == 0,
                      "%s: %s: %lld bytes differ, first at byte %lld "
                      "(%s element %lld): file %02x, expected %02x, model "
                      "before %02x", what, f->path, (long long)nbad,
                      (long long)first,
                      first < f->data_off ? "header" : "data",
                      (long long)(first < f->data_off ? -1 : e), t[first],
                      exact[first], f->m[first]);
            bad = 1;
        }
        memcpy(f->m, t, (size_t)f->fbytes);
    }
    free(t);
    return bad;
}

/* ------------------------------------------------------------ sections */

static int64_t fel(const mfile *f, const passion_section *s, const int64_t *i)
{
    int64_t e = 0;
    for (int d = 0; d < f->nd; d++)
        e += (s->start[d] + i[d] * s->stride[d] + f->shift[d]) *
             f->fstride[d];
    return e;
}

static int64_t eidx(const mfile *f, const int64_t *idx)
{
    int64_t e = 0;
    for (int d = 0; d < f->nd; d++)
        e += (idx[d] + f->shift[d]) * f->fstride[d];
    return e;
}

static int64_t mel(const mfile *f, const passion_section *s,
                   const passion_memspec *m, const int64_t *i)
{
    int64_t e = 0, st1 = 1;
    for (int k = f->nd - 1; k >= 0; k--) {
        int d = f->order[k];
        e += ((m ? m->offset[d] : 0) + i[d]) * st1;
        st1 *= m ? m->shape[d] : s->count[d];
    }
    return e;
}

static int64_t melems(const mfile *f, const passion_section *s,
                      const passion_memspec *m)
{
    int64_t n = 1;
    for (int d = 0; d < f->nd; d++)
        n *= m ? m->shape[d] : s->count[d];
    return n;
}

static int nexti(int nd, const int64_t *count, int64_t *i)
{
    for (int d = nd - 1; d >= 0; d--) {
        if (++i[d] < count[d])
            return 1;
        i[d] = 0;
    }
    return 0;
}

static int64_t sec_n(const mfile *f, const passion_section *s)
{
    return passion_section_elems(s, f->nd);
}

/* A random section inside [lo, hi) per dimension. */
static void rand_sec(const mfile *f, const int64_t *lo, const int64_t *hi,
                     passion_section *s)
{
    memset(s, 0, sizeof *s);
    int full = coin(6), point = !full && coin(8);
    for (int d = 0; d < f->nd; d++) {
        int64_t n = hi[d] - lo[d];
        s->stride[d] = 1;
        s->start[d] = lo[d];
        if (n <= 0) {
            s->count[d] = 0;
            continue;
        }
        if (full) {
            s->count[d] = n;
            continue;
        }
        s->stride[d] = coin(3) ? rr(2, 4) : 1;
        s->start[d] = lo[d] + rr(0, n - 1);
        int64_t maxc = (hi[d] - 1 - s->start[d]) / s->stride[d] + 1;
        s->count[d] = point ? 1 : rr(1, maxc);
    }
    if (coin(14))
        s->count[rr(0, f->nd - 1)] = 0;
}

static void rand_mem(const mfile *f, const passion_section *s,
                     passion_memspec *m, int *use)
{
    *use = sec_n(f, s) > 0 && coin(2);
    memset(m, 0, sizeof *m);
    for (int d = 0; d < f->nd; d++) {
        int64_t pad = rr(0, 2);
        m->shape[d] = s->count[d] + pad;
        m->offset[d] = rr(0, pad);
    }
}

/* Buffer of section s with rank-salted values at their memory places. */
static unsigned char *wbuf(const mfile *f, const passion_section *s,
                           const passion_memspec *m, uint64_t salt)
{
    int64_t n = melems(f, s, m);
    unsigned char *b = malloc((size_t)(n * f->esize + 1));
    memset(b, 0xAB, (size_t)(n * f->esize + 1));
    if (sec_n(f, s) > 0) {
        int64_t i[PASSION_MAX_DIMS] = {0};
        do {
            int64_t fe = fel(f, s, i), me = mel(f, s, m, i);
            for (int64_t k = 0; k < f->esize; k++)
                b[me * f->esize + k] = val(fe, k, salt);
        } while (nexti(f->nd, s->count, i));
    }
    return b;
}

static void apply(const mfile *f, unsigned char *dst, const passion_section *s,
                  uint64_t salt)
{
    if (sec_n(f, s) <= 0)
        return;
    int64_t i[PASSION_MAX_DIMS] = {0};
    do {
        int64_t fe = fel(f, s, i);
        for (int64_t k = 0; k < f->esize; k++)
            dst[f->data_off + fe * f->esize + k] = val(fe, k, salt);
    } while (nexti(f->nd, s->count, i));
}

static unsigned char *rbuf(const mfile *f, const passion_section *s,
                           const passion_memspec *m)
{
    int64_t n = melems(f, s, m);
    unsigned char *b = malloc((size_t)(n * f->esize + 1));
    memset(b, 0xEE, (size_t)(n * f->esize + 1));
    return b;
}

/* 1 if the read buffer holds the model's data and nothing else changed. */
static int check_rbuf(const mfile *f, const unsigned char *model,
                      const passion_section *s, const passion_memspec *m,
                      const unsigned char *b, const char *what)
{
    st.checks++;
    int64_t n = melems(f, s, m);
    unsigned char *seen = calloc((size_t)n + 1, 1);
    int64_t bad = -1;
    if (sec_n(f, s) > 0) {
        int64_t i[PASSION_MAX_DIMS] = {0};
        do {
            int64_t fe = fel(f, s, i), me = mel(f, s, m, i);
            seen[me] = 1;
            if (bad < 0 && memcmp(b + me * f->esize,
                                  model + f->data_off + fe * f->esize,
                                  (size_t)f->esize))
                bad = me;
        } while (nexti(f->nd, s->count, i));
    }
    for (int64_t k = 0; k < n * f->esize && bad < 0; k++)
        if (!seen[k / f->esize] && b[k] != 0xEE)
            bad = k / f->esize;
    if (bad < 0 && b[n * f->esize] != 0xEE)
        bad = n;
    free(seen);
    if (bad >= 0)
        violation(1, "%s: %s: read buffer wrong at memory element %lld", what,
                  f->path, (long long)bad);
    return bad >= 0;
}

static void print_sec(char *out, size_t len, const mfile *f,
                      const passion_section *s)
{
    size_t o = 0;
    for (int d = 0; d < f->nd && o < len; d++)
        o += (size_t)snprintf(out + o, len - o, "%s%lld+%lldx%lld",
                              d ? "," : "", (long long)s->start[d],
                              (long long)s->count[d],
                              (long long)s->stride[d]);
}

/* every rank's section and memory shape (a collective call's
   violation names what each rank passed: the sections come from the
   common random stream, so every rank knows them) */
static void append_all(char *out, size_t len, const mfile *f,
                       const passion_section *S, const passion_memspec *M,
                       const int *use)
{
    size_t o = strlen(out);
    for (int r = 0; r < nprocs && o + 1 < len; r++) {
        char sd[200];
        print_sec(sd, sizeof sd, f, &S[r]);
        o += (size_t)snprintf(out + o, len - o, "%s%d: %s", r ? "; " : " [",
                              r, sd);
        for (int d = 0; use[r] && d < f->nd && o + 1 < len; d++)
            o += (size_t)snprintf(out + o, len - o, "%s%lld@%lld",
                                  d ? "," : " memory ",
                                  (long long)M[r].shape[d],
                                  (long long)M[r].offset[d]);
    }
    if (o + 1 < len)
        snprintf(out + o, len - o, "]");
}

/* ---------------------------------------------------------------- faults */

typedef struct fplan {
    int on;
    int64_t io_at, alloc_at;
    int err, shrt, ranks;
} fplan;

#define HAVE_ALLOC 1 /* fault_alloc_at (passion/alloc.c) */

static void draw_plan(fplan *p)
{
    memset(p, 0, sizeof *p);
    p->ranks = -1;
    if (rr(0, 9999) >= (int64_t)(fault_rate * 10000))
        return;
    p->on = 1;
    int kind = (int)rr(0, HAVE_ALLOC ? 5 : 2);
    p->ranks = coin(3) ? -1 : (int)rr(0, nprocs - 1);
    if (kind == 0 || kind == 2 || kind == 4) {
        p->io_at = rr(1, (int64_t)1 << rr(0, 6));
        p->err = coin(4) ? ENOSPC : EIO;
    }
    if (kind == 1 || kind == 2 || kind == 5)
        p->shrt = 1;
    if (kind >= 3)
        p->alloc_at = rr(1, (int64_t)1 << rr(0, 5));
}

/* Arm (or, with a zero plan, disarm) the fault driver of context c: the
   counters start now. */
static void arm(passion_ctx *c, const fplan *p)
{
    core_fault_arm(c, p->alloc_at, p->io_at, p->ranks);
    c->opt.fault_errno = p->err ? p->err : EIO;
    c->opt.fault_short = p->shrt;
}

static void fired(passion_ctx *c, const fplan *p, int *io, int *al)
{
    int mine = p->ranks < 0 || p->ranks == rank;
    *io = mine && p->io_at > 0 && core_fault_calls(c) >= p->io_at;
    *al = mine && p->alloc_at > 0 &&
          __atomic_load_n(&c->fault_allocs, __ATOMIC_RELAXED) >= p->alloc_at;
}

static int code_of_errno(int e)
{
    return e == ENOSPC ? PASSION_ENOSPC : PASSION_EIO;
}

/* ----------------------------------------------------- one call's frame */

typedef struct call {
    int op, c;
    fplan p;
    int expect;  /* code the call must return where no fault fired */
    int mine[NSLOT];
    int all[MAXP][NSLOT];
    int anyfail;
} call;

typedef struct fexp {
    unsigned char *exact;
    unsigned char *alts[MAXP + 2];
    int nalts;
} fexp;
static fexp EG[NG], EL[NL][MAXP];

static void gather(call *k)
{
    /* PASSION_ENOMEM because the budget is too small for the request (not
       an allocation failure): a refusal, not a fault's failure */
    const char *det = cur_ctx ? passion_ctx_errdetail(cur_ctx) : "";
    for (int j = 0; j < 8; j++)
        if (k->mine[j] == PASSION_ENOMEM && strstr(det, "budget"))
            k->mine[10] |= 1 << j;
    MPI_Allgather(k->mine, NSLOT, MPI_INT, k->all, NSLOT, MPI_INT,
                  MPI_COMM_WORLD);
}

/* Judge one code: r's slot j; fault set: rank r's (independent) or all
   ranks' (collective). */
static void judge(call *k, int r, int j, int collective)
{
    int rc = k->all[r][j];
    int io = 0, al = 0, code_ok = 0;
    for (int q = 0; q < nprocs; q++) {
        if (!collective && q != r)
            continue;
        io |= k->all[q][8];
        al |= k->all[q][9];
        if (k->all[q][8] && rc == code_of_errno(k->p.err))
            code_ok = 1;
        if (k->all[q][9] && rc == PASSION_ENOMEM)
            code_ok = 1;
    }
    if (rc)
        k->anyfail = 1;
    if (rc == k->expect && rc) {
        st.invalid_meant++;
        return;
    }
    if (rc == k->expect)
        return;
    if (rc == PASSION_ENOMEM && (k->all[collective ? 0 : r][10] >> j & 1)) {
        st.refusals++;
        return;
    }
    if (!rc) {
        violation(rank == 0, "rank %d request %d: returned 0, expected %s",
                  r, j, passion_strerror(k->expect));
        return;
    }
    /* the failing rank reports (its detail), or rank 0 for a collective
       call (the detail is agreed) */
    int me = collective ? rank == 0 : rank == r;
    if (!io && !al)
        violation(me,
                  "rank %d request %d failed with no fault fired: %d (%s): "
                  "%s", r, j, rc, passion_strerror(rc),
                  me && cur_ctx ? passion_ctx_errdetail(cur_ctx) : "");
    else if (!code_ok)
        violation(me,
                  "rank %d request %d: code %d (%s) is not the code of the "
                  "fault that fired (io %d errno %d, alloc %d): %s", r, j, rc,
                  passion_strerror(rc), io, k->p.err, al,
                  me && cur_ctx ? passion_ctx_errdetail(cur_ctx) : "");
}

static void judge_collective(call *k)
{
    for (int q = 1; q < nprocs; q++)
        if (k->all[q][0] != k->all[0][0]) {
            char list[512];
            size_t o = 0;
            for (int r = 0; r < nprocs && o < sizeof list; r++)
                o += (size_t)snprintf(list + o, sizeof list - o, " %d",
                                      k->all[r][0]);
            violation(rank == 0, "ranks returned different codes:%s", list);
            break;
        }
    judge(k, 0, 0, 1);
    for (int q = 1; q < nprocs; q++)
        if (k->all[q][0])
            k->anyfail = 1;
}

static int whole_sec(const mfile *f, passion_section *s)
{
    memset(s, 0, sizeof *s);
    for (int d = 0; d < f->nd; d++) {
        s->start[d] = f->lo[d];
        s->count[d] = f->hi[d] - f->lo[d];
        s->stride[d] = 1;
    }
    return 0;
}

/* After a failure: fault-free library reads of every file work on the
   same context and give the file's contents. */
static void recover(int c)
{
    for (int gi = 0; gi < NG; gi++) {
        mfile *f = &G[gi];
        passion_section s;
        whole_sec(f, &s);
        int mi = (int)rr(0, NMETHODS - 1);
        unsigned char *b = rbuf(f, &s, NULL);
        int rc = passion_file_read_all(gf[c][gi], &s, b, NULL,
                                          methods[mi]);
        if (rc == PASSION_ENOMEM && strstr(passion_ctx_errdetail(ctx[c]),
                                           "budget"))
            st.refusals++; /* this method never fits this budget */
        else if (rc)
            violation(1, "the next call failed: %s read of %s: %s (%s)",
                      method_names[mi], f->path, passion_strerror(rc),
                      passion_ctx_errdetail(ctx[c]));
        else
            check_rbuf(f, f->m, &s, NULL, b, "next call");
        free(b);
    }
    for (int k = 0; k < NL; k++) {
        mfile *f = &L[k][rank];
        passion_section s;
        whole_sec(f, &s);
        unsigned char *b = rbuf(f, &s, NULL);
        int rc = passion_file_read(lf[c][k], &s, b, NULL,
                                      PASSION_METHOD_DIRECT);
        if (rc)
            violation(1, "the next call failed: read of %s: %s (%s)",
                      f->path, passion_strerror(rc),
                      passion_ctx_errdetail(ctx[c]));
        else
            check_rbuf(f, f->m, &s, NULL, b, "next call");
        free(b);
    }
}

static void fexp_free(fexp *e)
{
    free(e->exact);
    for (int a = 0; a < e->nalts; a++)
        free(e->alts[a]);
    memset(e, 0, sizeof *e);
}

static void settle_all(const char *what)
{
    MPI_Barrier(MPI_COMM_WORLD);
    for (int gi = 0; gi < NG; gi++) {
        settle(&G[gi], EG[gi].exact, EG[gi].alts, EG[gi].nalts, what);
        fexp_free(&EG[gi]);
    }
    for (int k = 0; k < NL; k++)
        for (int q = 0; q < nprocs; q++) {
            settle(&L[k][q], EL[k][q].exact, EL[k][q].alts, EL[k][q].nalts,
                   what);
            fexp_free(&EL[k][q]);
        }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Expectation for a file that rank-wise writes went to: `ok[r]` says
   whether r's write succeeded; secs[r] / salts[r] what r wrote (NULL
   section: nothing). */
static void expect_writes(const mfile *f, fexp *e, const int *ok,
                          passion_section *const *secs,
                          const uint64_t *salts)
{
    e->exact = dup_model(f);
    for (int r = 0; r < nprocs; r++)
        if (secs[r] && ok[r])
            apply(f, e->exact, secs[r], salts[r]);
    for (int r = 0; r < nprocs; r++)
        if (secs[r] && !ok[r] && sec_n(f, secs[r]) > 0) {
            unsigned char *a = malloc((size_t)f->fbytes);
            memcpy(a, e->exact, (size_t)f->fbytes);
            apply(f, a, secs[r], salts[r]);
            e->alts[e->nalts++] = a;
        }
}

/* ----------------------------------------------------------------- ops */

static passion_file *file_of(int c, int global, int k)
{
    return global ? gf[c][k] : lf[c][k];
}

/* Band of the slowest dimension that rank r may write independently. */
static void band(const mfile *f, int r, int64_t *lo, int64_t *hi)
{
    memcpy(lo, f->lo, sizeof f->lo);
    memcpy(hi, f->hi, sizeof f->hi);
    int d = f->order[0];
    int64_t n = f->hi[d] - f->lo[d];
    lo[d] = f->lo[d] + n * r / nprocs;
    hi[d] = f->lo[d] + n * (r + 1) / nprocs;
}

static void op_cread(call *k)
{
    int gi = (int)rr(0, NG - 1), mi = (int)rr(0, NMETHODS - 1);
    mfile *f = &G[gi];
    passion_section S[MAXP];
    passion_memspec M[MAXP];
    int use[MAXP];
    int same = coin(4);
    for (int r = 0; r < nprocs; r++) {
        rand_sec(f, f->lo, f->hi, &S[r]);
        if (same && r)
            S[r] = S[0];
        rand_mem(f, &S[r], &M[r], &use[r]);
    }
    char sd[200];
    print_sec(sd, sizeof sd, f, &S[rank]);
    snprintf(cur_desc, sizeof cur_desc,
             "file_read_all %s %s ctx %s, rank %d section %s, ranks",
             f->path, method_names[mi], ctx_names[k->c], rank, sd);
    append_all(cur_desc, sizeof cur_desc, f, S, M, use);
    wd_enter(cur_desc);
    unsigned char *b = rbuf(f, &S[rank], use[rank] ? &M[rank] : NULL);
    arm(ctx[k->c], &k->p);
    int rc = passion_file_read_all(gf[k->c][gi], &S[rank], b,
                                      use[rank] ? &M[rank] : NULL,
                                      methods[mi]);
    fired(ctx[k->c], &k->p, &k->mine[8], &k->mine[9]);
    arm(ctx[k->c], &(fplan){.ranks = -1});
    k->mine[0] = rc;
    gather(k);
    judge_collective(k);
    if (!rc)
        check_rbuf(f, f->m, &S[rank], use[rank] ? &M[rank] : NULL, b,
                   "collective read");
    free(b);
}

static void op_cwrite(call *k)
{
    int gi = (int)rr(0, NG - 1), mi = (int)rr(0, NMETHODS - 1);
    mfile *f = &G[gi];
    passion_section S[MAXP], *ps[MAXP];
    passion_memspec M[MAXP];
    int use[MAXP], ok[MAXP];
    uint64_t salts[MAXP];
    int same = coin(5);
    for (int r = 0; r < nprocs; r++) {
        rand_sec(f, f->lo, f->hi, &S[r]);
        if (same && r)
            S[r] = S[0];
        rand_mem(f, &S[r], &M[r], &use[r]);
        salts[r] = st.calls * MAXP + (uint64_t)r;
        ps[r] = &S[r];
    }
    char sd[200];
    print_sec(sd, sizeof sd, f, &S[rank]);
    snprintf(cur_desc, sizeof cur_desc,
             "file_write_all %s %s ctx %s, rank %d section %s, ranks",
             f->path, method_names[mi], ctx_names[k->c], rank, sd);
    append_all(cur_desc, sizeof cur_desc, f, S, M, use);
    wd_enter(cur_desc);
    unsigned char *b = wbuf(f, &S[rank], use[rank] ? &M[rank] : NULL,
                            salts[rank]);
    arm(ctx[k->c], &k->p);
    int rc = passion_file_write_all(gf[k->c][gi], &S[rank], b,
                                       use[rank] ? &M[rank] : NULL,
                                       methods[mi]);
    fired(ctx[k->c], &k->p, &k->mine[8], &k->mine[9]);
    arm(ctx[k->c], &(fplan){.ranks = -1});
    k->mine[0] = rc;
    gather(k);
    judge_collective(k);
    for (int r = 0; r < nprocs; r++)
        ok[r] = k->all[0][0] == 0;
    expect_writes(f, &EG[gi], ok, ps, salts);
    free(b);
}

/* Independent read or write of a global file (writes in bands) or of the
   rank's local file; sometimes the whole local file. */
static void op_ind(call *k, int write)
{
    int global = coin(2), fi = (int)rr(0, global ? NG - 1 : NL - 1);
    int mi = (int)rr(0, 2), whole = !global && coin(8);
    passion_section S[MAXP], *ps[MAXP];
    passion_memspec M[MAXP];
    int use[MAXP], ok[MAXP];
    uint64_t salts[MAXP];
    for (int r = 0; r < nprocs; r++) {
        mfile *f = global ? &G[fi] : &L[fi][r];
        int64_t lo[PASSION_MAX_DIMS], hi[PASSION_MAX_DIMS];
        if (global && write)
            band(f, r, lo, hi);
        else {
            memcpy(lo, f->lo, sizeof lo);
            memcpy(hi, f->hi, sizeof hi);
        }
        rand_sec(f, lo, hi, &S[r]);
        if (whole)
            whole_sec(f, &S[r]);
        rand_mem(f, &S[r], &M[r], &use[r]);
        if (whole)
            use[r] = 0;
        salts[r] = st.calls * MAXP + (uint64_t)r;
        ps[r] = &S[r];
    }
    mfile *f = global ? &G[fi] : &L[fi][rank];
    passion_memspec *m = use[rank] ? &M[rank] : NULL;
    char sd[200];
    print_sec(sd, sizeof sd, f, &S[rank]);
    snprintf(cur_desc, sizeof cur_desc,
             "%s %.300s %s ctx %s, rank %d section %.150s",
             whole ? (write ? "file_write_local" : "file_read_local")
                   : (write ? "file_write" : "file_read"),
             f->path, method_names[mi], ctx_names[k->c], rank, sd);
    wd_enter(cur_desc);
    passion_file *pf = file_of(k->c, global, fi);
    unsigned char *b = write ? wbuf(f, &S[rank], m, salts[rank])
                             : rbuf(f, &S[rank], m);
    arm(ctx[k->c], &k->p);
    int rc;
    if (whole)
        rc = write ? passion_file_write_local(pf, b) : passion_file_read_local(pf, b);
    else if (write)
        rc = passion_file_write(pf, &S[rank], b, m, methods[mi]);
    else
        rc = passion_file_read(pf, &S[rank], b, m, methods[mi]);
    fired(ctx[k->c], &k->p, &k->mine[8], &k->mine[9]);
    arm(ctx[k->c], &(fplan){.ranks = -1});
    k->mine[0] = rc;
    gather(k);
    for (int r = 0; r < nprocs; r++) {
        judge(k, r, 0, 0);
        ok[r] = k->all[r][0] == 0;
    }
    if (!write && !rc)
        check_rbuf(f, f->m, &S[rank], m, b, "independent read");
    if (write && global)
        expect_writes(&G[fi], &EG[fi], ok, ps, salts);
    if (write && !global)
        for (int r = 0; r < nprocs; r++) {
            passion_section *one[MAXP] = {0};
            one[r] = &S[r];
            expect_writes(&L[fi][r], &EL[fi][r], ok, one, salts);
        }
    free(b);
}

/* Several asynchronous requests in flight, waited in random order. Per
   file: nothing, reads, or one write (global: in the rank's band); so no
   write overlaps another request in flight. */
static void op_async(call *k)
{
    enum { MAXREQ = 6 };
    struct rq {
        int global, fi, write, mi, use;
        passion_section S[MAXP];
        passion_memspec M;
        unsigned char *b;
        passion_request *req;
    } q[MAXREQ];
    int nq = 0;
    uint64_t salt0 = st.calls * MAXP;
    while (nq == 0)
        for (int fidx = 0; fidx < NG + NL && nq < MAXREQ; fidx++) {
            int act = (int)rr(0, 2); /* 0 none, 1 read(s), 2 write */
            int nr = act == 1 ? (int)rr(1, 2) : act == 2;
            for (int j = 0; j < nr && nq < MAXREQ; j++) {
                struct rq *x = &q[nq++];
                memset(x, 0, sizeof *x);
                x->global = fidx < NG;
                x->fi = x->global ? fidx : fidx - NG;
                x->write = act == 2;
                x->mi = (int)rr(0, 2);
                for (int r = 0; r < nprocs; r++) {
                    mfile *f = x->global ? &G[x->fi] : &L[x->fi][r];
                    int64_t lo[PASSION_MAX_DIMS], hi[PASSION_MAX_DIMS];
                    if (x->global && x->write)
                        band(f, r, lo, hi);
                    else {
                        memcpy(lo, f->lo, sizeof lo);
                        memcpy(hi, f->hi, sizeof hi);
                    }
                    rand_sec(f, lo, hi, &x->S[r]);
                    passion_memspec mm;
                    int u;
                    rand_mem(f, &x->S[r], &mm, &u);
                    if (r == rank) {
                        x->M = mm;
                        x->use = u;
                    }
                }
            }
        }
    int order[MAXREQ];
    for (int j = 0; j < nq; j++)
        order[j] = j;
    for (int j = nq - 1; j > 0; j--) {
        int t = (int)rr(0, j), x = order[j];
        order[j] = order[t];
        order[t] = x;
    }
    int testing = coin(3);
    size_t o = (size_t)snprintf(cur_desc, sizeof cur_desc,
                                "async ctx %s, rank %d:", ctx_names[k->c],
                                rank);
    for (int j = 0; j < nq && o < sizeof cur_desc; j++) {
        mfile *f = q[j].global ? &G[q[j].fi] : &L[q[j].fi][rank];
        char sd[160];
        print_sec(sd, sizeof sd, f, &q[j].S[rank]);
        o += (size_t)snprintf(cur_desc + o, sizeof cur_desc - o,
                              " [%s %s %s %s]", q[j].write ? "write" : "read",
                              f->path, method_names[q[j].mi], sd);
    }
    wd_enter(cur_desc);
    for (int j = 0; j < nq; j++) {
        mfile *f = q[j].global ? &G[q[j].fi] : &L[q[j].fi][rank];
        passion_memspec *m = q[j].use ? &q[j].M : NULL;
        q[j].b = q[j].write ? wbuf(f, &q[j].S[rank], m, salt0 + (uint64_t)j *
                                                          nprocs +
                                                          (uint64_t)rank)
                            : rbuf(f, &q[j].S[rank], m);
    }
    arm(ctx[k->c], &k->p);
    for (int j = 0; j < nq; j++) {
        passion_file *pf = file_of(k->c, q[j].global, q[j].fi);
        passion_memspec *m = q[j].use ? &q[j].M : NULL;
        k->mine[j] = q[j].write
                         ? passion_file_write_begin(pf, &q[j].S[rank],
                                                       q[j].b, m,
                                                       methods[q[j].mi],
                                                       &q[j].req)
                         : passion_file_read_begin(pf, &q[j].S[rank],
                                                      q[j].b, m,
                                                      methods[q[j].mi],
                                                      &q[j].req);
        if (k->mine[j] && q[j].req)
            violation(1, "request %d: begin failed but returned a request",
                      j);
    }
    for (int j = 0; j < nq; j++) {
        struct rq *x = &q[order[j]];
        if (!x->req)
            continue;
        if (testing) {
            int done = 0;
            int trc = passion_request_test(x->req, &done);
            (void)trc;
        }
        int rc = passion_request_wait(x->req);
        if (!k->mine[order[j]])
            k->mine[order[j]] = rc;
    }
    fired(ctx[k->c], &k->p, &k->mine[8], &k->mine[9]);
    arm(ctx[k->c], &(fplan){.ranks = -1});
    gather(k);
    for (int r = 0; r < nprocs; r++)
        for (int j = 0; j < nq; j++)
            judge(k, r, j, 0);
    for (int j = 0; j < nq; j++) {
        mfile *f = q[j].global ? &G[q[j].fi] : &L[q[j].fi][rank];
        if (!q[j].write && !k->mine[j])
            check_rbuf(f, f->m, &q[j].S[rank], q[j].use ? &q[j].M : NULL,
                       q[j].b, "asynchronous read");
        free(q[j].b);
    }
    for (int j = 0; j < nq; j++) {
        if (!q[j].write)
            continue;
        int ok[MAXP];
        uint64_t salts[MAXP];
        for (int r = 0; r < nprocs; r++) {
            ok[r] = k->all[r][j] == 0;
            salts[r] = salt0 + (uint64_t)j * nprocs + (uint64_t)r;
        }
        if (q[j].global) {
            passion_section *ps[MAXP];
            for (int r = 0; r < nprocs; r++)
                ps[r] = &q[j].S[r];
            expect_writes(&G[q[j].fi], &EG[q[j].fi], ok, ps, salts);
        } else
            for (int r = 0; r < nprocs; r++) {
                passion_section *one[MAXP] = {0};
                one[r] = &q[j].S[r];
                expect_writes(&L[q[j].fi][r], &EL[q[j].fi][r], ok, one,
                              salts);
            }
    }
}

/* Interior of local file f ([0, n) in every dimension) set to salted
   values in dst. */
static void set_interior(const mfile *f, unsigned char *dst, uint64_t salt,
                         int dim, int64_t a, int64_t b)
{
    int64_t lo[PASSION_MAX_DIMS], cnt[PASSION_MAX_DIMS];
    for (int d = 0; d < f->nd; d++) {
        lo[d] = d == dim ? a : 0;
        cnt[d] = d == dim ? b - a : f->nl[d];
        if (cnt[d] <= 0)
            return;
    }
    int64_t i[PASSION_MAX_DIMS] = {0}, idx[PASSION_MAX_DIMS];
    do {
        for (int d = 0; d < f->nd; d++)
            idx[d] = lo[d] + i[d];
        int64_t e = eidx(f, idx);
        for (int64_t k = 0; k < f->esize; k++)
            dst[f->data_off + e * f->esize + k] = val(e, k, salt);
    } while (nexti(f->nd, cnt, i));
}

/* Slab buffer position of local index idx. */
static int64_t slab_pos(const mfile *f, const passion_slab *s,
                        const int64_t *idx)
{
    int64_t e = 0, st1 = 1;
    for (int k = f->nd - 1; k >= 0; k--) {
        int d = f->order[k];
        e += (idx[d] - (d == s->dim ? s->start : 0) + s->mem.offset[d]) * st1;
        st1 *= s->mem.shape[d];
    }
    return e;
}

static void op_slab(call *k)
{
    mfile *f = &L[0][rank], *fo = &L[1][rank];
    int mode = (int)rr(0, 2); /* 0 read only, 1 write-back, 2 out file */
    passion_slab_opts o;
    passion_slab_opts_init(&o);
    o.dim = coin(2) ? -1 : (int)rr(0, f->nd - 1);
    int dim = o.dim < 0 ? f->order[0] : o.dim;
    o.width = coin(4) ? 0 : rr(1, 4);
    o.halo = coin(2) ? -1 : rr(0, lspec.ghost[dim]);
    int64_t halo = o.halo < 0 ? lspec.ghost[dim] : o.halo;
    o.prefetch = (int)rr(0, 1);
    o.reuse = (int)rr(0, 1);
    o.writeback = mode == 1;
    o.out = mode == 2 ? lf[k->c][1] : NULL;
    o.method = methods[rr(0, 2)];
    o.budget = 1 << 20;
    uint64_t salt = st.calls * MAXP + 7;
    snprintf(cur_desc, sizeof cur_desc,
             "slab sweep %s ctx %s rank %d: mode %s dim %d width %lld halo "
             "%lld prefetch %d reuse %d method %d", f->path,
             ctx_names[k->c], rank,
             mode == 0 ? "read" : mode == 1 ? "write-back" : "out",
             o.dim, (long long)o.width, (long long)o.halo, o.prefetch,
             o.reuse, o.method);
    wd_enter(cur_desc);
    unsigned char *view = dup_model(f);
    passion_slab_iter *it = NULL;
    arm(ctx[k->c], &k->p);
    int rc = passion_slab_open(lf[k->c][0], &o, &it);
    int64_t nslabs = 0, badslab = -1;
    while (!rc) {
        passion_slab s;
        int more = passion_slab_next(it, &s);
        if (more < 0)
            rc = more;
        if (more <= 0)
            break;
        nslabs++;
        /* the in buffer: file contents as modified so far, halo incl. */
        int64_t lo[PASSION_MAX_DIMS], cnt[PASSION_MAX_DIMS];
        int empty = 0;
        for (int d = 0; d < f->nd; d++) {
            lo[d] = d == dim ? s.start - halo : -f->shift[d];
            cnt[d] = d == dim ? s.count + 2 * halo : f->ext[d];
            empty |= cnt[d] <= 0;
        }
        int64_t i[PASSION_MAX_DIMS] = {0}, idx[PASSION_MAX_DIMS];
        if (!empty && s.dim == dim)
            do {
                for (int d = 0; d < f->nd; d++)
                    idx[d] = lo[d] + i[d];
                int64_t e = eidx(f, idx), p = slab_pos(f, &s, idx);
                if (badslab < 0 &&
                    memcmp((char *)s.in + p * f->esize,
                           view + f->data_off + e * f->esize,
                           (size_t)f->esize))
                    badslab = s.index;
            } while (nexti(f->nd, cnt, i));
        if (s.dim != dim && badslab < 0)
            badslab = s.index;
        /* compute: the interior gets salted values */
        if (mode != 0) {
            empty = 0;
            unsigned char *tgt = mode == 1 ? (unsigned char *)s.in
                                           : (unsigned char *)s.out;
            for (int d = 0; d < f->nd; d++) {
                lo[d] = d == dim ? s.start : 0;
                cnt[d] = d == dim ? s.count : f->nl[d];
                empty |= cnt[d] <= 0;
            }
            memset(i, 0, sizeof i);
            if (!empty && tgt)
                do {
                    for (int d = 0; d < f->nd; d++)
                        idx[d] = lo[d] + i[d];
                    int64_t e = eidx(f, idx), p = slab_pos(f, &s, idx);
                    for (int64_t b = 0; b < f->esize; b++)
                        tgt[p * f->esize + b] = val(e, b, salt);
                } while (nexti(f->nd, cnt, i));
            if (mode == 1) {
                set_interior(f, view, salt, dim, s.start,
                             s.start + s.count);
                int drc = passion_slab_dirty(it);
                if (drc)
                    rc = drc;
            }
        }
    }
    int erc = it ? passion_slab_close(it) : 0;
    if (!rc)
        rc = erc;
    fired(ctx[k->c], &k->p, &k->mine[8], &k->mine[9]);
    arm(ctx[k->c], &(fplan){.ranks = -1});
    k->mine[0] = rc;
    gather(k);
    for (int r = 0; r < nprocs; r++)
        judge(k, r, 0, 0);
    st.checks++;
    if (badslab >= 0)
        violation(1, "slab %lld of %lld: in buffer differs from the file",
                  (long long)badslab, (long long)nslabs);
    free(view);
    (void)fo;
    if (mode == 0)
        return;
    for (int r = 0; r < nprocs; r++) {
        mfile *t = mode == 1 ? &L[0][r] : &L[1][r];
        fexp *e = mode == 1 ? &EL[0][r] : &EL[1][r];
        unsigned char *full = dup_model(t);
        set_interior(t, full, salt, -1, 0, 0);
        if (k->all[r][0] == 0)
            e->exact = full;
        else {
            e->alts[e->nalts++] = full;
        }
    }
}

/* Grid coordinates of rank r (row-major over the grid). */
static void coords(int r, int *c)
{
    for (int d = lspec.ndims - 1; d >= 0; d--) {
        int g = lspec.grid[d] ? lspec.grid[d] : 1;
        c[d] = r % g;
        r /= g;
    }
}

static int neighbour(int r, int dim, int step, int periodic)
{
    int c[PASSION_MAX_DIMS];
    coords(r, c);
    int g = lspec.grid[dim] ? lspec.grid[dim] : 1;
    int p = c[dim] + step;
    if (p < 0 || p >= g) {
        if (!periodic)
            return -1;
        p = (p % g + g) % g;
    }
    c[dim] = p;
    int q = 0;
    for (int d = 0; d < lspec.ndims; d++)
        q = q * (lspec.grid[d] ? lspec.grid[d] : 1) + c[d];
    return q;
}

static void op_shift(call *k)
{
    int fi = (int)rr(0, NL - 1);
    int dim = (int)rr(0, lspec.ndims - 1), dir = (int)rr(-1, 1);
    int periodic = (int)rr(0, 1);
    int64_t g = lspec.ghost[dim];
    int64_t width = coin(2) ? 0 : rr(1, g + 1);
    int64_t w = width > 0 ? width : g;
    int invalid = w > g;
    for (int r = 0; r < nprocs; r++)
        invalid |= w > L[fi][r].nl[dim];
    k->expect = invalid ? PASSION_EINVAL : 0;
    snprintf(cur_desc, sizeof cur_desc,
             "file_shift_all %s ctx %s dim %d dir %d periodic %d width %lld "
             "(ghost %lld)%s", L[fi][rank].path, ctx_names[k->c], dim, dir,
             periodic, (long long)width, (long long)g,
             invalid ? " invalid" : "");
    wd_enter(cur_desc);
    arm(ctx[k->c], &k->p);
    int rc = passion_file_shift_all(lf[k->c][fi], dim, dir, periodic, width);
    fired(ctx[k->c], &k->p, &k->mine[8], &k->mine[9]);
    arm(ctx[k->c], &(fplan){.ranks = -1});
    k->mine[0] = rc;
    gather(k);
    judge_collective(k);
    if (invalid || w == 0)
        return;
    /* the model: each rank's ghosts from its neighbours' old files */
    for (int q = 0; q < nprocs; q++) {
        mfile *f = &L[fi][q];
        unsigned char *nw = dup_model(f);
        for (int step = 1; step >= -1; step -= 2) {
            if ((step > 0 && dir < 0) || (step < 0 && dir > 0))
                continue;
            int from = neighbour(q, dim, -step, periodic);
            if (from < 0)
                continue;
            mfile *src = &L[fi][from];
            int64_t lo[PASSION_MAX_DIMS], cnt[PASSION_MAX_DIMS];
            for (int d = 0; d < f->nd; d++) {
                lo[d] = -f->shift[d];
                cnt[d] = f->ext[d];
            }
            lo[dim] = 0;
            cnt[dim] = w;
            int empty = 0;
            for (int d = 0; d < f->nd; d++)
                empty |= cnt[d] <= 0;
            if (empty)
                continue;
            int64_t i[PASSION_MAX_DIMS] = {0}, di[PASSION_MAX_DIMS],
                    si[PASSION_MAX_DIMS];
            do {
                for (int d = 0; d < f->nd; d++)
                    di[d] = si[d] = lo[d] + i[d];
                di[dim] = step > 0 ? -w + i[dim] : f->nl[dim] + i[dim];
                si[dim] = step > 0 ? src->nl[dim] - w + i[dim] : i[dim];
                memcpy(nw + f->data_off + eidx(f, di) * f->esize,
                       src->m + src->data_off + eidx(src, si) * src->esize,
                       (size_t)f->esize);
            } while (nexti(f->nd, cnt, i));
        }
        if (k->all[0][0] == 0)
            EL[fi][q].exact = nw;
        else
            EL[fi][q].alts[EL[fi][q].nalts++] = nw;
    }
}

static void op_xchg(call *k)
{
    static const int algs[] = {
        PASSION_XCHG_DEFAULT, PASSION_XCHG_AUTO, PASSION_XCHG_MPI,
        PASSION_XCHG_PAIRWISE, PASSION_XCHG_A1, PASSION_XCHG_INDEX,
        PASSION_XCHG_FOURSTAGE, PASSION_XCHG_FOURSTAGE_NB};
    static const char *an[] = {"default", "auto", "mpi", "pairwise", "a1",
                               "index", "fourstage", "fourstage-nb"};
    int ai = (int)rr(0, 7), alg = algs[ai];
    int radix = alg == PASSION_XCHG_INDEX && nprocs >= 2 && coin(2)
                    ? (int)rr(2, nprocs) : 0;
    int ti = (int)rr(0, 2);
    MPI_Datatype type = ti == 0 ? MPI_BYTE : ti == 1 ? MPI_INT : MPI_DOUBLE;
    int64_t ts = ti == 0 ? 1 : ti == 1 ? 4 : 8;
    int v = coin(2) && alg != PASSION_XCHG_INDEX;
    int64_t cnt[MAXP][MAXP];
    int64_t c0 = rr(0, 40);
    for (int i = 0; i < nprocs; i++)
        for (int j = 0; j < nprocs; j++)
            cnt[i][j] = v ? (coin(4) ? 0 : rr(0, 60)) : c0;
    int64_t sc[MAXP], sdp[MAXP], rc_[MAXP], rdp[MAXP], stot = 0, rtot = 0;
    for (int j = 0; j < nprocs; j++) {
        int64_t gap = v ? rr(0, 3) : 0;
        sc[j] = cnt[rank][j];
        sdp[j] = stot + gap;
        stot += gap + sc[j];
    }
    for (int i = 0; i < nprocs; i++) {
        int64_t gap = v ? rr(0, 3) : 0;
        rc_[i] = cnt[i][rank];
        rdp[i] = rtot + gap;
        rtot += gap + rc_[i];
    }
    uint64_t salt = st.calls;
    unsigned char *sb = malloc((size_t)(stot * ts + 1));
    unsigned char *rb = malloc((size_t)(rtot * ts + 1));
    memset(sb, 0x5A, (size_t)(stot * ts + 1));
    memset(rb, 0xEE, (size_t)(rtot * ts + 1));
    for (int j = 0; j < nprocs; j++)
        for (int64_t b = 0; b < sc[j] * ts; b++)
            sb[sdp[j] * ts + b] = val(b, rank * MAXP + j, salt);
    snprintf(cur_desc, sizeof cur_desc,
             "%s %s radix %d type %lld B ctx %s", v ? "alltoallv" : "alltoall",
             an[ai], radix, (long long)ts, ctx_names[k->c]);
    wd_enter(cur_desc);
    arm(ctx[k->c], &k->p);
    int rc = v ? passion_alltoallv(ctx[k->c], sb, sc, sdp, rb, rc_, rdp, type,
                                   alg, radix)
               : passion_alltoall(ctx[k->c], sb, rb, c0, type, alg, radix);
    fired(ctx[k->c], &k->p, &k->mine[8], &k->mine[9]);
    arm(ctx[k->c], &(fplan){.ranks = -1});
    k->mine[0] = rc;
    gather(k);
    judge_collective(k);
    if (!rc) {
        st.checks++;
        int bad = 0;
        if (!v) {
            for (int i = 0; i < nprocs && !bad; i++)
                for (int64_t b = 0; b < c0 * ts && !bad; b++)
                    bad = rb[i * c0 * ts + b] != val(b, i * MAXP + rank, salt);
        } else {
            unsigned char *exp = malloc((size_t)(rtot * ts + 1));
            memset(exp, 0xEE, (size_t)(rtot * ts + 1));
            for (int i = 0; i < nprocs; i++)
                for (int64_t b = 0; b < rc_[i] * ts; b++)
                    exp[rdp[i] * ts + b] = val(b, i * MAXP + rank, salt);
            bad = memcmp(exp, rb, (size_t)(rtot * ts + 1)) != 0;
            free(exp);
        }
        if (bad)
            violation(1, "exchange: received data wrong");
    }
    free(sb);
    free(rb);
}

/* ---------------------------------------------------------------- epochs */

/* The one place that sets options: a comma-separated key=value list. */
static int make_ctx(const char *list, passion_ctx **c)
{
    passion_options *o = NULL;
    int rc = passion_options_create(&o);
    if (!rc)
        rc = passion_options_parse(o, list);
    if (rc && o)
        fprintf(stderr, "[rank %d] options \"%s\": %s\n", rank, list,
                passion_options_errdetail(o));
    if (!rc)
        rc = passion_init(MPI_COMM_WORLD, o, c);
    passion_options_free(o);
    return rc;
}

static void draw_global(passion_array_spec *s, int npy)
{
    static const int64_t esz[] = {1, 2, 4, 8, 12, 16};
    int nd = (int)rr(1, 3);
    int64_t shape[PASSION_MAX_DIMS];
    for (int d = 0; d < nd; d++)
        shape[d] = rr(1, nd == 1 ? 400 : nd == 2 ? 40 : 12);
    passion_array_spec_init(s, nd, shape, esz[rr(0, 5)]);
    s->placement = PASSION_PLACE_GLOBAL;
    s->storage = (int)rr(0, npy ? 1 : 2);
    if (s->storage == PASSION_ORDER_CUSTOM) {
        for (int d = 0; d < nd; d++)
            s->order[d] = d;
        for (int d = nd - 1; d > 0; d--) {
            int t = (int)rr(0, d), x = s->order[d];
            s->order[d] = s->order[t];
            s->order[t] = x;
        }
    }
    s->header_bytes = !npy && coin(2) ? rr(1, 5000) : 0;
}

static void draw_local(passion_array_spec *s)
{
    static const int64_t esz[] = {1, 4, 8, 12};
    int nd = (int)rr(1, 3);
    int grid[PASSION_MAX_DIMS];
    for (int d = 0; d < nd; d++)
        grid[d] = 1;
    /* spread P's factors over the dimensions */
    int p = nprocs;
    for (int f = 2; p > 1; f++)
        while (p % f == 0) {
            grid[rr(0, nd - 1)] *= f;
            p /= f;
        }
    int64_t shape[PASSION_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        int64_t per = rr(1, nd == 1 ? 40 : nd == 2 ? 10 : 5);
        shape[d] = grid[d] * per - (coin(3) ? rr(0, grid[d] - 1) : 0);
        if (shape[d] < 1)
            shape[d] = 1;
    }
    passion_array_spec_init(s, nd, shape, esz[rr(0, 3)]);
    s->placement = PASSION_PLACE_LOCAL;
    s->storage = (int)rr(0, 1);
    for (int d = 0; d < nd; d++) {
        s->grid[d] = grid[d];
        s->dist[d] = PASSION_DIST_BLOCK;
        int64_t gmax = shape[d] < 2 ? shape[d] : 2;
        s->ghost[d] = rr(0, gmax);
    }
}

static int check_setup(int rc, const char *what)
{
    if (rc) {
        fprintf(stderr, "[rank %d] setup failed (epoch %llu, seed %llu): %s: "
                "%s\n", rank, (unsigned long long)st.epochs,
                (unsigned long long)seed, what, passion_strerror(rc));
        st.violations++;
        fatal = 1;
    }
    return rc;
}

static int npy_offset(const unsigned char *h, int64_t n)
{
    if (n < 12 || memcmp(h, "\x93NUMPY", 6))
        return -1;
    if (h[6] == 1)
        return 10 + (h[8] | h[9] << 8);
    return 12 + (int)((uint32_t)h[8] | (uint32_t)h[9] << 8 |
                      (uint32_t)h[10] << 16 | (uint32_t)h[11] << 24);
}

static int epoch_begin(void)
{
    st.epochs++;
    snprintf(cur_desc, sizeof cur_desc, "epoch %llu setup",
             (unsigned long long)st.epochs);
    wd_enter(cur_desc);
    for (int gi = 0; gi < NG; gi++)
        draw_global(&gspec[gi], gi == 1);
    draw_local(&lspec);
    int64_t floor = 5 * 64 * (nprocs > 1 ? nprocs : 2);
    for (int c = 0; c < NCTX; c++) {
        int64_t budget = coin(3) ? (int64_t)64 << 20 : rr(floor, floor + 8192);
        /* not index: the two-phase method's exchanges are irregular and
           a context whose exchange option is index fails them with
           PASSION_EINVAL) */
        int xi = (int)rr(0, 5);
        if (xi >= 4)
            xi++;
        int radix = 0;
        /* four-stage stages up to 64 KiB beyond its data: below that
           every two-phase call of the context would be refused */
        if (xi >= 5 && budget < (128 << 10))
            budget = rr(80 << 10, 200 << 10);
        size_t o = (size_t)snprintf(ctx_opts[c], sizeof ctx_opts[c],
                                    "driver=%s,memory_budget=%lld,"
                                    "exchange=%s,radix=%d,io_concurrency=%d",
                                    ctx_names[c], (long long)budget,
                                    xchg_names[xi], radix,
                                    (int)(coin(3) ? 1 : rr(0, 8)));
        /* file costs of other machines (a request from 10 us to 10 ms,
           26 KB/s to 1 GB/s): auto's choices then cover what this
           machine's calibration never picks (independent access where
           each rank's own plan sieves, as in the lost write of an auto
           write the soak once found by luck) */
        if (coin(3)) {
            static const double lat[] = {1e-5, 1e-4, 1e-3, 1e-2};
            static const double bw[] = {26947, 1e6, 1e8, 1e9};
            o += (size_t)snprintf(ctx_opts[c] + o, sizeof ctx_opts[c] - o,
                                  ",io_latency=%g,io_bandwidth=%g",
                                  lat[rr(0, 3)], bw[rr(0, 3)]);
        }
        if (c == CP)
            snprintf(ctx_opts[c] + o, sizeof ctx_opts[c] - o,
                     ",direct_io=%d,engine=%s", coin(3) ? 1 : 0,
                     coin(2) ? "auto" : "thread");
        if (c == CF)
            snprintf(ctx_opts[c] + o, sizeof ctx_opts[c] - o,
                     ",fault_ranks=-1");
    }
    if (verbose && rank == 0) {
        printf("epoch %llu: global %dd %lld B, npy %dd %lld B, local %dd "
               "%lld B grid", (unsigned long long)st.epochs, gspec[0].ndims,
               (long long)gspec[0].elem_size, gspec[1].ndims,
               (long long)gspec[1].elem_size, lspec.ndims,
               (long long)lspec.elem_size);
        for (int d = 0; d < lspec.ndims; d++)
            printf(" %d", lspec.grid[d]);
        printf("\n  contexts: %s | %s | %s\n", ctx_opts[0], ctx_opts[1],
               ctx_opts[2]);
    }
    int rc = 0;
    for (int c = 0; c < NCTX && !rc; c++)
        rc = check_setup(make_ctx(ctx_opts[c], &ctx[c]), ctx_opts[c]);
    for (int c = 0; c < NCTX && !rc; c++) {
        for (int gi = 0; gi < NG && !rc; gi++)
            rc = check_setup(passion_array_create(ctx[c], &gspec[gi],
                                                  &ga[c][gi]),
                             "global array");
        if (!rc)
            rc = check_setup(passion_array_create(ctx[c], &lspec, &la[c]),
                             "local array");
    }
    char gpath[NG][640], lpat[NL][640];
    snprintf(gpath[0], sizeof gpath[0], "%s/soak-g0.raw", scratch);
    snprintf(gpath[1], sizeof gpath[1], "%s/soak-g1.npy", scratch);
    for (int k = 0; k < NL; k++)
        snprintf(lpat[k], sizeof lpat[k], "%s/soak-l%d.%%d.laf", scratch, k);
    for (int c = 0; c < NCTX && !rc; c++) {
        int mode = c == CF ? PASSION_MODE_CREATE : PASSION_MODE_RDWR;
        for (int gi = 0; gi < NG && !rc; gi++)
            rc = check_setup(passion_file_open(ga[c][gi], gpath[gi], mode,
                                               &gf[c][gi]), gpath[gi]);
        for (int k = 0; k < NL && !rc; k++)
            rc = check_setup(passion_file_open(la[c], lpat[k], mode,
                                               &lf[c][k]), lpat[k]);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rc)
        return rc;
    /* models from the created files */
    for (int gi = 0; gi < NG; gi++) {
        mfile *f = &G[gi];
        memset(f, 0, sizeof *f);
        const passion_array_spec *n = passion_array_get_spec(ga[CF][gi]);
        snprintf(f->path, sizeof f->path, "%.639s", gpath[gi]);
        f->nd = n->ndims;
        f->global = 1;
        f->npy = gi == 1;
        f->esize = n->elem_size;
        memcpy(f->order, n->order, sizeof f->order);
        for (int d = 0; d < f->nd; d++) {
            f->ext[d] = f->hi[d] = f->nl[d] = n->shape[d];
            f->lo[d] = 0;
        }
        mfile_geometry(f);
        struct stat sb;
        stat(f->path, &sb);
        f->fbytes = sb.st_size;
        f->m = malloc((size_t)f->fbytes);
        int64_t size;
        raw_read(f, f->m, &size);
        f->data_off = f->npy ? npy_offset(f->m, f->fbytes) : n->header_bytes;
        if (f->data_off < 0 ||
            f->data_off + f->nelem * f->esize != f->fbytes) {
            violation(rank == 0, "created %s: %lld bytes, data at %lld",
                      f->path, (long long)f->fbytes, (long long)f->data_off);
            fatal = 1;
            return PASSION_EFORMAT;
        }
    }
    for (int k = 0; k < NL; k++)
        for (int q = 0; q < nprocs; q++) {
            mfile *f = &L[k][q];
            memset(f, 0, sizeof *f);
            const passion_array_spec *n = passion_array_get_spec(la[CF]);
            snprintf(f->path, sizeof f->path, "%s/soak-l%d.%d.laf", scratch,
                     k, q);
            f->nd = n->ndims;
            f->esize = n->elem_size;
            memcpy(f->order, n->order, sizeof f->order);
            passion_array_local_shape(la[CF], q, f->nl);
            for (int d = 0; d < f->nd; d++) {
                f->shift[d] = n->ghost[d];
                f->ext[d] = f->nl[d] + 2 * n->ghost[d];
                f->lo[d] = -n->ghost[d];
                f->hi[d] = f->nl[d] + n->ghost[d];
            }
            mfile_geometry(f);
            passion_array_local_bytes(la[CF], q, &f->fbytes);
            f->m = calloc((size_t)f->fbytes + 1, 1);
            if (f->fbytes != f->nelem * f->esize) {
                violation(rank == 0, "local file %s: %lld bytes, model %lld",
                          f->path, (long long)f->fbytes,
                          (long long)(f->nelem * f->esize));
                fatal = 1;
                return PASSION_EFORMAT;
            }
        }
    /* created files are zero-filled: settle against zeros, then fill */
    for (int gi = 0; gi < NG; gi++)
        memset(G[gi].m + G[gi].data_off, 0,
               (size_t)(G[gi].fbytes - G[gi].data_off));
    settle_all("created file");
    uint64_t salt = 1000000007ULL * st.epochs;
    rc = 0;
    for (int gi = 0; gi < NG; gi++) {
        passion_section s;
        whole_sec(&G[gi], &s);
        unsigned char *b = wbuf(&G[gi], &s, NULL, salt + (uint64_t)gi);
        int r1 = rank == 0 ? passion_file_write(gf[CF][gi], &s, b, NULL,
                                                   PASSION_METHOD_DIRECT)
                           : 0;
        free(b);
        MPI_Allreduce(MPI_IN_PLACE, &r1, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        rc = rc ? rc : check_setup(r1, "fill global");
        EG[gi].exact = dup_model(&G[gi]);
        apply(&G[gi], EG[gi].exact, &s, salt + (uint64_t)gi);
    }
    for (int k = 0; k < NL; k++) {
        for (int q = 0; q < nprocs; q++) {
            passion_section s;
            whole_sec(&L[k][q], &s);
            EL[k][q].exact = dup_model(&L[k][q]);
            apply(&L[k][q], EL[k][q].exact, &s, salt + 10 + (uint64_t)q);
        }
        int r1 = passion_file_write_local(lf[CF][k], EL[k][rank].exact);
        MPI_Allreduce(MPI_IN_PLACE, &r1, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        rc = rc ? rc : check_setup(r1, "fill local");
    }
    settle_all("filled file");
    wd_leave();
    return rc;
}

static void epoch_end(void)
{
    snprintf(cur_desc, sizeof cur_desc, "epoch %llu teardown",
             (unsigned long long)st.epochs);
    wd_enter(cur_desc);
    for (int c = NCTX - 1; c >= 0; c--) {
        for (int gi = 0; gi < NG; gi++) {
            int rc = passion_file_close(gf[c][gi]);
            if (rc)
                violation(1, "close %s: %s", G[gi].path, passion_strerror(rc));
            gf[c][gi] = NULL;
            passion_array_free(ga[c][gi]);
            ga[c][gi] = NULL;
        }
        for (int k = 0; k < NL; k++) {
            int rc = passion_file_close(lf[c][k]);
            if (rc)
                violation(1, "close %s: %s", L[k][rank].path,
                          passion_strerror(rc));
            lf[c][k] = NULL;
        }
        passion_array_free(la[c]);
        la[c] = NULL;
        passion_finalize(ctx[c]);
        ctx[c] = NULL;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int gi = 0; gi < NG; gi++) {
        if (rank == 0 && G[gi].path[0])
            unlink(G[gi].path);
        free(G[gi].m);
        G[gi].m = NULL;
    }
    for (int k = 0; k < NL; k++) {
        if (L[k][rank].path[0])
            unlink(L[k][rank].path);
        for (int q = 0; q < nprocs; q++) {
            free(L[k][q].m);
            L[k][q].m = NULL;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    wd_leave();
}

/* ----------------------------------------------------------------- main */

static void one_call(void)
{
    call k;
    memset(&k, 0, sizeof k);
    int tw = 0, w[NOPS];
    for (int o = 0; o < NOPS; o++)
        tw += w[o] = op_mask >> o & 1 ? op_weight[o] : 0;
    int x = (int)rr(0, tw - 1);
    for (k.op = 0; x >= w[k.op]; k.op++)
        x -= w[k.op];
    draw_plan(&k.p);
    k.c = k.p.on ? CF : (int)rr(0, NCTX - 1);
    cur_ctx = ctx[k.c];
    double t0 = now();
    if (k.p.on) {
        st.armed_io += k.p.io_at > 0;
        st.armed_short += k.p.shrt;
        st.armed_alloc += k.p.alloc_at > 0;
    }
    switch (k.op) {
    case OP_CREAD: op_cread(&k); break;
    case OP_CWRITE: op_cwrite(&k); break;
    case OP_IREAD: op_ind(&k, 0); break;
    case OP_IWRITE: op_ind(&k, 1); break;
    case OP_ASYNC: op_async(&k); break;
    case OP_SLAB: op_slab(&k); break;
    case OP_SHIFT: op_shift(&k); break;
    case OP_XCHG: op_xchg(&k); break;
    }
    size_t o = strlen(cur_desc);
    if (k.p.on)
        snprintf(cur_desc + o, sizeof cur_desc - o,
                 "; fault io@%lld errno %d short %d alloc@%lld ranks %d",
                 (long long)k.p.io_at, k.p.err, k.p.shrt,
                 (long long)k.p.alloc_at, k.p.ranks);
    int io = 0, al = 0;
    for (int r = 0; r < nprocs; r++) {
        io |= k.all[r][8];
        al |= k.all[r][9];
    }
    st.fired_io += io;
    st.fired_alloc += al;
    st.by_op[k.op]++;
    if (k.anyfail) {
        st.failures++;
        st.fail_by_op[k.op]++;
        for (int r = 0; r < nprocs; r++)
            for (int j = 0; j < 8; j++) {
                int c = -k.all[r][j];
                if (c > 0 && c < 20)
                    st.codes[c]++;
            }
    } else if (io || al)
        st.fired_ok++;
    if (verbose > 1 && rank == 0)
        printf("call %llu: %s -> %d%s\n", (unsigned long long)st.calls,
               cur_desc, k.all[0][0], k.anyfail ? " (failed)" : "");
    settle_all(op_names[k.op]);
    if (k.anyfail)
        recover(k.c);
    MPI_Barrier(MPI_COMM_WORLD);
    st.t_op[k.op] += now() - t0;
    wd_leave();
}

/* A field of /proc/self/status in KiB ("VmRSS:", "RssAnon:"). */
static long status_kib(const char *key)
{
    FILE *fp = fopen("/proc/self/status", "r");
    if (!fp)
        return -1;
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, fp))
        if (!strncmp(line, key, kl)) {
            v = strtol(line + kl, NULL, 10);
            break;
        }
    fclose(fp);
    return v;
}

/* Least-squares slope of y over x, from sample `from` on. */
static double slope(const double *x, const double *y, int n, int from)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int m = n - from;
    if (m < 2)
        return 0;
    for (int i = from; i < n; i++) {
        sx += x[i];
        sy += y[i];
    }
    double mx = sx / m, my = sy / m;
    for (int i = from; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    return sxx > 0 ? sxy / sxx : 0;
}

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr,
                "soak [--seconds S] [--seed N] [--scratch DIR] "
                "[--fault-rate F] [--watchdog S] [--epoch CALLS]\n"
                "     [--rss-every CALLS] [--rss-limit KIB] [--trim] "
                "[--calls N] [--ops a,b,...]\n"
                "     [--chaos SEED [--chaos-max-us US] "
                "[--chaos-pct PCT]] [--verbose [--verbose]]\n"
                "ops: coll-read coll-write ind-read ind-write async slab "
                "shift exchange\n");
}

/* the scratch directory and what is left in it (the local sets'
   descriptions, "NAME.passion", were left behind: every CI run left a
   passion-soak-npN-PID directory in /tmp) */
static int remove_scratch(void)
{
    DIR *d = opendir(scratch);
    if (d) {
        struct dirent *de;
        char p[1024];
        while ((de = readdir(d)))
            if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
                snprintf(p, sizeof p, "%s/%s", scratch, de->d_name) <
                    (int)sizeof p)
                unlink(p);
        closedir(d);
    }
    if (!rmdir(scratch))
        return 0;
    fprintf(stderr, "soak: could not remove %s: %s\n", scratch,
            strerror(errno));
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *sdir = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--verbose")) {
            verbose++;
            continue;
        }
        if (!strcmp(a, "--trim")) { /* malloc_trim before each sample */
            trim = 1;
            continue;
        }
        if (!v) {
            usage();
            MPI_Finalize();
            return 2;
        }
        if (!strcmp(a, "--seconds"))
            seconds = atof(v);
        else if (!strcmp(a, "--minutes"))
            seconds = 60 * atof(v);
        else if (!strcmp(a, "--seed"))
            seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--scratch"))
            sdir = v;
        else if (!strcmp(a, "--fault-rate"))
            fault_rate = atof(v);
        else if (!strcmp(a, "--watchdog"))
            wd_limit = atof(v);
        else if (!strcmp(a, "--epoch"))
            epoch_len = atoi(v);
        else if (!strcmp(a, "--rss-every"))
            rss_every = atoi(v);
        else if (!strcmp(a, "--rss-limit"))
            rss_limit = atof(v);
        else if (!strcmp(a, "--calls"))
            max_calls = atoll(v);
        else if (!strcmp(a, "--chaos")) {
            chaos_on = 1;
            chaos_seed = strtoull(v, NULL, 10);
        } else if (!strcmp(a, "--chaos-max-us"))
            chaos_max_us = atoi(v);
        else if (!strcmp(a, "--chaos-pct"))
            chaos_pct = atoi(v);
        else if (!strcmp(a, "--ops")) {
            /* comma-separated names of op_names[] */
            op_mask = 0;
            char buf[256];
            snprintf(buf, sizeof buf, "%s", v);
            char *save = NULL;
            for (char *t = strtok_r(buf, ",", &save); t;
                 t = strtok_r(NULL, ",", &save)) {
                int o = 0;
                while (o < NOPS && strcmp(t, op_names[o]))
                    o++;
                if (o == NOPS) {
                    usage();
                    MPI_Finalize();
                    return 2;
                }
                op_mask |= 1u << o;
            }
        }
        else {
            usage();
            MPI_Finalize();
            return 2;
        }
        i++;
    }
    if (nprocs > MAXP) {
        if (rank == 0)
            fprintf(stderr, "soak: at most %d ranks\n", MAXP);
        MPI_Finalize();
        return 2;
    }
    if (chaos_on &&
        core_chaos_config(chaos_seed, chaos_max_us, chaos_pct) != 0) {
        if (rank == 0)
            fprintf(stderr, "soak: --chaos: the schedule fuzzer "
                    "refused its configuration\n");
        MPI_Finalize();
        return 2;
    }
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!sdir || !*sdir)
        sdir = getenv("PASSION_TEST_DIR");
    snprintf(scratch, sizeof scratch, "%s/passion-soak-np%d-%d",
             sdir && *sdir ? sdir : "/tmp", nprocs, pid);
    if (rank == 0)
        mkdir(scratch, 0755);
    MPI_Barrier(MPI_COMM_WORLD);
    rng = seed;
    if (rank == 0) {
        printf("soak: seed %llu, P=%d, %.0f s, fault rate %.2f, allocation "
               "faults %s, scratch %s\n", (unsigned long long)seed, nprocs,
               seconds, fault_rate, HAVE_ALLOC ? "on" : "off (not built)",
               scratch);
        if (chaos_on)
            printf("soak: schedule fuzzer on: seed %llu, delays up to %d us "
                   "at %d%% of the hooks\n", (unsigned long long)chaos_seed,
                   chaos_max_us, chaos_pct);
        fflush(stdout);
    }
    pthread_t wd;
    pthread_create(&wd, NULL, wd_main, NULL);
    pthread_detach(wd);

    int ncap = 1024, ns = 0;
    double *sx = malloc(sizeof(double) * (size_t)ncap);
    double *sy = malloc(sizeof(double) * (size_t)ncap);
    double *sh = malloc(sizeof(double) * (size_t)ncap); /* heap in use */
    double *sa = malloc(sizeof(double) * (size_t)ncap); /* RssAnon */
    double t0 = now(), next_report = t0 + 10;
    static double ex[4096], ey[4096]; /* RSS between epochs */
    int ne = 0;
    int ok = !epoch_begin();
    int in_epoch = 0;
    while (ok) {
        int flags[2] = {rank == 0 && (max_calls ? (int64_t)st.calls >=
                                                       max_calls
                                                 : now() - t0 >= seconds),
                        fatal || st.violations > 100};
        MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX,
                      MPI_COMM_WORLD);
        if (flags[0] || flags[1])
            break;
        if (in_epoch >= epoch_len) {
            double te = now();
            epoch_end();
            /* between epochs no context exists: what stays resident now
               is what the run keeps (leaks), not budgets in use */
            if (ne < 4096) {
                ex[ne] = (double)st.calls;
                ey[ne++] = (double)status_kib("VmRSS:");
            }
            int erc = epoch_begin();
            st.t_setup += now() - te;
            if (erc)
                break;
            in_epoch = 0;
        }
        st.calls++;
        in_epoch++;
        one_call();
        if (st.calls % (uint64_t)rss_every == 0) {
            if (ns == ncap) {
                ncap *= 2;
                sx = realloc(sx, sizeof(double) * (size_t)ncap);
                sy = realloc(sy, sizeof(double) * (size_t)ncap);
                sh = realloc(sh, sizeof(double) * (size_t)ncap);
                sa = realloc(sa, sizeof(double) * (size_t)ncap);
            }
            if (trim)
                malloc_trim(0);
            struct mallinfo2 mi = mallinfo2();
            sx[ns] = (double)st.calls;
            sh[ns] = (double)mi.uordblks / 1024.0; /* not mmapped blocks */
            sa[ns] = (double)status_kib("RssAnon:");
            sy[ns++] = (double)status_kib("VmRSS:");
        }
        if (rank == 0 && now() >= next_report) {
            fprintf(stderr, "soak: %.0f s, %llu calls, %llu failures, %llu "
                    "violations\n", now() - t0, (unsigned long long)st.calls,
                    (unsigned long long)st.failures,
                    (unsigned long long)st.violations);
            next_report = now() + 30;
        }
    }
    double elapsed = now() - t0;
    epoch_end();
    int left = rank == 0 && remove_scratch(); /* a failure: rank 0's */

    /* the report */
    double sl = slope(sx, sy, ns, ns / 2) * 1000.0;
    double slmax = sl;
    MPI_Allreduce(&sl, &slmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double hl = slope(sx, sh, ns, ns / 2) * 1000.0, hlmax = hl;
    MPI_Allreduce(&hl, &hlmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double al = slope(sx, sa, ns, ns / 2) * 1000.0, almax = al;
    MPI_Allreduce(&al, &almax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    uint64_t checks = st.checks, viol = st.violations;
    MPI_Allreduce(MPI_IN_PLACE, &checks, 1, MPI_UINT64_T, MPI_SUM,
                  MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &viol, 1, MPI_UINT64_T, MPI_SUM,
                  MPI_COMM_WORLD);
    /* the schedule fuzzer's hooks and delays, summed over ranks */
    core_chaos_stats cs;
    core_chaos_stats_get(&cs);
    uint64_t ch[2 * CORE_CHAOS_NSITES + 1];
    for (int i = 0; i < CORE_CHAOS_NSITES; i++) {
        ch[i] = cs.hits[i];
        ch[CORE_CHAOS_NSITES + i] = cs.delays[i];
    }
    ch[2 * CORE_CHAOS_NSITES] = cs.delay_us;
    MPI_Allreduce(MPI_IN_PLACE, ch, 2 * CORE_CHAOS_NSITES + 1, MPI_UINT64_T,
                  MPI_SUM, MPI_COMM_WORLD);
    long rss_first = ns ? (long)sy[0] : -1, rss_last = ns ? (long)sy[ns - 1]
                                                          : -1;
    long rl[2] = {rss_first, rss_last};
    MPI_Allreduce(MPI_IN_PLACE, rl, 2, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    /* judged on long runs only: the first calls warm caches up (rings,
       staging blocks, MPI's buffers) */
    double el = slope(ex, ey, ne, ne / 2) * 1000.0, elmax = el;
    MPI_Allreduce(&el, &elmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    /* judged: RSS between epochs (no context alive), second half of the
       run; within an epoch RSS follows the contexts' budgets */
    int rss_judged = !SOAK_SANITIZED && ne >= 8 && st.calls >= 1000 &&
                     rss_limit > 0; /* --rss-limit 0: report only */
    int rss_bad = rss_judged && elmax > rss_limit;
    if (rank == 0) {
        printf("soak: seed %llu, P=%d, %.0f s, %llu epochs (set-up and "
               "teardown %.1f s)\n", (unsigned long long)seed, nprocs,
               elapsed, (unsigned long long)st.epochs, st.t_setup);
        printf("  calls %llu:", (unsigned long long)st.calls);
        for (int o = 0; o < NOPS; o++)
            printf(" %s %llu (%llu failed, %.0f ms each)%s", op_names[o],
                   (unsigned long long)st.by_op[o],
                   (unsigned long long)st.fail_by_op[o],
                   st.by_op[o] ? 1e3 * st.t_op[o] / (double)st.by_op[o] : 0.0,
                   o + 1 < NOPS ? "," : "\n");
        printf("  checks %llu (all ranks)\n", (unsigned long long)checks);
        if (chaos_on) {
            uint64_t th = 0, td = 0;
            for (int i = 0; i < CORE_CHAOS_NSITES; i++) {
                th += ch[i];
                td += ch[CORE_CHAOS_NSITES + i];
            }
            printf("  schedule fuzzer: %llu hooks passed, %llu delays "
                   "injected (%.1f s slept, all ranks); delays by site:",
                   (unsigned long long)th, (unsigned long long)td,
                   (double)ch[2 * CORE_CHAOS_NSITES] * 1e-6);
            for (int i = 0; i < CORE_CHAOS_NSITES; i++)
                if (ch[i])
                    printf(" %s %llu", core_chaos_site_name(i),
                           (unsigned long long)ch[CORE_CHAOS_NSITES + i]);
            printf("\n");
        }
        printf("  faults armed: io %llu, short %llu, alloc %llu; fired: io "
               "%llu, alloc %llu (calls); fired but the call succeeded: "
               "%llu\n", (unsigned long long)st.armed_io,
               (unsigned long long)st.armed_short,
               (unsigned long long)st.armed_alloc,
               (unsigned long long)st.fired_io,
               (unsigned long long)st.fired_alloc,
               (unsigned long long)st.fired_ok);
        printf("  failures seen %llu (calls), meant-invalid calls %llu, "
               "budget refusals %llu; codes over ranks and requests:",
               (unsigned long long)st.failures,
               (unsigned long long)st.invalid_meant,
               (unsigned long long)st.refusals);
        for (int c = 1; c < 20; c++)
            if (st.codes[c])
                printf(" %s %llu", passion_strerror(-c),
                       (unsigned long long)st.codes[c]);
        printf("\n  RSS: %ld KiB first sample, %ld KiB last (max over "
               "ranks); slope %.2f KiB per 1000 calls (%d samples, last "
               "half)\n", rl[0], rl[1], slmax, ns);
        printf("  RSS between epochs (no context alive): slope %.2f KiB "
               "per 1000 calls (%d samples, last half; limit %.0f%s)\n",
               elmax, ne, rss_limit, rss_judged ? "" : ", not judged");
        printf("  anonymous resident memory (RssAnon): slope %.2f KiB per "
               "1000 calls; malloc heap in use (arenas, not mmapped "
               "blocks): %.2f (last half, max over ranks)\n", almax,
               hlmax);
        if (ns >= 2) {
            printf("  rank 0, calls: RSS/RssAnon/heap KiB:");
            for (int i = 0; i < 10; i++) {
                int j = (int)((int64_t)(ns - 1) * i / 9);
                printf(" %.0f: %.0f/%.0f/%.0f", sx[j], sy[j], sa[j], sh[j]);
            }
            printf("\n");
        }
        printf("  violations %llu%s%s\n", (unsigned long long)viol,
               rss_bad ? "; resident memory grows" : "",
               left ? "; its scratch directory left behind" : "");
        printf("soak: %s\n", viol || rss_bad || left ? "FAILED" : "passed");
        fflush(stdout);
    }
    free(sx);
    free(sy);
    free(sh);
    free(sa);
    MPI_Finalize();
    return viol || rss_bad || left ? 1 : 0;
}
