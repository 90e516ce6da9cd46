/*
 * Attack: the old domain's code run in the new one. Preloaded
 * (LD_PRELOAD) into a program whose exec moves the process into a domain
 * that may read the secret, this constructor reads it before the
 * program's main. The kernel sets AT_SECURE for a transition the policy
 * does not exempt (`process noatsecure`), and the dynamic loader then
 * ignores a preloaded path: the program runs alone.
 *
 * Built as a shared object (crates/cli/tests/adversarial.rs). SECRET: the
 * file to read.
 */
#include "adversarial.h"

__attribute__((constructor)) static void in_the_new_domain(void) {
    const char *path = getenv("SECRET");
    if (path == NULL) verdict(BROKEN, "SECRET is not set");
    char buf[256];
    int err = read_line(path, buf, sizeof buf);
    if (err != 0) FAILED(err, "the preloaded library could not read %s", path);
    verdict(SUCCEEDED, "the preloaded library read %s in the new domain: %s", path, buf);
}
