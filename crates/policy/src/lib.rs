//! Rampart's policy engine: reads a compiled SELinux kernel policy
//! (versions 30 to 33) and computes access decisions and new labels
//! exactly as the kernel and libsepol do.
//!
//! This crate is the slow path every later layer builds on: it has no
//! cache and no locks. A [`Policy`] is immutable after loading; boolean
//! values live in a separate [`Booleans`] value so they can be replaced
//! atomically without copying the policy.
//!
//! ```no_run
//! # use rampart_policy::*;
//! let policy = Policy::from_file(&default_policy_path()?)?;
//! let bools = Booleans::defaults(&policy);
//! let s = policy.parse_context("system_u:system_r:sshd_t:s0")?;
//! let t = policy.parse_context("system_u:object_r:etc_t:s0")?;
//! let file = policy.class_by_name("file").ok_or("no file class")?;
//! let d = policy.compute_av(&bools, &s, &t, file);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]
// The workspace denies these outside tests; unit tests may unwrap.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod bitset;
mod booleans;
mod compute;
mod context;
mod create;
mod error;
mod index;
mod locate;
pub mod mls;
mod model;
mod policy;
mod read;
mod wire;

pub use bitset::BitSet;
pub use booleans::{Booleans, CondState};
pub use compute::AvDecision;
pub use create::{default_range, CreateError, CreateKind, DEFAULT_SOURCE, DEFAULT_TARGET};
pub use error::{ContextError, PolicyError};
pub use locate::{default_policy_path, LoadError};
pub use model::*;
pub use policy::{Names, Policy, POLICYCAP_EXTENDED_SOCKET_CLASS, POLICYCAP_NNP_NOSUID_TRANSITION};
