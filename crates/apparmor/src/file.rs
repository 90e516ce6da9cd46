//! File decisions as the kernel's file.c: `__aa_path_perm` (path
//! lookup, owner/other half), `aa_audit_file` + `aa_audit` (audit,
//! quiet and kill masks, complain and kill modes) and
//! `profile_path_link` (the hard-link pair check).
//!
//! Paths are the names the kernel builds (`aa_path_name`): absolute,
//! directories ending in `/` (`PATH_IS_DIR`). Building them from a
//! `struct path` is the caller's business.

use crate::model::{Mode, Profile, CLASS_FILE};
use crate::perms::*;
use crate::policy::Subject;

/// The type of audit record the kernel would emit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    /// `AUDIT_APPARMOR_AUDIT`: an allowed access that is force-audited.
    Audit,
    /// `AUDIT_APPARMOR_ALLOWED`: a denial let through by complain mode.
    Allowed,
    /// `AUDIT_APPARMOR_DENIED`.
    Denied,
    /// `AUDIT_APPARMOR_KILL`: denied, and the task is killed.
    Kill,
}

impl RecordKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RecordKind::Audit => "AUDIT",
            RecordKind::Allowed => "ALLOWED",
            RecordKind::Denied => "DENIED",
            RecordKind::Kill => "KILL",
        }
    }
}

/// An audit record: its type, the requested and the denied masks (after
/// quieted bits are stripped) and the kernel's `info` string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub kind: RecordKind,
    pub request: u32,
    pub denied: u32,
    pub info: Option<&'static str>,
}

/// The outcome of one file check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileDecision {
    /// Whether the operation goes ahead (complain mode lets denials pass).
    pub allowed: bool,
    /// The permissions the lookup found (for a link: after the pair and
    /// subset tests).
    pub perms: Perms,
    /// The record the kernel writes, if any.
    pub record: Option<Record>,
}

/// Every permission: what the unconfined profile is granted.
pub const ALL: u32 = MAY_READ | MAY_WRITE | MAY_APPEND | MAY_EXEC | AA_EXEC_MMAP | AA_MAY_LINK | AA_MAY_LOCK;

fn unconfined() -> FileDecision {
    FileDecision { allowed: true, perms: Perms { allow: ALL, ..Perms::default() }, record: None }
}

/// The start state and final lookup of `aa_str_perms`.
fn str_perms(p: &Profile, start: Option<u32>, name: &[u8], owner: bool) -> (u32, Perms) {
    let Some(f) = &p.file else { return (0, Perms::default()) };
    let state = f.dfa.match_str(start.unwrap_or(f.start[CLASS_FILE]), name);
    (state, f.lookup(state, owner))
}

/// `aa_audit_file` followed by `aa_audit`: whether the access proceeds
/// and what is logged. `error` says the check failed.
pub(crate) fn audit_file(
    p: &Profile,
    perms: &Perms,
    request: u32,
    error: bool,
    info: Option<&'static str>,
) -> (bool, Option<Record>) {
    if !error {
        let mask = if p.audit_all { 0xffff } else { perms.audit };
        let req = request & mask;
        if req == 0 {
            return (true, None);
        }
        return (true, Some(Record { kind: RecordKind::Audit, request: req, denied: req & !perms.allow, info }));
    }
    let mut req = request & !perms.allow;
    let kill = req & perms.kill != 0;
    // quiet known rejects (not when the profile audits everything)
    if req & perms.quiet != 0 && !p.audit_all {
        req &= !perms.quiet;
    }
    if req == 0 {
        // fully quieted: the error stands, even in complain mode
        return (false, None);
    }
    let denied = req & !perms.allow;
    let kind = if kill {
        RecordKind::Kill
    } else if p.mode == Mode::Complain {
        RecordKind::Allowed
    } else if p.mode == Mode::Kill {
        RecordKind::Kill
    } else {
        RecordKind::Denied
    };
    (kind == RecordKind::Allowed, Some(Record { kind, request: req, denied, info }))
}

/// `__aa_path_perm`: may the subject access `name` with `request`?
/// `owner`: the task's fsuid equals the file's uid.
pub fn path_perm(subject: Subject<'_>, name: &[u8], request: u32, owner: bool) -> FileDecision {
    let p = match subject {
        Subject::Unconfined => return unconfined(),
        Subject::Profile(p) if p.mode == Mode::Unconfined => return unconfined(),
        Subject::Profile(p) => p,
    };
    let (_, perms) = str_perms(p, None, name, owner);
    let error = request & !perms.allow != 0;
    let (allowed, record) = audit_file(p, &perms, request, error, None);
    FileDecision { allowed, perms, record }
}

/// What `perms` (looked up without the name: [`uniform_below`]) decide
/// of `request`, as [`path_perm`] would with the name.
pub fn perms_decision(p: &Profile, perms: Perms, request: u32) -> FileDecision {
    if p.mode == Mode::Unconfined {
        return unconfined();
    }
    let error = request & !perms.allow != 0;
    let (allowed, record) = audit_file(p, &perms, request, error, None);
    FileDecision { allowed, perms, record }
}

/// The permissions (other, owner) `p` gives every name that extends
/// `prefix` by at least one byte, when they are the same for all of them:
/// every state of the file DFA that such a name can end in carries the
/// same permissions (`prefix` itself is not covered: `/srv/**` does not
/// match `/srv/`). Names are as the kernel builds them: no NUL, no two
/// slashes in a row (`/srv/**` does not match `/srv//x` either). `None`
/// when they differ, or when more than `limit` states would have to be
/// visited. Then a file known to lie strictly below `prefix` is decided
/// without its name (the daemon's first-touch path).
pub fn uniform_below(p: &Profile, prefix: &[u8], limit: usize) -> Option<(Perms, Perms)> {
    let Some(f) = &p.file else { return Some((Perms::default(), Perms::default())) };
    let start = f.dfa.match_str(f.start[CLASS_FILE], prefix);
    let mut want = None;
    // (state, the last byte was a slash)
    let mut seen = std::collections::HashSet::new();
    let mut queue = vec![(start, prefix.last() == Some(&b'/'))];
    while let Some((state, after_slash)) = queue.pop() {
        for byte in 1..=u8::MAX {
            if after_slash && byte == b'/' {
                continue;
            }
            let next = (f.dfa.next(state, byte), byte == b'/');
            if !seen.insert(next) {
                continue;
            }
            let perms = (f.lookup(next.0, false), f.lookup(next.0, true));
            if seen.len() > limit || *want.get_or_insert(perms) != perms {
                return None;
            }
            queue.push(next);
        }
    }
    want
}

/// `xindex_is_subset`.
fn xindex_is_subset(link: u32, target: u32) -> bool {
    !((link & !AA_X_UNSAFE) != (target & !AA_X_UNSAFE) || (link & AA_X_UNSAFE != 0 && target & AA_X_UNSAFE == 0))
}

/// `profile_path_link`: may `link` be created as a hard link to
/// `target`? The pair rule `link LINK -> TARGET` is matched as the link
/// name, a NUL, then the target name from the link's state; with
/// `subset` the link may not grant more than the target has.
pub fn link_perm(subject: Subject<'_>, link: &[u8], target: &[u8], owner: bool) -> FileDecision {
    let p = match subject {
        Subject::Unconfined => return unconfined(),
        Subject::Profile(p) if p.mode == Mode::Unconfined => return unconfined(),
        Subject::Profile(p) => p,
    };
    let mut request = AA_MAY_LINK;
    let mut info = None;
    let (state, mut lperms) = str_perms(p, None, link, owner);
    let error = 'tests: {
        if lperms.allow & AA_MAY_LINK == 0 {
            break 'tests true;
        }
        let next = p.file.as_ref().map_or(0, |f| f.dfa.null_transition(state));
        let (_, perms) = str_perms(p, Some(next), target, owner);
        // audit/quiet/kill of a link come from the second entry of the pair
        lperms.audit = perms.audit;
        lperms.quiet = perms.quiet;
        lperms.kill = perms.kill;
        if perms.allow & AA_MAY_LINK == 0 {
            info = Some("target restricted");
            lperms = perms;
            break 'tests true;
        }
        if perms.allow & AA_LINK_SUBSET == 0 {
            break 'tests false;
        }
        let (_, tperms) = str_perms(p, None, target, owner);
        request = lperms.allow & !AA_MAY_LINK;
        lperms.allow &= tperms.allow | AA_MAY_LINK;
        request |= AA_AUDIT_FILE_MASK & (lperms.allow & !tperms.allow);
        if request & !lperms.allow != 0 {
            break 'tests true;
        }
        if lperms.allow & MAY_EXEC != 0 && !xindex_is_subset(lperms.xindex, tperms.xindex) {
            lperms.allow &= !MAY_EXEC;
            request |= MAY_EXEC;
            info = Some("link not subset of target");
            break 'tests true;
        }
        false
    };
    let (allowed, record) = audit_file(p, &lperms, request, error, info);
    FileDecision { allowed, perms: lperms, record }
}

/// Renders a record as the query interface does: `NONE`, `AUDIT:REQ`
/// or `KIND:REQ:DENIED`.
pub fn render_record(r: Option<&Record>) -> String {
    match r {
        None => "NONE".to_owned(),
        Some(r) if r.kind == RecordKind::Audit => format!("AUDIT:{}", letters(r.request)),
        Some(r) => format!("{}:{}:{}", r.kind.as_str(), letters(r.request), letters(r.denied)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subset_of_exec_index() {
        assert!(xindex_is_subset(AA_X_INHERIT, AA_X_INHERIT));
        assert!(xindex_is_subset(AA_X_INHERIT, AA_X_INHERIT | AA_X_UNSAFE));
        assert!(!xindex_is_subset(AA_X_INHERIT | AA_X_UNSAFE, AA_X_INHERIT));
        assert!(!xindex_is_subset(AA_X_NAME, AA_X_INHERIT));
    }
}
