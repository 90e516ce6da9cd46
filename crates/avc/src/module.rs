//! Stacked security modules (seed 001) and how their answers combine.
//!
//! Why this shape: the Stacker LSM called each module under RCU but also
//! took an atomic reference count per module call, so a module could be
//! unloaded safely, and that count cost 8% of dbench and half of reaim's
//! throughput. Here a module lives in the snapshot (`Arc<dyn Module>` in a
//! list published with it), so a check that holds the snapshot holds the
//! module: no per-call count, no lock. Unregistering publishes a snapshot
//! without it; the module is freed when the last thread that held an old
//! snapshot refreshes (see [`crate::publish`]), i.e. when no check can
//! still be running in it.
//!
//! SELinux is one module among them: [`crate::selinux::SelinuxModule`]
//! answers from the snapshot's policy and booleans, and always comes first.
//! Modules see only snapshot-independent inputs ([`Query`]: SIDs, context
//! strings, declared class and permission names) and answer in the
//! caller's permission bits, so their answers can be cached with
//! SELinux's. That requires a module to be a deterministic function of the
//! query and its own state; a module whose state changes must call
//! `Avc::invalidate` to republish.
//!
//! # Combining
//!
//! A permission is allowed when every module allows it. For each denied
//! permission the *first* module (in order: SELinux, then registration
//! order) that denies it decides whether the denial is audited (its
//! `auditdeny`) and enforced (not if that module is permissive for the
//! subject, nor when the AVC is globally permissive); the audit event
//! names that module. Grants are audited when any module asks
//! (`auditallow`).

use crate::decision::CachedAv;
use crate::mapping::{ClassIdx, Perms};
use crate::sid::Sid;

/// What a module is asked: everything about the access, independent of
/// the policy snapshot.
#[derive(Clone, Copy, Debug)]
pub struct Query<'a> {
    pub source: Sid,
    pub target: Sid,
    /// The source SID's context ("" for a SID the AVC never interned).
    pub scontext: &'a str,
    /// The target SID's context ("" for a SID the AVC never interned).
    pub tcontext: &'a str,
    pub class: ClassIdx,
    /// The declared name of `class`.
    pub class_name: &'a str,
    /// The declared permission names of `class`, by bit.
    pub perm_names: &'a [String],
}

impl Query<'_> {
    /// The bit of declared permission `name` (empty if not declared).
    pub fn perm(&self, name: &str) -> Perms {
        match self.perm_names.iter().position(|p| p == name) {
            Some(i) => Perms::from_bits(1 << i),
            None => Perms::NONE,
        }
    }

    /// The type field of the source context.
    pub fn source_type(&self) -> Option<&str> {
        context_type(self.scontext)
    }

    /// The type field of the target context.
    pub fn target_type(&self) -> Option<&str> {
        context_type(self.tcontext)
    }
}

/// `user:role:type[:level]` -> `type`.
fn context_type(context: &str) -> Option<&str> {
    context.split(':').nth(2)
}

/// A module's answer for every permission of the queried class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModuleDecision {
    pub allowed: Perms,
    /// Grants to audit.
    pub auditallow: Perms,
    /// Denials to audit (the complement of dontaudit).
    pub auditdeny: Perms,
    /// This module's denials are reported but not enforced for this query.
    pub permissive: bool,
}

impl ModuleDecision {
    /// No objection: everything allowed, nothing audited.
    pub const ALLOW_ALL: ModuleDecision =
        ModuleDecision { allowed: Perms::ALL, auditallow: Perms::NONE, auditdeny: Perms::ALL, permissive: false };
    /// Everything denied and audited.
    pub const DENY_ALL: ModuleDecision =
        ModuleDecision { allowed: Perms::NONE, auditallow: Perms::NONE, auditdeny: Perms::ALL, permissive: false };
}

/// A security module stacked with SELinux.
pub trait Module: Send + Sync {
    /// A unique name; it appears in audit events.
    fn name(&self) -> &str;

    /// The decision for every permission of `query.class`. Must be a
    /// deterministic function of `query` and the module's state.
    fn check(&self, query: &Query<'_>) -> ModuleDecision;
}

/// Folds module decisions, in order, into one cached vector.
pub(crate) struct Combiner {
    enforcing: bool,
    av: CachedAv,
    /// Permissions no module has denied yet.
    undecided: Perms,
}

impl Combiner {
    pub(crate) fn new(enforcing: bool) -> Combiner {
        let av = CachedAv { allowed: Perms::ALL, ..CachedAv::NOTHING };
        Combiner { enforcing, av, undecided: Perms::ALL }
    }

    /// Adds the next module's decision (first denial wins).
    pub(crate) fn add(&mut self, d: &ModuleDecision) {
        let first_denied = !d.allowed & self.undecided;
        self.av.allowed &= d.allowed;
        self.av.auditallow |= d.auditallow;
        self.av.auditdeny |= first_denied & d.auditdeny;
        if self.enforcing && !d.permissive {
            self.av.enforced |= first_denied;
        }
        self.undecided &= !first_denied;
    }

    pub(crate) fn finish(self) -> CachedAv {
        self.av
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(allowed: u32, auditdeny: u32, permissive: bool) -> ModuleDecision {
        ModuleDecision {
            allowed: Perms::from_bits(allowed),
            auditallow: Perms::NONE,
            auditdeny: Perms::from_bits(auditdeny),
            permissive,
        }
    }

    #[test]
    fn first_denial_decides_audit_and_enforcement() {
        let mut c = Combiner::new(true);
        c.add(&md(0b0011, 0b1000, true)); // denies 2 and 3, audits only 3, permissive
        c.add(&md(0b1101, 0b1111, false)); // denies 1 (first) and 3 (not first)
        let av = c.finish();
        assert_eq!(av.allowed, Perms::from_bits(0b0001));
        assert_eq!(av.auditdeny, Perms::from_bits(0b1010));
        assert_eq!(av.enforced, Perms::from_bits(0b0010));
        let mut permissive = Combiner::new(false);
        permissive.add(&md(0, u32::MAX, false));
        assert_eq!(permissive.finish().enforced, Perms::NONE);
    }
}
