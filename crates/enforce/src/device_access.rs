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
//! policy load, a boolean change, a switch of the daemon's mode or a
//! change of the nodes (crate::device_watch), the nodes of the kernel's device
//! filesystem (`/dev` and every other devtmpfs mount, walked on that
//! filesystem only) are labeled as an open would label them (xattr, else
//! file_contexts by path); a device gets `read` where the domain may open
//! every node of it for reading (`chr_file`/`blk_file { open read }`),
//! `write` where for writing or appending, and a device without a node
//! there (one made later, a node made elsewhere of an unknown device)
//! nothing: coarser than SELinux, never laxer. Under an AppArmor profile
//! the profile must allow the same of each node's path too
//! ([`AppArmor::device_access`]). Terminals stay open to all
//! (crate::controlling_tty). A label that both modules let open every
//! device (a permissive domain without a profile; every label under a
//! permissive daemon) gets no program.
//!
//! What differs from SELinux: the refusal is `EPERM` without an AVC line
//! (the hook cannot report); the nodes are those present when the domain
//! was entered or they, or the policy, last changed (a device plugged in
//! is refused until the watcher has seen its node: about 100 ms).

use std::collections::BTreeMap;
use std::fs::Metadata;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rampart_avc::{Avc, Sid};

use crate::access::{ClassPerms, Classes};
use crate::apparmor::AppArmor;
use crate::device_program::{Device, ACCESS_READ, ACCESS_WRITE, DEV_BLOCK, DEV_CHAR};
use crate::subject_label::Label;

/// A device node as an open would decide it.
struct Node {
    device: Device,
    /// Its path, AppArmor's name for it.
    name: Vec<u8>,
    sid: Sid,
    class: ClassPerms,
}

/// The device nodes of the machine, labeled, and the AppArmor profiles
/// that decide them too.
pub struct DeviceNodes {
    nodes: Vec<Node>,
    apparmor: Option<Arc<AppArmor>>,
}

impl DeviceNodes {
    /// Labels every node of the kernel's device filesystem with `label`.
    pub fn scan(
        classes: &Classes,
        label: &dyn Fn(BorrowedFd<'_>, &Metadata) -> Sid,
        apparmor: Option<Arc<AppArmor>>,
    ) -> DeviceNodes {
        let mut nodes = Vec::new();
        // Terminals are the program's to allow, before any list.
        for (path, md) in device_nodes().into_iter().filter(|(_, md)| !crate::controlling_tty::is_terminal(md)) {
            let Some(class) = classes.of_mode(md.mode()) else { continue };
            let Ok(fd) = open_node(&path) else { continue };
            let kind = if md.file_type().is_block_device() { DEV_BLOCK } else { DEV_CHAR };
            let rdev = md.rdev();
            let device = Device { kind, major: libc::major(rdev), minor: libc::minor(rdev) };
            let sid = label(fd.as_fd(), &md);
            nodes.push(Node { device, name: path.into_os_string().into_vec(), sid, class });
        }
        DeviceNodes { nodes, apparmor }
    }

    /// The accesses `label` has to each device: those both modules give
    /// it through every node of it; `None` if it has them all, or the
    /// daemon is permissive (nothing to enforce).
    pub fn allowed(&self, avc: &Avc, label: &Label) -> Option<Vec<(Device, u32)>> {
        let (_, _, enforcing) = avc.policy_state();
        if !enforcing {
            return None;
        }
        let profile = label.apparmor.as_deref().zip(self.apparmor.as_deref());
        let mut by_device: BTreeMap<Device, u32> = BTreeMap::new();
        let mut all = true;
        for n in &self.nodes {
            let passes = |flags: i32| {
                let perms = n.class.for_flags(flags as u64);
                avc.has_perm_noaudit(label.sid, n.sid, n.class.class, perms).passes()
            };
            let mut access = match profile {
                Some((name, aa)) => aa.device_access(name, &n.name),
                None => ACCESS_READ | ACCESS_WRITE,
            };
            if !passes(libc::O_RDONLY) {
                access &= !ACCESS_READ;
            }
            if !passes(libc::O_WRONLY) && !passes(libc::O_WRONLY | libc::O_APPEND) {
                access &= !ACCESS_WRITE;
            }
            all &= access == ACCESS_READ | ACCESS_WRITE;
            *by_device.entry(n.device).or_insert(ACCESS_READ | ACCESS_WRITE) &= access;
        }
        (!all).then(|| by_device.into_iter().filter(|(_, a)| *a != 0).collect())
    }
}

/// Gives the cgroup `dir` of `label` its device program (replacing an
/// earlier one); a label that may open every device gets none, and
/// loses the one it had.
pub fn apply(dir: &Path, nodes: &DeviceNodes, avc: &Avc, label: &Label) -> Result<(), String> {
    let what = |e: &dyn std::fmt::Display| format!("device access of {}: {e}", dir.display());
    let insns = match nodes.allowed(avc, label) {
        Some(allowed) => Some(crate::device_program::program(&allowed).map_err(|e| what(&e))?),
        None => None,
    };
    crate::device_program::install(dir, insns.as_deref()).map_err(|e| what(&e))
}

/// How deep `/dev` is walked.
pub(crate) const MOST_DEPTH: usize = 8;

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
