#!/usr/bin/env bash
# Where a first-touch event's time goes (docs/benchmarks.md, "Reading the
# enforcement results"): runs rampartd on a tmpfs of its own, opens COUNT
# fresh files once each from one client and then from two at once, and
# prints per open: the wall time, the wake-up interrupts between CPUs (the
# RES and CAL lines of /proc/interrupts, all CPUs), and for two clients the
# share of CPU time left idle and rampartd's CPU time per event.
#
# As root, from the repository root, after `cargo build --release -p rampart`:
#   bash contrib/repro/first-touch-wakeups.sh [DAEMON FLAGS...]
# e.g. `... --pollers 2` or `... --spin-us 0`. Environment: COUNT (20000),
# RUNS (3), RAMPART (target/release/rampart), CLIENT_CPU and DAEMON_CPU (pin
# the clients and rampartd's threads to one CPU each, e.g. both 0).
#
# Runs in a private mount namespace on a tmpfs it mounts and unmounts; it
# marks only that tmpfs and stops only the daemon it started.
set -euo pipefail
if [[ -z "${FIRST_TOUCH_NS:-}" ]]; then
  exec env FIRST_TOUCH_NS=1 unshare -m --propagation private bash "$0" "$@"
fi
RAMPART=$(realpath "${RAMPART:-target/release/rampart}")
COUNT=${COUNT:-20000}
RUNS=${RUNS:-3}
work=$(mktemp -d /tmp/first-touch.XXXXXX)
gcc -O2 -o "$work/first-touch" "$(dirname "$0")/first-touch.c"
mkdir "$work/fs" "$work/state"
mount -t tmpfs first-touch "$work/fs"
daemon=
cleanup() {
  [[ -n "$daemon" ]] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  # A daemon built with event-phases.patch reports per-event phases.
  grep -h '^phases' "$work/state/stderr" 2>/dev/null || true
  umount "$work/fs" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
"$RAMPART" daemon --mark "$work/fs" --socket "$work/state/sock" --audit-log "$work/state/audit.log" "$@" \
  2>"$work/state/stderr" &
daemon=$!
for _ in $(seq 100); do [[ -S "$work/state/sock" ]] && break; sleep 0.1; done
[[ -S "$work/state/sock" ]] || { cat "$work/state/stderr"; exit 1; }
if [[ -n "${DAEMON_CPU:-}" ]]; then taskset -a -p -c "$DAEMON_CPU" "$daemon" >/dev/null; fi
client=("$work/first-touch")
if [[ -n "${CLIENT_CPU:-}" ]]; then client=(taskset -c "$CLIENT_CPU" "$work/first-touch"); fi

wakeups() { awk '/^ *(RES|CAL):/ { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i } END { print n }' /proc/interrupts; }
idle_total() { awk '/^cpu / { print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat; }
daemon_ticks() { awk '{ print $14 + $15 }' "/proc/$daemon/stat"; }
hz=$(getconf CLK_TCK)

mkdir "$work/fs/a" "$work/fs/b"
"${client[@]}" "$work/fs/a" 2000 >/dev/null # warm-up
for run in $(seq "$RUNS"); do
  w0=$(wakeups)
  out=$("${client[@]}" "$work/fs/a" "$COUNT")
  ns=${out%% *}
  w1=$(wakeups)
  echo "run $run, 1 client:  $ns ns/open, $(((w1 - w0) * 100 / COUNT))/100 wake-ups per open"
  read -r i0 t0 < <(idle_total)
  d0=$(daemon_ticks)
  w0=$(wakeups)
  "${client[@]}" "$work/fs/a" "$COUNT" >"$work/one" &
  other=$!
  "${client[@]}" "$work/fs/b" "$COUNT" >"$work/two"
  wait "$other"
  w1=$(wakeups)
  d1=$(daemon_ticks)
  read -r i1 t1 < <(idle_total)
  echo "run $run, 2 clients: $(cut -d' ' -f1 "$work/one") and $(cut -d' ' -f1 "$work/two") ns/open," \
    "$(((w1 - w0) * 100 / (2 * COUNT)))/100 wake-ups per open, $(((i1 - i0) * 100 / (t1 - t0)))% idle," \
    "rampartd $(((d1 - d0) * 1000000 / hz / (2 * COUNT))) µs CPU per event"
done
