//! `fcntl(F_SETFL)` clearing `O_APPEND`, `ftruncate`, and `fallocate`
//! rewriting data, by a process `rampart run` started: checked as
//! SELinux checks them, `write` of the file (`fallocate`: coarser, where
//! the descriptor appends).
//!
//! Why: a domain may append to a file it may not write, a log above all
//! (in Debian's policy 186 of the 674 domains may append to some file
//! type they may not write: CGI scripts to the web server's logs, for
//! one). It opens the file with `O_APPEND`, checked as `append`; with
//! `O_APPEND` cleared its writes land anywhere in the file, rewriting
//! what was logged, and nothing sees a write (fanotify has no write
//! event). SELinux checks `write` of the file at that `F_SETFL`
//! (`selinux_file_fcntl`); the kernel's AppArmor refuses the writes
//! that follow, through a file its profile lets it only append to
//! (`w`, at each write's revalidation): here the `F_SETFL` is refused
//! instead, recorded as the kernel records a write (`file_perm`).
//!
//! How: the launcher's filter hands over every `F_SETFL` whose flags
//! lack `O_APPEND`, every `ftruncate` ([`truncate`]) and every
//! `fallocate` whose mode rewrites or moves data ([`fallocate`])
//! (crate::supervised; on i386 refused). The daemon takes
//! its own copy of the descriptor (`pidfd_getfd`: the same open file);
//! where that file has `O_APPEND` and lies on a marked filesystem, it
//! checks `write` of its class (audited, `EACCES`) and the profile's
//! `w`. Then it makes the `F_SETFL` itself, on its copy: the kernel
//! would look the number up again, where another thread may have put
//! a file with `O_APPEND` since the check. `O_NOATIME` newly set needs
//! the caller to own the file or hold CAP_FOWNER (the daemon holds
//! it): checked here, `EPERM` as the kernel answers. What differs: a
//! change of `O_ASYNC` registers the daemon's descriptor number, which
//! a signal set with `F_SETSIG` then reports in `si_fd`. Left, as under
//! SELinux: a write with `RWF_NOAPPEND` (Linux 6.9: `pwritev2`, AIO)
//! lands at its offset without clearing `O_APPEND`, and SELinux does
//! not check it (docs/security.md).

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt;

use rampart_apparmor::perms::MAY_WRITE;

use crate::apparmor::{AppArmor, FileEvent};
use crate::enforcer::{Checked, Enforcer};
use crate::marked_fs::MarkedFilesystems;
use crate::thread_creds::Creds;

/// `CAP_FOWNER`: setting `O_NOATIME` on a file the caller does not own.
const CAP_FOWNER: u64 = 1 << 3;

/// `fcntl(fd, F_SETFL, flags)` by thread `tid` (`flags` lack
/// `O_APPEND`), decided and made on the daemon's copy of the file, if
/// `still_pending` says the call still waits; its result, or its error.
/// `marked`: the marked filesystems.
pub(crate) fn set_flags(
    e: &Enforcer,
    tid: u32,
    (fd, flags): (i32, u32),
    marked: &MarkedFilesystems,
    still_pending: impl Fn() -> bool,
) -> Result<i64, i32> {
    let (file, md, current) = checked_if_appending(e, tid, fd, marked, "a clear of O_APPEND")?;
    if flags & libc::O_NOATIME as u32 != 0 && current & libc::O_NOATIME as u32 == 0 {
        let status = std::fs::read_to_string(format!("/proc/{tid}/status")).map_err(|_| libc::ESRCH)?;
        let creds = Creds::from_status(&status).ok_or(libc::ESRCH)?;
        if creds.fsuid != md.uid() && creds.effective & CAP_FOWNER == 0 {
            return Err(libc::EPERM);
        }
    }
    // Still the caller: what was read under /proc/TID was its.
    if !still_pending() {
        return Err(libc::ESRCH);
    }
    fcntl(file.as_fd(), libc::F_SETFL, flags)
}

/// `ftruncate(fd, length)` by thread `tid`, decided and made on the
/// daemon's copy of the file (the kernel would look the number up again),
/// if `still_pending` says the call still waits: on a marked filesystem
/// SELinux's `write` of the file (`selinux_inode_setattr` with
/// `ATTR_SIZE`, whatever the descriptor's flags) and the profile's `w`
/// (`apparmor_file_truncate`). The kernel checks the rest on the copy (a
/// descriptor not open for writing: `EINVAL`), but a length over the
/// caller's `RLIMIT_FSIZE`, measured here (crate::limits).
pub(crate) fn truncate(
    e: &Enforcer,
    tid: u32,
    (fd, length): (i32, i64),
    marked: &MarkedFilesystems,
    still_pending: impl Fn() -> bool,
) -> Result<i64, i32> {
    let (file, md) = callers_file(tid, fd)?;
    if marked.holds(file.as_fd(), &md) {
        may_write(e, tid, file.as_fd(), &md, ("an ftruncate", "truncate"))?;
    }
    if !still_pending() {
        return Err(libc::ESRCH);
    }
    crate::limits::may_grow_file(tid, md.size(), length)?;
    // SAFETY: integer arguments on an open descriptor.
    if unsafe { libc::ftruncate(file.as_raw_fd(), length) } < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINVAL));
    }
    Ok(0)
}

/// `fallocate(fd, mode, offset, len)` by thread `tid` with a mode that
/// rewrites or moves what the file holds (a hole punched, a range zeroed,
/// collapsed or inserted), decided and made on the daemon's copy of the
/// file, if `still_pending` says the call still waits: where the
/// descriptor was opened to append, on a marked filesystem, SELinux's
/// `write` of the file and the profile's `w` (coarser than SELinux, which
/// checks nothing more than at the open: the kernel refuses these only on
/// an append-only inode, and a descriptor opened `O_RDWR | O_APPEND`
/// rewrote a log's start). Growing the file past the caller's
/// `RLIMIT_FSIZE` is refused as the kernel refuses it (crate::limits).
pub(crate) fn fallocate(
    e: &Enforcer,
    tid: u32,
    (fd, mode, offset, len): (i32, i32, i64, i64),
    marked: &MarkedFilesystems,
    still_pending: impl Fn() -> bool,
) -> Result<i64, i32> {
    let (file, md, _) = checked_if_appending(e, tid, fd, marked, "a fallocate")?;
    if !still_pending() {
        return Err(libc::ESRCH);
    }
    if mode & libc::FALLOC_FL_KEEP_SIZE == 0 {
        crate::limits::may_grow_file(tid, md.size(), offset.saturating_add(len))?;
    }
    // SAFETY: integer arguments on an open descriptor.
    if unsafe { libc::fallocate(file.as_raw_fd(), mode, offset, len) } < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINVAL));
    }
    Ok(0)
}

/// The daemon's copy of thread `tid`'s descriptor `fd`, what the file
/// is and the descriptor's flags, after `write` of the file was checked
/// (`what`, for the log) where the descriptor appends on a marked
/// filesystem.
fn checked_if_appending(
    e: &Enforcer,
    tid: u32,
    fd: i32,
    marked: &MarkedFilesystems,
    what: &str,
) -> Result<(OwnedFd, std::fs::Metadata, u32), i32> {
    let (file, md) = callers_file(tid, fd)?;
    let flags = fcntl(file.as_fd(), libc::F_GETFL, 0)? as u32;
    if flags & libc::O_APPEND as u32 != 0 && marked.holds(file.as_fd(), &md) {
        may_write(e, tid, file.as_fd(), &md, (what, "file_perm"))?;
    }
    Ok((file, md, flags))
}

/// The daemon's copy of thread `tid`'s descriptor `fd` (`pidfd_getfd`:
/// the same open file), and what the file is.
fn callers_file(tid: u32, fd: i32) -> Result<(OwnedFd, std::fs::Metadata), i32> {
    let pidfd = crate::pidfd::thread_pidfd(tid).map_err(|_| libc::ESRCH)?;
    let file = crate::pidfd::take_descriptor(pidfd.as_fd(), fd).map_err(|_| libc::EBADF)?;
    let md = File::from(file.try_clone().map_err(|_| libc::EMFILE)?).metadata().map_err(|_| libc::EBADF)?;
    Ok((file, md))
}

/// SELinux's `write` of the file `file` (`what`: a clear of `O_APPEND`,
/// an ftruncate), and under a profile its `w` (recorded as operation
/// `op`), each refusal audited or recorded.
fn may_write(
    e: &Enforcer,
    tid: u32,
    file: BorrowedFd<'_>,
    md: &std::fs::Metadata,
    (what, op): (&str, &str),
) -> Result<(), i32> {
    let caller = crate::signals::caller(e, tid, what)?;
    let tgid = caller.tgid.unwrap_or(tid);
    if let Some(cp) = e.classes.of_mode(md.mode()) {
        let tsid = e.objects.sid_of(&e.avc, file, md);
        let decision = e.avc.has_perm_noaudit(caller.sid, tsid, cp.class, cp.write);
        e.audit_checks(tid, caller.tgid, file, &[Checked { ssid: caller.sid, tsid, class: cp.class, decision }]);
        if !decision.passes() {
            return Err(libc::EACCES);
        }
    }
    if let (Some(profile), Some(aa)) = (&caller.apparmor, &e.apparmor) {
        let Some(name) = AppArmor::name_of(file, md) else { return Err(libc::EACCES) };
        let ev = FileEvent { tid, tgid, fd: file, md };
        if !aa.path_call(profile, &ev, &name, MAY_WRITE, op, &|| e.avc.policy_state().2) {
            return Err(libc::EACCES);
        }
    }
    Ok(())
}

fn fcntl(fd: BorrowedFd<'_>, cmd: i32, arg: u32) -> Result<i64, i32> {
    // SAFETY: integer arguments on an open descriptor; neither command
    // reads or writes memory.
    let rc = unsafe { libc::fcntl(fd.as_raw_fd(), cmd, arg as libc::c_int) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EBADF));
    }
    Ok(i64::from(rc))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// The copy `pidfd_getfd` gives is the same open file: flags set
    /// through it are the caller's.
    #[test]
    fn flags_set_on_the_copy_are_the_callers() {
        let path = std::env::temp_dir().join(format!("rampart-append.{}", std::process::id()));
        let mine: OwnedFd =
            std::fs::OpenOptions::new().append(true).create(true).truncate(false).open(&path).unwrap().into();
        // SAFETY: pidfd_open of our own pid, no flags.
        let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, std::process::id(), 0) };
        assert!(pidfd >= 0);
        // SAFETY: just opened, ours alone.
        let pidfd = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(pidfd as i32) };
        let copy = crate::pidfd::take_descriptor(pidfd.as_fd(), mine.as_raw_fd()).unwrap();
        let append = libc::O_APPEND as i64;
        assert_eq!(fcntl(mine.as_fd(), libc::F_GETFL, 0).unwrap() & append, append);
        fcntl(copy.as_fd(), libc::F_SETFL, 0).unwrap();
        assert_eq!(fcntl(mine.as_fd(), libc::F_GETFL, 0).unwrap() & append, 0, "cleared for the caller too");
        std::fs::remove_file(&path).unwrap();
    }
}
