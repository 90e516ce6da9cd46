//! `rampart check --batch`: one answer line per query line, errors in
//! place, hex bits as libsepol numbers them, cache and no-cache agree,
//! answers arrive without closing stdin.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;

const K: &str = "system_u:system_r:kernel_t";

fn batch(policy: &std::path::Path, extra: &[&str], input: &str) -> Out {
    let p = policy.to_str().unwrap();
    let mut args = vec!["--policy", p, "check", "--batch", "--format", "hex"];
    args.extend_from_slice(extra);
    rampart(&args, input)
}

/// The test policy's source fixes the bits: file read=0x1 write=0x2
/// create=0x4 getattr=0x8; process transition=0x1 signal=0x2.
#[test]
#[ignore = "needs checkpolicy: compiles the test policy"]
fn bits_follow_permission_values() {
    let p = test_policy("deny");
    let input = format!(
        "{K} system_u:object_r:other_t file\n\
         {K} user_u:object_r:other_t file\n\
         {K} system_u:object_r:other_t process\n\
         system_u:system_r:child_t system_u:object_r:file_t file\n"
    );
    for extra in [&[][..], &["--no-cache"]] {
        let out = batch(&p, extra, &input);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(
            out.stdout,
            "0x0000000f 0x00000000 0xfffffffd\n\
             0x0000000d 0x00000000 0xfffffffd\n\
             0x00000000 0x00000000 0xffffffff\n\
             0x00000001 0x00000000 0xffffffff\n",
            "dontaudit write clears bit 0x2 of auditdeny; the constraint on write removes it for user_u; \
             transition to role object_r needs a role allow rule; typebounds removes getattr from child_t"
        );
    }
    let on = batch(&p, &["--bool", "flag=on"], &format!("{K} system_u:object_r:other_t process\n"));
    assert_eq!(on.stdout, "0x00000002 0x00000000 0xffffffff\n");
}

#[test]
#[ignore = "needs the system policy"]
fn invalid_lines_answer_errors_and_carry_on() {
    let policy = system_policy();
    let good = "system_u:system_r:sshd_t:s0 system_u:object_r:sshd_exec_t:s0 file";
    let input = format!(
        "{good}\n\
         only two\n\
         system_u:system_r:sshd_t:s0 system_u:object_r:nosuch_t:s0 file\n\
         system_u:system_r:sshd_t:s0 system_u:object_r:sshd_exec_t:s0 nosuchclass\n\
         \n\
         {good} extra\n\
         \t{good}  \r\n\
         {good}"
    );
    for extra in [&[][..], &["--no-cache"]] {
        let out = batch(&policy, extra, &input);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let lines: Vec<&str> = out.stdout.lines().collect();
        assert_eq!(lines.len(), 8, "{}", out.stdout);
        assert_eq!(lines[1], "error: expected 3 fields `SCONTEXT TCONTEXT CLASS`, got 2");
        assert_eq!(
            lines[2],
            "error: invalid target context `system_u:object_r:nosuch_t:s0`: type `nosuch_t` is not defined"
        );
        assert_eq!(lines[3], "error: class `nosuchclass` is not defined in the policy");
        assert_eq!(lines[4], "error: expected 3 fields `SCONTEXT TCONTEXT CLASS`, got 0");
        assert_eq!(lines[5], "error: expected 3 fields `SCONTEXT TCONTEXT CLASS`, got 4");
        for i in [0, 6, 7] {
            assert_eq!(lines[i], lines[0]);
        }
        let words: Vec<&str> = lines[0].split(' ').collect();
        assert_eq!(words.len(), 3);
        for w in words {
            assert!(
                w.len() == 10
                    && w.starts_with("0x")
                    && w[2..].bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
                "{w}"
            );
        }
        assert_ne!(lines[0], "0x00000000 0x00000000 0xffffffff");
    }
}

/// Cache and no cache give identical answers on repeated, varied queries.
#[test]
#[ignore = "needs the system policy"]
fn cache_agrees_with_no_cache() {
    let policy = system_policy();
    let sources = [
        "system_u:system_r:sshd_t:s0",
        "system_u:system_r:httpd_t:s0",
        "staff_u:staff_r:staff_t:s0",
        "system_u:system_r:init_t:s0",
    ];
    let targets = [
        "system_u:object_r:etc_t:s0",
        "system_u:object_r:shadow_t:s0",
        "staff_u:object_r:user_home_t:s0",
        "system_u:system_r:sshd_t:s0",
    ];
    let classes = ["file", "dir", "process", "lnk_file"];
    let mut input = String::new();
    for round in 0..3 {
        for (i, s) in sources.iter().enumerate() {
            for (j, t) in targets.iter().enumerate() {
                input.push_str(&format!("{s} {t} {}\n", classes[(i + j + round) % 4]));
            }
        }
    }
    let a = batch(&policy, &[], &input);
    let b = batch(&policy, &["--no-cache"], &input);
    assert_eq!(a.code, 0);
    assert_eq!(a.stdout, b.stdout);
    assert_eq!(a.stdout.lines().count(), 48);
    assert!(!a.stdout.contains("error"), "{}", a.stdout);
}

/// A caller that writes one query and waits gets its answer while stdin
/// stays open.
#[test]
#[ignore = "needs checkpolicy: compiles the test policy"]
fn answers_without_waiting_for_eof() {
    let p = test_policy("deny");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rampart"))
        .args(["--policy", p.to_str().unwrap(), "check", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let watchdog = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(20));
        // Unblocks the read below if no answer came (the test then fails).
        let _ = Command::new("kill").arg(pid.to_string()).status();
    });
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    for (query, answer) in [
        (format!("{K} system_u:object_r:other_t file\n"), "0x0000000f 0x00000000 0xfffffffd\n"),
        ("bad\n".to_owned(), "error: expected 3 fields `SCONTEXT TCONTEXT CLASS`, got 1\n"),
    ] {
        stdin.write_all(query.as_bytes()).unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert_eq!(line, answer);
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    drop(watchdog);
}

#[test]
fn batch_usage_errors() {
    for args in [
        &["check", "--batch", "--format", "json"][..],
        &["check", "--batch", "s", "t", "c"],
        &["check", "--format", "hex", "s", "t", "c"],
        &["check", "--no-cache", "s", "t", "c"],
    ] {
        let out = rampart(args, "");
        assert_eq!(out.code, 2, "{args:?}");
        assert!(out.stderr.starts_with("rampart: error: "), "{}", out.stderr);
    }
}
