//! rampartd: Rampart's decisions enforced on real processes through
//! fanotify permission events, on kernels where SELinux is not active.
//!
//! Modules, in the order an event meets them: [`fanotify`] (a group:
//! marks, reads, answers), [`groups`] (the current group and those
//! retiring after a revocation) and [`event`] (parsing records);
//! [`cgroups`] with [`pidfd`] (which domain a thread runs in: the
//! kernel keeps it, in cgroups) and [`procs`] (exec contexts asked for);
//! [`own_threads`] (the daemon's own); [`objects`] (object labels as SIDs) with
//! [`path_labels`] (when a file's path cannot change the answer); [`access`]
//! (classes and permissions of an open); [`enforcer`] (the decision) with [`entry`] (who may enter a confined
//! domain: only processes carrying the launcher's sandbox);
//! [`marks`] (the kernel-side cache of ignore marks); [`responder`]
//! (the threads that read and answer); [`daemon`] (lifecycle, reload) with [`config`] and [`control`] (the
//! control socket). [`private_mounts`]: the private mount namespace `rampart
//! demo` and the enforcement benchmark run in.

// The workspace denies these outside tests; unit tests may unwrap.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod access;
pub mod backlog;
pub mod cgroups;
pub mod config;
pub mod control;
pub mod daemon;
pub mod enforcer;
pub mod entry;
pub mod epoch;
pub mod event;
pub mod fanotify;
pub mod groups;
pub mod marks;
pub mod mountinfo;
pub mod object_label;
pub mod objects;
pub mod overload_notice;
pub mod own_threads;
pub mod path_labels;
pub mod pidfd;
pub mod private_mounts;
pub mod procs;
pub mod responder;
pub mod sandbox;
mod sync;
