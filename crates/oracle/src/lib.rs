//! Test support: an independent reference oracle for Rampart's access
//! decisions.
//!
//! Rampart reimplements SELinux access decisions in Rust.  To test it we need
//! answers that do not come from Rampart itself: this crate builds
//! `sepol-oracle` (see `oracle.c`), a small C program that loads a binary
//! policy with **libsepol** and answers queries with libsepol's own service
//! functions (`sepol_context_to_sid`, `sepol_compute_av`,
//! `sepol_transition_sid`, `evaluate_conds`, ...).
//!
//! The program is linked **statically** against `libsepol.a`: those service
//! functions are hidden in `libsepol.so`, and static linking also lets the
//! oracle flip booleans in its in-process `policydb` and re-evaluate the
//! conditional rules, the way checkpolicy's `dispol` does.
//!
//! The query generator (`gen`) also lives in the C program and walks
//! libsepol's structures (avtab, roles, users, MLS levels), so the test inputs
//! are independent of the Rust implementation as well.
//!
//! The protocol is line based; see the comment at the top of `oracle.c` or
//! the crate's README for the exact commands.  [`Oracle`] wraps it.
//!
//! The crate also builds `selabel-oracle` (see `selabel_oracle.c`), which
//! answers file_contexts lookups with libselinux's own
//! `selabel_lookup_raw`, the reference for rampart-label and the
//! `rampart label` command; [`selabel`] wraps it.  Both programs are test
//! support: this crate is only ever a dev-dependency, so building Rampart
//! itself needs neither a C compiler nor libsepol/libselinux.

#![forbid(unsafe_code)]

pub mod selabel;

pub use selabel::selabel_oracle_path;

use std::ffi::OsStr;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The policy shipped by Debian's `selinux-policy-default`.
pub const DEFAULT_POLICY: &str = "/etc/selinux/default/policy/policy.33";

/// Path of the `sepol-oracle` executable built by this crate's build script.
pub fn oracle_path() -> &'static Path {
    Path::new(env!("SEPOL_ORACLE"))
}

/// Run `sepol-oracle` once with the given arguments (e.g.
/// `["--time-load", policy, "10"]`) and return its standard output.
pub fn run_tool<S: AsRef<OsStr>>(args: &[S]) -> io::Result<String> {
    let out = Command::new(oracle_path()).args(args).stdin(Stdio::null()).output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "sepol-oracle failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    String::from_utf8(out.stdout).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// libsepol's access decision for one query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Decision {
    /// `avd.allowed` from `sepol_compute_av`.
    pub allowed: u32,
    /// `avd.auditallow`.
    pub auditallow: u32,
    /// `avd.auditdeny` (dontaudit rules clear bits).
    pub auditdeny: u32,
    /// Whether the source type is in the policy's `permissive_map`.
    pub permissive: bool,
}

/// One response to a `q`/`qv` query.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Answer {
    /// The query was valid.
    Decision(Decision),
    /// libsepol rejected the query; the text after `error: `.
    Error(String),
}

impl Answer {
    /// Parse one response line (`0xA 0xB 0xC P` or `error: ...`).
    pub fn parse(line: &str) -> Option<Answer> {
        if let Some(msg) = line.strip_prefix("error:") {
            return Some(Answer::Error(msg.trim().to_string()));
        }
        let mut it = line.split_ascii_whitespace();
        let hex = |s: Option<&str>| -> Option<u32> {
            let s = s?.strip_prefix("0x")?;
            u32::from_str_radix(s, 16).ok()
        };
        let allowed = hex(it.next())?;
        let auditallow = hex(it.next())?;
        let auditdeny = hex(it.next())?;
        let permissive = match it.next()? {
            "0" => false,
            "1" => true,
            _ => return None,
        };
        if it.next().is_some() {
            return None;
        }
        Some(Answer::Decision(Decision { allowed, auditallow, auditdeny, permissive }))
    }

    /// True for `error:` answers.
    pub fn is_error(&self) -> bool {
        matches!(self, Answer::Error(_))
    }
}

fn invalid_input(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

fn check_one_line(s: &str) -> io::Result<()> {
    if s.contains(['\n', '\r']) {
        return Err(invalid_input(format!("oracle input must be a single line: {s:?}")));
    }
    Ok(())
}

fn check_word(s: &str) -> io::Result<()> {
    if s.is_empty() || s.contains(char::is_whitespace) {
        return Err(invalid_input(format!("oracle argument must be a non-empty word: {s:?}")));
    }
    Ok(())
}

/// A running `sepol-oracle` process with one policy loaded.
///
/// Every method sends commands and waits for their answers; nothing is left
/// in flight between calls.
pub struct Oracle {
    child: Child,
    stdin: Option<BufWriter<ChildStdin>>,
    stdout: Option<BufReader<ChildStdout>>,
}

impl Oracle {
    /// Start the oracle on a binary policy file.
    pub fn spawn(policy: impl AsRef<Path>) -> io::Result<Oracle> {
        let policy = policy.as_ref();
        if !policy.exists() {
            let hint = if policy == Path::new(DEFAULT_POLICY) {
                "; install selinux-policy-default with scripts/install-deps.sh"
            } else {
                ""
            };
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no policy file at {}{hint}", policy.display()),
            ));
        }
        let mut child = Command::new(oracle_path())
            .arg(policy)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdin = child.stdin.take().ok_or_else(|| io::Error::other("no stdin pipe"))?;
        let stdout = child.stdout.take().ok_or_else(|| io::Error::other("no stdout pipe"))?;
        let mut oracle = Oracle {
            child,
            stdin: Some(BufWriter::with_capacity(1 << 16, stdin)),
            stdout: Some(BufReader::with_capacity(1 << 16, stdout)),
        };
        // Round trip so that a policy that fails to load is reported here.
        match oracle.exchange(&["ping"], 1) {
            Ok(r) if r.first().map(String::as_str) == Some("pong") => Ok(oracle),
            Ok(r) => Err(io::Error::other(format!("sepol-oracle: unexpected handshake {r:?}"))),
            Err(e) => {
                let status = oracle.child.wait().ok();
                Err(io::Error::other(format!(
                    "sepol-oracle could not load {} ({e}; exit {status:?}); see stderr",
                    policy.display()
                )))
            }
        }
    }

    /// Start the oracle on [`DEFAULT_POLICY`].
    pub fn spawn_default() -> io::Result<Oracle> {
        Oracle::spawn(DEFAULT_POLICY)
    }

    /// Send `commands` (each must produce exactly one response line), then
    /// `sync`, and read `lines_expected` response lines.  Writing happens on
    /// a separate thread so large batches cannot deadlock on full pipes.
    fn exchange<S: AsRef<str> + Sync>(&mut self, commands: &[S], lines_expected: usize) -> io::Result<Vec<String>> {
        self.exchange_prefixed("", commands, lines_expected, false)
    }

    fn exchange_prefixed<S: AsRef<str> + Sync>(
        &mut self,
        prefix: &str,
        commands: &[S],
        lines_expected: usize,
        stop_after_leading_error: bool,
    ) -> io::Result<Vec<String>> {
        for c in commands {
            check_one_line(c.as_ref())?;
        }
        let stdin = self.stdin.as_mut().ok_or_else(|| io::Error::other("oracle stdin closed"))?;
        let stdout = self.stdout.as_mut().ok_or_else(|| io::Error::other("oracle stdout closed"))?;
        std::thread::scope(|scope| {
            let writer = scope.spawn(move || -> io::Result<()> {
                for c in commands {
                    stdin.write_all(prefix.as_bytes())?;
                    stdin.write_all(c.as_ref().as_bytes())?;
                    stdin.write_all(b"\n")?;
                }
                stdin.write_all(b"sync\n")?;
                stdin.flush()
            });
            let mut out = Vec::with_capacity(lines_expected);
            let mut read_result = Ok(());
            let mut buf = String::new();
            while out.len() < lines_expected {
                buf.clear();
                match stdout.read_line(&mut buf) {
                    Ok(0) => {
                        read_result = Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            format!("sepol-oracle exited after {} of {} response lines", out.len(), lines_expected),
                        ));
                        break;
                    }
                    Ok(_) => {
                        let line = buf.trim_end_matches(['\n', '\r']);
                        out.push(line.to_string());
                        if stop_after_leading_error && out.len() == 1 && line.starts_with("error: ") {
                            break;
                        }
                    }
                    Err(e) => {
                        read_result = Err(e);
                        break;
                    }
                }
            }
            let write_result = writer.join().unwrap_or_else(|_| Err(io::Error::other("oracle writer thread panicked")));
            read_result?;
            write_result?;
            Ok(out)
        })
    }

    /// Send raw protocol commands that each answer with one line (`q`, `qv`,
    /// `create`, `member`, `change`, `bool`, `commit`, `bools-*`, `perms`,
    /// ...), in order, and return the response lines.
    pub fn command_batch(&mut self, commands: &[String]) -> io::Result<Vec<String>> {
        self.exchange(commands, commands.len())
    }

    /// Answer a batch of query lines `SCONTEXT TCONTEXT CLASSNAME` (the
    /// format produced by [`Oracle::generate`]); each is sent as `q LINE`.
    /// Returns exactly one raw response line per query (see
    /// [`Answer::parse`]).
    pub fn query_batch(&mut self, lines: &[String]) -> io::Result<Vec<String>> {
        self.exchange_prefixed("q ", lines, lines.len(), false)
    }

    /// Like [`Oracle::query_batch`] but parses the answers.
    pub fn answers(&mut self, lines: &[String]) -> io::Result<Vec<Answer>> {
        self.query_batch(lines)?
            .into_iter()
            .map(|l| {
                Answer::parse(&l)
                    .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, format!("bad oracle answer {l:?}")))
            })
            .collect()
    }

    /// One access query.
    pub fn query(&mut self, scontext: &str, tcontext: &str, class: &str) -> io::Result<Answer> {
        for w in [scontext, tcontext, class] {
            check_word(w)?;
        }
        let mut a = self.answers(&[format!("{scontext} {tcontext} {class}")])?;
        a.pop().ok_or_else(|| io::Error::other("missing oracle answer"))
    }

    fn single(&mut self, command: String) -> io::Result<String> {
        let mut r = self.exchange(&[command], 1)?;
        r.pop().ok_or_else(|| io::Error::other("missing oracle answer"))
    }

    fn expect_ok(&mut self, commands: &[String]) -> io::Result<()> {
        for line in self.exchange(commands, commands.len())? {
            if line != "ok" {
                return Err(io::Error::other(format!("sepol-oracle: {line}")));
            }
        }
        Ok(())
    }

    /// Set one boolean and re-evaluate the conditional rules
    /// (`bool NAME V` + `commit`).
    pub fn set_bool(&mut self, name: &str, value: bool) -> io::Result<()> {
        check_word(name)?;
        self.expect_ok(&[format!("bool {name} {}", u8::from(value)), "commit".to_string()])
    }

    /// Set several booleans, then re-evaluate once.
    pub fn set_bools(&mut self, values: &[(&str, bool)]) -> io::Result<()> {
        let mut cmds = Vec::with_capacity(values.len() + 1);
        for (name, v) in values {
            check_word(name)?;
            cmds.push(format!("bool {name} {}", u8::from(*v)));
        }
        cmds.push("commit".to_string());
        self.expect_ok(&cmds)
    }

    /// Set every boolean to `value`.
    pub fn bools_all(&mut self, value: bool) -> io::Result<()> {
        self.expect_ok(&[format!("bools-all {}", u8::from(value))])
    }

    /// Restore every boolean to its default from the policy file.
    pub fn bools_default(&mut self) -> io::Result<()> {
        self.expect_ok(&["bools-default".to_string()])
    }

    /// Set every boolean pseudo-randomly: xorshift64* seeded with `seed`
    /// (0 is replaced by 0x9E3779B97F4A7C15); the boolean with value `i`
    /// (1-based, policy order) gets bit 63 of the `i`-th output.
    pub fn bools_random(&mut self, seed: u64) -> io::Result<()> {
        self.expect_ok(&[format!("bools-random {seed}")])
    }

    /// Current boolean states, in policy value order.
    pub fn bools(&mut self) -> io::Result<Vec<(String, bool)>> {
        let line = self.single("bools".to_string())?;
        if let Some(e) = line.strip_prefix("error:") {
            return Err(io::Error::other(e.trim().to_string()));
        }
        line.split_ascii_whitespace()
            .map(|kv| {
                let (k, v) = kv
                    .rsplit_once('=')
                    .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, format!("bad bools entry {kv:?}")))?;
                Ok((k.to_string(), v == "1"))
            })
            .collect()
    }

    /// Permissions of a class as `(name, access-vector bit mask)`, in
    /// libsepol's value order (common permissions included).
    pub fn perms(&mut self, class: &str) -> io::Result<Vec<(String, u32)>> {
        check_word(class)?;
        let line = self.single(format!("perms {class}"))?;
        if let Some(e) = line.strip_prefix("error:") {
            return Err(io::Error::other(e.trim().to_string()));
        }
        line.split_ascii_whitespace()
            .map(|kv| {
                let bad = || io::Error::new(io::ErrorKind::InvalidData, format!("bad perm {kv:?}"));
                let (k, v) = kv.rsplit_once('=').ok_or_else(bad)?;
                let v: u32 = v.parse().map_err(|_| bad())?;
                if !(1..=32).contains(&v) {
                    return Err(bad());
                }
                Ok((k.to_string(), 1u32 << (v - 1)))
            })
            .collect()
    }

    fn compute_sid(&mut self, verb: &str, s: &str, t: &str, class: &str) -> io::Result<Result<String, String>> {
        self.context_answer(verb, [s, t, class])
    }

    /// The context command `verb` with `args` answers, or libsepol's error.
    fn context_answer(&mut self, verb: &str, args: [&str; 3]) -> io::Result<Result<String, String>> {
        for w in args {
            check_word(w)?;
        }
        let line = self.single(format!("{verb} {}", args.join(" ")))?;
        Ok(match line.strip_prefix("error:") {
            Some(e) => Err(e.trim().to_string()),
            None => Ok(line),
        })
    }

    /// `sepol_transition_sid`: the new context, or libsepol's error.
    pub fn create(&mut self, s: &str, t: &str, class: &str) -> io::Result<Result<String, String>> {
        self.compute_sid("create", s, t, class)
    }

    /// `sepol_member_sid`: the new context, or libsepol's error.
    pub fn member(&mut self, s: &str, t: &str, class: &str) -> io::Result<Result<String, String>> {
        self.compute_sid("member", s, t, class)
    }

    /// `sepol_change_sid`: the new context, or libsepol's error.
    pub fn change(&mut self, s: &str, t: &str, class: &str) -> io::Result<Result<String, String>> {
        self.compute_sid("change", s, t, class)
    }

    /// `sepol_genfs_sid`: the label of an object of `class` at `path` on a
    /// filesystem of type `fstype` labeled by `genfscon` rules, or
    /// libsepol's error (no entry).
    pub fn genfs(&mut self, fstype: &str, path: &str, class: &str) -> io::Result<Result<String, String>> {
        self.context_answer("genfs", [fstype, path, class])
    }

    /// Generate `count` query lines `SCONTEXT TCONTEXT CLASSNAME` from
    /// libsepol's view of the policy (deterministic for a given policy and
    /// seed).  About 3% are deliberately invalid and answer `error:`.
    pub fn generate(&mut self, seed: u64, count: usize) -> io::Result<Vec<String>> {
        if count == 0 {
            return Ok(Vec::new());
        }
        // A failing `gen` answers with a single `error:` line instead of
        // `count` lines (a query line never starts with "error: ").
        let lines = self.exchange_prefixed("", &[format!("gen {seed} {count}")], count, true)?;
        if let Some(first) = lines.first() {
            if let Some(e) = first.strip_prefix("error: ") {
                return Err(io::Error::other(format!("sepol-oracle gen: {e}")));
            }
        }
        Ok(lines)
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        // Closing stdin ends the command loop; closing stdout makes any
        // pending output fail instead of blocking.
        drop(self.stdin.take());
        drop(self.stdout.take());
        if self.child.wait().is_err() {
            let _ = self.child.kill();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_answers() {
        assert_eq!(
            Answer::parse("0x06044453 0x00000000 0xffffffff 0"),
            Some(Answer::Decision(Decision {
                allowed: 0x0604_4453,
                auditallow: 0,
                auditdeny: 0xffff_ffff,
                permissive: false
            }))
        );
        assert_eq!(Answer::parse("error: unknown class x"), Some(Answer::Error("unknown class x".into())));
        assert_eq!(Answer::parse("0x1 0x2"), None);
        assert_eq!(Answer::parse("0x1 0x2 0x3 2"), None);
    }

    #[test]
    fn oracle_binary_exists() {
        assert!(oracle_path().exists(), "{}", oracle_path().display());
    }
}
