#!/usr/bin/env bash
# The highest two-client / one-client event throughput a listener can
# reach on this machine (docs/benchmarks.md, "2 threads / 1 thread").
#
# For each listener (the trivial one of trivial-listener.c, the same with
# FAN_REPORT_PIDFD, and rampartd), on a tmpfs of its own: one client opens
# COUNT fresh files once each (wall time per open, L1), then two clients
# at once, measuring the CPU time per event of the clients (Cc, their own
# open path: the event's creation, sleeping and being woken) and of the
# listener (Cl, all its threads, from /proc/PID/task/*/schedstat). With
# two CPUs, two clients can complete at most 2 / (Cc + Cl) events per
# second, however they are scheduled, so their throughput over one
# client's (1 / L1) is at most
#
#     ceiling = 2 * L1 / (Cc + Cl)
#
# and that only with both CPUs busy all the time. "measured" is the
# ratio the two clients got: 2 * L1 / L2 (L2: their mean wall time per
# open).
#
# As root, from the repository root, after `cargo build --release -p rampart`:
#   bash contrib/repro/event-cpu-ceiling.sh [DAEMON FLAGS...]
# Environment: COUNT (50000), RUNS (3), RAMPART (target/release/rampart),
# LISTENERS (default "trivial trivial-pidfd rampartd").
#
# Runs in a private mount namespace on tmpfs it mounts and unmounts; it
# marks only those and stops only the listeners it started.
set -euo pipefail
if [[ -z "${CEILING_NS:-}" ]]; then
  exec env CEILING_NS=1 unshare -m --propagation private bash "$0" "$@"
fi
RAMPART=$(realpath "${RAMPART:-target/release/rampart}")
COUNT=${COUNT:-50000}
RUNS=${RUNS:-3}
repro=$(dirname "$0")
work=$(mktemp -d /tmp/cpu-ceiling.XXXXXX)
gcc -O2 -o "$work/first-touch" "$repro/first-touch.c"
gcc -O2 -o "$work/trivial-listener" "$repro/trivial-listener.c"
listener=
cleanup() {
  [[ -n "$listener" ]] && kill "$listener" 2>/dev/null && wait "$listener" 2>/dev/null
  umount "$work/fs" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# CPU time of every thread of process $1 so far, in ns.
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{ n += $1 } END { printf "%d", n }'; }
idle_total() { awk '/^cpu / { print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat; }

start() {
  mkdir -p "$work/fs" "$work/state"
  mount -t tmpfs cpu-ceiling "$work/fs"
  case "$1" in
    trivial) "$work/trivial-listener" "$work/fs" >"$work/state/out" & ;;
    trivial-pidfd) "$work/trivial-listener" "$work/fs" pidfd >"$work/state/out" & ;;
    rampartd)
      shift
      "$RAMPART" daemon --mark "$work/fs" --socket "$work/state/sock" --audit-log "$work/state/audit.log" "$@" \
        2>"$work/state/stderr" &
      ;;
  esac
  listener=$!
  for _ in $(seq 100); do
    if [[ -s "$work/state/out" || -S "$work/state/sock" ]]; then return; fi
    sleep 0.1
  done
  echo "listener $1 did not start" >&2
  cat "$work/state/stderr" 2>/dev/null >&2
  exit 1
}

stop() {
  kill "$listener"
  wait "$listener" || true
  listener=
  umount "$work/fs"
  rm -rf "$work/state"
}

for name in ${LISTENERS:-trivial trivial-pidfd rampartd}; do
  start "$name" "$@"
  mkdir "$work/fs/a" "$work/fs/b"
  "$work/first-touch" "$work/fs/a" 2000 >/dev/null # warm-up
  for run in $(seq "$RUNS"); do
    one_client=$("$work/first-touch" "$work/fs/a" "$COUNT") # fails the script if the client does
    l1=${one_client%% *}
    read -r i0 t0 < <(idle_total)
    c0=$(cpu_ns "$listener")
    "$work/first-touch" "$work/fs/a" "$COUNT" >"$work/one" &
    other=$!
    "$work/first-touch" "$work/fs/b" "$COUNT" >"$work/two"
    wait "$other"
    c1=$(cpu_ns "$listener")
    read -r i1 t1 < <(idle_total)
    read -r wa ca <"$work/one"
    read -r wb cb <"$work/two"
    awk -v name="$name" -v run="$run" -v l1="$l1" -v wa="$wa" -v wb="$wb" -v ca="$ca" -v cb="$cb" \
      -v cl="$(((c1 - c0) / (2 * COUNT)))" -v idle="$(((i1 - i0) * 100 / (t1 - t0)))" 'BEGIN {
        cc = (ca + cb) / 2; l2 = (wa + wb) / 2
        printf "%-13s run %d: L1 %5.1f us, L2 %5.1f us, Cc %5.1f us, Cl %5.1f us, %2d%% idle: measured %.2fx, ceiling %.2fx\n",
          name, run, l1 / 1000, l2 / 1000, cc / 1000, cl / 1000, idle, 2 * l1 / l2, 2 * l1 / (cc + cl)
      }'
  done
  stop
done
