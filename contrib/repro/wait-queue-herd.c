// What fanotify's one wait queue per group costs the openers
// (docs/architecture.md, "The openers' wait queue"), independent of
// Rampart's code: N opener threads each open and close a file of their
// own on MOUNT in a loop, every open a permission event (no ignore marks),
// answered FAN_ALLOW at once by one listener thread. An opener waits in
// fanotify_get_response() on the group's access_waitq, and every answer
// wakes every waiter, so each opener is woken for the others' answers
// too: its voluntary context switches per open of its own grow with N.
//
// usage: wait-queue-herd MOUNT[,MOUNT2] THREADS SECONDS [GROUPS]
// Prints one line: threads, opens per second (all threads), and per open
// the openers' voluntary and involuntary context switches (getrusage
// RUSAGE_THREAD, summed over openers, over all opens). With no herd the
// voluntary figure stays near 1 (one sleep per event) whatever THREADS.
// With two mounts the openers alternate between them and two listener
// threads answer: GROUPS 1 (default) marks both mounts in one group that
// both threads read; GROUPS 2 gives each mount a group of its own with
// one thread: what sharding the openers over groups buys.
// build: gcc -O2 -pthread -o wait-queue-herd wait-queue-herd.c
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 256

static int groups[2];
static int ngroups = 1;
static const char *mounts[2];
static int nmounts = 1;
static double seconds;
static atomic_int stop;
static pthread_barrier_t start;

struct opener {
  pthread_t thread;
  long opens;
  long nvcsw, nivcsw;
  int index;
};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *listen_loop(void *arg) {
  int group = *(int *)arg;
  char buf[4096] __attribute__((aligned(8)));
  struct pollfd p = {.fd = group, .events = POLLIN};
  while (!atomic_load(&stop)) {
    if (poll(&p, 1, 100) <= 0) continue;
    ssize_t n = read(group, buf, sizeof buf);
    if (n <= 0) continue;
    for (struct fanotify_event_metadata *m = (void *)buf; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
      if (m->fd < 0) continue;
      struct fanotify_response r = {.fd = m->fd, .response = FAN_ALLOW};
      if (write(group, &r, sizeof r) < 0) perror("write");
      close(m->fd);
    }
  }
  return NULL;
}

static void *open_loop(void *arg) {
  struct opener *o = arg;
  char path[4096];
  snprintf(path, sizeof path, "%s/herd-%d", mounts[o->index % nmounts], o->index);
  struct rusage before, after;
  pthread_barrier_wait(&start);
  getrusage(RUSAGE_THREAD, &before);
  double end = now() + seconds;
  while (now() < end) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
      perror(path);
      break;
    }
    close(fd);
    o->opens++;
  }
  getrusage(RUSAGE_THREAD, &after);
  o->nvcsw = after.ru_nvcsw - before.ru_nvcsw;
  o->nivcsw = after.ru_nivcsw - before.ru_nivcsw;
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: %s MOUNT[,MOUNT2] THREADS SECONDS [GROUPS]\n", argv[0]);
    return 2;
  }
  static char mount_list[8192];
  snprintf(mount_list, sizeof mount_list, "%s", argv[1]);
  mounts[0] = mount_list;
  char *comma = strchr(mount_list, ',');
  if (comma) {
    *comma = 0;
    mounts[1] = comma + 1;
    nmounts = 2;
  }
  int threads = atoi(argv[2]);
  seconds = atof(argv[3]);
  ngroups = argc == 5 ? atoi(argv[4]) : 1;
  if (threads < 1 || threads > MAX_THREADS || seconds <= 0 || ngroups < 1 || ngroups > nmounts) {
    fprintf(stderr, "THREADS must be 1 to %d, SECONDS positive, GROUPS 1 or (with two mounts) 2\n", MAX_THREADS);
    return 2;
  }
  // The files exist before the marks: creating them asks nobody.
  for (int i = 0; i < threads; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/herd-%d", mounts[i % nmounts], i);
    int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) {
      perror(path);
      return 1;
    }
    close(fd);
  }
  for (int g = 0; g < ngroups; g++) {
    // Non-blocking: two threads may poll one group and both wake for one event.
    groups[g] = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY | O_LARGEFILE);
    if (groups[g] < 0) {
      perror("fanotify_init");
      return 1;
    }
  }
  for (int m = 0; m < nmounts; m++) {
    if (fanotify_mark(groups[m % ngroups], FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN_PERM, AT_FDCWD, mounts[m]) < 0) {
      perror("fanotify_mark");
      return 1;
    }
  }
  // One listener thread per mount, each reading its mount's group.
  pthread_t listeners[2];
  for (int m = 0; m < nmounts; m++) pthread_create(&listeners[m], NULL, listen_loop, &groups[m % ngroups]);
  static struct opener openers[MAX_THREADS];
  pthread_barrier_init(&start, NULL, threads + 1);
  double t0 = now();
  for (int i = 0; i < threads; i++) {
    openers[i].index = i;
    pthread_create(&openers[i].thread, NULL, open_loop, &openers[i]);
  }
  pthread_barrier_wait(&start);
  t0 = now();
  long opens = 0, nvcsw = 0, nivcsw = 0;
  for (int i = 0; i < threads; i++) {
    pthread_join(openers[i].thread, NULL);
    opens += openers[i].opens;
    nvcsw += openers[i].nvcsw;
    nivcsw += openers[i].nivcsw;
  }
  double elapsed = now() - t0;
  atomic_store(&stop, 1);
  for (int m = 0; m < nmounts; m++) pthread_join(listeners[m], NULL);
  if (opens == 0) {
    fprintf(stderr, "no opens\n");
    return 1;
  }
  printf("mounts %d groups %d threads %d opens/s %.0f voluntary_switches_per_open %.2f involuntary_per_open %.2f\n",
         nmounts, ngroups, threads,
         opens / elapsed, (double)nvcsw / opens, (double)nivcsw / opens);
  return 0;
}
