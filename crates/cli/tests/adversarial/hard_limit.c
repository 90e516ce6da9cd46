/*
 * hard_limit: a process changes its own hard resource limits, which
 * SELinux lets only a domain with `process setrlimit` on itself do (the
 * hard limit is what an exec transition resets the soft one to).
 *
 *   hard_limit lower:   setrlimit (glibc: prlimit64 of pid 0) lowers the
 *                       hard RLIMIT_NOFILE by one;
 *   hard_limit syscall: the same by the setrlimit system call;
 *   hard_limit tid:     the same by prlimit64 naming its own thread id;
 *   hard_limit race:    one thread sets the limits it has (hard kept)
 *                       again and again while another flips the hard
 *                       limit in that memory one lower: checked with the
 *                       hard limit kept, a call the kernel then makes
 *                       reads it lowered (at most 3 s);
 *   hard_limit soft:    lowers the soft limit alone (any domain may),
 *                       asking for the old limits: succeeds when both are
 *                       as the kernel gives them;
 *   hard_limit readonly: the same with the old limits' address in a
 *                       read-only page, where the kernel answers EFAULT:
 *                       succeeds if the page was written.
 */
#include "adversarial.h" /* first: it defines _GNU_SOURCE */

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

static struct rlimit64 shared;
static atomic_int done;

static rlim64_t hard_now(void) {
    struct rlimit64 now;
    if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &now) != 0) verdict(BROKEN, "getrlimit: %s", strerror(errno));
    return now.rlim_max;
}

static void *flip(void *arg) {
    rlim64_t hard = *(rlim64_t *)arg;
    while (!atomic_load(&done)) {
        __atomic_store_n(&shared.rlim_max, hard - 1, __ATOMIC_RELAXED);
        __atomic_store_n(&shared.rlim_max, hard, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) verdict(BROKEN, "usage: hard_limit lower|syscall|tid|race|soft|readonly");
    const char *how = argv[1];
    struct rlimit64 before;
    if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &before) != 0) verdict(BROKEN, "getrlimit");
    if (before.rlim_max < 64 || before.rlim_cur < 32) verdict(BROKEN, "open files limited to %lu", before.rlim_max);
    struct rlimit64 lower = {before.rlim_cur < before.rlim_max ? before.rlim_cur : before.rlim_max - 1,
                             before.rlim_max - 1};
    long rc;
    if (!strcmp(how, "lower")) {
        struct rlimit l = {lower.rlim_cur, lower.rlim_max};
        rc = setrlimit(RLIMIT_NOFILE, &l);
    } else if (!strcmp(how, "syscall")) {
        struct rlimit l = {lower.rlim_cur, lower.rlim_max};
        rc = syscall(SYS_setrlimit, RLIMIT_NOFILE, &l);
    } else if (!strcmp(how, "tid")) {
        rc = syscall(SYS_prlimit64, gettid(), RLIMIT_NOFILE, &lower, NULL);
    } else if (!strcmp(how, "race")) {
        shared = (struct rlimit64){lower.rlim_cur, before.rlim_max};
        rlim64_t hard = before.rlim_max;
        pthread_t t;
        if (pthread_create(&t, NULL, flip, &hard) != 0) verdict(BROKEN, "pthread_create");
        double end = now_s() + 3;
        long calls = 0, refused = 0;
        while (now_s() < end && calls < 200000) {
            calls++;
            if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &shared, NULL) != 0) {
                if (!is_denial(errno)) verdict(BROKEN, "prlimit64: %s", strerror(errno));
                refused++;
            }
            if (hard_now() != hard) break;
        }
        atomic_store(&done, 1);
        pthread_join(t, NULL);
        if (hard_now() != hard)
            verdict(SUCCEEDED, "the hard limit went from %lu to %lu at call %ld (%ld refused)", hard, hard_now(),
                    calls, refused);
        verdict(BLOCKED, "the hard limit stayed %lu over %ld calls (%ld refused)", hard, calls, refused);
    } else if (!strcmp(how, "soft") || !strcmp(how, "readonly")) {
        struct rlimit64 soft = {before.rlim_cur - 1, before.rlim_max};
        struct rlimit64 *old = malloc(sizeof *old);
        int readonly = !strcmp(how, "readonly");
        if (readonly) {
            old = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (old == MAP_FAILED) verdict(BROKEN, "mmap");
        }
        rc = syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &soft, old);
        int err = errno;
        struct rlimit64 after;
        syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &after);
        if (readonly) {
            if (old->rlim_cur || old->rlim_max)
                verdict(SUCCEEDED, "the old limits were written into a read-only page (rc %ld)", rc);
            if (rc == 0 || err != EFAULT) verdict(BROKEN, "rc %ld, %s, not EFAULT", rc, strerror(err));
            verdict(BLOCKED, "EFAULT, the read-only page unchanged, as the kernel answers");
        }
        if (rc != 0) FAILED(err, "lowering the soft limit");
        if (after.rlim_cur != soft.rlim_cur || after.rlim_max != soft.rlim_max)
            verdict(BROKEN, "set %lu:%lu, got %lu:%lu", soft.rlim_cur, soft.rlim_max, after.rlim_cur,
                    after.rlim_max);
        if (old->rlim_cur != before.rlim_cur || old->rlim_max != before.rlim_max)
            verdict(BROKEN, "old limits %lu:%lu, were %lu:%lu", old->rlim_cur, old->rlim_max, before.rlim_cur,
                    before.rlim_max);
        verdict(SUCCEEDED, "the soft limit went from %lu to %lu, the old limits given back", before.rlim_cur,
                after.rlim_cur);
    } else {
        verdict(BROKEN, "unknown: %s", how);
    }
    if (rc != 0) FAILED(errno, "lowering the hard limit of open files from %lu (%s)", before.rlim_max, how);
    if (hard_now() != lower.rlim_max) verdict(BROKEN, "the call succeeded, the hard limit is %lu", hard_now());
    verdict(SUCCEEDED, "the hard limit of open files went from %lu to %lu (%s)", before.rlim_max, lower.rlim_max,
            how);
}
