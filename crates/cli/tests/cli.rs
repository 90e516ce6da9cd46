//! The command line as a whole (issue 18): every command has its help
//! text, answers a valid command line and refuses a bad one with status
//! 2; `rampart help` lists every command; the generated completions load
//! in bash and the man page renders.
//!
//! Successes that need root and a running daemon (`daemon`, `run`,
//! `status`, `setenforce`, `reload`, `setbool`) are in
//! tests/enforce.rs (`every_control_command_answers`), those that need
//! apparmor_parser in tests/apparmor.rs, the benchmarks' in
//! tests/bench.rs (`--features bench`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;

use common::*;

/// Every command `rampart help` lists, with a word its help must show.
const COMMANDS: [(&str, &str); 14] = [
    ("policy", "info"),
    ("check", "--batch"),
    ("explain", "PERM"),
    ("label", "--file-contexts"),
    ("getlabel", "PATH"),
    ("relabel", "-R"),
    ("daemon", "--mark"),
    ("run", "--context"),
    ("status", "--json"),
    ("setenforce", "1|0"),
    ("reload", "--socket"),
    ("setbool", "on|off"),
    ("demo", "private mount namespace"),
    ("apparmor", "attach"),
];

#[test]
fn help_lists_every_command() {
    let out = rampart(&["help"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    for (command, _) in COMMANDS {
        assert!(
            out.stdout.lines().any(|l| l.trim_start().starts_with(&format!("{command} "))),
            "{command}:\n{}",
            out.stdout
        );
    }
    assert_eq!(out.stdout.contains("  bench "), cfg!(feature = "bench"), "{}", out.stdout);
    assert!(!out.stdout.contains("completions") && !out.stdout.contains("manpage"), "hidden:\n{}", out.stdout);
    assert_eq!(rampart(&["--help"], "").stdout, out.stdout);
}

#[test]
fn every_command_has_its_help() {
    for (command, needle) in COMMANDS {
        let by_help = rampart(&["help", command], "");
        let by_flag = rampart(&[command, "--help"], "");
        for out in [&by_help, &by_flag] {
            assert_eq!(out.code, 0, "{command}: {}", out.stderr);
            assert!(out.stdout.contains(&format!("Usage: rampart {command}")), "{command}:\n{}", out.stdout);
            assert!(out.stdout.contains(needle), "{command}:\n{}", out.stdout);
            assert!(out.stderr.is_empty(), "{command}: {}", out.stderr);
        }
        assert_eq!(by_help.stdout, by_flag.stdout, "{command}");
    }
    for sub in ["check", "attach", "info", "status", "complain", "enforce"] {
        let out = rampart(&["help", "apparmor", sub], "");
        assert!(out.stdout.contains(&format!("Usage: rampart apparmor {sub}")), "{sub}:\n{}", out.stdout);
    }
}

#[test]
fn every_command_refuses_a_bad_command_line() {
    for args in [
        &["policy", "stats"][..],
        &["check", "a", "b"],
        &["explain", "a", "b", "c"],
        &["label", "--batch", "/x"],
        &["getlabel"],
        &["relabel", "-Rq", "/x"],
        &["daemon", "--threads", "many"],
        &["run", "--", "ls"],
        &["status", "extra"],
        &["setenforce", "maybe"],
        &["reload", "now"],
        &["setbool", "a_bool"],
        &["demo", "extra"],
        &["apparmor", "check", "a.bin"],
        &["apparmor", "status", "extra"],
        &["apparmor", "complain"],
        &["apparmor", "enforce", "--profiles"],
        &["completions", "tcsh"],
        &["manpage", "extra"],
    ] {
        let out = rampart(args, "");
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
        assert!(out.stderr.starts_with("rampart: error: "), "{args:?}: {}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains("--help`"), "{args:?}: {}", out.stderr);
    }
}

/// The test policy, a file_contexts for it, and a directory to label.
fn label_setup() -> (PathBuf, PathBuf, PathBuf) {
    let policy = test_policy("deny");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-label-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("tree")).unwrap();
    let fc = dir.join("file_contexts");
    std::fs::write(&fc, "/.*\tsystem_u:object_r:file_t\n").unwrap();
    (policy, fc, dir.join("tree"))
}

#[test]
#[ignore = "needs checkpolicy: compiles the test policy"]
fn every_command_answers_a_valid_command_line() {
    let (p, fc, tree) = label_setup();
    let (p, fc, tree) = (p.to_str().unwrap(), fc.to_str().unwrap(), tree.to_str().unwrap());
    let (s, t) = ("system_u:system_r:kernel_t", "user_u:object_r:other_t");
    for (args, code, needle) in [
        (&["--policy", p, "policy", "info"][..], 0, "Statistics for policy file"),
        (&["check", s, t, "file", "read", "--policy", p], 0, "allowed: { create getattr read }"),
        (&["--policy", p, "check", s, t, "file", "write"], 1, "denied: { write }"),
        (&["--policy", p, "explain", s, t, "file", "read"], 0, "granted"),
        (&["--policy", p, "label", "--file-contexts", fc, "/etc"], 0, "/etc\tsystem_u:object_r:file_t\n"),
        (&["getlabel", tree], 0, tree),
        (&["--policy", p, "relabel", "-nRv", "--file-contexts", fc, tree], 0, ""),
        (&["completions", "bash"], 0, "complete -F"),
        (&["manpage"], 0, ".TH rampart 1"),
        (&["manpage", "--dir", tree], 0, ""),
        (&["--version"], 0, "rampart "),
    ] {
        let out = rampart(args, "");
        assert_eq!(out.code, code, "{args:?}: {}", out.stderr);
        assert!(out.stdout.contains(needle), "{args:?}:\n{}", out.stdout);
    }
    // `manpage --dir` wrote a page per command (not for hidden ones).
    for page in ["rampart.1", "rampart-check.1", "rampart-apparmor-attach.1", "rampart-setenforce.1"] {
        let text = std::fs::read_to_string(std::path::Path::new(tree).join(page)).unwrap();
        assert!(text.starts_with(".ie"), "{page}");
    }
    assert!(!std::path::Path::new(tree).join("rampart-completions.1").exists());
}

#[test]
fn bash_loads_the_generated_completion() {
    let out = rampart(&["completions", "bash"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let file = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("rampart.bash.{}", std::process::id()));
    std::fs::write(&file, &out.stdout).unwrap();
    let o = std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-c", ". \"$1\" && complete -p rampart", "bash"])
        .arg(&file)
        .output()
        .expect("bash");
    let _ = std::fs::remove_file(&file);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("rampart"), "{}", String::from_utf8_lossy(&o.stdout));
    // The other shells' scripts name the commands too.
    for shell in ["zsh", "fish"] {
        let out = rampart(&["completions", shell], "");
        assert_eq!(out.code, 0, "{shell}: {}", out.stderr);
        assert!(out.stdout.contains("setenforce") && out.stdout.contains("relabel"), "{shell}");
    }
}
