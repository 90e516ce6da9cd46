//! SELinux as a module: a loaded policy, SID resolution against it, and
//! the [`Module`] view that computes decisions from a snapshot.
//!
//! SIDs name context strings and survive reloads; each loaded policy
//! resolves a SID to its numeric [`Context`] once, on the miss path, and
//! keeps the result ([`ContextCache`]). A context the policy rejects (its
//! type was removed or renamed, its role no longer has the type, ...)
//! resolves to the policy's unlabeled context, as the kernel's sidtab
//! does after a reload: the initial SID 3 ("unlabeled") of the policy, or
//! `system_u:object_r:unlabeled_t[:s0]` if the policy declares none. A
//! policy with neither denies everything to such SIDs.

use std::sync::Arc;

use rampart_policy::{BitSet, Booleans, Context, Policy};

use crate::error::AvcError;
use crate::mapping::Mapping;
use crate::module::{Module, ModuleDecision, Query};
use crate::resolve::ResolvedMapping;
use crate::segmented::SegmentedVec;
use crate::sid::Sid;

/// The kernel's initial SID number of the unlabeled context.
const SECINITSID_UNLABELED: u32 = 3;

/// A policy as the AVC uses it: the policy, the caller's mapping resolved
/// against it, and its SID resolutions. Shared by every snapshot of the
/// same policy (boolean or enforcing changes keep it).
pub(crate) struct LoadedPolicy {
    pub(crate) policy: Arc<Policy>,
    pub(crate) mapping: ResolvedMapping,
    contexts: ContextCache,
}

impl LoadedPolicy {
    /// Fails when the policy says `handle_unknown reject` and lacks a
    /// declared class or permission.
    pub(crate) fn new(policy: Arc<Policy>, mapping: &Mapping) -> Result<LoadedPolicy, AvcError> {
        let mapping = ResolvedMapping::new(mapping, &policy)?;
        let contexts = ContextCache::new(&policy);
        Ok(LoadedPolicy { policy, mapping, contexts })
    }
}

/// SID -> numeric context in one policy, resolved lazily.
struct ContextCache {
    /// What rejected contexts resolve to.
    unlabeled: Option<Context>,
    /// Per SID: the resolution (`None`: rejected and no unlabeled context).
    resolved: SegmentedVec<Option<Context>>,
}

impl ContextCache {
    fn new(policy: &Policy) -> ContextCache {
        ContextCache { unlabeled: unlabeled_context(policy), resolved: SegmentedVec::new() }
    }

    /// The context of `sid` (whose string is `context`) in `policy`.
    fn resolve(&self, policy: &Policy, sid: Sid, context: &str) -> Option<&Context> {
        if context.is_empty() {
            // A SID the table does not know (yet): like the kernel's
            // sidtab, answer unlabeled, but do not remember it, since the
            // SID may be interned later with a real context.
            return self.unlabeled.as_ref();
        }
        let resolved = self
            .resolved
            .get_or_init(sid.index(), || policy.parse_context(context).ok().or_else(|| self.unlabeled.clone()));
        resolved.and_then(Option::as_ref)
    }
}

fn unlabeled_context(policy: &Policy) -> Option<Context> {
    if let Some((_, c)) = policy.ocontexts.initial_sids.iter().find(|(sid, _)| *sid == SECINITSID_UNLABELED) {
        return Some(c.clone());
    }
    let fallback = if policy.mls { "system_u:object_r:unlabeled_t:s0" } else { "system_u:object_r:unlabeled_t" };
    policy.parse_context(fallback).ok()
}

/// SELinux over one snapshot's policy, booleans and runtime permissive
/// types.
pub(crate) struct SelinuxModule<'s> {
    pub(crate) loaded: &'s LoadedPolicy,
    pub(crate) bools: &'s Booleans,
    /// Types made permissive at run time (`Avc::set_permissive_domain`),
    /// indexed by type value like `Policy::permissive`.
    pub(crate) permissive_types: &'s BitSet,
}

/// The name SELinux has among the modules.
pub const SELINUX_MODULE: &str = "selinux";

impl Module for SelinuxModule<'_> {
    fn name(&self) -> &str {
        SELINUX_MODULE
    }

    fn check(&self, query: &Query<'_>) -> ModuleDecision {
        let policy = &*self.loaded.policy;
        let contexts = &self.loaded.contexts;
        let (Some(s), Some(t)) = (
            contexts.resolve(policy, query.source, query.scontext),
            contexts.resolve(policy, query.target, query.tcontext),
        ) else {
            return ModuleDecision::DENY_ALL;
        };
        let mut decision = match self.loaded.mapping.policy_class(query.class) {
            Some(Some(class)) => self.loaded.mapping.map(query.class, &policy.compute_av(self.bools, s, t, class)),
            Some(None) => self.loaded.mapping.unknown_class(),
            None => ModuleDecision::DENY_ALL,
        };
        // Like the kernel, the subject's permissiveness holds whatever the
        // class (`compute_av` sets it too, but not for unknown classes).
        decision.permissive |= policy.is_permissive(s.ty) || self.permissive_types.contains(s.ty.0);
        decision
    }
}
