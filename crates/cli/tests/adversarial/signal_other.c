/*
 * Attack: the old domain signals a process that entered another domain.
 * A child executes PROGRAM (with the argument 5: a sleep), whose exec
 * moves it into DOMAIN; once it is there, the parent signals it by
 * METHOD. SELinux checks `process { signal }` (SIGKILL `sigkill`,
 * SIGSTOP `sigstop`, 0 `signull`) from the sender's domain to the
 * receiver's, whichever call names it.
 *
 * Usage: signal_other PROGRAM DOMAIN METHOD, METHOD one of
 *   kill      kill(pid, SIGTERM)
 *   kill9     kill(pid, SIGKILL)
 *   stop      kill(pid, SIGSTOP)
 *   probe     kill(pid, 0): succeeds if the call returns 0
 *   tkill     tkill(pid, SIGTERM)
 *   tgkill    tgkill(pid, pid, SIGTERM)
 *   sigqueue  rt_sigqueueinfo (sigqueue(3)), SIGTERM
 *   tgqueue   rt_tgsigqueueinfo, SIGTERM
 *   group     kill(-pgid, SIGTERM), the child leading its own group
 *   mygroup   kill(0, SIGTERM), the child in the parent's group (the
 *             parent ignores SIGTERM)
 *   all       kill(-1, SIGTERM) (the parent ignores SIGTERM; confined to
 *             the sandbox by Landlock: run it sandboxed only)
 *   pidfd     pidfd_send_signal(pidfd, SIGTERM)
 *   sigio     fcntl(F_SETOWN) of a pipe's read end to the child, O_ASYNC,
 *             then a write: the kernel sends SIGIO
 *   sigio_early  the same, F_SETOWN made before the child's exec (while
 *             it is in the parent's domain), the write after: blocked if
 *             the child outlives it (its owner was taken away)
 * It succeeds if the child died of the signal (stopped, for stop).
 */
#include "adversarial.h"
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* A pipe whose read end signals `pid` (SIGIO) when written to. */
static int async_pipe[2] = {-1, -1};

static int own_pipe(pid_t pid) {
    if (pipe(async_pipe) != 0) verdict(BROKEN, "pipe: %s", strerror(errno));
    if (fcntl(async_pipe[0], F_SETOWN, pid) != 0) return -1;
    if (fcntl(async_pipe[0], F_SETFL, O_ASYNC | O_NONBLOCK) != 0) verdict(BROKEN, "O_ASYNC: %s", strerror(errno));
    return 0;
}

static long ring(pid_t pid) {
    (void)pid;
    if (write(async_pipe[1], "x", 1) != 1) verdict(BROKEN, "write: %s", strerror(errno));
    return 0;
}

static long send(const char *method, pid_t pid) {
    if (!strcmp(method, "kill")) return kill(pid, SIGTERM);
    if (!strcmp(method, "kill9")) return kill(pid, SIGKILL);
    if (!strcmp(method, "stop")) return kill(pid, SIGSTOP);
    if (!strcmp(method, "probe")) return kill(pid, 0);
    if (!strcmp(method, "tkill")) return syscall(SYS_tkill, pid, SIGTERM);
    if (!strcmp(method, "tgkill")) return syscall(SYS_tgkill, pid, pid, SIGTERM);
    if (!strcmp(method, "sigqueue")) return sigqueue(pid, SIGTERM, (union sigval){.sival_int = 1});
    if (!strcmp(method, "tgqueue")) {
        siginfo_t info = {.si_signo = SIGTERM, .si_code = SI_QUEUE, .si_pid = getpid(), .si_uid = getuid()};
        return syscall(SYS_rt_tgsigqueueinfo, pid, pid, SIGTERM, &info);
    }
    if (!strcmp(method, "group")) return kill(-pid, SIGTERM);
    if (!strcmp(method, "mygroup")) return kill(0, SIGTERM);
    if (!strcmp(method, "all")) return kill(-1, SIGTERM);
    if (!strcmp(method, "pidfd")) {
        int fd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (fd < 0) return -1;
        return syscall(SYS_pidfd_send_signal, fd, SIGTERM, NULL, 0);
    }
    if (!strcmp(method, "sigio")) {
        if (own_pipe(pid) != 0) return -1;
        return ring(pid);
    }
    if (!strcmp(method, "sigio_early")) return ring(pid);
    verdict(BROKEN, "unknown method %s", method);
}

int main(int argc, char **argv) {
    if (argc != 4) verdict(BROKEN, "usage: signal_other PROGRAM DOMAIN METHOD");
    const char *method = argv[3];
    int shared_group = !strcmp(method, "mygroup") || !strcmp(method, "all");
    if (shared_group) signal(SIGTERM, SIG_IGN);
    int early = !strcmp(method, "sigio_early"), go[2];
    if (pipe(go) != 0) verdict(BROKEN, "pipe: %s", strerror(errno));
    pid_t child = fork();
    if (child < 0) verdict(BROKEN, "fork: %s", strerror(errno));
    if (child == 0) {
        signal(SIGTERM, SIG_DFL);
        /* Outlives a refused kill: it must not hold the caller's output. */
        close(1);
        close(2);
        if (!strcmp(method, "group")) setpgid(0, 0);
        char c;
        close(go[1]);
        if (read(go[0], &c, 1) != 1) _exit(126);
        execl(argv[1], argv[1], "5", (char *)NULL);
        _exit(127);
    }
    close(go[0]);
    if (early && own_pipe(child) != 0) verdict(BROKEN, "F_SETOWN before the exec: %s", strerror(errno));
    if (write(go[1], "g", 1) != 1) verdict(BROKEN, "write: %s", strerror(errno));
    wait_for_domain(child, argv[2]);
    if (send(method, child) != 0) {
        int err = errno;
        kill(child, SIGKILL);
        if (err == ENOSYS && !strcmp(method, "pidfd")) verdict(BLOCKED, "pidfd_send_signal: %s", strerror(err));
        FAILED(err, "%s of pid %d in %s", method, (int)child, argv[2]);
    }
    if (!strcmp(method, "probe")) {
        kill(child, SIGKILL);
        verdict(SUCCEEDED, "probed pid %d in %s", (int)child, argv[2]);
    }
    int status;
    if (waitpid(child, &status, WUNTRACED) != child) verdict(BROKEN, "waitpid: %s", strerror(errno));
    int want = !strcmp(method, "kill9") ? SIGKILL : !strncmp(method, "sigio", 5) ? SIGIO : SIGTERM;
    if (!strcmp(method, "stop") && WIFSTOPPED(status)) {
        kill(child, SIGKILL);
        verdict(SUCCEEDED, "stopped pid %d in %s", (int)child, argv[2]);
    }
    if (WIFSIGNALED(status) && WTERMSIG(status) == want)
        verdict(SUCCEEDED, "%s killed pid %d in %s", method, (int)child, argv[2]);
    /* The file was ready, and no SIGIO came: it has no owner any more. */
    if (!strncmp(method, "sigio", 5) && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        verdict(BLOCKED, "pid %d in %s outlived the SIGIO of its file", (int)child, argv[2]);
    verdict(BROKEN, "%s returned 0 but the child ended with status %#x", method, status);
}
