//! The daemon's own threads, so their opens are answered at once: events
//! carry the opening thread's id (`FAN_REPORT_TID`), not the process's,
//! and a responder that waited on an open of the daemon's would wait on
//! itself. Each thread the daemon starts registers itself before it opens
//! anything; the few slots are scanned, never locked.

use std::sync::atomic::{AtomicU32, Ordering};

const SLOTS: usize = 64;

static TIDS: [AtomicU32; SLOTS] = [const { AtomicU32::new(0) }; SLOTS];

/// The calling thread's registration, until dropped: a thread holds it
/// for its whole life, so that its id leaves the table when it ends (the
/// kernel gives ids again: another process's thread under a stale one
/// would have its opens answered at once, unchecked).
#[must_use = "the thread is registered only while this lives"]
pub struct Registered {
    slot: Option<usize>,
    /// Dropped by the thread that registered: not `Send`.
    _thread: std::marker::PhantomData<*const ()>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            // Release: as the store of a registration (nothing else is
            // published; a responder that still finds the id answers an
            // open the thread made before it ended).
            TIDS[slot].store(0, Ordering::Release);
        }
    }
}

/// Registers the calling thread (a full table is harmless: the thread's
/// events are then decided like anyone's in its domain, by other threads).
pub fn register_current() -> Registered {
    // SAFETY: gettid cannot fail.
    let tid = unsafe { libc::gettid() } as u32;
    let slot = TIDS.iter().position(|slot| {
        // Release pairs with the Acquire in `contains`: a responder that
        // reads an event of this thread (queued after this store, through
        // the kernel's locked queue) finds it.
        slot.compare_exchange(0, tid, Ordering::Release, Ordering::Relaxed).is_ok()
    });
    Registered { slot, _thread: std::marker::PhantomData }
}

/// Whether `tid` is a registered thread of the daemon.
pub fn contains(tid: u32) -> bool {
    // Acquire: see `register_current`.
    tid != 0 && TIDS.iter().any(|s| s.load(Ordering::Acquire) == tid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registered_thread_is_found_and_others_are_not() {
        let tid = std::thread::spawn(|| {
            let _registered = register_current();
            // SAFETY: gettid cannot fail.
            let tid = unsafe { libc::gettid() } as u32;
            assert!(contains(tid));
            tid
        })
        .join()
        .unwrap();
        // Gone with its thread: the kernel may give its id to another.
        assert!(!contains(tid));
        assert!(!contains(0));
        // A thread that never registered is not the daemon's.
        // SAFETY: gettid cannot fail.
        let other = std::thread::spawn(|| unsafe { libc::gettid() } as u32).join().unwrap();
        assert!(!contains(other));
    }
}
