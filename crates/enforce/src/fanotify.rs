//! The fanotify group: the daemon's only channel to the kernel's
//! permission hooks. Thin, safe wrappers over `fanotify_init`,
//! `fanotify_mark`, `read` and the response `write`; parsing the records
//! read is [`crate::event`]'s job.
//!
//! Why these flags:
//! * `FAN_CLASS_CONTENT`: permission events, answered before the open
//!   returns (the class fapolicyd uses too).
//! * `FAN_REPORT_TID`: each event names the thread that opened or read,
//!   not its process, so the flags read from `/proc` are that thread's
//!   own call (with a process id, another thread blocked in an open could
//!   lend its flags). The kernel refuses it together with
//!   `FAN_REPORT_PIDFD`; the daemon opens a thread pidfd itself when it
//!   needs the thread's cgroup ([`crate::pidfd`]).
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

use crate::marks::ObjectAt;

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
}

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

impl Group {
    /// A content-class group reporting thread ids (`FAN_REPORT_TID`,
    /// Linux 4.20).
    pub fn new() -> io::Result<Group> {
        let flags = libc::FAN_CLASS_CONTENT | libc::FAN_CLOEXEC | libc::FAN_NONBLOCK | libc::FAN_REPORT_TID;
        let event_flags = (libc::O_RDONLY | libc::O_LARGEFILE | libc::O_CLOEXEC | libc::O_NONBLOCK) as libc::c_uint;
        // SAFETY: fanotify_init takes two flag words and returns a new
        // descriptor or -1; no memory is passed.
        let raw = check(unsafe { libc::fanotify_init(flags, event_flags) })?;
        // SAFETY: `raw` is a descriptor fanotify_init just returned, owned
        // by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        Ok(Group { fd })
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

    /// Marks the filesystem containing `path` for `mask`: every mount of
    /// it, in every mount namespace, bind mounts and `/proc/PID/root`
    /// paths included (a mount mark covers one mount object, and a copy
    /// made by `unshare -m` is a new one).
    pub fn mark_filesystem(&self, path: &Path, mask: u64) -> io::Result<()> {
        self.mark(libc::FAN_MARK_ADD | libc::FAN_MARK_FILESYSTEM, mask, libc::AT_FDCWD, Some(path))
    }

    /// Stops reporting `mask` on the filesystem containing `path`.
    pub fn unmark_filesystem(&self, path: &Path, mask: u64) -> io::Result<()> {
        self.mark(libc::FAN_MARK_REMOVE | libc::FAN_MARK_FILESYSTEM, mask, libc::AT_FDCWD, Some(path))
    }

    /// Reports `mask` (exec events) on the inode open as `object`.
    pub fn watch_inode(&self, object: BorrowedFd<'_>, mask: u64) -> io::Result<()> {
        self.mark(libc::FAN_MARK_ADD, mask, object.as_raw_fd(), None)
    }

    /// Stops reporting `mask` on the inode open as `object`.
    pub fn unwatch_inode(&self, object: BorrowedFd<'_>, mask: u64) -> io::Result<()> {
        self.mark(libc::FAN_MARK_REMOVE, mask, object.as_raw_fd(), None)
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

    /// Removes the ignore marks of the inode `at`: a descriptor's (`O_PATH`
    /// too, through the daemon's `/proc/self/fd`), or a name in its
    /// directory, not followed. None there is no error.
    pub fn forget_inode(&self, at: ObjectAt<'_>) -> io::Result<()> {
        let remove = libc::FAN_MARK_REMOVE | libc::FAN_MARK_IGNORED_MASK;
        let own;
        let (flags, dirfd, path) = match at {
            ObjectAt::Name(dir, name) => (
                remove | libc::FAN_MARK_DONT_FOLLOW,
                dir.as_raw_fd(),
                Path::new(std::ffi::OsStr::from_bytes(name.to_bytes())),
            ),
            ObjectAt::Fd(fd) => {
                own = format!("/proc/self/fd/{}", fd.as_raw_fd());
                (remove, libc::AT_FDCWD, Path::new(&own))
            }
        };
        match self.mark(flags, OPEN_PERM | ACCESS_PERM, dirfd, Some(path)) {
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(()),
            done => done,
        }
    }

    /// Removes every inode mark of the group (all ignore marks);
    /// filesystem marks stay.
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
