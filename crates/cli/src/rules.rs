//! Finding the access-vector rules that apply to a pair of types, the way
//! the kernel does: a rule applies when its source is the source type or
//! one of its attributes, and likewise for the target.

use rampart_policy::{avtab_kind, AvRule, Booleans, ClassId, CondState, Policy, RuleCond, TypeId};

/// An applicable rule and whether it is in effect under the booleans.
pub struct Applicable<'a> {
    pub rule: &'a AvRule,
    pub active: bool,
}

/// Every allow, auditallow and dontaudit rule of `class` from `s` to `t`,
/// conditional ones included, in policy order.
pub fn av_rules<'a>(policy: &'a Policy, bools: &Booleans, s: TypeId, t: TypeId, class: ClassId) -> Vec<Applicable<'a>> {
    let (Some(sattrs), Some(tattrs)) = (policy.type_attrs.get(s.index()), policy.type_attrs.get(t.index())) else {
        return Vec::new();
    };
    policy
        .avtab
        .iter()
        .filter(|r| r.kind & avtab_kind::AV != 0 && r.class == class)
        .filter(|r| sattrs.contains(r.source.bit()) && tattrs.contains(r.target.bit()))
        .map(|rule| Applicable { rule, active: is_active(bools, rule.cond) })
        .collect()
}

/// Whether a rule's branch is in effect: always for unconditional rules;
/// for conditional ones when the expression has the branch's value (an
/// undefined expression enables neither branch, as in libsepol).
pub fn is_active(bools: &Booleans, cond: RuleCond) -> bool {
    match cond {
        RuleCond::Always => true,
        RuleCond::If { cond, when } => match bools.cond_state(cond) {
            CondState::True => when,
            CondState::False => !when,
            CondState::Undefined => false,
        },
    }
}
