//! Checking with auditing: `has_perm` = `has_perm_noaudit` + the kernel's
//! `avc_audit`, kept apart so the check itself stays small and callers
//! that audit later (or never) pay nothing for it.

use crate::audit::{AuditEvent, AuditInfo};
use crate::avc::Avc;
use crate::decision::Decision;
use crate::mapping::{ClassIdx, Perms};
use crate::selinux::SELINUX_MODULE;
use crate::sid::Sid;
use crate::snapshot::Snapshot;
use crate::sync;

impl Avc {
    /// Checks like [`Avc::has_perm_noaudit`], then audits when the kernel
    /// would: a denial not covered by `dontaudit`, or a grant marked
    /// `auditallow`. The sink is called after the check, outside any
    /// cache state.
    #[inline]
    pub fn has_perm(&self, ssid: Sid, tsid: Sid, tclass: ClassIdx, requested: Perms, info: &AuditInfo) -> Decision {
        let decision = self.has_perm_noaudit(ssid, tsid, tclass, requested);
        if !decision.audited().is_empty() {
            self.audit(ssid, tsid, tclass, &decision, info);
        }
        decision
    }

    /// Audits `decision` (from [`Avc::has_perm_noaudit`] on the same
    /// arguments) if the kernel would: for callers that must answer before
    /// they log, such as a fanotify responder.
    pub fn audit_decision(&self, ssid: Sid, tsid: Sid, tclass: ClassIdx, decision: &Decision, info: &AuditInfo) {
        if !decision.audited().is_empty() {
            self.audit(ssid, tsid, tclass, decision, info);
        }
    }

    /// Builds and sends the event; names the first module that denied an
    /// audited permission (or asked for an audited grant), asking the
    /// modules again in the snapshot that decided (they are deterministic).
    #[cold]
    #[inline(never)]
    fn audit(&self, ssid: Sid, tsid: Sid, tclass: ClassIdx, decision: &Decision, info: &AuditInfo) {
        let audited = decision.audited();
        let denied = !decision.denied.is_empty();
        let snapshot = self.snapshot_numbered(decision.seqno);
        let mut module: Option<String> = None;
        snapshot.for_each_verdict(&self.sids, &self.mapping, ssid, tsid, tclass, |name, verdict| {
            let involved = if denied { !verdict.allowed & audited } else { verdict.auditallow & audited };
            if module.is_none() && !involved.is_empty() {
                module = Some(name.to_owned());
            }
        });
        let event = AuditEvent {
            denied,
            perms: self.mapping.perm_names(tclass, audited),
            scontext: self.sids.context(ssid).unwrap_or("?"),
            tcontext: self.sids.context(tsid).unwrap_or("?"),
            tclass: self.mapping.class_name(tclass).unwrap_or("?"),
            permissive: decision.permissive,
            module: module.as_deref().unwrap_or(SELINUX_MODULE),
            info,
        };
        self.sink.audit(&event);
        self.slots.with(|slot| self.retire(&slot.stats, Some(snapshot)));
    }

    /// The snapshot `seqno` if this thread still holds it (it does right
    /// after its check), else the current one.
    fn snapshot_numbered(&self, seqno: u64) -> sync::Arc<Snapshot> {
        let held = self.slots.with(|slot| {
            let reader = slot.reader.try_borrow().ok()?;
            reader.held().filter(|s| s.seqno == seqno).cloned()
        });
        held.unwrap_or_else(|| self.published.load())
    }
}
