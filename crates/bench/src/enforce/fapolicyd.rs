//! Variant (c): fapolicyd (Debian 12 package, 1.1.7), allowing everything,
//! confined to the benchmark's tmpfs.
//!
//! How it is confined:
//! * It runs in the benchmark's private mount namespace, in the
//!   foreground (`--debug-deny`: foreground, and prints only denials, so
//!   no per-event output), with `PR_SET_PDEATHSIG`.
//! * It reads its configuration from `/etc/fapolicyd`, keeps its trust
//!   database in `/var/lib/fapolicyd` and its pid file and FIFO in `/run`:
//!   inside the namespace, private directories (on the benchmark's ramfs)
//!   are bind-mounted over all three, so nothing outside is read or
//!   written.
//! * It marks every mount listed in `/proc/mounts` whose type is in
//!   `watch_fs` (mount marks: `allow_filesystem_mark = 0`). With
//!   `watch_fs = tmpfs` and every other tmpfs detached inside the
//!   namespace (see [`super::namespace::Sandbox::detach_other_tmpfs`]),
//!   the benchmark's tmpfs is the only candidate; after start the marks
//!   of its fanotify group are read from `/proc/<pid>/fdinfo` and the
//!   variant is refused (fapolicyd stopped at once) unless every mark is
//!   on that tmpfs.
//!
//! Configuration: one rule, `allow perm=any all : all`; `permissive = 1`;
//! `uid = root`, `gid = root`; `trust = file` with one entry (the
//! benchmark's copy of `/bin/true`, so the trust database is not empty:
//! with an empty one fapolicyd 1.1.7 logs an `open_dbi` error on every
//! event); `nice_val = 0` (the package's 14 would let any other job on the
//! shared machine delay its answers, which is not what is measured);
//! everything else as packaged.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::namespace::{bind, Sandbox};
use super::process::{start_listener, OwnedPid};

pub const BINARY: &str = "/usr/sbin/fapolicyd";
const READY_LINE: &str = "Starting to listen for events";

/// The configuration written to the private `/etc/fapolicyd`.
pub const CONFIG: &str = "\
permissive = 1
nice_val = 0
q_size = 640
uid = root
gid = root
do_stat_report = 0
detailed_report = 0
db_max_size = 8
subj_cache_size = 1549
obj_cache_size = 8191
watch_fs = tmpfs
trust = file
integrity = none
syslog_format = rule,dec,perm,auid,pid,exe,:,path,ftype,trust
rpm_sha256_only = 0
allow_filesystem_mark = 0
";

pub const RULES: &str = "allow perm=any all : all\n";

/// Why fapolicyd cannot run here, if it cannot.
pub fn unavailable() -> Option<String> {
    if !Path::new(BINARY).is_file() {
        return Some(format!("{BINARY} not found (scripts/install-deps.sh installs the Debian package fapolicyd)"));
    }
    for d in ["/etc/fapolicyd", "/var/lib/fapolicyd", "/run"] {
        if !Path::new(d).is_dir() {
            return Some(format!("{d} does not exist"));
        }
    }
    None
}

/// The private state, bind-mounted over the real directories.
pub struct Setup {
    dir: PathBuf,
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn mkdir(path: &Path) -> Result<(), String> {
    std::fs::create_dir_all(path).map_err(|e| format!("cannot create {}: {e}", path.display()))
}

/// SHA-256 of a file, through coreutils' sha256sum.
fn sha256(path: &Path) -> Result<String, String> {
    let out = Command::new("sha256sum").arg(path).output().map_err(|e| format!("sha256sum: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    match text.split_whitespace().next() {
        Some(h) if out.status.success() && h.len() == 64 => Ok(h.to_string()),
        _ => Err(format!("sha256sum {} failed", path.display())),
    }
}

impl Setup {
    /// Writes the private configuration and bind-mounts it (and private
    /// state and run directories) over fapolicyd's, inside the
    /// namespace; `trusted` is the one trusted file.
    pub fn prepare(sandbox: &Sandbox, trusted: &Path) -> Result<Setup, String> {
        sandbox.check_namespace().map_err(|e| e.to_string())?;
        let dir = sandbox.state.join("fapolicyd");
        let (etc, lib, run) = (dir.join("etc"), dir.join("lib"), dir.join("run"));
        for d in [etc.join("rules.d"), etc.join("trust.d"), lib.clone(), run.join("fapolicyd")] {
            mkdir(&d)?;
        }
        write(&etc.join("fapolicyd.conf"), CONFIG)?;
        write(&etc.join("compiled.rules"), RULES)?;
        let size = std::fs::metadata(trusted).map_err(|e| format!("{}: {e}", trusted.display()))?.len();
        write(&etc.join("fapolicyd.trust"), &format!("{} {size} {}\n", trusted.display(), sha256(trusted)?))?;
        for (src, dst) in [(&etc, "/etc/fapolicyd"), (&lib, "/var/lib/fapolicyd"), (&run, "/run")] {
            bind(src, Path::new(dst)).map_err(|e| e.to_string())?;
        }
        Ok(Setup { dir })
    }

    /// Starts fapolicyd and waits (at most 15 s) until it listens; then
    /// checks that its only marks are on the benchmark's tmpfs.
    pub fn start(&self, sandbox: &Sandbox, round: usize) -> Result<(OwnedPid, Duration), String> {
        sandbox.check_namespace().map_err(|e| e.to_string())?;
        // A pid file left by a killed instance would stop the next one
        // (this /run is the private one bind-mounted by `prepare`).
        let _ = std::fs::remove_file("/run/fapolicyd.pid");
        let log = self.dir.join(format!("fapolicyd.{round}.log"));
        let mut cmd = Command::new(BINARY);
        cmd.arg("--debug-deny");
        start_listener("fapolicyd", cmd, &log, Duration::from_secs(15), sandbox, || {
            std::fs::read_to_string(&log).is_ok_and(|text| text.contains(READY_LINE))
        })
    }

    /// The log of a round, for the report.
    pub fn log(&self, round: usize) -> PathBuf {
        self.dir.join(format!("fapolicyd.{round}.log"))
    }
}
