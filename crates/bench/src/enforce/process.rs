//! The listener processes the benchmark starts, ended by their pid and
//! only by it, on every path out (drop included), and a watchdog that
//! unblocks a stuck round.
//!
//! Why by pid, carefully: a pid may be signalled only while it is still
//! ours, that is until it has been reaped. Liveness checks therefore use
//! `waitid(WNOWAIT)`, which leaves the child reapable, and reaping happens
//! in one place ([`OwnedPid::terminate`]) after the watchdog is disarmed.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A child process of this thread that has not been reaped yet.
#[derive(Debug)]
pub struct OwnedPid {
    pid: libc::pid_t,
    reaped: bool,
}

impl OwnedPid {
    /// Takes ownership of `pid`, a child of the calling process that no
    /// one else will wait for.
    pub fn new(pid: libc::pid_t) -> OwnedPid {
        OwnedPid { pid, reaped: false }
    }

    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// `None` while running, otherwise how it ended (not reaped).
    pub fn exited(&self) -> Option<String> {
        if self.reaped {
            return Some("already stopped".into());
        }
        // SAFETY: siginfo_t is plain data; all-zero is a valid value.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable siginfo_t; WNOWAIT leaves the
        // child reapable, WNOHANG makes the call return at once.
        let rc = unsafe {
            libc::waitid(libc::P_PID, self.pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT)
        };
        if rc != 0 {
            return Some(format!("waitid: {}", std::io::Error::last_os_error()));
        }
        // SAFETY: after a successful waitid, si_pid is set (0 when no child
        // changed state), and si_status is valid when si_pid is not 0.
        let (pid, status, code) = unsafe { (info.si_pid(), info.si_status(), info.si_code) };
        if pid == 0 {
            return None;
        }
        Some(if code == libc::CLD_EXITED {
            format!("exited with status {status}")
        } else {
            format!("killed by signal {status}")
        })
    }

    /// SIGTERM, up to `grace` for it to exit, then SIGKILL; reaps it.
    /// Returns how it ended.
    pub fn terminate(&mut self, grace: Duration) -> String {
        if self.reaped {
            return "already stopped".into();
        }
        // SAFETY: kill takes no pointers; the pid is our unreaped child.
        unsafe { libc::kill(self.pid, libc::SIGTERM) };
        let start = Instant::now();
        loop {
            if let Some(s) = self.reap(libc::WNOHANG) {
                return s;
            }
            if start.elapsed() > grace {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        // SAFETY: as above; the child has not been reaped.
        unsafe { libc::kill(self.pid, libc::SIGKILL) };
        self.reap(0).unwrap_or_else(|| "lost".into())
    }

    fn reap(&mut self, flags: libc::c_int) -> Option<String> {
        let mut status: libc::c_int = 0;
        loop {
            // SAFETY: `status` is a valid, writable int.
            let rc = unsafe { libc::waitpid(self.pid, &mut status, flags) };
            if rc == self.pid {
                self.reaped = true;
                return Some(if libc::WIFEXITED(status) {
                    format!("exited with status {}", libc::WEXITSTATUS(status))
                } else {
                    format!("killed by signal {}", libc::WTERMSIG(status))
                });
            }
            if rc == 0 {
                return None;
            }
            let err = std::io::Error::last_os_error();
            if err.kind() != std::io::ErrorKind::Interrupted {
                self.reaped = true;
                return Some(format!("waitpid: {err}"));
            }
        }
    }
}

impl Drop for OwnedPid {
    fn drop(&mut self) {
        if !self.reaped {
            let _ = self.terminate(Duration::from_secs(2));
        }
    }
}

/// Starts `cmd` in the caller's namespace, output to `log`, killed if the
/// starting thread dies (PR_SET_PDEATHSIG).
pub fn spawn(mut cmd: Command, log: &Path) -> Result<OwnedPid, String> {
    let out = std::fs::File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| format!("cannot dup {}: {e}", log.display()))?;
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    // SAFETY: the closure runs between fork and exec and only makes the
    // async-signal-safe prctl and getppid system calls.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() == 1 {
                return Err(std::io::Error::other("parent already gone"));
            }
            Ok(())
        });
    }
    let child = cmd.spawn().map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))?;
    let pid = libc::pid_t::try_from(child.id()).map_err(|_| "pid out of range".to_string())?;
    // `Child` neither kills nor waits on drop; `OwnedPid` does both.
    drop(child);
    Ok(OwnedPid::new(pid))
}

/// Starts listener `name` (`cmd`, output to `log`) and waits, bounded by
/// `limit`, until `ready()`; then checks it marked nothing but the
/// benchmark tmpfs. Stops it on any failure. Returns it and how long it
/// took to get ready.
pub fn start_listener(
    name: &str,
    cmd: Command,
    log: &Path,
    limit: Duration,
    sandbox: &super::namespace::Sandbox,
    ready: impl Fn() -> bool,
) -> Result<(OwnedPid, Duration), String> {
    let t0 = Instant::now();
    let mut proc = spawn(cmd, log).map_err(|e| format!("{name} not available: {e}"))?;
    while !ready() {
        if let Some(how) = proc.exited() {
            proc.terminate(Duration::from_secs(1));
            return Err(format!("{name} {how} before it was ready: {}", log_tail(log, 6)));
        }
        if t0.elapsed() > limit {
            proc.terminate(Duration::from_secs(2));
            return Err(format!("{name} not ready after {} s: {}", limit.as_secs(), log_tail(log, 6)));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let took = t0.elapsed();
    if let Err(e) = sandbox.confined(proc.pid(), Duration::from_secs(2)) {
        proc.terminate(Duration::from_secs(2));
        return Err(format!("{name} not confined to the benchmark tmpfs, stopped: {e}"));
    }
    Ok((proc, took))
}

/// The last `lines` lines of a log file, for error messages.
pub fn log_tail(log: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join(" | ")
}

/// Kills a listener (SIGKILL, by pid) if a round runs past its limit, so
/// that an open or exec blocked on an unanswered permission event gets
/// its answer (the kernel allows pending events of a closed group) and
/// the round ends with an error instead of hanging.
pub struct Watchdog {
    state: Arc<(Mutex<(bool, bool)>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    /// Arms the watchdog for `pid` (our unreaped child).
    pub fn arm(pid: libc::pid_t, limit: Duration) -> Watchdog {
        let state = Arc::new((Mutex::new((false, false)), Condvar::new()));
        let s = Arc::clone(&state);
        let thread = std::thread::Builder::new()
            .name("enforce-watchdog".into())
            .spawn(move || {
                let (lock, cv) = &*s;
                let guard = lock.lock().unwrap_or_else(PoisonError::into_inner);
                let (mut guard, _) =
                    cv.wait_timeout_while(guard, limit, |st| !st.0).unwrap_or_else(PoisonError::into_inner);
                if !guard.0 {
                    // SAFETY: kill takes no pointers; the pid is not reaped
                    // before the watchdog is disarmed (under this lock).
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    guard.1 = true;
                }
            })
            .ok();
        Watchdog { state, thread }
    }

    /// Disarms it; true if it had fired.
    pub fn disarm(mut self) -> bool {
        self.stop()
    }

    fn stop(&mut self) -> bool {
        let (lock, cv) = &*self.state;
        let fired = {
            let mut g = lock.lock().unwrap_or_else(PoisonError::into_inner);
            g.0 = true;
            g.1
        };
        cv.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        fired
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop();
    }
}
