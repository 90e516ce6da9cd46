//! Loom models of the AVC's lock-free protocols, run on the very types the
//! AVC uses (`rampart_avc::protocol`), which take their atomics and `Arc`
//! from loom in this build:
//!
//! ```sh
//! RUSTFLAGS="--cfg loom" cargo test -p rampart-avc --test loom --release
//! ```
//!
//! Each model lists every legal outcome and asserts that nothing else
//! happens, in every interleaving loom explores (preemption bound 3).
#![cfg(loom)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::Ordering::SeqCst;

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicU64};
use loom::sync::Arc;
use loom::thread;
use rampart_avc::protocol::{Claim, Grant, Insert, L2Table, Published, Reader, Versioned};

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(f);
}

/// Which snapshots (by seqno, 1 and 2) have been dropped.
type DropFlags = Arc<[AtomicBool; 3]>;

fn drop_flags() -> DropFlags {
    Arc::new([AtomicBool::new(false), AtomicBool::new(false), AtomicBool::new(false)])
}

/// A snapshot with two fields a torn read would disagree on.
struct Snap {
    seqno: u64,
    a: u64,
    b: u64,
    dropped: DropFlags,
}

impl Snap {
    fn new(seqno: u64, dropped: &DropFlags) -> Snap {
        Snap { seqno, a: seqno * 10, b: seqno * 10, dropped: dropped.clone() }
    }
}

impl Versioned for Snap {
    fn seqno(&self) -> u64 {
        self.seqno
    }
}

impl Drop for Snap {
    fn drop(&mut self) {
        self.dropped[self.seqno as usize].store(true, SeqCst);
    }
}

/// Publication: a reader sees the old or the new snapshot, whole; having
/// seen the new number it never loads the old snapshot; a snapshot is
/// dropped only after its last reader released it.
#[test]
fn publication_old_or_new_never_torn_never_freed_while_held() {
    model(|| {
        let dropped = drop_flags();
        let published = Arc::new(Published::new(Arc::new(Snap::new(1, &dropped))));
        let reader = {
            let published = published.clone();
            let dropped = dropped.clone();
            thread::spawn(move || {
                let mut reader: Reader<Snap> = Reader::new();
                let mut seen = Vec::new();
                for _ in 0..2 {
                    let global = published.seqno();
                    if !reader.is_current(&published) {
                        drop(reader.refresh(&published));
                        // Having seen `global`, the load is that snapshot or newer.
                        assert!(reader.seqno() >= global);
                    }
                    let snap = reader.held().unwrap();
                    assert!(snap.seqno == 1 || snap.seqno == 2);
                    assert_eq!((snap.a, snap.b), (snap.seqno * 10, snap.seqno * 10));
                    assert!(!dropped[snap.seqno as usize].load(SeqCst), "held snapshot was dropped");
                    seen.push(snap.seqno);
                }
                // Numbers never go back.
                assert!(seen[0] <= seen[1]);
                drop(reader.release());
            })
        };
        let old = published.publish(Arc::new(Snap::new(2, &dropped)));
        assert_eq!(old.seqno, 1);
        drop(old);
        reader.join().unwrap();
        // Every holder of snapshot 1 released it: it is gone; 2 is current.
        assert!(dropped[1].load(SeqCst));
        assert!(!dropped[2].load(SeqCst));
        assert_eq!(published.seqno(), 2);
    });
}

/// A module that records whether a check is running in it.
struct Module {
    in_check: AtomicBool,
    freed: Arc<AtomicBool>,
}

impl Module {
    fn check(&self) {
        self.in_check.store(true, SeqCst);
        thread::yield_now();
        assert!(!self.freed.load(SeqCst));
        self.in_check.store(false, SeqCst);
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        assert!(!self.in_check.load(SeqCst), "module freed during a check");
        self.freed.store(true, SeqCst);
    }
}

struct ModuleSnap {
    seqno: u64,
    modules: Vec<Arc<Module>>,
}

impl Versioned for ModuleSnap {
    fn seqno(&self) -> u64 {
        self.seqno
    }
}

/// Module unregister: the module is freed only after the in-flight check
/// finished (no per-call reference count), and it is freed once every
/// thread moved on.
#[test]
fn unregistered_module_freed_only_after_in_flight_check() {
    model(|| {
        let freed = Arc::new(AtomicBool::new(false));
        let module = Arc::new(Module { in_check: AtomicBool::new(false), freed: freed.clone() });
        let published = Arc::new(Published::new(Arc::new(ModuleSnap { seqno: 1, modules: vec![module] })));
        let checker = {
            let published = published.clone();
            thread::spawn(move || {
                let mut reader: Reader<ModuleSnap> = Reader::new();
                for _ in 0..2 {
                    if !reader.is_current(&published) {
                        drop(reader.refresh(&published));
                    }
                    for m in &reader.held().unwrap().modules {
                        m.check();
                    }
                }
                drop(reader.release());
            })
        };
        // Unregister: publish without the module, drop our reference.
        drop(published.publish(Arc::new(ModuleSnap { seqno: 2, modules: Vec::new() })));
        checker.join().unwrap();
        assert!(freed.load(SeqCst), "module leaked after every thread moved on");
    });
}

const KEY: u64 = 7;
const HASH: u64 = 3;

/// Concurrent inserts of one key: exactly one wins, the other gets the
/// winner's value; a concurrent lookup sees nothing or a whole entry.
#[test]
fn l2_insert_race_one_winner_lookups_see_whole_entries() {
    model(|| {
        let global = Arc::new(AtomicU64::new(1));
        let table: Arc<L2Table<(u64, u64)>> = Arc::new(L2Table::new(1, 4));
        let inserters: Vec<_> = [1u64, 2]
            .into_iter()
            .map(|v| {
                let (table, global) = (table.clone(), global.clone());
                thread::spawn(move || (v, table.insert(KEY, HASH, (v, v), 1, &global)))
            })
            .collect();
        let looker = {
            let table = table.clone();
            thread::spawn(move || table.lookup(KEY, HASH))
        };
        match looker.join().unwrap() {
            None => {}
            Some((a, b)) => assert!(a == b && (a == 1 || a == 2), "torn or foreign entry {a} {b}"),
        }
        let results: Vec<_> = inserters.into_iter().map(|t| t.join().unwrap()).collect();
        let winners: Vec<u64> =
            results.iter().filter(|(_, r)| matches!(r, Insert::Inserted { .. })).map(|(v, _)| *v).collect();
        assert_eq!(winners.len(), 1, "{results:?}");
        let winner = winners[0];
        for (_, r) in &results {
            assert!(matches!(r, Insert::Inserted { .. }) || *r == Insert::Existing((winner, winner)), "{results:?}");
        }
        assert_eq!(table.lookup(KEY, HASH), Some((winner, winner)));
        assert_eq!(table.len(), 1);
    });
}

/// Two keys colliding on one slot, inserted at once: both land (one
/// probes past the other) and both are found.
#[test]
fn l2_colliding_keys_both_land() {
    model(|| {
        let global = Arc::new(AtomicU64::new(1));
        let table: Arc<L2Table<(u64, u64)>> = Arc::new(L2Table::new(1, 4));
        let threads: Vec<_> = [KEY, KEY + 1]
            .into_iter()
            .map(|k| {
                let (table, global) = (table.clone(), global.clone());
                thread::spawn(move || table.insert(k, HASH, (k, k), 1, &global))
            })
            .collect();
        for t in threads {
            assert_eq!(t.join().unwrap(), Insert::Inserted { threshold_reached: false });
        }
        assert_eq!(table.lookup(KEY, HASH), Some((KEY, KEY)));
        assert_eq!(table.lookup(KEY + 1, HASH), Some((KEY + 1, KEY + 1)));
    });
}

/// An insert computed under seqno 1 racing with a publish of seqno 2 is
/// either in (it checked first; the table is about to be retired anyway)
/// or refused; once the publish is visible it is always refused.
#[test]
fn l2_stale_insert_refused() {
    model(|| {
        let global = Arc::new(AtomicU64::new(1));
        let table: Arc<L2Table<(u64, u64)>> = Arc::new(L2Table::new(1, 4));
        let inserter = {
            let (table, global) = (table.clone(), global.clone());
            thread::spawn(move || table.insert(KEY, HASH, (1, 1), 1, &global))
        };
        global.store(2, SeqCst);
        let outcome = inserter.join().unwrap();
        assert!(matches!(outcome, Insert::Inserted { .. } | Insert::Stale), "{outcome:?}");
        assert_eq!(table.insert(KEY + 1, HASH, (2, 2), 1, &global), Insert::Stale);
        assert_eq!(table.lookup(KEY + 1, HASH), None);
    });
}

/// Permissive grant: two threads upgrading the same entry at once; one
/// replaces, the other sees the upgrade done (so the denial is reported
/// once); readers see the old or the new version, whole.
#[test]
fn l2_grant_race_one_replaces() {
    model(|| {
        let global = Arc::new(AtomicU64::new(1));
        let table: Arc<L2Table<(u64, u64)>> = Arc::new(L2Table::new(1, 4));
        assert_eq!(table.insert(KEY, HASH, (1, 1), 1, &global), Insert::Inserted { threshold_reached: false });
        let granters: Vec<_> = (0..2)
            .map(|_| {
                let table = table.clone();
                thread::spawn(move || table.grant(KEY, HASH, |v| (v.0 == 1).then_some((2, 2))))
            })
            .collect();
        let seen = table.lookup(KEY, HASH);
        assert!(seen == Some((1, 1)) || seen == Some((2, 2)), "{seen:?}");
        let outcomes: Vec<_> = granters.into_iter().map(|t| t.join().unwrap()).collect();
        let replaced = outcomes.iter().filter(|o| **o == Grant::Replaced((2, 2))).count();
        let unchanged = outcomes.iter().filter(|o| **o == Grant::Unchanged((2, 2))).count();
        assert_eq!((replaced, unchanged), (1, 1), "{outcomes:?}");
        assert_eq!(table.lookup(KEY, HASH), Some((2, 2)));
        assert_eq!(table.entries(), 2);
    });
}

/// A snapshot owning an L2 table, as the AVC's does.
struct TableSnap {
    seqno: u64,
    l2: L2Table<(u64, u64)>,
    dropped: DropFlags,
}

impl Versioned for TableSnap {
    fn seqno(&self) -> u64 {
        self.seqno
    }
}

impl Drop for TableSnap {
    fn drop(&mut self) {
        self.dropped[self.seqno as usize].store(true, SeqCst);
    }
}

/// Reclaim: the table is swapped for an empty one while a reader probes
/// and inserts. The reader finds the old entry (old table) or nothing (new
/// table); its insert lands or is refused as stale; the old table is freed
/// only after the reader let go of it.
#[test]
fn reclaim_swaps_table_under_a_probing_reader() {
    model(|| {
        let dropped = drop_flags();
        let first = TableSnap { seqno: 1, l2: L2Table::new(1, 4), dropped: dropped.clone() };
        let published = Arc::new(Published::new(Arc::new(first)));
        let cached = published.load().l2.insert(KEY, HASH, (5, 5), 1, published.seqno_cell());
        assert_eq!(cached, Insert::Inserted { threshold_reached: false });
        let reader = {
            let (published, dropped) = (published.clone(), dropped.clone());
            thread::spawn(move || {
                let mut reader: Reader<TableSnap> = Reader::new();
                drop(reader.refresh(&published));
                let snap = reader.held().unwrap();
                let found = snap.l2.lookup(KEY, HASH);
                match snap.seqno {
                    1 => assert_eq!(found, Some((5, 5))),
                    _ => assert_eq!(found, None),
                }
                let outcome = snap.l2.insert(KEY + 1, HASH, (6, 6), snap.seqno, published.seqno_cell());
                assert!(matches!(outcome, Insert::Inserted { .. } | Insert::Stale), "{outcome:?}");
                assert!(!dropped[snap.seqno as usize].load(SeqCst), "table freed under its reader");
                drop(reader.release());
            })
        };
        // The reclaim: same state, empty table.
        let second = TableSnap { seqno: 2, l2: L2Table::new(2, 4), dropped: dropped.clone() };
        drop(published.publish(Arc::new(second)));
        reader.join().unwrap();
        assert!(dropped[1].load(SeqCst), "old table leaked");
        assert!(!dropped[2].load(SeqCst));
    });
}

/// A thread slot's state, as plain memory: loom reports any access not
/// ordered with another thread's write (a data race).
struct Slot {
    claim: Claim,
    /// Who used the slot last (0: nobody).
    last_user: UnsafeCell<u64>,
}

impl Slot {
    /// Uses the slot as its claim holder: reads the previous user, writes us.
    fn use_as(&self, user: u64) -> u64 {
        let previous = self.last_user.with(|p| unsafe { *p });
        self.last_user.with_mut(|p| unsafe { *p = user });
        previous
    }
}

/// Slot hand-over: a thread exits (its claim is released after its last
/// use) while a new thread looks for a free slot. The new thread gets the
/// slot only after the release, and then sees everything the old one
/// did; it never uses the slot while the old one does.
#[test]
fn claim_hands_a_slot_over_after_the_last_use() {
    model(|| {
        let slot = Arc::new(Slot { claim: Claim::held(), last_user: UnsafeCell::new(0) });
        let exiting = {
            let slot = slot.clone();
            thread::spawn(move || {
                assert_eq!(slot.use_as(1), 0);
                slot.claim.release();
            })
        };
        if slot.claim.try_take() {
            assert_eq!(slot.use_as(2), 1, "took the slot before the old holder's last use");
            slot.claim.release();
        }
        exiting.join().unwrap();
        assert!(!slot.claim.is_held());
    });
}

/// Two new threads race for one free slot: exactly one gets it (the
/// other creates its own); the winner is its only user.
#[test]
fn claim_race_for_a_free_slot_one_winner() {
    model(|| {
        let slot = Arc::new(Slot { claim: Claim::held(), last_user: UnsafeCell::new(0) });
        slot.claim.release();
        let racers: Vec<_> = [1u64, 2]
            .into_iter()
            .map(|user| {
                let slot = slot.clone();
                thread::spawn(move || {
                    let won = slot.claim.try_take();
                    if won {
                        assert_eq!(slot.use_as(user), 0);
                    }
                    won
                })
            })
            .collect();
        let wins = racers.into_iter().map(|t| t.join().unwrap()).filter(|&won| won).count();
        assert_eq!(wins, 1);
        assert!(slot.claim.is_held(), "the winner keeps it");
        let user = slot.last_user.with(|p| unsafe { *p });
        assert!(user == 1 || user == 2);
    });
}

/// A slot passes through three threads: the first releases it, two
/// others race for it (each releasing it after use); each that gets it
/// sees the use of the holder before it, never a use in progress.
#[test]
fn claim_release_then_race() {
    model(|| {
        let slot = Arc::new(Slot { claim: Claim::held(), last_user: UnsafeCell::new(0) });
        let first = {
            let slot = slot.clone();
            thread::spawn(move || {
                slot.use_as(1);
                slot.claim.release();
            })
        };
        let racer = {
            let slot = slot.clone();
            thread::spawn(move || {
                if slot.claim.try_take() {
                    let previous = slot.use_as(2);
                    assert!(previous == 1 || previous == 3, "{previous}");
                    slot.claim.release();
                }
            })
        };
        if slot.claim.try_take() {
            let previous = slot.use_as(3);
            assert!(previous == 1 || previous == 2, "{previous}");
            slot.claim.release();
        }
        first.join().unwrap();
        racer.join().unwrap();
    });
}
