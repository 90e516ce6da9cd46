//! System calls made in another process, injected with ptrace.
//!
//! Why: part of what an exec transition resets is kernel state that only
//! the process itself can change: its blocked and ignored signals, its
//! interval timers, its parent-death signal (crate::signal_state). The
//! daemon holds the new image frozen before its first instruction
//! (crate::cgroups), attaches to it (`PTRACE_SEIZE`: root with
//! `CAP_SYS_PTRACE`, and the daemon carries no Landlock domain) and stops
//! it (`PTRACE_INTERRUPT`: the freezer's trap gives way to a ptrace stop,
//! which still counts as frozen). Each call then writes `syscall; int3`
//! over the bytes at the instruction pointer, sets the registers and lets
//! the process run those two instructions; the trap stops it again with
//! the result in `rax`. At the end the bytes and registers go back as
//! they were and the process is detached: it resumes where it stood.
//!
//! Signals the process dequeues on its way to the stub are reported to
//! the tracer first; they are discarded and listed
//! ([`Tracee::release`]), and the caller decides whether to send them
//! again. Anything unexpected is an error; a [`Tracee`] dropped without
//! [`Tracee::release`] is killed (its code may be changed), and reaped
//! as its tracer so its parent is told. 64-bit x86 images only.
//!
//! Every ptrace request must come from the thread that attached: a
//! [`Tracee`] is used by one thread (it is not `Send`).

use std::fs::{File, OpenOptions};
use std::io;
use std::marker::PhantomData;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

/// `syscall; int3`.
const STUB: [u8; 3] = [0x0f, 0x05, 0xcc];
/// The 64-bit user code segment selector (`__USER_CS`).
const USER_CS_64: u64 = 0x33;
/// Bytes of zeros a call may point at ([`Tracee::zeros`]).
pub const ZEROS: usize = 64;
/// Where they are: this far below the stack pointer, past the red zone,
/// in the stack mapping the exec made (at least 128 KiB below it).
const SCRATCH_BELOW_SP: u64 = 1024;
/// How long the process may take to reach each stop.
const STOP_WITHIN: Duration = Duration::from_secs(2);
/// How long [`Tracee::wait`] yields between polls before it sleeps: a
/// stop takes microseconds, and a sleep costs a timer's slack (50 µs and
/// more) per call, which the process waits for frozen.
const YIELD_FOR: Duration = Duration::from_millis(10);
/// The `si_code` of the SIGTRAP an `int3` raises.
const SI_KERNEL: i32 = 0x80;

/// A process attached and stopped (see the module docs).
pub struct Tracee {
    pid: libc::pid_t,
    mem: File,
    saved: libc::user_regs_struct,
    /// The bytes the stub replaced, while it is written.
    code: Option<[u8; STUB.len()]>,
    /// The scratch area's address and former bytes, while zeroed.
    scratch: Option<(u64, [u8; ZEROS])>,
    discarded: Vec<i32>,
    attached: bool,
    /// Bound to the attaching thread.
    _thread: PhantomData<*const ()>,
}

/// What `waitpid` reported.
enum Stop {
    Gone,
    /// A stop: the signal, and the ptrace event (0: a signal-delivery stop).
    Stopped {
        sig: i32,
        event: i32,
    },
}

fn ptrace(request: libc::c_uint, pid: libc::pid_t, addr: usize, data: usize) -> io::Result<libc::c_long> {
    // SAFETY: each request below passes integers, or in `data` a pointer
    // to a live buffer of the size the request writes or reads.
    let rc = unsafe { libc::ptrace(request, pid, addr, data) };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(rc)
}

impl Tracee {
    /// Attaches to process `pid` and stops it (module docs).
    pub fn stop(pid: u32) -> io::Result<Tracee> {
        let pid = pid as libc::pid_t;
        ptrace(libc::PTRACE_SEIZE, pid, 0, libc::PTRACE_O_EXITKILL as usize)?;
        let mem = match OpenOptions::new().read(true).write(true).open(format!("/proc/{pid}/mem")) {
            Ok(mem) => mem,
            Err(e) => {
                let _ = ptrace(libc::PTRACE_DETACH, pid, 0, 0);
                return Err(e);
            }
        };
        // SAFETY: user_regs_struct is plain integers; all zeros is valid.
        let saved = unsafe { std::mem::zeroed() };
        let mut t = Tracee {
            pid,
            mem,
            saved,
            code: None,
            scratch: None,
            discarded: Vec::new(),
            attached: true,
            _thread: PhantomData,
        };
        ptrace(libc::PTRACE_INTERRUPT, pid, 0, 0)?;
        let deadline = Instant::now() + STOP_WITHIN;
        loop {
            match t.wait(deadline)? {
                Stop::Gone => return Err(io::Error::from_raw_os_error(libc::ESRCH)),
                Stop::Stopped { event: libc::PTRACE_EVENT_STOP, .. } => break,
                Stop::Stopped { sig, event: 0 } => {
                    t.discarded.push(sig);
                    t.resume()?;
                }
                Stop::Stopped { .. } => t.resume()?,
            }
        }
        t.saved = t.regs()?;
        if t.saved.cs != USER_CS_64 {
            return Err(io::Error::other("not a 64-bit image: no system call is injected into it"));
        }
        Ok(t)
    }

    /// Sets its blocked signals (bit `n - 1`: signal `n`).
    pub fn set_blocked(&self, mask: u64) -> io::Result<()> {
        ptrace(libc::PTRACE_SETSIGMASK, self.pid, std::mem::size_of::<u64>(), &mask as *const u64 as usize)?;
        Ok(())
    }

    /// The address of [`ZEROS`] zero bytes in its memory, until release.
    pub fn zeros(&mut self) -> io::Result<u64> {
        if let Some((at, _)) = self.scratch {
            return Ok(at);
        }
        let at = (self.saved.rsp - SCRATCH_BELOW_SP) & !15;
        let mut old = [0u8; ZEROS];
        self.mem.read_exact_at(&mut old, at)?;
        self.scratch = Some((at, old));
        self.mem.write_all_at(&[0u8; ZEROS], at)?;
        Ok(at)
    }

    /// Makes system call `nr` with `args` in the process; its return
    /// value, or the error it returned.
    pub fn syscall(&mut self, nr: libc::c_long, args: &[u64]) -> io::Result<u64> {
        let entry = self.saved.rip;
        if self.code.is_none() {
            let mut old = [0u8; STUB.len()];
            self.mem.read_exact_at(&mut old, entry)?;
            self.code = Some(old);
            self.mem.write_all_at(&STUB, entry)?;
        }
        let arg = |i: usize| args.get(i).copied().unwrap_or(0);
        let mut regs = self.saved;
        regs.rip = entry;
        regs.rax = nr as u64;
        // No system call to restart when it resumes.
        regs.orig_rax = u64::MAX;
        (regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9) = (arg(0), arg(1), arg(2), arg(3), arg(4), arg(5));
        ptrace(libc::PTRACE_SETREGS, self.pid, 0, &regs as *const _ as usize)?;
        self.resume()?;
        let deadline = Instant::now() + STOP_WITHIN;
        let trapped = entry + STUB.len() as u64;
        loop {
            match self.wait(deadline)? {
                Stop::Gone => return Err(io::Error::from_raw_os_error(libc::ESRCH)),
                Stop::Stopped { sig, event: 0 } => {
                    let now = self.regs()?;
                    if now.rip == trapped {
                        // Only the stub's own trap may stop it there.
                        if sig != libc::SIGTRAP || self.si_code()? != SI_KERNEL {
                            return Err(io::Error::other(format!("signal {sig} where the stub's trap was expected")));
                        }
                        let rc = now.rax as i64;
                        if (-4095..0).contains(&rc) {
                            return Err(io::Error::from_raw_os_error(-rc as i32));
                        }
                        return Ok(now.rax);
                    }
                    self.discarded.push(sig);
                    self.resume()?;
                }
                Stop::Stopped { .. } => self.resume()?,
            }
        }
    }

    /// Puts back its code, memory and registers and detaches; returns
    /// the signals discarded meanwhile, in the order they came.
    pub fn release(mut self) -> io::Result<Vec<i32>> {
        if let Some(old) = self.code.take() {
            self.mem.write_all_at(&old, self.saved.rip)?;
        }
        if let Some((at, old)) = self.scratch.take() {
            self.mem.write_all_at(&old, at)?;
        }
        ptrace(libc::PTRACE_SETREGS, self.pid, 0, &self.saved as *const _ as usize)?;
        ptrace(libc::PTRACE_DETACH, self.pid, 0, 0)?;
        self.attached = false;
        Ok(std::mem::take(&mut self.discarded))
    }

    fn resume(&self) -> io::Result<()> {
        ptrace(libc::PTRACE_CONT, self.pid, 0, 0).map(drop)
    }

    fn regs(&self) -> io::Result<libc::user_regs_struct> {
        // SAFETY: as in `stop`.
        let mut regs: libc::user_regs_struct = unsafe { std::mem::zeroed() };
        ptrace(libc::PTRACE_GETREGS, self.pid, 0, &mut regs as *mut _ as usize)?;
        Ok(regs)
    }

    fn si_code(&self) -> io::Result<i32> {
        // SAFETY: siginfo_t is plain data; all zeros is valid.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        ptrace(libc::PTRACE_GETSIGINFO, self.pid, 0, &mut info as *mut _ as usize)?;
        Ok(info.si_code)
    }

    /// The next stop (or its end), polled until `deadline`.
    fn wait(&self, deadline: Instant) -> io::Result<Stop> {
        let sleep_after = Instant::now() + YIELD_FOR;
        loop {
            let mut status = 0;
            // SAFETY: waitpid writes one int into `status`.
            let rc = unsafe { libc::waitpid(self.pid, &mut status, libc::__WALL | libc::WNOHANG) };
            if rc == -1 {
                return Err(io::Error::last_os_error());
            }
            if rc == self.pid {
                if libc::WIFSTOPPED(status) {
                    return Ok(Stop::Stopped { sig: libc::WSTOPSIG(status), event: status >> 16 });
                }
                return Ok(Stop::Gone);
            }
            let now = Instant::now();
            if now > deadline {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "the process did not stop in time"));
            }
            if now < sleep_after {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(100));
            }
        }
    }
}

impl Drop for Tracee {
    /// Not released: its code or registers may be changed, so it ends.
    fn drop(&mut self) {
        if !self.attached {
            return;
        }
        // SAFETY: kill takes a pid and a signal; the process is attached
        // to this thread, so the pid is still its.
        unsafe { libc::kill(self.pid, libc::SIGKILL) };
        let deadline = Instant::now() + STOP_WITHIN;
        // Reaped by its tracer, so that its parent is told.
        while let Ok(Stop::Stopped { .. }) = self.wait(deadline) {
            let _ = self.resume();
        }
    }
}
