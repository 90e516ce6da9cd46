//! A lock-free token bucket for audit lines (the kernel's
//! `audit_rate_limit`).
//!
//! Why here and lock-free: the limit is applied by the checking thread,
//! before the record is even built, so a flood of denials costs one
//! compare-and-swap per event and never reaches the queue. It is the
//! generic cell rate algorithm, equivalent to a token bucket of `burst`
//! tokens refilled at `per_second`: one atomic word holds the theoretical
//! arrival time (TAT) of the next conforming event; an event at time `now`
//! conforms when `TAT - now <= (burst - 1) * interval`, and then moves TAT
//! on by one interval.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// At most `per_second` lines per second on average, up to `burst` at
/// once. A `per_second` of 0 means no limit, as `audit_rate_limit=0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    pub per_second: u32,
    /// Bucket size; 0 counts as 1.
    pub burst: u32,
}

impl RateLimit {
    /// `n` lines per second with a burst of `n` (a full second's worth).
    pub fn per_second(n: u32) -> RateLimit {
        RateLimit { per_second: n, burst: n }
    }
}

/// The shared bucket. `admit` is wait-free for one caller and lock-free
/// for many.
#[derive(Debug)]
pub struct RateLimiter {
    origin: Instant,
    /// Nanoseconds per token.
    interval: u64,
    /// `(burst - 1) * interval`.
    tolerance: u64,
    /// Theoretical arrival time of the next conforming event, in
    /// nanoseconds since `origin`.
    tat: AtomicU64,
}

impl RateLimiter {
    /// A full bucket; `None` for an unlimited rate.
    pub fn new(limit: RateLimit) -> Option<RateLimiter> {
        if limit.per_second == 0 {
            return None;
        }
        let interval = 1_000_000_000 / u64::from(limit.per_second);
        let tolerance = interval.saturating_mul(u64::from(limit.burst.max(1) - 1));
        Some(RateLimiter { origin: Instant::now(), interval, tolerance, tat: AtomicU64::new(0) })
    }

    /// Takes a token if one is left: true when the event may be written.
    pub fn admit(&self) -> bool {
        self.admit_at(self.now())
    }

    /// [`RateLimiter::admit`] at `now` nanoseconds since creation (for
    /// tests and callers with their own clock).
    pub fn admit_at(&self, now: u64) -> bool {
        // Relaxed everywhere: `tat` is a self-contained counter that
        // publishes no other memory; the compare-and-swap alone makes
        // each token taken once.
        let mut tat = self.tat.load(Ordering::Relaxed);
        loop {
            let base = tat.max(now);
            if base - now > self.tolerance {
                return false;
            }
            // Relaxed (both): as above, nothing but `tat` is published.
            match self.tat.compare_exchange_weak(tat, base + self.interval, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(current) => tat = current,
            }
        }
    }

    fn now(&self) -> u64 {
        // u64 nanoseconds last 584 years.
        u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_rate() {
        let l = RateLimiter::new(RateLimit::per_second(100)).unwrap();
        let admitted = (0..1000).filter(|_| l.admit_at(0)).count();
        assert_eq!(admitted, 100);
        // 10 ms later: one more token.
        assert!(l.admit_at(10_000_000));
        assert!(!l.admit_at(10_000_000));
        // A second later: a full second's worth, no more.
        let later = (0..1000).filter(|_| l.admit_at(1_010_000_000)).count();
        assert_eq!(later, 100);
    }

    #[test]
    fn zero_is_unlimited() {
        assert!(RateLimiter::new(RateLimit::per_second(0)).is_none());
    }
}
