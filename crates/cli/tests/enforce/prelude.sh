# Shared setup of the enforcement end-to-end tests (crates/cli/tests/
# enforce.rs), sourced by each scenario. Runs inside
# `unshare -m --propagation private`: the tmpfs below and the daemon's
# marks on it exist only in this private mount namespace.
#
# Inputs: RAMPART (the binary), POLICY_A and POLICY_B (tests/data/
# enforce.conf compiled, with and without the app_read_data rule).
set -euo pipefail
T=$(mktemp -d /tmp/rampart-e2e.XXXXXX)
S=$(mktemp -d /tmp/rampart-e2e-sync.XXXXXX)   # on /, never marked
mount -t tmpfs -o size=32m tmpfs "$T"
D=""
# This scenario's own cgroup tree (rampartd --cgroup): confined processes
# live there, and parallel scenarios never share one.
CG="rampart-e2e.$(basename "$T")"
# Kills what is left in this scenario's cgroups (only its own processes)
# and removes them, deepest first.
remove_cgroups() {
    local root
    root=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' /proc/self/mountinfo)
    [ -n "$root" ] && [ -d "$root/$CG" ] || return 0
    # `cgroup.kill` ends every process of the tree, one forked meanwhile
    # too (a list of pids read first would miss it, and its cgroup would
    # stay behind); frozen ones as well.
    echo 1 > "$root/$CG/cgroup.kill" 2>/dev/null || true
    for procs in $(find "$root/$CG" -name cgroup.procs); do
        while read -r pid; do kill -KILL "$pid" 2>/dev/null || true; done < "$procs"
    done
    for _ in $(seq 250); do
        find "$root/$CG" -depth -type d -exec rmdir {} + 2>/dev/null || true
        [ -d "$root/$CG" ] || return 0
        sleep 0.02
    done
}
cleanup() {
    if [ -n "$D" ]; then kill -CONT "$D" 2>/dev/null || true; kill -TERM "$D" 2>/dev/null || true; wait "$D" 2>/dev/null || true; fi
    remove_cgroups
    umount -l "$T" 2>/dev/null || true
    rmdir "$T" 2>/dev/null || true
    rm -rf "$S"
}
trap cleanup EXIT

label() { python3 -c 'import os,sys; os.setxattr(sys.argv[2], "security.selinux", sys.argv[1].encode() + b"\0")' "$1" "$2"; }

mkdir -p "$T/bin" "$T/data" "$T/run"
cp "$POLICY_A" "$T/run/policy.33"
printf '/.*\tsystem_u:object_r:file_t:s0\n' > "$T/run/file_contexts"
cp /bin/dash "$T/bin/app"; label system_u:object_r:app_exec_t:s0 "$T/bin/app"
# The app_exec_t shell, started in app_t by the launcher (the policy's
# transition from unconfined_t, checked; the only way into a confined
# domain from outside: docs/security.md). `$APP_RUN ... &` in the
# background, where `$!` must be the shell itself.
APP_RUN="$RAMPART run --socket $T/run/sock --context system_u:system_r:app_t:s0 -- $T/bin/app"
app() { $APP_RUN "$@"; }
printf 'line1\nline2\nline3\nline4\nline5\n' > "$T/data/data.txt"; label system_u:object_r:data_t:s0 "$T/data/data.txt"
echo secret > "$T/data/secret.txt"; label system_u:object_r:secret_t:s0 "$T/data/secret.txt"
echo plain > "$T/data/plain.txt"

SOCK="$T/run/sock"
LOG="$T/run/audit.log"
start_daemon() {
    "$RAMPART" daemon --mark "$T" --policy "$T/run/policy.33" --file-contexts "$T/run/file_contexts" \
        --default-context system_u:system_r:unconfined_t:s0 --socket "$SOCK" --audit-log "$LOG" --cgroup "$CG" "$@" \
        2>"$S/daemon.err" &
    D=$!
    wait_for_daemon
}
# Waits until daemon $D answers on $SOCK (its stderr in $S/daemon.err).
wait_for_daemon() {
    for _ in $(seq 200); do
        if "$RAMPART" status --socket "$SOCK" >/dev/null 2>&1; then return 0; fi
        if ! kill -0 "$D" 2>/dev/null; then cat "$S/daemon.err" >&2; D=""; return 1; fi
        sleep 0.05
    done
    echo "daemon did not start" >&2; return 1
}
stop_daemon() { kill -TERM "$D"; wait "$D" || true; D=""; }
# One field of `rampart status --json`.
status_field() { "$RAMPART" status --socket "$SOCK" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
# Permission events answered so far (allowed + denied + overload).
events() { "$RAMPART" status --socket "$SOCK" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["allowed"]+d["denied"]+d["overloaded"])'; }
# Waits (bounded) for file $1 to exist.
wait_for() { for _ in $(seq 200); do [ -e "$1" ] && return 0; sleep 0.05; done; echo "timed out waiting for $1" >&2; return 1; }
# Waits (bounded) until every thread of process $1 is stopped: SIGSTOP
# reaches the threads one by one, and one still running could answer.
wait_stopped() {
    for _ in $(seq 200); do
        if ! grep -h '^State:' /proc/"$1"/task/*/status | grep -qv 'T (stopped)'; then return 0; fi
        sleep 0.01
    done
    echo "process $1 did not stop" >&2; return 1
}
