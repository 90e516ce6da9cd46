// First-touch opens: creates COUNT files in DIR with mknod (no open, so no
// permission event yet), then opens and closes each once, and prints the
// wall time and the process's CPU time per open (nanoseconds, one line:
// "WALL CPU"). Every open is one fanotify permission event for a
// listener on DIR's mount, whatever the listener caches. Used by
// first-touch-wakeups.sh and event-cpu-ceiling.sh; build: gcc -O2 -o first-touch first-touch.c
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 3 || atoi(argv[2]) <= 0) {
    fprintf(stderr, "usage: %s DIR COUNT\n", argv[0]);
    return 2;
  }
  int n = atoi(argv[2]);
  char path[4096];
  for (int i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/f%d", argv[1], i);
    if (mknod(path, S_IFREG | 0644, 0) != 0) {
      perror(path);
      return 1;
    }
  }
  struct timespec start, end, cpu_start, cpu_end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu_start);
  for (int i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/f%d", argv[1], i);
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
      perror(path);
      return 1;
    }
    close(fd);
  }
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu_end);
  clock_gettime(CLOCK_MONOTONIC, &end);
  double ns = ((end.tv_sec - start.tv_sec) * 1e9 + (end.tv_nsec - start.tv_nsec)) / n;
  double cpu = ((cpu_end.tv_sec - cpu_start.tv_sec) * 1e9 + (cpu_end.tv_nsec - cpu_start.tv_nsec)) / n;
  printf("%.0f %.0f\n", ns, cpu);
  for (int i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/f%d", argv[1], i);
    unlink(path);
  }
  return 0;
}
