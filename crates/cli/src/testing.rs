//! Helpers for unit tests that compare with setools on the system policy.
//! Those tests are `#[ignore]`d; run without what they need, they fail
//! saying what is missing and how to install it.

#![allow(clippy::panic)]

use rampart_policy::Policy;

/// Fails the test: `what` is not installed here.
fn missing(what: &str) -> ! {
    panic!("missing prerequisite: {what}; install it with scripts/install-deps.sh")
}

/// The system policy and its path; fails the test if it is absent.
pub fn system_policy() -> (String, Policy) {
    let path = match rampart_policy::default_policy_path() {
        Ok(p) if p.exists() => p,
        Ok(p) => missing(&format!("the system policy at {} (selinux-policy-default)", p.display())),
        Err(e) => missing(&format!("the system policy ({e})")),
    };
    match Policy::from_file(&path) {
        Ok(p) => (path.display().to_string(), p),
        Err(e) => panic!("{e}"),
    }
}

/// The stdout of a setools command; fails the test if it is not
/// installed or fails.
pub fn tool(name: &str, args: &[&str]) -> String {
    match std::process::Command::new(name).args(args).output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        Ok(o) => panic!("`{name}` failed: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => missing(&format!("`{name}` ({e}; setools)")),
    }
}
