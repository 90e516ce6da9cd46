//! Subjects and objects whose label can change, with a generation number
//! that tells cached results when it did (seed 002).
//!
//! Why: re-checking permission on every read and write cost 12% on x86 and
//! up to 156% on embedded CPUs in seed 002; the agreed fix was to re-check
//! only if the task's label, the file's label or the policy changed since
//! open. A label here is a SID plus a 64-bit generation bumped on every
//! change, so "did anything change" is three loads and compares (see
//! [`crate::Handle`]). 64 bits do not wrap in practice (a relabel per
//! nanosecond takes 584 years), which was the seed's worry about counters.
//!
//! Labels are plain `Copy` SIDs: holding one costs no reference count
//! (seed 003). When a reload removes a type, holders keep their SID and
//! the new snapshot lazily resolves it to the unlabeled context (the
//! kernel's choice), instead of AppArmor's proxy that redirects stale
//! labels to their replacement: SIDs name strings, so there is nothing to
//! redirect, and no label is touched when a policy loads.
//!
//! # Protocol
//!
//! Writer: store the new SID (Relaxed), then bump the generation
//! (Release). Reader: load the generation (Acquire), then the SID. A
//! reader that sees a generation sees at least the SID stored before it,
//! so it can never pair a new generation with an old SID (which would let
//! a revoked permission survive); pairing an old generation with a new SID
//! only causes one extra recheck.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::sid::Sid;

/// A SID that can change, with its generation.
#[derive(Debug)]
struct LabelCell {
    sid: AtomicU32,
    generation: AtomicU64,
}

impl LabelCell {
    fn new(sid: Sid) -> LabelCell {
        LabelCell { sid: AtomicU32::new(sid.as_u32()), generation: AtomicU64::new(0) }
    }

    fn set(&self, sid: Sid) {
        // Relaxed: published by the Release bump below.
        self.sid.store(sid.as_u32(), Ordering::Relaxed);
        // Release: orders the SID store before the new generation. An RMW
        // because several threads may relabel at once; relabels are rare.
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// (SID, generation), never a newer generation with an older SID.
    fn load(&self) -> (Sid, u64) {
        // Acquire: pairs with the Release bump in `set`.
        let generation = self.generation.load(Ordering::Acquire);
        // Relaxed: ordered after the generation load above.
        (Sid::from_u32(self.sid.load(Ordering::Relaxed)), generation)
    }

    fn generation(&self) -> u64 {
        // Acquire: pairs with the Release bump in `set`, so a caller that
        // sees the new generation and rechecks reads the new SID.
        self.generation.load(Ordering::Acquire)
    }
}

/// An acting subject (a process): its current SID, which changes on exec
/// or `setcon`.
#[derive(Debug)]
pub struct Subject(LabelCell);

impl Subject {
    pub fn new(sid: Sid) -> Subject {
        Subject(LabelCell::new(sid))
    }

    pub fn sid(&self) -> Sid {
        self.0.load().0
    }

    /// Changes the subject's context; handles opened by it recheck.
    pub fn set_sid(&self, sid: Sid) {
        self.0.set(sid);
    }

    pub fn generation(&self) -> u64 {
        self.0.generation()
    }

    pub(crate) fn load(&self) -> (Sid, u64) {
        self.0.load()
    }
}

/// An object (a file): its label, which changes on relabel.
#[derive(Debug)]
pub struct Object(LabelCell);

impl Object {
    pub fn new(sid: Sid) -> Object {
        Object(LabelCell::new(sid))
    }

    pub fn sid(&self) -> Sid {
        self.0.load().0
    }

    /// Relabels the object; handles on it recheck.
    pub fn relabel(&self, sid: Sid) {
        self.0.set(sid);
    }

    pub fn generation(&self) -> u64 {
        self.0.generation()
    }

    pub(crate) fn load(&self) -> (Sid, u64) {
        self.0.load()
    }
}
