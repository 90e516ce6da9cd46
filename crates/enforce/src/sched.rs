//! Another process's scheduling, changed or read by a process `rampart
//! run` started, checked as SELinux checks it: `process { setsched }`
//! for `setpriority`, `sched_setscheduler`, `sched_setparam`,
//! `sched_setattr`, `sched_setaffinity`, `ioprio_set`, `migrate_pages`
//! and `move_pages` (`selinux_task_setnice`, `_setioprio`,
//! `_setscheduler`, `_movememory`), `{ getsched }` for the `sched_get*`
//! calls, `sched_rr_get_interval` and `ioprio_get`, from the caller's
//! domain to each process the call reaches.
//!
//! Why: the old domain of an exec transition keeps its child's user and
//! its Landlock domain, where nothing else refuses these calls: without
//! the check it lowers the new domain's priority to the least, makes it
//! `SCHED_IDLE`, pins it to one CPU or throttles its I/O.
//!
//! How: the launcher's filter hands over these calls, whichever process
//! they name (a pid, 0 the caller itself, which SELinux checks too as
//! `self:process setsched`; a group or a user; the arguments are
//! registers, crate::supervised), and the daemon checks, audits, and
//! lets the kernel make the call, as for signals (crate::signals, whose
//! group rule this shares). A user's processes (`PRIO_USER`,
//! `IOPRIO_WHO_USER`) count as every process of the daemon's tree and
//! the default domain: coarser; a group's members outside the tree count
//! as the default domain. `getpriority` has no SELinux check. The same
//! races as a signal's are left. `migrate_pages` and `move_pages` also
//! show which node holds each page of the process, which the kernel
//! checks first as ptrace's read mode: the daemon asks
//! crate::process_reads first (crate::supervisor).

use crate::enforcer::Enforcer;
use crate::signals::{self, Peer};
use crate::supervised::SchedTarget;

/// Decides a scheduling change (`set`) or read of `to` by thread `tid`:
/// `Ok` lets the kernel make the call, `Err` is its error.
pub(crate) fn decide(e: &Enforcer, tid: u32, to: SchedTarget, set: bool) -> Result<(), i32> {
    let caller = signals::caller(e, tid, "a scheduling call")?;
    let perms = if set { e.classes.setsched } else { e.classes.getsched };
    let targets = match to {
        // The kernel refuses the call itself (EINVAL).
        SchedTarget::Nobody => return Ok(()),
        SchedTarget::Thread(0) => vec![Peer::of(&caller)],
        SchedTarget::Thread(t) => signals::domains_of(e, t, None)?,
        SchedTarget::Group(pgid) => {
            let pgid = if pgid == 0 { caller.tgid.and_then(signals::ids_of).ok_or(libc::ESRCH)?.pgrp } else { pgid };
            // Its members outside the tree are in the default domain (a
            // signal to them Landlock refuses; this call nothing else).
            let tree = e.cgroups.processes();
            let outside =
                process_ids().any(|p| !tree.contains(&p) && signals::ids_of(p).is_some_and(|i| i.pgrp == pgid));
            let mut sids =
                signals::group(e, &caller, pgid).or_else(|err| if outside { Ok(Vec::new()) } else { Err(err) })?;
            if outside {
                sids.push(Peer::outside(e.default_sid));
            }
            sids
        }
        SchedTarget::User => {
            let mut all: Vec<_> = e.cgroups.processes().into_iter().flat_map(|p| signals::of_pid(e, p)).collect();
            all.extend([Peer::of(&caller), Peer::outside(e.default_sid)]);
            all
        }
    };
    signals::check_all(e, tid, &caller, &targets, perms)
}

/// Every process's id, from `/proc`.
fn process_ids() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc").into_iter().flatten().flatten().filter_map(|d| d.file_name().to_str()?.parse().ok())
}
