/*
 * Not an attack: a wait that rampartd makes for a launched process (a
 * connect it makes, an open of a FIFO waiting for its reader) must end
 * for a signal as the kernel's own wait ends, compared with the same
 * program run without the sandbox.
 *
 * Usage: interrupt connect PORT RESTART: a blocking connect to
 * 127.0.0.1:PORT, which never answers. interrupt fifo PATH RESTART: an
 * open for writing of the FIFO at PATH, which no one reads. Both with
 * SIGALRM caught (with SA_RESTART if RESTART is 1) and an alarm after a
 * second. As the kernel's: without SA_RESTART the call fails with EINTR
 * once the handler ran; with it, it is made again and still waits 3
 * seconds on. Exits 0 when it behaves so, 1 when it does not.
 */
#include "adversarial.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>

static volatile sig_atomic_t alarmed;
static int restarting;

static void on_alarm(int sig) {
    (void)sig;
    alarmed = 1;
}

static void *watchdog(void *arg) {
    (void)arg;
    sleep(restarting ? 3 : 5);
    if (!alarmed) verdict(BLOCKED, "the alarm was not handled while waiting");
    if (restarting) verdict(SUCCEEDED, "made again after the handler: still waiting 3 s on");
    verdict(BLOCKED, "not interrupted 4 s after the handler ran");
}

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[1], "connect") && strcmp(argv[1], "fifo")))
        verdict(BROKEN, "usage: interrupt connect PORT RESTART | interrupt fifo PATH RESTART");
    int connecting = !strcmp(argv[1], "connect");
    restarting = atoi(argv[3]);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = restarting ? SA_RESTART : 0;
    if (sigaction(SIGALRM, &sa, NULL) != 0) verdict(BROKEN, "sigaction");
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[2]))};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = connecting ? socket(AF_INET, SOCK_STREAM, 0) : 0;
    if (fd < 0) verdict(BROKEN, "socket: %s", strerror(errno));
    /* The alarm is this thread's to handle, not the watchdog's. */
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alrm, NULL);
    pthread_t t;
    if (pthread_create(&t, NULL, watchdog, NULL) != 0) verdict(BROKEN, "pthread_create");
    pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    alarm(1);
    int rc = connecting ? connect(fd, (struct sockaddr *)&a, sizeof a) : open(argv[2], O_WRONLY), err = errno;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    if (rc >= 0) verdict(BROKEN, "%s %s went through: nothing should answer", argv[1], argv[2]);
    if (!restarting && err == EINTR && alarmed) verdict(SUCCEEDED, "interrupted after %ld ms", ms);
    verdict(BLOCKED, "%s: %s after %ld ms (handler ran: %d)", argv[1], strerror(err), ms, (int)alarmed);
}
