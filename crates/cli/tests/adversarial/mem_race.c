/*
 * mem_race DOMAIN NAME PROGRAM [ARG...]: starts PROGRAM ARG... (which
 * enters DOMAIN by its exec, and may run another program there) and,
 * from the moment it starts, opens its /proc/PID/mem as fast as it can,
 * to read the stack of its image called NAME before the daemon makes
 * it non-dumpable. Succeeds (exit 0) if 8 bytes of that stack are read
 * through a descriptor opened once that image existed: the other
 * domain's memory.
 */
#include "adversarial.h" /* first: it defines _GNU_SOURCE */

#include <sys/wait.h>

/* The name (`comm`) and stack start of pid's image, from its stat;
 * 0 when the stack start is hidden (a non-dumpable process's). */
static int image(pid_t pid, char *comm, size_t size, unsigned long *stack) {
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0) return -1;
    text[n] = 0;
    char *open_paren = strchr(text, '('), *close_paren = strrchr(text, ')');
    if (!open_paren || !close_paren) return -1;
    snprintf(comm, size, "%.*s", (int)(close_paren - open_paren - 1), open_paren + 1);
    /* Field 28 (startstack); field 3 follows ") ". */
    char *p = close_paren + 2;
    for (int field = 3; field < 28 && p; field++) {
        p = strchr(p, ' ');
        if (p) p++;
    }
    *stack = p ? strtoul(p, NULL, 10) : 0;
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) verdict(BROKEN, "usage: mem_race DOMAIN NAME PROGRAM [ARG...]");
    const char *domain = argv[1];
    char name[16];
    snprintf(name, sizeof name, "%s", argv[2]);
    int go[2];
    if (pipe(go) < 0) verdict(BROKEN, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) verdict(BROKEN, "fork: %s", strerror(errno));
    if (pid == 0) {
        char c;
        close(go[1]);
        if (read(go[0], &c, 1) < 0) _exit(127);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, 1);
        execv(argv[3], argv + 3);
        _exit(127);
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
    close(go[0]);
    close(go[1]); /* the child execs now */
    int seen = 0, denied = 0, tries = 0;
    for (double end = now_s() + 1.5; now_s() < end;) {
        char comm[64];
        unsigned long stack = 0;
        if (image(pid, comm, sizeof comm, &stack) < 0) break;
        /* Only once the new image exists: a descriptor opened before its
         * exec holds the old image, which is gone after it. */
        if (strcmp(comm, name) != 0) continue;
        seen = 1;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            if (!is_denial(errno)) verdict(BROKEN, "open %s: %s", path, strerror(errno));
            denied = 1;
            continue;
        }
        tries++;
        unsigned long word;
        ssize_t n = stack ? pread(fd, &word, sizeof word, (off_t)stack) : 0;
        close(fd);
        if (n == (ssize_t)sizeof word)
            verdict(SUCCEEDED, "read the stack of pid %d (%s) through %s", (int)pid, name, path);
    }
    if (!seen) verdict(BROKEN, "pid %d never ran %s", (int)pid, name);
    wait_for_domain(pid, domain);
    if (!denied) verdict(BROKEN, "opened %s %d times and read nothing, without a denial", path, tries);
    verdict(BLOCKED, "%s was refused once pid %d ran %s in %s (%d opens read nothing)", path, (int)pid, name,
            domain, tries);
}
