//! Finding the system policy the way libselinux does, and load errors.

use std::path::{Path, PathBuf};

use crate::error::PolicyError;

/// Why a policy could not be loaded from disk.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read policy `{path}`: {source}; pass another with --policy")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("`{path}`: {source}")]
    Policy { path: PathBuf, source: PolicyError },
    #[error("no policy found: {0}; install selinux-policy-default or pass --policy PATH")]
    NotFound(String),
}

const SELINUX_ROOT: &str = "/etc/selinux";

/// The system policy: `SELINUXTYPE` from `/etc/selinux/config` (default
/// `default`), then the highest-numbered `policy.N` in
/// `/etc/selinux/TYPE/policy/`.
pub fn default_policy_path() -> Result<PathBuf, LoadError> {
    default_policy_path_in(Path::new(SELINUX_ROOT))
}

/// [`default_policy_path`] under another root (for tests).
pub fn default_policy_path_in(root: &Path) -> Result<PathBuf, LoadError> {
    let config = root.join("config");
    let policy_type = std::fs::read_to_string(&config)
        .ok()
        .and_then(|text| selinux_type(&text))
        .unwrap_or_else(|| "default".to_owned());
    let dir = root.join(&policy_type).join("policy");
    let entries =
        std::fs::read_dir(&dir).map_err(|e| LoadError::NotFound(format!("cannot list `{}`: {e}", dir.display())))?;
    let best = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let n: u32 = name.strip_prefix("policy.")?.parse().ok()?;
            Some((n, e.path()))
        })
        .max_by_key(|(n, _)| *n);
    best.map(|(_, p)| p).ok_or_else(|| LoadError::NotFound(format!("no policy.N in `{}`", dir.display())))
}

/// The value of `SELINUXTYPE=` in a config file (last one wins, like
/// libselinux; comments and blanks ignored).
fn selinux_type(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.strip_prefix("SELINUXTYPE="))
        .map(|v| v.trim().trim_matches('"').to_owned())
        .rfind(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_highest_policy_of_configured_type() {
        let dir = std::env::temp_dir().join(format!("rampart-locate-{}", std::process::id()));
        let pol = dir.join("mls/policy");
        std::fs::create_dir_all(&pol).unwrap();
        std::fs::write(dir.join("config"), "# c\nSELINUX=permissive\nSELINUXTYPE=mls\n").unwrap();
        for n in ["policy.31", "policy.33", "policy.9", "policy.x"] {
            std::fs::write(pol.join(n), b"").unwrap();
        }
        assert_eq!(default_policy_path_in(&dir).unwrap(), pol.join("policy.33"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
