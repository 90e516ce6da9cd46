//! The sockets a profile may make, as the kernel decides `socket()`
//! (`apparmor_socket_create`: `aa_af_perm` in net.c, `aa_unix_create_perm`
//! in af_unix.c, as 6.18 has them).
//!
//! Why: a profile's `network` rules (`network inet stream,`,
//! `network unix,`, `deny network raw,`) say which sockets it may make.
//! A profile compiled for a feature set with network mediation allows no
//! socket it does not name, Unix ones included.
//!
//! The rules live in the policydb: from the net class's start state
//! (`AA_CLASS_NETV9` if the profile has it, else `AA_CLASS_NET`), the
//! address family and the type as two big-endian bytes each, then the
//! protocol unless the type's state already answers (`early_match`:
//! policies compiled by AppArmor 3's parser name no protocol; its
//! `network inet tcp,` is `inet stream`). A Unix socket under a v9 policy
//! always matches its protocol too (`profile_create_perm`).

use crate::ipc::{check_perms, PeerDecision};
use crate::model::{Mode, PolicyDb, Profile};
use crate::perms::{Perms, AA_MAY_CREATE};

/// `AA_CLASS_NET`: the network rules of policies before v9.
pub const CLASS_NET: usize = 14;
/// `AA_CLASS_NETV9`: fine-grained network rules (AppArmor 4's parser).
pub const CLASS_NETV9: usize = 15;
/// `AA_CONT_MATCH`: a state whose permissions are not final; the match
/// goes on to the protocol.
const AA_CONT_MATCH: u32 = 0x0800_0000;
/// `AA_MAY_BIND`: binding a socket (net.h).
pub const AA_MAY_BIND: u32 = 0x0020_0000;
/// `AA_MAY_CONNECT`: connecting one.
pub const AA_MAY_CONNECT: u32 = 0x0040;
/// `AA_MAY_LISTEN`: listening on one.
pub const AA_MAY_LISTEN: u32 = 0x0040_0000;
/// `PF_UNIX`.
const AF_UNIX: i32 = 1;

/// `net_mask_names`: the name of each network permission bit.
const MASK_NAMES: [&str; 32] = [
    "unknown", "send", "receive", "unknown", "create", "shutdown", "connect", "unknown", "setattr", "getattr",
    "setcred", "getcred", "chmod", "chown", "chgrp", "lock", "mmap", "mprot", "unknown", "unknown", "accept", "bind",
    "listen", "unknown", "setopt", "getopt", "unknown", "unknown", "unknown", "unknown", "unknown", "unknown",
];

/// `NET_PERMS_MASK`: the bits the records name.
pub const NET_PERMS_MASK: u32 = 0x0002 // send
    | 0x0004 // receive
    | AA_MAY_CREATE
    | 0x0020 // shutdown
    | 0x0040 // connect
    | 0x0100 // setattr
    | 0x0200 // getattr
    | 0x0000_0400 // setcred
    | 0x0000_0800 // getcred
    | 0x0010_0000 // accept
    | 0x0020_0000 // bind
    | 0x0040_0000 // listen
    | 0x0100_0000 // setopt
    | 0x0200_0000; // getopt

/// `aa_audit_perm_names`: the names of `mask`'s bits, space separated.
pub fn mask_words(mask: u32) -> String {
    let words: Vec<&str> =
        (0..32).filter(|i| mask & NET_PERMS_MASK & (1 << i) != 0).map(|i| MASK_NAMES[i as usize]).collect();
    words.join(" ")
}

/// `address_family_names` (net_names.h, from linux/socket.h): the
/// `family=` of a record; `None` for a number without a name.
pub fn family_name(family: i32) -> Option<&'static str> {
    const NAMES: [&str; 46] = [
        "unspec",
        "unix",
        "inet",
        "ax25",
        "ipx",
        "appletalk",
        "netrom",
        "bridge",
        "atmpvc",
        "x25",
        "inet6",
        "rose",
        "decnet",
        "netbeui",
        "security",
        "key",
        "netlink",
        "packet",
        "ash",
        "econet",
        "atmsvc",
        "rds",
        "sna",
        "irda",
        "pppox",
        "wanpipe",
        "llc",
        "ib",
        "mpls",
        "can",
        "tipc",
        "bluetooth",
        "iucv",
        "rxrpc",
        "isdn",
        "phonet",
        "ieee802154",
        "caif",
        "alg",
        "nfc",
        "vsock",
        "kcm",
        "qipcrtr",
        "smc",
        "xdp",
        "mctp",
    ];
    usize::try_from(family).ok().and_then(|i| NAMES.get(i).copied())
}

/// `sock_type_names`: the `sock_type=` of a record; `None` for a type
/// without a name.
pub fn type_name(ty: i32) -> Option<&'static str> {
    match ty {
        1 => Some("stream"),
        2 => Some("dgram"),
        3 => Some("raw"),
        4 => Some("rdm"),
        5 => Some("seqpacket"),
        6 => Some("dccp"),
        10 => Some("packet"),
        _ => None,
    }
}

/// `apparmor_socket_create` for one profile: may `p` make a socket of
/// (`family`, `ty`, `protocol`), as the security hook receives them
/// (the type's flags stripped)? A profile compiled without network
/// rules allows every socket.
pub fn create_perm(p: &Profile, family: i32, ty: i32, protocol: i32) -> PeerDecision {
    af_perm(p, AA_MAY_CREATE, (family, ty, protocol), family == AF_UNIX)
}

/// `aa_profile_af_sk_perm` for one profile: may `p` do `request` (for
/// example [`AA_MAY_BIND`]) with a socket of (`family`, `ty`,
/// `protocol`), as the kernel keeps them? (A v9 policy's Unix rules,
/// which also match addresses, are not modelled: such a socket is
/// decided by its triple.)
pub fn sk_perm(p: &Profile, request: u32, family: i32, ty: i32, protocol: i32) -> PeerDecision {
    af_perm(p, request, (family, ty, protocol), false)
}

/// `aa_profile_af_perm`, or for the creation of a Unix socket
/// (`unix_create`) af_unix.c's `profile_create_perm`.
fn af_perm(p: &Profile, request: u32, (family, ty, protocol): (i32, i32, i32), unix_create: bool) -> PeerDecision {
    if p.mode == Mode::Unconfined {
        return PeerDecision { allowed: true, record: None };
    }
    let Some(pdb) = p.policy.as_ref() else { return PeerDecision { allowed: true, record: None } };
    let start = |class: usize| pdb.start.get(class).copied().filter(|&s| s != 0);
    let (start, early) = match (unix_create, start(CLASS_NETV9)) {
        // profile_create_perm: a v9 policy decides the creation of Unix
        // sockets by the whole triple.
        (true, Some(v9)) => (v9, false),
        // aa_profile_af_perm: RULE_MEDIATES_NET, v9 first, then v7/8.
        (_, v9) => match v9.or_else(|| start(CLASS_NET)) {
            Some(s) => (s, true),
            None => return PeerDecision { allowed: true, record: None },
        },
    };
    let (perms, info) = match_to_prot(pdb, start, (family, ty, protocol), request, early);
    let mut d = check_perms(p, perms, request);
    if let Some(r) = d.record.as_mut() {
        r.info = info;
    }
    d
}

/// `aa_match_to_prot` then `aa_do_perms`' lookup: the permissions where
/// the match of the triple ends, and the `info=` of a match that died
/// (`early`: stop at the type's state unless it lacks `request` and says
/// go on).
fn match_to_prot(
    pdb: &PolicyDb,
    start: u32,
    (family, ty, protocol): (i32, i32, i32),
    request: u32,
    early: bool,
) -> (Perms, Option<&'static str>) {
    let be16 = |state: u32, v: i32| (v as u16).to_be_bytes().iter().fold(state, |s, &b| pdb.dfa.next(s, b));
    let state = be16(start, family);
    if state == 0 {
        return (Perms::default(), Some("failed af match"));
    }
    let state = be16(state, ty);
    if state == 0 {
        return (Perms::default(), Some("failed type match"));
    }
    if early {
        let p = pdb.lookup(state, true);
        if p.allow & request == request || p.allow & AA_CONT_MATCH == 0 {
            return (p, None);
        }
    }
    let state = be16(state, protocol);
    if state == 0 {
        return (Perms::default(), Some("failed protocol match"));
    }
    (pdb.lookup(state, true), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_the_kernels_tables() {
        assert_eq!(family_name(2), Some("inet"));
        assert_eq!(family_name(10), Some("inet6"));
        assert_eq!(family_name(16), Some("netlink"));
        assert_eq!(family_name(45), Some("mctp"));
        assert_eq!(family_name(46), None);
        assert_eq!(family_name(-1), None);
        assert_eq!(type_name(5), Some("seqpacket"));
        assert_eq!(type_name(7), None);
        assert_eq!(mask_words(AA_MAY_CREATE), "create");
        assert_eq!(mask_words(0x0004 | 0x0002 | 0x0020_0000), "send receive bind");
    }
}
