//! Which files lie on the marked filesystems.
//!
//! Why: fanotify's filesystem mark covers a superblock, so every file of
//! a marked filesystem is the policy's to decide. `st_dev` names a
//! superblock on most filesystems, not on btrfs (nor bcachefs): each
//! subvolume, the top one included, has a device of its own, and
//! mountinfo shows the superblock's. The calls decided by `st_dev` (the
//! supervised calls, the daemon's copy of a caller's file, mapped files)
//! and the launcher's sandbox, which finds the marked mounts by device in
//! mountinfo, took every file of a marked btrfs but those of the marked
//! path's subvolume for files off the marked filesystems: unchecked.
//!
//! How: the marked set holds the marked paths' `st_dev` and their mounts'
//! superblock devices (mountinfo's `major:minor`). A file lies on a
//! marked filesystem if its `st_dev` is in the set, or, on a filesystem
//! whose `st_dev` is not its superblock's, if its mount's device is; one
//! whose mount the daemon's mount namespace does not show (a process in
//! another namespace) is taken as marked: checked by its label, coarser,
//! never laxer.

use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::mountinfo;

/// `statfs` magic numbers of filesystems whose `st_dev` is a
/// subvolume's, not the superblock's (linux/magic.h).
const SUBVOLUME_FILESYSTEMS: [libc::__fsword_t; 2] = [0x9123_683e /* btrfs */, 0xca45_1a4e /* bcachefs */];

/// The marked filesystems, by device (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct MarkedFilesystems {
    devices: Vec<u64>,
}

impl MarkedFilesystems {
    /// The filesystems of the marked paths `paths`.
    pub fn of_paths<P: AsRef<Path>>(paths: &[P]) -> MarkedFilesystems {
        let table = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let mut devices = Vec::new();
        for path in paths {
            // `O_PATH`: no open event on the marked filesystem.
            let Ok(fd) = crate::supervisor::open_path(libc::AT_FDCWD, path.as_ref().as_os_str(), 0) else { continue };
            let file = std::fs::File::from(fd);
            let Ok(md) = file.metadata() else { continue };
            devices.push(md.dev());
            let superblock = mountinfo::mount_id(std::os::fd::AsFd::as_fd(&file))
                .and_then(|id| mountinfo::device_of_mount(&table, id));
            devices.extend(superblock.filter(|d| *d != md.dev()));
        }
        devices.sort_unstable();
        devices.dedup();
        MarkedFilesystems { devices }
    }

    /// The set of `devices` (tests).
    #[cfg(test)]
    pub(crate) fn from_devices(devices: Vec<u64>) -> MarkedFilesystems {
        MarkedFilesystems { devices }
    }

    /// Every device of the set: `st_dev`s and superblocks.
    pub fn devices(&self) -> &[u64] {
        &self.devices
    }

    /// Whether the file open as `fd` (metadata `md`) lies on a marked
    /// filesystem.
    pub fn holds(&self, fd: BorrowedFd<'_>, md: &std::fs::Metadata) -> bool {
        if self.devices.contains(&md.dev()) {
            return true;
        }
        if !on_subvolume_filesystem(fd) {
            return false;
        }
        let table = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        match mountinfo::mount_id(fd).and_then(|id| mountinfo::device_of_mount(&table, id)) {
            Some(superblock) => self.devices.contains(&superblock),
            // Not a mount of this namespace: decided by its label.
            None => true,
        }
    }
}

fn on_subvolume_filesystem(fd: BorrowedFd<'_>) -> bool {
    // SAFETY: statfs is plain data; zeroed is a valid value.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open; `st` is writable for the call.
    let rc = unsafe { libc::fstatfs(fd.as_raw_fd(), &mut st) };
    rc == 0 && SUBVOLUME_FILESYSTEMS.contains(&st.f_type)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn a_marked_path_holds_its_filesystems_files() {
        let marked = MarkedFilesystems::of_paths(&["/proc"]);
        let inside = std::fs::File::open("/proc/self/status").unwrap();
        assert!(marked.holds(inside.as_fd(), &inside.metadata().unwrap()));
        let outside = std::fs::File::open("/").unwrap();
        let root_dev = outside.metadata().unwrap().dev();
        assert_eq!(marked.holds(outside.as_fd(), &outside.metadata().unwrap()), marked.devices().contains(&root_dev));
        assert!(MarkedFilesystems::of_paths(&["/no/such/path"]).devices().is_empty());
    }
}
