/*
 * lease_stall: hold the daemon's workers with opens of a leased file.
 *
 *   lease_stall FILE OTHER
 *
 * FILE is the attacker's own file (a lease needs its owner). It takes a
 * read lease on it (F_SETLEASE, F_RDLCK; SIGIO, sent when an open for
 * writing starts to break it, ignored), then 8 children each open it
 * with O_RDONLY | O_TRUNC and truncate(2) it: an open that truncates, and
 * a truncation, wait for the lease to be released, up to the kernel's
 * lease-break-time (45 s by default). A daemon that makes them on its
 * workers waits with them. Then it times an open of OTHER for writing,
 * another supervised call (its outcome does not matter, only when it
 * comes): succeeded if it has not come within 5 s.
 */
#include "adversarial.h" /* first: it defines _GNU_SOURCE */

#include <sys/stat.h>
#include <sys/wait.h>

#define CHILDREN 8

int main(int argc, char **argv) {
    if (argc != 3) verdict(BROKEN, "usage: lease_stall FILE OTHER");
    const char *file = argv[1], *other = argv[2];
    signal(SIGIO, SIG_IGN);
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) verdict(BROKEN, "opening %s: %s", file, strerror(errno));
    if (fcntl(fd, F_SETLEASE, F_RDLCK) != 0) verdict(BROKEN, "F_SETLEASE on %s: %s", file, strerror(errno));
    pid_t kids[CHILDREN + 1];
    for (int i = 0; i < CHILDREN; i++) {
        kids[i] = fork();
        if (kids[i] < 0) verdict(BROKEN, "fork: %s", strerror(errno));
        if (kids[i] == 0) {
            if (i % 2) {
                if (truncate(file, 0) == 0 || errno == EWOULDBLOCK) _exit(0);
            } else {
                int w = open(file, O_RDONLY | O_TRUNC | O_CLOEXEC);
                if (w >= 0 || errno == EWOULDBLOCK) _exit(0);
            }
            _exit(1);
        }
    }
    struct timespec settle = {0, 300 * 1000 * 1000};
    nanosleep(&settle, NULL);
    double start = now_s();
    kids[CHILDREN] = fork();
    if (kids[CHILDREN] < 0) verdict(BROKEN, "fork: %s", strerror(errno));
    if (kids[CHILDREN] == 0) {
        int o = open(other, O_WRONLY | O_CLOEXEC);
        _exit(o < 0);
    }
    int came = 0;
    while (now_s() - start < 5 && !came) {
        came = waitpid(kids[CHILDREN], NULL, WNOHANG) == kids[CHILDREN];
        if (!came) {
            struct timespec tick = {0, 10 * 1000 * 1000};
            nanosleep(&tick, NULL);
        }
    }
    double waited = now_s() - start;
    /* The lease goes with its descriptor: the opens held go on. */
    close(fd);
    for (int i = 0; i <= CHILDREN; i++) waitpid(kids[i], NULL, 0);
    if (!came)
        verdict(SUCCEEDED, "an open waited over %.1f s: %d opens and truncations of a leased file held the daemon",
                waited, CHILDREN);
    verdict(BLOCKED, "an open came in %.3f s while %d opens and truncations of a leased file were made", waited,
            CHILDREN);
}
