/*
 * Attack: the old domain chooses the signal state of a process that
 * enters another domain. A child is left with METHOD's state, then
 * executes PROGRAM (a sleep), whose exec moves it into DOMAIN. SELinux
 * resets the interval timers, pending, ignored and blocked signals at a
 * transition unless the policy grants `process siginh`, and the kernel
 * clears the parent-death signal of a secure exec.
 *
 * Usage: signal_inherit PROGRAM DOMAIN METHOD, METHOD one of
 *   state   SIGTERM ignored, SIGUSR1 blocked and pending: succeeds if any
 *           of the three is still so once the child runs in DOMAIN (its
 *           /proc/PID/status)
 *   timer   a 0.5 s real interval timer: succeeds if its SIGALRM ends
 *           the child in DOMAIN (PROGRAM sleeps 2 s)
 *   pdeath  the child's parent-death signal is SIGKILL, and its parent (a
 *           thread) ends once the child runs in DOMAIN: succeeds if the
 *           child dies of it
 */
#include "adversarial.h"
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/wait.h>

static const char *program, *domain, *method;

/* Waits until `pid` runs in DOMAIN, then a little longer: the daemon
 * resets the state as it moves it there. */
static void settled(pid_t pid) {
    wait_for_domain(pid, domain);
    usleep(200000);
}

/* The hexadecimal mask of `field` in /proc/PID/status. */
static unsigned long long status_mask(pid_t pid, const char *field) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) verdict(BROKEN, "%s: %s", path, strerror(errno));
    unsigned long long mask = 0;
    int found = 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, field, strlen(field))) found = sscanf(line + strlen(field), "%llx", &mask) == 1;
    fclose(f);
    if (!found) verdict(BROKEN, "no %s in %s", field, path);
    return mask;
}

#define BIT(sig) (1ULL << ((sig) - 1))

/* Forks the child, which sets METHOD's state and executes PROGRAM. */
static pid_t start(const char *seconds) {
    pid_t pid = fork();
    if (pid < 0) verdict(BROKEN, "fork: %s", strerror(errno));
    if (pid) return pid;
    if (!strcmp(method, "state")) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGUSR1);
        signal(SIGTERM, SIG_IGN);
        sigprocmask(SIG_BLOCK, &set, NULL);
        raise(SIGUSR1);
    } else if (!strcmp(method, "timer")) {
        struct itimerval t = {.it_value = {.tv_usec = 500000}};
        setitimer(ITIMER_REAL, &t, NULL);
    } else if (!strcmp(method, "pdeath")) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
    }
    execl(program, program, seconds, (char *)NULL);
    printf("broken: exec %s: %s\n", program, strerror(errno));
    _exit(BROKEN);
}

/* How the child ended: SIGNAL means the attack's signal reached it. */
static void ended(pid_t pid, int signal, const char *what) {
    int status;
    if (waitpid(pid, &status, 0) != pid) verdict(BROKEN, "waitpid: %s", strerror(errno));
    if (WIFSIGNALED(status) && WTERMSIG(status) == signal)
        verdict(SUCCEEDED, "%s ended pid %d in %s", what, (int)pid, domain);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        verdict(BLOCKED, "pid %d outlived %s in %s", (int)pid, what, domain);
    verdict(BROKEN, "pid %d ended with status %#x", (int)pid, status);
}

static pid_t orphan;

/* The child's parent: ends once the child runs in DOMAIN. */
static void *parent_thread(void *unused) {
    (void)unused;
    orphan = start("2");
    settled(orphan);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4) verdict(BROKEN, "usage: signal_inherit PROGRAM DOMAIN state|timer|pdeath");
    program = argv[1], domain = argv[2], method = argv[3];
    if (!strcmp(method, "state")) {
        pid_t pid = start("5");
        settled(pid);
        unsigned long long ignored = status_mask(pid, "SigIgn:") & BIT(SIGTERM);
        unsigned long long blocked = status_mask(pid, "SigBlk:") & BIT(SIGUSR1);
        unsigned long long pending = (status_mask(pid, "SigPnd:") | status_mask(pid, "ShdPnd:")) & BIT(SIGUSR1);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        if (ignored || blocked || pending)
            verdict(SUCCEEDED, "pid %d in %s kept the old domain's signals:%s%s%s", (int)pid, domain,
                    ignored ? " SIGTERM ignored" : "", blocked ? " SIGUSR1 blocked" : "",
                    pending ? " SIGUSR1 pending" : "");
        verdict(BLOCKED, "pid %d in %s: nothing ignored, blocked or pending", (int)pid, domain);
    }
    if (!strcmp(method, "timer")) {
        pid_t pid = start("2");
        settled(pid);
        ended(pid, SIGALRM, "the old domain's timer");
    }
    if (!strcmp(method, "pdeath")) {
        pthread_t t;
        if (pthread_create(&t, NULL, parent_thread, NULL) != 0) verdict(BROKEN, "pthread_create");
        pthread_join(t, NULL);
        /* The thread that forked it has ended; its parent is now this one. */
        ended(orphan, SIGKILL, "the parent-death signal");
    }
    verdict(BROKEN, "unknown method %s", method);
}
