//! `rampart apparmor`: AppArmor decisions from the binary policy
//! apparmor_parser compiles (issue 10). The engine and the line formats
//! are in `rampart_apparmor`; this module connects them to stdin and
//! stdout. The profile directory's commands (`status`, `complain`,
//! `enforce`) are in [`super::apparmor_profiles`].

use std::io::{BufRead, Write};

use rampart_apparmor::profile_flags::ModeChange;
use rampart_apparmor::{query, Policy};

use super::apparmor_profiles;

use crate::cli::AppArmorCommand;
use crate::error::CliError;

/// The answer to one stdin line of `check` or `attach`.
type LineAnswer = fn(&Policy, &str) -> String;

/// Runs the command; returns the exit status.
pub fn run(command: &AppArmorCommand) -> Result<u8, CliError> {
    let (files, answer): (_, Option<LineAnswer>) = match command {
        AppArmorCommand::Check(a) => (&a.files.files, Some(query::check_line)),
        AppArmorCommand::Attach(a) => (&a.files.files, Some(query::attach_line)),
        AppArmorCommand::Info(a) => (&a.files, None),
        AppArmorCommand::Status(d) => return apparmor_profiles::status(d),
        AppArmorCommand::Complain(m) => return apparmor_profiles::set_mode(m, ModeChange::Complain),
        AppArmorCommand::Enforce(m) => return apparmor_profiles::set_mode(m, ModeChange::Enforce),
    };
    let policy = Policy::from_files(files).map_err(|e| CliError::input(e.to_string()))?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match answer {
        None => out.write_all(query::info(&policy).as_bytes())?,
        Some(answer) => {
            for line in std::io::stdin().lock().lines() {
                writeln!(out, "{}", answer(&policy, &line?))?;
            }
        }
    }
    out.flush()?;
    Ok(0)
}
