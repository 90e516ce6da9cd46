//! Whether an exec's file lies on a mount that may grant privileges.
//!
//! Why: the kernel lets a file grant nothing (setuid bits, file
//! capabilities, and for SELinux a domain transition) from a mount that
//! may not (`mnt_may_suid`): one mounted `nosuid`, or one of another
//! mount namespace than the exec'ing task's (reached through
//! `/proc/PID/root` or a descriptor passed on), whose files that
//! namespace never vouched for. SELinux then lets the exec change domain
//! only if the policy grants `process2 nosuid_transition` (and declares
//! the `nnp_nosuid_transition` capability) or the new domain is bounded
//! by the old (`check_nnp_nosuid`, in crate::enforcer).
//!
//! How: the event's descriptor is opened on the exec's own path, mount
//! included. `fstatvfs` gives that mount's `nosuid`, and its mount ID
//! (`statx`) must be one of the exec'ing thread's `/proc/TID/mountinfo`.
//! The kernel's third condition, a filesystem mounted in a user namespace
//! the task is not in (`current_in_userns(sb->s_user_ns)`), is not
//! checked: user space cannot see a superblock's user namespace
//! (docs/security.md).

use std::fs;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd};

use crate::mountinfo;

/// Whether the file behind `fd`, executed by thread `tid`, lies on a
/// mount that may grant privileges (see the module docs).
pub fn may_grant(fd: BorrowedFd<'_>, tid: u32) -> io::Result<bool> {
    let mut vfs = MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: fstatvfs writes one statvfs into `vfs`, valid for the call.
    if unsafe { libc::fstatvfs(fd.as_raw_fd(), vfs.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstatvfs returned 0: it filled `vfs`.
    let vfs = unsafe { vfs.assume_init() };
    if vfs.f_flag & libc::ST_NOSUID != 0 {
        return Ok(false);
    }
    let id = mountinfo::mount_id(fd).ok_or_else(|| io::Error::other("statx gives no mount ID"))?;
    Ok(mountinfo::has_mount(&fs::read_to_string(format!("/proc/{tid}/mountinfo"))?, id))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    /// `nosuid` as util-linux's `findmnt` reads it, on `/proc` (nosuid
    /// on these machines) and `/` (not).
    #[test]
    fn a_nosuid_mount_grants_nothing() {
        let tid = std::process::id();
        for path in ["/proc", "/"] {
            let options = std::process::Command::new("findmnt").args(["-no", "OPTIONS", path]).output().unwrap();
            let nosuid = String::from_utf8_lossy(&options.stdout).trim().split(',').any(|o| o == "nosuid");
            let file = fs::File::open(path).unwrap();
            assert_eq!(may_grant(file.as_fd(), tid).unwrap(), !nosuid, "{path}");
        }
    }

    /// A mount of another namespace counts as nosuid: the thread's
    /// mountinfo lacks its ID.
    #[test]
    fn a_mount_is_looked_up_in_the_threads_namespace() {
        let root = fs::File::open("/").unwrap();
        let id = mountinfo::mount_id(root.as_fd()).unwrap();
        let own = fs::read_to_string("/proc/self/mountinfo").unwrap();
        assert!(mountinfo::has_mount(&own, id));
        let without: String = own.lines().filter(|l| !l.starts_with(&format!("{id} "))).collect();
        assert!(!mountinfo::has_mount(&without, id));
        assert!(!mountinfo::has_mount("", id));
    }
}
