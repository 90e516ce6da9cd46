//! Test support shared by the integration tests and the benchmark
//! example: the libselinux oracle (`selabel-oracle`, built by the
//! rampart-oracle dev-dependency; see `rampart_oracle::selabel`) and a
//! deterministic `find -xdev`-like walk; and the failures of tests run
//! (`--include-ignored`) without what they need.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

pub use rampart_oracle::selabel::LabelQuery;

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
pub fn system_policy() -> rampart_policy::Policy {
    let path = rampart_policy::default_policy_path().unwrap_or_else(|e| missing(&format!("the system policy ({e})")));
    rampart_policy::Policy::from_file(&path).unwrap()
}

/// Path of the oracle executable.
pub fn oracle_path() -> &'static Path {
    rampart_oracle::selabel_oracle_path()
}

/// Runs one oracle process over `queries`; `args` are extra options
/// (`--path FILE`). Returns one answer line per query.
pub fn oracle_once(args: &[&str], queries: &[LabelQuery]) -> Vec<String> {
    rampart_oracle::selabel::lookup_batch(args, queries).unwrap_or_else(|e| panic!("selabel-oracle {args:?}: {e}"))
}

/// [`oracle_once`] split over `jobs` processes in parallel.
pub fn oracle(args: &[&str], queries: &[LabelQuery], jobs: usize) -> Vec<String> {
    rampart_oracle::selabel::lookup_parallel(args, queries, jobs)
        .unwrap_or_else(|e| panic!("selabel-oracle {args:?}: {e}"))
}

/// Every path under `root` (itself included) on the same filesystem,
/// without following symlinks, in sorted order, with its lstat mode.
pub fn walk(root: &Path, out: &mut Vec<(PathBuf, u32)>) {
    let Ok(md) = std::fs::symlink_metadata(root) else { return };
    let dev = md.dev();
    out.push((root.to_path_buf(), md.mode()));
    if md.is_dir() {
        walk_dir(root, dev, out);
    }
}

fn walk_dir(dir: &Path, dev: u64, out: &mut Vec<(PathBuf, u32)>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut names: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    names.sort();
    for p in names {
        let Ok(md) = std::fs::symlink_metadata(&p) else { continue };
        out.push((p.clone(), md.mode()));
        if md.is_dir() && md.dev() == dev {
            walk_dir(&p, dev, out);
        }
    }
}

/// The machine walk of the directories the tests cover.
pub fn machine_paths() -> Vec<(PathBuf, u32)> {
    let mut out = Vec::new();
    for r in ["/usr", "/etc", "/var", "/opt", "/dev", "/run", "/home", "/root", "/srv"] {
        walk(Path::new(r), &mut out);
    }
    out
}

/// Every `step`-th element (deterministic sample).
pub fn every<T: Clone>(v: &[T], step: usize) -> Vec<T> {
    v.iter().step_by(step.max(1)).cloned().collect()
}

/// Path bytes.
pub fn bytes(p: &Path) -> Vec<u8> {
    p.as_os_str().as_bytes().to_vec()
}

/// Whether the full (slow) sets were requested.
pub fn full() -> bool {
    std::env::var_os("RAMPART_FULL").is_some_and(|v| v == "1")
}
