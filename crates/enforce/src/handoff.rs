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
    /// nothing is left, while two thieves take too. Once a giver's takes
    /// find nothing, each of its events has been taken (the promise the
    /// responders rely on), and in the end each was taken exactly once.
    #[test]
    fn every_event_given_is_taken_once() {
        use std::sync::atomic::{AtomicBool, AtomicU8};
        use std::sync::Arc;
        const GIVERS: usize = 4;
        const ROUNDS: usize = 20_000;
        const RUN: usize = 3;
        let h = Arc::new(Handoff::default());
        let taken: Arc<Vec<AtomicU8>> = Arc::new((0..GIVERS * ROUNDS * RUN).map(|_| AtomicU8::new(0)).collect());
        let done = Arc::new(AtomicBool::new(false));
        // Relaxed: the counts are read after every join.
        let take_one = |h: &Handoff<usize>, taken: &[AtomicU8]| {
            h.take().map(|e| taken[e].fetch_add(1, Ordering::Relaxed)).is_some()
        };
        let thieves: Vec<_> = (0..2)
            .map(|_| {
                let (h, taken, done) = (Arc::clone(&h), Arc::clone(&taken), Arc::clone(&done));
                std::thread::spawn(move || {
                    while !done.load(Ordering::Relaxed) {
                        if !take_one(&h, &taken) {
                            std::hint::spin_loop();
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
                        let first = (g * ROUNDS + r) * RUN;
                        h.give(first..first + RUN);
                        while take_one(&h, &taken) {}
                        let queue = h.events.lock().unwrap();
                        let left = (first..first + RUN).find(|e| queue.contains(e));
                        assert_eq!(left, None, "left behind after its giver found nothing to take");
                    }
                })
            })
            .collect();
        for g in givers {
            g.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
        for t in thieves {
            t.join().unwrap();
        }
        assert!(h.events.lock().unwrap().is_empty(), "an event was left behind");
        let not_once = taken.iter().position(|t| t.load(Ordering::Relaxed) != 1);
        assert_eq!(not_once, None, "an event was taken twice or never");
    }
}
