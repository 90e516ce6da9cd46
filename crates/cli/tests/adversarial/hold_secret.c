/*
 * hold_secret PATH SECONDS: reads the first line of PATH into a buffer
 * on its stack and keeps running (on a CPU) with it there for SECONDS.
 * The program of another domain whose memory perf_stack reads.
 */
#include "adversarial.h" /* first: it defines _GNU_SOURCE */

int main(int argc, char **argv) {
    if (argc != 3) verdict(BROKEN, "usage: hold_secret PATH SECONDS");
    char line[256];
    int err = read_line(argv[1], line, sizeof line);
    if (err) FAILED(err, "reading %s", argv[1]);
    volatile unsigned char sink = 0;
    for (double end = now_s() + atof(argv[2]); now_s() < end;)
        for (size_t i = 0; line[i]; i++) sink ^= (unsigned char)line[i];
    verdict(SUCCEEDED, "held %s for %s s", argv[1], argv[2]);
}
