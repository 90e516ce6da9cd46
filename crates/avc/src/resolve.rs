//! A [`Mapping`] resolved against one policy, and the translation of the
//! policy's access vectors into the caller's permission bits: the kernel's
//! `selinux_set_mapping` and `map_decision` (security/selinux/ss/services.c).
//!
//! Names the policy lacks follow its `handle_unknown`:
//! * `deny`: an unknown permission is never allowed and its denial is
//!   audited; an unknown class denies everything;
//! * `allow`: an unknown permission is always allowed; an unknown class
//!   allows everything;
//! * `reject`: resolving fails, so the AVC refuses to load the policy.
//!
//! Bits beyond a class's declared permissions are never allowed (except
//! in an unknown class under `allow`, as in the kernel) and always audited
//! when denied: requesting them is a caller bug the log should show.

use rampart_policy::{AccessVector, AvDecision, ClassId, HandleUnknown, Policy};

use crate::error::AvcError;
use crate::mapping::{ClassIdx, Mapping, Perms};
use crate::module::ModuleDecision;

/// One declared class in one policy.
#[derive(Debug)]
struct ResolvedClass {
    /// The policy's class, `None` if the policy lacks it.
    class: Option<ClassId>,
    /// For each declared permission, its bit in the policy (0: unknown).
    perms: Vec<AccessVector>,
}

/// The whole mapping resolved against one policy.
#[derive(Debug)]
pub(crate) struct ResolvedMapping {
    classes: Vec<ResolvedClass>,
    allow_unknown: bool,
}

impl ResolvedMapping {
    /// Resolves every declared name; fails on the first unknown one when
    /// the policy says `handle_unknown reject`.
    pub(crate) fn new(mapping: &Mapping, policy: &Policy) -> Result<ResolvedMapping, AvcError> {
        let reject = policy.handle_unknown == HandleUnknown::Reject;
        let mut classes = Vec::with_capacity(mapping.decls().len());
        for decl in mapping.decls() {
            let class = policy.class_by_name(&decl.name);
            let Some(class_id) = class else {
                if reject {
                    return Err(AvcError::RejectedUnknown { class: decl.name.clone(), perm: None });
                }
                classes.push(ResolvedClass { class: None, perms: Vec::new() });
                continue;
            };
            let mut perms = Vec::with_capacity(decl.perms.len());
            for perm in &decl.perms {
                let bit = policy.perm_bit(class_id, perm).unwrap_or(0);
                if bit == 0 && reject {
                    return Err(AvcError::RejectedUnknown { class: decl.name.clone(), perm: Some(perm.clone()) });
                }
                perms.push(bit);
            }
            classes.push(ResolvedClass { class, perms });
        }
        Ok(ResolvedMapping { classes, allow_unknown: policy.handle_unknown == HandleUnknown::Allow })
    }

    /// The policy's class for `class`: `Some(None)` if the policy lacks
    /// it, `None` if `class` is not in the mapping.
    pub(crate) fn policy_class(&self, class: ClassIdx) -> Option<Option<ClassId>> {
        Some(self.classes.get(class.index())?.class)
    }

    /// The decision for a class the policy lacks (`security_compute_av`:
    /// everything allowed under `allow`, else nothing; denials audited).
    pub(crate) fn unknown_class(&self) -> ModuleDecision {
        let allowed = if self.allow_unknown { Perms::ALL } else { Perms::NONE };
        ModuleDecision { allowed, auditallow: Perms::NONE, auditdeny: Perms::ALL, permissive: false }
    }

    /// `map_decision`: the policy's vectors in the caller's bits.
    pub(crate) fn map(&self, class: ClassIdx, av: &AvDecision) -> ModuleDecision {
        let Some(resolved) = self.classes.get(class.index()) else { return ModuleDecision::DENY_ALL };
        let (mut allowed, mut auditallow, mut auditdeny) = (0u32, 0u32, 0u32);
        for (i, &bit) in resolved.perms.iter().enumerate() {
            let mine = 1u32 << i;
            let unknown = bit == 0;
            if av.allowed & bit != 0 || (unknown && self.allow_unknown) {
                allowed |= mine;
            }
            if av.auditallow & bit != 0 {
                auditallow |= mine;
            }
            if av.auditdeny & bit != 0 || (unknown && !self.allow_unknown) {
                auditdeny |= mine;
            }
        }
        // Undeclared bits: audited when denied (the kernel's "in case the
        // kernel has a bug" loop).
        auditdeny |= !low_bits(resolved.perms.len());
        ModuleDecision {
            allowed: Perms::from_bits(allowed),
            auditallow: Perms::from_bits(auditallow),
            auditdeny: Perms::from_bits(auditdeny),
            permissive: av.permissive,
        }
    }
}

/// The lowest `n` bits set (`n <= 32`).
fn low_bits(n: usize) -> u32 {
    u32::MAX.checked_shr(32 - n as u32).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::low_bits;

    #[test]
    fn low_bits_edges() {
        assert_eq!(low_bits(0), 0);
        assert_eq!(low_bits(3), 0b111);
        assert_eq!(low_bits(32), u32::MAX);
    }
}
