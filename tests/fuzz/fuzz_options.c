/*
 * fuzz_options.c - fuzz target for the option strings: comma-separated
 * lists "k=v,k=v" (core_options_parse, the parser behind
 * passion_options_parse and PASSION_OPTIONS) and one key with a value
 * (passion_options_set on a handle).
 *
 * Input: the text (cut at a NUL); for the single setter it is split at
 * its first '=' into key and value. Properties: no crash or undefined
 * behaviour; a refused list or value changes nothing (all or nothing) and
 * says why; an accepted list is idempotent; after anything accepted every
 * option is in its valid range (budget >= 1, cost-model numbers finite
 * and >= 0, enumerations known), and every option's value read back as
 * text (core_options_get) and set again gives the same options (the round
 * trip of the value syntax).
 */
#include "fuzz.h"

#include "../../passion/core.h"

#include <math.h>

static const char *const keys[] = {
    "memory_budget", "driver", "direct_io", "verbosity", "exchange",
    "radix", "engine", "io_latency", "io_bandwidth", "io_concurrency",
    "msg_alpha", "msg_beta", "wait_spin", "fault_fail_at", "fault_errno", "fault_short",
    "fault_ranks"};
enum { NKEYS = sizeof keys / sizeof keys[0] };

static void get(const core_options *o, int k, char *v, size_t n)
{
    char det[256];
    int rc = core_options_get(o, keys[k], v, n, det, sizeof det);
    FZ_CHECK(rc == 0, "get %s: %d (%s)", keys[k], rc, det);
}

/* Equal field by field (padding bytes do not matter; reals bit for bit). */
static int same(const core_options *a, const core_options *b)
{
#define EQ(f) (!memcmp(&a->f, &b->f, sizeof a->f))
    return EQ(memory_budget) && EQ(driver) && EQ(direct_io) &&
           EQ(verbosity) && EQ(exchange) && EQ(radix) && EQ(engine) &&
           EQ(io_latency) && EQ(io_bandwidth) && EQ(io_concurrency) &&
           EQ(msg_alpha) && EQ(msg_beta) && EQ(wait_spin) && EQ(fault_fail_at) &&
           EQ(fault_errno) && EQ(fault_short) && EQ(fault_ranks);
#undef EQ
}

static void check_ranges(const core_options *o)
{
    FZ_CHECK(o->memory_budget >= 1, "budget %lld",
             (long long)o->memory_budget);
    FZ_CHECK((int)o->driver >= 0 && (int)o->driver <= 2, "driver %d",
             (int)o->driver);
    FZ_CHECK((int)o->exchange >= 0 && (int)o->exchange <= 6, "exchange %d",
             (int)o->exchange);
    FZ_CHECK((int)o->engine >= 0 && (int)o->engine <= 2, "engine %d",
             (int)o->engine);
    double d[] = {o->io_latency, o->io_bandwidth, o->msg_alpha, o->msg_beta,
                  o->wait_spin};
    for (int i = 0; i < 5; i++)
        FZ_CHECK(isfinite(d[i]) && d[i] >= 0, "cost-model option %d = %g",
                 i, d[i]);
    FZ_CHECK(o->radix >= 0 && o->io_concurrency >= 0 &&
                 o->fault_fail_at >= 0 && o->fault_ranks >= -1 &&
                 o->verbosity >= 0 && o->fault_errno >= 1,
             "integer option out of range");
}

/* Every value printed back and set again (as a list item and through the
   handle) leaves the options as they were. */
static void check_round_trip(const core_options *o, passion_options *h)
{
    check_ranges(o);
    char v[64], kv[128], det[256];
    for (int k = 0; k < NKEYS; k++) {
        get(o, k, v, sizeof v);
        core_options c = *o;
        snprintf(kv, sizeof kv, "%s=%s", keys[k], v);
        int rc = core_options_parse(&c, kv, det, sizeof det);
        FZ_CHECK(rc == 0, "'%s' printed back is refused: %s", kv, det);
        FZ_CHECK(same(&c, o), "'%s' printed back sets another value", kv);
        h->o = *o;
        rc = passion_options_set(h, keys[k], v);
        FZ_CHECK(rc == 0 && same(&h->o, o),
                 "passion_options_set(%s, '%s'): %d", keys[k], v, rc);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fz_string(data, size), det[256];
    passion_options *h = NULL;
    FZ_CHECK(s && passion_options_create(&h) == 0, "out of memory");
    core_options init, o, twice;
    core_options_default(&init);

    /* the input as a list: all or nothing */
    o = init;
    det[0] = '\0';
    int rc = core_options_parse(&o, s, det, sizeof det);
    FZ_CHECK(rc <= 0, "return code %d", rc);
    if (rc) {
        FZ_CHECK(rc == PASSION_ENOMEM || det[0], "refused without a reason");
        FZ_CHECK(same(&o, &init), "a refused list changed the options");
    } else {
        twice = o;
        FZ_CHECK(core_options_parse(&twice, s, det, sizeof det) == 0,
                 "a list accepted once is refused: %s", det);
        FZ_CHECK(same(&twice, &o), "list not idempotent");
        check_round_trip(&o, h);
    }

    /* key '=' value through the handle's setter */
    char *eq = strchr(s, '=');
    if (eq) {
        *eq = '\0';
        h->o = init;
        rc = passion_options_set(h, s, eq + 1);
        FZ_CHECK(rc <= 0, "return code %d", rc);
        if (rc) {
            FZ_CHECK(rc == PASSION_ENOMEM || passion_options_errdetail(h)[0],
                     "refused without a reason");
            FZ_CHECK(same(&h->o, &init), "a refused value changed options");
        } else {
            o = h->o;
            check_round_trip(&o, h);
        }
    }
    passion_options_free(h);
    free(s);
    return 0;
}
