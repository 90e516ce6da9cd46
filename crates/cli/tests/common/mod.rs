//! Shared helpers for the `rampart` command tests: running the binary,
//! running setools for independent answers, and compiling the tiny test
//! policy with checkpolicy. Tests that need root, the system policy or
//! a tool are `#[ignore]`d; run (`--include-ignored`) where one is
//! absent, they fail saying what is missing and how to install it.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `rampart` with `args` and `stdin`; fails the test on a panic or a
/// death by signal.
pub fn rampart(args: &[&str], stdin: &str) -> Out {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rampart"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rampart");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_owned();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(data.as_bytes());
    });
    let o = child.wait_with_output().expect("wait rampart");
    writer.join().expect("stdin writer");
    let out = Out {
        code: o.status.code().unwrap_or_else(|| panic!("rampart {args:?} killed by a signal")),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    };
    assert!(!out.stderr.contains("panicked"), "rampart {args:?} panicked:\n{}", out.stderr);
    out
}

/// `rampart --policy POLICY args...`.
pub fn with_policy(policy: &Path, args: &[&str]) -> Out {
    let p = policy.to_str().expect("utf-8 path");
    let mut all = vec!["--policy", p];
    all.extend_from_slice(args);
    rampart(&all, "")
}

/// Fails the test: `what` is not installed here.
pub fn missing(what: &str) -> ! {
    panic!("missing prerequisite: {what}; install it with scripts/install-deps.sh")
}

/// Fails the test unless it runs as root; `why` says what needs root.
pub fn require_root(why: &str) {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        panic!("needs root ({why}): run the ignored tests as root, as scripts/test.sh does");
    }
}

/// The system policy; fails the test if it is not installed.
pub fn system_policy() -> PathBuf {
    match rampart_policy::default_policy_path() {
        Ok(p) if p.exists() => p,
        Ok(p) => missing(&format!("the system policy at {} (selinux-policy-default)", p.display())),
        Err(e) => missing(&format!("the system policy ({e})")),
    }
}

/// The stdout of a tool; fails the test if it is missing or fails.
pub fn tool(name: &str, args: &[&str]) -> String {
    match Command::new(name).args(args).output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        Ok(o) => panic!("`{name} {}` failed: {}", args.join(" "), String::from_utf8_lossy(&o.stderr)),
        Err(e) => missing(&format!("`{name}` ({e})")),
    }
}

/// `sesearch POLICY ARGS...` split into lines.
pub fn sesearch(policy: &Path, args: &[&str]) -> Vec<String> {
    let mut all = vec![policy.to_str().expect("utf-8 path")];
    all.extend_from_slice(args);
    tool("sesearch", &all).lines().map(str::to_owned).filter(|l| !l.is_empty()).collect()
}

/// The permissions of sesearch rule lines (`... { a b };` or `... a;`),
/// united.
pub fn rule_perms(lines: &[String]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for l in lines {
        let rule = l.split(';').next().unwrap_or("");
        let after_class = rule.split_once(':').map_or("", |(_, r)| r);
        let perms = after_class.split_once(' ').map_or("", |(_, p)| p);
        out.extend(perms.split_whitespace().filter(|w| *w != "{" && *w != "}").map(str::to_owned));
    }
    out
}

/// The names of a `check` output line, e.g. `allowed: { a b }`.
pub fn line_set(stdout: &str, label: &str) -> Option<BTreeSet<String>> {
    let line = stdout.lines().find(|l| l.starts_with(&format!("{label}: ")))?;
    let inner = line.split_once('{')?.1.rsplit_once('}')?.0;
    Some(inner.split_whitespace().map(str::to_owned).collect())
}

pub fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

/// `tests/data/explain.conf` compiled with `checkpolicy -U handle_unknown`,
/// once per test binary; fails the test without checkpolicy.
pub fn test_policy(handle_unknown: &str) -> PathBuf {
    static ALLOW: OnceLock<PathBuf> = OnceLock::new();
    static DENY: OnceLock<PathBuf> = OnceLock::new();
    static REJECT: OnceLock<PathBuf> = OnceLock::new();
    let cell = match handle_unknown {
        "allow" => &ALLOW,
        "deny" => &DENY,
        _ => &REJECT,
    };
    cell.get_or_init(|| compile(handle_unknown)).clone()
}

fn compile(handle_unknown: &str) -> PathBuf {
    let conf = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/explain.conf");
    // Under target/, not /tmp: nothing removes it at exit.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = dir.join(format!("explain-{handle_unknown}.33"));
    let status = Command::new("checkpolicy")
        .args(["-c", "33", "-U", handle_unknown, "-o"])
        .arg(&out)
        .arg(&conf)
        .stdout(Stdio::null())
        .status();
    match status {
        Ok(s) if s.success() => out,
        Ok(s) => panic!("checkpolicy failed on {}: {s}", conf.display()),
        Err(e) => missing(&format!("checkpolicy ({e})")),
    }
}

/// What a shell scenario printed: its results are `KEY=value` lines on
/// stdout (the enforcement tests, tests/enforce.rs and adversarial.rs).
pub struct Run {
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The value of the first `KEY=value` line.
    pub fn get(&self, key: &str) -> &str {
        let prefix = format!("{key}=");
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no {key}= in the output:\n{}\nstderr:\n{}", self.stdout, self.stderr))
    }

    pub fn num(&self, key: &str) -> u64 {
        self.get(key).trim().parse().unwrap_or_else(|_| panic!("{key} is not a number: {}", self.get(key)))
    }
}

/// Runs `script` after tests/enforce/prelude.sh (which it sources), in a
/// private mount namespace, at most `limit_s` seconds, with `RAMPART` and
/// `env` set; fails the test if the script fails.
pub fn enforce_scenario(script: &str, env: &[(&str, &Path)], limit_s: u32) -> Run {
    let prelude = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/enforce/prelude.sh");
    let full = format!(". {}\n{script}", prelude.display());
    let limit = limit_s.to_string();
    let mut cmd = Command::new("timeout");
    cmd.args([limit.as_str(), "unshare", "-m", "--propagation", "private", "bash", "-c", &full])
        .env("RAMPART", env!("CARGO_BIN_EXE_rampart"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run the scenario");
    let run = Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(out.status.success(), "scenario failed ({}):\n{}\nstderr:\n{}", out.status, run.stdout, run.stderr);
    run
}
