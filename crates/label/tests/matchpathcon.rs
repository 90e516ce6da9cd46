//! A cross-check against the real `matchpathcon` binary (selinux-utils),
//! independent of the oracle program: same answers for a few paths,
//! with and without `-m TYPE`.
//!
//! The 3.4 tool looks each path up as written, with `selabel_lookup`
//! (older versions called the library's `matchpathcon()`, which ran
//! `realpath` first), with its lstat type or `-m TYPE`; so the expected
//! answer is our lookup of the same path. Several of the paths go
//! through symlinks (`/bin`, `/var/run`), where resolving would change
//! the key.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

use rampart_label::{FileContexts, FileType, SpecFiles};

mod common;

const MATCHPATHCON: &str = "/usr/sbin/matchpathcon";

#[test]
#[ignore = "needs the system policy and matchpathcon: compared with the tool"]
fn matches_the_matchpathcon_tool() {
    if !Path::new(MATCHPATHCON).exists() {
        common::missing(&format!("{MATCHPATHCON} (selinux-utils)"));
    }
    let policy = common::system_policy();
    let fc = FileContexts::load(&SpecFiles::system(), &policy).unwrap();
    let paths = [
        "/usr/bin/ls",
        "/bin/ls",
        "/etc/shadow",
        "/etc/passwd",
        "/var/log/messages",
        "/home/alice/.ssh/authorized_keys",
        "/root/.bashrc",
        "/run/foo",
        "/var/run/utmp",
        "/nonexistent/x",
        "/dev/null",
        "/usr/lib/systemd/system/ssh.service",
        "/tmp",
        "/",
    ];
    let mut checked = 0;
    for ty in [None, Some(FileType::Regular), Some(FileType::Directory), Some(FileType::Symlink)] {
        let mut cmd = Command::new(MATCHPATHCON);
        if let Some(t) = ty {
            cmd.args(["-m", t.name()]);
        }
        let out = cmd.args(paths).output().unwrap();
        assert!(out.status.success(), "matchpathcon failed: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), paths.len(), "{text}");
        for (p, line) in paths.iter().zip(lines) {
            let (shown, ctx) = line.split_once('\t').unwrap();
            assert_eq!(shown, *p);
            let ours = match ty {
                Some(t) => fc.lookup(p.as_bytes(), Some(t)),
                None => fc.lookup_mode(p.as_bytes(), std::fs::symlink_metadata(p).map_or(0, |m| m.mode())),
            }
            .as_str();
            assert_eq!(ours, ctx, "{p} ({ty:?})");
            checked += 1;
        }
    }
    println!("matchpathcon: {checked} answers identical");
}
