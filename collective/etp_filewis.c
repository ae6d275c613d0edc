/*
 * etp_filewis.c - the file's costs through wisdom (planner.h's
 * plan_file_costs): looked up before the first calibration
 * (coll_file_wisdom: a context whose wisdom holds the costs of this
 * file's driver, file system and placement takes them as measured and
 * calibrates nothing, so no probe runs inside its timed calls), and kept
 * for the wisdom file by a context that measured (coll_file_keep, after
 * each reading; saved when the context goes, as the planner's records
 * are).
 *
 * The key is what makes the figures valid: the driver (each measures
 * through its own path), the device (st_dev: the disk or mount whose
 * latency and bandwidth were read) and the file system's type (statfs
 * f_type: a device number reused by another file system, a tmpfs mounted
 * again, is not the same device), and the ranks and nodes that read
 * together (the bandwidth is theirs together, the latency the slowest
 * rank's).
 *
 * Invariants: collective (every rank of the calibration's call, the
 * condition read from the FAD); rank 0's key is every rank's and the
 * table is the same on every rank once loaded, so the costs taken are
 * the same everywhere.
 */
#include "coll.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#if defined(__linux__)
#include <sys/vfs.h>
#endif

/* rank 0's view of the file: its file system's type and device (0 when
   they cannot be read) */
static void file_key(const core_fh *fh, int64_t key[2])
{
    key[0] = key[1] = 0;
    struct stat st;
    if (fh->path && stat(fh->path, &st) == 0)
        key[1] = (int64_t)st.st_dev;
#if defined(__linux__)
    struct statfs sf;
    if (fh->path && statfs(fh->path, &sf) == 0)
        key[0] = (int64_t)((uint64_t)sf.f_type & 0xffffffffu); /* magic */
#endif
}

void coll_file_wisdom(coll_plan *p, coll_ext *e)
{
    passion_ctx *ctx = p->ctx;
    if (!ctx->opt.wisdom[0] || (e && e->file_wis))
        return;
    /* the state on every rank or the lookup on none */
    plan_state *ps = plan_state_get(ctx);
    double none[1] = {e && ps ? 0 : 1};
    if (core_agree_max(ctx, PASSION_OK, none, 1) || none[0] > 0) {
        if (e)
            e->file_wis = 1;
        return;
    }
    e->file_wis = 1; /* looked up: this context measures unless found */
    int64_t key[2];
    if (ctx->rank == 0)
        file_key(p->f->fh, key);
    /* collective and once: nothing more where the planner read it */
    if (plan_state_load(ctx, ps, ctx->comm) ||
        MPI_Bcast(key, 2, MPI_INT64_T, 0, ctx->comm) != MPI_SUCCESS)
        return;
    plan_file_costs k;
    memset(&k, 0, sizeof k);
    k.driver = p->f->fh->ops->id;
    k.fstype = key[0];
    k.dev = key[1];
    k.procs = p->P;
    k.nodes = ctx->nnodes;
    e->file_key = k;
    const plan_file_costs *w = plan_file_costs_find(plan_state_table(ps), &k);
    if (!w)
        return;
    /* measured by an earlier run: taken whole, nothing left pending */
    e->file_wis = 2;
    e->file_lat = w->lat;
    e->file_bw = w->bw;
    e->file_bw_rank = w->bw_rank;
    e->file_bw_len = w->bw_len;
    e->stream_bw = w->stream_bw;
    e->stream_len = w->stream_len;
    e->file_nlat = e->file_nbw = COLL_FILE_SAMPLES;
    e->file_tries = 2 * COLL_FILE_SAMPLES;
    e->file_long_tries = 2;
    if (ctx->opt.verbosity >= 2 && ctx->rank == 0)
        fprintf(stderr, "passion: file costs from wisdom: latency %.3g s, "
                "bandwidth %.3g B/s\n", e->file_lat, e->file_bw);
}

void coll_file_keep(passion_ctx *ctx, const coll_ext *e)
{
    plan_state *ps = ctx->opt.wisdom[0] ? plan_state_get(ctx) : NULL;
    if (!e || e->file_wis != 1 || !ps || e->file_key.procs < 1 ||
        (e->file_lat <= 0 && e->file_bw <= 0))
        return;
    plan_file_costs c = e->file_key;
    c.lat = e->file_lat;
    c.bw = e->file_bw;
    c.bw_rank = e->file_bw_rank;
    c.bw_len = e->file_bw_len;
    c.stream_bw = e->stream_bw;
    c.stream_len = e->stream_len;
    plan_file_costs_put(plan_state_table(ps), &c);
    plan_state_learned(ps);
}
