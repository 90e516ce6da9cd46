//! `Policy::grants_some` against a decision per type: on Debian's policy,
//! for every domain and what rampartd asks it of (the System V IPC and
//! anonymous inode classes, the file permissions of
//! crates/enforce/src/daemon.rs `forbidden_everywhere`), it says a
//! permission is granted exactly when `compute_av` (checked against
//! libsepol in differential.rs) allows it on some type.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rampart_policy::{Booleans, Context, Policy, TypeId};

const POLICY: &str = "/etc/selinux/default/policy/policy.33";

#[test]
fn grants_some_is_a_decision_over_every_type() {
    let Ok(bytes) = std::fs::read(POLICY) else {
        panic!("{POLICY} is missing: install selinux-policy-default (scripts/install-deps.sh)");
    };
    let policy = Policy::from_bytes(&bytes).unwrap();
    let bools = Booleans::defaults(&policy);
    let domain = policy.names.types.get("domain").copied().expect("the domain attribute");
    let domains = &policy.attr_types[domain.index()];
    let types: Vec<TypeId> =
        (0..policy.types.len()).filter(|&i| !policy.types[i].attribute).map(|i| TypeId(i as u32 + 1)).collect();
    let mut checked = 0;
    let (mut granted, mut refused) = (0, 0);
    // Whole classes, and the permissions `forbid` asks of files.
    let asked = [
        ("shm", None),
        ("sem", None),
        ("msgq", None),
        ("anon_inode", None),
        ("dir", Some("remove_name")),
        ("file", Some("setattr")),
        ("dir", Some("setattr")),
    ];
    for (class, perm) in asked {
        let c = policy.class_by_name(class).unwrap();
        let bits = perm.map_or(u32::MAX, |p| policy.perm_bit(c, p).unwrap());
        for &d in types.iter().filter(|&&t| domains.contains(t.0 - 1)) {
            let s = Context { ty: d, ..policy.parse_context("system_u:system_r:kernel_t:s0").unwrap() };
            let brute = types
                .iter()
                .any(|&t| policy.compute_av(&bools, &s, &Context { ty: t, ..s.clone() }, c).allowed & bits != 0);
            assert_eq!(policy.grants_some(&bools, d, c, bits), brute, "{} {class} {perm:?}", policy.type_name(d));
            checked += 1;
            if brute {
                granted += 1
            } else {
                refused += 1
            }
        }
    }
    assert!(checked > 1000 && granted > 100 && refused > 1000, "{checked} {granted} {refused}");
}
