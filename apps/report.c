/* report.c - what an application run did, reduced over ranks. */
#include "apps.h"

void app_report_finish(passion_ctx *ctx, const passion_counters *before,
                       double t0, double t_compute, app_report *rep)
{
    MPI_Comm comm = passion_ctx_comm(ctx);
    passion_counters now;
    passion_counters_get(ctx, &now);
    double t[3] = {MPI_Wtime() - t0, now.t_io - before->t_io, t_compute};
    double tm[3];
    MPI_Allreduce(t, tm, 3, MPI_DOUBLE, MPI_MAX, comm);
    unsigned long long c[5] = {
        now.bytes_read - before->bytes_read,
        now.bytes_written - before->bytes_written,
        now.reuse_bytes - before->reuse_bytes,
        now.prefetch_hits - before->prefetch_hits,
        now.io_calls - before->io_calls};
    unsigned long long cs[5];
    MPI_Allreduce(c, cs, 5, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
    long long sl = rep->slabs, slm;
    MPI_Allreduce(&sl, &slm, 1, MPI_LONG_LONG, MPI_MAX, comm);
    rep->seconds = tm[0];
    rep->t_io_wait = tm[1];
    rep->t_compute = tm[2];
    rep->bytes_read = cs[0];
    rep->bytes_written = cs[1];
    rep->reuse_bytes = cs[2];
    rep->prefetch_hits = cs[3];
    rep->io_calls = cs[4];
    rep->slabs = slm;
}
