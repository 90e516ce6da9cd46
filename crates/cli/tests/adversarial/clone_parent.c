/*
 * clone_parent SECRET: attack 2. A child made with clone(CLONE_PARENT)
 * is its grandparent's child: a process table that follows the kernel's
 * fork reports by parent could give it the grandparent's (unconfined)
 * domain. The child reads SECRET and reports through a pipe; its parent
 * (which cannot wait for it: it is not its child) reads the pipe.
 */
#include "adversarial.h" /* first: it defines _GNU_SOURCE */

#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>

int main(int argc, char **argv) {
    if (argc != 2) verdict(BROKEN, "usage: clone_parent SECRET");
    int p[2];
    if (pipe(p) != 0) verdict(BROKEN, "pipe: %s", strerror(errno));
    /* The raw syscall without a new stack: the child returns here like
     * fork's, on a copy of the stack. */
    long pid = syscall(SYS_clone, (unsigned long)(CLONE_PARENT | SIGCHLD), 0UL, 0UL, 0UL, 0UL);
    if (pid < 0) FAILED(errno, "clone(CLONE_PARENT)");
    if (pid == 0) {
        close(p[0]);
        char line[256], msg[512];
        int err = read_line(argv[1], line, sizeof line);
        int n = err ? snprintf(msg, sizeof msg, "E%d %s", err, strerror(err)) : snprintf(msg, sizeof msg, "OK %s", line);
        if (write(p[1], msg, (size_t)n) != n) _exit(3);
        _exit(0);
    }
    close(p[1]);
    char msg[512];
    size_t got = 0;
    ssize_t n;
    while (got < sizeof msg - 1 && (n = read(p[0], msg + got, sizeof msg - 1 - got)) > 0) got += (size_t)n;
    msg[got] = 0;
    if (strncmp(msg, "OK ", 3) == 0)
        verdict(SUCCEEDED, "the CLONE_PARENT child %ld read %s: %s", pid, argv[1], msg + 3);
    int err;
    if (sscanf(msg, "E%d", &err) == 1) FAILED(err, "the CLONE_PARENT child %ld reading %s", pid, argv[1]);
    verdict(BROKEN, "the CLONE_PARENT child %ld reported nothing", pid);
}
