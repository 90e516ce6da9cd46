#!/usr/bin/env bash
# Issue 11's first target: a first-touch open decided by AppArmor through
# rampartd (path from the event's descriptor, the profile's DFA, stacked
# on SELinux's decision) against the same open decided by SELinux alone
# (docs/benchmarks.md, "AppArmor through the daemon").
#
# rampartd runs Debian's policy and one AppArmor profile that lets its
# processes read and write everything on a tmpfs of its own. One client,
# first-touch.c, opens COUNT fresh files once each (every open is an
# event): started plainly (the default domain, SELinux only; while no
# process is confined the daemon need not even look up who opens), the
# same while an httpd_t process sleeps (`confined-alive`: every event's
# opener is looked up, as it is for any confined client), then under the
# profile (`rampart run --apparmor`), under it without the launcher's
# sandbox (`--no-sandbox`: the daemon's part alone, without the client's
# own Landlock and seccomp costs), and `launched`: started by `rampart run
# --force --context initrc_t` (a domain Debian's policy lets open every
# label the tmpfs files may have: in a cgroup of the daemon's tree, its
# opener looked up, sandboxed, but no profile), which separates "launched
# and looked up" from "decided by AppArmor". Rounds alternate the five.
# Each line also gives the wake-up interrupts between CPUs per open (RES
# and CAL of /proc/interrupts, all CPUs): about 1 when each answer has to
# wake the opener's CPU out of halt (docs/benchmarks.md).
#
# As root, from the repository root, after `cargo build --release -p rampart`
# (needs selinux-policy-default and apparmor_parser: scripts/install-deps.sh):
#   bash contrib/repro/apparmor-first-touch.sh
# Environment: COUNT (20000), RUNS (5), RAMPART (target/release/rampart),
# CLIENTS (a subset of the five, in the order given), CLIENT_CPU and
# DAEMON_CPU (pin the clients and rampartd's threads, e.g. both 0: the
# placement decides whether an answer wakes a halted CPU).
#
# Runs in a private mount namespace on a tmpfs it mounts and unmounts; it
# marks only that tmpfs and stops only the daemon it started.
set -euo pipefail
if [[ -z "${AA_FIRST_TOUCH_NS:-}" ]]; then
  exec env AA_FIRST_TOUCH_NS=1 unshare -m --propagation private bash "$0" "$@"
fi
RAMPART=$(realpath "${RAMPART:-target/release/rampart}")
COUNT=${COUNT:-20000}
RUNS=${RUNS:-5}
work=$(mktemp -d /tmp/aa-first-touch.XXXXXX)
# PREBUILT: a directory holding first-touch built elsewhere (no gcc there).
if [[ -n "${PREBUILT:-}" ]]; then cp "$PREBUILT/first-touch" "$work/"; else gcc -O2 -o "$work/first-touch" "$(dirname "$0")/first-touch.c"; fi
mkdir -p "$work/fs" "$work/state" "$work/profiles" "$work/cache"
mount -t tmpfs aa-first-touch "$work/fs"
cat >"$work/profiles/first-touch" <<EOF
profile first-touch {
  $work/fs/** rw,
}
EOF
daemon=
cleanup() {
  [[ -n "$daemon" ]] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  # A daemon built with apparmor-phases.patch reports per-event phases.
  grep -h '^phases' "$work/state/stderr" 2>/dev/null || true
  umount "$work/fs" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
"$RAMPART" daemon --mark "$work/fs" --socket "$work/state/sock" --audit-log "$work/state/audit.log" \
  --apparmor "$work/profiles" --apparmor-cache "$work/cache" "$@" 2>"$work/state/stderr" &
daemon=$!
for _ in $(seq 100); do [[ -S "$work/state/sock" ]] && break; sleep 0.1; done
[[ -S "$work/state/sock" ]] || { cat "$work/state/stderr"; exit 1; }
if [[ -n "${DAEMON_CPU:-}" ]]; then taskset -a -p -c "$DAEMON_CPU" "$daemon" >/dev/null; fi
pin=()
if [[ -n "${CLIENT_CPU:-}" ]]; then pin=(taskset -c "$CLIENT_CPU"); fi

selinux() { "${pin[@]}" "$work/first-touch" "$1" "$COUNT"; }
confined-alive() {
  "$RAMPART" run --socket "$work/state/sock" --force --context system_u:system_r:httpd_t:s0 -- sleep 600 &
  local sleeper=$!
  sleep 0.5
  selinux "$1"
  kill "$sleeper"; wait "$sleeper" 2>/dev/null || true
}
launched() {
  "${pin[@]}" "$RAMPART" run --socket "$work/state/sock" --force --context system_u:system_r:initrc_t:s0 -- \
    "$work/first-touch" "$1" "$COUNT"
}
apparmor() {
  "${pin[@]}" "$RAMPART" run --socket "$work/state/sock" --apparmor first-touch -- "$work/first-touch" "$1" "$COUNT"
}
apparmor-no-sandbox() {
  "${pin[@]}" "$RAMPART" run --socket "$work/state/sock" --no-sandbox --apparmor first-touch -- \
    "$work/first-touch" "$1" "$COUNT"
}
wakeups() { awk '/^ *(RES|CAL):/ { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i } END { print n }' /proc/interrupts; }
mkdir "$work/fs/warm" && selinux "$work/fs/warm" >/dev/null
for run in $(seq "$RUNS"); do
  for how in ${CLIENTS:-selinux confined-alive launched apparmor apparmor-no-sandbox}; do
    dir="$work/fs/$how.$run"
    mkdir "$dir"
    w0=$(wakeups)
    out=$("$how" "$dir")
    w1=$(wakeups)
    echo "run $run, $how: ${out%% *} ns/open, $(((w1 - w0) * 100 / COUNT))/100 wake-ups per open"
  done
done
