#!/usr/bin/env bash
# What AppArmor's signal rules cost a signal (crates/enforce/src/signals.rs,
# crates/apparmor/src/ipc.rs): rampartd with AppArmor alone (--no-selinux),
# a launched process sending N signals 0 (`kill -0`, the existence test)
# to itself through the daemon (the launcher's filter hands every kill
# over), under a profile that allows it (`signal peer=sigs`). Run it with
# a build from before the check (RAMPART=...) for the baseline. Needs
# root, apparmor_parser, python3. From the repository root after
# `cargo build --release`:
#   bash contrib/repro/apparmor-signals.sh [N]
set -euo pipefail
N=${1:-20000}
RAMPART=${RAMPART:-$PWD/target/release/rampart}
W=$(mktemp -d /tmp/rampart-aasig.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir "$W/profiles" "$W/cache"
cat > "$W/profiles/sigs" <<'PROFILE'
profile sigs {
  signal peer=sigs,
}
PROFILE
unshare -m --propagation private bash -euc '
W=$1; N=$2; RAMPART=$3
mkdir "$W/t"; mount -t tmpfs none "$W/t"
KILLS="import os, sys, time
n = int(sys.argv[1]); me = os.getpid()
t = time.perf_counter()
for _ in range(n):
    os.kill(me, 0)
print(f\"{sys.argv[2]}: {(time.perf_counter() - t) / n * 1e6:.1f} us per kill\")"
"$RAMPART" daemon --no-selinux --apparmor "$W/profiles" --apparmor-cache "$W/cache" --mark "$W/t" \
    --socket "$W/sock" --cgroup "rampart-aasig.$$" 2>"$W/daemon.err" &
D=$!
trap "kill $D 2>/dev/null || true" EXIT
for _ in $(seq 200); do "$RAMPART" status --socket "$W/sock" >/dev/null 2>&1 && break; sleep 0.05; done
for round in 1 2 3; do
    "$RAMPART" run --socket "$W/sock" --apparmor sigs -- /usr/bin/python3 -c "$KILLS" "$N" "round $round, under sigs"
done
kill -TERM $D; wait $D || true
umount "$W/t"
' _ "$W" "$N" "$RAMPART"
