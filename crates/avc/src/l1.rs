//! The per-thread first-level cache: a direct-mapped array of decisions.
//!
//! Why: owned by one thread, it is written with plain stores (no atomics,
//! no shared line: seed 004), and a hit is one hash, one compare and one
//! copy. It caches only decisions of the snapshot its thread holds, so it
//! is emptied whenever the thread adopts a new snapshot; an eviction just
//! overwrites the slot. Slots are `Cell`s: read and written through a
//! shared reference, so a module that calls back into the AVC during a
//! miss cannot alias a mutable borrow.

use std::cell::Cell;

use crate::decision::CachedAv;
use crate::key::CacheKey;
use crate::mapping::Perms;

/// No real key: a key's class field is below `MAX_CLASSES` (4096), never
/// 0xffff.
const EMPTY: u64 = u64::MAX;

/// A slot as three words: the key and the vector packed in pairs, so a
/// hit reads general-purpose registers straight from the slot (a 16-byte
/// struct copy went through a vector register and the stack).
#[derive(Clone, Copy)]
struct Slot {
    key: u64,
    /// `allowed | auditallow << 32`
    grants: u64,
    /// `auditdeny | enforced << 32`
    denials: u64,
}

impl Slot {
    fn new(key: u64, av: CachedAv) -> Slot {
        Slot {
            key,
            grants: u64::from(av.allowed.bits()) | u64::from(av.auditallow.bits()) << 32,
            denials: u64::from(av.auditdeny.bits()) | u64::from(av.enforced.bits()) << 32,
        }
    }

    #[inline]
    fn av(self) -> CachedAv {
        CachedAv {
            allowed: Perms::from_bits(self.grants as u32),
            auditallow: Perms::from_bits((self.grants >> 32) as u32),
            auditdeny: Perms::from_bits(self.denials as u32),
            enforced: Perms::from_bits((self.denials >> 32) as u32),
        }
    }
}

const EMPTY_SLOT: Slot = Slot { key: EMPTY, grants: 0, denials: 0 };

pub(crate) struct L1 {
    slots: Box<[Cell<Slot>]>,
    mask: usize,
}

impl L1 {
    /// A cache of `entries` slots, rounded up to a power of two.
    pub(crate) fn new(entries: usize) -> L1 {
        let len = entries.max(1).next_power_of_two();
        L1 { slots: (0..len).map(|_| Cell::new(EMPTY_SLOT)).collect(), mask: len - 1 }
    }

    #[inline]
    pub(crate) fn get(&self, key: CacheKey, hash: u64) -> Option<CachedAv> {
        let slot = self.slots[hash as usize & self.mask].get();
        (slot.key == key.as_u64()).then(|| slot.av())
    }

    #[inline]
    pub(crate) fn set(&self, key: CacheKey, hash: u64, av: CachedAv) {
        self.slots[hash as usize & self.mask].set(Slot::new(key.as_u64(), av));
    }

    pub(crate) fn clear(&self) {
        for slot in self.slots.iter() {
            slot.set(EMPTY_SLOT);
        }
    }
}
