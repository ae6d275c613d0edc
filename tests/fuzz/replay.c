/*
 * replay.c - main() for a fuzz target without libFuzzer: runs
 * LLVMFuzzerTestOneInput on every file named on the command line (a
 * directory: every regular file in it, sorted by name). With
 * "--count N", every input is also run mutated N times in a fixed,
 * seeded way (bit flips, truncation, byte insertion), so the suite
 * exercises more than the stored files with any compiler. Prints how many
 * inputs ran; a failed property aborts the program (test failure).
 */
#include "fuzz.h"

#include <dirent.h>
#include <sys/stat.h>

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static long runs;

static void run_one(const uint8_t *d, size_t n)
{
    /* an exact-size heap copy, so that sanitizers see any over-read */
    uint8_t *c = malloc(n ? n : 1);
    if (!c) {
        fprintf(stderr, "replay: out of memory\n");
        exit(2);
    }
    memcpy(c, d, n);
    LLVMFuzzerTestOneInput(c, n);
    free(c);
    runs++;
}

static void mutate_runs(const uint8_t *d, size_t n, long count)
{
    uint8_t *m = malloc(n + 8);
    if (!m)
        exit(2);
    for (long i = 0; i < count; i++) {
        size_t len = n;
        memcpy(m, d, n);
        switch (next() % 4) {
        case 0: /* flip a few bits */
            for (int k = 0; len && k < 1 + (int)(next() % 3); k++)
                m[next() % len] ^= (uint8_t)(1u << (next() % 8));
            break;
        case 1: /* truncate */
            len = len ? next() % len : 0;
            break;
        case 2: /* insert a byte */
        {
            size_t at = len ? next() % (len + 1) : 0;
            memmove(m + at + 1, m + at, len - at);
            static const char pick[] = "%d,=() '\"\n\x93:0123456789-LTF";
            m[at] = (uint8_t)pick[next() % (sizeof pick - 1)];
            len++;
            break;
        }
        default: /* overwrite a byte with any value */
            if (len)
                m[next() % len] = (uint8_t)next();
            break;
        }
        run_one(m, len);
    }
    free(m);
}

static int run_file(const char *path, long count)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 4096;
            uint8_t *b = realloc(buf, cap);
            if (!b)
                exit(2);
            buf = b;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (!got)
            break;
        n += got;
    }
    fclose(f);
    run_one(buf, n);
    mutate_runs(buf, n, count);
    free(buf);
    return 0;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path, long count)
{
    struct stat st;
    if (stat(path, &st)) {
        perror(path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode))
        return run_file(path, count);
    DIR *d = opendir(path);
    if (!d) {
        perror(path);
        return 1;
    }
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char **nn = realloc(names, (n + 1) * sizeof *names);
        if (!nn)
            exit(2);
        names = nn;
        size_t l = strlen(path) + strlen(e->d_name) + 2;
        names[n] = malloc(l);
        snprintf(names[n++], l, "%s/%s", path, e->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (!stat(names[i], &st) && S_ISREG(st.st_mode))
            bad |= run_file(names[i], count);
        free(names[i]);
    }
    free(names);
    return bad;
}

int main(int argc, char **argv)
{
    long count = 0;
    int bad = 0, first = 1;
    if (argc > 2 && !strcmp(argv[1], "--count")) {
        count = atol(argv[2]);
        first = 3;
    }
    for (int i = first; i < argc; i++)
        bad |= run_path(argv[i], count);
    printf("replay: %ld inputs ran (%ld mutations per file)\n", runs, count);
    return bad;
}
