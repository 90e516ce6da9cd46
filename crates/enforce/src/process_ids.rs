//! A process's group and session, read by a process `rampart run`
//! started: `getpgid` and `getsid`, checked as SELinux checks them
//! (`process { getpgid }`, `{ getsession }`: `selinux_task_getpgid`,
//! `_getsid`), from the caller's domain to the process named (itself
//! too: `self:process`); and its group changed, `setpgid`
//! (`{ setpgid }`: `selinux_task_setpgid`; the caller or a child not
//! yet past its exec, so in its domain unless an exec is in flight).
//!
//! Why: the ids tell the old domain of an exec transition which group
//! and session the new one joined (what a signal to a group would reach);
//! SELinux keeps that between domains the policy relates.
//!
//! How: the launcher's filter hands these calls over, pid 0 (the caller)
//! included; the daemon checks, audits, and lets the kernel make the
//! call, as for scheduling (crate::sched).

use crate::enforcer::Enforcer;
use crate::signals;

/// Decides a call on the group or session of process `pid` (0: the
/// caller) by thread `tid`, which needs `perms` (`getpgid`,
/// `getsession`, `setpgid`): `Ok` lets the kernel make the call, `Err`
/// is its error.
pub(crate) fn decide(e: &Enforcer, tid: u32, pid: i32, perms: rampart_avc::Perms) -> Result<(), i32> {
    let caller = signals::caller(e, tid, "a process's group or session")?;
    let targets = match pid {
        0 => vec![signals::Peer::of(&caller)],
        // The kernel refuses it itself (ESRCH).
        p if p < 0 => return Ok(()),
        p => signals::domains_of(e, p, None)?,
    };
    signals::check_all(e, tid, &caller, &targets, perms)
}
