//! Loom model of the ignore-mark epoch protocol (`rampart_enforce::epoch`),
//! run on the very `Epoch` the daemon uses, whose atomic comes from loom
//! in this build:
//!
//! ```sh
//! RUSTFLAGS="--cfg loom" cargo test -p rampart-enforce --test loom --release
//! ```
//!
//! The kernel's mark table is a mutex-protected set (the fanotify group
//! serializes mark operations with its own mutex); "the policy" is an
//! atomic flag published before the bump, as the AVC publishes a snapshot
//! before `Marks::flush`.
#![cfg(loom)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::Ordering::{Acquire, Release};

use loom::sync::atomic::AtomicBool;
use loom::sync::{Arc, Mutex};
use loom::thread;
use rampart_enforce::epoch::Epoch;

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

/// A placer: decide under `begin`, place, re-check, remove if moved.
fn place(w: &World, inode: u32) {
    let e = w.epoch.begin();
    if !w.allowed.load(Acquire) {
        return;
    }
    w.marks.lock().unwrap().push(inode);
    if !w.epoch.still(e) {
        w.marks.lock().unwrap().retain(|&m| m != inode);
    }
}

/// A changer: publish the deny, bump, flush.
fn revoke(w: &World) {
    w.allowed.store(false, Release);
    w.epoch.bump();
    w.marks.lock().unwrap().clear();
}

#[test]
fn no_mark_survives_a_revocation() {
    model(|| {
        let w = Arc::new(World { epoch: Epoch::new(), allowed: AtomicBool::new(true), marks: Mutex::new(Vec::new()) });
        let placers: Vec<_> = (0..2)
            .map(|i| {
                let w = Arc::clone(&w);
                thread::spawn(move || place(&w, i))
            })
            .collect();
        revoke(&w);
        for p in placers {
            p.join().unwrap();
        }
        // The policy now denies: no mark may remain.
        assert!(w.marks.lock().unwrap().is_empty(), "a mark outlived the flush");
    });
}

#[test]
fn without_the_recheck_a_mark_survives() {
    // The same race without `still`: loom must find the stale mark, which
    // shows the model can fail and that the re-check is what prevents it.
    let found = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = std::sync::Arc::clone(&found);
    model(move || {
        let w = Arc::new(World { epoch: Epoch::new(), allowed: AtomicBool::new(true), marks: Mutex::new(Vec::new()) });
        let w2 = Arc::clone(&w);
        let placer = thread::spawn(move || {
            let _e = w2.epoch.begin();
            if w2.allowed.load(Acquire) {
                w2.marks.lock().unwrap().push(7);
            }
        });
        revoke(&w);
        placer.join().unwrap();
        if !w.marks.lock().unwrap().is_empty() {
            seen.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    });
    assert!(found.load(std::sync::atomic::Ordering::Relaxed), "loom found no stale mark without the re-check");
}
