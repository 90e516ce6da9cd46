//! Help and bad command lines: help on stdout with status 0; every usage
//! or input error a one-line message on stderr with status 2, never a
//! panic.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

#[test]
fn help_everywhere() {
    for (args, needle) in [
        (&["--help"][..], "Usage: rampart [OPTIONS] [COMMAND]"),
        (&["-h"], "Usage: rampart [OPTIONS] [COMMAND]"),
        (&["help"], "Usage: rampart [OPTIONS] [COMMAND]"),
        (&["help", "check"], "Usage: rampart check"),
        (&["check", "--help"], "--batch"),
        (&["check", "s", "t", "c", "-h"], "Usage: rampart check"),
        (&["help", "explain"], "Usage: rampart explain"),
        (&["explain", "--help"], "Usage: rampart explain"),
        (&["help", "policy"], "Usage: rampart policy"),
        (&["help", "policy", "info"], "Usage: rampart policy info"),
        (&["policy", "info", "--help"], "Statistics for policy file"),
        (&["--policy", "/nonexistent", "help"], "Commands:"),
        (&["help", "daemon"], "--mark"),
    ] {
        let out = rampart(args, "");
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        assert!(out.stdout.contains(needle), "{args:?}:\n{}", out.stdout);
        assert!(out.stderr.is_empty());
    }
    let v = rampart(&["--version"], "");
    assert_eq!(v.code, 0);
    assert!(v.stdout.starts_with("rampart "));
}

#[test]
fn malformed_command_lines() {
    for (args, needle) in [
        (&[][..], "no command given"),
        (&["chek"], "unrecognized subcommand 'chek' (did you mean `check`?)"),
        (&["policy"], "`rampart policy` needs a subcommand"),
        (&["policy", "stats"], "unrecognized subcommand 'stats'"),
        (&["policy", "info", "extra"], "unexpected argument 'extra'"),
        (&["check"], "missing <SCONTEXT> <TCONTEXT> <CLASS>"),
        (&["check", "a", "b"], "missing <CLASS>"),
        (&["check", "--policy"], "a value is required for '--policy <PATH>'"),
        (&["check", "--bool"], "a value is required for '--bool <NAME=on|off>'"),
        (&["check", "--bool", "flag"], "`--bool` expects NAME=on|off, got `flag`"),
        (&["check", "--bool", "flag=maybe", "a", "b", "c"], "`maybe` is neither on nor off"),
        (&["check", "--bool", "=on"], "no boolean name"),
        (&["check", "--frobnicate"], "unexpected argument '--frobnicate'"),
        (&["check", "--batch=1"], "unexpected value '1' for '--batch'"),
        (&["policy", "info", "--bool", "a=on"], "unexpected argument '--bool'"),
        (&["help", "nope"], "unrecognized subcommand 'nope'"),
        (&["--version", "policy", "info"], "`--version` takes no command"),
        (&["daemon", "--bogus"], "unexpected argument '--bogus'"),
        (&["setenforce", "maybe"], "`maybe`: give 1 or 0 (Enforcing or Permissive)"),
        (&["setbool", "a"], "missing <on|off>"),
    ] {
        let out = rampart(args, "");
        assert_eq!(out.code, 2, "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
        assert!(out.stderr.starts_with("rampart: error: "), "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(needle), "{args:?}: {}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {}", out.stderr);
    }
}

#[test]
fn unreadable_or_invalid_policy() {
    let out = rampart(&["--policy", "/nonexistent/policy.33", "policy", "info"], "");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("cannot read policy `/nonexistent/policy.33`"), "{}", out.stderr);

    let junk = std::env::temp_dir().join(format!("rampart-junk-policy-{}", std::process::id()));
    std::fs::write(&junk, b"this is not a policy").unwrap();
    let out = rampart(&["check", "a", "b", "c", "--policy", junk.to_str().unwrap()], "");
    std::fs::remove_file(&junk).unwrap();
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("invalid policy"), "{}", out.stderr);
}

#[cfg(unix)]
#[test]
fn non_utf8_arguments() {
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"sys\xfftem_u");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_rampart"))
        .args(["check".as_ref(), bad, "b".as_ref(), "c".as_ref()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not valid UTF-8"));
}

#[test]
#[ignore = "needs the system policy"]
fn closed_stdout_is_not_a_crash() {
    let policy = system_policy();
    // `rampart ... | head -c0`: the reader goes away; rampart must not panic.
    let input = "system_u:system_r:sshd_t:s0 system_u:object_r:etc_t:s0 file\n".repeat(200_000);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rampart"))
        .args(["--policy", policy.to_str().unwrap(), "check", "--batch"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(input.as_bytes());
    });
    let o = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(o.status.code(), Some(0), "{stderr}");
}

/// The shipped binary carries no benchmark harness (issue 9): without
/// the `bench` feature, `rampart bench ...` says how to get it, exit 2.
#[cfg(not(feature = "bench"))]
#[test]
fn bench_is_not_in_the_default_build() {
    for args in [&["bench", "enforce", "--quick"][..], &["bench", "seeds"], &["--policy", "p", "bench"]] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rampart")).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--features bench"), "{args:?}");
    }
}
