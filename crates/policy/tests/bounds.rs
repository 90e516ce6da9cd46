//! Typebounds chains: the kernel and libsepol mask a bounded type by its
//! bound recursively (`context_struct_compute_av` ->
//! `type_attribute_bounds_av` -> `context_struct_compute_av`). libsepol
//! 3.4 crashes on this query, so the expectation is derived from the
//! kernel source: `a_t` < `b_t` < `c_t`, and a constraint removes getattr
//! from `c_t` only; `b_t` loses getattr to its bound, so `a_t` must too.
//! `bounds_chain.bin` is `bounds_chain.conf` compiled by `checkpolicy -c 33`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rampart_policy::{Booleans, Policy};

#[test]
fn bounds_chain_masks_every_level() {
    let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/bounds_chain.bin")).unwrap();
    let p = Policy::from_bytes(&bytes).unwrap();
    let b = Booleans::defaults(&p);
    let file = p.class_by_name("file").unwrap();
    let read = p.perm_bit(file, "read").unwrap();
    let getattr = p.perm_bit(file, "getattr").unwrap();
    let f = p.parse_context("system_u:object_r:f_t").unwrap();
    let av =
        |ty: &str| p.compute_av(&b, &p.parse_context(&format!("system_u:system_r:{ty}")).unwrap(), &f, file).allowed;
    assert_eq!(av("c_t") & getattr, 0, "the constraint removes getattr from c_t");
    assert_eq!(av("c_t"), read);
    assert_eq!(av("b_t"), read, "b_t is bounded by c_t");
    assert_eq!(av("a_t"), read, "a_t is bounded by b_t, itself bounded by c_t");
}

/// The kernel's `security_bounded_transition` walks the new type's
/// bounds up to the old type: c_t may enter b_t and a_t, b_t may enter
/// a_t, never the other way, and f_t, outside the chain, neither.
#[test]
fn a_bounded_transition_follows_the_chain_upwards() {
    let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/bounds_chain.bin")).unwrap();
    let p = Policy::from_bytes(&bytes).unwrap();
    let t = |name: &str| p.type_by_name(name).unwrap();
    for (old, new) in [("c_t", "b_t"), ("c_t", "a_t"), ("b_t", "a_t"), ("a_t", "a_t")] {
        assert!(p.bounded_transition(t(old), t(new)), "{old} -> {new} is bounded");
    }
    for (old, new) in [("a_t", "b_t"), ("b_t", "c_t"), ("a_t", "c_t"), ("f_t", "a_t"), ("a_t", "f_t")] {
        assert!(!p.bounded_transition(t(old), t(new)), "{old} -> {new} is not bounded");
    }
}
