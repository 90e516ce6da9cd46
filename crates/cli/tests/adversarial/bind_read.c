/*
 * bind_read SRC DIR NAME: attack 1, as root in a confined domain (issue
 * 7's attacker): bind-mounts SRC (a directory of the marked filesystem)
 * on DIR, reads DIR/NAME through the new mount, and unmounts it.
 * Succeeds if it read it; a refused mount is blocked.
 */
#include "adversarial.h" /* first: it defines _GNU_SOURCE */

#include <sys/mount.h>

int main(int argc, char **argv) {
    if (argc != 4) verdict(BROKEN, "usage: bind_read SRC DIR NAME");
    const char *src = argv[1], *dir = argv[2];
    if (mount(src, dir, NULL, MS_BIND, NULL) != 0) FAILED(errno, "bind mount of %s on %s", src, dir);
    char path[4096], line[256];
    snprintf(path, sizeof path, "%s/%s", dir, argv[3]);
    int err = read_line(path, line, sizeof line);
    umount2(dir, MNT_DETACH);
    if (err) FAILED(err, "reading %s through a bind mount of %s", path, src);
    verdict(SUCCEEDED, "read %s through a bind mount of %s: %s", path, src, line);
}
