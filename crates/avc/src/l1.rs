//! The per-thread first-level cache: a growing, 4-way set-associative
//! table of decisions with two candidate sets per key.
//!
//! Why: owned by one thread, it is written with plain stores (no atomics,
//! no shared line: seed 004), and a hit is one hash, one cache line,
//! four key compares in two SSE2 instructions and two `and`s. It caches
//! only decisions of the snapshot its thread holds, so it is emptied
//! whenever the thread adopts a new snapshot; an eviction just overwrites
//! a way. Slots are `Cell`s and every method is a leaf (it calls nothing
//! outside this module), so a module that calls back into the AVC during
//! a miss cannot alias anything here.
//!
//! # Layout
//!
//! A set is four ways. Its hot line (64 bytes, one cache line) holds the
//! four keys (split into low and high halves, for the SSE2 compare) and
//! two vectors per way, stored complemented so that applying one to a
//! request is a single `and`: `refused = !allowed` and `blocked =
//! enforced & !allowed` (denied and enforced: the complement of what
//! passes). That is all a check needs unless it audits. The audit
//! vectors (`auditallow`, `auditdeny`) sit in a parallel array of 32-byte
//! cold halves, read only by callers that use them (`has_perm`). An
//! entry costs 24 bytes in all ([`ENTRY_BYTES`]).
//!
//! # Placement
//!
//! A direct-mapped array loses a key whenever another lands in its slot
//! (with a shuffled working set of a quarter of the slots, about one
//! lookup in nine misses); a single 4-way set overflows when five keys
//! land in it. So a key has two candidate sets: it goes to its primary
//! set (low hash bits), or to a secondary set (other, mixed hash bits)
//! when the primary is full, and is evicted only when both are full (the
//! victim is chosen round robin: cheap, and no worse than LRU for a
//! shuffled stream). The hit path probes the primary set only; a key in
//! its secondary set is found on the out-of-line miss path, before the
//! shared L2.
//!
//! # Growth
//!
//! The table starts at [`INITIAL_ENTRIES`] and doubles (rehashing what it
//! holds) whenever a new key would fill it beyond a quarter, up to the
//! configured maximum: at a quarter full, fewer than one key in 200 has
//! to go to its secondary set, so nearly every hit takes the one-line
//! path, and a thread pays memory only for the working set it has. Sizes measured
//! with the hit workload of `rampart bench seeds` (4096 distinct keys): at a maximum of 8192
//! entries, a hit cost 1.53x a plain `HashMap` lookup (3.7% of the keys
//! in secondary sets); at 16384 (the default), 1.40x.

use std::cell::{Cell, UnsafeCell};

use crate::decision::{CachedAv, Decision};
use crate::mapping::Perms;

/// No real key: a key's class field is below `MAX_CLASSES` (4096), never
/// 0xffff.
const EMPTY: u64 = u64::MAX;

/// Ways per set.
pub(crate) const WAYS: usize = 4;

/// Bytes one entry costs: its share of a hot line (16) and of a cold
/// half (8).
pub const ENTRY_BYTES: usize = 24;

/// Entries a table starts with (or the maximum, if smaller).
pub const INITIAL_ENTRIES: usize = 1024;

/// The hot line of a set: keys and what deciding whether a check passes
/// needs.
#[repr(C, align(64))]
struct Set {
    /// Low and high halves of the keys: the x86-64 lookup compares four
    /// of each in one SSE2 instruction (16-byte aligned: offsets 0, 16).
    key_lo: [Cell<u32>; WAYS],
    key_hi: [Cell<u32>; WAYS],
    /// `!allowed`: what is denied.
    refused: [Cell<u32>; WAYS],
    /// `enforced & !allowed`: what is denied and enforced.
    blocked: [Cell<u32>; WAYS],
}

/// The cold half of a set: what only auditing needs.
#[repr(C, align(32))]
struct Cold {
    auditallow: [Cell<u32>; WAYS],
    auditdeny: [Cell<u32>; WAYS],
}

impl Set {
    fn empty() -> Set {
        Set {
            key_lo: [const { Cell::new(EMPTY as u32) }; WAYS],
            key_hi: [const { Cell::new((EMPTY >> 32) as u32) }; WAYS],
            refused: [const { Cell::new(0) }; WAYS],
            blocked: [const { Cell::new(0) }; WAYS],
        }
    }

    /// Bit `w` set when way `w` holds `key`. Branch-free (which way
    /// holds a key is unpredictable).
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn matches(&self, key: u64) -> u32 {
        use std::arch::x86_64::{
            _mm_and_si128, _mm_castsi128_ps, _mm_cmpeq_epi32, _mm_load_si128, _mm_movemask_ps, _mm_set1_epi32,
        };
        // SAFETY: SSE2 is part of the x86-64 baseline, so these
        // instructions exist on every target this compiles for. Each load
        // reads the 16 bytes of one `[Cell<u32>; 4]` of this set, 16-byte
        // aligned (`repr(C, align(64))`, offsets 0 and 16), initialised,
        // and not written during the load (an `L1` is used by one thread;
        // reading a `Cell` through a raw pointer is allowed).
        unsafe {
            let lo = _mm_cmpeq_epi32(_mm_load_si128(self.key_lo.as_ptr().cast()), _mm_set1_epi32(key as i32));
            let hi = _mm_cmpeq_epi32(_mm_load_si128(self.key_hi.as_ptr().cast()), _mm_set1_epi32((key >> 32) as i32));
            _mm_movemask_ps(_mm_castsi128_ps(_mm_and_si128(lo, hi))) as u32
        }
    }

    /// Bit `w` set when way `w` holds `key`: compares, shifts and ors.
    #[cfg(not(target_arch = "x86_64"))]
    #[inline(always)]
    fn matches(&self, key: u64) -> u32 {
        let mut mask = 0;
        for w in 0..WAYS {
            mask |= u32::from(self.key(w) == key) << w;
        }
        mask
    }

    /// The way holding `key`, if any.
    #[inline(always)]
    fn way_of(&self, key: u64) -> Option<usize> {
        let mask = self.matches(key);
        (mask != 0).then(|| mask.trailing_zeros() as usize)
    }

    fn key(&self, way: usize) -> u64 {
        u64::from(self.key_lo[way].get()) | u64::from(self.key_hi[way].get()) << 32
    }

    fn set_key(&self, way: usize, key: u64) {
        self.key_lo[way].set(key as u32);
        self.key_hi[way].set((key >> 32) as u32);
    }
}

impl Cold {
    fn empty() -> Cold {
        Cold { auditallow: [const { Cell::new(0) }; WAYS], auditdeny: [const { Cell::new(0) }; WAYS] }
    }
}

/// A cached vector, as the L1 keeps it. Copied out of the table (the
/// table may be reallocated by the next insert); inlined into a caller
/// that uses only `passes()`, the loads of the cold half are dead and
/// disappear, so such a check reads the hot line alone.
#[derive(Clone, Copy)]
pub(crate) struct Hit {
    refused: u32,
    blocked: u32,
    auditallow: u32,
    auditdeny: u32,
}

impl Hit {
    #[inline(always)]
    fn read(set: &Set, cold: &Cold, way: usize) -> Hit {
        Hit {
            refused: set.refused[way].get(),
            blocked: set.blocked[way].get(),
            auditallow: cold.auditallow[way].get(),
            auditdeny: cold.auditdeny[way].get(),
        }
    }

    /// `CachedAv::decide` of the cached vector.
    #[inline(always)]
    pub(crate) fn decide(self, requested: Perms, seqno: u64) -> Decision {
        let denied = requested.bits() & self.refused;
        // A subset of `denied` (`blocked` is within `refused`).
        let enforced = requested.bits() & self.blocked;
        let allowed = Perms::from_bits(requested.bits() ^ denied);
        let denied = Perms::from_bits(denied);
        Decision {
            allowed,
            denied,
            auditallow: allowed & Perms::from_bits(self.auditallow),
            auditdeny: denied & Perms::from_bits(self.auditdeny),
            // Something denied, nothing of it enforced. One compare, so
            // the hit path branches once (on this, almost never true), not
            // on each half: with `enforced` a subset of `denied`,
            // `denied - 1 < enforced - 1` (wrapping) holds exactly when
            // `enforced` is empty and `denied` is not.
            permissive: denied.bits().wrapping_sub(1) < enforced.wrapping_sub(1),
            seqno,
        }
    }

    /// The vector, up to decision equivalence: `enforced` comes back as
    /// `blocked`, exact outside `allowed` (the only bits `decide` uses).
    pub(crate) fn av(self) -> CachedAv {
        CachedAv {
            allowed: !Perms::from_bits(self.refused),
            auditallow: Perms::from_bits(self.auditallow),
            auditdeny: Perms::from_bits(self.auditdeny),
            enforced: Perms::from_bits(self.blocked),
        }
    }
}

/// The arrays of one table size.
struct Table {
    sets: Box<[Set]>,
    cold: Box<[Cold]>,
    /// Sets minus one (a power of two minus one).
    mask: usize,
}

impl Table {
    fn new(sets: usize) -> Table {
        Table {
            sets: (0..sets).map(|_| Set::empty()).collect(),
            cold: (0..sets).map(|_| Cold::empty()).collect(),
            mask: sets - 1,
        }
    }

    /// The set a key of hash `hash` goes to first.
    #[inline(always)]
    fn primary(&self, hash: u64) -> usize {
        hash as usize & self.mask
    }

    /// The set it goes to when its primary one is full: from other bits
    /// of the hash, mixed (the bits just above the primary's depend on
    /// fewer key bits).
    fn secondary(&self, hash: u64) -> usize {
        (hash.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize & self.mask
    }

    /// Set `i` (an index masked with `mask`), hot line and cold half.
    #[inline(always)]
    fn at(&self, i: usize) -> (&Set, &Cold) {
        debug_assert!(i <= self.mask && self.sets.len() == self.mask + 1 && self.cold.len() == self.mask + 1);
        // SAFETY: both arrays have `mask + 1` elements (`Table::new`; a
        // table is never resized, only replaced whole) and every caller
        // passes an index masked with `mask`, so `i` is in bounds.
        // Unchecked: the two bounds checks cost four instructions and two
        // registers on the hit path.
        unsafe { (self.sets.get_unchecked(i), self.cold.get_unchecked(i)) }
    }

    /// Where `key` is, or where it would go: the way holding it, else an
    /// empty way of its primary set, else of its secondary set; `None`
    /// when both are full of other keys. The flag tells whether the way
    /// is empty.
    fn place(&self, key: u64, hash: u64) -> Option<((&Set, &Cold), usize, bool)> {
        let (first, second) = (self.at(self.primary(hash)), self.at(self.secondary(hash)));
        let find =
            |key: u64| first.0.way_of(key).map(|w| (first, w)).or_else(|| second.0.way_of(key).map(|w| (second, w)));
        if let Some((set, way)) = find(key) {
            return Some((set, way, false));
        }
        find(EMPTY).map(|(set, way)| (set, way, true))
    }

    fn write((set, cold): (&Set, &Cold), way: usize, key: u64, av: CachedAv) {
        set.set_key(way, key);
        set.refused[way].set((!av.allowed).bits());
        set.blocked[way].set((av.enforced & !av.allowed).bits());
        cold.auditallow[way].set(av.auditallow.bits());
        cold.auditdeny[way].set(av.auditdeny.bits());
    }
}

pub(crate) struct L1 {
    /// Replaced whole when the cache grows. INVARIANT (leaf access): a
    /// reference into it lives only within one method of `L1`, none of
    /// which calls out of this module, and `L1` is not `Sync`; so the
    /// table is never replaced while borrowed.
    table: UnsafeCell<Table>,
    /// Most sets the table may grow to.
    max_sets: usize,
    /// Non-empty ways.
    occupied: Cell<usize>,
    /// Round-robin victim pointer for full sets.
    victim: Cell<usize>,
}

impl L1 {
    /// A cache of at most `entries` entries (rounded up to a power of two,
    /// at least one set), starting at [`INITIAL_ENTRIES`].
    pub(crate) fn new(entries: usize) -> L1 {
        let max_sets = entries.div_ceil(WAYS).max(1).next_power_of_two();
        let sets = (INITIAL_ENTRIES / WAYS).clamp(1, max_sets);
        L1 { table: UnsafeCell::new(Table::new(sets)), max_sets, occupied: Cell::new(0), victim: Cell::new(0) }
    }

    #[inline(always)]
    fn table(&self) -> &Table {
        // SAFETY: leaf access (see `table`): the only `&mut Table` is
        // taken in `grow`, which no borrow from here outlives.
        unsafe { &*self.table.get() }
    }

    /// Entries the table has now (sets times ways).
    #[cfg(test)]
    fn entries(&self) -> usize {
        (self.table().mask + 1) * WAYS
    }

    /// Looks `key` up in its primary set (the hit path).
    #[inline(always)]
    pub(crate) fn get(&self, key: u64, hash: u64) -> Option<Hit> {
        let table = self.table();
        let (set, cold) = table.at(table.primary(hash));
        let way = set.way_of(key)?;
        Some(Hit::read(set, cold, way))
    }

    /// Looks `key` up in its secondary set (after `get` missed).
    pub(crate) fn get_secondary(&self, key: u64, hash: u64) -> Option<Hit> {
        let table = self.table();
        let (set, cold) = table.at(table.secondary(hash));
        let way = set.way_of(key)?;
        Some(Hit::read(set, cold, way))
    }

    /// Caches `av` for `key`: in the way already holding `key` (a grant
    /// replacing its vector), else an empty way of its primary set, else
    /// of its secondary set, else over a victim of one of them. A new key
    /// that would fill the table beyond a quarter first doubles it (up to
    /// the maximum).
    pub(crate) fn set(&self, key: u64, hash: u64, av: CachedAv) {
        let must_grow = {
            let table = self.table();
            let cached = table.place(key, hash).is_some_and(|(_, _, empty)| !empty);
            !cached && self.occupied.get() >= (table.mask + 1) * WAYS / 4 && table.mask + 1 < self.max_sets
        };
        if must_grow {
            self.grow();
        }
        let table = self.table();
        match table.place(key, hash) {
            Some((set, way, empty)) => {
                if empty {
                    self.occupied.set(self.occupied.get() + 1);
                }
                Table::write(set, way, key, av);
            }
            None => {
                let victim = self.victim.get();
                self.victim.set(victim.wrapping_add(1));
                let i = if victim / WAYS % 2 == 0 { table.primary(hash) } else { table.secondary(hash) };
                Table::write(table.at(i), victim % WAYS, key, av);
            }
        }
    }

    /// Doubles the table, moving every entry into the new one.
    #[cold]
    #[inline(never)]
    fn grow(&self) {
        let bigger = Table::new((self.table().mask + 1) * 2);
        // SAFETY: leaf access: no reference into the table is alive here
        // (`set`, our only caller, re-borrows after we return).
        let old = std::mem::replace(unsafe { &mut *self.table.get() }, bigger);
        let table = self.table();
        let mut occupied = 0;
        for (set, cold) in old.sets.iter().zip(old.cold.iter()) {
            for way in 0..WAYS {
                let key = set.key(way);
                if key == EMPTY {
                    continue;
                }
                let hash = crate::key::key_hash(key);
                // Twice the sets, each key of which came from one old set:
                // a new home is all but certain; a key without one is
                // dropped (a later miss recomputes it).
                if let Some((place, new_way, _)) = table.place(key, hash) {
                    Table::write(place, new_way, key, Hit::read(set, cold, way).av());
                    occupied += 1;
                }
            }
        }
        self.occupied.set(occupied);
    }

    /// Empties the cache, keeping its size (a store per way: about 16 K
    /// stores at the default maximum, once per publish per thread).
    pub(crate) fn clear(&self) {
        if self.occupied.get() == 0 {
            return;
        }
        for set in self.table().sets.iter() {
            for way in 0..WAYS {
                set.set_key(way, EMPTY);
            }
        }
        self.occupied.set(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::key_hash;

    fn av(n: u32) -> CachedAv {
        CachedAv {
            allowed: Perms::from_bits(n),
            auditallow: Perms::from_bits(n + 1),
            auditdeny: Perms::from_bits(n + 2),
            // Disjoint from `allowed`: the L1 keeps `enforced` only outside it.
            enforced: Perms::from_bits(!n & 0x0ff0),
        }
    }

    fn found(l1: &L1, key: u64) -> Option<CachedAv> {
        let hash = key_hash(key);
        l1.get(key, hash).or_else(|| l1.get_secondary(key, hash)).map(Hit::av)
    }

    #[test]
    fn both_sets_fill_then_evict() {
        // One set: primary and secondary coincide, four ways.
        let l1 = L1::new(4);
        assert_eq!(l1.entries(), 4);
        for k in 0..4u64 {
            l1.set(k, key_hash(k), av(k as u32 * 10));
        }
        for k in 0..4u64 {
            assert_eq!(found(&l1, k), Some(av(k as u32 * 10)));
        }
        assert!(found(&l1, 9).is_none());
        // Same key: replaced in place, nothing evicted.
        l1.set(2, key_hash(2), av(99));
        assert_eq!(found(&l1, 2), Some(av(99)));
        assert!((0..4).all(|k| found(&l1, k).is_some()));
        // A fifth key evicts one.
        l1.set(4, key_hash(4), av(40));
        assert_eq!(found(&l1, 4), Some(av(40)));
        assert_eq!((0..5).filter(|&k| found(&l1, k).is_some()).count(), 4);
        l1.clear();
        assert!((0..5).all(|k| found(&l1, k).is_none()));
    }

    #[test]
    fn grows_to_its_maximum_keeping_entries() {
        let l1 = L1::new(16384);
        assert_eq!(l1.entries(), INITIAL_ENTRIES);
        let keys: Vec<u64> = (0..4096u64).map(|k| k.wrapping_mul(0x1234_5678_9abc_def1) >> 4).collect();
        for (i, &k) in keys.iter().enumerate() {
            l1.set(k, key_hash(k), av(i as u32));
        }
        assert_eq!(l1.entries(), 16384);
        let kept = keys.iter().enumerate().filter(|&(i, &k)| found(&l1, k) == Some(av(i as u32))).count();
        assert!(kept >= 4090, "{kept} of 4096 kept");
        // Only a few keys in their secondary set.
        let primary = keys.iter().filter(|&&k| l1.get(k, key_hash(k)).is_some()).count();
        assert!(primary >= 4000, "{primary} of 4096 in their primary set");
        l1.clear();
        assert!(keys.iter().all(|&k| found(&l1, k).is_none()));
        assert_eq!(l1.entries(), 16384, "clearing keeps the size");
    }

    #[test]
    fn decide_matches_the_vector() {
        let l1 = L1::new(64);
        for n in [0u32, 0b0011, 0xffff_0000, u32::MAX] {
            for enforced in [0u32, u32::MAX, 0b0101] {
                let v = CachedAv {
                    allowed: Perms::from_bits(n),
                    auditallow: Perms::from_bits(n >> 1),
                    auditdeny: Perms::from_bits(!n),
                    enforced: Perms::from_bits(enforced),
                };
                l1.set(7, key_hash(7), v);
                let hit = l1.get(7, key_hash(7)).or_else(|| l1.get_secondary(7, key_hash(7))).unwrap();
                for requested in [0u32, 1, 0b0110, 0x8000_0001, u32::MAX] {
                    let r = Perms::from_bits(requested);
                    assert_eq!(hit.decide(r, 3), v.decide(r, 3), "{n:x} {enforced:x} {requested:x}");
                    assert_eq!(hit.av().decide(r, 3), v.decide(r, 3));
                }
            }
        }
    }
}
