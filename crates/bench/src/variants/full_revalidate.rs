//! `full_revalidate`: SELinux before the 2007 fix (seed 002): every read
//! and write of an open file repeats the full access check, reading the
//! task's and the file's current labels and going through the AVC, even
//! though nothing changed since open. Here that is Rampart's own AVC
//! (`has_perm`, audited like the kernel's `file_has_perm`), so the
//! difference from `rampart` is exactly what the handle saves.

use rampart_avc::{AuditInfo, Avc, ClassIdx, Object, Perms, Sid, Subject};

use super::checker::{Checker, OpenCheck, ThreadCheck};
use crate::error::BenchError;

pub struct FullRevalidate {
    avc: Avc,
    info: AuditInfo,
}

impl FullRevalidate {
    pub fn new(avc: Avc) -> FullRevalidate {
        FullRevalidate { avc, info: AuditInfo::default() }
    }

    pub fn avc(&self) -> &Avc {
        &self.avc
    }
}

impl Checker for FullRevalidate {
    type Thread<'a> = &'a FullRevalidate;
    type Open<'a> = Revalidating<'a>;

    fn thread(&self, _index: usize) -> &FullRevalidate {
        self
    }

    fn open<'a>(
        &'a self,
        _index: usize,
        subject: &'a Subject,
        object: &'a Object,
        class: ClassIdx,
        perms: Perms,
    ) -> Result<Revalidating<'a>, BenchError> {
        Ok(Revalidating { owner: self, subject, object, class, perms })
    }
}

impl ThreadCheck for &FullRevalidate {
    #[inline]
    fn check(&mut self, ssid: Sid, tsid: Sid, class: ClassIdx, perms: Perms) -> bool {
        self.avc.has_perm(ssid, tsid, class, perms, &self.info).passes()
    }
}

/// An open file whose every use is checked from scratch.
pub struct Revalidating<'a> {
    owner: &'a FullRevalidate,
    subject: &'a Subject,
    object: &'a Object,
    class: ClassIdx,
    perms: Perms,
}

impl OpenCheck for Revalidating<'_> {
    #[inline]
    fn permission(&mut self) -> bool {
        let (ssid, tsid) = (self.subject.sid(), self.object.sid());
        self.owner.avc.has_perm(ssid, tsid, self.class, self.perms, &self.owner.info).passes()
    }
}
