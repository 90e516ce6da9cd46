//! Why one permission is granted or denied: the decision broken into the
//! kernel's steps (TE rules, constraints, role transition, typebounds).
//!
//! The verdict is always the engine's own [`Policy::compute_av`]; this
//! module only finds the rules and checks that explain it, so an
//! explanation that disagrees with the verdict is reported, not hidden.

use rampart_policy::{
    avtab_kind, AccessVector, AvDecision, AvRule, Booleans, ClassId, Constraint, Context, Policy, TypeId,
};

use crate::rules::av_rules;

pub struct Analysis<'a> {
    pub decision: AvDecision,
    pub granted: bool,
    /// Allow rules granting the permission, in effect.
    pub allow_active: Vec<&'a AvRule>,
    /// Conditional allow rules granting it whose branch is off.
    pub allow_inactive: Vec<&'a AvRule>,
    /// Auditallow rules in effect that name it.
    pub auditallow: Vec<&'a AvRule>,
    /// Dontaudit rules in effect that silence it.
    pub dontaudit: Vec<&'a AvRule>,
    /// Constraints on the permission that fail for these contexts.
    pub failed_constraints: Vec<&'a Constraint>,
    /// A process transition changing role with no `allow R1 R2;`.
    pub role_change_denied: bool,
    /// The source's bounding type, when the bound is not granted the
    /// permission (with the target's bound, if it has one).
    pub bounded_by: Option<(TypeId, Option<TypeId>)>,
}

impl Analysis<'_> {
    /// Granted by the TE rules, before constraints and the later steps.
    pub fn te_granted(&self) -> bool {
        !self.allow_active.is_empty()
    }

    /// Whether the steps found account for the engine's verdict.
    pub fn consistent(&self) -> bool {
        let removed = !self.failed_constraints.is_empty() || self.role_change_denied || self.bounded_by.is_some();
        self.granted == (self.te_granted() && !removed)
    }
}

pub fn analyze<'a>(
    policy: &'a Policy,
    bools: &Booleans,
    s: &Context,
    t: &Context,
    class: ClassId,
    bit: AccessVector,
) -> Analysis<'a> {
    let decision = policy.compute_av(bools, s, t, class);
    let mut a = Analysis {
        decision,
        granted: decision.allowed & bit != 0,
        allow_active: Vec::new(),
        allow_inactive: Vec::new(),
        auditallow: Vec::new(),
        dontaudit: Vec::new(),
        failed_constraints: Vec::new(),
        role_change_denied: false,
        bounded_by: None,
    };
    for r in av_rules(policy, bools, s.ty, t.ty, class) {
        let rule = r.rule;
        match rule.kind {
            avtab_kind::ALLOWED if rule.data & bit != 0 => {
                if r.active {
                    a.allow_active.push(rule);
                } else {
                    a.allow_inactive.push(rule);
                }
            }
            avtab_kind::AUDITALLOW if r.active && rule.data & bit != 0 => a.auditallow.push(rule),
            avtab_kind::AUDITDENY if r.active && rule.data & bit == 0 => a.dontaudit.push(rule),
            _ => {}
        }
    }
    if !a.te_granted() {
        return a;
    }
    if let Some(cd) = policy.class(class) {
        a.failed_constraints =
            cd.constraints.iter().filter(|c| c.perms & bit != 0 && !policy.constraint_holds(&c.expr, s, t)).collect();
    }
    a.role_change_denied = Some(class) == policy.process_class
        && bit & policy.process_trans_dyntrans != 0
        && s.role != t.role
        && !policy.role_allow.iter().any(|ra| ra.role == s.role && ra.new_role == t.role);
    a.bounded_by = bound_denies(policy, bools, s, t, class, bit);
    a
}

/// libsepol's typebounds step: a bounded source type keeps only what its
/// bound (acting on the target's bound, if any) is granted.
fn bound_denies(
    policy: &Policy,
    bools: &Booleans,
    s: &Context,
    t: &Context,
    class: ClassId,
    bit: AccessVector,
) -> Option<(TypeId, Option<TypeId>)> {
    let bound = policy.types.get(s.ty.index()).map(|d| d.bounds).filter(|&b| b != 0)?;
    let target_bound = policy.types.get(t.ty.index()).map(|d| d.bounds).filter(|&b| b != 0).map(TypeId);
    let mut lo_s = s.clone();
    lo_s.ty = TypeId(bound);
    let mut lo_t = t.clone();
    if let Some(tb) = target_bound {
        lo_t.ty = tb;
    }
    let lo = policy.compute_av(bools, &lo_s, &lo_t, class);
    (lo.allowed & bit == 0).then_some((TypeId(bound), target_bound))
}
