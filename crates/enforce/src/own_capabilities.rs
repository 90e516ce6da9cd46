//! A process's own capability sets: SELinux checks `process setcap` on
//! the process itself at every `capset` (`selinux_capset`), whatever the
//! sets it asks for, so a domain without it keeps the capability sets it
//! was started or transitioned with: it can neither drop a capability
//! from its effective set nor raise one from its permitted set into it
//! (a daemon's privilege separation, which the policy may fix).
//!
//! How: the launcher's filter hands `capset` over (crate::supervised;
//! i386's is refused); the check is on the caller's domain alone, so the
//! kernel makes the call after it, with whatever the caller's memory then
//! holds: no argument is read, so none can change after the check.
//! `capset` naming another process fails in the kernel (`EPERM`) after
//! the same check, as in SELinux, which checks before the kernel looks
//! at the pid.

use crate::enforcer::Enforcer;

/// Whether thread `tid` may change its capability sets: `Err(EACCES)`,
/// audited, if its domain lacks `process setcap` on itself.
pub(crate) fn decide(e: &Enforcer, tid: u32) -> Result<(), i32> {
    let caller = crate::signals::caller(e, tid, "a capset")?;
    let itself = crate::signals::Peer::of(&caller);
    crate::signals::check_all(e, tid, &caller, &[itself], e.classes.setcap)
}
