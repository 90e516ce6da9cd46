//! Access-vector rules as sesearch writes them:
//! `allow SOURCE TARGET:CLASS { perms }; [ expr ]:True`.

use rampart_policy::{avtab_kind, AvRule, Policy, RuleCond};

use super::{cond, perms};

pub fn kind_name(kind: u16) -> &'static str {
    match kind {
        avtab_kind::ALLOWED => "allow",
        avtab_kind::AUDITALLOW => "auditallow",
        avtab_kind::AUDITDENY => "dontaudit",
        avtab_kind::TRANSITION => "type_transition",
        avtab_kind::MEMBER => "type_member",
        avtab_kind::CHANGE => "type_change",
        avtab_kind::XPERMS_ALLOWED => "allowxperm",
        avtab_kind::XPERMS_AUDITALLOW => "auditallowxperm",
        avtab_kind::XPERMS_DONTAUDIT => "dontauditxperm",
        _ => "unknown",
    }
}

/// The permissions a rule names. A dontaudit rule is stored as the mask of
/// permissions still audited, so it names the class's others.
pub fn rule_perms(policy: &Policy, r: &AvRule) -> Vec<String> {
    let av = if r.kind == avtab_kind::AUDITDENY { !r.data & crate::query::class_mask(policy, r.class) } else { r.data };
    perms::names(policy, r.class, av)
}

/// One AV rule, without the conditional suffix.
pub fn av_rule(policy: &Policy, r: &AvRule) -> String {
    format!(
        "{} {} {}:{} {};",
        kind_name(r.kind),
        policy.type_name(r.source),
        policy.type_name(r.target),
        policy.class_name(r.class),
        perms::sesearch(&rule_perms(policy, r))
    )
}

/// The ` [ expr ]:True` suffix of a conditional rule, empty otherwise.
pub fn cond_suffix(policy: &Policy, r: &AvRule) -> String {
    match r.cond {
        RuleCond::Always => String::new(),
        RuleCond::If { cond: i, when } => {
            let expr = policy.conds.get(i as usize).map_or("<missing>".into(), |c| cond::infix(policy, &c.expr));
            format!(" [ {expr} ]:{}", if when { "True" } else { "False" })
        }
    }
}
