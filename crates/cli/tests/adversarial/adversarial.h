/*
 * Shared by the attack programs of crates/cli/tests/adversarial.rs.
 *
 * Each program prints one line saying what happened and exits with:
 *   0  the attack SUCCEEDED (read the secret, wrote the read-only file,
 *      ran what it may not run);
 *   1  the attack was blocked: a step failed with EPERM or EACCES (a
 *      denial; path_move also counts Landlock's EXDEV) and nothing got
 *      through;
 *   2  inconclusive: the attack could not be carried out (a setup error);
 *   77 the kernel lacks what the attack needs (the test skips).
 */
#ifndef ADVERSARIAL_H
#define ADVERSARIAL_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <signal.h>
#include <unistd.h>

#define SUCCEEDED 0
#define BLOCKED 1
#define BROKEN 2
#define UNSUPPORTED 77

__attribute__((format(printf, 2, 3), noreturn)) static inline void verdict(int code, const char *fmt, ...) {
    static const char *const words[] = {"succeeded", "blocked", "broken"};
    const char *word = code == UNSUPPORTED ? "unsupported" : words[code];
    va_list ap;
    va_start(ap, fmt);
    printf("%s: ", word);
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
    fflush(stdout);
    _exit(code);
}

/* A failure that is a denial (what fanotify's deny answer and DAC give). */
static inline int is_denial(int err) { return err == EPERM || err == EACCES; }

/* The verdict for a step that failed with `err`. */
#define FAILED(err, what, ...) \
    verdict(is_denial(err) ? BLOCKED : BROKEN, what ": %s", ##__VA_ARGS__, strerror(err))

/*
 * Reads the first line of `path` into `buf` (without the newline).
 * Returns 0, or the errno of the open or read that failed.
 */
static inline int read_line(const char *path, char *buf, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    ssize_t n = read(fd, buf, size - 1);
    int err = errno;
    close(fd);
    if (n < 0) return err;
    buf[n] = 0;
    buf[strcspn(buf, "\n")] = 0;
    return 0;
}

static inline double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Waits (at most 3 s) until `pid` runs in `domain` (the name of its
 * cgroup v2, the line "0::/..." of /proc/PID/cgroup); else kills it and
 * gives up (BROKEN).
 */
static inline void wait_for_domain(pid_t pid, const char *domain) {
    char path[64], text[4096] = "";
    snprintf(path, sizeof path, "/proc/%d/cgroup", (int)pid);
    for (double end = now_s() + 3; now_s() < end;) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, text, sizeof text - 1);
        if (fd >= 0) close(fd);
        text[n > 0 ? n : 0] = 0;
        const char *v2 = strstr(text, "0::/");
        if (v2 && strstr(v2, domain) && !strstr(v2, "/exec.")) return;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    verdict(BROKEN, "the child did not enter %s (cgroups: %s)", domain, text);
}

#endif
