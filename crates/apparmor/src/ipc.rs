//! Signals and ptrace between labels, as the kernel's ipc.c decides
//! them (`aa_may_signal`, `profile_signal_perm`; `aa_may_ptrace`,
//! `profile_tracer_perm`, `profile_tracee_perm`) with label.c's peer
//! match (`aa_label_match`: `label_compound_match`, then
//! `label_components_match`, as 6.18 has them: since a4c9efa4dbad6 a
//! stack whose whole name dies in the DFA is still matched component by
//! component).
//!
//! Why: a profile's `signal` rules say which signals it may send to, and
//! receive from, which peers; the kernel checks both ends
//! (`xcheck_labels`: the sender's profiles may send to the target's
//! label, then the target's profiles may receive from the sender's), and
//! a profile compiled with signal mediation allows nothing it does not
//! name (its own processes included: `abstractions/base` grants
//! `signal peer=@{profile_name}`).
//!
//! `ptrace` rules say which labels a profile may trace or read (the
//! tracer's `trace`/`read`) and be traced or read by (the tracee's
//! `tracedby`/`readby`); the kernel asks them wherever it asks
//! `ptrace_may_access`: `ptrace` itself, and the opens of
//! `/proc/PID/mem` (trace), `environ` and `maps` (read).
//!
//! The rules live in the policydb (only a policy compiled for a feature
//! set with `signal` and `ptrace` has them: [`crate::compile`]): from the
//! class's start state, for a signal one byte of its AppArmor number
//! ([`map_signal`]), then the peer label's name.

use crate::file::{Record, RecordKind};
use crate::model::{Mode, PolicyDb, Profile};
use crate::perms::{Perms, MAY_READ, MAY_WRITE};

/// `AA_CLASS_PTRACE`.
pub const CLASS_PTRACE: usize = 9;
/// `AA_CLASS_SIGNAL`.
pub const CLASS_SIGNAL: usize = 10;
/// Tracing (`PTRACE_MODE_ATTACH`: `ptrace`, `/proc/PID/mem`).
pub const AA_PTRACE_TRACE: u32 = MAY_WRITE;
/// Reading (`PTRACE_MODE_READ`: `/proc/PID/environ`, `maps`).
pub const AA_PTRACE_READ: u32 = MAY_READ;
/// `PTRACE_PERM_SHIFT`: a tracee's `tracedby`/`readby` bits.
const PTRACE_PERM_SHIFT: u32 = 2;
/// `AA_PTRACE_PERM_MASK`: read, trace, readby, tracedby.
pub const PTRACE_PERM_MASK: u32 =
    AA_PTRACE_READ | AA_PTRACE_TRACE | (AA_PTRACE_READ | AA_PTRACE_TRACE) << PTRACE_PERM_SHIFT;
/// Sending a signal (`MAY_WRITE`; the parser's `AA_MAY_SEND`).
pub const AA_MAY_SEND: u32 = MAY_WRITE;
/// Receiving one (`MAY_READ`; `AA_MAY_RECEIVE`).
pub const AA_MAY_RECEIVE: u32 = MAY_READ;

/// `MAXMAPPED_SIG`: the number of signal 0 (the existence test).
const EXISTS: u8 = 35;
/// `SIGRT_BASE`: the number of `SIGRTMIN` (the kernel's 32).
const RT_BASE: i32 = 128;
/// The kernel's `SIGRTMIN` and `SIGRTMAX` (x86-64).
const SIGRTMIN: i32 = 32;
const SIGRTMAX: i32 = 64;

/// `sig_names` (sig_names.h), by AppArmor number below `RT_BASE`.
const NAMES: [&str; 36] = [
    "unknown", "hup", "int", "quit", "ill", "trap", "abrt", "bus", "fpe", "kill", "usr1", "segv", "usr2", "pipe",
    "alrm", "term", "stkflt", "chld", "cont", "stop", "stp", "ttin", "ttou", "urg", "xcpu", "xfsz", "vtalrm", "prof",
    "winch", "io", "pwr", "sys", "emt", "lost", "unused", "exists",
];

/// `map_signal_num`: the AppArmor number of Linux signal `sig` (x86-64,
/// whose numbers 1 to 31 are AppArmor's own): 0 for none (`SIGUNKNOWN`).
pub fn map_signal(sig: i32) -> u8 {
    match sig {
        0 => EXISTS,
        1..=31 => sig as u8,
        SIGRTMIN..=SIGRTMAX => (sig - SIGRTMIN + RT_BASE) as u8,
        _ => 0,
    }
}

/// The `signal=` value of an audit record (`audit_signal_cb`).
pub fn signal_name(sig: i32) -> String {
    match map_signal(sig) {
        0 => format!("unknown({sig})"),
        n if i32::from(n) >= RT_BASE => format!("rtmin+{}", i32::from(n) - RT_BASE),
        n => NAMES.get(usize::from(n)).copied().unwrap_or("unknown").to_owned(),
    }
}

/// `audit_signal_mask`: the word for a request.
pub fn mask_word(mask: u32) -> &'static str {
    if mask & MAY_READ != 0 {
        "receive"
    } else if mask & MAY_WRITE != 0 {
        "send"
    } else {
        ""
    }
}

/// `audit_ptrace_mask`: the word for a request (one bit).
pub fn ptrace_mask_word(mask: u32) -> &'static str {
    match mask {
        AA_PTRACE_READ => "read",
        AA_PTRACE_TRACE => "trace",
        m if m == AA_PTRACE_READ << PTRACE_PERM_SHIFT => "readby",
        m if m == AA_PTRACE_TRACE << PTRACE_PERM_SHIFT => "tracedby",
        _ => "",
    }
}

/// The outcome of one profile's check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerDecision {
    pub allowed: bool,
    /// The record the kernel writes, if any.
    pub record: Option<Record>,
}

const ALLOWED: PeerDecision = PeerDecision { allowed: true, record: None };

/// `profile_signal_perm`: may `p` send (`AA_MAY_SEND`) signal `sig` to
/// the label named `peer`, or receive it (`AA_MAY_RECEIVE`) from it?
/// `peer` is a label's name as the kernel prints it: `unconfined`, a
/// profile, or a stack `a//&b`; components in another namespace
/// (`:ns:name`) are outside the profile's view and not matched.
pub fn signal_perm(p: &Profile, peer: &str, sig: i32, request: u32) -> PeerDecision {
    if p.mode == Mode::Unconfined {
        return ALLOWED;
    }
    let Some((pdb, start)) = mediates(p, CLASS_SIGNAL) else { return ALLOWED };
    let state = pdb.dfa.next(start, map_signal(sig));
    let perms = label_match(p, pdb, peer, state, request);
    check_perms(p, perms, request)
}

/// `profile_tracer_perm`: may `p` trace (`AA_PTRACE_TRACE`) or read
/// (`AA_PTRACE_READ`) a process under the label named `tracee`? A policy
/// without ptrace rules (compiled without the feature) falls back to the
/// kernel's old check: its own label, or `CAP_SYS_PTRACE`, which is not
/// known here: denied.
pub fn tracer_perm(p: &Profile, tracee: &str, request: u32) -> PeerDecision {
    if p.mode == Mode::Unconfined {
        return ALLOWED;
    }
    match mediates(p, CLASS_PTRACE) {
        Some((pdb, start)) => check_perms(p, label_match(p, pdb, tracee, start, request), request),
        None if p.name == tracee => ALLOWED,
        None => PeerDecision { allowed: false, record: None },
    }
}

/// `profile_tracee_perm`: may `p` be traced or read (`request` as for
/// [`tracer_perm`]) by a process under the label named `tracer`
/// (an unconfined one: always)?
pub fn tracee_perm(p: &Profile, tracer: &str, request: u32) -> PeerDecision {
    if p.mode == Mode::Unconfined || unconfined_label(tracer) {
        return ALLOWED;
    }
    let Some((pdb, start)) = mediates(p, CLASS_PTRACE) else { return ALLOWED };
    let request = request << PTRACE_PERM_SHIFT;
    check_perms(p, label_match(p, pdb, tracer, start, request), request)
}

/// `unconfined(label)`: a label made of unconfined profiles only, each
/// namespace's `unconfined` (`:ns:unconfined`; a profile in
/// `flags=(unconfined)` mode, which the kernel counts too, is not known
/// by its name).
fn unconfined_label(label: &str) -> bool {
    label.split("//&").all(|component| {
        let name = match component.strip_prefix(':').and_then(|r| r.split_once(':')) {
            Some((_, name)) => name.strip_prefix("//").unwrap_or(name),
            None => component,
        };
        name == "unconfined"
    })
}

/// `RULE_MEDIATES`: the policydb and the class's start state, if the
/// profile was compiled with rules of that class.
fn mediates(p: &Profile, class: usize) -> Option<(&PolicyDb, u32)> {
    let pdb = p.policy.as_ref()?;
    let start = pdb.start.get(class).copied().unwrap_or(0);
    (start != 0).then_some((pdb, start))
}

/// `aa_label_match`: the compound match of the whole label, and if that
/// does not grant `request`, each component on its own, accumulated.
fn label_match(p: &Profile, pdb: &PolicyDb, peer: &str, start: u32, request: u32) -> Perms {
    let visible: Vec<&str> = peer.split("//&").filter(|c| !c.starts_with(':')).collect();
    if visible.is_empty() {
        return all_perms();
    }
    // label_compound_match: A//&B//&C as one string.
    let mut state = start;
    for (i, c) in visible.iter().enumerate() {
        if i > 0 {
            state = pdb.dfa.match_str(state, b"//&");
        }
        state = pdb.dfa.match_str(state, c.as_bytes());
        if state == 0 {
            break;
        }
    }
    if state != 0 {
        let perms = pdb.lookup(state, true);
        if perms.allow & request == request {
            return perms;
        }
    }
    // label_components_match: each component from the start state.
    let mut perms = all_perms();
    for c in &visible {
        let state = pdb.dfa.match_str(start, c.as_bytes());
        if state == 0 {
            return Perms::default();
        }
        let mut tmp = pdb.lookup(state, true);
        apply_modes(p, &mut tmp);
        accumulate(&mut perms, &tmp);
    }
    perms
}

/// `allperms`: everything allowed, quieted and hidden, so that the
/// accumulation keeps only what every component says.
fn all_perms() -> Perms {
    Perms { allow: u32::MAX, quiet: u32::MAX, hide: u32::MAX, ..Perms::default() }
}

/// `aa_perms_accum`.
fn accumulate(acc: &mut Perms, add: &Perms) {
    acc.deny |= add.deny;
    acc.allow &= add.allow & !acc.deny;
    acc.audit |= add.audit & acc.allow;
    acc.quiet &= add.quiet & !acc.allow;
    acc.kill |= add.kill & !acc.allow;
    acc.complain |= add.complain & !acc.allow & !acc.deny;
    acc.hide &= add.hide & !acc.allow;
    acc.prompt |= add.prompt & !acc.allow & !acc.deny;
}

/// `aa_apply_modes_to_perms`: the profile's audit and mode flags.
fn apply_modes(p: &Profile, perms: &mut Perms) {
    if p.audit_all {
        perms.audit = u32::MAX;
        perms.quiet = 0;
    }
    match p.mode {
        Mode::Kill => perms.kill = u32::MAX,
        Mode::Complain => perms.complain = u32::MAX,
        Mode::User => perms.prompt = u32::MAX,
        Mode::Enforce | Mode::Unconfined => {}
    }
}

/// `aa_apply_modes_to_perms` then `aa_check_perms`: the decision and
/// its record (a fully quieted denial is refused unrecorded, complain
/// mode or not, as the kernel returns before it clears the error).
pub(crate) fn check_perms(p: &Profile, mut perms: Perms, request: u32) -> PeerDecision {
    apply_modes(p, &mut perms);
    let denied = request & (!perms.allow | perms.deny);
    if denied == 0 {
        let audited = request & perms.audit;
        if audited == 0 {
            return ALLOWED;
        }
        let record = Record { kind: RecordKind::Audit, request: audited, denied: 0, info: None };
        return PeerDecision { allowed: true, record: Some(record) };
    }
    let kind = if denied & perms.kill != 0 {
        RecordKind::Kill
    } else if denied == denied & perms.complain {
        RecordKind::Allowed
    } else {
        RecordKind::Denied
    };
    let shown = denied & !perms.quiet;
    if shown == 0 {
        return PeerDecision { allowed: false, record: None };
    }
    let record = Record { kind, request, denied: shown, info: None };
    PeerDecision { allowed: kind == RecordKind::Allowed, record: Some(record) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_map_as_the_kernels_table() {
        assert_eq!(map_signal(0), 35);
        assert_eq!(map_signal(15), 15);
        assert_eq!(map_signal(31), 31);
        assert_eq!(map_signal(32), 128);
        assert_eq!(map_signal(34), 130);
        assert_eq!(map_signal(64), 160);
        assert_eq!(map_signal(65), 0);
        assert_eq!(map_signal(-1), 0);
        assert_eq!(signal_name(15), "term");
        assert_eq!(signal_name(0), "exists");
        assert_eq!(signal_name(34), "rtmin+2");
        assert_eq!(signal_name(99), "unknown(99)");
    }
}
