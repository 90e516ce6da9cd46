//! Resource limits across an exec transition, and `prlimit` of another
//! process.
//!
//! Why: SELinux resets the soft limits of a process that changes domain
//! by an exec unless the policy grants `process rlimitinh` from the old
//! domain to the new one (`selinux_bprm_committing_creds`): each soft
//! limit becomes the lower of the process's hard limit and the init
//! task's soft limit. Otherwise the old domain chooses the new one's
//! limits: a raised `RLIMIT_CORE` lets a crash of the new image write its
//! memory into a core file; a low `RLIMIT_NOFILE`, `RLIMIT_FSIZE` or
//! `RLIMIT_CPU` makes it fail where its author did not expect
//! (`an_exec_transition_resets_the_soft_limits`).
//!
//! How: the new image is held frozen before its first instruction
//! (crate::cgroups), and the housekeeper sets its soft limits with
//! `prlimit`. On another process that needs `CAP_SYS_RESOURCE` (which
//! root on these machines lacks) unless the caller's real user and group
//! are the target's real, effective and saved ones
//! (`check_prlimit_permission`): so a thread of its own takes the
//! target's real user and group, makes the calls and ends. Credentials
//! are per thread in the kernel; the raw system calls change only the
//! calling thread's (libc's change every thread). The init task's soft
//! limits are kthreadd's (pid 2), which inherits them and never changes
//! them.
//!
//! The same `prlimit` lets any process of that user set them again.
//! SELinux checks `process setrlimit` (and `getrlimit` to read) from the
//! caller's domain to the target's (`selinux_task_prlimit`), so the
//! launcher's filter hands `prlimit64` naming another process to the
//! daemon (crate::supervised), which checks it and lets the kernel make
//! the call: the pid is a register, and the limits' addresses matter to
//! the check only by being null or not, registers too. The same races
//! as a signal's are left (crate::signals).
//!
//! A process's own hard limits: SELinux checks `process setrlimit` on
//! the process itself at any change of a hard limit
//! (`selinux_task_setrlimit`), so that the hard limit stays a safe
//! reset point at a transition: a domain without it cannot lower its
//! hard `RLIMIT_NOFILE` to 4 before an exec into a domain that then
//! fails where its author did not expect. `setrlimit`, and `prlimit64`
//! setting the caller's own limits, are handed over ([`set_own`]): the
//! new limits lie in memory another thread may change after a check, so
//! a change of the hard limit is checked and then made by the kernel
//! (any such change is then the domain's to make), and a change that
//! keeps it is made by the daemon with the limits it read. Under an
//! AppArmor profile whose `set rlimit` rule bounds the resource, every
//! change asks that the new hard limit stay within the bound
//! (`aa_task_setrlimit`: `EACCES` and a record), and the daemon makes a
//! change of the hard limit too, on the limits it checked (a raise only
//! where the caller has `CAP_SYS_RESOURCE`, as the kernel asks).

use std::fs;
use std::io;

use crate::enforcer::Enforcer;
use crate::thread_creds::Creds;

/// `CAP_SYS_RESOURCE`, which raising a hard limit needs.
const CAP_SYS_RESOURCE: u32 = 24;

/// `RLIM_NLIMITS`.
const LIMITS: u32 = 16;

/// `_STK_LIM`: the soft stack limit a secure exec gets at most.
const SECURE_STACK: u64 = 8 << 20;

/// What an exec transition does to its process's resource limits: the
/// soft limits of `reset_soft` (bit `r`: resource `r`) become the lower
/// of the hard limit and the init task's soft limit (SELinux without
/// `rlimitinh`: all; AppArmor: those the old profile sets), then the
/// hard limits of `lower_hard` are lowered to at most its values, the
/// soft ones with them (AppArmor: the new profile's `set rlimit` rules,
/// `__aa_transition_rlimits`). A `secure_exec` then caps the soft stack
/// limit at 8 MiB, as the kernel caps it for an exec in secure-execution
/// mode (`begin_new_exec`): a stack the old domain let grow without
/// bound could grow into the new image's other mappings (stack clash).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LimitChange {
    pub(crate) reset_soft: u32,
    pub(crate) lower_hard: Vec<(u32, u64)>,
    pub(crate) secure_exec: bool,
}

impl LimitChange {
    /// Every resource.
    pub const ALL: u32 = (1 << LIMITS) - 1;

    pub fn is_empty(&self) -> bool {
        self.reset_soft == 0 && self.lower_hard.is_empty() && !self.secure_exec
    }

    /// Lowers resource `r`'s hard limit to at most `max`.
    pub fn cap(&mut self, r: u32, max: u64) {
        match self.lower_hard.iter_mut().find(|(x, _)| *x == r) {
            Some((_, m)) => *m = (*m).min(max),
            None => self.lower_hard.push((r, max)),
        }
    }

    /// The limit resource `r` gets from `now` (`init_soft`: the init
    /// task's soft limit).
    fn applied(&self, r: u32, now: libc::rlimit64, init_soft: u64) -> libc::rlimit64 {
        let mut new = now;
        if self.reset_soft & (1 << r) != 0 {
            new.rlim_cur = new.rlim_max.min(init_soft);
        }
        if let Some(&(_, max)) = self.lower_hard.iter().find(|(x, _)| *x == r) {
            new.rlim_max = new.rlim_max.min(max);
            new.rlim_cur = new.rlim_cur.min(new.rlim_max);
        }
        if self.secure_exec && r == libc::RLIMIT_STACK {
            new.rlim_cur = new.rlim_cur.min(SECURE_STACK);
        }
        new
    }
}
/// kthreadd, the init task's first child.
const KTHREADD: u32 = 2;

/// Applies `change` to the limits of process `pid`, which must not run
/// until this returns (see the module docs).
pub fn apply(pid: u32, change: &LimitChange) -> io::Result<()> {
    let stack_alone = LimitChange { secure_exec: true, ..LimitChange::default() };
    if *change == stack_alone
        && soft_limit(&fs::read_to_string(format!("/proc/{pid}/limits"))?, libc::RLIMIT_STACK)? <= SECURE_STACK
    {
        // Nothing to change (the kernel caps it itself for a setuid
        // exec, whose ids would keep the thread below from the call).
        return Ok(());
    }
    let init = if change.reset_soft != 0 { init_soft_limits()? } else { vec![u64::MAX; LIMITS as usize] };
    let change = change.clone();
    // Resets and lowers limits: never a raise.
    as_owner_of(pid, false, move || {
        for (resource, &init_soft) in (0..LIMITS).zip(init.iter()) {
            let now = get(pid, resource)?;
            let new = change.applied(resource, now, init_soft);
            if (new.rlim_cur, new.rlim_max) != (now.rlim_cur, now.rlim_max) {
                set(pid, resource, new)?;
            }
        }
        Ok(())
    })
}

/// Runs `calls` (`prlimit` calls on process `pid`) in a thread of its
/// own that takes `pid`'s real user and group (see the module docs),
/// without `CAP_SYS_RESOURCE` unless `may_raise`: then the kernel
/// refuses a call that would raise a hard limit (`EPERM`), whatever
/// process the number names by the time it is made (an exec in another
/// thread gives the leader's number to the new image, whose hard limits
/// a transition may have lowered).
fn as_owner_of<T: Send + 'static>(
    pid: u32,
    may_raise: bool,
    calls: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> io::Result<T> {
    let (uid, gid) = owner(&fs::read_to_string(format!("/proc/{pid}/status"))?)?;
    let worker = std::thread::Builder::new().name("limits".into()).spawn(move || -> io::Result<T> {
        // SAFETY: setresgid and setresuid take integers; the raw calls
        // change this thread's credentials only, and the thread ends
        // after these calls. Only the real ids change: the effective
        // ones (root) and the capabilities stay.
        unsafe {
            if libc::syscall(libc::SYS_setresgid, gid, u32::MAX, u32::MAX) != 0
                || libc::syscall(libc::SYS_setresuid, uid, u32::MAX, u32::MAX) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        if !may_raise {
            let mut caps = crate::thread_creds::capget()?;
            caps[0].effective &= !(1 << CAP_SYS_RESOURCE);
            crate::thread_creds::capset(&caps)?;
        }
        calls()
    })?;
    worker.join().map_err(|_| io::Error::other("the limits thread panicked"))?
}

/// The init task's soft limits.
fn init_soft_limits() -> io::Result<Vec<u64>> {
    if fs::read_to_string(format!("/proc/{KTHREADD}/comm"))?.trim_end() != "kthreadd" {
        return Err(io::Error::other("pid 2 is not kthreadd (a pid namespace?): the init task's limits are unknown"));
    }
    (0..LIMITS).map(|r| get(KTHREADD, r).map(|l| l.rlim_cur)).collect()
}

fn get(pid: u32, resource: u32) -> io::Result<libc::rlimit64> {
    let mut out = libc::rlimit64 { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: prlimit64 writes one rlimit64 into `out`, valid for the call.
    let rc = unsafe { libc::syscall(libc::SYS_prlimit64, pid, resource, std::ptr::null::<libc::rlimit64>(), &mut out) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(out)
}

fn set(pid: u32, resource: u32, limit: libc::rlimit64) -> io::Result<libc::rlimit64> {
    let mut old = libc::rlimit64 { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: prlimit64 reads one rlimit64 from `limit` and writes one
    // into `old`, both valid for the call.
    let rc = unsafe { libc::syscall(libc::SYS_prlimit64, pid, resource, &limit, &mut old) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(old)
}

/// The hard limit of resource `resource` in a `/proc/PID/limits`, which
/// any process may read: one line per resource, in their order, after a
/// heading; the hard limit in the columns 47 to 67 (`proc_pid_limits`).
fn hard_limit(limits: &str, resource: u32) -> io::Result<u64> {
    limit_column(limits, resource, 47..67)
}

/// The limit in `columns` of resource `resource`'s line of a
/// `/proc/PID/limits`.
fn limit_column(limits: &str, resource: u32, columns: std::ops::Range<usize>) -> io::Result<u64> {
    let bad = || io::Error::other(format!("no limit of resource {resource} in /proc/PID/limits"));
    let line = limits.lines().nth(resource as usize + 1).ok_or_else(bad)?;
    match line.get(columns).map(str::trim) {
        Some("unlimited") => Ok(libc::RLIM64_INFINITY),
        Some(v) => v.parse().map_err(|_| bad()),
        None => Err(bad()),
    }
}

/// `setrlimit`, or `prlimit64` by thread `tid` of its own process,
/// setting resource `resource` to the limits at address `new` in its
/// memory and writing the previous ones at `old` (if not 0), while
/// `still_pending()` (see the module docs). `Ok(None)`: the kernel makes
/// the call; `Ok(Some(0))`: made here; `Err`: its error.
pub(crate) fn set_own(
    e: &Enforcer,
    tid: u32,
    (resource, new, old, whose): (u32, u64, u64, Whose),
    still_pending: impl Fn() -> bool,
) -> Result<Option<i64>, i32> {
    if resource >= LIMITS {
        // `EINVAL`, nothing set.
        return Ok(None);
    }
    let caller = crate::signals::caller(e, tid, "a setrlimit")?;
    if whose == Whose::OwnProcess {
        // As another process's (`selinux_task_prlimit`); then made on
        // the caller's own thread, whose limits they are: never by the
        // kernel, which would look the number up again.
        let mut perms = e.classes.setrlimit;
        if old != 0 {
            perms |= e.classes.getrlimit;
        }
        crate::signals::check_all(e, tid, &caller, &[crate::signals::Peer::of(&caller)], perms)?;
    }
    let mut bytes = [0u8; 16];
    crate::process_memory::read(tid, new, &mut bytes)?;
    let (cur, max) = bytes.split_at(8);
    let word = |b: &[u8]| b.try_into().map(u64::from_ne_bytes).map_err(|_| libc::EFAULT);
    let wanted = libc::rlimit64 { rlim_cur: word(cur)?, rlim_max: word(max)? };
    if wanted.rlim_cur > wanted.rlim_max {
        // The kernel's first check, before any module's.
        return Err(libc::EINVAL);
    }
    let limits = fs::read_to_string(format!("/proc/{tid}/limits")).map_err(|_| libc::ESRCH)?;
    let hard = hard_limit(&limits, resource).map_err(|_| libc::ESRCH)?;
    let status = fs::read_to_string(format!("/proc/{tid}/status")).map_err(|_| libc::ESRCH)?;
    // Still the caller: what was read under /proc/TID is its.
    if !still_pending() {
        return Err(libc::ESRCH);
    }
    if wanted.rlim_max > hard && !may_raise_hard_limits(&status) {
        return Err(libc::EPERM);
    }
    let hard_changes = wanted.rlim_max != hard;
    if hard_changes {
        crate::signals::check_all(e, tid, &caller, &[crate::signals::Peer::of(&caller)], e.classes.setrlimit)?;
    }
    // AppArmor: the new hard limit within the profiles' `set rlimit`
    // bounds, checked on the limits read: such a call is made here.
    let bounded = match (&caller.apparmor, &e.apparmor) {
        (Some(label), Some(aa)) => {
            let enforcing = || e.avc.policy_state().2;
            let who = (caller.tgid.unwrap_or(tid), tid);
            if !aa.setrlimit(label, (resource, wanted.rlim_max), who, &enforcing) {
                return Err(libc::EACCES);
            }
            aa.bounds(label, resource)
        }
        (None, _) => false,
        // A profile without the AppArmor module: nothing to ask it.
        (Some(_), None) => return Err(libc::EACCES),
    };
    if hard_changes && !bounded && whose == Whose::Caller {
        // Any hard limit is the domain's to set: the kernel makes it.
        return Ok(None);
    }
    // A raise keeps the daemon's CAP_SYS_RESOURCE, the caller's checked
    // above.
    let raise = wanted.rlim_max > hard;
    let previous = as_owner_of(tid, raise, move || set(tid, resource, wanted)).map_err(|err| {
        let errno = err.raw_os_error();
        if errno.is_none() {
            eprintln!("rampartd: refused a setrlimit of thread {tid}: {err}");
        }
        errno.unwrap_or(libc::EPERM)
    })?;
    if old != 0 {
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&previous.rlim_cur.to_ne_bytes());
        out[8..].copy_from_slice(&previous.rlim_max.to_ne_bytes());
        crate::process_memory::write(tid, old, &out)?;
    }
    Ok(Some(0))
}

/// The kernel's `inode_newsize_ok` for a truncation of a file of `size`
/// bytes to `length` by thread `tid`, which the daemon makes under its
/// own limit: growing the file past the caller's soft `RLIMIT_FSIZE`
/// sends the caller `SIGXFSZ` and answers `EFBIG`.
pub(crate) fn may_grow_file(tid: u32, size: u64, length: i64) -> Result<(), i32> {
    let Ok(length) = u64::try_from(length) else { return Ok(()) };
    if length <= size {
        return Ok(());
    }
    let limits = fs::read_to_string(format!("/proc/{tid}/limits")).map_err(|_| libc::ESRCH)?;
    let limit = soft_limit(&limits, libc::RLIMIT_FSIZE).map_err(|_| libc::ESRCH)?;
    if length <= limit {
        return Ok(());
    }
    // SAFETY: integer arguments; the caller's thread, held in its call.
    unsafe { libc::syscall(libc::SYS_tgkill, tgid_of(tid).unwrap_or(tid), tid, libc::SIGXFSZ) };
    Err(libc::EFBIG)
}

/// Whether the thread of `/proc/TID/status` text `status` has
/// `CAP_SYS_RESOURCE` in its effective set, which raising a hard limit
/// needs (in the initial user namespace: the sandbox makes no other).
fn may_raise_hard_limits(status: &str) -> bool {
    Creds::from_status(status).is_some_and(|c| c.effective & (1 << CAP_SYS_RESOURCE) != 0)
}

/// The process thread `tid` belongs to (`Tgid:` of its status).
fn tgid_of(tid: u32) -> Option<u32> {
    let status = fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("Tgid:")).and_then(|v| v.trim().parse().ok())
}

/// The soft limit of resource `resource` in a `/proc/PID/limits`: one
/// line per resource, in their order, after a heading; the soft limit in
/// the columns 26 to 46 (`proc_pid_limits`).
fn soft_limit(limits: &str, resource: u32) -> io::Result<u64> {
    limit_column(limits, resource, 26..46)
}

/// The real user and group of a `/proc/PID/status`, which `prlimit` by
/// a process of the same ids needs to be its effective and saved ones
/// too.
fn owner(status: &str) -> io::Result<(u32, u32)> {
    let ids = |key: &str| -> io::Result<u32> {
        let line =
            status.lines().find_map(|l| l.strip_prefix(key)).ok_or_else(|| io::Error::other(format!("no {key}")))?;
        let v: Vec<u32> = line.split_whitespace().take(3).filter_map(|x| x.parse().ok()).collect();
        match v[..] {
            [r, e, s] if r == e && e == s => Ok(r),
            _ => Err(io::Error::other(format!("{key} {line}: real, effective and saved ids differ"))),
        }
    };
    Ok((ids("Uid:")?, ids("Gid:")?))
}

/// Whose limits a `prlimit64` of `pid` by thread `tid` reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Whose {
    /// The calling thread's own (0, or its own id), which the kernel
    /// does not check as another's (`check_prlimit_permission`).
    Caller,
    /// Its process's, named by the process id or another thread's:
    /// the same limits, checked by SELinux as another process's
    /// (`selinux_task_prlimit`).
    OwnProcess,
    /// Another process's.
    Other,
}

/// Whose limits a `prlimit64` of `pid` by thread `tid` reaches (a thread
/// that went is taken as another process's).
pub(crate) fn whose(tid: u32, pid: i32) -> Whose {
    if pid == 0 || u32::try_from(pid).ok() == Some(tid) {
        return Whose::Caller;
    }
    let same = u32::try_from(pid).ok().and_then(tgid_of).is_some_and(|g| Some(g) == tgid_of(tid));
    if same {
        Whose::OwnProcess
    } else {
        Whose::Other
    }
}

/// Decides `prlimit64` by thread `tid` on process `pid` (0: itself),
/// setting the limits if `write`, reading them if `read`: `Ok` lets the
/// kernel make the call, `Err` is its error.
pub(crate) fn decide(
    e: &Enforcer,
    tid: u32,
    (pid, whose, resource): (i32, Whose, u32),
    write: bool,
    read: bool,
) -> Result<(), i32> {
    // The kernel checks nothing for the calling thread itself, nor a
    // call that neither sets nor reads.
    if whose == Whose::Caller || !(write || read) {
        return Ok(());
    }
    let caller = crate::signals::caller(e, tid, "a prlimit")?;
    let mut perms = rampart_avc::Perms::NONE;
    if write {
        perms |= e.classes.setrlimit;
    }
    if read {
        perms |= e.classes.getrlimit;
    }
    let targets = crate::signals::domains_of(e, pid, None)?;
    let selinux = crate::signals::check_all(e, tid, &caller, &targets, perms);
    // AppArmor asks its own question whatever SELinux answered.
    let apparmor = match (&caller.apparmor, &e.apparmor) {
        _ if !write => true,
        (None, _) => true,
        (Some(label), Some(aa)) => {
            let status = fs::read_to_string(format!("/proc/{tid}/status")).unwrap_or_default();
            let capable = may_raise_hard_limits(&status);
            let enforcing = || e.avc.policy_state().2;
            let who = (caller.tgid.unwrap_or(tid), tid);
            let mut all = true;
            for peer in &targets {
                all &= aa.setrlimit_of_other((label, peer.apparmor.as_deref()), resource, capable, who, &enforcing);
            }
            all
        }
        (Some(_), None) => false,
    };
    selinux?;
    if apparmor {
        Ok(())
    } else {
        Err(libc::EACCES)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_is_read_when_its_ids_agree() {
        let status = "Name:\tsh\nUid:\t65534\t65534\t65534\t65534\nGid:\t100\t100\t100\t100\n";
        assert_eq!(owner(status).unwrap(), (65534, 100));
        let setuid = "Uid:\t1000\t0\t0\t0\nGid:\t100\t100\t100\t100\n";
        assert!(owner(setuid).is_err());
        assert!(owner("Name:\tsh\n").is_err());
    }

    #[test]
    fn the_limits_are_read_as_the_kernel_gives_them() {
        let limits = fs::read_to_string("/proc/self/limits").unwrap();
        for r in 0..LIMITS {
            let mut want = libc::rlimit64 { rlim_cur: 0, rlim_max: 0 };
            // SAFETY: getrlimit64 writes one rlimit64 into `want`.
            assert_eq!(unsafe { libc::getrlimit64(r as _, &mut want) }, 0);
            assert_eq!(hard_limit(&limits, r).unwrap(), want.rlim_max, "resource {r}");
            assert_eq!(soft_limit(&limits, r).unwrap(), want.rlim_cur, "resource {r}");
        }
        assert!(hard_limit(&limits, LIMITS).is_err(), "no such line");
        assert!(hard_limit("Limit\nMax cpu time              unlimited            12x", 0).is_err());
        // SAFETY: gettid and getpid cannot fail.
        let (me, process) = unsafe { (libc::gettid() as u32, libc::getpid()) };
        assert_eq!(whose(me, 0), Whose::Caller);
        assert_eq!(whose(me, me as i32), Whose::Caller);
        let other_thread = std::thread::spawn(|| unsafe { libc::gettid() } as u32).join().unwrap();
        if me as i32 != process {
            assert_eq!(whose(me, process), Whose::OwnProcess, "the process by its id");
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let alive = std::thread::spawn(move || {
            // SAFETY: gettid cannot fail.
            tx.send(unsafe { libc::gettid() } as u32).unwrap();
            let _ = stop_rx.recv();
        });
        let sibling = rx.recv().unwrap();
        assert_eq!(whose(me, sibling as i32), Whose::OwnProcess, "another thread of its process");
        drop(stop_tx);
        alive.join().unwrap();
        assert_eq!(whose(me, other_thread as i32), Whose::Other, "a thread that went");
        assert_eq!(whose(me, 1), Whose::Other, "init");
    }

    #[test]
    fn soft_limits_reset_before_hard_limits_lower() {
        let lim = |cur, max| libc::rlimit64 { rlim_cur: cur, rlim_max: max };
        let pair = |l: libc::rlimit64| (l.rlim_cur, l.rlim_max);
        let reset = LimitChange { reset_soft: LimitChange::ALL, ..LimitChange::default() };
        // min(hard, init's soft), up or down.
        assert_eq!(pair(reset.applied(4, lim(u64::MAX, u64::MAX), 0)), (0, u64::MAX));
        assert_eq!(pair(reset.applied(7, lim(20, 4096), 1024)), (1024, 4096));
        assert_eq!(pair(reset.applied(7, lim(20, 512), 1024)), (512, 512));
        let mut cap = LimitChange::default();
        cap.cap(7, 200);
        cap.cap(7, 100);
        assert_eq!(cap.lower_hard, vec![(7, 100)]);
        assert_eq!(pair(cap.applied(7, lim(1024, 4096), 0)), (100, 100));
        assert_eq!(pair(cap.applied(7, lim(50, 4096), 0)), (50, 100));
        assert_eq!(pair(cap.applied(6, lim(50, 4096), 0)), (50, 4096));
        let both = LimitChange { reset_soft: 1 << 7, lower_hard: vec![(7, 100)], secure_exec: false };
        assert_eq!(pair(both.applied(7, lim(20, 4096), 1024)), (100, 100));
        // A secure exec caps the soft stack limit alone, after the rest.
        let stack = libc::RLIMIT_STACK;
        let secure = LimitChange { secure_exec: true, ..LimitChange::default() };
        assert!(!secure.is_empty());
        assert_eq!(pair(secure.applied(stack, lim(u64::MAX, u64::MAX), 0)), (8 << 20, u64::MAX));
        assert_eq!(pair(secure.applied(stack, lim(1 << 20, u64::MAX), 0)), (1 << 20, u64::MAX));
        assert_eq!(pair(secure.applied(7, lim(u64::MAX, u64::MAX), 0)), (u64::MAX, u64::MAX));
        let reset_then_cap = LimitChange { reset_soft: LimitChange::ALL, lower_hard: Vec::new(), secure_exec: true };
        assert_eq!(pair(reset_then_cap.applied(stack, lim(u64::MAX, u64::MAX), u64::MAX)), (8 << 20, u64::MAX));
    }

    #[test]
    fn the_init_tasks_limits_are_kthreadds() {
        let init = init_soft_limits().unwrap();
        assert_eq!(init.len(), LIMITS as usize);
        // RLIMIT_CORE: the init task dumps no core.
        assert_eq!(init[libc::RLIMIT_CORE as usize], 0);
    }
}
