//! Reading `/proc/self/mountinfo`: which mounts are which. The daemon
//! finds the cgroup v2 hierarchy there ([`crate::cgroups`]); `rampart run`
//! finds the mounts of the marked filesystems and of the cgroup hierarchy
//! in its own mount namespace ([`crate::sandbox`]); an exec's mount is
//! looked up in the exec'ing thread's ([`crate::exec_mount`]).

use std::collections::HashMap;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::path::PathBuf;

/// The fields of one mountinfo line the callers need: the device
/// (`major:minor`), the mount point (unescaped) and the filesystem type.
fn fields(line: &str) -> Option<(&str, PathBuf, &str)> {
    let (left, right) = line.split_once(" - ")?;
    let mut f = left.split(' ');
    let dev = f.nth(2)?;
    let mount = f.nth(1)?;
    Some((dev, PathBuf::from(unescape(mount)), right.split(' ').next()?))
}

/// The mount points of the filesystems whose device is in `devices`
/// (`major:minor`), bind mounts included.
pub fn mounts_of_devices(mountinfo: &str, devices: &[String]) -> Vec<PathBuf> {
    mountinfo
        .lines()
        .filter_map(fields)
        .filter(|(dev, _, _)| devices.iter().any(|d| d == dev))
        .map(|(_, mount, _)| mount)
        .collect()
}

/// Those of `devices` mounted exactly once (no bind mount elsewhere: each
/// of their files has one name per link).
pub fn mounted_once(mountinfo: &str, devices: &[u64]) -> Vec<u64> {
    let count = |dev: u64| {
        let name = format!("{}:{}", libc::major(dev), libc::minor(dev));
        mountinfo.lines().filter_map(fields).filter(|(d, _, _)| *d == name).count()
    };
    devices.iter().copied().filter(|&d| count(d) == 1).collect()
}

/// Mount id -> `Some(mount point + "/")` for a mount of its filesystem's
/// root, `None` for a mount of a subdirectory (crate::mount_prefix).
pub fn whole_mount_prefixes(mountinfo: &str) -> HashMap<u64, Option<Vec<u8>>> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let mut f = line.split(' ');
            let id = f.next()?.parse().ok()?;
            let root = f.nth(2)?;
            let mut prefix = unescape(f.next()?).into_bytes();
            if !prefix.ends_with(b"/") {
                prefix.push(b'/');
            }
            Some((id, (root == "/").then_some(prefix)))
        })
        .collect()
}

/// Mount `id`'s root (the directory of its filesystem it shows) and
/// mount point, unescaped (crate::kernel_files).
pub fn root_and_mount_point(mountinfo: &str, id: u64) -> Option<(String, String)> {
    mountinfo.lines().find_map(|line| {
        let mut f = line.split(' ');
        if f.next()?.parse::<u64>().ok()? != id {
            return None;
        }
        let root = f.nth(2)?;
        Some((unescape(root), unescape(f.next()?)))
    })
}

/// The device of mount `id`'s superblock (its `major:minor`), which on
/// btrfs is not its files' `st_dev` (crate::marked_fs).
pub fn device_of_mount(mountinfo: &str, id: u64) -> Option<u64> {
    mountinfo.lines().find_map(|line| {
        let mut f = line.split(' ');
        if f.next()?.parse::<u64>().ok()? != id {
            return None;
        }
        let (major, minor) = f.nth(1)?.split_once(':')?;
        Some(libc::makedev(major.parse().ok()?, minor.parse().ok()?))
    })
}

/// Whether mount `id` is one of `mountinfo`'s (of the namespace it was
/// read in).
pub fn has_mount(mountinfo: &str, id: u64) -> bool {
    mountinfo.lines().any(|line| line.split(' ').next().and_then(|f| f.parse::<u64>().ok()) == Some(id))
}

/// The mount of `fd`: `statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID)`.
pub fn mount_id(fd: BorrowedFd<'_>) -> Option<u64> {
    // SAFETY: statx is plain data; all zeroes is valid.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: `stx` is writable for the call; the path is an empty
    // NUL-terminated string with AT_EMPTY_PATH.
    let rc = unsafe { libc::statx(fd.as_raw_fd(), c"".as_ptr(), libc::AT_EMPTY_PATH, libc::STATX_MNT_ID, &mut stx) };
    (rc == 0 && stx.stx_mask & libc::STATX_MNT_ID != 0).then_some(stx.stx_mnt_id)
}

/// The mount points of cgroup v2 hierarchies, in mountinfo order.
pub fn cgroup2_mounts(mountinfo: &str) -> Vec<PathBuf> {
    mounts_of_type(mountinfo, "cgroup2")
}

/// The mount points of the filesystems of type `fstype`, in mountinfo
/// order.
pub fn mounts_of_type(mountinfo: &str, fstype: &str) -> Vec<PathBuf> {
    mountinfo.lines().filter_map(fields).filter(|(_, _, t)| *t == fstype).map(|(_, m, _)| m).collect()
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
pub(crate) fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b.get(i + 1..i + 4).and_then(|d| u8::from_str_radix(std::str::from_utf8(d).ok()?, 8).ok());
        match (b[i], octal) {
            (b'\\', Some(v)) => {
                out.push(v);
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_are_found_by_device_with_bind_mounts_and_escapes() {
        let info = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n\
                    90 22 0:45 / /tmp/t rw - tmpfs tmpfs rw\n\
                    91 22 0:45 /data /srv/with\\040space rw - tmpfs tmpfs rw\n\
                    92 22 0:46 / /other rw - tmpfs tmpfs rw\n";
        assert_eq!(
            mounts_of_devices(info, &["0:45".into()]),
            vec![PathBuf::from("/tmp/t"), PathBuf::from("/srv/with space")]
        );
        assert!(mounts_of_devices(info, &[]).is_empty());
    }

    #[test]
    fn a_mounts_superblock_device_is_its_major_minor() {
        let info = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n\
                    66 45 0:39 / /srv rw,relatime - btrfs /dev/loop2 rw,subvolid=5,subvol=/\n";
        assert_eq!(device_of_mount(info, 66), Some(libc::makedev(0, 39)));
        assert_eq!(device_of_mount(info, 22), Some(libc::makedev(8, 1)));
        assert_eq!(device_of_mount(info, 7), None);
        // This process's root, against the kernel's own answer.
        let own = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let root = std::fs::File::open("/").unwrap();
        let id = mount_id(std::os::fd::AsFd::as_fd(&root)).unwrap();
        assert!(device_of_mount(&own, id).is_some());
    }

    #[test]
    fn prefixes_of_whole_mounts_only() {
        let info = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n\
                    90 22 0:45 / /tmp/t rw - tmpfs tmpfs rw\n\
                    91 22 0:45 /data /srv/with\\040space rw - tmpfs tmpfs rw\n\
                    garbage\n";
        let p = whole_mount_prefixes(info);
        assert_eq!(p.get(&22), Some(&Some(b"/".to_vec())));
        assert_eq!(p.get(&90), Some(&Some(b"/tmp/t/".to_vec())));
        assert_eq!(p.get(&91), Some(&None), "a mount of a subdirectory");
        assert_eq!(p.len(), 3);
    }

    #[test]
    fn finds_the_unified_hierarchy_in_hybrid_and_pure_layouts() {
        let hybrid = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
                      40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n\
                      41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        assert_eq!(cgroup2_mounts(hybrid).into_iter().next(), Some(PathBuf::from("/sys/fs/cgroup/unified")));
        let pure = "30 24 0:26 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n";
        assert_eq!(cgroup2_mounts(pure).into_iter().next(), Some(PathBuf::from("/sys/fs/cgroup")));
        let escaped = "30 24 0:26 / /mnt/with\\040space rw shared:9 - cgroup2 none rw\n";
        assert_eq!(cgroup2_mounts(escaped).into_iter().next(), Some(PathBuf::from("/mnt/with space")));
        assert!(cgroup2_mounts("31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n").is_empty());
        assert_eq!(cgroup2_mounts("garbage\n").into_iter().next(), None);
    }
}
