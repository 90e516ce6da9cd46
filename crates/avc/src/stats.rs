//! Cache statistics, counted per thread and summed on demand, printed like
//! the kernel's `/sys/fs/selinux/avc/cache_stats`.
//!
//! Why per thread: a shared counter bumped on every lookup is the seed 004
//! bottleneck in miniature. Each thread owns a row (`ThreadStats`, in its
//! thread slot, which no other thread writes) and is its row's only
//! writer, so an increment is a plain load and store, not a
//! read-modify-write instruction; `Avc::stats` reads the rows from another
//! thread, so the fields are atomics (Relaxed: a reader wants recent
//! numbers, not ordering with other memory).
//!
//! Kernel semantics: `lookups` counts checks, `misses` the ones that had to
//! compute (found in neither cache), `hits = lookups - misses` as the
//! kernel prints it; `allocations` are entries that entered an L2 table
//! (first inserts and permissive grants), `reclaims` entries discarded
//! because their table reached its threshold, `frees` entries freed when
//! their table was dropped. Frees are counted by the thread that released
//! the table's last snapshot reference at a point the AVC controls (a
//! refresh, `quiesce`, a publish); a snapshot whose last reference goes
//! elsewhere (the AVC itself being dropped) is freed uncounted.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// One thread's counters, inside its thread slot. INVARIANT (single
/// writer): only the thread holding the slot's claim writes the row (rows
/// pass to a new thread only after the old one released the slot).
#[derive(Debug, Default)]
pub(crate) struct ThreadStats {
    lookups: AtomicU64,
    misses: AtomicU64,
    allocations: AtomicU64,
    reclaims: AtomicU64,
    frees: AtomicU64,
}

/// Adds `n` to a single-writer counter: load and store, no RMW.
#[inline]
fn add(counter: &AtomicU64, n: u64) {
    // Relaxed: the owner is the only writer (so no update is lost) and
    // readers need no ordering with other memory.
    counter.store(counter.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
}

impl ThreadStats {
    #[inline]
    pub(crate) fn count_lookup(&self) {
        add(&self.lookups, 1);
    }

    pub(crate) fn count_miss(&self) {
        add(&self.misses, 1);
    }

    pub(crate) fn count_allocation(&self) {
        add(&self.allocations, 1);
    }

    pub(crate) fn count_reclaims(&self, entries: usize) {
        add(&self.reclaims, entries as u64);
    }

    pub(crate) fn count_frees(&self, entries: usize) {
        add(&self.frees, entries as u64);
    }

    pub(crate) fn row(&self) -> StatsRow {
        // Relaxed: see `add`. Misses are read first: they never exceed
        // lookups in the owner's order, and a late lookup only adds hits.
        let misses = self.misses.load(Ordering::Relaxed);
        let lookups = self.lookups.load(Ordering::Relaxed);
        StatsRow {
            lookups,
            hits: lookups.saturating_sub(misses),
            misses,
            allocations: self.allocations.load(Ordering::Relaxed),
            reclaims: self.reclaims.load(Ordering::Relaxed),
            frees: self.frees.load(Ordering::Relaxed),
        }
    }
}

/// One thread's numbers (a CPU's line in the kernel's file).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatsRow {
    pub lookups: u64,
    pub hits: u64,
    pub misses: u64,
    pub allocations: u64,
    pub reclaims: u64,
    pub frees: u64,
}

/// Every thread's row, in the order threads first used the AVC.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub rows: Vec<StatsRow>,
}

impl Stats {
    /// The column sums.
    pub fn total(&self) -> StatsRow {
        self.rows.iter().fold(StatsRow::default(), |t, r| StatsRow {
            lookups: t.lookups + r.lookups,
            hits: t.hits + r.hits,
            misses: t.misses + r.misses,
            allocations: t.allocations + r.allocations,
            reclaims: t.reclaims + r.reclaims,
            frees: t.frees + r.frees,
        })
    }
}

/// The kernel's format (selinuxfs `sel_avc_stats_seq_show`): a header,
/// then one line of six numbers per thread.
impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "lookups hits misses allocations reclaims frees")?;
        for r in &self.rows {
            writeln!(f, "{} {} {} {} {} {}", r.lookups, r.hits, r.misses, r.allocations, r.reclaims, r.frees)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_the_kernel() {
        let t = ThreadStats::default();
        for _ in 0..5 {
            t.count_lookup();
        }
        t.count_miss();
        t.count_allocation();
        t.count_frees(1);
        let stats = Stats { rows: vec![t.row(), StatsRow::default()] };
        assert_eq!(stats.to_string(), "lookups hits misses allocations reclaims frees\n5 4 1 1 0 1\n0 0 0 0 0 0\n");
        assert_eq!(stats.total().hits, 4);
    }
}
