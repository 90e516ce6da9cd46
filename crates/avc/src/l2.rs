//! The shared decision cache of one snapshot: an insert-only, lock-free
//! open-addressing hash table.
//!
//! Why this shape: readers on every CPU probe it, so a lookup may only load
//! (no lock, no reference count, no write: seeds 000, 001, 004). Because a
//! table belongs to exactly one immutable snapshot, it never needs to
//! delete or invalidate: entries are published once and the whole table is
//! dropped with its snapshot, when no thread can still hold it (see
//! [`crate::publish`]). So readers can never meet freed memory, with no
//! epoch or hazard-pointer scheme. Memory is bounded by a threshold of
//! keys; when it is reached the AVC publishes a copy of the snapshot with
//! an empty table (a "reclaim").
//!
//! # Protocol
//!
//! * A slot is an `AtomicPtr<Entry>`: null (empty) or an entry that is
//!   fully written before it is published.
//! * INVARIANT (publish before share): an entry is written through a
//!   `Box` owned by one thread, then published by a compare-exchange with
//!   Release ordering; every load of a slot is Acquire, so whoever sees the
//!   pointer sees the whole entry. Entries are never written again.
//! * INVARIANT (stable slots): once a slot holds key K it holds K until the
//!   table drops; [`L2Table::grant`] only swaps in a newer version of K.
//!   So a probe for K that meets null can stop: K is in no later slot.
//! * INVARIANT (owned until drop): every published entry, including each
//!   replaced version (chained through `Entry::replaced`), is freed only by
//!   `Drop for L2Table`, which runs when no reference to the table is left.
//! * Inserts carry the snapshot sequence number they were computed under
//!   and are refused once the global sequence number moved on (the
//!   kernel's `avc_insert` seqno check): the table is about to be dropped,
//!   so filling it is wasted work.
//! * Load factor at most about 1/2 (the table has at least twice as many
//!   slots as the key threshold), so probes are short and a null slot
//!   always ends an unsuccessful lookup.

use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::Ordering;

use crate::sync::{AtomicPtr, AtomicU64, AtomicUsize, Immutable};

/// One published version of one key's value.
struct Entry<V> {
    key: Immutable<u64>,
    value: Immutable<V>,
    /// The version this one replaced (owned by the table), or null.
    replaced: *mut Entry<V>,
}

impl<V: Copy> Entry<V> {
    fn new(key: u64, value: V, replaced: *mut Entry<V>) -> Entry<V> {
        Entry { key: Immutable::new(key), value: Immutable::new(value), replaced }
    }
}

/// Bytes of one slot of the table: a pointer.
pub const SLOT_BYTES: usize = std::mem::size_of::<AtomicPtr<Entry<()>>>();

/// Bytes of one entry holding a `V` (allocator overhead not included).
pub const fn entry_bytes<V>() -> usize {
    std::mem::size_of::<Entry<V>>()
}

/// The outcome of [`L2Table::insert`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Insert<V> {
    /// Our entry is in; `threshold_reached` when this insert filled the
    /// table to its threshold (time to reclaim).
    Inserted { threshold_reached: bool },
    /// Another thread inserted the key first: its current value.
    Existing(V),
    /// Computed under an old snapshot: refused.
    Stale,
    /// The table holds its threshold of keys: refused.
    Full,
}

/// The outcome of [`L2Table::grant`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grant<V> {
    /// We replaced the entry: the new value.
    Replaced(V),
    /// The current value needs no upgrade (another thread did it): it.
    Unchanged(V),
    /// The key is not in the table.
    Absent,
}

/// An insert-only lock-free hash table from packed keys to `V`.
pub struct L2Table<V> {
    slots: Box<[AtomicPtr<Entry<V>>]>,
    mask: usize,
    /// The snapshot this table belongs to.
    seqno: u64,
    /// Most distinct keys before inserts are refused.
    threshold: usize,
    /// Distinct keys inserted.
    keys: AtomicUsize,
    /// Entries owned: keys plus replaced versions (what drop frees).
    entries: AtomicUsize,
    /// Owns the entries: opts out of the automatic `Send`/`Sync` (which the
    /// atomics would grant for any `V`) in favour of the bounded impls below.
    owns: PhantomData<*mut Entry<V>>,
}

// SAFETY: the table hands out only copies of `V` (to any thread: hence
// `V: Send`) read from entries shared by all threads (hence `V: Sync`),
// and frees entries only in `drop`, with exclusive access. The raw
// `replaced` pointers are only followed in `drop`.
unsafe impl<V: Send + Sync> Send for L2Table<V> {}
// SAFETY: as above; all shared mutation goes through atomics.
unsafe impl<V: Send + Sync> Sync for L2Table<V> {}

impl<V: Copy> L2Table<V> {
    /// An empty table for snapshot `seqno` holding at most `threshold` keys.
    pub fn new(seqno: u64, threshold: usize) -> L2Table<V> {
        let threshold = threshold.max(1);
        let len = threshold.saturating_mul(2).next_power_of_two();
        L2Table {
            slots: (0..len).map(|_| AtomicPtr::new(ptr::null_mut())).collect(),
            mask: len - 1,
            seqno,
            threshold,
            keys: AtomicUsize::new(0),
            entries: AtomicUsize::new(0),
            owns: PhantomData,
        }
    }

    /// Distinct keys inserted so far.
    pub fn len(&self) -> usize {
        // Relaxed: a statistic; nothing is read through it.
        self.keys.load(Ordering::Relaxed)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entries owned (keys plus replaced versions): what dropping frees.
    pub fn entries(&self) -> usize {
        // Relaxed: a statistic; nothing is read through it.
        self.entries.load(Ordering::Relaxed)
    }

    /// The current value of `key`. Loads only (the hit path).
    #[inline]
    pub fn lookup(&self, key: u64, hash: u64) -> Option<V> {
        let mut i = hash as usize & self.mask;
        for _ in 0..self.slots.len() {
            // Acquire: pairs with the Release of the publishing
            // compare-exchange, so the entry's fields are visible.
            let p = self.slots[i].load(Ordering::Acquire);
            if p.is_null() {
                return None;
            }
            // SAFETY: non-null slots point to published entries, fully
            // written before publication (publish before share) and freed
            // only when the table drops (owned until drop); `&self`
            // proves the table is alive.
            let entry = unsafe { &*p };
            if entry.key.get() == key {
                return Some(entry.value.get());
            }
            i = (i + 1) & self.mask;
        }
        None
    }

    /// Inserts `value` for `key`, computed under snapshot `computed_seqno`;
    /// `global` is the AVC's current sequence number. Exactly one of
    /// several concurrent inserts of a key wins; the others get its value.
    pub fn insert(&self, key: u64, hash: u64, value: V, computed_seqno: u64, global: &AtomicU64) -> Insert<V> {
        // Acquire: pairs with the publisher's Release store; a value
        // already replaced makes us refuse (a later replacement racing
        // with us is harmless: this whole table is then retired).
        if computed_seqno != self.seqno || global.load(Ordering::Acquire) != computed_seqno {
            return Insert::Stale;
        }
        // Relaxed: the threshold is a soft bound (racing inserts may pass
        // it by one each; the table has twice the slots).
        if self.keys.load(Ordering::Relaxed) >= self.threshold {
            return Insert::Full;
        }
        let fresh = Box::into_raw(Box::new(Entry::new(key, value, ptr::null_mut())));
        let mut i = hash as usize & self.mask;
        for _ in 0..self.slots.len() {
            let slot = &self.slots[i];
            // Acquire: as in `lookup`.
            let mut current = slot.load(Ordering::Acquire);
            if current.is_null() {
                // Release (in AcqRel) publishes the entry written above;
                // Acquire on failure lets us read the winner's entry.
                match slot.compare_exchange(ptr::null_mut(), fresh, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => {
                        // Relaxed: counters; no memory is published through them.
                        self.entries.fetch_add(1, Ordering::Relaxed);
                        let keys = self.keys.fetch_add(1, Ordering::Relaxed) + 1;
                        return Insert::Inserted { threshold_reached: keys >= self.threshold };
                    }
                    Err(winner) => current = winner,
                }
            }
            // SAFETY: `current` is non-null and published (see `lookup`).
            let entry = unsafe { &*current };
            if entry.key.get() == key {
                // SAFETY: `fresh` came from `Box::into_raw` above and was
                // never published (every compare-exchange failed).
                drop(unsafe { Box::from_raw(fresh) });
                return Insert::Existing(entry.value.get());
            }
            i = (i + 1) & self.mask;
        }
        // SAFETY: as above, `fresh` was never published.
        drop(unsafe { Box::from_raw(fresh) });
        Insert::Full
    }

    /// Replaces the value of `key` by `upgrade(current)` unless that is
    /// `None` (no upgrade needed). Racing upgrades retry on the newer value,
    /// so exactly one thread performs each distinct upgrade.
    pub fn grant(&self, key: u64, hash: u64, upgrade: impl Fn(&V) -> Option<V>) -> Grant<V> {
        let Some(slot) = self.slot_of(key, hash) else { return Grant::Absent };
        // Acquire: as in `lookup`.
        let mut current = slot.load(Ordering::Acquire);
        loop {
            // SAFETY: the slot held `key`, so `current` is a non-null
            // published entry (stable slots; see `lookup`).
            let old = unsafe { &*current }.value.get();
            let Some(value) = upgrade(&old) else { return Grant::Unchanged(old) };
            let fresh = Box::into_raw(Box::new(Entry::new(key, value, current)));
            // Release publishes the new version; Acquire on failure lets us
            // read the version that beat us.
            match slot.compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    // Relaxed: a counter; nothing is published through it.
                    self.entries.fetch_add(1, Ordering::Relaxed);
                    return Grant::Replaced(value);
                }
                Err(newer) => {
                    // SAFETY: the exchange failed, so `fresh` was never
                    // published and we still own it (dropping an `Entry`
                    // does not follow `replaced`).
                    drop(unsafe { Box::from_raw(fresh) });
                    current = newer;
                }
            }
        }
    }

    /// The slot holding `key`, if any.
    fn slot_of(&self, key: u64, hash: u64) -> Option<&AtomicPtr<Entry<V>>> {
        let mut i = hash as usize & self.mask;
        for _ in 0..self.slots.len() {
            let slot = &self.slots[i];
            // Acquire: as in `lookup`.
            let p = slot.load(Ordering::Acquire);
            if p.is_null() {
                return None;
            }
            // SAFETY: as in `lookup`.
            if unsafe { &*p }.key.get() == key {
                return Some(slot);
            }
            i = (i + 1) & self.mask;
        }
        None
    }
}

impl<V> Drop for L2Table<V> {
    fn drop(&mut self) {
        for slot in self.slots.iter() {
            // Acquire: `&mut self` already orders every publication before
            // us (the last `Arc` release synchronises); Acquire keeps that
            // true under loom, which checks each access on its own.
            let mut p = slot.load(Ordering::Acquire);
            while !p.is_null() {
                // SAFETY: every entry reachable from a slot, directly or
                // through `replaced`, was published by this table, is owned
                // by it alone (owned until drop) and is reached once: each
                // version is replaced at most once, by one newer version.
                let entry = unsafe { Box::from_raw(p) };
                p = entry.replaced;
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn insert_lookup_grant() {
        let global = AtomicU64::new(3);
        let t: L2Table<u32> = L2Table::new(3, 4);
        assert_eq!(t.lookup(1, 1), None);
        assert_eq!(t.insert(1, 1, 10, 3, &global), Insert::Inserted { threshold_reached: false });
        assert_eq!(t.insert(1, 1, 11, 3, &global), Insert::Existing(10));
        // Same hash, other key: probes past it.
        assert_eq!(t.insert(2, 1, 20, 3, &global), Insert::Inserted { threshold_reached: false });
        assert_eq!(t.lookup(2, 1), Some(20));
        assert_eq!(t.insert(5, 5, 50, 2, &global), Insert::Stale);
        assert_eq!(t.grant(1, 1, |v| (*v < 100).then_some(v + 100)), Grant::Replaced(110));
        assert_eq!(t.grant(1, 1, |v| (*v < 100).then_some(v + 100)), Grant::Unchanged(110));
        assert_eq!(t.grant(9, 9, |v| Some(*v)), Grant::Absent);
        assert_eq!(t.lookup(1, 1), Some(110));
        assert_eq!((t.len(), t.entries()), (2, 3));
        assert_eq!(t.insert(3, 3, 30, 3, &global), Insert::Inserted { threshold_reached: false });
        assert_eq!(t.insert(4, 4, 40, 3, &global), Insert::Inserted { threshold_reached: true });
        assert_eq!(t.insert(6, 6, 60, 3, &global), Insert::Full);
        global.store(4, Ordering::Relaxed);
        assert_eq!(t.insert(7, 7, 70, 3, &global), Insert::Stale);
    }
}
