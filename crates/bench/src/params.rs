//! What a `bench seeds` run does: its size and the counts each size
//! gives the workloads (read by crate::run, which runs them, and
//! crate::report, which reports them).

use std::time::Duration;

use crate::workloads::chatroom;

/// How long to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// A few seconds, for tests: every workload and variant, tiny counts.
    Smoke,
    /// About two minutes: fewer calls and rounds than the seeds.
    Quick,
    /// The seeds' counts (500,000 writes per thread in rcutest).
    Full,
}

impl Size {
    pub fn name(self) -> &'static str {
        match self {
            Size::Smoke => "smoke",
            Size::Quick => "quick",
            Size::Full => "full",
        }
    }
}

/// Counts and repetitions of each workload.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// Distinct (source, target, class) keys of the hit workload.
    pub keys: usize,
    /// Length of the shuffled stream walked by each thread.
    pub stream_len: usize,
    /// Timed checks per thread per run.
    pub hit_checks: usize,
    pub hit_rounds: usize,
    /// Checked write(2) calls per thread per run (rcutest used 500,000),
    /// and as many unchecked ones in alternating blocks.
    pub rcutest_writes: usize,
    pub rcutest_rounds: usize,
    /// Reads and writes per run, each with the check and as many without
    /// (alternating blocks).
    pub rw_ops: usize,
    pub rw_rounds: usize,
    /// Pairs of chatting threads.
    pub chat_pairs: usize,
    /// Messages per pair per run (both directions), at most.
    pub chat_messages: usize,
    /// And at most this long per run.
    pub chat_limit: Duration,
    pub chat_rounds: usize,
}

impl Params {
    pub fn for_size(size: Size) -> Params {
        match size {
            Size::Smoke => Params {
                keys: 300,
                stream_len: 2048,
                hit_checks: 20_000,
                hit_rounds: 1,
                rcutest_writes: 2_000,
                rcutest_rounds: 1,
                rw_ops: 2_000,
                rw_rounds: 1,
                chat_pairs: 1,
                chat_messages: 4 * 2 * chatroom::BURST,
                chat_limit: Duration::from_secs(2),
                chat_rounds: 1,
            },
            Size::Quick => Params {
                keys: 4096,
                stream_len: 1 << 16,
                hit_checks: 3_000_000,
                hit_rounds: 9,
                rcutest_writes: 200_000,
                rcutest_rounds: 5,
                rw_ops: 300_000,
                rw_rounds: 11,
                chat_pairs: 2,
                chat_messages: 40_000,
                chat_limit: Duration::from_secs(2),
                chat_rounds: 9,
            },
            Size::Full => Params {
                keys: 4096,
                stream_len: 1 << 17,
                hit_checks: 10_000_000,
                hit_rounds: 15,
                rcutest_writes: 500_000,
                rcutest_rounds: 7,
                rw_ops: 1_000_000,
                rw_rounds: 15,
                chat_pairs: 2,
                chat_messages: 200_000,
                chat_limit: Duration::from_secs(10),
                chat_rounds: 9,
            },
        }
    }
}

/// Thread counts of the scaling workloads (the machine has two cores).
pub const THREADS: [usize; 2] = [1, 2];
