//! The kernel behaviour revocation by group rotation rests on
//! (`crates/enforce/src/groups.rs`), checked on the running kernel with
//! the reproducer in `contrib/repro/mark-removal-race.c`: while group A
//! places and flushes ignore marks on a file, opens of that file may pass
//! A unasked (the race rampartd avoids), but a second group B with the
//! same mount mark, which removes no marks, is asked about every one of
//! them. Root, a C compiler and `unshare` are needed (the run is in a
//! private mount namespace on a tmpfs it mounts): the test is
//! `#[ignore]`d, and run without them it fails saying what is missing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

#[test]
#[ignore = "needs root and cc: fanotify in a private mount namespace"]
fn a_group_that_removes_no_marks_is_asked_about_every_open() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        panic!("needs root (fanotify permission events): run the ignored tests as root, as scripts/test.sh does");
    }
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contrib/repro/mark-removal-race.c");
    let dir = std::env::temp_dir().join(format!("rampart-mark-race.{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let binary = dir.join("mark-removal-race");
    let built = Command::new("cc").args(["-O2", "-pthread", "-o"]).arg(&binary).arg(&source).output();
    match built {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!("cc failed on {}: {}", source.display(), String::from_utf8_lossy(&out.stderr)),
        Err(e) => panic!("missing prerequisite: a C compiler (cc: {e}; gcc); install it with scripts/install-deps.sh"),
    }
    let mnt = dir.join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let script = format!(
        "mount -t tmpfs rampart-mark-race '{m}' && '{b}' '{m}' 100000; status=$?; umount '{m}'; exit $status",
        m = mnt.display(),
        b = binary.display()
    );
    let out = Command::new("timeout")
        .args(["120", "unshare", "-m", "--propagation", "private", "sh", "-c", &script])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let _ = std::fs::remove_dir_all(&dir);
    // "group A (marks removed): N of 100000 opens passed unasked; group B
    // (marks kept): M"; the exit status is 1 when M > 0.
    let b_missed: u64 = stdout
        .trim()
        .rsplit(": ")
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("unexpected output: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(b_missed, 0, "a group without mark removals was bypassed: {stdout}");
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    eprintln!("{}", stdout.trim());
}
