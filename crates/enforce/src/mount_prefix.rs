//! Deciding an AppArmor file check without the file's name, when the
//! name cannot change the answer: the AppArmor counterpart of
//! crate::path_labels. A profile decides by the name the kernel builds
//! (`d_path`), and reading it (`readlink /proc/self/fd/N`) is the
//! slowest part of a first touch under a profile (docs/benchmarks.md,
//! "AppArmor through the daemon"). But every file of a mount whose root
//! is its filesystem's root has a name that begins with the mount's path
//! and a slash; when the profile gives every name below that prefix the
//! same permissions ([`rampart_apparmor::file::uniform_below`]), the
//! name is not needed.
//!
//! The event's mount comes from `statx(STATX_MNT_ID)` of its descriptor
//! (the opener's mount: a bind mount, or a mount of another namespace,
//! has its own id); its path from the daemon's `/proc/self/mountinfo`.
//! A mount of another namespace (no such id here), or one whose root is
//! a subdirectory (its files may have disconnected names), is not
//! known: the name is read. Only regular files are decided so (a
//! directory may be the mount's root, whose name is the prefix itself).
//!
//! Kept current: the mount table is read again after every change the
//! name-change watcher reports (crate::name_changes calls
//! [`MountPrefixes::mounts_changed`]); until the watcher runs, nothing is
//! decided without the name. Between a mount moving and the watcher's
//! wake-up, a file may be decided under its mount's old path (the window
//! docs/security.md describes for marks that rest on names).

use std::collections::HashMap;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use rampart_apparmor::file::uniform_below;
use rampart_apparmor::perms::Perms;
use rampart_apparmor::{Profile, ProfileSet};

/// Most DFA states a closure may visit (a larger profile reads names).
const CLOSURE_LIMIT: usize = 20_000;
/// Most cached answers; beyond, the cache starts over.
const MAX_CACHED: usize = 4096;

/// A profile's name, a mount id and that mount's path and a slash.
type AnswerKey = (String, u64, Vec<u8>);

/// A profile's answer below one mount, for one profile set.
struct Uniform {
    set: Arc<ProfileSet>,
    perms: Option<(Perms, Perms)>,
}

/// The mounts' prefixes and the profiles' answers below them.
#[derive(Default)]
pub struct MountPrefixes {
    /// The watcher keeps `mounts` current.
    watched: AtomicBool,
    /// Mount id -> its path and a slash (`None`: not decidable so).
    /// Read by every event under a profile, written on a miss or a
    /// change: read-write locks, so that responders do not queue on each
    /// other (seed 004).
    mounts: RwLock<Option<HashMap<u64, Option<Vec<u8>>>>>,
    /// By profile and mount, and the mount's path then: an answer
    /// computed from a table a change has since replaced is not used for
    /// the mount's new path.
    answers: RwLock<HashMap<AnswerKey, Uniform>>,
}

impl MountPrefixes {
    /// The mount table changed (or the watcher started): read it again.
    pub fn mounts_changed(&self) {
        *self.mounts.write().unwrap_or_else(PoisonError::into_inner) = None;
        self.answers.write().unwrap_or_else(PoisonError::into_inner).clear();
        // SeqCst: after the clear above, so that no answer computed
        // before the watcher ran is kept.
        self.watched.store(true, Ordering::SeqCst);
    }

    /// The permissions (other, owner) `p` of `set` gives the regular file
    /// open as `fd`, whatever its name, if its mount tells them.
    pub fn perms(&self, set: &Arc<ProfileSet>, p: &Profile, fd: BorrowedFd<'_>) -> Option<(Perms, Perms)> {
        // SeqCst: see `mounts_changed`.
        if !self.watched.load(Ordering::SeqCst) {
            return None;
        }
        let id = crate::mountinfo::mount_id(fd)?;
        let prefix = self.prefix(id)?;
        let key = (p.name.clone(), id, prefix);
        if let Some(u) =
            self.answers.read().unwrap_or_else(PoisonError::into_inner).get(&key).filter(|u| Arc::ptr_eq(&u.set, set))
        {
            return u.perms;
        }
        let perms = uniform_below(p, &key.2, CLOSURE_LIMIT);
        let mut answers = self.answers.write().unwrap_or_else(PoisonError::into_inner);
        if answers.len() >= MAX_CACHED {
            answers.clear();
        }
        answers.insert(key, Uniform { set: Arc::clone(set), perms });
        perms
    }

    /// Mount `id`'s path and a slash, if its root is its filesystem's.
    fn prefix(&self, id: u64) -> Option<Vec<u8>> {
        if let Some(table) = self.mounts.read().unwrap_or_else(PoisonError::into_inner).as_ref() {
            return table.get(&id).cloned().flatten();
        }
        let mut mounts = self.mounts.write().unwrap_or_else(PoisonError::into_inner);
        let table = mounts.get_or_insert_with(|| {
            std::fs::read_to_string("/proc/self/mountinfo")
                .map(|t| crate::mountinfo::whole_mount_prefixes(&t))
                .unwrap_or_default()
        });
        table.get(&id).cloned().flatten()
    }
}
