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

use std::thread::ScopedJoinHandle;

use crate::error::BenchError;

/// Joins a scoped worker, turning a panic into an error.
pub(crate) fn join<T>(handle: ScopedJoinHandle<'_, Result<T, BenchError>>) -> Result<T, BenchError> {
    handle.join().map_err(|_| BenchError::Workload("a benchmark thread panicked".into()))?
}
