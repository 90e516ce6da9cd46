#!/usr/bin/env bash
# Whether fanotify's pre-content events (FAN_PRE_ACCESS) could mediate
# mappings (docs/security.md, issue 7 attack 7): on a tmpfs and on an
# ext4 loop image, both made here, in a private mount namespace.
# Needs root and cc. Run: bash contrib/repro/pre-content-mmap.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/rampart-pre-content.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/probe" "$here/pre-content-mmap.c"
truncate -s 64M "$work/ext4.img"
mkfs.ext4 -q -F "$work/ext4.img"
mkdir "$work/tmpfs" "$work/ext4"
unshare -m --propagation private bash -euc '
    mount -t tmpfs none "$1/tmpfs"
    mount -o loop "$1/ext4.img" "$1/ext4"
    for fs in tmpfs ext4; do
        head -c 1048576 /dev/urandom > "$1/$fs/f"
        sync; echo 3 > /proc/sys/vm/drop_caches
        echo "== $fs"
        "$1/probe" "$1/$fs/f"
    done
    umount "$1/ext4" "$1/tmpfs"
' _ "$work"
