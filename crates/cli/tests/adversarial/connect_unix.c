/*
 * Attack: connect to a Unix socket whose file the domain may not write:
 * the door to another service (a container engine's, the service
 * manager's). SELinux checks, at the connect, `write` on the socket file
 * (`sock_file { write }`, unix_find_bsd's path_permission), after the
 * mode bits.
 *
 * Usage: connect_unix connect PATH: a stream socket connected to PATH;
 * it succeeds if the connect is made, and reports the first line the
 * service sends (the scenario's services name themselves and the peer
 * credentials they see).
 *
 * Usage: connect_unix dgram PATH: a datagram socket connected to PATH;
 * it succeeds if the connect is made.
 *
 * Usage: connect_unix race ALLOWED DENIED: the path in memory flips
 * between ALLOWED and DENIED (a thread writing it) while 3000 stream
 * connects are made from it; it succeeds if one reaches DENIED's service
 * (its line starts with "secret"). The daemon must connect to what it
 * checked, not let the kernel read the path again.
 */
#include "adversarial.h"

#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

/* A socket of `type` connected to `path`, or -1 with errno. */
static int connect_to(const char *path, int type) {
    int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
    if (fd < 0) verdict(BROKEN, "socket(AF_UNIX): %s", strerror(errno));
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path) verdict(BROKEN, "%s: too long", path);
    strcpy(a.sun_path, path);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

/* The first line the service sends on `fd` (within 5 seconds). */
static void first_line(int fd, char *buf, size_t size) {
    struct timeval tv = {.tv_sec = 5};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ssize_t n = read(fd, buf, size - 1);
    buf[n > 0 ? n : 0] = 0;
    buf[strcspn(buf, "\n")] = 0;
}

static int connect_stream(const char *path) {
    int fd = connect_to(path, SOCK_STREAM);
    if (fd < 0) FAILED(errno, "connecting to %s", path);
    char line[128];
    first_line(fd, line, sizeof line);
    verdict(SUCCEEDED, "connected to %s, which says: %s", path, line);
}

static int connect_dgram(const char *path) {
    if (connect_to(path, SOCK_DGRAM) < 0) FAILED(errno, "connecting a datagram socket to %s", path);
    verdict(SUCCEEDED, "connected a datagram socket to %s", path);
}

static struct sockaddr_un shared;
static const char *flips[2];
static volatile int racing = 1;

static void *flip(void *arg) {
    (void)arg;
    for (unsigned i = 0; racing; i++) strcpy(shared.sun_path, flips[i & 1]);
    return NULL;
}

static int race(const char *allowed, const char *denied) {
    if (strlen(allowed) >= sizeof shared.sun_path || strlen(denied) >= sizeof shared.sun_path)
        verdict(BROKEN, "paths too long");
    shared.sun_family = AF_UNIX;
    flips[0] = allowed;
    flips[1] = denied;
    strcpy(shared.sun_path, allowed);
    pthread_t t;
    if (pthread_create(&t, NULL, flip, NULL) != 0) verdict(BROKEN, "pthread_create");
    int refused = 0, allowed_again = 0;
    time_t end = time(NULL) + 20;
    for (int i = 0; i < 3000 && time(NULL) < end; i++) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) verdict(BROKEN, "socket(AF_UNIX): %s", strerror(errno));
        if (connect(fd, (struct sockaddr *)&shared, sizeof shared) == 0) {
            char line[128];
            first_line(fd, line, sizeof line);
            if (!strncmp(line, "secret", 6)) {
                racing = 0;
                verdict(SUCCEEDED, "reached %s after %d calls: %s", denied, i + 1, line);
            }
            allowed_again++;
        } else if (is_denial(errno)) {
            refused++;
        }
        close(fd);
    }
    racing = 0;
    pthread_join(t, NULL);
    if (!refused) verdict(BROKEN, "no connect was refused (%d to %s)", allowed_again, allowed);
    verdict(BLOCKED, "never reached %s: %d refused, %d to %s", denied, refused, allowed_again, allowed);
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "connect")) return connect_stream(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "dgram")) return connect_dgram(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "race")) return race(argv[2], argv[3]);
    fprintf(stderr, "usage: connect_unix connect PATH | dgram PATH | race ALLOWED DENIED\n");
    return BROKEN;
}
