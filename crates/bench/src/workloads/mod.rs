//! The four experiments of the seeds, each generic over the variant so
//! the check is compiled into the same loop for every design:
//!
//! * [`hits`]: AVC hits per thread (the cache alone; seeds 000 and 004);
//! * [`rcutest`]: KaiGai's rcutest, write(2) to tmpfs with a check each
//!   (seed 000);
//! * [`rw`]: lmbench's simple read/write, 1 byte from /dev/zero and to
//!   /dev/null with a check each (seed 002);
//! * [`chatroom`]: pairs of threads exchanging messages over loopback TCP
//!   with a send and a receive check per message (seed 004).
//!
//! Each run spawns fresh threads (scoped), warms whatever it checks
//! through, lines the threads up on a barrier and times only the loop.

pub mod chatroom;
pub mod hits;
pub mod rcutest;
pub mod rw;

use std::hint::black_box;
use std::sync::Barrier;
use std::thread::ScopedJoinHandle;

use crate::clock::{Lap, Stopwatch};
use crate::error::BenchError;

/// What one thread's timed walk did.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Walked {
    /// Checks made.
    pub done: usize,
    /// How many passed: goes to a `black_box`, so no check can be
    /// optimised away.
    pub passed: u64,
}

/// Runs `threads` scoped threads lined up on a barrier: each prepares its
/// state with `warm(index)` (not timed), and once all are ready runs
/// `timed(&mut state, index)` under a stopwatch; returns each thread's
/// lap and how many checks it made.
pub(crate) fn lined_up<S, W, T>(threads: usize, warm: W, timed: T) -> Result<Vec<(Lap, usize)>, BenchError>
where
    W: Fn(usize) -> S + Sync,
    T: Fn(&mut S, usize) -> Walked + Sync,
{
    let barrier = Barrier::new(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|index| {
                let (barrier, warm, timed) = (&barrier, &warm, &timed);
                scope.spawn(move || -> Result<(Lap, usize), BenchError> {
                    let mut state = warm(index);
                    barrier.wait();
                    let watch = Stopwatch::start();
                    let walked = timed(&mut state, index);
                    let lap = watch.lap();
                    black_box(walked.passed);
                    Ok((lap, walked.done))
                })
            })
            .collect();
        handles.into_iter().map(join).collect()
    })
}

/// Joins a scoped worker, turning a panic into an error.
pub(crate) fn join<T>(handle: ScopedJoinHandle<'_, Result<T, BenchError>>) -> Result<T, BenchError> {
    handle.join().map_err(|_| BenchError::Workload("a benchmark thread panicked".into()))?
}
