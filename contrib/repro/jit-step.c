/* A JIT's step, N times (contrib/repro/exec-memory.sh): an anonymous page
 * mapped writable, one `ret` written, made executable with mprotect (or,
 * for "data", left readable), called, unmapped; prints the time per step.
 *   jit-step N exec|data LABEL */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
int main(int argc, char **argv) {
    if (argc != 4 || atoi(argv[1]) <= 0) {
        fprintf(stderr, "usage: %s N exec|data LABEL\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[1]), exec = !strcmp(argv[2], "exec");
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++) {
        unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) { perror("mmap"); return 1; }
        *p = 0xc3;
        if (mprotect(p, 4096, PROT_READ | (exec ? PROT_EXEC : 0))) { perror("mprotect"); return 1; }
        if (exec) ((void (*)(void))p)();
        munmap(p, 4096);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%s: %.2f us per round\n", argv[3], ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n / 1e3);
    return 0;
}
