//! Signals sent by the processes `rampart run` started, checked as
//! SELinux's `selinux_task_kill` checks them: `process { signal }` (or
//! `sigkill`, `sigstop`, `signull`, `sigchld`: crate::access::SignalPerms) from
//! the sender's domain to the receiver's.
//!
//! And, for a sender or a target under an AppArmor profile, as
//! AppArmor's `apparmor_task_kill` checks them: the sender's profiles
//! `send`, then the target's `receive` (crate::apparmor's `signal`; the
//! profiles' `signal` rules, compiled for a feature set with signal
//! mediation: rampart_apparmor::compile).
//!
//! Why: Landlock's signal scoping keeps a sandboxed process from
//! signalling anything outside its sandbox, but a process that entered
//! another domain by an exec transition stays in its parent's sandbox:
//! without this, the old domain stops, kills or signals the new one
//! (`the_old_domain_cannot_signal_the_new_one`).
//!
//! How: the launcher's filter hands `kill`, `tkill`, `tgkill`,
//! `rt_sigqueueinfo` and `rt_tgsigqueueinfo` to the daemon
//! (crate::supervised). Their targets are integers in registers, which
//! the notification carries and no other thread can change, so once the
//! daemon has checked the processes they name, it lets the kernel carry
//! the call on (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`): the caller sends the
//! signal, with its own credentials and `si_pid`, and the kernel's own
//! checks and Landlock's scoping still apply. (The daemon could not send
//! it instead: the kernel refuses a forged `SI_USER` sender.)
//! `pidfd_send_signal` names its target by a descriptor, which another
//! thread could replace between the check and the call: the filter
//! answers it `ENOSYS`, and callers fall back to `kill`.
//!
//! A file's owner is signalled by the kernel when the file is ready
//! (`SIGIO`, `SIGURG`, or what `F_SETSIG` chose), and SELinux checks
//! each such signal from the domain that set the owner
//! (`selinux_file_send_sigiotask`). Here `fcntl(F_SETOWN)` is checked
//! when it is made, as a kill of `SIGIO` (`signal`) to the owner it
//! names; the owner forms the kernel reads from memory
//! (`F_SETOWN_EX`, the `FIOSETOWN` and `SIOCSPGRP` ioctls) and
//! `F_SETSIG` of SIGKILL, SIGSTOP or SIGCHLD (which need their own
//! permissions) are refused by the filter (`EPERM`).
//!
//! Whom a call reaches, as the kernel's `kill_something_info` says:
//! * a pid or a thread: its process. A process in an exec in flight
//!   (crate::cgroups) is checked in its old and its new domain, since
//!   the exec may have committed.
//! * a process group (`kill(0)`, `kill(-pgid)`): its members in the
//!   daemon's cgroup tree and, since a process may move into another
//!   group of its session (`setpgid`) between the check and the call,
//!   every process of the tree in the caller's session or the group's.
//!   A group with no member in the tree: `ESRCH` (processes outside the
//!   tree are outside every sandbox, where Landlock refuses the signal).
//! * every process (`kill(-1)`): every process of the tree but the
//!   caller.
//!
//! A process named by its pid is checked wherever it is (outside the
//! tree, Landlock then refuses it, after the AVC line SELinux would
//! write). One denial refuses the whole call (`EACCES`), where the kernel
//! would still signal a group's other members: coarser, never laxer.
//! Each target domain is checked, and audited, once per call.
//!
//! What is left: the kernel looks the call's number up again after the
//! daemon's answer (microseconds later). A target whose exec transition
//! begins in between gets the signal while its new image is held frozen,
//! and the reset discards it unless the policy grants `process siginh`
//! (crate::signal_state, which also flushes what the old domain left
//! pending before the exec); with `siginh` granted, or if the transition
//! also settled in between (a millisecond or more, the sender kept off
//! its CPU that long), it reaches the new domain unchecked, as it does a
//! new process given a checked pid that exited and was reaped in between
//! (the pid space must wrap around first). A file's owner checked at
//! `F_SETOWN` loses the file when it later enters a domain the file's
//! holders may not signal (crate::file_owners); a group owner's members
//! that join it later, or enter a domain by other means, are not checked.

use std::fs;
use std::os::fd::AsFd;
use std::sync::Arc;

use rampart_avc::{Perms, Sid};

use crate::enforcer::{Enforcer, Subject};
use crate::pidfd::{self, RecentThreads};
use crate::supervised::SignalTarget;

/// The highest signal number (`_NSIG`).
const NSIG: i32 = 64;

/// Decides signal `sig` from thread `tid` to `to`: `Ok` lets the kernel
/// make the call, `Err` is its error. Both modules decide (SELinux's
/// `selinux_task_kill`, AppArmor's `apparmor_task_kill`), each auditing
/// its own denials.
pub(crate) fn decide(e: &Enforcer, tid: u32, to: SignalTarget, sig: i32) -> Result<(), i32> {
    if !(0..=NSIG).contains(&sig) {
        return Err(libc::EINVAL);
    }
    let caller = caller(e, tid, "a signal")?;
    let targets = receivers(e, &caller, to)?;
    let selinux = check_all(e, tid, &caller, &targets, e.classes.signals.of(sig));
    if apparmor_allows(e, tid, &caller, &targets, sig) {
        selinux
    } else {
        Err(libc::EACCES)
    }
}

/// Decides `F_SETOWN` from thread `tid` naming `to`, as a kill of
/// `SIGIO` (see the module docs): SELinux's alone, as AppArmor has no
/// hook for the signals the kernel sends a file's owner.
pub(crate) fn decide_owner(e: &Enforcer, tid: u32, to: SignalTarget) -> Result<(), i32> {
    let caller = caller(e, tid, "a file owner")?;
    check_all(e, tid, &caller, &receivers(e, &caller, to)?, e.classes.signals.of(libc::SIGIO))
}

/// Whether AppArmor lets `caller` (thread `tid`) send `sig` to each
/// label of `targets` (crate::apparmor's `signal`): true where no profile
/// is involved.
fn apparmor_allows(e: &Enforcer, tid: u32, caller: &Subject, targets: &[Peer], sig: i32) -> bool {
    let mut checked: Vec<Option<&str>> = Vec::new();
    let mut allowed = true;
    for peer in targets {
        let label = peer.apparmor.as_deref();
        if checked.contains(&label) || (label.is_none() && caller.apparmor.is_none()) {
            continue;
        }
        checked.push(label);
        let Some(aa) = &e.apparmor else { return false };
        let enforcing = || e.avc.policy_state().2;
        let sender = (caller.tgid.unwrap_or(tid), tid);
        allowed &= aa.signal(caller.apparmor.as_deref(), label, sig, sender, &enforcing);
    }
    allowed
}

/// The subject of thread `tid`, which asks `what` of other processes
/// (also crate::limits').
pub(crate) fn caller(e: &Enforcer, tid: u32, what: &str) -> Result<Subject, i32> {
    match e.subject(tid, &mut RecentThreads::default(), true) {
        Ok(Some(s)) if s.tgid.is_some() => Ok(s),
        Ok(_) => Err(libc::ESRCH),
        Err(err) => {
            eprintln!("rampartd: refused {what} of thread {tid}: its cgroup is unknown ({err})");
            Err(libc::EPERM)
        }
    }
}

/// A process a call reaches: its label in both modules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Peer {
    pub(crate) sid: Sid,
    /// Its AppArmor profile (`None`: unconfined).
    pub(crate) apparmor: Option<Arc<str>>,
}

impl Peer {
    /// The subject itself as a target.
    pub(crate) fn of(s: &Subject) -> Peer {
        Peer { sid: s.sid, apparmor: s.apparmor.clone() }
    }

    /// A process outside the tree: `sid`, no profile.
    pub(crate) fn outside(sid: Sid) -> Peer {
        Peer { sid, apparmor: None }
    }
}

/// Checks `perms` of class `process` from `caller` (thread `tid`) on
/// each domain of `targets` once, auditing every check: `EACCES` if one
/// is denied (also crate::limits').
pub(crate) fn check_all(e: &Enforcer, tid: u32, caller: &Subject, targets: &[Peer], perms: Perms) -> Result<(), i32> {
    let mut checked: Vec<Sid> = Vec::new();
    let mut allowed = true;
    for &Peer { sid, .. } in targets {
        if !checked.contains(&sid) {
            checked.push(sid);
            // Every domain is checked, so each denial is audited.
            allowed &= e.check_process(tid, caller.tgid, caller.sid, sid, perms);
        }
    }
    if allowed {
        Ok(())
    } else {
        Err(libc::EACCES)
    }
}

/// The labels of the processes `to` reaches (see the module docs).
fn receivers(e: &Enforcer, caller: &Subject, to: SignalTarget) -> Result<Vec<Peer>, i32> {
    match to {
        SignalTarget::Process(pid) => domains_of(e, pid, None),
        SignalTarget::Thread { tid, tgid } if tid <= 0 || tgid.is_some_and(|g| g <= 0) => Err(libc::EINVAL),
        SignalTarget::Thread { tid, tgid } => domains_of(e, tid, tgid),
        SignalTarget::Group(pgid) => group(e, caller, pgid),
        SignalTarget::Nobody => Ok(Vec::new()),
        SignalTarget::Everyone => Ok(e
            .cgroups
            .processes()
            .into_iter()
            .filter(|&p| Some(p) != caller.tgid)
            .flat_map(|p| of_pid(e, p))
            .collect()),
    }
}

/// The labels of the process holding thread `tid` (of process `tgid`,
/// if given); `ESRCH` if there is none. Also crate::limits'.
pub(crate) fn domains_of(e: &Enforcer, tid: i32, tgid: Option<i32>) -> Result<Vec<Peer>, i32> {
    let tid = u32::try_from(tid).map_err(|_| libc::ESRCH)?;
    let info = pidfd::thread_pidfd(tid).and_then(|fd| pidfd::thread_info(fd.as_fd())).map_err(|_| libc::ESRCH)?;
    if tgid.is_some_and(|g| u32::try_from(g).ok() != Some(info.tgid)) {
        return Err(libc::ESRCH);
    }
    Ok(domains(&e.subject_in(info.tgid, info.cgroup_id)))
}

/// The labels of process `pid` (none once it is gone; also
/// crate::sched's).
pub(crate) fn of_pid(e: &Enforcer, pid: u32) -> Vec<Peer> {
    e.subject_of_process(pid).map(|s| domains(&s)).unwrap_or_default()
}

/// A subject's label, and the one its exec in flight enters.
pub(crate) fn domains(s: &Subject) -> Vec<Peer> {
    let mut peers = vec![Peer::of(s)];
    peers.extend(s.exec.as_ref().map(|x| Peer { sid: x.plan.to.sid, apparmor: x.plan.to.apparmor.clone() }));
    peers
}

/// The labels a signal to process group `pgid` (0: the caller's) may
/// reach (see the module docs; also crate::sched's).
pub(crate) fn group(e: &Enforcer, caller: &Subject, pgid: i32) -> Result<Vec<Peer>, i32> {
    let me = caller.tgid.and_then(ids_of).ok_or(libc::ESRCH)?;
    let pgid = if pgid == 0 { me.pgrp } else { pgid };
    let tree: Vec<(u32, Ids)> = e.cgroups.processes().into_iter().filter_map(|p| Some((p, ids_of(p)?))).collect();
    let mut sessions = vec![me.session];
    let mut members = false;
    for (_, ids) in tree.iter().filter(|(_, ids)| ids.pgrp == pgid) {
        members = true;
        if !sessions.contains(&ids.session) {
            sessions.push(ids.session);
        }
    }
    if !members {
        return Err(libc::ESRCH);
    }
    Ok(tree
        .iter()
        .filter(|(_, ids)| ids.pgrp == pgid || sessions.contains(&ids.session))
        .flat_map(|&(p, _)| of_pid(e, p))
        .collect())
}

/// A process's group and session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ids {
    pub(crate) pgrp: i32,
    session: i32,
}

/// Process `pid`'s group and session (none once it is gone).
pub(crate) fn ids_of(pid: u32) -> Option<Ids> {
    parse_ids(&fs::read(format!("/proc/{pid}/stat")).ok()?)
}

/// The group and session in a `/proc/PID/stat` line: the fifth and
/// sixth fields, counted after the command name, which may hold spaces
/// and parentheses and ends at the last `)`.
fn parse_ids(stat: &[u8]) -> Option<Ids> {
    let end = stat.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(stat.get(end + 1..)?).ok()?;
    let mut fields = rest.split_ascii_whitespace().skip(2);
    Some(Ids { pgrp: fields.next()?.parse().ok()?, session: fields.next()?.parse().ok()? })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn group_and_session_are_read_after_the_command_name() {
        let line = b"4242 (a) b (c)) S 1 4240 4000 34816 4240 4194560 0 0 0 0\n";
        assert_eq!(parse_ids(line), Some(Ids { pgrp: 4240, session: 4000 }));
        assert_eq!(parse_ids(b"4242 (sh"), None);
        assert_eq!(parse_ids(b"4242 (sh) S 1"), None);
    }

    #[test]
    fn this_process_is_in_its_own_group_and_session() {
        let ids = ids_of(std::process::id()).unwrap();
        // SAFETY: getpgrp and getsid take no pointers.
        let (pgrp, session) = unsafe { (libc::getpgrp(), libc::getsid(0)) };
        assert_eq!(ids, Ids { pgrp, session });
    }
}
