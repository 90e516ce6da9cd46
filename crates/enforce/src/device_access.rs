//! What a domain may open of the machine's devices, decided by the
//! policy on their nodes' labels and enforced by the kernel's cgroup
//! device hook on the domain's cgroup (crate::device_program).
//!
//! Why: fanotify makes no permission event for a device file, and
//! supervised opens see only opens for writing (crate::supervisor), so a
//! confined root process read what the mode bits let it: the kernel's log
//! (`/dev/kmsg`), a console's screen (`/dev/vcs*`), keyboards
//! (`/dev/input/*`), microphones and cameras, and the disks under the
//! marked filesystems, whose blocks hold every file (before this, the
//! launcher's Landlock ruleset kept those from reading, at a cost on every
//! open: docs/benchmarks.md). The cgroup hook runs at every open of a
//! device node, wherever the node lies, and on nothing else.
//!
//! How: at a domain cgroup's making, and again for every domain after a
//! policy load or a boolean change, the nodes of the kernel's device
//! filesystem (`/dev` and every other devtmpfs mount, walked on that
//! filesystem only) are labeled as an open would label them (xattr, else
//! file_contexts by path); a device gets `read` where the domain may open
//! every node of it for reading (`chr_file`/`blk_file { open read }`),
//! `write` where for writing or appending, and a device without a node
//! there (one made later, a node made elsewhere of an unknown device)
//! nothing: coarser than SELinux, never laxer. Terminals stay open to
//! all (crate::controlling_tty). A permissive domain gets no program.
//!
//! What differs from SELinux: the refusal is `EPERM` without an AVC line
//! (the hook cannot report); the nodes are those present when the domain
//! was entered or the policy last changed.

use std::collections::BTreeMap;
use std::fs::Metadata;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use rampart_avc::{Avc, Sid};

use crate::access::{ClassPerms, Classes};
use crate::device_program::{Device, ACCESS_READ, ACCESS_WRITE, DEV_BLOCK, DEV_CHAR};

/// A device node as an open would decide it.
struct Node {
    device: Device,
    sid: Sid,
    class: ClassPerms,
}

/// The device nodes of the machine, labeled.
#[derive(Default)]
pub struct DeviceNodes(Vec<Node>);

impl DeviceNodes {
    /// Labels every node of the kernel's device filesystem with `label`.
    pub fn scan(classes: &Classes, label: &dyn Fn(BorrowedFd<'_>, &Metadata) -> Sid) -> DeviceNodes {
        let mut nodes = Vec::new();
        for (path, md) in device_nodes() {
            let Some(class) = classes.of_mode(md.mode()) else { continue };
            let Ok(fd) = open_node(&path) else { continue };
            let kind = if md.file_type().is_block_device() { DEV_BLOCK } else { DEV_CHAR };
            let rdev = md.rdev();
            let device = Device { kind, major: libc::major(rdev), minor: libc::minor(rdev) };
            nodes.push(Node { device, sid: label(fd.as_fd(), &md), class });
        }
        DeviceNodes(nodes)
    }

    /// The accesses `domain` has to each device: those it has through
    /// every node of it; `None` if it has them all (nothing to enforce).
    pub fn allowed(&self, avc: &Avc, domain: Sid) -> Option<Vec<(Device, u32)>> {
        let mut by_device: BTreeMap<Device, u32> = BTreeMap::new();
        let mut all = true;
        for n in &self.0 {
            let passes = |flags: i32| {
                avc.has_perm_noaudit(domain, n.sid, n.class.class, n.class.for_flags(flags as u64)).passes()
            };
            let mut access = 0;
            if passes(libc::O_RDONLY) {
                access |= ACCESS_READ;
            }
            if passes(libc::O_WRONLY) || passes(libc::O_WRONLY | libc::O_APPEND) {
                access |= ACCESS_WRITE;
            }
            all &= access == ACCESS_READ | ACCESS_WRITE;
            *by_device.entry(n.device).or_insert(ACCESS_READ | ACCESS_WRITE) &= access;
        }
        (!all).then(|| by_device.into_iter().filter(|(_, a)| *a != 0).collect())
    }
}

/// Gives the cgroup `dir` of `domain` its device program (replacing an
/// earlier one); a domain that may open every device gets none, and
/// loses the one it had.
pub fn apply(dir: &Path, nodes: &DeviceNodes, avc: &Avc, domain: Sid) -> Result<(), String> {
    let what = |e: &dyn std::fmt::Display| format!("device access of {}: {e}", dir.display());
    let insns = match nodes.allowed(avc, domain) {
        Some(allowed) => Some(crate::device_program::program(&allowed).map_err(|e| what(&e))?),
        None => None,
    };
    crate::device_program::install(dir, insns.as_deref()).map_err(|e| what(&e))
}

/// How deep `/dev` is walked.
const MOST_DEPTH: usize = 8;

/// The device nodes (not through links) in `/dev` and on every other
/// mount of the kernel's device filesystem (a bind of `/dev` into a
/// chroot names the same nodes by other paths), in this process's mount
/// namespace, with their metadata, sorted by path.
fn device_nodes() -> Vec<(PathBuf, Metadata)> {
    let mut nodes = Vec::new();
    let mut places = vec![PathBuf::from("/dev")];
    if let Ok(table) = std::fs::read_to_string("/proc/self/mountinfo") {
        places.extend(crate::mountinfo::mounts_of_type(&table, "devtmpfs"));
    }
    places.sort();
    places.dedup();
    for place in &places {
        if let Ok(md) = std::fs::metadata(place) {
            walk(place, md.dev(), 0, &mut nodes);
        }
    }
    nodes.sort_by(|a, b| a.0.cmp(&b.0));
    nodes.dedup_by(|a, b| a.0 == b.0);
    nodes
}

/// The device nodes below `dir`, on filesystem `fs` only (not
/// `/dev/pts`, nor `/dev/shm`, where anyone makes files).
fn walk(dir: &Path, fs: u64, depth: usize, nodes: &mut Vec<(PathBuf, Metadata)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let Ok(md) = entry.path().symlink_metadata() else { continue };
        let kind = md.file_type();
        if md.is_dir() {
            if md.dev() == fs && depth < MOST_DEPTH {
                walk(&entry.path(), fs, depth + 1, nodes);
            }
        } else if kind.is_char_device() || kind.is_block_device() {
            nodes.push((entry.path(), md));
        }
    }
}

/// The node at `path`, `O_PATH` (the device is not opened).
fn open_node(path: &Path) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    Ok(file.into())
}
