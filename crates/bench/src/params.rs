//! What a `bench seeds` run does: its size and the counts each size
//! gives the workloads (read by crate::run, which runs them, and
//! crate::report, which reports them).

use std::path::PathBuf;
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

/// The workloads of a run (`--workloads`), in report order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Workload {
    /// AVC hits, with the working-set sweep (seeds 000, 004).
    Hits,
    /// KaiGai's rcutest (seed 000).
    Rcutest,
    /// lmbench simple read/write (seed 002).
    Rw,
    /// The chat room (seed 004).
    Chat,
    /// Opens under one shared AppArmor profile (seed 003).
    Apparmor,
}

impl Workload {
    pub const ALL: [Workload; 5] =
        [Workload::Hits, Workload::Rcutest, Workload::Rw, Workload::Chat, Workload::Apparmor];

    pub fn name(self) -> &'static str {
        match self {
            Workload::Hits => "hits",
            Workload::Rcutest => "rcutest",
            Workload::Rw => "rw",
            Workload::Chat => "chat",
            Workload::Apparmor => "apparmor",
        }
    }

    pub fn from_name(name: &str) -> Option<Workload> {
        Workload::ALL.into_iter().find(|w| w.name() == name)
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
    /// Distinct paths of the AppArmor workload.
    pub apparmor_paths: usize,
    /// Opens per thread per run at most, each decided by the engine...
    pub apparmor_opens: usize,
    /// ...and each answered from the cached decisions...
    pub apparmor_cached_opens: usize,
    /// ...and no more once a run has lasted this long.
    pub apparmor_run_limit: Duration,
    pub apparmor_rounds: usize,
    /// The compiled AppArmor policy to read (`--apparmor-policy`); `None`:
    /// compile the shipped profile with apparmor_parser.
    pub apparmor_policy: Option<PathBuf>,
    /// Thread counts of the scaling workloads (AVC hits, rcutest,
    /// AppArmor), ascending, 1 first (`--threads`).
    pub threads: Vec<usize>,
    /// The workloads to run (`--workloads`; default all).
    pub workloads: Vec<Workload>,
    /// Whether they were named (`--workloads`): a named workload that
    /// cannot run is an error, not skipped.
    pub workloads_named: bool,
}

impl Params {
    /// Only `workloads` (in report order, once each; all if empty).
    pub fn with_workloads(mut self, workloads: &[Workload]) -> Params {
        let mut w = if workloads.is_empty() { Workload::ALL.to_vec() } else { workloads.to_vec() };
        w.sort_unstable();
        w.dedup();
        self.workloads = w;
        self.workloads_named = !workloads.is_empty();
        self
    }

    /// Whether the run includes `w`.
    pub fn runs(&self, w: Workload) -> bool {
        self.workloads.contains(&w)
    }

    /// `rounds` of every workload (`--rounds`): a shorter run at the same
    /// counts per round, for a machine where a round takes long (many
    /// threads through the seeds' locks).
    pub fn with_rounds(mut self, rounds: usize) -> Params {
        let rounds = rounds.max(1);
        self.hit_rounds = rounds;
        self.rcutest_rounds = rounds;
        self.rw_rounds = rounds;
        self.chat_rounds = rounds;
        self.apparmor_rounds = rounds;
        self
    }

    /// `threads` as the run uses them: 1 and 2 always (issue 4's targets
    /// and the tables' columns), ascending, once each.
    pub fn with_threads(mut self, threads: &[usize]) -> Params {
        let mut t: Vec<usize> = threads.iter().copied().chain([1, 2]).filter(|&n| n > 0).collect();
        t.sort_unstable();
        t.dedup();
        self.threads = t;
        self
    }

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
                apparmor_paths: 300,
                apparmor_opens: 5_000,
                apparmor_cached_opens: 20_000,
                apparmor_run_limit: Duration::from_millis(20),
                apparmor_rounds: 1,
                apparmor_policy: None,
                threads: default_threads(),
                workloads: Workload::ALL.to_vec(),
                workloads_named: false,
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
                apparmor_paths: 4096,
                apparmor_opens: 2_000_000,
                apparmor_cached_opens: 50_000_000,
                apparmor_run_limit: Duration::from_millis(100),
                apparmor_rounds: 15,
                apparmor_policy: None,
                threads: default_threads(),
                workloads: Workload::ALL.to_vec(),
                workloads_named: false,
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
                apparmor_paths: 4096,
                apparmor_opens: 10_000_000,
                apparmor_cached_opens: 200_000_000,
                apparmor_run_limit: Duration::from_millis(400),
                apparmor_rounds: 21,
                apparmor_policy: None,
                threads: default_threads(),
                workloads: Workload::ALL.to_vec(),
                workloads_named: false,
            },
        }
    }
}

/// The thread counts issue 4's targets name (1 and 2 threads).
pub const TARGET_THREADS: [usize; 2] = [1, 2];

/// Thread counts of the scaling workloads of both benchmarks by default
/// (`bench seeds --threads`, `bench enforce --clients`): 1, 2 and the
/// powers of two up to the CPUs available.
pub fn default_threads() -> Vec<usize> {
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let mut threads = vec![1, 2];
    while threads.last().is_some_and(|&n| n * 2 <= cpus) {
        threads.push(threads.last().map_or(1, |n| n * 2));
    }
    threads
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_set_every_workloads_rounds_and_nothing_else() {
        let quick = Params::for_size(Size::Quick);
        let three = quick.clone().with_rounds(3);
        let rounds = |p: &Params| [p.hit_rounds, p.rcutest_rounds, p.rw_rounds, p.chat_rounds, p.apparmor_rounds];
        assert_eq!(rounds(&three), [3; 5]);
        assert_ne!(rounds(&quick), [3; 5]);
        let restored = Params {
            hit_rounds: quick.hit_rounds,
            rcutest_rounds: quick.rcutest_rounds,
            rw_rounds: quick.rw_rounds,
            chat_rounds: quick.chat_rounds,
            apparmor_rounds: quick.apparmor_rounds,
            ..three
        };
        assert_eq!(restored, quick, "the counts per round are kept");
        assert_eq!(rounds(&quick.with_rounds(0)), [1; 5], "at least one round");
    }
}
