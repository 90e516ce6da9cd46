#!/usr/bin/env bash
# What a supervised call costs (crates/enforce/src/supervisor.rs): N
# chmods, N rename pairs, N opens for writing (open O_WRONLY + close:
# supervised opens, crates/enforce/src/supervised_open.rs), N signal
# probes of itself (kill(self, 0): crates/enforce/src/signals.rs) and N
# reads of its own CPU affinity (sched_getaffinity(0):
# crates/enforce/src/sched.rs), N inotify watches (inotify_add_watch
# of the same file again: crates/enforce/src/watches.rs) and N
# fcntl(F_SETFL, O_NONBLOCK) on a descriptor of it opened for reading
# (crates/enforce/src/append_only.rs) of a data_t
# file, and N connects (and closes) of a Unix stream socket to a data_t
# socket file (crates/enforce/src/unix_connects.rs) and to an abstract name
# a service outside the tree holds (crates/enforce/src/unix_names.rs), N
# connects (and closes) of a UDP socket (made by rampartd too), and N
# System V segments made, attached, detached and removed, N semops on a
# set of its own and N messages sent and received on a queue of its own (crates/enforce/src/ipc_objects.rs),
# N shared read-only mappings of a descriptor opened for reading
# (crates/enforce/src/exec_memory.rs) and N setrlimits of its own soft
# limit of open files (crates/enforce/src/limits.rs), on a marked
# tmpfs, by root
# in the default domain (not supervised), root in modifier_t (each call
# decided and made by rampartd) and root in modifier_t with
# --no-sandbox (the daemon alone: not supervised); and N mkdirs in a
# public_t directory, by root in the default domain and in writer_t
# (checked, made and labeled by rampartd: crates/enforce/src/new_labels.rs). Policy: the
# adversarial tests' (crates/cli/tests/data/adversarial.conf).
# Needs root, checkpolicy, python3. Run from the repository root after
# `cargo build --release`:
#   bash contrib/repro/supervised-calls.sh [N]
set -euo pipefail
N=${1:-2000}
RAMPART=${RAMPART:-$PWD/target/release/rampart}
W=$(mktemp -d /tmp/rampart-supervised.XXXXXX)
trap 'rm -rf "$W"' EXIT
# The policy beside, not above, the tmpfs: the daemon's protected
# directories refuse every change beneath them.
mkdir "$W/run"
checkpolicy -M -c 33 -o "$W/run/policy.33" crates/cli/tests/data/adversarial.conf >/dev/null
printf '/.*\tsystem_u:object_r:file_t:s0\n' > "$W/run/file_contexts"
# The launched processes print through a pipe (`| cat`): `rampart run`
# replaces an inherited regular file its domain may not write (a
# redirected stdout) with /dev/null, as SELinux's flush_unauthorized_files.
unshare -m --propagation private bash -euo pipefail -c '
W=$1; N=$2; RAMPART=$3
mkdir "$W/t"; mount -t tmpfs none "$W/t"
f="$W/t/data"; echo x > "$f"
python3 -c "import os,sys; os.setxattr(sys.argv[1], \"security.selinux\", b\"system_u:object_r:data_t:s0\0\")" "$f"
CG="rampart-supervised.$$"
"$RAMPART" daemon --mark "$W/t" --policy "$W/run/policy.33" --file-contexts "$W/run/file_contexts" \
    --default-context system_u:system_r:unconfined_t:s0 --socket "$W/sock" --cgroup "$CG" 2>"$W/daemon.err" &
D=$!
# The daemon goes with the script, whatever fails.
trap "kill $D 2>/dev/null || true" EXIT
for _ in $(seq 200); do "$RAMPART" status --socket "$W/sock" >/dev/null 2>&1 && break; sleep 0.05; done
# A Unix service whose socket file is data_t: accepts and closes.
/usr/bin/python3 -c "import os, socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o666)
os.setxattr(sys.argv[1], \"security.selinux\", b\"system_u:object_r:data_t:s0\0\")
s.listen(512); s.settimeout(600); open(sys.argv[1] + \".ready\", \"w\").close()
while True: s.accept()[0].close()" "$W/t/svc.sock" &
SVC=$!
# The same on an abstract name (the default domain'"'"'s, unconfined_t).
/usr/bin/python3 -c "import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(\"\0\" + sys.argv[1]); s.listen(512); s.settimeout(600)
while True: s.accept()[0].close()" "rampart-supervised-$$" &
ABSTRACT=$!
trap "kill $D $SVC $ABSTRACT 2>/dev/null || true" EXIT
for _ in $(seq 200); do [ -e "$W/t/svc.sock.ready" ] && grep -q "@rampart-supervised-$$\$" /proc/net/unix && break; sleep 0.05; done
LOOP="import ctypes, fcntl, os, socket, sys, time
f, n = sys.argv[1], int(sys.argv[2])
libc = ctypes.CDLL(None, use_errno=True)
ino = libc.inotify_init1(os.O_CLOEXEC)
t = time.perf_counter()
for i in range(n):
    os.chmod(f, 0o600 if i % 2 else 0o644)
c = time.perf_counter()
for i in range(n):
    os.rename(f, f + \".r\"); os.rename(f + \".r\", f)
r = time.perf_counter()
for i in range(n):
    os.close(os.open(f, os.O_WRONLY))
o = time.perf_counter()
for i in range(n):
    os.kill(os.getpid(), 0)
k = time.perf_counter()
for i in range(n):
    os.sched_getaffinity(0)
a = time.perf_counter()
path = os.fsencode(f)
for i in range(n):
    if libc.inotify_add_watch(ino, path, 2) < 0:
        raise OSError(ctypes.get_errno(), \"inotify_add_watch\")
w = time.perf_counter()
fd = os.open(f, os.O_RDONLY)
for i in range(n):
    fcntl.fcntl(fd, fcntl.F_SETFL, os.O_NONBLOCK if i % 2 else 0)
s = time.perf_counter()
u = os.path.join(os.path.dirname(f), \"svc.sock\")
for i in range(n):
    sk = socket.socket(socket.AF_UNIX); sk.connect(u); sk.close()
q = time.perf_counter()
for i in range(n):
    sk = socket.socket(socket.AF_UNIX); sk.connect(\"\0\" + sys.argv[4]); sk.close()
b = time.perf_counter()
for i in range(n):
    sk = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); sk.connect((\"127.0.0.1\", 9)); sk.close()
d = time.perf_counter()
libc.shmat.restype = ctypes.c_void_p
for i in range(n):
    seg = libc.shmget(0, 4096, 0o1600)
    p = libc.shmat(seg, None, 0)
    if seg < 0 or p in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), \"shmget, shmat\")
    libc.shmdt(ctypes.c_void_p(p)); libc.shmctl(seg, 0, None)
m = time.perf_counter()
libc.semop.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
sem = libc.semget(0, 1, 0o1600)
ops = [(ctypes.c_short * 3)(0, 1, 0), (ctypes.c_short * 3)(0, -1, 0)]
for i in range(n):
    if libc.semop(sem, ctypes.cast(ops[i % 2], ctypes.c_void_p), 1) != 0:
        raise OSError(ctypes.get_errno(), \"semop\")
libc.semctl(sem, 0, 0)
p = time.perf_counter()
mq = libc.msgget(0, 0o1600)
msg = (ctypes.c_long * 2)(1, 0)
for i in range(n):
    if libc.msgsnd(mq, msg, 8, 0) != 0 or libc.msgrcv(mq, msg, 8, 0, 0) != 8:
        raise OSError(ctypes.get_errno(), \"msgsnd, msgrcv\")
libc.msgctl(mq, 0, None)
x = time.perf_counter()
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
rd = os.open(f, os.O_RDONLY)
for i in range(n):
    mp = libc.mmap(None, 4096, 1, 1, rd, 0)
    if mp in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), \"mmap\")
    libc.munmap(mp, 4096)
y = time.perf_counter()
import resource
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
for i in range(n):
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft - i % 2, hard))
z = time.perf_counter()
print(f\"{sys.argv[3]}: chmod {(c - t) / n * 1e6:.1f} us, rename {(r - c) / (2 * n) * 1e6:.1f} us, open for writing {(o - r) / n * 1e6:.1f} us, kill(self, 0) {(k - o) / n * 1e6:.1f} us, sched_getaffinity(0) {(a - k) / n * 1e6:.1f} us, inotify_add_watch {(w - a) / n * 1e6:.1f} us, F_SETFL {(s - w) / n * 1e6:.1f} us, Unix connect {(q - s) / n * 1e6:.1f} us, abstract connect {(b - q) / n * 1e6:.1f} us, UDP connect {(d - b) / n * 1e6:.1f} us, shm segment {(m - d) / n * 1e6:.1f} us, semop {(p - m) / n * 1e6:.1f} us, msgsnd + msgrcv {(x - p) / n * 1e6:.1f} us, shared mmap {(y - x) / n * 1e6:.1f} us, setrlimit {(z - y) / n * 1e6:.1f} us\")"
MKDIRS="import os, sys, time
d, n = sys.argv[1], int(sys.argv[2])
t = time.perf_counter()
for i in range(n):
    os.mkdir(f\"{d}.{i}\")
print(f\"{sys.argv[3]}: mkdir {(time.perf_counter() - t) / n * 1e6:.1f} us\")"
mkdir "$W/t/public"
python3 -c "import os,sys; os.setxattr(sys.argv[1], \"security.selinux\", b\"system_u:object_r:public_t:s0\0\")" "$W/t/public"
MOD=system_u:system_r:modifier_t:s0
WRITER=system_u:system_r:writer_t:s0
for round in 1 2 3; do
    /usr/bin/python3 -c "$MKDIRS" "$W/t/public/default.$round" "$N" "round $round, default domain"
    "$RAMPART" run --socket "$W/sock" --force --context "$WRITER" -- /usr/bin/python3 -c "$MKDIRS" "$W/t/public/writer.$round" "$N" "round $round, writer_t supervised" | cat || { cat "$W/daemon.err" >&2; kill $D; exit 1; }
    /usr/bin/python3 -c "$LOOP" "$f" "$N" "round $round, default domain" "rampart-supervised-$$"
    "$RAMPART" run --socket "$W/sock" --force --context "$MOD" -- /usr/bin/python3 -c "$LOOP" "$f" "$N" "round $round, modifier_t supervised" "rampart-supervised-$$" | cat || { cat "$W/daemon.err" >&2; kill $D; exit 1; }
    "$RAMPART" run --socket "$W/sock" --no-sandbox --force --context "$MOD" -- /usr/bin/python3 -c "$LOOP" "$f" "$N" "round $round, modifier_t --no-sandbox" "rampart-supervised-$$" | cat
done
kill -TERM $D $SVC $ABSTRACT; wait $D || true
umount "$W/t"
' _ "$W" "$N" "$RAMPART"
