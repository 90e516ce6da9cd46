//! The [`Avc`] itself: its parts, construction and the small accessors.
//! The check path is in [`crate::check`], auditing in [`crate::report`],
//! the publication API in [`crate::writer`].

use std::sync::{Arc, Mutex};

use rampart_policy::{Booleans, Policy};

use crate::audit::AuditSink;
use crate::error::AvcError;
use crate::mapping::Mapping;
use crate::publish::Published;
use crate::sid::{Sid, SidTable};
use crate::snapshot::Snapshot;
use crate::stats::{Stats, ThreadStats};
use crate::sync;
use crate::thread::Slots;
use crate::writer_state::WriterState;

/// Default maximum L1 size per thread: entries of
/// [`crate::L1_ENTRY_BYTES`] (24) bytes, so at most 384 KiB per thread.
/// Each thread's L1 starts at [`crate::L1_INITIAL_ENTRIES`] and grows only
/// while its working set fills it beyond a quarter: 16384 holds 4096
/// keys with nearly every hit in one cache line.
pub const DEFAULT_L1_ENTRIES: usize = 16384;
/// Default most keys per L2 table before a reclaim.
pub const DEFAULT_L2_THRESHOLD: usize = 8192;

/// How to build an [`Avc`].
pub struct AvcConfig {
    pub policy: Arc<Policy>,
    /// Initial boolean values; `None` for the policy's defaults.
    pub booleans: Option<Booleans>,
    pub mapping: Mapping,
    pub sink: Arc<dyn AuditSink>,
    pub enforcing: bool,
    /// Most entries of each thread's L1 (rounded up to a power of two); it
    /// starts smaller and grows with the thread's working set.
    pub l1_entries: usize,
    /// Keys an L2 table holds before the AVC replaces it by an empty one.
    pub l2_threshold: usize,
}

impl AvcConfig {
    /// Enforcing, default booleans, default cache sizes.
    pub fn new(policy: Arc<Policy>, mapping: Mapping, sink: Arc<dyn AuditSink>) -> AvcConfig {
        AvcConfig {
            policy,
            booleans: None,
            mapping,
            sink,
            enforcing: true,
            l1_entries: DEFAULT_L1_ENTRIES,
            l2_threshold: DEFAULT_L2_THRESHOLD,
        }
    }
}

/// The access vector cache. Share it between threads by reference or in
/// an `Arc`; every method takes `&self`.
pub struct Avc {
    pub(crate) sids: SidTable,
    pub(crate) mapping: Mapping,
    pub(crate) published: Published<Snapshot>,
    /// The state snapshots are built from; held by writers only, so
    /// publishes are serialised (one writer) and never block a check.
    pub(crate) writer: Mutex<WriterState>,
    /// Per-thread state (L1, held snapshot, statistics row): one slot
    /// per thread, found through a thread-local pointer (`thread.rs`).
    pub(crate) slots: Slots,
    pub(crate) sink: Arc<dyn AuditSink>,
    pub(crate) l2_threshold: usize,
}

impl Avc {
    /// Builds an AVC and publishes its first snapshot (sequence number 1).
    /// Fails if the policy rejects an unknown class or permission of the
    /// mapping (`handle_unknown reject`).
    pub fn new(config: AvcConfig) -> Result<Avc, AvcError> {
        let bools = config.booleans.unwrap_or_else(|| Booleans::defaults(&config.policy));
        let state = WriterState::new(config.policy, bools, &config.mapping, config.enforcing)?;
        let first = sync::Arc::new(state.snapshot(1, config.l2_threshold));
        Ok(Avc {
            sids: SidTable::new(),
            mapping: config.mapping,
            published: Published::new(first),
            writer: Mutex::new(state),
            slots: Slots::new(config.l1_entries),
            sink: config.sink,
            l2_threshold: config.l2_threshold,
        })
    }

    /// The SID of `context`, interned if new (cold path: takes a mutex).
    pub fn intern(&self, context: &str) -> Result<Sid, AvcError> {
        self.sids.intern(context)
    }

    /// The context string of `sid`, without locks.
    pub fn context(&self, sid: Sid) -> Option<&str> {
        self.sids.context(sid)
    }

    pub fn mapping(&self) -> &Mapping {
        &self.mapping
    }

    /// The sequence number of the current snapshot (one Acquire load).
    #[inline]
    pub fn seqno(&self) -> u64 {
        self.published.seqno()
    }

    /// Every thread's counters, like `/sys/fs/selinux/avc/cache_stats`
    /// (its `Display` prints that file's format).
    pub fn stats(&self) -> Stats {
        Stats { rows: self.slots.rows() }
    }

    /// Releases the snapshot this thread holds (and empties its L1), so an
    /// old policy, its caches and unregistered modules need not wait for
    /// this thread's next check to be freed. Call it before a thread exits
    /// or idles for long; the next check simply takes the current snapshot.
    pub fn quiesce(&self) {
        let Some(slot) = self.slots.own() else { return };
        if let Some(released) = slot.release() {
            self.retire(&slot.stats, released);
        }
    }

    /// Drops a released snapshot reference; if it was the last one, the
    /// snapshot is freed here and its L2 entries counted as frees.
    pub(crate) fn retire(&self, stats: &ThreadStats, released: Option<sync::Arc<Snapshot>>) {
        if let Some(snapshot) = released.and_then(sync::into_inner) {
            stats.count_frees(snapshot.l2.entries());
        }
    }
}

impl std::fmt::Debug for Avc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Avc").field("seqno", &self.seqno()).finish_non_exhaustive()
    }
}
