//! Dense bitmap memory stays proportional to the file: a policy whose
//! type-attribute map would expand quadratically (tens of thousands of
//! types, each in an attribute numbered after all of them) is refused
//! with an error instead of taking hundreds of MiB, while a large but
//! ordinary policy still loads. Policies are compiled by checkpolicy at
//! test time.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fmt::Write;
use std::process::Command;

use rampart_policy::Policy;

/// `types` types; each is in the last-declared attribute, and with
/// `spread`, also in its own attribute (declared after every type).
fn policy_conf(types: usize, spread: bool) -> String {
    let mut s =
        String::from("class process\nclass file\nsid kernel\nclass process { transition }\nclass file { read }\n");
    for i in 0..types {
        writeln!(s, "type ty{i};").unwrap();
    }
    let attrs = if spread { types } else { 1 };
    for a in 0..attrs {
        writeln!(s, "attribute at{a};").unwrap();
    }
    for i in 0..types {
        let own = if spread { i } else { 0 };
        writeln!(s, "typeattribute ty{i} at{own};").unwrap();
    }
    s.push_str("allow at0 ty0:file read;\nrole r;\nrole r types { ty0 };\nuser u roles { r };\nsid kernel u:r:ty0\n");
    s
}

/// `conf` compiled by checkpolicy; fails the test without checkpolicy.
fn compile(name: &str, conf: &str) -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!("rampart-membound-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("policy.conf");
    let out = dir.join("policy.33");
    std::fs::write(&src, conf).unwrap();
    let o =
        Command::new("checkpolicy").args(["-c", "33", "-o"]).arg(&out).arg(&src).output().unwrap_or_else(|e| {
            panic!("missing prerequisite: checkpolicy ({e}); install it with scripts/install-deps.sh")
        });
    assert!(o.status.success(), "checkpolicy failed on {name}: {}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    bytes
}

#[test]
#[ignore = "needs checkpolicy: compiles the policies"]
fn quadratic_expansion_is_refused_and_ordinary_size_loads() {
    let ordinary = compile("ordinary", &policy_conf(20_000, false));
    let p = Policy::from_bytes(&ordinary).expect("20,000 types in one attribute load");
    assert_eq!(p.types.len(), 20_001);

    let crafted = compile("crafted", &policy_conf(30_000, true));
    let err = Policy::from_bytes(&crafted).expect_err("quadratic expansion must be refused");
    assert!(err.to_string().contains("more memory than the file's size justifies"), "{err}");
}
