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
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rampart_apparmor::file::uniform_below;
use rampart_apparmor::perms::Perms;
use rampart_apparmor::{Profile, ProfileSet};

/// Most DFA states a closure may visit (a larger profile reads names).
const CLOSURE_LIMIT: usize = 20_000;
/// Most cached answers; beyond, the cache starts over.
const MAX_CACHED: usize = 4096;

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
    mounts: Mutex<Option<HashMap<u64, Option<Vec<u8>>>>>,
    answers: Mutex<HashMap<(String, u64), Uniform>>,
}

impl MountPrefixes {
    /// The mount table changed (or the watcher started): read it again.
    pub fn mounts_changed(&self) {
        *self.mounts.lock().unwrap_or_else(PoisonError::into_inner) = None;
        self.answers.lock().unwrap_or_else(PoisonError::into_inner).clear();
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
        let id = mount_id(fd)?;
        let prefix = self.prefix(id)?;
        let key = (p.name.clone(), id);
        let mut answers = self.answers.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(u) = answers.get(&key).filter(|u| Arc::ptr_eq(&u.set, set)) {
            return u.perms;
        }
        let perms = uniform_below(p, &prefix, CLOSURE_LIMIT);
        if answers.len() >= MAX_CACHED {
            answers.clear();
        }
        answers.insert(key, Uniform { set: Arc::clone(set), perms });
        perms
    }

    /// Mount `id`'s path and a slash, if its root is its filesystem's.
    fn prefix(&self, id: u64) -> Option<Vec<u8>> {
        let mut mounts = self.mounts.lock().unwrap_or_else(PoisonError::into_inner);
        let table = mounts.get_or_insert_with(|| {
            std::fs::read_to_string("/proc/self/mountinfo").map(|t| prefixes(&t)).unwrap_or_default()
        });
        table.get(&id).cloned().flatten()
    }
}

/// Mount id -> `Some(path + "/")` for a mount of its filesystem's root,
/// `None` for a mount of a subdirectory.
fn prefixes(mountinfo: &str) -> HashMap<u64, Option<Vec<u8>>> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let mut f = line.split(' ');
            let id = f.next()?.parse().ok()?;
            let root = f.nth(2)?;
            let point = crate::mountinfo::unescape(f.next()?);
            let mut prefix = std::path::Path::new(&point).as_os_str().as_bytes().to_vec();
            if !prefix.ends_with(b"/") {
                prefix.push(b'/');
            }
            Some((id, (root == "/").then_some(prefix)))
        })
        .collect()
}

/// `statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID)`.
fn mount_id(fd: BorrowedFd<'_>) -> Option<u64> {
    // SAFETY: statx is plain data; all zeroes is valid.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: `stx` is writable for the call; the path is an empty
    // NUL-terminated string with AT_EMPTY_PATH.
    let rc = unsafe { libc::statx(fd.as_raw_fd(), c"".as_ptr(), libc::AT_EMPTY_PATH, libc::STATX_MNT_ID, &mut stx) };
    (rc == 0 && stx.stx_mask & libc::STATX_MNT_ID != 0).then_some(stx.stx_mnt_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_of_whole_mounts_only() {
        let info = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n\
                    90 22 0:45 / /tmp/t rw - tmpfs tmpfs rw\n\
                    91 22 0:45 /data /srv/with\\040space rw - tmpfs tmpfs rw\n\
                    garbage\n";
        let p = prefixes(info);
        assert_eq!(p.get(&22), Some(&Some(b"/".to_vec())));
        assert_eq!(p.get(&90), Some(&Some(b"/tmp/t/".to_vec())));
        assert_eq!(p.get(&91), Some(&None), "a mount of a subdirectory");
        assert_eq!(p.len(), 3);
    }
}
