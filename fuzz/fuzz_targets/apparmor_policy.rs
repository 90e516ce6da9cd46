//! Feeds arbitrary bytes to the AppArmor binary policy reader (one
//! `.replace` write). Loading must never panic or hang; a policy that
//! loads must survive file, link and exec decisions for every profile,
//! attachment and the `info` listing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart_apparmor::{domain, file, perms, query, Policy, Subject};

fuzz_target!(|data: &[u8]| {
    let mut p = Policy::new();
    if p.load(data).is_err() {
        return;
    }
    let _ = query::info(&p);
    let _ = query::attach_line(&p, "/usr/bin/x");
    let paths: [&[u8]; 4] = [b"/", b"/etc/passwd", b"/usr/bin/x", b"/a/b/\xff"];
    for (ns, prof) in p.profiles() {
        let s = Subject::Profile(prof);
        for path in paths {
            for owner in [true, false] {
                let _ = file::path_perm(s, path, perms::parse_letters("rwamlk").unwrap_or(0), owner);
                let _ = file::link_perm(s, path, b"/etc/passwd", owner);
                let _ = domain::exec(&p, ns, s, path, owner);
            }
        }
    }
});
