//! `uniform_below`: a file below a prefix is decided without its name
//! only when every name below it gets the same answer. Checked against
//! `path_perm` (the kernel's `aa_path_perm`, itself checked against the
//! kernel's decisions in reference.rs) on names below the prefix, for
//! profiles compiled by apparmor_parser.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use rampart_apparmor::file::{path_perm, perms_decision, uniform_below};
use rampart_apparmor::perms::{MAY_APPEND, MAY_READ, MAY_WRITE};
use rampart_apparmor::{Policy, Subject};

mod common;

const PROFILES: &str = r#"
profile everything_rw {
  /srv/** rw,
}
profile owner_only {
  owner /srv/** rw,
  /srv/** r,
}
profile one_file_differs {
  /srv/** rw,
  deny /srv/secret w,
}
profile audited_below {
  /srv/** r,
  audit /srv/logs/** r,
}
profile nothing {
  /etc/hosts r,
}
"#;

/// Names strictly below `/srv/` (`/srv/` itself is not covered).
const NAMES: [&[u8]; 6] =
    [b"/srv/a", b"/srv/secret", b"/srv/logs/x", b"/srv/d/", b"/srv/deep/er/file", b"/srv/caf\xe9"];

#[test]
#[ignore = "needs apparmor_parser: compiles the profiles"]
fn a_prefix_is_uniform_only_when_every_name_below_it_agrees() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("aa-uniform-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, bin) = (dir.join("profiles"), dir.join("profiles.bin"));
    std::fs::write(&src, PROFILES).unwrap();
    common::apparmor_parser(&src, &bin, &[]);
    let policy = Policy::from_files(&[&bin]).unwrap();
    let expect = [
        ("everything_rw", true),
        ("owner_only", true),
        ("one_file_differs", false),
        ("audited_below", false),
        ("nothing", true),
    ];
    for (name, uniform) in expect {
        let Some(Subject::Profile(p)) = policy.resolve(name) else { panic!("{name} is not a profile") };
        let got = uniform_below(p, b"/srv/", 100_000);
        assert_eq!(got.is_some(), uniform, "{name}");
        let Some((other, owned)) = got else { continue };
        // Where it says uniform, the decision without the name is the
        // decision with it, for every name below and every request.
        for file in NAMES {
            for request in [MAY_READ, MAY_WRITE, MAY_READ | MAY_WRITE, MAY_APPEND] {
                for (owner, perms) in [(false, other), (true, owned)] {
                    let with = path_perm(Subject::Profile(p), file, request, owner);
                    let without = perms_decision(p, perms, request);
                    assert_eq!(
                        (with.allowed, with.record.map(|r| (r.kind, r.request, r.denied))),
                        (without.allowed, without.record.map(|r| (r.kind, r.request, r.denied))),
                        "{name} {} request {request:#x} owner {owner}",
                        String::from_utf8_lossy(file)
                    );
                }
            }
        }
    }
}
