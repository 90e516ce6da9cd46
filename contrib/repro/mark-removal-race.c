// The fanotify race behind rampartd's group rotation (crates/enforce/src/groups.rs).
//
// The kernel lets a permission event pass unasked when it races with the
// removal of one of the listening group's marks on the same object
// (fanotify_handle_event: fsnotify_prepare_user_wait() fails "if we race with
// mark deletion. Just let the operation pass"). Here group A has a mount mark
// (FAN_OPEN_PERM | FAN_ACCESS_PERM) on a tmpfs, one thread keeps placing an
// ACCESS ignore mark on file "probe" (opening it to do so) and another keeps
// removing A's inode marks with FAN_MARK_FLUSH. Group B has the same mount
// mark and never touches inode marks. Both answer FAN_ALLOW and count the
// open events on "probe" before answering; the main thread opens "probe" N
// times and checks, after each open returned, that each group was asked.
//
// Build and run as root, only on a tmpfs you mounted in a private namespace:
//   gcc -O2 -pthread -o mark-removal-race mark-removal-race.c
//   unshare -m --propagation private sh -c 'mkdir -p /tmp/mrr && mount -t tmpfs none /tmp/mrr &&
//     ./mark-removal-race /tmp/mrr 100000; umount /tmp/mrr'
// Kernel 6.18 here: "group A (marks removed): 4042 of 100000 opens passed
// unasked; group B (marks kept): 0" (numbers vary from run to run).
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <unistd.h>

struct group { int fd; atomic_long probe_opens; };
static struct group a, b;
static ino_t probe_ino;
static char probe[4096];
static atomic_int stop_churn, stop;

static void *responder(void *arg) {
  struct group *g = arg;
  char buf[8192];
  while (!atomic_load(&stop)) {
    struct pollfd p = {g->fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    ssize_t n = read(g->fd, buf, sizeof buf);
    if (n <= 0) continue;
    for (struct fanotify_event_metadata *m = (void *)buf; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
      struct stat st;
      if ((m->mask & FAN_OPEN_PERM) && fstat(m->fd, &st) == 0 && st.st_ino == probe_ino)
        atomic_fetch_add(&g->probe_opens, 1);
      struct fanotify_response r = {m->fd, FAN_ALLOW};
      if (write(g->fd, &r, sizeof r) < 0) perror("respond");
      close(m->fd);
    }
  }
  return NULL;
}

static void *marker(void *arg) {
  (void)arg;
  while (!atomic_load(&stop_churn)) {
    int fd = open(probe, O_RDONLY);
    if (fd < 0) continue;
    fanotify_mark(a.fd, FAN_MARK_ADD | FAN_MARK_IGNORED_MASK | FAN_MARK_IGNORED_SURV_MODIFY, FAN_ACCESS_PERM, fd, NULL);
    close(fd);
  }
  return NULL;
}

static void *flusher(void *arg) {
  (void)arg;
  while (!atomic_load(&stop_churn)) {
    fanotify_mark(a.fd, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL);
    usleep(200);
  }
  return NULL;
}

static int listen_on(struct group *g, const char *dir) {
  g->fd = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY | O_LARGEFILE);
  if (g->fd < 0) { perror("fanotify_init"); return -1; }
  if (fanotify_mark(g->fd, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN_PERM | FAN_ACCESS_PERM, AT_FDCWD, dir)) {
    perror("fanotify_mark");
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: %s TMPFS-DIR OPENS\n", argv[0]); return 2; }
  long opens = atol(argv[2]);
  snprintf(probe, sizeof probe, "%s/probe", argv[1]);
  int w = open(probe, O_CREAT | O_WRONLY, 0644);
  if (w < 0) { perror(probe); return 2; }
  close(w);
  struct stat st;
  if (stat(probe, &st)) { perror(probe); return 2; }
  probe_ino = st.st_ino;
  if (listen_on(&a, argv[1]) || listen_on(&b, argv[1])) return 2;
  pthread_t t[4];
  pthread_create(&t[0], NULL, responder, &a);
  pthread_create(&t[1], NULL, responder, &b);
  pthread_create(&t[2], NULL, marker, NULL);
  pthread_create(&t[3], NULL, flusher, NULL);
  long missed_a = 0, missed_b = 0;
  for (long i = 0; i < opens; i++) {
    long before_a = atomic_load(&a.probe_opens), before_b = atomic_load(&b.probe_opens);
    int fd = open(probe, O_RDONLY);
    if (fd < 0) { perror("open"); break; }
    // Both groups answered (and counted) before open returned, if asked.
    missed_a += atomic_load(&a.probe_opens) == before_a;
    missed_b += atomic_load(&b.probe_opens) == before_b;
    close(fd);
  }
  atomic_store(&stop_churn, 1);
  pthread_join(t[2], NULL);
  pthread_join(t[3], NULL);
  atomic_store(&stop, 1);
  pthread_join(t[0], NULL);
  pthread_join(t[1], NULL);
  printf("group A (marks removed): %ld of %ld opens passed unasked; group B (marks kept): %ld\n", missed_a, opens, missed_b);
  return missed_b ? 1 : 0;
}
