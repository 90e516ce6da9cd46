/*
 * exec_race: another thread's exec commits in place of a failed exec
 * transition.
 *
 *   exec_race SCRIPT SECRET DELAY_US
 *
 * SCRIPT is the entrypoint of a domain that may read SECRET, a `#!/bin/sh`
 * script. Thread 2 execs /bin/sh -c CODE with about 6 MiB of arguments,
 * which the kernel takes milliseconds to copy (an exec of / makes no
 * permission event: the root filesystem is not marked). DELAY_US after
 * thread 2 calls it, thread 1 execs SCRIPT with an argument longer than
 * MAX_ARG_STRLEN: the exec opens SCRIPT (decided as the transition into
 * the domain) and then fails with E2BIG. Thread 2's exec then commits,
 * its image /bin/sh, the script's interpreter: taken for the script's
 * exec, the process would enter the domain running CODE, which waits
 * while the exec is in flight (its cgroup `exec.N`) and then reads SECRET.
 */
#include "adversarial.h" /* first: it defines _GNU_SOURCE */

#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>

/* Waits until the process is out of its exec cgroup, then reads "$1". */
static const char CODE[] =
    "i=0\n"
    "while grep -q '/exec\\.' /proc/self/cgroup && [ $i -lt 100 ]; do sleep 0.02; i=$((i + 1)); done\n"
    "cg=$(sed -n 's/^0:://p' /proc/self/cgroup)\n"
    "if read -r line < \"$1\"; then\n"
    "    echo \"succeeded: another thread's /bin/sh ran as the script's exec, in $cg, and read $1: $line\"; exit 0\n"
    "fi\n"
    "echo \"blocked: /bin/sh, another thread's exec, stayed in $cg and could not read $1\"; exit 1\n";

/* Strings of MAX_ARG_STRLEN - 1 bytes: 46 of them make about 6 MiB, the
 * most an exec takes (3/4 of _STK_LIM). */
#define CHUNK (32 * 4096 - 1)
#define CHUNKS 46

static const char *secret;
static atomic_int sh_called;

static void *exec_sh(void *unused) {
    (void)unused;
    static char *argv[4 + CHUNKS + 1];
    argv[0] = "sh";
    argv[1] = "-c";
    argv[2] = (char *)CODE;
    argv[3] = "exec_race";
    argv[4] = (char *)secret;
    char *chunk = malloc(CHUNK + 1);
    if (!chunk) verdict(BROKEN, "malloc failed");
    memset(chunk, 'y', CHUNK);
    chunk[CHUNK] = 0;
    for (int i = 0; i < CHUNKS - 1; i++) argv[5 + i] = chunk;
    argv[4 + CHUNKS] = NULL;
    atomic_store(&sh_called, 1);
    execv("/bin/sh", argv);
    verdict(BROKEN, "thread 2's exec of /bin/sh failed: %s", strerror(errno));
}

int main(int argc, char **argv) {
    if (argc != 4) verdict(BROKEN, "usage: exec_race SCRIPT SECRET DELAY_US");
    const char *script = argv[1];
    secret = argv[2];
    long delay_us = atol(argv[3]);
    /* Room for 6 MiB of arguments (a quarter of the stack limit). */
    struct rlimit stack;
    if (getrlimit(RLIMIT_STACK, &stack) == 0 && stack.rlim_max != stack.rlim_cur) {
        stack.rlim_cur = stack.rlim_max;
        setrlimit(RLIMIT_STACK, &stack);
    }
    size_t len = 40 * 4096;
    char *big = malloc(len + 1);
    if (!big) verdict(BROKEN, "malloc failed");
    memset(big, 'x', len);
    big[len] = 0;
    char *script_argv[] = {(char *)script, big, NULL};
    pthread_t t;
    if (pthread_create(&t, NULL, exec_sh, NULL) != 0) verdict(BROKEN, "pthread_create failed");
    while (!atomic_load(&sh_called)) {
    }
    struct timespec pause = {0, delay_us * 1000};
    nanosleep(&pause, NULL);
    execv(script, script_argv);
    /* Thread 2's exec ends this thread as it commits. */
    fprintf(stderr, "exec_race: the exec of %s failed with %s\n", script, strerrorname_np(errno));
    sleep(10);
    verdict(BROKEN, "thread 2's exec did not end thread 1");
}
