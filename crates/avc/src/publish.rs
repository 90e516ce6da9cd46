//! Publication of immutable snapshots: writers replace, readers notice by
//! a sequence number, and nobody touches a shared reference count per
//! check.
//!
//! Why: seed 000 (RCU for the AVC) shows that readers must not write
//! shared memory; seed 001 shows that a reference count taken around each
//! read is exactly such a write; seed 003's discussion proposes
//! task-local references instead. This module is that idea:
//!
//! * [`Published`] holds the current snapshot (an `arc_swap::ArcSwap`)
//!   and its sequence number (an `AtomicU64` alone on its cache line).
//! * Each thread keeps a [`Reader`]: its own `Arc` of the snapshot it last
//!   saw, plus that snapshot's sequence number. A check does ONE Acquire
//!   load of the global sequence number, a line that is written once per
//!   publish and otherwise only read, so it stays shared in every CPU's
//!   cache. Only when the number moved does the reader load the new `Arc`
//!   (one reference-count increment per publish per thread, never per
//!   check) and drop its old one.
//!
//! This is RCU with the thread's next check as its quiescent state: a
//! snapshot is freed when the last thread that held it refreshes (or
//! releases it: `Avc::quiesce`). In-flight checks finish on the snapshot
//! they hold. The price: an idle thread keeps at most one old snapshot
//! alive until its next check.
//!
//! # Protocol
//!
//! * INVARIANT (one writer): publishes are serialised by the caller (the
//!   AVC's writer mutex) and carry strictly increasing sequence numbers.
//! * Writer: swap the snapshot in, then store its sequence number with
//!   Release. Reader: load the sequence number with Acquire; if it is
//!   newer than the held snapshot's, load the snapshot. Having seen the
//!   number, the reader is ordered after the swap, so it loads that
//!   snapshot or a later one, never an earlier one.
//! * A reader whose snapshot is newer than the number it loaded (it
//!   refreshed between a swap and the matching store) treats itself as
//!   current: numbers only grow, so nothing newer exists yet.
//! * INVARIANT (seqno matches): a reader's `seqno` is its held snapshot's
//!   sequence number, or 0 when it holds none; snapshots start at 1.
//!
//! Under `cfg(loom)` the `ArcSwap` is replaced by a loom `Mutex<Arc<T>>`
//! with the same two operations, so the loom models check this protocol
//! (not arc_swap's internals, which have their own verification).

use std::sync::atomic::Ordering;

use crate::padded::CachePadded;
use crate::sync::{Arc, AtomicU64};

/// A snapshot that knows its sequence number.
pub trait Versioned {
    /// Sequence number; at least 1, increasing with each publish.
    fn seqno(&self) -> u64;
}

/// The current snapshot and its sequence number.
pub struct Published<T> {
    current: Cell<T>,
    seqno: CachePadded<AtomicU64>,
}

impl<T: Versioned> Published<T> {
    pub fn new(first: Arc<T>) -> Published<T> {
        let seqno = CachePadded(AtomicU64::new(first.seqno()));
        Published { current: Cell::new(first), seqno }
    }

    /// The sequence number of the current snapshot (Acquire: a reader that
    /// sees it then loads that snapshot or a later one).
    #[inline]
    pub fn seqno(&self) -> u64 {
        self.seqno.load(Ordering::Acquire)
    }

    /// Whether a snapshot newer than `seqno` was published: the check a
    /// reader makes before trusting the snapshot it holds.
    #[inline]
    pub fn moved_past(&self, seqno: u64) -> bool {
        self.seqno() > seqno
    }

    /// The atomic itself, for inserts that must be refused once it moves.
    pub fn seqno_cell(&self) -> &AtomicU64 {
        &self.seqno
    }

    /// The current snapshot (one reference-count increment: cold paths).
    pub fn load(&self) -> Arc<T> {
        self.current.load()
    }

    /// Makes `next` current and returns the previous snapshot. Callers
    /// serialise publishes and increase sequence numbers (one writer).
    pub fn publish(&self, next: Arc<T>) -> Arc<T> {
        let seqno = next.seqno();
        let previous = self.current.swap(next);
        // Release: orders the swap above before the new number, so a
        // reader that Acquire-loads the number finds the new snapshot.
        self.seqno.store(seqno, Ordering::Release);
        previous
    }
}

/// One thread's reference to the snapshot it last saw.
pub struct Reader<T> {
    held: Option<Arc<T>>,
    seqno: u64,
}

impl<T: Versioned> Reader<T> {
    /// A reader holding nothing (it refreshes at its first check).
    pub fn new() -> Reader<T> {
        Reader { held: None, seqno: 0 }
    }

    /// Whether the held snapshot is still the newest: one Acquire load of
    /// a read-mostly line, nothing written. False when nothing is held
    /// (seqno matches: 0 is below every snapshot's number).
    #[inline]
    pub fn is_current(&self, published: &Published<T>) -> bool {
        !published.moved_past(self.seqno)
    }

    /// Takes the current snapshot; returns the one released (the caller
    /// drops it, freeing it if this was its last holder).
    pub fn refresh(&mut self, published: &Published<T>) -> Option<Arc<T>> {
        let next = published.load();
        self.seqno = next.seqno();
        self.held.replace(next)
    }

    /// Releases the held snapshot without taking a new one.
    pub fn release(&mut self) -> Option<Arc<T>> {
        self.seqno = 0;
        self.held.take()
    }

    /// The held snapshot.
    #[inline]
    pub fn held(&self) -> Option<&Arc<T>> {
        self.held.as_ref()
    }

    /// The held snapshot's sequence number (0 if none).
    #[inline]
    pub fn seqno(&self) -> u64 {
        self.seqno
    }
}

impl<T: Versioned> Default for Reader<T> {
    fn default() -> Self {
        Reader::new()
    }
}

/// The swappable `Arc`: arc_swap normally, a loom mutex under loom.
#[cfg(not(loom))]
struct Cell<T>(arc_swap::ArcSwap<T>);

#[cfg(not(loom))]
impl<T> Cell<T> {
    fn new(value: Arc<T>) -> Cell<T> {
        Cell(arc_swap::ArcSwap::new(value))
    }

    fn load(&self) -> Arc<T> {
        self.0.load_full()
    }

    fn swap(&self, value: Arc<T>) -> Arc<T> {
        self.0.swap(value)
    }
}

#[cfg(loom)]
struct Cell<T>(crate::sync::Mutex<Arc<T>>);

#[cfg(loom)]
impl<T> Cell<T> {
    fn new(value: Arc<T>) -> Cell<T> {
        Cell(crate::sync::Mutex::new(value))
    }

    fn load(&self) -> Arc<T> {
        Arc::clone(&self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    fn swap(&self, value: Arc<T>) -> Arc<T> {
        std::mem::replace(&mut *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner), value)
    }
}
