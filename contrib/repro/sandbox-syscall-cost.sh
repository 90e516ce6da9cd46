#!/usr/bin/env bash
# What the launcher's sandbox (Landlock ruleset, seccomp filters) adds to
# a process's system calls: getppid, and open + read + close of a file on
# no marked filesystem (so no fanotify event), in the default domain,
# launched with the sandbox, and launched with --no-sandbox (three
# rounds). Root, checkpolicy, cc; from the repository root after
# `cargo build --release`: bash contrib/repro/sandbox-syscall-cost.sh
set -euo pipefail
W=$(mktemp -d /tmp/rampart-sc.XXXXXX); trap 'rm -rf "$W"' EXIT
mkdir "$W/run"
checkpolicy -M -c 33 -o "$W/run/policy.33" crates/cli/tests/data/adversarial.conf >/dev/null
printf '/.*\tsystem_u:object_r:file_t:s0\n' > "$W/run/file_contexts"
unshare -m --propagation private bash -euc '
W=$1; RAMPART=${RAMPART:-$PWD/target/release/rampart}
mkdir "$W/t"; mount -t tmpfs none "$W/t"; echo x > "$W/u"; cc -O2 -o "$W/loop" contrib/repro/sandbox-syscall-cost.c
"$RAMPART" daemon --mark "$W/t" --policy "$W/run/policy.33" --file-contexts "$W/run/file_contexts" \
    --default-context system_u:system_r:unconfined_t:s0 --socket "$W/sock" --cgroup "rampart-sc.$$" 2>"$W/d.err" &
D=$!
for _ in $(seq 200); do "$RAMPART" status --socket "$W/sock" >/dev/null 2>&1 && break; sleep 0.05; done
for r in 1 2 3; do
"$W/loop" "$W/u" "plain"
"$RAMPART" run --socket "$W/sock" --force --context system_u:system_r:unconfined_t:s0 -- "$W/loop" "$W/u" "launched (sandbox, supervised)"
"$RAMPART" run --socket "$W/sock" --no-sandbox --force --context system_u:system_r:unconfined_t:s0 -- "$W/loop" "$W/u" "launched --no-sandbox"
done
kill $D; wait $D || true; umount "$W/t"
' _ "$W"
