/*
 * The layer's control and bookkeeping: the PASSION_MPIIO setting (off, on,
 * report; read once), the info keys passion_enable, passion_memory_budget
 * and passion_method, the thread-local
 * re-entrance depth, the table of per-file states and the report printed
 * at MPI_Finalize.
 *
 * Invariants: a table entry is found only by an open handle (a closed
 * entry keeps its counts for the report, with fh MPI_FILE_NULL); the
 * first pass-through reason of each kind of call is kept, later ones
 * only counted.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpiio.h"

#define MPIIO_TABLE 256

enum { MODE_UNSET = -1, MODE_OFF = 0, MODE_ON = 1, MODE_REPORT = 2 };

static int mpiio_mode_value = MODE_UNSET;
static _Thread_local int mpiio_depth;
static mpiio_file mpiio_table[MPIIO_TABLE];
static pthread_mutex_t mpiio_lock = PTHREAD_MUTEX_INITIALIZER;

static int mpiio_mode(void)
{
    pthread_mutex_lock(&mpiio_lock);
    if (mpiio_mode_value == MODE_UNSET) {
        const char *v = getenv("PASSION_MPIIO");
        mpiio_mode_value = MODE_ON;
        if (v && (!strcmp(v, "off") || !strcmp(v, "0")))
            mpiio_mode_value = MODE_OFF;
        else if (v && !strcmp(v, "report"))
            mpiio_mode_value = MODE_REPORT;
    }
    int m = mpiio_mode_value;
    pthread_mutex_unlock(&mpiio_lock);
    return m;
}

int mpiio_mode_on(void) { return mpiio_mode() != MODE_OFF; }

/* passion_enable=true/false in info; anything else keeps dflt. */
int mpiio_info_enabled(MPI_Info info, int dflt)
{
    char v[16];
    int flag = 0;
    if (info == MPI_INFO_NULL)
        return dflt;
    if (MPI_Info_get(info, "passion_enable", (int)sizeof v - 1, v, &flag) !=
            MPI_SUCCESS || !flag)
        return dflt;
    if (!strcmp(v, "false") || !strcmp(v, "0"))
        return 0;
    if (!strcmp(v, "true") || !strcmp(v, "1"))
        return 1;
    return dflt;
}

/* passion's section methods by the names its options and tools use. */
static const char *const mpiio_method_names[] = {
    [PASSION_METHOD_AUTO] = "auto", [PASSION_METHOD_DIRECT] = "direct",
    [PASSION_METHOD_SIEVE] = "sieve",
    [PASSION_METHOD_ETP_STATIC] = "etp-static",
    [PASSION_METHOD_ETP_DYNAMIC] = "etp-dynamic",
};
#define MPIIO_METHODS (int)(sizeof mpiio_method_names / sizeof(char *))

/* passion_memory_budget as bytes (passion's option syntax: a count with
 * an optional K, M or G); 0 when invalid. */
static int64_t budget_parse(const char *v)
{
    passion_options *o = NULL;
    char buf[32] = "";
    int64_t b = 0;
    if (passion_options_create(&o))
        return 0;
    if (!passion_options_set(o, "memory_budget", v) &&
        !passion_options_get(o, "memory_budget", buf, sizeof buf))
        b = strtoll(buf, NULL, 10);
    passion_options_free(o);
    return b > 0 ? b : 0;
}

/* The layer's info keys into st. A value the layer does not understand
 * is ignored, as MPI ignores info it does not know, and named in the
 * report. */
void mpiio_info_apply(mpiio_file *st, MPI_Info info)
{
    char v[64], why[MPIIO_REASON];
    int flag = 0;
    if (info == MPI_INFO_NULL)
        return;
    st->enabled = mpiio_info_enabled(info, st->enabled);
    if (MPI_Info_get(info, "passion_enable", (int)sizeof v - 1, v, &flag) ==
            MPI_SUCCESS && flag && strcmp(v, "true") && strcmp(v, "false") &&
        strcmp(v, "1") && strcmp(v, "0")) {
        snprintf(why, sizeof why, "passion_enable=%s ignored", v);
        mpiio_pass(st, MPIIO_INFO, why);
    }
    if (MPI_Info_get(info, "passion_memory_budget", (int)sizeof v - 1, v,
                     &flag) == MPI_SUCCESS && flag) {
        int64_t b = budget_parse(v);
        if (b > 0)
            st->budget = b;
        else {
            snprintf(why, sizeof why, "passion_memory_budget=%s ignored", v);
            mpiio_pass(st, MPIIO_INFO, why);
        }
    }
    if (MPI_Info_get(info, "passion_method", (int)sizeof v - 1, v, &flag) ==
            MPI_SUCCESS && flag) {
        int m = 0;
        while (m < MPIIO_METHODS && strcmp(v, mpiio_method_names[m]))
            m++;
        if (m < MPIIO_METHODS)
            st->method = (passion_method)m;
        else {
            snprintf(why, sizeof why, "passion_method=%s ignored", v);
            mpiio_pass(st, MPIIO_INFO, why);
        }
    }
}

/* The layer's keys in effect for st, added to info (MPI_File_get_info). */
void mpiio_info_add(const mpiio_file *st, MPI_Info info)
{
    char v[32];
    MPI_Info_set(info, "passion_enable", st->enabled ? "true" : "false");
    if (st->budget > 0) {
        snprintf(v, sizeof v, "%lld", (long long)st->budget);
        MPI_Info_set(info, "passion_memory_budget", v);
    }
    if ((int)st->method >= 0 && (int)st->method < MPIIO_METHODS)
        MPI_Info_set(info, "passion_method", mpiio_method_names[st->method]);
}

int mpiio_inside(void) { return mpiio_depth > 0; }
void mpiio_enter(void) { mpiio_depth++; }
void mpiio_leave(void) { mpiio_depth--; }

mpiio_file *mpiio_lookup(MPI_File fh)
{
    mpiio_file *found = NULL;
    if (fh == MPI_FILE_NULL)
        return NULL;
    pthread_mutex_lock(&mpiio_lock);
    for (int i = 0; i < MPIIO_TABLE && !found; i++)
        if (mpiio_table[i].in_use && mpiio_table[i].fh == fh)
            found = &mpiio_table[i];
    pthread_mutex_unlock(&mpiio_lock);
    return found;
}

/* A zeroed entry for fh; NULL when the table is full (then the file is
 * simply not served: every call on it passes through). */
mpiio_file *mpiio_add(MPI_File fh)
{
    mpiio_file *st = NULL;
    pthread_mutex_lock(&mpiio_lock);
    for (int i = 0; i < MPIIO_TABLE && !st; i++)
        if (!mpiio_table[i].in_use)
            st = &mpiio_table[i];
    if (!st && mpiio_mode_value != MODE_REPORT)
        for (int i = 0; i < MPIIO_TABLE && !st; i++)
            if (mpiio_table[i].fh == MPI_FILE_NULL)
                st = &mpiio_table[i]; /* reuse a closed entry */
    if (st) {
        memset(st, 0, sizeof *st);
        st->in_use = 1;
        st->fh = fh;
        st->comm = MPI_COMM_NULL;
    }
    pthread_mutex_unlock(&mpiio_lock);
    return st;
}

static const char *const mpiio_kind_names[MPIIO_KINDS] = {
    [MPIIO_READ] = "read", [MPIIO_WRITE] = "write",
    [MPIIO_READ_AT] = "read_at", [MPIIO_WRITE_AT] = "write_at",
    [MPIIO_READ_ALL] = "read_all", [MPIIO_WRITE_ALL] = "write_all",
    [MPIIO_READ_AT_ALL] = "read_at_all",
    [MPIIO_WRITE_AT_ALL] = "write_at_all", [MPIIO_SET_VIEW] = "set_view",
    [MPIIO_INFO] = "info",
};

const char *mpiio_kind_name(mpiio_kind kind) { return mpiio_kind_names[kind]; }

/* Count a pass-through (a set_view that is not served, an info value
 * ignored, count no call). */
void mpiio_pass(mpiio_file *st, mpiio_kind kind, const char *why)
{
    if (!st)
        return;
    if (kind != MPIIO_SET_VIEW && kind != MPIIO_INFO)
        st->passed++;
    if (!st->reason[kind][0])
        snprintf(st->reason[kind], MPIIO_REASON, "%s", why);
}

void mpiio_report(void)
{
    int rank = 0;
    if (mpiio_mode() != MODE_REPORT)
        return;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    pthread_mutex_lock(&mpiio_lock);
    for (int i = 0; i < MPIIO_TABLE; i++) {
        const mpiio_file *st = &mpiio_table[i];
        if (!st->in_use)
            continue;
        fprintf(stderr,
                "passion_mpiio: rank %d file %s: served %lld, passed "
                "through %lld\n",
                rank, st->name, st->served, st->passed);
        for (int k = 0; k < MPIIO_KINDS; k++)
            if (st->reason[k][0])
                fprintf(stderr, "passion_mpiio: rank %d file %s:   %s "
                        "passed through: %s\n", rank, st->name,
                        mpiio_kind_names[k], st->reason[k]);
    }
    pthread_mutex_unlock(&mpiio_lock);
}
