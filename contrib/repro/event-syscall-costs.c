// What the system calls rampartd makes per permission event cost on this
// machine (docs/benchmarks.md, "Reading the enforcement results"), each
// timed over 200,000 calls on one file: fstat, fgetxattr of an absent
// security.selinux, readlink of /proc/self/fd/N against readlinkat of N in
// a /proc/self/fd descriptor opened once (what rampart_label::fd_link does),
// sched_yield, dup + close, pidfd_open + close (what FAN_REPORT_PIDFD costs
// per event) alone and with another pidfd of the process held open (what
// crates/enforce/src/pidfd.rs RecentThreads does for thread pidfds), re-adding an ignore mark by
// path and by descriptor, and adding one to an inode without marks (what a
// first touch costs; 20,000 files are created next to FILE for it).
//
// Build and run (root only for the fanotify lines; FILE is any scratch file
// it may create, on a tmpfs for figures comparable to the benchmark's):
//   gcc -O2 -o event-syscall-costs event-syscall-costs.c
//   ./event-syscall-costs /tmp/event-syscall-costs.probe
// 2026-11-23 on the 2-CPU benchmark VM, idle: fstat 451 ns, fgetxattr 675 ns,
// readlink /proc/self/fd/N 3163 to 3386 ns, readlinkat 2530 ns, pidfd_open +
// close 1707 to 1948 ns, fanotify_mark by path 1171 ns, by descriptor 564 ns.
// Later the same day (load about 1): pidfd_open + close 4146 to 4371 ns, with
// another pidfd of the process held 1636 to 1727 ns; readlinkat 2027 ns.
// 2026-11-24 on a faster 2-CPU VM (AMD EPYC), idle: fstat 219 ns, fgetxattr
// 409 ns, readlink 1340 ns, readlinkat 831 ns, sched_yield 208 ns,
// pidfd_open + close 2009 ns, one held 712 ns, fanotify_mark by path 502 ns,
// by descriptor 208 ns, on an inode without marks 571 to 575 ns.
// 2026-11-25 on a slower 2-CPU VM (AMD EPYC), load about 0.5: fstat 655 ns,
// fgetxattr 956 ns, readlink 4647 ns, readlinkat 3187 ns, sched_yield 764 ns,
// pidfd_open + close 7075 ns, one held 2928 ns, fanotify_mark by path 2041
// ns, by descriptor 789 ns, on an inode without marks 1968 ns.
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define N 200000
#define TIME(name, expr)                                                  \
  do {                                                                    \
    double start = now();                                                 \
    for (int i = 0; i < N; i++) { expr; }                                 \
    printf("%-34s %6.0f ns\n", name, (now() - start) / N);                \
  } while (0)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s FILE\n", argv[0]);
    return 2;
  }
  int fd = open(argv[1], O_RDONLY | O_CREAT, 0644);
  if (fd < 0) {
    perror(argv[1]);
    return 1;
  }
  struct stat st;
  char buf[4096], link[64], name[16];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  snprintf(name, sizeof name, "%d", fd);
  int procfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY);

  TIME("fstat", fstat(fd, &st));
  TIME("fgetxattr (absent)", fgetxattr(fd, "security.selinux", buf, sizeof buf));
  TIME("readlink /proc/self/fd/N", readlink(link, buf, sizeof buf));
  TIME("readlinkat (/proc/self/fd fd, N)", readlinkat(procfd, name, buf, sizeof buf));
  TIME("sched_yield", sched_yield());
  TIME("dup + close", close(dup(fd)));
  TIME("pidfd_open + close", close(syscall(SYS_pidfd_open, getpid(), 0)));
  int held = syscall(SYS_pidfd_open, getpid(), 0);
  TIME("pidfd_open + close, one held", close(syscall(SYS_pidfd_open, getpid(), 0)));
  close(held);
  int group = fanotify_init(FAN_CLASS_NOTIF | FAN_NONBLOCK, O_RDONLY);
  if (group < 0) {
    perror("fanotify_init (needs root)");
    return 0;
  }
  TIME("fanotify_mark ignore, by path",
       fanotify_mark(group, FAN_MARK_ADD | FAN_MARK_IGNORE_SURV, FAN_OPEN, AT_FDCWD, argv[1]));
  TIME("fanotify_mark ignore, by fd",
       fanotify_mark(group, FAN_MARK_ADD | FAN_MARK_IGNORE_SURV, FAN_OPEN, fd, NULL));

  // A first touch marks an inode that has no mark yet: the kernel then
  // allocates the mark and the inode's mark connector.
  enum { FRESH = 20000 };
  char path[4096];
  double marking = 0;
  for (int i = 0; i < FRESH; i++) {
    snprintf(path, sizeof path, "%s.fresh%d", argv[1], i);
    int f = open(path, O_RDONLY | O_CREAT, 0644);
    if (f < 0) {
      perror(path);
      return 1;
    }
    double start = now();
    fanotify_mark(group, FAN_MARK_ADD | FAN_MARK_IGNORE_SURV, FAN_OPEN, f, NULL);
    marking += now() - start;
    close(f);
  }
  printf("%-34s %6.0f ns\n", "fanotify_mark ignore, new inode", marking / FRESH);
  for (int i = 0; i < FRESH; i++) {
    snprintf(path, sizeof path, "%s.fresh%d", argv[1], i);
    unlink(path);
  }
  return 0;
}
