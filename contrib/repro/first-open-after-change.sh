#!/usr/bin/env bash
# What the first opens after a policy change wait (docs/architecture.md,
# "Decisions without the path"): runs rampartd on a tmpfs of its own,
# creates 40 files (their creating opens place ignore marks), then three
# times: `rampart setbool` (every mark flushed, a new epoch), and the time
# of open(O_RDONLY) of four of the files not opened since, in µs. The
# first one after a change waits for what the default domain is granted on
# every label file_contexts could give (path_labels.rs).
#
# As root, from the repository root, after `cargo build --release -p rampart`:
#   bash contrib/repro/first-open-after-change.sh
# Runs in a private mount namespace on a tmpfs it mounts and unmounts; it
# marks only that tmpfs and stops only the daemon it started.
set -euo pipefail
if [[ -z "${FIRST_OPEN_NS:-}" ]]; then
  exec env FIRST_OPEN_NS=1 unshare -m --propagation private bash "$0" "$@"
fi
RAMPART=$(realpath "${RAMPART:-target/release/rampart}")
work=$(mktemp -d /tmp/first-open.XXXXXX)
mkdir "$work/fs" "$work/state"
mount -t tmpfs first-open "$work/fs"
daemon=
cleanup() {
  [[ -n "$daemon" ]] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  umount "$work/fs" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
"$RAMPART" daemon --mark "$work/fs" --socket "$work/state/sock" --audit-log "$work/state/audit.log" \
  2>"$work/state/stderr" &
daemon=$!
for _ in $(seq 100); do [[ -S "$work/state/sock" ]] && break; sleep 0.1; done
[[ -S "$work/state/sock" ]] || { cat "$work/state/stderr"; exit 1; }
for i in $(seq 40); do echo x >"$work/fs/f$i"; done
time_opens() {
  python3 - "$@" <<'PY'
import os, sys, time
def micros(path):
    start = time.perf_counter_ns()
    fd = os.open(path, os.O_RDONLY)
    took = (time.perf_counter_ns() - start) / 1000
    os.close(fd)
    return took
print(" ".join("%.0f" % micros(p) for p in sys.argv[1:]))
PY
}
for round in 1 2 3; do
  "$RAMPART" setbool --socket "$work/state/sock" httpd_enable_cgi $((round % 2)) >/dev/null
  base=$((round * 10))
  echo "after setbool $round, four first opens (µs): $(time_opens "$work/fs/f$((base + 1))" "$work/fs/f$((base + 2))" \
    "$work/fs/f$((base + 3))" "$work/fs/f$((base + 4))")"
done
