//! Unix socket addresses (abstract names, socket files): which socket
//! holds one, and the domain that bound it, so that a connect to it can
//! be decided as SELinux decides it (`connectto`, `sendto` on the peer
//! socket's label).
//!
//! Why: an abstract name has no file, so nothing a connect to it touches
//! has a label the daemon can read, and a socket file's label is the
//! file's, not its socket's. SELinux labels the peer socket with
//! the domain of the process that made it; here, a socket a launched
//! process bound (every such bind is made by the daemon: crate::supervisor)
//! is recorded with the caller's domain (the first binder's: a failed
//! bind of a bound socket changes nothing), as is one the kernel named at
//! a connect (`SO_PASSCRED`) and a launched process listens on (the
//! daemon makes every listen too), and any other socket (bound by
//! a process outside rampartd's tree, or before this daemon started)
//! counts as the default domain's, as those processes do.
//!
//! How: the holder of a name is found in the kernel's own table, through
//! `sock_diag` (`NETLINK_SOCK_DIAG`, `unix_diag`: every Unix socket of a
//! network namespace, with its type, name, socket file and cookie), in the network
//! namespace of the socket that connects (`SIOCGSKNS`: a name is looked
//! up there); a socket is known by its cookie (`SO_COOKIE`), which the
//! kernel never hands out twice, unlike inode numbers. The record keeps
//! the cookies of live sockets: when it has doubled since its last
//! pruning, the sockets of the daemon's network namespace that are gone
//! leave it.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::sync::{Mutex, PoisonError};

use rampart_avc::Sid;

/// `SIOCGSKNS` (linux/sockios.h): the socket's network namespace.
const SIOCGSKNS: libc::c_ulong = 0x894C;
/// `SOCK_DIAG_BY_FAMILY` (linux/sock_diag.h).
const SOCK_DIAG_BY_FAMILY: u16 = 20;
/// `UDIAG_SHOW_NAME`, `UDIAG_SHOW_VFS` (linux/unix_diag.h).
const UDIAG_SHOW_NAME: u32 = 1;
const UDIAG_SHOW_VFS: u32 = 2;
/// A listening socket's state (`TCP_LISTEN`, include/net/tcp_states.h).
const TCP_LISTEN: u8 = 10;
/// `UNIX_DIAG_NAME`: the attribute holding the name; `UNIX_DIAG_VFS`:
/// the socket file's inode and device.
const UNIX_DIAG_NAME: u16 = 0;
const UNIX_DIAG_VFS: u16 = 1;
/// `nlmsghdr`, `unix_diag_req` and `unix_diag_msg` sizes.
const NLMSG_HDR: usize = 16;
const DIAG_REQ: usize = 24;
const DIAG_MSG: usize = 16;
/// Records kept at least before pruning, and at most.
const PRUNE_FROM: usize = 4096;
const MOST_RECORDS: usize = 1 << 20;

/// One Unix socket as `unix_diag` shows it.
#[derive(Debug, PartialEq, Eq)]
struct Shown {
    ty: u8,
    state: u8,
    cookie: u64,
    /// Its name, the bytes after the family (`None`: unbound).
    name: Option<Vec<u8>>,
    /// Its socket file, bound to a path: the file's inode number and
    /// device (`s_dev`, the kernel's encoding), as `unix_diag` gives them
    /// (32 bits each).
    file: Option<(u32, u32)>,
}

/// A bound socket's record: its domain, and its network namespace (by
/// inode number), which a pruning may read only if it is the daemon's.
#[derive(Clone, Copy)]
struct Record {
    domain: Sid,
    netns: u64,
}

/// The domains that bound launched processes' Unix sockets, by socket
/// cookie.
#[derive(Default)]
pub(crate) struct Bound {
    records: Mutex<(HashMap<u64, Record>, usize)>,
}

impl Bound {
    /// Records that `socket`, about to be bound (or to listen) by a
    /// process of `domain`, is that domain's, unless it has a record
    /// already: the first binder's stays (a bind of a socket bound
    /// already fails, and must not change its domain). `Ok(true)`:
    /// recorded now. `Err`: the bind's error (the record is full:
    /// `ENOBUFS`).
    pub(crate) fn record(&self, socket: BorrowedFd<'_>, domain: Sid) -> Result<bool, i32> {
        let cookie = cookie(socket).map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
        let netns =
            netns_of(socket).and_then(|ns| inode(ns.as_fd())).map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
        let mut guard = self.records.lock().unwrap_or_else(PoisonError::into_inner);
        let (records, prune_at) = &mut *guard;
        if records.len() >= (*prune_at).max(PRUNE_FROM) {
            if let Ok(live) = own_netns_cookies() {
                let own = own_netns().and_then(|ns| inode(ns.as_fd())).unwrap_or(0);
                records.retain(|cookie, r| r.netns != own || live.contains(cookie));
            }
            *prune_at = records.len() * 2;
        }
        if records.len() >= MOST_RECORDS {
            return Err(libc::ENOBUFS);
        }
        if records.contains_key(&cookie) {
            return Ok(false);
        }
        records.insert(cookie, Record { domain, netns });
        Ok(true)
    }

    /// Forgets `socket`'s record: the bind [`Self::record`] recorded it
    /// for failed (a later bind, by another domain maybe, names it).
    pub(crate) fn forget(&self, socket: BorrowedFd<'_>) {
        if let Ok(cookie) = cookie(socket) {
            self.records.lock().unwrap_or_else(PoisonError::into_inner).0.remove(&cookie);
        }
    }

    /// The domain that bound the socket with `cookie` (`None`: not a
    /// launched process, under this daemon).
    pub(crate) fn domain(&self, cookie: u64) -> Option<Sid> {
        self.records.lock().unwrap_or_else(PoisonError::into_inner).0.get(&cookie).map(|r| r.domain)
    }
}

/// The Unix sockets of a network namespace by the address they hold (an
/// abstract name, a socket file), as the kernel's table shows them: made
/// while the daemon's thread may still enter the namespace (`SIOCGSKNS`
/// needs `CAP_NET_ADMIN`), read after it took a caller's ids too.
pub(crate) struct Names {
    diag: OwnedFd,
}

impl Names {
    /// The names a connect of `socket` would look up: those of its
    /// network namespace.
    pub(crate) fn of(socket: BorrowedFd<'_>) -> io::Result<Names> {
        Ok(Names { diag: diag_socket_in(netns_of(socket)?.as_fd())? })
    }

    /// The cookie of the socket of type `ty` (`SOCK_STREAM`...) holding
    /// the abstract or automatic name `name` (the address's bytes after
    /// the family, the leading NUL included), as a connect would find it
    /// (`unix_find_abstract`: same type, same bytes), and a stream
    /// connect would reach it (listening); `None`: no socket does. The
    /// sockets a listener's connections made also show its name (the
    /// kernel copies it to them) but are not in the table.
    pub(crate) fn holder(&self, ty: i32, name: &[u8]) -> io::Result<Option<u64>> {
        self.find(ty, |s| s.name.as_deref() == Some(name))
    }

    /// The cookie of the socket of type `ty` bound to the socket file
    /// with inode `ino` on device `dev` (`st_ino`, `st_dev`), as a
    /// connect to it would find it (listening, for a stream socket).
    /// The file's inode number is compared on its low 32 bits, all
    /// `unix_diag` gives.
    pub(crate) fn holder_of_file(&self, ty: i32, dev: u64, ino: u64) -> io::Result<Option<u64>> {
        let s_dev = libc::major(dev) << 20 | libc::minor(dev);
        self.find(ty, |s| s.file == Some((ino as u32, s_dev)))
    }

    /// The cookie of the socket of type `ty` that `holds` says holds
    /// the address, listening if a stream socket.
    fn find(&self, ty: i32, holds: impl Fn(&Shown) -> bool) -> io::Result<Option<u64>> {
        let connected = ty == libc::SOCK_STREAM || ty == libc::SOCK_SEQPACKET;
        // Only the listening sockets where only they can be it: fewer to
        // read on a machine with thousands of connections.
        let states = if connected { 1 << TCP_LISTEN } else { u32::MAX };
        let shown = dump(self.diag.as_fd(), states)?;
        Ok(shown
            .into_iter()
            .find(|s| i32::from(s.ty) == ty && holds(s) && (!connected || s.state == TCP_LISTEN))
            .map(|s| s.cookie))
    }
}

/// `socket`'s cookie (`SO_COOKIE`).
pub(crate) fn cookie(socket: BorrowedFd<'_>) -> io::Result<u64> {
    let mut v: u64 = 0;
    let mut len = std::mem::size_of::<u64>() as libc::socklen_t;
    // SAFETY: `v` and `len` are valid for the call, `len` its size.
    let rc = unsafe {
        libc::getsockopt(socket.as_raw_fd(), libc::SOL_SOCKET, libc::SO_COOKIE, (&mut v as *mut u64).cast(), &mut len)
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(v)
}

fn netns_of(socket: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    // SAFETY: SIOCGSKNS takes no argument and returns a new descriptor.
    let fd = unsafe { libc::ioctl(socket.as_raw_fd(), SIOCGSKNS as _) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor the kernel just opened for this process.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn own_netns() -> io::Result<OwnedFd> {
    Ok(std::fs::File::open("/proc/thread-self/ns/net")?.into())
}

fn inode(fd: BorrowedFd<'_>) -> io::Result<u64> {
    Ok(std::fs::File::from(fd.try_clone_to_owned()?).metadata()?.ino())
}

/// A `sock_diag` socket in network namespace `netns`: made by this
/// thread if it is its own, else by a thread that enters it first and
/// ends with it (a socket stays in the namespace it was made in).
fn diag_socket_in(netns: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    let make = || {
        // SAFETY: integer arguments; returns a new descriptor or -1.
        let fd =
            unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, libc::NETLINK_SOCK_DIAG) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor the kernel just opened for this process.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    };
    if inode(netns)? == inode(own_netns()?.as_fd())? {
        return make();
    }
    std::thread::scope(|s| {
        let thread = s.spawn(|| {
            // SAFETY: setns of this thread only, into a namespace by descriptor.
            if unsafe { libc::setns(netns.as_raw_fd(), libc::CLONE_NEWNET) } < 0 {
                return Err(io::Error::last_os_error());
            }
            make()
        });
        thread.join().unwrap_or_else(|_| Err(io::Error::other("the thread entering the namespace ended abruptly")))
    })
}

/// The cookies of every Unix socket of the daemon's network namespace.
fn own_netns_cookies() -> io::Result<std::collections::HashSet<u64>> {
    let diag = diag_socket_in(own_netns()?.as_fd())?;
    Ok(dump(diag.as_fd(), u32::MAX)?.into_iter().map(|s| s.cookie).collect())
}

/// Every Unix socket of `diag`'s network namespace in one of `states`
/// (a bit per `TCP_*` state), with its name.
fn dump(diag: BorrowedFd<'_>, states: u32) -> io::Result<Vec<Shown>> {
    let mut req = [0u8; NLMSG_HDR + DIAG_REQ];
    req[0..4].copy_from_slice(&((NLMSG_HDR + DIAG_REQ) as u32).to_ne_bytes());
    req[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    req[6..8].copy_from_slice(&((libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16).to_ne_bytes());
    req[16] = libc::AF_UNIX as u8;
    req[20..24].copy_from_slice(&states.to_ne_bytes());
    req[28..32].copy_from_slice(&(UDIAG_SHOW_NAME | UDIAG_SHOW_VFS).to_ne_bytes());
    // SAFETY: `req` is readable for its length; a netlink socket with no
    // address sends to the kernel.
    if unsafe { libc::send(diag.as_raw_fd(), req.as_ptr().cast(), req.len(), 0) } < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut shown = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        // SAFETY: the kernel writes at most `buf.len()` bytes into `buf`.
        let n = unsafe { libc::recv(diag.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        let n = usize::try_from(n).map_err(|_| io::Error::last_os_error())?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "sock_diag: the dump ended early"));
        }
        if parse_messages(&buf[..n], &mut shown)? {
            return Ok(shown);
        }
    }
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Appends the sockets the netlink messages in `buf` show to `shown`;
/// `true` once the dump's end (`NLMSG_DONE`) is among them.
fn parse_messages(mut buf: &[u8], shown: &mut Vec<Shown>) -> io::Result<bool> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, format!("sock_diag: {what}"));
    while !buf.is_empty() {
        let len = u32_at(buf, 0).ok_or_else(|| bad("a truncated message header"))? as usize;
        let ty = u16_at(buf, 4).ok_or_else(|| bad("a truncated message header"))?;
        if len < NLMSG_HDR || len > buf.len() {
            return Err(bad("a message length out of bounds"));
        }
        match ty {
            t if t == libc::NLMSG_DONE as u16 => return Ok(true),
            t if t == libc::NLMSG_ERROR as u16 => {
                let errno = u32_at(buf, NLMSG_HDR).map_or(libc::EIO, |e| (e as i32).saturating_neg());
                return Err(io::Error::from_raw_os_error(errno));
            }
            SOCK_DIAG_BY_FAMILY => {
                shown.push(parse_socket(&buf[NLMSG_HDR..len]).ok_or_else(|| bad("a malformed socket"))?)
            }
            _ => {}
        }
        // Messages are aligned to 4 bytes.
        buf = buf.get(len.next_multiple_of(4)..).unwrap_or(&[]);
    }
    Ok(false)
}

/// One `unix_diag_msg` and its attributes.
fn parse_socket(msg: &[u8]) -> Option<Shown> {
    let ty = *msg.get(1)?;
    let state = *msg.get(2)?;
    let cookie = u64::from(u32_at(msg, 8)?) | u64::from(u32_at(msg, 12)?) << 32;
    let mut attrs = msg.get(DIAG_MSG..)?;
    let mut name = None;
    let mut file = None;
    while attrs.len() >= 4 {
        let len = usize::from(u16_at(attrs, 0)?);
        let kind = u16_at(attrs, 2)?;
        if len < 4 {
            return None;
        }
        if kind == UNIX_DIAG_VFS {
            file = Some((u32_at(attrs, 4)?, u32_at(attrs, 8)?));
        }
        if kind == UNIX_DIAG_NAME {
            name = Some(attrs.get(4..len)?.to_vec());
        }
        attrs = attrs.get(len.next_multiple_of(4)..).unwrap_or(&[]);
    }
    Some(Shown { ty, state, cookie, name, file })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use std::os::unix::net::{UnixDatagram, UnixListener};

    fn abstract_name(name: &[u8]) -> std::os::unix::net::SocketAddr {
        use std::os::linux::net::SocketAddrExt;
        std::os::unix::net::SocketAddr::from_abstract_name(name).unwrap()
    }

    /// Against the kernel: the holder found is the socket bound, by type,
    /// and only for the exact name.
    #[test]
    fn the_holder_is_the_socket_the_kernel_would_connect_to() {
        let name = format!("rampart-test-{}", std::process::id());
        let stream = UnixListener::bind_addr(&abstract_name(name.as_bytes())).unwrap();
        let dgram = UnixDatagram::bind_addr(&abstract_name(name.as_bytes())).unwrap();
        let client = UnixDatagram::unbound().unwrap();
        let full = [&[0u8][..], name.as_bytes()].concat();
        let names = Names::of(client.as_fd()).unwrap();
        let by = |ty: i32, n: &[u8]| names.holder(ty, n).unwrap();
        assert_eq!(by(libc::SOCK_STREAM, &full), Some(cookie(stream.as_fd()).unwrap()));
        assert_eq!(by(libc::SOCK_DGRAM, &full), Some(cookie(dgram.as_fd()).unwrap()));
        assert_ne!(cookie(stream.as_fd()).unwrap(), cookie(dgram.as_fd()).unwrap());
        // A connection the listener accepted shows its name too.
        let client = std::os::unix::net::UnixStream::connect_addr(&abstract_name(name.as_bytes())).unwrap();
        let (accepted, _) = stream.accept().unwrap();
        assert_eq!(by(libc::SOCK_STREAM, &full), Some(cookie(stream.as_fd()).unwrap()), "not the accepted socket");
        assert_ne!(cookie(accepted.as_fd()).unwrap(), cookie(stream.as_fd()).unwrap());
        drop((client, accepted));
        assert_eq!(by(libc::SOCK_SEQPACKET, &full), None, "another type's name is not it");
        assert_eq!(by(libc::SOCK_STREAM, &full[..full.len() - 1]), None, "a prefix is another name");
        assert_eq!(by(libc::SOCK_STREAM, &[&full[..], b"\0"].concat()), None, "so is a longer one");
        drop(stream);
        assert_eq!(by(libc::SOCK_STREAM, &full), None, "a closed socket holds no name");
    }

    /// Against the kernel: the socket bound to a socket file is found by
    /// the file's device and inode.
    #[test]
    fn the_holder_of_a_socket_file_is_the_socket_bound_there() {
        use std::os::unix::fs::MetadataExt;
        let dir = std::env::temp_dir().join(format!("rampart-unix-names-{}", std::process::id()));
        std::fs::create_dir(&dir).unwrap();
        let (stream_path, dgram_path) = (dir.join("s.sock"), dir.join("d.sock"));
        let stream = UnixListener::bind(&stream_path).unwrap();
        let dgram = UnixDatagram::bind(&dgram_path).unwrap();
        let names = Names::of(dgram.as_fd()).unwrap();
        let file = |p: &std::path::Path| std::fs::metadata(p).map(|m| (m.dev(), m.ino())).unwrap();
        let (dev, ino) = file(&stream_path);
        assert_eq!(names.holder_of_file(libc::SOCK_STREAM, dev, ino).unwrap(), Some(cookie(stream.as_fd()).unwrap()));
        assert_eq!(names.holder_of_file(libc::SOCK_DGRAM, dev, ino).unwrap(), None, "another type");
        let (dev, ino) = file(&dgram_path);
        assert_eq!(names.holder_of_file(libc::SOCK_DGRAM, dev, ino).unwrap(), Some(cookie(dgram.as_fd()).unwrap()));
        assert_eq!(names.holder_of_file(libc::SOCK_DGRAM, dev + 1, ino).unwrap(), None, "another device");
        drop((stream, dgram));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn records_follow_cookies() {
        let bound = Bound::default();
        let a = UnixDatagram::unbound().unwrap();
        let b = UnixDatagram::unbound().unwrap();
        let sids = rampart_avc::SidTable::default();
        let app = sids.intern("u:r:app_t:s0").unwrap();
        assert!(bound.record(a.as_fd(), app).unwrap());
        assert_eq!(bound.domain(cookie(a.as_fd()).unwrap()), Some(app));
        assert_eq!(bound.domain(cookie(b.as_fd()).unwrap()), None);
        // The first binder's record stays; a forgotten one goes.
        let other = sids.intern("u:r:other_t:s0").unwrap();
        assert!(!bound.record(a.as_fd(), other).unwrap());
        assert_eq!(bound.domain(cookie(a.as_fd()).unwrap()), Some(app));
        bound.forget(a.as_fd());
        assert_eq!(bound.domain(cookie(a.as_fd()).unwrap()), None);
    }

    #[test]
    fn malformed_dumps_are_errors_not_panics() {
        let mut shown = Vec::new();
        assert!(parse_messages(&[1, 2, 3], &mut shown).is_err());
        let mut m = vec![0u8; 16];
        m[0..4].copy_from_slice(&200u32.to_ne_bytes());
        assert!(parse_messages(&m, &mut shown).is_err(), "a length past the buffer");
        m[0..4].copy_from_slice(&16u32.to_ne_bytes());
        m[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
        assert!(parse_messages(&m, &mut shown).is_err(), "a socket message without its body");
        let mut attr = vec![0u8; 32 + 4];
        attr[0..4].copy_from_slice(&36u32.to_ne_bytes());
        attr[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
        attr[32..34].copy_from_slice(&2u16.to_ne_bytes());
        assert!(parse_messages(&attr, &mut shown).is_err(), "an attribute shorter than its header");
        assert!(shown.is_empty());
    }
}
