#!/usr/bin/env bash
# What checking a socket's creation, connect, bind and listen costs
# (crates/enforce/src/sockets.rs, crates/apparmor/src/net.rs): a process
# makes and closes N TCP sockets (python3's socket.socket), then makes N/4
# connections to a local listener (socket, connect, close), then binds
# N/4 Unix sockets to abstract names (socket, bind, close), then makes N/4
# TCP sockets listen (socket, listen on a port the kernel picks, close)
# and N/4 Unix sockets (socket, bind to an abstract name, listen, close),
# three ways per round:
#   plain     no launcher: the kernel alone;
#   selinux   `rampart run` under rampartd with the system policy, in the
#             default domain (the launcher's filter hands every socket
#             call to the daemon, which checks `tcp_socket { create }`);
#   apparmor  `rampart run --apparmor netter` under rampartd with AppArmor
#             alone (--no-selinux), the profile allowing inet stream.
# Run it with a build from before the check (RAMPART=...) for the
# baseline, where the launcher's filter lets socket calls through. Needs
# root, the system SELinux policy (selinux-policy-default),
# apparmor_parser, python3. From the repository root after
# `cargo build --release`:
#   bash contrib/repro/sockets.sh [N] [ROUNDS]
set -euo pipefail
N=${1:-20000}
ROUNDS=${2:-3}
RAMPART=${RAMPART:-$PWD/target/release/rampart}
W=$(mktemp -d /tmp/rampart-sockets.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir "$W/profiles" "$W/cache"
cat > "$W/profiles/netter" <<'PROFILE'
profile netter {
  network inet stream,
  network unix stream,
}
PROFILE
cat > "$W/sockets.py" <<'PY'
import socket, sys, time
n = int(sys.argv[1])
t = time.perf_counter()
for _ in range(n):
    socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
print(f"{sys.argv[2]}: {(time.perf_counter() - t) / n * 1e6:.2f} us per socket")
n //= 4
t = time.perf_counter()
for _ in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.connect(("127.0.0.1", int(sys.argv[3])))
    s.close()
print(f"{sys.argv[2]}: {(time.perf_counter() - t) / n * 1e6:.2f} us per connection")
t = time.perf_counter()
for i in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(f"\0rampart-sockets-{i}")
    s.close()
print(f"{sys.argv[2]}: {(time.perf_counter() - t) / n * 1e6:.2f} us per unix bind")
t = time.perf_counter()
for i in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.listen(1)
    s.close()
print(f"{sys.argv[2]}: {(time.perf_counter() - t) / n * 1e6:.2f} us per listen")
t = time.perf_counter()
for i in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(f"\0rampart-listens-{i}")
    s.listen(1)
    s.close()
print(f"{sys.argv[2]}: {(time.perf_counter() - t) / n * 1e6:.2f} us per unix listen")
PY
cat > "$W/listen.py" <<'PY'
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(4096)
print(s.getsockname()[1], flush=True)
while True:
    s.accept()[0].close()
PY
unshare -m --propagation private bash -euc '
W=$1; N=$2; ROUNDS=$3; RAMPART=$4
mkdir "$W/t"; mount -t tmpfs none "$W/t"
D=
/usr/bin/python3 "$W/listen.py" > "$W/port" & L=$!
stop() { if [ -n "$D" ]; then kill -TERM "$D" 2>/dev/null || true; wait "$D" || true; D=; fi; }
trap "stop; kill $L 2>/dev/null || true" EXIT
for _ in $(seq 100); do [ -s "$W/port" ] && break; sleep 0.05; done
P=$(cat "$W/port")
start() {
    "$RAMPART" daemon --mark "$W/t" --socket "$W/sock" --cgroup "rampart-sockets.$$" "$@" 2>"$W/daemon.err" &
    D=$!
    for _ in $(seq 200); do "$RAMPART" status --socket "$W/sock" >/dev/null 2>&1 && return; sleep 0.05; done
    cat "$W/daemon.err" >&2; exit 1
}
for round in $(seq "$ROUNDS"); do
    /usr/bin/python3 "$W/sockets.py" "$N" "round $round, plain" "$P"
    start
    "$RAMPART" run --socket "$W/sock" --force --context unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023 -- /usr/bin/python3 "$W/sockets.py" "$N" "round $round, selinux" "$P"
    stop
    start --no-selinux --apparmor "$W/profiles" --apparmor-cache "$W/cache"
    "$RAMPART" run --socket "$W/sock" --apparmor netter -- /usr/bin/python3 "$W/sockets.py" "$N" "round $round, apparmor" "$P"
    stop
done
kill $L 2>/dev/null || true
umount "$W/t"
' _ "$W" "$N" "$ROUNDS" "$RAMPART"
