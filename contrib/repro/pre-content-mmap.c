/* Does FAN_PRE_ACCESS (fanotify pre-content events, Linux 6.14+) see
 * mappings? Used by pre-content-mmap.sh; docs/security.md quotes it.
 *
 * Marks the filesystem of FILE with FAN_PRE_ACCESS in a pre-content
 * group (allowing every event), then a child: read()s the file, mmap()s
 * it, touches every page, drops the page cache, touches every page again.
 * Prints the events counted after each phase. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef FAN_PRE_ACCESS
#define FAN_PRE_ACCESS 0x00100000
#endif
#define SIZE (1 << 20)

static void child(const char *path, int tell) {
    int f = open(path, O_RDONLY);
    char b[4096];
    if (f < 0 || pread(f, b, sizeof b, 0) < 0)
        _exit(1);
    write(tell, "1", 1);
    sleep(1);
    char *m = mmap(0, SIZE, PROT_READ, MAP_SHARED, f, 0);
    if (m == MAP_FAILED)
        _exit(1);
    write(tell, "2", 1);
    sleep(1);
    volatile char s = 0;
    for (int i = 0; i < SIZE; i += 4096)
        s += m[i];
    write(tell, "3", 1);
    sleep(1);
    posix_fadvise(f, 0, 0, POSIX_FADV_DONTNEED);
    for (int i = 0; i < SIZE; i += 4096)
        s += m[i];
    write(tell, "4", 1);
    _exit(0);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE (1 MiB or more)\n", argv[0]);
        return 2;
    }
    int fan = fanotify_init(FAN_CLASS_PRE_CONTENT | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY);
    if (fan < 0) {
        perror("fanotify_init");
        return 1;
    }
    if (fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_PRE_ACCESS, AT_FDCWD, argv[1])) {
        printf("FAN_PRE_ACCESS mark on %s's filesystem: %s\n", argv[1], strerror(errno));
        return 0;
    }
    int p[2];
    if (pipe(p))
        return 1;
    pid_t c = fork();
    if (c == 0)
        child(argv[1], p[1]);
    const char *phase[] = {"", "read()", "mmap()", "faults, pages cached", "faults, page cache dropped"};
    int events = 0, done = 0;
    for (int round = 0; round < 1000 && !done; round++) {
        struct pollfd pf[2] = {{fan, POLLIN, 0}, {p[0], POLLIN, 0}};
        poll(pf, 2, 10);
        char buf[4096];
        ssize_t n = read(fan, buf, sizeof buf);
        for (struct fanotify_event_metadata *e = (void *)buf; n > 0 && FAN_EVENT_OK(e, n); e = FAN_EVENT_NEXT(e, n)) {
            events += !!(e->mask & FAN_PRE_ACCESS);
            struct fanotify_response r = {e->fd, FAN_ALLOW};
            write(fan, &r, sizeof r);
            close(e->fd);
        }
        if (pf[1].revents & POLLIN) {
            char x;
            if (read(p[0], &x, 1) == 1) {
                printf("after %s: %d FAN_PRE_ACCESS events in all\n", phase[x - '0'], events);
                done = x == '4';
            }
        }
    }
    waitpid(c, 0, 0);
    return 0;
}
