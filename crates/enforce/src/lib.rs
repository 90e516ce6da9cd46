//! rampartd: Rampart's decisions enforced on real processes through
//! fanotify permission events, on kernels where SELinux is not active.
//!
//! # The API
//!
//! The modules are private; what other crates use is re-exported here,
//! in four groups:
//!
//! * **Running the daemon** (`rampart daemon`): [`run_daemon`] with a
//!   [`DaemonConfig`], resolved from the TOML file and the command line's
//!   flags, both a [`FileConfig`]; [`DaemonError`] says why it could not
//!   start.
//! * **The control socket**, client side (`rampart status`, `setenforce`,
//!   `reload`, `setbool`, `run`, `relabel`): [`Client`] at
//!   [`DEFAULT_SOCKET`], [`ControlError`], the [`Status`] it reports and
//!   the [`ExecGrant`] an `exec-context` request returns. Server side, the
//!   daemon's: [`ControlServer`] serving a [`ControlHandler`], which
//!   authorizes each [`Request`] of a [`Caller`] and answers a [`Reply`].
//! * **The launcher's sandbox** (`rampart run`, set on itself before its
//!   exec, for what fanotify cannot see): [`restrict_filesystem`],
//!   [`refuse_system_calls`] (the [`Forbidden`] operations),
//!   [`revoke_descriptors`], [`bound_capabilities`], [`clear_inherited_state`].
//! * [`private_mounts`]: the private mount namespace `rampart demo` and
//!   the enforcement benchmark run in.
//!
//! [`testing`] exposes internals to this crate's integration tests, its
//! loom model and the fuzz targets; it is not an API.
//!
//! # The modules
//!
//! In the order an event meets them: `fanotify.rs` (a group: marks,
//! reads, answers), `groups.rs` (the current group and those retiring
//! after a revocation) and `event.rs` (parsing records); `cgroups.rs`
//! with `pidfd.rs` (which domain a thread runs in: the kernel keeps it,
//! in cgroups) and `procs.rs` (exec contexts asked for); `own_threads.rs`
//! (the daemon's own); `objects.rs` (object labels as SIDs, cached per
//! inode by `label_cache.rs`) with `path_labels.rs` (when a file's path
//! cannot change the answer);
//! `access.rs` (classes and permissions of an open); `enforcer.rs` (the
//! decision) with `entry.rs` (who may enter a confined domain: only
//! processes carrying the launcher's sandbox, `sandbox.rs`),
//! `exec_mount.rs` (whether an exec's mount may grant a transition) and
//! `secure_exec.rs` (a new domain's image in secure-execution mode) and
//! `limits.rs` (its soft resource limits reset) and `signal_state.rs`
//! (its signal state reset, by calls `injected_calls.rs` has it make);
//! `marks.rs`
//! (the kernel-side cache of ignore marks, its races ordered by
//! `epoch.rs`); `responder.rs` (the threads that read and answer, with
//! `backlog.rs` waking helpers and `handoff.rs` sharing a read's events); `daemon.rs` (lifecycle, reload) with
//! `config.rs`, `overload_notice.rs` and `control/` (the control socket).
//! Beside events, the calls a launched process makes that fanotify never
//! sees: `supervised.rs` (which, and their arguments), `supervisor.rs`
//! (decided and made by the daemon), `supervised_open.rs` (opens asking
//! to write), `new_labels.rs` (what they create, labeled as the kernel
//! labels it), `signals.rs` (the signals they send, checked between
//! domains) with `file_owners.rs` (owners named before an exec
//! transition), `limits.rs` (their `prlimit` of another process),
//! `sched.rs` (a process's scheduling), `process_ids.rs` (its group
//! and session), `process_reads.rs` (looks into it: `kcmp`,
//! `get_robust_list`, `process_madvise`), `fs_sharing.rs` (processes
//! sharing a working directory, which an exec transition must not keep),
//! `exec_memory.rs` (the memory they make executable, with `mappings.rs`:
//! another process's mappings), `memfds.rs` (the memfds they make).

// The workspace denies these outside tests; unit tests may unwrap.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]
// Every type the API's signatures name is re-exported here, nameable.
#![warn(unnameable_types)]

mod access;
mod anon_inodes;
mod apparmor;
mod apparmor_log;
mod append_only;
mod backlog;
mod bpf;
mod call_interrupts;
mod call_threads;
mod calls_in_flight;
mod cgroups;
mod config;
mod control;
mod controlling_tty;
mod daemon;
mod device_access;
mod device_program;
mod device_watch;
mod enforcer;
mod entry;
mod epoch;
mod event;
mod exec_calls;
mod exec_memory;
mod exec_mount;
mod fanotify;
mod fd_store;
mod fifo_opens;
mod file_owners;
mod fs_sharing;
mod groups;
mod handoff;
#[cfg(target_arch = "x86_64")]
mod injected_calls;
mod ipc_objects;
mod kernel_files;
mod label_cache;
mod limits;
mod mappings;
mod marked_fs;
mod marks;
mod memfds;
mod memory_guard;
mod mount_prefix;
mod mountinfo;
mod name_changes;
mod new_labels;
mod object_label;
mod objects;
mod overload_notice;
mod own_capabilities;
mod own_threads;
mod path_labels;
mod pidfd;
pub mod private_mounts;
mod process_ids;
mod process_memory;
mod process_reads;
mod procs;
mod responder;
mod same_image;
mod sandbox;
mod sched;
mod secure_exec;
mod signal_state;
mod signals;
mod sockets;
mod subject_label;
mod supervised;
mod supervised_open;
mod supervisor;
mod sync;
mod sysv_ipc;
mod thread_creds;
mod unix_connects;
mod unix_names;
mod watches;

// Running the daemon.
pub use config::{DaemonConfig, FileConfig, SpinCheck};
pub use daemon::{run_daemon, DaemonError};

// The control socket, client side,
pub use control::{
    AppArmorStatus, Client, ConfinedProcess, ControlError, ExecGrant, ProtocolError, Status, DEFAULT_SOCKET,
};
// and server side.
pub use control::{Caller, ControlHandler, ControlServer, Reply, Request, ServerConfig, Supervised, PERMISSION_DENIED};

// The launcher's sandbox.
pub use sandbox::{
    bound_capabilities, clear_inherited_state, refuse_system_calls, restrict_filesystem, revoke_descriptors, Forbidden,
};
pub use supervised::install_filter as supervise_system_calls;

/// Internals exposed for this crate's integration tests
/// (`tests/marks_property.rs`, `tests/control.rs`), its loom model
/// (`tests/loom.rs`) and the fuzz targets (`fuzz/fuzz_targets`), so that
/// they exercise the very code the daemon runs. Not an API: nothing
/// outside those should use it.
pub mod testing {
    // The ignore marks against libsepol (`tests/marks_property.rs`).
    pub use crate::access::{mapping, ClassPerms, Classes};
    pub use crate::apparmor::{AppArmor, ExecOutcome, FileEvent};
    pub use crate::apparmor_log::AppArmorLog;
    pub use crate::fanotify::{ACCESS_PERM, OPEN_PERM};
    pub use crate::marks::{
        EventObject, InScope, InodeKey, Judge, MarkTarget, Marks, NameGrant, ObjectAt, ProfileInScope,
    };
    pub use crate::object_label::ObjectLabel;
    pub use crate::path_labels::{Grants, PathLabels};

    // The ignore-mark protocol's epoch, the label cache's forget, the
    // responders' hand-off, the memory guards' counts, pins and
    // conflicts, and the connect threads' shares, model-checked
    // (`tests/loom.rs`).
    pub use crate::call_threads::Shares;
    pub use crate::epoch::{Epoch, Ticket};
    pub use crate::handoff::Handoff;
    pub use crate::label_cache::{LabelCache, Miss};
    pub use crate::memory_guard::{Guard, Guards, Pin};

    // The parsers of untrusted bytes, fuzzed: control lines
    // (`control_protocol`; its line limit is also tested in
    // `tests/control.rs`), fanotify records (`fanotify_records`) and a
    // supervised call's registers (`supervised_calls`).
    pub use crate::control::{parse_request, LineError, LineReader, MAX_LINE};
    pub use crate::event::{parse_with, PermEvent, RecordError};
    // The registers of a supervised call (`supervised_calls`).
    pub use crate::supervised::{
        decode, Attr, FileArg, Inspected, IpcKind, Make, Op, SchedTarget, SignalTarget, TimesLayout,
    };
}
