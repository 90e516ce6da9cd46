//! Variant (b): the least a fanotify permission listener can do. A child
//! process with one thread that polls the group, reads events and answers
//! `FAN_ALLOW` to each at once, then closes the event's file descriptor.
//!
//! Why a process and not a thread of the benchmark: a real daemon is
//! another process, so every event costs a switch to another address
//! space and back; a thread of the client would make the floor look lower
//! than any daemon can reach.
//!
//! Why fork without exec: the child runs only system calls (poll, read,
//! write, close, clock_gettime, _exit) on memory prepared before the fork,
//! which is what is allowed after fork in a multithreaded process, and it
//! needs no binary of its own. It ends on SIGTERM (by pid, from
//! [`Responder::stop`]), when the thread that started it dies
//! (PR_SET_PDEATHSIG), at its own deadline, or on any error; the kernel
//! then allows whatever was pending.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

use super::process::OwnedPid;

const META_LEN: usize = std::mem::size_of::<libc::fanotify_event_metadata>();
const PERM_MASK: u64 = libc::FAN_OPEN_PERM | libc::FAN_OPEN_EXEC_PERM;

/// The running responder.
pub struct Responder {
    proc: OwnedPid,
}

fn now_ns() -> i128 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; clock_gettime is
    // async-signal-safe.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec)
}

/// The child's whole life. Only system calls; never returns.
///
/// # Safety
/// Must be called in a freshly forked child, with `fan` an open fanotify
/// group and `buf` valid for writes of `len` bytes.
unsafe fn serve(fan: libc::c_int, buf: *mut u8, len: usize, deadline_ns: i128) -> ! {
    // Keep nothing of the parent's open files but the group.
    // SAFETY (whole function): raw system calls on valid fds and on `buf`,
    // which the caller guarantees; no allocation, no lock.
    unsafe {
        if fan > 3 {
            libc::syscall(libc::SYS_close_range, 3u32, (fan - 1) as u32, 0u32);
        }
        libc::syscall(libc::SYS_close_range, (fan + 1) as u32, u32::MAX, 0u32);
        let mut pfd = libc::pollfd { fd: fan, events: libc::POLLIN, revents: 0 };
        loop {
            if now_ns() >= deadline_ns {
                libc::_exit(3);
            }
            let r = libc::poll(&mut pfd, 1, 100);
            if r < 0 {
                if *libc::__errno_location() == libc::EINTR {
                    continue;
                }
                libc::_exit(4);
            }
            if r == 0 {
                continue;
            }
            let n = libc::read(fan, buf.cast(), len);
            if n < 0 {
                let e = *libc::__errno_location();
                if e == libc::EINTR || e == libc::EAGAIN {
                    continue;
                }
                libc::_exit(5);
            }
            let n = n as usize;
            let mut off = 0usize;
            while off + META_LEN <= n {
                let meta: libc::fanotify_event_metadata = std::ptr::read_unaligned(buf.add(off).cast());
                if meta.vers != libc::FANOTIFY_METADATA_VERSION {
                    libc::_exit(6);
                }
                let ev_len = meta.event_len as usize;
                if ev_len < META_LEN {
                    break;
                }
                if meta.fd >= 0 {
                    // Answer first, then anything else.
                    if meta.mask & PERM_MASK != 0 {
                        let resp = libc::fanotify_response { fd: meta.fd, response: libc::FAN_ALLOW };
                        let w = libc::write(
                            fan,
                            (&resp as *const libc::fanotify_response).cast(),
                            std::mem::size_of::<libc::fanotify_response>(),
                        );
                        if w < 0 {
                            libc::_exit(7);
                        }
                    }
                    libc::close(meta.fd);
                }
                off += ev_len;
            }
        }
    }
}

impl Responder {
    /// Starts the responder and marks the mount of `mount_dir` (opens and
    /// execs), in the caller's namespace. The child exits by itself after
    /// `max_life`.
    pub fn start(mount_dir: &Path, max_life: Duration) -> Result<Responder, String> {
        let path = CString::new(mount_dir.as_os_str().as_bytes()).map_err(|_| "path with a NUL byte".to_string())?;
        // SAFETY: fanotify_init takes no pointers.
        let raw = unsafe {
            libc::fanotify_init(
                libc::FAN_CLASS_CONTENT | libc::FAN_CLOEXEC,
                (libc::O_RDONLY | libc::O_LARGEFILE | libc::O_CLOEXEC) as libc::c_uint,
            )
        };
        if raw < 0 {
            return Err(format!("fanotify_init: {}", std::io::Error::last_os_error()));
        }
        // SAFETY: `raw` is a new fd owned by nobody else.
        let fan = unsafe { OwnedFd::from_raw_fd(raw) };
        // u64 storage keeps the event records aligned.
        let mut storage = vec![0u64; 8192];
        let len = storage.len() * 8;
        let buf = storage.as_mut_ptr().cast::<u8>();
        let deadline = now_ns() + i128::try_from(max_life.as_nanos()).unwrap_or(i128::MAX / 2);
        // SAFETY: getpid takes no pointers.
        let parent = unsafe { libc::getpid() };
        // SAFETY: the child only calls async-signal-safe functions (prctl,
        // getppid, and the system calls of `serve`) before `_exit`; the
        // parent continues normally.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(format!("fork: {}", std::io::Error::last_os_error()));
        }
        if pid == 0 {
            // SAFETY: in the forked child: prctl/getppid take no pointers;
            // `serve` gets the group and the buffer prepared before fork.
            unsafe {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
                if libc::getppid() != parent {
                    libc::_exit(2);
                }
                serve(fan.as_raw_fd(), buf, len, deadline);
            }
        }
        let proc = OwnedPid::new(pid);
        // SAFETY: `path` is a valid NUL-terminated string; AT_FDCWD resolves
        // it in this thread's (private) namespace.
        let rc = unsafe {
            libc::fanotify_mark(
                fan.as_raw_fd(),
                libc::FAN_MARK_ADD | libc::FAN_MARK_MOUNT,
                PERM_MASK,
                libc::AT_FDCWD,
                path.as_ptr(),
            )
        };
        if rc != 0 {
            // `proc` is dropped: terminated and reaped.
            return Err(format!("fanotify_mark {}: {}", mount_dir.display(), std::io::Error::last_os_error()));
        }
        // Only the child holds the group from here: when it exits, the
        // group closes and the kernel allows anything pending.
        drop(fan);
        drop(storage);
        Ok(Responder { proc })
    }

    pub fn pid(&self) -> libc::pid_t {
        self.proc.pid()
    }

    /// `Some(how)` if it has exited.
    pub fn exited(&self) -> Option<String> {
        self.proc.exited()
    }

    /// Stops it (SIGTERM by pid) and reaps it.
    pub fn stop(&mut self) -> String {
        self.proc.terminate(Duration::from_secs(2))
    }
}
