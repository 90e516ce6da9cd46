//! Open-object handles: permission granted at open, rechecked on use only
//! when something it depends on changed (seed 002).
//!
//! A handle remembers what was granted and the three things the grant
//! depended on: the AVC's snapshot sequence number (policy, booleans,
//! modes, modules), the subject's generation and the object's generation.
//! [`Handle::permission`] compares those (three loads) and returns the
//! remembered answer; if any moved, it asks the AVC again, so a revoked
//! permission is denied on the very next call after the relabel, context
//! change or reload.

use crate::audit::AuditInfo;
use crate::avc::Avc;
use crate::decision::Decision;
use crate::labeled::{Object, Subject};
use crate::mapping::{ClassIdx, Perms};

/// The open was denied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("access denied: permissions {:#x} of the request are not allowed", .decision.denied.bits())]
pub struct Denied {
    pub decision: Decision,
}

/// Permission to use an open object. Owned by one thread (`&mut self` to
/// use); open one per thread, or guard a shared one with a lock.
#[derive(Debug)]
pub struct Handle<'a> {
    avc: &'a Avc,
    subject: &'a Subject,
    object: &'a Object,
    class: ClassIdx,
    /// What the open asked for; rechecks ask for the same.
    requested: Perms,
    /// Of `requested`, what passed at the last check.
    granted: Perms,
    seqno: u64,
    subject_generation: u64,
    object_generation: u64,
}

impl Avc {
    /// Checks `requested` (audited) and, if it passes, returns a handle
    /// that remembers the grant.
    pub fn open<'a>(
        &'a self,
        subject: &'a Subject,
        object: &'a Object,
        tclass: ClassIdx,
        requested: Perms,
    ) -> Result<Handle<'a>, Denied> {
        let mut handle = Handle {
            avc: self,
            subject,
            object,
            class: tclass,
            requested,
            granted: Perms::NONE,
            seqno: 0,
            subject_generation: 0,
            object_generation: 0,
        };
        let decision = handle.recheck();
        if decision.passes() {
            Ok(handle)
        } else {
            Err(Denied { decision })
        }
    }
}

impl Handle<'_> {
    /// Whether `perm` (a subset of what the open requested) is still
    /// granted. A few loads when nothing changed; a check through the AVC
    /// (audited) when something did.
    #[inline]
    pub fn permission(&mut self, perm: Perms) -> bool {
        if !self.is_current() {
            self.recheck();
        }
        self.granted.contains(perm)
    }

    /// What passed at the last check.
    pub fn granted(&self) -> Perms {
        self.granted
    }

    /// Nothing the grant depends on changed. The AVC's number may lag the
    /// snapshot the last check used (numbers only grow), hence `<=`.
    #[inline]
    fn is_current(&self) -> bool {
        self.avc.seqno() <= self.seqno
            && self.subject.generation() == self.subject_generation
            && self.object.generation() == self.object_generation
    }

    /// Reads the dependencies, then checks: a change after the reads makes
    /// the next call recheck again.
    #[cold]
    #[inline(never)]
    fn recheck(&mut self) -> Decision {
        let (ssid, subject_generation) = self.subject.load();
        let (tsid, object_generation) = self.object.load();
        let decision = self.avc.has_perm(ssid, tsid, self.class, self.requested, &AuditInfo::default());
        self.granted = if decision.permissive { decision.allowed | decision.denied } else { decision.allowed };
        self.seqno = decision.seqno;
        self.subject_generation = subject_generation;
        self.object_generation = object_generation;
        decision
    }
}
