// What writing down a supervised call costs (crates/enforce/src/
// calls_in_flight.rs): one pwrite of a record into a slot of a memfd
// when the call is received and one of zeroes when it is answered,
// 200,000 times; prints microseconds per call. A supervised call costs
// about 200 µs on the 2-CPU machine (contrib/repro/supervised-calls.sh).
// build: gcc -O2 -o calls-journal-cost calls-journal-cost.c
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 2048
#define SLOT 128
#define CALLS 200000

int main(void) {
  int fd = memfd_create("rampart-calls-in-flight", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, SLOTS * SLOT) != 0) {
    perror("memfd");
    return 1;
  }
  char record[88] = {1}, cleared[8] = {0};
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < CALLS; i++) {
    off_t at = (off_t)(i % SLOTS) * SLOT;
    if (pwrite(fd, record, sizeof record, at) < 0 || pwrite(fd, cleared, sizeof cleared, at) < 0) {
      perror("pwrite");
      return 1;
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  double ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
  printf("%.2f us per call written down and cleared\n", ns / CALLS / 1e3);
  return 0;
}
