//! Policy capabilities by number, against setools' `seinfo --polcap -x`
//! on the system policy (Debian's declares five, `nnp_nosuid_transition`
//! among them): the kernel's numbering (`enum policydb_cap`) is the
//! bit the reader reports.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

use rampart_policy::{default_policy_path, Policy, POLICYCAP_NNP_NOSUID_TRANSITION};

/// security/selinux/include/policycap_names.h, in order.
const NAMES: [&str; 10] = [
    "network_peer_controls",
    "open_perms",
    "extended_socket_class",
    "always_check_network",
    "cgroup_seclabel",
    "nnp_nosuid_transition",
    "genfs_seclabel_symlinks",
    "ioctl_skip_cloexec",
    "userspace_initial_context",
    "netlink_xperm",
];

#[test]
#[ignore = "needs the system policy and setools: compared with seinfo"]
fn policy_capabilities_match_seinfo() {
    let path = default_policy_path().unwrap_or_else(|e| {
        panic!("missing prerequisite: the system policy ({e}); install it with scripts/install-deps.sh")
    });
    let out =
        Command::new("seinfo").args(["--polcap", "-x"]).arg(&path).output().unwrap_or_else(|e| {
            panic!("missing prerequisite: seinfo ({e}); install setools with scripts/install-deps.sh")
        });
    assert!(out.status.success(), "seinfo: {}", String::from_utf8_lossy(&out.stderr));
    let listed: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("policycap ")?.strip_suffix(';').map(str::to_owned))
        .collect();
    assert!(listed.iter().any(|n| n == "nnp_nosuid_transition"), "the system policy declares it: {listed:?}");
    let p = Policy::from_bytes(&std::fs::read(&path).unwrap()).unwrap();
    for (bit, name) in (0u32..).zip(NAMES) {
        assert_eq!(p.has_policycap(bit), listed.iter().any(|n| n == name), "{name} (bit {bit})");
    }
    assert_eq!(NAMES[POLICYCAP_NNP_NOSUID_TRANSITION as usize], "nnp_nosuid_transition");
}
