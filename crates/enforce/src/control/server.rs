//! The control socket server: one thread that accepts connections on a
//! Unix stream socket, checks who is calling, reads requests through
//! [`protocol`](super::protocol) and calls the [`ControlHandler`].
//!
//! # Why peer credentials, per request
//!
//! Every op changes what the machine enforces (permissive mode, booleans,
//! a new policy, the domain a process will run in), so only root may use
//! them, and root only as far as its domain allows
//! ([`ControlHandler::authorize`]). The socket file is mode 0600, but a
//! file mode is only a first fence: it is briefly wider between `bind` and
//! `chmod`, a descriptor can be passed to another process, and an
//! administrator may loosen it. `SO_PEERCRED` says who connected (checked:
//! uid 0 or an error reply and close), but it is fixed at `connect`: a
//! socket connected as root and then kept across `setuid`, or passed to
//! another process, would keep root's rights. So the listening socket has
//! `SO_PASSPIDFD` (Linux 6.5): the kernel attaches to every message a
//! pidfd of the process that sent it (`SCM_PIDFD`), which the client
//! cannot forge, and each request is authorized for the processes that
//! wrote its line, as they are when it is served (their effective uid and
//! cgroup, read through the pidfd). For the same reason the pid that
//! `exec-context` applies to is the sender's, never a number in the
//! message: a client can only ask for its own next exec.
//!
//! # Why timeouts and limits
//!
//! Clients are served one at a time on the control thread, which keeps the
//! handler single-threaded and the daemon simple. In exchange no client may
//! hold the thread for long: each request line must arrive complete within
//! [`ServerConfig::line_timeout`] of the server starting to wait for it
//! (a client trickling one byte a second gains nothing), a connection lives
//! at most [`ServerConfig::connection_timeout`] and carries at most
//! [`ServerConfig::max_requests`] requests, and replies are written with a
//! timeout so a client that never reads cannot block the server either.
//! Malformed input costs the sender an error reply; the thread goes on
//! serving the next client. A handler that panics is caught, answered with
//! an error, and the server keeps serving.
//!
//! # Shutdown
//!
//! The thread waits in `poll(2)` on the listening socket and on one end of
//! a socket pair; [`ControlServer::shutdown`] (or dropping the server)
//! closes the other end, which wakes the thread, then joins it and removes
//! the socket file (only if it is still the one this server created).

use std::fs;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use std::os::fd::{AsFd, FromRawFd, OwnedFd};

use super::handler::{Caller, ControlHandler, Supervised};
use super::protocol::{parse_request, LineError, LineReader, Reply, Request, MAX_LINE, PERMISSION_DENIED};
use crate::pidfd;

/// `SO_PASSPIDFD` and `SCM_PIDFD` (`asm-generic/socket.h`, Linux 6.5).
const SO_PASSPIDFD: libc::c_int = 76;
const SCM_PIDFD: libc::c_int = 0x04;

/// Where `rampartd` listens unless told otherwise (`--socket`).
pub const DEFAULT_SOCKET: &str = "/run/rampart/rampartd.sock";

/// Limits that keep one client from holding the control thread.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// How long a request line may take to arrive, from when the server
    /// starts waiting for it to its `'\n'`.
    pub line_timeout: Duration,
    /// How long one connection may stay open in all.
    pub connection_timeout: Duration,
    /// Requests served on one connection; the next one gets an error
    /// reply and the connection is closed.
    pub max_requests: usize,
    /// How long writing one reply may block.
    pub write_timeout: Duration,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            line_timeout: Duration::from_secs(2),
            connection_timeout: Duration::from_secs(10),
            max_requests: 64,
            write_timeout: Duration::from_secs(2),
        }
    }
}

/// The running control socket. Dropping it (or [`shutdown`](Self::shutdown))
/// stops the thread and removes the socket file.
#[derive(Debug)]
pub struct ControlServer {
    path: PathBuf,
    /// Device and inode of the socket file we bound, so shutdown never
    /// removes a file someone else put at the path since.
    identity: Option<(u64, u64)>,
    /// Closing this wakes the thread.
    wake: Option<UnixStream>,
    thread: Option<JoinHandle<()>>,
}

impl ControlServer {
    /// Binds the control socket at `path` with the default limits and
    /// serves it on a new thread. See [`bind_with`](Self::bind_with).
    pub fn bind(path: &Path, handler: Arc<dyn ControlHandler>) -> io::Result<ControlServer> {
        ControlServer::bind_with(path, handler, ServerConfig::default())
    }

    /// Binds the control socket at `path` and serves it on a new thread:
    /// creates the parent directory if missing (mode 0755), refuses to
    /// start if a live server answers at `path` or if `path` is not a
    /// socket, removes a stale socket file, binds, and makes the socket
    /// mode 0600.
    pub fn bind_with(path: &Path, handler: Arc<dyn ControlHandler>, config: ServerConfig) -> io::Result<ControlServer> {
        let shown = path.display();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            if !parent.exists() {
                fs::DirBuilder::new().recursive(true).mode(0o755).create(parent).map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!(
                            "cannot create {} for the control socket: {e}; create it or pass --socket",
                            parent.display()
                        ),
                    )
                })?;
            }
        }
        match fs::symlink_metadata(path) {
            Ok(meta) if !meta.file_type().is_socket() => {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{shown} exists and is not a socket; remove it or pass --socket to use another path"),
                ));
            }
            Ok(_) => {
                match UnixStream::connect(path) {
                    Ok(_) => {
                        return Err(io::Error::new(
                            io::ErrorKind::AddrInUse,
                            format!("another rampartd is listening on {shown}; stop it first or pass --socket"),
                        ));
                    }
                    // Nobody listens: a leftover of a daemon that died.
                    Err(_) => match fs::remove_file(path) {
                        Ok(()) => {}
                        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                        Err(e) => {
                            return Err(io::Error::new(
                                e.kind(),
                                format!("cannot remove the stale socket {shown}: {e}; remove it by hand"),
                            ));
                        }
                    },
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io::Error::new(e.kind(), format!("cannot inspect {shown}: {e}"))),
        }
        let listener = UnixListener::bind(path)
            .map_err(|e| io::Error::new(e.kind(), format!("cannot bind the control socket at {shown}: {e}")))?;
        let identity = fs::symlink_metadata(path).map(|m| (m.dev(), m.ino())).ok();
        // From here on, a failure must not leave our socket file behind.
        let cleanup = |e: io::Error| {
            let _ = fs::remove_file(path);
            e
        };
        // Inherited by every accepted socket: each message then carries a
        // pidfd of its sender.
        let one: libc::c_int = 1;
        // SAFETY: `one` is a live c_int of the size given; the descriptor
        // is owned by `listener` and open.
        let rc = unsafe {
            libc::setsockopt(
                listener.as_raw_fd(),
                libc::SOL_SOCKET,
                SO_PASSPIDFD,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            let e = io::Error::last_os_error();
            return Err(cleanup(io::Error::new(
                e.kind(),
                format!(
                    "SO_PASSPIDFD on {shown}: {e} (rampartd needs Linux 6.5 or later to know who sends each request)"
                ),
            )));
        }
        fs::set_permissions(path, fs::Permissions::from_mode(0o600))
            .map_err(|e| cleanup(io::Error::new(e.kind(), format!("cannot chmod 0600 {shown}: {e}"))))?;
        listener.set_nonblocking(true).map_err(cleanup)?;
        let (wake, wake_rx) = UnixStream::pair().map_err(cleanup)?;
        let thread = thread::Builder::new()
            .name("rampart-control".into())
            .spawn(move || serve(listener, wake_rx, handler, config))
            .map_err(cleanup)?;
        Ok(ControlServer { path: path.to_path_buf(), identity, wake: Some(wake), thread: Some(thread) })
    }

    /// The socket path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stops the control thread (after the client being served, if any)
    /// and removes the socket file.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        // Closing our end of the pair makes the thread's end readable.
        drop(self.wake.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
            let still_ours = fs::symlink_metadata(&self.path).ok().map(|m| (m.dev(), m.ino()));
            if still_ours.is_some() && still_ours == self.identity {
                let _ = fs::remove_file(&self.path);
            }
        }
    }
}

impl Drop for ControlServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The control thread: wait for a connection or the wake-up, serve.
fn serve(listener: UnixListener, wake: UnixStream, handler: Arc<dyn ControlHandler>, config: ServerConfig) {
    // A reload opens the policy and file_contexts from this thread.
    let _registered = crate::own_threads::register_current();
    loop {
        match wait_readable(listener.as_raw_fd(), wake.as_raw_fd()) {
            Ok(Ready::Wake) => return,
            Ok(Ready::Listener) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            // poll itself failing (ENOMEM): do not spin.
            Err(_) => thread::sleep(Duration::from_millis(50)),
        }
        match listener.accept() {
            Ok((stream, _)) => serve_connection(stream, handler.as_ref(), &config),
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => {}
            Err(e) if e.raw_os_error() == Some(libc::ECONNABORTED) => {}
            // EMFILE and friends: the condition lasts, so do not spin on it.
            Err(_) => thread::sleep(Duration::from_millis(50)),
        }
    }
}

enum Ready {
    Listener,
    Wake,
}

fn wait_readable(listener: RawFd, wake: RawFd) -> io::Result<Ready> {
    let mut fds = [
        libc::pollfd { fd: listener, events: libc::POLLIN, revents: 0 },
        libc::pollfd { fd: wake, events: libc::POLLIN, revents: 0 },
    ];
    // SAFETY: `fds` is a valid array of two initialized pollfd structs that
    // lives across the call, and its length is passed as nfds; both
    // descriptors are owned by the caller and open for the whole call.
    let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    if fds[1].revents != 0 {
        Ok(Ready::Wake)
    } else {
        Ok(Ready::Listener)
    }
}

/// The connecting process as the kernel saw it at `connect(2)`.
#[derive(Clone, Copy, Debug)]
struct Peer {
    uid: u32,
}

fn peer_credentials(stream: &UnixStream) -> io::Result<Peer> {
    // Start from an unprivileged uid, so a short answer cannot read as root.
    let mut cred = libc::ucred { pid: 0, uid: u32::MAX, gid: u32::MAX };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` is a live, writable ucred and `len` holds its exact
    // size, which is what SO_PEERCRED expects; the kernel writes at most
    // `len` bytes. The descriptor is owned by `stream` and open.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast::<libc::c_void>(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    if len as usize != std::mem::size_of::<libc::ucred>() {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "short SO_PEERCRED answer"));
    }
    Ok(Peer { uid: cred.uid })
}

/// Reads from the stream but never past `deadline`: each read's timeout
/// is the time left, so the deadline holds however the bytes trickle in.
/// Keeps the sender pidfds of what it read (`SCM_PIDFD`) in `senders`.
struct Deadline<'a> {
    stream: &'a UnixStream,
    deadline: Instant,
    senders: &'a mut Vec<OwnedFd>,
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left))?;
        recv_with_senders(self.stream, buf, self.senders)
    }
}

/// One `recvmsg`: the bytes into `buf`, the sender's pidfd (if the kernel
/// attached one) onto `senders`. Descriptors a client sent on purpose
/// (`SCM_RIGHTS`) are closed.
fn recv_with_senders(stream: &UnixStream, buf: &mut [u8], senders: &mut Vec<OwnedFd>) -> io::Result<usize> {
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    // Room for a pidfd and a few passed descriptors; aligned for cmsghdr.
    let mut control = [0u64; 32];
    // SAFETY: msghdr is plain data; all zeroes is a valid value.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: `msg` points at `iov` (valid for `buf.len()` writable bytes)
    // and at `control`, both alive across the call.
    let n = unsafe { libc::recvmsg(stream.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the CMSG macros walk the control buffer the kernel filled,
    // within `msg.msg_controllen`; each data pointer is read as the ints
    // its header's length covers.
    unsafe {
        let mut h = libc::CMSG_FIRSTHDR(&msg);
        while !h.is_null() {
            let header = &*h;
            if header.cmsg_level == libc::SOL_SOCKET
                && (header.cmsg_type == SCM_PIDFD || header.cmsg_type == libc::SCM_RIGHTS)
            {
                let data = libc::CMSG_DATA(h).cast::<libc::c_int>();
                let len = (header.cmsg_len as usize).saturating_sub(libc::CMSG_LEN(0) as usize);
                for i in 0..len / std::mem::size_of::<libc::c_int>() {
                    let fd = OwnedFd::from_raw_fd(data.add(i).read_unaligned());
                    if header.cmsg_type == SCM_PIDFD {
                        senders.push(fd);
                    }
                }
            }
            h = libc::CMSG_NXTHDR(&msg, h);
        }
    }
    Ok(n as usize)
}

/// Who wrote the request line whose bytes came with `senders`: one
/// process, as it is now. Several writers, or one that cannot be read
/// (gone, no `SCM_PIDFD`), and the request is refused.
fn caller_of(senders: &[OwnedFd]) -> Result<Caller, String> {
    let mut caller: Option<Caller> = None;
    for fd in senders {
        let info = pidfd::process_info(fd.as_fd()).map_err(|e| format!("cannot identify the sender: {e}"))?;
        let this = Caller { pid: info.pid, euid: info.euid, cgroup_id: info.cgroup_id };
        match caller {
            Some(c) if c.pid != this.pid => {
                return Err("a request line written by several processes is refused; send each line whole".into())
            }
            _ => caller = Some(this),
        }
    }
    caller.ok_or_else(|| "cannot identify the sender: no SCM_PIDFD came with the request (Linux 6.5 or later)".into())
}

fn send(mut stream: &UnixStream, reply: &Reply) -> io::Result<()> {
    stream.write_all(&reply.to_line())
}

fn serve_connection(stream: UnixStream, handler: &dyn ControlHandler, config: &ServerConfig) {
    // Accepted sockets are blocking on Linux; say so rather than rely on it.
    if stream.set_nonblocking(false).is_err() || stream.set_write_timeout(Some(config.write_timeout)).is_err() {
        return;
    }
    let peer = match peer_credentials(&stream) {
        Ok(peer) => peer,
        Err(e) => {
            let _ = send(&stream, &Reply::error(format!("cannot identify the caller (SO_PEERCRED: {e})")));
            return;
        }
    };
    if peer.uid != 0 {
        let _ = send(&stream, &Reply::error(PERMISSION_DENIED));
        return;
    }
    let opened = Instant::now();
    let mut lines = LineReader::new(MAX_LINE);
    let mut served = 0;
    // Sender pidfds of the bytes read since the last line was served; the
    // last one stays, since its message may also hold the next line.
    let mut senders: Vec<OwnedFd> = Vec::new();
    loop {
        let line_deadline = Instant::now() + config.line_timeout;
        let closing_deadline = opened + config.connection_timeout;
        let deadline = line_deadline.min(closing_deadline);
        let line = match lines.read_line(&mut Deadline { stream: &stream, deadline, senders: &mut senders }) {
            Ok(Some(line)) => line,
            // The client is done.
            Ok(None) => return,
            Err(LineError::Io(_)) => return,
            Err(LineError::TimedOut) => {
                let why = if closing_deadline <= line_deadline {
                    format!(
                        "connection open longer than {:?}; closing it, reconnect for more requests",
                        config.connection_timeout
                    )
                } else {
                    format!(
                        "timed out: no complete request line within {:?}; send the whole line at once, ended by '\\n'",
                        config.line_timeout
                    )
                };
                let _ = send(&stream, &Reply::error(why));
                return;
            }
            // Too long: the framing is lost, so close. Truncated: the peer
            // is gone, but a half-closed client may still read the reply.
            Err(e @ (LineError::TooLong { .. } | LineError::Truncated { .. })) => {
                let _ = send(&stream, &Reply::error(e));
                return;
            }
        };
        if served == config.max_requests {
            let why =
                format!("too many requests on one connection (limit {}); reconnect for more", config.max_requests);
            let _ = send(&stream, &Reply::error(why));
            return;
        }
        served += 1;
        let caller = caller_of(&senders);
        if senders.len() > 1 {
            senders.drain(..senders.len() - 1);
        }
        let reply = match (parse_request(&line), caller) {
            (Ok(request), Ok(caller)) => match handler.authorize(&request, &caller) {
                Ok(()) => dispatch(handler, &request, caller),
                Err(e) => Reply::error(e),
            },
            (Err(e), _) => Reply::error(e),
            (_, Err(e)) => Reply::error(e),
        };
        if send(&stream, &reply).is_err() {
            return;
        }
    }
}

fn dispatch(handler: &dyn ControlHandler, request: &Request, caller: Caller) -> Reply {
    let op = request.op();
    let answer = catch_unwind(AssertUnwindSafe(|| match request {
        Request::Status => Reply::Status(handler.status()),
        Request::SetEnforce { enforcing } => done(handler.set_enforcing(*enforcing)),
        Request::Reload => seqno(handler.reload()),
        Request::SetBool { name, value } => seqno(handler.set_boolean(name, *value)),
        Request::ExecContext { context, force, path, apparmor, supervise, supervise_opens } => match caller.pid {
            0 => Reply::error(
                "exec-context: the kernel did not report the caller's pid (is the client in another pid \
                 namespace?); run the client in rampartd's pid namespace",
            ),
            // The listener first: whether its filter supervises opens is
            // part of the label the request records.
            pid => match supervise.map_or(Ok(()), |fd| handler.supervise(pid, fd)).and_then(|()| {
                let supervised =
                    Supervised { calls: supervise.is_some(), opens: supervise.is_some() && *supervise_opens };
                handler.set_exec_labels(
                    pid,
                    context.as_deref(),
                    apparmor.as_deref(),
                    *force,
                    path.as_deref(),
                    supervised,
                )
            }) {
                Ok(grant) => Reply::ExecGranted(grant),
                Err(e) => Reply::Error(e),
            },
        },
        Request::LabelsChanged => done(handler.labels_changed()),
    }));
    answer.unwrap_or_else(|_| {
        Reply::error(format!("{op}: internal error in rampartd (it panicked); see the daemon's log"))
    })
}

fn done(result: Result<(), String>) -> Reply {
    match result {
        Ok(()) => Reply::Done,
        Err(e) => Reply::Error(e),
    }
}

fn seqno(result: Result<u64, String>) -> Reply {
    match result {
        Ok(n) => Reply::Seqno(n),
        Err(e) => Reply::Error(e),
    }
}
