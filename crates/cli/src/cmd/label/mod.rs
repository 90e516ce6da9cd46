//! The file-label commands, on top of `rampart-label`:
//!
//! - `rampart label PATH... [--type TYPE]`: the file_contexts label of
//!   each path, like `matchpathcon` ([`lookup`]);
//! - `rampart label --batch`: one lookup per stdin line ([`batch`]);
//! - `rampart getlabel PATH...`: the `security.selinux` xattr, like
//!   `ls -Zd` ([`getlabel`]);
//! - `rampart relabel [-n] [-v] [-R] [-F] [-x] [--root DIR] PATH...`:
//!   `restorecon` ([`relabel`]).
//!
//! They live in their own module tree, with their own argument parser
//! ([`args`]), because their operands are file names: bytes that need
//! not be UTF-8, which the policy commands' parser rejects. The shared
//! parser hands a command line over to [`args::parse`] when its command
//! word is one of these three.

pub mod args;
mod batch;
mod getlabel;
pub mod help;
mod lookup;
mod relabel;

use std::path::{Path, PathBuf};

use rampart_label::{FileContexts, FileType, SpecFiles};

use crate::error::CliError;

/// A parsed file-label command.
#[derive(Debug, PartialEq, Eq)]
pub enum LabelCommand {
    /// `rampart label PATH...`.
    Lookup(LookupArgs),
    /// `rampart label --batch`.
    Batch(Source),
    /// `rampart getlabel PATH...`.
    GetLabel(Vec<PathBuf>),
    /// `rampart relabel ... PATH...`.
    Relabel(RelabelArgs),
}

/// Which file_contexts to load (`--file-contexts`).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Source {
    /// A directory holding `file_contexts`, or the base file itself;
    /// `None` for the system configuration.
    pub file_contexts: Option<PathBuf>,
}

#[derive(Debug, PartialEq, Eq)]
pub struct LookupArgs {
    pub source: Source,
    pub paths: Vec<PathBuf>,
    /// `--type`; `None`: the lstat type of the path, or any type when it
    /// does not exist.
    pub file_type: Option<FileType>,
}

#[derive(Debug, Default, PartialEq, Eq)]
pub struct RelabelArgs {
    pub source: Source,
    pub paths: Vec<PathBuf>,
    /// `-n`.
    pub dry_run: bool,
    /// `-v`.
    pub verbose: bool,
    /// `-R`.
    pub recursive: bool,
    /// `-F`.
    pub force: bool,
    /// `--root DIR`.
    pub root: Option<PathBuf>,
}

/// Runs a file-label command; returns its exit status.
pub fn run(policy: Option<&Path>, command: &LabelCommand) -> Result<u8, CliError> {
    match command {
        LabelCommand::Lookup(a) => {
            let fc = load(policy, &a.source)?;
            Ok(lookup::run(&fc, &a.paths, a.file_type, std::io::stdout().lock())?)
        }
        LabelCommand::Batch(source) => {
            let fc = load(policy, source)?;
            batch::run(&fc, std::io::stdin().lock(), std::io::stdout().lock())?;
            Ok(0)
        }
        LabelCommand::GetLabel(paths) => Ok(getlabel::run(paths, std::io::stdout().lock())?),
        LabelCommand::Relabel(a) => {
            if let Some(root) = &a.root {
                check_root(root)?;
            }
            let fc = load(policy, &a.source)?;
            Ok(relabel::run(&fc, a))
        }
    }
}

/// The file_contexts configuration, every context checked against the
/// policy (`--policy`, or the system one).
fn load(policy: Option<&Path>, source: &Source) -> Result<FileContexts, CliError> {
    let files = match &source.file_contexts {
        None => SpecFiles::system(),
        Some(p) if p.is_dir() => SpecFiles::from_dir(p),
        Some(p) => SpecFiles::from_base(p),
    };
    let (_, policy) = crate::load::policy(policy)?;
    FileContexts::load(&files, &policy).map_err(|e| CliError::input(e.to_string()))
}

fn check_root(root: &Path) -> Result<(), CliError> {
    match std::fs::metadata(root) {
        Ok(md) if md.is_dir() => Ok(()),
        Ok(_) => Err(CliError::input(format!("`--root {}` is not a directory", root.display()))),
        Err(e) => Err(CliError::input(format!("cannot use `--root {}`: {}", root.display(), os_message(&e)))),
    }
}

/// An OS error as `strerror` words it, without Rust's ` (os error N)`.
pub(crate) fn os_message(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}
