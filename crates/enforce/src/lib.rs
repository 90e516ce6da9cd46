//! rampartd: Rampart's decisions enforced on real processes through
//! fanotify permission events.

// The workspace denies these outside tests; unit tests may unwrap.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod control;
pub mod pidfd;
pub mod proc_connector;
