//! Boolean values and the conditional states they imply.
//!
//! Kept apart from the immutable [`Policy`] so changing booleans builds a
//! small new value (one byte per conditional) instead of touching the
//! policy; several booleans change atomically by building one new
//! `Booleans` and publishing it.

use crate::model::{BoolId, CondExpr};
use crate::policy::Policy;

/// State of one conditional: which branch's rules are active.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum CondState {
    False = 0,
    True = 1,
    /// The expression is malformed: libsepol disables both branches.
    Undefined = 2,
}

/// Boolean values plus the evaluated state of every conditional.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Booleans {
    values: Vec<bool>,
    conds: Vec<CondState>,
}

impl Booleans {
    /// The defaults written in the policy file.
    pub fn defaults(policy: &Policy) -> Booleans {
        Booleans::from_values(policy, policy.bools.iter().map(|b| b.default).collect())
    }

    /// Every boolean set to `value`.
    pub fn all(policy: &Policy, value: bool) -> Booleans {
        Booleans::from_values(policy, vec![value; policy.bools.len()])
    }

    /// Booleans with the given values (one per policy boolean, by value - 1).
    /// Extra values are ignored and missing ones take their default.
    pub fn from_values(policy: &Policy, mut values: Vec<bool>) -> Booleans {
        let n = policy.bools.len();
        values.truncate(n);
        for b in &policy.bools[values.len()..] {
            values.push(b.default);
        }
        let conds = policy.conds.iter().map(|c| evaluate(&c.expr, &values)).collect();
        Booleans { values, conds }
    }

    /// A copy with some booleans changed, all at once.
    pub fn with(&self, policy: &Policy, changes: &[(BoolId, bool)]) -> Booleans {
        let mut values = self.values.clone();
        for &(b, v) in changes {
            if let Some(slot) = values.get_mut(b.index()) {
                *slot = v;
            }
        }
        Booleans::from_values(policy, values)
    }

    pub fn get(&self, b: BoolId) -> Option<bool> {
        self.values.get(b.index()).copied()
    }

    pub fn values(&self) -> &[bool] {
        &self.values
    }

    /// The state of conditional `cond` (index into `Policy::conds`).
    pub fn cond_state(&self, cond: u32) -> CondState {
        self.conds.get(cond as usize).copied().unwrap_or(CondState::Undefined)
    }

    pub(crate) fn cond_states(&self) -> &[CondState] {
        &self.conds
    }
}

/// Stack depth limit of libsepol's evaluator (`COND_EXPR_MAXDEPTH`).
const MAX_DEPTH: usize = 10;

/// libsepol `cond_evaluate_expr`: a postfix stack machine. Underflow, an
/// empty expression or more than ten operands pending is undefined; like
/// libsepol, the result is the bottom of the stack even if more remain.
fn evaluate(expr: &[CondExpr], values: &[bool]) -> CondState {
    let mut stack: Vec<bool> = Vec::with_capacity(MAX_DEPTH);
    for e in expr {
        let v = match e {
            CondExpr::Bool(_) if stack.len() == MAX_DEPTH => return CondState::Undefined,
            CondExpr::Bool(b) => match values.get(b.index()) {
                Some(&v) => v,
                None => return CondState::Undefined,
            },
            CondExpr::Not => match stack.pop() {
                Some(a) => !a,
                None => return CondState::Undefined,
            },
            _ => {
                let (Some(b), Some(a)) = (stack.pop(), stack.pop()) else {
                    return CondState::Undefined;
                };
                match e {
                    CondExpr::Or => a || b,
                    CondExpr::And => a && b,
                    CondExpr::Xor => a ^ b,
                    CondExpr::Eq => a == b,
                    _ => a != b,
                }
            }
        };
        stack.push(v);
    }
    match stack.first() {
        Some(true) => CondState::True,
        Some(false) => CondState::False,
        None => CondState::Undefined,
    }
}
