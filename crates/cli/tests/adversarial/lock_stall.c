/*
 * lock_stall: hold the daemon's threads for supervised calls with calls
 * that wait on an inode lock the attacker holds.
 *
 *   lock_stall hold FILE SECONDS
 *   lock_stall probe OTHER
 *
 * hold: FILE, the attacker's own, on a tmpfs with 1 GiB free, is written
 * over and over by WRITERS threads, each write 1 GiB (pwritev of one
 * 4 MiB buffer 256 times, at offset 0): the kernel holds FILE's inode
 * lock (i_rwsem) for the whole of each write. CHMODS threads chmod FILE
 * in a loop: a chmod takes that lock too, so each waits behind the writes
 * queued before it, and so does the daemon's thread that makes it. Prints
 * "ready" once the writes run, then goes on for SECONDS. Exit 0 if its
 * own chmods waited (the longest over 0.5 s: the lock held them), else
 * 2: the attack did not take place.
 *
 * probe: times one chmod of OTHER (a supervised call of another domain;
 * its outcome does not matter, only when it comes): succeeded if it has
 * not come within 3 s.
 */
#include "adversarial.h" /* first: it defines _GNU_SOURCE */

#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>

#define WRITERS 4
#define CHMODS 64
#define CHUNK (4 << 20)
#define CHUNKS 256

static const char *file;
static int fd;
static char *buf;
static atomic_int stop;
/* The longest chmod, in microseconds; how many were made, how many failed. */
static atomic_long longest_us, made, failed;

static void *writer(void *unused) {
    (void)unused;
    struct iovec iov[CHUNKS];
    for (int i = 0; i < CHUNKS; i++) iov[i] = (struct iovec){buf, CHUNK};
    while (!atomic_load(&stop))
        if (pwritev(fd, iov, CHUNKS, 0) < 0) verdict(BROKEN, "pwritev of %s: %s", file, strerror(errno));
    return NULL;
}

static void *chmodder(void *unused) {
    (void)unused;
    while (!atomic_load(&stop)) {
        double start = now_s();
        if (chmod(file, 0600) != 0) atomic_fetch_add(&failed, 1);
        atomic_fetch_add(&made, 1);
        long us = (long)((now_s() - start) * 1e6);
        long seen = atomic_load(&longest_us);
        while (us > seen && !atomic_compare_exchange_weak(&longest_us, &seen, us)) {
        }
    }
    return NULL;
}

static void hold(const char *seconds) {
    fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) verdict(BROKEN, "creating %s: %s", file, strerror(errno));
    buf = malloc(CHUNK);
    if (!buf) verdict(BROKEN, "malloc");
    memset(buf, 'x', CHUNK);
    /* The first write allocates the file's pages: before the clock. */
    struct iovec iov[CHUNKS];
    for (int i = 0; i < CHUNKS; i++) iov[i] = (struct iovec){buf, CHUNK};
    if (pwritev(fd, iov, CHUNKS, 0) < 0) verdict(BROKEN, "pwritev of %s: %s", file, strerror(errno));
    pthread_t threads[WRITERS + CHMODS];
    for (int i = 0; i < WRITERS + CHMODS; i++)
        if (pthread_create(&threads[i], NULL, i < WRITERS ? writer : chmodder, NULL) != 0)
            verdict(BROKEN, "pthread_create");
    printf("ready\n");
    fflush(stdout);
    struct timespec run = {atoi(seconds), 0};
    nanosleep(&run, NULL);
    atomic_store(&stop, 1);
    for (int i = 0; i < WRITERS + CHMODS; i++) pthread_join(threads[i], NULL);
    double longest = (double)atomic_load(&longest_us) / 1e6;
    long n = atomic_load(&made), bad = atomic_load(&failed);
    if (longest < 0.5 || bad)
        verdict(BROKEN, "%ld chmods of %s (%ld failed) waited at most %.3f s: the lock did not hold them", n, file,
                bad, longest);
    /* Exit 0: the hold took place (not an attack's success by itself). */
    verdict(SUCCEEDED, "%ld chmods of %s waited up to %.1f s behind its writes", n, file, longest);
}

static void probe(const char *other) {
    double start = now_s();
    pid_t kid = fork();
    if (kid < 0) verdict(BROKEN, "fork: %s", strerror(errno));
    if (kid == 0) _exit(chmod(other, 0644) != 0);
    int came = 0;
    while (now_s() - start < 3 && !came) {
        came = waitpid(kid, NULL, WNOHANG) == kid;
        if (!came) {
            struct timespec tick = {0, 10 * 1000 * 1000};
            nanosleep(&tick, NULL);
        }
    }
    double waited = now_s() - start;
    if (!came) {
        waitpid(kid, NULL, 0);
        verdict(SUCCEEDED, "a chmod of %s waited %.1f s, then came after %.1f s: another domain's calls held it",
                other, waited, now_s() - start);
    }
    verdict(BLOCKED, "a chmod of %s came in %.3f s", other, waited);
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "hold") == 0) {
        file = argv[2];
        hold(argv[3]);
    }
    if (argc == 3 && strcmp(argv[1], "probe") == 0) probe(argv[2]);
    verdict(BROKEN, "usage: lock_stall hold FILE SECONDS | lock_stall probe OTHER");
}
