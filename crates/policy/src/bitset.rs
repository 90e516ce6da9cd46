//! Bit sets over symbol values (types, roles, categories, ...).
//!
//! The file stores libsepol "ebitmaps": sparse lists of 64-bit nodes. We
//! read them sparse (memory bounded by the file), check every bit against
//! the size of the symbol table it indexes, and only then expand them into
//! dense words (memory bounded by the symbol count). Bit `i` stands for
//! the symbol with value `i + 1`, as in libsepol.

use crate::wire::{Cursor, Result};

/// A dense, trimmed bit set: no trailing zero words, so `==` is set
/// equality.
#[derive(Clone, Default, PartialEq, Eq, Hash, Debug)]
pub struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn contains(&self, bit: u32) -> bool {
        let w = (bit / 64) as usize;
        self.words.get(w).is_some_and(|word| word & (1u64 << (bit % 64)) != 0)
    }

    pub fn insert(&mut self, bit: u32) {
        let w = (bit / 64) as usize;
        if self.words.len() <= w {
            self.words.resize(w + 1, 0);
        }
        self.words[w] |= 1u64 << (bit % 64);
    }

    pub fn remove(&mut self, bit: u32) {
        let w = (bit / 64) as usize;
        if let Some(word) = self.words.get_mut(w) {
            *word &= !(1u64 << (bit % 64));
        }
        self.trim();
    }

    fn trim(&mut self) {
        while self.words.last() == Some(&0) {
            self.words.pop();
        }
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Every bit of `other` is in `self` (libsepol `ebitmap_contains`).
    pub fn is_superset(&self, other: &BitSet) -> bool {
        other.words.iter().enumerate().all(|(i, &w)| {
            let mine = self.words.get(i).copied().unwrap_or(0);
            w & !mine == 0
        })
    }

    pub fn intersects(&self, other: &BitSet) -> bool {
        self.words.iter().zip(&other.words).any(|(a, b)| a & b != 0)
    }

    pub fn union_with(&mut self, other: &BitSet) {
        if self.words.len() < other.words.len() {
            self.words.resize(other.words.len(), 0);
        }
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    pub fn intersection(&self, other: &BitSet) -> BitSet {
        let mut out = BitSet { words: self.words.iter().zip(&other.words).map(|(a, b)| a & b).collect() };
        out.trim();
        out
    }

    /// The set bits in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let base = (i as u32) * 64;
            BitIter { word: w }.map(move |b| base + b)
        })
    }

    /// The highest set bit, if any.
    pub fn last(&self) -> Option<u32> {
        let w = self.words.last()?;
        Some((self.words.len() as u32 - 1) * 64 + 63 - w.leading_zeros())
    }
}

struct BitIter {
    word: u64,
}

impl Iterator for BitIter {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        if self.word == 0 {
            return None;
        }
        let b = self.word.trailing_zeros();
        self.word &= self.word - 1;
        Some(b)
    }
}

impl FromIterator<u32> for BitSet {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        let mut s = BitSet::new();
        for b in iter {
            s.insert(b);
        }
        s
    }
}

/// An ebitmap as stored in the file, not yet checked against a symbol
/// table.
#[derive(Clone, Debug, Default)]
pub(crate) struct RawBitmap {
    /// Offset of the ebitmap in the file, for errors found later.
    at: usize,
    nodes: Vec<(u32, u64)>,
}

/// Size in bytes of the smallest ebitmap node (start bit + map).
const NODE_BYTES: usize = 12;
const MAPSIZE: u32 = 64;

impl RawBitmap {
    /// Reads an ebitmap with libsepol's `ebitmap_read` checks: map size 64,
    /// high bit a multiple of 64, start bits aligned, increasing, below the
    /// high bit, no empty node.
    pub(crate) fn read(c: &mut Cursor<'_>) -> Result<RawBitmap> {
        let at = c.pos();
        let mapsize = c.u32()?;
        let highbit = c.u32()?;
        let count_at = c.pos();
        let count = c.u32()? as usize;
        if mapsize != MAPSIZE {
            return Err(c.err_at(at, format!("ebitmap map size {mapsize}, expected 64")));
        }
        if highbit == 0 {
            return Ok(RawBitmap { at, nodes: Vec::new() });
        }
        if highbit % MAPSIZE != 0 {
            return Err(c.err_at(at, format!("ebitmap high bit {highbit} is not a multiple of 64")));
        }
        if count == 0 {
            return Err(c.err_at(at, "ebitmap has a high bit but no nodes"));
        }
        c.check_count(count_at, "ebitmap node", count, NODE_BYTES)?;
        let mut nodes = Vec::with_capacity(count);
        let mut last: Option<u32> = None;
        for _ in 0..count {
            let node_at = c.pos();
            let start = c.u32()?;
            let map = c.u64()?;
            if start % MAPSIZE != 0 {
                return Err(c.err_at(node_at, format!("ebitmap start bit {start} is not a multiple of 64")));
            }
            if start > highbit - MAPSIZE {
                return Err(c.err_at(node_at, format!("ebitmap start bit {start} beyond high bit {highbit}")));
            }
            if map == 0 {
                return Err(c.err_at(node_at, "ebitmap node with no bit set"));
            }
            if last.is_some_and(|l| start <= l) {
                return Err(c.err_at(node_at, "ebitmap nodes out of order"));
            }
            last = Some(start);
            nodes.push((start, map));
        }
        Ok(RawBitmap { at, nodes })
    }

    /// Where the bitmap starts in the file.
    pub(crate) fn offset(&self) -> usize {
        self.at
    }

    /// Expands into a [`BitSet`], refusing any bit at or above `limit`
    /// (the number of symbols the bitmap indexes).
    pub(crate) fn into_bitset(self, limit: u32, what: &str) -> crate::wire::Result<BitSet> {
        let needed = self.nodes.last().map_or(0, |&(start, _)| start as usize / 64 + 1);
        if !expansion_budget::take(needed) {
            return Err(crate::error::PolicyError::new(
                "bitmap check",
                self.at,
                format!("{what} bitmaps expand to far more memory than the file's size justifies"),
            ));
        }
        let mut words = Vec::with_capacity(needed);
        for (start, map) in self.nodes {
            let top = u64::from(start) + 63 - u64::from(map.leading_zeros());
            if top >= u64::from(limit) {
                return Err(crate::error::PolicyError::new(
                    "bitmap check",
                    self.at,
                    format!("{what} bitmap names value {} but only {limit} exist", top + 1),
                ));
            }
            let w = (start / 64) as usize;
            if words.len() <= w {
                words.resize(w + 1, 0);
            }
            words[w] = map;
        }
        Ok(BitSet { words })
    }
}

/// Bounds the memory that dense expansion of bitmaps may take while one
/// policy is read: a small sparse bitmap in the file (one node at bit
/// 50,000) expands to many words, so without a budget a crafted file
/// could make memory grow with the square of its size. The budget is a
/// fixed multiple of the file size.
pub(crate) mod expansion_budget {
    use std::cell::Cell;

    /// Words of 8 bytes allowed per byte of policy file: dense bitmaps
    /// may take at most 64 times the file's size (the Debian policy needs
    /// about 0.6 times).
    const WORDS_PER_FILE_BYTE: usize = 8;

    thread_local! {
        static REMAINING: Cell<usize> = const { Cell::new(usize::MAX) };
    }

    /// Starts a budget for reading a file of `file_len` bytes on this
    /// thread; the guard restores "unlimited" when reading ends.
    pub(crate) fn start(file_len: usize) -> Guard {
        REMAINING.with(|r| r.set(file_len.saturating_mul(WORDS_PER_FILE_BYTE).saturating_add(1 << 16)));
        Guard
    }

    /// Takes `words` from the budget; false when it is exhausted.
    pub(crate) fn take(words: usize) -> bool {
        REMAINING.with(|r| match r.get().checked_sub(words) {
            Some(left) => {
                r.set(left);
                true
            }
            None => false,
        })
    }

    pub(crate) struct Guard;

    impl Drop for Guard {
        fn drop(&mut self) {
            REMAINING.with(|r| r.set(usize::MAX));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn superset_and_iteration() {
        let a: BitSet = [1, 5, 64, 200].into_iter().collect();
        let b: BitSet = [5, 200].into_iter().collect();
        assert!(a.is_superset(&b));
        assert!(!b.is_superset(&a));
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![1, 5, 64, 200]);
        assert_eq!(a.last(), Some(200));
        let mut c = a.clone();
        c.remove(200);
        assert_eq!(c.last(), Some(64));
        assert!(c.intersects(&b));
        assert_eq!(a.intersection(&b), b);
    }
}
