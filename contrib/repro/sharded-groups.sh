#!/usr/bin/env bash
# What a fanotify group per marked filesystem buys rampartd
# (crates/enforce/src/groups.rs; docs/benchmarks.md): two tmpfs marked,
# N first-touch clients split between them (first-touch.c, COUNT fresh
# files each), total events per second, for two rampart binaries side by
# side (e.g. before and after the change), interleaved per round.
#
# As root, from the repository root:
#   bash contrib/repro/sharded-groups.sh OLD_RAMPART NEW_RAMPART
# Environment: CLIENTS ("2 4 8 16"), COUNT (10000), RUNS (3).
#
# Runs in a private mount namespace on tmpfs mounts it makes; it marks
# only those and stops only the daemons it started.
set -euo pipefail
if [[ -z "${SHARDED_NS:-}" ]]; then
  exec env SHARDED_NS=1 unshare -m --propagation private bash "$0" "$@"
fi
old=$(realpath "${1:?usage: $0 OLD_RAMPART NEW_RAMPART}")
new=$(realpath "${2:?usage: $0 OLD_RAMPART NEW_RAMPART}")
CLIENTS=${CLIENTS:-2 4 8 16}
COUNT=${COUNT:-10000}
RUNS=${RUNS:-3}
work=$(mktemp -d /tmp/sharded-groups.XXXXXX)
daemon=
cleanup() {
  [[ -n "$daemon" ]] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  umount "$work/a" "$work/b" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
gcc -O2 -o "$work/first-touch" "$(dirname "$0")/first-touch.c"
mkdir "$work/a" "$work/b" "$work/state"
mount -t tmpfs a "$work/a"
mount -t tmpfs b "$work/b"
echo "$(nproc) CPUs, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
# Events per second of N clients, half on each filesystem, under binary $1.
measure() {
  local bin=$1 n=$2 pids=() total=0
  "$bin" daemon --mark "$work/a" --mark "$work/b" --socket "$work/state/sock" \
    --audit-log "$work/state/audit.log" 2>"$work/state/stderr" &
  daemon=$!
  for _ in $(seq 100); do [[ -S "$work/state/sock" ]] && break; sleep 0.1; done
  for i in $(seq "$n"); do
    local fs=a; (( i % 2 )) || fs=b
    mkdir -p "$work/$fs/c$i"
    "$work/first-touch" "$work/$fs/c$i" "$COUNT" > "$work/state/out$i" &
    pids+=($!)
  done
  wait "${pids[@]}"
  for i in $(seq "$n"); do
    total=$(awk -v t="$total" '{ print t + 1e9 / $1 }' "$work/state/out$i")
  done
  kill "$daemon"; wait "$daemon" 2>/dev/null || true; daemon=
  rm -f "$work/state/sock"
  rm -rf "$work/a"/c* "$work/b"/c*
  printf '%.0f' "$total"
}
for run in $(seq "$RUNS"); do
  for n in $CLIENTS; do
    o=$(measure "$old" "$n"); w=$(measure "$new" "$n")
    echo "run $run: $n clients: old $o events/s, new $w events/s, new/old $(awk -v a="$w" -v b="$o" 'BEGIN { printf "%.2f", a / b }')"
  done
done
