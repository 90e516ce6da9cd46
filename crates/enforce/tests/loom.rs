//! Loom model of the ignore-mark protocol (`crates/enforce/src/epoch.rs`, `rampart_enforce::testing::Epoch`), run
//! on the very `Epoch` the daemon uses, whose atomic and lock come from
//! loom in this build:
//!
//! ```sh
//! RUSTFLAGS="--cfg loom" cargo test -p rampart-enforce --test loom --release
//! ```
//!
//! The kernel's mark table is a mutex-protected set (the fanotify group
//! serializes mark operations with its own mutex); "the policy" is an
//! atomic flag published before the advance, as the AVC publishes a
//! snapshot before `Marks::flush`. The property is the one `rampart
//! setbool` promises: from the moment the change's flush returns, no mark
//! decided under the old policy is in the kernel.
//!
//! Also the label cache's forget (`crates/enforce/src/label_cache.rs`):
//! once the daemon wrote a label and forgot the inode, no lookup begun
//! before puts the old label back, whatever the ctime says. And the
//! responders' hand-off (`crates/enforce/src/handoff.rs`): an event one
//! responder read and handed off is answered once, by somebody. And the
//! memory guards (`crates/enforce/src/memory_guard.rs`): a cgroup stays
//! frozen while any guard holds it, never while it is pinned, a guard
//! waiting for a pin or a conflicting guard is woken, and two execs that
//! wait for their new domain never freeze each other's.
#![cfg(loom)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::Ordering::{Acquire, Release};

use loom::sync::atomic::{AtomicBool, AtomicU32};
use loom::sync::{Arc, Mutex};
use loom::thread;
use rampart_avc::{Sid, SidTable};
use rampart_enforce::testing::{Epoch, Guards, Handoff, LabelCache, Shares};

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(f);
}

struct World {
    epoch: Epoch,
    /// The policy allows the access the mark would skip.
    allowed: AtomicBool,
    /// The kernel's ignore marks (inode numbers).
    marks: Mutex<Vec<u32>>,
}

impl World {
    fn new() -> Arc<World> {
        Arc::new(World { epoch: Epoch::new(), allowed: AtomicBool::new(true), marks: Mutex::new(Vec::new()) })
    }
}

/// A placer: ticket at the event's start, decide, place inside `hold`.
fn place(w: &World, inode: u32) {
    let ticket = w.epoch.ticket();
    if !w.allowed.load(Acquire) {
        return;
    }
    let Some(_placing) = w.epoch.hold(ticket) else {
        return;
    };
    w.marks.lock().unwrap().push(inode);
}

/// A changer: publish the deny, advance, flush.
fn revoke(w: &World) {
    w.allowed.store(false, Release);
    let _flushing = w.epoch.advance();
    w.marks.lock().unwrap().clear();
}

#[test]
fn no_mark_outlives_a_revocation() {
    model(|| {
        let w = World::new();
        let placers: Vec<_> = (0..2)
            .map(|i| {
                let w = Arc::clone(&w);
                thread::spawn(move || place(&w, i))
            })
            .collect();
        revoke(&w);
        // `setbool` has returned: from now on, no mark may be present.
        assert!(w.marks.lock().unwrap().is_empty(), "a mark was present after the flush returned");
        for p in placers {
            p.join().unwrap();
        }
        assert!(w.marks.lock().unwrap().is_empty(), "a mark was placed after the flush returned");
    });
}

#[test]
fn placing_then_rechecking_leaves_a_stale_mark_for_a_moment() {
    // The protocol rampartd used before: place, then remove the mark if
    // the epoch moved. Loom must find a moment after the flush returned
    // with the stale mark in the kernel (a process started right after
    // `setbool` passes unasked): the model can fail, and the fence is
    // what prevents it.
    let found = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = std::sync::Arc::clone(&found);
    model(move || {
        let w = World::new();
        let w2 = Arc::clone(&w);
        let placer = thread::spawn(move || {
            let ticket = w2.epoch.ticket();
            if w2.allowed.load(Acquire) {
                w2.marks.lock().unwrap().push(7);
                if w2.epoch.ticket() != ticket {
                    w2.marks.lock().unwrap().retain(|&m| m != 7);
                }
            }
        });
        revoke(&w);
        if !w.marks.lock().unwrap().is_empty() {
            seen.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        placer.join().unwrap();
    });
    assert!(found.load(std::sync::atomic::Ordering::Relaxed), "loom found no stale mark in the old protocol");
}

/// A new object's label written after it was made (crate::new_labels,
/// `Marks::relabeled`): publish the label, advance, remove that inode's
/// marks only. From the moment it returns no mark decided under the
/// object's earlier label is in the kernel, while a mark on another
/// inode may stay.
#[test]
fn no_mark_outlives_a_new_objects_label() {
    model(|| {
        let epoch = Arc::new(Epoch::new());
        // Per inode (0: the new object, 1: another): its label allows.
        let allowed = Arc::new([AtomicBool::new(true), AtomicBool::new(true)]);
        let marks = Arc::new(Mutex::new(Vec::new()));
        let placers: Vec<_> = (0..2u32)
            .map(|inode| {
                let (epoch, allowed, marks) = (Arc::clone(&epoch), Arc::clone(&allowed), Arc::clone(&marks));
                thread::spawn(move || {
                    let ticket = epoch.ticket();
                    if !allowed[inode as usize].load(Acquire) {
                        return;
                    }
                    let Some(_placing) = epoch.hold(ticket) else { return };
                    marks.lock().unwrap().push(inode);
                })
            })
            .collect();
        allowed[0].store(false, Release);
        {
            let _flushing = epoch.advance();
            marks.lock().unwrap().retain(|&m| m != 0);
        }
        assert!(!marks.lock().unwrap().contains(&0), "a mark on the new object was present after its label");
        for p in placers {
            p.join().unwrap();
        }
        assert!(!marks.lock().unwrap().contains(&0), "a mark on the new object was placed after its label");
    });
}

/// The daemon writes an inode's label (the xattr: an atomic) and forgets
/// it, while an event looks the inode up: on a miss it reads the label
/// and inserts it, under a ctime that does not change (a coarse clock).
/// From the moment the forget returns the cache holds the new label or
/// nothing, and after the lookup too.
#[test]
fn a_forgotten_label_is_never_put_back() {
    model(|| {
        let cache = Arc::new(LabelCache::<u32>::default());
        let xattr = Arc::new(AtomicU32::new(1));
        let inode = (1, 2);
        let lookup = {
            let (cache, xattr) = (Arc::clone(&cache), Arc::clone(&xattr));
            thread::spawn(move || {
                if let Err(miss) = cache.get(inode, (0, 0)) {
                    let label = xattr.load(Acquire);
                    cache.insert(inode, (0, 0), label, miss);
                }
            })
        };
        xattr.store(2, Release);
        cache.forget(inode);
        let now = cache.get(inode, (0, 0));
        assert!(now.as_ref().map_or(true, |&l| l == 2), "the old label was in the cache after the forget");
        lookup.join().unwrap();
        let after = cache.get(inode, (0, 0));
        assert!(after.as_ref().map_or(true, |&l| l == 2), "the old label was put back after the forget");
    });
}

/// Two responders each read a batch, hand off all but the first event,
/// answer the first and then take until nothing is left, while a helper
/// woken for them takes once. Every event is answered exactly once: none
/// is left in the hand-off when they are done.
#[test]
fn every_event_handed_off_is_answered_once() {
    model(|| {
        let handoff = Arc::new(Handoff::<u32>::default());
        let answered = Arc::new(Mutex::new(Vec::new()));
        let responder = |batch: [u32; 3]| {
            let (handoff, answered) = (Arc::clone(&handoff), Arc::clone(&answered));
            move || {
                let [own, rest @ ..] = batch;
                handoff.give(rest);
                answered.lock().unwrap().push(own);
                while let Some(e) = handoff.take() {
                    answered.lock().unwrap().push(e);
                }
            }
        };
        let first = thread::spawn(responder([0, 1, 2]));
        let helper = {
            let (handoff, answered) = (Arc::clone(&handoff), Arc::clone(&answered));
            thread::spawn(move || {
                if let Some(e) = handoff.take() {
                    answered.lock().unwrap().push(e);
                }
            })
        };
        responder([3, 4, 5])();
        first.join().unwrap();
        helper.join().unwrap();
        let mut answered = answered.lock().unwrap().clone();
        answered.sort_unstable();
        assert_eq!(answered, [0, 1, 2, 3, 4, 5], "an event handed off was left behind or answered twice");
    });
}

/// A cgroup's `cgroup.freeze`, a plain file here: the guards write it
/// under their lock, and loom runs one thread at a time, so a read sees
/// the last write of the interleaving. Each test has its own.
struct Cgroup(std::path::PathBuf);

impl Cgroup {
    fn new(name: &str) -> Cgroup {
        let dir = std::env::temp_dir().join(format!("rampart-loom-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Cgroup(dir)
    }

    /// A thawed cgroup, as each interleaving starts.
    fn thawed(&self) -> std::path::PathBuf {
        std::fs::write(self.0.join("cgroup.freeze"), "0").unwrap();
        self.0.clone()
    }

    fn frozen(&self) -> bool {
        std::fs::read_to_string(self.0.join("cgroup.freeze")).unwrap() == "1"
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Domains to guard (interned in the model: the table's lock is loom's).
fn domains<const N: usize>() -> [Sid; N] {
    let table = SidTable::new();
    std::array::from_fn(|i| table.intern(&format!("u:r:d{i}_t")).unwrap())
}

/// A housekeeper pins a cgroup to run a process's injected calls there
/// while an exec's guard keeps that domain out: the calls never run in
/// a frozen cgroup, the guard waits for the pin (and is woken when it is
/// dropped) and holds the cgroup frozen once open, and nothing stays
/// frozen once both are done.
#[test]
fn a_pinned_cgroup_is_never_frozen_and_a_guard_waits_for_the_pin() {
    let cgroup = std::sync::Arc::new(Cgroup::new("pin"));
    let cg = std::sync::Arc::clone(&cgroup);
    model(move || {
        let dir = cg.thawed();
        let [to, out] = domains();
        let guards = Arc::new(Guards::default());
        let housekeeper = {
            let (guards, dir, cg) = (Arc::clone(&guards), dir.clone(), std::sync::Arc::clone(&cg));
            thread::spawn(move || {
                if let Some(pin) = guards.pin(dir) {
                    thread::yield_now();
                    assert!(!cg.frozen(), "a pinned cgroup was frozen");
                    thread::yield_now();
                    assert!(!cg.frozen(), "a pinned cgroup was frozen");
                    drop(pin);
                }
            })
        };
        let guard = guards.open(to, vec![(out, dir.clone())], false).unwrap();
        thread::yield_now();
        assert!(cg.frozen(), "an open guard's cgroup was thawed");
        guards.close(guard);
        housekeeper.join().unwrap();
        assert!(!cg.frozen(), "a cgroup stayed frozen after its guard closed");
        assert!(guards.pin(dir).is_some(), "a closed guard still held its cgroup");
    });
}

/// Two execs keep the same domain out: it stays frozen until the last
/// of them closes, whichever order they open and close in.
#[test]
fn a_cgroup_stays_frozen_while_any_guard_holds_it() {
    let cgroup = std::sync::Arc::new(Cgroup::new("count"));
    let cg = std::sync::Arc::clone(&cgroup);
    model(move || {
        let dir = cg.thawed();
        let [a, b, out] = domains();
        let guards = Arc::new(Guards::default());
        let execs: Vec<_> = [a, b]
            .into_iter()
            .map(|to| {
                let (guards, dir, cg) = (Arc::clone(&guards), dir.clone(), std::sync::Arc::clone(&cg));
                thread::spawn(move || {
                    let guard = guards.open(to, vec![(out, dir)], false).unwrap();
                    thread::yield_now();
                    assert!(cg.frozen(), "a cgroup was thawed while a guard held it");
                    guards.close(guard);
                })
            })
            .collect();
        for exec in execs {
            exec.join().unwrap();
        }
        assert!(!cg.frozen(), "a cgroup stayed frozen after its last guard closed");
    });
}

/// Execs into a and b whose pending signals are flushed as they run in
/// their new domain (so they settle only once it is thawed), a keeping
/// b out and b keeping a out: whichever guard opens first, the other
/// waits until it closes (and is woken then), so an exec that settles
/// finds its new domain free to pin. Without that rule each would wait
/// for the other's domain to thaw, forever.
#[test]
fn execs_that_wait_for_their_domain_never_freeze_each_others() {
    let cgroups = std::sync::Arc::new([Cgroup::new("conflict-a"), Cgroup::new("conflict-b")]);
    let cgs = std::sync::Arc::clone(&cgroups);
    model(move || {
        let dirs = [cgs[0].thawed(), cgs[1].thawed()];
        let [a, b] = domains();
        let guards = Arc::new(Guards::default());
        let exec = |to: Sid, own: usize, out: Sid, other: usize| {
            let (guards, dirs) = (Arc::clone(&guards), dirs.clone());
            move || {
                let guard = guards.open(to, vec![(out, dirs[other].clone())], true).unwrap();
                // The housekeeper settles it: its calls run in its new
                // domain, pinned.
                let pin = guards.pin(dirs[own].clone());
                assert!(pin.is_some(), "an exec's new domain was held frozen by a guard that waits for it");
                drop(pin);
                guards.close(guard);
            }
        };
        let first = thread::spawn(exec(a, 0, b, 1));
        exec(b, 1, a, 0)();
        first.join().unwrap();
        assert!(!cgs[0].frozen() && !cgs[1].frozen(), "a cgroup stayed frozen after its guards closed");
    });
}

/// The housekeeper makes a domain's cgroup again (pruned while empty;
/// a new cgroup starts thawed) and calls `refreeze` while an exec's
/// guard keeps that domain out: once it returned, the cgroup is frozen
/// if the guard is still open.
#[test]
fn a_cgroup_made_again_while_a_guard_holds_it_is_frozen() {
    let cgroup = std::sync::Arc::new(Cgroup::new("refreeze"));
    let cg = std::sync::Arc::clone(&cgroup);
    model(move || {
        let dir = cg.thawed();
        let [to, out] = domains();
        let guards = Arc::new(Guards::default());
        // Set once its guard is open, cleared as it closes (one step
        // under the lock, so a check under it sees the guard's state).
        let holding = Arc::new(Mutex::new(false));
        let exec = {
            let (guards, dir, holding) = (Arc::clone(&guards), dir.clone(), Arc::clone(&holding));
            thread::spawn(move || {
                let guard = guards.open(to, vec![(out, dir)], false).unwrap();
                *holding.lock().unwrap() = true;
                thread::yield_now();
                let mut held = holding.lock().unwrap();
                *held = false;
                guards.close(guard);
            })
        };
        // Made again (thawed) at any moment of the guard's life.
        thread::yield_now();
        std::fs::write(dir.join("cgroup.freeze"), "0").unwrap();
        thread::yield_now();
        guards.refreeze(&dir).unwrap();
        if *holding.lock().unwrap() {
            assert!(cg.frozen(), "a cgroup made again while a guard held it was left thawed");
        }
        exec.join().unwrap();
    });
}

/// The connect threads' shares (crates/enforce/src/call_threads.rs): two
/// threads each submit jobs of one label whose share is one job; a
/// submitter whose job is admitted runs it, then the label's waiting jobs
/// as `ended` hands them over. Every job runs exactly once, never two of
/// the label at once, and the share is given back: no job is left
/// waiting with no thread to take it.
#[test]
fn every_job_of_a_label_runs_once_within_its_share() {
    model(|| {
        let shares = Arc::new(Shares::<u8, u32>::new(1));
        let ran = Arc::new(Mutex::new(Vec::new()));
        let running = Arc::new(AtomicU32::new(0));
        let submit = |jobs: Vec<u32>| {
            let (shares, ran, running) = (Arc::clone(&shares), Arc::clone(&ran), Arc::clone(&running));
            move || {
                for job in jobs {
                    let Ok(Some(mut next)) = shares.admit(&7, job) else { continue };
                    loop {
                        assert_eq!(running.fetch_add(1, Acquire), 0, "two jobs of the label at once");
                        ran.lock().unwrap().push(next);
                        running.fetch_sub(1, Release);
                        match shares.ended(&7) {
                            Some(waiting) => next = waiting,
                            None => break,
                        }
                    }
                }
            }
        };
        let a = thread::spawn(submit(vec![1, 2]));
        let b = thread::spawn(submit(vec![3]));
        a.join().unwrap();
        b.join().unwrap();
        let mut ran = ran.lock().unwrap().clone();
        ran.sort_unstable();
        assert_eq!(ran, vec![1, 2, 3], "every job ran once");
        assert!(shares.is_empty(), "the share was given back");
    });
}
