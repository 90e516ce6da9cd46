//! Sockets of the processes `rampart run` started: the sockets they make
//! (`socket`, `socketpair`), checked as SELinux checks them
//! (`selinux_socket_create`: `create` of the socket's class, from the
//! caller's domain on the label the new socket gets), the addresses
//! they bind and connect them to (`selinux_socket_bind`: `bind`,
//! `name_bind` on the port's label, `node_bind` on the address's;
//! `selinux_socket_connect`: `connect`, `name_connect` on the
//! destination port's), and their listens (`selinux_socket_listen`:
//! `listen`); and as AppArmor checks each.
//!
//! Why: a domain's network reach is the sockets it may make and the
//! ports it may bind and reach. A policy that gives a confined service no
//! `tcp_socket`, or no `name_connect` to a database's port, or a client
//! no `listen` (a bind shell), relies on the kernel refusing the call;
//! without these checks every launched process could make any socket,
//! reach any port and serve on any.
//!
//! How: the launcher's filter hands the calls over (crate::supervised).
//! `socket`'s arguments are registers: the kernel makes the call the
//! daemon decided. A bind's or connect's address is in the caller's
//! memory, which another thread may change after the daemon read it, and
//! the kernel would look the descriptor up again, which another thread may
//! point at another socket: the daemon makes every bind, listen and
//! connect itself, on its copy of the socket, with the address it
//! checked (crate::supervisor; a Unix socket's listen in a thread with
//! the caller's effective ids, which a listening Unix socket shows its
//! peers; a Unix socket's connect to a path, to the object checked, and
//! to an abstract name, after `connectto` or `sendto` on the socket
//! holding it: crate::unix_connects). None is left to the kernel: with
//! the descriptor and the address read again, a Unix socket switched in
//! under a UDP socket's connect, or an address whose family another
//! thread flips to `AF_UNIX` after the daemon read another, would reach
//! any socket file unchecked. The class is the kernel's
//! `socket_type_to_security_class` (`extended_socket_class` read from the
//! loaded policy), the label `security_transition_sid` from the caller's
//! domain to itself for that class (the domain's role, type and range
//! unless a `type_transition` rule says otherwise:
//! `Policy::compute_socket_create`), the port's and address's labels the
//! policy's `portcon` and `nodecon` (labels.rs). A process under an
//! AppArmor profile is asked about by its profiles too (`network` rules:
//! `rampart_apparmor::net`), as `apparmor_socket_create`, `_bind` and
//! `_connect` ask.
//!
//! What is left: a socket the process received (`SCM_RIGHTS`, inherited
//! from before the launch) or the kernel made for it (`accept`) is not
//! checked when it arrives, and a bind or connect checks it under the
//! label the caller's domain would give it now; `accept`, sends and the
//! checks on packets (peer, netif, node) are not made. The launcher's
//! Landlock ruleset keeps a launched process from binding or connecting
//! a TCP socket itself (crate::sandbox: by io_uring, say), and an MPTCP
//! or SCTP socket, which it does not cover, is never made
//! ([`beyond_landlock`]).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::fd::{AsRawFd, BorrowedFd};

use crate::enforcer::{Enforcer, Subject};
use crate::signals;

mod labels;

/// Address families (linux/socket.h) and the bound the kernel checks
/// them against (`NPROTO`, `AF_MAX` in 6.18).
mod family {
    pub const UNIX: i32 = 1;
    pub const INET: i32 = 2;
    pub const AX25: i32 = 3;
    pub const IPX: i32 = 4;
    pub const APPLETALK: i32 = 5;
    pub const NETROM: i32 = 6;
    pub const ATMPVC: i32 = 8;
    pub const X25: i32 = 9;
    pub const INET6: i32 = 10;
    pub const ROSE: i32 = 11;
    pub const DECNET: i32 = 12;
    pub const KEY: i32 = 15;
    pub const NETLINK: i32 = 16;
    pub const PACKET: i32 = 17;
    pub const ATMSVC: i32 = 20;
    pub const RDS: i32 = 21;
    pub const IRDA: i32 = 23;
    pub const PPPOX: i32 = 24;
    pub const LLC: i32 = 26;
    pub const CAN: i32 = 29;
    pub const TIPC: i32 = 30;
    pub const BLUETOOTH: i32 = 31;
    pub const IUCV: i32 = 32;
    pub const RXRPC: i32 = 33;
    pub const ISDN: i32 = 34;
    pub const PHONET: i32 = 35;
    pub const IEEE802154: i32 = 36;
    pub const CAIF: i32 = 37;
    pub const ALG: i32 = 38;
    pub const NFC: i32 = 39;
    pub const VSOCK: i32 = 40;
    pub const KCM: i32 = 41;
    pub const QIPCRTR: i32 = 42;
    pub const SMC: i32 = 43;
    pub const XDP: i32 = 44;
    pub const MCTP: i32 = 45;
    pub const MAX: i32 = 46;
}

/// Socket types (linux/net.h).
mod kind {
    pub const STREAM: i32 = 1;
    pub const DGRAM: i32 = 2;
    pub const RAW: i32 = 3;
    pub const SEQPACKET: i32 = 5;
    pub const DCCP: i32 = 6;
    pub const PACKET: i32 = 10;
    pub const MAX: i32 = 11;
    /// The type's bits; the others are flags.
    pub const MASK: i32 = 0xf;
    /// The flags a type may carry (`SOCK_CLOEXEC`, `SOCK_NONBLOCK`).
    pub const FLAGS: i32 = libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK;
}

/// IP protocols (uapi/linux/in.h) the class depends on.
mod ip {
    pub const IP: i32 = 0;
    pub const ICMP: i32 = 1;
    pub const TCP: i32 = 6;
    pub const UDP: i32 = 17;
    pub const ICMPV6: i32 = 58;
    pub const SCTP: i32 = 132;
    pub const MPTCP: i32 = 262;
}

/// A socket as the kernel's security hook sees it, or `None` where the
/// kernel refuses the call before the hook (`EINVAL`, `EAFNOSUPPORT`):
/// the type's flags stripped, and `PF_INET` with the obsolete
/// `SOCK_PACKET` made `PF_PACKET` (`__sys_socket_create`,
/// `__sock_create`).
pub(crate) fn as_hooked(family: i32, ty: i32) -> Option<(i32, i32)> {
    if (ty & !kind::MASK) & !kind::FLAGS != 0 {
        return None;
    }
    let ty = ty & kind::MASK;
    if !(0..family::MAX).contains(&family) || !(0..kind::MAX).contains(&ty) {
        return None;
    }
    let family = if family == family::INET && ty == kind::PACKET { family::PACKET } else { family };
    Some((family, ty))
}

/// Whether a socket is one whose connects a launched process could make
/// unchecked: an MPTCP or SCTP socket (`name_connect` in the TCP way).
/// rampartd makes a TCP connect itself, and the kernel a Unix socket's;
/// another thread could switch a socket onto the descriptor of a Unix
/// socket's checked connect before the kernel looks it up again, and
/// the launcher's Landlock ruleset, which refuses the process TCP
/// connects of its own, does not cover these two protocols (tested on
/// 6.18 for MPTCP), nor SCTP's other ways to connect (`setsockopt`'s
/// `SCTP_SOCKOPT_CONNECTX`, an association a send sets up). So they are
/// not made: refused as a kernel without them refuses them
/// (`EPROTONOSUPPORT`), so that programs trying MPTCP first fall back to
/// TCP. Coarser than SELinux, never laxer. An inet `SOCK_SEQPACKET`
/// socket of protocol 0 is SCTP (the kernel's default for the type).
fn beyond_landlock(family: i32, ty: i32, protocol: i32) -> bool {
    if family != family::INET && family != family::INET6 {
        return false;
    }
    protocol == ip::MPTCP || protocol == ip::SCTP || (ty == kind::SEQPACKET && protocol == ip::IP)
}

/// The class SELinux checks a new socket as (hooks.c,
/// `socket_type_to_security_class`); `extended` is the policy's
/// `extended_socket_class` capability.
pub(crate) fn class_of(family: i32, ty: i32, protocol: i32, extended: bool) -> &'static str {
    match family {
        family::UNIX => match ty {
            kind::STREAM | kind::SEQPACKET => return "unix_stream_socket",
            kind::DGRAM | kind::RAW => return "unix_dgram_socket",
            _ => {}
        },
        family::INET | family::INET6 => {
            return match ty {
                kind::STREAM | kind::SEQPACKET if matches!(protocol, ip::IP | ip::TCP | ip::MPTCP) => "tcp_socket",
                kind::STREAM | kind::SEQPACKET if extended && protocol == ip::SCTP => "sctp_socket",
                kind::DGRAM if matches!(protocol, ip::IP | ip::UDP) => "udp_socket",
                kind::DGRAM if extended && matches!(protocol, ip::ICMP | ip::ICMPV6) => "icmp_socket",
                kind::DCCP => "dccp_socket",
                _ => "rawip_socket",
            }
        }
        family::NETLINK => return netlink_class(protocol),
        family::PACKET => return "packet_socket",
        family::KEY => return "key_socket",
        family::APPLETALK => return "appletalk_socket",
        _ => {}
    }
    if !extended {
        return "socket";
    }
    match family {
        family::AX25 => "ax25_socket",
        family::IPX => "ipx_socket",
        family::NETROM => "netrom_socket",
        family::ATMPVC => "atmpvc_socket",
        family::X25 => "x25_socket",
        family::ROSE => "rose_socket",
        family::DECNET => "decnet_socket",
        family::ATMSVC => "atmsvc_socket",
        family::RDS => "rds_socket",
        family::IRDA => "irda_socket",
        family::PPPOX => "pppox_socket",
        family::LLC => "llc_socket",
        family::CAN => "can_socket",
        family::TIPC => "tipc_socket",
        family::BLUETOOTH => "bluetooth_socket",
        family::IUCV => "iucv_socket",
        family::RXRPC => "rxrpc_socket",
        family::ISDN => "isdn_socket",
        family::PHONET => "phonet_socket",
        family::IEEE802154 => "ieee802154_socket",
        family::CAIF => "caif_socket",
        family::ALG => "alg_socket",
        family::NFC => "nfc_socket",
        family::VSOCK => "vsock_socket",
        family::KCM => "kcm_socket",
        family::QIPCRTR => "qipcrtr_socket",
        family::SMC => "smc_socket",
        family::XDP => "xdp_socket",
        family::MCTP => "mctp_socket",
        _ => "socket",
    }
}

/// A netlink socket's class, by its protocol (uapi/linux/netlink.h).
fn netlink_class(protocol: i32) -> &'static str {
    match protocol {
        0 => "netlink_route_socket",
        4 => "netlink_tcpdiag_socket",
        5 => "netlink_nflog_socket",
        6 => "netlink_xfrm_socket",
        7 => "netlink_selinux_socket",
        8 => "netlink_iscsi_socket",
        9 => "netlink_audit_socket",
        10 => "netlink_fib_lookup_socket",
        11 => "netlink_connector_socket",
        12 => "netlink_netfilter_socket",
        14 => "netlink_dnrt_socket",
        15 => "netlink_kobject_uevent_socket",
        16 => "netlink_generic_socket",
        18 => "netlink_scsitransport_socket",
        20 => "netlink_rdma_socket",
        21 => "netlink_crypto_socket",
        _ => "netlink_socket",
    }
}

/// Decides `socket` or `socketpair` of (`family`, `ty`, `protocol`) by
/// thread `tid`: `Ok` lets the kernel make the call, `Err` is its error.
pub(crate) fn decide(e: &Enforcer, tid: u32, family: i32, ty: i32, protocol: i32) -> Result<(), i32> {
    let Some((family, ty)) = as_hooked(family, ty) else {
        // The kernel refuses it itself, before any security check.
        return Ok(());
    };
    if beyond_landlock(family, ty, protocol) {
        return Err(libc::EPROTONOSUPPORT);
    }
    let caller = signals::caller(e, tid, "a socket")?;
    let class = class_of(family, ty, protocol, e.extended_socket_classes());
    let selinux = e.check_socket_create(tid, caller.tgid, caller.sid, class);
    // AppArmor asks its own question and records its own denial, whatever
    // SELinux answered, as both modules of the kernel's stack do.
    let apparmor = match (&caller.apparmor, &e.apparmor) {
        (None, _) => true,
        (Some(label), Some(aa)) => {
            let enforcing = || e.avc.policy_state().2;
            aa.socket_create(label, (family, ty, protocol), (caller.tgid.unwrap_or(tid), tid), &enforcing)
        }
        // A profile without the AppArmor module: nothing to ask it.
        (Some(_), None) => false,
    };
    if selinux && apparmor {
        Ok(())
    } else {
        Err(libc::EACCES)
    }
}

/// What is done with a socket (and its address).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Use {
    Bind,
    Connect,
    /// `listen`: no address.
    Listen,
}

/// Decides a `bind`, `connect` or `listen` (`what`) of `socket` (the
/// daemon's copy of the caller's descriptor) to the address `addr` (read
/// from the caller's memory; empty for a listen) by thread `tid` of
/// `subject`, as SELinux's and AppArmor's hooks do (each module asks,
/// each records its own denial): see [`selinux_bind`],
/// [`selinux_connect`], [`selinux_listen`], and the profiles' `bind`,
/// `connect` or `listen` (`apparmor_socket_bind`, `_connect`,
/// `_listen`). `Err` is the call's error.
///
/// The socket's label is the one it would get if the caller made it now
/// (the daemon does not see which domain made it): a socket kept across
/// an exec transition or received is checked under the new domain's
/// label.
pub(crate) fn decide_use(
    e: &Enforcer,
    tid: u32,
    subject: &Subject,
    (socket, addr): (BorrowedFd<'_>, &[u8]),
    what: Use,
) -> Result<(), i32> {
    let kind = socket_kind(socket)?;
    let selinux = match what {
        Use::Bind => selinux_bind(e, tid, subject, kind, addr),
        Use::Connect => selinux_connect(e, tid, subject, kind, addr),
        Use::Listen => selinux_listen(e, tid, subject, kind),
    };
    let apparmor = match (&subject.apparmor, &e.apparmor) {
        (None, _) => true,
        (Some(label), Some(aa)) => {
            let enforcing = || e.avc.policy_state().2;
            aa.socket_use(label, what, kind, (subject.tgid.unwrap_or(tid), tid), &enforcing)
        }
        (Some(_), None) => false,
    };
    match selinux {
        Ok(()) if apparmor => Ok(()),
        Ok(()) => Err(libc::EACCES),
        Err(errno) => Err(errno),
    }
}

/// `selinux_socket_bind`: `bind` on the socket; for an inet socket,
/// `name_bind` on the port's label where the port is privileged or
/// outside the local range, then `node_bind` on the address's label.
fn selinux_bind(e: &Enforcer, tid: u32, subject: &Subject, kind: (i32, i32, i32), addr: &[u8]) -> Result<(), i32> {
    let (family, ty, protocol) = kind;
    let class = class_of(family, ty, protocol, e.extended_socket_classes());
    let perms = e.classes.socket(class).ok_or(libc::EACCES)?;
    let socket_sid = e.socket_sid(subject.sid, class).unwrap_or(subject.sid);
    let tgid = subject.tgid;
    if !e.check_label(tid, tgid, subject.sid, socket_sid, perms.class, perms.bind) {
        return Err(libc::EACCES);
    }
    if family != family::INET && family != family::INET6 {
        return Ok(());
    }
    let (ip, port) = inet_address(family, protocol, addr)?;
    let src = |v: &mut Vec<(String, String)>| {
        if port != 0 {
            v.push(("src".into(), port.to_string()));
        }
    };
    if port != 0 && needs_name_bind(port) {
        let port_sid = labels::port_sid(e, protocol, port).map_err(|why| no_label(tid, "port", &why))?;
        let mut extra = Vec::new();
        src(&mut extra);
        if !e.check_label_with(tid, tgid, (socket_sid, port_sid, perms.class, perms.name_bind), extra) {
            return Err(libc::EACCES);
        }
    }
    let node_sid = labels::node_sid(e, ip).map_err(|why| no_label(tid, "node", &why))?;
    let mut extra = Vec::new();
    if !ip.is_unspecified() {
        extra.push(("saddr".into(), ip.to_string()));
    }
    src(&mut extra);
    if !e.check_label_with(tid, tgid, (socket_sid, node_sid, perms.class, perms.node_bind), extra) {
        return Err(libc::EACCES);
    }
    Ok(())
}

/// `selinux_socket_listen`: `listen` on the socket. The daemon makes
/// the call, on the socket it checked.
fn selinux_listen(
    e: &Enforcer,
    tid: u32,
    subject: &Subject,
    (family, ty, protocol): (i32, i32, i32),
) -> Result<(), i32> {
    let class = class_of(family, ty, protocol, e.extended_socket_classes());
    let perms = e.classes.socket(class).ok_or(libc::EACCES)?;
    let socket_sid = e.socket_sid(subject.sid, class).unwrap_or(subject.sid);
    if !e.check_label(tid, subject.tgid, subject.sid, socket_sid, perms.class, perms.listen) {
        return Err(libc::EACCES);
    }
    Ok(())
}

/// `selinux_socket_connect_helper`: `connect` on the socket; for a TCP
/// or SCTP socket, `name_connect` on the destination port's label (a
/// disconnect, `AF_UNSPEC`, needs none). The daemon makes every connect
/// allowed.
fn selinux_connect(e: &Enforcer, tid: u32, subject: &Subject, kind: (i32, i32, i32), addr: &[u8]) -> Result<(), i32> {
    let (family, ty, protocol) = kind;
    let class = class_of(family, ty, protocol, e.extended_socket_classes());
    let perms = e.classes.socket(class).ok_or(libc::EACCES)?;
    let socket_sid = e.socket_sid(subject.sid, class).unwrap_or(subject.sid);
    let tgid = subject.tgid;
    if !e.check_label(tid, tgid, subject.sid, socket_sid, perms.class, perms.connect) {
        return Err(libc::EACCES);
    }
    if class != "tcp_socket" && class != "sctp_socket" {
        return Ok(());
    }
    let sa_family = match addr {
        [a, b, ..] => i32::from(u16::from_ne_bytes([*a, *b])),
        _ => return Err(libc::EINVAL),
    };
    let needs = match sa_family {
        libc::AF_UNSPEC => return Ok(()),
        libc::AF_INET => 16,
        libc::AF_INET6 => 24,
        _ if protocol == ip::SCTP => return Err(libc::EINVAL),
        _ => return Err(libc::EAFNOSUPPORT),
    };
    let port = match addr.get(2..4) {
        Some(&[hi, lo]) if addr.len() >= needs => u16::from_be_bytes([hi, lo]),
        _ => return Err(libc::EINVAL),
    };
    let port_sid = labels::port_sid(e, protocol, port).map_err(|why| no_label(tid, "port", &why))?;
    let extra = if port != 0 { vec![("dest".to_owned(), port.to_string())] } else { Vec::new() };
    if !e.check_label_with(tid, tgid, (socket_sid, port_sid, perms.class, perms.name_connect), extra) {
        return Err(libc::EACCES);
    }
    Ok(())
}

fn no_label(tid: u32, what: &str, why: &str) -> i32 {
    eprintln!("rampartd: refused a bind or connect of thread {tid}: no {what} label ({why})");
    libc::EACCES
}

/// Whether a bind's address names a Unix socket's path (a file the bind
/// makes), not an abstract name or an automatic one.
pub(crate) fn names_a_path(addr: &[u8]) -> bool {
    match addr {
        [a, b, first, ..] => i32::from(u16::from_ne_bytes([*a, *b])) == libc::AF_UNIX && *first != 0,
        _ => false,
    }
}

/// Whether `socket` is a Unix socket (`false` if it cannot be told).
pub(crate) fn is_unix(socket: BorrowedFd<'_>) -> bool {
    socket_kind(socket).is_ok_and(|(family, ..)| family == family::UNIX)
}

/// The socket's family, type and protocol, as the kernel keeps them.
pub(crate) fn socket_kind(socket: BorrowedFd<'_>) -> Result<(i32, i32, i32), i32> {
    let get = |opt: libc::c_int| -> Result<i32, i32> {
        let mut v: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: `v` and `len` are valid for the call, `len` its size.
        let rc = unsafe {
            libc::getsockopt(socket.as_raw_fd(), libc::SOL_SOCKET, opt, (&mut v as *mut libc::c_int).cast(), &mut len)
        };
        if rc < 0 {
            return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::ENOTSOCK));
        }
        Ok(v)
    };
    Ok((get(libc::SO_DOMAIN)?, get(libc::SO_TYPE)?, get(libc::SO_PROTOCOL)?))
}

/// The address and port of an inet bind, or the hook's error, as
/// `selinux_socket_bind` reads them: `AF_UNSPEC` is `INADDR_ANY` of an
/// inet socket (`EAFNOSUPPORT` otherwise), an inet6 address needs
/// `SIN6_LEN_RFC2133` bytes, another family is `EAFNOSUPPORT` (`EINVAL`
/// for SCTP).
pub(crate) fn inet_address(family: i32, protocol: i32, addr: &[u8]) -> Result<(IpAddr, u16), i32> {
    const SIN_LEN: usize = 16;
    const SIN6_LEN_RFC2133: usize = 24;
    let err_af = if protocol == ip::SCTP { libc::EINVAL } else { libc::EAFNOSUPPORT };
    let sa_family = match addr {
        [a, b, ..] => i32::from(u16::from_ne_bytes([*a, *b])),
        _ => return Err(libc::EINVAL),
    };
    let port = |a: &[u8]| match a.get(2..4) {
        Some(&[hi, lo]) => u16::from_be_bytes([hi, lo]),
        _ => 0,
    };
    match sa_family {
        libc::AF_UNSPEC | libc::AF_INET => {
            if addr.len() < SIN_LEN {
                return Err(libc::EINVAL);
            }
            let ip = Ipv4Addr::new(addr[4], addr[5], addr[6], addr[7]);
            if sa_family == libc::AF_UNSPEC {
                if family == family::INET6 {
                    return Err(if addr.len() < SIN6_LEN_RFC2133 { libc::EINVAL } else { err_af });
                }
                if !ip.is_unspecified() {
                    return Err(err_af);
                }
            }
            Ok((IpAddr::V4(ip), port(addr)))
        }
        libc::AF_INET6 => {
            let bytes: [u8; 16] = addr.get(8..24).and_then(|b| b.try_into().ok()).ok_or(libc::EINVAL)?;
            Ok((IpAddr::V6(Ipv6Addr::from(bytes)), port(addr)))
        }
        _ => Err(err_af),
    }
}

/// Whether binding `port` asks `name_bind` (`inet_port_requires_bind_service`,
/// or outside the local port range), by the daemon's network namespace's
/// settings (launched processes cannot make another).
fn needs_name_bind(port: u16) -> bool {
    let read = |name: &str| std::fs::read_to_string(format!("/proc/sys/net/ipv4/{name}")).unwrap_or_default();
    let privileged_below = read("ip_unprivileged_port_start").trim().parse::<u16>().unwrap_or(1024);
    let range: Vec<u16> = read("ip_local_port_range").split_whitespace().filter_map(|v| v.parse().ok()).collect();
    let (low, high) = match range[..] {
        [low, high] => (low, high),
        _ => (32768, 60999),
    };
    port < privileged_below || port < low || port > high
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// Hand-written from hooks.c (6.18): one case per branch.
    #[test]
    fn classes_follow_the_kernels_table() {
        let cases: &[(i32, i32, i32, bool, &str)] = &[
            (libc::AF_UNIX, libc::SOCK_STREAM, 0, false, "unix_stream_socket"),
            (libc::AF_UNIX, libc::SOCK_SEQPACKET, 0, true, "unix_stream_socket"),
            (libc::AF_UNIX, libc::SOCK_DGRAM, 0, false, "unix_dgram_socket"),
            (libc::AF_UNIX, libc::SOCK_RAW, 0, false, "unix_dgram_socket"),
            // A Unix socket of another type falls through to `socket`.
            (libc::AF_UNIX, libc::SOCK_RDM, 0, true, "socket"),
            (libc::AF_INET, libc::SOCK_STREAM, 0, false, "tcp_socket"),
            (libc::AF_INET6, libc::SOCK_STREAM, libc::IPPROTO_TCP, false, "tcp_socket"),
            (libc::AF_INET, libc::SOCK_STREAM, 262, false, "tcp_socket"),
            (libc::AF_INET, libc::SOCK_SEQPACKET, libc::IPPROTO_SCTP, true, "sctp_socket"),
            (libc::AF_INET, libc::SOCK_SEQPACKET, libc::IPPROTO_SCTP, false, "rawip_socket"),
            (libc::AF_INET, libc::SOCK_DGRAM, 0, false, "udp_socket"),
            (libc::AF_INET6, libc::SOCK_DGRAM, libc::IPPROTO_UDP, true, "udp_socket"),
            (libc::AF_INET, libc::SOCK_DGRAM, libc::IPPROTO_ICMP, true, "icmp_socket"),
            (libc::AF_INET6, libc::SOCK_DGRAM, libc::IPPROTO_ICMPV6, true, "icmp_socket"),
            (libc::AF_INET, libc::SOCK_DGRAM, libc::IPPROTO_ICMP, false, "rawip_socket"),
            (libc::AF_INET, libc::SOCK_DGRAM, libc::IPPROTO_UDPLITE, true, "rawip_socket"),
            (libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_ICMP, true, "rawip_socket"),
            (libc::AF_INET, libc::SOCK_STREAM, libc::IPPROTO_UDP, true, "rawip_socket"),
            (libc::AF_INET, 6, 0, true, "dccp_socket"),
            (libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_ROUTE, false, "netlink_route_socket"),
            (libc::AF_NETLINK, libc::SOCK_DGRAM, libc::NETLINK_AUDIT, false, "netlink_audit_socket"),
            (libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_SOCK_DIAG, false, "netlink_tcpdiag_socket"),
            (libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_KOBJECT_UEVENT, false, "netlink_kobject_uevent_socket"),
            (libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_CRYPTO, false, "netlink_crypto_socket"),
            (libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_USERSOCK, false, "netlink_socket"),
            (libc::AF_PACKET, libc::SOCK_RAW, 0, false, "packet_socket"),
            (libc::AF_KEY, libc::SOCK_RAW, 2, false, "key_socket"),
            (libc::AF_APPLETALK, libc::SOCK_DGRAM, 0, false, "appletalk_socket"),
            (libc::AF_BLUETOOTH, libc::SOCK_STREAM, 0, true, "bluetooth_socket"),
            (libc::AF_BLUETOOTH, libc::SOCK_STREAM, 0, false, "socket"),
            (libc::AF_ALG, libc::SOCK_SEQPACKET, 0, true, "alg_socket"),
            (libc::AF_VSOCK, libc::SOCK_STREAM, 0, true, "vsock_socket"),
            (libc::AF_XDP, libc::SOCK_RAW, 0, true, "xdp_socket"),
            (45, libc::SOCK_DGRAM, 0, true, "mctp_socket"),
            // Families without a class of their own.
            (libc::AF_BRIDGE, libc::SOCK_RAW, 0, true, "socket"),
            (libc::AF_IB, libc::SOCK_STREAM, 0, true, "socket"),
        ];
        for &(family, ty, protocol, extended, want) in cases {
            assert_eq!(class_of(family, ty, protocol, extended), want, "{family} {ty} {protocol} {extended}");
            assert!(crate::access::SOCKET_CLASSES.contains(&want), "{want} is declared");
        }
    }

    /// Hand-written from `selinux_socket_bind` (6.18).
    #[test]
    fn bind_addresses_read_as_the_hook_reads_them() {
        let v4 = |family: u16, port: u16, ip: [u8; 4], len: usize| {
            let mut a = vec![0u8; len.max(16)];
            a[..2].copy_from_slice(&family.to_ne_bytes());
            a[2..4].copy_from_slice(&port.to_be_bytes());
            a[4..8].copy_from_slice(&ip);
            a.truncate(len);
            a
        };
        let (inet, inet6, tcp, sctp) = (libc::AF_INET, libc::AF_INET6, 6, 132);
        let lo: IpAddr = Ipv4Addr::LOCALHOST.into();
        let any: IpAddr = Ipv4Addr::UNSPECIFIED.into();
        assert_eq!(inet_address(inet, tcp, &v4(2, 8080, [127, 0, 0, 1], 16)), Ok((lo, 8080)));
        assert_eq!(inet_address(inet, tcp, &v4(2, 8080, [127, 0, 0, 1], 15)), Err(libc::EINVAL));
        assert_eq!(inet_address(inet, tcp, &v4(2, 0, [0; 4], 1)), Err(libc::EINVAL));
        // AF_UNSPEC: INADDR_ANY of an inet socket only.
        assert_eq!(inet_address(inet, tcp, &v4(0, 80, [0; 4], 16)), Ok((any, 80)));
        assert_eq!(inet_address(inet, tcp, &v4(0, 80, [127, 0, 0, 1], 16)), Err(libc::EAFNOSUPPORT));
        assert_eq!(inet_address(inet, sctp, &v4(0, 80, [127, 0, 0, 1], 16)), Err(libc::EINVAL));
        assert_eq!(inet_address(inet6, tcp, &v4(0, 80, [0; 4], 16)), Err(libc::EINVAL));
        assert_eq!(inet_address(inet6, tcp, &v4(0, 80, [0; 4], 24)), Err(libc::EAFNOSUPPORT));
        // AF_INET6: port, then the address at offset 8 (after flowinfo).
        let mut a6 = vec![0u8; 28];
        a6[..2].copy_from_slice(&10u16.to_ne_bytes());
        a6[2..4].copy_from_slice(&443u16.to_be_bytes());
        a6[23] = 1;
        assert_eq!(inet_address(inet6, tcp, &a6), Ok((Ipv6Addr::LOCALHOST.into(), 443)));
        assert_eq!(inet_address(inet6, tcp, &a6[..24]), Ok((Ipv6Addr::LOCALHOST.into(), 443)));
        assert_eq!(inet_address(inet6, tcp, &a6[..20]), Err(libc::EINVAL));
        // Another family: EAFNOSUPPORT (EINVAL for SCTP).
        assert_eq!(inet_address(inet, tcp, &v4(1, 0, [0; 4], 16)), Err(libc::EAFNOSUPPORT));
        assert_eq!(inet_address(inet, sctp, &v4(1, 0, [0; 4], 16)), Err(libc::EINVAL));
    }

    #[test]
    fn mptcp_and_sctp_sockets_are_not_made() {
        let (inet, inet6, unix) = (libc::AF_INET, libc::AF_INET6, libc::AF_UNIX);
        let (stream, seqpacket, dgram) = (libc::SOCK_STREAM, libc::SOCK_SEQPACKET, libc::SOCK_DGRAM);
        assert!(beyond_landlock(inet, stream, 262));
        assert!(beyond_landlock(inet6, stream, 262));
        assert!(beyond_landlock(inet, stream, 132));
        assert!(beyond_landlock(inet6, seqpacket, 132));
        assert!(beyond_landlock(inet, seqpacket, 0), "SCTP by default");
        assert!(!beyond_landlock(inet, stream, 0));
        assert!(!beyond_landlock(inet, stream, 6));
        assert!(!beyond_landlock(inet6, dgram, 17));
        assert!(!beyond_landlock(unix, seqpacket, 0));
        assert!(!beyond_landlock(unix, stream, 262), "not an inet socket: the kernel refuses it");
    }

    #[test]
    fn only_a_unix_path_is_made_in_the_callers_directories() {
        let unix = |rest: &[u8]| [&(libc::AF_UNIX as u16).to_ne_bytes()[..], rest].concat();
        assert!(names_a_path(&unix(b"rel.sock\0")));
        assert!(names_a_path(&unix(b"/run/x.sock")));
        assert!(!names_a_path(&unix(b"\0abstract")), "an abstract name");
        assert!(!names_a_path(&unix(b"")), "an automatic name");
        assert!(!names_a_path(&[&(libc::AF_INET as u16).to_ne_bytes()[..], b"xy"].concat()));
        assert!(!names_a_path(&[1]));
    }

    #[test]
    fn what_the_kernel_refuses_first_is_left_to_it() {
        let stream = libc::SOCK_STREAM;
        assert_eq!(as_hooked(libc::AF_INET, stream | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK), Some((2, 1)));
        assert_eq!(as_hooked(libc::AF_INET, stream | 0x10), None, "an unknown flag: EINVAL");
        assert_eq!(as_hooked(46, stream), None, "no such family: EAFNOSUPPORT");
        assert_eq!(as_hooked(-1, stream), None);
        assert_eq!(as_hooked(libc::AF_INET, 11), None, "no such type: EINVAL");
        assert_eq!(as_hooked(45, stream), Some((45, stream)));
        // The obsolete SOCK_PACKET of PF_INET is a packet socket.
        assert_eq!(as_hooked(libc::AF_INET, 10), Some((libc::AF_PACKET, 10)));
        assert_eq!(as_hooked(libc::AF_INET6, 10), Some((libc::AF_INET6, 10)));
    }
}
