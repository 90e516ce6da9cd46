//! FileRef labels for the enforcer: the label of an existing file, and
//! the label a new file will get.
//!
//! An existing file's label is its `security.selinux` xattr when it has
//! one, else what file_contexts says for its path (the label
//! `restorecon` would give it). Results are cached by `(st_dev,
//! st_ino)` together with the inode's `st_ctime`, because the enforcer
//! asks for the same inodes over and over.
//!
//! # Cache invalidation contract
//!
//! - Setting or removing the xattr, `chmod`, `chown`, link and rename
//!   all change `st_ctime`, so an entry made before such a change is
//!   not used once the caller passes fresh metadata. Callers must pass
//!   metadata read no earlier than the event they are deciding on.
//! - Changes that keep `st_ctime` (a clock step backwards, a filesystem
//!   with coarse timestamps, a label written within the same timestamp
//!   tick) are the caller's duty: call [`ObjectLabeler::invalidate`]
//!   after relabeling an inode, and [`ObjectLabeler::clear`] after
//!   loading new file_contexts or a new policy.
//! - For files without an xattr the label depends on the path, but the
//!   cache is per inode: a file with several hard links gets the label
//!   of the path it was first seen under until the entry is dropped.
//! - The cache holds at most [`MAX_CACHED_INODES`] inodes by default
//!   (see [`ObjectLabeler::with_limit`]): a new inode beyond that evicts
//!   an arbitrary one, which is only read again when next asked for.

use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rampart_policy::{Booleans, ClassId, Context, CreateError, CreateKind, Policy};
use rustc_hash::FxHashMap;

use crate::contexts::FileContexts;
use crate::fdpath::fd_link;
use crate::filetype::FileType;
use crate::xattr;

/// Where a label came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LabelSource {
    /// The file's `security.selinux` xattr.
    Xattr,
    /// file_contexts, by path (the file has no xattr).
    FileContexts,
    /// Neither: no xattr and no file_contexts label (`<<none>>`, no
    /// match, or no path known for a descriptor).
    None,
}

/// The label of an existing object.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Label {
    /// The context string; `None` when the object is unlabeled.
    pub context: Option<Arc<str>>,
    /// Where it came from.
    pub source: LabelSource,
}

/// The object whose label is wanted.
#[derive(Clone, Copy, Debug)]
pub enum FileRef<'a> {
    /// A path (symlinks are not followed).
    Path(&'a Path),
    /// An open descriptor (e.g. from fanotify). For file_contexts its
    /// path is read from `/proc/self/fd`.
    Fd(BorrowedFd<'a>),
}

/// How many inodes an [`ObjectLabeler`] caches by default (a few tens of
/// MiB at most).
pub const MAX_CACHED_INODES: usize = 1 << 18;

#[derive(Clone, Debug)]
struct Entry {
    ctime: (i64, i64),
    label: Label,
}

/// Labels existing objects, with a per-inode cache (see the module docs
/// for the invalidation contract). Safe to share between threads.
#[derive(Debug)]
pub struct ObjectLabeler {
    contexts: Arc<FileContexts>,
    cache: Mutex<FxHashMap<(u64, u64), Entry>>,
    limit: usize,
}

impl ObjectLabeler {
    /// A labeler falling back to `contexts`.
    pub fn new(contexts: Arc<FileContexts>) -> ObjectLabeler {
        ObjectLabeler::with_limit(contexts, MAX_CACHED_INODES)
    }

    /// A labeler caching at most `limit` inodes (at least one).
    pub fn with_limit(contexts: Arc<FileContexts>, limit: usize) -> ObjectLabeler {
        ObjectLabeler { contexts, cache: Mutex::new(FxHashMap::default()), limit: limit.max(1) }
    }

    /// The file_contexts in use.
    pub fn contexts(&self) -> &Arc<FileContexts> {
        &self.contexts
    }

    /// The label of `object`, whose `lstat`/`fstat` metadata is `md`.
    /// An xattr that cannot be read for another reason than "absent"
    /// (e.g. `ENOTSUP`) is treated as absent.
    pub fn label_of(&self, object: FileRef<'_>, md: &std::fs::Metadata) -> Label {
        let key = (md.dev(), md.ino());
        let ctime = (md.ctime(), md.ctime_nsec());
        if let Some(e) = self.lock().get(&key) {
            if e.ctime == ctime {
                return e.label.clone();
            }
        }
        let label = self.compute(object, md);
        let mut cache = self.lock();
        if cache.len() >= self.limit && !cache.contains_key(&key) {
            if let Some(victim) = cache.keys().next().copied() {
                cache.remove(&victim);
            }
        }
        cache.insert(key, Entry { ctime, label: label.clone() });
        label
    }

    /// The label of `object`, read now and not cached (the xattr, else
    /// the path label): what [`ObjectLabeler::label_of`] caches.
    pub fn label_uncached(&self, object: FileRef<'_>, md: &std::fs::Metadata) -> Label {
        self.compute(object, md)
    }

    fn compute(&self, object: FileRef<'_>, md: &std::fs::Metadata) -> Label {
        self.xattr_label(object).unwrap_or_else(|| self.path_label(object, md))
    }

    /// The label in `object`'s xattr, uncached; `None` if it has none (or
    /// it cannot be read for another reason than "absent", as
    /// [`ObjectLabeler::label_of`]).
    pub fn xattr_label(&self, object: FileRef<'_>) -> Option<Label> {
        let xattr = match object {
            FileRef::Path(p) => xattr::get_label(p),
            FileRef::Fd(fd) => xattr::fget_label(fd),
        };
        match xattr {
            Ok(Some(ctx)) => Some(Label { context: Some(Arc::from(ctx)), source: LabelSource::Xattr }),
            _ => None,
        }
    }

    /// The label file_contexts gives `object` by its path (what an object
    /// without an xattr gets), uncached. Always one of
    /// [`FileContexts::contexts_for`] its type, or none.
    pub fn path_label(&self, object: FileRef<'_>, md: &std::fs::Metadata) -> Label {
        let path: Option<PathBuf> = match object {
            FileRef::Path(p) => Some(p.to_path_buf()),
            FileRef::Fd(fd) => fd_path(fd),
        };
        match path {
            Some(p) => self.label_for_path(p.as_os_str().as_bytes(), FileType::from_metadata(md)),
            None => Label { context: None, source: LabelSource::None },
        }
    }

    /// The label file_contexts gives a `file_type` object at `path`,
    /// whether or not one is there (what a new object will be labeled).
    pub fn label_for_path(&self, path: &[u8], file_type: Option<FileType>) -> Label {
        match self.contexts.lookup(path, file_type).context().map(Arc::from) {
            Some(ctx) => Label { context: Some(ctx), source: LabelSource::FileContexts },
            None => Label { context: None, source: LabelSource::None },
        }
    }

    /// Drops the cached label of one inode (call after relabeling it).
    pub fn invalidate(&self, dev: u64, ino: u64) {
        self.lock().remove(&(dev, ino));
    }

    /// Drops every cached label (call after loading new file_contexts or
    /// a new policy).
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// Number of cached inodes.
    pub fn cached(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FxHashMap<(u64, u64), Entry>> {
        // The map is always left consistent, so a panic elsewhere while
        // holding the lock does not invalidate it.
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The path of an open descriptor, from `/proc/self/fd`; `None` for
/// deleted files and non-path objects (pipes, sockets).
fn fd_path(fd: BorrowedFd<'_>) -> Option<PathBuf> {
    let link = fd_link(fd)?;
    let bytes = link.as_os_str().as_bytes();
    if !bytes.starts_with(b"/") || bytes.ends_with(b" (deleted)") {
        return None;
    }
    Some(link)
}

/// The context of a new file named `name` created by `subject` in a
/// directory labeled `parent_dir`, for object class `class` (`file`,
/// `dir`, `lnk_file`, ...): `type_transition` rules including filename
/// transitions, role transitions, class defaults and MLS range rules,
/// exactly as the kernel computes it (libsepol `sepol_compute_sid`).
/// `name` `None`: an unnamed file (`O_TMPFILE`), which no filename
/// transition matches.
pub fn new_file_label(
    policy: &Policy,
    bools: &Booleans,
    subject: &Context,
    parent_dir: &Context,
    class: ClassId,
    name: Option<&str>,
) -> Result<Context, CreateError> {
    policy.compute_create(bools, subject, parent_dir, class, CreateKind::Transition, name)
}

/// `fs_use_task` (libsepol's `SECURITY_FS_USE_TASK`).
const FS_USE_TASK: u32 = 3;
/// `fs_use_trans` (`SECURITY_FS_USE_TRANS`).
const FS_USE_TRANS: u32 = 2;

/// The context of a file the kernel makes in memory, with neither name
/// nor directory (a memfd: `memfd_create`), on its internal filesystem
/// `fs` (`tmpfs`; `hugetlbfs` for huge pages), made by `subject`: the
/// policy's `fs_use` rule for `fs`, as `inode_doinit_with_dentry`
/// applies it to such an inode: `fs_use_task` the maker's context,
/// `fs_use_trans` a `type_transition` from the rule's context (class
/// `file`, no name). `None` without either rule (the kernel then gives
/// the filesystem's default: unlabeled for an internal mount).
pub fn memory_file_label(
    policy: &Policy,
    bools: &Booleans,
    subject: &Context,
    fs: &str,
) -> Option<Result<Context, CreateError>> {
    let (behavior, _, context) = policy.ocontexts.fs_use.iter().find(|(_, name, _)| name == fs)?;
    match *behavior {
        FS_USE_TASK => Some(Ok(subject.clone())),
        FS_USE_TRANS => {
            let class = file_class(policy, FileType::Regular)?;
            Some(new_file_label(policy, bools, subject, context, class, None))
        }
        _ => None,
    }
}

/// The label the kernel gives an object of `class` at `path` (from its
/// filesystem's root) on a filesystem of type `fstype` labeled by
/// `genfscon` rules (sysfs, debugfs, securityfs...), as
/// `__security_genfs_sid` finds it: the filesystem's entries longest
/// prefix first (`genfs_read` keeps them so), the first whose prefix
/// starts the path and whose class is `class` or any. `None`: no entry
/// (the kernel answers `ENOENT`, and the object is unlabeled).
pub fn genfs_label<'p>(policy: &'p Policy, fstype: &str, path: &str, class: ClassId) -> Option<&'p Context> {
    let genfs = policy.genfs.iter().find(|g| g.fstype == fstype)?;
    // The kernel strips a doubled leading slash (`security_genfs_sid`).
    let mut path = path;
    while path.starts_with("//") {
        path = &path[1..];
    }
    let mut entries: Vec<&(String, u32, Context)> = genfs.entries.iter().collect();
    // Stable: entries of one length keep the policy's order, as the
    // kernel's insertion keeps them.
    entries.sort_by_key(|(prefix, ..)| std::cmp::Reverse(prefix.len()));
    entries
        .into_iter()
        .find(|(prefix, sclass, _)| {
            (*sclass == 0 || *sclass == class.0) && path.as_bytes().starts_with(prefix.as_bytes())
        })
        .map(|(.., context)| context)
}

/// The policy class for a file type (`file`, `dir`, `lnk_file`, ...),
/// `None` if the policy lacks it.
pub fn file_class(policy: &Policy, file_type: FileType) -> Option<ClassId> {
    policy.class_by_name(file_type.class_name())
}
