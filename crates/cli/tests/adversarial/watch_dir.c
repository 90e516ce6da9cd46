/*
 * Attack: watch a directory the domain may not watch, and learn the
 * names made in it, though it may not list it. SELinux checks, at
 * inotify_add_watch, `read` of what is watched (path_permission), then
 * `watch`, with `watch_reads` for a mask asking for reads (IN_ACCESS,
 * IN_CLOSE_NOWRITE). fanotify sees no watch.
 *
 * Usage: watch_dir watch PATH names|reads [READY]: an inotify watch of
 * PATH for the names made in it (IN_CREATE), and for reads too
 * (IN_ACCESS) with `reads`. It succeeds if the watch is made. With
 * READY, it then creates READY (the scenario's sign to make a name in
 * PATH; made whatever the watch's fate) and reports the first name it
 * learns within 5 seconds.
 *
 * Usage: watch_dir watchfd PATH: the watch for names made, by descriptor
 * as libsystemd makes it: PATH opened O_PATH (which no open check sees),
 * then watched as /proc/self/fd/N. It succeeds if the watch is made.
 *
 * Usage: watch_dir fanotify PATH: the same watch by fanotify (an inode
 * mark for names made, as an unprivileged process may make one), which
 * SELinux checks alike (`read`, `watch`). It succeeds if the mark is made.
 *
 * Usage: watch_dir dnotify PATH: the watch for names made by dnotify
 * (`fcntl(F_NOTIFY)` on a descriptor of PATH), which SELinux checks as
 * `watch` too. It succeeds if the watch is made.
 *
 * Usage: watch_dir race ALLOWED DENIED: the path in memory flips between
 * ALLOWED and DENIED (a thread writing it) while 3000 watches are made
 * from it; it succeeds if one lands on DENIED (a watch descriptor other
 * than ALLOWED's). The daemon must watch what it checked, not let the
 * kernel read the path again.
 */
#include "adversarial.h"

#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>

static int watch(const char *path, const char *what, const char *ready) {
    int in = inotify_init1(IN_CLOEXEC);
    if (in < 0) verdict(BROKEN, "inotify_init1: %s", strerror(errno));
    unsigned mask = IN_CREATE | (strcmp(what, "reads") == 0 ? IN_ACCESS : 0);
    int wd = inotify_add_watch(in, path, mask);
    int err = errno;
    if (ready) {
        int fd = open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) verdict(BROKEN, "creating %s: %s", ready, strerror(errno));
        close(fd);
    }
    if (wd < 0) FAILED(err, "watching %s for %s", path, what);
    if (!ready) verdict(SUCCEEDED, "watching %s for %s", path, what);
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    struct pollfd p = {.fd = in, .events = POLLIN};
    if (poll(&p, 1, 5000) != 1) verdict(SUCCEEDED, "watching %s (no name made within 5 s)", path);
    ssize_t n = read(in, buf, sizeof buf);
    if (n < (ssize_t)sizeof(struct inotify_event)) verdict(BROKEN, "reading the event: %s", strerror(errno));
    const struct inotify_event *ev = (const struct inotify_event *)buf;
    if (ev->wd != wd) verdict(BROKEN, "an event of watch %d, not %d", ev->wd, wd);
    verdict(SUCCEEDED, "watching %s, learned the name %s", path, ev->len ? ev->name : "(none)");
}

static int watch_by_fd(const char *path) {
    int in = inotify_init1(IN_CLOEXEC);
    if (in < 0) verdict(BROKEN, "inotify_init1: %s", strerror(errno));
    int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) verdict(BROKEN, "opening %s O_PATH: %s", path, strerror(errno));
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    if (inotify_add_watch(in, link, IN_CREATE) < 0) FAILED(errno, "watching %s as %s", path, link);
    verdict(SUCCEEDED, "watching %s as %s", path, link);
}

static int fanotify_watch(const char *path) {
    int fd = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME | FAN_CLOEXEC, O_RDONLY);
    if (fd < 0) FAILED(errno, "fanotify_init");
    if (fanotify_mark(fd, FAN_MARK_ADD, FAN_CREATE | FAN_ONDIR, AT_FDCWD, path) != 0) FAILED(errno, "marking %s", path);
    verdict(SUCCEEDED, "fanotify watches %s", path);
}

static int dnotify_watch(const char *path) {
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) verdict(BROKEN, "opening %s: %s", path, strerror(errno));
    if (fcntl(fd, F_NOTIFY, DN_CREATE | DN_MULTISHOT) != 0) FAILED(errno, "F_NOTIFY on %s", path);
    verdict(SUCCEEDED, "dnotify watches %s", path);
}

static char shared_path[PATH_MAX];
static const char *flips[2];
static volatile int racing = 1;

static void *flip(void *arg) {
    (void)arg;
    for (unsigned i = 0; racing; i++) strcpy(shared_path, flips[i & 1]);
    return NULL;
}

static int race(const char *allowed, const char *denied) {
    if (strlen(allowed) >= PATH_MAX || strlen(denied) >= PATH_MAX) verdict(BROKEN, "paths too long");
    int in = inotify_init1(IN_CLOEXEC);
    if (in < 0) verdict(BROKEN, "inotify_init1: %s", strerror(errno));
    int allowed_wd = inotify_add_watch(in, allowed, IN_CREATE);
    if (allowed_wd < 0) verdict(BROKEN, "watching %s: %s", allowed, strerror(errno));
    flips[0] = allowed;
    flips[1] = denied;
    strcpy(shared_path, allowed);
    pthread_t t;
    if (pthread_create(&t, NULL, flip, NULL) != 0) verdict(BROKEN, "pthread_create");
    int refused = 0, allowed_again = 0;
    for (int i = 0; i < 3000; i++) {
        int wd = inotify_add_watch(in, shared_path, IN_CREATE);
        if (wd >= 0 && wd != allowed_wd) {
            racing = 0;
            verdict(SUCCEEDED, "watched %s after %d calls", denied, i + 1);
        }
        if (wd >= 0) allowed_again++;
        else if (is_denial(errno)) refused++;
    }
    racing = 0;
    pthread_join(t, NULL);
    if (!refused) verdict(BROKEN, "no watch was refused (%d on %s)", allowed_again, allowed);
    verdict(BLOCKED, "never watched %s: %d refused, %d on %s", denied, refused, allowed_again, allowed);
}

int main(int argc, char **argv) {
    if ((argc == 4 || argc == 5) && !strcmp(argv[1], "watch")) return watch(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
    if (argc == 3 && !strcmp(argv[1], "fanotify")) return fanotify_watch(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "watchfd")) return watch_by_fd(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "dnotify")) return dnotify_watch(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "race")) return race(argv[2], argv[3]);
    fprintf(stderr, "usage: watch_dir watch PATH names|reads [READY] | watchfd PATH | fanotify PATH | race ALLOWED DENIED\n");
    return BROKEN;
}
