/*
 * Attack: steer a process that entered another domain through the
 * working directory it still shares with the old one. A child made with
 * clone(CLONE_FS) (no CLONE_THREAD) shares this process's working
 * directory, root and umask; it execs PROGRAM, an exec transition into
 * a domain that may do more, and this process then changes the shared
 * working directory: every relative name the new domain uses now lands
 * where the old domain chose, while it runs. SELinux refuses such an
 * exec (EPERM) unless the old domain may `process { share }` with the
 * new one.
 *
 * Usage: clone_fs PROGRAM DIR: the child runs `PROGRAM -c 'sleep 1;
 * pwd -P'` (a shell), its output through a pipe; once its exec
 * committed (a close-on-exec pipe closed), this process changes
 * directory to DIR. It succeeds if the child, in its new image, prints
 * DIR; it is blocked if the exec is refused (EPERM, EACCES) or the
 * child prints its own directory.
 */
#include "adversarial.h"
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>

int main(int argc, char **argv) {
    if (argc != 3) verdict(BROKEN, "usage: clone_fs PROGRAM DIR");
    int status[2], out[2];
    if (pipe2(status, O_CLOEXEC) != 0 || pipe(out) != 0) verdict(BROKEN, "pipe: %s", strerror(errno));
    long child = syscall(SYS_clone, CLONE_FS | SIGCHLD, 0, 0, 0, 0);
    if (child < 0) FAILED(errno, "clone(CLONE_FS)");
    if (child == 0) {
        dup2(out[1], 1);
        char *args[] = {argv[1], "-c", "sleep 1; pwd -P", NULL};
        execv(argv[1], args);
        int err = errno;
        if (write(status[1], &err, sizeof err) != (ssize_t)sizeof err) _exit(3);
        _exit(127);
    }
    close(status[1]);
    close(out[1]);
    int err = 0;
    ssize_t got = read(status[0], &err, sizeof err);
    if (got == (ssize_t)sizeof err) {
        waitpid((pid_t)child, NULL, 0);
        FAILED(err, "the child's exec of %s", argv[1]);
    }
    /* The exec committed: its close-on-exec pipe closed. */
    if (chdir(argv[2]) != 0) verdict(BROKEN, "chdir %s: %s", argv[2], strerror(errno));
    char line[4096] = {0};
    ssize_t n = read(out[0], line, sizeof line - 1);
    int ws = 0;
    waitpid((pid_t)child, &ws, 0);
    if (n <= 0) {
        if (WIFSIGNALED(ws)) verdict(BLOCKED, "the child was killed (signal %d) and printed nothing", WTERMSIG(ws));
        verdict(BROKEN, "the child printed nothing (status %d)", ws);
    }
    line[strcspn(line, "\n")] = 0;
    if (!strcmp(line, argv[2])) verdict(SUCCEEDED, "the new image's working directory followed ours to %s", line);
    verdict(BLOCKED, "the new image stayed in %s", line);
}
