/*
 * read_key add DESC PAYLOAD | read DESC | del DESC: a "user" key DESC in
 * the caller's user keyring (@u, shared by every process of its user):
 * add it, read its payload (succeeds, exit 0, if it could), or revoke
 * it. A confined process reads what an unconfined one of its user keeps
 * there (SELinux's `key { view read }` on the key's label).
 */
#include "adversarial.h" /* first: it defines _GNU_SOURCE */

#include <sys/syscall.h>

#define KEY_SPEC_USER_KEYRING -4
#define KEYCTL_REVOKE 3
#define KEYCTL_SEARCH 10
#define KEYCTL_READ 11

static long search(const char *desc) {
    return syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", desc, 0);
}

int main(int argc, char **argv) {
    if (argc < 3) verdict(BROKEN, "usage: read_key add DESC PAYLOAD | read DESC | del DESC");
    const char *mode = argv[1], *desc = argv[2];
    if (!strcmp(mode, "add") && argc == 4) {
        long id = syscall(SYS_add_key, "user", desc, argv[3], strlen(argv[3]), KEY_SPEC_USER_KEYRING);
        if (id < 0) verdict(BROKEN, "add_key: %s", strerror(errno));
        verdict(SUCCEEDED, "added key %ld", id);
    }
    if (!strcmp(mode, "del")) {
        long id = search(desc);
        if (id < 0 || syscall(SYS_keyctl, KEYCTL_REVOKE, id) < 0) verdict(BROKEN, "revoke: %s", strerror(errno));
        verdict(SUCCEEDED, "revoked key %ld", id);
    }
    if (!strcmp(mode, "read")) {
        long id = search(desc);
        if (id < 0) FAILED(errno, "keyctl search @u for %s", desc);
        char buf[256] = {0};
        long n = syscall(SYS_keyctl, KEYCTL_READ, id, buf, sizeof buf - 1);
        if (n < 0) FAILED(errno, "keyctl read of key %ld", id);
        verdict(SUCCEEDED, "read key %s: %s", desc, buf);
    }
    verdict(BROKEN, "unknown mode %s", mode);
}
