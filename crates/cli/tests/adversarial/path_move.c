/*
 * path_move: attack 8, moving a file whose label comes from its path
 * (file_contexts; the file has no xattr) to a path labeled readable.
 *
 *   path_move link SRC DST    hard-links SRC to DST, then reads DST;
 *   path_move rename SRC DST  renames SRC to DST, then reads DST.
 *
 * Succeeds if it read DST.
 */
#include "adversarial.h"

int main(int argc, char **argv) {
    if (argc != 4) verdict(BROKEN, "usage: path_move link|rename SRC DST");
    const char *op = argv[1], *src = argv[2], *dst = argv[3];
    int rc;
    if (strcmp(op, "link") == 0)
        rc = link(src, dst);
    else if (strcmp(op, "rename") == 0)
        rc = rename(src, dst);
    else
        verdict(BROKEN, "unknown operation %s", op);
    if (rc != 0) FAILED(errno, "%s %s -> %s", op, src, dst);
    char line[256];
    int err = read_line(dst, line, sizeof line);
    if (err) FAILED(err, "after %s %s -> %s, reading %s", op, src, dst, dst);
    verdict(SUCCEEDED, "after %s %s -> %s, read %s: %s", op, src, dst, dst, line);
}
