//! Files whose owner is a process that changes domain.
//!
//! Why: `fcntl(F_SETOWN)` names the process (or group) the kernel
//! signals when the file is ready: SIGIO, SIGURG, or the signal
//! `F_SETSIG` chose. The launcher's filter hands it to the daemon, which
//! checks `signal` to the owner as it is then (crate::signals). An owner
//! named while it was in the old domain would keep getting those signals
//! once it has entered a domain the setter may not signal; SELinux checks
//! each one as it is sent (`selinux_file_send_sigiotask`, from the
//! setter's SID), which nothing here can: before this, the old domain's
//! SIGIO killed its child in trusted_t
//! (`the_old_domain_cannot_signal_the_new_one`, sigio_early).
//!
//! How: the daemon remembers the processes and groups a granted
//! `F_SETOWN` named ([`NamedOwners`]). When one of those processes, or a
//! member of one of those groups, settles into a new domain (crate::cgroups,
//! while it is held before its first instruction), every descriptor of
//! every process of the daemon's tree is looked at, through a copy
//! (`pidfd_getfd`): a file it owns, alone or by its group, held by a
//! process whose domain may not `signal` the new one, loses its owner
//! (`F_SETOWN` 0 on the copy: the owner belongs to the open file, which
//! every descriptor of it shares). A later `F_SETOWN` naming it is
//! checked in its new domain. The holder's domain stands for the
//! setter's: the kernel does not say who set an owner. Names are
//! forgotten once no process has them (housekeeping).

use std::fs;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::{Mutex, PoisonError};

use rustc_hash::FxHashSet;

use crate::pidfd;
use crate::signals::ids_of;
use crate::supervised::SignalTarget;

/// `F_GETOWN_EX`, and the owner types it reports.
const F_GETOWN_EX: libc::c_int = 16;
const F_OWNER_TID: libc::c_int = 0;
const F_OWNER_PID: libc::c_int = 1;
const F_OWNER_PGRP: libc::c_int = 2;

/// `struct f_owner_ex`.
#[repr(C)]
#[derive(Default)]
struct OwnerEx {
    kind: libc::c_int,
    pid: libc::pid_t,
}

/// A process (positive) or a group (its id negated) an `F_SETOWN` named.
#[derive(Default)]
pub struct NamedOwners {
    named: Mutex<FxHashSet<i64>>,
}

impl NamedOwners {
    /// Remembers whom a granted `F_SETOWN` named.
    pub fn note(&self, to: SignalTarget) {
        let key = match to {
            SignalTarget::Process(pid) if pid > 0 => i64::from(pid),
            SignalTarget::Group(pgid) if pgid > 0 => -i64::from(pgid),
            _ => return,
        };
        self.named.lock().unwrap_or_else(PoisonError::into_inner).insert(key);
    }

    /// Whether an `F_SETOWN` named process `pid` or its group `pgid`.
    fn named(&self, pid: u32, pgid: i32) -> bool {
        let named = self.named.lock().unwrap_or_else(PoisonError::into_inner);
        named.contains(&i64::from(pid)) || named.contains(&-i64::from(pgid))
    }

    /// Forgets the processes and groups that have no member any more.
    pub fn prune(&self) {
        self.named.lock().unwrap_or_else(PoisonError::into_inner).retain(|&key| {
            // SAFETY: kill with signal 0 sends nothing; it only tells
            // whether the process or group exists (EPERM: it does).
            let rc = unsafe { libc::kill(key as libc::pid_t, 0) };
            rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
        });
    }

    /// Takes the owner away from every file the processes `holders`
    /// lists hold that is owned by process `pid` (entering a new domain)
    /// or its group, where `may_signal` says the holder's domain may not
    /// signal it there. Returns how many files lost their owner.
    pub fn clear(&self, pid: u32, holders: impl FnOnce() -> Vec<u32>, may_signal: impl Fn(u32) -> bool) -> usize {
        if self.named.lock().unwrap_or_else(PoisonError::into_inner).is_empty() {
            return 0;
        }
        let Some(pgid) = ids_of(pid).map(|ids| ids.pgrp) else { return 0 };
        if !self.named(pid, pgid) {
            return 0;
        }
        let mut cleared = 0;
        for holder in holders() {
            let Ok(pidfd) = pidfd::pidfd_open(holder) else { continue };
            let Ok(entries) = fs::read_dir(format!("/proc/{holder}/fd")) else { continue };
            let mut allowed = None;
            for n in entries.flatten().filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok()) {
                let Ok(copy) = pidfd::take_descriptor(pidfd.as_fd(), n) else { continue };
                let mut owner = OwnerEx::default();
                // SAFETY: F_GETOWN_EX writes one f_owner_ex into `owner`.
                if unsafe { libc::fcntl(copy.as_raw_fd(), F_GETOWN_EX, &mut owner) } != 0 {
                    continue;
                }
                let owned = match owner.kind {
                    F_OWNER_TID | F_OWNER_PID => owner.pid as u32 == pid,
                    F_OWNER_PGRP => owner.pid == pgid,
                    _ => false,
                };
                if !owned || *allowed.get_or_insert_with(|| may_signal(holder)) {
                    continue;
                }
                // SAFETY: F_SETOWN 0 removes the open file's owner.
                if unsafe { libc::fcntl(copy.as_raw_fd(), libc::F_SETOWN, 0) } == 0 {
                    cleared += 1;
                }
            }
        }
        cleared
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::FromRawFd;

    fn pipe() -> (std::fs::File, std::fs::File) {
        let mut fds = [0; 2];
        // SAFETY: pipe writes two descriptors into `fds`.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: both are new and owned here only.
        unsafe { (std::fs::File::from_raw_fd(fds[0]), std::fs::File::from_raw_fd(fds[1])) }
    }

    fn owner(f: &std::fs::File) -> i32 {
        // SAFETY: F_GETOWN reads the open file's owner.
        unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETOWN) }
    }

    /// One test, not two: a clear looks at every descriptor of the
    /// process, so two run in parallel would clear each other's pipes.
    #[test]
    fn an_owned_file_loses_its_owner_only_where_the_holder_may_not_signal() {
        let me = std::process::id();
        let (read, _write) = pipe();
        // SAFETY: F_SETOWN names this process as the owner.
        assert_eq!(unsafe { libc::fcntl(read.as_raw_fd(), libc::F_SETOWN, me as libc::c_int) }, 0);
        let owners = NamedOwners::default();
        // Not named by a supervised F_SETOWN: nothing is looked at.
        assert_eq!(owners.clear(me, || vec![me], |_| false), 0);
        assert_eq!(owner(&read), me as i32);
        owners.note(SignalTarget::Process(me as i32));
        // The holder may signal the new domain: kept.
        assert_eq!(owners.clear(me, || vec![me], |_| true), 0);
        assert_eq!(owner(&read), me as i32);
        // It may not: cleared, for the descriptor held here too.
        assert_eq!(owners.clear(me, || vec![me], |holder| holder != me), 1);
        assert_eq!(owner(&read), 0);

        // A group owner counts for its members.
        let pgid = ids_of(me).unwrap().pgrp;
        // SAFETY: getpgrp has no arguments.
        assert_eq!(pgid, unsafe { libc::getpgrp() });
        // SAFETY: F_SETOWN with a negative id names a group.
        assert_eq!(unsafe { libc::fcntl(read.as_raw_fd(), libc::F_SETOWN, -pgid) }, 0);
        let owners = NamedOwners::default();
        owners.note(SignalTarget::Group(pgid));
        assert_eq!(owners.clear(me, || vec![me], |_| false), 1);
        assert_eq!(owner(&read), 0);
        owners.prune();
        assert!(owners.named(me, pgid), "the group still exists");
    }
}
