//! `rampart`: the real thing, `rampart_avc::Avc`. Hits go through
//! `has_perm_noaudit` (per-thread L1, shared lock-free L2); open objects
//! through `Avc::open` and `Handle::permission`, which rechecks only when
//! the policy, the subject's label or the object's label changed.

use rampart_avc::{Avc, ClassIdx, Handle, Object, Perms, Sid, Subject};

use super::checker::{Checker, OpenCheck, ThreadCheck};
use crate::error::BenchError;

pub struct Rampart {
    avc: Avc,
}

impl Rampart {
    pub fn new(avc: Avc) -> Rampart {
        Rampart { avc }
    }

    pub fn avc(&self) -> &Avc {
        &self.avc
    }
}

impl Checker for Rampart {
    type Thread<'a> = &'a Rampart;
    type Open<'a> = Opened<'a>;

    fn thread(&self, _index: usize) -> &Rampart {
        self
    }

    fn open<'a>(
        &'a self,
        _index: usize,
        subject: &'a Subject,
        object: &'a Object,
        class: ClassIdx,
        perms: Perms,
    ) -> Result<Opened<'a>, BenchError> {
        let handle = self
            .avc
            .open(subject, object, class, perms)
            .map_err(|denied| BenchError::Workload(format!("rampart denied the open the workload needs: {denied}")))?;
        Ok(Opened { handle, perms })
    }
}

impl ThreadCheck for &Rampart {
    #[inline]
    fn check(&mut self, ssid: Sid, tsid: Sid, class: ClassIdx, perms: Perms) -> bool {
        self.avc.has_perm_noaudit(ssid, tsid, class, perms).passes()
    }
}

/// An open object: the handle's fast path on every use.
pub struct Opened<'a> {
    handle: Handle<'a>,
    perms: Perms,
}

impl OpenCheck for Opened<'_> {
    #[inline]
    fn permission(&mut self) -> bool {
        self.handle.permission(self.perms)
    }
}
