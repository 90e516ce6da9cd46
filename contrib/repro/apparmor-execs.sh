#!/usr/bin/env bash
# What AppArmor's ptrace rules cost an exec (crates/enforce/src/memory_guard.rs,
# crates/apparmor/src/ipc.rs): rampartd with AppArmor alone (--no-selinux)
# and two profiles that may not trace each other (no ptrace rules, as a
# profile compiled with ptrace mediation and no rule is; setuid and
# setgid for setpriv), N spawns of
# /bin/true copied onto a marked tmpfs, by uid 65534:
#   * under `old`, a px into `new`: the transition held, `old` frozen
#     until the new image is non-dumpable;
#   * under `new`, an ix (no change of profile), alone;
#   * the same with an `old` process alive: each exec held and made
#     non-dumpable, `old` frozen meanwhile.
# PARALLEL=K: K spawners at once per row. Needs root, apparmor_parser,
# python3. From the repository root after `cargo build --release`:
#   bash contrib/repro/apparmor-execs.sh [N]
set -euo pipefail
N=${1:-300}
RAMPART=${RAMPART:-$PWD/target/release/rampart}
W=$(mktemp -d /tmp/rampart-aaexec.XXXXXX)
trap 'rm -rf "$W"' EXIT
chmod 755 "$W"
mkdir "$W/profiles" "$W/cache" "$W/pids"; chmod 777 "$W/pids"
unshare -m --propagation private bash -euc '
set -o pipefail
W=$1; N=$2; RAMPART=$3; K=$4
mkdir "$W/t"; mount -t tmpfs none "$W/t"; chmod 755 "$W/t"
cp /bin/true "$W/t/px-true"; cp /bin/true "$W/t/ix-true"
cat > "$W/profiles/execs" <<PROFILES
profile old {
  capability setuid, capability setgid,
  $W/t/px-true px -> new,
}
profile new {
  capability setuid, capability setgid,
  $W/t/ix-true ix,
}
PROFILES
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
"$RAMPART" daemon --no-selinux --apparmor "$W/profiles" --apparmor-cache "$W/cache" --mark "$W/t" \
    --socket "$W/sock" --cgroup "rampart-aaexec.$$" 2>"$W/daemon.err" &
D=$!
for _ in $(seq 200); do "$RAMPART" status --socket "$W/sock" >/dev/null 2>&1 && break; sleep 0.05; done
as() { local p=$1; shift; "$RAMPART" run --socket "$W/sock" --apparmor "$p" -- setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
for round in 1 2 3; do
    as old /usr/bin/python3 -c "$SPAWN" "$W/t/px-true" "$N" "round $round, old -> new (px)" "$K" | cat \
        || { cat "$W/daemon.err" >&2; kill $D; exit 1; }
    sleep 1
    as new /usr/bin/python3 -c "$SPAWN" "$W/t/ix-true" "$N" "round $round, new, ix, alone" "$K" | cat
    # The launcher waits for its child: the sleeper names itself.
    rm -f "$W/pids/sleeper"
    as old sh -c "echo \$\$ > $W/pids/sleeper; exec sleep 600" >/dev/null 2>&1 &
    LAUNCHER=$!
    for _ in $(seq 200); do [ -s "$W/pids/sleeper" ] && grep -q "@aa" "/proc/$(cat "$W/pids/sleeper")/cgroup" && break; sleep 0.05; done
    [ -s "$W/pids/sleeper" ] || { echo "the old sleeper did not start" >&2; kill $D; exit 1; }
    as new /usr/bin/python3 -c "$SPAWN" "$W/t/ix-true" "$N" "round $round, new, ix, old alive" "$K" | cat
    kill "$(cat "$W/pids/sleeper")"; wait "$LAUNCHER" || true
done
kill -TERM $D; wait $D || true
grep -v "^rampartd: \(enforcing\|AppArmor\|stopping\)" "$W/daemon.err" | head -5 >&2 || true
umount "$W/t"
' _ "$W" "$N" "$RAMPART" "${PARALLEL:-1}"
