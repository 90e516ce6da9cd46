// Steady-state opens: creates COUNT files in DIR (those missing), opens, reads one byte of
// and closes each once (the first touch: a listener may place its marks),
// then does the same ROUNDS more times and prints the mean wall time per
// open+read+close of those rounds (nanoseconds). Used by
// apparmor-steady-state.sh; build: gcc -O2 -o steady-opens steady-opens.c
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int pass(const char *dir, int n) {
  char path[4096], byte;
  for (int i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/f%d", dir, i);
    int fd = open(path, O_RDONLY);
    if (fd < 0 || read(fd, &byte, 1) != 1) {
      perror(path);
      return 1;
    }
    close(fd);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 4 || atoi(argv[2]) <= 0 || atoi(argv[3]) <= 0) {
    fprintf(stderr, "usage: %s DIR COUNT ROUNDS\n", argv[0]);
    return 2;
  }
  int n = atoi(argv[2]), rounds = atoi(argv[3]);
  char path[4096];
  for (int i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/f%d", argv[1], i);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0 && errno == EEXIST) continue;  // made by an earlier run
    if (fd < 0 || write(fd, "x", 1) != 1) {
      perror(path);
      return 1;
    }
    close(fd);
  }
  if (pass(argv[1], n)) return 1;
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (int r = 0; r < rounds; r++)
    if (pass(argv[1], n)) return 1;
  clock_gettime(CLOCK_MONOTONIC, &end);
  double ns = (end.tv_sec - start.tv_sec) * 1e9 + (end.tv_nsec - start.tv_nsec);
  printf("%.0f\n", ns / ((double)n * rounds));
  return 0;
}
