//! The private mount namespace and the file systems the benchmark owns.
//!
//! Why a namespace: a fanotify mount mark stops every open on the marked
//! mount until the listener answers. The benchmark marks (and lets
//! fapolicyd and rampartd mark) only a tmpfs it mounted itself, inside a
//! mount namespace of its own with private propagation, so no mark and no
//! mount can reach the rest of the machine.
//!
//! How: the driver thread (never the main thread) enters a private mount
//! namespace of its own (rampart_enforce::private_mounts, which `rampart
//! demo` uses too); threads and processes started from that thread
//! inherit it. When the thread and its children are gone, the namespace
//! and all its mounts go with it.
//!
//! Layout: one directory under `/tmp` (empty, seen from outside) carries a
//! `ramfs` (`state/`: configuration and sockets of the listeners) and,
//! inside it, the `tmpfs` every workload runs on (`fs/`). The state is on
//! ramfs, not tmpfs, so that a listener told to watch every tmpfs (as
//! fapolicyd is) sees exactly one.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rampart_enforce::private_mounts;

use crate::error::BenchError;

/// One line of `/proc/<pid>/mountinfo`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MountEntry {
    pub id: u64,
    /// `major:minor` of the file system, as the kernel encodes it in
    /// fanotify's fdinfo (`major << 20 | minor`).
    pub kdev: u64,
    pub mount_point: PathBuf,
    pub fstype: String,
}

/// Undoes mountinfo's octal escapes (`\040` for a space, ...).
fn unescape(field: &str) -> PathBuf {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() && bytes[i + 1..i + 4].iter().all(|b| (b'0'..=b'7').contains(b)) {
            let v = (u32::from(bytes[i + 1] - b'0') << 6)
                | (u32::from(bytes[i + 2] - b'0') << 3)
                | u32::from(bytes[i + 3] - b'0');
            out.push(u8::try_from(v).unwrap_or(b'?'));
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    PathBuf::from(std::ffi::OsStr::from_bytes(&out))
}

/// Parses mountinfo text.
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        if f.len() < 7 {
            continue;
        }
        let Some(sep) = f.iter().skip(6).position(|x| *x == "-").map(|p| p + 6) else { continue };
        let (Ok(id), Some(fstype)) = (f[0].parse::<u64>(), f.get(sep + 1)) else { continue };
        let kdev = match f[2].split_once(':') {
            Some((ma, mi)) => match (ma.parse::<u64>(), mi.parse::<u64>()) {
                (Ok(ma), Ok(mi)) => (ma << 20) | mi,
                _ => continue,
            },
            None => continue,
        };
        out.push(MountEntry { id, kdev, mount_point: unescape(f[4]), fstype: (*fstype).to_string() });
    }
    out
}

/// The mounts seen by the calling thread.
pub fn own_mounts() -> Result<Vec<MountEntry>, BenchError> {
    let text = std::fs::read_to_string("/proc/thread-self/mountinfo")
        .map_err(BenchError::io("cannot read /proc/thread-self/mountinfo"))?;
    Ok(parse_mountinfo(&text))
}

/// The private-namespace primitives (rampart_enforce::private_mounts,
/// shared with `rampart demo`), with the benchmark's error type.
fn shared<T>(r: std::io::Result<T>) -> Result<T, BenchError> {
    r.map_err(|e| BenchError::Workload(e.to_string()))
}

/// Moves the calling thread into a new, private mount namespace.
pub fn enter_private_namespace() -> Result<(), BenchError> {
    shared(private_mounts::enter_private_namespace())
}

/// The mount namespace of the calling thread (`mnt:[inode]`).
pub fn own_namespace() -> Result<String, BenchError> {
    shared(private_mounts::own_namespace())
}

fn namespace_of_pid(pid: i32) -> Result<String, BenchError> {
    shared(private_mounts::namespace_of_pid(pid))
}

fn mount(
    source: &str,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> Result<(), BenchError> {
    shared(private_mounts::mount(source, target, fstype, flags, data))
}

fn mount_tmpfs(name: &str, target: &Path, data: &str) -> Result<(), BenchError> {
    shared(private_mounts::mount_tmpfs(name, target, data))
}

/// Bind-mounts `source` over `target` (in the calling thread's namespace).
pub fn bind(source: &Path, target: &Path) -> Result<(), BenchError> {
    mount(&source.to_string_lossy(), target, None, libc::MS_BIND, None)
}

/// Unmounts `target` lazily (`MNT_DETACH`).
pub fn detach(target: &Path) -> Result<(), BenchError> {
    shared(private_mounts::detach(target))
}

/// Mounts a cgroup v2 hierarchy at `dir` (in the private namespace:
/// the same hierarchy as the system's, another mount of it).
pub fn mount_cgroup2(dir: &Path) -> Result<(), BenchError> {
    mount("cgroup2", dir, Some("cgroup2"), libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC, None)
}

/// The benchmark's file systems, mounted in the private namespace.
pub struct Sandbox {
    /// The directory under /tmp (a ramfs inside the namespace).
    pub root: PathBuf,
    /// The tmpfs every workload runs on.
    pub fs: PathBuf,
    /// Listener state (ramfs).
    pub state: PathBuf,
    /// The tmpfs's mount id and device in this namespace.
    pub fs_mount_id: u64,
    pub fs_kdev: u64,
    /// Other tmpfs mounts of the namespace's copy of the tree, detached
    /// inside the namespace only.
    pub detached: Vec<PathBuf>,
    namespace: String,
    mounted_root: bool,
    mounted_fs: bool,
}

impl Sandbox {
    /// Mounts the ramfs and the tmpfs; the caller must already be in a
    /// private namespace (checked).
    pub fn create(outside_namespace: &str) -> Result<Sandbox, BenchError> {
        let namespace = own_namespace()?;
        if namespace == outside_namespace {
            return Err(BenchError::Workload("refusing to mount outside a private mount namespace".into()));
        }
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let root = PathBuf::from(format!("/tmp/rampart-enforce.{}.{nanos}", std::process::id()));
        std::fs::create_dir(&root).map_err(BenchError::io(format!("cannot create {}", root.display())))?;
        let mut sb = Sandbox {
            fs: root.join("fs"),
            state: root.join("state"),
            root,
            fs_mount_id: 0,
            fs_kdev: 0,
            detached: Vec::new(),
            namespace,
            mounted_root: false,
            mounted_fs: false,
        };
        mount("ramfs", &sb.root, Some("ramfs"), libc::MS_NOSUID | libc::MS_NODEV, Some("mode=0700"))?;
        sb.mounted_root = true;
        for d in [&sb.fs, &sb.state] {
            std::fs::create_dir(d).map_err(BenchError::io(format!("cannot create {}", d.display())))?;
        }
        mount_tmpfs("rampart-bench", &sb.fs, "size=1g,mode=0755")?;
        sb.mounted_fs = true;
        let entry = own_mounts()?
            .into_iter()
            .rev()
            .find(|m| m.mount_point == sb.fs)
            .ok_or_else(|| BenchError::Workload(format!("{} is not in mountinfo", sb.fs.display())))?;
        if entry.fstype != "tmpfs" {
            return Err(BenchError::Workload(format!("{} is {}, not tmpfs", sb.fs.display(), entry.fstype)));
        }
        sb.fs_mount_id = entry.id;
        sb.fs_kdev = entry.kdev;
        Ok(sb)
    }

    /// Detaches, in this namespace only, every tmpfs but the benchmark's
    /// (`/dev/shm`, cgroup trees, ...): fapolicyd marks every mount of a
    /// watched type it finds in `/proc/mounts`, and tmpfs must be watched.
    pub fn detach_other_tmpfs(&mut self) -> Result<(), BenchError> {
        self.check_namespace()?;
        // One at a time, deepest first (a parent goes after what is
        // mounted inside it; of mounts stacked on one path the top one
        // goes first), re-reading the table each time; bounded.
        for _ in 0..256 {
            let Some(next) = own_mounts()?
                .into_iter()
                .filter(|m| m.fstype == "tmpfs" && m.id != self.fs_mount_id)
                .max_by_key(|m| (m.mount_point.as_os_str().len(), m.id))
            else {
                break;
            };
            detach(&next.mount_point)?;
            self.detached.push(next.mount_point);
        }
        let left: Vec<String> = own_mounts()?
            .into_iter()
            .filter(|m| m.fstype == "tmpfs" && m.id != self.fs_mount_id)
            .map(|m| m.mount_point.display().to_string())
            .collect();
        if !left.is_empty() {
            return Err(BenchError::Workload(format!("tmpfs mounts left in the namespace: {}", left.join(", "))));
        }
        Ok(())
    }

    /// Fails unless the calling thread is in the sandbox's namespace.
    pub fn check_namespace(&self) -> Result<(), BenchError> {
        let now = own_namespace()?;
        if now != self.namespace {
            return Err(BenchError::Workload(format!("thread in {now}, sandbox in {}", self.namespace)));
        }
        Ok(())
    }

    /// The namespace (`mnt:[inode]`) the sandbox lives in.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Where a listener process's fanotify marks are; `Err` if any is
    /// outside the benchmark's tmpfs (or the listener is in another
    /// namespace).
    pub fn check_marks(&self, pid: i32) -> Result<MarkSummary, String> {
        let ns = namespace_of_pid(pid).map_err(|e| e.to_string())?;
        if ns != self.namespace {
            return Err(format!(
                "listener pid {pid} runs in {ns}, not in the benchmark's namespace {}",
                self.namespace
            ));
        }
        let marks = listener_marks(pid).map_err(|e| e.to_string())?;
        let mut summary = MarkSummary::default();
        for m in &marks {
            match *m {
                Mark::Mount(id) if id == self.fs_mount_id => summary.mount_marks += 1,
                Mark::Inode { kdev } if kdev == self.fs_kdev => summary.inode_marks += 1,
                // The benchmark's tmpfs is a filesystem of its own (a new
                // tmpfs instance in the private namespace): marking it
                // whole covers nothing else (rampartd marks filesystems).
                Mark::Filesystem { kdev } if kdev == self.fs_kdev => summary.filesystem_marks += 1,
                Mark::Mount(id) => {
                    return Err(format!(
                        "listener pid {pid} marked mount {id}, not the benchmark tmpfs (mount {})",
                        self.fs_mount_id
                    ))
                }
                Mark::Inode { kdev } => {
                    return Err(format!(
                        "listener pid {pid} marked an inode on device {kdev:#x}, outside the benchmark tmpfs"
                    ))
                }
                Mark::Filesystem { kdev } => {
                    let fs = self.fs_kdev;
                    return Err(format!(
                        "listener pid {pid} marked the filesystem {kdev:#x}, not the benchmark's ({fs:#x})"
                    ));
                }
            }
        }
        Ok(summary)
    }

    /// [`Sandbox::check_marks`] until the listener has a mount or
    /// filesystem mark on the tmpfs (it may mark just after it reports
    /// ready), for at most `wait`.
    pub fn confined(&self, pid: i32, wait: std::time::Duration) -> Result<MarkSummary, String> {
        let start = std::time::Instant::now();
        loop {
            let summary = self.check_marks(pid)?;
            if summary.mount_marks + summary.filesystem_marks > 0 {
                return Ok(summary);
            }
            if start.elapsed() > wait {
                return Err(format!("listener pid {pid} has no mount or filesystem mark on the benchmark tmpfs"));
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        // Unmounting is only meaningful (and only done) in our namespace;
        // the namespace dies with the thread anyway.
        if self.check_namespace().is_ok() {
            if self.mounted_fs {
                let _ = detach(&self.fs);
            }
            if self.mounted_root {
                let _ = detach(&self.root);
            }
        }
        let _ = std::fs::remove_dir(&self.root);
    }
}

/// Counted marks of one listener, all on the benchmark's tmpfs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MarkSummary {
    pub mount_marks: usize,
    pub filesystem_marks: usize,
    pub inode_marks: usize,
}

/// A fanotify mark as fdinfo shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Mount(u64),
    Inode { kdev: u64 },
    Filesystem { kdev: u64 },
}

/// Parses the `fanotify ...` mark lines of one fdinfo file.
pub fn parse_fdinfo(text: &str) -> Vec<Mark> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("fanotify ") else { continue };
        let field = |name: &str| {
            rest.split(' ').find_map(|kv| kv.strip_prefix(name)).and_then(|v| u64::from_str_radix(v, 16).ok())
        };
        if let Some(id) = field("mnt_id:") {
            out.push(Mark::Mount(id));
        } else if rest.contains("ino:") {
            if let Some(kdev) = field("sdev:") {
                out.push(Mark::Inode { kdev });
            }
        } else if let Some(kdev) = field("sdev:") {
            out.push(Mark::Filesystem { kdev });
        }
    }
    out
}

/// Every fanotify mark held through the open files of `pid`.
pub fn listener_marks(pid: i32) -> Result<Vec<Mark>, BenchError> {
    let dir = format!("/proc/{pid}/fdinfo");
    let mut marks = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(BenchError::io(format!("cannot list {dir}")))? {
        let Ok(entry) = entry else { continue };
        // An fd closed meanwhile is simply gone.
        if let Ok(text) = std::fs::read_to_string(entry.path()) {
            marks.extend(parse_fdinfo(&text));
        }
    }
    Ok(marks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines() {
        let text = "22 27 0:21 / /proc rw,relatime - proc proc rw\n\
                    64 27 0:45 / /tmp/a\\040b rw shared:5 - tmpfs tmpfs rw\n\
                    65 27 8:1 / / rw - ext4 /dev/vda rw\n";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 3);
        assert_eq!(m[1].id, 64);
        assert_eq!(m[1].mount_point, PathBuf::from("/tmp/a b"));
        assert_eq!(m[1].fstype, "tmpfs");
        assert_eq!(m[1].kdev, 45);
        assert_eq!(m[2].kdev, (8 << 20) | 1);
    }

    #[test]
    fn fdinfo_marks() {
        let text = "pos:\t0\nflags:\t02\nfanotify flags:7 event-flags:c8000\n\
                    fanotify mnt_id:40 mflags:0 mask:50000 ignored_mask:0\n\
                    fanotify ino:1a sdev:2d mflags:0 mask:0 ignored_mask:10000 fhandle-bytes:8 fhandle-type:1 f_handle:1a00\n\
                    fanotify sdev:800001 mflags:0 mask:50000 ignored_mask:0\n";
        assert_eq!(
            parse_fdinfo(text),
            vec![Mark::Mount(0x40), Mark::Inode { kdev: 0x2d }, Mark::Filesystem { kdev: 0x800001 }]
        );
    }
}
