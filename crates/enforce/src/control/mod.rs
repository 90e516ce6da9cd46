//! The control socket: `rampart status`, `setenforce`, `reload`,
//! `setbool`, and the exec context `rampart run` asks for.
//!
//! The daemon implements [`ControlHandler`]; the server in this module
//! owns the socket, checks the peer (root only, SO_PEERCRED), identifies
//! the sender of every request (SCM_PIDFD) and has the handler authorize
//! it ([`ControlHandler::authorize`]) before the handler runs it.
//!
//! - [`protocol`]: the wire format (one JSON line per request and per
//!   reply) and the only parser of control bytes; this file holds the
//!   types it carries ([`Status`], [`ExecGrant`]);
//! - [`handler`]: [`ControlHandler`], what the daemon implements, and the
//!   [`Caller`] it authorizes;
//! - [`server`]: [`ControlServer`], the socket, its peer check and limits;
//! - [`client`]: [`Client`], what the `rampart` command uses.

mod client;
mod handler;
mod protocol;
mod server;

pub use client::{Client, ControlError};
pub use handler::{Caller, ControlHandler, Supervised};
pub use protocol::{parse_request, LineError, LineReader, ProtocolError, Reply, Request, MAX_LINE, PERMISSION_DENIED};
pub use server::{ControlServer, ServerConfig, DEFAULT_SOCKET};

use serde::{Deserialize, Serialize};

/// What `rampart status` reports.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Status {
    /// "enforcing" or "permissive".
    pub mode: String,
    /// The policy file in use.
    pub policy: String,
    /// Bumped by every reload, boolean change or mode change (the AVC's
    /// snapshot sequence number).
    pub policy_seqno: u64,
    /// Permission events answered per second over the last interval.
    pub events_per_second: f64,
    /// Events read from the kernel and not yet answered.
    pub queue_depth: u64,
    pub allowed: u64,
    pub denied: u64,
    /// Denials let through because the domain or the daemon is permissive.
    pub permissive_denials: u64,
    /// Events answered with the overload answer.
    pub overloaded: u64,
    /// Processes with a domain other than the default.
    pub tracked_processes: u64,
    /// Ignore marks placed since the last flush.
    pub ignore_marks: u64,
    /// Of `allowed`, those decided without the object's path or label: a
    /// file without an xattr that the domain may open or read on every
    /// label file_contexts could give it. These need no AVC lookup, so
    /// `avc_lookups` can be far below the events. Absent from the
    /// replies of daemons older than the field (read as 0).
    #[serde(default)]
    pub decided_without_path: u64,
    /// The marked filesystems, as `major:minor` device numbers (what
    /// `rampart run` keeps confined processes from moving files within:
    /// crate::sandbox). Absent from older daemons' replies (empty).
    #[serde(default)]
    pub marked_devices: Vec<String>,
    /// The directories of the daemon's policy and file_contexts, which
    /// `rampart run` keeps confined processes from changing anything
    /// beneath (crate::sandbox). Absent from older daemons' replies.
    #[serde(default)]
    pub protected_dirs: Vec<std::path::PathBuf>,
    /// `rampart run` hands its opens for writing to the daemon
    /// (crate::supervised, "Opens"). Absent from older daemons' replies
    /// (false).
    #[serde(default)]
    pub supervised_opens: bool,
    pub avc_lookups: u64,
    pub avc_hits: u64,
    pub avc_misses: u64,
    pub uptime_seconds: f64,
    /// The AppArmor profiles loaded (`--apparmor`); absent when none are,
    /// and from older daemons.
    /// Boxed: most daemons have none, and the reply stays small.
    #[serde(default)]
    pub apparmor: Option<Box<AppArmorStatus>>,
}

/// The AppArmor profile set in use, counted as `aa-status` counts.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct AppArmorStatus {
    /// The profile directory.
    pub dir: String,
    /// Profiles, hats and children included.
    pub profiles: u64,
    pub enforce: u64,
    pub complain: u64,
    pub kill: u64,
    pub unconfined: u64,
    /// Profile files skipped because they did not compile.
    pub failed_files: u64,
    /// Profile files with a `disable/` link.
    pub disabled_files: u64,
    /// The processes under a profile (started by `rampart run
    /// --apparmor`), by pid.
    #[serde(default)]
    pub processes: Vec<ConfinedProcess>,
}

/// A process under an AppArmor profile, as `aa-status` lists them.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ConfinedProcess {
    pub pid: u32,
    pub profile: String,
    /// The profile's mode: `enforce`, `complain`, `kill`, or `unknown`
    /// (removed by a reload).
    pub mode: String,
}

/// What an accepted `exec-context` tells the launcher to do before its
/// exec (crate::sandbox): keep only these capabilities (bit `i`:
/// capability `i`), and replace these descriptors with `/dev/null`, which
/// the new domain may not use (SELinux's `flush_unauthorized_files`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExecGrant {
    pub capabilities: u64,
    pub revoke: Vec<i32>,
    /// What the domain may do to no file at all (crate::sandbox).
    pub forbid: Vec<crate::sandbox::Forbidden>,
}
