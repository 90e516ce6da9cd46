//! Reference test: Rampart's signal decisions (`ipc::signal_perm`) on
//! the shipped profiles, as compiled by apparmor_parser with signal
//! mediation, against python3-apparmor.
//!
//! `reference/pysignal.py` reads /etc/apparmor.d and
//! /usr/share/apparmor/extra-profiles with python3-apparmor (`SignalRule`
//! for access, signal set, peer AARE and audit/deny), plus synthetic
//! profiles it writes for what the shipped ones lack (deny and audit
//! deny rules, complain, kill, audit and unconfined modes, profiles
//! without signal rules, stacks whose whole name is denied). For every
//! profile, child profile and hat it generates queries (Linux signal
//! numbers from the rules' sets plus `exists`, common and real-time
//! ones; peers from the rules' peer globs, near misses, `unconfined`,
//! the profile's own name, other profiles, random names and stacks) and
//! writes whether the text grants each, whether an `audit` rule covers
//! it and whether a deny rule without `audit` quiets it. We compile each
//! profile file with apparmor_parser for the 3.0 ABI features (which
//! have `signal`), load the binaries and compare the decision and the
//! audit record with what those sets and the profile's mode imply:
//! - granted: allowed, with an AUDIT record when an `audit` rule (or the
//!   `audit` flag) covers it, else none;
//! - not granted and quieted (no `audit` flag): refused without a record,
//!   complain mode included (aa_check_perms returns before complain
//!   mode's pass);
//! - otherwise: enforce refuses with DENIED, kill with KILL, complain
//!   allows with ALLOWED; an unconfined profile allows everything.
//!
//! What python3-apparmor does not model (access aliases, `rtmin+N`
//! numbers, signal numbering, `@{profile_name}` as the parser expands
//! it, the kernel's match of stacked peer labels) is added on its side
//! from apparmor_parser's and the kernel's documented behaviour, never
//! from Rampart: see pysignal.py's module doc.
//!
//! Sample: 164 profiles (154 shipped, 10 synthetic); two instances of
//! each peer glob and a few random peers per profile (about 95,000
//! queries, about 12 s with the compiles) by default, eight (about
//! 260,000) with `RAMPART_FULL=1`. Every disagreement fails the test,
//! listing the first 20 and the count of each class. Needs the packages
//! of scripts/install-deps.sh.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod peer_reference;

use peer_reference::{check, Answer, Line};
use rampart_apparmor::ipc::{signal_name, signal_perm, AA_MAY_RECEIVE, AA_MAY_SEND};
use rampart_apparmor::Profile;

/// A query's own columns: the Linux signal number, the peer label,
/// `send` or `receive`.
fn ask(p: &Profile, l: &Line) -> Answer {
    let [sig, peer, access] = l.query;
    let sig: i32 = sig.parse().unwrap();
    let request = match access {
        "send" => AA_MAY_SEND,
        "receive" => AA_MAY_RECEIVE,
        a => panic!("bad access {a}"),
    };
    let name = format!("{access} signal={} peer={peer}", signal_name(sig));
    Answer { decision: signal_perm(p, peer, sig, request), request, name }
}

#[test]
#[ignore = "needs apparmor_parser, python3-apparmor and the shipped profiles"]
fn shipped_signal_rules_agree_with_python3_apparmor() {
    check("signal", "pysignal.py", "23", 50_000, &ask);
}
