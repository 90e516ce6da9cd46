//! AVC hits: the cost of one check when the answer is cached, with 1 and
//! 2 threads checking at once.
//!
//! Why: a hit is what nearly every system call pays, and seeds 000 and 004
//! are about what happens to it when CPUs are added: with a shared lock or
//! counter the per-check cost grows with the thread count; without one it
//! stays flat. Each thread first checks every distinct key and one full
//! pass of the stream (warming its caches), then, after a barrier, times
//! `checks` checks walking the shuffled stream from its own offset.

use std::hint::black_box;

use super::{lined_up, Walked};
use crate::clock::Lap;
use crate::error::BenchError;
use crate::setup::Access;
use crate::variants::{Checker, ThreadCheck};

/// One run: per thread, the time of its checks divided by their number,
/// averaged over the threads.
#[derive(Clone, Copy, Debug)]
pub struct HitSample {
    /// Nanoseconds of thread CPU time per check (wall time without a CPU
    /// clock): what the figures report.
    pub ns: f64,
    /// Nanoseconds of wall time per check.
    pub wall_ns: f64,
    /// CPU time over wall time: near 1 when every thread had a CPU to
    /// itself for the whole run.
    pub on_cpu: f64,
}

/// Times `checks` checks per thread with `threads` threads. The answers
/// are summed into a `black_box`, so no check can be optimised away.
pub fn run<C: Checker>(
    checker: &C,
    keys: &[Access],
    stream: &[Access],
    threads: usize,
    checks: usize,
) -> Result<HitSample, BenchError> {
    if stream.is_empty() || threads == 0 {
        return Err(BenchError::Workload("the hit workload needs keys and threads".into()));
    }
    let laps = lined_up(
        threads,
        |index| {
            let mut t = checker.thread(index);
            let warmed: u64 =
                keys.iter().chain(stream).map(|a| u64::from(t.check(a.ssid, a.tsid, a.class, a.perms))).sum();
            black_box(warmed);
            t
        },
        |t, index| Walked { done: checks, passed: walk(t, stream, index * stream.len() / threads, checks) },
    )?;
    Ok(HitSample::of(&laps))
}

impl HitSample {
    /// The mean over threads of each one's time per check, from each
    /// thread's lap and number of checks.
    pub fn of(laps: &[(Lap, usize)]) -> HitSample {
        let n = laps.len().max(1) as f64;
        let per_check = |d: std::time::Duration, checks: usize| d.as_secs_f64() * 1e9 / checks.max(1) as f64;
        HitSample {
            ns: laps.iter().map(|(l, c)| per_check(l.best(), *c)).sum::<f64>() / n,
            wall_ns: laps.iter().map(|(l, c)| per_check(l.wall, *c)).sum::<f64>() / n,
            on_cpu: laps.iter().map(|(l, _)| l.on_cpu()).sum::<f64>() / n,
        }
    }
}

/// `checks` checks along `stream` from `offset`, wrapping around; returns
/// how many passed.
#[inline(never)]
fn walk<T: ThreadCheck>(t: &mut T, stream: &[Access], offset: usize, checks: usize) -> u64 {
    let mut allowed = 0u64;
    let mut left = checks;
    let mut pos = offset % stream.len();
    while left > 0 {
        let n = left.min(stream.len() - pos);
        for a in &stream[pos..pos + n] {
            allowed += u64::from(t.check(a.ssid, a.tsid, a.class, a.perms));
        }
        left -= n;
        pos = 0;
    }
    allowed
}
