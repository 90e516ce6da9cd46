//! Per-thread state of one AVC: the snapshot the thread holds, its L1
//! cache and its statistics row.
//!
//! Kept in a `thread_local::ThreadLocal` owned by the `Avc`, so each AVC
//! has its own state per thread. The crate keeps a slot after its thread
//! exits and gives it to the next new thread; so an exited thread's
//! snapshot is released when a new thread takes over its slot (at that
//! thread's first check) or when the AVC drops. A thread about to exit
//! (or go idle for long) can release it at once with `Avc::quiesce`.
//!
//! Why `Cell`s: the hit path reads the held sequence number and an L1 slot
//! through `Cell`s, which cost plain loads and stores. A `RefCell` around
//! the whole state would add a flag store and restore per check, a chain
//! of dependent stores from one check to the next. The held snapshot
//! itself sits in a `RefCell`, borrowed shared on the miss path (so a
//! module that calls back into the AVC from its check is fine) and
//! mutably only to swap snapshots, never across a call into a module.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use crate::l1::L1;
use crate::publish::{Published, Reader};
use crate::snapshot::Snapshot;
use crate::stats::ThreadStats;
use crate::sync;

/// A snapshot reference given up by a thread (dropped by the caller).
pub(crate) type Released = Option<sync::Arc<Snapshot>>;

/// Aligned so that two threads' slots, which the crate stores side by
/// side, never share a cache line.
#[repr(align(128))]
pub(crate) struct ThreadSlot {
    /// This thread's row, shared with the AVC's list of rows.
    pub(crate) stats: Arc<ThreadStats>,
    /// INVARIANT (seqno mirror): `reader.seqno()` whenever `reader` is not
    /// mutably borrowed (0 when nothing is held).
    pub(crate) seqno: Cell<u64>,
    pub(crate) reader: RefCell<Reader<Snapshot>>,
    /// INVARIANT (L1 matches snapshot): every entry was computed in the
    /// snapshot `reader` holds; adopting another snapshot clears it.
    pub(crate) l1: L1,
}

impl ThreadSlot {
    pub(crate) fn new(stats: Arc<ThreadStats>, l1_entries: usize) -> ThreadSlot {
        ThreadSlot { stats, seqno: Cell::new(0), reader: RefCell::new(Reader::new()), l1: L1::new(l1_entries) }
    }

    /// Takes the current snapshot, clearing the L1. `None` if a check
    /// further up this thread's stack holds the snapshot borrowed (a module
    /// calling back): then this thread keeps using the one it holds.
    pub(crate) fn adopt(&self, published: &Published<Snapshot>) -> Option<Released> {
        let mut reader = self.reader.try_borrow_mut().ok()?;
        let released = reader.refresh(published);
        self.seqno.set(reader.seqno());
        self.l1.clear();
        Some(released)
    }

    /// Releases the held snapshot and clears the L1 (`None`: borrowed).
    pub(crate) fn release(&self) -> Option<Released> {
        let mut reader = self.reader.try_borrow_mut().ok()?;
        let released = reader.release();
        self.seqno.set(0);
        self.l1.clear();
        Some(released)
    }
}
