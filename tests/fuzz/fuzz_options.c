/*
 * fuzz_options.c - fuzz target for the option strings: one "key=value"
 * (passion_options_set) and comma-separated lists (core_options_parse_list,
 * the parser of PASSION_OPTIONS).
 *
 * Input: the text (cut at a NUL). Properties: no crash or undefined
 * behaviour; a rejected item leaves the options exactly as they were; a
 * list is idempotent (applying it twice gives what applying it once
 * gave); after any accepted input every option is in its valid range
 * (budget >= 1, cost-model numbers finite and >= 0, enumerations known),
 * and every option's value, printed back as text and set again, gives
 * the same options (the round trip of the value syntax).
 */
#include "fuzz.h"

#include "../../passion/core.h"

#include <math.h>

/* -- the only code that knows the options' representation (port here) -- */

typedef passion_options fz_opt;

static void opt_init(fz_opt *o)
{
    memset(o, 0, sizeof *o); /* padding too, for memcmp */
    passion_options_init(o);
}
static int opt_set_kv(fz_opt *o, const char *kv) { return passion_options_set(o, kv); }
static int opt_list(fz_opt *o, const char *l) { return core_options_parse_list(o, l); }
static int opt_same(const fz_opt *a, const fz_opt *b) { return !memcmp(a, b, sizeof *a); }

static const char *const drivers[] = {"posix", "mpiio", "fault"};
static const char *const xchg[] = {"auto", "mpi", "pairwise", "a1",
                                   "index", "fourstage", "fourstage-nb"};
static const char *const engines[] = {"auto", "uring", "thread"};

/* Every key with its value printed as text; 0 at the end of the table. */
static int opt_get(const fz_opt *o, int k, const char **key, char *v,
                   size_t n)
{
    switch (k) {
    case 0: *key = "memory_budget"; snprintf(v, n, "%lld", (long long)o->memory_budget); break;
    case 1: *key = "driver"; snprintf(v, n, "%s", drivers[o->driver]); break;
    case 2: *key = "exchange"; snprintf(v, n, "%s", xchg[o->exchange]); break;
    case 3: *key = "engine"; snprintf(v, n, "%s", engines[o->engine]); break;
    case 4: *key = "io_latency"; snprintf(v, n, "%.17g", o->io_latency); break;
    case 5: *key = "io_bandwidth"; snprintf(v, n, "%.17g", o->io_bandwidth); break;
    case 6: *key = "msg_alpha"; snprintf(v, n, "%.17g", o->msg_alpha); break;
    case 7: *key = "msg_beta"; snprintf(v, n, "%.17g", o->msg_beta); break;
    case 8: *key = "direct_io"; snprintf(v, n, "%d", o->direct_io); break;
    case 9: *key = "verbosity"; snprintf(v, n, "%d", o->verbosity); break;
    case 10: *key = "radix"; snprintf(v, n, "%d", o->radix); break;
    case 11: *key = "io_concurrency"; snprintf(v, n, "%d", o->io_concurrency); break;
    case 12: *key = "fault_errno"; snprintf(v, n, "%d", o->fault_errno); break;
    case 13: *key = "fault_short"; snprintf(v, n, "%d", o->fault_short); break;
    case 14: *key = "fault_ranks"; snprintf(v, n, "%d", o->fault_ranks); break;
    case 15: *key = "fault_fail_at"; snprintf(v, n, "%lld", (long long)o->fault_fail_at); break;
    default: return 0;
    }
    return 1;
}

static void check_ranges(const fz_opt *o)
{
    FZ_CHECK(o->memory_budget >= 1, "budget %lld", (long long)o->memory_budget);
    FZ_CHECK(o->driver >= 0 && o->driver < 3, "driver %d", o->driver);
    FZ_CHECK(o->exchange >= 0 && o->exchange < 7, "exchange %d", o->exchange);
    FZ_CHECK(o->engine >= 0 && o->engine < 3, "engine %d", o->engine);
    double d[] = {o->io_latency, o->io_bandwidth, o->msg_alpha, o->msg_beta};
    for (int i = 0; i < 4; i++)
        FZ_CHECK(isfinite(d[i]) && d[i] >= 0, "cost-model option %d = %g",
                 i, d[i]);
    FZ_CHECK(o->radix >= 0 && o->io_concurrency >= 0 &&
                 o->fault_fail_at >= 0 && o->fault_ranks >= -1,
             "integer option out of range");
}

/* ------------------------------------------------------------------------ */

static void check_round_trip(const fz_opt *o)
{
    check_ranges(o);
    const char *key;
    char v[64], kv[128];
    for (int k = 0; opt_get(o, k, &key, v, sizeof v); k++) {
        fz_opt c;
        memcpy(&c, o, sizeof c);
        snprintf(kv, sizeof kv, "%s=%s", key, v);
        int rc = opt_set_kv(&c, kv);
        FZ_CHECK(rc == 0, "'%s' printed back is refused (%d)", kv, rc);
        FZ_CHECK(opt_same(&c, o), "'%s' printed back sets another value",
                 kv);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fz_string(data, size);
    FZ_CHECK(s, "out of memory");
    fz_opt init, o, twice;
    opt_init(&init);

    /* the whole input as one key=value */
    memcpy(&o, &init, sizeof o);
    int rc = opt_set_kv(&o, s);
    FZ_CHECK(rc <= 0, "return code %d", rc);
    if (rc)
        FZ_CHECK(opt_same(&o, &init), "a refused '%s' changed the options",
                 s);
    else
        check_round_trip(&o);

    /* the input as a list: a refused item changes nothing of its own */
    memcpy(&o, &init, sizeof o);
    rc = opt_list(&o, s);
    FZ_CHECK(rc <= 0, "return code %d", rc);
    if (!rc) {
        memcpy(&twice, &o, sizeof o);
        FZ_CHECK(opt_list(&twice, s) == 0, "a list accepted once is refused");
        FZ_CHECK(opt_same(&twice, &o), "list not idempotent");
    }
    check_round_trip(&o);
    free(s);
    return 0;
}
