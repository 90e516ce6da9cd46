#!/usr/bin/env bash
# What a disk-backed marked filesystem costs a launched process. Until
# the twenty-fourth session, where a marked filesystem lay on a block
# device and the domain might not read the device's node, the launcher's
# Landlock ruleset handled READ_FILE (granted everywhere but on the node,
# the `disk_reads` forbid), so every open for reading walked its path,
# and each launch walked /dev twice; since then the domain's cgroup
# device program holds the disk (crates/enforce/src/device_access.rs)
# and neither is paid. Times, for a process launched in app_t
# (adversarial.conf), N opens (and closes) of a data_t file on a marked
# tmpfs, and N launches of `true`, with the tmpfs alone marked and with
# an ext4 filesystem on a loop device marked too. Needs root,
# checkpolicy, python3, mkfs.ext4, losetup. Run from the repository root
# after `cargo build --release` (RAMPART: another build to time):
#   bash contrib/repro/disk-reads.sh [N]
set -euo pipefail
N=${1:-20000}
RAMPART=${RAMPART:-$PWD/target/release/rampart}
W=$(mktemp -d /tmp/rampart-disk-reads.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir "$W/run"
checkpolicy -M -c 33 -o "$W/run/policy.33" crates/cli/tests/data/adversarial.conf >/dev/null
printf '/.*\tsystem_u:object_r:file_t:s0\n' > "$W/run/file_contexts"
unshare -m --propagation private bash -euo pipefail -c '
W=$1; N=$2; RAMPART=$3
mkdir "$W/t" "$W/m"; mount -t tmpfs none "$W/t"
f="$W/t/data"; echo x > "$f"
python3 -c "import os,sys; os.setxattr(sys.argv[1], \"security.selinux\", b\"system_u:object_r:data_t:s0\0\")" "$f"
truncate -s 8M "$W/disk.img"; mkfs.ext4 -q -F "$W/disk.img"
LOOP=$(losetup -f --show "$W/disk.img")
D=""
trap "kill \$D 2>/dev/null; umount $W/m 2>/dev/null; losetup -d $LOOP; umount $W/t" EXIT
mount "$LOOP" "$W/m"
APP=system_u:system_r:app_t:s0
OPENS="import os, sys, time
f, n = sys.argv[1], int(sys.argv[2])
t = time.perf_counter()
for i in range(n):
    os.close(os.open(f, os.O_RDONLY))
print(f\"{sys.argv[3]}: open for reading {(time.perf_counter() - t) / n * 1e6:.2f} us\")"
for round in 1 2 3; do
    for marks in tmpfs tmpfs+disk; do
        extra=(); [ $marks = tmpfs+disk ] && extra=(--mark "$W/m")
        "$RAMPART" daemon --mark "$W/t" "${extra[@]}" --policy "$W/run/policy.33" --file-contexts "$W/run/file_contexts" \
            --default-context system_u:system_r:unconfined_t:s0 --socket "$W/sock" --cgroup "rampart-disk-reads.$$" 2>"$W/daemon.err" &
        D=$!
        for _ in $(seq 200); do "$RAMPART" status --socket "$W/sock" >/dev/null 2>&1 && break; sleep 0.05; done
        "$RAMPART" run --socket "$W/sock" --force --context "$APP" -- /usr/bin/python3 -c "$OPENS" "$f" "$N" "round $round, $marks" | cat
        t=$(date +%s%N)
        for i in $(seq 20); do "$RAMPART" run --socket "$W/sock" --force --context "$APP" -- /bin/true; done
        echo "round $round, $marks: launch $(( ($(date +%s%N) - t) / 20000 )) us"
        kill -TERM $D; wait $D || true
    done
done
' _ "$W" "$N" "$RAMPART"
