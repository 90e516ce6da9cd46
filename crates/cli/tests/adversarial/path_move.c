/*
 * path_move: attack 8, moving a file whose label comes from its path
 * (file_contexts; the file has no xattr) to a path labeled readable.
 *
 *   path_move link SRC DST            hard-links SRC to DST, reads DST;
 *   path_move rename SRC DST          renames SRC to DST, reads DST;
 *   path_move rename-dir SRC DST NAME renames directory SRC to DST (in
 *                                     the same parent), reads DST/NAME.
 *
 * Succeeds if it read what it moved. SRC and DST are on one filesystem,
 * so EXDEV is a refusal (Landlock's REFER), not a limitation: blocked.
 */
#include "adversarial.h"

int main(int argc, char **argv) {
    if (argc < 4) verdict(BROKEN, "usage: path_move link|rename SRC DST | path_move rename-dir SRC DST NAME");
    const char *op = argv[1], *src = argv[2], *dst = argv[3];
    char path[4096];
    snprintf(path, sizeof path, "%s", dst);
    int rc;
    if (strcmp(op, "link") == 0 && argc == 4) {
        rc = link(src, dst);
    } else if (strcmp(op, "rename") == 0 && argc == 4) {
        rc = rename(src, dst);
    } else if (strcmp(op, "rename-dir") == 0 && argc == 5) {
        rc = rename(src, dst);
        snprintf(path, sizeof path, "%s/%s", dst, argv[4]);
    } else {
        verdict(BROKEN, "unknown operation %s, or wrong arguments", op);
    }
    if (rc != 0) {
        int err = errno;
        verdict(is_denial(err) || err == EXDEV ? BLOCKED : BROKEN, "%s %s -> %s: %s", op, src, dst, strerror(err));
    }
    char line[256];
    int err = read_line(path, line, sizeof line);
    if (err) FAILED(err, "after %s %s -> %s, reading %s", op, src, dst, path);
    verdict(SUCCEEDED, "after %s %s -> %s, read %s: %s", op, src, dst, path, line);
}
