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
set -euo pipefail
N=${1:-20000}
RAMPART=${RAMPART:-$PWD/target/release/rampart}
W=$(mktemp -d /tmp/rampart-exec-memory.XXXXXX)
trap 'rm -rf "$W"' EXIT
chmod 755 "$W"
cat > "$W/jit.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
int main(int argc, char **argv) {
    int n = atoi(argv[1]), exec = !strcmp(argv[2], "exec");
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++) {
        unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) { perror("mmap"); return 1; }
        *p = 0xc3;
        if (mprotect(p, 4096, PROT_READ | (exec ? PROT_EXEC : 0))) { perror("mprotect"); return 1; }
        if (exec) ((void (*)(void))p)();
        munmap(p, 4096);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%s: %.2f us per round\n", argv[3], ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n / 1e3);
    return 0;
}
C
cc -O2 -o "$W/jit" "$W/jit.c"
mkdir "$W/run" "$W/t"
checkpolicy -M -c 33 -o "$W/run/policy.33" crates/cli/tests/data/adversarial.conf >/dev/null
printf '/.*\tsystem_u:object_r:file_t:s0\n' > "$W/run/file_contexts"
unshare -m --propagation private bash -euc '
W=$1; N=$2; RAMPART=$3
mount -t tmpfs none "$W/t"
CG="rampart-exec-memory.$$"
"$RAMPART" daemon --mark "$W/t" --policy "$W/run/policy.33" --file-contexts "$W/run/file_contexts" \
    --default-context system_u:system_r:unconfined_t:s0 --socket "$W/sock" --cgroup "$CG" 2>"$W/daemon.err" &
D=$!
for _ in $(seq 200); do "$RAMPART" status --socket "$W/sock" >/dev/null 2>&1 && break; sleep 0.05; done
for round in 1 2 3; do
    for what in data exec; do
        "$W/jit" "$N" $what "round $round, outside rampartd'"'"'s domains, $what"
        "$RAMPART" run --socket "$W/sock" --force --context system_u:system_r:unconfined_t:s0 -- \
            "$W/jit" "$N" $what "round $round, launched, $what" | cat
    done
done
kill -TERM $D; wait $D || true
umount "$W/t"
' _ "$W" "$N" "$RAMPART"
