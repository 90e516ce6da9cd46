//! The cache key and its hash: one `u64` per (source SID, target SID,
//! class), hashed with FxHash.
//!
//! Why one `u64`: comparing a key is one compare, hashing it one multiply,
//! and an L1 slot stays 32 bytes. The packing limits SIDs to 2^24 (16.7
//! million contexts; the kernel's sidtab on a busy system holds a few
//! thousand) and classes to 2^16 (a [`crate::Mapping`] allows 4096).
//!
//! The hash function is public so a benchmark's `HashMap` baseline can use
//! exactly the same one ([`KeyHasher`]): then "a hit costs about a hash map
//! lookup" compares lookups, not hash functions.

use std::hash::{BuildHasher, Hasher};

use crate::mapping::ClassIdx;
use crate::sid::Sid;

/// The `BuildHasher` of the caches, for baselines: `HashMap<u64, V, KeyHasher>`.
pub type KeyHasher = rustc_hash::FxBuildHasher;

/// A packed (source SID, target SID, class): bits 40..64 source, 16..40
/// target, 0..16 class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CacheKey(u64);

impl CacheKey {
    /// Packs a key. SIDs come from a [`crate::SidTable`], which never hands
    /// out more than [`crate::MAX_SIDS`], so nothing is lost.
    #[inline]
    pub fn new(source: Sid, target: Sid, class: ClassIdx) -> CacheKey {
        let s = u64::from(source.as_u32()) & 0xff_ffff;
        let t = u64::from(target.as_u32()) & 0xff_ffff;
        CacheKey(s << 40 | t << 16 | u64::from(class.as_u16()))
    }

    #[inline]
    pub fn as_u64(self) -> u64 {
        self.0
    }

    /// The source SID (exact: SIDs fit in 24 bits).
    pub(crate) fn source(self) -> Sid {
        Sid::from_u32((self.0 >> 40) as u32)
    }

    /// The target SID.
    pub(crate) fn target(self) -> Sid {
        Sid::from_u32((self.0 >> 16) as u32 & 0xff_ffff)
    }

    /// The class.
    pub(crate) fn class(self) -> ClassIdx {
        ClassIdx::from_u16(self.0 as u16)
    }

    /// The hash the caches use: FxHash of the packed key.
    #[inline]
    pub fn hash(self) -> u64 {
        key_hash(self.0)
    }
}

/// FxHash of a packed key, exactly as `HashMap<u64, _, KeyHasher>` hashes it.
#[inline]
pub fn key_hash(key: u64) -> u64 {
    let mut hasher = KeyHasher::default().build_hasher();
    hasher.write_u64(key);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_matches_the_hashmap_baseline() {
        let k = 0x1234_5678_9abc_def0u64;
        assert_eq!(key_hash(k), KeyHasher::default().hash_one(k));
    }

    #[test]
    fn unpacks_what_it_packed() {
        let (s, t) = (Sid::from_u32(0xab_cdef), Sid::from_u32(0x12_3456));
        let c = ClassIdx::from_u16(4095);
        let key = CacheKey::new(s, t, c);
        assert_eq!((key.source(), key.target(), key.class()), (s, t, c));
    }
}
