//! The mixed-domain workloads (issue 8): what a confined domain alive on
//! the machine costs everyone's opens, and what its own opens cost.
//!
//! The content file is labeled `httpd_sys_content_t` (Debian's policy:
//! `httpd_t` may read it, not write it). With rampartd:
//! * [`Workload::MixedUnconfined`]: the benchmark (unconfined) opens the
//!   content while an `httpd_t` process (`rampart run --force --context
//!   httpd_t -- sleep`) is alive;
//! * [`Workload::MixedConfined`]: a client in `httpd_t` (`rampart run`
//!   of this binary's `bench enforce --open-loop`) opens it;
//! * [`Workload::MixedAfter`]: the benchmark opens it again one second
//!   after the `httpd_t` process exited (the domain leaves the scope).
//!
//! Without a listener the same opens are timed the same way (the client
//! started without `rampart run`), as the baseline. Confinement needs a
//! cgroup v2 hierarchy: the benchmark mounts one in its namespace
//! (`state/cgroup`) and gives rampartd a tree of its own
//! ([`cgroup_tree`]), removed at the end.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::model::{Listener, Workload};
use super::process::{spawn, OwnedPid};
use super::workloads::{self, Sample};

pub const HTTPD: &str = "system_u:system_r:httpd_t:s0";
pub const CONTENT_LABEL: &str = "system_u:object_r:httpd_sys_content_t:s0";

/// rampartd's cgroup tree for this run (under the hierarchy's root).
pub fn cgroup_tree() -> String {
    format!("rampart-bench.{}", std::process::id())
}

/// Writes the content file and labels it.
pub fn create_content(path: &Path) -> Result<(), String> {
    std::fs::write(path, vec![b'x'; 4096]).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("{} holds a NUL byte", path.display()))?;
    let value = format!("{CONTENT_LABEL}\0");
    // SAFETY: both pointers are NUL-terminated strings alive across the
    // call; the size is the value's length.
    let rc = unsafe { libc::setxattr(c.as_ptr(), c"security.selinux".as_ptr(), value.as_ptr().cast(), value.len(), 0) };
    if rc != 0 {
        return Err(format!("cannot label {}: {}", path.display(), std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Where the three workloads run.
pub struct Setup<'a> {
    pub rampart: &'a Path,
    pub content: &'a Path,
    /// rampartd's control socket (rampartd rounds).
    pub socket: PathBuf,
    /// Where the helpers' output goes.
    pub log_dir: &'a Path,
    pub measure: Duration,
}

/// The three workloads for `listener` (none or rampartd).
pub fn measure(listener: Listener, s: &Setup<'_>) -> Result<Vec<(Workload, Sample)>, String> {
    let confined = listener == Listener::Rampartd;
    let mut sleeper = if confined { Some(start_confined_sleeper(s)?) } else { None };
    let alive = workloads::open_loop(s.content, 1, s.measure)?;
    let own = confined_client(confined, s)?;
    if let Some(mut p) = sleeper.take() {
        p.terminate(Duration::from_secs(2));
    }
    std::thread::sleep(Duration::from_secs(1));
    let after = workloads::open_loop(s.content, 1, s.measure)?;
    Ok(vec![(Workload::MixedUnconfined, alive), (Workload::MixedConfined, own), (Workload::MixedAfter, after)])
}

/// `sleep` in `httpd_t`, once the daemon has it in its domain.
fn start_confined_sleeper(s: &Setup<'_>) -> Result<OwnedPid, String> {
    let mut cmd = Command::new(s.rampart);
    cmd.arg("run").arg("--socket").arg(&s.socket).args(["--force", "--context", HTTPD, "--", "sleep", "120"]);
    let p = spawn(cmd, &s.log_dir.join("sleeper.log"))?;
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        let cgroup = std::fs::read_to_string(format!("/proc/{}/cgroup", p.pid())).unwrap_or_default();
        if cgroup.contains("httpd_t") {
            return Ok(p);
        }
        if let Some(how) = p.exited() {
            return Err(format!("the httpd_t sleeper {how}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Err("the httpd_t sleeper did not enter httpd_t within 5 s".into())
}

/// One client opening the content: in `httpd_t` through `rampart run`
/// when `confined`, else a plain child, as the baseline.
fn confined_client(confined: bool, s: &Setup<'_>) -> Result<Sample, String> {
    let mut cmd = Command::new(s.rampart);
    if confined {
        cmd.arg("run").arg("--socket").arg(&s.socket).args(["--force", "--context", HTTPD, "--"]).arg(s.rampart);
    }
    let ms = s.measure.as_millis().to_string();
    cmd.args(["bench", "enforce", "--measure-ms", &ms, "--open-loop"]).arg(s.content);
    let out = cmd.output().map_err(|e| format!("cannot run the open-loop client: {e}"))?;
    if !out.status.success() {
        return Err(format!("the open-loop client failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr)));
    }
    parse_sample(&String::from_utf8_lossy(&out.stdout))
}

/// The open-loop client's output: `OPS WALL_NS SLEEPS`.
pub fn parse_sample(text: &str) -> Result<Sample, String> {
    let mut words = text.split_whitespace().map(str::parse::<u64>);
    match (words.next(), words.next(), words.next(), words.next()) {
        (Some(Ok(ops)), Some(Ok(wall_ns)), Some(Ok(sleeps)), None) => {
            Ok(Sample { ops, threads: 1, wall_ns, sleeps: Some(sleeps) })
        }
        _ => Err(format!("the open-loop client said {text:?}, not `OPS WALL_NS SLEEPS`")),
    }
}

/// The open-loop client itself: opens `path` for `duration`, prints
/// `OPS WALL_NS SLEEPS`.
pub fn open_loop_client(path: &Path, duration: Duration) -> Result<String, String> {
    let s = workloads::open_loop(path, 1, duration)?;
    Ok(format!("{} {} {}\n", s.ops, s.wall_ns, s.sleeps.unwrap_or(0)))
}

/// Removes rampartd's cgroup tree (empty directories only).
pub fn remove_cgroup_tree(hierarchy: &Path) {
    let root = hierarchy.join(cgroup_tree());
    if let Ok(entries) = std::fs::read_dir(&root) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                let _ = std::fs::remove_dir(e.path());
            }
        }
    }
    let _ = std::fs::remove_dir(&root);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_output_is_three_numbers() {
        let s = parse_sample("1200 3000000 7\n").unwrap();
        assert_eq!((s.ops, s.threads, s.wall_ns, s.sleeps), (1200, 1, 3_000_000, Some(7)));
        assert!(parse_sample("oops").is_err());
        assert!(parse_sample("12 3000000").is_err());
        assert!(parse_sample("12 3000000 1 4").is_err());
    }
}
