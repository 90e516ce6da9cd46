//! The built-in policy of `rampart daemon --no-selinux` (data/
//! apparmor-alone.33) is what checkpolicy makes of its source, and the
//! policy reader loads it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

#[test]
#[ignore = "needs checkpolicy (scripts/install-deps.sh)"]
fn the_committed_policy_is_checkpolicys_output_of_its_source() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("apparmor-alone.{}.33", std::process::id()));
    let run = Command::new("checkpolicy")
        .args(["-U", "allow", "-c", "33", "-o"])
        .arg(&out)
        .arg(data.join("apparmor-alone.conf"))
        .output()
        .unwrap_or_else(|e| panic!("checkpolicy: {e}; install it with scripts/install-deps.sh"));
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let committed = std::fs::read(data.join("apparmor-alone.33")).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), committed, "recompile it as data/apparmor-alone.conf says");
    let _ = std::fs::remove_file(&out);
    let policy = rampart_policy::Policy::from_bytes(&committed).unwrap();
    let ctx = policy.parse_context("system_u:system_r:unconfined_t").unwrap();
    assert!(policy.context_is_valid(&ctx));
}
