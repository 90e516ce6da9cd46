// The least a fanotify permission listener can do, independent of
// Rampart's code: one thread that reads events and allows each at once
// (write, then close the event's file and, with FAN_REPORT_PIDFD, its
// pidfd). Used by event-cpu-ceiling.sh to price the kernel's round trip.
//
// usage: trivial-listener MOUNT [pidfd]
// Marks MOUNT (a mount point) for FAN_OPEN_PERM and FAN_OPEN_EXEC_PERM,
// prints "ready", and on SIGTERM prints the events it answered. The kernel
// allows whatever is still queued when it exits.
// build: gcc -O2 -o trivial-listener trivial-listener.c
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/fanotify.h>
#include <unistd.h>

#ifndef FAN_REPORT_PIDFD
#define FAN_REPORT_PIDFD 0x00000080
#define FAN_EVENT_INFO_TYPE_PIDFD 4
struct fanotify_event_info_pidfd {
  struct fanotify_event_info_header hdr;
  int pidfd;
};
#endif

static volatile sig_atomic_t stop;
static void on_term(int sig) { (void)sig; stop = 1; }

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "pidfd") != 0)) {
    fprintf(stderr, "usage: %s MOUNT [pidfd]\n", argv[0]);
    return 2;
  }
  int pidfd = argc == 3;
  int fd = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC | (pidfd ? FAN_REPORT_PIDFD : 0), O_RDONLY | O_LARGEFILE);
  if (fd < 0) {
    perror("fanotify_init");
    return 1;
  }
  if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN_PERM | FAN_OPEN_EXEC_PERM, AT_FDCWD, argv[1]) != 0) {
    perror(argv[1]);
    return 1;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_term; // no SA_RESTART: SIGTERM ends a blocked read
  sigaction(SIGTERM, &sa, NULL);
  printf("ready\n");
  fflush(stdout);
  char buf[4096] __attribute__((aligned(8)));
  long events = 0;
  while (!stop) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      perror("read");
      return 1;
    }
    for (struct fanotify_event_metadata *m = (void *)buf; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
      struct fanotify_response r = {.fd = m->fd, .response = FAN_ALLOW};
      if (write(fd, &r, sizeof r) != sizeof r)
        perror("write");
      if (pidfd && m->event_len >= m->metadata_len + sizeof(struct fanotify_event_info_pidfd)) {
        struct fanotify_event_info_pidfd *info = (void *)((char *)m + m->metadata_len);
        if (info->hdr.info_type == FAN_EVENT_INFO_TYPE_PIDFD && info->pidfd >= 0)
          close(info->pidfd);
      }
      close(m->fd);
      events++;
    }
  }
  printf("%ld events\n", events);
  return 0;
}
