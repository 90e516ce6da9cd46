//! An append-only array whose elements never move, readable without locks.
//!
//! Why: the SID table and the per-policy context cache are read on every
//! cache miss by many threads at once and grow while they are read. A
//! `RwLock<Vec<T>>` would put a shared, written lock word on every read
//! (seed 004); a `Vec` that reallocates would move elements under readers.
//! Here the array is a fixed list of segments of doubling size (64, 128,
//! 256, ...), each allocated once, on first use, and never moved or freed
//! before the array itself. Every segment and every element sits in a
//! `std::sync::OnceLock`, whose completion is a Release store and whose
//! `get` is an Acquire load: a reader that sees an element sees all of it,
//! and a reader never waits (only two initialisers of the same element
//! wait for each other, which happens on cold paths only).

use std::sync::OnceLock;

/// Elements in the first segment; segment `k` holds `FIRST_SEGMENT << k`.
const FIRST_SEGMENT: usize = 64;
/// Number of segments: 64 × (2^19 − 1) elements, more than the 2^24 SIDs
/// a cache key can name (see [`crate::key`]).
const SEGMENTS: usize = 19;

pub(crate) struct SegmentedVec<T> {
    segments: [OnceLock<Box<[OnceLock<T>]>>; SEGMENTS],
}

impl<T> SegmentedVec<T> {
    pub(crate) fn new() -> Self {
        SegmentedVec { segments: std::array::from_fn(|_| OnceLock::new()) }
    }

    /// The element at `index`, if it was initialised.
    pub(crate) fn get(&self, index: usize) -> Option<&T> {
        let (segment, offset) = locate(index);
        self.segments.get(segment)?.get()?.get(offset)?.get()
    }

    /// The element at `index`, initialised by `init` if it was not; `None`
    /// only when `index` is beyond the capacity.
    pub(crate) fn get_or_init(&self, index: usize, init: impl FnOnce() -> T) -> Option<&T> {
        let (segment, offset) = locate(index);
        let segment = self
            .segments
            .get(segment)?
            .get_or_init(|| (0..FIRST_SEGMENT << segment).map(|_| OnceLock::new()).collect());
        Some(segment.get(offset)?.get_or_init(init))
    }
}

/// (segment, offset) of `index`: segment `k` starts at `64 × (2^k − 1)`.
fn locate(index: usize) -> (usize, usize) {
    let scaled = index / FIRST_SEGMENT + 1;
    let segment = (usize::BITS - 1 - scaled.leading_zeros()) as usize;
    let start = FIRST_SEGMENT * ((1usize << segment) - 1);
    (segment, index - start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_tile_the_index_space() {
        assert_eq!(locate(0), (0, 0));
        assert_eq!(locate(63), (0, 63));
        assert_eq!(locate(64), (1, 0));
        assert_eq!(locate(191), (1, 127));
        assert_eq!(locate(192), (2, 0));
        let last = FIRST_SEGMENT * ((1 << SEGMENTS) - 1) - 1;
        assert_eq!(locate(last), (SEGMENTS - 1, (FIRST_SEGMENT << (SEGMENTS - 1)) - 1));
        assert!(locate(1 << 24).0 < SEGMENTS);
    }

    #[test]
    fn elements_stay_put_and_initialise_once() {
        let v = SegmentedVec::new();
        assert!(v.get(5).is_none());
        assert_eq!(v.get_or_init(5, || 50), Some(&50));
        assert_eq!(v.get_or_init(5, || 99), Some(&50));
        let first = v.get(5).map(|r| r as *const i32);
        for i in 0..1000 {
            v.get_or_init(i, || i as i32);
        }
        assert_eq!(v.get(5).map(|r| r as *const i32), first);
        assert_eq!(v.get(999), Some(&999));
        assert!(v.get_or_init(usize::MAX / 2, || 0).is_none());
    }
}
