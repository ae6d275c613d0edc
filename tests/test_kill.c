/*
 * test_kill.c - outputs are never half-written: a job that creates files
 * (kill_creator: a raw global file, a .npy file and a local set, in a
 * loop) is killed with SIGKILL at random moments, and after every kill
 * each target path must be absent (only before its first creation), or a
 * complete creation: the exact size, a valid header (.npy: the right
 * shape and dtype; raw: the untouched zero header area) and elements all
 * 0 or all of one generation g, or a mix of 0 and g (the creation was
 * complete and the section writes that fill it had begun: they are
 * in-place writes, not atomic; README, Durability). Never a short or
 * headerless file, never two generations mixed. The only other files
 * allowed are passion temporaries (.NAME.passion-tmp) and the local set's
 * description l.laf.passion (whole, naming the set); a last, complete
 * run must leave none (the next create replaces a stale one).
 *
 * Usage: test_kill MPIEXEC CREATOR DIR [--kills K] [--procs P]
 *                  [--max-delay-ms M] [--seed S]
 * The seed (default fixed; PASSION_TEST_SEED overrides) is printed; each
 * kill's delay is printed on failure.
 */
#include "../ocad/ocad.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 256
#define MAXP 16

static uint64_t rng;
static uint64_t next(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static const char *dir;
static int procs = 2, failures;
static long absent, filling, complete, temps;
static int seen[2 + MAXP]; /* target existed once: it must stay */

#define FAIL(...)                                                           \
    do {                                                                    \
        fprintf(stderr, "test_kill: FAIL: " __VA_ARGS__);                   \
        fputc('\n', stderr);                                                \
        failures++;                                                         \
    } while (0)

static void msleep(double ms)
{
    struct timespec ts = {(time_t)(ms / 1000),
                          (long)((ms - 1000 * (long)(ms / 1000)) * 1e6)};
    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

static uint8_t *slurp(const char *path, int64_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct stat st;
    fstat(fileno(f), &st);
    *n = st.st_size;
    uint8_t *b = malloc((size_t)st.st_size + 1);
    if (b && fread(b, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

/* Check one target; want_gen > 0: must be complete with that value. */
static void check_target(int t, const char *name, int64_t head, int npy,
                         int64_t elems, uint64_t want_gen, const char *when)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int64_t n = 0;
    uint8_t *b = slurp(path, &n);
    if (!b) {
        if (errno != ENOENT)
            FAIL("%s: %s: cannot read %s", when, name, strerror(errno));
        else if (seen[t] || want_gen)
            FAIL("%s: %s vanished (an old file must stay until replaced)",
                 when, name);
        absent++;
        return;
    }
    seen[t] = 1;
    if (npy) {
        ocad_npy_info in;
        const char *why;
        if (ocad_npy_parse(b, n, &in, &why)) {
            FAIL("%s: %s: bad .npy header: %s", when, name, why);
            free(b);
            return;
        }
        if (in.nd != 2 || in.shape[0] != N || in.shape[1] != N ||
            strcmp(in.descr, "<u8") || in.fortran)
            FAIL("%s: %s: .npy header describes another array", when, name);
        head = in.data_off;
    } else {
        for (int64_t i = 0; i < head; i++)
            if (b[i]) {
                FAIL("%s: %s: header area byte %lld is %d", when, name,
                     (long long)i, b[i]);
                break;
            }
    }
    if (n != head + 8 * elems) {
        FAIL("%s: %s holds %lld bytes, a complete one %lld", when, name,
             (long long)n, (long long)(head + 8 * elems));
        free(b);
        return;
    }
    uint64_t g = 0;
    int64_t zeros = 0;
    for (int64_t i = 0; i < elems; i++) {
        uint64_t v;
        memcpy(&v, b + head + 8 * i, 8);
        if (!v) {
            zeros++;
        } else if (!g) {
            g = v;
        } else if (v != g) {
            FAIL("%s: %s mixes generations %llu and %llu (element %lld)",
                 when, name, (unsigned long long)g, (unsigned long long)v,
                 (long long)i);
            break;
        }
    }
    if (want_gen && (zeros || g != want_gen))
        FAIL("%s: %s: generation %llu with %lld zeros, want %llu complete",
             when, name, (unsigned long long)g, (long long)zeros,
             (unsigned long long)want_gen);
    if (zeros)
        filling++;
    else
        complete++;
    free(b);
}

static void check_all(uint64_t want_gen, int temps_allowed, const char *when)
{
    int64_t cols = (N + procs - 1) / procs;
    check_target(0, "g.raw", 64, 0, (int64_t)N * N, want_gen, when);
    check_target(1, "g.npy", 0, 1, (int64_t)N * N, want_gen, when);
    for (int r = 0; r < procs; r++) {
        char name[64];
        snprintf(name, sizeof name, "l.%d.laf", r);
        int64_t c = N - r * cols < cols ? N - r * cols : cols;
        check_target(2 + r, name, 0, 0, (int64_t)N * c, want_gen, when);
    }
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        const char *s = e->d_name;
        size_t l = strlen(s), tl = strlen(CORE_TEMP_SUFFIX);
        if (!strcmp(s, ".") || !strcmp(s, "..") || !strncmp(s, "pid.", 4) ||
            !strcmp(s, "g.raw") || !strcmp(s, "g.npy") ||
            (!strncmp(s, "l.", 2) && l > 6 && !strcmp(s + l - 4, ".laf")))
            continue;
        if (!strcmp(s, "l.laf.passion")) {
            /* the set's description (written, like the files, complete
               under a temporary name): whole and naming this set */
            char path[4096], text[4096];
            snprintf(path, sizeof path, "%s/%s", dir, s);
            FILE *fp = fopen(path, "rb");
            size_t n = fp ? fread(text, 1, sizeof text, fp) : 0;
            if (fp)
                fclose(fp);
            ocad_lset ls;
            const char *why = "";
            if (ocad_lset_parse(text, (int64_t)n, &ls, &why) ||
                ls.nranks != procs || ls.ndims != 2 || ls.shape[0] != N ||
                strcmp(ls.files, "l.%d.laf"))
                FAIL("%s: description %s is not the set's (%s)", when, s,
                     why);
            continue;
        }
        if (s[0] == '.' && l > tl && !strcmp(s + l - tl, CORE_TEMP_SUFFIX)) {
            temps++;
            if (!temps_allowed)
                FAIL("%s: temporary %s left after a complete run", when, s);
            continue;
        }
        FAIL("%s: unexpected file %s", when, s);
    }
    if (d)
        closedir(d);
}

static void clean_dir(void)
{
    DIR *d = opendir(dir);
    char path[4096];
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
}

static pid_t launch(const char *mpiexec, const char *creator, long run,
                    long cycles, int quiet)
{
    char np[16], rs[32], cs[32];
    snprintf(np, sizeof np, "%d", procs);
    snprintf(rs, sizeof rs, "%ld", run);
    snprintf(cs, sizeof cs, "%ld", cycles);
    pid_t pid = fork();
    if (pid == 0) {
        if (quiet && (!freopen("/dev/null", "w", stdout) ||
                      !freopen("/dev/null", "w", stderr)))
            _exit(127); /* quiet: mpiexec's report of the killed ranks */
        execl(mpiexec, mpiexec, "-n", np, creator, dir, rs, cs, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* The ranks' pids once all have published them (0 if the job ended). */
static int wait_pids(pid_t job, pid_t *pids)
{
    for (int tries = 0; tries < 60000; tries++) {
        int got = 0;
        for (int r = 0; r < procs; r++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/pid.%d", dir, r);
            FILE *f = fopen(path, "r");
            long p = 0;
            if (f) {
                if (fscanf(f, "%ld", &p) == 1 && p > 0)
                    pids[got++] = (pid_t)p;
                fclose(f);
            }
        }
        if (got == procs)
            return 1;
        if (waitpid(job, NULL, WNOHANG) == job)
            return 0;
        msleep(1);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_kill MPIEXEC CREATOR DIR [--kills K] "
                        "[--procs P] [--max-delay-ms M] [--seed S]\n");
        return 2;
    }
    const char *mpiexec = argv[1], *creator = argv[2];
    dir = argv[3];
    long kills = 100;
    double max_delay = 1500;
    uint64_t seed = 20261123;
    for (int i = 4; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--kills"))
            kills = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--procs"))
            procs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--max-delay-ms"))
            max_delay = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed"))
            seed = strtoull(argv[i + 1], NULL, 10);
    }
    if (getenv("PASSION_TEST_SEED"))
        seed = strtoull(getenv("PASSION_TEST_SEED"), NULL, 10);
    if (procs < 1 || procs > MAXP)
        procs = 2;
    rng = seed;
    printf("test_kill: seed %llu, %ld kills, P = %d, delays 0..%.0f ms\n",
           (unsigned long long)seed, kills, procs, max_delay);
    fflush(stdout);
    mkdir(dir, 0755);
    clean_dir();
    for (long k = 0; k < kills; k++) {
        char when[128];
        double delay = max_delay * (double)(next() % 1000000) / 1e6;
        snprintf(when, sizeof when, "kill %ld (seed %llu, %.1f ms)", k + 1,
                 (unsigned long long)seed, delay);
        for (int r = 0; r < procs; r++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/pid.%d", dir, r);
            unlink(path);
        }
        pid_t job = launch(mpiexec, creator, k + 1, 0, 1), pids[MAXP];
        if (job < 0 || !wait_pids(job, pids)) {
            FAIL("%s: the job did not start", when);
            break;
        }
        msleep(delay);
        for (int r = 0; r < procs; r++) /* the whole job at once */
            kill(pids[r], SIGKILL);
        int status = 0, done = 0;
        for (int t = 0; t < 10000 && !done; t++) {
            done = waitpid(job, &status, WNOHANG) == job;
            if (!done)
                msleep(1);
        }
        if (!done) {
            kill(job, SIGKILL);
            waitpid(job, &status, 0);
        }
        for (int r = 0; r < procs; r++)
            for (int t = 0; t < 10000 && !kill(pids[r], 0); t++)
                msleep(1); /* until the rank is gone */
        check_all(0, 1, when);
        if (failures)
            break;
    }
    /* a last complete run: every target complete, no temporary left */
    pid_t job = launch(mpiexec, creator, kills + 1, 2, 0);
    int status = 0;
    waitpid(job, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status))
        FAIL("the final, complete run failed (status %d)", status);
    else
        check_all((uint64_t)(kills + 1) * 1000000 + 2, 0, "after the final run");
    printf("test_kill: %ld kills: targets seen absent %ld, filling %ld, "
           "complete %ld; passion temporaries seen %ld; %d failures\n",
           kills, absent, filling, complete, temps, failures);
    if (!failures)
        clean_dir();
    return failures ? 1 : 0;
}
