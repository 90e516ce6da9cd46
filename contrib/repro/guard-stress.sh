#!/usr/bin/env bash
# Two domains that may not read each other exec'ing at once (the
# adversarial tests' policy: app_t and trusted_t), so that every exec is
# held by a memory guard (crates/enforce/src/memory_guard.rs) and the
# guards freeze each other's domains: two spawners of app_t -> trusted_t
# transitions (signal state flushed), one of execs within trusted_t, one
# within app_t, N spawns each, at once. Prints each spawner's failures,
# the time, and what the daemon said besides its audit lines.
# Needs root, checkpolicy, python3. From the repository root after
# `cargo build --release`:
#   bash contrib/repro/guard-stress.sh [N]
set -euo pipefail
RAMPART=${RAMPART:-$PWD/target/release/rampart}
N=${1:-100}
W=$(mktemp -d /tmp/rampart-stress.XXXXXX)
trap 'rm -rf "$W"' EXIT
chmod 755 "$W"; mkdir "$W/run"
checkpolicy -M -c 33 -o "$W/run/p.33" crates/cli/tests/data/adversarial.conf >/dev/null
printf '/.*\tsystem_u:object_r:file_t:s0\n' > "$W/run/file_contexts"
unshare -m --propagation private bash -euc '
W=$1; N=$2; RAMPART=$3
mkdir "$W/t"; mount -t tmpfs none "$W/t"
label() { python3 -c "import os,sys; os.setxattr(sys.argv[2], \"security.selinux\", sys.argv[1].encode() + b\"\0\")" "$@"; }
for t in app trusted; do cp /bin/true "$W/t/$t-true"; done
label system_u:object_r:app_exec_t:s0 "$W/t/app-true"
label system_u:object_r:trusted_exec_t:s0 "$W/t/trusted-true"
SPAWN="import os, sys
prog, n = sys.argv[1], int(sys.argv[2])
bad = 0
for _ in range(n):
    try:
        pid = os.posix_spawn(prog, [prog], {})
        _, status = os.waitpid(pid, 0)
        bad += status != 0
    except OSError as e:
        bad += 1
print(sys.argv[3], \"failed\", bad, \"of\", n)"
"$RAMPART" daemon --mark "$W/t" --policy "$W/run/p.33" --file-contexts "$W/run/file_contexts" \
    --default-context system_u:system_r:unconfined_t:s0 --socket "$W/sock" --cgroup "rampart-stress.$$" 2>"$W/daemon.err" &
D=$!
for _ in $(seq 200); do "$RAMPART" status --socket "$W/sock" >/dev/null 2>&1 && break; sleep 0.05; done
APP=system_u:system_r:app_t:s0; TRUSTED=system_u:system_r:trusted_t:s0
start=$(date +%s.%N)
"$RAMPART" run --socket "$W/sock" --force --context "$APP" -- setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c "$SPAWN" "$W/t/trusted-true" "$N" transitions | cat &
# Through env: the daemon watches a launched program outside the marked
# filesystems with an exec mark until it runs, and app_t may not execute
# the python3 the other spawners run.
"$RAMPART" run --socket "$W/sock" --force --context "$TRUSTED" -- /usr/bin/env python3 -c "$SPAWN" "$W/t/trusted-true" "$N" trusted_t-within | cat &
"$RAMPART" run --socket "$W/sock" --force --context "$APP" -- setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c "$SPAWN" "$W/t/app-true" "$N" app_t-within | cat &
"$RAMPART" run --socket "$W/sock" --force --context "$APP" -- setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c "$SPAWN" "$W/t/trusted-true" "$N" transitions2 | cat &
wait %2 %3 %4 %5 2>/dev/null || true
echo "elapsed $(python3 -c "print(round($(date +%s.%N) - $start, 2))") s"
kill -TERM $D; wait $D || true
grep -v "enforcing on\|audit:\|stopping:" "$W/daemon.err" | sort | uniq -c | head -5
umount "$W/t"
' _ "$W" "$N" "$RAMPART"
