//! Variant (d): rampartd, the `rampart daemon` command.
//!
//! Contract: `rampart daemon --mark DIR --policy POLICY --socket SOCK
//! --audit-log LOG` runs in the foreground, marks DIR's mount, and is
//! ready when SOCK exists; SIGTERM stops it. Here DIR is the benchmark's
//! tmpfs and the socket and log are on the benchmark's ramfs, all inside
//! the private namespace; after start its fanotify marks are read from
//! fdinfo and it is stopped at once unless every one is on the tmpfs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::namespace::Sandbox;
use super::process::{start_listener, OwnedPid};

/// Where the `rampart` binary is by default: the running program if that
/// is `rampart` (`rampart bench enforce`), else the workspace's release
/// build.
pub fn default_binary() -> PathBuf {
    if let Ok(exe) = std::env::current_exe() {
        if exe.file_name().is_some_and(|n| n == "rampart") {
            return exe;
        }
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/release/rampart")
}

/// Why rampartd cannot run, if that is known before trying.
pub fn unavailable(binary: &Path, policy: &Path) -> Option<String> {
    if !binary.is_file() {
        return Some(format!(
            "rampartd not available: {} not found (build it with `cargo build --release -p rampart --features bench`)",
            binary.display()
        ));
    }
    if !policy.is_file() {
        return Some(format!("rampartd not available: no policy at {}", policy.display()));
    }
    None
}

/// The control socket of round `round`'s rampartd.
pub fn socket_path(sandbox: &Sandbox, round: usize) -> PathBuf {
    sandbox.state.join("rampartd").join(format!("rampartd.{round}.sock"))
}

/// Starts rampartd on the sandbox's tmpfs and waits (at most 10 s) for
/// its socket; checks its marks.
pub fn start(binary: &Path, policy: &Path, sandbox: &Sandbox, round: usize) -> Result<(OwnedPid, Duration), String> {
    sandbox.check_namespace().map_err(|e| e.to_string())?;
    let dir = sandbox.state.join("rampartd");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let socket = socket_path(sandbox, round);
    let audit = dir.join(format!("audit.{round}.log"));
    let log = dir.join(format!("rampartd.{round}.log"));
    let _ = std::fs::remove_file(&socket);
    let mut cmd = Command::new(binary);
    cmd.arg("daemon")
        .arg("--mark")
        .arg(&sandbox.fs)
        .arg("--policy")
        .arg(policy)
        .arg("--socket")
        .arg(&socket)
        .arg("--audit-log")
        .arg(&audit)
        // A tree of its own, where the benchmark mounted a cgroup v2
        // hierarchy (the mixed-domain workloads); otherwise unused.
        .arg("--cgroup")
        .arg(super::mixed::cgroup_tree());
    // Extra daemon flags, to measure alternatives (`--threads 1`, `--spin-us 0`).
    if let Some(extra) = std::env::var_os("RAMPART_BENCH_DAEMON_ARGS") {
        cmd.args(extra.to_string_lossy().split_whitespace());
    }
    start_listener("rampartd", cmd, &log, Duration::from_secs(10), sandbox, || socket.exists())
}
