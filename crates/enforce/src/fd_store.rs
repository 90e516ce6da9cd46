//! Keeping the supervised calls' listeners (crate::supervisor) across a
//! daemon restart, in systemd's file descriptor store: each listener is
//! handed over when it comes (`sd_notify` `FDSTORE=1`, named
//! [`NAME`]), as is the journal of the calls in flight
//! (crate::calls_in_flight), and the next daemon gets them back at its start
//! (`LISTEN_FDS`, `LISTEN_FDNAMES`), as sd_notify(3) and
//! sd_listen_fds(3) describe. systemd drops a stored listener by itself
//! once every process under it has exited (it polls stored descriptors
//! and removes those that hang up).
//!
//! Why: a listener lives only as long as someone holds it. Without the
//! store, the calls of processes launched before a restart fail with
//! `ENOSYS` for good (closed, not open, but their services break). The
//! unit (contrib/rampartd.service) sets `NotifyAccess=main` and
//! `FileDescriptorStoreMax=`; without `NOTIFY_SOCKET` nothing is kept.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

/// The name the listeners are stored under.
pub const NAME: &str = "rampart-supervise";
/// `SD_LISTEN_FDS_START`.
const LISTEN_FDS_START: i32 = 3;

/// Hands a copy of `fd` to the service manager's store under `name`
/// ([`NAME`] for a listener); `Ok(false)` without one (`NOTIFY_SOCKET`
/// unset).
pub fn store(fd: BorrowedFd<'_>, name: &str) -> io::Result<bool> {
    let Some(socket) = std::env::var_os("NOTIFY_SOCKET") else { return Ok(false) };
    send_with_fd(&socket, format!("FDSTORE=1\nFDNAME={name}\n").as_bytes(), fd)?;
    Ok(true)
}

/// The `sockaddr_un` of a `NOTIFY_SOCKET` value (`@` for the abstract
/// namespace) and its length.
fn address(socket: &OsString) -> io::Result<(libc::sockaddr_un, libc::socklen_t)> {
    // SAFETY: sockaddr_un is plain data; all zeroes is valid.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let mut bytes = socket.as_bytes().to_vec();
    if bytes.first() == Some(&b'@') {
        bytes[0] = 0;
    }
    if bytes.is_empty() || bytes.len() >= addr.sun_path.len() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "NOTIFY_SOCKET: not a socket address"));
    }
    for (dst, &b) in addr.sun_path.iter_mut().zip(&bytes) {
        *dst = b as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + bytes.len();
    Ok((addr, len as libc::socklen_t))
}

fn send_with_fd(socket: &OsString, message: &[u8], fd: BorrowedFd<'_>) -> io::Result<()> {
    let (mut addr, addr_len) = address(socket)?;
    // SAFETY: no pointers.
    let raw = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: just created, ours alone.
    let sock = unsafe { OwnedFd::from_raw_fd(raw) };
    let mut iov = libc::iovec { iov_base: message.as_ptr() as *mut libc::c_void, iov_len: message.len() };
    // Room for one descriptor, aligned for cmsghdr.
    let mut control = [0u64; 4];
    // SAFETY: msghdr is plain data; all zeroes is valid.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_name = (&mut addr as *mut libc::sockaddr_un).cast();
    msg.msg_namelen = addr_len;
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    // SAFETY: CMSG_SPACE computes a size from a constant.
    msg.msg_controllen = unsafe { libc::CMSG_SPACE(std::mem::size_of::<libc::c_int>() as u32) } as _;
    // SAFETY: the control buffer holds one cmsghdr with one int (its
    // size was computed by CMSG_SPACE above and fits in `control`).
    unsafe {
        let h = libc::CMSG_FIRSTHDR(&msg);
        (*h).cmsg_level = libc::SOL_SOCKET;
        (*h).cmsg_type = libc::SCM_RIGHTS;
        (*h).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<libc::c_int>() as u32) as _;
        libc::CMSG_DATA(h).cast::<libc::c_int>().write_unaligned(fd.as_raw_fd());
    }
    // SAFETY: `msg` points at live `addr`, `iov` (over `message`) and
    // `control`.
    if unsafe { libc::sendmsg(sock.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// What a previous daemon stored.
#[derive(Default)]
pub struct Stored {
    /// The listeners ([`NAME`]).
    pub listeners: Vec<OwnedFd>,
    /// Its journals of calls in flight (crate::calls_in_flight): one,
    /// or more if daemons before it stored one each.
    pub journals: Vec<OwnedFd>,
}

/// What a previous daemon stored, given back to this process at its
/// start; the `LISTEN_*` variables are removed. Descriptors of other
/// names are left alone.
pub fn take_stored() -> Stored {
    let var = |name: &str| std::env::var(name).ok();
    let (Some(pid), Some(count)) = (var("LISTEN_PID"), var("LISTEN_FDS")) else { return Stored::default() };
    let names = var("LISTEN_FDNAMES").unwrap_or_default();
    for v in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] {
        // Read once, at the start, before any thread reads the
        // environment.
        std::env::remove_var(v);
    }
    if pid.parse::<u32>().ok() != Some(std::process::id()) {
        return Stored::default();
    }
    let count = count.parse::<i32>().unwrap_or(0).clamp(0, 65536);
    let names: Vec<&str> = names.split(':').collect();
    let mut out = Stored::default();
    for i in 0..count {
        let list = match names.get(i as usize) {
            Some(&NAME) => &mut out.listeners,
            Some(&crate::calls_in_flight::NAME) => &mut out.journals,
            _ => continue,
        };
        let fd = LISTEN_FDS_START + i;
        // SAFETY: the service manager passed descriptor `fd` to this
        // process under our name; nothing else in it owns the number.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: F_SETFD on an open descriptor: not inherited by what
        // the daemon might run.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
        list.push(owned);
    }
    out
}
