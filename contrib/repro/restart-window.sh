#!/usr/bin/env bash
# The fail-open window after rampartd dies (docs/security.md): how long a
# new daemon takes from its start to answering `rampart status` (the
# system policy and file_contexts loaded, the filesystem marked), five
# times, on a tmpfs of its own in a private mount namespace. Each daemon
# is killed with SIGKILL, as an attacker or a crash would.
#
#   sudo bash contrib/repro/restart-window.sh [path/to/rampart]
set -euo pipefail
if [[ "${1:-}" != --inside ]]; then
  exec unshare -m --propagation private bash "$0" --inside "${1:-target/release/rampart}"
fi
R=$(realpath "$2")
T=$(mktemp -d /tmp/rampart-restart.XXXXXX)
mount -t tmpfs -o size=16m tmpfs "$T"
# A killed daemon leaves its (empty) cgroup tree: removed at the end.
CG=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' /proc/self/mountinfo)
trap 'umount -l "$T"; rmdir "$T"; [ -n "$CG" ] && rmdir "$CG/rampart-restart-window" 2>/dev/null || true' EXIT
for _ in 1 2 3 4 5; do
  start=$(date +%s%N)
  "$R" daemon --mark "$T" --socket "$T/sock" --cgroup rampart-restart-window 2>/dev/null &
  d=$!
  until "$R" status --socket "$T/sock" >/dev/null 2>&1; do sleep 0.005; done
  ready=$(date +%s%N)
  echo "ready after $(((ready - start) / 1000000)) ms"
  kill -KILL "$d"
  wait "$d" 2>/dev/null || true
  rm -f "$T/sock"
done
