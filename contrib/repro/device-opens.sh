#!/usr/bin/env bash
# What a domain's device program (crates/enforce/src/device_access.rs)
# costs an open of a device: N opens (and closes) of /dev/null and of
# /dev/urandom for reading by a process launched in app_t
# (adversarial.conf, which lets app_t read file_t devices), three rounds,
# under a daemon of its own on a private tmpfs. Needs root, checkpolicy,
# python3. Run from the repository root after `cargo build --release`
# (RAMPART: another build to time, e.g. one before the device program):
#   bash contrib/repro/device-opens.sh [N]
set -euo pipefail
N=${1:-50000}
RAMPART=${RAMPART:-$PWD/target/release/rampart}
W=$(mktemp -d /tmp/rampart-device-opens.XXXXXX)
trap 'rm -rf "$W"' EXIT
checkpolicy -M -c 33 -o "$W/policy.33" crates/cli/tests/data/adversarial.conf >/dev/null
printf '/.*\tsystem_u:object_r:file_t:s0\n' > "$W/file_contexts"
unshare -m --propagation private bash -euo pipefail -c '
W=$1; N=$2; RAMPART=$3
mkdir "$W/t"; mount -t tmpfs none "$W/t"
CG=rampart-device-opens.$$
"$RAMPART" daemon --policy "$W/policy.33" --file-contexts "$W/file_contexts" --mark "$W/t" --socket "$W/sock" \
    --cgroup "$CG" --default-context system_u:system_r:unconfined_t:s0 >/dev/null 2>"$W/daemon.err" &
D=$!
trap "kill $D 2>/dev/null; wait $D 2>/dev/null; umount $W/t" EXIT
for _ in $(seq 100); do [ -S "$W/sock" ] && break; sleep 0.05; done
for round in 1 2 3; do
    "$RAMPART" run --socket "$W/sock" --force --context system_u:system_r:app_t:s0 -- /usr/bin/python3 -c "
import os, sys, time
n = int(sys.argv[1])
for f in [\"/dev/null\", \"/dev/urandom\"]:
    t = time.perf_counter()
    for i in range(n):
        os.close(os.open(f, os.O_RDONLY))
    print(\"round $round:\", f, \"%.2f us\" % ((time.perf_counter() - t) / n * 1e6))
" "$N" | cat
done
' sh "$W" "$N" "$RAMPART"
