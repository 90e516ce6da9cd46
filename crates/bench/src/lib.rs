//! The seed experiments, rerun: Rampart's AVC beside the designs the seed
//! threads measured, on the same key stream, in one process and one run.
//!
//! # Why this crate exists
//!
//! Every hot-path choice in `rampart-avc` answers one of the five seed
//! threads (docs/seeds.md). A claim like "no shared counter on the check
//! path" is only worth something next to a measurement of the shared
//! counter it avoids, taken on the same machine, in the same run, with the
//! same keys. So each design the seeds measured is rebuilt here as a small
//! self-contained variant ([`variants`]): one global lock (2001), a
//! reader-writer lock (2004), a shared statistics counter, a shared label
//! reference count (AppArmor 2024) and its per-thread fix, a refcount per
//! module call (Stacker 2005), revalidation on every read/write (2007), and
//! a plain unsynchronised `HashMap` (the floor). The workloads
//! ([`workloads`]) are generic over the variant, so each variant is
//! compiled into the same loop and only the check differs.
//!
//! Seed 003 was about AppArmor, whose checks are path decisions, not
//! (source, target, class) keys: its workload ([`apparmor`]) has its own
//! three designs around Rampart's AppArmor engine, and its own section of
//! the report.
//!
//! # Fairness
//!
//! * Every cache uses the hash function of Rampart's cache keys
//!   ([`rampart_avc::KeyHasher`]), so lookups are compared, not hashes.
//! * Every variant answers from the same decisions (a separate reference
//!   AVC, the "security server"); the tests check that each one gives
//!   Rampart's allow/deny answer for every key.
//! * Each cache is warmed with every key before it is timed.
//! * The machine is shared and noisy: variants run round-robin, rounds
//!   interleaved (a variant's repetitions are never back to back), and
//!   medians are reported.

// The workspace denies these outside tests; unit tests may unwrap.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod affinity;
pub mod apparmor;
pub mod chart;
pub mod clock;
pub mod docs;
pub mod enforce;
mod error;
pub mod goal;
pub mod markdown;
pub mod params;
pub mod report;
pub mod rng;
pub mod rounds;
pub mod run;
pub mod setup;
pub mod stats;
pub mod variants;
pub mod workloads;

pub use error::BenchError;
pub use params::{Params, Size, Workload};
pub use report::Report;
pub use run::run;
pub use setup::{Access, Bench};
pub use variants::VariantId;
