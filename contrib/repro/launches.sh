#!/usr/bin/env bash
# What a launch costs (`rampart run --force --context CTX -- /bin/true`,
# N times after one warm-up) under rampartd with Debian's policy
# (selinux-policy-default) and file_contexts, a tmpfs marked, for each
# rampart binary given and each domain in CTXS (default: ping_t, which
# the policy grants no System V IPC permission, and httpd_t, which it
# grants some: the exec-context reply's `forbid`, crates/enforce/src/
# daemon.rs `forbidden_everywhere`, crates/enforce/src/sysv_ipc.rs).
# Needs root. Run from the repository root after `cargo build --release`:
#   N=40 bash contrib/repro/launches.sh BINARY...
set -euo pipefail
N=${N:-40}
W=$(mktemp -d /tmp/rampart-launch.XXXXXX)
trap 'rm -rf "$W"' EXIT
export CTXS=${CTXS:-ping_t httpd_t}
unshare -m --propagation private bash -euo pipefail -c '
W=$1; N=$2; shift 2
mkdir "$W/t"; mount -t tmpfs none "$W/t"
for R in "$@"; do
  for ctx in $CTXS; do
    "$R" daemon --mark "$W/t" --policy /etc/selinux/default/policy/policy.33 \
        --file-contexts /etc/selinux/default/contexts/files/file_contexts \
        --default-context unconfined_u:unconfined_r:unconfined_t:s0 --socket "$W/sock" \
        --cgroup "rampart-launch.$$" 2>"$W/daemon.err" &
    D=$!
    for _ in $(seq 400); do "$R" status --socket "$W/sock" >/dev/null 2>&1 && break; sleep 0.05; done
    "$R" run --socket "$W/sock" --force --context "system_u:system_r:$ctx:s0" -- /bin/true
    t=$(date +%s%N)
    for _ in $(seq "$N"); do "$R" run --socket "$W/sock" --force --context "system_u:system_r:$ctx:s0" -- /bin/true; done
    echo "$R $ctx: $(( ($(date +%s%N) - t) / N / 1000 )) us per launch"
    kill -TERM $D; wait $D || true
  done
done
umount "$W/t"
' _ "$W" "$N" "$@"
