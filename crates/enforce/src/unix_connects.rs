//! Connects of Unix sockets by the processes `rampart run` started, made
//! by the daemon after SELinux's checks: to a path (a `sockaddr_un`
//! naming a file), `write` of the file's class (`unix_find_bsd`'s
//! `path_permission(MAY_WRITE)`: `sock_file { write }` for a socket
//! file); to an abstract name (no file), `connectto` (a stream socket) or
//! `sendto` (a datagram socket) on the socket holding the name.
//!
//! Why: a service's socket is the door to what the service does for its
//! clients: a container engine's (`docker.sock`: a privileged container,
//! root on the host), the service manager's private socket, the system
//! bus, an X server's abstract `@/tmp/.X11-unix/X0` (every window's
//! keystrokes), a container shim's abstract socket (CVE-2020-15257: a
//! container on the host's network reached it and became root). SELinux
//! keeps a confined domain away from such a door by the file's label
//! (`container_var_run_t`, `init_var_run_t`) or the server's domain
//! (`xserver_t`), also a confined root process, whom the mode bits let
//! through: without the check, a web server running as root in its
//! domain could ask the container engine for a privileged container.
//!
//! How, to a path: the path is in the caller's memory, which another
//! thread may change after a check, and a symbolic link on it may be
//! switched before the kernel's own lookup: so the daemon resolves the
//! path once (in the caller's root, from its working directory, with its
//! file credentials, following links as the kernel does; the caller's
//! own descriptors' names, `/proc/self/fd/N`, as the caller's
//! descriptors), checks the mode bits, then the label of what it reached,
//! and connects its copy of the caller's socket (`pidfd_getfd`: the same
//! socket) to that object through `/proc/thread-self/fd/N`: the kernel
//! follows the magic link to the checked inode, checks the mode bits
//! again and finds the socket bound there.
//!
//! How, to an abstract name: the daemon reads the address once, finds the
//! socket holding the name in the kernel's table and the domain that made
//! it (crate::unix_names: a launched process's bind, which the daemon
//! makes, is recorded; any other socket is the default domain's, as the
//! processes outside rampartd's tree are), checks the peer permission,
//! connects to the name it read, and then makes sure the same socket
//! still holds it (a name is held by one socket until that socket is
//! closed, so the same holder after the connect was the holder at it);
//! another holder: the socket is shut down and the connect refused. A
//! datagram sent to a name without a connect (`sendto`, `sendmsg`), whose
//! address the filter cannot read, is left to the kernel, where the
//! launcher's Landlock scope refuses it to a socket made outside the
//! launched tree (crate::sandbox, `Forbidden::AbstractUnix`).
//!
//! Either connect is made by a thread of its own, which first takes the
//! caller's effective user, group, groups (and, to a path, capabilities):
//! a Unix socket's peer sees its connector's (`SO_PEERCRED`,
//! `SO_PEERGROUPS`), and the kernel's checks see the caller; the thread
//! ends with the call, so no thread of the daemon keeps those ids. It runs
//! among the calls that may block for long (crate::call_threads: a
//! listener whose queue is full holds a connect), and a signal the caller
//! catches interrupts it (crate::call_interrupts).
//!
//! To a path, the peer is checked too where a launched process bound the
//! socket there (its domain recorded, crate::unix_names; found by the
//! file's device and inode, and looked up again after the connect), and
//! not where a service outside rampartd's tree did: such a service runs
//! in the default domain here, not in the one SELinux would give it
//! (`syslogd_t`, `system_dbusd_t`), so the check would refuse confined
//! processes their journal, bus and name service.
//!
//! What differs: the process id the peer sees is rampartd's (as after a
//! Unix socket's listen the daemon made).
//! To an abstract name the default domain stands for those services, as
//! for a signal: a domain SELinux lets reach `xserver_t` needs
//! `connectto` on the default domain here (coarser where the policy
//! grants it less). A socket is labeled with the domain that bound it,
//! not the one that made it (SELinux's: they differ where a socket is
//! passed on or kept across an exec transition), and a socket bound
//! before this daemon started, by the kernel (an automatic name a send
//! gave it), or by a process without the sandbox counts as the default
//! domain's. AppArmor's `unix` rules are not asked.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::sync::Arc;

use crate::call_interrupts::{self, Interrupts};
use crate::enforcer::Subject;
use crate::supervisor::{checked, enter_root, errno_of, has_send_timeout, open_path, Context, Object};
use crate::thread_creds::{mode_allows, Creds, PeerIds};
use crate::unix_names::{Bound, Names};

/// `sizeof(struct sockaddr_un)`: a longer address is refused (`EINVAL`,
/// `unix_validate_addr`).
const SOCKADDR_UN: usize = 110;

/// What a connect to a path needs of its caller, read while the caller
/// waits in the call, by the thread that received it (a worker's
/// Landlock domain cannot read another process's `/proc/TID/root`).
pub(crate) struct Caller {
    root: OwnedFd,
    cwd: OwnedFd,
    path: Vec<u8>,
    /// The path names one of the caller's own descriptors
    /// (crate::supervised_open's aliases): what it is open on.
    alias: Option<OwnedFd>,
    creds: Creds,
    ids: PeerIds,
}

/// The path a Unix address names (`None`: an abstract or automatic
/// name, or another family): the bytes after the family up to the first
/// NUL, as `unix_mkname_bsd` ends it.
pub(crate) fn path_in(addr: &[u8]) -> Option<&[u8]> {
    if !crate::sockets::names_a_path(addr) {
        return None;
    }
    let path = addr.get(2..)?;
    Some(path.split(|&b| b == 0).next().unwrap_or(path))
}

/// The kernel's check of the address's length (`unix_validate_addr`),
/// made after the socket's own checks, as the kernel makes it.
pub(crate) fn valid_length(addr: &[u8]) -> Result<(), i32> {
    if addr.len() > SOCKADDR_UN {
        return Err(libc::EINVAL);
    }
    Ok(())
}

/// Step 1 for a connect of thread `tid` to `path`.
pub(crate) fn gather(tid: u32, path: &[u8]) -> Result<Caller, i32> {
    let proc = |rest: &str| open_path(libc::AT_FDCWD, OsStr::new(&format!("/proc/{tid}/{rest}")), 0);
    let root = proc("root").map_err(|_| libc::ESRCH)?;
    let cwd = proc("cwd").map_err(|_| libc::ESRCH)?;
    let alias = crate::supervised_open::descriptor_alias(tid, path).and_then(|n| proc(&format!("fd/{n}")).ok());
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).map_err(|_| libc::ESRCH)?;
    let creds = Creds::from_status(&status).ok_or(libc::ESRCH)?;
    let ids = PeerIds::from_status(&status).ok_or(libc::ESRCH)?;
    Ok(Caller { root, cwd, path: path.to_vec(), alias, creds, ids })
}

/// A connect's notification and its caller, for the interruptions.
pub(crate) struct Call<'a> {
    pub id: u64,
    pub tid: u32,
    pub subject: &'a Subject,
    pub interrupts: &'a Arc<Interrupts>,
}

/// Connects `socket` (the daemon's copy of the caller's) to what
/// `caller`'s path names, if the mode bits and the label allow it, in a
/// thread of its own (see the module docs). The call's result.
pub(crate) fn connect(cx: &Context, call: &Call<'_>, socket: BorrowedFd<'_>, caller: Caller) -> Result<i64, i32> {
    std::thread::scope(|s| {
        let thread = std::thread::Builder::new()
            .name("unix connect".into())
            .spawn_scoped(s, || connect_here(cx, call, socket, caller))
            .map_err(|e| errno_of(&e))?;
        thread.join().unwrap_or(Err(libc::EIO))
    })
}

/// [`connect`], in the thread that ends with it.
fn connect_here(cx: &Context, call: &Call<'_>, socket: BorrowedFd<'_>, caller: Caller) -> Result<i64, i32> {
    // SAFETY: unshare with a flag only: this thread's fs_struct becomes
    // its own, so its chroot touches no other thread.
    if unsafe { libc::unshare(libc::CLONE_FS) } < 0 {
        return Err(errno_of(&io::Error::last_os_error()));
    }
    let daemon_root = open_path(libc::AT_FDCWD, OsStr::new("/"), libc::O_DIRECTORY)?;
    let daemon = Creds::current().map_err(|e| errno_of(&e))?;
    // Resolved in the caller's root with its credentials, the mode bits
    // checked with them.
    enter_root(caller.root.as_fd())?;
    caller.creds.assume().map_err(|e| errno_of(&e))?;
    let object = resolve(&caller).and_then(|o| mode_allows(o.fd.as_fd(), libc::W_OK).map(|()| o));
    // The labels as the daemon, in its root.
    daemon.assume().map_err(|e| errno_of(&e))?;
    enter_root(daemon_root.as_fd())?;
    let object = object?;
    let subject = call.subject;
    if let Some(cp) = cx.enforcer.classes.of_mode(object.md.mode()) {
        if !checked(cx, call.tid, subject.tgid, subject.sid, &[(&object, cp.write)]) {
            return Err(libc::EACCES);
        }
    }
    let peer = checked_file_peer(cx, call, socket, &object)?;
    // The connect as the caller: the peer's view, and the kernel's
    // checks of the path again.
    caller.ids.take().map_err(|e| errno_of(&e))?;
    caller.creds.assume().map_err(|e| errno_of(&e))?;
    let through = format!("/proc/thread-self/fd/{}", object.fd.as_raw_fd());
    let connected = call
        .interrupts
        .run(call.id, call.tid, || connect_to(socket, through.as_bytes()))
        .map_err(|errno| call_interrupts::interrupted(errno, has_send_timeout(socket)))?;
    if let Some(peer) = &peer {
        still_held(peer, socket, call.tid)?;
    }
    Ok(connected)
}

/// What a connect to an abstract name needs, read while the caller waits
/// in the call: the address, the name's holder then, and who connects.
pub(crate) struct AbstractTarget {
    addr: Vec<u8>,
    class: &'static str,
    ty: i32,
    names: Names,
    holder: Option<u64>,
    ids: PeerIds,
}

/// The abstract name an address names (the bytes after the family, the
/// leading NUL included), or `None`: a path, an automatic name (a bind's
/// only), another family.
pub(crate) fn abstract_name(addr: &[u8]) -> Option<&[u8]> {
    match addr {
        [a, b, 0, ..] if i32::from(u16::from_ne_bytes([*a, *b])) == libc::AF_UNIX => addr.get(2..),
        _ => None,
    }
}

/// Step 1 for a connect of thread `tid`'s Unix `socket` to the abstract
/// address `addr`.
pub(crate) fn gather_abstract(
    e: &crate::enforcer::Enforcer,
    tid: u32,
    socket: BorrowedFd<'_>,
    addr: &[u8],
) -> Result<AbstractTarget, i32> {
    let name = abstract_name(addr).ok_or(libc::EINVAL)?;
    let (family, ty, protocol) = crate::sockets::socket_kind(socket)?;
    let class = crate::sockets::class_of(family, ty, protocol, e.extended_socket_classes());
    let names = Names::of(socket).map_err(|err| names_unknown(tid, &err))?;
    let holder = names.holder(ty, name).map_err(|err| names_unknown(tid, &err))?;
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).map_err(|_| libc::ESRCH)?;
    let ids = PeerIds::from_status(&status).ok_or(libc::ESRCH)?;
    Ok(AbstractTarget { addr: addr.to_vec(), class, ty, names, holder, ids })
}

fn names_unknown(tid: u32, err: &io::Error) -> i32 {
    eprintln!("rampartd: refused a connect of thread {tid} to an abstract name: its holder is unknown ({err})");
    libc::EACCES
}

/// SELinux's check of the peer (`selinux_socket_unix_stream_connect`:
/// `connectto`; `selinux_socket_unix_may_send`: `sendto`), from the
/// label the caller's socket has to the label of the socket holding the
/// name: made by the domain that bound it (crate::unix_names), else the
/// default domain's. No holder: the kernel refuses the connect before
/// its check (`ECONNREFUSED`), and so will the daemon's connect.
pub(crate) fn decide_peer(
    e: &crate::enforcer::Enforcer,
    tid: u32,
    subject: &Subject,
    target: &AbstractTarget,
    bound: &Bound,
) -> Result<(), i32> {
    let Some(cookie) = target.holder else { return Ok(()) };
    check_peer(e, tid, subject, target.class, bound.domain(cookie).unwrap_or(e.default_sid))
}

/// `connectto` or `sendto` (`class`'s peer permission) from the label
/// `subject`'s socket has to the label of a socket made in `peer_domain`.
fn check_peer(
    e: &crate::enforcer::Enforcer,
    tid: u32,
    subject: &Subject,
    class: &str,
    peer_domain: rampart_avc::Sid,
) -> Result<(), i32> {
    let perms = e.classes.socket(class).ok_or(libc::EACCES)?;
    let ssid = e.socket_sid(subject.sid, class).unwrap_or(subject.sid);
    let tsid = e.socket_sid(peer_domain, class).unwrap_or(peer_domain);
    if !e.check_label(tid, subject.tgid, ssid, tsid, perms.class, perms.peer) {
        return Err(libc::EACCES);
    }
    Ok(())
}

/// The socket bound to a socket file, where a launched process bound it
/// (its domain known: crate::unix_names), checked as the connect's peer.
struct FilePeer {
    names: Names,
    ty: i32,
    cookie: u64,
    dev: u64,
    ino: u64,
}

/// The peer check of a connect to the socket file `object`, where the
/// socket bound there was bound by a launched process (another's, a
/// service outside the tree, is not checked: see the module docs).
fn checked_file_peer(
    cx: &Context,
    call: &Call<'_>,
    socket: BorrowedFd<'_>,
    object: &Object,
) -> Result<Option<FilePeer>, i32> {
    if !object.md.file_type().is_socket() {
        return Ok(None);
    }
    let e = &cx.enforcer;
    let (family, ty, protocol) = crate::sockets::socket_kind(socket)?;
    let unknown = |err: io::Error| {
        eprintln!("rampartd: refused a connect of thread {} to a socket file: its holder is unknown ({err})", call.tid);
        libc::EACCES
    };
    let names = Names::of(socket).map_err(unknown)?;
    let (dev, ino) = (object.md.dev(), object.md.ino());
    let Some(cookie) = names.holder_of_file(ty, dev, ino).map_err(unknown)? else { return Ok(None) };
    let Some(domain) = cx.bound.domain(cookie) else { return Ok(None) };
    let class = crate::sockets::class_of(family, ty, protocol, e.extended_socket_classes());
    check_peer(e, call.tid, call.subject, class, domain)?;
    Ok(Some(FilePeer { names, ty, cookie, dev, ino }))
}

/// Whether the peer checked still holds its socket file after the
/// connect (a socket holds its file until it is closed, so the same
/// holder after the connect was the one connected to); if not, `socket`
/// is shut down.
fn still_held(peer: &FilePeer, socket: BorrowedFd<'_>, tid: u32) -> Result<(), i32> {
    let now = peer.names.holder_of_file(peer.ty, peer.dev, peer.ino);
    held_by(now, peer.cookie, socket, (tid, "a socket file"))
}

/// `Ok` if `now` (the holder looked up after the connect) is `checked`;
/// else `socket` is shut down and the connect refused.
fn held_by(
    now: io::Result<Option<u64>>,
    checked: u64,
    socket: BorrowedFd<'_>,
    (tid, what): (u32, &str),
) -> Result<(), i32> {
    match now {
        Ok(Some(now)) if now == checked => Ok(()),
        held => {
            eprintln!(
                "rampartd: refused a connect of thread {tid} to {what}: its holder changed during the call ({held:?})"
            );
            // SAFETY: integer arguments on an open socket.
            unsafe { libc::shutdown(socket.as_raw_fd(), libc::SHUT_RDWR) };
            Err(libc::EACCES)
        }
    }
}

/// Connects `socket` (the daemon's copy of the caller's) to the abstract
/// name checked, in a thread that takes the caller's ids first (the
/// peer's view: crate::thread_creds), then makes sure the socket that holds the
/// name is still the one checked: a name is held by one socket until it
/// is closed, so the same holder after the connect is the holder at the
/// connect. Another (the checked one closed and another bound the name
/// between the check and the connect): the socket is shut down and the
/// connect refused.
pub(crate) fn connect_abstract(call: &Call<'_>, socket: BorrowedFd<'_>, target: AbstractTarget) -> Result<i64, i32> {
    let (interrupts, id, tid) = (Arc::clone(call.interrupts), call.id, call.tid);
    let (addr, own) = (target.addr.clone(), socket.try_clone_to_owned().map_err(|e| errno_of(&e))?);
    let connected = target.ids.run_as(move || {
        let len = libc::socklen_t::try_from(addr.len()).map_err(|_| libc::EINVAL)?;
        interrupts
            .run(id, tid, || {
                // SAFETY: `addr` holds `len` bytes for the call.
                let rc = unsafe { libc::connect(own.as_raw_fd(), addr.as_ptr().cast(), len) };
                if rc < 0 {
                    Err(errno_of(&io::Error::last_os_error()))
                } else {
                    Ok(0)
                }
            })
            .map_err(|errno| call_interrupts::interrupted(errno, has_send_timeout(own.as_fd())))
    });
    let value = connected.map_err(|e| errno_of(&e))??;
    let name = abstract_name(&target.addr).ok_or(libc::EINVAL)?;
    let now = target.names.holder(target.ty, name);
    // No holder at the check: the connect succeeded only if one came
    // meanwhile, unchecked (`u64::MAX` is no cookie the kernel gives).
    let checked = target.holder.unwrap_or(u64::MAX);
    held_by(now, checked, socket, (call.tid, "an abstract name")).map(|()| value)
}

/// The object `caller`'s path names, followed as the kernel's lookup
/// follows it (`LOOKUP_FOLLOW`), magic links excepted (crate::supervisor).
fn resolve(caller: &Caller) -> Result<Object, i32> {
    match &caller.alias {
        Some(fd) => Object::of(fd.try_clone().map_err(|e| errno_of(&e))?),
        None if caller.path.is_empty() => Err(libc::ENOENT),
        None => Object::of(crate::supervised_open::path_of(caller.cwd.as_fd(), &caller.path, 0)?),
    }
}

/// `connect` of `socket` to the Unix path `path`.
fn connect_to(socket: BorrowedFd<'_>, path: &[u8]) -> Result<i64, i32> {
    // SAFETY: sockaddr_un is plain data; zeroed is a valid value.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    if path.len() >= addr.sun_path.len() {
        return Err(libc::ENAMETOOLONG);
    }
    for (to, &from) in addr.sun_path.iter_mut().zip(path) {
        *to = from as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
    // SAFETY: `addr` is a sockaddr_un of `len` bytes, NUL-terminated.
    let rc = unsafe { libc::connect(socket.as_raw_fd(), (&addr as *const libc::sockaddr_un).cast(), len) };
    if rc < 0 {
        return Err(errno_of(&io::Error::last_os_error()));
    }
    Ok(0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn unix(path: &[u8]) -> Vec<u8> {
        let mut a = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        a.extend_from_slice(path);
        a
    }

    #[test]
    fn the_path_ends_where_the_kernel_ends_it() {
        assert_eq!(path_in(&unix(b"/run/x.sock\0")), Some(&b"/run/x.sock"[..]));
        // Without a NUL: the address's length ends it.
        assert_eq!(path_in(&unix(b"rel.sock")), Some(&b"rel.sock"[..]));
        assert_eq!(path_in(&unix(b"a\0b")), Some(&b"a"[..]));
        // Abstract and automatic names, and other families, are not paths.
        assert_eq!(path_in(&unix(b"\0abstract")), None);
        assert_eq!(path_in(&unix(b"")), None);
        let mut inet = (libc::AF_INET as u16).to_ne_bytes().to_vec();
        inet.extend_from_slice(b"/x");
        assert_eq!(path_in(&inet), None);
    }

    #[test]
    fn an_address_longer_than_sockaddr_un_is_refused() {
        let long = unix(&[b'a'; 108]);
        assert_eq!(long.len(), SOCKADDR_UN);
        assert_eq!(valid_length(&long), Ok(()));
        assert_eq!(valid_length(&unix(&[b'a'; 109])), Err(libc::EINVAL));
    }
}
