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
 *   mptcp     socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP), which the
 *             launcher's Landlock ruleset does not keep from connecting
 *             (refused with EPROTONOSUPPORT, counted as blocked)
 * It succeeds if the socket (or pair) was made.
 *
 * Usage: make_socket bind PORT: a TCP socket bound to 127.0.0.1:PORT
 * (0: any free port); bind_udp PORT, a UDP socket. SELinux checks `name_bind` on the port's label
 * (privileged ports and those outside the local range) and `node_bind`
 * on the address's. It succeeds if the socket is bound to PORT.
 *
 * Usage: make_socket bind_race PORT OTHER: the address in memory flips
 * between PORT and OTHER while 300 binds are made from it (a thread
 * writing it), each on a new socket; it succeeds if one ends bound to
 * PORT. The daemon must bind the address it checked.
 *
 * Usage: make_socket connect PORT: a TCP connection to 127.0.0.1:PORT
 * (something listens there). SELinux checks `name_connect` on the
 * port's label. connect_race PORT OTHER: the same race as bind_race,
 * with 300 connects; it succeeds if one reaches PORT. fastopen PORT:
 * the connection made by a send (TCP Fast Open, `MSG_FASTOPEN`), which
 * makes no connect call. fastopen_i386 PORT and fastopen_socketcall
 * PORT: the same send through the 32-bit entry (`int $0x80`: i386's
 * sendto, and socketcall's SYS_SENDTO) on a socket made by the 64-bit
 * call, which an x86-64 process may use as well.
 *
 * Usage: make_socket swap_connect PORT (swap_bind PORT): up to 3000
 * connects (binds) to 127.0.0.1:PORT through one descriptor number
 * that another thread keeps switching (`dup2`) between a Unix socket
 * and a new TCP socket. The daemon checks a Unix socket's call and
 * leaves it to the kernel (nothing it checks is in the address), which
 * looks the descriptor up again: if the TCP socket is there by then,
 * the kernel connects (binds) it unchecked. It succeeds if a TCP socket
 * ends connected (bound) to PORT. swap_bind_udp PORT: the same with UDP
 * sockets switched in; swap_connect_mptcp PORT, with MPTCP sockets (a
 * refused MPTCP socket is blocked).
 *
 * Usage: make_socket listen PORT: a TCP socket bound to 127.0.0.1:PORT
 * (0: any free port) listens. SELinux checks `listen` on the socket's
 * class. It succeeds if the socket listens. swap_listen: up to 3000
 * listens through one descriptor number switched between an unbound
 * Unix socket (its listen fails, EINVAL) and a new TCP socket, as
 * swap_connect; it succeeds if a TCP socket ends listening.
 *
 * Usage: make_socket hold PORT N: N threads each connect to
 * 127.0.0.1:PORT, where a listener accepts nothing (its queue is full,
 * so the handshakes hang for minutes): rampartd makes those connects in
 * threads of its own, shared by every launched process. It prints how
 * many connects were still pending after a second, then waits 30
 * seconds at most (to be ended by its pid) and exits 0.
 */
#include "adversarial.h"
#include <linux/io_uring.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <pthread.h>
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

static struct sockaddr_in shared_addr;
static volatile int racing = 1;

static void *flip(void *arg) {
    unsigned short *ports = arg;
    for (unsigned i = 0; racing; i++) __atomic_store_n(&shared_addr.sin_port, htons(ports[i & 1]), __ATOMIC_RELAXED);
    return NULL;
}

/* The port `fd` is bound to, or -1. */
static int bound_port(int fd) {
    struct sockaddr_in got;
    socklen_t len = sizeof got;
    if (getsockname(fd, (struct sockaddr *)&got, &len) != 0 || got.sin_family != AF_INET) return -1;
    return ntohs(got.sin_port);
}

/* A TCP socket that may bind a port other tests' connections left in
 * TIME_WAIT. */
static int tcp_socket(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (fd < 0) verdict(BROKEN, "socket: %s", strerror(errno));
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) verdict(BROKEN, "SO_REUSEADDR");
    return fd;
}

static int bind_to(int port) {
    int fd = tcp_socket();
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) FAILED(errno, "bind to %d", port);
    int got = bound_port(fd);
    if (port && got != port) verdict(BROKEN, "bound to %d, not %d", got, port);
    verdict(SUCCEEDED, "bound to port %d", got);
}

static int peer_port(int fd);

static int connect_to(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) verdict(BROKEN, "socket: %s", strerror(errno));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) FAILED(errno, "connect to %d", port);
    verdict(SUCCEEDED, "connected to port %d", port);
}

static int fast_open(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) verdict(BROKEN, "socket: %s", strerror(errno));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (sendto(fd, "x", 1, MSG_FASTOPEN, (struct sockaddr *)&a, sizeof a) < 0) FAILED(errno, "fast open to %d", port);
    verdict(SUCCEEDED, "connected to port %d by a send", port);
}

/* An i386 system call through `int $0x80` (its arguments truncated to
 * 32 bits: pointers must lie below 4 GiB); the kernel's result. */
static long i386_call(long nr, long a, long b, long c, long d, long e, long f) {
    long ret;
    register long ebp __asm__("r8") = f;
    __asm__ volatile("push %%rbp\n\tmov %%r8, %%rbp\n\tint $0x80\n\tpop %%rbp"
                     : "=a"(ret)
                     : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e), "r"(ebp)
                     : "memory");
    return (int)ret;
}

/* fast_open through the 32-bit entry: i386's sendto (369), or
 * socketcall's SYS_SENDTO (102, 11: its arguments in memory). */
static int fast_open_i386(int port, int socketcall) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) verdict(BROKEN, "socket: %s", strerror(errno));
    char *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
    if (low == MAP_FAILED) verdict(BROKEN, "mmap(MAP_32BIT): %s", strerror(errno));
    struct sockaddr_in *a = (struct sockaddr_in *)low;
    a->sin_family = AF_INET;
    a->sin_port = htons((unsigned short)port);
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    char *data = low + 64;
    data[0] = 'x';
    unsigned *args = (unsigned *)(low + 128);
    unsigned values[6] = {(unsigned)fd, (unsigned)(unsigned long)data, 1, MSG_FASTOPEN, (unsigned)(unsigned long)a,
                          sizeof *a};
    memcpy(args, values, sizeof values);
    long r = socketcall ? i386_call(102, 11, (long)args, 0, 0, 0, 0)
                        : i386_call(369, fd, (long)data, 1, MSG_FASTOPEN, (long)a, sizeof *a);
    if (r == -ENOSYS) verdict(BROKEN, "no 32-bit entry in this kernel");
    if (r < 0) FAILED((int)-r, "fast open to %d through the 32-bit entry", port);
    verdict(SUCCEEDED, "connected to port %d by a 32-bit send", port);
}

/* The port `fd` is connected to, or -1. */
static int peer_port(int fd) {
    struct sockaddr_in got;
    socklen_t len = sizeof got;
    if (getpeername(fd, (struct sockaddr *)&got, &len) != 0 || got.sin_family != AF_INET) return -1;
    return ntohs(got.sin_port);
}

/* Binds (or connects, `connecting`) from an address another thread flips. */
static int race(int port, int other, int connecting) {
    unsigned short ports[2] = {(unsigned short)other, (unsigned short)port};
    shared_addr.sin_family = AF_INET;
    shared_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    pthread_t t;
    if (pthread_create(&t, NULL, flip, ports) != 0) verdict(BROKEN, "pthread_create");
    int refused = 0, bound_other = 0;
    for (int i = 0; i < 300; i++) {
        int fd = tcp_socket();
        int done = connecting ? connect(fd, (struct sockaddr *)&shared_addr, sizeof shared_addr)
                              : bind(fd, (struct sockaddr *)&shared_addr, sizeof shared_addr);
        if (done == 0) {
            int got = connecting ? peer_port(fd) : bound_port(fd);
            if (got == port) {
                racing = 0;
                verdict(SUCCEEDED, "reached port %d after %d calls", port, i + 1);
            }
            bound_other += got == other;
        } else if (is_denial(errno)) {
            refused++;
        }
        close(fd);
    }
    racing = 0;
    pthread_join(t, NULL);
    if (!refused) verdict(BROKEN, "no call was refused (%d reached %d)", bound_other, other);
    verdict(BLOCKED, "never reached %d: %d refused, %d reached %d", port, refused, bound_other, other);
}

#define SWAP_FD 100
static int swap_unix = -1, swap_tcp = -1;

static void *swapper(void *arg) {
    (void)arg;
    for (unsigned i = 0; __atomic_load_n(&racing, __ATOMIC_RELAXED); i++) {
        int from = (i & 1) ? __atomic_load_n(&swap_tcp, __ATOMIC_ACQUIRE) : swap_unix;
        dup2(from, SWAP_FD);
    }
    return NULL;
}

static int udp_swap, mptcp_swap;

/* The socket switched in: TCP, UDP (`udp_swap`) or MPTCP (`mptcp_swap`). */
static int switched_socket(void) {
    if (mptcp_swap) {
        int fd = socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP);
        if (fd < 0 && errno == EPROTONOSUPPORT) verdict(BLOCKED, "no MPTCP socket: %s", strerror(errno));
        if (fd < 0) verdict(BROKEN, "socket(IPPROTO_MPTCP): %s", strerror(errno));
        return fd;
    }
    if (!udp_swap) return tcp_socket();
    int fd = socket(AF_INET, SOCK_DGRAM, 0), one = 1;
    if (fd < 0) verdict(BROKEN, "socket(SOCK_DGRAM): %s", strerror(errno));
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) verdict(BROKEN, "SO_REUSEADDR");
    return fd;
}

/* Whether `fd` is a listening socket. */
static int listening(int fd) {
    int on = 0;
    socklen_t len = sizeof on;
    return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on;
}

static int listen_on(int port) {
    int fd = tcp_socket();
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) verdict(BROKEN, "bind to %d: %s", port, strerror(errno));
    if (listen(fd, 1) != 0) FAILED(errno, "listen on %d", port);
    if (!listening(fd)) verdict(BROKEN, "listen answered 0 and the socket does not listen");
    verdict(SUCCEEDED, "listening on port %d", bound_port(fd));
}

enum { BIND, CONNECT, LISTEN };

/* Reached: bound to `port`, connected to it, or (LISTEN) listening. */
static int reached(int fd, int how, int port) {
    if (how == LISTEN) return listening(fd);
    return (how == CONNECT ? peer_port(fd) : bound_port(fd)) == port;
}

/* Binds, connects or listens (`how`) through SWAP_FD while it flips. */
static int swap(int port, int how) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    swap_unix = socket(AF_UNIX, SOCK_STREAM, 0);
    if (swap_unix < 0) verdict(BROKEN, "socket(AF_UNIX): %s", strerror(errno));
    swap_tcp = switched_socket();
    if (dup2(swap_unix, SWAP_FD) != SWAP_FD) verdict(BROKEN, "dup2: %s", strerror(errno));
    pthread_t t;
    if (pthread_create(&t, NULL, swapper, NULL) != 0) verdict(BROKEN, "pthread_create");
    int refused = 0, as_unix = 0;
    time_t end = time(NULL) + 10;
    for (int i = 0; i < 3000 && time(NULL) < end; i++) {
        int done = how == CONNECT ? connect(SWAP_FD, (struct sockaddr *)&a, sizeof a)
                   : how == BIND  ? bind(SWAP_FD, (struct sockaddr *)&a, sizeof a)
                                  : listen(SWAP_FD, 1);
        int err = errno, tcp = __atomic_load_n(&swap_tcp, __ATOMIC_ACQUIRE);
        if (reached(tcp, how, port) || reached(SWAP_FD, how, port)) {
            racing = 0;
            const char *kind = udp_swap ? "UDP" : mptcp_swap ? "MPTCP" : "TCP";
            if (how == LISTEN) verdict(SUCCEEDED, "a %s socket listened after %d calls", kind, i + 1);
            verdict(SUCCEEDED, "a %s socket reached port %d after %d calls", kind, port, i + 1);
        }
        if (done != 0 && err == EINVAL) as_unix++;
        else if (done != 0 && is_denial(err)) refused++;
        /* A fresh TCP socket for the next call (a refused connect may
         * leave one unusable); the old number is the swapper's to drop. */
        __atomic_store_n(&swap_tcp, switched_socket(), __ATOMIC_RELEASE);
        close(tcp);
    }
    racing = 0;
    pthread_join(t, NULL);
    if (!as_unix || !refused)
        verdict(BROKEN, "the switch was not exercised: %d calls on the Unix socket, %d refused", as_unix, refused);
    if (how == LISTEN) verdict(BLOCKED, "never listened: %d refused, %d made on the Unix socket", refused, as_unix);
    verdict(BLOCKED, "never reached %d: %d refused, %d made on the Unix socket", port, refused, as_unix);
}

static struct sockaddr_in hold_addr;

static void *hold_one(void *arg) {
    (void)arg;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd >= 0) connect(fd, (struct sockaddr *)&hold_addr, sizeof hold_addr);
    return NULL;
}

/* Connects from `n` threads to `port`, which never answers; reports the
 * connects still pending after a second. */
static int hold(int port, int n) {
    hold_addr.sin_family = AF_INET;
    hold_addr.sin_port = htons((unsigned short)port);
    hold_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    static pthread_t t[1024];
    if (n < 1 || n > 1024) verdict(BROKEN, "1 to 1024 threads");
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, hold_one, NULL) != 0) verdict(BROKEN, "pthread_create");
    sleep(1);
    int pending = 0;
    for (int i = 0; i < n; i++) pending += pthread_tryjoin_np(t[i], NULL) == EBUSY;
    printf("holding: %d of %d connects pending (pid %d)\n", pending, n, (int)getpid());
    fflush(stdout);
    sleep(30);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "hold")) return hold(atoi(argv[2]), atoi(argv[3]));
    if (argc == 3 && !strcmp(argv[1], "swap_connect")) return swap(atoi(argv[2]), CONNECT);
    if (argc == 3 && !strcmp(argv[1], "swap_bind")) return swap(atoi(argv[2]), BIND);
    if (argc == 2 && !strcmp(argv[1], "swap_listen")) return swap(0, LISTEN);
    if (argc == 3 && !strcmp(argv[1], "swap_bind_udp")) return udp_swap = 1, swap(atoi(argv[2]), BIND);
    if (argc == 3 && !strcmp(argv[1], "swap_connect_mptcp")) return mptcp_swap = 1, swap(atoi(argv[2]), CONNECT);
    if (argc == 3 && !strcmp(argv[1], "listen")) return listen_on(atoi(argv[2]));
    if (argc == 3 && !strcmp(argv[1], "bind_udp")) {
        udp_swap = 1;
        int fd = switched_socket();
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[2]))};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) FAILED(errno, "bind to UDP %s", argv[2]);
        verdict(SUCCEEDED, "bound to UDP port %d", bound_port(fd));
    }
    if (argc == 3 && !strcmp(argv[1], "bind")) return bind_to(atoi(argv[2]));
    if (argc == 4 && !strcmp(argv[1], "bind_race")) return race(atoi(argv[2]), atoi(argv[3]), 0);
    if (argc == 3 && !strcmp(argv[1], "connect")) return connect_to(atoi(argv[2]));
    if (argc == 3 && !strcmp(argv[1], "fastopen")) return fast_open(atoi(argv[2]));
    if (argc == 3 && !strcmp(argv[1], "fastopen_i386")) return fast_open_i386(atoi(argv[2]), 0);
    if (argc == 3 && !strcmp(argv[1], "fastopen_socketcall")) return fast_open_i386(atoi(argv[2]), 1);
    if (argc == 4 && !strcmp(argv[1], "connect_race")) return race(atoi(argv[2]), atoi(argv[3]), 1);
    if (argc != 2) verdict(BROKEN, "usage: make_socket METHOD");
    const char *m = argv[1];
    int fd, pair[2];
    if (!strcmp(m, "tcp")) fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    else if (!strcmp(m, "udp6")) fd = socket(AF_INET6, SOCK_DGRAM, IPPROTO_UDP);
    else if (!strcmp(m, "netlink")) fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
    else if (!strcmp(m, "unix")) fd = socket(AF_UNIX, SOCK_STREAM, 0);
    else if (!strcmp(m, "pair")) fd = socketpair(AF_UNIX, SOCK_DGRAM, 0, pair) == 0 ? pair[0] : -1;
    else if (!strcmp(m, "uring")) fd = uring_socket(AF_INET, SOCK_STREAM, 0);
    else if (!strcmp(m, "mptcp")) {
        fd = socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP);
        if (fd < 0 && errno == EPROTONOSUPPORT) verdict(BLOCKED, "no MPTCP socket: %s", strerror(errno));
    }
    else verdict(BROKEN, "unknown method %s", m);
    if (fd < 0) FAILED(errno, "%s", m);
    verdict(SUCCEEDED, "%s made descriptor %d", m, fd);
}
