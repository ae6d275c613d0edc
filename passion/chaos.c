/*
 * chaos.c - the schedule fuzzer's hooks (chaos.h).
 *
 * A hook that fires draws one of three delays: a yield of the processor
 * (the other rank or thread on the same core runs first), a short sleep
 * (1-100 us: about one system call or one message on the node) or, one
 * time in eight, a long one (up to the configured maximum: a descheduled
 * rank). Mixing the scales is what makes rare orders common: short delays
 * reorder neighbouring steps, long ones let another rank run a whole phase
 * in between.
 *
 * Invariants: counters only grow (atomics, any thread); the configuration
 * is read once from the environment before the first hook unless
 * core_chaos_config() set it; a hook with the fuzzer off costs one load.
 * Compiled only into test builds (-Dtest_hooks=true: passion/meson.build).
 */
#include "core.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const site_names[CORE_CHAOS_NSITES] = {
#define CORE_CHAOS_NAME(id, name) name,
    CORE_CHAOS_SITES(CORE_CHAOS_NAME)
#undef CORE_CHAOS_NAME
};

const char *core_chaos_site_name(int site)
{
    return site >= 0 && site < CORE_CHAOS_NSITES ? site_names[site] : "?";
}

static _Atomic int chaos_pct;        /* 0: off */
static _Atomic int chaos_max_us = 2000;
static _Atomic uint64_t chaos_seed;
static _Atomic uint64_t chaos_gen;   /* bumped by each configuration */
static _Atomic uint64_t thread_seq;
static _Atomic uint64_t hits[CORE_CHAOS_NSITES];
static _Atomic uint64_t delays[CORE_CHAOS_NSITES];
static _Atomic uint64_t slept_us;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static _Atomic int configured;      /* core_chaos_config ran: env ignored */

static _Thread_local uint64_t tl_state;
static _Thread_local uint64_t tl_gen;

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* the rank as the launcher exports it (no MPI call: hooks run on worker
   threads too) */
static uint64_t env_rank(void)
{
    static const char *const vars[] = {"PMI_RANK", "OMPI_COMM_WORLD_RANK",
                                       "PMIX_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return strtoull(v, NULL, 10);
    }
    return 0;
}

static void env_read(void)
{
    const char *v = getenv("PASSION_CHAOS");
    if (!v || !*v || atomic_load(&configured))
        return;
    char *end;
    uint64_t seed = strtoull(v, &end, 10);
    int max_us = 2000, pct = 50;
    if (*end == ':')
        max_us = (int)strtol(end + 1, &end, 10);
    if (*end == ':')
        pct = (int)strtol(end + 1, &end, 10);
    if (atomic_load(&configured))
        return;
    core_chaos_config(seed, max_us, pct);
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

void core_chaos_point(enum core_chaos_site site)
{
    pthread_once(&env_once, env_read);
    int pct = atomic_load_explicit(&chaos_pct, memory_order_relaxed);
    if (pct <= 0)
        return;
    atomic_fetch_add_explicit(&hits[site], 1, memory_order_relaxed);
    uint64_t gen = atomic_load(&chaos_gen);
    if (tl_gen != gen) { /* this thread's first hook since the config */
        tl_gen = gen;
        tl_state = atomic_load(&chaos_seed) ^ (env_rank() << 40) ^
                   (atomic_fetch_add(&thread_seq, 1) << 20);
        splitmix(&tl_state);
    }
    uint64_t r = splitmix(&tl_state);
    if ((int)(r % 100) >= pct)
        return;
    atomic_fetch_add_explicit(&delays[site], 1, memory_order_relaxed);
    int max_us = atomic_load_explicit(&chaos_max_us, memory_order_relaxed);
    unsigned kind = (unsigned)(r >> 8) & 7;
    long us = 0;
    if (kind < 3 || max_us <= 0) {
        sched_yield();
        return;
    }
    uint64_t u = r >> 16;
    if (kind < 7 || max_us <= 100)
        us = 1 + (long)(u % (uint64_t)(max_us < 100 ? max_us : 100));
    else
        us = 100 + (long)(u % (uint64_t)(max_us - 99));
    atomic_fetch_add_explicit(&slept_us, (uint64_t)us, memory_order_relaxed);
    sleep_us(us);
}

int core_chaos_built(void)
{
    return 1;
}

int core_chaos_config(uint64_t seed, int max_us, int pct)
{
    atomic_store(&configured, 1);
    atomic_store(&chaos_seed, seed);
    atomic_store(&chaos_max_us, max_us < 0 ? 0 : max_us);
    atomic_fetch_add(&chaos_gen, 1);
    atomic_store(&chaos_pct, pct < 0 ? 0 : pct > 100 ? 100 : pct);
    return PASSION_OK;
}

void core_chaos_stats_get(core_chaos_stats *out)
{
    pthread_once(&env_once, env_read);
    memset(out, 0, sizeof *out);
    for (int i = 0; i < CORE_CHAOS_NSITES; i++) {
        out->hits[i] = atomic_load(&hits[i]);
        out->delays[i] = atomic_load(&delays[i]);
    }
    out->delay_us = atomic_load(&slept_us);
    out->seed = atomic_load(&chaos_seed);
    out->max_us = atomic_load(&chaos_max_us);
    out->pct = atomic_load(&chaos_pct);
    out->on = out->pct > 0;
}

