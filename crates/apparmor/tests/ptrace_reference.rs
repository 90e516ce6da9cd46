//! Reference test: Rampart's ptrace decisions (`ipc::tracer_perm`,
//! `ipc::tracee_perm`) on the shipped profiles, as compiled by
//! apparmor_parser with ptrace mediation, against python3-apparmor.
//!
//! `reference/pyptrace.py` reads /etc/apparmor.d and
//! /usr/share/apparmor/extra-profiles with python3-apparmor (`PtraceRule`
//! for access, peer AARE and audit/deny), plus synthetic profiles it
//! writes for what the shipped ones lack (deny and audit deny rules,
//! audit allow rules, complain, kill, audit and unconfined modes,
//! access aliases, profiles without ptrace rules, stacks whose whole
//! name is denied, rules about the unconfined tracer,
//! `@{profile_name}` in children, hats and glob-named profiles). For
//! every profile, child profile and hat it generates queries (role
//! tracer or tracee, request trace or read; peers from the rules' peer
//! globs, near misses, `unconfined` here and in another namespace, the
//! profile's own name and family, other profiles, random names and
//! stacks) and writes whether the text grants each, whether an `audit`
//! rule covers it and whether a deny rule without `audit` quiets it. We
//! compile each profile file with apparmor_parser for the 3.0 ABI
//! features (which have `ptrace`), load the binaries and compare the
//! decision and the audit record with what those sets and the profile's
//! mode imply:
//! - an unconfined profile allows everything, and a tracee allows an
//!   unconfined tracer before looking at anything (ipc.c
//!   profile_tracee_perm): allowed, no record;
//! - granted: allowed, with an AUDIT record when an `audit` rule (or the
//!   `audit` flag) covers it, else none;
//! - not granted and quieted (no `audit` flag): refused without a record,
//!   complain mode included (aa_check_perms returns before complain
//!   mode's pass);
//! - otherwise: enforce refuses with DENIED, kill with KILL, complain
//!   allows with ALLOWED.
//!
//! The record's request is the tracer's `trace`/`read` bit, or for a
//! tracee the `tracedby`/`readby` bit (the request shifted by
//! PTRACE_PERM_SHIFT); its denied mask is the request, or 0 for AUDIT.
//!
//! What python3-apparmor does not model (access aliases, `@{profile_name}`
//! as the parser expands it, the kernel's match of stacked peer labels,
//! the unconfined tracer) is added on its side from apparmor_parser's
//! and the kernel's documented behaviour, never from Rampart: see
//! pyptrace.py's module doc.
//!
//! Sample: 167 profiles (154 shipped, 13 synthetic); two instances of
//! each peer glob, 24 other profiles and a few random peers per profile
//! (about 26,000 queries, about 10 s with the compiles) by default,
//! eight rounds (about 86,000) with `RAMPART_FULL=1`. Every disagreement
//! fails the test, listing the first 20 and the count of each class.
//! Needs the packages of scripts/install-deps.sh.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod peer_reference;

use peer_reference::{check, Answer, Line};
use rampart_apparmor::ipc::{ptrace_mask_word, tracee_perm, tracer_perm, AA_PTRACE_READ, AA_PTRACE_TRACE};
use rampart_apparmor::Profile;

/// `PTRACE_PERM_SHIFT`: a tracee's `tracedby`/`readby` bits.
const PTRACE_PERM_SHIFT: u32 = 2;

/// A query's own columns: `tracer` or `tracee` (the profile's side),
/// `trace` or `read`, the peer label.
fn ask(p: &Profile, l: &Line) -> Answer {
    let [role, request, peer] = l.query;
    let request = match request {
        "trace" => AA_PTRACE_TRACE,
        "read" => AA_PTRACE_READ,
        r => panic!("bad request {r}"),
    };
    let (decision, request) = match role {
        "tracer" => (tracer_perm(p, peer, request), request),
        "tracee" => (tracee_perm(p, peer, request), request << PTRACE_PERM_SHIFT),
        r => panic!("bad role {r}"),
    };
    Answer { decision, request, name: format!("{} peer={peer}", ptrace_mask_word(request)) }
}

#[test]
#[ignore = "needs apparmor_parser, python3-apparmor and the shipped profiles"]
fn shipped_ptrace_rules_agree_with_python3_apparmor() {
    check("ptrace", "pyptrace.py", "29", 20_000, &ask);
}
