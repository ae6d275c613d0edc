/*
 * options.c - the options of a context: the public opaque handle
 * (passion_options), its typed setters and getter, the "k=v,k=v" list
 * syntax of PASSION_OPTIONS, and the one key table that maps every public
 * key to a field of core_options.
 *
 * Invariants: a core_options reachable from a handle or a context always
 * holds values that passed its key's check (a failing setter changes
 * nothing); every key is spelled once, in the table, as the field's name;
 * in a build without -Dtest_hooks=true the keys the table marks KEY_TEST
 * and the drivers that build lacks (fault: io.c's table says which) are
 * refused, so their fields keep their defaults.
 */
#include "core.h"
#include "names.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Value kinds: integer (range), size (K/M/G suffixes), real (>= 0),
   enumeration (names[i] is the value i for i in lo..hi; a table of
   names.h, NULL-ended, gives hi itself), rank list ("r:r:...", ranks in
   lo..hi, stored as text in a char array of `width` bytes), path (any
   text shorter than `width` bytes, stored the same way). */
enum { K_INT, K_SIZE, K_REAL, K_ENUM, K_RANKS, K_PATH };
/* the kinds stored as text */
#define K_TEXT(kind) ((kind) == K_RANKS || (kind) == K_PATH)

static const char *const engines[] = {"auto", "uring", "thread"};
static const char *const ncformats[] = {"cdf5", "cdf2", "cdf1"};
static const char *const fileformats[] = {"auto", "raw"};
static const char *const planners[] = {"estimate", "measure"};

typedef struct key_def {
    const char *key;
    int kind;
    size_t off;   /* of the field in core_options */
    int width;    /* sizeof the field: 4 (int or enum) or 8 */
    int64_t lo, hi;
    const char *const *names;
    int test; /* KEY_TEST: the key exists only in test builds; else 0 */
} key_def;

/* A key of the test and simulation machinery: set, got or parsed in a
   build without -Dtest_hooks=true it is PASSION_EINVAL, naming the option
   and the build option (the field stays at its default) */
#define KEY_TEST 1

#define F(field) offsetof(core_options, field), \
    (int)sizeof(((core_options *)0)->field)
static const key_def keys[] = {
    {"memory_budget", K_SIZE, F(memory_budget), 1, INT64_MAX, NULL, 0},
    {"driver", K_ENUM, F(driver), 0, -1, core_driver_names, 0},
    {"direct_io", K_INT, F(direct_io), 0, 1, NULL, 0},
    {"verbosity", K_INT, F(verbosity), 0, 3, NULL, 0},
    {"exchange", K_ENUM, F(exchange), 0, -1, core_xchg_names, 0},
    {"radix", K_INT, F(radix), 0, 1 << 30, NULL, 0},
    {"engine", K_ENUM, F(engine), 0, 2, engines, 0},
    {"io_latency", K_REAL, F(io_latency), 0, 0, NULL, 0},
    {"io_bandwidth", K_REAL, F(io_bandwidth), 0, 0, NULL, 0},
    {"io_concurrency", K_INT, F(io_concurrency), 0, 4096, NULL, 0},
    {"msg_alpha", K_REAL, F(msg_alpha), 0, 0, NULL, 0},
    {"msg_beta", K_REAL, F(msg_beta), 0, 0, NULL, 0},
    {"wait_spin", K_REAL, F(wait_spin), 0, 0, NULL, 0},
    {"netcdf_format", K_ENUM, F(netcdf_format), 0, 2, ncformats, 0},
    {"file_format", K_ENUM, F(file_format), 0, 1, fileformats, 0},
    /* the planner (collective/planner/planner.h) */
    {"planner", K_ENUM, F(planner), 0, 1, planners, 0},
    {"wisdom", K_PATH, F(wisdom), 0, 0, NULL, 0},
    {"virtual_node_ranks", K_INT, F(virtual_node_ranks), 0, 1 << 30, NULL, 0},
    /* test builds only: the simulated network (net_sim.c) */
    {"sim_net_latency_us", K_REAL, F(sim_net_latency_us), 0, 0, NULL,
     KEY_TEST},
    {"sim_net_byte_ns", K_REAL, F(sim_net_byte_ns), 0, 0, NULL, KEY_TEST},
    /* aggregators and file domains of the extended two-phase method */
    {"cb_nodes", K_INT, F(cb_nodes), 0, 1 << 30, NULL, 0},
    {"cb_per_node", K_INT, F(cb_per_node), 0, 1 << 30, NULL, 0},
    {"cb_ranks", K_RANKS, F(cb_ranks), 0, 1 << 30, NULL, 0},
    {"stripe_size", K_SIZE, F(stripe_size), 0, 1LL << 30, NULL, 0},
    /* test builds only: the fault driver (drv_fault.c; fault_ranks serves
       both faults) */
    {"fault_fail_at", K_INT, F(fault_fail_at), 0, INT64_MAX, NULL, KEY_TEST},
    {"fault_errno", K_INT, F(fault_errno), 1, 4095, NULL, KEY_TEST},
    {"fault_short", K_INT, F(fault_short), 0, 1, NULL, KEY_TEST},
    {"fault_ranks", K_INT, F(fault_ranks), -1, 1 << 30, NULL, KEY_TEST},
    /* test builds only: allocation failures (alloc.c), any driver */
    {"fault_alloc_at", K_INT, F(fault_alloc_at), 0, INT64_MAX, NULL,
     KEY_TEST},
};
#undef F

void core_options_default(core_options *o)
{
    memset(o, 0, sizeof *o);
    o->memory_budget = 64LL << 20;
    o->driver = PASSION_DRIVER_POSIX;
    o->exchange = PASSION_XCHG_AUTO;
    o->engine = PASSION_ENGINE_AUTO;
    o->planner = 1; /* measure */
    o->fault_errno = EIO;
    o->fault_ranks = -1;
}

/* The highest value of a key: a names table of names.h (hi below lo in
   the key's row) ends at its NULL. */
static int64_t hi_of(const key_def *k)
{
    return k->hi < k->lo && k->names ? core_names_count(k->names) - 1
                                     : k->hi;
}

/* A value this build lacks: a driver io.c's table does not have (only a
   test build's driver can be missing). */
static int absent(const key_def *k, int64_t v)
{
    return k->names == core_driver_names && !core_driver_get((int)v);
}

static int fail(char *detail, size_t dlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *detail, size_t dlen, const char *fmt, ...)
{
    if (detail && dlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, dlen, fmt, ap);
        va_end(ap);
    }
    return PASSION_EINVAL;
}

static const key_def *find(const char *key, char *detail, size_t dlen)
{
    if (!key)
        return fail(detail, dlen, "NULL option key"), NULL;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (strcmp(keys[i].key, key))
            continue;
#ifndef PASSION_TEST_HOOKS
        if (keys[i].test) {
            fail(detail, dlen, "option %s exists only in test builds: "
                 "this library was built without -Dtest_hooks=true", key);
            return NULL;
        }
#endif
        return &keys[i];
    }
    fail(detail, dlen, "unknown option key '%s'", key);
    return NULL;
}

static void store_int(core_options *o, const key_def *k, int64_t v)
{
    char *p = (char *)o + k->off;
    if (k->width == 8) {
        memcpy(p, &v, sizeof v);
    } else {
        int x = (int)v; /* ints and enums (int-sized) */
        memcpy(p, &x, sizeof x);
    }
}

static int64_t load_int(const core_options *o, const key_def *k)
{
    const char *p = (const char *)o + k->off;
    if (k->width == 8) {
        int64_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    int x;
    memcpy(&x, p, sizeof x);
    return x;
}

static int set_int(core_options *o, const key_def *k, int64_t v,
                   char *detail, size_t dlen)
{
    if (k->kind == K_REAL)
        return fail(detail, dlen, "option %s takes a real number", k->key);
    if (k->kind == K_RANKS)
        return fail(detail, dlen, "option %s takes a list of ranks "
                    "\"r:r:...\" as text", k->key);
    if (k->kind == K_PATH)
        return fail(detail, dlen, "option %s takes a file name", k->key);
    if (v < k->lo || v > hi_of(k))
        return fail(detail, dlen,
                    "option %s: %" PRId64 " outside %" PRId64 "..%" PRId64,
                    k->key, v, k->lo, hi_of(k));
    if (absent(k, v))
        return fail(detail, dlen, "option %s: %s exists only in test "
                    "builds: this library was built without "
                    "-Dtest_hooks=true", k->key, k->names[v]);
    store_int(o, k, v);
    return PASSION_OK;
}

static int set_real(core_options *o, const key_def *k, double v,
                    char *detail, size_t dlen)
{
    if (k->kind == K_RANKS)
        return fail(detail, dlen, "option %s takes a list of ranks "
                    "\"r:r:...\" as text", k->key);
    if (k->kind == K_PATH)
        return fail(detail, dlen, "option %s takes a file name", k->key);
    if (k->kind != K_REAL)
        return fail(detail, dlen, "option %s takes an integer%s", k->key,
                    k->kind == K_ENUM ? " or a name" : "");
    if (!isfinite(v) || v < 0)
        return fail(detail, dlen, "option %s: %g is not a finite number "
                    ">= 0", k->key, v);
    memcpy((char *)o + k->off, &v, sizeof v);
    return PASSION_OK;
}

/* Decimal integer with an optional K/M/G (KiB...) suffix for sizes. */
static int parse_i64(const key_def *k, const char *v, int64_t *out,
                     char *detail, size_t dlen)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v)
        return fail(detail, dlen, "option %s: '%s' is not an integer",
                    k->key, v);
    int64_t mul = 1;
    if (k->kind == K_SIZE) {
        switch (*end) {
        case 'k': case 'K': mul = 1LL << 10; end++; break;
        case 'm': case 'M': mul = 1LL << 20; end++; break;
        case 'g': case 'G': mul = 1LL << 30; end++; break;
        default: break;
        }
        if (mul > 1 && (*end == 'i' || *end == 'I'))
            end++;
        if (*end == 'b' || *end == 'B')
            end++;
    }
    if (*end != '\0')
        return fail(detail, dlen, "option %s: trailing '%s' in '%s'", k->key,
                    end, v);
    if (!core_mul(x, mul, out))
        return fail(detail, dlen, "option %s: '%s' overflows 64 bits",
                    k->key, v);
    return PASSION_OK;
}

static int set_text(core_options *o, const key_def *k, const char *v,
                    char *detail, size_t dlen)
{
    if (!v)
        return fail(detail, dlen, "option %s: NULL value", k->key);
    if (k->kind == K_PATH) {
        if (strlen(v) >= (size_t)k->width)
            return fail(detail, dlen, "option %s: longer than %d bytes",
                        k->key, k->width - 1);
        char *dst = (char *)o + k->off;
        memset(dst, 0, (size_t)k->width);
        memcpy(dst, v, strlen(v));
        return PASSION_OK;
    }
    if (k->kind == K_RANKS) {
        /* "" or ranks separated by ':' (',' separates options) */
        if (strlen(v) >= (size_t)k->width)
            return fail(detail, dlen, "option %s: longer than %d bytes",
                        k->key, k->width - 1);
        for (const char *q = v; *q;) {
            char *end;
            errno = 0;
            long long r = strtoll(q, &end, 10);
            if (errno || end == q || (*end && *end != ':') || r < k->lo ||
                r > k->hi || *q == '+' || *q == '-' || *q == ' ')
                return fail(detail, dlen, "option %s: '%s' is not a list of "
                            "ranks r:r:... (0 <= r <= %lld)", k->key, v,
                            (long long)k->hi);
            q = *end ? end + 1 : end;
            if (*end && !*q)
                return fail(detail, dlen, "option %s: '%s' ends in ':'",
                            k->key, v);
        }
        char *dst = (char *)o + k->off;
        memset(dst, 0, (size_t)k->width);
        memcpy(dst, v, strlen(v));
        return PASSION_OK;
    }
    if (k->kind == K_REAL) {
        char *end;
        errno = 0;
        double x = strtod(v, &end);
        if (errno || end == v || *end != '\0')
            return fail(detail, dlen, "option %s: '%s' is not a number",
                        k->key, v);
        return set_real(o, k, x, detail, dlen);
    }
    if (k->kind == K_ENUM) {
        int64_t hi = hi_of(k);
        for (int64_t i = k->lo; i <= hi; i++)
            if (!strcasecmp(v, k->names[i]))
                return set_int(o, k, i, detail, dlen);
        char list[128] = "";
        for (int64_t i = k->lo; i <= hi; i++) {
            if (absent(k, i))
                continue;
            if (list[0])
                strncat(list, "|", sizeof list - strlen(list) - 1);
            strncat(list, k->names[i], sizeof list - strlen(list) - 1);
        }
        return fail(detail, dlen, "option %s: '%s' is not one of %s",
                    k->key, v, list);
    }
    int64_t x = 0;
    int rc = parse_i64(k, v, &x, detail, dlen);
    return rc ? rc : set_int(o, k, x, detail, dlen);
}

int core_options_parse(core_options *o, const char *list, char *detail,
                       size_t dlen)
{
    if (!list)
        return fail(detail, dlen, "NULL option list");
    char *copy = strdup(list);
    if (!copy)
        return PASSION_ENOMEM;
    core_options tmp = *o; /* all or nothing */
    int rc = PASSION_OK;
    char *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t && !rc;
         t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        if (!eq || eq == t) {
            rc = fail(detail, dlen, "'%s' is not key=value", t);
            break;
        }
        *eq = '\0';
        const key_def *k = find(t, detail, dlen);
        rc = k ? set_text(&tmp, k, eq + 1, detail, dlen) : PASSION_EINVAL;
    }
    free(copy);
    if (!rc)
        *o = tmp;
    return rc;
}

int core_options_get(const core_options *o, const char *key, char *buf,
                     size_t len, char *detail, size_t dlen)
{
    const key_def *k = find(key, detail, dlen);
    if (!k)
        return PASSION_EINVAL;
    if (!buf || len == 0)
        return fail(detail, dlen, "no buffer for option %s", key);
    int n;
    if (K_TEXT(k->kind)) {
        n = snprintf(buf, len, "%s", (const char *)o + k->off);
    } else if (k->kind == K_REAL) {
        double v;
        memcpy(&v, (const char *)o + k->off, sizeof v);
        n = snprintf(buf, len, "%.17g", v);
    } else if (k->kind == K_ENUM) {
        int64_t v = load_int(o, k);
        n = snprintf(buf, len, "%s",
                     v >= k->lo && v <= hi_of(k) ? k->names[v] : "?");
    } else {
        n = snprintf(buf, len, "%" PRId64, load_int(o, k));
    }
    if (n < 0 || (size_t)n >= len) {
        buf[0] = '\0';
        if (detail && dlen)
            snprintf(detail, dlen, "option %s: value needs %d bytes", key,
                     n + 1);
        return PASSION_ERANGE;
    }
    return PASSION_OK;
}

/* ------------------------------------------------------- public handle */

int passion_options_create(passion_options **out)
{
    if (!out)
        return PASSION_EINVAL;
    passion_options *o = calloc(1, sizeof *o);
    *out = o;
    if (!o)
        return PASSION_ENOMEM;
    core_options_default(&o->o);
    return PASSION_OK;
}

int passion_options_free(passion_options *o)
{
    free(o);
    return PASSION_OK;
}

#define DET(o) (o)->detail, sizeof (o)->detail

int passion_options_set(passion_options *o, const char *key,
                        const char *value)
{
    if (!o)
        return PASSION_EINVAL;
    o->detail[0] = '\0';
    const key_def *k = find(key, DET(o));
    return k ? set_text(&o->o, k, value, DET(o)) : PASSION_EINVAL;
}

int passion_options_set_int(passion_options *o, const char *key,
                            int64_t value)
{
    if (!o)
        return PASSION_EINVAL;
    o->detail[0] = '\0';
    const key_def *k = find(key, DET(o));
    return k ? set_int(&o->o, k, value, DET(o)) : PASSION_EINVAL;
}

int passion_options_set_double(passion_options *o, const char *key,
                               double value)
{
    if (!o)
        return PASSION_EINVAL;
    o->detail[0] = '\0';
    const key_def *k = find(key, DET(o));
    return k ? set_real(&o->o, k, value, DET(o)) : PASSION_EINVAL;
}

int passion_options_parse(passion_options *o, const char *list)
{
    if (!o)
        return PASSION_EINVAL;
    o->detail[0] = '\0';
    return core_options_parse(&o->o, list, DET(o));
}

int passion_options_get(const passion_options *o, const char *key, char *buf,
                        size_t len)
{
    if (!o)
        return PASSION_EINVAL;
    /* a query: the detail of the last failed call on o stays, unless
       this call fails itself (handles are only ever made by
       passion_options_create, heap and never const, so its reason may
       be recorded) */
    char why[sizeof o->detail] = "";
    int rc = core_options_get(&o->o, key, buf, len, why, sizeof why);
    if (rc)
        memcpy(((passion_options *)o)->detail, why, sizeof why);
    return rc;
}

const char *passion_options_errdetail(const passion_options *o)
{
    return o ? o->detail : "";
}
