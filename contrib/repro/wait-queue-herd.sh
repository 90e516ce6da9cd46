#!/usr/bin/env bash
# What fanotify's one wait queue per group costs as openers are added
# (docs/architecture.md, "The openers' wait queue"; docs/benchmarks.md):
# runs wait-queue-herd.c at each thread count on a tmpfs of its own, a
# trivial listener answering, and prints opens per second and the
# openers' context switches per open; then the openers spread over two
# tmpfs, marked in one group (read by two listener threads) and in two
# groups (a thread each): what sharding over groups buys. Rampart's code
# is not involved.
#
# As root, from the repository root:
#   bash contrib/repro/wait-queue-herd.sh
# Environment: THREADS ("1 2 4 8 16"), SECONDS_PER_RUN (2), RUNS (3),
# HERD (a wait-queue-herd binary built elsewhere, for a machine without gcc).
#
# Runs in a private mount namespace on a tmpfs it mounts and unmounts; it
# marks only that tmpfs.
set -euo pipefail
if [[ -z "${HERD_NS:-}" ]]; then
  exec env HERD_NS=1 unshare -m --propagation private bash "$0" "$@"
fi
THREADS=${THREADS:-1 2 4 8 16}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-2}
RUNS=${RUNS:-3}
work=$(mktemp -d /tmp/wait-queue-herd.XXXXXX)
cleanup() {
  umount "$work/fs" "$work/fs2" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
if [[ -n "${HERD:-}" ]]; then
  cp "$HERD" "$work/herd"
else
  gcc -O2 -pthread -o "$work/herd" "$(dirname "$0")/wait-queue-herd.c"
fi
mkdir "$work/fs" "$work/fs2"
mount -t tmpfs herd "$work/fs"
mount -t tmpfs herd2 "$work/fs2"
echo "$(nproc) CPUs, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
for run in $(seq "$RUNS"); do
  for n in $THREADS; do
    echo "run $run: $("$work/herd" "$work/fs" "$n" "$SECONDS_PER_RUN")"
    echo "run $run: $("$work/herd" "$work/fs,$work/fs2" "$n" "$SECONDS_PER_RUN" 1)"
    echo "run $run: $("$work/herd" "$work/fs,$work/fs2" "$n" "$SECONDS_PER_RUN" 2)"
  done
done
