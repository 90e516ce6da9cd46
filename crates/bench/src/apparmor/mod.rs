//! Seed 003's workload: threads opening files under one shared AppArmor
//! profile, with the label's lifetime managed three ways.
//!
//! Why: in 2024 nginx lost scaling on 192 CPUs because every file open
//! took and dropped a reference on the task's shared AppArmor label
//! (`kref_get`/`kref_put`: one cache line written by every CPU); per-CPU
//! reference counts were the proposed fix (seed 003). Rampart's checks
//! take no reference at all: the profile set is an immutable snapshot
//! published as the SELinux AVC publishes its own
//! ([`rampart_avc::protocol::Published`]), each thread keeping its own
//! `Arc` of the snapshot it last saw. Here the three designs wrap the same
//! decision, so only the label's lifetime management differs:
//!
//! * [`designs::Kref`]: one shared `Arc<Label>` cloned and dropped around
//!   each check (`aa_get_label`/`aa_put_label` of 2024);
//! * [`designs::PercpuRef`]: a per-thread counter, alone on its cache
//!   line, raised and lowered around each check (`percpu_ref`);
//! * [`designs::Rampart`]: a [`Published`](rampart_avc::protocol::Published)
//!   snapshot and a per-thread [`Reader`](rampart_avc::protocol::Reader):
//!   one read of a read-mostly sequence number per check, no write.
//!
//! The decision is the real engine's ([`rampart_apparmor::file::path_perm`]
//! on a real shipped profile: lighttpd's, [`profile`]), for `r` on a path
//! a web server opens ([`paths`]). A walk of the profile's DFA costs far
//! more than a reference count, which hides part of what the count costs,
//! so each design is also run with the decision cached per (profile,
//! path) the way the AVC caches per (subject, object): [`Decide`].

pub mod designs;
pub mod paths;
pub mod profile;
pub mod report;
pub mod workload;

use rampart_apparmor::{file, perms::MAY_READ, Profile, Subject};
use rampart_avc::protocol::Versioned;
use rampart_avc::KeyHasher;

use crate::error::BenchError;
use paths::PathReq;

/// How a check reaches its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Decide {
    /// The engine's DFA walk over the path, every time (as the kernel
    /// decides an open).
    Engine,
    /// The engine's answer cached per (profile, path) in the label,
    /// looked up with Rampart's cache hash (the shape of an AVC hit).
    Cached,
}

impl Decide {
    pub const ALL: [Decide; 2] = [Decide::Engine, Decide::Cached];

    pub fn name(self) -> &'static str {
        match self {
            Decide::Engine => "engine",
            Decide::Cached => "cached",
        }
    }
}

/// The open flag the workload asks for.
pub const REQUEST: u32 = MAY_READ;
/// Whether the task owns the files it opens (a web server's worker opens
/// files owned by someone else).
pub const OWNER: bool = false;

/// What a task's label leads to: its profile (cloned out of the loaded
/// policy) and the decisions cached for it. Immutable once built; a
/// policy change builds a new one.
pub struct Label {
    seqno: u64,
    profile: Profile,
    /// Path id -> allowed. One profile per label here, so the path id is
    /// the whole (profile, path) key.
    cached: std::collections::HashMap<u64, bool, KeyHasher>,
}

impl Label {
    /// The label of `profile` at sequence number `seqno`, with the
    /// engine's answer for each of `paths` cached.
    pub fn new(profile: Profile, paths: &[PathReq], seqno: u64) -> Result<Label, BenchError> {
        let mut label = Label { seqno, profile, cached: Default::default() };
        for p in paths {
            let allowed = label.decide_engine(&p.path);
            if label.cached.insert(p.id, allowed).is_some() {
                return Err(BenchError::Workload(format!("two paths share the id {}", p.id)));
            }
        }
        Ok(label)
    }

    /// The engine's answer: may the profile open `path` for reading?
    #[inline]
    pub fn decide_engine(&self, path: &[u8]) -> bool {
        file::path_perm(Subject::Profile(&self.profile), path, REQUEST, OWNER).allowed
    }

    /// The answer for `p`, as `how` reaches it. A path missing from the
    /// cache is decided by the engine (the workload warms every path).
    #[inline]
    pub fn decide(&self, p: &PathReq, how: Decide) -> bool {
        match how {
            Decide::Engine => self.decide_engine(&p.path),
            Decide::Cached => match self.cached.get(&p.id) {
                Some(&allowed) => allowed,
                None => self.decide_engine(&p.path),
            },
        }
    }

    pub fn profile(&self) -> &Profile {
        &self.profile
    }
}

impl Versioned for Label {
    fn seqno(&self) -> u64 {
        self.seqno
    }
}
