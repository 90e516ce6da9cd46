//! The commands, one module each.

pub mod apparmor;
pub mod apparmor_profiles;
pub mod batch;
#[cfg(feature = "bench")]
pub mod bench;
#[cfg(feature = "bench")]
pub mod bench_enforce;
pub mod check;
pub mod enforce;
pub mod explain;
pub mod info;
pub mod label;
