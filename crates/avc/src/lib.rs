//! Rampart's access vector cache (AVC): the layer between "may subject S
//! do P to object O?" and the policy engine, built so that a cached answer
//! costs a few nanoseconds (find this thread's state through one
//! thread-local pointer, compare a sequence number, compare four keys of
//! one cache line) and scales with the number of CPUs: about 1.3-1.4x a
//! plain single-threaded `HashMap` lookup of the same keys with the same
//! hash, for working sets of 16 to 4096 keys (`rampart bench seeds`).
//!
//! # Why it looks like this
//!
//! Each design choice answers one of the seed threads (docs/seeds.md):
//!
//! * **No shared lock or counter on the check path** (004: one AVC lock
//!   took SELinux from 12-19% to 36-79% overhead at 8 CPUs). A hit takes no
//!   lock, does no atomic read-modify-write and writes only memory its own
//!   thread owns: its statistics row (and, on an L2 hit, its L1). Each
//!   thread finds its state through a `std` thread-local pointer, not a
//!   shared map.
//! * **Readers never wait; updates copy and replace** (000: RCU kept the
//!   AVC flat from 4 to 32 CPUs). Everything a decision depends on (policy,
//!   booleans, enforcing mode, runtime permissive types, stacked modules)
//!   lives in an immutable snapshot; a change publishes a new one.
//! * **No reference count around the read side** (001: the Stacker's
//!   per-call module refcount halved reaim throughput). Each thread keeps
//!   its own `Arc` of the snapshot it uses and swaps it only when the
//!   global sequence number moved: one refcount operation per publish per
//!   thread, none per check. This is seed 003's "task-local reference",
//!   and RCU's grace period with each thread's next check as its quiescent
//!   state: an old snapshot (its policy, its caches, modules unregistered
//!   since) is freed when the last thread holding it refreshes. An idle
//!   thread keeps at most one old snapshot alive until its next check, or
//!   until it calls [`Avc::quiesce`]. (A thread that exits without
//!   quiescing leaves its snapshot in its per-thread slot, which the AVC
//!   keeps for the next new thread: released at that thread's first
//!   check, or when the AVC drops.)
//! * **Don't repeat a decision nothing could have changed** (002): open
//!   handles remember their grant and what it depended on, and recheck
//!   only when the policy, the subject's label or the object's label moved
//!   ([`Handle`]; 64-bit generations, no wrap-around).
//! * **Labels without reference counts** (003): labels are `Copy` SIDs.
//!   A reload does not touch them; each snapshot resolves a SID lazily,
//!   and a context the new policy rejects resolves to its unlabeled
//!   context (the kernel's behaviour, chosen over AppArmor's proxy labels:
//!   there is nothing to redirect, since SIDs name strings).
//!
//! # The path of one check
//!
//! ```text
//! has_perm_noaudit(ssid, tsid, class, perms)
//!   this thread's slot: thread-local (AVC id, slot) ── other AVC ─> find or claim the slot (cold)
//!   global seqno moved? ── yes ─> adopt the new snapshot, empty L1 (cold)
//!   L1 (per thread, 4-way sets, primary set) ── hit ─> Decision
//!   L1 miss (#[inline(never)]): secondary set ── hit ─> Decision
//!   L2 (per snapshot, shared, lock-free, insert-only) ── hit ─> fill L1 ─> Decision
//!   miss (#[cold]): SELinux + stacked modules ─> insert into L2 and L1 ─> Decision
//! has_perm = has_perm_noaudit + audit (sink) when the kernel would audit
//! ```
//!
//! Per-thread memory: the L1 starts at [`L1_INITIAL_ENTRIES`] entries of
//! [`L1_ENTRY_BYTES`] and doubles while its thread's working set fills
//! it beyond a quarter, up to [`AvcConfig::l1_entries`]
//! ([`DEFAULT_L1_ENTRIES`]: 16384 entries, 384 KiB, enough for 4096 keys
//! at a quarter full), plus about 256 bytes of slot and statistics row.
//!
//! The concurrency protocols and their invariants are documented where
//! they are implemented: snapshot publication in [`protocol::Published`]'s
//! module (`publish.rs`), the shared table in [`protocol::L2Table`]'s
//! (`l2.rs`), the hand-over of thread slots in [`protocol::Claim`]'s
//! (`claim.rs`, with the thread-local slot pointer in `thread.rs`), label
//! generations in `labeled.rs`. The three lock-free protocols are
//! model-checked with loom (`tests/loom.rs`, run with
//! `RUSTFLAGS="--cfg loom" cargo test -p rampart-avc --test loom --release`).
//!
//! # Example
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use rampart_avc::*;
//! # use rampart_policy::*;
//! let policy = Arc::new(Policy::from_file(&default_policy_path()?)?);
//! let mapping = Mapping::new(&[("file", &["open", "read", "write"])])?;
//! let avc = Avc::new(AvcConfig::new(policy, mapping, Arc::new(NullSink)))?;
//! let file = avc.mapping().class("file").ok_or("no file class")?;
//! let read = avc.mapping().perms(file, &["read"]).ok_or("no read")?;
//! let s = avc.intern("system_u:system_r:sshd_t:s0")?;
//! let t = avc.intern("system_u:object_r:etc_t:s0")?;
//! let decision = avc.has_perm(s, t, file, read, &AuditInfo::default());
//! assert!(decision.passes());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// The workspace denies these outside tests; unit tests may unwrap.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod audit;
mod avc;
mod check;
mod claim;
mod decision;
mod error;
mod handle;
mod key;
mod l1;
mod l2;
mod labeled;
mod mapping;
mod module;
mod padded;
mod publish;
mod report;
mod resolve;
mod segmented;
mod selinux;
mod sid;
mod snapshot;
mod stats;
mod sync;
mod thread;
mod writer;
mod writer_state;

pub use audit::{AuditEvent, AuditInfo, AuditSink, MemorySink, NullSink};
pub use avc::{Avc, AvcConfig, DEFAULT_L1_ENTRIES, DEFAULT_L2_THRESHOLD};
pub use decision::Decision;
pub use error::AvcError;
pub use handle::{Denied, Handle};
pub use key::{key_hash, CacheKey, KeyHasher};
pub use l1::{ENTRY_BYTES as L1_ENTRY_BYTES, INITIAL_ENTRIES as L1_INITIAL_ENTRIES};
/// Bytes of one slot of the shared (L2) table.
pub const L2_SLOT_BYTES: usize = l2::SLOT_BYTES;
/// Bytes of one entry of the shared (L2) table: key, cached vector, the
/// version it replaced (allocator overhead not included).
pub const L2_ENTRY_BYTES: usize = l2::entry_bytes::<decision::CachedAv>();
pub use labeled::{Object, Subject};
pub use mapping::{ClassIdx, Mapping, Perms, MAX_CLASSES, MAX_PERMS};
pub use module::{Module, ModuleDecision, Query};
pub use selinux::SELINUX_MODULE;
pub use sid::{Sid, SidTable, MAX_CONTEXT_LEN, MAX_SIDS};
pub use stats::{Stats, StatsRow};

/// The lock-free building blocks, public so the loom models
/// (`tests/loom.rs`) and benchmarks exercise the very types the AVC uses.
/// Callers of the AVC do not need them.
pub mod protocol {
    pub use crate::claim::Claim;
    pub use crate::l2::{Grant, Insert, L2Table};
    pub use crate::padded::CachePadded;
    pub use crate::publish::{Published, Reader, Versioned};
}
