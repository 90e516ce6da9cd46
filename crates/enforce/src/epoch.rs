//! The protocol that keeps ignore marks honest under concurrency
//! ([`crate::marks`]): a mark decided under one state of the world must
//! not outlive a flush made because that state changed.
//!
//! * A **changer** (reload, boolean change, relabel, new domain in scope)
//!   first publishes the change (the AVC snapshot, the scope), then calls
//!   [`Epoch::bump`], then flushes every mark.
//! * A **placer** calls [`Epoch::begin`], decides (reading the published
//!   state), places its mark, then asks [`Epoch::still`]; if the epoch
//!   moved, it removes the mark it placed.
//!
//! Why that suffices: all three operations are `SeqCst`, so they have one
//! total order. If the placer's `still` load comes before the bump, its
//! mark was placed before the bump, hence before the flush that follows,
//! which removes it. If it comes after, the placer removes the mark
//! itself. And a placer whose `begin` reads the bumped value synchronizes
//! with the bump, so it decides on the published change. The kernel's
//! mark operations are serialized by the fanotify group's mutex, which the
//! loom model (`tests/loom.rs`) represents as a mutex.

use std::sync::atomic::Ordering;

use crate::sync::AtomicU64;

/// See the module docs.
#[derive(Debug, Default)]
pub struct Epoch(AtomicU64);

impl Epoch {
    pub fn new() -> Epoch {
        Epoch(AtomicU64::new(0))
    }

    /// Before deciding a mark: the epoch it is decided in.
    pub fn begin(&self) -> u64 {
        // SeqCst: part of the single order the module docs argue over.
        self.0.load(Ordering::SeqCst)
    }

    /// After placing a mark decided in `epoch`: whether it may stay.
    pub fn still(&self, epoch: u64) -> bool {
        // SeqCst: see `begin`.
        self.0.load(Ordering::SeqCst) == epoch
    }

    /// After publishing a change, before flushing the marks.
    pub fn bump(&self) {
        // SeqCst: see `begin`; also Release for the published change.
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}
