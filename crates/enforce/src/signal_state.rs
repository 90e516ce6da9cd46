//! The signal state an exec transition resets.
//!
//! Why: the old domain chooses what the new image starts with: signals
//! it ignores or blocks (`trap '' TERM`, `nohup`), signals left pending
//! and blocked, which reach the new image once it unblocks them (a
//! signal the old domain may not send it), an interval timer whose
//! SIGALRM comes in the new domain, and the signal its parent's death
//! sends it (`PR_SET_PDEATHSIG`). SELinux resets the first four at a
//! transition unless the policy grants `process siginh` from the old
//! domain to the new one (`selinux_bprm_committed_creds`: interval timers
//! cleared, pending signals flushed, every handler back to `SIG_DFL`,
//! nothing blocked), and clears the parent-death signal at every change
//! of domain, with no permission to keep it (`selinux_bprm_committing_creds`;
//! AppArmor at every change into a profile)
//! (`an_exec_transition_resets_the_signal_state`). The launcher clears
//! its own (crate::sandbox).
//!
//! How: the new image is held frozen before its first instruction
//! (crate::cgroups); the housekeeper stops it with ptrace while it is
//! still frozen, moves it into its new domain, and has it make the calls
//! itself (crate::injected_calls): `setitimer` of each timer to zero,
//! `rt_sigaction` to `SIG_DFL` of each signal `/proc/PID/status` lists as
//! ignored, `prctl(PR_SET_PDEATHSIG, 0)`. Its mask is emptied with
//! `PTRACE_SETSIGMASK`, and the pending signals it then dequeues on its
//! way to the first call are discarded (the flush). Where the signals are
//! inherited (only the parent-death signal reset), a signal it dequeues
//! during the calls is sent again afterwards, by the daemon.
//!
//! A process that cannot be reset (already traced by another process, a
//! 32-bit image, no stack below its stack pointer) is killed before it
//! runs, as one whose AT_SECURE or limits cannot be set.

use std::fs;
use std::io;

#[cfg(target_arch = "x86_64")]
pub use crate::injected_calls::Tracee;

/// What an exec transition resets (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SignalReset {
    /// SELinux without `siginh`: timers, pending, ignored and blocked.
    pub signals: bool,
    /// Every change of domain but a launch: the parent-death signal.
    pub parent_death: bool,
    /// Not signal state, but made the same way: the image is made
    /// non-dumpable, where a domain may not read its memory
    /// (crate::memory_guard).
    pub undumpable: bool,
}

impl SignalReset {
    pub fn is_empty(self) -> bool {
        !self.signals && !self.parent_death && !self.undumpable
    }
}

/// Stops process `pid`, frozen before its first instruction, so that
/// [`reset`] can run after it is thawed.
#[cfg(target_arch = "x86_64")]
pub fn stop(pid: u32) -> io::Result<Tracee> {
    Tracee::stop(pid)
}

/// Resets what `what` names in the stopped process `t`, then lets it go.
/// On error it is killed (crate::injected_calls).
#[cfg(target_arch = "x86_64")]
pub fn reset(pid: u32, t: Tracee, what: SignalReset) -> io::Result<()> {
    reset_then(pid, t, what, || Ok(()))
}

/// [`reset`], with `before_release` run between the calls and the
/// release (the process still stopped); if it fails the process is let
/// go as it is and its error returned.
#[cfg(target_arch = "x86_64")]
pub fn reset_then(
    pid: u32,
    mut t: Tracee,
    what: SignalReset,
    before_release: impl FnOnce() -> io::Result<()>,
) -> io::Result<()> {
    if what.signals {
        let ignored = ignored_signals(&fs::read_to_string(format!("/proc/{pid}/status"))?)?;
        t.set_blocked(0)?;
        // Both structures are all zeros: a disarmed timer, SIG_DFL with
        // no flags and an empty mask.
        let zeros = t.zeros()?;
        for timer in [libc::ITIMER_REAL, libc::ITIMER_VIRTUAL, libc::ITIMER_PROF] {
            t.syscall(libc::SYS_setitimer, &[timer as u64, zeros, 0])?;
        }
        for sig in ignored {
            t.syscall(libc::SYS_rt_sigaction, &[u64::from(sig), zeros, 0, std::mem::size_of::<u64>() as u64])?;
        }
    }
    if what.parent_death {
        t.syscall(libc::SYS_prctl, &[libc::PR_SET_PDEATHSIG as u64, 0])?;
    }
    if what.undumpable {
        t.syscall(libc::SYS_prctl, &[libc::PR_SET_DUMPABLE as u64, 0])?;
    }
    let step = before_release();
    let dequeued = t.release()?;
    step?;
    if !what.signals {
        for sig in dequeued {
            // SAFETY: kill takes a pid and a signal number; the process
            // was attached until just now and cannot have been reaped.
            unsafe { libc::kill(pid as libc::pid_t, sig) };
        }
    }
    Ok(())
}

/// No ptrace injection on this architecture: nothing can be reset.
#[cfg(not(target_arch = "x86_64"))]
pub struct Tracee;

#[cfg(not(target_arch = "x86_64"))]
pub fn stop(_pid: u32) -> io::Result<Tracee> {
    Err(io::Error::new(io::ErrorKind::Unsupported, "signal state is reset on x86-64 only"))
}

#[cfg(not(target_arch = "x86_64"))]
pub fn reset(_pid: u32, _t: Tracee, _what: SignalReset) -> io::Result<()> {
    Err(io::Error::new(io::ErrorKind::Unsupported, "signal state is reset on x86-64 only"))
}

#[cfg(not(target_arch = "x86_64"))]
pub fn reset_then(
    _pid: u32,
    _t: Tracee,
    _what: SignalReset,
    _before_release: impl FnOnce() -> io::Result<()>,
) -> io::Result<()> {
    Err(io::Error::new(io::ErrorKind::Unsupported, "signal state is reset on x86-64 only"))
}

/// The signals `SigIgn:` of a `/proc/PID/status` lists (bit `n - 1`:
/// signal `n`).
fn ignored_signals(status: &str) -> io::Result<Vec<u32>> {
    let mask = status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no SigIgn in the process's status"))?;
    Ok((1..=64).filter(|sig| mask & (1 << (sig - 1)) != 0).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command};
    use std::time::{Duration, Instant};

    #[test]
    fn ignored_signals_are_read_by_number() {
        // SIGHUP (1), SIGINT (2) and SIGPIPE (13).
        let status = "Name:\tsleep\nSigBlk:\t0000000000000000\nSigIgn:\t0000000000001003\n";
        assert_eq!(ignored_signals(status).unwrap(), [1, 2, 13]);
        assert!(ignored_signals("Name:\tsleep\n").is_err());
    }

    fn status_mask(pid: u32, field: &str) -> u64 {
        let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let v = status.lines().find_map(|l| l.strip_prefix(field)).unwrap();
        u64::from_str_radix(v.trim(), 16).unwrap()
    }

    fn alive(child: &mut Child) -> bool {
        child.try_wait().unwrap().is_none()
    }

    /// A `sleep` that starts as an old domain leaves it: SIGINT ignored,
    /// SIGUSR1 blocked (and sent: pending), a 300 ms real timer, and
    /// SIGKILL when the thread that started it ends.
    fn tampered_sleep() -> (Child, std::sync::mpsc::Sender<()>) {
        let (tx, rx) = std::sync::mpsc::channel::<Child>();
        let (end_tx, end_rx) = std::sync::mpsc::channel::<()>();
        std::thread::spawn(move || {
            let mut cmd = Command::new("sleep");
            cmd.arg("30");
            // SAFETY: only async-signal-safe calls between fork and exec.
            unsafe {
                cmd.pre_exec(|| {
                    libc::signal(libc::SIGINT, libc::SIG_IGN);
                    let mut set: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut set);
                    libc::sigaddset(&mut set, libc::SIGUSR1);
                    libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
                    let timer = libc::itimerval {
                        it_interval: libc::timeval { tv_sec: 0, tv_usec: 0 },
                        it_value: libc::timeval { tv_sec: 0, tv_usec: 300_000 },
                    };
                    libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut());
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    Ok(())
                });
            }
            tx.send(cmd.spawn().unwrap()).unwrap();
            // The parent-death signal fires when this thread ends.
            let _ = end_rx.recv();
        });
        let child = rx.recv().unwrap();
        // Until `sleep` runs, the state is the pre_exec's.
        let deadline = Instant::now() + Duration::from_secs(2);
        while fs::read_link(format!("/proc/{}/exe", child.id())).map_or(true, |p| !p.ends_with("sleep")) {
            assert!(Instant::now() < deadline, "sleep did not start");
            std::thread::sleep(Duration::from_millis(5));
        }
        // SAFETY: kill takes a pid and a signal; the child is ours.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGUSR1) };
        (child, end_tx)
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn a_reset_leaves_nothing_of_the_old_signal_state() {
        let (mut child, end) = tampered_sleep();
        let pid = child.id();
        // (The test process may pass on other ignored signals.)
        assert_ne!(status_mask(pid, "SigIgn:") & 1 << (libc::SIGINT - 1), 0);
        assert_eq!(status_mask(pid, "SigBlk:"), 1 << (libc::SIGUSR1 - 1));
        assert_eq!(status_mask(pid, "SigPnd:") | status_mask(pid, "ShdPnd:"), 1 << (libc::SIGUSR1 - 1));
        let t = stop(pid).unwrap();
        reset(pid, t, SignalReset { signals: true, parent_death: true, undumpable: false }).unwrap();
        assert_eq!(status_mask(pid, "SigIgn:"), 0, "SIG_IGN reset to SIG_DFL");
        assert_eq!(status_mask(pid, "SigBlk:"), 0, "nothing blocked");
        assert_eq!(status_mask(pid, "SigPnd:") | status_mask(pid, "ShdPnd:"), 0, "the pending SIGUSR1 flushed");
        drop(end);
        // Past the timer, and the starting thread ended: neither the
        // SIGALRM nor the parent-death SIGKILL came.
        std::thread::sleep(Duration::from_millis(500));
        assert!(alive(&mut child), "the process outlived its old timer and its parent: {:?}", child.try_wait());
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn without_a_reset_the_old_state_reaches_the_process() {
        // The control: the same process, stopped and released with nothing
        // reset, keeps all of it, and its timer's SIGALRM ends it.
        let (mut child, _end) = tampered_sleep();
        let pid = child.id();
        let t = stop(pid).unwrap();
        reset(pid, t, SignalReset::default()).unwrap();
        assert_ne!(status_mask(pid, "SigIgn:") & 1 << (libc::SIGINT - 1), 0);
        assert_eq!(status_mask(pid, "SigBlk:"), 1 << (libc::SIGUSR1 - 1));
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGALRM), "the old timer fired in the process");
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn only_the_parent_death_signal_keeps_the_rest() {
        // siginh granted, a secure exec: the pending, blocked SIGUSR1 and
        // the ignored SIGINT stay; the parent's end no longer kills it.
        let (mut child, end) = tampered_sleep();
        let pid = child.id();
        let t = stop(pid).unwrap();
        reset(pid, t, SignalReset { signals: false, parent_death: true, undumpable: false }).unwrap();
        assert_ne!(status_mask(pid, "SigIgn:") & 1 << (libc::SIGINT - 1), 0);
        assert_eq!(status_mask(pid, "SigPnd:") | status_mask(pid, "ShdPnd:"), 1 << (libc::SIGUSR1 - 1));
        drop(end);
        std::thread::sleep(Duration::from_millis(100));
        assert!(alive(&mut child), "the parent-death signal was cleared");
        // Its timer (inherited) still fires.
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGALRM));
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn an_undumpable_reset_keeps_the_users_other_processes_out() {
        use std::os::unix::fs::MetadataExt;
        // A dumpable process's private /proc files belong to its user, a
        // non-dumpable one's to root (the kernel's `task_dump_owner`), and
        // the kernel refuses its memory to the user's other processes.
        let owner = |pid: u32| fs::metadata(format!("/proc/{pid}/mem")).unwrap().uid();
        for undumpable in [false, true] {
            let mut child = Command::new("sleep").arg("30").uid(65534).gid(65534).spawn().unwrap();
            let pid = child.id();
            let deadline = Instant::now() + Duration::from_secs(2);
            while fs::read_link(format!("/proc/{pid}/exe")).map_or(true, |p| !p.ends_with("sleep")) {
                assert!(Instant::now() < deadline, "sleep did not start");
                std::thread::sleep(Duration::from_millis(5));
            }
            assert_eq!(owner(pid), 65534);
            let t = stop(pid).unwrap();
            reset(pid, t, SignalReset { undumpable, ..SignalReset::default() }).unwrap();
            assert_eq!(owner(pid), if undumpable { 0 } else { 65534 }, "undumpable: {undumpable}");
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }
}
