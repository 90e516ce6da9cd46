//! Memfds (`memfd_create`) of the processes `rampart run` started, and
//! SELinux's `file { execute }` on them.
//!
//! Why: a memfd is a file in memory, on the kernel's internal shmem
//! mount, which fanotify cannot mark. A confined process could copy a
//! program it may read but not execute into one and `fexecve` it: the
//! exec would be seen by nobody. SELinux labels a memfd as a file its
//! maker made on tmpfs (`fs_use_trans tmpfs`: the `type_transition` from
//! the maker's domain, `app_tmpfs_t` say) and checks `execute` and
//! `execute_no_trans` at its exec, `execute` at a `PROT_EXEC` mapping.
//!
//! How: the launcher's filter hands every `memfd_create` over. The daemon
//! makes the memfd itself, with the caller's file credentials (so the
//! caller owns it), writes the label SELinux would give it into its xattr,
//! and installs it in the caller as the call's result
//! (`SECCOMP_ADDFD_FLAG_SEND`: crate::supervisor). Where the caller's
//! domain may not execute that label, the memfd is made with
//! `MFD_NOEXEC_SEAL` (Linux 6.3): its mode has no execute bit and can
//! never get one, so the kernel refuses to exec it; a call that asks for
//! `MFD_EXEC` is then refused (`EACCES`, with the AVC line of the exec it
//! asks for). Nothing is sealed under a permissive daemon or domain. A
//! `PROT_EXEC` mapping of a memfd is checked as that of any file, by that
//! label (crate::exec_memory, with [`devices`]).
//!
//! What is left: a memfd the domain may execute is exec'd unseen (no
//! domain transition by it, where SELinux could make one); memfds made
//! before the launch or passed in carry no xattr, and are labeled by
//! file_contexts as `/memfd:NAME (deleted)`; while AppArmor runs alone
//! memfds are made as asked (AppArmor would decide their exec by the
//! name `/memfd:NAME`, which the daemon does not see).

use std::ffi::CStr;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;

use rampart_avc::Sid;

use crate::enforcer::{Enforcer, Subject};
use crate::objects::unlabeled_context;

/// `memfd_create` flags (uapi/linux/memfd.h).
pub const MFD_CLOEXEC: u32 = 0x1;
pub const MFD_HUGETLB: u32 = 0x4;
pub const MFD_NOEXEC_SEAL: u32 = 0x8;
pub const MFD_EXEC: u32 = 0x10;
/// The page size of a `MFD_HUGETLB` memfd, as log2 in bits 26 to 31.
const MFD_HUGE_SHIFT: u32 = 26;

/// How the daemon makes a memfd asked for with some flags.
pub(crate) struct Plan {
    /// The flags it is made with.
    pub flags: u32,
    /// The label it gets; `None`: none is written (AppArmor alone, or a
    /// policy that gives none).
    pub label: Option<Sid>,
}

/// How to make the memfd thread `tid` of `caller` asks for with `flags`,
/// or the call's error. `labels`: whether objects get SELinux labels
/// (not while AppArmor runs alone: then it is made as asked).
pub(crate) fn plan(e: &Enforcer, tid: u32, caller: &Subject, flags: u32, labels: bool) -> Result<Plan, i32> {
    if !labels {
        return Ok(Plan { flags, label: None });
    }
    if flags & MFD_EXEC != 0 && flags & MFD_NOEXEC_SEAL != 0 {
        // The kernel's answer, before any check.
        return Err(libc::EINVAL);
    }
    let label = label(e, caller.sid, flags & MFD_HUGETLB != 0);
    let Some(cp) = e.classes.file() else { return Err(libc::EPERM) };
    let exec = cp.execute | cp.execute_no_trans;
    if label.is_some_and(|l| e.avc.peek(caller.sid, l, cp.class, exec).passes()) {
        return Ok(Plan { flags, label });
    }
    if flags & MFD_EXEC != 0 {
        // Asked to be executable: what its exec would need, audited.
        let allowed = label.is_some_and(|l| e.check_label(tid, caller.tgid, caller.sid, l, cp.class, exec));
        if !allowed {
            return Err(libc::EACCES);
        }
        return Ok(Plan { flags, label });
    }
    Ok(Plan { flags: flags | MFD_NOEXEC_SEAL, label })
}

/// The label SELinux gives a memfd `creator` makes
/// (rampart_label::memory_file_label: the `fs_use` rule of tmpfs, or of
/// hugetlbfs); the unlabeled context where the policy has no rule.
fn label(e: &Enforcer, creator: Sid, hugetlb: bool) -> Option<Sid> {
    let (policy, bools, _) = e.avc.policy_state();
    let subject = policy.parse_context(e.avc.context(creator)?).ok()?;
    let fs = if hugetlb { "hugetlbfs" } else { "tmpfs" };
    let context = match rampart_label::memory_file_label(&policy, &bools, &subject, fs) {
        Some(made) => policy.context_to_string(&made.ok()?),
        None => unlabeled_context(&policy),
    };
    e.avc.intern(&context).ok()
}

/// Makes a memfd named `name` with `flags` (the daemon's copy is
/// close-on-exec whatever they say), with the calling thread's
/// credentials; the call's error otherwise.
pub(crate) fn make(name: &CStr, flags: u32) -> Result<OwnedFd, i32> {
    // SAFETY: a NUL-terminated name and flags by value.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), flags | MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINVAL));
    }
    // SAFETY: the kernel just gave us `fd`.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The devices (`st_dev`) of the kernel's internal filesystems memfds
/// live on: shmem, hugetlbfs for each huge page size it has, secretmem
/// (`memfd_secret`). Found by making one of each (those this kernel
/// cannot make are left out: its processes cannot make them either).
pub fn devices() -> Vec<u64> {
    let mut made = Vec::new();
    for flags in [0, MFD_HUGETLB, MFD_HUGETLB | 21 << MFD_HUGE_SHIFT, MFD_HUGETLB | 30 << MFD_HUGE_SHIFT] {
        made.push(make(c"rampart-memfd-probe", flags).ok());
    }
    // SAFETY: memfd_secret takes its flags by value.
    let secret = unsafe { libc::syscall(libc::SYS_memfd_secret, libc::O_CLOEXEC) };
    if let Ok(fd) = i32::try_from(secret) {
        if fd >= 0 {
            // SAFETY: the kernel just gave us `fd`.
            made.push(Some(unsafe { OwnedFd::from_raw_fd(fd) }));
        }
    }
    let mut devices = Vec::new();
    for fd in made.into_iter().flatten() {
        if let Ok(md) = std::fs::File::from(fd).metadata() {
            if !devices.contains(&md.dev()) {
                devices.push(md.dev());
            }
        }
    }
    devices
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// A memfd lies on one of the devices found, a file of /tmp not;
    /// a sealed one has no execute bit and cannot be given one.
    #[test]
    fn memfds_are_told_apart_by_their_device() {
        let devices = devices();
        let memfd = std::fs::File::from(make(c"test", 0).unwrap());
        assert!(devices.contains(&memfd.metadata().unwrap().dev()), "{devices:?}");
        let tmp = std::fs::metadata(std::env::temp_dir()).unwrap();
        assert!(!devices.contains(&tmp.dev()));
        let sealed = std::fs::File::from(make(c"sealed", MFD_NOEXEC_SEAL).unwrap());
        assert_eq!(sealed.metadata().unwrap().mode() & 0o111, 0);
        use std::os::unix::fs::PermissionsExt;
        assert!(sealed.set_permissions(std::fs::Permissions::from_mode(0o755)).is_err());
        assert_eq!(make(c"both", MFD_EXEC | MFD_NOEXEC_SEAL).unwrap_err(), libc::EINVAL);
    }
}
