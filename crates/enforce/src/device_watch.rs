//! Device nodes as they come and go: the domains' device programs
//! (crate::device_access) list the devices with a node in `/dev`, so a
//! device plugged in later (a disk, a loop device `losetup` attaches, a
//! camera) would stay refused to every domain until the next policy
//! change, and a node relabeled (`chcon`) would keep its old answer.
//!
//! How: inotify watches on `/dev` and its directories on the same
//! filesystem (not `/dev/pts` nor `/dev/shm`, where anyone makes files),
//! for names made, removed and moved and for attributes changed (a label
//! is an extended attribute); a directory made gets its watch. After a
//! change the watcher waits for a quiet moment ([`QUIET`]: udev makes a
//! device's nodes, links and modes in a burst), then has the nodes
//! scanned and every domain's program given again.
//!
//! Why inotify, not a fanotify mark on the device filesystem: a
//! filesystem mark would see every directory at once, but the device
//! filesystem is the host's, shared by every mount namespace; inotify
//! watches only the directories named.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What changes a directory's device nodes.
const EVENTS: u32 = libc::IN_CREATE | libc::IN_DELETE | libc::IN_MOVED_FROM | libc::IN_MOVED_TO | libc::IN_ATTRIB;
/// How long the watcher waits after a change for more.
const QUIET: Duration = Duration::from_millis(100);
/// How deep directories are watched (as deep as nodes are scanned).
const MOST_DEPTH: usize = crate::device_access::MOST_DEPTH;
/// `sizeof(struct inotify_event)` before its name.
const EVENT_HEADER: usize = 16;

/// The watches on the device directories.
pub struct DeviceWatch {
    fd: OwnedFd,
    /// Each watch's directory, and its depth below `/dev`.
    dirs: HashMap<i32, (PathBuf, usize)>,
    /// The device filesystem (`/dev`'s `st_dev`).
    fs: u64,
}

impl DeviceWatch {
    /// Watches `/dev` and its directories.
    pub fn start() -> io::Result<DeviceWatch> {
        // SAFETY: plain flags; the result is checked.
        let raw = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor the kernel just opened for this process.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let dev = Path::new("/dev");
        let fs = std::fs::metadata(dev)?.dev();
        let mut watch = DeviceWatch { fd, dirs: HashMap::new(), fs };
        watch.add_tree(dev, 0)?;
        Ok(watch)
    }

    /// Watches `dir` and the directories below it on the device
    /// filesystem.
    fn add_tree(&mut self, dir: &Path, depth: usize) -> io::Result<()> {
        let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in a directory's name"))?;
        // SAFETY: `c` is NUL-terminated and outlives the call.
        let wd = unsafe { libc::inotify_add_watch(self.fd.as_raw_fd(), c.as_ptr(), EVENTS | libc::IN_ONLYDIR) };
        if wd < 0 {
            return Err(io::Error::last_os_error());
        }
        self.dirs.insert(wd, (dir.to_path_buf(), depth));
        if depth >= MOST_DEPTH {
            return Ok(());
        }
        for entry in std::fs::read_dir(dir)?.flatten() {
            let Ok(md) = entry.path().symlink_metadata() else { continue };
            if md.is_dir() && md.dev() == self.fs {
                // A directory gone meanwhile is no error.
                let _ = self.add_tree(&entry.path(), depth + 1);
            }
        }
        Ok(())
    }

    /// Waits up to `timeout` for changes; whether there were any.
    fn wait(&mut self, timeout: Duration) -> io::Result<bool> {
        let mut pfd = libc::pollfd { fd: self.fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, ms) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted { Ok(false) } else { Err(e) };
        }
        if n == 0 {
            return Ok(false);
        }
        let mut changed = false;
        let mut buf = [0u8; 4096];
        loop {
            // SAFETY: the kernel writes at most `buf.len()` bytes into `buf`.
            let got = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            let Ok(got) = usize::try_from(got) else {
                let e = io::Error::last_os_error();
                return if e.kind() == io::ErrorKind::WouldBlock { Ok(changed) } else { Err(e) };
            };
            for event in events(&buf[..got]) {
                changed |= event.mask & EVENTS != 0;
                if event.mask & libc::IN_IGNORED != 0 {
                    self.dirs.remove(&event.wd);
                } else if event.mask & libc::IN_ISDIR != 0 && event.mask & (libc::IN_CREATE | libc::IN_MOVED_TO) != 0 {
                    if let Some((dir, depth)) = self.dirs.get(&event.wd).cloned() {
                        let path = dir.join(std::ffi::OsStr::from_bytes(event.name));
                        if depth < MOST_DEPTH && std::fs::symlink_metadata(&path).is_ok_and(|m| m.dev() == self.fs) {
                            let _ = self.add_tree(&path, depth + 1);
                        }
                    }
                }
            }
        }
    }
}

/// One inotify event: its watch, mask and name (NUL padding removed).
struct Event<'a> {
    wd: i32,
    mask: u32,
    name: &'a [u8],
}

/// The events in `buf` (a read's bytes); a truncated one ends them.
fn events(mut buf: &[u8]) -> Vec<Event<'_>> {
    let mut out = Vec::new();
    while buf.len() >= EVENT_HEADER {
        let word = |at: usize| buf.get(at..at + 4).and_then(|b| b.try_into().ok()).map(u32::from_ne_bytes);
        let (Some(wd), Some(mask), Some(len)) = (word(0), word(4), word(12)) else { break };
        let Some(name) = buf.get(EVENT_HEADER..EVENT_HEADER + len as usize) else { break };
        let name = name.split(|&b| b == 0).next().unwrap_or(name);
        out.push(Event { wd: wd as i32, mask, name });
        buf = &buf[EVENT_HEADER + len as usize..];
    }
    out
}

/// Calls `relabel` after each burst of changes, until `stop`.
pub fn run(mut watch: DeviceWatch, relabel: impl Fn(), stop: &AtomicBool) {
    let _registered = crate::own_threads::register_current();
    // Relaxed: `stop` only ends the loop; nothing is published with it.
    while !stop.load(Ordering::Relaxed) {
        match watch.wait(Duration::from_millis(200)) {
            Ok(false) => {}
            Ok(true) => {
                // The rest of the burst.
                while let Ok(true) = watch.wait(QUIET) {}
                relabel();
            }
            Err(e) => {
                eprintln!("rampartd: watching the device nodes failed ({e}): a device plugged in from now on waits for the next policy change");
                return;
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn event(wd: i32, mask: u32, name: &[u8], padded: usize) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&wd.to_ne_bytes());
        b.extend_from_slice(&mask.to_ne_bytes());
        b.extend_from_slice(&0u32.to_ne_bytes());
        b.extend_from_slice(&(padded as u32).to_ne_bytes());
        let mut n = name.to_vec();
        n.resize(padded, 0);
        b.extend_from_slice(&n);
        b
    }

    #[test]
    fn events_are_read_as_the_kernel_lays_them_out() {
        let mut buf = event(1, libc::IN_CREATE, b"sdb", 16);
        buf.extend(event(2, libc::IN_IGNORED, b"", 0));
        buf.extend(event(3, libc::IN_ATTRIB, b"loop0", 16));
        let got = events(&buf);
        assert_eq!(got.len(), 3);
        assert_eq!((got[0].wd, got[0].mask, got[0].name), (1, libc::IN_CREATE, &b"sdb"[..]));
        assert_eq!((got[1].wd, got[1].name), (2, &b""[..]));
        assert_eq!(got[2].name, b"loop0");
        // A truncated event ends the list, without a panic.
        let cut = &buf[..buf.len() - 4];
        assert_eq!(events(cut).len(), 2);
        assert!(events(&buf[..10]).is_empty());
    }

    /// Against the kernel: a directory made below a watched one is
    /// watched, and a node made there is a change.
    #[test]
    fn new_directories_are_watched() {
        let root = std::env::temp_dir().join(format!("rampart-devwatch-{}", std::process::id()));
        std::fs::create_dir(&root).unwrap();
        // SAFETY: plain flags; the result is checked.
        let raw = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        assert!(raw >= 0);
        // SAFETY: a descriptor the kernel just opened.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let fs = std::fs::metadata(&root).unwrap().dev();
        let mut watch = DeviceWatch { fd, dirs: HashMap::new(), fs };
        watch.add_tree(&root, 0).unwrap();
        assert!(!watch.wait(Duration::from_millis(10)).unwrap(), "nothing yet");
        std::fs::create_dir(root.join("bus")).unwrap();
        assert!(watch.wait(Duration::from_secs(1)).unwrap(), "a directory made");
        assert_eq!(watch.dirs.len(), 2, "and watched");
        std::fs::write(root.join("bus").join("node"), b"").unwrap();
        assert!(watch.wait(Duration::from_secs(1)).unwrap(), "a name made below it");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
