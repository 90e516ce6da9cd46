//! The label of a memfd (`memory_file_label`) on the system policy,
//! against setools: `seinfo --fs_use` names tmpfs's rule, and every
//! `type_transition DOMAIN tmpfs_t:file TYPE` that `sesearch -T` lists
//! for a domain (not an attribute, not conditional, no file name) is the
//! type its memfds get; a domain without one gets tmpfs_t itself.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

use rampart_label::memory_file_label;
use rampart_policy::{default_policy_path, Booleans, Policy};

fn setools(tool: &str, args: &[&str], policy: &std::path::Path) -> String {
    let out =
        Command::new(tool).args(args).arg(policy).output().unwrap_or_else(|e| {
            panic!("missing prerequisite: {tool} ({e}); install setools with scripts/install-deps.sh")
        });
    assert!(out.status.success(), "{tool}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[ignore = "needs the system policy and setools: compared with seinfo and sesearch"]
fn memfd_labels_match_the_policys_tmpfs_transitions() {
    let path = default_policy_path().unwrap_or_else(|e| {
        panic!("missing prerequisite: the system policy ({e}); install it with scripts/install-deps.sh")
    });
    let p = Policy::from_bytes(&std::fs::read(&path).unwrap()).unwrap();
    let bools = Booleans::defaults(&p);
    let fs_use = setools("seinfo", &["--fs_use", "-x"], &path);
    assert!(
        fs_use.lines().any(|l| l.trim() == "fs_use_trans tmpfs system_u:object_r:tmpfs_t:s0;"),
        "Debian's policy labels tmpfs by transition: {fs_use}"
    );
    let rules = setools("sesearch", &["-T", "-t", "tmpfs_t", "-c", "file"], &path);
    let type_of = |domain: &str| -> String {
        // Only the type of the maker decides (a file's role is object_r,
        // its range the maker's low level): object_r is valid with every
        // type, where each domain's own role is not known here.
        let subject = p.parse_context(&format!("system_u:object_r:{domain}:s0")).unwrap();
        let made = memory_file_label(&p, &bools, &subject, "tmpfs").expect("a rule for tmpfs").unwrap();
        let text = p.context_to_string(&made);
        text.split(':').nth(2).unwrap().to_owned()
    };
    let mut checked = 0;
    for line in rules.lines().map(str::trim) {
        // `type_transition SOURCE tmpfs_t:file TYPE;`, unconditional and
        // without a file name.
        let Some(rest) = line.strip_prefix("type_transition ") else { continue };
        if line.contains('"') || line.contains('[') {
            continue;
        }
        let words: Vec<&str> = rest.trim_end_matches(';').split_whitespace().collect();
        let [source, "tmpfs_t:file", made] = words[..] else { continue };
        // Attributes' rules are expanded to their types in the policy:
        // their domains are checked where listed by name.
        let ty = p.type_by_name(source).unwrap_or_else(|| panic!("unknown type {source}"));
        if p.types[ty.index()].attribute {
            continue;
        }
        assert_eq!(type_of(source), made, "{line}");
        checked += 1;
    }
    assert!(checked > 50, "only {checked} rules checked:\n{rules}");
    // A domain with no rule of its own: tmpfs_t itself.
    let listed = |d: &str| rules.lines().any(|l| l.split_whitespace().nth(1) == Some(d));
    assert!(!listed("kernel_t"), "{rules}");
    assert_eq!(type_of("kernel_t"), "tmpfs_t");
}
