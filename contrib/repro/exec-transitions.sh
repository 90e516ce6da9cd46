#!/usr/bin/env bash
# What an exec costs, and what an exec transition adds
# (crates/enforce/src/cgroups.rs, secure_exec.rs, limits.rs,
# signal_state.rs): N spawns of /bin/true copied onto a marked tmpfs, by
# root in the default domain (an exec event, no domain), uid 65534 in app_t
# executing an app_exec_t copy (no transition), and uid 65534 in app_t
# executing a trusted_exec_t copy (a transition into trusted_t: the new
# image frozen, settled, its parent-death signal cleared by an injected
# call) under two policies: the adversarial tests' own
# (crates/cli/tests/data/adversarial.conf: no `siginh`, `rlimitinh` or
# `noatsecure` from app_t to trusted_t, so AT_SECURE is written, the
# limits reset and the signal state reset by injected calls too), and
# the same with those three granted. Under the first policy also root
# in trusted_t (which has no capabilities) executing a trusted_exec_t copy (no transition),
# alone and with an app_t process alive (app_t may not read trusted_t:
# each exec is held and made non-dumpable, crates/enforce/src/memory_guard.rs).
# Last, the transition once a clone(CLONE_FS) was noted, 100 more
# processes in the tree (crates/enforce/src/fs_sharing.rs).
# PARALLEL=K: K spawners at once per row, each N spawns; a row then says
# the wall time per spawn of all together and the spawns per second (the
# supervisor thread notes every exec call of a launched process:
# crates/enforce/src/exec_calls.rs). POLICIES=DIR: resets.33 and
# inherits.33 compiled already (`--policies DIR` writes them), for a
# machine without checkpolicy.
# Needs root, checkpolicy, python3. Run from the repository root after
# `cargo build --release`:
#   bash contrib/repro/exec-transitions.sh [N]
set -euo pipefail
compile() {
  checkpolicy -M -c 33 -o "$1/resets.33" crates/cli/tests/data/adversarial.conf >/dev/null
  sed 's/^allow app_t trusted_t:process transition;$/allow app_t trusted_t:process { transition siginh rlimitinh noatsecure };/' \
      crates/cli/tests/data/adversarial.conf > "$1/inherits.conf"
  grep -q 'transition siginh rlimitinh noatsecure' "$1/inherits.conf"
  checkpolicy -M -c 33 -o "$1/inherits.33" "$1/inherits.conf" >/dev/null
}
if [[ "${1:-}" == --policies ]]; then
  mkdir -p "$2"; compile "$2"; exit 0
fi
N=${1:-300}
RAMPART=${RAMPART:-$PWD/target/release/rampart}
W=$(mktemp -d /tmp/rampart-exec.XXXXXX)
trap 'rm -rf "$W"' EXIT
# uid 65534 reaches the copies beneath it.
chmod 755 "$W"
mkdir "$W/run"
if [[ -n "${POLICIES:-}" ]]; then
  cp "$POLICIES/resets.33" "$POLICIES/inherits.33" "$W/run/"
else
  compile "$W/run"
fi
printf '/.*\tsystem_u:object_r:file_t:s0\n' > "$W/run/file_contexts"
unshare -m --propagation private bash -euc '
set -o pipefail
W=$1; N=$2; RAMPART=$3; K=$4
# The sandboxed rows print through a pipe: a file opened for writing that
# app_t may not write would be revoked at the launch (/dev/null).
mkdir "$W/t"; mount -t tmpfs none "$W/t"
label() { python3 -c "import os,sys; os.setxattr(sys.argv[2], \"security.selinux\", sys.argv[1].encode() + b\"\0\")" "$@"; }
for t in bin app trusted; do cp /bin/true "$W/t/$t-true"; done
label system_u:object_r:bin_t:s0 "$W/t/bin-true"
label system_u:object_r:app_exec_t:s0 "$W/t/app-true"
label system_u:object_r:trusted_exec_t:s0 "$W/t/trusted-true"
SPAWN="import os, sys, time
prog, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[4])
def spawns():
    for _ in range(n):
        pid = os.posix_spawn(prog, [prog], {})
        _, status = os.waitpid(pid, 0)
        if status != 0:
            sys.exit(f\"{prog} failed: status {status}\")
t = time.perf_counter()
if k == 1:
    spawns()
else:
    workers = []
    for _ in range(k):
        pid = os.fork()
        if pid == 0:
            spawns()
            os._exit(0)
        workers.append(pid)
    if any(os.waitpid(w, 0)[1] != 0 for w in workers):
        sys.exit(f\"{prog}: a spawner failed\")
wall = time.perf_counter() - t
at_once = f\" ({k} at once, {n * k / wall:.0f} spawns/s)\" if k > 1 else \"\"
print(f\"{sys.argv[3]}: {wall / (n * k) * 1e6:.0f} us per spawn{at_once}\")"
APP=system_u:system_r:app_t:s0
TRUSTED=system_u:system_r:trusted_t:s0
for policy in resets inherits; do
    CG="rampart-exec.$$.$policy"
    "$RAMPART" daemon --mark "$W/t" --policy "$W/run/$policy.33" --file-contexts "$W/run/file_contexts" \
        --default-context system_u:system_r:unconfined_t:s0 --socket "$W/sock" --cgroup "$CG" 2>"$W/daemon.err" &
    D=$!
    for _ in $(seq 200); do "$RAMPART" status --socket "$W/sock" >/dev/null 2>&1 && break; sleep 0.05; done
    for round in 1 2 3; do
        if [ $policy = resets ]; then
            /usr/bin/python3 -c "$SPAWN" "$W/t/bin-true" "$N" "round $round, default domain, no transition" "$K"
            "$RAMPART" run --socket "$W/sock" --force --context "$APP" -- setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c "$SPAWN" "$W/t/app-true" "$N" "round $round, app_t, no transition" "$K" | cat
            # trusted_t running trusted_exec_t without a transition: alone
            # (app_t gone, its cgroup pruned within 0.5 s), then with an
            # app_t process alive, which may not read trusted_t, so each
            # exec is held and made non-dumpable (memory_guard.rs).
            sleep 1
            trusted() { "$RAMPART" run --socket "$W/sock" --force --context "$TRUSTED" -- /usr/bin/python3 -c "$SPAWN" "$W/t/trusted-true" "$N" "round $round, trusted_t, no transition$1" "$K" | cat; }
            trusted ""
            "$RAMPART" run --socket "$W/sock" --force --context "$APP" -- setpriv --reuid=65534 --regid=65534 --clear-groups sleep 600 &
            SLEEPER=$!
            for _ in $(seq 200); do grep -q app_t "/proc/$SLEEPER/cgroup" 2>/dev/null && break; sleep 0.05; done
            trusted ", app_t alive"
            kill "$SLEEPER"; wait "$SLEEPER" || true
        fi
        "$RAMPART" run --socket "$W/sock" --force --context "$APP" -- setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c "$SPAWN" "$W/t/trusted-true" "$N" "round $round, app_t -> trusted_t, policy $policy" "$K" | cat || { cat "$W/daemon.err" >&2; kill $D; exit 1; }
    done
    kill -TERM $D; wait $D || true
done
# The transition again once a launched process shared its working
# directory (a clone(CLONE_FS) noted: crates/enforce/src/fs_sharing.rs),
# with 100 more processes in the tree: each transition compares the
# process with every task there. A daemon of its own: the note lasts.
CROWD="import ctypes, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
pid = libc.syscall(56, 0x200 | signal.SIGCHLD, 0, 0, 0, 0)
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
kids = []
for _ in range(int(sys.argv[1])):
    k = os.fork()
    if k == 0:
        time.sleep(600)
        os._exit(0)
    kids.append(k)
def stop(*_):
    for k in kids:
        os.kill(k, signal.SIGKILL)
    os._exit(0)
signal.signal(signal.SIGTERM, stop)
open(sys.argv[2], \"w\").close()
time.sleep(600)"
CG="rampart-exec.$$.shared"
"$RAMPART" daemon --mark "$W/t" --policy "$W/run/resets.33" --file-contexts "$W/run/file_contexts" \
    --default-context system_u:system_r:unconfined_t:s0 --socket "$W/sock" --cgroup "$CG" 2>"$W/daemon.err" &
D=$!
for _ in $(seq 200); do "$RAMPART" status --socket "$W/sock" >/dev/null 2>&1 && break; sleep 0.05; done
"$RAMPART" run --socket "$W/sock" --force --context system_u:system_r:unconfined_t:s0 -- /usr/bin/python3 -c "$CROWD" 100 "$W/t/crowd" &
C=$!
for _ in $(seq 200); do [ -e "$W/t/crowd" ] && break; sleep 0.05; done
for round in 1 2 3; do
    "$RAMPART" run --socket "$W/sock" --force --context "$APP" -- setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c "$SPAWN" "$W/t/trusted-true" "$N" "round $round, app_t -> trusted_t, policy resets, a clone noted, 100 processes" "$K" | cat
done
kill -TERM $C; wait $C || true
kill -TERM $D; wait $D || true
umount "$W/t"
' _ "$W" "$N" "$RAMPART" "${PARALLEL:-1}"
