//! Helper responders asleep, and the signal that wakes them (see
//! crate::responder: pollers read, helpers sleep until a poller's read
//! brings more than one event or a slow decision is coming).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

/// Wakes helpers when pollers see more events than they take.
#[derive(Default)]
pub struct Backlog {
    /// Bumped by every signal; a helper sleeps only while it is unchanged.
    generation: Mutex<u64>,
    wake: Condvar,
    /// Helpers asleep or about to be: a signal with none costs no system call.
    sleeping: AtomicUsize,
}

impl Backlog {
    /// Wakes one sleeping helper, if any.
    pub fn signal(&self) {
        // Relaxed: a hint (module docs); a helper that registers just after
        // this load is at worst late by its timeout.
        if self.sleeping.load(Ordering::Relaxed) == 0 {
            return;
        }
        *self.generation.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        self.wake.notify_one();
    }

    /// Wakes every helper (shutdown).
    pub fn wake_all(&self) {
        *self.generation.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        self.wake.notify_all();
    }

    pub(crate) fn generation(&self) -> u64 {
        *self.generation.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sleeps until a signal after `seen`, a spurious wake-up or the
    /// timeout, whichever comes first.
    pub(crate) fn sleep(&self, seen: u64, timeout: Duration) {
        let guard = self.generation.lock().unwrap_or_else(PoisonError::into_inner);
        if *guard != seen {
            return;
        }
        // Relaxed: a hint, see `signal`.
        self.sleeping.fetch_add(1, Ordering::Relaxed);
        let _ = self.wake.wait_timeout(guard, timeout).unwrap_or_else(PoisonError::into_inner);
        self.sleeping.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn a_signal_without_sleepers_costs_nothing() {
        let b = Backlog::default();
        b.signal();
        assert_eq!(b.generation(), 0);
    }

    #[test]
    fn a_helper_that_missed_a_signal_does_not_sleep() {
        let b = Backlog::default();
        let seen = b.generation();
        b.wake_all();
        let start = Instant::now();
        b.sleep(seen, Duration::from_secs(10));
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_signal_wakes_a_sleeping_helper() {
        let b = Arc::new(Backlog::default());
        let sleeper = {
            let b = Arc::clone(&b);
            std::thread::spawn(move || {
                let start = Instant::now();
                b.sleep(b.generation(), Duration::from_secs(30));
                start.elapsed()
            })
        };
        // Signal until the sleeper has registered and been woken.
        while !sleeper.is_finished() {
            b.signal();
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(sleeper.join().unwrap() < Duration::from_secs(20));
        assert!(b.generation() >= 1);
    }
}
