//! The label of an object on a filesystem labeled by `genfscon` rules
//! (`genfs_label`: sysfs, debugfs, securityfs, proc...) on the system
//! policy, against libsepol's `sepol_genfs_sid`: for every filesystem
//! the policy names, every entry's prefix, a name below it, the prefix
//! cut short, the root and a name no entry starts, for each file class.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rampart_label::genfs_label;
use rampart_policy::{default_policy_path, Policy};

#[test]
#[ignore = "needs the system policy and the libsepol oracle: compared with sepol_genfs_sid"]
fn genfs_labels_match_libsepol() {
    let path = default_policy_path().unwrap_or_else(|e| {
        panic!("missing prerequisite: the system policy ({e}); install it with scripts/install-deps.sh")
    });
    let p = Policy::from_file(&path).unwrap();
    let classes = ["file", "dir", "lnk_file", "chr_file", "blk_file", "sock_file", "fifo_file"];
    let mut queries: Vec<(String, String, &str)> = Vec::new();
    for g in &p.genfs {
        let mut paths = vec!["/".to_owned(), "/no-entry-starts-this".to_owned()];
        for (prefix, ..) in &g.entries {
            paths.push(prefix.clone());
            paths.push(format!("{}/below", prefix.trim_end_matches('/')));
            let mut short = prefix.clone();
            short.pop();
            if !short.is_empty() {
                paths.push(short);
            }
        }
        for path in paths {
            for class in classes {
                queries.push((g.fstype.clone(), path.clone(), class));
            }
        }
    }
    assert!(p.genfs.iter().any(|g| g.fstype == "sysfs"), "Debian's policy labels sysfs by genfscon");
    let mut oracle = rampart_oracle::Oracle::spawn(&path)
        .unwrap_or_else(|e| panic!("cannot start sepol-oracle on {}: {e}", path.display()));
    let mut labeled = 0;
    for (fstype, at, class) in &queries {
        let theirs = oracle.genfs(fstype, at, class).unwrap();
        let class_id = p.class_by_name(class).unwrap();
        let ours = genfs_label(&p, fstype, at, class_id).map(|c| p.context_to_string(c));
        match (&ours, &theirs) {
            (Some(o), Ok(t)) => {
                assert_eq!(o, t, "{fstype} {at} {class}");
                labeled += 1;
            }
            (None, Err(_)) => {}
            _ => panic!("{fstype} {at} {class}: ours {ours:?}, libsepol {theirs:?}"),
        }
    }
    assert!(labeled > 1000, "only {labeled} of {} queries labeled", queries.len());
    eprintln!("{} queries, {labeled} labeled, all as libsepol labels them", queries.len());
}
