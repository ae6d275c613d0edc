/* bench_thesis.c - see bench_thesis.h. */
#include "bench_thesis.h"

#include <stdlib.h>
#include <string.h>

/* (shared/bench/thesis_patterns.tsv, kept here) */
const bench_tcase bench_thesis_cases[] = {
    {"6.1-I", "read", "1:100:1,1:100:1"},
    {"6.1-II", "read", "200:300:1,200:300:1"},
    {"6.1-III", "read", "400:800:1,400:800:1"},
    {"6.1-IV", "read", "32:64:1,128:1024:1"},
    {"6.1-V", "read", "1:16:1,1:4096:1"},
    {"6.1-VI", "read", "1:4096:1,1:16:1"},
    {"6.2-I", "read", "1:100:1,1+10p:100+10p:1"},
    {"6.2-II", "read", "1:100:1,1+50p:100+50p:1"},
    {"6.2-III", "read", "400:800:1,400+100p:800+100p:1"},
    {"6.2-IV", "read", "1:4096:1,1+8p:16+8p:1"},
    {"6.2-V", "read", "1+50p:100+50p:1,1:100:1"},
    {"6.2-VI", "read", "400+100p:800+100p:1,400:800:1"},
    {"6.2-VII", "read", "1+8p:16+8p:1,1:4096:1"},
    {"6.2-VIII", "read", "200+100p:400+100p:1,200+100p:400+100p:1"},
    {"6.3-I", "read", "1:100:1,1+100p:100+100p:1"},
    {"6.3-II", "read", "1+100p:100+100p:1,1:100:1"},
    {"6.3-III", "read", "200+200p:400+200p:1,512:1024:1"},
    {"6.3-IV", "read", "1+32p:16+32p:1,1:4096:1"},
    {"6.3-V", "read", "200+200p:400+200p:1,1+200p:512+200p:1"},
    {"6.3-VI", "read", "1+32p:32+32p:1,1+100p:1024+100p:1"},
    {"6.4-I", "write", "1:100:1,1+100p:100+100p:1"},
    {"6.4-II", "write", "1+100p:100+100p:1,1:100:1"},
    {"6.4-III", "write", "200+200p:400+200p:1,512:1024:1"},
    {"6.4-IV", "write", "1+32p:16+32p:1,1:4096:1"},
    {"6.4-V", "write", "200+200p:400+200p:1,1+200p:512+200p:1"},
    {"6.4-VI", "write", "1+32p:32+32p:1,1+100p:1024+100p:1"},
    {"6.5-I", "read", "p+1:4096:nprocs,p+1:4096:nprocs"},
    {"6.5-II", "read", "1+250p:250+250p:2,1+250p:250+250p:2"},
    {"6.5-III", "read", "1+200p:500+200p:3,1+200p:500+200p:3"},
    {"6.5-IV", "read", "1+64p:64+64p:2,500:2500:3"},
    {"6.5-V", "read", "500:2500:3,1+64p:64+64p:2"},
    {"6.6-I", "write", "p+1:4096:nprocs,p+1:4096:nprocs"},
    {"6.6-II", "write", "1+250p:250+250p:2,1+250p:250+250p:2"},
    {"6.6-III", "write", "1+200p:500+200p:3,1+200p:500+200p:3"},
    {"6.6-IV", "write", "1+64p:64+64p:2,500:2500:3"},
    {"6.6-V", "write", "500:2500:3,1+64p:64+64p:2"},
};
const int bench_thesis_ncases =
    (int)(sizeof bench_thesis_cases / sizeof bench_thesis_cases[0]);

const bench_tcase bench_thesis_large[] = {
    {"6.8-I", "read", "5000:6000:1,5000:6000:1"},
    {"6.8-II", "read", "1+100p:300+100p:1,4000:8000:1"},
    {"6.8-III", "read", "1+100p:400+100p:1,2000+20p:2800+20p:1"},
    {"6.8-IV", "read", "4000:8000:1,1+4p:8+4p:1"},
    {"6.8-V", "read", "1+100p:100+100p:1,1+100p:1024+100p:1"},
    {"6.8-VI", "read", "1+20p:16+20p:1,4000:12000:1"},
    {"6.8-V", "write", "1+100p:100+100p:1,1+100p:1024+100p:1"},
    {"6.8-VI", "write", "1+20p:16+20p:1,4000:12000:1"},
};
const int bench_thesis_nlarge =
    (int)(sizeof bench_thesis_large / sizeof bench_thesis_large[0]);

/* "1+10p", "p+1", "4096", "nprocs", "1+32p" at rank p of P. */
static int64_t eval_term(const char *s, size_t n, int p, int P)
{
    int64_t v = 0;
    size_t i = 0;
    while (i < n) {
        int64_t k = 1, num = 0;
        int has = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            num = num * 10 + (s[i++] - '0');
            has = 1;
        }
        if (has)
            k = num;
        if (i < n && s[i] == 'p') {
            v += k * p;
            i++;
        } else if (i + 6 <= n && !strncmp(s + i, "nprocs", 6)) {
            v += k * P;
            i += 6;
        } else {
            v += num;
        }
        if (i < n && s[i] == '+')
            i++;
    }
    return v;
}

void bench_thesis_section(const char *sec, int p, int P, int64_t N,
                          passion_section *s)
{
    memset(s, 0, sizeof *s);
    const char *c = sec;
    for (int d = 0; d < 2; d++) {
        int64_t v[3];
        for (int k = 0; k < 3; k++) {
            size_t n = strcspn(c, k < 2 ? ":" : ",");
            v[k] = eval_term(c, n, p, P);
            c += n + (c[n] ? 1 : 0);
        }
        s->start[d] = v[0] - 1;
        s->stride[d] = v[2];
        s->count[d] = v[1] >= v[0] ? (v[1] - v[0]) / v[2] + 1 : 0;
        if (s->start[d] + (s->count[d] - 1) * v[2] >= N)
            s->count[d] = s->start[d] < N ? (N - 1 - s->start[d]) / v[2] + 1
                                          : 0;
    }
}

uint32_t bench_thesis_orig(int64_t N, int64_t row, int64_t col)
{
    return (uint32_t)(col * N + row) * 2654435761u + 12345u;
}

uint32_t bench_thesis_wval(int64_t N, int64_t row, int64_t col,
                           uint32_t salt)
{
    return bench_thesis_orig(N, row, col) ^ (salt * 0x9E3779B9u) ^
           0xA5A5A5A5u;
}

int bench_thesis_fill(passion_file *f, int64_t N, int rank, int P)
{
    int64_t c0 = N * rank / P, c1 = N * (rank + 1) / P, step = 64;
    uint32_t *b = malloc((size_t)(N * step * 4));
    int rc = b ? 0 : PASSION_ENOMEM;
    for (int64_t c = c0; c < c1 && !rc; c += step) {
        int64_t nc = c1 - c < step ? c1 - c : step;
        for (int64_t j = 0; j < nc; j++)
            for (int64_t r = 0; r < N; r++)
                b[j * N + r] = bench_thesis_orig(N, r, c + j);
        passion_section s;
        int64_t st[2] = {0, c}, ct[2] = {N, nc};
        passion_section_set(&s, 2, st, ct, NULL);
        rc = passion_file_write(f, &s, b, NULL, PASSION_METHOD_DIRECT);
    }
    free(b);
    return rc;
}
