//! Supervised opens of a FIFO for writing (crate::supervised_open) that
//! must wait for a reader, as the kernel's open waits. A worker cannot
//! wait (every supervised call would queue behind it, and a caller could
//! hold the workers with FIFOs no one reads), so such an open, once
//! checked, goes to this module's one thread, which retries it without
//! blocking (`O_NONBLOCK`: `ENXIO` while no reader has it open) until a
//! reader comes, the caller goes (the notification is no longer valid:
//! killed), or [`MAX_WAITING`] opens already wait (`EAGAIN`).
//!
//! Retries back off from 0.1 ms to [`MAX_PAUSE`]: a writer opens the FIFO
//! at most that long after its reader did (the kernel wakes it at once).
//! The caller's wait is killable only, as every supervised call's
//! (`SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV`), where the kernel's open
//! would be interrupted by a signal it catches: so every
//! [`SIGNALS_EVERY`] the callers' pending signals are read (at most
//! [`SIGNAL_CHECKS`] per round), and one it catches ends its open as the
//! kernel's `wait_for_partner` ends it (`ERESTARTSYS`: made again after a
//! handler with `SA_RESTART`, `EINTR` otherwise; crate::call_interrupts).

use std::os::fd::{AsFd, OwnedFd};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::supervised_open;
use crate::thread_creds::Creds;

/// Opens waiting at most; more are refused with `EAGAIN`.
pub const MAX_WAITING: usize = 1024;
/// The longest pause between two rounds of retries.
const MAX_PAUSE: Duration = Duration::from_millis(5);
const FIRST_PAUSE: Duration = Duration::from_micros(100);
/// How often a waiting open's caller is looked at for a signal.
const SIGNALS_EVERY: Duration = Duration::from_millis(10);
/// Callers looked at per round at most (each a read of its status).
const SIGNAL_CHECKS: usize = 64;

/// One checked open waiting for a reader.
pub struct Wait {
    pub listener: Arc<OwnedFd>,
    pub id: u64,
    /// The calling thread.
    pub caller: u32,
    /// When its pending signals were last read.
    pub signals_checked: Instant,
    /// The FIFO (`O_PATH`), checked.
    pub object: OwnedFd,
    pub flags: i32,
    pub creds: Creds,
    pub cloexec: bool,
    /// The call written down (crate::calls_in_flight), held for its
    /// drop: cleared when the wait ends.
    pub _entry: Option<crate::calls_in_flight::Entry>,
}

/// Where workers hand waiting opens.
#[derive(Clone)]
pub struct Waits(SyncSender<Wait>);

impl Waits {
    /// Hands `w` to the waiting thread; `Err(EAGAIN)` if too many wait.
    pub fn wait(&self, w: Wait) -> Result<(), i32> {
        match self.0.try_send(w) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => Err(libc::EAGAIN),
            Err(TrySendError::Disconnected(_)) => Err(libc::ENOSYS),
        }
    }
}

/// Starts the waiting thread; `become_worker` makes it one (its own
/// `fs_struct`, the launcher's ruleset) and returns how it gets back to
/// the daemon's credentials after acting as a caller.
pub fn start<B>(become_worker: impl FnOnce() -> std::io::Result<B> + Send + 'static) -> std::io::Result<Waits>
where
    B: Fn() -> std::io::Result<()>,
{
    let (tx, rx) = sync_channel(MAX_WAITING);
    std::thread::Builder::new().name("fifo opens".into()).spawn(move || {
        // Its opens are answered at once (crate::own_threads).
        let _registered = crate::own_threads::register_current();
        match become_worker() {
            Ok(back) => serve(&rx, &back),
            Err(e) => eprintln!("rampartd: supervisor: the FIFO-open thread cannot start ({e}): such opens fail"),
        }
    })?;
    Ok(Waits(tx))
}

fn serve(rx: &Receiver<Wait>, back: &dyn Fn() -> std::io::Result<()>) {
    let mut waiting: Vec<Wait> = Vec::new();
    let mut pause = FIRST_PAUSE;
    loop {
        let next = if waiting.is_empty() {
            rx.recv().map_err(|_| RecvTimeoutError::Disconnected)
        } else {
            rx.recv_timeout(pause)
        };
        match next {
            Ok(w) => {
                waiting.push(w);
                pause = FIRST_PAUSE;
            }
            Err(RecvTimeoutError::Timeout) => pause = (pause * 2).min(MAX_PAUSE),
            Err(RecvTimeoutError::Disconnected) => return,
        }
        let mut checks = SIGNAL_CHECKS;
        waiting.retain_mut(|w| !(interrupted(w, &mut checks) || try_open(w)));
        if back().is_err() {
            eprintln!("rampartd: supervisor: the FIFO-open thread cannot return to the daemon's credentials; it stops");
            for w in waiting.drain(..) {
                crate::supervisor::respond(w.listener.as_fd(), w.id, Err(libc::EIO));
            }
            return;
        }
    }
}

/// Whether `w`'s caller has a signal it catches pending (looked at once
/// every [`SIGNALS_EVERY`], while `checks` last): then its open is
/// answered as the kernel's interrupted one.
fn interrupted(w: &mut Wait, checks: &mut usize) -> bool {
    if *checks == 0 || w.signals_checked.elapsed() < SIGNALS_EVERY {
        return false;
    }
    *checks -= 1;
    w.signals_checked = Instant::now();
    if !crate::call_interrupts::signal_to_handle(w.caller) {
        return false;
    }
    crate::supervisor::respond(w.listener.as_fd(), w.id, Err(crate::call_interrupts::ERESTARTSYS));
    true
}

/// One try of `w`: true once it is answered (opened, failed, or its
/// caller gone).
fn try_open(w: &Wait) -> bool {
    if !crate::supervisor::pending(w.listener.as_fd(), w.id) {
        return true;
    }
    if let Err(e) = w.creds.assume() {
        crate::supervisor::respond(w.listener.as_fd(), w.id, Err(e.raw_os_error().unwrap_or(libc::EPERM)));
        return true;
    }
    match supervised_open::reopen(w.object.as_fd(), w.flags) {
        Err(libc::ENXIO) => false,
        Err(errno) => {
            crate::supervisor::respond(w.listener.as_fd(), w.id, Err(errno));
            true
        }
        Ok(fd) => {
            if let Err(errno) = supervised_open::install(w.listener.as_fd(), w.id, fd.as_fd(), w.cloexec) {
                crate::supervisor::respond(w.listener.as_fd(), w.id, Err(errno));
            }
            true
        }
    }
}
