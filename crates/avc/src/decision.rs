//! What a check returns ([`Decision`]) and what the caches store
//! ([`CachedAv`]): the second is the full access vector of one (source,
//! target, class); the first is it applied to the requested permissions.

use crate::mapping::Perms;

/// The cached outcome for one (source SID, target SID, class), all
/// modules combined. Immutable once published (the L2 replaces it whole).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CachedAv {
    /// Permissions every module allows.
    pub(crate) allowed: Perms,
    /// Permissions whose grant is audited.
    pub(crate) auditallow: Perms,
    /// Permissions whose denial is audited (the complement of `dontaudit`).
    pub(crate) auditdeny: Perms,
    /// Permissions whose denial is enforced: denied by a module that is
    /// not permissive, while the AVC is enforcing. A denied permission
    /// outside this set is granted after being reported once.
    pub(crate) enforced: Perms,
}

impl CachedAv {
    /// Nothing allowed, audited or enforced.
    pub(crate) const NOTHING: CachedAv =
        CachedAv { allowed: Perms::NONE, auditallow: Perms::NONE, auditdeny: Perms::NONE, enforced: Perms::NONE };

    /// The decision for `requested`, taken from the snapshot `seqno`.
    #[inline]
    pub(crate) fn decide(self, requested: Perms, seqno: u64) -> Decision {
        let allowed = requested & self.allowed;
        let denied = requested & !self.allowed;
        Decision {
            allowed,
            denied,
            auditallow: allowed & self.auditallow,
            auditdeny: denied & self.auditdeny,
            permissive: !denied.is_empty() && (denied & self.enforced).is_empty(),
            seqno,
        }
    }

    /// The same vector with `perms` granted: what a permissive denial turns
    /// into once reported (the kernel's `avc_update_node(AVC_CALLBACK_GRANT)`).
    pub(crate) fn granting(self, perms: Perms) -> CachedAv {
        CachedAv { allowed: self.allowed | perms, ..self }
    }
}

/// The answer to one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Requested permissions that are allowed.
    pub allowed: Perms,
    /// Requested permissions that are denied (enforced or not).
    pub denied: Perms,
    /// Of `allowed`, those the policy says to audit (`auditallow`).
    pub auditallow: Perms,
    /// Of `denied`, those to audit (not covered by `dontaudit`).
    pub auditdeny: Perms,
    /// Something was denied, but no denial is enforced: global permissive
    /// mode, or every denying module is permissive for this subject.
    pub permissive: bool,
    /// Sequence number of the snapshot that made the decision.
    pub seqno: u64,
}

impl Decision {
    /// The check passes: nothing denied, or the denial is not enforced.
    pub fn passes(&self) -> bool {
        self.denied.is_empty() || self.permissive
    }

    /// The permissions the kernel would audit (`avc_audit_required`): the
    /// audited denials if anything was denied, else the audited grants.
    pub fn audited(&self) -> Perms {
        if self.denied.is_empty() {
            self.auditallow
        } else {
            self.auditdeny
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decide_masks_by_request() {
        let av = CachedAv {
            allowed: Perms::from_bits(0b0011),
            auditallow: Perms::from_bits(0b0010),
            auditdeny: Perms::from_bits(0b0100),
            enforced: Perms::from_bits(0b1100),
        };
        let d = av.decide(Perms::from_bits(0b0110), 7);
        assert_eq!(d.allowed, Perms::from_bits(0b0010));
        assert_eq!(d.denied, Perms::from_bits(0b0100));
        assert_eq!(d.audited(), Perms::from_bits(0b0100));
        assert!(!d.passes());
        assert_eq!(d.seqno, 7);
        let granted = av.granting(Perms::from_bits(0b0100)).decide(Perms::from_bits(0b0110), 7);
        assert!(granted.passes() && granted.denied.is_empty());
        assert_eq!(granted.audited(), Perms::from_bits(0b0010));
        let unenforced = CachedAv { enforced: Perms::NONE, ..av }.decide(Perms::from_bits(0b0100), 1);
        assert!(unenforced.permissive && unenforced.passes());
    }
}
