//! Per-thread state of one AVC (the snapshot the thread holds, its L1
//! cache, its statistics row), and how a thread finds it in a couple of
//! instructions.
//!
//! # Slots
//!
//! Each AVC owns a registry of [`ThreadSlot`]s ([`Slots`]), boxed so they
//! never move, freed only when the AVC drops. A thread uses a slot only
//! while it holds the slot's [`Claim`] (one holder at a time: see
//! `claim.rs`). A thread's first check takes a free slot (one an exited
//! thread gave back) or creates one; it keeps the claim until it exits,
//! when a destructor of this module's thread-local releases it. So an
//! exited thread's snapshot stays in its slot until the next new thread
//! takes the slot over (and refreshes at its first check), or until the
//! AVC drops; a thread about to exit (or go idle for long) can release it
//! at once with `Avc::quiesce`.
//!
//! # Finding the slot: the cached pointer
//!
//! The check path reads one `std` thread-local, `CACHED`: the id of the
//! AVC this thread used last and a pointer to its slot there. It has a
//! `const` initialiser and no destructor, so reading it is a load
//! relative to the thread pointer, with no lazy-initialisation or state
//! check (the `thread_local` crate's lookup, used before, cost about
//! 0.7 ns more per check). On a mismatch (first check, or another AVC
//! used last) the cold path looks the AVC up in the thread's list of
//! claimed slots (`CLAIMS`), or claims one, and refreshes `CACHED`.
//!
//! INVARIANT (cached claim): `CACHED` names (AVC `id`, slot `p`) only
//! while this thread holds the claim of `p`, a slot of AVC `id`'s
//! registry. `CACHED` is set right after the claim is taken and recorded
//! in `CLAIMS`; claims are released only by `CLAIMS`' destructor, which
//! resets `CACHED` first. AVC ids come from a global counter and are
//! never reused, so a matching id means the AVC is the one whose
//! registry owns `p`; `&self` keeps that AVC (and so `p`) alive for the
//! borrow. Hence the fast path's dereference is valid and exclusive.
//!
//! Why not key the cache on the `thread_local` crate's entries: that
//! crate frees a thread's id in its own thread-local destructor, and the
//! next new thread inherits the id and the entry. Thread-local destructors
//! run in an unspecified order, so one of them calling into the AVC after
//! the crate's had run would have used a cached pointer to an entry that
//! another thread may already own. Claims make the hand-over explicit.
//! A thread whose `CLAIMS` is already destroyed (a check from a later
//! thread-local destructor) claims a slot for that one call and releases
//! it after.
//!
//! Why `Cell`s: the hit path reads the held sequence number and the L1
//! through `Cell`s, which cost plain loads and stores. A `RefCell` around
//! the whole state would add a flag store and restore per check, a chain
//! of dependent stores from one check to the next. The held snapshot
//! itself sits in a `RefCell`, borrowed shared on the miss path (so a
//! module that calls back into the AVC from its check is fine) and
//! mutably only to swap snapshots, never across a call into a module.

use std::cell::{Cell, RefCell};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::claim::Claim;
use crate::l1::L1;
use crate::publish::{Published, Reader};
use crate::snapshot::Snapshot;
use crate::stats::{StatsRow, ThreadStats};
use crate::sync;

/// A snapshot reference given up by a thread (dropped by the caller).
pub(crate) type Released = Option<sync::Arc<Snapshot>>;

/// One thread's state in one AVC. Aligned so that two slots never share
/// a cache line.
#[repr(align(128))]
pub(crate) struct ThreadSlot {
    /// This slot's statistics row: written by the claim holder only, read
    /// by `Avc::stats` from any thread (atomics).
    pub(crate) stats: ThreadStats,
    /// INVARIANT (seqno mirror): `reader.seqno()` whenever `reader` is not
    /// mutably borrowed (0 when nothing is held).
    pub(crate) seqno: Cell<u64>,
    pub(crate) reader: RefCell<Reader<Snapshot>>,
    /// INVARIANT (L1 matches snapshot): every entry was computed in the
    /// snapshot `reader` holds; adopting another snapshot clears it.
    pub(crate) l1: L1,
}

impl ThreadSlot {
    fn new(l1_entries: usize) -> ThreadSlot {
        ThreadSlot {
            stats: ThreadStats::default(),
            seqno: Cell::new(0),
            reader: RefCell::new(Reader::new()),
            l1: L1::new(l1_entries),
        }
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

/// Ids of AVCs: unique for the life of the process (0: none).
static NEXT_AVC_ID: AtomicU64 = AtomicU64::new(1);

/// What `CACHED` holds: an AVC id and this thread's slot in it.
#[derive(Clone, Copy)]
struct Cached {
    avc: u64,
    slot: *const ThreadSlot,
}

const NOTHING_CACHED: Cached = Cached { avc: 0, slot: ptr::null() };

/// A slot this thread holds the claim of.
struct Claimed {
    avc: u64,
    slot: *const ThreadSlot,
    /// Shared with the registry: outlives the AVC, so releasing it at
    /// thread exit is safe even after the AVC dropped.
    claim: Arc<Claim>,
}

/// This thread's claims, released when the thread exits.
struct Claims {
    held: RefCell<Vec<Claimed>>,
}

impl Drop for Claims {
    fn drop(&mut self) {
        // First forget the cached pointer (cached claim), then give the
        // slots back. `CACHED` has no destructor, so it is still there.
        let _ = CACHED.try_with(|cached| cached.set(NOTHING_CACHED));
        for claimed in self.held.get_mut().drain(..) {
            claimed.claim.release();
        }
    }
}

thread_local! {
    /// The slot this thread used last (see the module documentation).
    static CACHED: Cell<Cached> = const { Cell::new(NOTHING_CACHED) };
    static CLAIMS: Claims = const { Claims { held: RefCell::new(Vec::new()) } };
}

/// A slot owned by the registry.
struct Entry {
    /// From `Box::leak`; freed by `Slots::drop`.
    slot: NonNull<ThreadSlot>,
    claim: Arc<Claim>,
}

/// `Entry`'s `Send` rests on this.
const _: fn() = || {
    fn send<T: Send>() {}
    send::<ThreadSlot>();
};

// SAFETY: an entry is moved between threads only inside the registry's
// mutex; the slot it points to is used only by the holder of `claim` (one
// holder), so it is never used by two threads at once (and `ThreadSlot`
// is `Send`: its `Cell`s hold plain data and its snapshot `Arc` is
// `Send`). Other threads read only the slot's statistics (atomics).
unsafe impl Send for Entry {}

/// Every thread slot of one AVC.
pub(crate) struct Slots {
    /// This AVC's id (see `CACHED`).
    id: u64,
    /// In creation order: the order of the statistics rows.
    entries: Mutex<Vec<Entry>>,
    l1_entries: usize,
}

impl Slots {
    pub(crate) fn new(l1_entries: usize) -> Slots {
        // Relaxed: only uniqueness matters, which the read-modify-write
        // gives by itself.
        let id = NEXT_AVC_ID.fetch_add(1, Ordering::Relaxed);
        Slots { id, entries: Mutex::new(Vec::new()), l1_entries }
    }

    /// This thread's slot if it is the cached one: the check path.
    #[inline(always)]
    pub(crate) fn cached(&self) -> Option<&ThreadSlot> {
        let cached = CACHED.with(Cell::get);
        if cached.avc != self.id {
            return None;
        }
        // SAFETY: cached claim (module documentation): this thread holds
        // the claim of `cached.slot`, a live slot of this registry, which
        // is freed only when `self` drops; the reference cannot outlive
        // `&self`.
        Some(unsafe { &*cached.slot })
    }

    /// Runs `f` with this thread's slot: the cached one, else the one it
    /// claimed before, else a free or new one, claimed now and cached.
    /// A thread whose claims list is already destroyed (a check from a
    /// thread-local destructor at thread exit) claims a slot for this
    /// call only.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&ThreadSlot) -> R) -> R {
        if let Some(slot) = self.cached().or_else(|| self.register()) {
            return f(slot);
        }
        let (slot, claim) = self.claim_or_create();
        let _release = ReleaseOnDrop(claim);
        // SAFETY: we hold the claim of `slot` (one holder) until
        // `_release` drops, after `f` returned; the slot lives as long as
        // `self`.
        f(unsafe { &*slot })
    }

    /// This thread's slot if it has one (cached or claimed earlier);
    /// never claims.
    pub(crate) fn own(&self) -> Option<&ThreadSlot> {
        if let Some(slot) = self.cached() {
            return Some(slot);
        }
        let found = CLAIMS
            .try_with(|claims| {
                let held = claims.held.try_borrow().ok()?;
                held.iter().find(|c| c.avc == self.id).map(|c| c.slot)
            })
            .ok()
            .flatten()?;
        // SAFETY: `CLAIMS` lists only slots whose claim this thread holds
        // (released only when `CLAIMS` drops); a slot of this registry
        // lives as long as `self`.
        Some(unsafe { &*found })
    }

    /// Finds this thread's slot in its claims or claims one, and caches
    /// it. `None` if this thread's claims list is destroyed.
    #[cold]
    #[inline(never)]
    fn register(&self) -> Option<&ThreadSlot> {
        let slot = CLAIMS
            .try_with(|claims| {
                // Never borrowed across a call out of this module.
                let mut held = claims.held.try_borrow_mut().ok()?;
                // Claims in AVCs that were dropped: only we hold them now.
                held.retain(|c| Arc::strong_count(&c.claim) > 1);
                let slot = match held.iter().find(|c| c.avc == self.id) {
                    Some(c) => c.slot,
                    None => {
                        let (slot, claim) = self.claim_or_create();
                        held.push(Claimed { avc: self.id, slot, claim });
                        slot
                    }
                };
                // Cached claim: the claim is held and recorded above.
                CACHED.with(|cached| cached.set(Cached { avc: self.id, slot }));
                Some(slot)
            })
            .ok()
            .flatten()?;
        // SAFETY: as in `own`: we hold the claim, the slot lives as long
        // as `self`.
        Some(unsafe { &*slot })
    }

    /// Takes the claim of a free slot (one an exited thread released), or
    /// creates a slot held by us.
    fn claim_or_create(&self) -> (*const ThreadSlot, Arc<Claim>) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(free) = entries.iter().find(|e| e.claim.try_take()) {
            return (free.slot.as_ptr(), Arc::clone(&free.claim));
        }
        let slot = NonNull::from(Box::leak(Box::new(ThreadSlot::new(self.l1_entries))));
        let claim = Arc::new(Claim::held());
        entries.push(Entry { slot, claim: Arc::clone(&claim) });
        (slot.as_ptr(), claim)
    }

    /// Every slot's statistics row, in creation order.
    pub(crate) fn rows(&self) -> Vec<StatsRow> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries
            .iter()
            .map(|e| {
                // SAFETY: the slot lives until `self` drops. We reference
                // only its `stats` field (atomics, shared by design), never
                // the `Cell`s its claim holder may be using.
                let stats = unsafe { &*ptr::addr_of!((*e.slot.as_ptr()).stats) };
                stats.row()
            })
            .collect()
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        for entry in self.entries.get_mut().unwrap_or_else(PoisonError::into_inner).drain(..) {
            // SAFETY: `slot` came from `Box::leak` and is freed only
            // here, once. `&mut self` means no `&Avc` is left, so no thread
            // can be using the slot (every use borrows the AVC); threads'
            // `CACHED`/`CLAIMS` may still name it but never dereference a
            // slot of an AVC id that is gone (ids are never reused).
            drop(unsafe { Box::from_raw(entry.slot.as_ptr()) });
        }
    }
}

/// Releases a one-call claim, even if the call panics.
struct ReleaseOnDrop(Arc<Claim>);

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        self.0.release();
    }
}
