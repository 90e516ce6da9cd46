//! The Linux process events connector: fork, exec and exit of every
//! process on the machine, delivered by the kernel over netlink
//! (`NETLINK_CONNECTOR`, group `CN_IDX_PROC`, see `linux/cn_proc.h` and
//! `linux/connector.h`).
//!
//! # Why the daemon needs it
//!
//! Rampart gives every process a domain. A new process starts in its
//! parent's domain and may change domain only when it executes a file, so
//! the daemon must learn, in the order the kernel saw them, that a process
//! forked (the child inherits the parent's domain), executed (its domain
//! may transition) and exited (its entry must go). The kernel queues these
//! events on one socket in the order it emits them, and it emits them in
//! causal order for each process:
//!
//! * the fork event is sent before the child is first woken up, so it
//!   precedes anything the child does, including its exec and exit;
//! * the exit event is sent from `do_exit`, before the task is reaped and
//!   its pid freed, so it precedes the fork that reuses the pid. A reused
//!   pid is therefore never confused with the dead process that held it:
//!   the daemon sees `Exit(P)` before `Fork(.., child P)`.
//!
//! Exit events are per thread: `pid` is the thread id, `tgid` the process.
//! The thread group leader's exit (`pid == tgid`) can come before the other
//! threads' exits; the process (and its pid) lives until the last one.
//!
//! When the socket's receive buffer overflows the kernel drops events and
//! the next read fails with `ENOBUFS`: [`ProcEvent::Overrun`] tells the
//! caller that the order is broken and it must resynchronise from `/proc`
//! (using [`crate::pidfd`] identities to tell reused pids apart).
//!
//! # Trust
//!
//! Any local process may unicast a datagram to our netlink port, so every
//! datagram whose sender is not the kernel (sender `nl_pid != 0`) is
//! rejected with [`ConnectorError::NotFromKernel`], and [`parse_datagram`],
//! the only code that reads these bytes, checks every bound: malformed input
//! is an error naming the byte offset, never a panic.

use std::collections::VecDeque;
use std::io;
use std::mem;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

/// `CN_IDX_PROC` / `CN_VAL_PROC`: the process events connector's id.
const CN_IDX_PROC: u32 = 1;
const CN_VAL_PROC: u32 = 1;

const PROC_CN_MCAST_LISTEN: u32 = 1;
const PROC_CN_MCAST_IGNORE: u32 = 2;

const PROC_EVENT_NONE: u32 = 0x0000_0000;
const PROC_EVENT_FORK: u32 = 0x0000_0001;
const PROC_EVENT_EXEC: u32 = 0x0000_0002;
const PROC_EVENT_EXIT: u32 = 0x8000_0000;

const NLMSG_NOOP: u16 = 1;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLMSG_OVERRUN: u16 = 4;

/// `sizeof(struct nlmsghdr)`: len u32, type u16, flags u16, seq u32, pid u32.
const NLMSG_HDRLEN: usize = 16;
/// `sizeof(struct cn_msg)` without data: idx u32, val u32, seq u32, ack u32,
/// len u16, flags u16.
const CN_MSG_HDRLEN: usize = 20;
/// `struct proc_event` up to the union: what u32, cpu u32, timestamp_ns u64.
const PROC_EVENT_HDRLEN: usize = 16;

/// The receive buffer asked for: bursts of forks (a `make -j`) must not
/// overflow it while the daemon is busy.
const RCVBUF_BYTES: libc::c_int = 4 << 20;
/// Connector datagrams hold one event of about 80 bytes; a page is plenty,
/// and a larger datagram is reported as truncated, not misread.
const RECV_BUF_BYTES: usize = 8192;
/// [`ProcConnector::drain`] reads at most this many datagrams per call so a
/// storm of events cannot keep the caller from its other work.
pub const DRAIN_MAX_DATAGRAMS: usize = 4096;
/// How long [`ProcConnector::open`] waits for the kernel to acknowledge
/// `PROC_CN_MCAST_LISTEN`.
const LISTEN_ACK_TIMEOUT: Duration = Duration::from_secs(2);

/// One process event, in kernel order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProcEvent {
    /// A task was created. `child_pid == child_tgid` for a new process;
    /// otherwise a new thread of `child_tgid`.
    Fork { parent_pid: u32, parent_tgid: u32, child_pid: u32, child_tgid: u32 },
    /// A process executed a file. Reported after the exec succeeded, when
    /// the executing thread already owns the thread group id
    /// (`pid == tgid`).
    Exec { pid: u32, tgid: u32 },
    /// A task exited. `exit_code` is the raw wait status (as `waitpid`
    /// reports it: `code << 8` or the killing signal).
    Exit { pid: u32, tgid: u32, exit_code: u32 },
    /// Any other event (uid, gid, sid, ptrace, comm, coredump, the kernel's
    /// acknowledgement of a listen request, or a kind this code does not
    /// know): `what` is its `PROC_EVENT_*` value.
    Other { what: u32 },
    /// The receive buffer overflowed and the kernel dropped events: the
    /// caller must resynchronise its view of the processes.
    Overrun,
}

/// Why reading the connector failed.
#[derive(Debug, thiserror::Error)]
pub enum ConnectorError {
    /// The socket call failed (not `ENOBUFS`, which is [`ProcEvent::Overrun`]).
    #[error("process events connector: {0}")]
    Io(#[from] io::Error),
    /// A datagram came from netlink port `port`, a user process, not the
    /// kernel; it was dropped unread.
    #[error("process events connector: datagram from netlink port {port}, not the kernel, dropped")]
    NotFromKernel { port: u32 },
    /// A datagram from the kernel could not be parsed; `offset` is the byte
    /// of the datagram where parsing stopped. Events in it are lost, so
    /// treat it like [`ProcEvent::Overrun`].
    #[error("process events connector: malformed message at byte {offset}: {reason}")]
    Malformed { offset: usize, reason: String },
}

fn malformed(offset: usize, reason: impl Into<String>) -> ConnectorError {
    ConnectorError::Malformed { offset, reason: reason.into() }
}

/// Bounds-checked native-endian reads from a datagram prefix; offsets are
/// absolute, so errors name the byte of the whole datagram.
#[derive(Clone, Copy)]
struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    /// The same datagram, readable only up to `end`.
    fn limit(self, end: usize, what: &str) -> Result<Reader<'a>, ConnectorError> {
        match self.buf.get(..end) {
            Some(buf) => Ok(Reader { buf }),
            None => Err(malformed(
                end.min(self.buf.len()),
                format!("{what} claims to end at byte {end}, past the end of its container at byte {}", self.buf.len()),
            )),
        }
    }

    fn array<const N: usize>(self, offset: usize, what: &str) -> Result<[u8; N], ConnectorError> {
        offset
            .checked_add(N)
            .and_then(|end| self.buf.get(offset..end))
            .and_then(|bytes| <[u8; N]>::try_from(bytes).ok())
            .ok_or_else(|| {
                malformed(offset, format!("{what}: need {N} bytes, {} left", self.buf.len().saturating_sub(offset)))
            })
    }

    fn u16(self, offset: usize, what: &str) -> Result<u16, ConnectorError> {
        self.array(offset, what).map(u16::from_ne_bytes)
    }

    fn u32(self, offset: usize, what: &str) -> Result<u32, ConnectorError> {
        self.array(offset, what).map(u32::from_ne_bytes)
    }
}

/// One parsed connector message with the `cn_msg` field needed to match
/// the kernel's acknowledgement of our listen request.
#[derive(Debug)]
struct Message {
    event: ProcEvent,
    ack: u32,
    /// `event_data.ack.err` of a `PROC_EVENT_NONE` (acknowledgement) event.
    ack_err: Option<u32>,
}

/// Parses one datagram read from the connector into its events, in order.
///
/// A datagram holds one or more netlink messages (each 4-byte aligned);
/// each connector message is `nlmsghdr` → `cn_msg` (which must carry
/// `CN_IDX_PROC`/`CN_VAL_PROC`) → `proc_event` (what, cpu, timestamp, then
/// the union). Fields are read by offset in native byte order. Any bound
/// violation is [`ConnectorError::Malformed`] with its byte offset.
pub fn parse_datagram(buf: &[u8]) -> Result<Vec<ProcEvent>, ConnectorError> {
    Ok(parse_messages(buf)?.into_iter().map(|m| m.event).collect())
}

fn parse_messages(buf: &[u8]) -> Result<Vec<Message>, ConnectorError> {
    if buf.is_empty() {
        return Err(malformed(0, "empty datagram"));
    }
    let whole = Reader { buf };
    let mut out = Vec::new();
    let mut offset = 0usize;
    while offset < buf.len() {
        whole.array::<NLMSG_HDRLEN>(offset, "netlink header")?;
        let nlmsg_len = whole.u32(offset, "netlink header: nlmsg_len")? as usize;
        let nlmsg_type = whole.u16(offset + 4, "netlink header: nlmsg_type")?;
        if nlmsg_len < NLMSG_HDRLEN {
            return Err(malformed(
                offset,
                format!("nlmsg_len {nlmsg_len} is smaller than the {NLMSG_HDRLEN}-byte netlink header"),
            ));
        }
        let end = offset.checked_add(nlmsg_len).ok_or_else(|| malformed(offset, "nlmsg_len overflows"))?;
        let msg = whole.limit(end, "netlink message")?;
        let payload = offset + NLMSG_HDRLEN;
        match nlmsg_type {
            NLMSG_NOOP => {}
            NLMSG_ERROR => {
                let err = msg.u32(payload, "netlink error: error code")? as i32;
                if err != 0 {
                    return Err(ConnectorError::Io(io::Error::from_raw_os_error(
                        err.checked_neg().unwrap_or(libc::EINVAL),
                    )));
                }
            }
            NLMSG_OVERRUN => out.push(Message { event: ProcEvent::Overrun, ack: 0, ack_err: None }),
            NLMSG_DONE => out.push(parse_cn_msg(msg, payload)?),
            other => return Err(malformed(offset + 4, format!("unexpected netlink message type {other}"))),
        }
        // NLMSG_ALIGN: the next message starts at a multiple of 4; the last
        // one may omit its padding.
        offset = end.checked_add(3).map(|e| e & !3).ok_or_else(|| malformed(end, "message end overflows"))?;
    }
    Ok(out)
}

/// Parses the `cn_msg` starting at `at`; `msg` is limited to its netlink
/// message.
fn parse_cn_msg(msg: Reader<'_>, at: usize) -> Result<Message, ConnectorError> {
    msg.array::<CN_MSG_HDRLEN>(at, "cn_msg header")?;
    let idx = msg.u32(at, "cn_msg: id.idx")?;
    let val = msg.u32(at + 4, "cn_msg: id.val")?;
    let ack = msg.u32(at + 12, "cn_msg: ack")?;
    let len = msg.u16(at + 16, "cn_msg: len")? as usize;
    if (idx, val) != (CN_IDX_PROC, CN_VAL_PROC) {
        return Err(malformed(
            at,
            format!(
                "connector id {idx}:{val} is not the process events connector \
                 {CN_IDX_PROC}:{CN_VAL_PROC}"
            ),
        ));
    }
    let data = at + CN_MSG_HDRLEN;
    let ev = msg.limit(data + len, "cn_msg data (cn_msg.len)")?;
    ev.array::<PROC_EVENT_HDRLEN>(data, "proc_event header")?;
    let what = ev.u32(data, "proc_event: what")?;
    let u = data + PROC_EVENT_HDRLEN;
    let mut ack_err = None;
    let event = match what {
        PROC_EVENT_FORK => ProcEvent::Fork {
            parent_pid: ev.u32(u, "fork event: parent_pid")?,
            parent_tgid: ev.u32(u + 4, "fork event: parent_tgid")?,
            child_pid: ev.u32(u + 8, "fork event: child_pid")?,
            child_tgid: ev.u32(u + 12, "fork event: child_tgid")?,
        },
        PROC_EVENT_EXEC => ProcEvent::Exec {
            pid: ev.u32(u, "exec event: process_pid")?,
            tgid: ev.u32(u + 4, "exec event: process_tgid")?,
        },
        PROC_EVENT_EXIT => ProcEvent::Exit {
            pid: ev.u32(u, "exit event: process_pid")?,
            tgid: ev.u32(u + 4, "exit event: process_tgid")?,
            exit_code: ev.u32(u + 8, "exit event: exit_code")?,
        },
        PROC_EVENT_NONE => {
            ack_err = ev.u32(u, "ack event: err").ok();
            ProcEvent::Other { what }
        }
        other => ProcEvent::Other { what: other },
    };
    Ok(Message { event, ack, ack_err })
}

/// A listen or ignore request: `nlmsghdr` + `cn_msg` + the u32 operation.
fn control_message(op: u32, port: u32, seq: u32, ack: u32) -> [u8; 40] {
    let mut m = [0u8; 40];
    m[0..4].copy_from_slice(&40u32.to_ne_bytes());
    m[4..6].copy_from_slice(&NLMSG_DONE.to_ne_bytes());
    // nlmsg_flags (6..8) stay 0.
    m[8..12].copy_from_slice(&seq.to_ne_bytes());
    m[12..16].copy_from_slice(&port.to_ne_bytes());
    m[16..20].copy_from_slice(&CN_IDX_PROC.to_ne_bytes());
    m[20..24].copy_from_slice(&CN_VAL_PROC.to_ne_bytes());
    m[24..28].copy_from_slice(&seq.to_ne_bytes());
    m[28..32].copy_from_slice(&ack.to_ne_bytes());
    m[32..34].copy_from_slice(&4u16.to_ne_bytes());
    // cn_msg.flags (34..36) stay 0.
    m[36..40].copy_from_slice(&op.to_ne_bytes());
    m
}

fn kernel_address() -> libc::sockaddr_nl {
    // SAFETY: sockaddr_nl is plain integers; all zeroes is a valid value.
    let mut addr: libc::sockaddr_nl = unsafe { mem::zeroed() };
    addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    addr
}

/// A subscription to the kernel's process events.
///
/// Poll its file descriptor ([`AsFd`]) for readability, then call
/// [`drain`](Self::drain). Dropping it tells the kernel to stop
/// (`PROC_CN_MCAST_IGNORE`).
#[derive(Debug)]
pub struct ProcConnector {
    fd: OwnedFd,
    /// Our netlink port id, assigned by the kernel at bind.
    port: u32,
    /// LISTEN was acknowledged, so Drop must send IGNORE.
    listening: bool,
    /// Events read while waiting for the listen acknowledgement.
    pending: VecDeque<ProcEvent>,
    /// An error met by `drain` after it had collected events; reported by
    /// the next call so no event is lost and no error hidden.
    pending_error: Option<ConnectorError>,
    buf: Vec<u8>,
}

impl ProcConnector {
    /// Opens the connector: a `SOCK_CLOEXEC` netlink socket bound to the
    /// process events group, a 4 MiB receive buffer (`SO_RCVBUFFORCE`,
    /// else `SO_RCVBUF` up to `net.core.rmem_max`), and a
    /// `PROC_CN_MCAST_LISTEN` request whose acknowledgement it waits for
    /// (up to 2 s), so a refused subscription is an error here rather than
    /// silence later. Needs root (`CAP_NET_ADMIN` in the initial user and
    /// pid namespace).
    pub fn open() -> io::Result<ProcConnector> {
        // SAFETY: plain socket(2) call; the result is checked below.
        let raw =
            unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, libc::NETLINK_CONNECTOR) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a freshly created descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        set_receive_buffer(fd.as_fd())?;

        let mut addr = kernel_address();
        addr.nl_groups = CN_IDX_PROC;
        // SAFETY: `addr` is a valid sockaddr_nl and the length passed is its size.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_nl).cast(),
                mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        let port = local_port(fd.as_fd())?;

        let mut conn = ProcConnector {
            fd,
            port,
            listening: false,
            pending: VecDeque::new(),
            pending_error: None,
            buf: vec![0; RECV_BUF_BYTES],
        };
        // The kernel answers every listener with a PROC_EVENT_NONE whose
        // cn_msg.ack is our ack + 1 (it overwrites seq with a per-cpu
        // counter). An ack derived from the port id, unique among sockets,
        // tells ours apart.
        let ack = port.wrapping_mul(2_654_435_761);
        conn.send_control(PROC_CN_MCAST_LISTEN, port, ack)?;
        conn.wait_listen_ack(ack.wrapping_add(1))?;
        Ok(conn)
    }

    fn send_control(&self, op: u32, seq: u32, ack: u32) -> io::Result<()> {
        let msg = control_message(op, self.port, seq, ack);
        let dest = kernel_address();
        // SAFETY: `msg` and `dest` are live for the call and the lengths
        // passed are their sizes.
        let n = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                msg.as_ptr().cast(),
                msg.len(),
                0,
                (&dest as *const libc::sockaddr_nl).cast(),
                mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if n as usize != msg.len() {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                format!("short send to the process events connector: {n} of {} bytes", msg.len()),
            ));
        }
        Ok(())
    }

    /// Reads until the kernel acknowledges LISTEN with `ack`; events read
    /// meanwhile are kept for the first `recv`/`drain`.
    fn wait_listen_ack(&mut self, ack: u32) -> io::Result<()> {
        let deadline = Instant::now() + LISTEN_ACK_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || !poll_readable(self.fd.as_fd(), left)? {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the kernel did not acknowledge PROC_CN_MCAST_LISTEN within 2 s \
                     (the connector ignores requests from outside the initial pid and user namespace)",
                ));
            }
            let messages = match self.recv_datagram(true) {
                Ok(Some(m)) => m,
                Ok(None) | Err(ConnectorError::NotFromKernel { .. }) => continue,
                Err(ConnectorError::Io(e)) => return Err(e),
                Err(e @ ConnectorError::Malformed { .. }) => return Err(io::Error::new(io::ErrorKind::InvalidData, e)),
            };
            for m in messages {
                if m.event == (ProcEvent::Other { what: PROC_EVENT_NONE }) && m.ack == ack {
                    let err = m.ack_err.unwrap_or(0);
                    if err != 0 {
                        return Err(io::Error::from_raw_os_error(err as i32));
                    }
                    self.listening = true;
                } else {
                    self.pending.push_back(m.event);
                }
            }
            if self.listening {
                return Ok(());
            }
        }
    }

    /// Reads one datagram: `Ok(None)` when non-blocking and nothing is
    /// queued; ENOBUFS becomes an Overrun message.
    fn recv_datagram(&mut self, nonblocking: bool) -> Result<Option<Vec<Message>>, ConnectorError> {
        let mut from = kernel_address();
        let mut from_len = mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t;
        let flags = libc::MSG_TRUNC | if nonblocking { libc::MSG_DONTWAIT } else { 0 };
        // SAFETY: `buf` is writable for `buf.len()` bytes and `from` for
        // `from_len` bytes; both outlive the call.
        let n = unsafe {
            libc::recvfrom(
                self.fd.as_raw_fd(),
                self.buf.as_mut_ptr().cast(),
                self.buf.len(),
                flags,
                (&mut from as *mut libc::sockaddr_nl).cast(),
                &mut from_len,
            )
        };
        if n < 0 {
            let err = io::Error::last_os_error();
            return match err.raw_os_error() {
                Some(libc::ENOBUFS) => Ok(Some(vec![Message { event: ProcEvent::Overrun, ack: 0, ack_err: None }])),
                Some(libc::EAGAIN) if nonblocking => Ok(None),
                _ => Err(err.into()),
            };
        }
        let n = n as usize;
        if from_len as usize != mem::size_of::<libc::sockaddr_nl>()
            || from.nl_family != libc::AF_NETLINK as libc::sa_family_t
        {
            return Err(malformed(0, "datagram without a netlink sender address"));
        }
        if from.nl_pid != 0 {
            return Err(ConnectorError::NotFromKernel { port: from.nl_pid });
        }
        // With MSG_TRUNC, `n` is the datagram's real length.
        if n > self.buf.len() {
            return Err(malformed(
                self.buf.len(),
                format!("datagram of {n} bytes truncated to the {}-byte buffer", self.buf.len()),
            ));
        }
        parse_messages(&self.buf[..n]).map(Some)
    }

    /// Reads one datagram and returns its events (usually one). With
    /// `nonblocking`, returns an empty vector when nothing is queued;
    /// otherwise waits (and reports `EINTR` as [`ConnectorError::Io`]).
    /// Events kept by [`open`](Self::open) or an error kept by
    /// [`drain`](Self::drain) come first.
    pub fn recv(&mut self, nonblocking: bool) -> Result<Vec<ProcEvent>, ConnectorError> {
        if !self.pending.is_empty() {
            return Ok(self.pending.drain(..).collect());
        }
        if let Some(e) = self.pending_error.take() {
            return Err(e);
        }
        Ok(self.recv_datagram(nonblocking)?.map(|ms| ms.into_iter().map(|m| m.event).collect()).unwrap_or_default())
    }

    /// Reads everything queued, without blocking, up to
    /// [`DRAIN_MAX_DATAGRAMS`] datagrams (poll again for the rest).
    ///
    /// An error after some events were read is held back and returned by
    /// the next call, so the events come first and nothing is lost.
    pub fn drain(&mut self) -> Result<Vec<ProcEvent>, ConnectorError> {
        let mut events: Vec<ProcEvent> = self.pending.drain(..).collect();
        if let Some(e) = self.pending_error.take() {
            if events.is_empty() {
                return Err(e);
            }
            self.pending_error = Some(e);
            return Ok(events);
        }
        for _ in 0..DRAIN_MAX_DATAGRAMS {
            match self.recv_datagram(true) {
                Ok(Some(ms)) => events.extend(ms.into_iter().map(|m| m.event)),
                Ok(None) => break,
                Err(e) if events.is_empty() => return Err(e),
                Err(e) => {
                    self.pending_error = Some(e);
                    break;
                }
            }
        }
        Ok(events)
    }

    /// The socket, for `poll`/`epoll`.
    pub fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl AsFd for ProcConnector {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl AsRawFd for ProcConnector {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl Drop for ProcConnector {
    fn drop(&mut self) {
        if self.listening {
            // Best effort: the kernel counts listeners, and a failed IGNORE
            // only leaves event generation on.
            let _ = self.send_control(PROC_CN_MCAST_IGNORE, self.port, 0);
        }
    }
}

fn set_receive_buffer(fd: BorrowedFd<'_>) -> io::Result<()> {
    let size = RCVBUF_BYTES;
    for opt in [libc::SO_RCVBUFFORCE, libc::SO_RCVBUF] {
        // SAFETY: `size` is a live c_int and the length passed is its size.
        let rc = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&size as *const libc::c_int).cast(),
                mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc == 0 {
            return Ok(());
        }
    }
    Err(io::Error::last_os_error())
}

fn local_port(fd: BorrowedFd<'_>) -> io::Result<u32> {
    let mut addr = kernel_address();
    let mut len = mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t;
    // SAFETY: `addr` is writable for `len` bytes and outlives the call.
    let rc = unsafe { libc::getsockname(fd.as_raw_fd(), (&mut addr as *mut libc::sockaddr_nl).cast(), &mut len) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(addr.nl_pid)
}

/// Waits up to `timeout` for `fd` to become readable; retries `EINTR`.
fn poll_readable(fd: BorrowedFd<'_>, timeout: Duration) -> io::Result<bool> {
    let mut pfd = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    let ms = libc::c_int::try_from(timeout.as_millis().max(1)).unwrap_or(libc::c_int::MAX);
    loop {
        // SAFETY: `pfd` is one valid pollfd that outlives the call.
        let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
        if rc >= 0 {
            return Ok(rc > 0);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nlmsg(ty: u16, payload: &[u8]) -> Vec<u8> {
        let mut m = Vec::new();
        m.extend_from_slice(&((NLMSG_HDRLEN + payload.len()) as u32).to_ne_bytes());
        m.extend_from_slice(&ty.to_ne_bytes());
        m.extend_from_slice(&0u16.to_ne_bytes());
        m.extend_from_slice(&7u32.to_ne_bytes());
        m.extend_from_slice(&0u32.to_ne_bytes());
        m.extend_from_slice(payload);
        m
    }

    fn cn_msg(idx: u32, val: u32, data: &[u8]) -> Vec<u8> {
        let mut m = Vec::new();
        m.extend_from_slice(&idx.to_ne_bytes());
        m.extend_from_slice(&val.to_ne_bytes());
        m.extend_from_slice(&11u32.to_ne_bytes());
        m.extend_from_slice(&0u32.to_ne_bytes());
        m.extend_from_slice(&(data.len() as u16).to_ne_bytes());
        m.extend_from_slice(&0u16.to_ne_bytes());
        m.extend_from_slice(data);
        m
    }

    /// A full `struct proc_event` (40 bytes, as the kernel sends it).
    fn proc_event(what: u32, fields: &[u32]) -> Vec<u8> {
        let mut e = Vec::new();
        e.extend_from_slice(&what.to_ne_bytes());
        e.extend_from_slice(&3u32.to_ne_bytes());
        e.extend_from_slice(&0x0123_4567_89ab_cdefu64.to_ne_bytes());
        for f in fields {
            e.extend_from_slice(&f.to_ne_bytes());
        }
        e.resize(40, 0);
        e
    }

    fn datagram(what: u32, fields: &[u32]) -> Vec<u8> {
        nlmsg(NLMSG_DONE, &cn_msg(CN_IDX_PROC, CN_VAL_PROC, &proc_event(what, fields)))
    }

    fn fork() -> Vec<u8> {
        datagram(PROC_EVENT_FORK, &[10, 10, 20, 20])
    }
    fn exec() -> Vec<u8> {
        datagram(PROC_EVENT_EXEC, &[20, 20])
    }
    fn exit() -> Vec<u8> {
        datagram(PROC_EVENT_EXIT, &[20, 20, 256, 17, 10, 10])
    }

    const FORK: ProcEvent = ProcEvent::Fork { parent_pid: 10, parent_tgid: 10, child_pid: 20, child_tgid: 20 };
    const EXEC: ProcEvent = ProcEvent::Exec { pid: 20, tgid: 20 };
    const EXIT: ProcEvent = ProcEvent::Exit { pid: 20, tgid: 20, exit_code: 256 };

    fn offset_of(r: Result<Vec<ProcEvent>, ConnectorError>) -> usize {
        match r {
            Err(ConnectorError::Malformed { offset, .. }) => offset,
            other => panic!("expected Malformed, got {other:?}"),
        }
    }

    #[test]
    fn layout_matches_the_kernel_headers() {
        assert_eq!(fork().len(), NLMSG_HDRLEN + CN_MSG_HDRLEN + 40);
        assert_eq!(mem::size_of::<libc::nlmsghdr>(), NLMSG_HDRLEN);
    }

    #[test]
    fn parses_fork_exec_exit() {
        assert_eq!(parse_datagram(&fork()).unwrap(), vec![FORK]);
        assert_eq!(parse_datagram(&exec()).unwrap(), vec![EXEC]);
        assert_eq!(parse_datagram(&exit()).unwrap(), vec![EXIT]);
    }

    #[test]
    fn other_events_are_kept_but_not_interpreted() {
        for what in [0u32, 0x4, 0x40, 0x80, 0x100, 0x200, 0x4000_0000, 0x1234] {
            assert_eq!(parse_datagram(&datagram(what, &[1, 2, 3])).unwrap(), vec![ProcEvent::Other { what }]);
        }
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        for full in [fork(), exec(), exit(), datagram(0x200, &[1, 2])] {
            for len in 0..full.len() {
                let r = parse_datagram(&full[..len]);
                assert!(
                    matches!(r, Err(ConnectorError::Malformed { offset, .. }) if offset <= len),
                    "length {len}: {r:?}"
                );
            }
        }
    }

    #[test]
    fn short_unions_are_errors_at_the_missing_field() {
        // A fork event whose cn_msg.len covers only parent_pid and parent_tgid.
        let short = nlmsg(NLMSG_DONE, &cn_msg(CN_IDX_PROC, CN_VAL_PROC, &proc_event(PROC_EVENT_FORK, &[1, 2])[..24]));
        // child_pid is at 16 + 20 + 16 + 8.
        assert_eq!(offset_of(parse_datagram(&short)), 60);
        // A cn_msg.len beyond the netlink message.
        let mut long = fork();
        long[32..34].copy_from_slice(&41u16.to_ne_bytes());
        assert!(offset_of(parse_datagram(&long)) <= long.len());
        // An nlmsg_len smaller than the header, and one past the datagram.
        let mut tiny = fork();
        tiny[0..4].copy_from_slice(&8u32.to_ne_bytes());
        assert_eq!(offset_of(parse_datagram(&tiny)), 0);
        let mut huge = fork();
        huge[0..4].copy_from_slice(&u32::MAX.to_ne_bytes());
        assert!(parse_datagram(&huge).is_err());
    }

    #[test]
    fn wrong_connector_id_is_rejected() {
        for (idx, val) in [(2, 1), (1, 2), (0, 0)] {
            let d = nlmsg(NLMSG_DONE, &cn_msg(idx, val, &proc_event(PROC_EVENT_FORK, &[1, 1, 2, 2])));
            assert_eq!(offset_of(parse_datagram(&d)), NLMSG_HDRLEN);
        }
    }

    #[test]
    fn multi_part_datagrams_keep_order() {
        let mut d = fork();
        d.extend(exec());
        d.extend(exit());
        assert_eq!(parse_datagram(&d).unwrap(), vec![FORK, EXEC, EXIT]);
        // Cut anywhere except a message boundary: an error, never a panic.
        let one = fork().len();
        for len in 1..d.len() {
            let r = parse_datagram(&d[..len]);
            if len % one == 0 {
                assert_eq!(r.unwrap().len(), len / one);
            } else {
                assert!(r.is_err(), "length {len}");
            }
        }
    }

    #[test]
    fn messages_are_4_byte_aligned() {
        // A NOOP with a 1-byte payload is padded to 20 bytes.
        let mut d = nlmsg(NLMSG_NOOP, &[0]);
        d.resize(20, 0xff);
        d.extend(exec());
        assert_eq!(parse_datagram(&d).unwrap(), vec![EXEC]);
    }

    #[test]
    fn netlink_control_messages() {
        assert_eq!(parse_datagram(&nlmsg(NLMSG_OVERRUN, &[])).unwrap(), vec![ProcEvent::Overrun]);
        assert_eq!(parse_datagram(&nlmsg(NLMSG_NOOP, &[])).unwrap(), vec![]);
        let ack = nlmsg(NLMSG_ERROR, &[0u8; 20]);
        assert_eq!(parse_datagram(&ack).unwrap(), vec![]);
        let eperm = nlmsg(NLMSG_ERROR, &(-libc::EPERM).to_ne_bytes());
        match parse_datagram(&eperm) {
            Err(ConnectorError::Io(e)) => assert_eq!(e.raw_os_error(), Some(libc::EPERM)),
            other => panic!("{other:?}"),
        }
        assert!(parse_datagram(&nlmsg(NLMSG_ERROR, &[])).is_err());
        assert_eq!(offset_of(parse_datagram(&nlmsg(42, &[]))), 4);
    }

    #[test]
    fn acknowledgement_carries_ack_and_err() {
        let mut c = cn_msg(CN_IDX_PROC, CN_VAL_PROC, &proc_event(PROC_EVENT_NONE, &[1]));
        c[8..12].copy_from_slice(&5u32.to_ne_bytes());
        c[12..16].copy_from_slice(&6u32.to_ne_bytes());
        let m = parse_messages(&nlmsg(NLMSG_DONE, &c)).unwrap();
        assert_eq!((m[0].ack, m[0].ack_err), (6, Some(1)));
    }

    #[test]
    fn control_message_parses_back() {
        let m = control_message(PROC_CN_MCAST_LISTEN, 99, 1, 2);
        let r = Reader { buf: &m };
        assert_eq!(r.u32(0, "").unwrap(), 40);
        assert_eq!(r.u32(36, "").unwrap(), PROC_CN_MCAST_LISTEN);
        assert_eq!(r.u16(32, "").unwrap(), 4);
    }
}
