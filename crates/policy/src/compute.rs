//! Access decisions: the kernel's `context_struct_compute_av`.
//!
//! Steps, in the kernel's order:
//! 1. TE rules: for every attribute of the source and of the target
//!    (each type counts as its own attribute), OR the allow and
//!    auditallow rules, AND the auditdeny (= not dontaudit) rules, the
//!    conditional ones only when their branch is active;
//! 2. constraints (including MLS ones) remove the permissions they guard
//!    when their expression is false;
//! 3. a process transition that changes role needs a `role_allow`;
//! 4. typebounds: a bounded source keeps only what its bounding type
//!    would get.
//!
//! This is the slow path (no cache): it is what the AVC calls on a miss.

use crate::bitset::BitSet;
use crate::booleans::{Booleans, CondState};
use crate::index::AvEntry;
use crate::mls;
use crate::model::{avtab_kind, cexpr, AccessVector, ClassId, ConstraintExpr, Context, TypeId};
use crate::policy::Policy;

/// The outcome of one access computation, as `struct av_decision`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct AvDecision {
    pub allowed: AccessVector,
    pub auditallow: AccessVector,
    pub auditdeny: AccessVector,
    /// The source type is permissive: denials are logged, not enforced.
    pub permissive: bool,
}

impl Policy {
    /// Whether an `allow` rule active under `bools` grants type `sty` one
    /// of `perms` of `class` on some target: a bound on what
    /// [`Policy::compute_av`] can allow it on any type (constraints and
    /// type bounds only take away), found from the rules instead of a
    /// decision per type. False says none of `perms` is ever allowed to
    /// `sty` on any object of the class.
    pub fn grants_some(&self, bools: &Booleans, sty: TypeId, class: ClassId, perms: AccessVector) -> bool {
        let conds = bools.cond_states();
        let Some(sattrs) = self.index.attrs_of.get(sty.index()) else { return false };
        sattrs.iter().any(|&a| {
            self.index
                .by_source
                .slice(a as usize, class.index())
                .iter()
                .any(|e| e.kind == avtab_kind::ALLOWED && e.data & perms != 0 && entry_active(conds, e))
        })
    }

    /// Computes the decision for `scontext` acting on `tcontext` of class
    /// `class`, under the boolean state `bools`. Contexts must be valid in
    /// this policy (see [`Policy::parse_context`]); an unknown class gives
    /// an empty decision, as in libsepol.
    pub fn compute_av(&self, bools: &Booleans, s: &Context, t: &Context, class: ClassId) -> AvDecision {
        let mut d = self.compute_av_bounded(bools, s, t, class);
        d.permissive = self.is_permissive(s.ty);
        d
    }

    /// Steps 1-4. Typebounds recurse through this, as in the kernel and
    /// libsepol: a chain `a_t` < `b_t` < `c_t` is masked at every level.
    /// INVARIANT (acyclic-bounds): the reader refused bounds cycles, so
    /// the recursion ends.
    fn compute_av_bounded(&self, bools: &Booleans, s: &Context, t: &Context, class: ClassId) -> AvDecision {
        let mut d = self.compute_av_te_constraints(bools, s, t, class);
        self.bounds_av(bools, s, t, class, &mut d);
        d
    }

    /// Steps 1-3: everything but typebounds.
    fn compute_av_te_constraints(&self, bools: &Booleans, s: &Context, t: &Context, class: ClassId) -> AvDecision {
        let mut d = AvDecision { allowed: 0, auditallow: 0, auditdeny: u32::MAX, permissive: false };
        let Some(class_datum) = self.class(class) else { return d };
        self.te_av(bools.cond_states(), s.ty, t.ty, class, &mut d);
        for c in &class_datum.constraints {
            if c.perms & d.allowed != 0 && !self.constraint_holds(&c.expr, s, t) {
                d.allowed &= !c.perms;
            }
        }
        if Some(class) == self.process_class
            && d.allowed & self.process_trans_dyntrans != 0
            && s.role != t.role
            && !self.role_allow.iter().any(|ra| ra.role == s.role && ra.new_role == t.role)
        {
            d.allowed &= !self.process_trans_dyntrans;
        }
        d
    }

    /// libsepol `type_attribute_bounds_av`: a source type with a bounding
    /// type may not exceed what the bound gets (target bound too, if any).
    fn bounds_av(&self, bools: &Booleans, s: &Context, t: &Context, class: ClassId, d: &mut AvDecision) {
        let Some(source) = self.types.get(s.ty.index()) else { return };
        if source.bounds == 0 {
            return;
        }
        let mut lo_s = s.clone();
        lo_s.ty = TypeId(source.bounds);
        let mut lo_t = t.clone();
        if let Some(target) = self.types.get(t.ty.index()) {
            if target.bounds != 0 {
                lo_t.ty = TypeId(target.bounds);
            }
        }
        let lo = self.compute_av_bounded(bools, &lo_s, &lo_t, class);
        d.allowed &= lo.allowed;
    }

    /// The TE part: walks the rules of `class` whose source is one of the
    /// source type's attributes (see [`crate::index`]) and tests the
    /// target's attribute membership with one bit test per rule.
    fn te_av(&self, conds: &[CondState], sty: TypeId, tty: TypeId, class: ClassId, d: &mut AvDecision) {
        let (Some(sattrs), Some(tattrs)) = (self.index.attrs_of.get(sty.index()), self.type_attrs.get(tty.index()))
        else {
            return;
        };
        for &a in sattrs {
            for e in self.index.by_source.slice(a as usize, class.index()) {
                if tattrs.contains(u32::from(e.other) - 1) && entry_active(conds, e) {
                    apply(d, e);
                }
            }
        }
    }

    /// Evaluates a constraint expression (libsepol
    /// `constraint_expr_eval`) for source `s` and target `t`.
    pub fn constraint_holds(&self, expr: &[ConstraintExpr], s: &Context, t: &Context) -> bool {
        let mut stack: Vec<bool> = Vec::with_capacity(8);
        for e in expr {
            let v = match e {
                ConstraintExpr::Not => match stack.pop() {
                    Some(a) => !a,
                    None => return false,
                },
                ConstraintExpr::And | ConstraintExpr::Or => {
                    let (Some(b), Some(a)) = (stack.pop(), stack.pop()) else { return false };
                    if matches!(e, ConstraintExpr::And) {
                        a && b
                    } else {
                        a || b
                    }
                }
                ConstraintExpr::Attr { attr, op } => self.eval_attr(*attr, *op, s, t),
                ConstraintExpr::Names { attr, op, names, .. } => eval_names(*attr, *op, names, s, t),
            };
            stack.push(v);
        }
        stack.pop().unwrap_or(false)
    }

    /// One `CEXPR_ATTR` node: compares an attribute of the two contexts.
    pub(crate) fn eval_attr(&self, attr: u32, op: u32, s: &Context, t: &Context) -> bool {
        let levels = match attr {
            cexpr::L1L2 => Some((&s.range.low, &t.range.low)),
            cexpr::L1H2 => Some((&s.range.low, &t.range.high)),
            cexpr::H1L2 => Some((&s.range.high, &t.range.low)),
            cexpr::H1H2 => Some((&s.range.high, &t.range.high)),
            cexpr::L1H1 => Some((&s.range.low, &s.range.high)),
            cexpr::L2H2 => Some((&t.range.low, &t.range.high)),
            _ => None,
        };
        if let Some((l1, l2)) = levels {
            return match op {
                cexpr::EQ => mls::level_eq(l1, l2),
                cexpr::NEQ => !mls::level_eq(l1, l2),
                cexpr::DOM => mls::dominates(l1, l2),
                cexpr::DOMBY => mls::dominates(l2, l1),
                cexpr::INCOMP => mls::incomparable(l1, l2),
                _ => false,
            };
        }
        let (v1, v2) = match attr {
            cexpr::USER => (s.user.0, t.user.0),
            cexpr::TYPE => (s.ty.0, t.ty.0),
            cexpr::ROLE => {
                let (r1, r2) = (s.role, t.role);
                let dom = |a: crate::model::RoleId, b: crate::model::RoleId| {
                    self.roles.get(a.index()).is_some_and(|r| r.dominates.contains(b.bit()))
                };
                match op {
                    cexpr::DOM => return dom(r1, r2),
                    cexpr::DOMBY => return dom(r2, r1),
                    cexpr::INCOMP => return !dom(r1, r2) && !dom(r2, r1),
                    _ => (r1.0, r2.0),
                }
            }
            _ => return false,
        };
        match op {
            cexpr::EQ => v1 == v2,
            cexpr::NEQ => v1 != v2,
            _ => false,
        }
    }
}

/// One `CEXPR_NAMES` node: is the source's (or, with TARGET, the
/// target's) user, role or type in `names`?
fn eval_names(attr: u32, op: u32, names: &BitSet, s: &Context, t: &Context) -> bool {
    let c = if attr & cexpr::TARGET != 0 { t } else { s };
    let v = if attr & cexpr::USER != 0 {
        c.user.0
    } else if attr & cexpr::ROLE != 0 {
        c.role.0
    } else if attr & cexpr::TYPE != 0 {
        c.ty.0
    } else {
        return false;
    };
    let present = names.contains(v.wrapping_sub(1));
    match op {
        cexpr::EQ => present,
        cexpr::NEQ => !present,
        _ => false,
    }
}

#[inline]
pub(crate) fn entry_active(conds: &[CondState], e: &AvEntry) -> bool {
    if e.cond == 0 {
        return true;
    }
    let i = (e.cond - 1) / 2;
    let when = (e.cond - 1) % 2 == 1;
    match conds.get(i as usize) {
        Some(CondState::True) => when,
        Some(CondState::False) => !when,
        _ => false,
    }
}

#[inline]
fn apply(d: &mut AvDecision, e: &AvEntry) {
    match e.kind {
        avtab_kind::ALLOWED => d.allowed |= e.data,
        avtab_kind::AUDITALLOW => d.auditallow |= e.data,
        avtab_kind::AUDITDENY => d.auditdeny &= e.data,
        _ => {}
    }
}
