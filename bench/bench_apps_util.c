/* bench_apps_util.c - see bench_apps_util.h. */
#include "bench_apps_util.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void bench_cell(int64_t gi, int64_t gj, int64_t es, void *out)
{
    uint64_t z = mix((uint64_t)gi * 0x9E3779B97F4A7C15ULL + (uint64_t)gj);
    if (es == 1) {
        *(uint8_t *)out = (uint8_t)z;
    } else if (es == 2) {
        *(uint16_t *)out = (uint16_t)z;
    } else if (es == 4) {
        *(float *)out = 1.0f + (float)(z % 65536) / 16.0f;
    } else {
        double v = gi == 0 ? 100.0 : (double)(z % 1000) / 1000.0;
        memcpy(out, &v, 8);
    }
}

int bench_colblock(passion_ctx *ctx, int64_t n0, int64_t n1, int64_t es,
                   int64_t g, passion_array **a)
{
    int size;
    MPI_Comm_size(passion_ctx_comm(ctx), &size);
    int64_t shape[2] = {n0, n1};
    passion_array_spec sp;
    passion_array_spec_init(&sp, 2, shape, es);
    sp.storage = PASSION_COL_MAJOR;
    sp.grid[1] = size;
    sp.dist[0] = PASSION_DIST_COLLAPSED;
    sp.ghost[1] = g;
    return passion_array_create(ctx, &sp, a);
}

/* Visit this rank's interior in column chunks: read (checksum) or fill. */
static int chunks(passion_ctx *ctx, passion_array *a, passion_file *f,
                  int fill, uint64_t *sum)
{
    int rank;
    MPI_Comm_rank(passion_ctx_comm(ctx), &rank);
    int64_t nl[2], lo[2], hi[2];
    passion_array_local_shape(a, rank, nl);
    passion_array_local_bounds(a, rank, 0, lo, hi);
    int64_t es = passion_array_get_spec(a)->elem_size;
    int64_t w = (8LL << 20) / (nl[0] * es);
    if (w < 1)
        w = 1;
    char *buf = malloc((size_t)(w * nl[0] * es) + 1);
    int rc = buf ? 0 : PASSION_ENOMEM;
    uint64_t s = 0;
    for (int64_t c = 0; c < nl[1] && !rc; c += w) {
        int64_t k = nl[1] - c < w ? nl[1] - c : w;
        passion_section sec;
        int64_t st[2] = {0, c}, cnt[2] = {nl[0], k};
        passion_section_set(&sec, 2, st, cnt, NULL);
        if (!fill)
            rc = passion_file_read(f, &sec, buf, NULL, 0);
        for (int64_t j = 0; j < k && !rc; j++)
            for (int64_t i = 0; i < nl[0]; i++) {
                char *p = buf + (j * nl[0] + i) * es;
                if (fill) {
                    bench_cell(i, lo[1] + c + j, es, p);
                } else {
                    uint64_t v = 0;
                    memcpy(&v, p, (size_t)es);
                    s += mix(v ^ mix((uint64_t)i * 131 + (uint64_t)(lo[1] + c + j)));
                }
            }
        if (fill && !rc)
            rc = passion_file_write(f, &sec, buf, NULL, 0);
    }
    free(buf);
    int all;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, passion_ctx_comm(ctx));
    if (sum) {
        unsigned long long ls = s, gs = 0;
        MPI_Allreduce(&ls, &gs, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                      passion_ctx_comm(ctx));
        *sum = gs;
    }
    return all;
}

int bench_fill(passion_ctx *ctx, passion_array *a, passion_file *f)
{
    return chunks(ctx, a, f, 1, NULL);
}

uint64_t bench_checksum(passion_ctx *ctx, passion_array *a, passion_file *f)
{
    uint64_t s = 0;
    chunks(ctx, a, f, 0, &s);
    return s;
}

uint64_t bench_checksum_mem(const void *g, int64_t n0, int64_t n1, int64_t es)
{
    uint64_t s = 0;
    for (int64_t i = 0; i < n0; i++)
        for (int64_t j = 0; j < n1; j++) {
            uint64_t v = 0;
            memcpy(&v, (const char *)g + (i * n1 + j) * es, (size_t)es);
            s += mix(v ^ mix((uint64_t)i * 131 + (uint64_t)j));
        }
    return s;
}
