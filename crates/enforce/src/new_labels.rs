//! New objects get the label the kernel would give them, in their
//! `security.selinux`: what a supervised process makes (crate::supervisor:
//! an open with `O_CREAT` or `O_TMPFILE`, mkdir, mknod, symlink) is made
//! by the daemon, checked for `create` on that label
//! ([`crate::enforcer::Enforcer::new_object_sid`]: `type_transition`
//! rules, by name too) and then labeled, as `selinux_inode_init_security`
//! labels it. Without the xattr the object would have the label
//! file_contexts gives its path, as every file rampartd finds unlabeled:
//! an `httpd_t` file made in `/tmp` would be `tmp_t` (or unlabeled), not
//! `httpd_tmp_t`, denying its maker what the policy grants it and
//! granting others what it denies them. While AppArmor runs alone
//! (`--no-selinux`) nothing is written: the built-in policy's one context
//! is nobody's label.
//!
//! Two windows the kernel does not have, as the label is written just
//! after the object is made:
//! * An event on the object in between is decided under its earlier
//!   label, and may place ignore marks: once the label is written those
//!   go ([`crate::marks::Marks::relabeled`], the epoch protocol for one
//!   inode), so its next open or read is decided under the new one. A
//!   descriptor opened for writing in between (by a supervised process,
//!   decided by the daemon) stays, as a relabel leaves it in SELinux
//!   until its next write.
//! * Between making an object by name and labeling it by that name,
//!   another process could put something else there (a rename over it),
//!   which would get the label. So the daemon makes renames, links and
//!   unlinks (the supervised processes' only way to change names) while
//!   no creation is between the two ([`NameLock`]). An object made by an
//!   open is labeled through its own descriptor, which no rename changes.
//!
//! **Labels that stay** ([`keep`]): a file whose label is its path's (no
//! xattr) would take the label of a new name, where SELinux keeps the
//! label in the inode: a rename or hard link within one directory could
//! turn a file that file_contexts tells apart by name (`kept-*`) into one
//! every domain reads. So before a supervised rename or link the daemon
//! writes the label the file has into its xattr. Renames by unsupervised
//! processes still move path labels.

use std::ffi::{CStr, CString};
use std::fs::Metadata;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use rampart_avc::Sid;

use crate::enforcer::Enforcer;
use crate::marks::{InodeKey, ObjectAt};

const XATTR_SELINUX: &CStr = c"security.selinux";

/// Creations against name changes (see the module docs): many creations
/// at once, or one name change.
#[derive(Debug, Default)]
pub struct NameLock(RwLock<()>);

impl NameLock {
    /// Held from making an object by name until it is labeled.
    pub fn making(&self) -> RwLockReadGuard<'_, ()> {
        self.0.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Held while a rename, link or unlink is made.
    pub fn changing(&self) -> RwLockWriteGuard<'_, ()> {
        self.0.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Gives the new object `at` (inode `inode`) the label `sid`, then drops
/// the marks its earlier label may have justified. In the daemon's root
/// and with its credentials: without SELinux in the kernel, writing
/// `security.*` needs `CAP_SYS_ADMIN`.
pub fn write(e: &Enforcer, at: ObjectAt<'_>, inode: InodeKey, sid: Sid) -> io::Result<()> {
    set(e, at, sid)?;
    e.objects.forget(inode);
    e.marks.relabeled(at, inode)
}

/// Writes the label `sid` into the xattr of `at`, and nothing else: for
/// an object no event can have seen yet (a memfd the daemon just made:
/// crate::memfds).
pub fn set(e: &Enforcer, at: ObjectAt<'_>, sid: Sid) -> io::Result<()> {
    let (context, value) = xattr_value(e, sid)?;
    let value = value.as_bytes_with_nul();
    let rc = match at {
        // SAFETY: `fd` is open; name and value outlive the call.
        ObjectAt::Fd(fd) => unsafe {
            libc::fsetxattr(fd.as_raw_fd(), XATTR_SELINUX.as_ptr(), value.as_ptr().cast(), value.len(), 0)
        },
        ObjectAt::Name(dir, name) => {
            // The name in its directory, reached through the directory's
            // descriptor; the name itself is not followed.
            let mut path = format!("/proc/self/fd/{}/", dir.as_raw_fd()).into_bytes();
            path.extend_from_slice(name.to_bytes());
            let path = CString::new(path).map_err(|_| io::Error::other("a name with a NUL byte"))?;
            // SAFETY: path, name and value are NUL-terminated or sized,
            // and outlive the call.
            unsafe { libc::lsetxattr(path.as_ptr(), XATTR_SELINUX.as_ptr(), value.as_ptr().cast(), value.len(), 0) }
        }
    };
    if rc < 0 {
        let err = io::Error::last_os_error();
        let name = match at {
            ObjectAt::Fd(_) => String::new(),
            ObjectAt::Name(_, n) => format!(" of {:?}", std::ffi::OsStr::from_bytes(n.to_bytes())),
        };
        return Err(io::Error::new(err.kind(), format!("writing the label {context}{name}: {err}")));
    }
    Ok(())
}

/// Before a rename or link of the object open as `fd` (`O_PATH` too),
/// whose metadata is `md`: if its label is its path's (no xattr), writes
/// that label into its xattr, so that the new name does not give it
/// another (see the module docs). Its label is unchanged: so are its
/// marks. A label written meanwhile (a relabel) is kept.
pub fn keep(e: &Enforcer, fd: BorrowedFd<'_>, md: &Metadata) -> io::Result<()> {
    let Some(sid) = e.objects.path_only(&e.avc, fd, md) else { return Ok(()) };
    let (context, value) = xattr_value(e, sid)?;
    let value = value.as_bytes_with_nul();
    // The descriptor's own file: the magic link is followed, and nothing
    // after it (a symbolic link opened `O_PATH | O_NOFOLLOW` is labeled
    // itself).
    let path = CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())).map_err(io::Error::other)?;
    // SAFETY: path, name and value are NUL-terminated or sized, and
    // outlive the call.
    let rc = unsafe {
        libc::setxattr(path.as_ptr(), XATTR_SELINUX.as_ptr(), value.as_ptr().cast(), value.len(), libc::XATTR_CREATE)
    };
    if rc < 0 {
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EEXIST) {
            return Err(io::Error::new(err.kind(), format!("writing the label {context}: {err}")));
        }
    }
    Ok(())
}

/// The context of `sid`, and the xattr value that holds it (with its
/// NUL, as the kernel writes it).
fn xattr_value(e: &Enforcer, sid: Sid) -> io::Result<(String, CString)> {
    let context = e.avc.context(sid).ok_or_else(|| io::Error::other(format!("no context for SID {sid:?}")))?;
    let value = CString::new(context.as_bytes()).map_err(|_| io::Error::other("a context with a NUL byte"))?;
    Ok((context.to_string(), value))
}

/// Label writes that failed, reported once per filesystem and error: a
/// filesystem without security xattrs fails every write alike, and a
/// warning per creation would flood the daemon's log.
#[derive(Debug, Default)]
pub struct Failures(Mutex<Vec<(u64, Option<i32>)>>);

impl Failures {
    /// Reports `err`, writing `what` on device `dev`, unless that device
    /// failed so before; true if reported.
    pub fn report(&self, dev: u64, what: &str, err: &io::Error) -> bool {
        let key = (dev, err.raw_os_error());
        let mut seen = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if seen.contains(&key) {
            return false;
        }
        seen.push(key);
        drop(seen);
        eprintln!(
            "rampartd: warning: {what}: {err} (device {}:{}; the same failure there is not reported again)",
            libc::major(dev),
            libc::minor(dev)
        );
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_reported_once_per_filesystem_and_error() {
        let f = Failures::default();
        let unsupported = io::Error::from_raw_os_error(libc::EOPNOTSUPP);
        assert!(f.report(1, "writing", &unsupported));
        assert!(!f.report(1, "writing", &unsupported));
        assert!(f.report(2, "writing", &unsupported), "another filesystem");
        assert!(f.report(1, "writing", &io::Error::from_raw_os_error(libc::ENOSPC)), "another error");
    }
}
