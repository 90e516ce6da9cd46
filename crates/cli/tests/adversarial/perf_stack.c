/*
 * perf_stack PROGRAM FILE DOMAIN PATTERN: starts PROGRAM FILE 3 (which
 * enters DOMAIN by its exec, reads FILE onto its stack and runs), then
 * samples it with perf_event_open: each sample copies 8 KiB of its user
 * stack. Succeeds (exit 0) if PATTERN, the content of FILE, is in a
 * sample: the other domain's memory read without ptrace.
 */
#include "adversarial.h" /* first: it defines _GNU_SOURCE */

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define PAGE 4096
#define DATA_PAGES 64

int main(int argc, char **argv) {
    if (argc != 5) verdict(BROKEN, "usage: perf_stack PROGRAM FILE DOMAIN PATTERN");
    pid_t pid = fork();
    if (pid < 0) verdict(BROKEN, "fork: %s", strerror(errno));
    if (pid == 0) {
        /* Its verdict is not this program's. */
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, 1);
        execl(argv[1], argv[1], argv[2], "3", (char *)NULL);
        _exit(127);
    }
    wait_for_domain(pid, argv[3]);
    struct perf_event_attr a = {0};
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = 200000; /* ns of its CPU time */
    a.sample_type = PERF_SAMPLE_STACK_USER;
    a.sample_stack_user = 8192;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, pid, -1, -1, 0);
    if (fd < 0) FAILED(errno, "perf_event_open of pid %d in %s", (int)pid, argv[3]);
    unsigned char *ring = mmap(NULL, (1 + DATA_PAGES) * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ring == MAP_FAILED) verdict(BROKEN, "mmap of the samples: %s", strerror(errno));
    for (int i = 0; i < 20; i++) {
        usleep(100000);
        if (memmem(ring + PAGE, DATA_PAGES * PAGE, argv[4], strlen(argv[4])))
            verdict(SUCCEEDED, "read %s from the stack of pid %d in %s", argv[4], (int)pid, argv[3]);
    }
    verdict(BROKEN, "sampled pid %d in %s, and its stack never held %s", (int)pid, argv[3], argv[4]);
}
