//! Signals that interrupt a call the daemon makes for its caller, as
//! they would interrupt the caller's own.
//!
//! Why: a TCP connect of a launched process is made by a thread of the
//! daemon (crate::call_threads), and its caller waits for the answer in
//! a wait only a fatal signal ends (`SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV`:
//! another signal would make the kernel restart a call the daemon is
//! making). So a signal the caller handles did not interrupt it: Ctrl-C
//! in an interactive program, or `alarm` around a blocking connect to a
//! host that never answers, waited for the kernel's own timeout
//! (minutes), where the kernel's connect returns at once.
//!
//! How: while the call runs, a watcher looks every [`EVERY`] at the
//! caller's pending signals (`/proc/TID/status`); one that the caller
//! catches and does not block makes it interrupt the daemon's thread
//! with SIGUSR1, whose handler is a no-op installed without `SA_RESTART`
//! (crate::daemon): the call fails with `EINTR`, leaving the socket
//! connecting, as the kernel's interrupted connect leaves it. A caller
//! that is gone (killed) has its call interrupted too, so that a connect
//! to a host that never answers holds no thread after its caller. The caller
//! is answered as the kernel answers ([`interrupted`]): restarted where
//! its handler has `SA_RESTART` and the socket no send timeout. The
//! watcher sends again while the signal is pending, so a signal that
//! reached the thread before its call began is not lost; a thread leaves
//! the registry (under its lock) before its next call, so no signal meant
//! for one call reaches another. The opens of FIFOs waiting for a reader
//! (crate::fifo_opens), retried by the daemon, look at their callers'
//! signals with [`signal_to_handle`] and end the same way.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::time::Duration;

/// How often the watcher looks at the callers' pending signals.
const EVERY: Duration = Duration::from_millis(10);

/// `ERESTARTSYS` (include/linux/errno.h): the call is made again after
/// the handler if it has `SA_RESTART`, and fails with `EINTR` otherwise
/// (what the kernel's connect returns when a signal interrupts it
/// without a send timeout).
pub(crate) const ERESTARTSYS: i32 = 512;

/// A call being made, and the thread making it.
struct Running {
    caller: u32,
    thread: libc::pthread_t,
}

/// The calls being made, by notification id.
#[derive(Default)]
pub(crate) struct Interrupts {
    running: Mutex<HashMap<u64, Running>>,
    started: Condvar,
    watcher: OnceLock<()>,
}

impl Interrupts {
    /// Makes `call` (of thread `caller`, notification `id`) on this
    /// thread, interrupted as described in the module docs.
    pub(crate) fn run<T>(self: &Arc<Self>, id: u64, caller: u32, call: impl FnOnce() -> T) -> T {
        self.watcher.get_or_init(|| {
            let me = Arc::clone(self);
            let started = crate::daemon::install_wakeup().and_then(|()| {
                std::thread::Builder::new().name("call interrupts".into()).spawn(move || me.watch()).map(drop)
            });
            if let Err(e) = started {
                eprintln!(
                    "rampartd: supervisor: no watcher of signals for connects ({e}): a signal does not interrupt them"
                );
            }
        });
        // SAFETY: pthread_self cannot fail.
        let thread = unsafe { libc::pthread_self() };
        self.lock().insert(id, Running { caller, thread });
        self.started.notify_one();
        let out = call();
        self.lock().remove(&id);
        out
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Running>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The watcher: forever, sleeping while no call runs.
    fn watch(&self) {
        loop {
            let callers: Vec<(u64, u32)> = {
                let mut running = self.lock();
                while running.is_empty() {
                    running = self.started.wait(running).unwrap_or_else(PoisonError::into_inner);
                }
                running.iter().map(|(&id, r)| (id, r.caller)).collect()
            };
            for (id, caller) in callers {
                // A caller gone (killed) waits for nothing: its call ends,
                // and the thread with it.
                let interrupt = match std::fs::read_to_string(format!("/proc/{caller}/status")) {
                    Ok(status) => has_signal_to_handle(&status),
                    Err(e) => e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ESRCH),
                };
                if !interrupt {
                    continue;
                }
                let running = self.lock();
                if let Some(r) = running.get(&id) {
                    // SAFETY: the thread is registered, so alive and in
                    // `run` (it leaves the registry under this lock);
                    // SIGUSR1's handler is a no-op.
                    unsafe { libc::pthread_kill(r.thread, libc::SIGUSR1) };
                }
            }
            std::thread::sleep(EVERY);
        }
    }
}

/// Whether thread `tid` has a signal it catches pending
/// ([`has_signal_to_handle`]; `false` if its status cannot be read).
pub(crate) fn signal_to_handle(tid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{tid}/status")).is_ok_and(|status| has_signal_to_handle(&status))
}

/// Whether a thread's `/proc/TID/status` shows a pending signal (its own
/// or its process's) that it catches and does not block: one the kernel
/// would interrupt its call for and then handle. A fatal one ends it
/// without the daemon.
fn has_signal_to_handle(status: &str) -> bool {
    let mask = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            .unwrap_or(0)
    };
    (mask("SigPnd:") | mask("ShdPnd:")) & !mask("SigBlk:") & mask("SigCgt:") != 0
}

/// The caller's answer for a call that failed with `errno` on the
/// daemon's thread: an interrupted connect of a socket without a send
/// timeout is restarted where the caller's handler has `SA_RESTART`
/// ([`ERESTARTSYS`]), as `inet_stream_connect` answers.
pub(crate) fn interrupted(errno: i32, send_timeout: bool) -> i32 {
    if errno == libc::EINTR && !send_timeout {
        ERESTARTSYS
    } else {
        errno
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// Hand-written from fs/proc/array.c's lines.
    #[test]
    fn a_pending_signal_counts_only_if_caught_and_not_blocked() {
        let status = |pnd: &str, shd: &str, blk: &str, cgt: &str| {
            format!(
                "Name:\tx\nSigQ:\t0/1\nSigPnd:\t{pnd}\nShdPnd:\t{shd}\nSigBlk:\t{blk}\nSigIgn:\t0000000000000000\nSigCgt:\t{cgt}\n"
            )
        };
        let alrm = "0000000000002000"; // SIGALRM, 14
        let none = "0000000000000000";
        assert!(has_signal_to_handle(&status(alrm, none, none, alrm)));
        assert!(has_signal_to_handle(&status(none, alrm, none, alrm)), "the process's");
        assert!(!has_signal_to_handle(&status(alrm, none, alrm, alrm)), "blocked");
        assert!(!has_signal_to_handle(&status(alrm, none, none, none)), "not caught: default action or ignored");
        assert!(!has_signal_to_handle(&status(none, none, none, alrm)), "none pending");
        assert!(!has_signal_to_handle(""), "no status: the caller is gone");
    }

    #[test]
    fn an_interrupted_call_is_restarted_as_the_kernel_restarts_it() {
        assert_eq!(interrupted(libc::EINTR, false), ERESTARTSYS);
        assert_eq!(interrupted(libc::EINTR, true), libc::EINTR);
        assert_eq!(interrupted(libc::ECONNREFUSED, false), libc::ECONNREFUSED);
    }

    /// A stopped shell that traps SIGUSR2 (a stopped process keeps its
    /// signals pending), killed when dropped (a failed test included).
    struct StoppedCaller(std::process::Child);

    impl StoppedCaller {
        fn id(&self) -> u32 {
            self.0.id()
        }
    }

    impl Drop for StoppedCaller {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    /// A [`StoppedCaller`], with SIGUSR2 pending if `pending`.
    fn stopped_caller(pending: bool) -> StoppedCaller {
        use std::process::Stdio;
        let shell = std::process::Command::new("sh")
            .args(["-c", "trap : USR2; kill -STOP $$; exit 0"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let shell = StoppedCaller(shell);
        let pid = shell.id();
        let stopped = || std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap().contains(") T ");
        for _ in 0..500 {
            if stopped() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(stopped(), "the shell stopped itself");
        if pending {
            // SAFETY: kill of our own child.
            assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGUSR2) }, 0);
        }
        shell
    }

    /// Stress: one thread alternates calls for a caller with a signal
    /// pending (sleeps of 0 to 3 ms, which end by themselves or are
    /// interrupted) and calls for one without (sleeps of 1 ms, never
    /// interrupted): no signal meant for one call reaches the next, even
    /// when that call ended by itself as the watcher looked.
    #[test]
    fn no_interrupt_reaches_the_next_call() {
        let (signalled, quiet) = (stopped_caller(true), stopped_caller(false));
        let interrupts = Arc::new(Interrupts::default());
        let errno = || std::io::Error::last_os_error().raw_os_error();
        let sleep = |us: i64| {
            move || {
                let t = libc::timespec { tv_sec: 0, tv_nsec: us * 1000 };
                // SAFETY: a valid timespec; no remainder wanted.
                (unsafe { libc::nanosleep(&t, std::ptr::null_mut()) }, errno())
            }
        };
        let mut interrupted = 0;
        for i in 0..600u64 {
            let (rc, e) = interrupts.run(2 * i, signalled.id(), sleep((i as i64 * 37) % 3000));
            interrupted += usize::from(rc < 0 && e == Some(libc::EINTR));
            assert_eq!(
                interrupts.run(2 * i + 1, quiet.id(), sleep(1000)).0,
                0,
                "call {i} of the quiet caller interrupted"
            );
        }
        assert!(interrupted > 0, "some calls of the signalled caller were interrupted");
    }

    /// A blocking call made for a caller is interrupted (`EINTR`) once
    /// the caller has a signal it catches pending, and not before.
    #[test]
    fn a_pending_caught_signal_interrupts_the_call() {
        let shell = stopped_caller(false);
        let pid = shell.id();
        let (r, w) = {
            let mut fds = [0; 2];
            // SAFETY: pipe fills two descriptors.
            assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
            (fds[0], fds[1])
        };
        // A read of a pipe: only a write or a signal ends it.
        let read = move || {
            let mut b = 0u8;
            // SAFETY: one byte into `b`.
            let n = unsafe { libc::read(r, (&mut b as *mut u8).cast(), 1) };
            (n, std::io::Error::last_os_error().raw_os_error())
        };
        let interrupts = Arc::new(Interrupts::default());
        // Nothing pending: the read waits for the write.
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            // SAFETY: one byte to a pipe of ours.
            unsafe { libc::write(w, b"x".as_ptr().cast(), 1) };
        });
        assert_eq!(interrupts.run(1, pid, read).0, 1, "not interrupted without a signal");
        writer.join().unwrap();
        // SIGUSR2 pending in the stopped shell, which traps it.
        // SAFETY: kill of our own child.
        assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGUSR2) }, 0);
        let start = std::time::Instant::now();
        let (n, errno) = interrupts.run(2, pid, read);
        assert_eq!((n, errno), (-1, Some(libc::EINTR)), "interrupted");
        assert!(start.elapsed() < Duration::from_secs(2));
        assert!(interrupts.lock().is_empty(), "both calls left the registry");
        // A caller that is gone: interrupted too.
        drop(shell);
        let start = std::time::Instant::now();
        assert_eq!(interrupts.run(3, pid, read), (-1, Some(libc::EINTR)), "interrupted: its caller is gone");
        assert!(start.elapsed() < Duration::from_secs(2));
        // SAFETY: our pipe's ends.
        unsafe {
            libc::close(r);
            libc::close(w);
        }
    }
}
