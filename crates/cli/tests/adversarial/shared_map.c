/*
 * shared_map: a failed exec made to look committed by another process
 * sharing the exec'ing process's memory map.
 *
 *   shared_map SCRIPT SECRET
 *
 * SCRIPT is the entrypoint of a domain that may read SECRET, a `#!` script
 * whose interpreter is this very program: the process execing it runs
 * the image the exec would give it, so the daemon tells a committed exec
 * from a failed one by the process's memory map (its layout in
 * /proc/PID/stat). P (this process) makes X with clone(CLONE_VM): X shares
 * P's map. P then waits in a vfork of its own child C (clone with
 * CLONE_VFORK, its own copy of the map). X execs SCRIPT with an argument
 * over MAX_ARG_STRLEN and 300,000 environment strings: decided as the
 * transition, it spends milliseconds copying them and fails with E2BIG.
 * C waits until X's exec was answered, then ends; P, released, changes
 * the map's layout (PR_SET_MM_MAP, which needs no privilege), which X
 * shares. If the daemon then takes X's failed exec for a committed one, X
 * runs its own code in the new domain: it waits out the exec cgroup and
 * reads SECRET.
 *
 *   shared_map --interpreter: what SCRIPT runs if its exec commits
 *   (broken: the exec was to fail).
 */
#include "adversarial.h" /* first: it defines _GNU_SOURCE */

#include <linux/prctl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static const char *script, *secret;
static char stack_x[1 << 16], stack_c[1 << 16];
static volatile pid_t x_pid;

static char state_of(pid_t pid) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    if (read_line(path, buf, sizeof buf) != 0) return '?';
    char *s = strrchr(buf, ')');
    return s && s[1] && s[2] ? s[2] : '?';
}

static int in_exec_cgroup(void) {
    char buf[4096];
    int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (fd >= 0) close(fd);
    if (n < 0) return 0;
    buf[n] = 0;
    return strstr(buf, "/exec.") != NULL;
}

/* X: the exec, then (failed) its own code. */
static int exec_then_read(void *unused) {
    (void)unused;
    int envc = 300000;
    char **envp = malloc(sizeof(char *) * (envc + 1));
    char *big = malloc(200000);
    if (!envp || !big) _exit(BROKEN);
    for (int i = 0; i < envc; i++) envp[i] = "a";
    envp[envc] = NULL;
    memset(big, 'x', 199999);
    big[199999] = 0;
    char *argv[] = {(char *)script, big, NULL};
    execve(script, argv, envp);
    int err = errno;
    for (int i = 0; i < 200 && in_exec_cgroup(); i++) {
        struct timespec tick = {0, 10 * 1000 * 1000};
        nanosleep(&tick, NULL);
    }
    char cg[256] = "?", line[256];
    int cgfd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
    char all[4096];
    ssize_t an = cgfd < 0 ? -1 : read(cgfd, all, sizeof all - 1);
    if (cgfd >= 0) close(cgfd);
    if (an > 0) {
        all[an] = 0;
        char *u = strstr(all, "0::");
        if (u) snprintf(cg, sizeof cg, "%.*s", (int)strcspn(u + 3, "\n"), u + 3);
    }
    int rerr = read_line(secret, line, sizeof line);
    if (rerr == 0) verdict(SUCCEEDED, "the failed exec (%s) passed for a committed one: in %s, read %s: %s",
                           strerrorname_np(err), cg, secret, line);
    verdict(is_denial(rerr) ? BLOCKED : BROKEN, "after its exec (%s), in %s, %s could not be read: %s",
            strerrorname_np(err), cg, secret, strerror(rerr));
}

/* C: ends once X's exec was answered (X left its wait, state D). */
static int release_later(void *unused) {
    (void)unused;
    double start = now_s();
    int seen = 0;
    while (now_s() - start < 2) {
        char c = state_of(x_pid);
        if (c == 'D') seen = 1;
        else if (seen) break;
    }
    _exit(0);
}

int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "--interpreter")) verdict(BROKEN, "the exec committed: it was to fail");
    if (argc != 3) verdict(BROKEN, "usage: shared_map SCRIPT SECRET");
    script = argv[1];
    secret = argv[2];
    struct rlimit stack;
    if (getrlimit(RLIMIT_STACK, &stack) == 0 && stack.rlim_max != stack.rlim_cur) {
        stack.rlim_cur = stack.rlim_max;
        setrlimit(RLIMIT_STACK, &stack);
    }
    x_pid = clone(exec_then_read, stack_x + sizeof stack_x, CLONE_VM | SIGCHLD, NULL);
    if (x_pid < 0) verdict(BROKEN, "clone(CLONE_VM): %s", strerror(errno));
    pid_t c = clone(release_later, stack_c + sizeof stack_c, CLONE_VFORK | SIGCHLD, NULL);
    if (c < 0) verdict(BROKEN, "clone(CLONE_VFORK): %s", strerror(errno));
    /* Released: a new layout for the map X shares (arg_end moved). */
    struct prctl_mm_map m = {0};
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/stat", getpid());
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (fd >= 0) close(fd);
    if (n > 0) {
        buf[n] = 0;
        unsigned long v[64];
        int k = 0;
        for (char *t = strtok(strrchr(buf, ')') + 1, " \n"); t && k < 64; t = strtok(NULL, " \n")) v[k++] = strtoul(t, 0, 10);
        if (k > 48) {
            m.start_code = v[23], m.end_code = v[24], m.start_stack = v[25], m.start_data = v[42];
            m.end_data = v[43], m.start_brk = v[44], m.arg_start = v[45], m.arg_end = v[45];
            m.env_start = v[47], m.env_end = v[48], m.brk = syscall(SYS_brk, 0), m.exe_fd = (unsigned)-1;
            if (prctl(PR_SET_MM, PR_SET_MM_MAP, &m, sizeof m, 0) != 0) fprintf(stderr, "shared_map: PR_SET_MM_MAP: %s\n", strerror(errno));
        }
    }
    waitpid(c, NULL, __WALL);
    int status = 0;
    if (waitpid(x_pid, &status, __WALL) != x_pid) verdict(BROKEN, "waitpid: %s", strerror(errno));
    return WIFEXITED(status) ? WEXITSTATUS(status) : BROKEN;
}
