//! Events a responder read beyond the one it answers itself, left where
//! any idle responder can take them.
//!
//! Why: a read takes up to `--read-batch` events, and a thread answers
//! one event after another. Without a hand-off the events a read brought
//! wait behind the first one while the other pollers, spinning, find the
//! group's queue empty, and a helper woken for the batch finds it empty
//! too: two openers are answered one after the other, as with one
//! responder. Reading one event at a time spreads them instead, at a read
//! per event, which on 16 CPUs cost more than it spread at 16 clients
//! (docs/benchmarks.md, `--read-batch`). Handing the rest of a batch off
//! keeps the batched read and lets the events run in parallel.
//!
//! The protocol: whoever hands events off takes from here, after
//! answering its own, until it finds nothing. So every event handed off is
//! answered by somebody, with no later bound than answering the batch
//! itself: the others only make it sooner. The count beside the queue lets
//! a spinning poller look without taking the lock (it is written only
//! when events are given or taken, so looking does not move its cache
//! line). Model-checked in `tests/loom.rs`.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::PoisonError;

use crate::sync::{AtomicUsize, Mutex};

/// See the module docs. Aligned so that its count, read by every spinning
/// poller, shares no cache line with the enforcer's busier fields.
#[repr(align(128))]
pub struct Handoff<T> {
    /// How many events are queued, written under the lock.
    queued: AtomicUsize,
    events: Mutex<VecDeque<T>>,
}

impl<T> Default for Handoff<T> {
    fn default() -> Self {
        Handoff { queued: AtomicUsize::new(0), events: Mutex::new(VecDeque::new()) }
    }
}

impl<T> Handoff<T> {
    /// Leaves `events` for any responder. The caller then takes from here
    /// until [`Handoff::take`] finds nothing (module docs).
    pub fn give(&self, events: impl IntoIterator<Item = T>) {
        let mut queue = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        queue.extend(events);
        // Relaxed: the events are published by the lock; the count is a
        // hint for lookers, and a giver's own later load sees this store or
        // a later one (coherence), so it never reads a count older than
        // its own events.
        self.queued.store(queue.len(), Ordering::Relaxed);
    }

    /// One event handed off, if any.
    pub fn take(&self) -> Option<T> {
        // Relaxed: see `give`. A zero read here was stored under the lock
        // when the queue was empty, after the caller's own events (if any)
        // were given: those were taken by then.
        if self.queued.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let mut queue = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        let event = queue.pop_front();
        // Relaxed: see `give`.
        self.queued.store(queue.len(), Ordering::Relaxed);
        event
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn events_are_taken_in_the_order_given_then_nothing() {
        let h = Handoff::default();
        assert_eq!(h.take(), None);
        h.give([1, 2]);
        h.give([3]);
        assert_eq!((h.take(), h.take(), h.take(), h.take()), (Some(1), Some(2), Some(3), None));
    }

    /// Four givers each hand off a run of events and then take until
    /// nothing is left, while two thieves take too: every event is taken
    /// exactly once and none is left behind.
    #[test]
    fn every_event_given_is_taken_once() {
        use std::sync::atomic::AtomicBool;
        use std::sync::{Arc, Mutex as StdMutex};
        const GIVERS: u32 = 4;
        const ROUNDS: u32 = 2_000;
        let h = Arc::new(Handoff::default());
        let taken = Arc::new(StdMutex::new(Vec::new()));
        let done = Arc::new(AtomicBool::new(false));
        let thieves: Vec<_> = (0..2)
            .map(|_| {
                let (h, taken, done) = (Arc::clone(&h), Arc::clone(&taken), Arc::clone(&done));
                std::thread::spawn(move || {
                    while !done.load(Ordering::Acquire) {
                        match h.take() {
                            Some(e) => taken.lock().unwrap().push(e),
                            None => std::thread::yield_now(),
                        }
                    }
                })
            })
            .collect();
        let givers: Vec<_> = (0..GIVERS)
            .map(|g| {
                let (h, taken) = (Arc::clone(&h), Arc::clone(&taken));
                std::thread::spawn(move || {
                    for r in 0..ROUNDS {
                        let first = (g * ROUNDS + r) * 3;
                        h.give([first, first + 1, first + 2]);
                        while let Some(e) = h.take() {
                            taken.lock().unwrap().push(e);
                        }
                    }
                })
            })
            .collect();
        for g in givers {
            g.join().unwrap();
        }
        // Every giver has drained: nothing may be left for the thieves.
        assert_eq!(h.events.lock().unwrap().len(), 0, "an event was left behind");
        done.store(true, Ordering::Release);
        for t in thieves {
            t.join().unwrap();
        }
        let mut taken = Arc::try_unwrap(taken).unwrap().into_inner().unwrap();
        taken.sort_unstable();
        let expected: Vec<u32> = (0..GIVERS * ROUNDS * 3).collect();
        assert_eq!(taken, expected, "an event was lost or taken twice");
    }
}
