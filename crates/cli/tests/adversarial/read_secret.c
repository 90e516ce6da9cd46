/*
 * read_secret PATH: reads the first line of PATH.
 * Succeeds (exit 0) if it could; the scenario chooses a PATH the
 * attacker's domain may not read (attacks 1 and the restart test), or
 * may (the controls).
 */
#include "adversarial.h" /* first: it defines _GNU_SOURCE */

int main(int argc, char **argv) {
    if (argc != 2) verdict(BROKEN, "usage: read_secret PATH");
    char line[256];
    int err = read_line(argv[1], line, sizeof line);
    if (err) FAILED(err, "reading %s", argv[1]);
    verdict(SUCCEEDED, "read %s: %s", argv[1], line);
}
