//! Decisions that need no path.
//!
//! A file without a `security.selinux` xattr is labeled from
//! file_contexts by its path, and finding the path (a `readlinkat`
//! through `/proc/self/fd`) and matching it is the largest part of the
//! daemon's work on a first open: the kernel never pays it, its inodes
//! carry their label. But whatever the path, that label is one of a
//! known, finite set: a context file_contexts gives files of that type,
//! or the unlabeled context. When the policy grants a domain the same
//! permissions on every one of them, with nothing to audit, the answer
//! cannot depend on which: the file stays *unresolved* and the path is
//! never read. Under the Debian policy the default domain
//! (`unconfined_t`) is allowed to open every regular file so: its first
//! opens of files without xattrs cost no path at all.
//!
//! This is exact, not a guess: a candidate the policy denies makes the
//! answer "resolve the path", and a file with an xattr is never
//! unresolved. Answers are cached per epoch of [`crate::marks`], which
//! every policy, boolean, label or file_contexts change advances.

use std::sync::{Arc, PoisonError, RwLock};

use rampart_avc::{Avc, ClassIdx, Perms, Sid};
use rampart_label::{FileContexts, FileType};
use rustc_hash::{FxHashMap, FxHashSet};

use std::os::fd::BorrowedFd;

use crate::apparmor::AppArmor;
use crate::marks::{EventObject, Judge, NameGrant, ProfileInScope};
use crate::object_label::ObjectLabel;

/// The SIDs a file of each type may get from file_contexts.
struct Candidates {
    /// Indexed like [`FileType::ALL`].
    by_type: [Arc<[Sid]>; 7],
}

fn type_index(file_type: FileType) -> usize {
    FileType::ALL.iter().position(|&t| t == file_type).unwrap_or(0)
}

type AnswerKey = (Sid, ClassIdx, FileType);

/// The labels files without xattrs can have, and which domains are
/// allowed what on all of them.
pub struct PathLabels {
    candidates: RwLock<Arc<Candidates>>,
    /// Per (domain, class, file type): the permissions granted on every
    /// candidate with nothing audited, and the epoch they were computed
    /// in (never used in a later one). One walk of the candidates serves
    /// every question about them (an open's, then its access mark's).
    answers: RwLock<FxHashMap<AnswerKey, (Perms, u64)>>,
}

impl PathLabels {
    /// The labels `contexts` can give (each interned in `avc`; a context
    /// the policy rejects labels nothing, its files get `unlabeled`).
    pub fn new(avc: &Avc, contexts: &FileContexts, unlabeled: Sid) -> PathLabels {
        PathLabels::with_candidates(|ft| candidates(avc, contexts, ft, unlabeled))
    }

    /// `candidates(t)`: every SID a file of type `t` without an xattr may
    /// have.
    pub fn with_candidates(candidates: impl Fn(FileType) -> Vec<Sid>) -> PathLabels {
        PathLabels { candidates: RwLock::new(Arc::new(build(candidates))), answers: RwLock::default() }
    }

    /// New file_contexts (a reload). The caller then advances the epoch.
    pub fn replace(&self, avc: &Avc, contexts: &FileContexts, unlabeled: Sid) {
        let next = build(|ft| candidates(avc, contexts, ft, unlabeled));
        *self.candidates.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(next);
        self.answers.write().unwrap_or_else(PoisonError::into_inner).clear();
    }

    /// `subject` is allowed `perms` on `class` for every label a file of
    /// `file_type` without an xattr may have, and none of it is audited
    /// (`auditallow`), in `epoch`.
    pub fn allow(
        &self,
        avc: &Avc,
        subject: Sid,
        class: ClassIdx,
        perms: Perms,
        file_type: FileType,
        epoch: u64,
    ) -> bool {
        self.granted_everywhere(avc, subject, class, file_type, epoch).contains(perms)
    }

    fn granted_everywhere(&self, avc: &Avc, subject: Sid, class: ClassIdx, file_type: FileType, epoch: u64) -> Perms {
        let key = (subject, class, file_type);
        if let Some(&(granted, at)) = self.answers.read().unwrap_or_else(PoisonError::into_inner).get(&key) {
            if at == epoch {
                return granted;
            }
        }
        let candidates = Arc::clone(&self.candidates.read().unwrap_or_else(PoisonError::into_inner));
        let mut granted = Perms::ALL;
        for &t in candidates.by_type[type_index(file_type)].iter() {
            let d = avc.peek(subject, t, class, Perms::ALL);
            granted &= d.allowed & !d.auditallow;
            if granted.is_empty() {
                // A confined domain usually gets here soon.
                break;
            }
        }
        // Computed across a change: stored under the old epoch, so never
        // used after it.
        self.answers.write().unwrap_or_else(PoisonError::into_inner).insert(key, (granted, epoch));
        granted
    }
}

/// The SIDs of the contexts `contexts` gives files of `file_type`, and
/// `unlabeled`.
fn candidates(avc: &Avc, contexts: &FileContexts, file_type: FileType, unlabeled: Sid) -> Vec<Sid> {
    let distinct: FxHashSet<&str> = contexts.contexts_for(file_type).collect();
    distinct.into_iter().filter_map(|c| avc.intern(c).ok()).chain([unlabeled]).collect()
}

fn build(candidates: impl Fn(FileType) -> Vec<Sid>) -> Candidates {
    Candidates { by_type: FileType::ALL.map(|t| Arc::from(candidates(t))) }
}

/// What the policy grants, for the marks: the AVC for a known label, the
/// answer for every candidate for an unresolved one.
pub struct Grants<'a> {
    pub avc: &'a Avc,
    pub paths: &'a PathLabels,
    /// The profiles, if the daemon runs AppArmor.
    pub apparmor: Option<&'a AppArmor>,
}

impl Judge for Grants<'_> {
    fn may(&self, subject: Sid, target: &EventObject, perms: Perms, epoch: u64) -> bool {
        match target.label {
            ObjectLabel::Sid(t) => self.avc.peek(subject, t, target.class, perms).denied.is_empty(),
            ObjectLabel::Unresolved(ft) => self.paths.allow(self.avc, subject, target.class, perms, ft, epoch),
        }
    }

    fn names_allow(&self, profiles: &[ProfileInScope], fd: BorrowedFd<'_>) -> NameGrant {
        self.apparmor.map_or(NameGrant::NONE, |a| a.all_allow(profiles, fd))
    }
}
