//! KaiGai's rcutest (seed 000): each thread calls write(2) of one byte to
//! its own file on tmpfs, `writes` times, each write preceded by the
//! permission check of an open file; the result is the real (wall) time
//! of all threads together, as rcutest printed it, here measured in
//! blocks alternating with blocks of unchecked writes (see
//! [`run_paired`]).
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

/// Writes per block: the variant and the baseline alternate every block.
pub const BLOCK: usize = 10_000;

/// Seconds of real time for the variant's writes and for the baseline's
/// (`none`), measured in the same run.
#[derive(Clone, Copy, Debug)]
pub struct Paired {
    pub variant_s: f64,
    pub baseline_s: f64,
}

/// `threads` threads each doing `writes` checked writes through `checker`
/// and as many through `baseline`, in alternating blocks of [`BLOCK`].
///
/// Why alternate: on a shared machine another job can slow a whole run by
/// several percent, more than the overhead being measured. Here every
/// block starts with all threads released by one barrier, both sides of a
/// pair of blocks run back to back (the first of each pair swapping
/// sides), and a block's real time is that of its slowest thread; each
/// side's time is the sum of its blocks. So both sides see the same
/// interference, and with two threads each block still runs them at once
/// through the same variant (what contention needs).
pub fn run_paired<C: Checker, B: Checker>(
    checker: &C,
    baseline: &B,
    access: Access,
    dir: &Path,
    threads: usize,
    writes: usize,
) -> Result<Paired, BenchError> {
    let barrier = Barrier::new(threads);
    let pairs = writes.div_ceil(BLOCK).max(1);
    let block = writes.div_ceil(pairs).max(1);
    // Per thread: the duration of each block, in schedule order.
    let per_thread: Vec<Vec<(bool, f64)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|index| {
                let barrier = &barrier;
                scope.spawn(move || -> Result<Vec<(bool, f64)>, BenchError> {
                    let subject = Subject::new(access.ssid);
                    let object = Object::new(access.tsid);
                    // Set up; then take part in every barrier even after a
                    // failure (so no thread waits forever), and fail at the end.
                    let ready = TempFile::create(dir, index).and_then(|tmp| {
                        let mut open = checker.open(index, &subject, &object, access.class, access.perms)?;
                        let mut base = baseline.open(index, &subject, &object, access.class, access.perms)?;
                        // Warm: the checks' caches and the file's first page.
                        for _ in 0..1000 {
                            open.permission();
                            base.permission();
                        }
                        write_byte(&tmp)?;
                        Ok((tmp, open, base))
                    });
                    let (mut ready, mut failure) = match ready {
                        Ok(r) => (Some(r), None),
                        Err(e) => (None, Some(e)),
                    };
                    let mut times = Vec::with_capacity(2 * pairs);
                    for k in 0..2 * pairs {
                        // Pair k/2 runs (variant, none) or (none, variant).
                        let variant_side = (k % 2 == 0) == ((k / 2) % 2 == 0);
                        barrier.wait();
                        let start = Instant::now();
                        if let (Some((tmp, open, base)), None) = (ready.as_mut(), failure.as_ref()) {
                            let result = if variant_side {
                                write_block(open, tmp, block)
                            } else {
                                write_block(base, tmp, block)
                            };
                            failure = result.err();
                        }
                        times.push((variant_side, start.elapsed().as_secs_f64()));
                    }
                    ready.take();
                    match failure {
                        Some(e) => Err(e),
                        None => Ok(times),
                    }
                })
            })
            .collect();
        handles.into_iter().map(join).collect::<Result<Vec<_>, BenchError>>()
    })?;
    let (mut variant_s, mut baseline_s) = (0.0, 0.0);
    for k in 0..2 * pairs {
        let slowest = per_thread.iter().filter_map(|t| t.get(k)).map(|b| b.1).fold(0.0, f64::max);
        match per_thread.first().and_then(|t| t.get(k)) {
            Some((true, _)) => variant_s += slowest,
            Some((false, _)) => baseline_s += slowest,
            None => {}
        }
    }
    Ok(Paired { variant_s, baseline_s })
}

/// `n` checked writes; an error if any check denies.
fn write_block<O: OpenCheck>(open: &mut O, tmp: &TempFile, n: usize) -> Result<(), BenchError> {
    let mut denied = 0usize;
    for _ in 0..n {
        if open.permission() {
            write_byte(tmp)?;
        } else {
            denied += 1;
        }
    }
    if denied > 0 {
        return Err(BenchError::Workload(format!("{denied} rcutest writes were denied")));
    }
    Ok(())
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
