//! AppArmor enforced by `rampart daemon --apparmor DIR` on real
//! processes started with `rampart run --apparmor PROFILE` (issue 11,
//! items 2 and 3), stacked with SELinux: each scenario runs as root in a
//! private mount namespace on its own tmpfs (tests/enforce/prelude.sh),
//! with the SELinux policy tests/data/enforce.conf (whose default domain,
//! unconfined_t, may read every file: what is denied here is denied by
//! AppArmor). The profiles are written below and compiled by the daemon
//! through apparmor_parser; expected outcomes come from their rules
//! (apparmor.d(5)), and the denials are read back by python3-apparmor's
//! log parser (what aa-logprof uses), not by Rampart.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

mod common;
use common::Run;

/// enforce.conf compiled by checkpolicy.
fn policy() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/enforce.conf");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("aa-e2e-policy.{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("policy.33");
        match Command::new("checkpolicy").args(["-M", "-c", "33", "-o"]).arg(&out).arg(&src).output() {
            Ok(o) if o.status.success() => out,
            Ok(o) => panic!("checkpolicy failed: {}", String::from_utf8_lossy(&o.stderr)),
            Err(e) => common::missing(&format!("checkpolicy ({e})")),
        }
    })
}

/// Root, checkpolicy, apparmor_parser and python3-apparmor; fails the
/// test naming what is missing.
fn setup() -> &'static PathBuf {
    common::require_root("mounts, fanotify, cgroups");
    if !Path::new("/sbin/apparmor_parser").exists() {
        common::missing("apparmor_parser (apparmor)");
    }
    let py = Command::new("/usr/bin/python3").args(["-c", "import apparmor.logparser, LibAppArmor"]).output();
    if !py.is_ok_and(|o| o.status.success()) {
        common::missing("python3-apparmor and python3-libapparmor");
    }
    policy()
}

/// The profiles, in `$AA/profiles` (on /, never marked), written by the
/// scenario (they name the tmpfs, `$T`):
/// * `confined` reads allowed.txt and link.txt, writes out.txt, reads,
///   writes and links the scratch files, runs
///   sh2 in its own profile (`ix`), px and e2big under `other` (`px`,
///   which reads other.txt), spx under `other` with its environment
///   scrubbed (`Px`), cx under its child profile (`cx`, which
///   reads the secret), ux unconfined, and stack under a stack of itself
///   and `other`; nothing else on the tmpfs.
/// * `capable` may use CAP_DAC_OVERRIDE and runs px under `other`.
/// * `learner`, in complain mode, has no rule.
/// * `limited` holds at most 100 open files (`set rlimit`); `limiter`
///   2000, and runs px under `other`.
/// * `attached` attaches to `$T/bin/attached` and has no rule.
/// * `sig_old` runs sigpx under `sig_new` (`px`) and sigux unconfined
///   (`ux`); each may signal its own processes only.
/// * `free` is in unconfined mode; `sig_attached` attaches to
///   `$T/bin/sigattach` and has no rule.
/// * `netter` makes inet stream and Unix sockets, no other.
/// * `appender` may append to app.log, `rewriter` write it.
/// * `devices` may read /dev/urandom and write /dev/vcs1, not read it.
/// * Every profile but `free` may read and write /dev/null, as Debian's
///   profiles may through `abstractions/base`.
const PROFILES: &str = r#"
AA="$S/aa"; mkdir -p "$AA/profiles" "$AA/cache"
cat > "$AA/profiles/confined" <<EOF
profile confined {
  /dev/null rw,
  $T/data/allowed.txt r,
  $T/data/link.txt r,
  $T/data/out.txt w,
  $T/data/scratch* rwl,
  $T/bin/sh2 ix,
  $T/bin/px px -> other,
  $T/bin/spx Px -> other,
  $T/bin/e2big px -> other,
  $T/bin/cx cx -> child,
  $T/bin/ux ux,
  $T/bin/stack pix -> &other,
  $T/bin/readable r,
  $T/bin/mappable mr,
  profile child {
    /dev/null rw,
    $T/data/secret.txt r,
  }
}
profile other {
  /dev/null rw,
  $T/data/other.txt r,
}
profile capable {
  /dev/null rw,
  capability dac_override,
  $T/bin/px px -> other,
}
profile learner flags=(complain) {
  /dev/null rw,
}
profile limited {
  /dev/null rw,
  set rlimit nofile <= 100,
}
profile limiter {
  /dev/null rw,
  set rlimit nofile <= 2000,
  $T/bin/px px -> other,
}
profile attached $T/bin/attached {
  /dev/null rw,
}
profile sig_old {
  /dev/null rw,
  $T/bin/sigpx px -> sig_new,
  $T/bin/sigux ux,
  signal (send, receive) peer=sig_old,
}
profile sig_new {
  /dev/null rw,
  signal (send, receive) peer=sig_new,
}
profile free flags=(unconfined) {
}
profile sig_attached $T/bin/sigattach {
  /dev/null rw,
}
profile netter {
  /dev/null rw,
  network inet stream,
  network unix,
}
profile appender {
  /dev/null rw,
  $T/data/app.log a,
}
profile devices {
  /dev/null rw,
  /dev/urandom r,
  /dev/vcs1 w,
}
profile rewriter {
  /dev/null rw,
  $T/data/app.log w,
}
EOF
echo allowed > "$T/data/allowed.txt"; echo other > "$T/data/other.txt"
for b in sh2 px spx e2big cx ux stack denied attached readable mappable sigpx sigux sigattach; do cp /bin/dash "$T/bin/$b"; done
aa_daemon() { start_daemon --apparmor "$AA/profiles" --apparmor-cache "$AA/cache" "$@"; }
aa() { local p=$1; shift; "$RAMPART" run --socket "$SOCK" --apparmor "$p" -- /bin/dash -c "$@"; }
# "ok:<first line>" or "denied", for a read of $2 under profile $1.
aa_read() { aa "$1" "if read l < '$2'; then echo ok:\$l; else echo denied; fi" 2>/dev/null; }
# The same read by program $2 (on the tmpfs) that the profile-$1 shell
# runs: "refused" if the exec fails.
aa_exec_read() {
    aa "$1" '"$0" -c '\''if read l < "$1"; then echo ok:$l; else echo denied; fi'\'' x "$1"' "$2" "$3" 2>/dev/null \
        || echo refused
}
"#;

/// Reads the AppArmor records of the log with python3-apparmor:
/// `aamode operation profile name denied_mask pid`, one line per record.
const READER: &str = r#"
import sys
from apparmor.logparser import ReadLog
from apparmor.profile_list import ProfileList
profiles = ProfileList()
reader = ReadLog(sys.argv[1], profiles, '/etc/apparmor.d')
for line in open(sys.argv[1], encoding='utf-8', errors='surrogateescape'):
    if 'apparmor=' not in line:
        continue
    ev = reader.parse_event(line)
    print('AAREC', ev['aamode'], ev['operation'], ev['profile'], ev['name'],
          ''.join(sorted(ev['denied_mask'] or '')) or '-', ev['pid'])
"#;

fn scenario(policy: &Path, script: &str) -> Run {
    let reader = Path::new(env!("CARGO_TARGET_TMPDIR")).join("aa-log-reader.py");
    std::fs::write(&reader, READER).unwrap();
    let script = format!(
        "{PROFILES}\n{script}\n/usr/bin/python3 \"$READER\" \"$LOG\"\nsed 's/^/daemon: /' \"$S/daemon.err\" >&2\n"
    );
    common::enforce_scenario(&script, &[("POLICY_A", policy), ("POLICY_B", policy), ("READER", &reader)], 120)
}

/// The records python3-apparmor read, as `mode op profile name denied`.
fn records(r: &Run, t: &str) -> Vec<String> {
    r.stdout
        .lines()
        .filter_map(|l| l.strip_prefix("AAREC "))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f.len(), 6, "{l}");
            assert!(f[5].parse::<u32>().is_ok_and(|pid| pid > 1), "pid of {l}");
            format!("{} {} {} {} {}", f[0], f[1], f[2], f[3].replacen(t, "$T", 1), f[4])
        })
        .collect()
}

/// Issue 11, item 6: AppArmor decides by name, so a confined process that
/// gives the secret a name its profile allows (`link.txt r`) would read it:
/// a hard link made by the process, or a rename onto that name. The
/// kernel's AppArmor checks `l` (and the link pair) and the rename's
/// source (`r`, `w`, delete) and destination (`w`, create), which
/// `confined` lacks; fanotify sees neither call, so the launcher hands
/// them to the daemon (seccomp user notification), which asks the profile
/// as the kernel's hooks do (crates/enforce/src/supervisor.rs): both are
/// refused, while the scratch files (`rwl`) are linked, renamed and
/// chmodded, and chmod and unlink of allowed.txt (`r` only) are refused;
/// so are a mkdir and a symlink where the profile grants no `w` (a
/// symlink named scratch* is made).
/// Started with `--no-sandbox` (the daemon alone), the same process
/// links, renames and reads the secret, and chmods allowed.txt: the test
/// can fail.
#[test]
#[ignore = "needs root, checkpolicy, apparmor_parser and python3-apparmor: a live daemon in a private mount namespace"]
fn a_confined_process_cannot_give_a_denied_file_an_allowed_name() {
    let p = setup();
    let r = scenario(
        p,
        r#"
aa_unsandboxed() { local p=$1; shift; "$RAMPART" run --socket "$SOCK" --no-sandbox --apparmor "$p" -- /bin/dash -c "$@"; }
READ_LINK="if read l < '$T/data/link.txt'; then echo ok:\$l; else echo denied; fi"
aa_daemon
for how in aa aa_unsandboxed; do
    cp "$T/data/secret.txt" "$T/data/secret2.txt"
    echo "$how.LINK=$($how confined "ln '$T/data/secret.txt' '$T/data/link.txt' 2>/dev/null && $READ_LINK || echo refused")"
    rm -f "$T/data/link.txt"
    echo "$how.RENAME=$($how confined "mv '$T/data/secret2.txt' '$T/data/link.txt' 2>/dev/null && $READ_LINK || echo refused")"
    rm -f "$T/data/link.txt" "$T/data/secret2.txt"
    echo scratch > "$T/data/scratch1"
    echo "$how.SCRATCH=$($how confined "ln '$T/data/scratch1' '$T/data/scratch2' && mv '$T/data/scratch2' '$T/data/scratch3' && chmod 600 '$T/data/scratch3' && rm '$T/data/scratch1' && echo ok || echo refused" 2>/dev/null)"
    rm -f "$T/data/scratch"*
    echo "$how.CHMOD=$($how confined "chmod 600 '$T/data/allowed.txt' 2>/dev/null && echo ok || echo refused")"
    echo "$how.UNLINK=$($how confined "rm '$T/data/allowed.txt' 2>/dev/null && echo ok || echo refused")"
    [ -e "$T/data/allowed.txt" ] || echo allowed > "$T/data/allowed.txt"
    chmod 644 "$T/data/allowed.txt"
    # Creations: `confined` creates nothing but scratch* (`w`).
    echo "$how.MKDIR=$($how confined "mkdir '$T/data/newdir' 2>/dev/null && echo ok || echo refused")"
    echo "$how.SYMLINK=$($how confined "ln -s allowed.txt '$T/data/newlink' 2>/dev/null && echo ok || echo refused")"
    echo "$how.SYMLINK_SCRATCH=$($how confined "ln -s allowed.txt '$T/data/scratch-link' 2>/dev/null && echo ok || echo refused")"
    rm -rf "$T/data/newdir" "$T/data/newlink" "$T/data/scratch-link"
done
# aa-status's process part: a process under `confined`, one under
# `learner` (complain mode), launched together with the same program
# (/usr/bin/sleep, outside the marked tmpfs: its exec is an event only
# while a launch watches it; the first exec once unwatched it for both,
# and the second process ran unconfined).
"$RAMPART" run --socket "$SOCK" --apparmor confined -- /usr/bin/sleep 30 2>"$S/c.err" & C=$!
"$RAMPART" run --socket "$SOCK" --apparmor learner -- /usr/bin/sleep 30 2>"$S/l.err" & L=$!
for i in $(seq 50); do [ "$(readlink /proc/$C/exe)" = /usr/bin/sleep ] && [ "$(readlink /proc/$L/exe)" = /usr/bin/sleep ] && break; sleep 0.1; done
echo "C=$C"; echo "L=$L"
"$RAMPART" apparmor status --profiles "$AA/profiles" --cache "$AA/cache" --socket "$SOCK" | sed -n '/processes/,$p' | sed 's/^/STATUS: /'
kill $C $L; wait $C $L 2>/dev/null || true
sed 's/^/confined sleep: /' "$S/c.err" >&2; sed 's/^/learner sleep: /' "$S/l.err" >&2
stop_daemon
"#,
    );
    let status: Vec<&str> = r.stdout.lines().filter_map(|l| l.strip_prefix("STATUS: ")).collect();
    let (c, l) = (r.get("C"), r.get("L"));
    assert_eq!(
        status,
        vec![
            "2 processes have profiles defined.".to_owned(),
            "1 processes are in enforce mode.".to_owned(),
            format!("   /usr/bin/sleep ({c}) confined"),
            "1 processes are in complain mode.".to_owned(),
            format!("   /usr/bin/sleep ({l}) learner"),
        ],
        "{}",
        r.stderr
    );
    assert_eq!(r.get("aa.LINK"), "refused", "{}", r.stderr);
    assert_eq!(r.get("aa.RENAME"), "refused", "{}", r.stderr);
    assert_eq!(r.get("aa.SCRATCH"), "ok", "link, rename, chmod, unlink under rwl: {}", r.stderr);
    assert_eq!(r.get("aa.CHMOD"), "refused", "{}", r.stderr);
    assert_eq!(r.get("aa.UNLINK"), "refused", "{}", r.stderr);
    assert_eq!(r.get("aa.MKDIR"), "refused", "{}", r.stderr);
    assert_eq!(r.get("aa.SYMLINK"), "refused", "{}", r.stderr);
    assert_eq!(r.get("aa.SYMLINK_SCRATCH"), "ok", "a creation the profile allows: {}", r.stderr);
    assert_eq!(r.get("aa_unsandboxed.MKDIR"), "ok", "{}", r.stderr);
    assert_eq!(r.get("aa_unsandboxed.SYMLINK"), "ok", "{}", r.stderr);
    assert_eq!(r.get("aa_unsandboxed.CHMOD"), "ok", "{}", r.stderr);
    assert_eq!(r.get("aa_unsandboxed.UNLINK"), "ok", "{}", r.stderr);
    // The daemon alone: the new name is read.
    assert_eq!(r.get("aa_unsandboxed.LINK"), "ok:secret", "{}", r.stderr);
    assert_eq!(r.get("aa_unsandboxed.RENAME"), "ok:secret", "{}", r.stderr);
}

#[test]
#[ignore = "needs root, checkpolicy, apparmor_parser and python3-apparmor: a live daemon in a private mount namespace"]
fn a_profile_confines_what_selinux_allows() {
    let p = setup();
    let r = scenario(
        p,
        r#"
# A hard link made before the process starts, at a name the profile
# allows: AppArmor decides by the name the open used.
ln "$T/data/secret.txt" "$T/data/link.txt"
aa_daemon
echo "T=$T"
echo "ALLOWED=$(aa_read confined "$T/data/allowed.txt")"
echo "SECRET=$(aa_read confined "$T/data/secret.txt")"
echo "PLAIN=$(aa_read confined "$T/data/plain.txt")"
echo "LINK=$(aa_read confined "$T/data/link.txt")"
echo "UNCONFINED=$(cat "$T/data/secret.txt" 2>/dev/null || echo denied)"
# A forked child (a subshell) and a background child are confined too.
echo "CHILD=$(aa confined "(read l < '$T/data/secret.txt' && echo read || echo denied) 2>/dev/null")"
echo "CHILD_ALLOWED=$(aa confined "(read l < '$T/data/allowed.txt' && echo \$l) 2>/dev/null")"
echo "WRITE_OK=$(aa confined "echo x > '$T/data/out.txt' && echo ok || echo denied" 2>/dev/null)"
echo "APPEND_SECRET=$(aa confined "echo x >> '$T/data/secret.txt' && echo ok || echo denied" 2>/dev/null)"
# allowed.txt is read-only for `confined`, whose opens for writing go to
# the daemon: a mark placed for its reads (and everyone's) does not let
# a write through.
aa_read confined "$T/data/allowed.txt" >/dev/null
echo "OPEN_MARKS=$(status_field ignore_marks)"
echo "WRITE_READ_ONLY=$(aa confined "echo x > '$T/data/allowed.txt' && echo ok || echo denied" 2>/dev/null)"
echo "READ_ONLY_LEFT=$(cat "$T/data/allowed.txt")"
# Exec: ix stays in the profile; a program without x is refused.
echo "IX=$(aa_exec_read confined "$T/bin/sh2" "$T/data/allowed.txt")"
echo "IX_STAYS=$(aa_exec_read confined "$T/bin/sh2" "$T/data/secret.txt")"
echo "DENIED_EXEC=$(aa_exec_read confined "$T/bin/denied" "$T/data/allowed.txt")"
# Complain mode: allowed, and reported.
echo "LEARNER=$(aa_read learner "$T/data/secret.txt")"
# An unknown profile is refused before anything runs (status 125).
set +e; aa nosuch 'echo ran' >/dev/null 2>"$S/nosuch.err"; echo "NOSUCH=$? $(tr '\n' ' ' < "$S/nosuch.err")"; set -e
stop_daemon
"#,
    );
    let t = r.get("T").to_owned();
    assert_eq!(r.get("ALLOWED"), "ok:allowed", "{}", r.stderr);
    // SELinux allows unconfined_t every read; the profile has no rule.
    assert_eq!(r.get("SECRET"), "denied");
    assert_eq!(r.get("PLAIN"), "denied");
    // `$T/data/link.txt r` reaches the secret's inode by that name.
    assert_eq!(r.get("LINK"), "ok:secret");
    assert_eq!(r.get("UNCONFINED"), "secret");
    assert_eq!(r.get("CHILD"), "denied");
    assert_eq!(r.get("CHILD_ALLOWED"), "allowed");
    // `w` covers an O_WRONLY|O_CREAT|O_TRUNC open; no rule gives `a`.
    assert_eq!(r.get("WRITE_OK"), "ok");
    assert_eq!(r.get("APPEND_SECRET"), "denied");
    assert!(r.num("OPEN_MARKS") > 0, "marks were placed");
    assert_eq!(r.get("WRITE_READ_ONLY"), "denied");
    assert_eq!(r.get("READ_ONLY_LEFT"), "allowed");
    assert_eq!(r.get("IX"), "ok:allowed");
    assert_eq!(r.get("IX_STAYS"), "denied");
    assert_eq!(r.get("DENIED_EXEC"), "refused");
    assert_eq!(r.get("LEARNER"), "ok:secret");
    assert!(r.get("NOSUCH").starts_with("125 ") && r.get("NOSUCH").contains("no such AppArmor profile"));
    // Every record as python3-apparmor reads it: one per denial (the
    // shell's, the subshell's, the ix child's), the refused exec, the
    // complain-mode read; none for what was allowed.
    let mut got = records(&r, &t);
    got.sort();
    let mut want = vec![
        "PERMITTING open learner $T/data/secret.txt r",
        "REJECTING exec confined $T/bin/denied x",
        "REJECTING open confined $T/data/plain.txt r",
        // `>>`: O_WRONLY|O_APPEND|O_CREAT asks append and create.
        "REJECTING open confined $T/data/secret.txt ac",
        // `>` on the read-only file, decided by the daemon's supervised
        // open: O_WRONLY|O_CREAT|O_TRUNC asks create and write.
        "REJECTING open confined $T/data/allowed.txt cw",
        "REJECTING open confined $T/data/secret.txt r",
        "REJECTING open confined $T/data/secret.txt r",
        "REJECTING open confined $T/data/secret.txt r",
    ];
    want.sort_unstable();
    assert_eq!(got, want, "{}", r.stdout);
}

/// Issue 11, item 6: two ways around an exec rule. (1) Running the
/// program through the dynamic loader (`ld.so PROGRAM`): the exec is of
/// ld.so (on /, not marked), and the program is only opened and mapped;
/// `confined` has no rule for `$T/bin/denied`, so the loader's open for
/// reading is refused, as the kernel's AppArmor refuses it (no `r`, no
/// `m`); `$T/bin/readable` it may read, not map executable (`r`): the
/// loader's `PROT_EXEC` mapping is refused (`file_mmap`, `m`:
/// crates/enforce/src/exec_memory.rs); `$T/bin/mappable` (`mr`) runs,
/// through the loader, not by its own exec (no x rule). A
/// permissive daemon lets the first two run: the test can fail. (2) A new
/// mount namespace (`unshare -m`, clone flags) to remount the tmpfs
/// elsewhere under a name the profile allows: the launcher refuses
/// namespace creation (seccomp); with `--no-sandbox` root creates one.
#[test]
#[ignore = "needs root, checkpolicy, apparmor_parser and python3-apparmor: a live daemon in a private mount namespace"]
fn the_loader_and_new_namespaces_do_not_get_around_a_profile() {
    let p = setup();
    let r = scenario(
        p,
        r#"
LDSO=/lib64/ld-linux-x86-64.so.2
aa_unsandboxed() { local p=$1; shift; "$RAMPART" run --socket "$SOCK" --no-sandbox --apparmor "$p" -- /bin/dash -c "$@"; }
aa_daemon
echo "LDSO=$(aa confined "$LDSO '$T/bin/denied' -c 'echo ran' 2>/dev/null || echo refused")"
echo "LDSO_READABLE=$(aa confined "$LDSO '$T/bin/readable' -c 'echo ran' 2>/dev/null || echo refused")"
echo "LDSO_MAPPABLE=$(aa confined "$LDSO '$T/bin/mappable' -c 'echo ran' 2>/dev/null || echo refused")"
echo "EXEC_MAPPABLE=$(aa confined "'$T/bin/mappable' -c 'echo ran' 2>/dev/null || echo refused")"
echo "EXEC_RECORD=$(grep -c 'apparmor="DENIED" operation="exec" .*name="'"$T"'/bin/mappable"' "$LOG")"
echo "MMAP_RECORD=$(grep -c 'apparmor="DENIED" operation="file_mmap" .*name="'"$T"'/bin/readable".*requested_mask="m" denied_mask="m"' "$LOG")"
grep 'file_mmap' "$LOG" >&2 || true
echo "UNSHARE=$(aa confined "unshare -m true 2>/dev/null && echo created || echo refused")"
echo "UNSANDBOXED_UNSHARE=$(aa_unsandboxed confined "unshare -m true 2>/dev/null && echo created || echo refused")"
stop_daemon
aa_daemon --permissive
echo "PERMISSIVE_LDSO=$(aa confined "$LDSO '$T/bin/denied' -c 'echo ran' 2>/dev/null || echo refused")"
echo "PERMISSIVE_LDSO_READABLE=$(aa confined "$LDSO '$T/bin/readable' -c 'echo ran' 2>/dev/null || echo refused")"
echo "PERMISSIVE_EXEC_MAPPABLE=$(aa confined "'$T/bin/mappable' -c 'echo ran' 2>/dev/null || echo refused")"
stop_daemon
"#,
    );
    assert_eq!(r.get("LDSO"), "refused", "{}", r.stderr);
    assert_eq!(r.get("PERMISSIVE_LDSO"), "ran", "{}", r.stderr);
    assert_eq!(r.get("LDSO_READABLE"), "refused", "{}", r.stderr);
    assert_eq!(r.num("MMAP_RECORD"), 1, "the kernel's record of the mapping:\n{}", r.stderr);
    assert_eq!(r.get("LDSO_MAPPABLE"), "ran", "{}", r.stderr);
    // `m` maps it; without an x rule it is not a program to exec (the
    // launcher's filter tells its exec from a loader's: crates/enforce/src/exec_calls.rs).
    assert_eq!(r.get("EXEC_MAPPABLE"), "refused", "{}", r.stderr);
    assert_eq!(r.num("EXEC_RECORD"), 1, "the exec's record:\n{}", r.stderr);
    assert_eq!(r.get("PERMISSIVE_EXEC_MAPPABLE"), "ran", "{}", r.stderr);
    assert_eq!(r.get("PERMISSIVE_LDSO_READABLE"), "ran", "{}", r.stderr);
    assert_eq!(r.get("UNSHARE"), "refused", "{}", r.stderr);
    assert_eq!(r.get("UNSANDBOXED_UNSHARE"), "created", "{}", r.stderr);
}

/// Issue 11, item 2: an unconfined process's exec of a program a profile
/// attaches to (`attached`, `find_attach`) would put it under that profile
/// in the kernel; rampartd cannot give the process the launcher's sandbox
/// (its links and renames refused), so it refuses the exec, as it refuses
/// an exec transition into a confined SELinux domain, and `rampart run
/// --apparmor attached` is the way in. A permissive daemon lets the exec
/// run (unconfined): the test can fail.
#[test]
#[ignore = "needs root, checkpolicy, apparmor_parser and python3-apparmor: a live daemon in a private mount namespace"]
fn an_attached_program_runs_only_through_the_launcher() {
    let p = setup();
    let r = scenario(
        p,
        r#"
aa_daemon
echo "DIRECT=$("$T/bin/attached" -c 'echo ran' 2>/dev/null || echo refused)"
echo "LAUNCHED=$("$RAMPART" run --socket "$SOCK" --apparmor attached -- "$T/bin/attached" -c 'echo ran' 2>/dev/null || echo refused)"
echo "OTHER=$("$T/bin/sh2" -c 'echo ran' 2>/dev/null || echo refused)"
stop_daemon
echo "NOTE=$(grep -c 'profile attached attaches to it' "$S/daemon.err")"
aa_daemon --permissive
echo "PERMISSIVE=$("$T/bin/attached" -c 'echo ran' 2>/dev/null || echo refused)"
stop_daemon
"#,
    );
    assert_eq!(r.get("DIRECT"), "refused", "{}", r.stderr);
    assert_eq!(r.get("LAUNCHED"), "ran", "{}", r.stderr);
    // No profile attaches to sh2: an unconfined exec of it runs.
    assert_eq!(r.get("OTHER"), "ran", "{}", r.stderr);
    assert!(r.num("NOTE") >= 1, "no note for the refused exec:\n{}", r.stderr);
    assert_eq!(r.get("PERMISSIVE"), "ran", "{}", r.stderr);
}

#[test]
#[ignore = "needs root, checkpolicy, apparmor_parser and python3-apparmor: a live daemon in a private mount namespace"]
fn a_permissive_daemon_lets_profile_denials_through() {
    let p = setup();
    let r = scenario(
        p,
        r#"
aa_daemon --permissive
echo "T=$T"
echo "SECRET=$(aa_read confined "$T/data/secret.txt")"
stop_daemon
"#,
    );
    assert_eq!(r.get("SECRET"), "ok:secret", "{}", r.stderr);
    // Reported as complain mode reports it.
    assert_eq!(records(&r, r.get("T")), vec!["PERMITTING open confined $T/data/secret.txt r"]);
}

/// Issue 11, item 2: exec transitions of a process under a profile, as
/// the kernel's `profile_transition` makes them: `px` and `cx` move it
/// under the named or child profile (which then decides its opens: the
/// new rules allow, the old ones no longer do), `ux` leaves AppArmor.
/// The entry invariant (crate::entry): a transition that would leave the
/// process holding a capability the new profile lacks (`capable` ->
/// `other`, CAP_DAC_OVERRIDE) or a descriptor the new profile may not use
/// (out.txt, open for writing; the kernel's `aa_inherit_files` would
/// replace it, the daemon cannot) is refused, each shown to succeed with
/// a permissive daemon: the test can fail. An exec that fails after its
/// transition was decided (E2BIG) leaves the process under its old
/// profile. Under a stack (`pix -> &other`: no profile attaches to the
/// program, so ix, with `other` stacked on: `confined//&other`) each
/// profile decides: neither's file can be read, each denial recorded by
/// the profile that denies it.
#[test]
#[ignore = "needs root, checkpolicy, apparmor_parser and python3-apparmor: a live daemon in a private mount namespace"]
fn exec_transitions_move_a_process_between_profiles() {
    let p = setup();
    let r = scenario(
        p,
        r#"
# Under `confined`, execve(e2big) fails after its permission event (an
# argument over MAX_ARG_STRLEN: E2BIG); then the same process reads.
FAILED='import os, sys
try:
    os.execv(sys.argv[1], [sys.argv[1], "x" * 200000])
except OSError as e:
    print("failed:" + os.strerror(e.errno))
for f in sys.argv[2:]:
    try:
        print(os.path.basename(f) + ":" + open(f).read().strip())
    except OSError:
        print(os.path.basename(f) + ":denied")'
attacks() {
    echo "$1.INHERIT=$(aa confined "exec 3>'$T/data/out.txt'; '$T/bin/px' -c 'echo ran' 2>/dev/null || echo refused")"
    echo "$1.CAPS=$(aa capable "'$T/bin/px' -c 'echo ran' 2>/dev/null || echo refused")"
}
aa_daemon
echo "T=$T"
echo "PX_OTHER=$(aa_exec_read confined "$T/bin/px" "$T/data/other.txt")"
# Px runs its program in secure-execution mode (AT_SECURE: the C library
# drops TMPDIR and the loader's variables), px does not.
echo "PX_ENV=$(aa confined "TMPDIR=/kept exec '$T/bin/px' -c 'echo \${TMPDIR:-scrubbed}'")"
echo "SPX_ENV=$(aa confined "TMPDIR=/kept exec '$T/bin/spx' -c 'echo \${TMPDIR:-scrubbed}'")"
echo "PX_OLD=$(aa_exec_read confined "$T/bin/px" "$T/data/allowed.txt")"
echo "CX=$(aa_exec_read confined "$T/bin/cx" "$T/data/secret.txt")"
echo "CX_OLD=$(aa_exec_read confined "$T/bin/cx" "$T/data/allowed.txt")"
echo "UX=$(aa_exec_read confined "$T/bin/ux" "$T/data/secret.txt")"
echo "STACK=$(aa_exec_read confined "$T/bin/stack" "$T/data/allowed.txt")"
echo "STACK_OTHER=$(aa_exec_read confined "$T/bin/stack" "$T/data/other.txt")"
echo "FAILED=$(aa confined "/usr/bin/python3 -c '$FAILED' '$T/bin/e2big' '$T/data/allowed.txt' '$T/data/other.txt'" 2>"$S/failed.err" | tr '\n' ' ')"
# aa-status sees a process under `other` after its px.
aa confined "exec '$T/bin/px' -c 'sleep 30'" 2>/dev/null & PX=$!
for i in $(seq 50); do [ "$(readlink /proc/$PX/exe)" = "$T/bin/px" ] && break; sleep 0.1; done
for i in $(seq 50); do [ "$(readlink /proc/$PX/exe)" = /usr/bin/sleep ] && break; sleep 0.1; done
"$RAMPART" apparmor status --profiles "$AA/profiles" --cache "$AA/cache" --socket "$SOCK" | grep -E '^ +/usr/bin/sleep' | sed 's/^/STATUS: /'
kill $PX 2>/dev/null; wait $PX 2>/dev/null || true
attacks enforcing
stop_daemon
sed 's/^/enforcing daemon: /' "$S/daemon.err" >&2
aa_daemon --permissive
attacks permissive
stop_daemon
sed "s/^/failed: /" "$S/failed.err" >&2
"#,
    );
    let t = r.get("T").to_owned();
    // `other` reads other.txt, which `confined` may not; not allowed.txt.
    assert_eq!(r.get("PX_OTHER"), "ok:other", "{}", r.stderr);
    assert_eq!(r.get("PX_OLD"), "denied", "{}", r.stderr);
    // AT_SECURE for `Px`, as the kernel sets it (crate::secure_exec).
    assert_eq!(r.get("PX_ENV"), "/kept", "{}", r.stderr);
    assert_eq!(r.get("SPX_ENV"), "scrubbed", "{}", r.stderr);
    assert_eq!(r.get("CX"), "ok:secret", "{}", r.stderr);
    assert_eq!(r.get("CX_OLD"), "denied", "{}", r.stderr);
    // Unconfined: SELinux's unconfined_t reads the secret.
    assert_eq!(r.get("UX"), "ok:secret", "{}", r.stderr);
    assert_eq!(r.get("STACK"), "denied", "{}", r.stderr);
    assert_eq!(r.get("STACK_OTHER"), "denied", "{}", r.stderr);
    assert_eq!(r.get("FAILED"), "failed:Argument list too long allowed.txt:allowed other.txt:denied ", "{}", r.stderr);
    let status: Vec<&str> = r.stdout.lines().filter_map(|l| l.strip_prefix("STATUS: ")).collect();
    assert_eq!(status.len(), 1, "{}", r.stdout);
    assert!(status[0].ends_with(" other"), "{status:?}");
    assert_eq!(r.get("enforcing.INHERIT"), "refused", "{}", r.stderr);
    assert_eq!(r.get("enforcing.CAPS"), "refused", "{}", r.stderr);
    assert_eq!(r.get("permissive.INHERIT"), "ran", "{}", r.stderr);
    assert_eq!(r.get("permissive.CAPS"), "ran", "{}", r.stderr);
    // The inherited descriptor's denial, as python3-apparmor reads it
    // (once enforced, once let through).
    let got = records(&r, &t);
    // Under the stack, each profile records its own denial: one more
    // each than PX_OLD (other) and FAILED (confined) make.
    for want in ["REJECTING open other $T/data/allowed.txt r", "REJECTING open confined $T/data/other.txt r"] {
        assert_eq!(got.iter().filter(|l| *l == want).count(), 2, "{want}: {got:?}");
    }
    let inherit: Vec<&String> = got.iter().filter(|l| l.contains("file_inherit")).collect();
    assert_eq!(
        inherit,
        vec!["REJECTING file_inherit other $T/data/out.txt w", "PERMITTING file_inherit other $T/data/out.txt w"],
        "{}",
        r.stdout
    );
}

/// A profile's `set rlimit` rules hold as the kernel applies them at an
/// exec into the profile (`__aa_transition_rlimits`, crates/enforce/src/limits.rs):
/// `rampart run --apparmor limited` starts its process with at most 100
/// open files, hard and soft; and leaving a profile that sets a limit
/// resets that soft limit to the lower of the hard limit and the init
/// task's (1024 open files): a shell under `limiter` lowers its own to 20
/// and executes px (into `other`), which finds 1024, where the same exec
/// from `confined` (no rlimit rule) keeps 20. Under `other`, the hard
/// limit is the launcher's.
#[test]
#[ignore = "needs root, checkpolicy, apparmor_parser and python3-apparmor: a live daemon in a private mount namespace"]
fn a_profiles_rlimit_rules_hold() {
    let p = setup();
    let r = scenario(
        p,
        r#"
aa_daemon
echo "LIMITED=$(aa limited 'echo $(ulimit -H -n) $(ulimit -S -n)')"
echo "OTHER_HARD=$(aa other 'ulimit -H -n')"
echo "LAUNCHER_HARD=$(ulimit -H -n)"
echo "PX_RESET=$(aa limiter "ulimit -S -n 20; exec '$T/bin/px' -c 'ulimit -S -n'")"
echo "PX_KEPT=$(aa confined "ulimit -S -n 20; exec '$T/bin/px' -c 'ulimit -S -n'")"
stop_daemon
"#,
    );
    assert_eq!(r.get("LIMITED"), "100 100", "{}", r.stderr);
    assert_eq!(r.get("OTHER_HARD"), r.get("LAUNCHER_HARD"), "{}", r.stderr);
    assert_eq!(r.get("PX_RESET"), "1024", "{}", r.stderr);
    assert_eq!(r.get("PX_KEPT"), "20", "{}", r.stderr);
}

/// A profile's `set rlimit` bound holds at `setrlimit` too, as the
/// kernel's `aa_task_setrlimit` checks it: every change of a bounded
/// resource's limits asks that the new hard limit stay within the bound.
/// A process under `limited` (100 open files) waits while the profile is
/// reloaded with a bound of 50; its hard limit stays 100, as in the
/// kernel. Then SOFT: lowering its soft limit to 60, which keeps the hard
/// limit of 100, is refused (`EACCES` and an `operation="setrlimit"`
/// record, which python3-apparmor reads; before this, and under a permissive daemon,
/// it was lowered); BOTH: lowering both to 40, within the bound, passes
/// (a change of the hard limit rampartd makes itself, on the limits it
/// checked). The same lowering by `prlimit64` of its process's id from
/// another thread (THREAD: checked as its own, with a record) and of its
/// shell from a child (OTHER: refused, coarser than AppArmor, which would
/// read the new limits; logged) is refused; before this both got through
/// with SELinux's check alone.
#[test]
#[ignore = "needs root, checkpolicy, apparmor_parser and python3-apparmor: a live daemon in a private mount namespace"]
fn a_profiles_rlimit_bound_holds_at_setrlimit() {
    let p = setup();
    let r = scenario(
        p,
        r#"
# prlimit64 of its own process by its id, from a thread that is not the
# process's first.
THREAD='import os, resource, sys, threading
r = []
def f():
    try:
        resource.prlimit(os.getpid(), resource.RLIMIT_NOFILE, (60, 100)); r.append("lowered")
    except OSError as e:
        r.append("refused" if e.errno in (1, 13) else "broken: " + e.strerror)
t = threading.Thread(target=f); t.start(); t.join()
print("THREAD%s=%s" % (sys.argv[1], r[0]))'
run_it() {
    rm -f "$S/go"
    aa limited 'while [ ! -e "$0/go" ]; do sleep 0.05; done
if prlimit --pid $$ --nofile=60:100 2>/dev/null; then echo "OTHER$1=lowered"; else echo "OTHER$1=refused"; fi
/usr/bin/python3 -c "$2" "$1"
if ulimit -S -n 60 2>/dev/null; then echo "SOFT$1=lowered"; else echo "SOFT$1=refused"; fi
echo "SOFT$1_NOW=$(ulimit -S -n)"
ulimit -n 40 && echo "BOTH$1=$(ulimit -H -n)"' "$S" "$1" "$THREAD" 2>&1 | cat > "$S/run$1.out" &
    RUNNING=$!
    sleep 0.5
    sed -i 's/nofile <= [0-9]*/nofile <= 50/' "$AA/profiles/confined"
    "$RAMPART" reload --socket "$SOCK" >/dev/null
    touch "$S/go"
    wait "$RUNNING"
    cat "$S/run$1.out"
    sed -i 's/nofile <= [0-9]*/nofile <= 100/' "$AA/profiles/confined"
}
aa_daemon
run_it ""
stop_daemon
echo "RECORDS=$(grep -c 'apparmor="DENIED" operation="setrlimit" profile="limited" pid=[0-9]* comm="[a-z0-9]*"$' "$LOG")"
echo "NAMED=$(grep -c 'refused a setrlimit of resource 7 to hard limit 100 by pid [0-9]*: above the bound of profile "limited" (50)' "$S/daemon.err")"
echo "COARSE=$(grep -c 'refused a prlimit of resource 7 of another process by pid [0-9]*: profile "limited" bounds it' "$S/daemon.err")"
aa_daemon --permissive
run_it _PERMISSIVE
stop_daemon
"#,
    );
    assert_eq!(r.get("SOFT"), "refused", "a hard limit above the reloaded bound refuses the change:\n{}", r.stderr);
    assert_eq!(r.get("OTHER"), "refused", "prlimit of its shell, another process:\n{}", r.stderr);
    assert_eq!(r.get("THREAD"), "refused", "prlimit of its own process from another thread:\n{}", r.stderr);
    assert_eq!(r.get("SOFT_NOW"), "100", "{}", r.stderr);
    assert_eq!(r.num("RECORDS"), 2, "a record for SOFT and THREAD each:\n{}", r.stderr);
    assert_eq!(r.num("NAMED"), 2, "the daemon's lines name the resource:\n{}", r.stderr);
    assert_eq!(r.num("COARSE"), 1, "the coarser refusal is logged:\n{}", r.stderr);
    assert_eq!(r.get("BOTH"), "40", "within the bound:\n{}", r.stderr);
    for key in ["SOFT_PERMISSIVE", "OTHER_PERMISSIVE", "THREAD_PERMISSIVE"] {
        assert_eq!(r.get(key), "lowered", "the test can fail:\n{}", r.stderr);
    }
}

/// Issue 11, item 3 and the steady-state target: ignore marks under a
/// profile. A mark lets later opens and reads of a file pass unasked; it
/// is placed because every profile in scope allows the file by its one
/// name, so each way of giving the file another name must flush it, or
/// a process under the profile reads the file by a name the profile
/// denies: a rename into priv/ (which `marked` may not read), a hard link
/// there, and a bind mount of the directory elsewhere, each made by an
/// unconfined process after the mark was placed (shown placed each time:
/// the status counts marks). With a permissive daemon the three names
/// are read: the test can fail.
#[test]
#[ignore = "needs root, checkpolicy, apparmor_parser and python3-apparmor: a live daemon in a private mount namespace"]
fn a_new_name_does_not_inherit_an_ignore_mark() {
    let p = setup();
    let r = scenario(
        p,
        r#"
cat >> "$AA/profiles/confined" <<EOF
profile marked {
  $T/data/pub/** rw,
}
EOF
marks() { "$RAMPART" status --socket "$SOCK" | sed -n 's/^Ignore marks: *//p'; }
attack() {
    mkdir -p "$T/data/pub" "$T/data/priv" "$S/elsewhere"
    for f in a b c; do echo "pub-$f" > "$T/data/pub/$f"; done
    # A process under the profile for the whole run: the profile stays in
    # scope (no flush when the readers below start).
    "$RAMPART" run --socket "$SOCK" --apparmor marked -- /bin/sleep 60 & SLEEPER=$!
    sleep 0.5
    for f in a b c; do for i in 1 2 3; do aa_read marked "$T/data/pub/$f" >/dev/null; done; done
    echo "$1.PUB=$(aa_read marked "$T/data/pub/a")"
    echo "$1.MARKS_RENAME=$(marks)"
    mv "$T/data/pub/a" "$T/data/priv/a"; sleep 0.3
    echo "$1.RENAME=$(aa_read marked "$T/data/priv/a")"
    for i in 1 2 3; do aa_read marked "$T/data/pub/b" >/dev/null; done
    echo "$1.MARKS_LINK=$(marks)"
    ln "$T/data/pub/b" "$T/data/priv/b"; sleep 0.3
    echo "$1.LINK=$(aa_read marked "$T/data/priv/b")"
    for i in 1 2 3; do aa_read marked "$T/data/pub/c" >/dev/null; done
    echo "$1.MARKS_MOUNT=$(marks)"
    mount --bind "$T/data/pub" "$S/elsewhere"; sleep 0.3
    echo "$1.MOUNT=$(aa_read marked "$S/elsewhere/c")"
    # The daemon may still hold the event's descriptor, opened through
    # this mount: detach it then.
    umount "$S/elsewhere" 2>/dev/null || umount -l "$S/elsewhere"
    kill $SLEEPER; wait $SLEEPER 2>/dev/null || true
    rm -rf "$T/data/pub" "$T/data/priv"
}
aa_daemon
attack enforcing
stop_daemon
aa_daemon --permissive
attack permissive
stop_daemon
"#,
    );
    assert_eq!(r.get("enforcing.PUB"), "ok:pub-a", "{}", r.stderr);
    for when in ["RENAME", "LINK", "MOUNT"] {
        assert!(r.num(&format!("enforcing.MARKS_{when}")) > 0, "no mark before the {when}:\n{}", r.stdout);
    }
    assert_eq!(r.get("enforcing.RENAME"), "denied", "{}", r.stderr);
    assert_eq!(r.get("enforcing.LINK"), "denied", "{}", r.stderr);
    assert_eq!(r.get("enforcing.MOUNT"), "denied", "{}", r.stderr);
    assert_eq!(r.get("permissive.RENAME"), "ok:pub-a", "{}", r.stderr);
    assert_eq!(r.get("permissive.LINK"), "ok:pub-b", "{}", r.stderr);
    assert_eq!(r.get("permissive.MOUNT"), "ok:pub-c", "{}", r.stderr);
}

/// Issue 11, item 1: `--no-selinux` runs AppArmor alone. The daemon is
/// given no policy and no file_contexts (its built-in policy allows
/// everything and writes nothing); the profile `confined` decides: it
/// reads allowed.txt and not the secret (labeled secret_t, which no
/// SELinux rule looks at now), a process under no profile reads both,
/// the denial is an `apparmor="DENIED"` record and the log holds no AVC
/// line. An SELinux context cannot be asked for. Under a permissive
/// daemon the profile's denial is only logged: the check can fail.
#[test]
#[ignore = "needs root, checkpolicy, apparmor_parser and python3-apparmor: a live daemon in a private mount namespace"]
fn apparmor_alone_decides_without_selinux() {
    let p = setup();
    let r = scenario(
        p,
        r#"
alone() {
    "$RAMPART" daemon --mark "$T" --no-selinux --apparmor "$AA/profiles" --apparmor-cache "$AA/cache" \
        --socket "$SOCK" --audit-log "$LOG" --cgroup "$CG" "$@" 2>"$S/daemon.err" &
    D=$!
    wait_for_daemon
}
echo "T=$T"
set +e
"$RAMPART" daemon --mark "$T" --no-selinux --socket "$SOCK" 2>"$S/bare.err"
echo "BARE=$?"
set -e
echo "BARE_WHY=$(tail -n 1 "$S/bare.err")"
alone
echo "POLICY=$("$RAMPART" status --socket "$SOCK" | sed -n 's/^Loaded policy: *//p')"
echo "ALLOWED=$(aa_read confined "$T/data/allowed.txt")"
echo "DENIED=$(aa_read confined "$T/data/secret.txt")"
echo "UNCONFINED=$(cat "$T/data/secret.txt")"
# A connection under a profile that allows it: the built-in policy
# labels no port (the unlabeled SID, as the kernel's unknown one).
echo "CONNECT=$(aa netter '/usr/bin/python3 -c "import socket
s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen()
c = socket.socket(); c.connect(s.getsockname()); print(\"connected\")"' 2>&1 | tail -n 1)"
# What a process under a profile makes (the daemon makes it) gets no
# SELinux label: there is no SELinux policy to take one from.
aa confined "echo new > '$T/data/scratch-new' && ln -s new '$T/data/scratch-sym'" >/dev/null 2>&1 || true
for f in scratch-new scratch-sym; do
    echo "MADE_$f=$(/usr/bin/python3 -c 'import os, sys
try:
    print("label:" + os.getxattr(sys.argv[1], "security.selinux", follow_symlinks=False).decode())
except OSError as e:
    print("made" if os.path.lexists(sys.argv[1]) and e.errno == 61 else "error:" + e.strerror)' "$T/data/$f")"
done
set +e
"$RAMPART" run --socket "$SOCK" --context system_u:system_r:app_t:s0 -- /bin/true 2>"$S/ctx.err"
echo "CONTEXT=$?"
set -e
echo "CONTEXT_WHY=$(tail -n 1 "$S/ctx.err")"
stop_daemon
alone --permissive
echo "PERMISSIVE=$(aa_read confined "$T/data/secret.txt")"
stop_daemon
echo "AVC_LINES=$(grep -c 'avc:' "$LOG" || true)"
"#,
    );
    assert_eq!(r.get("BARE"), "2", "--no-selinux without --apparmor is a usage error: {}", r.stderr);
    assert!(r.get("BARE_WHY").contains("--apparmor"), "{}", r.get("BARE_WHY"));
    assert!(r.get("POLICY").starts_with("none (AppArmor alone"), "{}", r.get("POLICY"));
    assert_eq!(r.get("ALLOWED"), "ok:allowed", "{}", r.stderr);
    assert_eq!(r.get("DENIED"), "denied", "{}", r.stderr);
    assert_eq!(r.get("CONNECT"), "connected", "a connect under AppArmor alone\n{}", r.stderr);
    assert_eq!(r.get("UNCONFINED"), "secret", "{}", r.stderr);
    for f in ["scratch-new", "scratch-sym"] {
        assert_eq!(r.get(&format!("MADE_{f}")), "made", "{f}: made without a label\n{}", r.stderr);
    }
    assert_ne!(r.get("CONTEXT"), "0", "{}", r.stderr);
    assert!(r.get("CONTEXT_WHY").contains("AppArmor alone"), "{}", r.get("CONTEXT_WHY"));
    assert_eq!(r.get("PERMISSIVE"), "ok:secret", "{}", r.stderr);
    assert_eq!(r.num("AVC_LINES"), 0, "{}", r.stderr);
    let t = r.get("T").to_owned();
    let recs = records(&r, &t);
    assert!(
        recs.iter().any(|l| l == "REJECTING open confined $T/data/secret.txt r"),
        "the denial, as python3-apparmor reads it: {recs:?}\n{}",
        r.stderr
    );
}

/// AppArmor's signal rules, compiled for a feature set with signal
/// mediation (crates/apparmor/src/compile.rs) and checked as the kernel's
/// `aa_may_signal` checks them (sender's `send`, target's `receive`) for
/// every signal a launched process sends (crates/enforce/src/signals.rs).
/// The attack: a process under `sig_old` starts a program that moves to
/// `sig_new` by a `px` transition and then kills it, which `sig_old` may
/// not (`signal ... peer=sig_old` only): refused, with the record
/// aa-logprof reads. Its own child (still `sig_old`) it may kill; a
/// profile without any signal rule (`other`) may not even kill its own
/// child, as the kernel would refuse it. Under a permissive daemon the
/// kills go through (complain-mode records, for the send and then the
/// receive): the test can fail.
#[test]
#[ignore = "needs root, checkpolicy, apparmor_parser and python3-apparmor: a live daemon in a private mount namespace"]
fn a_profiles_signal_rules_hold() {
    let p = setup();
    // `$1`: the program the profile-sig_old shell starts (sigpx moves to
    // sig_new, plain dash stays); prints whether the kill returned 0 and
    // whether the child then ran on (sleeping, or reaped or a zombie:
    // dead), and the child's pid to end it.
    let script = r#"
kill_child() {
    aa "$1" '"$0" -c "sleep 5" & c=$!; sleep 1
        if kill -TERM $c 2>/dev/null; then k=sent; else k=refused; fi; sleep 0.3
        if grep -qs "^State:.*[SR]" /proc/$c/status; then s=alive; else s=dead; fi
        echo "$k,$s $c"' "$2" 2>/dev/null
}
report() { echo "$1=${2%% *}"; kill -KILL "${2##* }" 2>/dev/null || true; }
aa_daemon $MODE
echo "T=$T"
report PX "$(kill_child sig_old "$T/bin/sigpx")"
report OWN "$(kill_child sig_old /bin/dash)"
report NO_RULES "$(kill_child other /bin/dash)"
stop_daemon
"#;
    let r = scenario(p, &script.replace("$MODE", ""));
    assert_eq!(r.get("PX"), "refused,alive", "{}", r.stderr);
    assert_eq!(r.get("OWN"), "sent,dead", "{}", r.stderr);
    assert_eq!(r.get("NO_RULES"), "refused,alive", "{}", r.stderr);
    let signals: Vec<String> = r.stdout.lines().filter_map(|l| l.strip_prefix("AAREC ")).map(signal_record).collect();
    assert_eq!(signals, ["REJECTING signal sig_old dens", "REJECTING signal other dens"], "{}", r.stderr);

    let r = scenario(p, &script.replace("$MODE", "--permissive"));
    assert_eq!(r.get("PX"), "sent,dead", "{}", r.stderr);
    assert_eq!(r.get("NO_RULES"), "sent,dead", "{}", r.stderr);
    let signals: Vec<String> = r.stdout.lines().filter_map(|l| l.strip_prefix("AAREC ")).map(signal_record).collect();
    // Let through as sent, each target's profile then asked to receive
    // it (`xcheck_labels`), which neither may either.
    let permitted = [
        "PERMITTING signal sig_old dens",
        "PERMITTING signal sig_new ceeeirv",
        "PERMITTING signal other dens",
        "PERMITTING signal other ceeeirv",
    ];
    assert_eq!(signals, permitted, "{}", r.stderr);
}

/// A file a profile lets a process only append to stays append-only:
/// the kernel's AppArmor refuses the writes through it once `O_APPEND`
/// is cleared (`w` at each write's revalidation), which rampartd cannot
/// see; it refuses the clear instead (`fcntl(F_SETFL)`:
/// crates/enforce/src/append_only.rs), recorded as the kernel records
/// the write (`file_perm`, `w`). `appender` (`a`) opens app.log to
/// append and cannot clear `O_APPEND`; `rewriter` (`w`) can. Under a
/// permissive daemon both clear it, with a complain-mode record.
#[test]
#[ignore = "needs root, checkpolicy, apparmor_parser and python3-apparmor: a live daemon in a private mount namespace"]
fn a_profiles_append_rules_hold() {
    let p = setup();
    let script = r#"
cat > "$S/clear.py" <<'PY'
import errno, fcntl, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
try:
    fcntl.fcntl(fd, fcntl.F_SETFL, 0)
    print(sys.argv[2] + "=cleared")
except OSError as e:
    print(sys.argv[2] + "=" + errno.errorcode[e.errno])
PY
printf 'first\n' > "$T/data/app.log"; chmod 666 "$T/data/app.log"
echo "T=$T"
aa_daemon $MODE
for p in appender rewriter; do aa $p '/usr/bin/python3 "$0" "$1" "$2"' "$S/clear.py" "$T/data/app.log" $p; done
stop_daemon
"#;
    let records = |r: &Run| -> Vec<String> {
        let rows = r.stdout.lines().filter_map(|l| l.strip_prefix("AAREC "));
        rows.map(|l| l.split(' ').take(5).collect::<Vec<_>>().join(" ").replace(r.get("T"), "$T")).collect()
    };
    let r = scenario(p, &script.replace("$MODE", ""));
    assert_eq!(r.get("appender"), "EACCES", "{}", r.stderr);
    assert_eq!(r.get("rewriter"), "cleared", "{}", r.stderr);
    assert_eq!(records(&r), ["REJECTING file_perm appender $T/data/app.log w"], "{}", r.stderr);
    let r = scenario(p, &script.replace("$MODE", "--permissive"));
    assert_eq!(r.get("appender"), "cleared", "{}", r.stderr);
    assert_eq!(records(&r), ["PERMITTING file_perm appender $T/data/app.log w"], "{}", r.stderr);
}

/// AppArmor's network rules decide every socket a launched process
/// makes (`socket`, `socketpair`, handed to the daemon by the launcher's
/// filter: crates/enforce/src/sockets.rs), as the kernel's
/// `apparmor_socket_create` decides it (crates/apparmor/src/net.rs):
/// `netter` makes an inet stream socket and a Unix one, not a datagram
/// or netlink socket; `other`, with no network rule, makes none, Unix
/// included. Each refusal is recorded as aa-logprof reads it. A socket
/// made before the launch (by the unconfined script that launches) is
/// bound and listens under `netter` and not under `other` (`bind`,
/// `listen`, as `apparmor_socket_bind` and `_listen` ask). Under a permissive daemon every socket
/// is made and bound, with complain-mode records: the test can fail.
#[test]
#[ignore = "needs root, checkpolicy, apparmor_parser and python3-apparmor: a live daemon in a private mount namespace"]
fn a_profiles_network_rules_hold() {
    let p = setup();
    let script = r#"
cat > "$S/sockets.py" <<'PY'
import errno, socket, sys
for name, family, kind in [("STREAM", socket.AF_INET, socket.SOCK_STREAM), ("DGRAM", socket.AF_INET, socket.SOCK_DGRAM),
                           ("UNIX", socket.AF_UNIX, socket.SOCK_STREAM), ("NETLINK", socket.AF_NETLINK, socket.SOCK_RAW)]:
    try:
        socket.socket(family, kind).close()
        print(sys.argv[1] + "_" + name + "=made")
    except OSError as e:
        print(sys.argv[1] + "_" + name + "=" + errno.errorcode[e.errno])
PY
cat > "$S/inherit.py" <<'PY'
import socket, subprocess, sys
s = socket.socket()
code = ("import errno, socket, sys\n"
        "s = socket.socket(fileno=int(sys.argv[1]))\n"
        "try:\n"
        "    s.bind(('127.0.0.1', 0)); print(sys.argv[2] + '_BIND=bound')\n"
        "except OSError as e:\n"
        "    print(sys.argv[2] + '_BIND=' + errno.errorcode[e.errno])\n"
        "try:\n"
        "    s.listen(); print(sys.argv[2] + '_LISTEN=listening')\n"
        "except OSError as e:\n"
        "    print(sys.argv[2] + '_LISTEN=' + errno.errorcode[e.errno])\n")
subprocess.run([sys.argv[1], "run", "--socket", sys.argv[2], "--apparmor", sys.argv[3], "--", "/usr/bin/python3", "-c",
                code, str(s.fileno()), sys.argv[3]], pass_fds=[s.fileno()])
PY
aa_daemon $MODE
for p in netter other; do aa $p '/usr/bin/python3 "$0" "$1"' "$S/sockets.py" $p; done
for p in netter other; do /usr/bin/python3 "$S/inherit.py" "$RAMPART" "$SOCK" $p; done
stop_daemon
"#;
    let r = scenario(p, &script.replace("$MODE", ""));
    for (key, want) in [
        ("netter_STREAM", "made"),
        ("netter_UNIX", "made"),
        ("netter_DGRAM", "EACCES"),
        ("netter_NETLINK", "EACCES"),
        ("other_STREAM", "EACCES"),
        ("other_DGRAM", "EACCES"),
        ("other_UNIX", "EACCES"),
        ("other_NETLINK", "EACCES"),
        ("netter_BIND", "bound"),
        ("other_BIND", "EACCES"),
        ("netter_LISTEN", "listening"),
        ("other_LISTEN", "EACCES"),
    ] {
        assert_eq!(r.get(key), want, "{key}\n{}", r.stderr);
    }
    let denials: Vec<String> = r.stdout.lines().filter_map(|l| l.strip_prefix("AAREC ")).map(net_record).collect();
    let mut want = vec!["REJECTING create netter".to_owned(); 2];
    want.extend(vec!["REJECTING create other".to_owned(); 4]);
    want.extend(["REJECTING bind other".to_owned(), "REJECTING listen other".to_owned()]);
    assert_eq!(denials, want, "{}", r.stderr);

    let r = scenario(p, &script.replace("$MODE", "--permissive"));
    for p in ["netter", "other"] {
        for s in ["STREAM", "DGRAM", "UNIX", "NETLINK"] {
            assert_eq!(r.get(&format!("{p}_{s}")), "made", "{p} {s}\n{}", r.stderr);
        }
        assert_eq!(r.get(&format!("{p}_BIND")), "bound", "{p}\n{}", r.stderr);
        assert_eq!(r.get(&format!("{p}_LISTEN")), "listening", "{p}\n{}", r.stderr);
    }
    let allowed: Vec<String> = r.stdout.lines().filter_map(|l| l.strip_prefix("AAREC ")).map(net_record).collect();
    let mut want = vec!["PERMITTING create netter".to_owned(); 2];
    want.extend(vec!["PERMITTING create other".to_owned(); 4]);
    want.extend(["PERMITTING bind other".to_owned(), "PERMITTING listen other".to_owned()]);
    assert_eq!(allowed, want, "{}", r.stderr);
}

/// A profile decides the devices its processes open
/// (crates/enforce/src/device_access.rs: the domain's cgroup holds a
/// device program both modules decide): under `devices`, a console's
/// screen is not read (VCS_READ) but written (VCS_WRITE), /dev/urandom
/// read and /dev/zero neither read nor written (ZERO, ZERO_WRITE: a
/// supervised open, which the daemon makes, asks the profile too),
/// /dev/null written; without the sandbox the same (the kernel, not the
/// daemon, opens them); `learner`, in
/// complain mode, opens them all, and so does `devices` under a
/// permissive daemon. Before the program, every device was opened.
#[test]
#[ignore = "needs root, checkpolicy, apparmor_parser and python3-apparmor: a live daemon in a private mount namespace"]
fn a_profiles_device_rules_hold() {
    assert!(Path::new("/dev/vcs1").exists(), "the test reads the first console's screen, /dev/vcs1");
    let p = setup();
    let script = r#"
DEV='import os, sys
def attempt(path, flags):
    try:
        os.close(os.open(path, flags))
        return "opened"
    except PermissionError:
        return "refused"
for name, path, flags in [("VCS_READ", "/dev/vcs1", os.O_RDONLY), ("VCS_WRITE", "/dev/vcs1", os.O_WRONLY),
                          ("URANDOM", "/dev/urandom", os.O_RDONLY), ("ZERO", "/dev/zero", os.O_RDONLY),
                          ("ZERO_WRITE", "/dev/zero", os.O_WRONLY), ("NULL", "/dev/null", os.O_WRONLY)]:
    print(sys.argv[1] + "_" + name + "=" + attempt(path, flags))'
aa_daemon $MODE
for p in devices learner; do "$RAMPART" run --socket "$SOCK" --apparmor $p -- /usr/bin/python3 -c "$DEV" $p; done
"$RAMPART" run --socket "$SOCK" --no-sandbox --apparmor devices -- /usr/bin/python3 -c "$DEV" unsandboxed
stop_daemon
"#;
    let r = scenario(p, &script.replace("$MODE", ""));
    let refused = ["VCS_READ", "ZERO", "ZERO_WRITE"];
    let keys = ["VCS_READ", "VCS_WRITE", "URANDOM", "ZERO", "ZERO_WRITE", "NULL"];
    for who in ["devices", "unsandboxed"] {
        for key in keys {
            let want = if refused.contains(&key) { "refused" } else { "opened" };
            assert_eq!(r.get(&format!("{who}_{key}")), want, "{who} {key}\n{}", r.stderr);
        }
    }
    for key in keys {
        assert_eq!(r.get(&format!("learner_{key}")), "opened", "learner {key}\n{}", r.stderr);
    }
    let r = scenario(p, &script.replace("$MODE", "--permissive"));
    for key in refused {
        assert_eq!(r.get(&format!("devices_{key}")), "opened", "permissive {key}\n{}", r.stderr);
    }
}

/// `mode operation profile` of a socket record as python3-apparmor reads
/// it (no name; the denied mask the operation's).
fn net_record(l: &str) -> String {
    let f: Vec<&str> = l.split(' ').collect();
    assert_eq!(f.len(), 6, "{l}");
    // The denied mask's letters, sorted: the operation's (`create`,
    // `bind`, `listen`).
    let mut mask: Vec<char> = f[1].chars().collect();
    mask.sort_unstable();
    assert_eq!((f[3], f[4]), ("None", mask.into_iter().collect::<String>().as_str()), "{l}");
    f[..3].join(" ")
}

/// AppArmor's ptrace rules keep the old profile out of the new one's
/// memory: a process under `sig_old` starts a program that moves to
/// `sig_new` by `px`, then reads its stack through `/proc/PID/mem`
/// (procfs cannot be marked, and a read-only open is not supervised).
/// `sig_old` has no ptrace rule (the kernel's AppArmor refuses that
/// open: `aa_may_ptrace`), so the daemon makes the new image
/// non-dumpable before its first instruction, `sig_old` frozen meanwhile
/// (crates/enforce/src/memory_guard.rs): refused, while the SELinux
/// domain is the same on both sides. And a look into another process
/// that ptrace's read mode guards (`get_robust_list`, `kcmp`,
/// `process_madvise`, handed to the daemon: crates/enforce/src/process_reads.rs)
/// asks the profile's ptrace rules as the kernel does: `sig_old` may not
/// read even its own child (no `ptrace read peer=sig_old`), refused with
/// a record. Under a permissive daemon the stack and the robust list are
/// read: the test can fail. A traced process changes profile only if
/// its tracer may trace the new one (AppArmor's
/// `may_change_ptraced_domain`): `strace` under `sig_old` (started
/// without the sandbox, which refuses ptrace) running sigux, whose `ux`
/// out of AppArmor `sig_old` may not trace (no ptrace rule), is refused
/// with a record (TRACED; UNTRACED runs; under a permissive daemon it
/// runs traced too). A tracer under a profile in unconfined mode is
/// unconfined to the tracee (the kernel's `unconfined()`): `free`'s
/// child, attached to `sig_attached` (no `readby` rule), has its robust
/// list read (ROBUST_FREE; refused when only a tracer named `unconfined`
/// counted).
#[test]
#[ignore = "needs root, checkpolicy, apparmor_parser and python3-apparmor: a live daemon in a private mount namespace"]
fn the_old_profile_cannot_read_or_trace_the_new_one() {
    let p = setup();
    let script = r#"
# get_robust_list (274) of the child: "read" or "refused:ERRNO".
robust() {
    aa sig_old '/bin/sleep 3 & c=$!
        /usr/bin/python3 -c "
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
head, size = ctypes.c_void_p(), ctypes.c_size_t()
r = libc.syscall(274, int(sys.argv[1]), ctypes.byref(head), ctypes.byref(size))
print(\"read\" if r == 0 else \"refused:%d\" % ctypes.get_errno())" $c; kill $c' 2>/dev/null
}
read_child() {
    aa sig_old '"$0" -c "sleep 3" & c=$!; sleep 1
        grep -q "@aa.7369675f6e6577" /proc/$c/cgroup || { echo "broken: not under sig_new"; exit; }
        addr=$(cut -d" " -f28 /proc/$c/stat)
        if dd if=/proc/$c/mem bs=8 count=1 skip=$((addr / 8)) status=none 2>/dev/null | od -An -tx8 | grep -q .
        then echo read; else echo refused; fi' "$T/bin/sigpx" 2>/dev/null
}
aa_daemon $MODE
echo "MEM=$(read_child)"
echo "ROBUST=$(robust)"
# An unconfined-mode profile is unconfined to a tracee: `free`'s child,
# attached to `sig_attached` (no readby rule), is read (as uid 65534:
# root's capabilities would not enter `sig_attached`).
cat > "$T/bin/robust-child" <<'SH'
"$1" -c "sleep 3" & c=$!; sleep 1
grep -q "@aa.7369675f6174746163686564" /proc/$c/cgroup || { echo "broken: not under sig_attached"; exit; }
/usr/bin/python3 -c "
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
head, size = ctypes.c_void_p(), ctypes.c_size_t()
r = libc.syscall(274, int(sys.argv[1]), ctypes.byref(head), ctypes.byref(size))
print('read' if r == 0 else 'refused:%d' % ctypes.get_errno())" $c; kill $c
SH
chmod 755 "$T" "$T/bin" "$T/bin/robust-child"
echo "ROBUST_FREE=$(aa free "setpriv --reuid=65534 --regid=65534 --clear-groups /bin/sh '$T/bin/robust-child' '$T/bin/sigattach'" 2>/dev/null)"
unsandboxed() { "$RAMPART" run --socket "$SOCK" --no-sandbox --apparmor sig_old -- /bin/dash -c "$1" 2>/dev/null; }
echo "TRACED=$(unsandboxed "strace -f -qq -o /dev/null '$T/bin/sigux' -c 'echo ran' || echo refused")"
echo "UNTRACED=$(unsandboxed "'$T/bin/sigux' -c 'echo ran' || echo refused")"
stop_daemon
"#;
    let r = scenario(p, &script.replace("$MODE", ""));
    assert_eq!(r.get("MEM"), "refused", "{}", r.stderr);
    assert_eq!(r.get("ROBUST"), "refused:1", "{}", r.stderr);
    let ptrace: Vec<String> = r.stdout.lines().filter_map(|l| l.strip_prefix("AAREC ")).map(signal_record).collect();
    assert!(ptrace.contains(&"REJECTING ptrace sig_old ader".to_owned()), "{ptrace:?}\n{}", r.stderr);
    assert_eq!(r.get("TRACED"), "refused", "{}", r.stderr);
    assert!(ptrace.contains(&"REJECTING ptrace sig_old acert".to_owned()), "{ptrace:?}\n{}", r.stderr);
    assert_eq!(r.get("UNTRACED"), "ran", "{}", r.stderr);
    assert_eq!(r.get("ROBUST_FREE"), "read", "an unconfined-mode tracer is unconfined:\n{}", r.stderr);
    let r = scenario(p, &script.replace("$MODE", "--permissive"));
    assert_eq!(r.get("MEM"), "read", "{}", r.stderr);
    assert_eq!(r.get("ROBUST"), "read", "{}", r.stderr);
    assert_eq!(r.get("TRACED"), "ran", "{}", r.stderr);
}

/// A record line as `mode op profile denied` (a signal's has no name).
fn signal_record(line: &str) -> String {
    let f: Vec<&str> = line.split(' ').collect();
    assert_eq!(f.len(), 6, "{line}");
    format!("{} {} {} {}", f[0], f[1], f[2], f[4])
}
