//! MLS level relations, as libsepol's mls_types.h defines them.
//!
//! Sensitivities compare by value: the policy's `dominance` statement
//! orders them, and the compiler numbers them in that order.

use crate::model::{Level, Range};

/// `l1 dom l2`: l1's sensitivity is at least l2's and l1 has every
/// category of l2.
pub fn dominates(l1: &Level, l2: &Level) -> bool {
    l1.sens >= l2.sens && l1.cats.is_superset(&l2.cats)
}

/// Neither dominates the other.
pub fn incomparable(l1: &Level, l2: &Level) -> bool {
    !dominates(l1, l2) && !dominates(l2, l1)
}

pub fn level_eq(l1: &Level, l2: &Level) -> bool {
    l1 == l2
}

/// `r1` contains `r2`: r2.low dom r1.low and r1.high dom r2.high.
pub fn range_contains(r1: &Range, r2: &Range) -> bool {
    dominates(&r2.low, &r1.low) && dominates(&r1.high, &r2.high)
}
