/*
 * mm_stall: hold the thread of rampartd that receives supervised calls
 * by keeping the caller's memory map locked while it reads the caller's
 * memory.
 *
 *   mm_stall hold FILE SECONDS
 *   mm_stall probe OTHER SECONDS GO
 *
 * hold: one thread maps POPULATE bytes of anonymous memory with
 * MAP_POPULATE and unmaps them, over and over (the kernel fills them
 * holding the process's mmap_lock to read); another maps and unmaps a
 * page, over and over (asking that lock to write, after which every new
 * reader waits); CALLERS threads chmod FILE, a supervised call whose path
 * the daemon reads from this process's memory. A daemon that reads it on
 * the thread that receives every call waits there, and so does every
 * other process's supervised call. Prints "ready", then goes on for
 * SECONDS. Exit 0 once done (the hold is not a success by itself).
 *
 * probe: once GO exists (it is started first: a launch while the holder
 * is busy in the kernel could not freeze it), chmods OTHER (a supervised
 * call of another domain; its outcome does not matter, only when it
 * comes) over and over for SECONDS: succeeded if one of them took over
 * LONGEST seconds.
 */
#include "adversarial.h" /* first: it defines _GNU_SOURCE */

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define POPULATE ((size_t)2 << 30)
#define CALLERS 4
#define LONGEST 0.5

static const char *file;
static atomic_int stop;

static void *populate(void *unused) {
    (void)unused;
    while (!atomic_load(&stop)) {
        void *p = mmap(NULL, POPULATE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (p == MAP_FAILED) verdict(BROKEN, "mmap of %zu bytes: %s", POPULATE, strerror(errno));
        munmap(p, POPULATE);
    }
    return NULL;
}

static void *writer(void *unused) {
    (void)unused;
    while (!atomic_load(&stop)) {
        void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED) munmap(p, 4096);
    }
    return NULL;
}

static void *caller(void *unused) {
    (void)unused;
    while (!atomic_load(&stop)) chmod(file, 0644);
    return NULL;
}

static void hold(const char *seconds) {
    pthread_t threads[CALLERS + 2];
    for (int i = 0; i < CALLERS + 2; i++)
        if (pthread_create(&threads[i], NULL, i == 0 ? populate : i == 1 ? writer : caller, NULL) != 0)
            verdict(BROKEN, "pthread_create");
    printf("ready\n");
    fflush(stdout);
    struct timespec run = {atoi(seconds), 0};
    nanosleep(&run, NULL);
    atomic_store(&stop, 1);
    for (int i = 0; i < CALLERS + 2; i++) pthread_join(threads[i], NULL);
    verdict(SUCCEEDED, "held for %s s", seconds);
}

static void probe(const char *other, const char *seconds, const char *go) {
    struct stat st;
    double give_up = now_s() + 30;
    while (stat(go, &st) != 0) {
        if (now_s() > give_up) verdict(BROKEN, "%s never came", go);
        struct timespec tick = {0, 20 * 1000 * 1000};
        nanosleep(&tick, NULL);
    }
    double end = now_s() + atoi(seconds), longest = 0;
    int calls = 0;
    while (now_s() < end) {
        double start = now_s();
        chmod(other, 0644);
        double took = now_s() - start;
        if (took > longest) longest = took;
        calls++;
        struct timespec tick = {0, 20 * 1000 * 1000};
        nanosleep(&tick, NULL);
    }
    if (longest > LONGEST)
        verdict(SUCCEEDED, "a chmod of %s took %.2f s (the longest of %d): another process's calls held it", other,
                longest, calls);
    verdict(BLOCKED, "the longest of %d chmods of %s took %.3f s", calls, other, longest);
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "hold") == 0) {
        file = argv[2];
        hold(argv[3]);
    }
    if (argc == 5 && strcmp(argv[1], "probe") == 0) probe(argv[2], argv[3], argv[4]);
    verdict(BROKEN, "usage: mm_stall hold FILE SECONDS | mm_stall probe OTHER SECONDS GO");
}
