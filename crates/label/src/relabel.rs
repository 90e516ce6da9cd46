//! The relabel engine: `restorecon` for Rampart. For each file it
//! compares the `security.selinux` xattr with the file_contexts label
//! for the file's `lstat` type and fixes it, with libselinux 3.4's
//! `selinux_restorecon` rules (`restorecon_sb`):
//!
//! - a file whose lookup gives no label (`<<none>>` or no match) is
//!   skipped; for a starting path that is reported as "Warning no
//!   default label for PATH";
//! - a file without an xattr gets the whole spec context;
//! - otherwise, unless `force` (`restorecon -F`): a current type listed
//!   in `customizable_types` is left alone ("PATH not reset as
//!   customized by admin to CUR"), and only the TYPE is changed: the
//!   new label keeps the current user, role and range, and a label that
//!   already has the right type is left as it is;
//! - symlinks are labeled themselves and never followed;
//! - with `dry_run` (`-n`) nothing is written, changes are reported as
//!   "Would relabel".
//!
//! Differences from `restorecon`, on purpose: the walk stays on the
//! starting path's filesystem unless `cross_filesystems` is set
//! (`restorecon` needs `-x` for that), and `alt_root` (like `setfiles
//! -r`) makes `ROOT/usr/bin/ls` be looked up as `/usr/bin/ls`.
//! Non-seclabel mounts, exclude lists and the `security.sehash` digest
//! are not implemented.

use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::contexts::FileContexts;
use crate::filetype::FileType;
use crate::walk::{self, Step};
use crate::xattr;

/// How to relabel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RelabelOptions {
    /// Walk directories (`-R`).
    pub recursive: bool,
    /// Write nothing, report what would change (`-n`).
    pub dry_run: bool,
    /// Set the whole spec context, and ignore customizable types
    /// (`-F`).
    pub force: bool,
    /// Descend into other filesystems (default: stay on the starting
    /// path's device).
    pub cross_filesystems: bool,
    /// Resolve the directory part of each starting path with `realpath`
    /// first, as `restorecon` does.
    pub realpath: bool,
    /// Look up `PATH` without this prefix (`setfiles -r`): for labeling
    /// a tree that is mounted or unpacked somewhere else.
    pub alt_root: Option<PathBuf>,
    /// Types the admin may set by hand (`contexts/customizable_types`).
    pub customizable_types: Vec<String>,
}

impl RelabelOptions {
    /// `restorecon`'s defaults (not recursive, realpath on) with the
    /// system's customizable types
    /// (`/etc/selinux/TYPE/contexts/customizable_types`).
    pub fn restorecon() -> RelabelOptions {
        RelabelOptions {
            realpath: true,
            customizable_types: read_customizable_types(Path::new("/etc/selinux/default/contexts/customizable_types")),
            ..RelabelOptions::default()
        }
    }
}

/// The types listed in a `customizable_types` file (one per line, `#`
/// comments); an unreadable file gives none, as in libselinux.
pub fn read_customizable_types(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|t| t.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_owned).collect())
        .unwrap_or_default()
}

/// One label change (done, or that would be done with `dry_run`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The file.
    pub path: PathBuf,
    /// The label it had (`None`: no xattr).
    pub old: Option<String>,
    /// The label it gets.
    pub new: String,
    /// Whether it was written (false with `dry_run`).
    pub applied: bool,
}

impl Change {
    /// `restorecon -v`'s line, raw path bytes: `Relabeled PATH from OLD
    /// to NEW` (or `Would relabel ...`; `<no context>` for no xattr).
    pub fn message(&self) -> Vec<u8> {
        let mut m = Vec::new();
        m.extend_from_slice(if self.applied { b"Relabeled " } else { b"Would relabel " });
        m.extend_from_slice(self.path.as_os_str().as_bytes());
        m.extend_from_slice(b" from ");
        m.extend_from_slice(self.old.as_deref().unwrap_or("<no context>").as_bytes());
        m.extend_from_slice(b" to ");
        m.extend_from_slice(self.new.as_bytes());
        m
    }
}

/// What went wrong with one file.
#[derive(Debug)]
pub struct RelabelError {
    /// The file.
    pub path: PathBuf,
    /// What was being done.
    pub op: FailedOp,
    /// The OS error.
    pub error: io::Error,
}

/// The step that failed, with `restorecon`'s wording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailedOp {
    /// `lstat` of a starting path.
    Lstat,
    /// `realpath` of a starting path's directory.
    Realpath,
    /// Listing a directory.
    ReadDir,
    /// `lstat` of an entry found in a directory.
    Stat,
    /// Reading or writing the label.
    SetContext,
    /// A path outside `alt_root`.
    OutsideRoot,
}

impl RelabelError {
    /// `restorecon`'s error line (without its `restorecon: ` prefix), raw
    /// path bytes.
    pub fn message(&self) -> Vec<u8> {
        let p = self.path.as_os_str().as_bytes();
        let e = self.error.to_string();
        let mut m = Vec::new();
        let mut push = |parts: &[&[u8]]| parts.iter().for_each(|s| m.extend_from_slice(s));
        match self.op {
            FailedOp::Lstat => push(&[b"lstat(", p, b") failed: ", e.as_bytes()]),
            FailedOp::Realpath => push(&[b"realpath(", p, b") failed: ", e.as_bytes()]),
            FailedOp::ReadDir => push(&[b"Could not read ", p, b": ", e.as_bytes(), b"."]),
            FailedOp::Stat => push(&[b"Could not stat ", p, b": ", e.as_bytes(), b"."]),
            FailedOp::SetContext => push(&[b"Could not set context for ", p, b":  ", e.as_bytes()]),
            FailedOp::OutsideRoot => push(&[p, b" is not located in alt_rootpath ", e.as_bytes()]),
        }
        m
    }
}

impl std::fmt::Display for RelabelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.message()))
    }
}

impl std::error::Error for RelabelError {}

/// Counts so far, for a progress display.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Progress {
    /// Files looked at.
    pub visited: u64,
    /// Files relabeled (or that would be).
    pub relabeled: u64,
    /// Errors.
    pub errors: u64,
    /// Time since the run started.
    pub elapsed: Duration,
}

impl Progress {
    /// Files per second so far.
    pub fn rate(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.visited as f64 / s
        } else {
            0.0
        }
    }
}

/// What the engine reports while it runs.
#[derive(Debug)]
pub enum Event<'a> {
    /// A label was (or would be) changed.
    Relabeled(&'a Change),
    /// A file keeps a customizable type (only reported, `restorecon -v`
    /// prints it).
    Customized {
        /// The file.
        path: &'a Path,
        /// Its label.
        current: &'a str,
    },
    /// A starting path has no file_contexts label.
    NoDefaultLabel {
        /// The path as looked up.
        path: &'a [u8],
    },
    /// A file could not be handled; the run goes on.
    Error(&'a RelabelError),
    /// Sent every [`PROGRESS_EVERY`] files.
    Progress(Progress),
}

/// How often [`Event::Progress`] is sent (`restorecon`'s `STAR_COUNT`).
pub const PROGRESS_EVERY: u64 = 1024;

/// The outcome of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// Files looked at.
    pub visited: u64,
    /// Files relabeled (or that would be, with `dry_run`).
    pub relabeled: u64,
    /// Files whose label was already right.
    pub unchanged: u64,
    /// Files file_contexts gives no label (skipped).
    pub no_label: u64,
    /// Files kept because their type is customizable.
    pub customized: u64,
    /// Failures.
    pub errors: u64,
    /// Wall time.
    pub elapsed: Duration,
}

impl Summary {
    /// The exit status `restorecon` gives: 0, or 255 (`exit(-1)`) when
    /// any error happened (it gives 1 only with `-C`, which counts
    /// errors instead, and Rampart has no `-C`).
    pub fn exit_code(&self) -> u8 {
        if self.errors > 0 {
            255
        } else {
            0
        }
    }
}

/// Relabels files against one file_contexts.
#[derive(Debug)]
pub struct Relabeler<'a> {
    contexts: &'a FileContexts,
    options: RelabelOptions,
}

struct Run<'s> {
    summary: Summary,
    start: Instant,
    sink: &'s mut dyn FnMut(&Event<'_>),
}

impl<'a> Relabeler<'a> {
    /// An engine for `contexts` with `options`. With `realpath`, an
    /// `alt_root` that exists is canonicalised too, so that it prefixes
    /// the canonicalised starting paths.
    pub fn new(contexts: &'a FileContexts, mut options: RelabelOptions) -> Relabeler<'a> {
        if options.realpath {
            if let Some(root) = &options.alt_root {
                if let Ok(real) = std::fs::canonicalize(root) {
                    options.alt_root = Some(real);
                }
            }
        }
        Relabeler { contexts, options }
    }

    /// The options.
    pub fn options(&self) -> &RelabelOptions {
        &self.options
    }

    /// Relabels `paths` (each, and with `recursive` everything below it),
    /// sending events to `sink`.
    pub fn run(&self, paths: &[PathBuf], sink: &mut dyn FnMut(&Event<'_>)) -> Summary {
        let mut run = Run { summary: Summary::default(), start: Instant::now(), sink };
        for p in paths {
            self.run_one(p, &mut run);
        }
        run.summary.elapsed = run.start.elapsed();
        run.summary
    }

    fn run_one(&self, orig: &Path, run: &mut Run<'_>) {
        let path = if self.options.realpath {
            match real_dir_path(orig) {
                Ok(p) => p,
                Err(error) => {
                    run.error(RelabelError { path: orig.to_path_buf(), op: FailedOp::Realpath, error });
                    return;
                }
            }
        } else {
            orig.to_path_buf()
        };
        let md = match std::fs::symlink_metadata(&path) {
            Ok(md) => md,
            Err(error) => {
                run.error(RelabelError { path, op: FailedOp::Lstat, error });
                return;
            }
        };
        if !self.options.recursive {
            self.restore(&path, &md, true, run);
            return;
        }
        let mut first = true;
        walk::walk(&path, md, !self.options.cross_filesystems, |step| match step {
            Step::Entry(p, md) => {
                self.restore(&p, &md, first, run);
                first = false;
            }
            Step::ReadDirError(p, error) => run.error(RelabelError { path: p, op: FailedOp::ReadDir, error }),
            Step::StatError(p, error) => run.error(RelabelError { path: p, op: FailedOp::Stat, error }),
        });
    }

    /// The path file_contexts is asked about: without `alt_root`, and
    /// `/` for the root itself. Unlike `setfiles -r` (a plain string
    /// prefix), the root must end at a component boundary.
    fn lookup_path<'p>(&self, path: &'p Path) -> Result<&'p [u8], ()> {
        let bytes = path.as_os_str().as_bytes();
        let Some(root) = &self.options.alt_root else { return Ok(bytes) };
        let root = root.as_os_str().as_bytes();
        if root == b"/" {
            return Ok(bytes);
        }
        let root = root.strip_suffix(b"/").unwrap_or(root);
        match bytes.strip_prefix(root) {
            Some([]) => Ok(b"/"),
            Some(rest) if rest.starts_with(b"/") => Ok(rest),
            _ => Err(()),
        }
    }

    /// `restorecon_sb` for one file.
    fn restore(&self, path: &Path, md: &std::fs::Metadata, first: bool, run: &mut Run<'_>) {
        run.summary.visited += 1;
        if run.summary.visited.is_multiple_of(PROGRESS_EVERY) {
            let p = run.progress();
            (run.sink)(&Event::Progress(p));
        }
        let Ok(lookup_path) = self.lookup_path(path) else {
            let root = self.options.alt_root.as_deref().unwrap_or(Path::new("/"));
            let error = io::Error::new(io::ErrorKind::InvalidInput, root.display().to_string());
            run.error(RelabelError { path: path.to_path_buf(), op: FailedOp::OutsideRoot, error });
            return;
        };
        let mode = FileType::from_metadata(md).map_or(0, FileType::mode_bits);
        let Some(spec_ctx) = self.contexts.lookup_mode(lookup_path, mode).context() else {
            run.summary.no_label += 1;
            if first {
                (run.sink)(&Event::NoDefaultLabel { path: lookup_path });
            }
            return;
        };
        let current = match xattr::get_label(path) {
            Ok(c) => c,
            Err(error) => {
                run.error(RelabelError { path: path.to_path_buf(), op: FailedOp::SetContext, error });
                return;
            }
        };
        if current.as_deref() == Some(spec_ctx) {
            run.summary.unchanged += 1;
            return;
        }
        let mut new = spec_ctx.to_owned();
        if let (false, Some(cur)) = (self.options.force, current.as_deref()) {
            if self.is_customizable(cur) {
                run.summary.customized += 1;
                (run.sink)(&Event::Customized { path, current: cur });
                return;
            }
            match type_change(cur, spec_ctx) {
                Err(()) => {
                    let error = io::Error::new(io::ErrorKind::InvalidData, format!("malformed context `{cur}`"));
                    run.error(RelabelError { path: path.to_path_buf(), op: FailedOp::SetContext, error });
                    return;
                }
                Ok(None) => {
                    run.summary.unchanged += 1;
                    return;
                }
                Ok(Some(merged)) => new = merged,
            }
        }
        if !self.options.dry_run {
            if let Err(error) = xattr::set_label(path, &new) {
                run.error(RelabelError { path: path.to_path_buf(), op: FailedOp::SetContext, error });
                return;
            }
        }
        run.summary.relabeled += 1;
        let change = Change { path: path.to_path_buf(), old: current, new, applied: !self.options.dry_run };
        (run.sink)(&Event::Relabeled(&change));
    }

    /// libselinux `is_context_customizable`: the context's type is
    /// listed.
    fn is_customizable(&self, ctx: &str) -> bool {
        match ContextParts::parse(ctx) {
            Some(c) => self.options.customizable_types.iter().any(|t| t == c.ty),
            None => false,
        }
    }
}

impl Run<'_> {
    fn error(&mut self, e: RelabelError) {
        self.summary.errors += 1;
        (self.sink)(&Event::Error(&e));
    }

    fn progress(&self) -> Progress {
        Progress {
            visited: self.summary.visited,
            relabeled: self.summary.relabeled,
            errors: self.summary.errors,
            elapsed: self.start.elapsed(),
        }
    }
}

/// `restorecon`'s path canonicalisation: `realpath` of the directory
/// part, then the last component as given (so a symlink itself is
/// relabeled, not its target); `realpath` of the whole path when the
/// last component is `/`, `.` or `..`.
fn real_dir_path(path: &Path) -> io::Result<PathBuf> {
    match path.file_name() {
        None => std::fs::canonicalize(path),
        Some(name) => {
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            Ok(std::fs::canonicalize(dir)?.join(name))
        }
    }
}

/// A context split like libselinux's `context_new`: user, role, type
/// and an optional range (everything after the third colon).
#[derive(Debug, PartialEq, Eq)]
struct ContextParts<'a> {
    user: &'a str,
    role: &'a str,
    ty: &'a str,
    range: Option<&'a str>,
}

impl<'a> ContextParts<'a> {
    fn parse(s: &'a str) -> Option<ContextParts<'a>> {
        let colons = s.bytes().filter(|&b| b == b':').count();
        if !(2..=5).contains(&colons) || s.bytes().any(|b| matches!(b, b'\n' | b'\t' | b'\r')) {
            return None;
        }
        // A space is only allowed in the range.
        let mut seen = 0;
        for b in s.bytes() {
            match b {
                b':' => seen += 1,
                b' ' if seen < 3 => return None,
                _ => {}
            }
        }
        let mut it = s.splitn(4, ':');
        let (user, role, ty) = (it.next()?, it.next()?, it.next()?);
        Some(ContextParts { user, role, ty, range: it.next() })
    }
}

/// libselinux `compare_types`: `Ok(None)` when both have the same type;
/// otherwise `new`'s type with `current`'s user, role and range.
fn type_change(current: &str, new: &str) -> Result<Option<String>, ()> {
    let (Some(a), Some(b)) = (ContextParts::parse(current), ContextParts::parse(new)) else { return Err(()) };
    if a.ty == b.ty {
        return Ok(None);
    }
    Ok(Some(match a.range {
        Some(r) => format!("{}:{}:{}:{}", a.user, a.role, b.ty, r),
        None => format!("{}:{}:{}", a.user, a.role, b.ty),
    }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn type_only_changes() {
        assert_eq!(type_change("u:r:a_t:s0", "system_u:object_r:a_t:s0"), Ok(None));
        assert_eq!(
            type_change("staff_u:object_r:a_t:s0:c1", "system_u:object_r:b_t:s0").unwrap().as_deref(),
            Some("staff_u:object_r:b_t:s0:c1")
        );
        assert_eq!(type_change("u:r:a_t", "u:r:b_t:s0").unwrap().as_deref(), Some("u:r:b_t"));
        assert_eq!(type_change("junk", "u:r:b_t:s0"), Err(()));
        assert_eq!(type_change("u :r:a_t", "u:r:b_t:s0"), Err(()));
    }

    #[test]
    fn alt_root_ends_at_a_component() {
        let dir = std::env::temp_dir().join(format!("rampart-label-altroot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("fc"), "/.* u:r:t\n").unwrap();
        let fc = FileContexts::load_unvalidated(&crate::SpecFiles::from_base(&dir.join("fc"))).unwrap();
        let with = |root: &str| RelabelOptions { alt_root: Some(root.into()), ..RelabelOptions::default() };
        let r = Relabeler::new(&fc, with("/mnt/sys"));
        assert_eq!(r.lookup_path(Path::new("/mnt/sys/usr/bin")), Ok(&b"/usr/bin"[..]));
        assert_eq!(r.lookup_path(Path::new("/mnt/sys")), Ok(&b"/"[..]));
        assert_eq!(r.lookup_path(Path::new("/mnt/sysx/usr")), Err(()));
        assert_eq!(r.lookup_path(Path::new("/other")), Err(()));
        let r = Relabeler::new(&fc, with("/mnt/sys/"));
        assert_eq!(r.lookup_path(Path::new("/mnt/sys/etc")), Ok(&b"/etc"[..]));
        let r = Relabeler::new(&fc, with("/"));
        assert_eq!(r.lookup_path(Path::new("/etc")), Ok(&b"/etc"[..]));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn messages_match_restorecon() {
        let c = Change { path: "/a".into(), old: None, new: "u:r:t:s0".into(), applied: true };
        assert_eq!(c.message(), b"Relabeled /a from <no context> to u:r:t:s0");
        let c = Change { applied: false, old: Some("x:y:z:s0".into()), ..c };
        assert_eq!(c.message(), b"Would relabel /a from x:y:z:s0 to u:r:t:s0");
        let e = RelabelError { path: "/b".into(), op: FailedOp::SetContext, error: io::Error::from_raw_os_error(95) };
        assert!(e.to_string().starts_with("Could not set context for /b:  "), "{e}");
        assert_eq!(Summary { errors: 1, ..Summary::default() }.exit_code(), 255);
        assert_eq!(Summary::default().exit_code(), 0);
    }
}
