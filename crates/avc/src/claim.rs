//! Exclusive use of a per-thread slot: a flag that one thread at a time
//! holds.
//!
//! Why: the AVC's per-thread state (snapshot, L1, statistics row) lives in
//! slots the AVC owns, so that a slot outlives its thread and the next
//! new thread can take it over (see `thread.rs`). A slot is plain memory
//! (`Cell`s), so only one thread may use it at a time; this flag is what
//! hands it from one thread to the next. It is touched only when a
//! thread takes or gives back a slot, never on the check path.
//!
//! # Protocol
//!
//! * INVARIANT (one holder): at most one thread holds a claim; only the
//!   holder uses the slot, and it releases the claim after its last use.
//! * A thread takes a free claim with a compare-exchange from free to
//!   held (Acquire); the holder releases it with a Release store. So the
//!   previous holder's every use of the slot happens-before the next
//!   holder's first.
//! * A new slot is created held by its creator (published to other
//!   threads through the AVC's registry mutex).

use std::sync::atomic::Ordering;

use crate::sync::AtomicBool;

/// One slot's ownership flag.
#[derive(Debug)]
pub struct Claim {
    held: AtomicBool,
}

impl Claim {
    /// A claim held by its creator.
    pub fn held() -> Claim {
        Claim { held: AtomicBool::new(true) }
    }

    /// Takes the claim if nobody holds it.
    pub fn try_take(&self) -> bool {
        // Acquire on success: pairs with the previous holder's Release in
        // `release`, so its uses of the slot happen-before ours. Relaxed
        // on failure: we read nothing through a claim we did not get.
        self.held.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok()
    }

    /// Gives the claim back. Only its holder may call this, after its
    /// last use of the slot.
    pub fn release(&self) {
        // Release: publishes our uses of the slot to the next holder.
        self.held.store(false, Ordering::Release);
    }

    /// Whether some thread holds the claim (a statistic: by the time the
    /// caller looks, it may have changed).
    pub fn is_held(&self) -> bool {
        // Relaxed: nothing is read through the answer.
        self.held.load(Ordering::Relaxed)
    }
}
