/*
 * Attack: make a socket the domain may not make. SELinux checks
 * `create` of the socket's class (tcp_socket, udp_socket,
 * netlink_route_socket, unix_stream_socket...) from the caller's domain
 * when the socket is made, by whichever call makes it.
 *
 * Usage: make_socket METHOD, METHOD one of
 *   tcp       socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)
 *   udp6      socket(AF_INET6, SOCK_DGRAM, IPPROTO_UDP)
 *   netlink   socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)
 *   unix      socket(AF_UNIX, SOCK_STREAM, 0)
 *   pair      socketpair(AF_UNIX, SOCK_DGRAM, 0)
 *   uring     a TCP socket made by io_uring (IORING_OP_SOCKET), which
 *             makes no socket call
 * It succeeds if the socket (or pair) was made.
 */
#include "adversarial.h"
#include <linux/io_uring.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>

/* A socket made by io_uring: its descriptor, or -1 with errno set. */
static int uring_socket(int family, int type, int protocol) {
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    int ring = (int)syscall(SYS_io_uring_setup, 4, &p);
    if (ring < 0) return -1;
    size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    if (sq_len < cq_len) sq_len = cq_len;
    char *sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
    if (sq == MAP_FAILED) verdict(BROKEN, "mmap of the rings: %s", strerror(errno));
    if (!(p.features & IORING_FEAT_SINGLE_MMAP)) verdict(UNSUPPORTED, "io_uring without a single mapping");
    struct io_uring_sqe *sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
                                     MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
    if (sqes == MAP_FAILED) verdict(BROKEN, "mmap of the entries: %s", strerror(errno));
    unsigned *tail = (unsigned *)(sq + p.sq_off.tail);
    unsigned mask = *(unsigned *)(sq + p.sq_off.ring_mask);
    unsigned *array = (unsigned *)(sq + p.sq_off.array);
    memset(&sqes[0], 0, sizeof sqes[0]);
    sqes[0].opcode = IORING_OP_SOCKET;
    sqes[0].fd = family;
    sqes[0].off = (unsigned)type;
    sqes[0].len = (unsigned)protocol;
    array[*tail & mask] = 0;
    __atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
    if (syscall(SYS_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
        verdict(BROKEN, "io_uring_enter: %s", strerror(errno));
    unsigned head = __atomic_load_n((unsigned *)(sq + p.cq_off.head), __ATOMIC_ACQUIRE);
    unsigned cq_mask = *(unsigned *)(sq + p.cq_off.ring_mask);
    struct io_uring_cqe *cqe = (struct io_uring_cqe *)(sq + p.cq_off.cqes) + (head & cq_mask);
    if (cqe->res == -EINVAL) verdict(UNSUPPORTED, "this kernel's io_uring has no IORING_OP_SOCKET");
    if (cqe->res < 0) {
        errno = -cqe->res;
        return -1;
    }
    return cqe->res;
}

int main(int argc, char **argv) {
    if (argc != 2) verdict(BROKEN, "usage: make_socket METHOD");
    const char *m = argv[1];
    int fd, pair[2];
    if (!strcmp(m, "tcp")) fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    else if (!strcmp(m, "udp6")) fd = socket(AF_INET6, SOCK_DGRAM, IPPROTO_UDP);
    else if (!strcmp(m, "netlink")) fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
    else if (!strcmp(m, "unix")) fd = socket(AF_UNIX, SOCK_STREAM, 0);
    else if (!strcmp(m, "pair")) fd = socketpair(AF_UNIX, SOCK_DGRAM, 0, pair) == 0 ? pair[0] : -1;
    else if (!strcmp(m, "uring")) fd = uring_socket(AF_INET, SOCK_STREAM, 0);
    else verdict(BROKEN, "unknown method %s", m);
    if (fd < 0) FAILED(errno, "%s", m);
    verdict(SUCCEEDED, "%s made descriptor %d", m, fd);
}
