/*
 * exec_pending: attack 4, a failed exec keeps its pending transition.
 *
 *   exec_pending e2big TRUSTED SELF SECRET
 *   exec_pending eperm TRUSTED SELF SECRET
 *
 * Stage 1 execs TRUSTED, a file whose exec would move the attacker's
 * domain into one that may read SECRET, so that the exec fails after
 * its open was decided (the transition recorded):
 *   e2big: with an argument longer than MAX_ARG_STRLEN (the exec opens
 *          the file before it copies the arguments);
 *   eperm: TRUSTED is a script whose interpreter the attacker may not
 *          execute (the daemon denies the interpreter's open).
 * Then it execs SELF (its own program, which it may run without a
 * transition) as stage 2, which reads SECRET: it succeeds if the failed
 * exec's transition was applied to the second exec.
 *
 *   exec_pending stage2 [...]: stage 2; the secret's path is in
 *   $ADV_SECRET, what the first exec did in $ADV_FIRST_EXEC. (Also what
 *   runs as the interpreter of the eperm script where that exec is not
 *   denied: in a permissive run.)
 */
#include "adversarial.h" /* first: it defines _GNU_SOURCE */

static int stage2(void) {
    const char *secret = getenv("ADV_SECRET");
    const char *first = getenv("ADV_FIRST_EXEC");
    if (!secret) verdict(BROKEN, "stage 2 without ADV_SECRET");
    if (!first) first = "ran (stage 2 is its interpreter)";
    char line[256];
    int err = read_line(secret, line, sizeof line);
    if (err) FAILED(err, "the first exec %s; stage 2 reading %s", first, secret);
    verdict(SUCCEEDED, "the first exec %s; stage 2 read %s: %s", first, secret, line);
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "stage2") == 0) return stage2();
    if (argc != 5 || (strcmp(argv[1], "e2big") != 0 && strcmp(argv[1], "eperm") != 0))
        verdict(BROKEN, "usage: exec_pending e2big|eperm TRUSTED SELF SECRET");
    const char *trusted = argv[2], *self = argv[3], *secret = argv[4];
    setenv("ADV_SECRET", secret, 1);
    char *first_argv[3] = {(char *)trusted, NULL, NULL};
    if (strcmp(argv[1], "e2big") == 0) {
        /* One string longer than MAX_ARG_STRLEN (32 pages): E2BIG. */
        size_t len = 40 * 4096;
        char *big = malloc(len + 1);
        if (!big) verdict(BROKEN, "malloc failed");
        memset(big, 'x', len);
        big[len] = 0;
        first_argv[1] = big;
    }
    execv(trusted, first_argv);
    int err = errno;
    char what[128];
    snprintf(what, sizeof what, "of %s failed with %s", trusted, strerrorname_np(err) ? strerrorname_np(err) : "?");
    if (strcmp(argv[1], "e2big") == 0 && err != E2BIG && !is_denial(err))
        verdict(BROKEN, "the first exec %s, not E2BIG", what);
    if (strcmp(argv[1], "eperm") == 0 && !is_denial(err)) verdict(BROKEN, "the first exec %s, not a denial", what);
    setenv("ADV_FIRST_EXEC", what, 1);
    char *second_argv[] = {(char *)self, "stage2", NULL};
    execv(self, second_argv);
    FAILED(errno, "the first exec %s; exec of own program %s", what, self);
}
