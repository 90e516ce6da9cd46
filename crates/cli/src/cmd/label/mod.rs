//! The file-label commands, on top of `rampart-label`:
//!
//! - `rampart label PATH... [--type TYPE]`: the file_contexts label of
//!   each path, like `matchpathcon` ([`lookup`]);
//! - `rampart label --batch`: one lookup per stdin line ([`batch`]);
//! - `rampart getlabel PATH...`: the `security.selinux` xattr, like
//!   `ls -Zd` ([`mod@getlabel`]);
//! - `rampart relabel [-n] [-v] [-R] [-F] [-x] [--root DIR] PATH...`:
//!   `restorecon` ([`mod@relabel`]).
//!
//! Their operands are file names: bytes that need not be UTF-8, kept as
//! `PathBuf` from the command line ([`crate::cli`]) to the system calls.

mod batch;
mod getlabel;
mod lookup;
mod relabel;

use std::path::Path;

use rampart_label::{FileContexts, SpecFiles};

use crate::cli::{GetLabelArgs, LabelArgs, RelabelArgs, Source};
use crate::error::{os_message, CliError};

/// `rampart label`: PATH arguments, or `--batch`; returns the exit
/// status.
pub fn label(policy: Option<&Path>, args: &LabelArgs) -> Result<u8, CliError> {
    let fc = load(policy, &args.source)?;
    if args.batch {
        batch::run(&fc, std::io::stdin().lock(), std::io::stdout().lock())?;
        return Ok(0);
    }
    Ok(lookup::run(&fc, &args.paths, args.file_type, std::io::stdout().lock())?)
}

/// `rampart getlabel`; returns the exit status.
pub fn getlabel(args: &GetLabelArgs) -> Result<u8, CliError> {
    Ok(getlabel::run(&args.paths, std::io::stdout().lock())?)
}

/// `rampart relabel`; returns the exit status.
pub fn relabel(policy: Option<&Path>, args: &RelabelArgs) -> Result<u8, CliError> {
    if let Some(root) = &args.root {
        check_root(root)?;
    }
    let fc = load(policy, &args.source)?;
    Ok(relabel::run(&fc, args))
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
