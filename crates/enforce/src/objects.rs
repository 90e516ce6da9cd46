//! FileRef labels for the daemon: `(dev, ino)` -> SID, through the object
//! label API of `rampart-label` (the `security.selinux` xattr, else
//! file_contexts by path), cached per inode (crate::label_cache:
//! revalidated by ctime, and forgotten when the daemon writes a label).
//!
//! An object with neither label gets the policy's `file` initial SID
//! context, as the kernel gives a file without an xattr on a filesystem
//! that supports them.
//!
//! A file without an xattr whose path cannot change the answer is left
//! unresolved ([`crate::path_labels`]): neither looked up nor cached.

use std::os::fd::BorrowedFd;
use std::os::unix::fs::MetadataExt;
use std::sync::{Arc, PoisonError, RwLock};

use rampart_avc::{Avc, ClassIdx, Perms, Sid};
use rampart_label::{FileRef, FileType, ObjectLabeler};
use rampart_policy::Policy;

use crate::label_cache::{Inode, LabelCache};
use crate::object_label::ObjectLabel;
use crate::path_labels::PathLabels;

/// The kernel's `SECINITSID_FILE`.
const INITIAL_SID_FILE: u32 = 5;
/// The kernel's `SECINITSID_UNLABELED`.
const INITIAL_SID_UNLABELED: u32 = 3;
/// The kernel's `SECINITSID_SECURITY`: the target of `security` checks.
const INITIAL_SID_SECURITY: u32 = 2;

/// The context `security` class checks target (`setenforce`, `setbool`,
/// `load_policy`), as the kernel's `SECINITSID_SECURITY`.
pub fn security_context(policy: &Policy) -> String {
    let sids = &policy.ocontexts.initial_sids;
    sids.iter()
        .find(|(n, _)| *n == INITIAL_SID_SECURITY)
        .map(|(_, c)| policy.context_to_string(c))
        .unwrap_or_else(|| "system_u:object_r:security_t:s0".to_owned())
}

/// The context of objects without a label under `policy`.
pub fn unlabeled_context(policy: &Policy) -> String {
    let sids = &policy.ocontexts.initial_sids;
    sids.iter()
        .find(|(n, _)| *n == INITIAL_SID_FILE)
        .or_else(|| sids.iter().find(|(n, _)| *n == INITIAL_SID_UNLABELED))
        .map(|(_, c)| policy.context_to_string(c))
        .unwrap_or_else(|| "system_u:object_r:unlabeled_t:s0".to_owned())
}

/// What an event asks of its object, so that its path is looked up only
/// when the answer may depend on it.
#[derive(Clone, Copy)]
pub struct EventAccess {
    pub subject: Sid,
    pub class: ClassIdx,
    pub perms: Perms,
    /// The event's epoch ([`crate::marks::Marks::ticket`]).
    pub epoch: u64,
}

/// Labels of objects as SIDs. The only per-inode cache on this path: the
/// labeler is asked uncached.
pub struct ObjectSids {
    labeler: RwLock<Arc<ObjectLabeler>>,
    unlabeled: RwLock<Sid>,
    paths: PathLabels,
    cache: LabelCache,
}

impl ObjectSids {
    pub fn new(avc: &Avc, labeler: Arc<ObjectLabeler>, unlabeled: Sid) -> ObjectSids {
        ObjectSids {
            paths: PathLabels::new(avc, labeler.contexts(), unlabeled),
            labeler: RwLock::new(labeler),
            unlabeled: RwLock::new(unlabeled),
            cache: LabelCache::default(),
        }
    }

    /// The labels files without xattrs may have.
    pub fn paths(&self) -> &PathLabels {
        &self.paths
    }

    /// The SID of the object open as `fd`, whose metadata is `md`.
    pub fn sid_of(&self, avc: &Avc, fd: BorrowedFd<'_>, md: &std::fs::Metadata) -> Sid {
        match self.label_of(avc, fd, md, None) {
            ObjectLabel::Sid(sid) => sid,
            // Not without a query.
            ObjectLabel::Unresolved(_) => *self.unlabeled.read().unwrap_or_else(PoisonError::into_inner),
        }
    }

    /// The label the object open as `fd` (`O_PATH` too) has by its path
    /// alone; `None` if its xattr holds one. A new name would give it
    /// another (crate::new_labels::keep).
    pub fn path_only(&self, avc: &Avc, fd: BorrowedFd<'_>, md: &std::fs::Metadata) -> Option<Sid> {
        let labeler = Arc::clone(&self.labeler.read().unwrap_or_else(PoisonError::into_inner));
        if labeler.xattr_label(FileRef::Fd(fd)).is_some() {
            return None;
        }
        Some(self.sid_of(avc, fd, md))
    }

    /// The label of the object open as `fd`, whose metadata is `md`:
    /// unresolved if it has no xattr and `query` is granted whatever
    /// label file_contexts gives it.
    pub fn label_of(
        &self,
        avc: &Avc,
        fd: BorrowedFd<'_>,
        md: &std::fs::Metadata,
        query: Option<EventAccess>,
    ) -> ObjectLabel {
        let key = (md.dev(), md.ino());
        let ctime = (md.ctime(), md.ctime_nsec());
        let miss = match self.cache.get(key, ctime) {
            Ok(sid) => return ObjectLabel::Sid(sid),
            Err(miss) => miss,
        };
        let labeler = Arc::clone(&self.labeler.read().unwrap_or_else(PoisonError::into_inner));
        let label = match labeler.xattr_label(FileRef::Fd(fd)) {
            Some(label) => label,
            None => {
                let unresolved = FileType::from_metadata(md).filter(|&ft| {
                    query.is_some_and(|q| self.paths.allow(avc, q.subject, q.class, q.perms, ft, q.epoch))
                });
                if let Some(ft) = unresolved {
                    return ObjectLabel::Unresolved(ft);
                }
                labeler.path_label(FileRef::Fd(fd), md)
            }
        };
        let unlabeled = *self.unlabeled.read().unwrap_or_else(PoisonError::into_inner);
        let sid = label.context.and_then(|ctx| avc.intern(&ctx).ok()).unwrap_or(unlabeled);
        self.cache.insert(key, ctime, sid, miss);
        ObjectLabel::Sid(sid)
    }

    /// Forgets every label (files were relabeled).
    pub fn clear(&self) {
        self.cache.clear();
    }

    /// Forgets `inode`'s label: the daemon just wrote another
    /// (crate::label_cache, "Revalidation").
    pub fn forget(&self, inode: Inode) {
        self.cache.forget(inode);
    }

    /// Replaces file_contexts and the unlabeled context (a reload), and
    /// forgets every label. The caller then advances the epoch.
    pub fn replace(&self, avc: &Avc, labeler: Arc<ObjectLabeler>, unlabeled: Sid) {
        self.paths.replace(avc, labeler.contexts(), unlabeled);
        *self.labeler.write().unwrap_or_else(PoisonError::into_inner) = labeler;
        *self.unlabeled.write().unwrap_or_else(PoisonError::into_inner) = unlabeled;
        self.clear();
    }
}
