//! The fanotify group: the daemon's only channel to the kernel's
//! permission hooks. Thin, safe wrappers over `fanotify_init`,
//! `fanotify_mark`, `read` and the response `write`; parsing the records
//! read is [`crate::event`]'s job.
//!
//! Why these flags:
//! * `FAN_CLASS_CONTENT`: permission events, answered before the open
//!   returns (the class fapolicyd uses too).
//! * `FAN_REPORT_PIDFD`: each event carries a pidfd of the process, whose
//!   pidfs inode identifies it even if its pid is reused.
//! * No `FAN_UNLIMITED_QUEUE`: the kernel queue stays bounded (16384
//!   events by default). When it overflows the kernel allows the access
//!   without asking: fail-open, like every other fanotify daemon.
//! * `FAN_NONBLOCK`: responders wait for any of the daemon's groups with
//!   epoll ([`crate::groups`]) and then read without blocking.
//! * Event descriptors are opened `O_RDONLY | O_NONBLOCK`: the kernel
//!   opens the object for us, and a FIFO opened without `O_NONBLOCK` would
//!   block until a writer appears, with the opener waiting on us.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Open permission (`FAN_OPEN_PERM`).
pub const OPEN_PERM: u64 = libc::FAN_OPEN_PERM;
/// Exec permission (`FAN_OPEN_EXEC_PERM`): opening a file to execute it.
pub const OPEN_EXEC_PERM: u64 = libc::FAN_OPEN_EXEC_PERM;
/// Read permission (`FAN_ACCESS_PERM`): every read, unless ignored.
pub const ACCESS_PERM: u64 = libc::FAN_ACCESS_PERM;
/// Events on directories too.
pub const ONDIR: u64 = libc::FAN_ONDIR;

/// An initialised fanotify group.
#[derive(Debug)]
pub struct Group {
    fd: OwnedFd,
    /// Events carry pidfds (`FAN_REPORT_PIDFD` was accepted).
    pidfds: bool,
}

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

impl Group {
    /// A content-class group reporting pidfds (falling back to none on a
    /// kernel without `FAN_REPORT_PIDFD`, before 5.15).
    pub fn new() -> io::Result<Group> {
        let base = libc::FAN_CLASS_CONTENT | libc::FAN_CLOEXEC | libc::FAN_NONBLOCK;
        let event_flags = (libc::O_RDONLY | libc::O_LARGEFILE | libc::O_CLOEXEC | libc::O_NONBLOCK) as libc::c_uint;
        let init = |flags: libc::c_uint| {
            // SAFETY: fanotify_init takes two flag words and returns a new
            // descriptor or -1; no memory is passed.
            check(unsafe { libc::fanotify_init(flags, event_flags) })
        };
        let (raw, pidfds) = match init(base | libc::FAN_REPORT_PIDFD) {
            Ok(fd) => (fd, true),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => (init(base)?, false),
            Err(e) => return Err(e),
        };
        // SAFETY: `raw` is a descriptor fanotify_init just returned, owned
        // by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        Ok(Group { fd, pidfds })
    }

    /// Events carry pidfds.
    pub fn reports_pidfds(&self) -> bool {
        self.pidfds
    }

    fn mark(&self, flags: libc::c_uint, mask: u64, dirfd: RawFd, path: Option<&Path>) -> io::Result<()> {
        let cpath = match path {
            Some(p) => Some(CString::new(p.as_os_str().as_bytes()).map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidInput, format!("path {} contains a NUL byte", p.display()))
            })?),
            None => None,
        };
        let ptr = cpath.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
        // SAFETY: the group descriptor is open for the life of `self`;
        // `ptr` is null or a NUL-terminated string that outlives the call.
        check(unsafe { libc::fanotify_mark(self.fd.as_raw_fd(), flags, mask, dirfd, ptr) }).map(|_| ())
    }

    /// Marks the mount containing `path` for `mask`.
    pub fn mark_mount(&self, path: &Path, mask: u64) -> io::Result<()> {
        self.mark(libc::FAN_MARK_ADD | libc::FAN_MARK_MOUNT, mask, libc::AT_FDCWD, Some(path))
    }

    /// Stops reporting `mask` on the mount containing `path`.
    pub fn unmark_mount(&self, path: &Path, mask: u64) -> io::Result<()> {
        self.mark(libc::FAN_MARK_REMOVE | libc::FAN_MARK_MOUNT, mask, libc::AT_FDCWD, Some(path))
    }

    /// Bytes of events queued and not yet read (`FIONREAD`).
    pub fn queued_bytes(&self) -> io::Result<usize> {
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int to the pointer, which is valid
        // and writable for the call.
        check(unsafe { libc::ioctl(self.fd.as_raw_fd(), libc::FIONREAD, &mut n) })?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// Adds `mask` to the ignore mask of the inode open as `object`; the
    /// ignore survives writes to the file (`FAN_MARK_IGNORED_SURV_MODIFY`).
    pub fn ignore_inode(&self, object: BorrowedFd<'_>, mask: u64) -> io::Result<()> {
        let flags = libc::FAN_MARK_ADD | libc::FAN_MARK_IGNORED_MASK | libc::FAN_MARK_IGNORED_SURV_MODIFY;
        self.mark(flags, mask, object.as_raw_fd(), None)
    }

    /// Removes every inode mark of the group (all ignore marks); mount
    /// marks stay.
    pub fn flush_inode_marks(&self) -> io::Result<()> {
        self.mark(libc::FAN_MARK_FLUSH, 0, libc::AT_FDCWD, None)
    }

    /// Reads queued events into `buf` (`WouldBlock` if there are none).
    pub fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: `buf` is a valid writable buffer of `buf.len()` bytes.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    /// Answers the permission event whose descriptor is `event_fd`.
    pub fn respond(&self, event_fd: BorrowedFd<'_>, allow: bool) -> io::Result<()> {
        let response = libc::fanotify_response {
            fd: event_fd.as_raw_fd(),
            response: if allow { libc::FAN_ALLOW } else { libc::FAN_DENY },
        };
        let size = std::mem::size_of::<libc::fanotify_response>();
        // SAFETY: `response` is a plain struct of `size` bytes that lives
        // across the call.
        let n = unsafe { libc::write(self.fd.as_raw_fd(), (&response as *const libc::fanotify_response).cast(), size) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }
}

impl AsFd for Group {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}
