//! The block devices the marked filesystems lie on, and their nodes in
//! `/dev`: reading such a device reads every file of the filesystem on
//! it, and writing it writes them.
//!
//! Why: a disk's node is the root user's by its mode bits
//! (`brw-rw---- root disk`), and opening it asks no capability, so a
//! confined root process would read a marked filesystem's secrets from
//! its blocks, or change them, where fanotify sees nothing: `/dev` is
//! another filesystem. SELinux labels disks (`fixed_disk_device_t`) and
//! keeps confined domains from them.
//!
//! How: the devices under a marked filesystem are found in
//! `/sys/dev/block`: the filesystem's own (`st_dev`), the whole disk a
//! partition is part of, and the devices a mapped or RAID device is made
//! of (`slaves/`), each in turn; their nodes are the block nodes in
//! `/dev` of those devices (symbolic links, as udev's `/dev/disk/by-*`
//! names, lead to the same nodes). fanotify makes no permission event
//! for device files (tried on 6.18: an inode mark on a device node sees
//! no open), so:
//! - an open asking to write, which a launched process hands over
//!   (crate::supervised_open), is decided on the node's label, as an open
//!   of a marked filesystem's file (`blk_file { open write }`, audited:
//!   crate::supervisor, as for every device node);
//! - an open for reading is not seen: where the domain may not read every
//!   such node (`blk_file { read }` on its label), the exec-context reply
//!   says `disk_reads` and the launcher's Landlock ruleset leaves those
//!   nodes unreadable (`READ_FILE` granted on everything else:
//!   crate::sandbox). Coarser than SELinux (no AVC line), never laxer.
//!
//! Not covered: a process launched without the sandbox (`--no-sandbox`)
//! reads the disk; nodes made after the launch (`mknod` asks
//! `CAP_MKNOD`, which the policy bounds); the file behind a loop device
//! (decided by its own label, where it lies on a marked filesystem);
//! filesystems on no block device (tmpfs); reads of nodes made on other
//! filesystems than the kernel's device filesystem (a container's own
//! `/dev`).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// How many devices one filesystem may lie on (a bound on a crafted
/// sysfs loop, far above any real stack).
const MOST_DEVICES: usize = 256;
/// How deep `/dev` is walked.
const MOST_DEPTH: usize = 8;

/// The devices (`st_rdev` values) under the filesystems of devices
/// `devs`: each one with a directory in `/sys/dev/block`, the whole disk
/// of a partition, and what a device is made of.
pub(crate) fn devices_under(devs: &[u64]) -> Vec<u64> {
    devices_in(Path::new("/sys/dev/block"), devs)
}

fn devices_in(sys: &Path, devs: &[u64]) -> Vec<u64> {
    let mut found: Vec<u64> = Vec::new();
    let mut todo: Vec<u64> = devs.to_vec();
    while let Some(dev) = todo.pop() {
        if found.contains(&dev) || found.len() >= MOST_DEVICES {
            continue;
        }
        let dir = sys.join(format!("{}:{}", libc::major(dev), libc::minor(dev)));
        if !dir.is_dir() {
            continue;
        }
        found.push(dev);
        if dir.join("partition").exists() {
            // `DIR/..` is the disk's directory: the link is followed first.
            todo.extend(read_dev(&dir.join("../dev")));
        }
        if let Ok(slaves) = std::fs::read_dir(dir.join("slaves")) {
            todo.extend(slaves.flatten().filter_map(|s| read_dev(&s.path().join("dev"))));
        }
    }
    found
}

/// A sysfs `dev` file's `MAJOR:MINOR`.
fn read_dev(path: &Path) -> Option<u64> {
    parse_dev(&std::fs::read_to_string(path).ok()?)
}

fn parse_dev(text: &str) -> Option<u64> {
    let (major, minor) = text.trim().split_once(':')?;
    Some(libc::makedev(major.parse().ok()?, minor.parse().ok()?))
}

/// The block nodes of devices `devices` (not through links) in `/dev`
/// and wherever else the kernel's device filesystem is mounted (a bind
/// of `/dev` into a chroot names the same nodes by other paths), in this
/// process's mount namespace.
pub(crate) fn nodes_of(devices: &[u64]) -> Vec<PathBuf> {
    let mut nodes = Vec::new();
    if devices.is_empty() {
        return nodes;
    }
    let mut places = vec![PathBuf::from("/dev")];
    if let Ok(table) = std::fs::read_to_string("/proc/self/mountinfo") {
        places.extend(crate::mountinfo::mounts_of_type(&table, "devtmpfs"));
    }
    places.sort();
    places.dedup();
    for place in &places {
        if let Ok(md) = std::fs::metadata(place) {
            walk(place, (devices, md.dev()), 0, &mut nodes);
        }
    }
    nodes.sort();
    nodes.dedup();
    nodes
}

/// The nodes of `devices` below `dir`, on filesystem `fs` only (not
/// `/dev/pts`, nor `/dev/shm`, where anyone makes files).
fn walk(dir: &Path, (devices, fs): (&[u64], u64), depth: usize, nodes: &mut Vec<PathBuf>) {
    use std::os::unix::fs::FileTypeExt;
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let Ok(md) = entry.path().symlink_metadata() else { continue };
        if md.file_type().is_block_device() && devices.contains(&md.rdev()) {
            nodes.push(entry.path());
        } else if md.is_dir() && md.dev() == fs && depth < MOST_DEPTH {
            walk(&entry.path(), (devices, fs), depth + 1, nodes);
        }
    }
}

/// The node at `path`, `O_PATH` (the device is not opened).
pub(crate) fn open_node(path: &Path) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    Ok(file.into())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_dev_file_reads_as_the_kernel_writes_it() {
        assert_eq!(parse_dev("8:17\n"), Some(libc::makedev(8, 17)));
        assert_eq!(parse_dev("259:3"), Some(libc::makedev(259, 3)));
        assert_eq!(parse_dev("8-17"), None);
        assert_eq!(parse_dev(""), None);
    }

    /// A sysfs tree as the kernel lays it out: a partition's directory
    /// inside its disk's, a mapped device's `slaves/` linking to the
    /// partitions it is made of.
    #[test]
    fn a_mapped_device_leads_to_its_partitions_and_disks() {
        let root = std::env::temp_dir().join(format!("rampart-block-devices.{}", std::process::id()));
        let devices = root.join("devices");
        let sda = devices.join("sda");
        let sda2 = sda.join("sda2");
        let dm = devices.join("dm-0");
        for (dir, dev) in [(&sda, "8:0"), (&sda2, "8:2"), (&dm, "253:0")] {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join("dev"), format!("{dev}\n")).unwrap();
        }
        std::fs::write(sda2.join("partition"), "2\n").unwrap();
        std::fs::create_dir_all(dm.join("slaves")).unwrap();
        std::os::unix::fs::symlink(&sda2, dm.join("slaves/sda2")).unwrap();
        let block = root.join("block");
        std::fs::create_dir_all(&block).unwrap();
        for (name, dir) in [("8:0", &sda), ("8:2", &sda2), ("253:0", &dm)] {
            std::os::unix::fs::symlink(dir, block.join(name)).unwrap();
        }
        let mut found = devices_in(&block, &[libc::makedev(253, 0)]);
        found.sort_unstable();
        assert_eq!(found, vec![libc::makedev(8, 0), libc::makedev(8, 2), libc::makedev(253, 0)]);
        // A device sysfs does not know (tmpfs's anonymous one): nothing.
        assert_eq!(devices_in(&block, &[libc::makedev(0, 45)]), Vec::<u64>::new());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
