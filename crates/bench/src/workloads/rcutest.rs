//! KaiGai's rcutest (seed 000): each thread calls write(2) of one byte to
//! its own file on tmpfs, `writes` times, each write preceded by the
//! permission check of an open file; the result is the real (wall) time
//! of all threads together, as rcutest printed it.
//!
//! Why tmpfs: the write itself is as cheap as a file write gets (no disk,
//! no journal), so the check's share is as large as it can be. The files
//! live in an existing tmpfs (`/dev/shm` if it is one): nothing is
//! mounted, and each file is removed when its run ends.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::Instant;

use rampart_avc::{Object, Subject};

use super::join;
use crate::error::BenchError;
use crate::setup::Access;
use crate::variants::{Checker, OpenCheck};

/// A directory on a tmpfs that is already mounted (`/dev/shm` first), and
/// whether it is tmpfs; the system temporary directory otherwise.
pub fn tmpfs_dir() -> (PathBuf, bool) {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let tmpfs: Vec<&str> = mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, at, fs) = (f.next()?, f.next()?, f.next()?);
            (fs == "tmpfs").then_some(at)
        })
        .collect();
    let temp = std::env::temp_dir();
    for candidate in [Path::new("/dev/shm"), temp.as_path()] {
        let is_tmpfs = candidate.to_str().is_some_and(|c| tmpfs.contains(&c));
        if is_tmpfs && writable(candidate) {
            return (candidate.to_path_buf(), true);
        }
    }
    (temp, false)
}

fn writable(dir: &Path) -> bool {
    let probe = dir.join(format!("rampart-bench-probe-{}", std::process::id()));
    let ok = File::create(&probe).is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

/// Removes its file when the run ends, however it ends.
struct TempFile {
    path: PathBuf,
    file: File,
}

impl TempFile {
    fn create(dir: &Path, index: usize) -> Result<TempFile, BenchError> {
        static RUN: AtomicU64 = AtomicU64::new(0);
        // Relaxed: only uniqueness of the number matters.
        let run = RUN.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("rampart-bench-{}-{run}-{index}", std::process::id()));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(BenchError::io(format!("cannot create {}", path.display())))?;
        Ok(TempFile { path, file })
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Seconds of real time for `threads` threads doing `writes` checked
/// writes each.
pub fn run<C: Checker>(
    checker: &C,
    access: Access,
    dir: &Path,
    threads: usize,
    writes: usize,
) -> Result<f64, BenchError> {
    let barrier = Barrier::new(threads);
    let spans: Vec<(Instant, Instant)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|index| {
                let barrier = &barrier;
                scope.spawn(move || -> Result<(Instant, Instant), BenchError> {
                    let subject = Subject::new(access.ssid);
                    let object = Object::new(access.tsid);
                    // Set up, then meet the others at the barrier even on
                    // failure (so no thread waits forever), then fail.
                    let ready = TempFile::create(dir, index).and_then(|tmp| {
                        let mut open = checker.open(index, &subject, &object, access.class, access.perms)?;
                        // Warm: the check's caches and the file's first page.
                        for _ in 0..1000 {
                            open.permission();
                        }
                        write_byte(&tmp)?;
                        Ok((tmp, open))
                    });
                    barrier.wait();
                    let (tmp, mut open) = ready?;
                    let start = Instant::now();
                    let mut denied = 0usize;
                    for _ in 0..writes {
                        if open.permission() {
                            write_byte(&tmp)?;
                        } else {
                            denied += 1;
                        }
                    }
                    let end = Instant::now();
                    if denied > 0 {
                        return Err(BenchError::Workload(format!("{denied} rcutest writes were denied")));
                    }
                    Ok((start, end))
                })
            })
            .collect();
        handles.into_iter().map(join).collect::<Result<Vec<_>, BenchError>>()
    })?;
    Ok(wall(&spans))
}

/// One write(2) of one byte (`File` is unbuffered).
#[inline]
fn write_byte(tmp: &TempFile) -> Result<(), BenchError> {
    match (&tmp.file).write(b"x") {
        Ok(1) => Ok(()),
        Ok(n) => Err(BenchError::Workload(format!("write to {} wrote {n} bytes", tmp.path.display()))),
        Err(e) => Err(BenchError::Io { what: format!("write to {}", tmp.path.display()), source: e }),
    }
}

/// From the first start to the last end.
pub(crate) fn wall(spans: &[(Instant, Instant)]) -> f64 {
    let start = spans.iter().map(|s| s.0).min();
    let end = spans.iter().map(|s| s.1).max();
    match (start, end) {
        (Some(s), Some(e)) => e.saturating_duration_since(s).as_secs_f64(),
        _ => 0.0,
    }
}
