//! `rampart apparmor`: AppArmor decisions from the binary policy
//! apparmor_parser compiles (issue 10). The engine and the line formats
//! are in `rampart_apparmor`; this module parses its own command line
//! (self-contained, so the main parser can change without touching it)
//! and connects stdin and stdout.

use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::path::PathBuf;

use rampart_apparmor::{query, Policy};

use crate::error::CliError;

pub const USAGE: &str = "\
usage: rampart apparmor check --batch BINARY...
       rampart apparmor attach --batch BINARY...
       rampart apparmor info BINARY...

Loads binary policy files written by `apparmor_parser -Q -K -o FILE`,
in order (each like one write to .replace). check --batch reads lines
PROFILE<TAB>PATH<TAB>MASK[<TAB>owner=1|owner=0][<TAB>link=TARGET] and
prints DECISION<TAB>ALLOWED<TAB>audit=A,quiet=Q,log=L<TAB>EXEC;
attach --batch reads executable paths and prints PROFILE<TAB>INFO;
info lists the loaded profiles.
";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sub {
    Check,
    Attach,
    Info,
    Help,
}

/// The parsed command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppArmorArgs {
    pub sub: Sub,
    pub files: Vec<PathBuf>,
}

/// Whether the command line is `rampart apparmor ...`.
pub fn applies(argv: &[OsString]) -> bool {
    argv.first().is_some_and(|a| a == "apparmor")
}

pub fn parse(argv: Vec<OsString>) -> Result<AppArmorArgs, CliError> {
    let mut args = argv.into_iter().skip(1);
    let sub = match args.next().as_ref().and_then(|s| s.to_str()) {
        Some("check") => Sub::Check,
        Some("attach") => Sub::Attach,
        Some("info") => Sub::Info,
        Some("-h" | "--help" | "help") | None => return Ok(AppArmorArgs { sub: Sub::Help, files: vec![] }),
        Some(other) => {
            return Err(CliError::usage(format!(
                "unknown apparmor command `{other}`; the commands are check, attach and info"
            )))
        }
    };
    let mut batch = false;
    let mut files = Vec::new();
    for a in args {
        match a.to_str() {
            Some("--batch") => batch = true,
            Some("-h" | "--help") => return Ok(AppArmorArgs { sub: Sub::Help, files: vec![] }),
            Some(o) if o.starts_with("--") => {
                return Err(CliError::usage(format!("unknown option `{o}`; run `rampart apparmor --help`")))
            }
            _ => files.push(PathBuf::from(a)),
        }
    }
    if sub != Sub::Info && !batch {
        return Err(CliError::usage("`rampart apparmor check` and `attach` need --batch (lines on stdin)"));
    }
    if files.is_empty() {
        return Err(CliError::usage("name at least one binary policy file (apparmor_parser -o FILE)"));
    }
    Ok(AppArmorArgs { sub, files })
}

/// Runs the command; returns the exit status.
pub fn run(a: &AppArmorArgs) -> Result<u8, CliError> {
    if a.sub == Sub::Help {
        std::io::stdout().write_all(USAGE.as_bytes())?;
        return Ok(0);
    }
    let policy = Policy::from_files(&a.files).map_err(|e| CliError::input(e.to_string()))?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match a.sub {
        Sub::Info => out.write_all(query::info(&policy).as_bytes())?,
        _ => {
            for line in std::io::stdin().lock().lines() {
                let line = line?;
                let answer = if a.sub == Sub::Check {
                    query::check_line(&policy, &line)
                } else {
                    query::attach_line(&policy, &line)
                };
                writeln!(out, "{answer}")?;
            }
        }
    }
    out.flush()?;
    Ok(0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn p(v: &[&str]) -> Result<AppArmorArgs, CliError> {
        parse(v.iter().map(OsString::from).collect())
    }

    #[test]
    fn parses_the_three_commands() {
        let a = p(&["apparmor", "check", "--batch", "a.bin", "b.bin"]).unwrap();
        assert_eq!(a, AppArmorArgs { sub: Sub::Check, files: vec!["a.bin".into(), "b.bin".into()] });
        assert_eq!(p(&["apparmor", "attach", "x", "--batch"]).unwrap().sub, Sub::Attach);
        assert_eq!(p(&["apparmor", "info", "x"]).unwrap().sub, Sub::Info);
        assert!(p(&["apparmor", "check", "x"]).is_err());
        assert!(p(&["apparmor", "check", "--batch"]).is_err());
        assert!(p(&["apparmor", "frob"]).is_err());
        assert!(applies(&[OsString::from("apparmor")]));
        assert!(!applies(&[OsString::from("check")]));
    }
}
