//! Reference test: Rampart's socket-creation decisions
//! (`net::create_perm`) on the shipped profiles, as compiled by
//! apparmor_parser with network mediation, against python3-apparmor.
//!
//! `reference/pynet.py` reads /etc/apparmor.d and
//! /usr/share/apparmor/extra-profiles with python3-apparmor
//! (`NetworkRule` for the family, the type or protocol word and
//! audit/deny), plus synthetic profiles it writes for what the shipped
//! ones lack (deny and audit deny rules, audit allow rules, complain,
//! kill, audit and unconfined modes, profiles without network rules,
//! bare `network,`, family-only, type-only and family+type rules,
//! protocol words, a `deny network,` over allow rules, children and
//! hats). For every profile, child profile and hat it generates
//! queries (every socket type 0..10 of the fixed families unspec, unix,
//! inet, inet6, decnet, netlink and packet, of the families its rules
//! name and of a few drawn at random; the protocol 0 and the family's
//! usual one) and writes whether the text grants each, whether an
//! `audit` rule covers it and whether a deny rule without `audit`
//! quiets it. We compile each profile file with apparmor_parser for the
//! 3.0 ABI features (which have `network`), load the binaries and
//! compare the decision and the audit record of `create` with what
//! those sets and the profile's mode imply:
//! - granted: allowed, with an AUDIT record when an `audit` rule (or the
//!   `audit` flag) covers it, else none;
//! - not granted and quieted (no `audit` flag): refused without a record,
//!   complain mode included (aa_check_perms returns before complain
//!   mode's pass);
//! - otherwise: enforce refuses with DENIED, kill with KILL, complain
//!   allows with ALLOWED; an unconfined profile allows everything.
//!
//! The record's request is `create` (AA_MAY_CREATE), its denied mask
//! the request, or 0 for AUDIT.
//!
//! What the rule text alone does not say (which (family, type) pairs a
//! family-only, type-only, bare or protocol-word rule compiles to, that
//! every profile has the network class, that the protocol is never
//! matched) is added on the python side from apparmor_parser 3.0's
//! `-D rule-exprs` output and the kernel's net.c, never from Rampart:
//! see pynet.py's module doc. Left out there: the unix queries of
//! profiles with `unix` rules (which the parser also compiles into the
//! network class), that is of all but one shipped profile, since
//! abstractions/base has `unix (create),`.
//!
//! Sample: 174 profiles (154 shipped, 20 synthetic); about 23,000
//! queries (about 1,700 granted, 200 quieted; about 5 s with the
//! compiles) by default, about 80,000 with `RAMPART_FULL=1` (more random
//! families and a random protocol per pair). Every disagreement fails the test, listing the first 20 and
//! the count of each class. Needs the packages of scripts/install-deps.sh.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod peer_reference;

use peer_reference::{check, Answer, Line};
use rampart_apparmor::net::{create_perm, family_name, type_name};
use rampart_apparmor::perms::AA_MAY_CREATE;
use rampart_apparmor::Profile;

/// A query's own columns: the address family, the socket type and the
/// protocol, as numbers.
fn ask(p: &Profile, l: &Line) -> Answer {
    let [family, ty, protocol] = l.query.map(|c| c.parse::<i32>().unwrap());
    let name = format!(
        "create family={} sock_type={} protocol={protocol}",
        family_name(family).map_or_else(|| family.to_string(), str::to_string),
        type_name(ty).map_or_else(|| ty.to_string(), str::to_string),
    );
    Answer { decision: create_perm(p, family, ty, protocol), request: AA_MAY_CREATE, name }
}

#[test]
#[ignore = "needs apparmor_parser, python3-apparmor and the shipped profiles"]
fn shipped_network_rules_agree_with_python3_apparmor() {
    check("net", "pynet.py", "31", 15_000, &ask);
}
