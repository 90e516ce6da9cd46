//! Looks into other processes that SELinux checks as ptrace's read mode
//! (`selinux_ptrace_access_check` with `PTRACE_MODE_READ`: `file { read }`
//! from the caller's domain to the other process's), by a process
//! `rampart run` started: `get_robust_list` of another thread (where its
//! robust-futex list lies: an address inside the other process),
//! `kcmp` (whether two processes share a file, their memory, their
//! descriptor table) and `process_madvise` (advice on another process's
//! memory, whose errors map its address space). AppArmor asks its
//! ptrace rules (`read`, `readby`) at the same point
//! (`apparmor_ptrace_access_check`), for a caller under a profile.
//!
//! Why: a process that entered another domain by an exec transition
//! stays in its parent's Landlock domain, which lets these through, so
//! the old domain could learn the new one's memory layout (its ASLR
//! secret) or which files it holds. The launcher's filter refuses the
//! calls that read or write memory (`ptrace`, `process_vm_readv`,
//! `pidfd_getfd`: crate::sandbox); these reveal less, and SELinux lets
//! the policy relate two domains for them, so they are checked.
//!
//! How: the filter hands them over (`get_robust_list` of 0, the caller,
//! passes); the daemon checks every process named that is not the
//! caller's own (the kernel checks none within a thread group:
//! `__ptrace_may_access`), in the kernel's order and stopping where it
//! stops, audits, and lets the kernel make the call, or returns the
//! call's error: `EPERM` for `kcmp` and `get_robust_list`, `EACCES` for
//! `process_madvise` (through `mm_access`). A pid or descriptor naming
//! no process is left to the kernel's own error. As for every handed-over
//! call on a pid, the pid is read again by the kernel: one reused in
//! between names another process (docs/security.md).

use std::os::fd::AsFd;

use rampart_apparmor::ipc::AA_PTRACE_READ;

use crate::enforcer::{Enforcer, Subject};
use crate::pidfd::{self, ThreadInfo};
use crate::signals;
use crate::supervised::Inspected;

/// Decides a look by thread `tid` into the processes `of` names: `Ok`
/// lets the kernel make the call, `Err` is its error.
pub(crate) fn decide(e: &Enforcer, tid: u32, of: Inspected) -> Result<(), i32> {
    let caller = signals::caller(e, tid, "a look into another process")?;
    let (named, denied) = match of {
        Inspected::Thread(t) => (vec![Named::Thread(t)], libc::EPERM),
        Inspected::Pair(a, b) => (vec![Named::Thread(a), Named::Thread(b)], libc::EPERM),
        Inspected::Pidfd(fd) => (vec![Named::Pidfd(fd)], libc::EACCES),
    };
    let mut infos = Vec::new();
    for n in named {
        match n.info(tid) {
            Some(info) => infos.push(info),
            // The kernel finds no process: its own error.
            None => return Ok(()),
        }
    }
    // Without a `file` class nothing can be checked: refused.
    let file = e.classes.file().ok_or(denied)?;
    for info in infos.into_iter().filter(|i| Some(i.tgid) != caller.tgid) {
        let mut passes = true;
        for peer in signals::domains(&e.subject_in(info.tgid, info.cgroup_id)) {
            passes &= e.check_label(tid, caller.tgid, caller.sid, peer.sid, file.class, file.read);
            passes &= apparmor_reads(e, tid, &caller, peer.apparmor.as_deref());
        }
        // `kcmp` checks its second process only if the first passed.
        if !passes {
            return Err(denied);
        }
    }
    Ok(())
}

/// Whether AppArmor lets `caller` (thread `tid`) read a process under
/// `tracee` (`aa_may_ptrace` with `AA_PTRACE_READ`, audited): true for a
/// caller under no profile.
fn apparmor_reads(e: &Enforcer, tid: u32, caller: &Subject, tracee: Option<&str>) -> bool {
    let Some(tracer) = caller.apparmor.as_deref() else { return true };
    let Some(aa) = &e.apparmor else { return false };
    let enforcing = || e.avc.policy_state().2;
    aa.ptrace(Some(tracer), tracee, AA_PTRACE_READ, (caller.tgid.unwrap_or(tid), tid), &enforcing)
}

/// How a call names a process.
enum Named {
    /// A thread id (0: the caller).
    Thread(i32),
    /// A pidfd, a descriptor of the caller.
    Pidfd(i32),
}

impl Named {
    /// The process named, as thread `caller` names it; `None` if there
    /// is none.
    fn info(&self, caller: u32) -> Option<ThreadInfo> {
        let pidfd = match *self {
            Named::Thread(0) => pidfd::thread_pidfd(caller).ok()?,
            Named::Thread(t) => pidfd::thread_pidfd(u32::try_from(t).ok()?).ok()?,
            Named::Pidfd(fd) => {
                let own = pidfd::thread_pidfd(caller).ok()?;
                pidfd::take_descriptor(own.as_fd(), fd).ok()?
            }
        };
        // Not a pidfd: the kernel's EBADF.
        pidfd::thread_info(pidfd.as_fd()).ok()
    }
}
