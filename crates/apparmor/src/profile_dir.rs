//! Which files of a profile directory (`/etc/apparmor.d`) are profiles,
//! and in which mode they load, as `apparmor_parser DIR` and the init
//! scripts (`/lib/apparmor/rc.apparmor.functions`) decide.
//!
//! Why its own module: these conventions are the system's contract with
//! packages and administrators (`aa-disable` makes a `disable/` link,
//! dpkg leaves `.dpkg-old` files behind), so they must hold exactly,
//! whatever compiles the profiles.
//!
//! * Only regular files directly in the directory (symlinks followed),
//!   in byte order of their names (the parser walks it with `scandirat`
//!   and `alphasort`); subdirectories such as `abstractions/`,
//!   `tunables/`, `local/` and `abi/` hold includes, not profiles.
//! * Skipped silently: names starting with `.`, `README`, and the
//!   package managers' leftovers (`.dpkg-new`, `.dpkg-old`, `.dpkg-dist`,
//!   `.dpkg-bak`, `.dpkg-remove`, `.pacsave`, `.pacnew`); skipped with a
//!   warning: `.rpmnew`, `.rpmsave`, `.orig`, `.rej` and `~` backups
//!   (libapparmor's `_aa_is_blacklisted`).
//! * `disable/NAME` readable: the profile is not loaded ("Skipping
//!   profile in DIR/disable"); `force-complain/NAME` readable: it loads
//!   in complain mode (`apparmor_parser -C`), both as the parser's
//!   `test_for_dir_mode` checks them.

use std::path::{Path, PathBuf};

/// A profile file to compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileFile {
    pub path: PathBuf,
    /// `force-complain/NAME` exists: every profile in it loads in
    /// complain mode.
    pub force_complain: bool,
}

/// What a directory holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    /// The profiles to load, in load order.
    pub profiles: Vec<ProfileFile>,
    /// Files with a `disable/` link: not loaded.
    pub disabled: Vec<PathBuf>,
    /// Backups and merge leftovers the parser skips with a warning.
    pub skipped: Vec<PathBuf>,
}

/// How the parser treats a file name (`_aa_is_blacklisted`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Name {
    Profile,
    /// Dotfiles, README, package managers' in-flight files.
    Silent,
    /// Backups the administrator should hear about.
    Warn,
}

fn classify(name: &[u8]) -> Name {
    const SILENT: [&[u8]; 7] =
        [b".dpkg-new", b".dpkg-old", b".dpkg-dist", b".dpkg-bak", b".dpkg-remove", b".pacsave", b".pacnew"];
    const WARN: [&[u8]; 5] = [b".rpmnew", b".rpmsave", b".orig", b".rej", b"~"];
    if name.is_empty() || name[0] == b'.' || name == b"README" || SILENT.iter().any(|s| name.ends_with(s)) {
        Name::Silent
    } else if WARN.iter().any(|s| name.ends_with(s)) {
        Name::Warn
    } else {
        Name::Profile
    }
}

/// Lists `dir` as the parser does; an error only when `dir` itself
/// cannot be read.
pub fn list(dir: &Path) -> std::io::Result<Listing> {
    use std::os::unix::ffi::OsStrExt;
    let mut names: Vec<_> = std::fs::read_dir(dir)?.filter_map(Result::ok).map(|e| e.file_name()).collect();
    names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let mut out = Listing::default();
    for name in names {
        let path = dir.join(&name);
        // follows symlinks, as the parser's fstatat(…, 0) does
        if !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            continue;
        }
        match classify(name.as_bytes()) {
            Name::Silent => continue,
            Name::Warn => out.skipped.push(path),
            Name::Profile if dir.join("disable").join(&name).exists() => out.disabled.push(path),
            Name::Profile => {
                let force_complain = dir.join("force-complain").join(&name).exists();
                out.profiles.push(ProfileFile { path, force_complain });
            }
        }
    }
    Ok(out)
}
