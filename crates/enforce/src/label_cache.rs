//! The daemon's labels per inode: `(dev, ino)` -> SID, so that an
//! inode's label is read (its xattr, else its path matched against
//! file_contexts) once, not on every event (crate::objects).
//!
//! **Revalidation.** An entry holds the inode's ctime when its label was
//! read, and a lookup with another ctime misses: setting an xattr, by
//! anyone, changes the ctime. That alone is not enough where the
//! filesystem's ctime is coarse (no multigrain timestamps: a change
//! within one tick of the lookup keeps the ctime), so the daemon's own
//! label writes (a supervised relabel, a new object's label) also
//! [`LabelCache::forget`] the inode. A lookup in flight across that
//! forget would then insert the label it read before the write, under
//! the same ctime: each shard has a generation, bumped by every forget,
//! and an insert is dropped when its shard's generation moved since the
//! lookup began ([`Miss`]). The loom model `a_forgotten_label_is_never_put_back`
//! checks it.
//!
//! **Bound.** A daemon watching a busy filesystem sees new inodes without
//! end: each shard keeps at most its share of [`MAX_CACHED_INODES`]; an
//! inode past the bound costs one label lookup when next seen.

use rampart_avc::Sid;
use rustc_hash::FxHashMap;

use crate::sync::{Mutex, MutexGuard};

const SHARDS: usize = 64;
/// Inodes whose SID is kept (about 50 bytes each).
pub const MAX_CACHED_INODES: usize = 1 << 18;

/// An inode: `(st_dev, st_ino)`.
pub type Inode = (u64, u64);
/// A ctime: `(seconds, nanoseconds)`.
pub type Ctime = (i64, i64);

#[derive(Clone, Copy)]
struct Cached<V> {
    ctime: Ctime,
    label: V,
}

struct Shard<V> {
    entries: FxHashMap<Inode, Cached<V>>,
    /// Bumped by every forget in this shard.
    generation: u64,
}

/// A lookup that missed: where its label may be inserted, if nothing
/// was forgotten meanwhile.
#[must_use]
pub struct Miss {
    generation: u64,
}

/// See the module docs. `V`: a label (a SID in the daemon).
pub struct LabelCache<V = Sid> {
    shards: Vec<Mutex<Shard<V>>>,
}

impl<V> Default for LabelCache<V> {
    fn default() -> LabelCache<V> {
        let shard = || Mutex::new(Shard { entries: FxHashMap::default(), generation: 0 });
        LabelCache { shards: (0..SHARDS).map(|_| shard()).collect() }
    }
}

impl<V: Copy> LabelCache<V> {
    fn shard(&self, inode: Inode) -> MutexGuard<'_, Shard<V>> {
        let i = (inode.1 ^ inode.0.rotate_left(17)) as usize % SHARDS;
        // A poisoned shard holds whole entries: every write below is one
        // insert or remove.
        self.shards[i].lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The label of `inode` as it was at `ctime`, or a [`Miss`] to insert
    /// the label read now. Take the miss before reading the label.
    pub fn get(&self, inode: Inode, ctime: Ctime) -> Result<V, Miss> {
        let shard = self.shard(inode);
        match shard.entries.get(&inode) {
            Some(c) if c.ctime == ctime => Ok(c.label),
            _ => Err(Miss { generation: shard.generation }),
        }
    }

    /// Keeps `label`, read after `miss`, as `inode`'s label at `ctime`,
    /// unless a forget in its shard came in between.
    pub fn insert(&self, inode: Inode, ctime: Ctime, label: V, miss: Miss) {
        let mut shard = self.shard(inode);
        if shard.generation != miss.generation {
            return;
        }
        if shard.entries.len() >= MAX_CACHED_INODES / SHARDS && !shard.entries.contains_key(&inode) {
            // The first entry in the table's order: an arbitrary one.
            if let Some(victim) = shard.entries.keys().next().copied() {
                shard.entries.remove(&victim);
            }
        }
        shard.entries.insert(inode, Cached { ctime, label });
    }

    /// `inode`'s label was just written: its entry goes, and no lookup
    /// begun before puts one back.
    pub fn forget(&self, inode: Inode) {
        let mut shard = self.shard(inode);
        shard.generation = shard.generation.wrapping_add(1);
        shard.entries.remove(&inode);
    }

    /// Forgets every label (files were relabeled, file_contexts changed).
    pub fn clear(&self) {
        for s in &self.shards {
            let mut shard = s.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            shard.generation = shard.generation.wrapping_add(1);
            shard.entries.clear();
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    #[test]
    fn a_shard_never_holds_more_than_its_share() {
        let cache = LabelCache::<u32>::default();
        let cap = MAX_CACHED_INODES / SHARDS;
        // Inodes of one shard: the shard index ignores multiples of SHARDS.
        let inode = |i: u64| (0, i * SHARDS as u64);
        for i in 0..(cap as u64 + 100) {
            let miss = cache.get(inode(i), (0, 0)).err().unwrap();
            cache.insert(inode(i), (0, 0), 1u32, miss);
        }
        assert_eq!(cache.shard(inode(0)).entries.len(), cap);
        // The newest entry is kept.
        assert!(cache.get(inode(cap as u64 + 99), (0, 0)).is_ok());
    }

    #[test]
    fn a_label_is_kept_for_its_ctime_only() {
        let cache = LabelCache::<u32>::default();
        let miss = cache.get((1, 2), (10, 0)).err().unwrap();
        cache.insert((1, 2), (10, 0), 7u32, miss);
        assert_eq!(cache.get((1, 2), (10, 0)).ok(), Some(7u32));
        assert!(cache.get((1, 2), (10, 1)).is_err(), "another ctime misses");
    }

    #[test]
    fn a_lookup_across_a_forget_inserts_nothing() {
        let cache = LabelCache::<u32>::default();
        let miss = cache.get((1, 2), (10, 0)).err().unwrap();
        // The label is written and forgotten while the lookup reads it.
        cache.forget((1, 2));
        cache.insert((1, 2), (10, 0), 7u32, miss);
        assert!(cache.get((1, 2), (10, 0)).is_err());
        let miss = cache.get((1, 2), (10, 0)).err().unwrap();
        cache.insert((1, 2), (10, 0), 8u32, miss);
        assert_eq!(cache.get((1, 2), (10, 0)).ok(), Some(8u32));
    }

    /// Readers look labels up while a writer relabels the same inode again
    /// and again, its ctime never changing (a coarse clock): after each
    /// relabel, and once all are done, the cache holds the last label or
    /// nothing.
    #[test]
    fn stress_relabels_under_a_coarse_ctime() {
        let cache = Arc::new(LabelCache::<u32>::default());
        let label = Arc::new(AtomicU32::new(1));
        let done = Arc::new(AtomicU32::new(0));
        let inode = (3, 4);
        let readers: Vec<_> = (0..3)
            .map(|_| {
                let (cache, label, done) = (Arc::clone(&cache), Arc::clone(&label), Arc::clone(&done));
                std::thread::spawn(move || {
                    for _ in 0..200_000 {
                        if let Err(miss) = cache.get(inode, (5, 0)) {
                            // Acquire: the label the writer stored before its forget.
                            let read = label.load(Ordering::Acquire);
                            cache.insert(inode, (5, 0), read, miss);
                        }
                    }
                    // Relaxed: only ends the writer's loop.
                    done.fetch_add(1, Ordering::Relaxed);
                })
            })
            .collect();
        let mut stale = 0;
        let mut n = 1;
        while done.load(Ordering::Relaxed) < 3 && n < 10_000_000 {
            n += 1;
            // Release: pairs with the readers' Acquire.
            label.store(n, Ordering::Release);
            cache.forget(inode);
            // Whatever a reader inserts now read `n`: an older label is a
            // lookup from before the forget, put back.
            std::hint::spin_loop();
            if cache.get(inode, (5, 0)).is_ok_and(|l| l != n) {
                stale += 1;
            }
        }
        for r in readers {
            r.join().unwrap();
        }
        assert!(n > 100, "the writer relabeled while the readers ran ({n})");
        assert_eq!(stale, 0, "labels read before a relabel were put back after it ({stale} of {n})");
        if let Ok(cached) = cache.get(inode, (5, 0)) {
            assert_eq!(cached, n);
        }
    }
}
