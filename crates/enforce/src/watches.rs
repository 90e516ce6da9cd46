//! inotify watches (`inotify_add_watch`) by processes `rampart run`
//! started, which SELinux checks and fanotify never sees.
//!
//! Why: a watch tells its holder what happens to a file, and a watch on
//! a directory the names made, opened and removed in it: a domain that
//! may not list a directory learns its names by watching it. The kernel
//! asks, in `inotify_find_inode`, read permission on the object
//! (`path_permission(MAY_READ)`: the mode bits, then SELinux's `read` of
//! its class, `selinux_inode_permission`), then `security_path_notify`:
//! SELinux's `watch`, and `watch_reads` where the watch asks for reads
//! (`IN_ACCESS`, `IN_CLOSE_NOWRITE`). In Debian's policy 564 of the 674
//! domains may watch no directory at all. AppArmor checks none of it.
//!
//! The launcher's filter hands the call over (crate::supervised); the
//! daemon resolves the path once, in the caller's root with its
//! credentials (crate::supervisor), checks in the kernel's order, and
//! makes the watch itself: on its copy of the caller's inotify instance
//! (`pidfd_getfd`: the same open file, so the same watches and events),
//! naming the object it checked through `/proc/self/fd` ([`add`]); a
//! path naming one of the caller's descriptors (`/proc/self/fd/N`, as
//! libsystemd watches by descriptor) names that descriptor's file. The
//! kernel would read the path again, which another thread may have
//! changed since. The watch descriptor it returns is the caller's.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use rampart_avc::Perms;

use crate::access::ClassPerms;

/// `include/uapi/linux/inotify.h`.
const IN_ACCESS: u32 = 0x0000_0001;
const IN_CLOSE_NOWRITE: u32 = 0x0000_0010;
const IN_ALL_EVENTS: u32 = 0x0000_0fff;
const IN_UNMOUNT: u32 = 0x0000_2000;
const IN_Q_OVERFLOW: u32 = 0x0000_4000;
const IN_IGNORED: u32 = 0x0000_8000;
pub(crate) const IN_ONLYDIR: u32 = 0x0100_0000;
pub(crate) const IN_DONT_FOLLOW: u32 = 0x0200_0000;
const IN_EXCL_UNLINK: u32 = 0x0400_0000;
const IN_MASK_CREATE: u32 = 0x1000_0000;
const IN_MASK_ADD: u32 = 0x2000_0000;
const IN_ISDIR: u32 = 0x4000_0000;
const IN_ONESHOT: u32 = 0x8000_0000;
/// `ALL_INOTIFY_BITS` (`include/linux/inotify.h`): what a mask may hold.
const ALL_INOTIFY_BITS: u32 = IN_ALL_EVENTS
    | IN_UNMOUNT
    | IN_Q_OVERFLOW
    | IN_IGNORED
    | IN_ONLYDIR
    | IN_DONT_FOLLOW
    | IN_EXCL_UNLINK
    | IN_MASK_CREATE
    | IN_MASK_ADD
    | IN_ISDIR
    | IN_ONESHOT;

/// The daemon's copy of the caller's descriptor `fd`, an inotify
/// instance, with the kernel's errors in its order: a mask with unknown
/// bits or none (`EINVAL`), no such descriptor (`EBADF`), then
/// `IN_MASK_ADD` with `IN_MASK_CREATE`, or not an inotify instance
/// (`EINVAL`).
pub(crate) fn instance(pidfd: BorrowedFd<'_>, fd: i32, mask: u32) -> Result<OwnedFd, i32> {
    if mask & !ALL_INOTIFY_BITS != 0 || mask & ALL_INOTIFY_BITS == 0 {
        return Err(libc::EINVAL);
    }
    let copy = crate::pidfd::take_descriptor(pidfd, fd).map_err(|_| libc::EBADF)?;
    // The kernel's own checks of the mask and the descriptor come before
    // the path: an empty one is the lookup's first error (`ENOENT`), so
    // any other is theirs. Only the kernel can tell an inotify instance
    // (its `f_op`).
    match add_watch(copy.as_raw_fd(), c"", mask) {
        Err(libc::ENOENT) => Ok(copy),
        Err(errno) => Err(errno),
        // Cannot happen (nothing is named); never leave a watch made.
        Ok(_) => Err(libc::EINVAL),
    }
}

/// The object's checks, in the kernel's order: `read` of its class
/// (`path_permission`), then `watch`, with `watch_reads` for a mask
/// asking for reads (`selinux_path_notify`).
pub(crate) fn perms(cp: &ClassPerms, mask: u32) -> [Perms; 2] {
    let reads = if mask & (IN_ACCESS | IN_CLOSE_NOWRITE) != 0 { cp.watch_reads } else { Perms::NONE };
    [cp.read, cp.watch | reads]
}

/// The watch `mask` on the object `object` (`O_PATH`, resolved as the
/// caller asked: `IN_DONT_FOLLOW` already applied), added to `instance`;
/// the watch descriptor. Made with this thread's credentials (the
/// caller's, assumed: the kernel checks read permission again).
pub(crate) fn add(instance: BorrowedFd<'_>, object: BorrowedFd<'_>, mask: u32) -> Result<i64, i32> {
    let path = CString::new(format!("/proc/self/fd/{}", object.as_raw_fd())).map_err(|_| libc::EINVAL)?;
    // The magic link names the object itself, a symbolic link included
    // (one resolved without following it), and is followed only so.
    add_watch(instance.as_raw_fd(), &path, mask & !IN_DONT_FOLLOW)
}

fn add_watch(instance: i32, path: &std::ffi::CStr, mask: u32) -> Result<i64, i32> {
    // SAFETY: a descriptor, a NUL-terminated string alive across the
    // call, an integer.
    let wd = unsafe { libc::inotify_add_watch(instance, path.as_ptr(), mask) };
    if wd < 0 {
        return Err(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINVAL));
    }
    Ok(i64::from(wd))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{AsFd, FromRawFd};

    fn pidfd_of_self() -> OwnedFd {
        // SAFETY: pidfd_open of our own pid, no flags.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, std::process::id(), 0) };
        assert!(fd >= 0, "pidfd_open: {}", io::Error::last_os_error());
        // SAFETY: just opened, ours alone.
        unsafe { OwnedFd::from_raw_fd(fd as i32) }
    }

    fn inotify() -> OwnedFd {
        // SAFETY: no arguments but flags.
        let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
        assert!(fd >= 0);
        // SAFETY: just opened, ours alone.
        unsafe { OwnedFd::from_raw_fd(fd) }
    }

    #[test]
    fn the_instance_is_checked_in_the_kernels_order() {
        let pidfd = pidfd_of_self();
        let ino = inotify();
        let n = ino.as_raw_fd();
        assert_eq!(instance(pidfd.as_fd(), n, 0).err(), Some(libc::EINVAL), "no event");
        assert_eq!(instance(pidfd.as_fd(), n, 0x0000_1000).err(), Some(libc::EINVAL), "an unknown bit");
        // A bad mask before a bad descriptor, as the kernel.
        assert_eq!(instance(pidfd.as_fd(), -1, 0).err(), Some(libc::EINVAL));
        assert_eq!(instance(pidfd.as_fd(), -1, IN_ACCESS).err(), Some(libc::EBADF));
        let both = IN_ACCESS | IN_MASK_ADD | IN_MASK_CREATE;
        assert_eq!(instance(pidfd.as_fd(), n, both).err(), Some(libc::EINVAL), "add and create");
        let file = std::fs::File::open("/proc/self/status").unwrap();
        assert_eq!(instance(pidfd.as_fd(), file.as_raw_fd(), IN_ACCESS).err(), Some(libc::EINVAL), "a file");
        let copy = instance(pidfd.as_fd(), n, IN_ACCESS | IN_ONLYDIR).unwrap();
        assert_ne!(copy.as_raw_fd(), n, "a copy");
    }

    #[test]
    fn a_watch_made_on_the_copy_is_the_callers() {
        let pidfd = pidfd_of_self();
        let ino = inotify();
        let dir = std::env::temp_dir().join(format!("rampart-watches.{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let c = CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: NUL-terminated path, flags.
        let object = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        assert!(object >= 0);
        // SAFETY: just opened, ours alone.
        let object = unsafe { OwnedFd::from_raw_fd(object) };
        let copy = instance(pidfd.as_fd(), ino.as_raw_fd(), 0x100).unwrap();
        let wd = add(copy.as_fd(), object.as_fd(), 0x100 | IN_DONT_FOLLOW).unwrap();
        // The same object watched by the caller's own descriptor: the same watch.
        // SAFETY: NUL-terminated path.
        let again = unsafe { libc::inotify_add_watch(ino.as_raw_fd(), c.as_ptr(), 0x100) };
        assert_eq!(i64::from(again), wd);
        std::fs::write(dir.join("made"), b"").unwrap();
        let mut buf = [0u8; 256];
        // SAFETY: `buf` is writable for its length.
        let n = unsafe { libc::read(ino.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        assert!(n > 16, "an event reaches the caller's descriptor");
        assert_eq!(i64::from(i32::from_ne_bytes(buf[..4].try_into().unwrap())), wd);
        assert!(buf[16..n as usize].starts_with(b"made"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
