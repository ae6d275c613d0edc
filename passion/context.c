/*
 * context.c - the passion context: options, communicator, counters, the
 * last-error detail and staging-memory accounting.
 *
 * Invariant: a context always holds a private duplicate of the user's
 * communicator, so passion's messages never match the user's.
 */
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- context */

/* the detail of this thread's last passion_init, "" when it succeeded
   (passion_ctx_errdetail(NULL): a failed init leaves no context) */
static _Thread_local char init_detail[CORE_DETAIL_MAX];

static int init_fail(int rc, const char *detail)
{
    snprintf(init_detail, sizeof init_detail, "%s", detail);
    return rc;
}

/* the value of an environment variable that holds a whole integer, else
   -1 */
static long env_int(const char *name)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return -1;
    long n = strtol(v, &end, 10);
    return *end || n < 0 ? -1 : n;
}

/*
 * A launcher of another MPI: it started several processes (its
 * environment says how many, or that this one is not the first), and the
 * MPI this passion was built with, unable to talk to it, made each of them
 * a job of one rank: every process would run the whole job alone, and
 * every call would succeed. Judged on MPI_COMM_WORLD, not on comm (a
 * context on MPI_COMM_SELF or on part of a rightly launched job is fine),
 * never in a spawned child (its world is the spawn's), and not where the
 * variable of this MPI's own launcher says the job has one process (a
 * launch nested in another launcher's job inherits that job's
 * variables). Local: the caller agrees the outcome.
 */
static int launcher_check(passion_ctx *ctx)
{
    int world = 1;
    MPI_Comm parent = MPI_COMM_NULL;
    if (MPI_Comm_size(MPI_COMM_WORLD, &world) != MPI_SUCCESS || world != 1)
        return PASSION_OK;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        return PASSION_OK;
    const char *build = passion_mpi_build();
    const int mpich = !strncmp(build, "MPICH", 5),
              ompi = !strncmp(build, "Open MPI", 8);
    const char *own = mpich ? "PMI_SIZE" : ompi ? "OMPI_COMM_WORLD_SIZE" : NULL;
    if (own && env_int(own) == 1)
        return PASSION_OK;
    /* sizes first (above 1), then ranks (above 0: PMIx exports no size) */
#define CTX_PMI "a PMI launcher such as MPICH's mpiexec or Slurm's srun"
    static const struct {
        const char *var, *launcher;
        int size;
    } ev[] = {
        {"OMPI_COMM_WORLD_SIZE", "Open MPI's launcher", 1},
        {"PMI_SIZE", CTX_PMI, 1},
        {"OMPI_COMM_WORLD_RANK", "Open MPI's launcher", 0},
        {"PMI_RANK", CTX_PMI, 0},
        {"PMIX_RANK", "a PMIx launcher", 0},
    };
    for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++) {
        long n = env_int(ev[i].var);
        if (n > (ev[i].size ? 1 : 0))
            return core_err(
                ctx, PASSION_EINVAL,
                "this passion was built with %s but started by %s "
                "(%s=%ld) as jobs of 1 rank each (MPI_COMM_WORLD has 1 "
                "rank): start it with %s",
                build, ev[i].launcher, ev[i].var, n,
                mpich  ? "mpiexec.mpich"
                : ompi ? "mpiexec.openmpi"
                       : "the launcher of the MPI it was built with");
    }
    return PASSION_OK;
}

/*
 * passion_init on a rank that could not allocate its context: it takes
 * part in the first agreement the other ranks make (init_agree's
 * core_same_all: the same reduction, four values), as a context of its
 * own on the stack, so that no rank hangs (this rank once reduced a
 * signed key against the others' unsigned one and then skipped their
 * broadcast: a hang); frees dup and returns the agreed code.
 */
static int init_without_ctx(MPI_Comm dup, int rank, int size)
{
    passion_ctx tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.comm = dup;
    tmp.rank = rank;
    tmp.size = size;
    core_options_default(&tmp.opt);
    char none = 0;
    int kept = 0;
    int rc = core_same_all(&tmp, core_err(&tmp, PASSION_ENOMEM,
                                          "allocating the context"),
                           &none, 1, "options", &kept);
    MPI_Comm_free(&dup);
    return init_fail(rc, tmp.detail);
}

/* passion_init's local steps on the new context (rc: the outcome so far,
   a failure of MPI_Comm_set_errhandler): the launcher, the options of
   PASSION_OPTIONS, the virtual node size, the aggregators named, the node
   table. Local: the caller agrees the outcome. */
static int init_local(passion_ctx *ctx, int rc)
{
    int size = ctx->size;
    if (rc)
        core_err(ctx, rc, "MPI_Comm_set_errhandler");
    if (!rc)
        rc = launcher_check(ctx);
    const char *env = getenv("PASSION_OPTIONS");
    if (!rc && env && *env) {
        char why[256] = "";
        rc = core_options_parse(&ctx->opt, env, why, sizeof why);
        if (rc)
            core_err(ctx, rc, "environment variable PASSION_OPTIONS: %s",
                     why);
    }
    ctx->node_comm = ctx->leader_comm = MPI_COMM_NULL;
    if (!rc) {
        char why[256] = "";
        int k = core_nodes_wanted(&ctx->opt, why, sizeof why);
        if (k < 0)
            rc = core_err(ctx, PASSION_EINVAL, "%s", why);
        else
            ctx->opt.virtual_node_ranks = k;
    }
    /* the aggregators named must be ranks of comm */
    for (const char *q = ctx->opt.cb_ranks; !rc && *q;) {
        char *end;
        long r = strtol(q, &end, 10);
        if (r >= size)
            rc = core_err(ctx, PASSION_EINVAL,
                          "option cb_ranks: rank %ld of %d ranks", r, size);
        q = *end ? end + 1 : end;
    }
    /* the node of every rank (not an allocation fault_alloc_at counts) */
    if (!rc && !(ctx->node_of = core_malloc(NULL, (size_t)size * sizeof(int))))
        rc = core_err(ctx, PASSION_ENOMEM, "the node table of %d ranks",
                      size);
    return rc;
}

/*
 * passion_init's first agreement (collective): the options that shape the
 * nodes, the simulated network, the exchange algorithm and the two-phase
 * method's aggregators and file domains must be the same everywhere
 * (agreed with the outcome rc, one reduction, in which *kept, 1 when this
 * rank has the host known, becomes 1 only if every rank has it); then the
 * nodes (core_nodes_init, by the known host when kept). The agreed code.
 */
static int init_agree(passion_ctx *ctx, int rc, const core_host *known,
                      int *kept)
{
    struct {
        int k, cb_nodes, cb_per_node, exchange, planner, wisdom;
        double lat, byte;
        int64_t stripe;
        char cb_ranks[CORE_CB_RANKS_MAX];
    } same;
    memset(&same, 0, sizeof same);
    same.k = ctx->opt.virtual_node_ranks;
    same.lat = ctx->opt.sim_net_latency_us;
    same.byte = ctx->opt.sim_net_byte_ns;
    same.cb_nodes = ctx->opt.cb_nodes;
    same.cb_per_node = ctx->opt.cb_per_node;
    /* the exchange's agreement takes its path by this option (by
       nodes for a fixed node-aware algorithm) without asking */
    same.exchange = ctx->opt.exchange;
    same.stripe = ctx->opt.stripe_size;
    /* the planner decides with the ranks alike */
    same.planner = ctx->opt.planner;
    /* a wisdom file or none, on every rank (rank 0's is read) */
    same.wisdom = ctx->opt.wisdom[0] != '\0';
    memcpy(same.cb_ranks, ctx->opt.cb_ranks, sizeof same.cb_ranks);
    rc = core_same_all(ctx, rc, &same, sizeof same,
                       "virtual_node_ranks, sim_net_*, cb_*, stripe_size, "
                       "exchange or planner options", kept);
    if (!rc)
        rc = core_agree(ctx, core_nodes_init(ctx, *kept ? known : NULL));
    return rc;
}

int passion_init(MPI_Comm comm, const passion_options *opt, passion_ctx **out)
{
    init_detail[0] = '\0';
    if (!out)
        return init_fail(PASSION_EINVAL, "passion_init: NULL ctx pointer");
    *out = NULL;
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited || comm == MPI_COMM_NULL)
        return init_fail(PASSION_ESTATE,
                         !inited ? "passion_init: MPI is not initialised"
                                 : "passion_init: comm is MPI_COMM_NULL");
    /* dup first: it is collective, and every rank must reach it */
    MPI_Comm dup;
    if (MPI_Comm_dup(comm, &dup) != MPI_SUCCESS)
        return init_fail(PASSION_EMPI, "passion_init: MPI_Comm_dup failed");
    /* MPI errors on passion's communicator come back as codes
       (PASSION_EMPI) instead of aborting the job */
    int rc = MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN) == MPI_SUCCESS
                 ? PASSION_OK
                 : PASSION_EMPI;
    int rank = 0, size = 1;
    MPI_Comm_rank(dup, &rank);
    MPI_Comm_size(dup, &size);
#ifdef PASSION_TEST_HOOKS
    /* the context is the first allocation that fault_alloc_at counts */
    int fault = opt && opt->o.fault_alloc_at == 1 &&
                (opt->o.fault_ranks < 0 || opt->o.fault_ranks == rank);
#else
    const int fault = 0; /* no fault injection outside test builds */
#endif
    passion_ctx *ctx = fault ? NULL : calloc(1, sizeof *ctx);
    if (!ctx)
        return init_without_ctx(dup, rank, size);
    ctx->comm = dup;
    ctx->rank = rank;
    ctx->size = size;
    if (opt)
        ctx->opt = opt->o; /* valid: every setter checks */
    else
        core_options_default(&ctx->opt);
#ifdef PASSION_TEST_HOOKS
    ctx->fault_allocs = 1; /* the context */
#endif
    rc = init_local(ctx, rc);
    /* the host kept on comm by an earlier context (net.c): used only
       when every rank has it (agreed in the same reduction) */
    core_host host;
    int kept = core_host_kept(comm, &host);
    rc = init_agree(ctx, rc, &host, &kept);
    if (rc) {
        init_fail(rc, ctx->detail);
        core_nodes_free(ctx);
        MPI_Comm_free(&ctx->comm);
        free(ctx);
        return rc;
    }
    /* the host's ranks and processors, then the waits' spin time
       (collective; the options are valid now) */
    core_host_count(ctx, kept ? &host : NULL); /* ctx->cpu_share */
    core_wait_policy(ctx);
    if (!kept)
        core_host_keep(comm, &ctx->host);
    *out = ctx;
    return PASSION_OK;
}

/* a per-thread token: its address names the thread */
static _Thread_local char thread_token;

int core_call_begin(passion_ctx *ctx)
{
    if (!ctx)
        return PASSION_OK;
    void *me = &thread_token, *owner = NULL;
    if (__atomic_compare_exchange_n(&ctx->busy_owner, &owner, me, 0,
                                    __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
        ctx->busy_depth = 1;
        return PASSION_OK;
    }
    if (owner == me) { /* a call made by a call of this thread */
        ctx->busy_depth++;
        return PASSION_OK;
    }
    return PASSION_ESTATE;
}

void core_call_end(passion_ctx *ctx)
{
    if (ctx && --ctx->busy_depth == 0)
        __atomic_store_n(&ctx->busy_owner, NULL, __ATOMIC_RELEASE);
}

int passion_finalize(passion_ctx *ctx)
{
    if (!ctx)
        return PASSION_OK;
    int rc = core_call_begin(ctx);
    if (rc)
        return rc; /* another thread's call runs on ctx */
    if (ctx->live_arrays > 0)
        rc = core_err(ctx, PASSION_ESTATE,
                      "passion_finalize: %lld array(s) and %lld open "
                      "file(s) of this context still exist; free and close "
                      "them first", (long long)ctx->live_arrays,
                      (long long)ctx->live_files);
    rc = core_agree(ctx, rc);
    if (rc == PASSION_ESTATE) {
        core_call_end(ctx);
        return rc; /* the context stays valid */
    }
    for (int i = CORE_EXT_MAX - 1; i >= 0; i--)
        if (ctx->ext[i] && ctx->ext_free[i])
            ctx->ext_free[i](ctx, ctx->ext[i]);
    core_stage_release(ctx);
    core_tmp_release(ctx);
    core_nodes_free(ctx);
    MPI_Comm_free(&ctx->comm);
    free(ctx);
    return rc;
}

int passion_ctx_option_get(const passion_ctx *ctx, const char *key,
                           char *buf, size_t len)
{
    if (!ctx)
        return PASSION_EINVAL;
    char why[256] = "";
    int rc = core_options_get(&ctx->opt, key, buf, len, why, sizeof why);
    return rc ? core_err((passion_ctx *)ctx, rc, "%s", why) : PASSION_OK;
}

const char *passion_version(int *major, int *minor, int *patch)
{
    if (major)
        *major = PASSION_VERSION_MAJOR;
    if (minor)
        *minor = PASSION_VERSION_MINOR;
    if (patch)
        *patch = PASSION_VERSION_PATCH;
    return PASSION_VERSION_STRING;
}

#define CTX_STR_(x) #x
#define CTX_STR(x) CTX_STR_(x)
const char *passion_mpi_build(void)
{
#if defined(OPEN_MPI) && defined(OMPI_MAJOR_VERSION)
    return "Open MPI " CTX_STR(OMPI_MAJOR_VERSION) "." CTX_STR(
        OMPI_MINOR_VERSION) "." CTX_STR(OMPI_RELEASE_VERSION);
#elif defined(MPICH_VERSION)
    return "MPICH " MPICH_VERSION;
#else
    return "MPI " CTX_STR(MPI_VERSION) "." CTX_STR(MPI_SUBVERSION);
#endif
}

MPI_Comm passion_ctx_comm(const passion_ctx *ctx)
{
    return ctx ? ctx->comm : MPI_COMM_NULL;
}

const char *passion_ctx_errdetail(const passion_ctx *ctx)
{
    return ctx ? ctx->detail : init_detail;
}

int passion_counters_get(const passion_ctx *ctx, passion_counters *c)
{
    if (!ctx || !c)
        return PASSION_EINVAL;
    *c = ctx->cnt;
    return PASSION_OK;
}

int passion_counters_reset(passion_ctx *ctx)
{
    if (!ctx)
        return PASSION_EINVAL;
    if (core_call_begin(ctx))
        return PASSION_ESTATE; /* another thread's call counts now */
    core_enter(ctx);
    memset(&ctx->cnt, 0, sizeof ctx->cnt);
    ctx->cnt.peak_staging = (uint64_t)ctx->staging_now;
    core_call_end(ctx);
    return PASSION_OK;
}

double core_learned(const double *v, int n)
{
    if (n >= CORE_LEARN_TRUST)
        return core_median(v, n);
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

double core_median(const double *v, int n)
{
    double w[64];
    if (n > 64)
        n = 64;
    memcpy(w, v, (size_t)n * sizeof *w);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && w[j - 1] > w[j]; j--) {
            double t = w[j];
            w[j] = w[j - 1];
            w[j - 1] = t;
        }
    return w[n / 2];
}

void *core_ext_get(passion_ctx *ctx, int slot, size_t size,
                   void (*init)(void *state),
                   void (*fr)(passion_ctx *ctx, void *state))
{
    if (ctx->ext[slot])
        return ctx->ext[slot];
    void *s = core_calloc(ctx, 1, size);
    if (!s)
        return NULL;
    if (init)
        init(s);
    ctx->ext[slot] = s;
    ctx->ext_free[slot] = fr;
    return s;
}
