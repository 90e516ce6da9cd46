/*
 * tty_inject: types a line into its controlling terminal's input
 * (TIOCSTI), which the shell that started it would read and run once it
 * exits, outside every domain. Succeeds (exit 0) once the kernel took
 * every character into the terminal's input (the terminal echoes them).
 */
#include "adversarial.h" /* first: it defines _GNU_SOURCE */

#include <sys/ioctl.h>
#include <termios.h>

int main(void) {
    if (!isatty(0)) verdict(BROKEN, "standard input is not a terminal");
    static const char line[] = "echo injected-by-a-confined-process\n";
    for (const char *c = line; *c; c++) {
        if (ioctl(0, TIOCSTI, c) < 0) {
            /* EIO: dev.tty.legacy_tiocsti is 0, the kernel refuses it. */
            if (errno == EIO) verdict(UNSUPPORTED, "TIOCSTI is off in this kernel (dev.tty.legacy_tiocsti)");
            FAILED(errno, "ioctl(TIOCSTI)");
        }
    }
    verdict(SUCCEEDED, "typed into the terminal: %.*s", (int)strlen(line) - 1, line);
}
