#!/usr/bin/env bash
# Issue 11's second target: steady state under AppArmor profiles, nothing
# changing, against no listener (docs/benchmarks.md, "AppArmor through the
# daemon"). One client, steady-opens.c, opens, reads a byte of and closes
# COUNT files ROUNDS times after a first pass (the first touch, where the
# daemon places its ignore marks): on a tmpfs no listener marks (`none`),
# on rampartd's tmpfs in the default domain (`selinux`), and under two
# profiles (`rampart run --apparmor`): `rw` grants every open (open and
# access marks: opens and reads pass unasked), `r` grants reading only
# (an open mark needs every open request allowed, so each open stays an
# event; reads pass). Rounds alternate the clients.
#
# As root, from the repository root, after `cargo build --release -p rampart`
# (needs selinux-policy-default and apparmor_parser: scripts/install-deps.sh):
#   bash contrib/repro/apparmor-steady-state.sh
# Environment: COUNT (2000), ROUNDS (20), RUNS (5), SETTLE (2 s between
# clients), RAMPART (target/release/rampart), PREBUILT.
#
# Runs in a private mount namespace on tmpfs it mounts and unmounts; it
# marks only its own tmpfs and stops only the daemon it started.
set -euo pipefail
if [[ -z "${AA_STEADY_NS:-}" ]]; then
  exec env AA_STEADY_NS=1 unshare -m --propagation private bash "$0" "$@"
fi
RAMPART=$(realpath "${RAMPART:-target/release/rampart}")
COUNT=${COUNT:-2000}
ROUNDS=${ROUNDS:-20}
RUNS=${RUNS:-5}
work=$(mktemp -d /tmp/aa-steady.XXXXXX)
# PREBUILT: a directory holding steady-opens built elsewhere (no gcc there).
if [[ -n "${PREBUILT:-}" ]]; then cp "$PREBUILT/steady-opens" "$work/"; else gcc -O2 -o "$work/steady-opens" "$(dirname "$0")/steady-opens.c"; fi
mkdir -p "$work/fs" "$work/plain" "$work/state" "$work/profiles" "$work/cache"
mount -t tmpfs aa-steady "$work/fs"
mount -t tmpfs aa-steady-plain "$work/plain"
cat >"$work/profiles/steady" <<EOF
profile steady-rw {
  $work/fs/** rw,
}
profile steady-r {
  $work/fs/** r,
}
EOF
daemon=
cleanup() {
  [[ -n "$daemon" ]] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  umount "$work/fs" "$work/plain" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
"$RAMPART" daemon --mark "$work/fs" --socket "$work/state/sock" --audit-log "$work/state/audit.log" \
  --apparmor "$work/profiles" --apparmor-cache "$work/cache" "$@" 2>"$work/state/stderr" &
daemon=$!
for _ in $(seq 100); do [[ -S "$work/state/sock" ]] && break; sleep 0.1; done
[[ -S "$work/state/sock" ]] || { cat "$work/state/stderr"; exit 1; }

client() { "$work/steady-opens" "$1" "$COUNT" "$ROUNDS"; }
none() { client "$work/plain/$(basename "$1")"; }
selinux() { client "$1"; }
apparmor-rw() { "$RAMPART" run --socket "$work/state/sock" --apparmor steady-rw -- "$work/steady-opens" "$1" "$COUNT" "$ROUNDS"; }
apparmor-rw-no-sandbox() {
  "$RAMPART" run --socket "$work/state/sock" --no-sandbox --apparmor steady-rw -- "$work/steady-opens" "$1" "$COUNT" "$ROUNDS"
}
apparmor-r() {
  client "$1" >/dev/null # creates the files, which steady-r may not
  "$RAMPART" run --socket "$work/state/sock" --apparmor steady-r -- "$work/steady-opens" "$1" "$COUNT" "$ROUNDS"
}
for run in $(seq "$RUNS"); do
  for how in none selinux apparmor-rw apparmor-rw-no-sandbox apparmor-r; do
    dir="$work/fs/$how.$run"
    mkdir "$dir" "$work/plain/$how.$run"
    # The previous client's profile leaves the daemon's scope only when
    # the housekeeper prunes its cgroup: until then it limits the marks.
    sleep "${SETTLE:-2}"
    out=$("$how" "$dir")
    echo "run $run, $how: $out ns/open"
  done
done
"$RAMPART" status --socket "$work/state/sock" | grep -E 'Allowed|Denied|Ignore marks'
