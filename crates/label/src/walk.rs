//! The tree walk of the relabel engine: pre-order (a directory before
//! its entries), never following symlinks, optionally staying on the
//! device of the starting path, like `fts` with `FTS_PHYSICAL` (and
//! `FTS_XDEV`) as `selinux_restorecon` uses it.
//!
//! A directory's entries are read completely before any is visited, so
//! the walk holds one open directory at a time whatever the depth.

use std::ffi::OsString;
use std::fs::Metadata;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// What the walk found.
pub(crate) enum Step {
    /// An entry and its `lstat` metadata.
    Entry(PathBuf, Metadata),
    /// A directory that could not be listed (fts `FTS_DNR`).
    ReadDirError(PathBuf, io::Error),
    /// An entry that could not be `lstat`ed (fts `FTS_NS`).
    StatError(PathBuf, io::Error),
}

/// Walks the tree under `root` (whose metadata is `root_md`), root
/// first. With `same_device`, entries on another device are neither
/// reported nor entered (what `selinux_restorecon` does with
/// `FTS_XDEV`: it skips the mount point too).
pub(crate) fn walk(root: &Path, root_md: Metadata, same_device: bool, mut visit: impl FnMut(Step)) {
    let dev = root_md.dev();
    let is_dir = root_md.is_dir();
    visit(Step::Entry(root.to_path_buf(), root_md));
    if !is_dir {
        return;
    }
    // A stack of directories still to list, each with the entries that
    // are left to visit.
    let mut stack: Vec<(PathBuf, std::vec::IntoIter<OsString>)> = Vec::new();
    match list(root) {
        Ok(names) => stack.push((root.to_path_buf(), names.into_iter())),
        Err(e) => visit(Step::ReadDirError(root.to_path_buf(), e)),
    }
    while let Some((dir, names)) = stack.last_mut() {
        let Some(name) = names.next() else {
            stack.pop();
            continue;
        };
        let path = dir.join(&name);
        let md = match std::fs::symlink_metadata(&path) {
            Ok(md) => md,
            Err(e) => {
                visit(Step::StatError(path, e));
                continue;
            }
        };
        if same_device && md.dev() != dev {
            continue;
        }
        let descend = md.is_dir();
        visit(Step::Entry(path.clone(), md));
        if descend {
            match list(&path) {
                Ok(names) => stack.push((path, names.into_iter())),
                Err(e) => visit(Step::ReadDirError(path, e)),
            }
        }
    }
}

/// The names in a directory, in `readdir` order.
fn list(dir: &Path) -> io::Result<Vec<OsString>> {
    std::fs::read_dir(dir)?.map(|e| e.map(|e| e.file_name())).collect()
}
