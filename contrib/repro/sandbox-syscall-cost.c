/* Per-call cost of the launcher's sandbox (contrib/repro/sandbox-syscall-cost.sh):
   N getppid calls, then N/10 open + 1-byte read + close of ARGV[1]. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/syscall.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(int c,char**v){
  int n=1000000; double t=now();
  for(int i=0;i<n;i++) syscall(SYS_getppid);
  double g=(now()-t)/n; t=now();
  for(int i=0;i<n/10;i++){int fd=open(v[1],O_RDONLY); char b; read(fd,&b,1); close(fd);}
  double o=(now()-t)/(n/10);
  printf("%s: getppid %.0f ns, open+read+close %.0f ns\n", v[2], g, o);
  return 0;
}
