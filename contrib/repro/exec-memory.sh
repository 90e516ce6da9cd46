#!/usr/bin/env bash
# What a handed-over executable mapping costs (crates/enforce/src/
# exec_memory.rs): N rounds of a JIT's step (anonymous memory mapped
# writable, one `ret` written, `mprotect` to executable, called,
# unmapped), and N rounds of the same without `PROT_EXEC` (data, never
# handed over), by a process outside rampartd's domains (no filter) and
# by one `rampart run` started in unconfined_t, which the adversarial
# tests' policy lets run code it writes (each `mprotect` a round trip to
# the daemon).
# Needs root, checkpolicy, cc. Run from the repository root after
# `cargo build --release`:
#   bash contrib/repro/exec-memory.sh [N]
# PARALLEL=K: K launched processes at once instead (JIT steps only), to
# see what one supervisor thread deciding for all of them gives.
# POLICY=FILE (policy.33 compiled from crates/cli/tests/data/
# adversarial.conf) and JIT=FILE (contrib/repro/jit-step.c, built): for a
# machine without checkpolicy or cc (contrib/repro/issue8-device.sh).
set -euo pipefail
N=${1:-20000}
RAMPART=${RAMPART:-$PWD/target/release/rampart}
PARALLEL=${PARALLEL:-}
W=$(mktemp -d /tmp/rampart-exec-memory.XXXXXX)
trap 'rm -rf "$W"' EXIT
chmod 755 "$W"
if [[ -n "${JIT:-}" ]]; then cp "$JIT" "$W/jit"; else cc -O2 -o "$W/jit" contrib/repro/jit-step.c; fi
mkdir "$W/run" "$W/t"
if [[ -n "${POLICY:-}" ]]; then
  cp "$POLICY" "$W/run/policy.33"
else
  checkpolicy -M -c 33 -o "$W/run/policy.33" crates/cli/tests/data/adversarial.conf >/dev/null
fi
printf '/.*\tsystem_u:object_r:file_t:s0\n' > "$W/run/file_contexts"
unshare -m --propagation private bash -euc '
W=$1; N=$2; RAMPART=$3; PARALLEL=$4
mount -t tmpfs none "$W/t"
CG="rampart-exec-memory.$$"
"$RAMPART" daemon --mark "$W/t" --policy "$W/run/policy.33" --file-contexts "$W/run/file_contexts" \
    --default-context system_u:system_r:unconfined_t:s0 --socket "$W/sock" --cgroup "$CG" 2>"$W/daemon.err" &
D=$!
for _ in $(seq 200); do "$RAMPART" status --socket "$W/sock" >/dev/null 2>&1 && break; sleep 0.05; done
launched() {
    "$RAMPART" run --socket "$W/sock" --force --context system_u:system_r:unconfined_t:s0 -- "$W/jit" "$@" | cat
}
for round in 1 2 3; do
    if [[ -n $PARALLEL ]]; then
        pids=()
        for k in $(seq "$PARALLEL"); do
            launched "$N" exec "round $round, launched $k of $PARALLEL at once, exec" & pids+=($!)
        done
        wait "${pids[@]}"
        continue
    fi
    for what in data exec; do
        "$W/jit" "$N" $what "round $round, outside rampartd'"'"'s domains, $what"
        launched "$N" $what "round $round, launched, $what"
    done
done
kill -TERM $D; wait $D || true
umount "$W/t"
' _ "$W" "$N" "$RAMPART" "$PARALLEL"
