//! Loading the policy and the boolean state a command runs with.

use std::path::{Path, PathBuf};

use rampart_policy::{Booleans, Policy};

use crate::cli::BoolSetting;
use crate::error::CliError;

/// The policy at `path`, or the system policy.
pub fn policy(path: Option<&Path>) -> Result<(PathBuf, Policy), CliError> {
    let path = match path {
        Some(p) => p.to_owned(),
        None => rampart_policy::default_policy_path()?,
    };
    let policy = Policy::from_file(&path)?;
    Ok((path, policy))
}

/// The policy's default booleans with `settings` applied (later settings
/// of the same boolean win).
pub fn booleans(policy: &Policy, settings: &[BoolSetting]) -> Result<Booleans, CliError> {
    let mut changes = Vec::with_capacity(settings.len());
    for s in settings {
        let Some(&id) = policy.names.bools.get(&s.name) else {
            let hint = crate::suggest::did_you_mean(&s.name, policy.bools.iter().map(|b| b.name.as_str()));
            return Err(CliError::input(format!(
                "boolean `{}` is not defined in the policy{hint}; list them with `seinfo -b`",
                s.name
            )));
        };
        changes.push((id, s.value));
    }
    let defaults = Booleans::defaults(policy);
    Ok(if changes.is_empty() { defaults } else { defaults.with(policy, &changes) })
}
