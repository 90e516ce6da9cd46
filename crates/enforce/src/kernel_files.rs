//! Labels of the files of the kernel's own filesystems (sysfs,
//! securityfs, debugfs, tracefs, configfs, efivarfs, pstore, bpf,
//! binfmt_misc, cgroup), for the opens asking to write and the path calls that
//! the launcher hands over (crate::supervisor).
//!
//! Why: those files are the kernel's settings and its devices' controls,
//! and most are the root user's to write by their mode bits alone: a
//! confined root process could suspend the machine (`/sys/power/state`),
//! unbind a device from its driver, change memory management, write EFI
//! variables. SELinux labels them by the policy's `genfscon` rules
//! (`sysfs_t`, `debugfs_t`...) and keeps confined domains from writing
//! them. fanotify has no permission events on these filesystems, but
//! every open asking to write that a launched process makes comes to
//! rampartd first (crate::supervised_open), as do its chmods and the
//! like: those are decided on the label SELinux would give the file.
//!
//! How: the filesystem's type from `fstatfs` (its magic number: no other
//! work for a file elsewhere, `/dev/null` the commonest); its path from
//! the filesystem's root from the daemon's name for the descriptor
//! (`/proc/self/fd/N`) and its mount (`/proc/self/mountinfo`: the
//! mount's root and mount point); the label as the kernel finds it
//! (`rampart_label::genfs_label`), the unlabeled one where no rule gives
//! one or the path cannot be told (which confined domains may not write
//! either): a mount outside the daemon's mount namespace is not in its
//! mountinfo. Files are labeled by the policy alone: a label written into
//! such a file (`chcon` on sysfs, which keeps it in memory) is not read.
//! procfs, whose files would name the daemon's own in the daemon
//! (`/proc/self`), stays refused (crate::supervised_open); reads of these
//! filesystems are not mediated.

use std::os::fd::{AsRawFd, BorrowedFd};

use rampart_avc::Sid;
use rampart_label::{genfs_label, FileType};

use crate::enforcer::Enforcer;
use crate::mountinfo;
use crate::objects::unlabeled_context;

/// The filesystems (their `statfs` magic, linux/magic.h) and the names
/// `genfscon` rules give them.
const KERNEL_FILESYSTEMS: [(libc::__fsword_t, &str); 11] = [
    (0x6265_6572, "sysfs"),
    // A directory made there is a cgroup (rampartd's tree too: a confined
    // root process that made `exec.N` ahead refused every transition).
    (0x6367_7270, "cgroup2"),
    (0x0027_e0eb, "cgroup"),
    (0x7363_6673, "securityfs"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x6265_6570, "configfs"),
    (0xde5e_81e4, "efivarfs"),
    (0x6165_676c, "pstore"),
    (0xcafe_4a11, "bpf"),
    (0x4249_4e4d, "binfmt_misc"),
];

/// The filesystem type of the object open as `fd`, if it is one of
/// [`KERNEL_FILESYSTEMS`].
fn kernel_filesystem(fd: BorrowedFd<'_>) -> Option<&'static str> {
    // SAFETY: statfs is plain data; zeroed is a valid value.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is writable for the call; `fd` is open (O_PATH too).
    if unsafe { libc::fstatfs(fd.as_raw_fd(), &mut st) } != 0 {
        return None;
    }
    let magic = st.f_type;
    KERNEL_FILESYSTEMS.iter().find(|(m, _)| *m == magic).map(|(_, name)| *name)
}

/// Whether the object open as `fd` lies on one of the kernel's
/// filesystems, which label by the policy's `genfscon` rules alone.
pub(crate) fn holds(fd: BorrowedFd<'_>) -> bool {
    kernel_filesystem(fd).is_some()
}

/// The label of the object open as `fd` (metadata `md`) if it lies on
/// one of the kernel's filesystems (see the module docs); `None`
/// elsewhere.
pub(crate) fn sid_of(e: &Enforcer, fd: BorrowedFd<'_>, md: &std::fs::Metadata) -> Option<Sid> {
    let fstype = kernel_filesystem(fd)?;
    let (policy, ..) = e.avc.policy_state();
    let label = path_from_root(fd).and_then(|path| {
        let class = policy.class_by_name(FileType::from_metadata(md)?.class_name())?;
        genfs_label(&policy, fstype, &path, class).map(|c| policy.context_to_string(c))
    });
    let context = label.unwrap_or_else(|| unlabeled_context(&policy));
    e.avc.intern(&context).ok()
}

/// The path of the object open as `fd` from its filesystem's root, as
/// the kernel's `dentry_path_raw` gives it.
fn path_from_root(fd: BorrowedFd<'_>) -> Option<String> {
    let name = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()?;
    let name = name.to_str()?;
    let id = mountinfo::mount_id(fd)?;
    let table = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let (root, point) = mountinfo::root_and_mount_point(&table, id)?;
    from_root(name, &root, &point)
}

/// `name` (under mount point `point`) from the root of the filesystem
/// whose directory `root` the mount shows.
fn from_root(name: &str, root: &str, point: &str) -> Option<String> {
    let below = if point == "/" { Some(name) } else { name.strip_prefix(point) }?;
    if !below.is_empty() && !below.starts_with('/') {
        return None;
    }
    let joined = format!("{}{below}", root.trim_end_matches('/'));
    Some(if joined.is_empty() { "/".to_owned() } else { joined })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_from_the_filesystems_root() {
        assert_eq!(from_root("/sys/power/state", "/", "/sys").as_deref(), Some("/power/state"));
        assert_eq!(from_root("/sys", "/", "/sys").as_deref(), Some("/"));
        // A mount of a subdirectory shows it at its mount point.
        assert_eq!(
            from_root("/mnt/cpu/online", "/devices/system/cpu", "/mnt/cpu").as_deref(),
            Some("/devices/system/cpu/online")
        );
        // The root mount.
        assert_eq!(from_root("/power/state", "/", "/").as_deref(), Some("/power/state"));
        // Not below the mount point: not told.
        assert_eq!(from_root("/system/x", "/", "/sys"), None);
    }

    #[test]
    fn sysfs_is_told_from_other_filesystems() {
        let sys = std::fs::File::open("/sys").unwrap();
        assert_eq!(kernel_filesystem(std::os::fd::AsFd::as_fd(&sys)), Some("sysfs"));
        let root = std::fs::File::open("/").unwrap();
        assert_eq!(kernel_filesystem(std::os::fd::AsFd::as_fd(&root)), None);
    }
}
