//! The protocol that keeps ignore marks honest under concurrency
//! ([`crate::marks`]): once a change (reload, boolean change, relabel, a
//! new domain in scope) has been flushed, no mark decided under the state
//! before it exists, now or later. `rampart setbool` returning is then a
//! promise: the next open or read is decided under the new state.
//!
//! * A **placer** takes a [`Ticket`] when its event begins, before it
//!   looks up the subject, the object's label or the AVC. After deciding,
//!   it places its marks only inside [`Epoch::hold`], which refuses if
//!   the epoch moved since the ticket.
//! * A **changer** publishes its change (AVC snapshot, labels, scope),
//!   then calls [`Epoch::advance`] and flushes every mark while holding
//!   what it returns.
//!
//! Why that suffices: `hold` is a read lock and `advance` the write lock
//! of one `RwLock`, and the epoch only moves under the write lock. A
//! placer whose `hold` succeeds read the epoch of its ticket under the
//! read lock, so its whole placement comes before the next changer's
//! advance and flush, which removes the mark. A placer whose ticket is
//! the advanced epoch loaded it with Acquire from the Release increment,
//! so it decides on the published change. (The earlier protocol, placing
//! first and removing the mark on a moved epoch, left the mark in the
//! kernel for a moment after the flush: a process started right after
//! `setbool` could pass unasked.) Model-checked with loom in
//! `tests/loom.rs`.

use std::sync::atomic::Ordering;
use std::sync::PoisonError;

use crate::sync::{AtomicU64, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// See the module docs.
#[derive(Debug, Default)]
pub struct Epoch {
    value: AtomicU64,
    /// Read: a placement in progress. Write: an advance and its flush.
    placing: RwLock<()>,
}

/// The epoch an event began in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket(u64);

impl Ticket {
    pub fn epoch(self) -> u64 {
        self.0
    }
}

impl Epoch {
    pub fn new() -> Epoch {
        Epoch::default()
    }

    /// When an event begins, before reading any state a mark depends on.
    pub fn ticket(&self) -> Ticket {
        // Acquire: pairs with the Release increment in `advance`, so the
        // change published before it is visible to this event.
        Ticket(self.value.load(Ordering::Acquire))
    }

    /// Holds off changers while marks decided under `ticket` are placed;
    /// `None` if a change was flushed since the ticket.
    pub fn hold(&self, ticket: Ticket) -> Option<RwLockReadGuard<'_, ()>> {
        let guard = self.placing.read().unwrap_or_else(PoisonError::into_inner);
        // Relaxed: the value only moves under the write lock, and taking
        // the read lock synchronized with its last release.
        (self.value.load(Ordering::Relaxed) == ticket.0).then_some(guard)
    }

    /// After publishing a change: moves the epoch; flush every mark
    /// before dropping the guard.
    pub fn advance(&self) -> RwLockWriteGuard<'_, ()> {
        let guard = self.placing.write().unwrap_or_else(PoisonError::into_inner);
        // Release: see `ticket`.
        self.value.fetch_add(1, Ordering::Release);
        guard
    }
}
