//! Helpers for unit tests that compare with setools on the system policy.

use rampart_policy::Policy;

/// The system policy and its path, or `None` (with a message) if absent.
pub fn system_policy() -> Option<(String, Policy)> {
    let path = match rampart_policy::default_policy_path() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("skipped: no system policy ({e})");
            return None;
        }
    };
    match Policy::from_file(&path) {
        Ok(p) => Some((path.display().to_string(), p)),
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

/// The stdout of a setools command, or `None` (with a message) if it is
/// not installed or fails.
pub fn tool(name: &str, args: &[&str]) -> Option<String> {
    match std::process::Command::new(name).args(args).output() {
        Ok(o) if o.status.success() => Some(String::from_utf8_lossy(&o.stdout).into_owned()),
        Ok(o) => {
            eprintln!("skipped: `{name}` failed: {}", String::from_utf8_lossy(&o.stderr));
            None
        }
        Err(e) => {
            eprintln!("skipped: `{name}` not available ({e})");
            None
        }
    }
}
