/*
 * exec_noexec: attack 7, running a program the attacker may read but
 * not execute (PROG prints "adversarial-marker-ran").
 *
 *   exec_noexec ldso PROG   runs /lib64/ld-linux-x86-64.so.2 PROG: the
 *                           loader maps PROG, nobody execs it;
 *   exec_noexec memfd PROG  copies PROG into a memfd and fexecve()s it;
 *   exec_noexec memfd_exec PROG asks for an executable memfd (MFD_EXEC),
 *                           and reports whether it got one, and its owner;
 *   exec_noexec mprotect PROG maps PROG's first page read-only, then makes
 *                           it executable (mprotect);
 *   exec_noexec direct PROG execs PROG itself (the control: the exec that
 *                           lacking execute permission must stop).
 *
 * Succeeds if PROG ran (its output, read through a pipe, has the marker),
 * or for mprotect if its page became executable.
 */
#include "adversarial.h" /* first: it defines _GNU_SOURCE */

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#ifndef MFD_EXEC /* Linux 6.3; older headers lack it */
#define MFD_EXEC 0x0010U
#endif

#define LOADER "/lib64/ld-linux-x86-64.so.2"

extern char **environ;

/* mprotect: PROG's first page mapped for reading, then executable. */
static void make_executable(const char *prog) {
    int fd = open(prog, O_RDONLY | O_CLOEXEC);
    if (fd < 0) FAILED(errno, "reading %s", prog);
    void *page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    if (page == MAP_FAILED) verdict(BROKEN, "mmap of %s for reading: %s", prog, strerror(errno));
    if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0) FAILED(errno, "mprotect of %s executable", prog);
    verdict(SUCCEEDED, "a page of %s mapped for reading became executable", prog);
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[1], "ldso") != 0 && strcmp(argv[1], "memfd") != 0 &&
                      strcmp(argv[1], "direct") != 0 && strcmp(argv[1], "mprotect") != 0 &&
                      strcmp(argv[1], "memfd_exec") != 0))
        verdict(BROKEN, "usage: exec_noexec ldso|memfd|memfd_exec|mprotect|direct PROG");
    int direct = strcmp(argv[1], "direct") == 0;
    const char *prog = argv[2];
    if (strcmp(argv[1], "mprotect") == 0) make_executable(prog);
    if (strcmp(argv[1], "memfd_exec") == 0) {
        int fd = memfd_create("exec", MFD_CLOEXEC | MFD_EXEC);
        if (fd < 0) FAILED(errno, "memfd_create with MFD_EXEC");
        struct stat st;
        if (fstat(fd, &st) != 0) verdict(BROKEN, "fstat of the memfd: %s", strerror(errno));
        verdict(SUCCEEDED, "an executable memfd, mode %o, owner %u:%u", st.st_mode & 07777, st.st_uid, st.st_gid);
    }
    int memfd = -1;
    if (strcmp(argv[1], "memfd") == 0) {
        int in = open(prog, O_RDONLY | O_CLOEXEC);
        if (in < 0) FAILED(errno, "reading %s", prog);
        memfd = memfd_create("copy", MFD_CLOEXEC);
        if (memfd < 0) verdict(errno == ENOSYS ? UNSUPPORTED : BROKEN, "memfd_create: %s", strerror(errno));
        char buf[65536];
        ssize_t n;
        while ((n = read(in, buf, sizeof buf)) > 0)
            if (write(memfd, buf, (size_t)n) != n) verdict(BROKEN, "write to the memfd: %s", strerror(errno));
        if (n < 0) FAILED(errno, "reading %s", prog);
        close(in);
    }
    int p[2];
    if (pipe(p) != 0) verdict(BROKEN, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) verdict(BROKEN, "fork: %s", strerror(errno));
    if (pid == 0) {
        dup2(p[1], 1);
        dup2(p[1], 2);
        if (memfd >= 0) {
            char *args[] = {(char *)prog, NULL};
            fexecve(memfd, args, environ);
        } else if (direct) {
            char *args[] = {(char *)prog, NULL};
            execv(prog, args);
        } else {
            char *args[] = {LOADER, (char *)prog, NULL};
            execv(LOADER, args);
        }
        printf("exec failed: %s\n", strerror(errno));
        fflush(stdout);
        _exit(errno == EPERM || errno == EACCES ? 126 : 127);
    }
    close(p[1]);
    char out[4096];
    size_t got = 0;
    ssize_t n;
    while (got < sizeof out - 1 && (n = read(p[0], out + got, sizeof out - 1 - got)) > 0) got += (size_t)n;
    out[got] = 0;
    int status;
    waitpid(pid, &status, 0);
    const char *how = memfd >= 0 ? "fexecve of a memfd copy of" : direct ? "execve of" : LOADER;
    if (strstr(out, "adversarial-marker-ran")) verdict(SUCCEEDED, "%s %s ran it", how, prog);
    out[strcspn(out, "\n")] = 0;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    /* 126: the exec was denied; the loader says "Permission denied"
     * (or "Operation not permitted") when its open is, and "failed to
     * map segment" (no reason) when its executable mapping is. */
    int denied = code == 126 || strstr(out, "Permission denied") || strstr(out, "not permitted") ||
                 (code == 127 && strstr(out, "failed to map segment"));
    verdict(denied ? BLOCKED : BROKEN, "%s %s did not run it (status %d): %s", how, prog, code, out);
}
