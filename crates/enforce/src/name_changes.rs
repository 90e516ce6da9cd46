//! Name changes on the marked filesystems, for the ignore marks that
//! AppArmor's decisions justify (crate::marks, "Names"): such a mark is
//! placed on a file with one link because every profile in scope allows
//! it by that name, and is stale once the file has another name. A
//! rename (of the file, or of any directory above it), a link or an
//! unlink (the link count changes: `FAN_ATTRIB`, which chmod, chown and
//! utimes also raise) is reported by a fanotify notification group on
//! each marked filesystem, and the watcher then flushes every mark while
//! names matter.
//!
//! A new mount gives names too: a filesystem mounted at two places (a
//! bind mount) gives each file a name per mount, so only filesystems
//! mounted once in the daemon's namespace carry such marks. The watcher
//! reads `/proc/self/mountinfo` at start and whenever it changes (it
//! polls as changed, `POLLPRI`), tells AppArmor which marked filesystems
//! are mounted once, then flushes.
//!
//! Why not finer: a directory rename renames everything below it, and the
//! events name the parent and the entry, not the files below. Flushing
//! costs the next access of each file one event, and a filesystem whose
//! names keep changing keeps its files' accesses events, as they were
//! before AppArmor's marks existed.
//!
//! Between a change and the flush (the watcher's wake-up, microseconds)
//! an open by the new name may still pass a mark justified by the old
//! one: docs/security.md.

use std::io::{self, Read, Seek, SeekFrom};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::enforcer::Enforcer;

/// What changes a name or a link count.
const NAME_EVENTS: u64 = libc::FAN_MOVED_FROM | libc::FAN_MOVED_TO | libc::FAN_ATTRIB | libc::FAN_ONDIR;

/// A notification group watching the marked filesystems' names, and
/// the daemon's mount table.
pub struct NameChanges {
    fd: OwnedFd,
    mountinfo: std::fs::File,
    /// The marked filesystems' devices.
    devices: Vec<u64>,
}

impl NameChanges {
    /// Watches the filesystems of `filesystems` (their mount points).
    pub fn watch(filesystems: &[PathBuf]) -> io::Result<NameChanges> {
        // SAFETY: plain flags; the result is checked.
        let raw = unsafe {
            libc::fanotify_init(
                libc::FAN_CLASS_NOTIF | libc::FAN_CLOEXEC | libc::FAN_NONBLOCK | libc::FAN_REPORT_FID,
                libc::O_RDONLY as libc::c_uint,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a new descriptor owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let devices = filesystems.iter().map(|p| std::fs::metadata(p).map(|m| m.dev())).collect::<io::Result<_>>()?;
        let changes = NameChanges { fd, mountinfo: std::fs::File::open("/proc/self/mountinfo")?, devices };
        for fs in filesystems {
            changes.mark(fs)?;
        }
        Ok(changes)
    }

    fn mark(&self, path: &Path) -> io::Result<()> {
        let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()))
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path with a NUL byte"))?;
        // SAFETY: `c` is a valid NUL-terminated path, the group is ours.
        let rc = unsafe {
            libc::fanotify_mark(
                self.fd.as_raw_fd(),
                libc::FAN_MARK_ADD | libc::FAN_MARK_FILESYSTEM,
                NAME_EVENTS,
                libc::AT_FDCWD,
                c.as_ptr(),
            )
        };
        if rc != 0 {
            return Err(io::Error::other(format!("{}: {}", path.display(), io::Error::last_os_error())));
        }
        Ok(())
    }

    /// The marked filesystems mounted once, from the mount table now.
    fn mounted_once(&mut self) -> io::Result<Vec<u64>> {
        let mut table = String::new();
        self.mountinfo.seek(SeekFrom::Start(0))?;
        self.mountinfo.read_to_string(&mut table)?;
        Ok(crate::mountinfo::mounted_once(&table, &self.devices))
    }

    /// Waits up to `timeout_ms` for changes: whether names changed (every
    /// record read, overflow included: the records themselves do not
    /// matter) and whether the mount table did.
    fn wait(&self, timeout_ms: i32) -> io::Result<(bool, bool)> {
        let mut fds = [
            libc::pollfd { fd: self.fd.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: self.mountinfo.as_raw_fd(), events: libc::POLLPRI, revents: 0 },
        ];
        // SAFETY: two valid pollfds, the length given.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted { Ok((false, false)) } else { Err(e) };
        }
        let mounts = fds[1].revents & (libc::POLLPRI | libc::POLLERR) != 0;
        if fds[0].revents & libc::POLLIN == 0 {
            return Ok((false, mounts));
        }
        let mut buf = [0u8; 4096];
        let mut any = false;
        loop {
            // SAFETY: reads into a buffer of its length; the group is
            // non-blocking.
            let r = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if r <= 0 {
                return Ok((any, mounts));
            }
            any = true;
        }
    }
}

/// The watcher thread: keeps AppArmor's list of filesystems mounted once
/// and flushes the marks after each batch of changes while names matter,
/// until `stop`.
pub fn run(enforcer: Arc<Enforcer>, mut changes: NameChanges, stop: Arc<AtomicBool>) {
    let _registered = crate::own_threads::register_current();
    let Some(apparmor) = enforcer.apparmor.as_ref() else { return };
    // Before a flush: a placer after it sees the new list.
    let refresh = |changes: &mut NameChanges| changes.mounted_once().map(|once| apparmor.set_mounted_once(once));
    if let Err(e) = refresh(&mut changes) {
        return give_up(&enforcer, &e);
    }
    // Relaxed: `stop` only ends the loop; nothing is published with it.
    while !stop.load(Ordering::Relaxed) {
        match changes.wait(200) {
            Ok((false, false)) => {}
            Ok((_, mounts)) => {
                if mounts {
                    if let Err(e) = refresh(&mut changes) {
                        return give_up(&enforcer, &e);
                    }
                }
                if let Err(e) = enforcer.marks.names_changed() {
                    eprintln!("rampartd: flushing ignore marks after a name change: {e}");
                }
            }
            Err(e) => return give_up(&enforcer, &e),
        }
    }
}

/// Without the watcher no mark may rest on names.
fn give_up(enforcer: &Enforcer, e: &io::Error) {
    eprintln!("rampartd: watching name changes failed ({e}): no ignore mark while a profile is in use");
    enforcer.marks.names_unwatched();
}
